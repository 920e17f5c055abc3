"""What the queries of the index share: the adjudications, whose idempotency keys count as seen, and
the current judgments of a run.

The ledger keeps one event per idempotency key, whatever its type: a rating whose key an earlier
adjudication carries is a redelivery. The index holds ratings, skips and notes; the few
adjudications are read from their lines and put in a table the queries join.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .log import Snapshot

ADJUDICATED = (
    "AND NOT EXISTS (SELECT 1 FROM adjudications a "
    "WHERE a.h = e.key_hash AND a.k = e.idempotency_key AND a.line < e.line)"
)
"""The clause that leaves out events whose key an earlier adjudication carries."""
_CURRENT = """
SELECT arg_max(byte_offset, line), max(line), arg_max(kind, line)
FROM read_parquet($files) e
WHERE first AND run_id = $run AND line <= $upto {adjudicated}
GROUP BY item_id, dimension, reviewer, kind = 2
"""
"""Per (item, dimension, reviewer) of the run: the offset and line of the latest rating or skip,
and of the latest note, of the events that are not redeliveries."""
_EARLIEST = """
SELECT a.k, min(e.line) FROM read_parquet($files) e JOIN adjudications a
ON a.h = e.key_hash AND a.k = e.idempotency_key GROUP BY a.k
"""
_TYPES = ("rating", "skip", "note")
"""The record type of each event ``kind``."""
NO_LIMIT = 1 << 62
"""``upto`` for every line of the log."""


def with_adjudications(adjudications: list[tuple[int, Any]]) -> Any:
    """A DuckDB connection with the table ``adjudications`` (``k`` key, ``line`` where the key
    first appears among them, ``h`` its hash as the index's ``key_hash``)."""
    from .chunks import connect

    first: dict[str, int] = {}
    for line, record in adjudications:
        first.setdefault(record.idempotency_key, line)
    con = connect()
    con.execute("CREATE TEMP TABLE given (k VARCHAR, line BIGINT)")
    if first:
        con.executemany("INSERT INTO given VALUES (?, ?)", list(first.items()))
    con.execute(
        "CREATE TEMP TABLE adjudications AS SELECT *, (hash(k) >> 1)::BIGINT AS h FROM given"
    )
    return con


def current_lines(
    con: Any, snapshot: "Snapshot", run_id: str, upto: int = NO_LIMIT
) -> list[tuple[int, int, str]]:
    """(byte offset, line, record type) of the run's current rating or skip and latest note per
    (item, dimension, reviewer), up to line ``upto``; ``con`` has the adjudications
    (:func:`with_adjudications`)."""
    from .chunks import Names

    names = Names.read(con, Path(snapshot.names_file() or ""))
    if run_id not in names.values["run_id"]:
        return []
    code = names.values["run_id"].index(run_id)
    rows = con.execute(
        _CURRENT.format(adjudicated=ADJUDICATED),
        {"files": snapshot.event_files(), "run": code, "upto": upto},
    ).fetchall()
    return [(offset, line, _TYPES[kind]) for offset, line, kind in rows]


def earliest_keys(con: Any, snapshot: "Snapshot") -> dict[str, int]:
    """Per adjudication's key: the first line of a rating, skip or note with it."""
    return dict(con.execute(_EARLIEST, {"files": snapshot.event_files()}).fetchall())


def kept_adjudications(
    adjudications: list[tuple[int, Any]], run_id: str | None, earliest: dict[str, int]
) -> list[tuple[int, Any]]:
    """The run's (every run's: None) adjudications that are not redeliveries (no earlier event or
    adjudication has their key)."""
    seen: dict[str, int] = {}
    kept = []
    for line, record in adjudications:
        key = record.idempotency_key
        first = min(seen.get(key, line), earliest.get(key, line))
        seen.setdefault(key, line)
        if first == line and run_id in (None, record.run_id):
            kept.append((line, record))
    return kept


def read_records(path: Path, lines: list[tuple]) -> list[tuple[int, Any]]:
    """(line, record) at each (byte offset, line) or (byte offset, line, record type), read
    forwards. The fast reader accepted each of these lines, so a plain JSON parser reads them
    (the log's own parser refuses what it would take more loosely, such as a repeated key: the
    reader has already refused those); with its type, the record's model parses the line itself."""
    found: list[tuple[int, Any]] = []
    enabled = gc.isenabled()
    gc.disable()  # thousands of new records: a collection would walk them again and again
    try:
        _read_into(found, path, lines)
    finally:
        if enabled:
            gc.enable()
    return found


def _read_into(found: list, path: Path, lines: list[tuple]) -> None:
    from orjson import loads  # (not the fast reader's module: the bots would import pandas)

    from evaluation.records import RECORD_TYPES, parse_record

    with open(path, "rb") as handle:
        for offset, line, *kind in sorted(lines):
            handle.seek(offset)
            raw = handle.readline()
            if kind:
                found.append((line, RECORD_TYPES[kind[0]].model_validate_json(raw)))
            else:
                found.append((line, parse_record(loads(raw))))


__all__ = [
    "ADJUDICATED",
    "NO_LIMIT",
    "current_lines",
    "earliest_keys",
    "kept_adjudications",
    "read_records",
    "with_adjudications",
]
