"""The digest in a chat: built off the event loop, then its text and chart sent to each chat.

The digest itself is :func:`analysis.digest.build_digest`'s. The chat core posts it on
``/digest`` and on a schedule (:class:`~bot.chat.schedule.Scheduler`); ``hilbot digest --post``
posts one once through a channel's own ``digest`` module (``bot.channels.telegram.digest``,
``bot.channels.slack.digest``), which sends it with :func:`send_digest` too.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .port import Chat, ChatPort

if TYPE_CHECKING:
    from ..review import ReviewEngine


REPORT_NAME = "hilbot-report.html"
"""The file name of the report a digest attaches (``hilbot digest --report``)."""
REPORT_CAPTION = "The dashboard's pages in one file: open it in a browser"
"""Its caption."""


async def send_digest(port: ChatPort, chats: list[Chat], digest: Any) -> None:
    """A digest's text and chart (and the dashboard's report, when it carries one), to each
    chat."""
    for chat in chats:
        await port.send_text(chat, digest.text())
        if digest.chart_png:
            await port.send_file(
                chat, digest.chart_png, "digest.png", "Human vs AI average per run"
            )
        if digest.report_html:
            await port.send_file(chat, digest.report_html, REPORT_NAME, REPORT_CAPTION)


async def post_digest(
    engine: "ReviewEngine", port: ChatPort, chats: list[Chat], since: datetime | None = None
) -> None:
    """Build the digest (off the event loop) and post its text and chart to each chat. With a
    shared store, the data directory's copy, which the digest reads, is brought up first."""
    from datetime import timedelta, timezone

    from analysis.digest import build_digest

    await engine.catch_up()
    since = since or datetime.now(timezone.utc) - timedelta(days=1)
    digest = await asyncio.to_thread(
        build_digest, engine.store, engine.config, since=since, figures=True
    )
    await send_digest(port, chats, digest)


__all__ = ["REPORT_CAPTION", "REPORT_NAME", "post_digest", "send_digest"]
