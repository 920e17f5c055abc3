"""``--outputs FILE``: precomputed outputs (JSONL or a JSON list), one row per case, matched to
cases by ``id`` (or ``test_id``, or the query text). The file is read up front: a row that is not
an object, has no id or repeats one is a one-line :class:`TargetError` naming ``file:line``; a row
whose values cannot be read is an error on its item only, and a case with no row too.
"""

from __future__ import annotations

import codecs
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from pydantic import ValidationError

from .._json import JSONInputError, loads
from ..cases import Case
from .base import TargetError, TargetOutput, first_line, to_output


class OutputsTarget:
    """Precomputed outputs, one per case id (JSONL or a JSON list)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.name = str(self.path)
        self.by_key = _load_outputs(self.path)
        self.model = _common_model(self.by_key.values())
        """The model most rows report (the first of a tie), or None: what the outputs are of."""

    async def __call__(self, case: Case) -> TargetOutput:
        row = self.by_key.get(case.id) or self.by_key.get(case.query.query)
        if row is None:
            return TargetOutput(error=f"no output for {case.id!r} in {self.path.name}")
        try:
            return to_output(row)
        except (ValueError, ValidationError) as exc:
            return TargetOutput(error=f"bad output row: {first_line(exc)}")


def _common_model(rows: Iterable[dict[str, Any]]) -> str | None:
    models = Counter(
        row["model"] for row in rows if isinstance(row.get("model"), str) and row["model"].strip()
    )
    return models.most_common(1)[0][0] if models else None


def _load_outputs(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = path.read_bytes().removeprefix(codecs.BOM_UTF8)
    except OSError as exc:
        raise TargetError(
            f"cannot read outputs ({exc.strerror or exc})",
            where=str(path),
            fix="check the --outputs path",
        ) from None
    if data.lstrip().startswith(b"["):
        return _index_rows(path, _array_rows(path, data))
    rows = [
        (number, _parse(path, line, number))
        for number, line in enumerate(data.splitlines(), 1)
        if line.strip()
    ]
    return _index_rows(path, rows)


def _parse(path: Path, data: bytes, number: int = 0) -> Any:
    """One JSON document (a line when ``number`` is given), or a one-line error naming
    ``file:line``."""
    try:
        return loads(data, duplicates=False)
    except JSONInputError as exc:
        line = number or exc.line
        what, _, fix = exc.reason.partition(" — ")
        raise TargetError(
            what,
            where=f"{path}:{line}" if line else str(path),
            fix=fix or ("fix or remove the line" if number else "fix the file"),
        ) from None


_BETWEEN = re.compile(r"[ \t\r\n,]*")


def _array_rows(path: Path, data: bytes) -> list[tuple[int, Any]]:
    """A JSON array's elements, each with the line it starts on."""
    rows = _parse(path, data)
    if not isinstance(rows, list):  # e.g. "[1] [2]": not one array
        raise TargetError(
            "not one JSON array",
            where=str(path),
            fix="write one array of rows, or one row per line",
        )
    text, decoder, lines = data.decode("utf-8"), json.JSONDecoder(), []
    index = text.index("[") + 1
    line, counted = 1, 0
    for _ in rows:  # the document is valid: walk it again for the line each element starts on
        between = _BETWEEN.match(text, index)
        assert between is not None  # the pattern matches the empty string too
        index = between.end()
        line, counted = line + text.count("\n", counted, index), index
        lines.append(line)
        index = decoder.raw_decode(text, index)[1]
    return list(zip(lines, rows))


def _kind(value: Any) -> str:
    names = {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
    }
    return names.get(type(value), "a number")


def _index_rows(path: Path, rows: list[tuple[int, Any]]) -> dict[str, dict[str, Any]]:
    index: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for number, row in rows:
        where = f"{path}:{number}"
        if not isinstance(row, dict):
            raise TargetError(
                f"an output row must be a JSON object, not {_kind(row)}",
                where=where,
                fix='write one object per row, e.g. {"id": "case-1", "answer": "..."}',
            )
        key = next(
            (row[k] for k in ("id", "test_id", "query") if row.get(k) not in (None, "")), None
        )
        if key is None:
            raise TargetError(
                "an output row needs an id (or the query)",
                where=where,
                fix='add "id" matching the case or query id',
            )
        if isinstance(key, bool) or not isinstance(key, (str, int)):
            raise TargetError(
                f"the row's id must be a string, not {_kind(key)}",
                where=where,
                fix='write e.g. "id": "case-1"',
            )
        if str(key) in index:
            raise TargetError(
                f"a second output row for {str(key)!r} (the first is on line {first[str(key)]})",
                where=where,
                fix="keep one row per case",
            )
        first[str(key)] = number
        index[str(key)] = {k: v for k, v in row.items() if k not in ("id", "test_id", "query")}
    return index
