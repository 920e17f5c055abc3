"""The Telegram channel: python-telegram-bot wiring around the chat core.

This module only parses Telegram's updates into the chat core's events (who, which chat, which
button token, the callback query's id) and starts and stops the bot; the review flow is
:class:`~bot.chat.ChatFlow`'s. The rest of the channel is in this package:

- :mod:`.port`: :class:`TelegramPort`, rendering (:mod:`.render`: HTML within Telegram's limits)
  and sending;
- :mod:`.start`: the token, the Bot API server, every refusal at start-up as one line;
- :mod:`.request`: the Bot API calls on aiohttp, every text scrubbed on its way out;
- :mod:`.flood`: flood control;
- :mod:`.digest`: ``hilbot digest --post telegram``.

``hilbot serve telegram`` runs its own event loop: SIGINT or SIGTERM at any moment, even while
the bot is still starting, stops it cleanly with exit code 0.
"""

from __future__ import annotations

import asyncio
import logging
import os
import traceback
from typing import Any

from telegram import BotCommand, LinkPreviewOptions, Update
from telegram.constants import ParseMode
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    Defaults,
    MessageHandler,
    filters,
)

from evaluation import HilbotConfig, HilbotError, LogIssue, Store
from evaluation.scrub import hold

from ...chat import Access, Chat, ChatFlow, Command, Scheduler, Tap, Text, User
from ...chat.flow import STOP_GRACE_S
from ...chat.texts import COMMANDS
from ...review import ReviewEngine
from .. import channel
from ..common import serve, stop_signal
from .digest import check_digest_target, post_digest, post_digest_now
from .flood import FloodLimiter
from .port import TelegramPort
from .request import TAPPED_ON, AiohttpRequest, PollRequest
from .start import QuietStart, api_url, call_of, cannot_listen, check, refusal, token

_log = logging.getLogger("hilbot.telegram")

CONCURRENT_UPDATES = 4096
"""Updates handled at once (each waits only for its reviewer's lock and the log's fsync)."""
CONNECTIONS = 100
"""Connections kept to the Bot API: the flood limiter lets about 30 message calls run at once;
answers need the rest."""


def _user(update: Update) -> User:
    user = update.effective_user
    return User(str(user.id), user.username or user.first_name) if user is not None else User("?")


def _chat(chat: Any) -> Chat:
    return Chat(str(chat.id), chat.type != "private")


def tapped_on(query: Any) -> tuple[Chat, str] | None:
    """The chat and message a button was tapped under: from the message cut down as it was received
    (:func:`~.request.slim_updates`), or from the whole message (a webhook update)."""
    cut = (query.api_kwargs or {}).get(TAPPED_ON)
    if isinstance(cut, dict):
        return Chat(str(cut["chat_id"]), cut["chat_type"] != "private"), str(cut["message_id"])
    if query.message is None:
        return None
    return _chat(query.message.chat), str(query.message.message_id)


