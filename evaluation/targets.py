"""Targets: how the system under test's outputs are obtained.

- ``--target module:function``: a sync or async callable taking the query text and returning an
  answer (``str``), ranked results (a ``list`` of dicts or paths), or a ``dict`` with any of
  ``answer``, ``results``, ``quotes``, ``contexts``, ``usage``, ``cost_usd``, ``model``.
- ``--target-cmd 'CMD'``: a command printing that JSON (or plain text, an answer) on stdout.
  The query never becomes part of a command line a shell reads: with ``{query}`` the command is
  split into arguments (``shlex``) and run *without a shell*, ``{query}`` replaced by the query as
  one whole argument. Shell syntax in such a template is refused up front, and so is ``{query}``
  anywhere a program could run it (:func:`query_refusal`): inside another argument, after an
  option no ``--`` has ended, where a program is named, or among the arguments of a program known
  to run them (shells, interpreters, ``ssh``, ``xargs``...; looked up through ``env``, ``timeout``
  and the other wrappers). A query starting with ``-`` where the program still reads options is
  an error on its item. Without ``{query}`` the command runs through the shell (pipes work) and
  reads the query from stdin. Either way the query is also in the environment as
  ``HILBOT_QUERY``. A non-zero exit, a timeout or a query that cannot be passed (a NUL byte,
  too long for one argument) is recorded on the item and the run goes on.
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
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, Protocol

from pydantic import Field, ValidationError

from ._json import JSONInputError, loads
from .cases import Case
from .errors import HilbotError
from .records import Model, SearchResult


class TargetError(HilbotError):
    """A target cannot be set up (bad module path, missing outputs file)."""


class TargetOutput(Model):
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
    results: list[dict[str, Any]] = [
        r if isinstance(r, dict) else {"path": str(r)} for r in value.get("results") or []
    ]
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
                value = await asyncio.wait_for(
                    _in_daemon_thread(self.function, case.query.query), self.timeout_s
                )
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


def _first_line(exc: BaseException) -> str:
    """The last line of an error (where Python puts the message), scrubbed of secrets, at most 200
    characters."""
    from .scrub import scrub

    return (scrub(str(exc)).strip().splitlines() or [""])[-1][:200]


PLACEHOLDER = "{query}"
MAX_ARG_BYTES = 128 * 1024
"""Longest single argument or environment entry, its terminating NUL included (Linux's
MAX_ARG_STRLEN)."""

_SHELL_FIX = (
    'to use pipes, ";", redirections or $VARIABLES, drop {query} and read the query from '
    '"$HILBOT_QUERY" '
    "or stdin, e.g. --target-cmd 'mytool \"$HILBOT_QUERY\" | jq .'"
)
_CODE_FIX = (
    'pass it on stdin (leave {query} out) or as "$HILBOT_QUERY", e.g. --target-cmd '
    "'mytool \"$HILBOT_QUERY\"'"
)
_OPERATORS = {
    ";": "';'",
    "|": "a pipe '|'",
    "&": "'&'",
    "<": "a redirection '<'",
    ">": "a redirection '>'",
    "(": "a subshell '('",
    ")": "a subshell ')'",
    "\n": "a newline",
    "`": "a backtick substitution",
}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


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
        self.argv = _template(command) if PLACEHOLDER in command else None
        """The command split into arguments when it holds ``{query}`` (run without a shell), else
        None."""
        self.exposed = self.argv is not None and _exposed(self.argv)
        """Whether a ``{query}`` has no ``--`` before it (then a query starting with ``-`` is an
        option)."""

    async def __call__(self, case: Case) -> TargetOutput:
        started = time.perf_counter()
        try:
            argv, stdin, env = self._invocation(case.query.query)
        except _Unpassable as exc:
            return _failed(str(exc), started)
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
            return _failed(f"cannot start the command: {exc.strerror or exc}", started)
        return await self._finish(process, stdin, started)

    def _invocation(self, query: str) -> tuple[list[str] | None, bytes | None, dict[str, str]]:
        """(argv or None for the shell, stdin bytes, environment) for one query."""
        try:
            data = query.encode("utf-8")
        except UnicodeEncodeError:
            raise _Unpassable(
                "the query is not valid Unicode text (a lone surrogate), so it cannot be passed to a "
                "command — fix the query's text"
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
            return _failed(f"timed out after {self.timeout_s:g}s", started)
        if process.returncode != 0:
            detail = _first_line(Exception(err.decode("utf-8", "replace"))) or "no stderr"
            return _failed(f"exit {process.returncode}: {detail}", started)
        output = _parse_stdout(out.decode("utf-8", "replace"))
        output.latency_ms = round((time.perf_counter() - started) * 1000, 1)
        return output


def _template(command: str) -> list[str]:
    """A ``{query}`` command split into arguments, or a one-line error saying why it cannot run
    without a shell."""
    syntax = _shell_syntax(command)
    if syntax:
        raise TargetError(
            f"--target-cmd holds {syntax}, shell syntax, but a command with {{query}} runs without "
            "a shell",
            fix=_SHELL_FIX,
        )
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise TargetError(
            f"--target-cmd cannot be split into arguments ({str(exc).lower()})",
            fix="close the quotation, or quote the quote character",
        ) from None
    if _ASSIGNMENT.match(argv[0]):
        raise TargetError(
            f"--target-cmd starts with the variable assignment {argv[0].split('=')[0]}=..., shell "
            "syntax, but a command with {query} runs without a shell",
            fix=_SHELL_FIX + " (or use env NAME=value mytool)",
        )
    refusal = query_refusal(argv)
    if refusal:
        where, hint = refusal
        raise TargetError(
            f"--target-cmd: {{query}} is {where}; a query there could run as code",
            fix=_CODE_FIX + (f", or end the options first: {hint}" if hint else ""),
        )
    _check_program(argv[0])
    return argv


def _shell_syntax(command: str) -> str | None:
    """The first piece of shell syntax a shell would act on (outside single quotes), described; else
    None."""
    quote, word_start, i = None, True, 0
    while i < len(command):
        c = command[i]
        if quote == "'":
            quote = None if c == "'" else quote
        elif c == "\\":
            i += 1  # the next character is escaped
        elif c == "$" and i + 1 < len(command) and not command[i + 1].isspace():
            return f"an expansion {command[i : i + 2]!r}"
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


# ---------------------------------------------------------------- where {query} may stand
#
# The rule needs no knowledge of programs: {query} is a whole argument, never inside another one,
# never after an option that no "--" has ended (it could be that option's value), never where a
# program is named. The tables below are the second line: programs known to run their arguments,
# looked up through the wrappers that run a command.

_SHELLS = frozenset("sh bash dash zsh ksh mksh ash yash rbash fish csh tcsh pwsh".split())
_SCRIPT_RUNNERS = _SHELLS | frozenset(
    "python node deno bun perl ruby php lua rscript osascript awk sed jq git expect tclsh wish "
    "julia guile racket sbcl groovy scala kotlin elixir escript swift java dotnet".split()
)
"""Programs that run their first plain argument (a script, a program text, a subcommand)."""
_WHOLE_RUNNERS = frozenset(
    "ssh xargs watch su sudo doas runuser sg eval exec nsenter chroot systemd-run parallel tmux "
    "screen sqlite3 find script make npx pnpx bunx uvx powershell cmd r at batch".split()
)
"""Programs that may run any of their arguments: as a command, as SQL, as a make variable."""


class _Wrapper(NamedTuple):
    """How a program that runs a command reads its own options and operands first."""

    flags: str = ""
    """Short options without a value."""
    valued: str = ""
    """Short options taking a value."""
    long_flags: tuple[str, ...] = ()
    long_valued: tuple[str, ...] = ()
    code: tuple[str, ...] = ()
    """Options after which it runs a string as code (``env -S``, ``flock LOCK -c``)."""
    operands: int = 0
    """Plain arguments before the command (``timeout``'s duration, ``flock``'s lock file)."""
    assignments: bool = False
    """``NAME=value`` words (and ``-``) before the command (``env``)."""
    numeric: bool = False
    """``-10`` is an option (``nice``)."""


_WRAPPERS: dict[str, _Wrapper] = {
    "env": _Wrapper(
        "i0v",
        "uCP",
        (
            "--ignore-environment",
            "--null",
            "--debug",
            "--default-signal",
            "--ignore-signal",
            "--block-signal",
            "--list-signal-handling",
        ),
        ("--unset", "--chdir"),
        ("-S", "--split-string"),
        assignments=True,
    ),
    "timeout": _Wrapper(
        "v",
        "sk",
        ("--foreground", "--preserve-status", "--verbose"),
        ("--signal", "--kill-after"),
        operands=1,
    ),
    "nice": _Wrapper("", "n", (), ("--adjustment",), numeric=True),
    "nohup": _Wrapper(),
    "stdbuf": _Wrapper("", "ioe", (), ("--input", "--output", "--error")),
    "flock": _Wrapper(
        "sexnouF",
        "wE",
        (
            "--shared",
            "--exclusive",
            "--unlock",
            "--nonblock",
            "--nb",
            "--close",
            "--no-fork",
            "--verbose",
        ),
        ("--timeout", "--wait", "--conflict-exit-code"),
        ("-c", "--command"),
        operands=1,
    ),
    "ionice": _Wrapper(
        "t", "cnpPu", ("--ignore",), ("--class", "--classdata", "--pid", "--pgid", "--uid")
    ),
    "setsid": _Wrapper("cfw", "", ("--ctty", "--fork", "--wait")),
    "time": _Wrapper(
        "pavq",
        "fo",
        ("--portability", "--append", "--verbose", "--quiet"),
        ("--format", "--output"),
    ),
    "chrt": _Wrapper(
        "abdfiomprRv",
        "TPD",
        (
            "--all-tasks",
            "--batch",
            "--deadline",
            "--fifo",
            "--idle",
            "--other",
            "--max",
            "--pid",
            "--rr",
            "--reset-on-fork",
            "--verbose",
        ),
        ("--sched-runtime", "--sched-period", "--sched-deadline"),
        operands=1,
    ),
    "taskset": _Wrapper("apc", "", ("--all-tasks", "--pid", "--cpu-list"), operands=1),
    "unbuffer": _Wrapper("p"),
    "command": _Wrapper("pvV"),
    "builtin": _Wrapper(),
    "busybox": _Wrapper(),
    "strace": _Wrapper("cCdDfFhiknqrtTvVwxyYzZ", "abeEIoOpPsSuUX"),
    "ltrace": _Wrapper("bcCfhiLrStTV", "aAeDFlnopsuwx"),
}
"""Programs that run the command after their own options, looked through to that command."""

_RUN = ({"run": 0}, frozenset({"tool"}))
_LAUNCHERS: dict[str, tuple[dict[str, int], frozenset[str]]] = {
    # program: (subcommands running the command after them, with the plain arguments before it
    # (docker exec's container); subcommands running their arguments as code). Another
    # subcommand: its arguments are data.
    **{name: _RUN for name in "uv poetry pipenv pdm hatch rye pixi".split()},
    **{name: ({"run": 0}, frozenset()) for name in "conda mamba micromamba".split()},
    "npm": ({"exec": 0, "x": 0, "run": 0, "run-script": 0}, frozenset()),
    "pnpm": ({"exec": 0, "run": 0}, frozenset({"dlx"})),
    "yarn": ({"exec": 0, "run": 0}, frozenset({"dlx"})),
    "deno": ({"run": 0}, frozenset({"eval", "x", "task", "repl"})),
    "bun": ({"run": 0}, frozenset({"x", "exec"})),
    "go": ({}, frozenset({"run", "generate", "tool"})),
    "pipx": ({}, frozenset({"run"})),
    **{name: ({"exec": 1, "run": 1}, frozenset()) for name in "docker podman nerdctl".split()},
    **{name: ({"exec": 1}, frozenset({"run", "debug"})) for name in "kubectl oc".split()},
}
_ALIASES = {
    "nodejs": "node",
    "luajit": "lua",
    "pypy": "python",
    "gawk": "awk",
    "mawk": "awk",
    "nawk": "awk",
    "gsed": "sed",
}
_KNOWN = _SCRIPT_RUNNERS | _WHOLE_RUNNERS | _WRAPPERS.keys() | _LAUNCHERS.keys() | _ALIASES.keys()
_ORDINARY_WORDS = frozenset(
    "time command builtin watch screen script parallel find nice exec eval "
    "su at batch make git go r cmd expect swift java".split()
)
_SCANNED = _KNOWN - _ORDINARY_WORDS
"""Names that mark a program wherever they stand (``docker exec box sh {query}``); ordinary
words only where a program is run."""


def _program(arg: str) -> str:
    """The program an argument names, normalised: ``/usr/bin/python3.11`` → ``python``."""
    name = os.path.basename(arg).lower().removesuffix(".exe")
    bare = re.sub(r"-?[0-9][0-9.]*$", "", name)  # python3.11, lua5.4, pypy3
    name = bare if bare in _KNOWN else name
    return _ALIASES.get(name, name)


def _is_option(word: str, shell: bool = False) -> bool:
    """Whether a program would read ``word`` as an option (``+x`` too, for a shell)."""
    return len(word) > 1 and word != "--" and (word[0] == "-" or (shell and word[0] == "+"))


class _Step(NamedTuple):
    """One program on a command line, and the arguments that are its own."""

    at: int
    """Where it is named."""
    end: int
    """Where its own arguments end: where the command it runs is named, or the line's end."""
    kind: str
    """``wrapper`` (runs the command at ``end``), ``plain``, ``script``, ``whole``, or
    ``unknown`` (an option of a wrapper hilbot cannot read: where its command starts is
    unknown)."""
    note: str = ""
    """The option or subcommand that made it ``whole`` or ``unknown``."""


