"""The chat core's port on Slack: Block Kit cards, modals and ephemeral answers through
slack_sdk's ``AsyncWebClient``.

Messages are paced to Slack's posting limits on the bot's side (about one a second per channel,
and a workspace-wide rate for new messages); a 429 that still comes back is retried by
slack_sdk's own rate-limit retry handler after the ``Retry-After`` it names. Slack's errors
become :class:`~bot.chat.PortError`: ``content`` when Slack refuses the message itself
(``invalid_blocks``, ``msg_too_long``), ``chat`` when the conversation cannot be reached
(``channel_not_found``, ``messages_tab_disabled``…), ``transient`` otherwise.

A click is acknowledged by :meth:`SlackPort.answer`, which the chat core calls only once the
click's records are on disk. An alert (a refusal, a group reveal) is an ephemeral message
only the clicker sees, posted just before the acknowledgement.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from evaluation.config import SlackLimits

from ...cards import Card
from ...chat import Chat, Keyboard, PortError, Tap
from ...chat.port import PortErrorKind
from ..common import Slots
from . import render

_CONTENT = frozenset(
    {
        "invalid_blocks",
        "invalid_blocks_format",
        "msg_too_long",
        "no_text",
        "too_many_attachments",
        "invalid_attachments",
        "markdown_text_conflict",
        "invalid_arguments",
    }
)
"""Errors that mean Slack refuses the message itself (sending it again fails again)."""
_CHAT = frozenset(
    {
        "channel_not_found",
        "not_in_channel",
        "is_archived",
        "messages_tab_disabled",
        "user_not_found",
        "user_not_in_channel",
        "cannot_dm_bot",
        "user_disabled",
        "restricted_action",
        "is_inactive",
    }
)
"""Errors that mean the conversation cannot be reached."""
EPHEMERAL_WAIT_S = 1.0
"""The longest an acknowledgement waits for its ephemeral answer (Slack wants the ack within
3 s)."""


@dataclass(frozen=True)
class Delivered:
    """What Slack handed the bot with an event: how to acknowledge it, and the trigger for a
    modal."""

    ack: Callable[..., Awaitable[Any]]
    trigger_id: str | None = None


def conversation(channel_id: str) -> Chat:
    """A conversation by its id: ``D…`` is a direct message, anything else a channel."""
    return Chat(channel_id, group=not channel_id.startswith("D"))


def error_code(exc: BaseException) -> str:
    """Slack's error code of a failed call (``invalid_auth``…), or the exception's class name."""
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error") or exc.response.status_code)
    return type(exc).__name__


@contextlib.asynccontextmanager
async def _translated() -> AsyncIterator[None]:
    """Slack's and the network's errors as :class:`PortError` s."""
    try:
        yield
    except SlackApiError as exc:
        code = error_code(exc)
        kind: PortErrorKind = (
            "content" if code in _CONTENT else "chat" if code in _CHAT else "transient"
        )
        raise PortError(code, kind=kind) from exc
    except (SlackClientError, OSError, asyncio.TimeoutError) as exc:
        raise PortError(f"{type(exc).__name__}: {exc}", kind="transient") from exc


class SlackPort:
    """:class:`~bot.chat.ChatPort` over slack_sdk's ``AsyncWebClient``, paced to Slack's posting
    limits."""

    platform = "slack"
    title = "Slack"

    def __init__(
        self, client: AsyncWebClient, limits: SlackLimits | None = None, command: str = "/hilbot"
    ):
        limits = limits or SlackLimits()
        self.client = client
        self.prefix = f"{command} "
        self._channel_rate = limits.channel_per_s
        self._overall = Slots.per_second(limits.overall_per_s)
        self._channels: dict[str, Slots] = {}
        self._dms: dict[str, str] = {}
        self._background: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ calls

    async def _call(
        self, method: str, pace: str | None, *, new: bool = False, **params: Any
    ) -> Any:
        """One Web API call, paced: to the rate of the conversation ``pace``, and for a ``new``
        message to the workspace's."""
        slots = []
        if pace is not None:
            slots.append(self._channels.setdefault(pace, Slots.per_second(self._channel_rate)))
        if new:
            slots.append(self._overall)
        # always channel first, then overall: no two calls wait on each other in a cycle
        for slot in slots:
            await slot.take()
        try:
            async with _translated():
                return await self.client.api_call(method, json=params)
        finally:
            for slot in slots:
                slot.give_back()

    # ------------------------------------------------------------------ the port

    async def send_card(self, chat: Chat, card: Card, keyboard: Keyboard) -> str:
        """The card as Block Kit with its buttons; returns the message's ``ts``."""
        text, blocks = render.card_blocks(card, keyboard)
        answer = await self._call(
            "chat.postMessage",
            chat.id,
            new=True,
            channel=chat.id,
            text=text,
            blocks=blocks,
            unfurl_links=False,
            unfurl_media=False,
        )
        return str(answer["ts"])

    async def edit_card(
        self, chat: Chat, message_id: str, card: Card, keyboard: Keyboard, *, final: bool
    ) -> None:
        """chat.update: the card's message shows its new state."""
        text, blocks = render.card_blocks(card, keyboard, final=final)
        await self._call(
            "chat.update", chat.id, channel=chat.id, ts=message_id, text=text, blocks=blocks
        )

    async def send_text(
        self,
        chat: Chat,
        text: str,
        *,
        reply_to: str | None = None,
        ask: bool = False,
        code: bool = False,
    ) -> str:
        """Plain text, escaped and split to fit (in the thread of ``reply_to``); returns the first
        message's ``ts``."""
        first = None
        for piece in render.text_pieces(text, code=code):
            params: dict[str, Any] = {"thread_ts": reply_to} if reply_to else {}
            answer = await self._call(
                "chat.postMessage", chat.id, new=True, channel=chat.id, text=piece, **params
            )
            first = first or str(answer["ts"])
        return first or ""

    async def answer(self, tap: Tap, text: str, *, alert: bool) -> None:
        """Acknowledge the click; an alert first goes to the clicker alone, as an ephemeral
        message."""
        if alert:
            posting = asyncio.ensure_future(self._ephemeral(tap, text))
            self._background.add(posting)
            posting.add_done_callback(self._background.discard)
            await asyncio.wait({posting}, timeout=EPHEMERAL_WAIT_S)
        await tap.handle.ack()

    async def _ephemeral(self, tap: Tap, text: str) -> None:
        """An ephemeral message to the clicker where they clicked; in their DM with the app if they
        are not in that conversation (a card shared elsewhere)."""
        text = render.fit(text, render.EPHEMERAL)
        with contextlib.suppress(PortError):
            try:
                await self._call(
                    "chat.postEphemeral",
                    tap.chat.id,
                    channel=tap.chat.id,
                    user=tap.user.id,
                    text=text,
                )
            except PortError as exc:
                if exc.kind != "chat":
                    raise
                dm = await self.private_chat(tap.user.id)
                await self._call(
                    "chat.postEphemeral", dm.id, channel=dm.id, user=tap.user.id, text=text
                )

    async def send_file(self, chat: Chat, data: bytes, name: str, caption: str) -> None:
        """files_upload_v2: the upload URL, the bytes, then the file shared in the channel."""
        async with _translated():
            await self.client.files_upload_v2(
                channel=chat.id, file=data, filename=name, title=render.fit(caption, 250)
            )

    async def private_chat(self, user_id: str) -> Chat:
        """The user's DM with the app (conversations.open, remembered)."""
        if user_id not in self._dms:
            async with _translated():
                answer = await self.client.conversations_open(users=user_id)
            self._dms[user_id] = str(answer["channel"]["id"])
        return Chat(self._dms[user_id], group=False)

    def knows_dm(self, user_id: str, channel_id: str) -> None:
        """Remember a user's DM channel, as an event named it."""
        self._dms.setdefault(user_id, channel_id)

    async def show_full(self, tap: Tap, text: str) -> None:
        """The whole item in a modal; in the card's thread if the modal cannot be opened."""
        try:
            await self._open(tap, render.full_modal("Full item", text))
        except PortError:
            await self.send_text(tap.chat, text, reply_to=tap.message_id)

    async def ask_note(self, tap: Tap, about: str) -> str:
        """A note modal (its view id is the prompt's id); a thread reply is asked for if it cannot
        be opened."""
        metadata = {"chat": tap.chat.id, "group": tap.chat.group, "message": tap.message_id}
        try:
            answer = await self._open(tap, render.note_modal(about, metadata))
            return str(answer["view"]["id"])
        except PortError:
            asked = f"✍️ Note on “{about}”: reply in this thread with your note."
            return await self.send_text(tap.chat, asked, reply_to=tap.message_id)

    async def _open(self, tap: Tap, view: dict[str, Any]) -> Any:
        trigger = getattr(tap.handle, "trigger_id", None)
        if not trigger:
            raise PortError("no trigger to open a modal with", kind="transient")
        async with _translated():
            return await self.client.views_open(trigger_id=trigger, view=view)

    async def publish_home(self, user_id: str, view: dict[str, Any]) -> None:
        """The user's App Home tab."""
        async with _translated():
            await self.client.views_publish(user_id=user_id, view=view)


def metadata(view: dict[str, Any]) -> dict[str, Any]:
    """A note modal's private metadata (empty when it is not ours or not readable)."""
    try:
        found = json.loads(view.get("private_metadata") or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


__all__ = ["Delivered", "SlackPort", "conversation", "error_code", "metadata"]
