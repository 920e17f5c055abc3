"""What was decided on each change: the triage's ``triage_decision`` records read from the log
(:func:`read_decisions`), the humans' decisions read from the ratings (:func:`human_decisions`), and
the two side by side, one row per change (:func:`changes_table`). Conventions:

* **Decisions** are read by :func:`read_decisions`, fast: only lines holding the bytes
  ``"triage_decision"`` are parsed (orjson, then :func:`evaluation.records.parse_record`; a line
  orjson refuses goes to the log's own parser, which decides). A bad one is a ``file:line``
  :class:`LogIssue` worded as the loader words it (so a warning the loader gives already is not
  repeated). A change decided twice in one triage run (the same ``run_id`` and ``change_id``) counts
  once, at its last record; over every run, a change (its id and path) counts once, at its latest
  triage (a ``precedent: …`` decision, which repeats a human's earlier one, does not replace the
  triage that human decided on).
* **The human decision** on a change is its latest current rating on the dimension ``change`` of the
  triage run, whoever gave it: latest by timestamp, then by log order (a rating without a time
  counts as the latest, as the ledger's "now" would make it), as
  :func:`evaluation.triage_run.human_decisions` does. Each reviewer's rating is his current one (the
  loader's fold: a later skip withdraws it). The judgment ``accept`` or ``reject`` decides; any
  other judgment counts as accept when its score ≥ 0.5.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from evaluation.log import LogIssue

DIMENSION = "change"
"""The dimension humans decide changes on (as :data:`evaluation.triage_run.DIMENSION`)."""
DECISION_COLUMNS = [
    "run_id",
    "change_id",
    "path",
    "outcome",
    "rule",
    "audit",
    "category",
    "confidence",
    "judge",
    "judge_kind",
    "timestamp",
    "line",
]
"""The columns of :func:`read_decisions`' frame, one row per ``triage_decision`` record, in log
order."""


def read_decisions(path: str | Path, issues: list[LogIssue] | None = None) -> pd.DataFrame:
    """Every ``triage_decision`` record of the log at ``path`` as a frame
    (:data:`DECISION_COLUMNS`); bad lines → ``issues``.

    Only lines holding the bytes ``"triage_decision"`` are parsed
    (:func:`analysis._records.read_typed`), so a log of a million ratings is read in a fraction of a
    second; a missing log reads as empty.
    """
    from .._records import read_typed

    return _decision_frame(read_typed(path, "triage_decision", issues))


def _decision_frame(found: list[tuple[int, Any]]) -> pd.DataFrame:
    records = [r for _, r in found]
    stamps = (
        pd.to_datetime([r.timestamp for r in records], utc=True)
        if records
        else pd.DatetimeIndex([], tz="UTC")
    )
    return pd.DataFrame(
        {
            **{
                name: pd.Series([getattr(r, name) for r in records], dtype="str")
                for name in (
                    "run_id",
                    "change_id",
                    "path",
                    "outcome",
                    "rule",
                    "judge",
                    "judge_kind",
                )
            },
            "audit": pd.Series([r.audit for r in records], dtype=bool),
            "category": pd.Series([r.category for r in records], dtype="int64"),
            "confidence": pd.Series([r.confidence for r in records], dtype="float64"),
            "timestamp": pd.Series(stamps, dtype="datetime64[ns, UTC]"),
            "line": pd.Series([n for n, _ in found], dtype="int64"),
        },
        columns=DECISION_COLUMNS,
    )


def human_decisions(ratings: pd.DataFrame, runs: Iterable[str] | None = None) -> pd.DataFrame:
    """Each change's human decision: ``run_id``, ``change_id``, ``human`` (``accept``/``reject``),
    from the latest current rating on the dimension ``change`` (by timestamp, then log order; see
    the module docstring)."""
    rows = ratings[ratings["dimension"] == DIMENSION]
    if runs is not None:
        rows = rows[rows["run_id"].isin(list(runs))]
    rows = rows.sort_values(["timestamp", "line"], na_position="last", kind="stable")
    rows = rows.drop_duplicates(["run_id", "item_id"], keep="last")
    judgment, score = rows["judgment"].to_numpy(object), rows["score"].to_numpy(float)
    accept = (judgment == "accept") | ((judgment != "reject") & (score >= 0.5))
    return pd.DataFrame(
        {
            "run_id": rows["run_id"].to_numpy(object),
            "change_id": rows["item_id"].to_numpy(object),
            "human": np.where(accept, "accept", "reject").astype(object),
        }
    )


PRECEDENT = "precedent:"
"""How the rule of a decision that repeats a human's earlier one begins (as
:data:`evaluation.triage_decisions.PRECEDENT` writes it)."""


def latest_triages(decisions: pd.DataFrame) -> pd.DataFrame:
    """Each change once, at its latest triage (log order), over every triage run.

    A change is its ``change_id`` and ``path``. A decision that repeats a human's on the same change
    (``precedent: …``) does not replace the triage that human decided on.
    """
    repeated = decisions["rule"].str.startswith(PRECEDENT).to_numpy(bool)
    change = decisions["change_id"] + "\0" + decisions["path"]
    decided_before = change.isin(set(change[~repeated])).to_numpy(bool)
    kept = decisions[~(repeated & decided_before)]
    return kept.drop_duplicates(["change_id", "path"], keep="last")


def changes_table(
    decisions: pd.DataFrame, ratings: pd.DataFrame, run: str | None = None
) -> pd.DataFrame:
    """One row per change in scope: its decision (the last record of it) and ``human`` (None while
    undecided). Over every run, each change counts once, at its latest triage
    (:func:`latest_triages`)."""
    scoped = decisions if run is None else decisions[decisions["run_id"] == run]
    scoped = scoped.drop_duplicates(["run_id", "change_id"], keep="last")
    scoped = latest_triages(scoped) if run is None else scoped
    table = pd.DataFrame(
        {
            name: scoped[name].to_numpy(object)
            for name in ("run_id", "change_id", "path", "outcome", "judge")
        }
    )
    table["audit"] = scoped["audit"].to_numpy(bool)
    table["category"] = scoped["category"].to_numpy("int64")
    table["confidence"] = scoped["confidence"].to_numpy("float64")
    humans = human_decisions(ratings, set(table["run_id"]))
    table = table.merge(humans, on=["run_id", "change_id"], how="left")
    table["human"] = table["human"].astype(object).where(table["human"].notna(), None)
    return table