def _chain(argv: list[str], at: int) -> list[_Step]:
    """The programs run from ``argv[at]`` on: wrappers, looked through to the one that gets
    the rest of the arguments."""
    steps: list[_Step] = []
    while True:
        name = _program(argv[at])
        if name in _WRAPPERS:
            command, kind, note = _wrapped(argv, at, _WRAPPERS[name])
        elif name in _LAUNCHERS:
            command, kind, note = _launched(argv, at, *_LAUNCHERS[name])
        else:
            command, kind, note = len(argv), _runner_kind(name), ""
        if kind != "wrapper" or command >= len(argv):
            steps.append(_Step(at, len(argv), kind, note))
            return steps
        steps.append(_Step(at, command, kind))
        at = command


def _runner_kind(name: str) -> str:
    return "script" if name in _SCRIPT_RUNNERS else "whole" if name in _WHOLE_RUNNERS else "plain"


def _wrapped(argv: list[str], at: int, spec: _Wrapper) -> tuple[int, str, str]:
    """(where the command a wrapper runs is named, ``wrapper``), or (where it stops reading,
    ``whole`` or ``unknown``, the option that stopped it)."""
    index = at + 1
    while index < len(argv) and _wrapper_reads(argv[index], spec):
        taken = _wrapper_option(argv[index], spec)
        if isinstance(taken, str):
            return index, taken, argv[index]
        index += 1 + taken
    index += index < len(argv) and argv[index] == "--"
    while spec.assignments and index < len(argv) and _ASSIGNMENT.match(argv[index]):
        index += 1
    index += spec.operands
    if index < len(argv) and argv[index] in spec.code:
        return index, "whole", argv[index]
    return index, "wrapper", ""


