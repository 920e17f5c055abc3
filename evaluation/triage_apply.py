"""Applying a triage: each snapshot change accepted (by a human, or by a rule) written over its
expected file, atomically, as ``booktest -u`` and ``cargo insta accept`` do; a rejected one is
left as it is. Every file is reached from the tree root the triage recorded plus the change's
relative path, one component at a time and never through a link (:mod:`evaluation.snapshots`),
and never inside the data directory (:func:`data_guard`, :func:`guarded_tree`). A run whose
items hold a field no triage writes is refused whole
(:func:`evaluation.triage_items.run_changes`); an accepted change whose files moved on since the
triage is refused alone, saying which and why. The new expected file keeps the old one's
permission bits (accepting reviews the text, and the diff shows no mode); an added file takes
the actual file's.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from . import snapshots
from .changes import MAX_FILE_BYTES, Change
from .log import os_reason
from .triage_decisions import human_decisions
from .triage_items import TRIAGE_AGAIN, run_changes

if TYPE_CHECKING:
    from .store import Store
    from .triage_run import TriageOutcome


@dataclass
class Applied:
    """What :func:`apply_accepted` did."""

    written: list[str] = field(default_factory=list)
    """Expected files replaced by their actual ones (or deleted, for a removal)."""
    unchanged: list[str] = field(default_factory=list)
    """Accepted changes already in place (applied before): nothing to do, and no failure."""
    refused: list[str] = field(default_factory=list)
    """Accepted changes not applied, each as ``path — why``."""


def data_guard(store: "Store") -> dict[snapshots.Identity, str]:
    """The data directory, which no snapshot write or delete may enter."""
    found = snapshots.identity(store.root)
    return {found: "hilbot's data directory"} if found else {}


def guarded_tree(
    root: str, other: str | None, guard: dict[snapshots.Identity, str]
) -> snapshots.Tree:
    """The tree at ``root``, guarded from the data directory and from the other tree inside it."""
    found = snapshots.identity(other) if other else None
    return snapshots.Tree(root, guard, {found: "the other tree"} if found else {})


def apply_accepted(store: "Store", run_id: str, decided: dict[str, str] | None = None) -> Applied:
    """Write each snapshot change humans accepted on the triage run (see :func:`apply_changes`).

    ``decided`` is :func:`human_decisions` of the run, when the caller has it. Every item of the
    run is read first (:func:`run_changes`): a run with an item no triage writes is refused whole.
    """
    run = store.load_run(run_id)
    decided = human_decisions(store, run) if decided is None else decided
    changes = run_changes(store, run)
    accepted = [changes[item.id] for item in run.items if decided.get(item.id) == "accept"]
    return apply_changes(store, accepted)


def apply_rule_accepted(store: "Store", outcome: TriageOutcome) -> Applied:
    """Write each snapshot change a rule accepted (and no human has rejected yet) over its expected
    file."""
    return apply_changes(
        store, [t.change for t in outcome.changes if t.decision.outcome == "accepted"]
    )


def apply_changes(store: "Store", changes: Sequence[Change]) -> Applied:
    """Each snapshot change's actual file written over its expected one, atomically; an accepted
    removal deletes it.

    A change is applied only while its actual file still holds what was triaged and its expected
    file still holds the old output (or is absent, for an added file): anything else changed
    since, and is refused, saying so; one already applied is counted as such. Both files are
    reached from their tree's recorded root with no link followed, never inside the data
    directory (:mod:`evaluation.snapshots`). Changes from runs or files have no files to update
    and are passed over.
    """
    applied = Applied()
    guard = data_guard(store)
    for change in changes:
        if change.source != "snapshots":
            continue
        try:
            done = _apply_one(change, guard)
        except snapshots.SnapshotError as exc:
            applied.refused.append(f"{change.path} — {exc.one_line()}")
            continue
        except OSError as exc:
            applied.refused.append(f"{change.path} — {os_reason(exc)} — {TRIAGE_AGAIN}")
            continue
        (applied.written if done else applied.unchanged).append(change.path)
    return applied


def _stale(what: str) -> snapshots.SnapshotError:
    return snapshots.SnapshotError(f"{what} since the triage", fix=TRIAGE_AGAIN)


def _apply_one(change: Change, guard: dict[snapshots.Identity, str]) -> bool:
    """Apply one accepted snapshot change; whether it wrote anything (False: already in place)."""
    if not change.expected_root or not change.actual_root:
        raise snapshots.SnapshotError(
            "the run records an absolute path for it (an older hilbot "
            "wrote it), which --apply does not trust",
            fix=TRIAGE_AGAIN,
        )
    try:
        names = snapshots.parts(change.path)
    except ValueError as exc:
        raise snapshots.SnapshotError(str(exc), fix=TRIAGE_AGAIN) from None
    new = _actual_now(change, guarded_tree(change.actual_root, change.expected_root, guard))
    expected = guarded_tree(change.expected_root, change.actual_root, guard)
    try:
        with snapshots.directory(expected, names[:-1], create=change.status == "added") as fd:
            return _replace(fd, names[-1], expected.path(change.path), change, new)
    except FileNotFoundError:
        if change.actual is None:
            return False  # removed, directory and all
        raise _stale("the expected file's directory is gone") from None


Found = tuple[bytes, os.stat_result]
"""A file's bytes and status."""


def _actual_now(change: Change, actual: snapshots.Tree) -> Found | None:
    """The actual file now, while it still holds what was triaged; else a refusal."""
    found = snapshots.read_file(actual, change.path, MAX_FILE_BYTES, links_inside=True)
    text = None if found is None else found[0].decode("utf-8", errors="replace")
    if text != change.actual:
        raise _stale("the actual file " + ("appeared" if change.actual is None else "changed"))
    return found


def _replace(fd: int, name: str, shown: str, change: Change, new: Found | None) -> bool:
    """The expected file ``name`` in the directory ``fd`` replaced by ``new`` (deleted when None).

    False when it is so already. The new file keeps the old one's permission bits; an added one
    takes the actual file's.
    """
    found = snapshots.read_at(fd, name, shown, MAX_FILE_BYTES)
    old = None if found is None else found[0].decode("utf-8", errors="replace")
    if old == change.actual:
        return False
    if old != change.expected:
        raise _stale("the expected file " + ("appeared" if change.expected is None else "changed"))
    if new is None:
        snapshots.remove_at(fd, name, shown)
        return True
    mode = stat.S_IMODE((found or new)[1].st_mode) & 0o777
    snapshots.move_into_place(fd, snapshots.write_aside(fd, name, new[0], mode, shown), name, shown)
    return True


__all__ = [
    "Applied",
    "apply_accepted",
    "apply_changes",
    "apply_rule_accepted",
    "data_guard",
    "guarded_tree",
]
