"""hilbot's review side: the channel-agnostic review engine, the channels and the CLI.

Public names are loaded on first use, so ``hilbot --help`` does not pay for pydantic.
"""

from __future__ import annotations

from evaluation._lazy import lazy_getattr

_EXPORTS = {
    "Action": "cards",
    "Button": "cards",
    "Card": "cards",
    "Progress": "cards",
    "Reveal": "cards",
    "Section": "cards",
    "Curation": "curation",
    "ReviewEngine": "review",
    "ReviewSession": "review",
    "State": "cards",
    "Step": "review",
}
__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
