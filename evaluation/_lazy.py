"""Lazy re-exports: a package's public names are imported on first use (keeps CLI start-up fast)."""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_getattr(
    package: str, exports: dict[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``exports[name]`` (a submodule) on first access and
    caches it."""

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{exports[name]}", package), name)
        namespace[name] = value
        return value

    return __getattr__
