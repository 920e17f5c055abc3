"""The chat core's background jobs, for every platform: runs that grow, and digests on a schedule."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, time, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable

from .port import Chat

if TYPE_CHECKING:
    from evaluation.config import DigestSchedule

    from .flow import ChatFlow

_log = logging.getLogger("hilbot.chat")


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Scheduler:
    """Re-reads growing runs every ``refresh_s`` (their new items are dealt) and posts the digest on schedule.

    The digest goes to ``chats`` daily at ``[…digest] time`` in its time zone, or every
    ``every_minutes``; "new" ratings are those since the previous digest (at the first, the
    period before it).
    """

    def __init__(self, flow: "ChatFlow", *, refresh_s: float, digest: "DigestSchedule", chats: list[Chat],
                 clock: Callable[[], datetime] = _utcnow):
        self.flow = flow
        self.refresh_s = refresh_s
        self.schedule = digest
        self.chats = chats
        self.clock = clock
        self._last: datetime | None = None
        self._tasks: list[asyncio.Task[Any]] = []

    def start(self) -> None:
        """Start the jobs (in the running event loop)."""
        self._tasks.append(asyncio.ensure_future(self._every(self.refresh_s, self.flow.refresh, "refreshing growing runs")))
        if self.chats and (self.schedule.time or self.schedule.every_minutes):
            self._tasks.append(asyncio.ensure_future(self._digests()))

    async def stop(self) -> None:
        """Stop the jobs (a job under way is cancelled)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    def next_digest(self, after: datetime) -> datetime | None:
        """When the digest is next due after ``after`` (None: no schedule)."""
        if self.schedule.every_minutes:
            return after + timedelta(minutes=self.schedule.every_minutes)
        if not self.schedule.time:
            return None
        from zoneinfo import ZoneInfo

        zone = ZoneInfo(self.schedule.timezone)
        hour, minute = map(int, self.schedule.time.split(":"))
        local = after.astimezone(zone)
        due = datetime.combine(local.date(), time(hour, minute), zone)
        return due if due > local else datetime.combine(local.date() + timedelta(days=1), time(hour, minute), zone)

    async def digest(self) -> None:
        """Post the digest to the scheduled chats now."""
        now = self.clock()
        since = self._last or now - self._period()
        self._last = now
        await self.flow.post_digest(self.chats, since=since)

    def _period(self) -> timedelta:
        return timedelta(minutes=self.schedule.every_minutes) if self.schedule.every_minutes else timedelta(days=1)

    async def _digests(self) -> None:
        while True:
            now = self.clock()
            due = self.next_digest(now)
            assert due is not None  # started only with a schedule
            await asyncio.sleep(max(0.0, (due - now).total_seconds()))
            await self._guarded(self.digest, "posting the scheduled digest")

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
