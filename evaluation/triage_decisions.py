"""The humans' decisions on triage runs: a change's decision is the latest rating on the dimension
``change`` (:data:`DIMENSION`: ``accept`` or ``reject``), any reviewer's; each run's
(:func:`human_decisions`), and between two runs each path's output as a human last accepted it
(:func:`accepted_outputs`), which a new triage compares with instead of the baseline's
(:func:`against_accepted`). A change that comes back the same (its path and both outputs,
:func:`change_key`) is decided as a human last decided it (:func:`precedents`), and not asked
again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Iterator, Literal

from .changes import Change

if TYPE_CHECKING:
    from .records import ItemData, Rating
    from .reviews import Ledger
    from .runs import Run
    from .store import Store

DIMENSION = "change"
"""The dimension humans decide changes on (scale ``change``: accept or reject)."""


PRECEDENT = "precedent"
"""The rule that applies a human's earlier decision to the same change (``precedent: …``)."""


@dataclass(frozen=True)
class Precedent:
    """A human's decision on a change, which decides the same change when it comes back."""

    judgment: Literal["accept", "reject"]
    """What the human decided."""
    reviewer: str
    """Who: the reviewer's name, else their id."""
    decided_at: datetime
    """When (the rating's time)."""

    @property
    def outcome(self) -> Literal["accepted", "rejected"]:
        """The decision as a rule's outcome."""
        return "accepted" if self.judgment == "accept" else "rejected"

    @property
    def rule(self) -> str:
        """``precedent: rejected by alice on 2026-11-26 — same change``."""
        when = self.decided_at.date().isoformat()
        return f"{PRECEDENT}: {self.outcome} by {self.reviewer} on {when} — same change"


def change_key(path: str, expected: str | None, actual: str | None) -> str:
    """What makes two changes the same change: the path and both outputs (a hash of them)."""
    text = json.dumps([path, expected, actual])  # ASCII: a lone surrogate is escaped, not an error
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _item_key(item: "ItemData") -> str:
    path = item.features.get("path")
    path = path if isinstance(path, str) else item.id
    return change_key(path, item.query.expected_answer, item.answer)


def human_decisions(store: "Store", run: "Run") -> dict[str, str]:
    """Each change's current human decision (``accept`` / ``reject``) on the triage run: the latest
    rating, any reviewer."""
    from .reviews import Ledger

    latest = _latest(Ledger.from_events(store.human_events()), run.run_id)
    return {item_id: rating.judgment for item_id, rating in latest.items()}


def _decided_runs(store: "Store") -> Iterator[tuple["Run", dict[str, "Rating"]]]:
    """Every triage run a human decided a change of, with each item's latest human decision."""
    from .reviews import Ledger

    ledger = None
    for run_id in store.run_ids():
        header = store.run_header(run_id)
        if header is None or header.kind != "change":
            continue
        ledger = ledger or Ledger.from_events(store.human_events())
        latest = _latest(ledger, run_id)
        if latest:
            yield store.load_run(run_id), latest


def accepted_outputs(store: "Store") -> dict[str, str | None]:
    """For changes between runs: each path's output as a human last accepted it, over every triage
    run."""
    accepted: dict[str, tuple[datetime, str | None]] = {}
    for run, latest in _decided_runs(store):
        for item in run.items:
            rating = latest.get(item.id)
            if (
                item.features.get("source") == "runs"
                and rating is not None
                and rating.judgment == "accept"
            ):
                accepted[str(item.features.get("path"))] = (rating.timestamp, item.answer)
    return {path: output for path, (_, output) in sorted(accepted.items(), key=lambda kv: kv[1][0])}


def precedents(store: "Store") -> dict[str, Precedent]:
    """Each change a human accepted or rejected, by :func:`change_key`: the latest decision over
    every triage run."""
    found: dict[str, Precedent] = {}
    for run, latest in _decided_runs(store):
        for item in run.items:
            rating = latest.get(item.id)
            if rating is None or rating.judgment not in ("accept", "reject"):
                continue
            key = _item_key(item)
            if key not in found or found[key].decided_at <= rating.timestamp:
                judgment: Literal["accept", "reject"] = (
                    "accept" if rating.judgment == "accept" else "reject"
                )
                who = rating.reviewer.name or rating.reviewer.id
                found[key] = Precedent(judgment, who, rating.timestamp)
    return found


def against_accepted(changes: list[Change], accepted: dict[str, str | None]) -> list[Change]:
    """``changes`` with each accepted output as the expected one; a change that then disappears is
    dropped."""
    moved = []
    for change in changes:
        if change.path in accepted:
            change = change.model_copy(update={"expected": accepted[change.path]})
            if change.expected == change.actual:
                continue
            change.status = (
                "added"
                if change.expected is None
                else "removed"
                if change.actual is None
                else "changed"
            )
        moved.append(change)
    return moved


def _latest(ledger: "Ledger", run_id: str) -> dict[str, "Rating"]:
    """Each item's latest human decision on a triage run (its rating on :data:`DIMENSION`)."""
    decided: dict[str, Rating] = {}
    for rating in sorted(ledger.ratings(run_id, DIMENSION), key=lambda r: r.timestamp):
        decided[rating.item_id] = rating
    return decided


__all__ = [
    "DIMENSION",
    "PRECEDENT",
    "Precedent",
    "accepted_outputs",
    "against_accepted",
    "change_key",
    "human_decisions",
    "precedents",
]
