"""The run listing: id, set, size, AI overall, reviewed or not, and whether the run is
incomplete."""

from __future__ import annotations

from evaluation import Ledger, LogError, LogIssue, Run, Store
from evaluation.text import visible


def run_listing(store: Store, issues: list[LogIssue] | None = None) -> str:
    """``Recent test runs:`` then one line per run, newest first (set names made visible)."""
    ids = store.run_ids()
    if not ids:
        return f"No runs in {store.root}/runs yet — try `hilbot demo` or `hilbot import FILE`."
    reviewed = Ledger.from_events(store.human_events(issues)).reviewed_runs()
    runs, unreadable = [], []
    for run_id in ids:
        try:
            runs.append(store.load_run(run_id, issues))
        except LogError as exc:  # one bad entry in runs/ does not hide the others
            unreadable.append((run_id, exc.what))
    id_width = max([len(r.run_id) for r in runs] + [len(i) for i, _ in unreadable])
    set_width = max([len(r.header.set) for r in runs], default=0)
    lines = ["Recent test runs:"]
    for run in runs:
        overall = f"overall={run.overall:.2f}" if run.overall is not None else "overall=n/a"
        status = "(reviewed)" if run.run_id in reviewed else "(no HIL review)"
        marker = "" if run.complete else f"  {incomplete_marker(run)}"
        noun = "changes" if run.header.kind == "change" else "queries"
        lines.append(
            f"  {run.run_id:<{id_width}}  {run.header.set:<{set_width}}  {len(run.items):>3} "
            f"{noun}  {overall}  {status}{marker}"
        )
    lines += [f"  {run_id:<{id_width}}  ({why})" for run_id, why in unreadable]
    return visible("\n".join(lines))


def incomplete_marker(run: Run) -> str:
    """``(incomplete: no summary, 11 of 15 queries)``: the run was cut short or is still being
    evaluated."""
    expected = run.header.item_count
    size = f", {len(run.items)} of {expected} queries" if expected is not None else ""
    return f"(incomplete: no summary{size})"
