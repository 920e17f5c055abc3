"""The events of one run that its export folds, found with the columnar index.

``hilbot export RUN`` folds the ratings log with :class:`evaluation.reviews.Ledger` and reads what
the ledger then says of the run: each reviewer's current rating or skip and latest note of each
item, the run's adjudications, and its latest synthesis. :func:`run_events` gives exactly those
records, in log order, so that the export folds a few thousand lines instead of the whole log:

* a query of the index's files picks the current judgment and the latest note per (item,
  dimension, reviewer) of the run, leaving out redeliveries (an idempotency key an earlier rating,
  skip, note or adjudication carries) as the ledger does; their lines are read at their offsets;
* the run's adjudications and review summaries are read from the lines the index lists for them;
  an adjudication whose key an earlier event carries is a redelivery too.

``tests/evaluation/test_exports.py`` holds the exports equal with and without the index.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from evaluation.log import LogIssue
    from evaluation.store import Store

    from .index import Snapshot

_CURRENT = """
SELECT arg_max(byte_offset, line), max(line)
FROM read_parquet($files) e
WHERE first AND run_id = $run {adjudicated}
GROUP BY item_id, dimension, reviewer, kind = 2
"""
"""Per (item, dimension, reviewer) of the run: the offset and line of the latest rating or skip,
and of the latest note, of the events that are not redeliveries."""
_EARLIEST = """
SELECT a.k, min(e.line) FROM read_parquet($files) e JOIN adjudications a
ON a.h = e.key_hash AND a.k = e.idempotency_key GROUP BY a.k
"""


def run_events(path: str | Path, run_id: str, issues: list["LogIssue"] | None = None) -> list[Any]:
    """The run's current judgments, latest notes, adjudications and review summaries (records, in
    log order); the log's bad lines go to ``issues``. None of them when there is no log."""
    from .index import indexed
    from .index.queries import with_adjudications

    snapshot = indexed(path)
    if snapshot is None:
        return []
    if not snapshot.complete or not snapshot.chunks:
        raise LookupError("the index does not hold every event")  # the caller folds the log
    adjudications = snapshot.typed("adjudication")
    con = with_adjudications(adjudications)
    try:
        lines = _current(con, snapshot, run_id, bool(adjudications))
        earliest = dict(con.execute(_EARLIEST, {"files": snapshot.event_files()}).fetchall())
    finally:
        con.close()
    found = _read(Path(path), lines)
    found += _kept_adjudications(adjudications, run_id, earliest)
    found += [(n, r) for n, r in snapshot.typed("review_summary") if r.run_id == run_id]
    if issues is not None:
        issues.extend(snapshot.issues())
    return [record for _, record in sorted(found, key=lambda pair: pair[0])]


def _current(con: Any, snapshot: "Snapshot", run_id: str, adjudicated: bool) -> list[tuple]:
    from .index.chunks import Names

    names = Names.read(con, Path(snapshot.names_file() or ""))
    if run_id not in names.values["run_id"]:
        return []
    from .index.queries import ADJUDICATED

    query = _CURRENT.format(adjudicated=ADJUDICATED if adjudicated else "")
    code = names.values["run_id"].index(run_id)
    return con.execute(query, {"files": snapshot.event_files(), "run": code}).fetchall()


def _read(path: Path, lines: list[tuple]) -> list[tuple[int, Any]]:
    """The records at the offsets (sorted, so the log is read forwards). The fast reader accepted
    each of these lines, so orjson parses them (the log's own parser refuses what orjson would
    take more loosely, such as a repeated key: the reader has already refused those)."""
    from evaluation.records import parse_record

    from ._reader import json_loads

    found = []
    with open(path, "rb") as handle:
        for offset, line in sorted(lines):
            handle.seek(offset)
            found.append((line, parse_record(json_loads(handle.readline()))))
    return found


def _kept_adjudications(
    adjudications: list[tuple[int, Any]], run_id: str, earliest: dict[str, int]
) -> list[tuple[int, Any]]:
    """The run's adjudications that are not redeliveries (no earlier event or adjudication has
    their key)."""
    seen: dict[str, int] = {}
    kept = []
    for line, record in adjudications:
        key = record.idempotency_key
        first = min(seen.get(key, line), earliest.get(key, line))
        seen.setdefault(key, line)
        if first == line and record.run_id == run_id:
            kept.append((line, record))
    return kept


def export_events(store: "Store", run_id: str) -> Callable[[list["LogIssue"] | None], list[Any]]:
    """What :func:`evaluation.exports.export_run` folds: :func:`run_events` when the index holds
    every event of the log, else (``HILBOT_NO_INDEX=1``, or the index could not be written) the
    whole log."""
    from .index import enabled

    def events(issues: list["LogIssue"] | None) -> list[Any]:
        if enabled(store.ratings.path):
            try:
                return run_events(store.ratings.path, run_id, issues)
            except LookupError:
                pass
        return list(store.human_events(issues))

    return events


__all__ = ["export_events", "run_events"]
