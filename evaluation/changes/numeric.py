"""Whether two texts differ only in their numbers (``0.85`` → ``0.87``), not in their text
(:func:`numeric_diff`), and whether each number moved within a :class:`Tolerance`; and equality up
to whitespace (:func:`normalized_equal`). Texts over :data:`MAX_NUMERIC_CHARS` are never "numbers
only".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable

from .model import ChangeError

MAX_NUMERIC_CHARS = 2_000_000
"""Longest text :func:`numeric_diff` looks at (2 M characters); a longer one is never "numbers
only"."""
LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""What ends a line: the diff splits texts on it, and a number's line is counted by it."""
_WS = re.compile(r"\s+")


def normalized_equal(expected: str | None, actual: str | None) -> bool:
    """Whether the texts are equal once every run of whitespace is one space and the ends are
    stripped (None only equals None)."""
    if expected is None or actual is None:
        return expected is actual
    return _WS.sub(" ", expected).strip(" ") == _WS.sub(" ", actual).strip(" ")


@dataclass(frozen=True)
class Tolerance:
    """How far a number may move and still count as the same: ``|new-old| ≤
    relative·max(|old|,|new|)`` or ``≤ absolute``."""

    relative: float = 0.0
    """Share of the larger magnitude a number may move (0.01 = 1%)."""
    absolute: float = 0.0
    """Amount a number may move."""

    def __post_init__(self) -> None:
        if not all(math.isfinite(v) and v >= 0 for v in (self.relative, self.absolute)):
            raise ChangeError(
                f"tolerance relative={self.relative} absolute={self.absolute}",
                where="tolerance",
                fix="give finite tolerances of 0 or more",
            )

    def within(self, old: float, new: float) -> bool:
        """Whether ``old`` → ``new`` is within tolerance; a number too large for a float never
        is."""
        if not (math.isfinite(old) and math.isfinite(new)):
            return False
        scale = max(abs(old), abs(new))
        bound = max(self.absolute, self.relative * scale)
        slack = 1e-12 * max(scale, 1.0) if bound > 0 else 0.0  # 1.1 - 1.0 is 0.10000000000000009
        return abs(new - old) <= bound + slack


@dataclass(frozen=True)
class NumberChange:
    """One number that changed, at a line of the actual text."""

    line: int
    """1-based line of the actual text the new number is on."""
    old: float
    """The expected value (``inf`` when too large for a float)."""
    new: float
    """The actual value (``inf`` when too large for a float)."""
    old_text: str
    """The number as the expected text writes it."""
    new_text: str
    """The number as the actual text writes it."""
    within: bool
    """Whether it moved within the tolerance asked for."""


@dataclass(frozen=True)
class NumericDiff:
    """Whether two texts differ only in their numbers, and which numbers."""

    only_numbers: bool
    """The texts are equal once every number is a placeholder (and whitespace normalised)."""
    changes: tuple[NumberChange, ...]
    """The numbers written differently, paired in order (only meaningful when ``only_numbers``)."""

    @property
    def all_within(self) -> bool:
        """Only numbers changed, at least one did, and every one within tolerance."""
        return self.only_numbers and bool(self.changes) and all(c.within for c in self.changes)


NUMBER = re.compile(r"(?<![\w.])[-+]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?(?!\.?\w)")
"""A number standing alone: ``42``, ``-1.5e-3``, ``.5``, ``0.85``; not the digits of ``v2``,
``abc123``, ``12ms`` or ``1.2.3``."""
_GAPS = "\u00a0\u202f\u2009"  # no-break, narrow no-break and thin space: only ever thousands gaps
GROUPED = re.compile(
    r"(?<![\w.])(?<![0-9],)[-+]?(?:"
    r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?(?!,[0-9])"  # 2,102,650 · 1,234.5
    rf"|[0-9]{{1,3}}(?:[{_GAPS}][0-9]{{3}})+(?:[.,][0-9]+)?"  # 1 234 567 in typographic spaces
    r"|[0-9]{1,3}(?: [0-9]{3})+,[0-9]+"  # 1 234,5: a space, then a decimal comma
    r")(?!\.?\w)"
    f"|{NUMBER.pattern}"
)
"""A number as :data:`NUMBER` reads it, or one with thousands separators read whole: ``2,102,650``,
``1,234.5``, ``1 234,5`` (a space, then a decimal comma), ``1 234 567`` in no-break or thin spaces.
A comma before or after the groups (``7,1,234,5``), or three-digit columns in plain spaces
(``120 340 560``), stay separate numbers."""


def _skeleton(text: str, numbers: list[re.Match[str]]) -> list[str]:
    """The text between the numbers, whitespace runs made one space, the ends stripped."""
    parts, last = [], 0
    for match in numbers:
        parts.append(_WS.sub(" ", text[last : match.start()]))
        last = match.end()
    parts.append(_WS.sub(" ", text[last:]))
    parts[0] = parts[0].lstrip(" ")
    parts[-1] = parts[-1].rstrip(" ")  # the same part as parts[0] when there are no numbers
    return parts


def _number_changes(
    actual: str, pairs: Iterable[tuple[re.Match[str], re.Match[str]]], tolerance: Tolerance
) -> tuple[NumberChange, ...]:
    """The pairs written differently, each with the line of the actual text it is on."""
    out, line, last = [], 1, 0
    for old, new in pairs:
        if old.group() == new.group():
            continue
        line, last = line + len(LINE_BREAK.findall(actual, last, new.start())), new.start()
        before, after = _value(old.group()), _value(new.group())
        out.append(
            NumberChange(
                line, before, after, old.group(), new.group(), tolerance.within(before, after)
            )
        )
    return tuple(out)


def _value(text: str) -> float:
    """A number's value (``inf`` when too large for a float): thousands separators dropped, a
    decimal comma after spaced groups read as a point."""
    if any(gap in text for gap in " " + _GAPS):
        text = re.sub(f"[ {_GAPS}]", "", text).replace(",", ".")
    return float(text.replace(",", ""))  # the patterns only match what float() then reads


Pairs = list[tuple[re.Match[str], re.Match[str]]]
"""Each number of the expected text with the actual text's number in its place."""


def _numbers(expected: str, actual: str, pattern: re.Pattern[str]) -> Pairs | None:
    """The numbers of both texts as ``pattern`` reads them, paired, when only they differ."""
    old, new = list(pattern.finditer(expected)), list(pattern.finditer(actual))
    if len(old) != len(new) or _skeleton(expected, old) != _skeleton(actual, new):
        return None
    return list(zip(old, new))


def numeric_diff(expected: str, actual: str, tolerance: Tolerance) -> NumericDiff:
    """Whether ``actual`` is ``expected`` with only numbers (and whitespace) changed, and the
    numbers that did.

    A number written differently with the same value (``0.50`` → ``0.5``, ``1,234`` → ``1234``) is
    a change within any tolerance. Numbers are read with their thousands separators
    (:data:`GROUPED`), or, when that does not pair them (``1 234,5`` → ``1\n234,5``), one by one
    (:data:`NUMBER`). Texts longer than :data:`MAX_NUMERIC_CHARS` are never numbers only.
    """
    if len(expected) > MAX_NUMERIC_CHARS or len(actual) > MAX_NUMERIC_CHARS:
        return NumericDiff(False, ())
    pairs = _numbers(expected, actual, GROUPED)
    pairs = _numbers(expected, actual, NUMBER) if pairs is None else pairs
    if pairs is None:
        return NumericDiff(False, ())
    return NumericDiff(True, _number_changes(actual, pairs, tolerance))
