"""Targets: how the system under test's outputs are obtained.

- ``--target module:function``: a sync or async callable taking the query text and returning an
  answer (``str``), ranked results (a ``list`` of dicts or paths), or a ``dict`` with any of
  ``answer``, ``results``, ``quotes``, ``contexts``, ``usage``, ``cost_usd``, ``model``.
- ``--target-cmd 'CMD'``: a command printing that JSON (or plain text, an answer) on stdout.
  The query never becomes part of a command line a shell reads: with ``{query}`` the command is
  split into arguments (``shlex``) and run *without a shell*, ``{query}`` replaced by the query as
  data; shell syntax in such a template, or ``{query}`` where a program would run it as code
  (``sh -c``, ``python -c``...), is refused up front. Without ``{query}`` the command runs
  through the shell (pipes work) and reads the query from stdin. Either way the query is also
  in the environment as ``HILBOT_QUERY``. A non-zero exit, a timeout or a query that cannot be
  passed (a NUL byte, too long for one argument) is recorded on the item and the run goes on.
- ``--outputs FILE``: precomputed outputs (JSONL or a JSON list), matched to cases by ``id``
  (or by the query text).

Every call is timed; the latency and the target's own cost are recorded on the item.
"""

from __future__ import annotations

import asyncio
import codecs
import importlib
import inspect
import json
import os
import re
import shlex
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Protocol

from pydantic import Field, ValidationError

from ._json import JSONInputError, loads
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
    if not isinstance(value.get("results") or [], list):
        raise ValueError(f"results must be a list, not {type(value['results']).__name__}")
    results: list[dict[str, Any]] = [r if isinstance(r, dict) else {"path": str(r)} for r in value.get("results") or []]
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
    """The last line of an error (where Python puts the message), scrubbed of secrets, at most 200 characters."""
    from .scrub import scrub

    return (scrub(str(exc)).strip().splitlines() or [""])[-1][:200]


PLACEHOLDER = "{query}"
MAX_ARG_BYTES = 128 * 1024
"""Longest single argument or environment entry, its terminating NUL included (Linux's MAX_ARG_STRLEN)."""

_SHELL_FIX = ('to use pipes, ";", redirections or $VARIABLES, drop {query} and read the query from "$HILBOT_QUERY" '
              "or stdin, e.g. --target-cmd 'mytool \"$HILBOT_QUERY\" | jq .'")
_CODE_FIX = ("pass it as data: drop {query} and read the query from \"$HILBOT_QUERY\" or stdin, "
             "e.g. sh -c 'mytool \"$HILBOT_QUERY\"'")