def _wrapper_reads(arg: str, spec: _Wrapper) -> bool:
    """Whether a wrapper reads ``arg`` as one of its options (``env -`` too)."""
    return _is_option(arg) or (arg == "-" and spec.assignments)


def _wrapper_option(arg: str, spec: _Wrapper) -> int | str:
    """How many following arguments an option of a wrapper takes; ``whole`` when it makes the
    wrapper run code, ``unknown`` when hilbot cannot say."""
    name, eq, _ = arg.partition("=")
    if arg == "-" or (spec.numeric and arg[1:].isdigit()):
        return 0
    if name in spec.code or arg[:2] in spec.code:
        return "whole"
    if arg.startswith("--"):
        if name in spec.long_valued:
            return 0 if eq else 1
        return 0 if name in spec.long_flags else "unknown"
    for position, letter in enumerate(arg[1:], 2):
        if letter in spec.valued:
            return 0 if arg[position:] else 1
        if letter not in spec.flags:
            return "unknown"
    return 0


def _launched(
    argv: list[str], at: int, runs: dict[str, int], code: frozenset[str]
) -> tuple[int, str, str]:
    """Like :func:`_wrapped`, for a program whose subcommand runs a command (``docker exec``,
    ``uv run``); ``script`` when the subcommand is another one (its arguments are data)."""
    first = at + 1
    if first >= len(argv):
        return len(argv), "script", ""
    if _is_option(argv[first]):
        return first, "unknown", argv[first]
    sub = argv[first]
    if sub in code:
        return first, "whole", sub
    if sub not in runs:
        return first, "script", ""
    index = first + 1
    for index in range(first + 1, first + 2 + runs[sub]):  # the operands, then the command
        if index < len(argv) and _is_option(argv[index]):
            return index, "unknown", argv[index]
    index += index < len(argv) and argv[index] == "--"
    return index, "wrapper", ""


