"""The tools' SDKs are guests: importing one never changes the process's logging.

Some SDKs configure logging when they are imported or run: langfuse sets the ``httpx`` logger to
WARNING and gives it a console handler of its own, inspect_ai sets the root logger's level and
the ``httpx`` level. hilbot's promise that every log line passes the scrubber rests on its own
handlers alone, so :func:`kept_logging` puts every logger's level, handlers, propagation and the
global ``logging.disable`` level back as they were, and :func:`guard` installs an import hook
that runs each module of the SDKs in :data:`SDKS` inside it, whichever code imports them first.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import logging
import sys
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Iterator, Sequence

SDKS = frozenset({"langfuse", "langsmith", "phoenix", "inspect_ai"})
"""The top-level packages whose modules are run with the process's logging kept."""

_Saved = tuple[int, list[logging.Handler], bool, bool]


def _state(logger: logging.Logger) -> _Saved:
    return logger.level, list(logger.handlers), logger.propagate, logger.disabled


def _put(logger: logging.Logger, saved: _Saved) -> None:
    level, handlers, propagate, disabled = saved
    logger.setLevel(level)
    logger.handlers[:] = handlers
    logger.propagate, logger.disabled = propagate, disabled


@contextmanager
def kept_logging() -> Iterator[None]:
    """Run the block, then put the logging configuration back as it was before it.

    A logger the block created is left with no level, no handler of its own, and propagating.
    """
    manager = logging.Logger.manager
    loggers = {
        name: lg for name, lg in list(manager.loggerDict.items()) if isinstance(lg, logging.Logger)
    }
    before = {name: _state(lg) for name, lg in loggers.items()}
    root, disable = _state(logging.getLogger()), manager.disable
    try:
        yield
    finally:
        _put(logging.getLogger(), root)
        logging.disable(disable)
        for name, lg in list(manager.loggerDict.items()):
            if isinstance(lg, logging.Logger):
                _put(lg, before.get(name, (logging.NOTSET, [], True, False)))


class _KeptLoader(importlib.abc.Loader):
    """A module's loader, run with the process's logging kept; everything else is the loader's
    own."""

    def __init__(self, inner: Any):
        self._inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        with kept_logging():
            self._inner.exec_module(module)

    def __getattr__(self, name: str) -> Any:  # resource readers, is_package, get_source…
        return getattr(self._inner, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the SDKs' modules as the path finder does, with :class:`_KeptLoader` around their
    loaders."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] not in SDKS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if (
            spec is not None
            and spec.loader is not None
            and not isinstance(spec.loader, _KeptLoader)
        ):
            spec.loader = _KeptLoader(spec.loader)
        return spec


def guard() -> None:
    """Install the import hook (once)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


__all__ = ["SDKS", "guard", "kept_logging"]
