"""Changes between two runs (:func:`changes_between_runs`): items matched by id; an item's output
is :func:`item_output` — the answer for answer and scenario runs, one ``1. /docs/x.md — Title``
line per result for search runs. Scores and snippets are left out: a search result that moved in
score but not in rank, or whose snippet was re-cut, shows the reader the same list. A tool capture
is not output either (scenario runs compare their answers). ``path`` is ``<set>/<item id>``, the
set from the current run (the baseline's for removed items).
"""

from __future__ import annotations

from ..records import ItemData
from ..runs import Run
from ..store import Store
from .model import Change, ChangeError, change_status, sorted_changes


def item_output(item: ItemData, kind: str) -> str:
    """An item's output as text: the answer, or for a search run one ``rank. path — title`` line per
    result.

    An item the system under test failed on ends with an ``error: …`` line.
    """
    if kind == "search":
        lines = [
            f"{r.rank if r.rank is not None else n}. {r.path or '(no path)'}"
            + (f" — {r.title}" if r.title else "")
            for n, r in enumerate(item.results, 1)
        ]
    else:
        lines = [item.answer] if item.answer is not None else []
    if item.error:
        lines.append(f"error: {item.error}")
    return "\n".join(lines)


def _run_change(
    old_run: Run, new_run: Run, old: ItemData | None, new: ItemData | None
) -> Change | None:
    expected = item_output(old, old_run.header.kind) if old is not None else None
    actual = item_output(new, new_run.header.kind) if new is not None else None
    shown, run = (new, new_run) if new is not None else (old, old_run)
    if expected == actual or shown is None:
        return None
    return Change(
        id=shown.id,
        name=shown.query.query,
        description=shown.query.intent,
        path=f"{run.header.set}/{shown.id}",
        status=change_status(expected, actual),
        expected=expected,
        actual=actual,
        source="runs",
    )


def changes_between_runs(store: Store, baseline: str, current: str) -> list[Change]:
    """The items whose output differs from run ``baseline`` to run ``current`` (an unknown id is
    :class:`RunNotFound`)."""
    if baseline == current:
        raise ChangeError(
            f"the baseline and the current run are the same run ({baseline!r})",
            where="runs",
            fix="give the earlier run first and the later one second (see `hilbot review --list`)",
        )
    old_run, new_run = store.load_run(baseline), store.load_run(current)
    old = {item.id: item for item in old_run.items}
    new = {item.id: item for item in new_run.items}
    return sorted_changes(
        _run_change(old_run, new_run, old.get(i), new.get(i)) for i in old.keys() | new.keys()
    )