def query_refusal(argv: list[str]) -> tuple[str, str] | None:
    """Where ``{query}`` stands if a program could run it as code there (``the value of the
    option -c of flock``) and a hint for the command line (or ""); None when every ``{query}``
    is a plain argument."""
    for arg in argv:
        if PLACEHOLDER in arg and arg != PLACEHOLDER:
            return f"inside the argument {arg!r}, not an argument of its own", ""
    spots = [i for i, arg in enumerate(argv) if arg == PLACEHOLDER]
    if not spots:
        return None
    scanned = [i for i in range(1, spots[-1]) if _program(argv[i]) in _SCANNED]
    chains = [_chain(argv, 0)] + [_chain(argv, i) for i in scanned]
    for spot in spots:
        for chain in chains:
            refusal = _placed(argv, chain, spot)
            if refusal:
                return refusal
    return None


def _placed(argv: list[str], chain: list[_Step], spot: int) -> tuple[str, str] | None:
    """Why ``{query}`` at ``spot`` could be run as code by a program of ``chain``, or None."""
    if spot < chain[0].at:
        return None
    index = max(i for i, step in enumerate(chain) if step.at <= spot)
    step, program = chain[index], argv[chain[index].at]
    if spot == step.at:
        runner = argv[chain[index - 1].at] if index else ""
        return (f"the program {runner} runs" if runner else "in the place of the program"), ""
    shell = _program(program) in _SHELLS
    before = argv[step.at + 1 : spot]
    if step.kind == "unknown":
        return (
            f"after the option {step.note} of {program}, which hilbot does not know, so where "
            f"the command {program} runs starts is unknown"
        ), ""
    option = _open_option(before, shell)
    if option:
        where = (
            f"the value of the option {option} of {program}"
            if before[-1] == option
            else f"after the option {option} of {program} with no -- between, so it could be "
            "that option's value"
        )
        return where, (_with_dashes(argv, spot) if step.kind == "plain" else "")
    if step.kind == "wrapper":
        return f"an argument of {program}, before the command it runs", ""
    if step.kind == "whole":
        what = f"{program} {step.note}".strip()
        return f"an argument of {what}, which runs its arguments as a command or as code", ""
    if step.kind == "script" and _positionals(before, shell) == 0:
        return f"the script {program} would run", ""
    return None


