"""``--target module:function``: a Python callable, imported from the current directory or the
installed packages, called with the query text; it returns an answer (``str``), ranked results (a
``list`` of dicts or paths), or a ``dict`` with any of ``answer``, ``results``, ``quotes``,
``contexts``, ``usage``, ``cost_usd``, ``model``. An async callable is awaited; a sync one runs on
a daemon thread, so a hung call cannot hold the run past its timeout. An exception, a timeout or a
bad return value is recorded on the item and the run goes on.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from ..cases import Case
from .base import TargetError, TargetOutput, failed_output, first_line, to_output


class PythonTarget:
    """``module:function`` imported from the current directory or the installed packages."""

    def __init__(self, spec: str, timeout_s: float):
        self.name, self.timeout_s = spec, timeout_s
        self.function = _import(spec)

    async def __call__(self, case: Case) -> TargetOutput:
        started = time.perf_counter()
        try:
            if inspect.iscoroutinefunction(self.function):
                value = await asyncio.wait_for(self.function(case.query.query), self.timeout_s)
            else:
                value = await asyncio.wait_for(
                    _in_daemon_thread(self.function, case.query.query), self.timeout_s
                )
            output = to_output(value)
        except asyncio.TimeoutError:
            return failed_output(f"timed out after {self.timeout_s:g}s", started)
        except (ValueError, ValidationError) as exc:
            return failed_output(f"bad return value: {first_line(exc)}", started)
        except Exception as exc:  # the system under test failing is data, not a crash
            return failed_output(f"{type(exc).__name__}: {first_line(exc)}", started)
        output.latency_ms = round((time.perf_counter() - started) * 1000, 1)
        return output


def _in_daemon_thread(function: Callable[[str], Any], query: str) -> "asyncio.Future[Any]":
    """Run a sync target on a daemon thread, so a hung call cannot hold the run past its timeout."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            future.set_result(value) if ok else future.set_exception(value)

    def work() -> None:
        try:
            result = (True, function(query))
        except BaseException as exc:  # delivered to the awaiting task
            result = (False, exc)
        try:
            loop.call_soon_threadsafe(settle, *result)
        except RuntimeError:  # the loop has closed: the run is over
            pass

    threading.Thread(target=work, name="hilbot-target", daemon=True).start()
    return future


def _import(spec: str) -> Callable[..., Any]:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise TargetError(
            f"--target {spec!r} is not module:function",
            fix="e.g. --target examples.docs_search:search",
        )
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise TargetError(
            f"cannot import {module_name!r} ({exc})",
            fix="run from the directory that holds it, or install it",
        ) from None
    function = getattr(module, attr, None)
    if not callable(function):
        raise TargetError(
            f"{module_name} has no callable {attr!r}", fix="name a function taking the query text"
        )
    return function
