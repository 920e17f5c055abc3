"""Flood control for the Telegram Bot API, as a python-telegram-bot rate limiter.

Telegram allows about 30 messages a second overall, one a second per private chat and 20 a
minute per group. PTB's ``AIORateLimiter`` has no per-chat limit and its leaky bucket lets
bursts through that a sliding window counts as too many, so this limiter keeps *slots*: a call
takes one when it starts and gives it back one period after its answer came. The server
counted the call before it answered, so however the network delays calls, the server never
sees more than the limit in any period. A 429 pauses every call for the ``retry_after`` it
names and the call is made again; so is a call that timed out. ``answerCallbackQuery`` names
no chat and takes no slot, so a tap is acknowledged at once however many cards are queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from typing import Any, Callable, Coroutine

from telegram.error import RetryAfter, TimedOut
from telegram.ext import BaseRateLimiter

from ..common import Slots as _Slots

_log = logging.getLogger("hilbot.telegram")


class FloodLimiter(BaseRateLimiter[int]):
    """Paces chat calls to Telegram's limits and retries after 429s and timeouts."""

    def __init__(
        self,
        overall_per_s: float = 30,
        chat_per_s: float = 1,
        group_per_min: float = 20,
        max_retries: int = 8,
    ):
        self._overall = _Slots.per_second(overall_per_s)
        self._chat = (1, 1 / chat_per_s)
        per_group = max(1, int(group_per_min))
        self._group = (per_group, 60.0 * per_group / group_per_min)
        self._chats: dict[int | str, _Slots] = {}
        self.max_retries = max_retries
        self._open = asyncio.Event()
        self._open.set()
        self.retries = 0
        """Calls retried after a 429 or a timeout."""

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to tear down."""

    def _slots(self, data: dict[str, Any]) -> list[_Slots]:
        """The chat's slots, then the overall ones; none for calls that name no chat."""
        chat_id = data.get("chat_id")
        if chat_id is None:
            return []
        with contextlib.suppress(TypeError, ValueError):
            chat_id = int(chat_id)
        if chat_id not in self._chats:
            group = not isinstance(chat_id, int) or chat_id < 0
            self._chats[chat_id] = _Slots(*(self._group if group else self._chat))
        return [self._chats[chat_id], self._overall]

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, Any]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> Any:
        """Take the call's slots, make it; after a 429 or a timeout wait and make it again."""
        slots = self._slots(data)
        for attempt in range(self.max_retries + 1):
            await self._open.wait()
            # always chat first, then overall: no two calls wait on each other in a cycle
            for slot in slots:
                await slot.take()
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
            finally:
                for slot in slots:
                    slot.give_back()
        raise AssertionError("unreachable")

    async def _pause(self, retry_after: Any, endpoint: str) -> None:
        timed = hasattr(retry_after, "total_seconds")
        seconds = retry_after.total_seconds() if timed else float(retry_after)
        self.retries += 1
        _log.info("%s: flood limit hit; every call waits %.1f s", endpoint, seconds)
        self._open.clear()
        try:
            await asyncio.sleep(seconds + 0.1)
        finally:
            self._open.set()
