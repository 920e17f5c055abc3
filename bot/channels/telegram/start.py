"""Starting a Telegram bot: the token, the Bot API server, and every refusal at start-up as one
line.

A rejected or revoked token, another instance polling, a rate limit, a server error, no answer
in time, a bad webhook URL or a busy port: each is one :class:`HilbotError` saying what
happened and what to do, with the token never in it.
"""

from __future__ import annotations

import logging
import os
import traceback
from typing import Any

from telegram.error import (
    BadRequest,
    Conflict,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)

from evaluation import HilbotConfig, HilbotError
from evaluation.scrub import hold, scrub
from evaluation.text import visible

from .request import AiohttpRequest


def token() -> str:
    """The bot token, from ``TELEGRAM_BOT_TOKEN`` only."""
    value = os.environ.get("TELEGRAM_BOT_TOKEN", "").strip()
    if not value:
        raise HilbotError(
            "TELEGRAM_BOT_TOKEN is not set",
            fix="export TELEGRAM_BOT_TOKEN=<the token @BotFather gave you>",
        )
    return value


def api_url(config: HilbotConfig) -> str:
    """The Bot API server: ``TELEGRAM_API_URL``, else ``[telegram] api_url``."""
    return (os.environ.get("TELEGRAM_API_URL") or config.telegram.api_url).rstrip("/")


def _shown(url: str) -> str:
    """A URL as an error names it: without a user or password in it, one visible line."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
        shown = parts._replace(netloc=netloc).geturl() if "@" in parts.netloc else url
    except ValueError:
        shown = url
    return visible(shown, newlines=False)[:200]


async def check(token: str, url: str, timeout: float | None = None) -> None:
    """Ask the Bot API who the bot is; any refusal, failure or silence is one error that says what
    to do."""
    from telegram import Bot

    hold(token)
    request = (
        AiohttpRequest(1, read_timeout=timeout, connect_timeout=timeout)
        if timeout
        else AiohttpRequest(1, 5.0)
    )
    try:
        async with Bot(token, base_url=f"{url}/bot", request=request) as bot:
            await bot.get_me()
    except TelegramError as exc:
        raise refusal(exc, "getMe", url, timeout) from None


_CALLS = {
    "get_me": "getMe",
    "set_my_commands": "setMyCommands",
    "delete_webhook": "deleteWebhook",
    "set_webhook": "setWebhook",
    "get_updates": "getUpdates",
}
"""The Bot API calls a bot makes as it starts, by the name of python-telegram-bot's method."""


def call_of(exc: BaseException) -> str:
    """The Bot API call an error came from, read from its traceback."""
    names = [frame.f_code.co_name for frame, _ in traceback.walk_tb(exc.__traceback__)]
    return next((_CALLS[name] for name in reversed(names) if name in _CALLS), "a start-up call")


def refusal(exc: TelegramError, call: str, url: str, timeout: float | None = None) -> HilbotError:
    """A Bot API error as one line: what the server said (scrubbed, visible, short) and what to do
    about it."""
    said = visible(scrub(str(exc)), newlines=False)[:200]
    where = _shown(url)
    if isinstance(exc, InvalidToken):
        return HilbotError(
            "the Bot API rejected TELEGRAM_BOT_TOKEN",
            where=where,
            fix="check the token with @BotFather",
        )
    if isinstance(exc, Conflict):
        return HilbotError(
            f"another program is using this bot token ({call}: 409: {said})",
            where=where,
            fix="stop the other bot process, or delete its webhook (deleteWebhook); "
            "one token serves one bot",
        )
    if isinstance(exc, Forbidden):
        return HilbotError(
            f"the Bot API refused {call} (403: {said})",
            where=where,
            fix="the bot may be deactivated or its token revoked: check it with "
            "@BotFather, and any proxy in TELEGRAM_API_URL",
        )
    if isinstance(exc, RetryAfter):
        return HilbotError(
            f"the Bot API is rate-limiting this bot ({call}: {said})",
            where=where,
            fix="wait that long, then start again",
        )
    if isinstance(exc, TimedOut):
        within = f" within {timeout:g} s" if timeout else " in time"
        return HilbotError(
            f"the Bot API did not answer {call}{within}",
            where=where,
            fix="check the network and TELEGRAM_API_URL or [telegram] api_url, or "
            "raise [telegram] read_timeout_s",
        )
    if isinstance(exc, BadRequest):
        fix = (
            "set [telegram] webhook_url to a public https URL on port 443, 80, 88 or 8443"
            if call == "setWebhook"
            else "check TELEGRAM_API_URL or [telegram] api_url points at a Bot API server, and "
            "start again"
        )
        return HilbotError(f"the Bot API refused {call} (400: {said})", where=where, fix=fix)
    if isinstance(exc, NetworkError) and not isinstance(exc.__cause__, (TelegramError, type(None))):
        return HilbotError(
            f"cannot reach the Bot API ({said})",
            where=where,
            fix="check TELEGRAM_API_URL or [telegram] api_url, and the network",
        )
    if isinstance(exc, NetworkError):
        return HilbotError(
            f"the Bot API failed on {call} ({said})",
            where=where,
            fix="the server had a problem: wait and start again; if it persists, "
            "check TELEGRAM_API_URL or [telegram] api_url",
        )
    return HilbotError(
        f"{call}: the answer is not the Bot API's ({said})",
        where=where,
        fix="check TELEGRAM_API_URL or [telegram] api_url points at a Bot API server",
    )


class QuietStart(logging.Filter):
    """Until the bot runs, drops python-telegram-bot's own tracebacks of a failed call: the error is
    raised, and reported as one line."""

    LOGGERS = ("telegram.ext", "telegram.request.BaseRequest")
    """Where python-telegram-bot reports a failed start-up call and an answer that is not JSON."""

    def __init__(self, app: Any):
        super().__init__()
        self.app = app

    def filter(self, record: logging.LogRecord) -> bool:
        if self.app.running or record.levelno < logging.ERROR:
            return True
        first = str(record.args[0]) if isinstance(record.args, tuple) and record.args else ""
        return not (
            first.startswith("Network Retry Loop (Bootstrap")
            or str(record.msg).startswith("Can not load invalid JSON")
        )

    def __enter__(self) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).addFilter(self)

    def __exit__(self, *exc: object) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).removeFilter(self)


def cannot_listen(exc: OSError) -> bool:
    """Whether an error is a webhook server's address that is taken, not this host's, or not
    allowed."""
    import errno
    import socket

    taken = (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES)
    return isinstance(exc, socket.gaierror) or exc.errno in taken