class TelegramBot:
    """hilbot's Telegram bot over one data directory: start it, and it serves every reviewer until
    stopped."""

    def __init__(
        self,
        store: Store,
        config: HilbotConfig,
        *,
        token: str,
        api_url: str,
        issues: list[LogIssue] | None = None,
    ):
        self.settings = settings = config.telegram
        self.limiter = FloodLimiter(**settings.limits.model_dump())
        self.app = self._application(token, api_url)
        self.port = TelegramPort(self.app.bot)
        self.engine = ReviewEngine(store, config, issues if issues is not None else [])
        access = Access(frozenset(settings.reviewers), frozenset(settings.admins))
        self.flow = ChatFlow(self.engine, self.port, access, on_error=self.report)
        chats = [Chat(c, c.startswith("-")) for c in settings.digest.chats]
        self.scheduler = Scheduler(
            self.flow, refresh_s=settings.refresh_s, digest=settings.digest, chats=chats
        )

    def _application(self, token: str, api_url: str) -> Application:
        hold(token)  # however the token came, it is a secret from now on
        timeout = self.settings.read_timeout_s
        no_previews = LinkPreviewOptions(is_disabled=True)
        app = (
            Application.builder()
            .token(token)
            .base_url(f"{api_url}/bot")
            .base_file_url(f"{api_url}/file/bot")
            .defaults(Defaults(parse_mode=ParseMode.HTML, link_preview_options=no_previews))
            .request(AiohttpRequest(CONNECTIONS, read_timeout=timeout))
            .get_updates_request(
                PollRequest(1, read_timeout=self.settings.poll_timeout_s + timeout)
            )
            .rate_limiter(self.limiter)
            .concurrent_updates(CONCURRENT_UPDATES)
            .build()
        )
        app.add_handler(CommandHandler([name for name, _, _ in COMMANDS], self._on_command))
        app.add_handler(CallbackQueryHandler(self._on_tap))
        app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, self._on_text))
        app.add_error_handler(self._on_error)
        return app

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Initialise, register the commands, start receiving updates (long polling or the webhook)
        and the scheduler."""
        await self.app.initialize()
        await self.app.bot.set_my_commands([BotCommand(name, what) for name, what, _ in COMMANDS])
        # updates are received first, then handled (as python-telegram-bot does)
        if self.settings.mode == "webhook":
            await self._webhook()
        else:
            assert self.app.updater is not None  # the builder makes one
            await self.app.updater.start_polling(
                poll_interval=self.settings.poll_interval_s,
                timeout=self.settings.poll_timeout_s,
                allowed_updates=Update.ALL_TYPES,
            )
        await self.app.start()
        self.scheduler.start()

    async def _webhook(self) -> None:
        from urllib.parse import urlparse

        settings = self.settings
        assert self.app.updater is not None  # the builder makes one
        assert settings.webhook_url is not None  # required in webhook mode (config validation)
        await self.app.updater.start_webhook(
            listen=settings.listen,
            port=settings.port,
            url_path=urlparse(settings.webhook_url).path.lstrip("/"),
            webhook_url=settings.webhook_url,
            secret_token=os.environ.get("TELEGRAM_WEBHOOK_SECRET"),
            allowed_updates=Update.ALL_TYPES,
        )

    async def stop(self) -> None:
        """Stop receiving updates, let work under way finish, and shut down (each step only if it
        was started)."""
        await self.scheduler.stop()
        if self.app.updater is not None and self.app.updater.running:
            await self.app.updater.stop()
        await self.flow.close(STOP_GRACE_S)
        if self.app.running:
            await self.app.stop()
        await self.app.shutdown()

    # ------------------------------------------------------------------ updates → events

    async def _on_command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        assert message is not None  # a command handler's update carries its message
        name = (message.text or "").split()[0].lstrip("/").split("@")[0].lower()
        await self.flow.on_command(
            Command(
                _user(update),
                _chat(message.chat),
                name,
                tuple(context.args or ()),
                str(message.message_id),
                handle=update,
            )
        )

    async def _on_tap(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None  # a callback query handler's update carries its query
        tapped = tapped_on(query)
        if tapped is None:  # a button under an inline-mode message: none of hilbot's cards
            await query.answer()
            return
        chat, message_id = tapped
        await self.flow.on_tap(
            Tap(_user(update), chat, message_id, query.data or "", query.id, handle=update)
        )

    async def _on_text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        assert message is not None  # a message handler's update carries its message
        reply_to = message.reply_to_message.message_id if message.reply_to_message else None
        await self.flow.on_text(
            Text(
                _user(update),
                _chat(message.chat),
                str(message.message_id),
                message.text or "",
                str(reply_to) if reply_to is not None else None,
                handle=update,
            )
        )

    # ------------------------------------------------------------------ the one error handler

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert context.error is not None  # set for error handlers
        self.report(context.error, update)

    def report(self, error: BaseException, context: object) -> None:
        """Log an error with its traceback first, then the update (or the job) that was being
        handled."""
        trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        update = getattr(context, "handle", context)
        if isinstance(update, Update):
            return _log.error("%s\nwhile handling update %s", trace, update.to_dict())
        _log.error(
            "%s\nwhile %s", trace, context if isinstance(context, str) else f"handling {context}"
        )


class TelegramChannel:
    """``hilbot serve telegram``."""

    name = "telegram"

    def serve(self, store: Store, config: HilbotConfig) -> None:
        """Run the bot until SIGINT or SIGTERM (exit 0, also while starting); a failed start is one
        error."""
        asyncio.run(self._serve(store, config))

    async def _serve(self, store: Store, config: HilbotConfig) -> None:
        stop = stop_signal()
        url = api_url(config)
        bot = TelegramBot(store, config, token=token(), api_url=url)
        with QuietStart(bot.app):
            await serve(stop, self._start(bot, url), bot.stop)

    @staticmethod
    async def _start(bot: TelegramBot, url: str) -> None:
        settings = bot.settings
        try:
            await check(bot.app.bot.token, url, settings.read_timeout_s)
            await bot.start()
        except TelegramError as exc:
            raise refusal(exc, call_of(exc), url, settings.read_timeout_s) from None
        except OSError as exc:
            if settings.mode != "webhook" or not cannot_listen(exc):
                raise
            address = f"{settings.listen}:{settings.port}"
            raise HilbotError(
                f"cannot listen for webhook updates on {address} ({exc.strerror or exc})",
                fix="set [telegram] listen and port to a free address, or stop what is using it",
            ) from None


channel("telegram")(TelegramChannel)

__all__ = [
    "TelegramBot",
    "TelegramChannel",
    "TelegramPort",
    "check_digest_target",
    "post_digest",
    "post_digest_now",
    "refusal",
    "tapped_on",
]
