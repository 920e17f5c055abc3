"""``hilbot digest --post slack``: a built digest posted once to ``[slack.digest] chats``."""

from __future__ import annotations

import asyncio
from typing import Any

from evaluation import HilbotConfig, HilbotError

from ...chat import PortError
from ...chat.digest import send_digest
from .port import SlackPort, conversation
from .start import api_url, bot_token, check, close_client, web_client


async def post_digest_now(config: HilbotConfig, digest: Any) -> list[str]:
    """Post a built digest to ``[slack.digest] chats`` once (``hilbot digest --post slack``)."""
    chats = _digest_chats(config)
    url = api_url(config)
    client = web_client(
        bot_token(),
        url,
        timeout=config.slack.read_timeout_s,
        retries=config.slack.limits.max_retries,
    )
    try:
        await check(client, url)
        port = SlackPort(client, config.slack.limits, config.slack.command)
        await send_digest(port, [conversation(c) for c in chats], digest)
    except PortError as exc:
        raise HilbotError(
            f"Slack refused the digest ({exc})",
            fix="invite the bot to each channel in [slack.digest] chats (/invite "
            "@hilbot) and check its scopes (chat:write, files:write)",
        ) from None
    finally:
        await close_client(client)
    return chats


def _digest_chats(config: HilbotConfig) -> list[str]:
    if not config.slack.digest.chats:
        raise HilbotError(
            "no channels to post the digest to",
            fix='set [slack.digest] chats = ["C…"] in hilbot.toml',
        )
    return config.slack.digest.chats


def post_digest(config: HilbotConfig, digest: Any) -> list[str]:
    """:func:`post_digest_now`, from synchronous code."""
    return asyncio.run(post_digest_now(config, digest))


def check_digest_target(config: HilbotConfig) -> None:
    """Before a digest is built: is there a channel to post it to, and a token?"""
    _digest_chats(config)
    bot_token()


__all__ = ["check_digest_target", "post_digest", "post_digest_now"]
