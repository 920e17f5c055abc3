"""What the chat core and a platform adapter say to each other: events in, a small port out.

An adapter parses its platform's events into :class:`Command`, :class:`Tap` and
:class:`Text` and hands them to the :class:`~bot.chat.flow.ChatFlow`; the flow answers through
the adapter's :class:`ChatPort`. User, chat and message ids are opaque strings (Telegram's are
numbers, Slack's ``U…``, ``C…`` and message timestamps). Texts are plain; the adapter escapes
and formats them for its platform and keeps within its limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..cards import Card


@dataclass(frozen=True)
class User:
    """A platform user."""

    id: str
    name: str | None = None


@dataclass(frozen=True)
class Chat:
    """A conversation cards and texts go to: a private chat (a DM) or a group (a channel)."""

    id: str
    group: bool = False


@dataclass(frozen=True)
class Command:
    """``/review demo-docs-search`` and the like (on Slack: ``/hilbot review demo-docs-search``)."""

    user: User
    chat: Chat
    name: str
    args: tuple[str, ...] = ()
    message_id: str | None = None
    handle: Any = field(default=None, compare=False, repr=False)
    """The platform's own event, for the adapter."""


@dataclass(frozen=True)
class Tap:
    """A button pressed on a message."""

    user: User
    chat: Chat
    message_id: str
    data: str
    """The token the button carries."""
    event_id: str
    """An id the platform makes unique for this press (Telegram: the callback query's id)."""
    handle: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Text:
    """A text message (a note's text, when it answers a note prompt)."""

    user: User
    chat: Chat
    message_id: str
    text: str
    reply_to: str | None = None
    """The message it replies to, if any."""
    handle: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Choice:
    """One button of a keyboard: what it says and the token it sends back."""

    label: str
    data: str


Keyboard = list[list[Choice]]
"""Rows of buttons."""
ROW = 4
"""Scale buttons per keyboard row."""
TAG_ROW = 2
"""Concern-tag, follow-up choice and skip-reason buttons per row (their names are long)."""


PortErrorKind = Literal["content", "chat", "transient"]
"""Why a platform call failed (see :class:`PortError`)."""


class PortError(Exception):
    """A platform call failed for good (the adapter has already retried what can be retried).

    ``content``: the platform refuses this message (too long, malformed) — sending it again fails
    again; ``chat``: the chat cannot be reached (the user blocked the bot, the chat is gone);
    ``transient``: the network or the platform failed this time.

    Its message is scrubbed of secrets when it is built: it quotes what the platform said, and it
    is logged and may be told to a reviewer.
    """

    def __init__(self, message: str, *, kind: PortErrorKind = "transient"):
        from evaluation.scrub import scrub

        super().__init__(scrub(message))
        self.kind = kind


class ChatPort(Protocol):
    """What a chat platform does for the chat core."""

    platform: str
    """Registry name, and the name of its ``hilbot.toml`` section: ``telegram``, ``slack``."""
    title: str
    """How users call the platform: ``Telegram``, ``Slack``."""
    prefix: str
    """How a command is typed before its name: ``/`` on Telegram, ``/hilbot `` on Slack."""

    async def send_card(self, chat: Chat, card: Card, keyboard: Keyboard) -> str:
        """Send a card with its buttons; returns the new message's id."""
        ...

    async def edit_card(
        self, chat: Chat, message_id: str, card: Card, keyboard: Keyboard, *, final: bool
    ) -> None:
        """Show a card's new state in its message (unchanged content is not an error)."""
        ...

    async def send_text(
        self,
        chat: Chat,
        text: str,
        *,
        reply_to: str | None = None,
        ask: bool = False,
        code: bool = False,
    ) -> str:
        """Send plain text (split to fit); ``ask`` invites a reply, ``code`` keeps it monospaced.
        Returns the id."""
        ...

    async def answer(self, tap: Tap, text: str, *, alert: bool) -> None:
        """Answer a button press: a short toast, or an alert only the tapper sees."""
        ...

    async def send_file(self, chat: Chat, data: bytes, name: str, caption: str) -> None:
        """Send a file: a PNG as an image (the digest's chart), any other as a document (the
        report)."""
        ...

    async def private_chat(self, user_id: str) -> Chat:
        """The private chat (DM) with a user, where ``push`` deals their cards."""
        ...

    async def show_full(self, tap: Tap, text: str) -> None:
        """Show a tapped card's whole item (Telegram: replies under the card; Slack: a modal)."""
        ...

    async def ask_note(self, tap: Tap, about: str) -> str:
        """Ask the tapper for a note on the item ``about`` names; returns the prompt's id, which the
        answering :class:`Text` names in ``reply_to`` (Telegram: a reply-to message; Slack: a
        modal)."""
        ...


__all__ = [
    "ROW",
    "TAG_ROW",
    "Chat",
    "ChatPort",
    "Choice",
    "Command",
    "Keyboard",
    "PortError",
    "Tap",
    "Text",
    "User",
]
