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


def run_events(path: str | Path, run_id: str, issues: list["LogIssue"] | None = None) -> list[Any]:
    """The run's current judgments, latest notes, adjudications and review summaries (records, in
    log order); the log's bad lines go to ``issues``. None of them when there is no log."""
    from .index import indexed
    from .index.queries import (
        current_lines,
        earliest_keys,
        kept_adjudications,
        read_records,
        with_adjudications,
    )

    snapshot = indexed(path)
    if snapshot is None:
        return []
    if not snapshot.complete or not snapshot.chunks:
        raise LookupError("the index does not hold every event")  # the caller folds the log
    adjudications = snapshot.typed("adjudication")
    con = with_adjudications(adjudications)
    try:
        lines = current_lines(con, snapshot, run_id)
        earliest = earliest_keys(con, snapshot)
    finally:
        con.close()
    found = read_records(Path(path), lines)
    found += kept_adjudications(adjudications, run_id, earliest)
    found += [(n, r) for n, r in snapshot.typed("review_summary") if r.run_id == run_id]
    if issues is not None:
        issues.extend(snapshot.issues())
    return [record for _, record in sorted(found, key=lambda pair: pair[0])]


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
