"""The humans' decisions on triage runs: a change's decision is the latest rating on the dimension
``change`` (:data:`DIMENSION`: ``accept`` or ``reject``), any reviewer's; each run's
(:func:`human_decisions`), and between two runs each path's output as a human last accepted it
(:func:`accepted_outputs`), which a new triage compares with instead of the baseline's
(:func:`against_accepted`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .changes import Change

if TYPE_CHECKING:
    from .runs import Run
    from .store import Store

DIMENSION = "change"
"""The dimension humans decide changes on (scale ``change``: accept or reject)."""


def human_decisions(store: "Store", run: "Run") -> dict[str, str]:
    """Each change's current human decision (``accept`` / ``reject``) on the triage run: the latest
    rating, any reviewer."""
    from .reviews import Ledger

    return {
        item_id: judgment
        for item_id, (_, judgment) in _latest(
            Ledger.from_events(store.human_events()), run.run_id
        ).items()
    }


def accepted_outputs(store: "Store") -> dict[str, str | None]:
    """For changes between runs: each path's output as a human last accepted it, over every triage
    run."""
    from .reviews import Ledger

    ledger, accepted = None, {}
    for run_id in store.run_ids():
        header = store.run_header(run_id)
        if header is None or header.kind != "change":
            continue
        ledger = ledger or Ledger.from_events(store.human_events())
        run = store.load_run(run_id)
        decided = _latest(ledger, run.run_id)
        for item in run.items:
            if (
                item.features.get("source") == "runs"
                and decided.get(item.id, ("", ""))[1] == "accept"
            ):
                accepted[str(item.features.get("path"))] = (decided[item.id][0], item.answer)
    return {path: output for path, (_, output) in sorted(accepted.items(), key=lambda kv: kv[1][0])}


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


def _latest(ledger: Any, run_id: str) -> dict[str, tuple[Any, str]]:
    """Each item's latest human decision on a triage run: (when, accept|reject)."""
    decided: dict[str, tuple[Any, str]] = {}
    for rating in sorted(ledger.ratings(run_id, DIMENSION), key=lambda r: r.timestamp):
        decided[rating.item_id] = (rating.timestamp, rating.judgment)
    return decided


__all__ = ["DIMENSION", "accepted_outputs", "against_accepted", "human_decisions"]
