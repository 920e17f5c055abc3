"""Drivers for the chat behaviour suite (``tests/test_chat.py``): how a test plays users on a chat
platform.

The suite is written once and runs for every platform: it names users and chats by the opaque
strings below, and sees messages as :class:`Message` (text, buttons, ids, edits), taps answered as
:class:`Answer`, and the log as parsed ``ratings.jsonl`` lines. A driver owns the platform's fake
server and the only code that builds, starts and stops the bot.

A driver is used as::

    with TelegramDriver(tmp_path) as driver:           # the fake platform, with the users below
        async with driver.bot(store, extra_toml):      # the bot over a data dir; stopped on exit
            [progress, card] = await driver.command(ALICE, "review", run_id, replies=2)
            answer = await driver.tap(ALICE, card, "good")
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, AsyncContextManager, Callable, Protocol, Sequence

from evaluation import Store

ALICE, BOB = "alice", "bob"
"""Two reviewers."""
ADMIN = "admin"
"""An admin (may /push and /digest, and review)."""
EVE = "eve"
"""A stranger: on no list."""
CAROL = "carol"
"""A user who cannot be reached (she blocked the bot); on no list unless a test puts her on one."""
GROUP = "group"
"""A group chat every user above is in. A user's private chat with the bot is named by the user."""


@dataclass(frozen=True)
class Button:
    label: str
    data: str
    """What the button carries back to the bot (Telegram: ``callback_data``)."""


@dataclass(frozen=True)
class Message:
    """A bot message as a user sees it now, in any platform's terms."""

    chat: str
    """The chat's name (ALICE for Alice's private chat, GROUP…)."""
    id: str
    """The platform's message id (opaque)."""
    text: str
    """The text as shown (markup parsed away)."""
    buttons: tuple[Button, ...] = ()
    edits: int = 0
    """How many times the bot has edited it."""

    @property
    def labels(self) -> list[str]:
        return [b.label for b in self.buttons]

    @property
    def datas(self) -> list[str]:
        return [b.data for b in self.buttons]


@dataclass(frozen=True)
class Answer:
    """How the bot answered a tap: a toast, or an alert (``alert``) the tapper must dismiss."""

    text: str
    alert: bool


class Driver(Protocol):
    """Everything the suite may do on a platform. Waits are bounded; a timeout is an AssertionError
    saying what."""

    platform: str
    """The channel name records carry (``"telegram"``), and the prefix of their idempotency keys."""
    data_limit: int
    """The most bytes a button may carry on this platform."""
    toasts: bool
    """Whether a tap that is not an alert is answered with a short text (Telegram's toast; Slack has
    none: the card's own update shows what the click did)."""

    # -- the bot
    def bot(
        self,
        store: Store,
        extra: str = "",
        *,
        reviewers: Sequence[str] = (ALICE, BOB),
        admins: Sequence[str] = (ADMIN,),
    ) -> AsyncContextManager[Any]:
        """Start the bot over ``store`` (``extra``: more hilbot.toml; fast flood limits); stop it on
        exit."""

    async def restart(self, *, fresh_ids: bool = False) -> None:
        """Stop the bot and start a new one over the same data dir, as a new process would.

        ``fresh_ids``: the platform's event ids start again (a fresh server); chats and messages
        stay.
        """

    # -- users acting
    def user_id(self, user: str) -> str:
        """The platform's id of a user, as the bot shows it and the log stores it."""

    def command_text(self, name: str, *args: str) -> str:
        """How a user types a command (Telegram: ``/review run``)."""

    async def say(
        self,
        user: str,
        text: str,
        chat: str | None = None,
        replies: int = 1,
        reply_to: Message | None = None,
    ) -> list[Message]:
        """Write ``text`` (in the user's private chat unless ``chat``); wait for ``replies`` new bot
        messages there."""

    async def command(
        self, user: str, name: str, *args: str, chat: str | None = None, replies: int = 1
    ) -> list[Message]:
        """Run a command; wait for ``replies`` new bot messages."""

    async def tap(self, user: str, message: Message, label: str, chat: str | None = None) -> Answer:
        """Tap the button labelled ``label`` (else the only one starting with it); wait for the
        answer."""

    async def tap_data(self, user: str, message: Message, data: str) -> Answer:
        """Tap a button carrying ``data`` (forged or stale) under a message; wait for the answer."""

    async def redeliver_last_tap(self) -> None:
        """The platform delivers the latest tap's event again, as it is; wait until the bot has had
        it."""

    async def tap_and_crash(self, user: str, message: Message, label: str) -> None:
        """Tap; the bot dies the moment it answers (the tap is stored by then): nothing it sends
        from then on arrives. Then a new bot starts over the same data dir."""

    # -- what users see
    def messages(self, chat: str) -> list[Message]:
        """The bot's messages in a chat as they are now, oldest first."""

    def cards(self, chat: str) -> list[Message]:
        """The bot's messages with buttons in a chat."""

    def now(self, message: Message) -> Message:
        """A message as it is now."""

    def labels(self, message: Message) -> list[str]:
        """A message's button labels, as it is now."""

    async def shows(self, message: Message, text: str) -> Message:
        """Wait until the message (edited) contains ``text``."""

    async def labelled(self, message: Message, label: str) -> Message:
        """Wait until the message has a button labelled ``label``."""

    def preformatted(self, message: Message) -> list[str]:
        """The preformatted blocks (code) of a message as it is now, as shown (Telegram: its
        ``pre`` entities; Slack: its sections in ```` ``` ````)."""

    def asks_for_reply(self, message: Message) -> bool:
        """Whether the message asks its reader for a note (Telegram: force_reply and "reply to this
        message"; Slack: a modal with a text input)."""

    def uploads(self) -> list[tuple[str, bytes]]:
        """(chat, bytes) of every file the bot uploaded, in order."""

    async def until(self, predicate: Callable[[], Any], what: str, timeout: float = 5.0) -> None:
        """Wait until ``predicate()`` holds."""

    async def settle(self) -> None:
        """Wait until the bot has sent nothing for a moment."""

    # -- the log
    def records(self, kind: str | None = None) -> list[dict]:
        """The ratings log's lines, parsed (of ``kind`` only)."""

    # -- the platform misbehaving
    def on_answer(self, check: Callable[[], None]) -> None:
        """Call ``check()`` the moment a tap's answer reaches the platform."""

    def refuse_next_card(self) -> None:
        """The platform refuses the next card the bot sends (Telegram: 400 "message is too
        long")."""

    # -- the schedule
    def digest_config(self, chats: Sequence[str], **schedule: Any) -> str:
        """hilbot.toml for a digest posted to ``chats`` on ``schedule`` (time, timezone,
        every_minutes)."""

    def next_digest(self, after: datetime) -> datetime | None:
        """When the scheduled digest will next be posted."""

    async def digest_now(self) -> None:
        """Post the scheduled digest now, as the schedule would."""


def drivers() -> dict[str, Callable[..., Any]]:
    """Every platform's driver, by name (Slack twice: in Socket Mode, and over signed HTTP
    requests)."""
    from functools import partial

    from .slack import SlackDriver
    from .telegram import TelegramDriver

    return {
        "telegram": TelegramDriver,
        "slack": SlackDriver,
        "slack-http": partial(SlackDriver, mode="http"),
    }


__all__ = [
    "ADMIN",
    "ALICE",
    "Answer",
    "BOB",
    "Button",
    "CAROL",
    "Driver",
    "EVE",
    "GROUP",
    "Message",
    "drivers",
]
