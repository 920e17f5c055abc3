"""Seed 000 §3's run listing: id, set, size, AI overall, reviewed or not."""

from __future__ import annotations

from evaluation import Ledger, LogIssue, Store


def run_listing(store: Store, issues: list[LogIssue] | None = None) -> str:
    """``Recent test runs:`` then one line per run, newest first."""
    ids = store.run_ids()
    if not ids:
        return f"No runs in {store.root}/runs yet — try `hilbot demo` or `hilbot import FILE`."
    reviewed = Ledger.from_events(store.human_events(issues)).reviewed_runs()
    runs = [store.load_run(run_id, issues) for run_id in ids]
    id_width = max(len(r.run_id) for r in runs)
    set_width = max(len(r.header.set) for r in runs)
    lines = ["Recent test runs:"]
    for run in runs:
        overall = f"overall={run.overall:.2f}" if run.overall is not None else "overall=n/a"
        status = "(reviewed)" if run.run_id in reviewed else "(no HIL review)"
        lines.append(f"  {run.run_id:<{id_width}}  {run.header.set:<{set_width}}  {len(run.items):>3} queries  {overall}  {status}")
    return "\n".join(lines)
