"""Where ``{query}`` may stand on a command line run without a shell (:func:`query_refusal`). The
rule needs no knowledge of programs: ``{query}`` is a whole argument, never inside another one,
never after an option that no ``--`` has ended (it could be that option's value), never where a
program is named. The tables of :mod:`.programs` are the second line: programs known to run their
arguments, looked up through the wrappers that run a command.
"""

from __future__ import annotations

import shlex
from typing import NamedTuple

from .programs import (
    ASSIGNMENT,
    LAUNCHERS,
    SCANNED,
    SHELLS,
    WRAPPERS,
    Wrapper,
    is_option,
    program_name,
    runner_kind,
)

PLACEHOLDER = "{query}"
"""Where a ``--target-cmd`` template puts the query, as one whole argument."""


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
        name = program_name(argv[at])
        if name in WRAPPERS:
            command, kind, note = _wrapped(argv, at, WRAPPERS[name])
        elif name in LAUNCHERS:
            command, kind, note = _launched(argv, at, *LAUNCHERS[name])
        else:
            command, kind, note = len(argv), runner_kind(name), ""
        if kind != "wrapper" or command >= len(argv):
            steps.append(_Step(at, len(argv), kind, note))
            return steps
        steps.append(_Step(at, command, kind))
        at = command


def _wrapped(argv: list[str], at: int, spec: Wrapper) -> tuple[int, str, str]:
    """(where the command a wrapper runs is named, ``wrapper``), or (where it stops reading,
    ``whole`` or ``unknown``, the option that stopped it)."""
    index = at + 1
    while index < len(argv) and _wrapper_reads(argv[index], spec):
        taken = _wrapper_option(argv[index], spec)
        if isinstance(taken, str):
            return index, taken, argv[index]
        index += 1 + taken
    index += index < len(argv) and argv[index] == "--"
    while spec.assignments and index < len(argv) and ASSIGNMENT.match(argv[index]):
        index += 1
    index += spec.operands
    if index < len(argv) and argv[index] in spec.code:
        return index, "whole", argv[index]
    return index, "wrapper", ""


def _wrapper_reads(arg: str, spec: Wrapper) -> bool:
    """Whether a wrapper reads ``arg`` as one of its options (``env -`` too)."""
    return is_option(arg) or (arg == "-" and spec.assignments)


def _wrapper_option(arg: str, spec: Wrapper) -> int | str:
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
    if is_option(argv[first]):
        return first, "unknown", argv[first]
    sub = argv[first]
    if sub in code:
        return first, "whole", sub
    if sub not in runs:
        return first, "script", ""
    index = first + 1
    for index in range(first + 1, first + 2 + runs[sub]):  # the operands, then the command
        if index < len(argv) and is_option(argv[index]):
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
    scanned = [i for i in range(1, spots[-1]) if program_name(argv[i]) in SCANNED]
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
    shell = program_name(program) in SHELLS
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
    return next((word for word in reversed(before) if is_option(word, shell)), None)


def _positionals(before: list[str], shell: bool) -> int:
    """Plain arguments among ``before`` for certain: those after ``--``, and those before it
    when no option there could take one as its value."""
    ends = next((i for i, word in enumerate(before) if _ends(word, shell)), None)
    head = before if ends is None else before[:ends]
    after = 0 if ends is None else len(before) - ends - 1
    return after + (0 if any(is_option(word, shell) for word in head) else len(head))


def _with_dashes(argv: list[str], spot: int) -> str:
    """The command line with ``--`` before ``{query}``, to show."""
    words = argv[:spot] + ["--"] + argv[spot:]
    return " ".join(word if word == PLACEHOLDER else shlex.quote(word) for word in words)


def query_exposed(argv: list[str]) -> bool:
    """Whether some ``{query}`` has no ``--`` before it among its program's arguments, so that a
    query starting with ``-`` would be read as an option."""
    chain = _chain(argv, 0)
    for spot in (i for i, arg in enumerate(argv) if arg == PLACEHOLDER):
        step = max((s for s in chain if s.at < spot), key=lambda s: s.at)
        if "--" not in argv[step.at + 1 : spot]:
            return True
    return False
