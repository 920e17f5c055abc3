"""Reading the files a user hands hilbot: every way a file can be hostile is one
:class:`HilbotError`.

Imports, YAML test cases, query sets and ``hilbot.toml`` all go through these helpers:

- :func:`read_file` reads regular files only (a directory, a FIFO or a device is refused before
  it is opened, so nothing blocks) and turns every ``OSError`` into one line;
- :func:`decode` accepts UTF-8 with or without a byte order mark and names the line of the first
  byte that is not UTF-8;
- :func:`json_problem_line` finds the line :func:`evaluation._json.loads` cannot name for a
  duplicate key, ``NaN``/``Infinity`` or an over-long or overflowing number;
- :func:`non_finite` finds an ``inf``/``nan`` float in parsed data (``1e400`` parses to ``inf``);
- :func:`where` makes a path (and line) safe to print on one line.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from .errors import HilbotError
from .text import visible

BOM = b"\xef\xbb\xbf"

_JSON_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|-?(?:NaN|Infinity)|[-+0-9.eE]+|\s+|[a-z]+|.', re.S
)
_INT_DIGITS = 4300


def where(path: str | Path, line: int | None = None) -> str:
    """``path`` or ``path:line``, control characters made visible."""
    shown = visible(str(path), newlines=False)
    return f"{shown}:{line}" if line else shown


def line_of(data: bytes | str, offset: int) -> int:
    """1-based line of ``offset`` in ``data``."""
    if isinstance(data, bytes):
        return data.count(b"\n", 0, offset) + 1
    return data.count("\n", 0, offset) + 1


def _unreadable(
    exc: OSError | ValueError, path: Path, error: type[HilbotError], fix: str
) -> HilbotError:
    if isinstance(exc, FileNotFoundError):
        return error("file not found", where=where(path), fix=fix)
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return error(
        f"cannot read the file ({visible(reason, newlines=False)})", where=where(path), fix=fix
    )


def check_file(
    path: str | Path, error: type[HilbotError] = HilbotError, *, fix: str = "check the path"
) -> Path:
    """``path`` if it names a regular file (following symlinks); anything else is one ``error``."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError) as exc:
        raise _unreadable(exc, path, error, fix) from None
    if stat.S_ISDIR(mode):
        raise error("is a directory, not a file", where=where(path), fix=fix)
    if not stat.S_ISREG(mode):
        raise error("not a regular file (a pipe, socket or device)", where=where(path), fix=fix)
    return path


def read_file(
    path: str | Path, error: type[HilbotError] = HilbotError, *, fix: str = "check the path"
) -> bytes:
    """The bytes of the regular file ``path``; anything else is one ``error``."""
    path = check_file(path, error, fix=fix)
    try:
        return path.read_bytes()
    except (OSError, ValueError) as exc:
        raise _unreadable(exc, path, error, fix) from None


def decode(data: bytes, path: str | Path, error: type[HilbotError] = HilbotError) -> str:
    """``data`` as text: UTF-8, a leading byte order mark dropped; else one ``error`` naming the
    line."""
    try:
        return data.removeprefix(BOM).decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start + (len(BOM) if data.startswith(BOM) else 0)
        raise error(
            f"not UTF-8 text (byte 0x{data[start]:02x})",
            where=where(path, line_of(data, start)),
            fix="save the file as UTF-8",
        ) from None


def _number_problem(token: str) -> bool:
    digits = token.lstrip("-")
    if digits in ("NaN", "Infinity"):
        return True
    if digits.isdigit():
        return len(digits) > _INT_DIGITS
    try:
        return not math.isfinite(float(token))
    except ValueError:
        return False


def json_problem_line(text: str) -> int | None:
    """Line of the first duplicate key, NaN/Infinity, integer past 4,300 digits or overflowing
    number in ``text``."""
    stack: list[set[str] | None] = []  # per open container: the keys seen (object) or None (array)
    expect_key = False
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in ("{", "["):
            stack.append(set() if token == "{" else None)
            expect_key = token == "{"
        elif token in ("}", "]"):
            if stack:
                stack.pop()
            expect_key = False
        elif token in (",", ":"):
            expect_key = token == "," and bool(stack) and stack[-1] is not None
        elif token[0] == '"':
            if expect_key and stack and stack[-1] is not None:
                key = json.loads(token)
                if key in stack[-1]:
                    return line_of(text, match.start())
                stack[-1].add(key)
        elif token[0] in "-+0123456789.NI" and _number_problem(token):
            return line_of(text, match.start())
    return None


def non_finite(value: Any) -> tuple[Any, ...] | None:
    """Path (keys and indices) of the first ``inf`` or ``nan`` float inside ``value``, or None."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        loc, current = stack.pop()
        if isinstance(current, float) and not math.isfinite(current):
            return loc
        if isinstance(current, dict):
            stack.extend(((*loc, k), v) for k, v in reversed(current.items()))
        elif isinstance(current, list):
            stack.extend(((*loc, i), v) for i, v in reversed(list(enumerate(current))))
    return None


def dotted(loc: tuple[Any, ...]) -> str:
    """``('scores', 'overall')`` → ``scores.overall``, ``('results', 0)`` → ``results[0]``, made
    visible."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return visible(out.lstrip("."), newlines=False)


def is_regular(path: Path) -> bool:
    """Whether ``path`` is a regular file (following symlinks); False when it cannot be checked."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def listed_once(
    names: list[str], option: str, what: str, error: type[HilbotError], choices: str
) -> list[str]:
    """``names`` from a comma-separated option: none empty, none twice; else ``error`` naming
    ``option`` (``choices``: what to use)."""
    if not names or any(not name for name in names):
        raise error(
            f"empty {what} name", where=option, fix=f"name {what}s separated by commas, {choices}"
        )
    for index, name in enumerate(names):
        if name in names[:index]:
            raise error(
                f"{what} {name!r} is listed twice", where=option, fix=f"name each {what} once"
            )
    return names
