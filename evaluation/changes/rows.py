"""Changes from a file of rows (:func:`changes_from_file`): JSONL, JSON or CSV rows ``{id, name,
description, expected, actual}``, read by :func:`evaluation.imports.read_rows` (the reader of
``hilbot import``: hostile JSON, cells up to ``CSV_FIELD_LIMIT``, a byte order mark) and matched
loosely, see :data:`FIELDS`. In CSV an empty cell is a missing value; a row whose expected and
actual are equal is no change, and a bad row is a :class:`ChangeError` naming ``file:line``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .._input import check_file, where
from ..errors import ImportFailed
from ..imports import BadRow, CsvRow, read_rows
from ..text import visible
from .model import Change, ChangeError, change_status, sorted_changes

FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id", "key", "test_id", "item_id", "case_id", "path"),
    "name": ("name", "test", "test_name", "title"),
    "description": ("description", "purpose", "intent"),
    "path": ("path",),
    "expected": ("expected", "previous", "baseline", "old", "before", "expected_output"),
    "actual": ("actual", "current", "new", "after", "output", "actual_output"),
}
"""Field or column names :func:`changes_from_file` accepts for each part of a row (case, spaces and
``-`` ignored)."""

_FILE_FIX = "give a .jsonl, .json or .csv file of rows with id, name, expected and actual"


def _rows(path: Path) -> list[tuple[int, Any]]:
    """Every ``(line, row)`` of the file; one that cannot be read as a whole is a
    :class:`ChangeError`."""
    try:
        return list(read_rows(path))
    except ImportFailed as exc:
        raise ChangeError(exc.what, where=exc.where, fix=exc.fix) from None
    except BadRow as exc:
        raise ChangeError(
            exc.args[0], where=where(path, exc.line), fix=exc.fix or "fix the file"
        ) from None


def _fields(row: Any, at: str) -> dict[str, Any]:
    """A row's values by normalised name (``Test ID`` → ``test_id``); a row that is not an object is
    an error."""
    if isinstance(row, BadRow):
        raise ChangeError(
            str(row),
            where=at,
            fix="fix the row: one JSON object per line, with expected and actual",
        )
    if not isinstance(row, dict):
        kind = {
            list: "a list",
            str: "a string",
            bool: "true/false",
            int: "a number",
            float: "a number",
            type(None): "null",
        }
        raise ChangeError(
            f"a row must be a JSON object, not {kind.get(type(row), type(row).__name__)}",
            where=at,
            fix='write each row as an object, e.g. {"id": "t1", "expected": "…", "actual": "…"}',
        )
    if None in row:
        raise ChangeError(
            "more cells than header columns", where=at, fix="quote cells that contain commas"
        )
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = re.sub(r"[\s-]+", "_", str(key).strip().lower())
        if value is not None and not (isinstance(row, CsvRow) and value == "") and name not in out:
            out[name] = value
    return out


def _pick(fields: dict[str, Any], name: str) -> Any:
    return next((fields[alias] for alias in FIELDS[name] if alias in fields), None)


def _label(value: Any, name: str, at: str) -> str | None:
    """An id, name, description or path as text; an object, a list or true/false is an error."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ChangeError(
        f"{name}: {json.dumps(value)[:60]} is not text",
        where=at,
        fix=f"give the {name} as a string or a number",
    )


def _output(value: Any) -> str | None:
    """An expected or actual value as text: strings as they are, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(
        value, ensure_ascii=False, indent=2 if isinstance(value, (dict, list)) else None
    )


def _row_change(fields: dict[str, Any], change_id: str, at: str) -> Change | None:
    expected, actual = _output(_pick(fields, "expected")), _output(_pick(fields, "actual"))
    if expected is None and actual is None:
        raise ChangeError(
            "no expected or actual value (one of "
            f"{', '.join(FIELDS['expected'] + FIELDS['actual'])})",
            where=at,
            fix="give the previous output as expected and the current one as actual (one may be "
            "missing, not both)",
        )
    if expected == actual:
        return None
    return Change(
        id=change_id,
        name=_label(_pick(fields, "name"), "name", at) or change_id,
        description=_label(_pick(fields, "description"), "description", at),
        path=_label(_pick(fields, "path"), "path", at) or change_id,
        status=change_status(expected, actual),
        expected=expected,
        actual=actual,
        source="file",
    )


def changes_from_file(path: str | Path) -> list[Change]:
    """The rows of a JSONL, JSON or CSV file whose expected and actual differ (a bad row is a
    :class:`ChangeError`)."""
    path = check_file(path, ChangeError, fix=_FILE_FIX)
    seen: dict[str, int] = {}
    changes: list[Change | None] = []
    for line, row in _rows(path):
        at = where(path, line)
        fields = _fields(row, at)
        change_id = _label(_pick(fields, "id"), "id", at) or f"row-{line}"
        if change_id in seen:
            raise ChangeError(
                f"duplicate id {visible(change_id, newlines=False)!r}, first on line "
                f"{seen[change_id]}",
                where=at,
                fix="give each row its own id",
            )
        seen[change_id] = line
        changes.append(_row_change(fields, change_id, at))
    return sorted_changes(changes)
