"""The digest command: build the digest (:mod:`analysis.digest`) and deliver it (stdout, files or
a chat, through the channel's ``digest`` module: ``bot.channels.telegram.digest``,
``bot.channels.slack.digest``)."""

from __future__ import annotations

import importlib
from datetime import timedelta
from pathlib import Path

from evaluation import HilbotConfig, HilbotError, LogIssue, Store, utcnow

POSTS = ("stdout", "telegram", "slack")
_TITLES = {"telegram": "Telegram chat(s)", "slack": "Slack channel(s)"}
SINCE_HOURS_MAX = 24 * 365 * 100
"""The longest "new since" window, in hours (a hundred years: every time a record may carry)."""


def make_digest(
    store: Store,
    config: HilbotConfig,
    *,
    post: str = "stdout",
    since_hours: float = 24.0,
    out: str | None = None,
    issues: list[LogIssue] | None = None,
    report: bool = False,
) -> str:
    """Build the digest, write it under ``out``, post it; returns what to print.

    ``report``: attach the dashboard's pages as one HTML file to the posted digest (and write
    ``report.html`` under ``out``).

    Unreadable lines of the logs go to ``issues``.
    """
    from analysis.digest import build_digest

    if post not in POSTS:
        raise HilbotError(f"cannot post a digest to {post!r}", fix=f"use --post {', '.join(POSTS)}")
    if not 0 <= since_hours <= SINCE_HOURS_MAX:  # False for NaN
        raise HilbotError(
            f"--since-hours {since_hours} is out of range",
            fix=f"use a number from 0 to {SINCE_HOURS_MAX}",
        )
    poster = None
    if post != "stdout":  # before the digest is built: a missing chat or token fails at once
        poster = importlib.import_module(f"bot.channels.{post}")
        poster.check_digest_target(config)
    since = utcnow() - timedelta(hours=since_hours)
    digest = build_digest(store, config, since=since, figures=True, issues=issues)
    if report:
        from dataclasses import replace

        from bot.dashboard.report import report_html

        digest = replace(digest, report_html=report_html(store, config).encode("utf-8"))
    if out:
        store.write_file(Path(out) / "digest.md", digest.text() + "\n")
        if digest.chart_png:
            store.write_bytes(Path(out) / "digest.png", digest.chart_png)
        if digest.report_html:
            store.write_bytes(Path(out) / "report.html", digest.report_html)
    if poster is not None:
        chats = poster.post_digest(config, digest)
        return f"Posted the digest to {len(chats)} {_TITLES[post]}."
    return digest.text()
