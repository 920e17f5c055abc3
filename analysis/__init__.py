"""hilbot's analysis: read-only figures over the store (the review digest, …).

Depends on ``evaluation`` only. Public names are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluation._lazy import lazy_getattr

_EXPORTS = {
    "Digest": "digest",
    "RunProgress": "digest",
    "build_digest": "digest",
    "chart_png": "digest",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .digest import Digest, RunProgress, build_digest, chart_png

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
