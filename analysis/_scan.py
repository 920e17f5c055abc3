"""What reading ``ratings.jsonl`` gives: the valid human events as columns, and what was wrong with
the rest.

:class:`Scan` is the fast reader's result (:mod:`analysis._reader`). Other modules read its events
through a few methods (:meth:`Scan.counted`, :meth:`Scan.column`, :meth:`Scan.codes`,
:meth:`Scan.row_tags`) rather than through the columns' storage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd

from evaluation.log import LogIssue

from ._columns import CATEGORICAL, EVENT_COLUMNS, KEY
from ._columns import HUMAN_TYPES as HUMAN_TYPES  # the scan's vocabulary, where readers look
from ._columns import KIND_NOTE as KIND_NOTE
from ._columns import KIND_RATING as KIND_RATING
from ._columns import KIND_SKIP as KIND_SKIP

if TYPE_CHECKING:
    from ._plans import Interner

Events = dict  # column name -> np.ndarray or pd.Categorical (see Scan.events)

NUMERIC = {
    "line": np.int64,
    "kind": np.int8,
    "idem_hash": np.int64,
    "ts": np.int64,
    "score": np.float64,
    "n_tags": np.int32,
    "tag_start": np.int64,
}


@dataclass
class Scan:
    """Every valid human event of a log, plus what was wrong with the other lines."""

    events: "Events"
    """Columns (arrays of equal length) of the valid rating/skip/note records, in blocks of log
    order (``line`` orders them): ``line kind run_id item_id dimension reviewer channel
    idempotency_key idem_hash`` (its ``hash()``) ``ts`` (int64 ns, NaT as int64 min) ``judgment
    score n_tags tag_start note source_type session_date skip_reason text``; key and low-cardinality
    columns are categorical."""
    issues: list[LogIssue] = field(default_factory=list)
    """Bad lines, as ``read_log`` reports them."""
    raw: list[tuple[int, str, str]] = field(default_factory=list)
    """Observations on raw records, valid or not: (line, what, detail). ``skip_fields``: a skip
    record carries rating fields (detail: their names, comma-separated)."""
    lines: int = 0
    """Lines read."""
    counts: dict[str, int] = field(default_factory=dict)
    """Valid records per type (every type, not only human events)."""
    tags: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    """Concern tags of every rating, flat, as codes into ``tag_names`` (a row's are
    ``tags[tag_start : tag_start + n_tags]``)."""
    tag_names: list[str] = field(default_factory=list)
    """The concern tags, by code."""
    slow_lines: int = 0
    """Lines the fast checks did not accept, so the pydantic models read them (blank lines aside):
    0 for a log hilbot wrote; each lax, unknown or bad line counts one."""
    first: np.ndarray | None = None
    """Per event, whether it is the first of the log with its idempotency key, when the columnar
    index says so (the scan read whole from it, :mod:`analysis.index`); the ``idempotency_key``
    and ``idem_hash`` columns are then not read (None and 0)."""

    def counted(self) -> np.ndarray:
        """Positions of the events that count, in log order: the first event of each idempotency
        key.

        An event whose key an earlier line carries is a redelivery: it is left out (their number
        is the number of events less ``len(counted())``).
        """
        order = np.argsort(self.events["line"], kind="stable")
        if self.first is not None:
            return order[self.first[order]]
        return order[~_duplicated_keys(self.events, order)]

    def column(self, name: str) -> np.ndarray:
        """One value per event: numbers for numeric columns (``line kind ts score n_tags`` …, the
        stored array: do not modify it), else an object array of the strings (None where absent)."""
        values = self.events[name]
        if isinstance(values, pd.Categorical):
            return strings(values)
        return values

    def codes(self, columns: Sequence[str] = KEY) -> np.ndarray:
        """One int64 per event, equal where two events agree on every one of ``columns``
        (categorical columns; by default the fold key, ``run_id item_id dimension reviewer``)."""
        return _key_codes(self.events, columns)

    def row_tags(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row, tag name) pairs of the events at ``positions``: rows index ``positions``."""
        counts = self.events["n_tags"].astype(np.int64)[positions]
        starts = self.events["tag_start"][positions]
        rows = np.repeat(np.arange(len(positions)), counts)
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        codes = self.tags[np.repeat(starts, counts) + offsets]
        return rows, np.asarray(self.tag_names, dtype=object)[codes] if len(codes) else np.zeros(
            0, dtype=object
        )


