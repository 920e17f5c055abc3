"""Where the logs live: the store's backends.

The embedded default is the data directory's JSONL files (:mod:`evaluation.log`). A shared
backend (PostgreSQL, for several bot replicas) holds the same lines in a database; the data
directory then holds a local read copy of them (:class:`Mirror`), kept in step by
:meth:`evaluation.store.Store.sync`, so every reader (the analyses, the columnar index, the
dashboard) reads the same files whichever backend wrote them.
"""

from __future__ import annotations

from .base import (
    Backend,
    Claim,
    Line,
    RunTaken,
    StoreError,
    open_backend,
    register_backend,
    store_url,
)
from .mirror import Mirror
from .shared import SharedLog

__all__ = [
    "Backend",
    "Claim",
    "Line",
    "Mirror",
    "RunTaken",
    "SharedLog",
    "StoreError",
    "open_backend",
    "register_backend",
    "store_url",
]
