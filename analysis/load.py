"""The store as pandas DataFrames: current ratings, skips, concerns and notes, items and runs.

:func:`load` is where every analysis starts; :class:`Frames` lists the columns and dtypes
(the contract other analysis modules build on). Runs are read with :meth:`Store.load_run`;
``ratings.jsonl`` is streamed from ``store.ratings.path`` by a fast reader whose result equals
folding ``store.human_events()`` with :class:`evaluation.reviews.Ledger`:

* a line counts if it is a valid ``rating``, ``skip`` or ``note`` record; ``delivery``,
  ``review_summary`` and every other record type are checked, then ignored;
* an event whose idempotency key was already seen (on any rating, skip or note) is dropped;
* per (run_id, item_id, dimension, reviewer) the latest rating or skip counts (a skip after a
  rating replaces it, a rating after a skip replaces the skip); the latest note is kept apart;
* a bad line (not JSON, not an object, not a valid record, a torn last line) is skipped and
  reported into ``issues`` as the same :class:`LogIssue` (``file:line: reason``) ``read_log`` gives.

How it is fast (1M lines in about 4 s on this 2-vCPU machine, 7 s in one process; folding
``human_events()`` through the pydantic models takes about 40 s): lines are parsed with orjson
(installed, not yet a declared dependency; ``json.loads`` and ``pandas.read_json`` are several
times slower), a few hundred at a time, with the garbage collector paused. Records are checked
column-wise against plans of ``Rating`` / ``Skip`` / ``Note`` / ``Delivery`` (their fields held
equal to the models' by ``tests/test_plans.py``) that accept only plainly valid values (exact JSON
types, no unknown keys, a strict ISO-8601 shape for timestamps, scores in 0–1, known literals);
every line they do not accept goes to the pydantic models (``parse_record``), which decide: a lax
value pydantic coerces (``"0.5"`` as a score) still counts, with pydantic's value, and the fast path
never accepts a line the models reject. Low-cardinality columns are interned into categorical codes
while the strings are hot in cache; the fold is vectorised (``duplicated`` on the idempotency keys'
hashes, checked exactly on the strings where hashes repeat, then ``duplicated(keep="last")`` on one
int64 code per key). Logs of 32 MB or more are split at line boundaries: forked workers read the
later ranges while this process loads the runs and reads the first range — not when other threads
run (forking a threaded process is unsafe), nor with ``jobs=1``.

The scan is served by the columnar index of the log (:mod:`analysis.index`: only lines appended
since the last command are read; ``HILBOT_NO_INDEX=1`` reads the whole log).

Where the parts live: this module (:func:`load`, the items and runs frames), :mod:`analysis._reader`
(reading the log: :func:`scan_log`; :func:`start_scan` here goes through the index),
:mod:`analysis._plans` (the checks), :mod:`analysis._scan` (:class:`Scan`, what a read gives) and
:mod:`analysis._fold` (the fold).

Conventions of the frames:

* ``reviewer`` is the ``platform:id`` key; rows are in log order; ``line`` is 1-based.
* ``n_concerns`` and the ``concerns`` frame count each distinct tag of a rating once.
* ``note`` is the rating's own note when non-empty, else the text of the latest ``note`` record
  of the same key (wherever it is in the log), else None.
* ``source_type`` of a rating is its ``metadata.source_type``, else the item's ``source_type``
  feature, else None.
* A record without a timestamp has ``NaT`` (the model would invent "now"); a timestamp without
  a zone counts as UTC.
* ``runs=`` restricts every frame to those runs. Without it, ratings of runs no run file holds
  are kept (as the Ledger keeps them).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evaluation.log import LogIssue

from ._fold import CONCERN_COLUMNS, NOTE_COLUMNS, RATING_COLUMNS, SKIP_COLUMNS, fold
from ._reader import scan_log
from ._scan import HUMAN_TYPES, KEY, KIND_NOTE, KIND_RATING, KIND_SKIP, Events, Scan
from .index import start_indexed_scan as start_scan

if TYPE_CHECKING:
    from evaluation.records import ItemData
    from evaluation.runs import Run
    from evaluation.store import Store

ITEM_COLUMNS = [
    "run_id",
    "item_id",
    "kind",
    "set",
    "category",
    "query",
    "verdict",
    "confidence",
    "judge",
    "prompt_hash",
]
RUN_COLUMNS = ["run_id", "set", "kind", "created_at", "judge", "item_count", "dimensions"]
TIMESTAMP = "datetime64[ns, UTC]"


@dataclass(frozen=True)
class Frames:
    """The store as DataFrames (see the module doc for conventions).

    * ``ratings``: the latest RATING per (run_id, item_id, dimension, reviewer); a later skip
      removes it. ``run_id item_id dimension reviewer judgment channel`` str, ``score`` float64,
      ``n_concerns`` int64, ``note source_type session_date`` object, ``timestamp``
      datetime64[ns, UTC], ``line`` int64.
    * ``skips``: the latest SKIP per key: ``run_id item_id dimension reviewer`` str,
      ``skip_reason`` object, ``timestamp``, ``line`` int64.
    * ``concerns``: one row per (key, tag) of the current ratings: the key columns, ``tag`` str,
      ``timestamp`` (the rating's).
    * ``notes``: the latest note per key: the key columns, ``text`` str, ``timestamp``.
    * ``items``: one row per (run_id, item_id): ``run_id item_id kind set query judge`` str,
      ``category verdict prompt_hash source_type`` object, ``confidence`` float64
      (``ai_confidence``), ``ai_<score>`` float64 per score name (NaN where the run's value is not
      in 0–1), ``feature_<name>`` per feature: float64 when every value is a finite number (NaN
      where absent), else object holding the values as the run files have them (``"3"``,
      ``"large"``, ``true``; None where absent).
    * ``runs``: ``run_id set kind judge dimensions`` str (dimensions comma-joined),
      ``created_at`` datetime64[ns, UTC], ``item_count`` int64 (items in the run file).
    """

    ratings: pd.DataFrame
    skips: pd.DataFrame
    concerns: pd.DataFrame
    notes: pd.DataFrame
    items: pd.DataFrame
    runs: pd.DataFrame


# =========================================================================== public API


def load(
    store: "Store",
    *,
    runs: list[str] | None = None,
    issues: list[LogIssue] | None = None,
    jobs: int | None = None,
) -> Frames:
    """Read runs and ratings into :class:`Frames`; bad lines go to ``issues`` (never fatal).

    ``runs`` restricts the frames to those run ids (an unknown one raises ``RunNotFound``).
    ``jobs``: processes reading the log (default: one per CPU, at most 4, for logs of 32 MB or
    more when no other thread runs; 1 = in this process).
    """
    sink: list[LogIssue] = []
    pending = start_scan(Path(store.ratings.path), jobs)  # the log is read while the runs load
    try:
        run_ids = list(dict.fromkeys(runs)) if runs is not None else store.run_ids()
        loaded = [store.load_run(run_id, sink) for run_id in run_ids]
        items = _items_frame(loaded)
    finally:
        scan = pending()
    sink.extend(scan.issues)
    folded = fold(scan, items, run_ids if runs is not None else None)
    if issues is not None:
        issues.extend(sink)
    return Frames(
        ratings=folded["ratings"],
        skips=folded["skips"],
        concerns=folded["concerns"],
        notes=folded["notes"],
        items=items,
        runs=_runs_frame(loaded),
    )


def ai_score_column(items: pd.DataFrame, dimension: str, metric: str | None = None) -> pd.Series:
    """The AI's 0–1 score for ``dimension`` per item, as :func:`evaluation.runs.ai_score` gives it.

    ``ai_<metric>`` (the dimension's configured metric, when given), then ``ai_<dimension>`` (then
    the same with ``-`` as ``_``) where present and not NaN, else ``ai_overall``; NaN where the
    item has none. Same index as ``items``; float64.
    """
    result = pd.Series(np.nan, index=items.index, dtype="float64", name=f"ai_{dimension}")
    names = (metric or dimension, dimension, dimension.replace("-", "_"), "overall")
    for name in dict.fromkeys(names):
        column = f"ai_{name}"
        if column in items.columns:
            result = result.fillna(items[column].astype("float64"))
    return result


# =========================================================================== runs and items


def _items_frame(runs: list["Run"]) -> pd.DataFrame:
    rows, scores, numeric = _item_rows(runs)
    ai_columns = [f"ai_{name}" for name in sorted(scores)]
    feature_columns = [
        f"feature_{name}"
        for name in sorted(numeric)
        if any(f"feature_{name}" in row for row in rows)
    ]
    columns = ITEM_COLUMNS + ai_columns + feature_columns + ["source_type"]
    floats = {"confidence", *ai_columns, *(f"feature_{name}" for name, ok in numeric.items() if ok)}
    data: dict[str, Any] = {}
    for name in columns:
        values = [row.get(name) for row in rows]
        if name in ("run_id", "item_id", "kind", "set", "query", "judge"):
            data[name] = pd.Series(values, dtype="str")
        elif name in floats:
            data[name] = pd.Series([np.nan if v is None else v for v in values], dtype="float64")
        else:
            data[name] = pd.Series(values, dtype=object)
    return pd.DataFrame(data, columns=columns)


def _item_rows(runs: list["Run"]) -> tuple[list[dict[str, Any]], set[str], dict[str, bool]]:
    """One row per item (runs oldest first); the AI score names; per feature, whether every value is
    a number (or None)."""
    rows: list[dict[str, Any]] = []
    scores: set[str] = set()
    numeric: dict[str, bool] = {}
    for run in _in_order(runs):
        prompt_hash = _prompt_hash(run.header.judge.prompt_hashes)
        for item in run.items:
            row = _item_row(run, item, prompt_hash)
            for name, value in item.evaluation.scores.items():
                row[f"ai_{name}"] = (
                    float(value) if 0.0 <= value <= 1.0 else np.nan
                )  # not a 0–1 score: none
                scores.add(name)
            for name, value in item.features.items():
                if value is None:
                    numeric.setdefault(name, True)
                    continue
                is_number = (
                    isinstance(value, (int, float))
                    and not isinstance(value, bool)
                    and _finite(value)
                )
                numeric[name] = numeric.get(name, True) and is_number
                row[f"feature_{name}"] = float(value) if is_number else value
            source = item.features.get("source_type")
            row["source_type"] = source if isinstance(source, str) else None
            rows.append(row)
    return rows, scores, numeric


def _item_row(run: "Run", item: "ItemData", prompt_hash: str | None) -> dict[str, Any]:
    """The columns of ``ITEM_COLUMNS`` for one item."""
    from evaluation.runs import ai_confidence

    header, evaluation = run.header, item.evaluation
    return {
        "run_id": run.run_id,
        "item_id": item.id,
        "kind": header.kind,
        "set": header.set,
        "category": item.query.category,
        "query": item.query.query,
        "verdict": evaluation.verdict,
        "confidence": float(ai_confidence(item)),
        "judge": evaluation.judge or header.judge.name,
        "prompt_hash": prompt_hash,
    }


def _finite(value: int | float) -> bool:
    """Whether a number is a finite float64 (a huge integer is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _prompt_hash(hashes: dict[str, str]) -> str | None:
    """12 hex digits naming the set of judge prompts a run used; None when it lists none."""
    if not hashes:
        return None
    text = "\n".join(f"{name}={value}" for name, value in sorted(hashes.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _in_order(runs: list["Run"]) -> list["Run"]:
    """Runs oldest first (then by id): the order of the ``runs`` and ``items`` frames."""
    return sorted(runs, key=lambda r: (_utc(r.header.created_at), r.run_id))


def _utc(moment: Any) -> float:
    stamp = pd.Timestamp(moment)
    return (stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp).timestamp()


def _runs_frame(runs: list["Run"]) -> pd.DataFrame:
    rows = _in_order(runs)
    created = [pd.Timestamp(r.header.created_at) for r in rows]
    created = [t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC") for t in created]
    return pd.DataFrame(
        {
            "run_id": pd.Series([r.run_id for r in rows], dtype="str"),
            "set": pd.Series([r.header.set for r in rows], dtype="str"),
            "kind": pd.Series([r.header.kind for r in rows], dtype="str"),
            "created_at": pd.Series(created, dtype=TIMESTAMP),
            "judge": pd.Series([r.header.judge.name for r in rows], dtype="str"),
            "item_count": pd.Series([len(r.items) for r in rows], dtype="int64"),
            "dimensions": pd.Series([",".join(r.header.dimensions) for r in rows], dtype="str"),
        },
        columns=RUN_COLUMNS,
    )


__all__ = [
    "CONCERN_COLUMNS",
    "Events",
    "Frames",
    "HUMAN_TYPES",
    "ITEM_COLUMNS",
    "KEY",
    "KIND_NOTE",
    "KIND_RATING",
    "KIND_SKIP",
    "NOTE_COLUMNS",
    "RATING_COLUMNS",
    "RUN_COLUMNS",
    "SKIP_COLUMNS",
    "Scan",
    "TIMESTAMP",
    "ai_score_column",
    "load",
    "scan_log",
    "start_scan",
]
