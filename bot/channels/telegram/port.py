"""The chat core's port on Telegram: cards as HTML messages with inline keyboards, through
python-telegram-bot.

Every text is sent in HTML parse mode (named in each call, whatever the bot's defaults) with its
user content escaped (:func:`.render.escape`), and kept within Telegram's limits (a card
is cut to 4,096 characters as Telegram counts them; long texts are split into several messages).
Every parameter of every call is scrubbed of secrets on its way out, in the bot's HTTP client
(:mod:`.request`). Telegram's errors become :class:`~bot.chat.PortError`: ``content``
when Telegram refuses the message itself (too long, unparsable), ``chat`` when the chat cannot be
reached (the user blocked the bot, the chat is gone), ``transient`` otherwise (the flood limiter
has already retried 429s and timeouts).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

from telegram import ForceReply, InlineKeyboardButton, InlineKeyboardMarkup, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, TelegramError

from ...cards import Card
from ...chat import Chat, Keyboard, PortError, Tap
from ...chat.port import PortErrorKind
from . import render

_CONTENT = (
    "too long",
    "can't parse",
    "text must be non-empty",
    "message_too_long",
    "entities",
    "button_data_invalid",
    "reply markup is too long",
    "caption is too long",
)
"""Words of a 400 that mean Telegram refuses the message itself (sending it again fails again)."""
_CHAT = (
    "chat not found",
    "user not found",
    "peer_id_invalid",
    "have no rights",
    "not enough rights",
)
"""Words of a 400 that mean the chat cannot be reached."""
_UNCHANGED = "message is not modified"
HTML = ParseMode.HTML
"""The parse mode of every text the port sends (answers to taps have none: shown as they are)."""
ANSWERING = 8
"""Answers in flight at once. More only share the CPU: when hundreds of taps arrive together,
each answer then waits for all the others and the first tap is answered with the last."""


def markup(keyboard: Keyboard) -> InlineKeyboardMarkup:
    """An inline keyboard from rows of choices."""
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(c.label, callback_data=c.data) for c in row] for row in keyboard]
    )


@contextlib.asynccontextmanager
async def _translated() -> AsyncIterator[None]:
    """Telegram's errors as :class:`PortError` s."""
    try:
        yield
    except Forbidden as exc:
        raise PortError(str(exc), kind="chat") from exc
    except BadRequest as exc:
        said = str(exc).lower()
        kind: PortErrorKind = (
            "content"
            if any(w in said for w in _CONTENT)
            else "chat"
            if any(w in said for w in _CHAT)
            else "transient"
        )
        raise PortError(str(exc), kind=kind) from exc
    except TelegramError as exc:
        raise PortError(str(exc), kind="transient") from exc


class TelegramPort:
    """:class:`~bot.chat.ChatPort` over a python-telegram-bot ``Bot`` (with the flood limiter as its
    rate limiter)."""

    platform = "telegram"
    title = "Telegram"
    prefix = "/"

    def __init__(self, bot: Any):
        self.bot = bot
        self._answering = asyncio.Semaphore(ANSWERING)

    async def send_card(self, chat: Chat, card: Card, keyboard: Keyboard) -> str:
        """The card as HTML within the limit, with its keyboard."""
        text, _ = render.card_html(card)
        async with _translated():
            message = await self.bot.send_message(
                int(chat.id), text, parse_mode=HTML, reply_markup=markup(keyboard)
            )
        return str(message.message_id)

    async def edit_card(
        self, chat: Chat, message_id: str, card: Card, keyboard: Keyboard, *, final: bool
    ) -> None:
        """The card's message, edited to its new state (an unchanged message is fine)."""
        text, _ = render.card_html(card, final=final)
        try:
            async with _translated():
                await self.bot.edit_message_text(
                    text,
                    int(chat.id),
                    int(message_id),
                    parse_mode=HTML,
                    reply_markup=markup(keyboard),
                )
        except PortError as exc:
            if _UNCHANGED not in str(exc).lower():
                raise

    async def send_text(
        self,
        chat: Chat,
        text: str,
        *,
        reply_to: str | None = None,
        ask: bool = False,
        code: bool = False,
    ) -> str:
        """Plain text, escaped, split into messages that fit; returns the first message's id."""
        pieces = render.chunks(text, limit=render.LIMIT - 200) or [""]
        first = None
        for n, piece in enumerate(pieces):
            kw: dict[str, Any] = {}
            if reply_to is not None and n == 0:
                kw["reply_parameters"] = ReplyParameters(
                    int(reply_to), allow_sending_without_reply=True
                )
            if ask:
                kw["reply_markup"] = ForceReply(input_field_placeholder="Your note")
            async with _translated():
                shown = f"<pre>{piece}</pre>" if code else piece
                message = await self.bot.send_message(int(chat.id), shown, parse_mode=HTML, **kw)
            first = first or str(message.message_id)
        assert first is not None  # there is at least one piece
        return first

    async def answer(self, tap: Tap, text: str, *, alert: bool) -> None:
        """answerCallbackQuery: a toast, or an alert only the tapper sees (within 200
        characters)."""
        async with self._answering, _translated():
            await self.bot.answer_callback_query(
                tap.event_id, text=render.clip(text), show_alert=alert
            )

    async def send_file(self, chat: Chat, data: bytes, name: str, caption: str) -> None:
        """A PNG as a photo (the digest's chart); any other file as a document (the report)."""
        async with _translated():
            if name.lower().endswith(".png"):
                await self.bot.send_photo(
                    int(chat.id), data, caption=render.escape(caption), parse_mode=HTML
                )
            else:
                await self.bot.send_document(
                    int(chat.id), data, filename=name, caption=render.escape(caption),
                    parse_mode=HTML,
                )

    async def private_chat(self, user_id: str) -> Chat:
        """On Telegram a user's private chat with the bot has the user's id."""
        return Chat(user_id, group=False)

    async def show_full(self, tap: Tap, text: str) -> None:
        """The whole item, in as many messages as it takes, replying to the card."""
        await self.send_text(tap.chat, text, reply_to=tap.message_id)

    async def ask_note(self, tap: Tap, about: str) -> str:
        """A message asking for a reply (force_reply) under the card; the reply is the note."""
        return await self.send_text(
            tap.chat,
            f"✍️ Note on “{about}”: reply to this message with your note.",
            reply_to=tap.message_id,
            ask=True,
        )


__all__ = ["TelegramPort", "markup"]
