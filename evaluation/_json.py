"""Reading JSON that comes from outside: every way it can be hostile is one :class:`JSONInputError`.

The standard library's ``json`` accepts things hilbot cannot store or must not guess about, and
fails on others with exceptions of many kinds. :func:`loads` turns all of them into one error
with a reason a user can act on and, where it can tell, the line and column:

- syntax errors (``JSONDecodeError``);
- nesting deeper than :data:`MAX_DEPTH` (the parser would otherwise hit the recursion limit);
- integers longer than Python's 4,300-digit conversion limit;
- ``NaN``, ``Infinity`` and ``-Infinity``, which are not JSON and have no place in a record, and
  numbers such as ``1e400`` that only a float's infinity could hold;
- lone UTF-16 surrogates such as ``"\\ud800"``, which no UTF-8 file can hold;
- duplicate keys in one object, where the last one would silently win (``duplicates=False``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 200
"""Deepest nesting of arrays and objects accepted (records nest a handful of levels)."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_BRACKETS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


class JSONInputError(ValueError):
    """JSON that cannot be read safely; ``reason`` says why, ``line``/``column`` where (1-based)."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.column = column


def _reject_constant(name: str) -> Any:
    raise JSONInputError(f"{name} is not a JSON number — write null, or a finite number")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):
        raise JSONInputError(
            f"the number {text[:40]} is not a finite number (too large for a float) — store it as "
            "a string"
        )
    return value


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JSONInputError(f"duplicate key {key!r} in one object — keep one of them")
        out[key] = value
    return out


def _position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    return line, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


def _too_deep(data: bytes) -> int | None:
    """Offset where nesting passes :data:`MAX_DEPTH` (brackets inside strings don't count), or
    None."""
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return None
    depth = 0
    for match in _BRACKETS.finditer(data):
        token = match.group()
        if token[0] == 0x22:  # a string: skipped whole
            continue
        depth += 1 if token in (b"[", b"{") else -1
        if depth > MAX_DEPTH:
            return match.start()
    return None


def _lone_surrogate(value: Any) -> str | None:
    """The first string (key or value) holding a lone surrogate, or None."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            try:
                current.encode("utf-8")
            except UnicodeEncodeError:
                return current
        elif isinstance(current, dict):
            stack.extend(current.keys())
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return None


def loads(data: str | bytes, *, duplicates: bool = False) -> Any:
    """Parse one JSON document; anything unsafe or unstorable raises :class:`JSONInputError`.

    ``duplicates=True`` lets the last of several equal keys win, as ``json`` does; by default a
    duplicate key is an error.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    deep = _too_deep(raw)
    if deep is not None:
        line, column = _position(raw, deep)
        raise JSONInputError(
            f"nested more than {MAX_DEPTH} levels deep — flatten the data", line, column
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(raw, exc.start)
        raise JSONInputError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x}) — save the file as UTF-8", line, column
        ) from None
    try:
        value = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            object_pairs_hook=None if duplicates else _unique_pairs,
        )
    except json.JSONDecodeError as exc:
        raise JSONInputError(f"invalid JSON ({exc.msg})", exc.lineno, exc.colno) from None
    except RecursionError:
        raise JSONInputError(
            f"nested more than {MAX_DEPTH} levels deep — flatten the data"
        ) from None
    except JSONInputError:
        raise
    except ValueError as exc:  # an integer past the 4,300-digit conversion limit
        if "digits" in str(exc):
            raise JSONInputError(
                "a number with more than 4,300 digits — store it as a string"
            ) from None
        raise JSONInputError(f"invalid JSON ({exc})") from None
    if _SURROGATE_ESCAPE.search(raw) and (bad := _lone_surrogate(value)) is not None:
        match = next(m for m in _SURROGATE_ESCAPE.finditer(raw))
        line, column = _position(raw, match.start())
        shown = bad.encode("utf-8", "backslashreplace").decode("ascii", "replace")[:60]
        raise JSONInputError(
            f"a lone surrogate in {shown!r} is not valid Unicode — fix the text's encoding",
            line,
            column,
        )
    return value
