"""Signs that a change broke its test, which the local triage judge recognises without a model
(:func:`failure_sign`): the actual output adds a traceback, adds an error or exception line, or
lost most of the expected output. A line "adds" when the expected text has no line the same, so a
traceback that was already there and moved is no sign.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import Change
from .numeric import LINE_BREAK

TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
"""Python's first line of a traceback."""
ERROR_LINE = re.compile(
    r"^\W*(?i:error|fatal|panic)\s*[:\]]"  # error: …, [ERROR] …, fatal: …
    r"|\b[\w.]*(?:Error|Exception)\b:"  # ValueError: …, requests.exceptions.HTTPError: …
    r"|^\W*Exception\b"  # Exception in thread "main" …
    r"|\b(?:ERROR|FATAL)\b"  # 2026-11-26 12:00:00 ERROR …
)
"""An error or exception line; not ``errors: 0``, ``error_rate: 0.1`` or ``the error rate``."""
MIN_LINES_LOST = 3
"""Fewest non-blank expected lines for "removes most of the output" (below, it is a rewrite)."""
SHOWN_CHARS = 120
"""Most characters of an added line quoted in an issue."""


@dataclass(frozen=True)
class FailureSign:
    """Why a change looks like a failure: the rule, in words, and the lines it found."""

    rule: str
    """``adds a traceback (line 3)``, ``adds an error line (line 2)``, ``removes most of the
    output (1 of 6 lines left)``."""
    issues: tuple[str, ...] = ()
    """The lines found, each as ``line N: …`` of the actual output."""


def _lines(text: str | None) -> list[str]:
    return LINE_BREAK.split(text) if text else []


def _added(change: Change, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    """The actual output's lines matching ``pattern`` that the expected output does not have,
    with their 1-based numbers."""
    before = set(_lines(change.expected))
    return [
        (n, line)
        for n, line in enumerate(_lines(change.actual), 1)
        if line not in before and pattern.search(line)
    ]


def _issues(found: list[tuple[int, str]]) -> tuple[str, ...]:
    return tuple(f"line {n}: {line.strip()[:SHOWN_CHARS]}" for n, line in found[:3])


def _lost(change: Change) -> FailureSign | None:
    """Most of the expected output gone: under half its non-blank lines and half its characters
    left (or nothing at all)."""
    old = [line for line in _lines(change.expected) if line.strip()]
    new = [line for line in _lines(change.actual) if line.strip()]
    chars = lambda lines: sum(len("".join(line.split())) for line in lines)  # noqa: E731
    if old and not new:
        return FailureSign(f"removes the whole output ({len(old)} line{'s' * (len(old) != 1)})")
    if len(old) >= MIN_LINES_LOST and 2 * len(new) < len(old) and 2 * chars(new) < chars(old):
        return FailureSign(f"removes most of the output ({len(new)} of {len(old)} lines left)")
    return None


def failure_sign(change: Change) -> FailureSign | None:
    """Why the changed or added output looks broken, or None: a traceback added, an error or
    exception line added, most of the output removed (in this order)."""
    if change.actual is None:
        return None
    errors = _added(change, ERROR_LINE)
    traceback = _added(change, TRACEBACK)
    if traceback:  # its exception's line is an issue too
        found = sorted(set(traceback + errors))
        return FailureSign(f"adds a traceback (line {traceback[0][0]})", _issues(found))
    if errors:
        return FailureSign(f"adds an error line (line {errors[0][0]})", _issues(errors))
    return _lost(change) if change.expected is not None else None


__all__ = ["ERROR_LINE", "TRACEBACK", "FailureSign", "failure_sign"]
