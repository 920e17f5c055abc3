"""Records of one type read from the ratings log fast: only lines holding ``"<type>"`` are parsed.

A log of a million ratings holds few ``triage_decision`` or ``adjudication`` records; finding their
lines by their bytes and parsing only those (orjson, then :func:`evaluation.records.parse_record`)
reads them in a fraction of a second. A bad candidate line goes to ``issues`` as ``file:line:
reason``; a missing log reads as empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluation.log import LogIssue

_BLOCK = 16 << 20


def read_typed(
    path: str | Path, record_type: str, issues: list[LogIssue] | None = None
) -> list[tuple[int, Any]]:
    """Every ``record_type`` record of the log at ``path`` with its 1-based line number, in log
    order. A log read through the columnar index (:func:`analysis.index.enabled`) whose index lists
    the type's lines (:data:`analysis.index.TYPED`) is not searched: its listed lines are read."""
    from evaluation.log import open_for_reading

    from .index import TYPED, enabled, indexed

    if record_type in TYPED and enabled(path):
        snapshot = indexed(path)
        if snapshot is None:
            return []
        return snapshot.typed(record_type, issues)
    path = Path(path)
    needle = f'"{record_type}"'.encode()
    found: list[tuple[int, Any]] = []
    handle = open_for_reading(path)
    if handle is None:
        return found
    scan = _Scan(path, needle, record_type, found, issues)
    with handle:
        lines, tail = 0, b""
        while block := handle.read(_BLOCK):
            first = 0
            if tail:  # the line begun in the block before ends in this one (or later)
                ends = block.find(b"\n")
                if ends == -1:
                    tail += block
                    continue
                first, joined, tail = ends + 1, tail + block[: ends + 1], b""
                scan(joined, 0, len(joined), lines, torn_end=False)
                lines += 1
            cut = (
                block.rfind(b"\n", first) + 1 or first
            )  # whole lines: block[first:cut]; the rest waits for its end
            if block.find(needle, first, cut) != -1:
                scan(block, first, cut, lines, torn_end=False)
            lines += block.count(b"\n", first, cut)
            tail = block[cut:]
        if tail:
            scan(tail, 0, len(tail), lines, torn_end=True)
    return found


class _Scan:
    """Finds and parses the candidate lines of whole-line byte ranges."""

    def __init__(
        self,
        path: Path,
        needle: bytes,
        record_type: str,
        found: list[tuple[int, Any]],
        issues: list[LogIssue] | None,
    ):
        self.path, self.needle, self.type, self.found, self.issues = (
            path,
            needle,
            record_type,
            found,
            issues,
        )

    def __call__(self, data: bytes, lo: int, hi: int, before: int, *, torn_end: bool) -> None:
        """The candidate lines of ``data[lo:hi]`` (``before`` lines precede ``lo`` in the file)."""
        counted_to, number = lo, before
        at = data.find(self.needle, lo, hi)
        while at != -1:
            start = data.rfind(b"\n", lo, at) + 1 or lo
            end = data.find(b"\n", at, hi)
            end = hi if end == -1 else end + 1
            number += data.count(b"\n", counted_to, start)
            counted_to = start
            record = self._record(data[start:end], number + 1, torn=torn_end and end == hi)
            if record is not None:
                self.found.append((number + 1, record))
            at = data.find(self.needle, end, hi)

    def _record(self, raw: bytes, number: int, *, torn: bool) -> Any:
        """The record a line holds; None for another record type or a bad line (reported)."""
        return candidate(raw, self.type, self.path, number, self.issues, torn=torn)


def candidate(
    raw: bytes,
    record_type: str,
    path: Path,
    number: int,
    issues: list[LogIssue] | None,
    *,
    torn: bool,
) -> Any:
    """The ``record_type`` record a candidate line (one holding ``"<type>"``) holds; None for
    another record type, or for a bad line, which goes to ``issues`` as line ``number`` of
    ``path`` (a record of another type that is bad is not this reader's to report)."""
    from orjson import loads
    from pydantic import ValidationError

    from evaluation.log import issue_reason, parse_line
    from evaluation.records import parse_record

    try:
        obj = loads(raw)
    except (ValueError, RecursionError):
        obj = None
    try:
        if obj.__class__ is dict:
            if obj.get("type") != record_type:
                return None
            record = parse_record(obj)
        else:  # not JSON orjson reads, or not an object: the log's own parser decides, and says why
            record = parse_line(raw, False)
    except (ValueError, RecursionError, ValidationError) as exc:
        if issues is not None:
            issues.append(LogIssue(path, number, issue_reason(exc, torn), torn))
        return None
    return record if getattr(record, "type", None) == record_type else None


__all__ = ["candidate", "read_typed"]
