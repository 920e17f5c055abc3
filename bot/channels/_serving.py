"""Serving a chat bot until SIGINT or SIGTERM: a stop at any moment, even while the bot is starting, is clean."""

from __future__ import annotations

import asyncio
import signal
from typing import Any, Awaitable, Callable


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


async def serve(stop: asyncio.Event, start: Awaitable[Any], shut_down: Callable[[], Awaitable[Any]]) -> None:
    """Start; once started, run until ``stop``; shut down in every case (a failed start raises after it)."""
    try:
        if await until_stopped(stop, start):
            await stop.wait()
    finally:
        await shut_down()


__all__ = ["serve", "stop_signal", "until_stopped"]