_OPERATORS = {";": "';'", "|": "a pipe '|'", "&": "'&'", "<": "a redirection '<'", ">": "a redirection '>'",
              "(": "a subshell '('", ")": "a subshell ')'", "\n": "a newline", "`": "a backtick substitution"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


class _Unpassable(Exception):
    """This query cannot be handed to the command (recorded as the item's error)."""


class CommandTarget:
    """A command: the query as ``{query}`` (no shell) or on stdin (shell), and in ``$HILBOT_QUERY``."""

    def __init__(self, command: str, timeout_s: float):
        self.name, self.command, self.timeout_s = command, command, timeout_s
        self.argv = _template(command) if PLACEHOLDER in command else None
        """The command split into arguments when it holds ``{query}`` (run without a shell), else None."""

    async def __call__(self, case: Case) -> TargetOutput:
        started = time.perf_counter()
        try:
            argv, stdin, env = self._invocation(case.query.query)
        except _Unpassable as exc:
            return _failed(str(exc), started)
        pipes: dict[str, Any] = dict(stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                                     stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, start_new_session=True)
        try:
            if argv is None:
                process = await asyncio.create_subprocess_shell(self.command, **pipes)
            else:
                process = await asyncio.create_subprocess_exec(*argv, **pipes)
        except OSError as exc:
            return _failed(f"cannot start the command: {exc.strerror or exc}", started)
        return await self._finish(process, stdin, started)

    def _invocation(self, query: str) -> tuple[list[str] | None, bytes | None, dict[str, str]]:
        """(argv or None for the shell, stdin bytes, environment) for one query."""
        try:
            data = query.encode("utf-8")
        except UnicodeEncodeError:
            raise _Unpassable("the query is not valid Unicode text (a lone surrogate), so it cannot be passed to a "
                              "command — fix the query's text") from None
        env = {k: v for k, v in os.environ.items() if k != "HILBOT_QUERY"}
        if "\x00" not in query and len(data) + len("HILBOT_QUERY=") < MAX_ARG_BYTES:
            env["HILBOT_QUERY"] = query
        if self.argv is None:
            return None, data, env
        if "\x00" in query:
            raise _Unpassable("the query holds a NUL byte, which cannot be passed as an argument — drop {query} from "
                              "--target-cmd to get the query on stdin")
        argv = [arg.replace(PLACEHOLDER, query) for arg in self.argv]
        longest = max(len(arg.encode("utf-8")) for arg in argv)
        if longest >= MAX_ARG_BYTES:
            raise _Unpassable(f"the query makes an argument of {longest:,} bytes, too long for one argument (the limit "
                              f"is {MAX_ARG_BYTES // 1024} KiB) — drop {{query}} from --target-cmd to get the query on stdin")
        return argv, None, env

    async def _finish(self, process: asyncio.subprocess.Process, stdin: bytes | None, started: float) -> TargetOutput:
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


def _template(command: str) -> list[str]:
    """A ``{query}`` command split into arguments, or a one-line error saying why it cannot run without a shell."""
    syntax = _shell_syntax(command)
    if syntax:
        raise TargetError(f"--target-cmd holds {syntax}, shell syntax, but a command with {{query}} runs without a shell",
                          fix=_SHELL_FIX)
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise TargetError(f"--target-cmd cannot be split into arguments ({str(exc).lower()})",
                          fix="close the quotation, or quote the quote character") from None
    if _ASSIGNMENT.match(argv[0]):
        raise TargetError(f"--target-cmd starts with the variable assignment {argv[0].split('=')[0]}=..., shell syntax, but "
                          "a command with {query} runs without a shell", fix=_SHELL_FIX + " (or use env NAME=value mytool)")
    code = _runs_as_code(argv)
    if code:
        raise TargetError(f"--target-cmd puts {{query}} {code}, so the query would be run as code", fix=_CODE_FIX)
    _check_program(argv[0])
    return argv


def _shell_syntax(command: str) -> str | None:
    """The first piece of shell syntax a shell would act on (outside single quotes), described; else None."""
    quote, word_start, i = None, True, 0
    while i < len(command):
        c = command[i]
        if quote == "'":
            quote = None if c == "'" else quote
        elif c == "\\":
            i += 1  # the next character is escaped
        elif c == "$" and i + 1 < len(command) and not command[i + 1].isspace():
            return f"an expansion {command[i:i + 2]!r}"
        elif c == "`":
            return _OPERATORS[c]
        elif quote == '"':
            quote = None if c == '"' else quote
        elif c in "'\"":
            quote = c
        elif c in _OPERATORS:
            return _OPERATORS[c]
        elif word_start and c in "#~":
            return "a comment '#'" if c == "#" else "a home directory '~'"
        word_start = quote is None and c.isspace()
        i += 1
    return None


_SHELLS = frozenset("sh bash dash zsh ksh mksh ash yash rbash fish csh tcsh".split())
_SHELL_VALUED = ("-o", "+o", "-O", "+O", "--rcfile", "--init-file")
_CODE_FLAGS: dict[str, tuple[str, tuple[str, ...], str, str]] = {
    # program: (short flags whose value is code, long flags whose value is code, short flags taking another
    # value, short flags after which the rest are the script's arguments)
    "python": ("c", (), "WXm", "cm"), "perl": ("eEMm", (), "Ii", ""), "ruby": ("e", (), "IrCEFKT", ""),
    "node": ("ep", ("--eval", "--print"), "r", ""), "php": ("rBRE", (), "cdfzF", ""), "lua": ("e", (), "l", ""),
    "rscript": ("e", (), "", ""), "osascript": ("e", (), "l", ""), "script": ("c", ("--command",), "", ""),
    "su": ("c", ("--command", "--session-command"), "gGsw", ""),
}
_ALIASES = {"nodejs": "node", "luajit": "lua", "pypy": "python", "gawk": "awk", "mawk": "awk", "nawk": "awk",
            "gsed": "sed", "pwsh": "powershell"}
_VERSIONED = ("python", "pypy", "ruby", "perl", "lua", "php")
_WRAPPERS = frozenset("env sudo doas nice nohup timeout stdbuf xargs time exec command busybox setsid ionice taskset "
                      "chrt strace ltrace unbuffer chroot".split())
_WHOLE_COMMAND = frozenset(("ssh", "watch"))
"""Programs that hand all their later arguments to a shell."""


def _program(arg: str) -> str:
    """The program an argument names, normalised: ``/usr/bin/python3.11`` → ``python``."""
    name = os.path.basename(arg).lower().removesuffix(".exe")
    if name.startswith(_VERSIONED):
        name = re.sub(r"(?<=[a-z])[0-9.]+$", "", name)
    return _ALIASES.get(name, name)


def _at(args: list[str], index: int) -> str:
    return args[index] if index < len(args) else ""


def _runs_as_code(argv: list[str]) -> str | None:
    """Where ``{query}`` would be run as code (e.g. ``in the code sh runs``), or None."""
    for position in _program_positions(argv):
        if PLACEHOLDER in argv[position]:
            return "in the place of the program to run"
    for index, arg in enumerate(argv):
        name, rest = _program(arg), argv[index + 1:]
        if name in _WHOLE_COMMAND and any(PLACEHOLDER in a for a in rest):
            return f"in the command {arg} hands to a shell"
        if any(PLACEHOLDER in code for code in _codes(name, rest)):
            return f"in the code {arg} runs"
    return None


def _program_positions(argv: list[str]) -> list[int]:
    """Where programs are named: the first argument, and what wrappers (``env``, ``timeout 5``...) run."""
    positions = [0]
    while _program(argv[positions[-1]]) in _WRAPPERS:
        after = positions[-1] + 1
        found = next((i for i in range(after, len(argv)) if not argv[i].startswith("-")
                      and not _ASSIGNMENT.match(argv[i]) and not re.fullmatch(r"[0-9.]+[smhd]?", argv[i])), None)
        if found is None:
            break
        positions.append(found)
    return positions


def _codes(name: str, args: list[str]) -> list[str]:
    """The code strings a program would run, read from its arguments (none for other programs)."""
    if name in _SHELLS:
        return _shell_code(args)
    if name == "powershell":
        return _powershell_code(args)
    if name in ("awk", "sed"):
        codes, first, seen = _options(args, "e", ("--source", "--expression"), "Fvfil" if name == "awk" else "fl")
        explicit = codes or "f" in seen or "--file" in seen
        return codes if explicit else [_at(args, first)]
    if name in _CODE_FLAGS:
        return _options(args, *_CODE_FLAGS[name])[0]
    return []


def _shell_code(args: list[str]) -> list[str]:
    """A shell's code: the first plain argument after options holding ``c``; fish's ``--command``/``-C`` values."""
    codes, command, index = [], False, 0
    while index < len(args) and args[index][:1] in "-+" and args[index] not in ("-", "--"):
        option, index = args[index], index + 1
        name, eq, value = option.partition("=")
        if name in ("-C", "--command", "--init-command"):
            codes.append(value if eq else _at(args, index))
            index += not eq
        elif option in _SHELL_VALUED:
            index += 1
        else:
            command = command or (not option.startswith("--") and "c" in option[1:])
    index += _at(args, index) == "--"
    return codes + ([_at(args, index)] if command else [])


def _powershell_code(args: list[str]) -> list[str]:
    """PowerShell's code: everything after ``-Command`` (any prefix); Windows PowerShell's plain arguments too."""
    for index, arg in enumerate(args):
        flag = arg[1:].lower() if arg[:1] in "-/" and len(arg) > 1 else ""
        if flag and "file".startswith(flag):
            return []
        if flag and ("command".startswith(flag) or "encodedcommand".startswith(flag) or flag == "ec"):
            return [" ".join(args[index + 1:])]
    return [" ".join(args)]


def _options(args: list[str], short: str, long: tuple[str, ...], valued: str,
             final: str = "") -> tuple[list[str], int, set[str]]:
    """Walk an interpreter's options: (values of its code flags, index of the first plain argument, flags seen)."""
    codes: list[str] = []
    seen: set[str] = set()
    index = 0
    while index < len(args) and args[index] not in ("-", "--") and args[index].startswith("-") and not seen & set(final):
        arg, index = args[index], index + 1
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            seen.add(name)
            if name in long:
                codes.append(value if eq else _at(args, index))
                index += not eq
            continue
        for position, letter in enumerate(arg[1:], 2):
            seen.add(letter)
            if letter in short or letter in valued:
                attached = arg[position:]
                codes += [attached or _at(args, index)] if letter in short else []
                index += not attached
                break
    return codes, index + (_at(args, index) == "--"), seen


def _check_program(program: str) -> None:
    """Refuse up front a program that cannot be run, rather than failing every item."""
    if "/" not in program:
        if shutil.which(program) is None:
            raise TargetError(f"--target-cmd: program {program!r} not found on PATH",
                              fix="check the spelling, or give its path (e.g. ./mytool)")
        return
    path = Path(program)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise TargetError(f"--target-cmd: {program!r} is not an executable file",
                          fix=f"chmod +x it, or name its interpreter (e.g. sh {program})")


def _kill(process: asyncio.subprocess.Process) -> None:
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
        return to_output(loads(stripped, duplicates=False))
    except (ValueError, ValidationError) as exc:
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
        data = path.read_bytes().removeprefix(codecs.BOM_UTF8)
    except OSError as exc:
        raise TargetError(f"cannot read outputs ({exc.strerror or exc})", where=str(path), fix="check the --outputs path") from None
    if data.lstrip().startswith(b"["):
        return _index_rows(path, _array_rows(path, data))
    rows = [(number, _parse(path, line, number)) for number, line in enumerate(data.splitlines(), 1) if line.strip()]
    return _index_rows(path, rows)


def _parse(path: Path, data: bytes, number: int = 0) -> Any:
    """One JSON document (a line when ``number`` is given), or a one-line error naming ``file:line``."""
    try:
        return loads(data, duplicates=False)
    except JSONInputError as exc:
        line = number or exc.line
        what, _, fix = exc.reason.partition(" — ")
        raise TargetError(what, where=f"{path}:{line}" if line else str(path),
                          fix=fix or ("fix or remove the line" if number else "fix the file")) from None


_BETWEEN = re.compile(r"[ \t\r\n,]*")


def _array_rows(path: Path, data: bytes) -> list[tuple[int, Any]]:
    """A JSON array's elements, each with the line it starts on."""
    rows = _parse(path, data)
    if not isinstance(rows, list):  # e.g. "[1] [2]": not one array
        raise TargetError("not one JSON array", where=str(path), fix="write one array of rows, or one row per line")
    text, decoder, lines = data.decode("utf-8"), json.JSONDecoder(), []
    index = text.index("[") + 1
    line, counted = 1, 0
    for _ in rows:  # the document is valid: walk it again for the line each element starts on
        between = _BETWEEN.match(text, index)
        assert between is not None  # the pattern matches the empty string too
        index = between.end()
        line, counted = line + text.count("\n", counted, index), index
        lines.append(line)
        index = decoder.raw_decode(text, index)[1]
    return list(zip(lines, rows))


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _index_rows(path: Path, rows: list[tuple[int, Any]]) -> dict[str, dict[str, Any]]:
    index: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for number, row in rows:
        where = f"{path}:{number}"
        if not isinstance(row, dict):
            raise TargetError(f"an output row must be a JSON object, not {_kind(row)}", where=where,
                              fix='write one object per row, e.g. {"id": "case-1", "answer": "..."}')
        key = next((row[k] for k in ("id", "test_id", "query") if row.get(k) not in (None, "")), None)
        if key is None:
            raise TargetError("an output row needs an id (or the query)", where=where, fix='add "id" matching the case or query id')
        if isinstance(key, bool) or not isinstance(key, (str, int)):
            raise TargetError(f"the row's id must be a string, not {_kind(key)}", where=where, fix='write e.g. "id": "case-1"')
        if str(key) in index:
            raise TargetError(f"a second output row for {str(key)!r} (the first is on line {first[str(key)]})", where=where,
                              fix="keep one row per case")
        first[str(key)] = number
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
