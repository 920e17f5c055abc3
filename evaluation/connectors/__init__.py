"""Connectors: items in from the tools a team already uses, human labels back out to them.

See :mod:`evaluation.connectors.base` for what a source and a sink are, and
:mod:`evaluation.connectors.outbox` for how every label on its way is recorded, retried and
confirmed. SDKs are imported only when their connector is used.
"""

from __future__ import annotations

from .base import (
    ConnectorError,
    Label,
    Origin,
    Pulled,
    Sent,
    Sink,
    SinkSpec,
    Source,
    SourceSpec,
    remote_id,
    sink,
    sinks,
    source,
    sources,
)

__all__ = [
    "ConnectorError",
    "Label",
    "Origin",
    "Pulled",
    "Sent",
    "Sink",
    "SinkSpec",
    "Source",
    "SourceSpec",
    "remote_id",
    "sink",
    "sinks",
    "source",
    "sources",
]
