"""Targets: how the system under test's outputs are obtained.

- ``--target module:function``: a sync or async callable taking the query text and returning an
  answer (``str``), ranked results (a ``list`` of dicts or paths), or a ``dict`` with any of
  ``answer``, ``results``, ``quotes``, ``contexts``, ``usage``, ``cost_usd``, ``model``.
- ``--target-cmd 'CMD'``: a shell command; ``{query}`` in it is replaced by the shell-quoted
  query, otherwise the query is written to stdin. It prints that JSON (or plain text, an
  answer) on stdout. A non-zero exit or a timeout is recorded on the item and the run goes on.
- ``--outputs FILE``: precomputed outputs (JSONL or a JSON list), matched to cases by ``id``
  (or by the query text).

Every call is timed; the latency and the target's own cost are recorded on the item.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import shlex
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Protocol

from pydantic import Field, ValidationError

from .cases import Case
from .errors import HilbotError
from .records import SearchResult, _Model


class TargetError(HilbotError):
    """A target cannot be set up (bad module path, missing outputs file)."""


class TargetOutput(_Model):
    """What the system under test produced for one case."""

    answer: str | None = None
    """The answer text."""
    results: list[SearchResult] = Field(default_factory=list)
    """Ranked results."""
    quotes: list[str] = Field(default_factory=list)
    """Passages cited verbatim."""
    contexts: list[str] = Field(default_factory=list)
    """Retrieved passages the answer was grounded on."""
    usage: dict[str, int] = Field(default_factory=dict)
    """Tokens used (input_tokens, output_tokens)."""
    cost_usd: float | None = None
    """What producing the output cost."""
    model: str | None = None
    """Model the system used, if it says."""
    latency_ms: float | None = None
    """Time taken (measured by hilbot unless precomputed)."""
    error: str | None = None
    """Why there is no output."""


class Target(Protocol):
    """The system under test."""

    name: str

    async def __call__(self, case: Case) -> TargetOutput:
        """Produce the output for one case (errors are returned on the output, not raised)."""
        ...


def to_output(value: Any) -> TargetOutput:
    """Interpret what a target returned (str, list of results, or dict)."""
    if isinstance(value, TargetOutput):
        return value
    if isinstance(value, str):
        return TargetOutput(answer=value)
    if isinstance(value, list):
        value = {"results": value}
    if not isinstance(value, dict):
        raise ValueError(f"a target must return str, list or dict, not {type(value).__name__}")
    results = [r if isinstance(r, dict) else {"path": str(r)} for r in value.get("results") or []]
    for rank, result in enumerate(results, 1):
        result.setdefault("rank", rank)
    return TargetOutput.model_validate({**value, "results": results})


def _failed(message: str, started: float) -> TargetOutput:
    return TargetOutput(error=message, latency_ms=round((time.perf_counter() - started) * 1000, 1))


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
                value = await asyncio.wait_for(_in_daemon_thread(self.function, case.query.query), self.timeout_s)
            output = to_output(value)
        except asyncio.TimeoutError:
            return _failed(f"timed out after {self.timeout_s:g}s", started)
        except (ValueError, ValidationError) as exc:
            return _failed(f"bad return value: {_first_line(exc)}", started)
        except Exception as exc:  # the system under test failing is data, not a crash
            return _failed(f"{type(exc).__name__}: {_first_line(exc)}", started)
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
        raise TargetError(f"--target {spec!r} is not module:function", fix="e.g. --target examples.docs_search:search")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise TargetError(f"cannot import {module_name!r} ({exc})", fix="run from the directory that holds it, or install it") from None
    function = getattr(module, attr, None)
    if not callable(function):
        raise TargetError(f"{module_name} has no callable {attr!r}", fix="name a function taking the query text")
    return function


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[-1][:200]


class CommandTarget:
    """A shell command: the query as ``{query}`` or on stdin, JSON or plain text on stdout."""

    def __init__(self, command: str, timeout_s: float):
        self.name, self.command, self.timeout_s = command, command, timeout_s

    async def __call__(self, case: Case) -> TargetOutput:
        started = time.perf_counter()
        templated = "{query}" in self.command
        command = self.command.replace("{query}", shlex.quote(case.query.query)) if templated else self.command
        process = await asyncio.create_subprocess_shell(
            command, stdin=asyncio.subprocess.DEVNULL if templated else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
        stdin = None if templated else case.query.query.encode("utf-8")
        try:
            out, err = await asyncio.wait_for(process.communicate(stdin), self.timeout_s)
        except asyncio.TimeoutError:
            _kill(process)
            await process.wait()
            return _failed(f"timed out after {self.timeout_s:g}s", started)
        if process.returncode != 0:
            detail = _first_line(Exception(err.decode("utf-8", "replace"))) or "no stderr"
            return _failed(f"exit {process.returncode}: {detail}", started)
        output = _parse_stdout(out.decode("utf-8", "replace"))
        output.latency_ms = round((time.perf_counter() - started) * 1000, 1)
        return output


def _kill(process: asyncio.subprocess.Process) -> None:
    import os
    import signal

    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _parse_stdout(text: str) -> TargetOutput:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return TargetOutput(answer=stripped) if stripped else TargetOutput(error="no output on stdout")
    try:
        return to_output(json.loads(stripped))
    except (json.JSONDecodeError, ValueError, ValidationError) as exc:
        return TargetOutput(error=f"stdout is not the expected JSON: {_first_line(exc)}")


class OutputsTarget:
    """Precomputed outputs, one per case id (JSONL or a JSON list)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.name = str(self.path)
        self.by_key = _load_outputs(self.path)

    async def __call__(self, case: Case) -> TargetOutput:
        row = self.by_key.get(case.id) or self.by_key.get(case.query.query)
        if row is None:
            return TargetOutput(error=f"no output for {case.id!r} in {self.path.name}")
        try:
            return to_output(row)
        except (ValueError, ValidationError) as exc:
            return TargetOutput(error=f"bad output row: {_first_line(exc)}")


