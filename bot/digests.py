"""The digest command: build the digest (analysis) and deliver it (stdout, files or a chat)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from evaluation import HilbotConfig, HilbotError, Store, utcnow

POSTS = ("stdout", "telegram")


def make_digest(store: Store, config: HilbotConfig, *, post: str = "stdout", since_hours: float = 24.0,
                out: str | None = None) -> str:
    """Build the digest, write it under ``out``, post it; returns what to print."""
    from analysis.digest import build_digest

    if post not in POSTS:
        raise HilbotError(f"cannot post a digest to {post!r}", fix=f"use --post {' or '.join(POSTS)}")
    digest = build_digest(store, config, since=utcnow() - timedelta(hours=since_hours), figures=True)
    if out:
        store.write_file(Path(out) / "digest.md", digest.text() + "\n")
        if digest.chart_png:
            store.write_bytes(Path(out) / "digest.png", digest.chart_png)
    if post == "telegram":
        from bot.channels.telegram import post_digest

        chats = post_digest(config, digest)
        return f"Posted the digest to {len(chats)} Telegram chat(s)."
    return digest.text()
