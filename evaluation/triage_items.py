"""A triage run's items read back as the changes they hold: each item checked as only a triage
writes it (a relative path inside its tree, both trees' roots, a status that fits its outputs),
else refused as a :class:`evaluation.triage.TriageError` naming the run file and the item's line
(:func:`change_of`, :func:`run_changes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import snapshots
from .changes import Change
from .records import ItemData, QueryEvaluation
from .text import visible
from .triage import TriageError

if TYPE_CHECKING:
    from .runs import Run
    from .store import Store

TRIAGE_AGAIN = "triage the trees again (hilbot triage EXPECTED ACTUAL) and apply that run"
"""The fix for a triage run, or a change of it, that cannot be applied."""
_STATUSES = ("changed", "added", "removed")
_SOURCES = ("runs", "snapshots", "file")
_CRAFTED = "this run was not written by hilbot triage, or was edited since: " + TRIAGE_AGAIN


def change_of(item: ItemData) -> Change:
    """The change a triage run's item holds; a field no triage writes is a :class:`TriageError`.

    A snapshot change must name a relative path inside its tree (see
    :func:`evaluation.snapshots.parts`) and both trees' roots (absolute, normalised), and its
    status must fit the outputs it holds. An older hilbot's item (absolute ``expected_file`` and
    ``actual_file``) is read without its trees: it can be reviewed, and ``--apply`` refuses it.
    """
    f = item.features
    status = _choice(item, "status", _STATUSES, _status_of(item))
    source = _choice(item, "source", _SOURCES, "file")
    path = f.get("path", None if source == "snapshots" else item.id)
    if not isinstance(path, str):
        kind = type(path).__name__
        raise _bad(item, "it names no path" if path is None else f"its path is {kind}, not text")
    roots = _roots(item, path) if source == "snapshots" else (None, None)
    if source == "snapshots" and status != _status_of(item):
        raise _bad(item, f"its status {status!r} does not fit its outputs ({_status_of(item)})")
    return Change(
        id=item.id,
        name=item.query.query,
        description=item.query.intent,
        path=path,
        status=status,
        expected=item.query.expected_answer,
        actual=item.answer,
        source=source,
        expected_root=roots[0],
        actual_root=roots[1],
    )


def _bad(item: ItemData, what: str) -> TriageError:
    return TriageError(f"change {visible(item.id, newlines=False)[:80]!r}: {what}", fix=_CRAFTED)


def _status_of(item: ItemData) -> str:
    """The status the item's outputs make: both given, only the actual, only the expected."""
    expected, actual = item.query.expected_answer, item.answer
    if expected is not None and actual is not None:
        return "changed"
    return "added" if actual is not None else "removed"


def _choice(item: ItemData, name: str, allowed: tuple[str, ...], default: str) -> Any:
    value = item.features.get(name, default)
    if not isinstance(value, str) or value not in allowed:
        shown = repr(value[:40]) if isinstance(value, str) else f"(a {type(value).__name__})"
        raise _bad(item, f"its {name} {shown} is none of {', '.join(allowed)}")
    return value


def _roots(item: ItemData, path: str) -> tuple[str | None, str | None]:
    """A snapshot item's tree roots, checked with its path; (None, None) for an older hilbot's."""
    f = item.features
    if "expected_root" not in f and "actual_root" not in f and "expected_file" in f:
        return None, None
    try:
        snapshots.parts(path)
        expected = snapshots.check_root(f.get("expected_root"))
        return expected, snapshots.check_root(f.get("actual_root"))
    except ValueError as exc:
        raise _bad(item, str(exc)) from None


def run_changes(store: "Store", run: "Run") -> dict[str, Change]:
    """Every item of a triage run as its change, by id.

    An item no triage writes, or snapshot changes naming different trees, is a
    :class:`TriageError` naming the run file and the item's line.
    """
    changes: dict[str, Change] = {}
    trees: tuple[str | None, str | None] | None = None
    for item in run.items:
        try:
            change = changes[item.id] = change_of(item)
            if change.source == "snapshots" and change.expected_root:
                trees = trees or (change.expected_root, change.actual_root)
                if (change.expected_root, change.actual_root) != trees:
                    raise _bad(item, f"it names other trees than the run's first ({trees[0]})")
        except TriageError as exc:
            at = _line_of(store, run.run_id, item.id)
            raise TriageError(exc.what, where=at, fix=exc.fix) from None
    return changes


def _line_of(store: "Store", run_id: str, item_id: str) -> str:
    """``<run file>:<line>`` of the item's last record in its run file (the version in the run)."""
    from .log import read_numbered

    path = store.run_path(run_id)
    lines = [
        n
        for n, record in read_numbered(path, [])
        if isinstance(record, QueryEvaluation) and record.data.id == item_id
    ]
    return f"{path}:{lines[-1]}" if lines else str(path)


__all__ = ["TRIAGE_AGAIN", "change_of", "run_changes"]
