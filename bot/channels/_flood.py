"""Flood control for the Telegram Bot API, as a python-telegram-bot rate limiter.

Telegram allows about 30 messages a second overall, one a second per private chat and 20 a
minute per group. PTB's ``AIORateLimiter`` has no per-chat limit and lets bursts through (a
leaky bucket), so this limiter paces instead: calls to one chat are spaced at least a second
apart, all chat calls at least 1/30 s apart (each with a small margin, since the server counts
arrivals), and a group never gets more than 20 in any minute. A 429 pauses every call for the
``retry_after`` it names and the call is retried; so is a timeout. ``answerCallbackQuery``
names no chat and is never held back, so a tap is acknowledged at once however long the
queue of cards is.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import warnings
from typing import Any, Callable, Coroutine

from telegram.error import RetryAfter, TimedOut
from telegram.ext import BaseRateLimiter

_log = logging.getLogger("hilbot.telegram")
MARGIN = 1.03
"""Spacing is the limit's interval times this."""


class _Pacer:
    """Hands out start times at least ``interval`` apart, in call order."""

    def __init__(self, interval: float):
        self.interval = interval
        self._next = 0.0

    async def wait(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        slot = max(now, self._next)
        self._next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


class _Window:
    """At most ``count`` starts in any ``period`` seconds."""

    def __init__(self, count: int, period: float):
        self.count, self.period = count, period
        self._starts: collections.deque[float] = collections.deque()
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self._lock:
            loop = asyncio.get_running_loop()
            if len(self._starts) >= self.count:
                await asyncio.sleep(max(0.0, self._starts[0] + self.period - loop.time()))
                self._starts.popleft()
            self._starts.append(loop.time())


class FloodLimiter(BaseRateLimiter[int]):
    """Paces chat calls to Telegram's limits and retries after 429s and timeouts."""

    def __init__(self, overall_per_s: float = 30, chat_per_s: float = 1, group_per_min: float = 20, max_retries: int = 8):
        self._overall = _Pacer(MARGIN / overall_per_s)
        self._chat_interval = MARGIN / chat_per_s
        self._group = (max(1, int(group_per_min)), 60.0 * MARGIN)
        self._chats: dict[int | str, _Pacer | _Window] = {}
        self.max_retries = max_retries
        self._open = asyncio.Event()
        self._open.set()
        self.retries = 0
        """Calls retried after a 429 or a timeout."""

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to tear down."""

    def _for_chat(self, chat_id: Any) -> _Pacer | _Window:
        with contextlib.suppress(TypeError, ValueError):
            chat_id = int(chat_id)
        if chat_id not in self._chats:
            group = not isinstance(chat_id, int) or chat_id < 0
            self._chats[chat_id] = _Window(*self._group) if group else _Pacer(self._chat_interval)
        return self._chats[chat_id]

    async def _pace(self, data: dict[str, Any]) -> None:
        await self._open.wait()
        if data.get("chat_id") is not None:
            await self._for_chat(data["chat_id"]).wait()
            await self._overall.wait()

    async def process_request(self, callback: Callable[..., Coroutine[Any, Any, Any]], args: Any, kwargs: dict[str, Any],
                              endpoint: str, data: dict[str, Any], rate_limit_args: int | None) -> Any:
        """Pace the call, then make it; after a 429 or a timeout wait and make it again."""
        for attempt in range(self.max_retries + 1):
            await self._pace(data)
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as exc:
                if attempt == self.max_retries:
                    raise
                with warnings.catch_warnings():  # PTB 22 warns that retry_after becomes a timedelta
                    warnings.simplefilter("ignore")
                    retry_after = exc.retry_after
                await self._pause(retry_after, endpoint)
            except TimedOut:
                if attempt == self.max_retries:
                    raise
                self.retries += 1
                _log.warning("%s timed out; retrying", endpoint)
        raise AssertionError("unreachable")

    async def _pause(self, retry_after: Any, endpoint: str) -> None:
        seconds = retry_after.total_seconds() if hasattr(retry_after, "total_seconds") else float(retry_after)
        self.retries += 1
        _log.info("%s: flood limit hit; every call waits %.1f s", endpoint, seconds)
        self._open.clear()
        try:
            await asyncio.sleep(seconds + 0.1)
        finally:
            self._open.set()
