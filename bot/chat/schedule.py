"""The chat core's background jobs, for every platform: runs that grow, and digests on a
schedule."""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import datetime, time, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable

from .port import Chat

if TYPE_CHECKING:
    from evaluation.config import DigestSchedule

    from .flow import ChatFlow

_log = logging.getLogger("hilbot.chat")
ROUND_GRACE_S = 30.0
"""How long stopping waits for a round of the sources and sinks under way (its waits end at
once)."""


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Scheduler:
    """Re-reads growing runs every ``refresh_s`` (their new items are dealt) and posts the digest on
    schedule.

    The digest goes to ``chats`` daily at ``[…digest] time`` in its time zone, or every
    ``every_minutes``; "new" ratings are those since the previous digest (at the first, the
    period before it). Each scheduled post is a ``digest_posted`` record in the log, so the
    schedule survives a restart: a digest that fell due while the bot was down is posted when it
    starts (once, however many were missed), and one posted just before a restart is not posted
    again.
    """

    def __init__(
        self,
        flow: "ChatFlow",
        *,
        refresh_s: float,
        digest: "DigestSchedule",
        chats: list[Chat],
        clock: Callable[[], datetime] = _utcnow,
    ):
        self.flow = flow
        self.refresh_s = refresh_s
        self.schedule = digest
        self.chats = chats
        self.clock = clock
        self._last: datetime | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._halt = threading.Event()
        self._round: asyncio.Future[list[str]] | None = None
        """Set when stopping: a push under way stops waiting for its retries."""

    def start(self) -> None:
        """Start the jobs (in the running event loop)."""
        self._tasks.append(
            asyncio.ensure_future(
                self._every(self.refresh_s, self.flow.refresh, "refreshing growing runs")
            )
        )
        config = self.flow.engine.config
        if any(s.follow for s in config.sources.values()) or config.sinks:
            self._tasks.append(
                asyncio.ensure_future(
                    self._every(
                        config.connectors.every_s,
                        self.sync,
                        "pulling from sources and pushing labels",
                    )
                )
            )
        if self.chats and (self.schedule.time or self.schedule.every_minutes):
            self._last = self._recorded() or self._last
            self._tasks.append(asyncio.ensure_future(self._digests()))

    async def sync(self) -> None:
        """One round of the configured sources and sinks (off the event loop): new items of the
        following sources join their runs, pending labels go out; what failed is logged and tried
        again."""
        import os

        from evaluation.connectors.commands import sync_round

        engine = self.flow.engine
        self._round = asyncio.ensure_future(
            asyncio.to_thread(sync_round, engine.store, engine.config, os.environ, stop=self._halt)
        )
        for problem in await asyncio.shield(self._round):
            _log.warning("%s", problem)

    async def stop(self) -> None:
        """Stop the jobs (a job under way is cancelled; a round of the sources and sinks under way
        is told to stop waiting, and finishes recording what it sent before this returns)."""
        self._halt.set()
        if self._round is not None and not self._round.done():
            await asyncio.wait([self._round], timeout=ROUND_GRACE_S)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    def _recorded(self) -> datetime | None:
        """When this platform's bot last posted its scheduled digest, as the log says."""
        from analysis import read_typed

        posted = read_typed(self.flow.engine.store.ratings.path, "digest_posted")
        platform = self.flow.port.platform
        return max(
            (r.timestamp for _, r in posted if r.channel == platform and r.scheduled), default=None
        )

    def next_digest(self, after: datetime) -> datetime | None:
        """When the digest is next due after ``after`` (None: no schedule); ``every_minutes`` counts
        from the last post."""
        if self.schedule.every_minutes:
            period = timedelta(minutes=self.schedule.every_minutes)
            if self._last is not None and self._last + period > after:
                return self._last + period
            return after + period
        if not self.schedule.time:
            return None
        from zoneinfo import ZoneInfo

        zone = ZoneInfo(self.schedule.timezone)
        hour, minute = map(int, self.schedule.time.split(":"))
        local = after.astimezone(zone)
        due = datetime.combine(local.date(), time(hour, minute), zone)
        return (
            due
            if due > local
            else datetime.combine(local.date() + timedelta(days=1), time(hour, minute), zone)
        )

    async def digest(self, due: datetime | None = None) -> None:
        """Post the digest to the scheduled chats now, and record it in the log. With a shared
        store, the replica that claims the digest ``due`` at that time first posts it; the others
        let it be."""
        from evaluation.records import DigestPosted

        now = self.clock()
        since = self._last or now - self._period()
        self._last = now
        store = self.flow.engine.store
        slot = f"digest:{self.flow.port.platform}:{due.isoformat() if due else now.isoformat()}"
        if store.shared and not await asyncio.to_thread(store.once, slot):
            return
        await self.flow.post_digest(self.chats, since=since)
        await self.flow.engine.store.ratings.aappend(
            DigestPosted(
                channel=self.flow.port.platform,
                chats=[c.id for c in self.chats],
                since=since,
                timestamp=now,
            )
        )

    def _missed(self, now: datetime) -> bool:
        """Whether a digest fell due after the last one and before ``now`` (the bot was down)."""
        if self._last is None:
            return False
        due = self.next_digest(self._last)
        return due is not None and due <= now

    def _period(self) -> timedelta:
        return (
            timedelta(minutes=self.schedule.every_minutes)
            if self.schedule.every_minutes
            else timedelta(days=1)
        )

    async def _digests(self) -> None:
        if self._missed(self.clock()):
            missed = self.next_digest(self._last) if self._last else None
            await self._guarded(
                lambda: self.digest(missed), "posting the digest missed while the bot was down"
            )
        while True:
            now = self.clock()
            due = self.next_digest(now)
            assert due is not None  # started only with a schedule
            await asyncio.sleep(max(0.0, (due - now).total_seconds()))
            await self._guarded(lambda: self.digest(due), "posting the scheduled digest")

    async def _every(self, seconds: float, job: Callable[[], Any], what: str) -> None:
        while True:
            await asyncio.sleep(seconds)
            await self._guarded(job, what)

    async def _guarded(self, job: Callable[[], Any], what: str) -> None:
        try:
            await job()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # reported to the one error handler; the job runs again next time
            self.flow.on_error(exc, what)


__all__ = ["Scheduler"]
