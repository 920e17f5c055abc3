"""Channels: thin adapters that render the engine's cards and turn platform events into actions.

One package per channel under the small interface below (:class:`Channel`, :class:`ChatChannel`):
``terminal``, ``telegram``, ``slack``. Each package's ``__init__`` is the channel itself, beside
its port, its rendering and its start-up; :mod:`.common` holds what the chat channels share
(pacing calls to a platform's limits, serving until stopped).

A channel is registered by name with :func:`channel`; built-ins register the same way a
plugin would, and a plugin adds one through the ``hilbot.channels`` entry-point group (see
:mod:`evaluation.registry`). The platform SDK is imported only inside the channel's package,
which is imported only when the channel is asked for.
"""

from __future__ import annotations

from typing import Callable, Protocol, cast

from evaluation import HilbotConfig, HilbotError, ReviewSummary, Store
from evaluation.registry import Registry

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


ChannelFactory = Callable[[], "Channel | ChatChannel"]

CHANNELS: Registry[ChannelFactory] = Registry(
    "channel",
    "hilbot.channels",
    hint="use one of {names}",
    builtins={
        "terminal": "bot.channels.terminal",
        "telegram": "bot.channels.telegram",
        "slack": "bot.channels.slack",
    },
)
"""Every channel by name: built-in modules (and their SDKs) are imported on first use, plugins come
from ``hilbot.channels`` entry points."""


def channel(name: str) -> Callable[[ChannelFactory], ChannelFactory]:
    """Register a channel factory under ``name``."""
    return CHANNELS.register(name)


def get_channel(name: str) -> Channel | ChatChannel:
    """A new channel instance by name (built-in modules are imported on first use)."""
    return CHANNELS.get(name)()


def chat_channel(name: str) -> ChatChannel:
    """A chat channel by name; the terminal is not one (it reviews one session, see ``hilbot
    review``)."""
    found = get_channel(name)
    if not hasattr(found, "serve"):
        raise HilbotError(
            f"{name!r} is not a chat channel",
            fix="use `hilbot review` for the terminal; serve telegram or slack",
        )
    return cast(ChatChannel, found)


__all__ = ["CHANNELS", "Channel", "ChatChannel", "channel", "chat_channel", "get_channel"]
