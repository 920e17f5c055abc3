"""One small registry of named factories, shared by judges, LLM providers and channels.

A :class:`Registry` maps a name to a factory. Built-ins register themselves the same way a
plugin does (``@registry.register("name")``); a built-in whose module imports a heavy SDK is
listed as ``name → "module.path"`` and imported only when that name is first asked for. Other
packages add names without editing hilbot through an entry-point group, discovered once, on the
first lookup of a name nothing registered (or on :meth:`Registry.names`), and each entry point
is loaded only when its own name is asked for.

An entry point's object is either the factory itself or a module that registers itself on import.
A plugin judge, in its own distribution::

    # hilbot_bm25.py
    from evaluation.judges import finish, judge

    @judge("bm25")
    class BM25Judge:
        name = "bm25"
        kind = "local"          # local methods: labelled "bm25" wherever it appears, never "AI"

        def __init__(self, config, store): ...
        def info(self): ...
        async def judge(self, case, item): ...

    # its pyproject.toml
    [project.entry-points."hilbot.judges"]
    bm25 = "hilbot_bm25"                   # a module that registers itself, or
    # bm25 = "hilbot_bm25:BM25Judge"       # the factory itself (then no decorator is needed)

After ``pip install`` of that package, ``hilbot run --judge bm25`` works. The groups are
``hilbot.judges``, ``hilbot.providers``, ``hilbot.channels`` and ``hilbot.analyses`` (see
:mod:`analysis.registry`).

Precedence: a name registered in the process wins, then a built-in, then an entry point; an
entry point named like a built-in is never loaded, and registering a name another object already
holds (or a built-in's name, from outside its module) is an error unless ``replace=True``.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Generic, TypeVar

from .errors import HilbotError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

T = TypeVar("T")


class RegistryError(HilbotError):
    """A name could not be registered, or a plugin that provides it failed to load."""


class UnknownName(RegistryError):
    """No built-in, registered factory or installed plugin has the name asked for."""


class Registry(Generic[T]):
    """Names to factories, with lazily imported built-ins and entry-point plugins.

    ``what`` names the thing in messages (``judge``, ``LLM provider``); ``group`` is the
    entry-point group plugins use; ``builtins`` maps a name to the module that registers it;
    ``hint`` is how to pick a name (``{names}`` is replaced by the known ones); ``check``
    validates every factory as it is registered (raise a :class:`HilbotError`); ``error`` is the
    exception raised for an unknown name (a subclass of :class:`UnknownName`).
    """

    def __init__(
        self,
        what: str,
        group: str,
        *,
        builtins: dict[str, str] | None = None,
        hint: str = "use one of {names}",
        check: Callable[[str, T], None] | None = None,
        error: type[UnknownName] = UnknownName,
    ):
        self.what, self.group, self.hint, self.error = what, group, hint, error
        self._builtins = dict(builtins or {})
        self._check = check
        self._factories: dict[str, T] = {}
        self._entry_points: dict[str, list["EntryPoint"]] | None = None  # None until discovered
        self._lock = (
            threading.RLock()
        )  # re-entrant: a plugin module registers while it is being loaded

    # ------------------------------------------------------------------ registering

    def register(self, name: str, *, replace: bool = False) -> Callable[[T], T]:
        """A decorator registering its argument under ``name`` (and returning it unchanged)."""
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise RegistryError(
                f"invalid {self.what} name {name!r}",
                fix="use a non-empty name without surrounding spaces",
            )

        def register(factory: T) -> T:
            with self._lock:
                home, held = self._builtins.get(name), self._factories.get(name)
                if not replace and home and _module_of(factory) != home:
                    raise RegistryError(
                        f"{self.what} {name!r} is a built-in (from {home})",
                        fix=f"register {_origin(factory)} under another name, or pass replace=True",
                    )
                if not replace and held is not None and held is not factory:
                    raise RegistryError(
                        f"{self.what} {name!r} is already registered ({_origin(held)})",
                        fix=f"register {_origin(factory)} under another name, or pass replace=True",
                    )
                if self._check is not None:
                    self._check(name, factory)
                self._factories[name] = factory
            return factory

        return register

    # ------------------------------------------------------------------ looking up

    def get(self, name: str) -> T:
        """The factory registered as ``name``: a built-in's module or a plugin's entry point is
        loaded on first use."""
        found = self._factories.get(name)
        if found is not None:
            return found
        with self._lock:
            if name in self._factories:
                return self._factories[name]
            if name in self._builtins:
                importlib.import_module(self._builtins[name])
                if name not in self._factories:
                    raise RegistryError(
                        f"built-in {self.what} module {self._builtins[name]} registers no "
                        f"{self.what} {name!r}",
                        fix="report this as a hilbot bug",
                    )
                return self._factories[name]
            points = self._discover().get(name)
            if not points:
                raise self.error(f"unknown {self.what} {name!r}", fix=self._fix())
            return self._load(name, points)

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is known (registered, built-in or an installed plugin's), without
        loading it."""
        return isinstance(name, str) and name in self.names()

    def names(self) -> list[str]:
        """Every known name, sorted: registered, built-in and installed plugins' (nothing is
        imported)."""
        with self._lock:
            return sorted(set(self._factories) | set(self._builtins) | set(self._discover()))

    def _fix(self) -> str:
        names = ", ".join(self.names()) or "(none)"
        return (
            f"{self.hint.format(names=names)}, or install a plugin that adds one (entry-point "
            f"group {self.group})"
        )

    # ------------------------------------------------------------------ plugins

    def _discover(self) -> dict[str, list["EntryPoint"]]:
        """The group's entry points by name, read once (built-in names shadow plugins')."""
        if self._entry_points is None:
            from importlib.metadata import entry_points

            found: dict[str, list[EntryPoint]] = {}
            for point in entry_points(group=self.group):
                if point.name in self._builtins:
                    continue
                same = found.setdefault(point.name, [])
                if all(p.value != point.value for p in same):
                    same.append(point)
            self._entry_points = found
        return self._entry_points

    def _load(self, name: str, points: list["EntryPoint"]) -> T:
        """Load the one entry point named ``name``: register its factory, or import the module that
        registers itself."""
        if len(points) > 1:
            raise RegistryError(
                f"{len(points)} plugins provide the {self.what} {name!r}: "
                + ", ".join(f"{p.value} ({_dist(p)})" for p in points),
                fix="uninstall all but one of them",
            )
        (point,) = points
        try:
            loaded = point.load()
        except Exception as exc:  # a broken plugin is a one-line error naming it, not a traceback
            raise RegistryError(
                f"plugin {self.what} {name!r} ({point.value} from {_dist(point)}) failed to load: "
                f"{type(exc).__name__}: {exc}",
                fix=f"fix or reinstall {_dist(point)}, or uninstall it",
            ) from exc
        if isinstance(loaded, ModuleType):
            if name not in self._factories:
                raise RegistryError(
                    f"plugin module {point.value} ({_dist(point)}) registers no {self.what} "
                    f"{name!r}",
                    fix=f"register it under {name!r} in that module, or point the entry point at "
                    f"the factory ({point.value}:Factory)",
                )
        elif self._factories.get(name) is not loaded:
            self.register(name)(loaded)
        return self._factories[name]


def _module_of(factory: object) -> str | None:
    """The module a factory comes from: its ``module`` when it says (a spec object made in one
    module from a class of another), else its ``__module__``."""
    module = getattr(factory, "module", None)
    return module if isinstance(module, str) else getattr(factory, "__module__", None)


def _origin(obj: object) -> str:
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{module}.{qualname}" if module and qualname else repr(obj)


def _dist(point: "EntryPoint") -> str:
    dist = getattr(point, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"


__all__ = ["Registry", "RegistryError", "UnknownName"]
