"""Channels: thin adapters that render the engine's cards and turn platform events into actions.

A channel is registered by name with :func:`channel`; built-ins register the same way a
plugin would. The platform SDK is imported only inside the channel's module, which is
imported only when the channel is asked for.
"""

from __future__ import annotations

import importlib
from typing import Callable, Protocol

from evaluation import HilbotConfig, HilbotError, ReviewSummary, Store

from ..review import ReviewSession


class Channel(Protocol):
    """Runs a review session on one platform until the reviewer quits or is done."""

    name: str

    def review(self, session: ReviewSession) -> ReviewSummary:
        """Drive the session; return its summary."""
        ...


class ChatChannel(Protocol):
    """A chat platform's bot: serves every reviewer until the process is stopped."""

    name: str

    def serve(self, store: Store, config: HilbotConfig) -> None:
        """Connect to the platform and handle reviewers' commands and taps until interrupted."""
        ...


_REGISTRY: dict[str, Callable[[], Channel | ChatChannel]] = {}
_BUILTINS = {"terminal": "bot.channels.terminal", "telegram": "bot.channels.telegram", "slack": "bot.channels.slack"}


def channel(name: str) -> Callable[[Callable[[], Channel | ChatChannel]], Callable[[], Channel | ChatChannel]]:
    """Register a channel factory under ``name``."""

    def register(factory: Callable[[], Channel | ChatChannel]) -> Callable[[], Channel | ChatChannel]:
        _REGISTRY[name] = factory
        return factory

    return register


def get_channel(name: str) -> Channel | ChatChannel:
    """A new channel instance by name (built-in modules are imported on first use)."""
    if name not in _REGISTRY and name in _BUILTINS:
        importlib.import_module(_BUILTINS[name])
    if name not in _REGISTRY:
        raise HilbotError(f"unknown channel {name!r}", fix=f"use one of {', '.join(sorted(set(_REGISTRY) | set(_BUILTINS)))}")
    return _REGISTRY[name]()


def chat_channel(name: str) -> ChatChannel:
    """A chat channel by name; the terminal is not one (it reviews one session, see ``hilbot review``)."""
    found = get_channel(name)
    if not hasattr(found, "serve"):
        raise HilbotError(f"{name!r} is not a chat channel", fix="use `hilbot review` for the terminal; serve telegram or slack")
    return found


__all__ = ["Channel", "ChatChannel", "channel", "chat_channel", "get_channel"]
