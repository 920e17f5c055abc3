"""The interface a shared store backend implements, and the registry that names backends.

A backend stores lines of *streams* (``ratings``, and ``run/<run-id>`` per run) in one ordered,
append-only log and hands them back in that order; it also claims the items a bot deals
(:class:`Claim`), so that several replicas never deal one item to one reviewer twice, nor more
than ``k`` times at once. Backends are registered by URL scheme, as a plugin registers them
(entry-point group ``hilbot.store_backends``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Protocol
from urllib.parse import urlsplit

from ..errors import HilbotError

RATINGS = "ratings"
"""The stream of ratings.jsonl."""
RUN_PREFIX = "run/"
"""A run's stream is ``run/<run-id>``."""


class StoreError(HilbotError):
    """The store's database cannot be reached or used."""


class RunTaken(StoreError):
    """A run is created with an id the store already holds."""


@dataclass(frozen=True)
class Line:
    """One line of a stream, as a backend hands it back."""

    stream: str
    """``ratings`` or ``run/<run-id>``."""
    data: bytes
    """The line's bytes, with its newline."""


@dataclass(frozen=True)
class Claim:
    """What a bot asks to deal: items of one run and dimension to one reviewer."""

    run_id: str
    """The run."""
    dimension: str
    """The dimension asked about."""
    reviewer_key: str
    """``platform:id`` of the reviewer."""
    item_ids: tuple[str, ...]
    """Candidates, in assignment order."""
    k: int
    """Ratings each item needs."""
    room: int
    """How many of them to claim at most."""
    expiry_s: float
    """Seconds an unanswered claim holds."""


class Backend(Protocol):
    """A shared, ordered, append-only store of lines with item claims."""

    identity: str
    """Names the database (no secret): a mirror of one database refuses another's lines."""

    def append(self, stream: str, lines: list[bytes], *, new: bool = False) -> int:
        """Store ``lines`` durably (committed before this returns); how many were new. ``new``:
        the stream must not exist yet (a run is created whole, once). A line whose idempotency key
        (or bytes) the stream already holds is not stored again."""

    def pull(self, cursor: str) -> tuple[list[Line], str]:
        """Every line committed after ``cursor`` (``""``: from the start), in the log's order, and
        the cursor to pull from next."""

    def claim(self, claim: Claim) -> list[str]:
        """Claim up to ``room`` of the items for the reviewer; returns the ids claimed."""

    def release(self, run_id: str, dimension: str, reviewer_key: str, item_id: str) -> None:
        """Free an open claim whose card could not be delivered."""

    def once(self, key: str) -> bool:
        """True for the first caller of ``key`` across every process sharing the backend."""

    def expire(self) -> list[bytes]:
        """Expire the open claims past their time; returns the delivery records it logged."""

    def close(self) -> None:
        """Close the connections."""


_BACKENDS: dict[str, Callable[[str], Backend] | str] = {
    "postgresql": "evaluation.backends.postgres:PostgresBackend",
    "postgres": "evaluation.backends.postgres:PostgresBackend",
}


def register_backend(scheme: str, factory: Callable[[str], Backend]) -> None:
    """Name a backend by its URL scheme (a plugin's entry point in ``hilbot.store_backends`` does
    this too)."""
    _BACKENDS[scheme] = factory


def store_url(configured: str | None) -> str | None:
    """The store's URL: ``HILBOT_STORE_URL`` when set, else ``[store] url``; None: the JSONL
    files."""
    return os.environ.get("HILBOT_STORE_URL") or configured or None


def open_backend(url: str) -> Backend:
    """The backend a URL names, connected and migrated; :class:`StoreError` with the fix."""
    fix = (
        "give a postgresql://user@host:5432/db URL in HILBOT_STORE_URL or [store] url, or drop it "
        "for the JSONL files"
    )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError as exc:
        raise StoreError(f"the store URL is malformed ({exc})", fix=fix) from None
    scheme = parts.scheme.lower() if "://" in url else ""
    factory: Any = _BACKENDS.get(scheme) or _plugin(scheme)
    if factory is None:
        raise StoreError(f"no store backend for the URL scheme {scheme!r}", fix=fix)
    if isinstance(factory, str):
        import importlib

        module, _, name = factory.partition(":")
        factory = getattr(importlib.import_module(module), name)
    backend: Backend = factory(url)
    return backend


def _plugin(scheme: str) -> Callable[[str], Backend] | None:
    from importlib.metadata import entry_points

    for entry in entry_points(group="hilbot.store_backends"):
        if entry.name == scheme:
            factory: Callable[[str], Backend] = entry.load()
            return factory
    return None
