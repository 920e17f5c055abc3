"""Pacing messages to a platform's limits: slots a call takes when it starts and gives back one period after its answer.

The server counts a call before it answers it, so however the network delays calls, the
server never sees more than ``count`` calls in any ``period``. Used by the Telegram flood
limiter and the Slack port alike.
"""

from __future__ import annotations

import asyncio


class Slots:
    """At most ``count`` calls in any ``period`` seconds, as the server counts them."""

    def __init__(self, count: int, period: float):
        self.period = period
        self._free = asyncio.Semaphore(count)

    @classmethod
    def per_second(cls, rate: float) -> "Slots":
        """Slots for ``rate`` calls a second (a fractional rate: one call per ``1 / rate`` seconds)."""
        count = max(1, int(rate))
        return cls(count, count / rate)

    async def take(self) -> None:
        await self._free.acquire()

    def give_back(self) -> None:
        """The call has been answered: its slot is free again one period from now."""
        asyncio.get_running_loop().call_later(self.period, self._free.release)


__all__ = ["Slots"]
