"""What hilbot knows of the programs a command line may name: shells and interpreters that run a
script or a program text, programs that may run any of their arguments (``ssh``, ``xargs``,
``sudo``...), wrappers that run a command after their own options (``env``, ``timeout``,
``flock``...), launchers whose subcommand runs one (``docker exec``, ``uv run``), and how an
argument names a program (``/usr/bin/python3.11`` is ``python``). A table cannot be complete: it
is the second line behind the rule of :mod:`.placement`.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
"""A ``NAME=value`` word: a variable assignment to a shell, the environment to ``env``."""


SHELLS = frozenset("sh bash dash zsh ksh mksh ash yash rbash fish csh tcsh pwsh".split())
_SCRIPT_RUNNERS = SHELLS | frozenset(
    "python node deno bun perl ruby php lua rscript osascript awk sed jq git expect tclsh wish "
    "julia guile racket sbcl groovy scala kotlin elixir escript swift java dotnet".split()
)
"""Programs that run their first plain argument (a script, a program text, a subcommand)."""
_WHOLE_RUNNERS = frozenset(
    "ssh xargs watch su sudo doas runuser sg eval exec nsenter chroot systemd-run parallel tmux "
    "screen sqlite3 find script make npx pnpx bunx uvx powershell cmd r at batch".split()
)
"""Programs that may run any of their arguments: as a command, as SQL, as a make variable."""


class Wrapper(NamedTuple):
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


WRAPPERS: dict[str, Wrapper] = {
    "env": Wrapper(
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
    "timeout": Wrapper(
        "v",
        "sk",
        ("--foreground", "--preserve-status", "--verbose"),
        ("--signal", "--kill-after"),
        operands=1,
    ),
    "nice": Wrapper("", "n", (), ("--adjustment",), numeric=True),
    "nohup": Wrapper(),
    "stdbuf": Wrapper("", "ioe", (), ("--input", "--output", "--error")),
    "flock": Wrapper(
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
    "ionice": Wrapper(
        "t", "cnpPu", ("--ignore",), ("--class", "--classdata", "--pid", "--pgid", "--uid")
    ),
    "setsid": Wrapper("cfw", "", ("--ctty", "--fork", "--wait")),
    "time": Wrapper(
        "pavq",
        "fo",
        ("--portability", "--append", "--verbose", "--quiet"),
        ("--format", "--output"),
    ),
    "chrt": Wrapper(
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
    "taskset": Wrapper("apc", "", ("--all-tasks", "--pid", "--cpu-list"), operands=1),
    "unbuffer": Wrapper("p"),
    "command": Wrapper("pvV"),
    "builtin": Wrapper(),
    "busybox": Wrapper(),
    "strace": Wrapper("cCdDfFhiknqrtTvVwxyYzZ", "abeEIoOpPsSuUX"),
    "ltrace": Wrapper("bcCfhiLrStTV", "aAeDFlnopsuwx"),
}
"""Programs that run the command after their own options, looked through to that command."""

_RUN = ({"run": 0}, frozenset({"tool"}))
LAUNCHERS: dict[str, tuple[dict[str, int], frozenset[str]]] = {
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
_KNOWN = _SCRIPT_RUNNERS | _WHOLE_RUNNERS | WRAPPERS.keys() | LAUNCHERS.keys() | _ALIASES.keys()
_ORDINARY_WORDS = frozenset(
    "time command builtin watch screen script parallel find nice exec eval "
    "su at batch make git go r cmd expect swift java".split()
)
SCANNED = _KNOWN - _ORDINARY_WORDS
"""Names that mark a program wherever they stand (``docker exec box sh {query}``); ordinary
words only where a program is run."""


def program_name(arg: str) -> str:
    """The program an argument names, normalised: ``/usr/bin/python3.11`` → ``python``."""
    name = os.path.basename(arg).lower().removesuffix(".exe")
    bare = re.sub(r"-?[0-9][0-9.]*$", "", name)  # python3.11, lua5.4, pypy3
    name = bare if bare in _KNOWN else name
    return _ALIASES.get(name, name)


def is_option(word: str, shell: bool = False) -> bool:
    """Whether a program would read ``word`` as an option (``+x`` too, for a shell)."""
    return len(word) > 1 and word != "--" and (word[0] == "-" or (shell and word[0] == "+"))


def runner_kind(name: str) -> str:
    """How a program that is no wrapper reads its arguments: ``script`` (its first plain argument
    is run), ``whole`` (any of them may be) or ``plain``."""
    return "script" if name in _SCRIPT_RUNNERS else "whole" if name in _WHOLE_RUNNERS else "plain"
