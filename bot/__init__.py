"""hilbot's review side: the channel-agnostic review engine, the channels and the CLI.

Public names are loaded on first use, so ``hilbot --help`` does not pay for pydantic.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Action": "cards", "Button": "cards", "Card": "cards", "Progress": "cards", "Reveal": "cards", "Section": "cards",
    "ReviewEngine": "review", "ReviewSession": "review", "State": "review", "Step": "review",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