def strings(column: pd.Categorical, positions: np.ndarray | None = None) -> np.ndarray:
    """Values of a categorical column (at ``positions``) as an object array (None where missing)."""
    missing = np.array([None], dtype=object)
    categories = np.append(np.asarray(column.categories, dtype=object), missing)
    return categories[column.codes if positions is None else column.codes[positions]]


def _duplicated_keys(events: "Events", order: np.ndarray) -> np.ndarray:
    """Per position of ``order`` (file order): whether its idempotency key was seen before.

    Compares the keys' hashes, then the strings of the few rows whose hash repeats (exact).
    """
    hashes = pd.Series(events["idem_hash"][order])
    repeated = hashes.duplicated(keep=False).to_numpy()
    duplicated = np.zeros(len(order), dtype=bool)
    if repeated.any():
        where = np.flatnonzero(repeated)
        keys = pd.Series(events["idempotency_key"][order[where]])
        duplicated[where[keys.duplicated(keep="first").to_numpy()]] = True
    return duplicated


def _key_codes(events: "Events", columns: Sequence[str] = KEY) -> np.ndarray:
    """One int64 per (run_id, item_id, dimension, reviewer) (or ``columns``): equal iff the keys are
    equal."""
    code = np.zeros(len(events["line"]), dtype=np.int64)
    bound = 1
    for name in columns:
        column = events[name]
        codes, size = column.codes.astype(np.int64), len(column.categories) + 1
        if bound * size >= 1 << 62:  # keep it small: renumber what we have so far
            code, uniques = pd.factorize(code)
            bound = len(uniques) + 1
        code = code * size + codes + 1
        bound *= size
    return code


# --------------------------------------------------------------------------- building the columns


def events_frame(
    pieces: list[dict[str, Any]], interner: "Interner"
) -> tuple["Events", np.ndarray, list[str]]:
    """One frame of every piece's rows; the flat tag codes and the tag names (``tag_start`` and
    ``n_tags`` of a row locate its tags in the flat codes)."""
    if not pieces:
        return empty_events(), np.zeros(0, dtype=np.int32), []
    starts = []
    base = 0
    for piece in pieces:
        counts = piece["n_tags"].astype(np.int64)
        starts.append(np.cumsum(counts) - counts + base)
        base += len(piece["tags"])
    columns: dict[str, Any] = {}
    for name in EVENT_COLUMNS:
        if name == "tag_start":
            columns[name] = np.concatenate(starts)
        elif name in NUMERIC or name in CATEGORICAL:
            values = (
                np.concatenate([p[name] for p in pieces]) if len(pieces) > 1 else pieces[0][name]
            )
            if name in CATEGORICAL:
                columns[name] = interner.categorical(name, values)
            else:
                columns[name] = np.asarray(values, dtype=NUMERIC[name])
        else:
            values = (
                list(chain.from_iterable(p[name] for p in pieces))
                if len(pieces) > 1
                else pieces[0][name]
            )
            columns[name] = np.fromiter(values, dtype=object, count=len(values))
    tags = np.concatenate([p["tags"] for p in pieces]).astype(np.int32)
    return columns, tags, list(interner.values["tag"])


def empty_events() -> "Events":
    """The columns of no event (each with its dtype)."""
    columns: dict[str, Any] = {}
    for name in EVENT_COLUMNS:
        if name in NUMERIC:
            columns[name] = np.zeros(0, dtype=NUMERIC[name])
        elif name in CATEGORICAL:
            columns[name] = pd.Categorical.from_codes(
                np.zeros(0, dtype=np.int32), dtype=pd.CategoricalDtype(pd.Index([], dtype=object))
            )
        else:
            columns[name] = np.zeros(0, dtype=object)
    return columns