def _load_outputs(path: Path) -> dict[str, dict[str, Any]]:
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise TargetError(f"cannot read outputs ({exc.strerror})", where=str(path), fix="check the --outputs path") from None
    rows: list[tuple[int, Any]] = []
    if text.lstrip().startswith("["):
        try:
            rows = [(0, r) for r in json.loads(text)]
        except json.JSONDecodeError as exc:
            raise TargetError(f"not valid JSON ({exc.msg})", where=f"{path}:{exc.lineno}", fix="fix the file") from None
    else:
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((number, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise TargetError(f"not valid JSON ({exc.msg})", where=f"{path}:{number}", fix="fix or remove the line") from None
    return _index_rows(path, rows)


def _index_rows(path: Path, rows: list[tuple[int, Any]]) -> dict[str, dict[str, Any]]:
    index: dict[str, dict[str, Any]] = {}
    for number, row in rows:
        key = row.get("id") or row.get("test_id") or row.get("query") if isinstance(row, dict) else None
        if not key:
            where = f"{path}:{number}" if number else str(path)
            raise TargetError("an output row needs an id (or the query)", where=where, fix='add "id" matching the case or query id')
        index[str(key)] = {k: v for k, v in row.items() if k not in ("id", "test_id", "query")}
    return index


def make_target(*, target: str | None = None, command: str | None = None, outputs: str | Path | None = None,
                timeout_s: float = 60.0) -> Target:
    """The one target the options name (exactly one of them)."""
    given = [name for name, value in (("--target", target), ("--target-cmd", command), ("--outputs", outputs)) if value]
    if len(given) != 1:
        raise TargetError(f"give exactly one of --target, --target-cmd, --outputs (got {', '.join(given) or 'none'})",
                          fix="e.g. --target examples.docs_search:search")
    if target:
        return PythonTarget(target, timeout_s)
    if command:
        return CommandTarget(command, timeout_s)
    return OutputsTarget(outputs)  # type: ignore[arg-type]
