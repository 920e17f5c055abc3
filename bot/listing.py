"""The run listing: id, set, size, AI overall, how far its review is (``rated 12/18 · complete
6/18 (k=2)``), and whether the run is incomplete."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from evaluation import Ledger, LogError, LogIssue, Run, Store
from evaluation.text import visible

from .progress import RatingCounter, item_noun, rated_dimensions, runs_progress

if TYPE_CHECKING:
    from analysis.index.runs import RunFacts


def run_listing(store: Store, issues: list[LogIssue] | None = None, k: int = 1) -> str:
    """``Recent test runs:`` then one line per run, newest first (set names made visible); ``k``:
    the ratings an item needs (``[review] k``)."""
    ids = store.run_ids()
    if not ids:
        return f"No runs in {store.root}/runs yet — try `hilbot demo` or `hilbot import FILE`."
    tallies, rated = _tallies(store, issues)
    runs: list[Run | RunFacts] = []
    unreadable = []
    read = _run_reader(store)
    for run_id in ids:
        try:
            runs.append(read(store, run_id, issues))
        except LogError as exc:  # one bad entry in runs/ does not hide the others
            unreadable.append((run_id, exc.what))
    id_width = max([len(r.run_id) for r in runs] + [len(i) for i, _ in unreadable])
    set_width = max([len(r.header.set) for r in runs], default=0)
    lines = ["Recent test runs:"]
    for run in runs:
        overall = f"overall={run.overall:.2f}" if run.overall is not None else "overall=n/a"
        status = runs_progress(tallies, run, k, rated.get(run.run_id, set()))
        marker = "" if run.complete else f"  {incomplete_marker(run)}"
        lines.append(
            f"  {run.run_id:<{id_width}}  {run.header.set:<{set_width}}  {len(run.item_ids):>3} "
            f"{item_noun(run.header.kind)}  {overall}  {status}{marker}"
        )
    lines += [f"  {run_id:<{id_width}}  ({why})" for run_id, why in unreadable]
    return visible("\n".join(lines))


def _run_reader(store: Store) -> Callable[[Store, str, list[LogIssue] | None], "Run | RunFacts"]:
    """How the listing reads a run: its facts kept beside the index (read again when the file
    changed), or (``HILBOT_NO_INDEX=1``) the whole run file."""
    from analysis.index import enabled

    if enabled(store.ratings.path):
        from analysis.index.runs import run_facts

        return run_facts
    return lambda store, run_id, issues: store.load_run(run_id, issues)


def _tallies(
    store: Store, issues: list[LogIssue] | None
) -> tuple[RatingCounter, dict[str, set[str]]]:
    """Current ratings per item, and the dimensions each run has ratings in: from the log's
    columnar index, or (``HILBOT_NO_INDEX=1``) by folding every event through the ledger."""
    from analysis.index import enabled

    if enabled(store.ratings.path):
        from analysis.tallies import rating_tallies

        tallies = rating_tallies(store.ratings.path, issues)
        return tallies, tallies.rated_dimensions()
    ledger = Ledger.from_events(store.human_events(issues))
    return ledger, rated_dimensions(ledger)


def incomplete_marker(run: "Run | RunFacts") -> str:
    """``(incomplete: no summary, 11 of 15 queries)``: the run was cut short or is still being
    evaluated."""
    expected = run.header.item_count
    noun = item_noun(run.header.kind)
    size = f", {len(run.item_ids)} of {expected} {noun}" if expected is not None else ""
    return f"(incomplete: no summary{size})"
