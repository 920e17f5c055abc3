"""Channels: thin adapters that render the engine's cards and turn platform events into actions.

A channel is registered by name with :func:`channel`; built-ins register the same way a
plugin would. The platform SDK is imported only inside the channel's module, which is
imported only when the channel is asked for.
"""

from __future__ import annotations

import importlib
from typing import Callable, Protocol

from evaluation import HilbotError, ReviewSummary

from ..review import ReviewSession


class Channel(Protocol):
    """Runs a review session on one platform until the reviewer quits or is done."""

    name: str

    def review(self, session: ReviewSession) -> ReviewSummary:
        """Drive the session; return its summary."""
        ...


_REGISTRY: dict[str, Callable[[], Channel]] = {}
_BUILTINS = {"terminal": "bot.channels.terminal"}


def channel(name: str) -> Callable[[Callable[[], Channel]], Callable[[], Channel]]:
    """Register a channel factory under ``name``."""

    def register(factory: Callable[[], Channel]) -> Callable[[], Channel]:
        _REGISTRY[name] = factory
        return factory

    return register


def get_channel(name: str) -> Channel:
    """A new channel instance by name (built-in modules are imported on first use)."""
    if name not in _REGISTRY and name in _BUILTINS:
        importlib.import_module(_BUILTINS[name])
    if name not in _REGISTRY:
        raise HilbotError(f"unknown channel {name!r}", fix=f"use one of {', '.join(sorted(set(_REGISTRY) | set(_BUILTINS)))}")
    return _REGISTRY[name]()


__all__ = ["Channel", "channel", "get_channel"]
