"""A run: its header, its evaluated items and its summary, read back from a run file."""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import mean
from typing import Iterable, Literal

from pydantic import BaseModel

from .records import ItemData, QueryEvaluation, RunHeader, RunSummary

RunKind = Literal["search", "answer", "scenario", "change"]
"""What a run evaluates (:attr:`RunHeader.kind`)."""

_CONFIDENCE_WORDS = {"low": 0.3, "medium": 0.6, "high": 0.9}


@dataclass
class Run:
    """A run read from ``results/runs/<run-id>.jsonl``."""

    run_id: str
    header: RunHeader
    items: list[ItemData] = field(default_factory=list)
    summary: RunSummary | None = None
    _positions: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_records(cls, run_id: str, records: Iterable[BaseModel]) -> "Run":
        """Fold a run file's records; an item that appears twice keeps its last version."""
        header: RunHeader | None = None
        items: dict[str, ItemData] = {}
        summary = None
        for record in records:
            if isinstance(record, RunHeader):
                header = record
            elif isinstance(record, QueryEvaluation):
                items[record.data.id] = record.data
            elif isinstance(record, RunSummary):
                summary = record
        return cls(run_id, header or RunHeader(run_id=run_id), list(items.values()), summary)

    def item(self, item_id: str) -> ItemData | None:
        """The item with this id, or None."""
        index = self.index(item_id)
        return None if index is None else self.items[index]

    def index(self, item_id: str) -> int | None:
        """The item's position in the run (stable: run files only grow), or None."""
        if len(self._positions) != len(self.items):
            self._positions = {item.id: n for n, item in enumerate(self.items)}
        return self._positions.get(item_id)

    @property
    def item_ids(self) -> list[str]:
        """The items' ids, in the run's order."""
        return [item.id for item in self.items]

    @property
    def complete(self) -> bool:
        """Whether the run finished: a run cut short, or still being evaluated, has no summary
        record."""
        return self.summary is not None

    @property
    def overall(self) -> float | None:
        """Mean AI ``overall`` score (from the summary when there is one)."""
        if self.summary and "overall" in self.summary.averageScores:
            return self.summary.averageScores["overall"]
        values = [s for i in self.items if (s := ai_score(i, "overall")) is not None]
        return round(mean(values), 4) if values else None


def ai_score(item: ItemData, dimension: str, metric: str | None = None) -> float | None:
    """The AI's 0–1 score for a dimension: its ``metric`` (``[dimensions.X] metric``) if scored,
    else the score named like the dimension (``-`` read as ``_``), else ``overall``."""
    scores = item.evaluation.scores
    for key in (metric or dimension, dimension, dimension.replace("-", "_"), "overall"):
        if key in scores:
            return float(scores[key])
    return None


def ai_confidence(item: ItemData) -> float:
    """The AI's confidence as 0–1; missing confidence or an UNSURE verdict count as 0."""
    evaluation = item.evaluation
    if (evaluation.verdict or "").upper() == "UNSURE":
        return 0.0
    value = evaluation.confidence
    if isinstance(value, str):
        return _CONFIDENCE_WORDS.get(value.lower(), 0.0)
    return float(value) if value is not None else 0.0


def average_scores(items: Iterable[ItemData]) -> dict[str, float]:
    """Mean of each AI score over the items that have it."""
    buckets: dict[str, list[float]] = {}
    for item in items:
        for name, value in item.evaluation.scores.items():
            buckets.setdefault(name, []).append(float(value))
    return {name: round(mean(values), 4) for name, values in buckets.items()}
