"""An aiohttp app served on 127.0.0.1 by an event loop in a thread of its own (what every fake runs
on).

The thread lets sync tests, async tests (whose own loop keeps running), subprocesses and the
benchmarks all talk to the same fake.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from aiohttp import web


class ThreadedApp:
    """Serves ``build()`` on a free port until :meth:`stop`."""

    def __init__(
        self, build: Callable[[], web.Application], name: str, shutdown_timeout: float = 60.0
    ):
        self.build, self.name, self.shutdown_timeout = build, name, shutdown_timeout
        self.port = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None

    def start(self) -> int:
        """Start serving; returns the port."""
        self._thread = threading.Thread(target=self._main, name=self.name, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"{self.name} did not start")
        return self.port

    def call_soon(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` in the server's loop (from any thread), unless it has stopped."""
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(callback)

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        assert self.loop is not None and self._stopped is not None and self._thread is not None
        self.loop.call_soon_threadsafe(self._stopped.set)
        self._thread.join(10)

    def _main(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._stopped = asyncio.Event()
        self.loop.run_until_complete(self._serve())
        self.loop.close()

    async def _serve(self) -> None:
        runner = web.AppRunner(
            self.build(), access_log=None, shutdown_timeout=self.shutdown_timeout
        )
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stopped.wait()
        await runner.cleanup()


class Waits:
    """Waiting for a fake's state from a test: in the test's event loop, or blocking."""

    async def until(
        self, predicate: Callable[[], Any], timeout: float = 5.0, what: str = "condition"
    ) -> None:
        """Wait (in a test's event loop) until ``predicate()`` is true."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.01)

    def wait(
        self, predicate: Callable[[], Any], timeout: float = 5.0, what: str = "condition"
    ) -> None:
        """Wait (blocking) until ``predicate()`` is true."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.01)


@dataclass
class Window:
    """A sliding window: at most ``limit`` calls in any ``period`` seconds (as a platform counts
    them)."""

    limit: int
    period: float
    times: deque[float] = field(default_factory=deque)

    @classmethod
    def per_second(cls, rate: float) -> "Window":
        """A window allowing ``rate`` calls a second (one call per 1/rate seconds below one a
        second)."""
        period = max(1.0, 1.0 / rate)
        return cls(max(1, round(rate * period)), period)

    def wait(self, now: float) -> float:
        """Seconds until a call arriving now would fit (0 when it fits)."""
        while self.times and self.times[0] <= now - self.period:
            self.times.popleft()
        return 0.0 if len(self.times) < self.limit else self.times[-self.limit] + self.period - now


def take_fault(queue: deque[Any], params: dict) -> Any:
    """The first fault of ``queue`` whose ``match`` accepts a call's params (or that matches any),
    taken off it."""
    for index, fault in enumerate(queue):
        if fault.match is None or fault.match(params):
            del queue[index]
            return fault
    return None


@dataclass
class Call:
    """One request a fake received."""

    method: str
    params: dict
    at: float
    """``time.monotonic()`` at arrival."""
    status: int | None = None
    """HTTP status of the answer; None while it is still being answered."""


def example_for(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A value valid for a JSON schema, as a model would answer: enums take their first value,
    numbers 0.8 of their range."""
    if "$ref" in schema:
        return example_for(defs[schema["$ref"].split("/")[-1]], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        return example_for(schema["anyOf"][0], defs)
    kind = schema.get("type")
    if kind == "object":
        return {name: example_for(sub, defs) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [example_for(schema.get("items", {}), defs)] if schema.get("minItems") else []
    if kind in ("number", "integer"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 1)
        return high if kind == "integer" else round(low + 0.8 * (high - low), 3)
    if kind == "boolean":
        return True
    return "Looks right."


def quoting(value: Any, quoted: str) -> Any:
    """A text (or each text of a list) with ``quoted`` appended; anything else as it is (a fake
    echoing what it was sent into its answer)."""
    if isinstance(value, list):
        return [quoting(entry, quoted) for entry in value]
    return f"{value} {quoted}" if isinstance(value, str) else value
