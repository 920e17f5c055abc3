"""A run's review progress, said one way everywhere: ``rated 12/18 · complete 6/18 (k=2)``.

*Rated* counts the run's items with at least one rating in a dimension, *complete* those with
``k`` ratings from different reviewers (``[review] k``), both of the run's items. The run listing
(``hilbot review --list``, the chats' ``runs``), the App Home, a session's start and every card
say it so; what one reviewer did is said apart (``/status``). What a run's items are called
(``18 queries``, ``5 scenarios``, ``2 changes``) is here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from evaluation import Ledger, Run

if TYPE_CHECKING:
    from analysis.index.runs import RunFacts

NOUNS = {"scenario": "scenarios", "change": "changes"}
"""What a run of each kind calls its items; any other kind: queries."""


def item_noun(kind: str) -> str:
    """``queries``, ``scenarios`` or ``changes``: what a run of ``kind`` holds."""
    return NOUNS.get(kind, "queries")


class RatingCounter(Protocol):
    """What progress is counted from: the ledger, or the tallies of the log's columnar index."""

    def rating_count(self, run_id: str, item_id: str, dimension: str) -> int:
        """How many reviewers' current judgment of the item is a rating."""


@dataclass(frozen=True)
class RunProgress:
    """How far a run's review is in one dimension."""

    rated: int
    """Items with at least one rating."""
    complete: int
    """Items with ``k`` ratings or more."""
    total: int
    """The run's items."""
    k: int
    """Ratings an item needs (``[review] k``)."""

    def __str__(self) -> str:
        return (
            f"rated {self.rated}/{self.total} · complete {self.complete}/{self.total} (k={self.k})"
        )


def run_progress(
    ledger: RatingCounter, run: "Run | RunFacts", dimension: str, k: int
) -> RunProgress:
    """The run's progress in ``dimension`` from the ledger's running counts (one look per item)."""
    counts = [ledger.rating_count(run.run_id, item_id, dimension) for item_id in run.item_ids]
    return RunProgress(
        rated=sum(1 for n in counts if n),
        complete=sum(1 for n in counts if n >= k),
        total=len(counts),
        k=k,
    )


def rated_dimensions(ledger: Ledger) -> dict[str, set[str]]:
    """Per run id: the dimensions some item of it has a rating in."""
    found: dict[str, set[str]] = {}
    for rating in ledger.ratings():
        found.setdefault(rating.run_id, set()).add(rating.dimension)
    return found


def runs_progress(ledger: RatingCounter, run: "Run | RunFacts", k: int, rated: set[str]) -> str:
    """A run's progress for the listing: its first dimension's, then each other dimension with
    ratings (``rated``); dimensions named when there is more than one."""
    first = run.header.dimensions[0] if run.header.dimensions else None
    dimensions = ([first] if first else []) + sorted(rated - {first})
    if not dimensions:
        return str(RunProgress(0, 0, len(run.item_ids), k))
    parts = [(d, run_progress(ledger, run, d, k)) for d in dimensions]
    if len(parts) == 1:
        return str(parts[0][1])
    return "; ".join(f"{d}: {p}" for d, p in parts)


__all__ = [
    "NOUNS",
    "RatingCounter",
    "RunProgress",
    "item_noun",
    "rated_dimensions",
    "run_progress",
    "runs_progress",
]
