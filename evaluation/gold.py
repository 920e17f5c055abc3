"""Gold labels: one trusted label per item and dimension, and the items whose labels disagree.

Conventions (the same for the bot, the exports and every analysis that uses gold labels):

* **Labels.** An item's independent labels are its reviewers' current ratings on the dimension (a
  skip is not a label). Adjudicating never changes them, so agreement is always measured on them.
* **Gold label.** The latest ``adjudication`` of the item decides when there is one: a consensus
  label is the gold label (source ``consensus``); an exclusion leaves the item out of every
  gold-label analysis (source ``excluded``, counted). Without one, the label is *derived* and says
  so:

  - one label: that label (``single``);
  - a strict majority (more than half the labels agree): that judgment (``majority``);
  - otherwise, on a scale of three or more options, the **median** label, the labels ordered by
    their scores (ties by judgment), and for an even count the *lower* of the two middle ones — the
    conservative choice (``median``);
  - otherwise (two options, tied; or no labels) none: the item is ``unresolved``, left out of
    gold-label analyses, counted, and offered for adjudication.

  A derived gold score is the chosen label's score.
* **Disputes** (what ``hilbot adjudicate`` offers, not yet adjudicated): an item with two or more
  labels whose judgments differ — on a scale of three or more options by at least ``[adjudication]
  min_spread`` levels (positions in score order), on a two-option scale or with a judgment off the
  scale by any difference — or whose AI score is more than ``[adjudication] ai_gap`` from the median
  human score (the mean of the two middle scores for an even count). Largest disagreement first: the
  larger of the human score spread (max − min) and the AI gap, then more labels first, then the
  run's order.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import TYPE_CHECKING, Literal, Sequence

from .records import Adjudication, Rating
from .runs import ai_score

if TYPE_CHECKING:
    from .config import AdjudicationSettings, Scale
    from .reviews import Ledger
    from .runs import Run

Source = Literal["consensus", "majority", "median", "single", "excluded", "unresolved"]
DERIVED: tuple[Source, ...] = ("majority", "median", "single")
"""Gold labels no human decided as such (a rule chose them)."""


@dataclass(frozen=True)
class Gold:
    """The gold label of one item on one dimension."""

    judgment: str | None
    """The label; None when excluded or unresolved."""
    score: float | None
    """Its score (0–1)."""
    source: Source
    """Where it comes from: an adjudication (``consensus``, ``excluded``) or a rule (``majority``,
    ``median``, ``single``)."""
    n_labels: int
    """The independent labels the item has."""
    adjudicator: str | None = None
    """Who adjudicated (``platform:id``), if anyone."""
    reason: str | None = None
    """The exclusion reason (or a remark on the consensus)."""

    @property
    def usable(self) -> bool:
        """Whether analyses use the item (it has a gold label)."""
        return self.judgment is not None


def _ordered(labels: Sequence[tuple[str, float]]) -> list[tuple[float, str]]:
    return sorted((float(score), str(judgment)) for judgment, score in labels)


def gold_label(
    labels: Sequence[tuple[str, float]],
    scale: "Scale | None",
    adjudication: Adjudication | None = None,
) -> Gold:
    """The gold label of an item from its independent ``(judgment, score)`` labels (see the module
    doc)."""
    n = len(labels)
    if adjudication is not None:
        who = adjudication.reviewer.key
        if adjudication.decision == "exclude":
            return Gold(None, None, "excluded", n, who, adjudication.reason)
        return Gold(
            adjudication.judgment, adjudication.score, "consensus", n, who, adjudication.reason
        )
    if n == 0:
        return Gold(None, None, "unresolved", 0)
    ordered = _ordered(labels)
    if n == 1:
        return Gold(ordered[0][1], ordered[0][0], "single", 1)
    counts: dict[str, int] = {}
    for _, judgment in ordered:
        counts[judgment] = counts.get(judgment, 0) + 1
    top = max(counts, key=lambda j: counts[j])
    if counts[top] * 2 > n:
        return Gold(top, next(s for s, j in ordered if j == top), "majority", n)
    if scale is not None and len(scale.options) < 3:
        return Gold(None, None, "unresolved", n)
    score, judgment = ordered[(n - 1) // 2]
    return Gold(judgment, score, "median", n)


@dataclass(frozen=True)
class Dispute:
    """An item whose labels disagree (with each other, or with the AI) and that no one has
    adjudicated."""

    item_id: str
    labels: tuple[Rating, ...]
    """The independent labels, by reviewer key."""
    spread: float
    """Max − min human score."""
    levels: int
    """How many scale positions apart the labels are (1 when they differ off the scale)."""
    ai_gap: float | None
    """|AI score − median human score|, when the AI scored the item."""
    why: str
    """In words: ``labels 2 levels apart``, ``AI 0.90 vs humans 0.30``."""

    @property
    def size(self) -> float:
        """How large the disagreement is (what orders disputes)."""
        return max(self.spread, self.ai_gap or 0.0)


def _levels(labels: Sequence[Rating], scale: "Scale | None") -> int:
    judgments = {r.judgment for r in labels}
    if len(judgments) < 2:
        return 0
    if scale is None or len(scale.options) < 3 or any(scale.option(j) is None for j in judgments):
        return 1
    order = [o.value for o in sorted(scale.options, key=lambda o: o.score)]
    places = [order.index(j) for j in judgments]
    return max(places) - min(places)


def _dispute(
    item_id: str,
    labels: tuple[Rating, ...],
    ai: float | None,
    scale: "Scale | None",
    settings: "AdjudicationSettings",
) -> Dispute | None:
    if not labels:
        return None
    levels = _levels(labels, scale)
    scores = [r.score for r in labels]
    gap = abs(ai - median(scores)) if ai is not None else None
    needed = 1 if scale is None or len(scale.options) < 3 else settings.min_spread
    why = []
    if len(labels) >= 2 and levels >= needed:
        why.append(
            f"labels {levels} level{'s' if levels != 1 else ''} apart"
            if levels > 1 or needed > 1
            else "labels differ"
        )
    if gap is not None and settings.ai_gap is not None and gap > settings.ai_gap:
        why.append(f"AI {ai:.2f} vs humans {median(scores):.2f}")
    if not why:
        return None
    return Dispute(item_id, labels, max(scores) - min(scores), levels, gap, "; ".join(why))


def disputes(
    run: "Run",
    ledger: "Ledger",
    dimension: str,
    scale: "Scale | None",
    settings: "AdjudicationSettings",
    *,
    adjudicated: bool = False,
) -> list[Dispute]:
    """The run's disputed items on ``dimension``, largest disagreement first (see the module doc).

    Items already adjudicated are left out unless ``adjudicated``.
    """
    found = []
    for place, item in enumerate(run.items):
        if not adjudicated and (run.run_id, item.id, dimension) in ledger.adjudications:
            continue
        labels = tuple(
            sorted(
                (
                    j
                    for _, j in ledger.item_judgments(run.run_id, item.id, dimension)
                    if isinstance(j, Rating)
                ),
                key=lambda r: r.reviewer.key,
            )
        )
        dispute = _dispute(item.id, labels, ai_score(item, dimension), scale, settings)
        if dispute is not None:
            found.append((-dispute.size, -len(labels), place, dispute))
    return [d for *_, d in sorted(found, key=lambda t: t[:3])]


def gold_of(
    ledger: "Ledger", run_id: str, item_id: str, dimension: str, scale: "Scale | None"
) -> Gold:
    """The gold label of one item from the folded log."""
    labels = [
        (j.judgment, j.score)
        for _, j in ledger.item_judgments(run_id, item_id, dimension)
        if isinstance(j, Rating)
    ]
    return gold_label(labels, scale, ledger.adjudications.get((run_id, item_id, dimension)))


__all__ = ["DERIVED", "Dispute", "Gold", "Source", "disputes", "gold_label", "gold_of"]
