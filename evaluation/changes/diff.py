"""The unified diff of a :class:`~evaluation.changes.model.Change`: :func:`unified_diff` is
``difflib``'s, lines split on ``\\r\\n``, ``\\r`` or ``\\n``; the body is the raw text (show it
through :func:`evaluation.text.visible`), the ``---``/``+++`` paths are made visible.
:func:`marked_diff` marks each changed line whose numbers all moved within a
:class:`~evaluation.changes.numeric.Tolerance` (:data:`WITHIN_MARK`). Diffs of more than
:data:`MAX_DIFF_LINES` lines a side are cut there, with a note.
"""

from __future__ import annotations

import difflib

from ..text import visible
from .model import Change
from .numeric import LINE_BREAK, Tolerance, numeric_diff

MAX_DIFF_LINES = 20_000
"""Lines per side a diff covers; the rest is left out with a note (``difflib`` is quadratic at
worst)."""
WITHIN_MARK = "  ≈ within tolerance"
"""What :func:`marked_diff` appends to a changed line whose numbers all moved within tolerance."""


def _lines(text: str | None) -> list[str]:
    """``text`` as lines each ending in ``\\n`` (whatever its line breaks were)."""
    if not text:
        return []
    parts = LINE_BREAK.split(text)
    if parts[-1] == "":
        parts.pop()
    return [part + "\n" for part in parts]


def _capped(lines: list[str]) -> tuple[list[str], bool]:
    return (lines[:MAX_DIFF_LINES], True) if len(lines) > MAX_DIFF_LINES else (lines, False)


def _range(start: int, stop: int) -> str:
    """A hunk header's range as ``difflib`` writes it (``3``, ``3,4``, ``2,0`` for an empty range
    after line 2)."""
    length = stop - start
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"


Marks = dict[int, bool]
"""0-based indices of actual lines to mark."""


def _hunk(
    group: list[tuple[str, int, int, int, int]], old: list[str], new: list[str], marks: Marks
) -> list[str]:
    """One hunk of the diff, ``+`` lines in ``marks`` marked within tolerance."""
    (_, i1, _, j1, _), (_, _, i2, _, j2) = group[0], group[-1]
    out = [f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n"]
    for tag, a1, a2, b1, b2 in group:
        if tag == "equal":
            out += [" " + line for line in old[a1:a2]]
            continue
        out += ["-" + line for line in old[a1:a2]]
        out += [
            "+" + (line[:-1] + WITHIN_MARK + "\n" if marks.get(j) else line)
            for j, line in enumerate(new[b1:b2], b1)
        ]
    return out


def _diff_lines(change: Change, context: int, tolerance: Tolerance | None = None) -> list[str]:
    """The unified diff of ``change`` as lines, each ending in ``\\n``; empty when the texts are
    equal.

    With a ``tolerance``, changed lines whose numbers all moved within it are marked.
    """
    if change.expected == change.actual:
        return []
    shown = visible(change.path, newlines=False)
    (old, cut_old), (new, cut_new) = (
        _capped(_lines(change.expected)),
        _capped(_lines(change.actual)),
    )
    matcher = difflib.SequenceMatcher(None, old, new)
    marks = _within_lines(matcher, old, new, tolerance) if tolerance is not None else {}
    body = [
        line
        for group in matcher.get_grouped_opcodes(max(0, context))
        for line in _hunk(group, old, new, marks)
    ]
    if not body:
        note = (
            "only line endings or the final newline differ"
            if change.status == "changed"
            else f"{change.status}, empty"
        )
        body = [f"\\ {note}\n"]
    if cut_old or cut_new:
        body.append(f"\\ diff cut at {MAX_DIFF_LINES:,} lines a side\n")
    return [f"--- expected/{shown}\n", f"+++ actual/{shown}\n", *body]


def unified_diff(change: Change, *, context: int = 3) -> str:
    """``--- expected/<path>`` / ``+++ actual/<path>`` unified diff of the change; ``""`` when the
    texts are equal.

    An added or removed output is diffed against nothing; a change of line endings alone gets a
    one-line ``\\`` note instead of hunks.
    """
    return "".join(_diff_lines(change, context))


def _block_marks(old: list[str], new: list[str], first: int, tolerance: Tolerance) -> Marks:
    """Of a block of changed lines (``new`` starting at line index ``first``): the lines whose
    numbers all moved within tolerance."""
    block = numeric_diff("".join(old), "".join(new), tolerance)
    marks: Marks = {}
    for number in block.changes if block.only_numbers else ():
        index = first + number.line - 1
        marks[index] = marks.get(index, True) and number.within
    return marks


def _within_lines(
    matcher: difflib.SequenceMatcher[str], old: list[str], new: list[str], tolerance: Tolerance
) -> Marks:
    """The changed actual lines whose numbers all moved within tolerance: line by line where a block
    replaces as many lines as it removes, else the block as a whole."""
    marks: Marks = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            for offset in range(i2 - i1):
                marks.update(
                    _block_marks(
                        old[i1 + offset : i1 + offset + 1],
                        new[j1 + offset : j1 + offset + 1],
                        j1 + offset,
                        tolerance,
                    )
                )
        elif tag == "replace":
            marks.update(_block_marks(old[i1:i2], new[j1:j2], j1, tolerance))
    return marks


def marked_diff(change: Change, tolerance: Tolerance, *, context: int = 3) -> str:
    """:func:`unified_diff` with :data:`WITHIN_MARK` after each ``+`` line whose numbers all moved
    within ``tolerance``.

    Where a block of changed lines replaces as many lines as it removes, lines are paired one to
    one; otherwise the block counts when, as a whole, only numbers changed.
    """
    return "".join(_diff_lines(change, context, tolerance))
