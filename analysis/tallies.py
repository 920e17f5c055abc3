"""How many reviewers currently rate each item, folded from the columnar scan of the log.

The run listing (``hilbot review --list``) and the chats' run lists need, per (run, item,
dimension), the number of reviewers whose current judgment is a rating, and which dimensions of a
run have ratings at all. :class:`evaluation.reviews.Ledger` folds every event through the pydantic
models to get them; :func:`rating_tallies` gets the same numbers from the scan the index keeps
(:mod:`analysis.index`), in numpy:

* an event whose idempotency key an earlier rating, skip, note *or adjudication* carries is a
  redelivery, left out (the adjudications' keys are read from their own lines, which are few);
* the latest rating or skip per (run, item, dimension, reviewer) is the reviewer's judgment;
* an item's tally is the number of reviewers whose judgment is a rating.

The query's answer is kept beside the index (``tallies.json``, keyed by the index's chunks and the
adjudications), so a listing with no new events since the last runs no query.

``tests/analysis/test_tallies.py`` holds them equal to the ledger's on generated logs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from evaluation.log import LogIssue

    from ._scan import Scan


@dataclass
class RatingTallies:
    """Current ratings per (run, item, dimension): what :class:`evaluation.reviews.Ledger`'s
    ``rating_count`` says, without the ledger."""

    counts: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """Reviewers whose current judgment of the item is a rating (items with none are absent)."""

    def rating_count(self, run_id: str, item_id: str, dimension: str) -> int:
        """How many reviewers' current judgment of the item is a rating."""
        return self.counts.get((run_id, item_id, dimension), 0)

    def rated_dimensions(self) -> dict[str, set[str]]:
        """Per run id: the dimensions some item of it has a rating in."""
        found: dict[str, set[str]] = {}
        for run_id, _, dimension in self.counts:
            found.setdefault(run_id, set()).add(dimension)
        return found


def rating_tallies(path: str | Path, issues: list["LogIssue"] | None = None) -> RatingTallies:
    """The tallies of the ratings log at ``path`` (bad lines go to ``issues``, as the ledger's
    reading reports them): a query of the index's files, or a fold of the scan when some events
    are not in them."""
    from .index import indexed

    snapshot = indexed(path)
    if snapshot is None:
        return RatingTallies()
    adjudications = snapshot.typed("adjudication")
    if snapshot.complete and snapshot.chunks:
        kept = _Kept(snapshot, adjudications)
        found = kept.read()
        if found is None:
            try:
                found = _query(snapshot, adjudications)
            except FileNotFoundError:  # merged by another process meanwhile
                return rating_tallies(path, issues)
            kept.write(found)
        tallies = found
    else:
        tallies = _tallies(snapshot.scan(), _first_lines(adjudications))
    if issues is not None:
        issues.extend(snapshot.issues())
    return tallies


_TALLY = """
WITH latest AS (
    SELECT run_id, item_id, dimension, arg_max(kind, line) AS kind
    FROM read_parquet($files) e
    WHERE first AND kind <> 2 {adjudicated}
    GROUP BY run_id, item_id, dimension, reviewer
)
SELECT run_id, item_id, dimension, count(*) FROM latest WHERE kind = 0 GROUP BY ALL
"""
"""Per (run, item, dimension) codes: how many reviewers' latest rating or skip is a rating, of the
events that are not redeliveries (``first``, and no earlier adjudication with their key)."""


def _query(snapshot: Any, adjudications: list[tuple[int, Any]]) -> RatingTallies:
    from .index.chunks import Names
    from .index.queries import ADJUDICATED, with_adjudications

    con = with_adjudications(adjudications)
    try:
        query = _TALLY.format(adjudicated=ADJUDICATED if adjudications else "")
        rows = con.execute(query, {"files": snapshot.event_files()}).fetchall()
        names = Names.read(con, Path(snapshot.names_file())).values
    except Exception as exc:
        import duckdb

        if isinstance(exc, duckdb.IOException):
            raise FileNotFoundError(str(exc)) from None
        raise
    finally:
        con.close()
    runs, items, dimensions = names["run_id"], names["item_id"], names["dimension"]
    return RatingTallies({(runs[r], items[i], dimensions[d]): n for r, i, d, n in rows})


class _Kept:
    """The tallies of an index kept beside it (``tallies.json``), for the same chunks and
    adjudications: a listing with no new events runs no query (nor loads DuckDB)."""

    def __init__(self, snapshot: Any, adjudications: list[tuple[int, Any]]):
        import hashlib
        import json

        from .index import VERSION

        state = [VERSION, snapshot.chunks, [(n, a.idempotency_key) for n, a in adjudications]]
        self.key = hashlib.blake2b(json.dumps(state).encode(), digest_size=16).hexdigest()
        self.path = Path(snapshot.folder) / "tallies.json"

    def read(self) -> RatingTallies | None:
        import json

        try:
            kept = json.loads(self.path.read_bytes())
            if kept["key"] != self.key:
                return None
            return RatingTallies({(str(r), str(i), str(d)): int(n) for r, i, d, n in kept["rows"]})
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write(self, tallies: RatingTallies) -> None:
        from .index.log import write_json

        rows = [[*key, n] for key, n in tallies.counts.items()]
        if any(part.is_symlink() for part in (self.path.parent, self.path)):
            return  # never written through a link
        try:
            write_json(self.path, {"key": self.key, "rows": rows})
        except OSError:  # a read-only index folder: the same tallies, queried every time
            return


def _first_lines(adjudications: list[tuple[int, Any]]) -> dict[str, int]:
    """Each adjudication's idempotency key with the line it first appears on."""
    first: dict[str, int] = {}
    for line, record in adjudications:
        first.setdefault(record.idempotency_key, line)
    return first


def _tallies(scan: "Scan", adjudications: dict[str, int]) -> RatingTallies:
    import numpy as np
    import pandas as pd

    from ._scan import KIND_NOTE, KIND_RATING, strings

    events = scan.events
    alive = scan.counted()
    if adjudications:
        alive = alive[_not_after_an_adjudication(events, alive, adjudications)]
    kind = events["kind"]
    judged = alive[kind[alive] != KIND_NOTE]
    key = scan.codes()
    latest = judged[~pd.Series(key[judged]).duplicated(keep="last").to_numpy()]
    rated = latest[kind[latest] == KIND_RATING]
    item = scan.codes(["run_id", "item_id", "dimension"])[rated]
    _, first, count = np.unique(item, return_index=True, return_counts=True)
    where = rated[first]
    names = [strings(events[c], where) for c in ("run_id", "item_id", "dimension")]
    return RatingTallies({(r, i, d): n for r, i, d, n in zip(*names, count.tolist())})


def _not_after_an_adjudication(
    events: dict, alive: "np.ndarray", adjudications: dict[str, int]
) -> "np.ndarray":
    """Which of ``alive`` no earlier adjudication's key repeats."""
    import numpy as np
    import pandas as pd

    first = pd.Series(events["idempotency_key"][alive], dtype=object).map(adjudications)
    return ~(first.to_numpy(dtype=float, na_value=np.inf) < events["line"][alive])


__all__ = ["RatingTallies", "rating_tallies"]
