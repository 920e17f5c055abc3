"""``hilbot digest --post telegram``: a built digest posted once to ``[telegram.digest] chats``."""

from __future__ import annotations

import asyncio
from typing import Any

from evaluation import HilbotConfig, HilbotError

from ...chat import Chat
from ...chat.digest import send_digest
from .port import TelegramPort
from .request import AiohttpRequest
from .start import api_url, check, token

_NO_CHATS = "no chats to post the digest to"
_FIX = "set [telegram.digest] chats = [<chat id>] in hilbot.toml"


async def post_digest_now(config: HilbotConfig, digest: Any) -> list[str]:
    """Post a built digest to ``[telegram.digest] chats`` once (``hilbot digest --post
    telegram``)."""
    from telegram import Bot

    chats = config.telegram.digest.chats
    if not chats:
        raise HilbotError(_NO_CHATS, fix=_FIX)
    key, url = token(), api_url(config)
    await check(key, url, config.telegram.read_timeout_s)
    request = AiohttpRequest(8, config.telegram.read_timeout_s)  # the client that scrubs every call
    async with Bot(key, base_url=f"{url}/bot", request=request) as bot:
        await send_digest(TelegramPort(bot), [Chat(c, c.startswith("-")) for c in chats], digest)
    return chats


def post_digest(config: HilbotConfig, digest: Any) -> list[str]:
    """:func:`post_digest_now`, from synchronous code."""
    return asyncio.run(post_digest_now(config, digest))


def check_digest_target(config: HilbotConfig) -> None:
    """Before a digest is built: is there a chat to post it to, and a token?"""
    if not config.telegram.digest.chats:
        raise HilbotError(_NO_CHATS, fix=_FIX)
    token()


__all__ = ["check_digest_target", "post_digest", "post_digest_now"]
