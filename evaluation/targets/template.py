"""A ``--target-cmd`` template with ``{query}``, refused up front when it could not run safely
without a shell: the query never becomes part of a command line a shell reads, so shell syntax in
the template (pipes, redirections, expansions, comments, a leading ``NAME=value``) is refused, and
so is ``{query}`` anywhere a program could run it (:func:`~.placement.query_refusal`), and a
program that is not on ``PATH`` or not executable. Each refusal is a one-line :class:`TargetError`
with its fix, given before any case runs.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from .base import TargetError
from .placement import query_refusal
from .programs import ASSIGNMENT

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


def check_template(command: str) -> list[str]:
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
    if ASSIGNMENT.match(argv[0]):
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
