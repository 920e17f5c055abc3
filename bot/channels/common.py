"""What the chat channels share: pacing calls to a platform's limits, and serving until stopped.

- :class:`Slots`: at most so many calls in any period, as the server counts them (the Telegram
  flood limiter and the Slack port alike).
- :func:`serve`, :func:`stop_signal`, :func:`until_stopped`: a chat bot runs until SIGINT or
  SIGTERM, and a stop at any moment, even while the bot is starting, is clean.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any, Awaitable, Callable

# ---------------------------------------------------------------------- pacing


class Slots:
    """At most ``count`` calls in any ``period`` seconds, as the server counts them.

    A call takes a slot when it starts and gives it back one period after its answer. The server
    counts a call before it answers it, so however the network delays calls, the server never
    sees more than ``count`` calls in any ``period``.
    """

    def __init__(self, count: int, period: float):
        self.period = period
        self._free = asyncio.Semaphore(count)

    @classmethod
    def per_second(cls, rate: float) -> "Slots":
        """Slots for ``rate`` calls a second (a fractional rate: one call per ``1 / rate`` s)."""
        count = max(1, int(rate))
        return cls(count, count / rate)

    async def take(self) -> None:
        await self._free.acquire()

    def give_back(self) -> None:
        """The call has been answered: its slot is free again one period from now."""
        asyncio.get_running_loop().call_later(self.period, self._free.release)


# ---------------------------------------------------------------------- serving


def stop_signal() -> asyncio.Event:
    """An event SIGINT and SIGTERM set (in the running loop)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    return stop


async def until_stopped(stop: asyncio.Event, work: Awaitable[Any]) -> bool:
    """Run ``work`` unless ``stop`` is set first (then cancel it); whether it finished."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(stop.wait())
    done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if task in done:
        task.result()
        return True
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return False


async def serve(
    stop: asyncio.Event, start: Awaitable[Any], shut_down: Callable[[], Awaitable[Any]]
) -> None:
    """Start; once started, run until ``stop``; shut down in every case (a failed start raises
    after it)."""
    try:
        if await until_stopped(stop, start):
            await stop.wait()
    finally:
        await shut_down()


__all__ = ["Slots", "serve", "stop_signal", "until_stopped"]
