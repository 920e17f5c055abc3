"""The digest command: build the digest (analysis) and deliver it (stdout, files or a chat)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from evaluation import HilbotConfig, HilbotError, LogIssue, Store, utcnow

POSTS = ("stdout", "telegram")
SINCE_HOURS_MAX = 24 * 365 * 100
"""The longest "new since" window, in hours (a hundred years: every time a record may carry)."""


def make_digest(store: Store, config: HilbotConfig, *, post: str = "stdout", since_hours: float = 24.0,
                out: str | None = None, issues: list[LogIssue] | None = None) -> str:
    """Build the digest, write it under ``out``, post it; returns what to print.

    Unreadable lines of the logs go to ``issues``.
    """
    from analysis.digest import build_digest

    if post not in POSTS:
        raise HilbotError(f"cannot post a digest to {post!r}", fix=f"use --post {' or '.join(POSTS)}")
    if not 0 <= since_hours <= SINCE_HOURS_MAX:  # False for NaN
        raise HilbotError(f"--since-hours {since_hours} is out of range", fix=f"use a number from 0 to {SINCE_HOURS_MAX}")
    if post == "telegram":  # before the digest is built: a missing chat or token fails at once
        from bot.channels.telegram import check_digest_target

        check_digest_target(config)
    digest = build_digest(store, config, since=utcnow() - timedelta(hours=since_hours), figures=True, issues=issues)
    if out:
        store.write_file(Path(out) / "digest.md", digest.text() + "\n")
        if digest.chart_png:
            store.write_bytes(Path(out) / "digest.png", digest.chart_png)
    if post == "telegram":
        from bot.channels.telegram import post_digest

        chats = post_digest(config, digest)
        return f"Posted the digest to {len(chats)} Telegram chat(s)."
    return digest.text()