def _ends(word: str, shell: bool) -> bool:
    """Whether ``word`` ends the options: ``--`` (and ``-``, for a shell)."""
    return word == "--" or (shell and word == "-")


def _open_option(before: list[str], shell: bool) -> str | None:
    """The last option among ``before`` if nothing there ends the options, else None."""
    if any(_ends(word, shell) for word in before):
        return None
    return next((word for word in reversed(before) if _is_option(word, shell)), None)


def _positionals(before: list[str], shell: bool) -> int:
    """Plain arguments among ``before`` for certain: those after ``--``, and those before it
    when no option there could take one as its value."""
    ends = next((i for i, word in enumerate(before) if _ends(word, shell)), None)
    head = before if ends is None else before[:ends]
    after = 0 if ends is None else len(before) - ends - 1
    return after + (0 if any(_is_option(word, shell) for word in head) else len(head))


def _with_dashes(argv: list[str], spot: int) -> str:
    """The command line with ``--`` before ``{query}``, to show."""
    words = argv[:spot] + ["--"] + argv[spot:]
    return " ".join(word if word == PLACEHOLDER else shlex.quote(word) for word in words)


def _exposed(argv: list[str]) -> bool:
    """Whether some ``{query}`` has no ``--`` before it among its program's arguments, so that a
    query starting with ``-`` would be read as an option."""
    chain = _chain(argv, 0)
    for spot in (i for i, arg in enumerate(argv) if arg == PLACEHOLDER):
        step = max((s for s in chain if s.at < spot), key=lambda s: s.at)
        if "--" not in argv[step.at + 1 : spot]:
            return True
    return False


def _check_program(program: str) -> None:
    """Refuse up front a program that cannot be run, rather than failing every item."""
    if "/" not in program:
        if shutil.which(program) is None:
            raise TargetError(
                f"--target-cmd: program {program!r} not found on PATH",
                fix="check the spelling, or give its path (e.g. ./mytool)",
            )
        return
    path = Path(program)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise TargetError(
            f"--target-cmd: {program!r} is not an executable file",
            fix=f"chmod +x it, or name its interpreter (e.g. sh {program})",
        )


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
        return TargetOutput(error=f"stdout is not the expected JSON: {_first_line(exc)}")


