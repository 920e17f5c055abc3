"""Gold labels for the analyses: one row per item and dimension instead of one per reviewer.

Calibration, correlation, patterns and synthesis compare the AI (or the items' features) with *the*
human label of each item. That label is the item's gold label (:mod:`evaluation.gold` has the
rules): an adjudicator's consensus where there is one, else a rule that says it is derived (a single
label, the majority, the lower median); excluded and unresolved items are left out and counted.
Agreement (:mod:`analysis.agreement`) never uses gold labels: it measures the independent ratings.

:func:`gold_ratings` gives a frame with the ``ratings`` frame's columns: an item with one label and
no adjudication keeps its rating's row as it is; any other item gets one row copied from its latest
rating with the gold ``judgment`` and ``score``, ``reviewer`` and ``channel`` ``"gold"`` and the
reviewers' notes joined. Each row also says ``gold_source`` and ``n_labels``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from evaluation.gold import DERIVED, gold_label

from .vocabulary import KEY3, Report

if TYPE_CHECKING:
    from evaluation.config import HilbotConfig
    from evaluation.log import LogIssue

    from .load import Frames


@dataclass(frozen=True)
class GoldCounts(Report):
    """How the items' gold labels were reached."""

    items: int
    """Items (and dimensions) with a rating or an adjudication."""
    adjudicated: int
    """Labelled by an adjudicator's consensus."""
    excluded: int
    """Excluded by an adjudicator: left out."""
    derived: int
    """Labelled by a rule: a single label, the majority or the median."""
    unresolved: int
    """Labels tied on a two-option scale, no adjudication: left out."""
    multi_labelled: bool = False
    """Whether some item has more than one label."""

    @property
    def differs(self) -> bool:
        """Whether gold labels say more than the ratings do (some item has several labels or an
        adjudication)."""
        return bool(self.adjudicated or self.excluded or self.unresolved or self.multi_labelled)

    def line(self) -> str:
        """The one line a report shows."""
        return (
            f"Gold labels: {self.items} items — {self.adjudicated} adjudicated, {self.derived} "
            f"derived by rule (single label, majority or median); {self.excluded} excluded and "
            f"{self.unresolved} unresolved, left out."
        )


def read_adjudications(path: Any, issues: list["LogIssue"] | None = None) -> list[Any]:
    """Every ``adjudication`` record of the log at ``path``, in log order (the latest per item
    counts)."""
    from ._records import read_typed

    return [record for _, record in read_typed(path, "adjudication", issues)]


def _scale(config: "HilbotConfig", dimension: str) -> Any:
    dim = config.dimensions.get(dimension)
    return config.scales.get(dim.scale) if dim else None


def gold_ratings(
    ratings: pd.DataFrame, adjudications: list[Any], config: "HilbotConfig"
) -> tuple[pd.DataFrame, GoldCounts]:
    """The gold-label frame (see the module doc) and the counts; ``ratings`` is the loader's ratings
    frame."""
    latest = {(a.run_id, a.item_id, a.dimension): a for a in adjudications}
    frame = ratings.sort_values("line", kind="stable") if "line" in ratings.columns else ratings
    rows: list[dict[str, Any]] = []
    sources: dict[str, int] = {}
    multi = False
    for key, group in frame.groupby(KEY3, sort=False, observed=True):
        decided = latest.pop(key, None)
        labels = list(zip(group["judgment"].astype(str), group["score"].astype(float)))
        gold = gold_label(labels, _scale(config, key[2]), decided)
        sources[gold.source] = sources.get(gold.source, 0) + 1
        multi = multi or len(labels) > 1
        if not gold.usable:
            continue
        row = group.iloc[-1].to_dict()
        if len(labels) > 1 or decided is not None:
            notes = [str(n) for n in group["note"].dropna() if str(n)] if "note" in group else []
            row.update(
                judgment=gold.judgment,
                score=gold.score,
                reviewer="gold",
                channel="gold",
                note="; ".join(dict.fromkeys(notes)) or None,
            )
        rows.append({**row, "gold_source": gold.source, "n_labels": gold.n_labels})
    columns = [*ratings.columns, "gold_source", "n_labels"]
    out = (
        pd.DataFrame(rows, columns=columns)
        if rows
        else ratings.iloc[0:0].assign(
            gold_source=pd.Series(dtype=str), n_labels=pd.Series(dtype="int64")
        )
    )
    out = out.astype(
        {c: ratings[c].dtype for c in ratings.columns if c in out.columns and len(out)},
        errors="ignore",
    )
    counts = GoldCounts(
        sum(sources.values()),
        sources.get("consensus", 0),
        sources.get("excluded", 0),
        sum(sources.get(s, 0) for s in DERIVED),
        sources.get("unresolved", 0),
        multi,
    )
    return out.reset_index(drop=True), counts


def gold_frames(
    frames: "Frames", adjudications: list[Any], config: "HilbotConfig"
) -> tuple["Frames", GoldCounts]:
    """``frames`` with gold-label ratings, and the concerns, notes and skips of left-out items
    removed."""
    ratings, counts = gold_ratings(frames.ratings, adjudications, config)
    kept = ratings[KEY3].drop_duplicates()

    def only_kept(table: pd.DataFrame) -> pd.DataFrame:
        if table.empty:
            return table
        return table.merge(kept, on=KEY3, how="inner")[table.columns]

    concerns = _gold_concerns(only_kept(frames.concerns), ratings)
    if len(ratings) and len(concerns):
        tags = concerns.groupby(KEY3, observed=True)["tag"].nunique()
        gold = ratings["reviewer"] == "gold"
        index = pd.MultiIndex.from_frame(ratings.loc[gold, KEY3])
        ratings.loc[gold, "n_concerns"] = tags.reindex(index).fillna(0).astype("int64").to_numpy()
    return replace(
        frames, ratings=ratings, concerns=concerns, notes=only_kept(frames.notes)
    ), counts


def _gold_concerns(concerns: pd.DataFrame, ratings: pd.DataFrame) -> pd.DataFrame:
    """The concern tags of an item with a gold row are that row's: every reviewer's tags, each
    once."""
    if concerns.empty or "reviewer" not in concerns.columns:
        return concerns
    gold = pd.MultiIndex.from_frame(ratings.loc[ratings["reviewer"] == "gold", KEY3])
    mine = pd.MultiIndex.from_frame(concerns[KEY3]).isin(gold)
    merged = concerns[mine].assign(reviewer="gold").drop_duplicates([*KEY3, "tag"])
    return pd.concat([concerns[~mine], merged], ignore_index=True).astype(concerns.dtypes.to_dict())


__all__ = ["GoldCounts", "gold_frames", "gold_ratings", "read_adjudications"]
