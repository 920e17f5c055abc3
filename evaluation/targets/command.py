"""``--target-cmd 'CMD'``: a command run once per case, printing the output JSON (or plain text, an
answer) on stdout. With ``{query}`` the command, checked up front (:mod:`.template`), is split into
arguments and run *without a shell*, ``{query}`` replaced by the query as one whole argument; a
query starting with ``-`` where the program still reads options is an error on its item. Without
``{query}`` the command runs through the shell (pipes work) and reads the query from stdin. Either
way the query is also in the environment as ``HILBOT_QUERY``. A non-zero exit, a timeout or a
query that cannot be passed (a NUL byte, too long for one argument) is recorded on the item and the
run goes on.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from pydantic import ValidationError

from .._json import loads
from ..cases import Case
from .base import TargetOutput, failed_output, first_line, to_output
from .placement import PLACEHOLDER, query_exposed
from .template import check_template

MAX_ARG_BYTES = 128 * 1024
"""Longest single argument or environment entry, its terminating NUL included (Linux's
MAX_ARG_STRLEN)."""


_OPTION_LIKE = (
    "the query starts with '-', so the program could read it as an option (some "
    "options run code) — put -- before {query} in --target-cmd (e.g. mytool -- "
    '{query}), or leave {query} out and read the query from stdin or "$HILBOT_QUERY"'
)


class _Unpassable(Exception):
    """This query cannot be handed to the command (recorded as the item's error)."""


class CommandTarget:
    """A command: the query as ``{query}`` (no shell) or on stdin (shell), and in
    ``$HILBOT_QUERY``."""

    def __init__(self, command: str, timeout_s: float):
        self.name, self.command, self.timeout_s = command, command, timeout_s
        self.argv = check_template(command) if PLACEHOLDER in command else None
        """The command split into arguments when it holds ``{query}`` (run without a shell), else
        None."""
        self.exposed = self.argv is not None and query_exposed(self.argv)
        """Whether a ``{query}`` has no ``--`` before it (then a query starting with ``-`` is an
        option)."""

    async def __call__(self, case: Case) -> TargetOutput:
        started = time.perf_counter()
        try:
            argv, stdin, env = self._invocation(case.query.query)
        except _Unpassable as exc:
            return failed_output(str(exc), started)
        pipes: dict[str, Any] = dict(
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        try:
            if argv is None:
                process = await asyncio.create_subprocess_shell(self.command, **pipes)
            else:
                process = await asyncio.create_subprocess_exec(*argv, **pipes)
        except OSError as exc:
            return failed_output(f"cannot start the command: {exc.strerror or exc}", started)
        return await self._finish(process, stdin, started)

    def _invocation(self, query: str) -> tuple[list[str] | None, bytes | None, dict[str, str]]:
        """(argv or None for the shell, stdin bytes, environment) for one query."""
        try:
            data = query.encode("utf-8")
        except UnicodeEncodeError:
            raise _Unpassable(
                "the query is not valid Unicode text (a lone surrogate), so it cannot be passed to "
                "a command — fix the query's text"
            ) from None
        env = {k: v for k, v in os.environ.items() if k != "HILBOT_QUERY"}
        if "\x00" not in query and len(data) + len("HILBOT_QUERY=") < MAX_ARG_BYTES:
            env["HILBOT_QUERY"] = query
        if self.argv is None:
            return None, data, env
        if "\x00" in query:
            raise _Unpassable(
                "the query holds a NUL byte, which cannot be passed as an argument — drop {query} "
                "from --target-cmd to get the query on stdin"
            )
        if self.exposed and query.startswith("-"):
            raise _Unpassable(_OPTION_LIKE)
        argv = [arg.replace(PLACEHOLDER, query) for arg in self.argv]
        longest = max(len(arg.encode("utf-8")) for arg in argv)
        if longest >= MAX_ARG_BYTES:
            raise _Unpassable(
                f"the query makes an argument of {longest:,} bytes, too long for one argument (the "
                f"limit is {MAX_ARG_BYTES // 1024} KiB) — drop {{query}} from --target-cmd to get "
                "the query on stdin"
            )
        return argv, None, env

    async def _finish(
        self, process: asyncio.subprocess.Process, stdin: bytes | None, started: float
    ) -> TargetOutput:
        try:
            out, err = await asyncio.wait_for(process.communicate(stdin), self.timeout_s)
        except asyncio.TimeoutError:
            _kill(process)
            await process.wait()
            return failed_output(f"timed out after {self.timeout_s:g}s", started)
        if process.returncode != 0:
            detail = first_line(Exception(err.decode("utf-8", "replace"))) or "no stderr"
            return failed_output(f"exit {process.returncode}: {detail}", started)
        output = _parse_stdout(out.decode("utf-8", "replace"))
        output.latency_ms = round((time.perf_counter() - started) * 1000, 1)
        return output


def _kill(process: asyncio.subprocess.Process) -> None:
    import signal

    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _parse_stdout(text: str) -> TargetOutput:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return (
            TargetOutput(answer=stripped) if stripped else TargetOutput(error="no output on stdout")
        )
    try:
        return to_output(loads(stripped, duplicates=False))
    except (ValueError, ValidationError) as exc:
        return TargetOutput(error=f"stdout is not the expected JSON: {first_line(exc)}")