class OutputsTarget:
    """Precomputed outputs, one per case id (JSONL or a JSON list)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.name = str(self.path)
        self.by_key = _load_outputs(self.path)
        self.model = _common_model(self.by_key.values())
        """The model most rows report (the first of a tie), or None: what the outputs are of."""

    async def __call__(self, case: Case) -> TargetOutput:
        row = self.by_key.get(case.id) or self.by_key.get(case.query.query)
        if row is None:
            return TargetOutput(error=f"no output for {case.id!r} in {self.path.name}")
        try:
            return to_output(row)
        except (ValueError, ValidationError) as exc:
            return TargetOutput(error=f"bad output row: {_first_line(exc)}")


def _common_model(rows: Iterable[dict[str, Any]]) -> str | None:
    models = Counter(
        row["model"] for row in rows if isinstance(row.get("model"), str) and row["model"].strip()
    )
    return models.most_common(1)[0][0] if models else None


def _load_outputs(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = path.read_bytes().removeprefix(codecs.BOM_UTF8)
    except OSError as exc:
        raise TargetError(
            f"cannot read outputs ({exc.strerror or exc})",
            where=str(path),
            fix="check the --outputs path",
        ) from None
    if data.lstrip().startswith(b"["):
        return _index_rows(path, _array_rows(path, data))
    rows = [
        (number, _parse(path, line, number))
        for number, line in enumerate(data.splitlines(), 1)
        if line.strip()
    ]
    return _index_rows(path, rows)


def _parse(path: Path, data: bytes, number: int = 0) -> Any:
    """One JSON document (a line when ``number`` is given), or a one-line error naming
    ``file:line``."""
    try:
        return loads(data, duplicates=False)
    except JSONInputError as exc:
        line = number or exc.line
        what, _, fix = exc.reason.partition(" — ")
        raise TargetError(
            what,
            where=f"{path}:{line}" if line else str(path),
            fix=fix or ("fix or remove the line" if number else "fix the file"),
        ) from None


_BETWEEN = re.compile(r"[ \t\r\n,]*")


def _array_rows(path: Path, data: bytes) -> list[tuple[int, Any]]:
    """A JSON array's elements, each with the line it starts on."""
    rows = _parse(path, data)
    if not isinstance(rows, list):  # e.g. "[1] [2]": not one array
        raise TargetError(
            "not one JSON array",
            where=str(path),
            fix="write one array of rows, or one row per line",
        )
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
    names = {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
    }
    return names.get(type(value), "a number")


def _index_rows(path: Path, rows: list[tuple[int, Any]]) -> dict[str, dict[str, Any]]:
    index: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for number, row in rows:
        where = f"{path}:{number}"
        if not isinstance(row, dict):
            raise TargetError(
                f"an output row must be a JSON object, not {_kind(row)}",
                where=where,
                fix='write one object per row, e.g. {"id": "case-1", "answer": "..."}',
            )
        key = next(
            (row[k] for k in ("id", "test_id", "query") if row.get(k) not in (None, "")), None
        )
        if key is None:
            raise TargetError(
                "an output row needs an id (or the query)",
                where=where,
                fix='add "id" matching the case or query id',
            )
        if isinstance(key, bool) or not isinstance(key, (str, int)):
            raise TargetError(
                f"the row's id must be a string, not {_kind(key)}",
                where=where,
                fix='write e.g. "id": "case-1"',
            )
        if str(key) in index:
            raise TargetError(
                f"a second output row for {str(key)!r} (the first is on line {first[str(key)]})",
                where=where,
                fix="keep one row per case",
            )
        first[str(key)] = number
        index[str(key)] = {k: v for k, v in row.items() if k not in ("id", "test_id", "query")}
    return index


def make_target(
    *,
    target: str | None = None,
    command: str | None = None,
    outputs: str | Path | None = None,
    timeout_s: float = 60.0,
) -> Target:
    """The one target the options name (exactly one of them)."""
    given = [
        name
        for name, value in (("--target", target), ("--target-cmd", command), ("--outputs", outputs))
        if value
    ]
    if len(given) != 1:
        raise TargetError(
            "give exactly one of --target, --target-cmd, --outputs (got "
            f"{', '.join(given) or 'none'})",
            fix="e.g. --target examples.docs_search:search",
        )
    if target:
        return PythonTarget(target, timeout_s)
    if command:
        return CommandTarget(command, timeout_s)
    return OutputsTarget(outputs)  # type: ignore[arg-type]
