"""A triage from start to end: find the changes, triage them, decide, record, report, apply what was
accepted.

:func:`run_triage` writes, through the store:

* a run of kind ``change`` holding the changes humans decide (those the policy sent to them and the
  audit sample), so ``hilbot review RUN`` and the Telegram and Slack bots deal them like any other
  item: a human's decision is a rating on the dimension ``change`` (``accept`` or ``reject``);
* one ``triage_decision`` record per change in the log: accepted or rejected by a rule, or sent to
  humans;
* for snapshot trees, a record beside each changed actual file with its triage, named after the
  file's whole name (``x.md`` → ``x.md.ai.json``) and marked as hilbot's; a file of that name that
  is not such a record (a user's own) is left alone, with a warning.

The records are written aside first (:func:`evaluation.snapshots.stage`): a full disk,
``ulimit -f`` or an unwritable directory stops the triage before the run or a decision is
recorded. A snapshot too large to review is left out with a warning naming ``--exclude``, and
the rest are triaged.

:func:`apply_accepted` then writes each accepted snapshot change's actual file over its expected one
(atomically), as ``booktest -u`` and ``cargo insta accept`` do; a rejected one is left as it is.
Every file is reached from the tree root the triage recorded plus the change's relative path, one
component at a time and never through a link (:mod:`evaluation.snapshots`), and never inside the
data directory. A run whose items hold a field no triage writes (a path leaving its tree, a bad
status, trees differing between items) is refused whole, naming its file and line; an accepted
change whose files moved on since the triage is refused alone, saying which and why (exit 1).
The new expected file keeps the old one's permission bits (accepting reviews the text, and the
diff shows no mode); an added file takes the actual file's.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from . import snapshots
from .changes import MAX_FILE_BYTES, Change, Tolerance, find_changes, marked_diff
from .log import os_reason
from .records import (
    Evaluation,
    ItemData,
    JudgeInfo,
    Query,
    QueryEvaluation,
    RunHeader,
    RunSummary,
    TriageDecision,
)
from .scrub import scrub
from .text import visible
from .triage import (
    CATEGORIES,
    Decision,
    Triage,
    TriageError,
    decide,
    tolerance,
    triage_all,
    triage_judge,
)

if TYPE_CHECKING:
    from .config import HilbotConfig
    from .runs import Run
    from .store import Store

DIMENSION = "change"
"""The dimension humans decide changes on (scale ``change``: accept or reject)."""


@dataclass
class Triaged:
    """One change, its triage and the policy's decision."""

    change: Change
    triage: Triage
    decision: Decision


@dataclass
class TriageOutcome:
    """What a triage found and decided."""

    run_id: str
    """The run holding the changes for humans."""
    judge: str
    """Who triaged: ``local`` or the LLM's ``provider/model``."""
    changes: list[Triaged] = field(default_factory=list)
    """Every change, in path order."""
    ai_files: list[Path] = field(default_factory=list)
    """The ``.ai.json`` files written."""
    tolerance: Tolerance = field(default_factory=Tolerance)
    """The numeric tolerance diffs are marked with."""
    warnings: list[str] = field(default_factory=list)
    """Snapshots left out (too large) and records not written (a user's file had the name)."""
    left_out: int = 0
    """Changed snapshots left out because they were too large: nobody decided them, so CI fails."""

    def counts(self) -> Counter[str]:
        """Changes per category name."""
        return Counter(t.triage.label for t in self.changes)

    def waiting(self) -> list[Triaged]:
        """Changes sent to humans (not those only in the audit sample: a rule decided them)."""
        return [t for t in self.changes if t.decision.outcome == "human"]

    def rejected(self) -> list[Triaged]:
        """Changes a rule rejected."""
        return [t for t in self.changes if t.decision.outcome == "rejected"]


def run_triage(
    store: "Store",
    config: "HilbotConfig",
    sources: Sequence[str],
    *,
    judge: str | None = None,
    exclude: Sequence[str] = (),
) -> TriageOutcome:
    """Find the changes of ``sources``, triage each with ``judge`` (default ``[triage] judge``),
    decide, and record it all.

    Between two runs, an item whose output a human accepted in an earlier triage is compared with
    that accepted output, not with the baseline run's: accepting made it the item's new baseline.
    ``exclude`` adds glob patterns to ``[triage] exclude``.
    """
    skipped: list[str] = []
    patterns = [*config.triage.exclude, *exclude]
    changes = find_changes(store, sources, exclude=patterns, skipped=skipped)
    if changes and changes[0].source == "runs":
        changes = against_accepted(changes, accepted_outputs(store))
    triager = triage_judge(judge or config.triage.judge, config, store)
    if not changes:  # nothing to triage: no run, no records
        return TriageOutcome("", triager.name, warnings=skipped, left_out=len(skipped))
    triages = asyncio.run(triage_all(triager, changes, close=True))
    run_id = store.new_run_id()
    triaged = [Triaged(c, t, decide(c, t, config.triage, run_id)) for c, t in zip(changes, triages)]
    label = triages[0].judge if triages else triager.name
    staged, left = _stage_records(store, triaged)  # written aside before anything is recorded
    judge_info = JudgeInfo(name=label, registry_name=triager.name, kind=triager.kind)
    try:
        run_id = _create_run(store, config, run_id, triaged, judge_info)
        store.ratings.append_many(_decision(run_id, t) for t in triaged)
    except BaseException:
        _discard(staged)
        raise
    outcome = TriageOutcome(
        run_id,
        label,
        triaged,
        tolerance=tolerance(config.triage),
        warnings=skipped + left,
        left_out=len(skipped),
    )
    for record in staged:
        why = snapshots.commit(record)
        outcome.warnings += [why] if why else []
        outcome.ai_files += [] if why else [Path(record.tree.path(record.rel))]
    return outcome


def _create_run(
    store: "Store", config: "HilbotConfig", run_id: str, triaged: list[Triaged], judge: JudgeInfo
) -> str:
    """The run of the changes humans decide; its id (moved on when taken)."""
    tol = tolerance(config.triage)
    items = [_item(t, marked_diff(t.change, tol)) for t in triaged if t.decision.to_humans]
    header = RunHeader(
        run_id=run_id,
        set="triage",
        kind="change",
        source="hilbot triage",
        judge=judge,
        dimensions=[DIMENSION],
        item_count=len(items),
    )
    placed = store.create_run(
        header,
        (QueryEvaluation(run_id=run_id, data=i) for i in items),
        RunSummary(run_id=run_id, item_count=len(items)),
        generated=True,
    )
    return placed.stem


def _item(t: Triaged, diff: str) -> ItemData:
    """A change as a run item: the name as the query, both outputs, the triage as the evaluation,
    the rest as features."""
    change, triage = t.change, t.triage
    evaluation = Evaluation(
        scores={DIMENSION: (triage.category - 1) / 4},
        verdict=triage.label,
        confidence=triage.confidence,
        rationale=triage.rationale,
        judge=triage.judge,
        error=triage.error,
        cost_usd=triage.cost_usd,
    )
    features = {
        "path": change.path,
        "status": change.status,
        "source": change.source,
        "diff": diff,
        "audit": t.decision.audit,
        "rule": t.decision.rule,
        "summary": triage.summary,
        "issues": triage.issues,
        "suggestions": triage.suggestions,
        "flags_for_human": triage.flags_for_human,
        "expected_root": change.expected_root,
        "actual_root": change.actual_root,
    }
    return ItemData(
        id=change.id,
        query=Query(query=change.name, intent=change.description, expected_answer=change.expected),
        answer=change.actual,
        evaluation=evaluation,
        features=features,
    )


def _decision(run_id: str, t: Triaged) -> TriageDecision:
    return TriageDecision(
        run_id=run_id,
        change_id=t.change.id,
        path=t.change.path,
        outcome=t.decision.outcome,
        rule=t.decision.rule,
        audit=t.decision.audit,
        category=t.triage.category,
        confidence=t.triage.confidence,
        judge=t.triage.judge,
        judge_kind=t.triage.judge_kind,
    )


def _record(t: Triaged) -> bytes:
    """A change's ``.ai.json`` record: the triage and the decision, marked as hilbot's."""
    record = {
        **snapshots.RECORD_MARK,
        "path": t.change.path,
        "status": t.change.status,
        "category": t.triage.category,
        "category_name": t.triage.label,
        **t.triage.model_dump(exclude={"category"}),
        "decision": t.decision.outcome,
        "rule": t.decision.rule,
        "audit": t.decision.audit,
    }
    text = scrub(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return text.encode("utf-8", "replace")


def _guard(store: "Store") -> dict[snapshots.Identity, str]:
    """The data directory, which no snapshot write or delete may enter."""
    found = snapshots.identity(store.root)
    return {found: "hilbot's data directory"} if found else {}


def _tree(root: str, other: str | None, guard: dict[snapshots.Identity, str]) -> snapshots.Tree:
    """The tree at ``root``, guarded from the data directory and from the other tree inside it."""
    found = snapshots.identity(other) if other else None
    return snapshots.Tree(root, guard, {found: "the other tree"} if found else {})


def _stage_records(
    store: "Store", triaged: list[Triaged]
) -> tuple[list[snapshots.Staged], list[str]]:
    """Each snapshot change's record written aside beside its actual file, and why any was not.

    A write that fails (a full disk, ``ulimit -f``, an unwritable directory) is a
    :class:`evaluation.snapshots.WriteFailed`, with nothing left aside.
    """
    staged: list[snapshots.Staged] = []
    left: list[str] = []
    guard = _guard(store)
    try:
        for t in triaged:
            change = t.change
            if change.source != "snapshots" or change.status == "removed" or not change.actual_root:
                continue
            tree = _tree(change.actual_root, change.expected_root, guard)
            found = snapshots.stage(tree, snapshots.record_name(change.path), _record(t))
            staged += [found] if isinstance(found, snapshots.Staged) else []
            left += [found] if isinstance(found, str) else []
    except BaseException:
        _discard(staged)
        raise
    return staged, left


def _discard(staged: list[snapshots.Staged]) -> None:
    for record in staged:
        snapshots.discard(record)


# ------------------------------------------------------------------------------------------ reports


def report_lines(
    outcome: TriageOutcome, *, mode: str = "compact", only_failed: bool = False, diff: bool = True
) -> list[str]:
    """The triage as text: ``path - CATEGORY (summary)`` per change (``compact``), the whole
    analysis (``verbose``), or one line per category (``silent``); then what was decided and where
    the rest waits."""
    if mode == "silent":
        counts = outcome.counts()
        return [f"{name}: {counts[name]}" for name in CATEGORIES.values()] + [_footer(outcome)]
    shown = [t for t in outcome.changes if not only_failed or t.decision.outcome != "accepted"]
    lines: list[str] = []
    for t in shown:
        lines += _verbose(t, diff, outcome.tolerance) if mode == "verbose" else [_compact(t)]
    return lines + ([""] if lines else []) + [_footer(outcome)]


def _compact(t: Triaged) -> str:
    from .text import visible

    return visible(
        f"{t.change.path} - {t.triage.label} ({t.triage.summary}) → {_decided(t.decision)}",
        newlines=False,
    )


def _decided(decision: Decision) -> str:
    text = {"accepted": "accepted by rule", "rejected": "rejected by rule", "human": "to a human"}[
        decision.outcome
    ]
    return text + (" (audit: a human checks it too)" if decision.audit else "")


def triage_text(triage: Triage) -> str:
    """A triage in full: category, confidence, who, summary, rationale, issues, suggestions."""
    return "\n".join(_analysis(triage))


def _analysis(triage: Triage) -> list[str]:
    lines = [
        f"AI review (confidence: {triage.confidence:.2f}, by {triage.judge}):",
        f"  Category: {triage.label}",
        f"  Summary: {triage.summary}",
        "",
        "  Rationale:",
        *_indented(triage.rationale),
    ]
    if triage.error:
        lines += ["", f"  Error: {triage.error}"]
    for title, entries in (("Issues", triage.issues), ("Suggestions", triage.suggestions)):
        if entries:
            lines += ["", f"  {title}:", *[f"  - {entry}" for entry in entries]]
    return lines


def _verbose(t: Triaged, diff: bool, tol: Tolerance) -> list[str]:
    from .text import visible

    lines = [f"{t.change.path} - {t.triage.label}", "", *_analysis(t.triage)]
    lines += ["", f"  Decision: {_decided(t.decision)} — {t.decision.rule}"]
    if diff and t.change.expected != t.change.actual:
        lines += ["", *marked_diff(t.change, tol).splitlines()]
    return [visible(line, newlines=False) for line in lines] + [""]


def _indented(text: str) -> list[str]:
    return [f"  {line}" for line in (text or "(none)").splitlines()]


def _footer(outcome: TriageOutcome) -> str:
    decided = Counter(t.decision.outcome for t in outcome.changes)
    audit = sum(t.decision.audit for t in outcome.changes)
    text = (
        f"{len(outcome.changes)} changes: {decided['accepted']} accepted and {decided['rejected']} "
        f"rejected by rules, {decided['human']} for humans"
        + (f", {audit} more in the audit sample" if audit else "")
        + f"; triaged by {outcome.judge}"
    )
    return text + (
        f"; review them: hilbot review {outcome.run_id}" if decided["human"] or audit else ""
    )


def decided_lines(outcome: TriageOutcome, decisions: dict[str, str]) -> list[str]:
    """Each change after the humans' review: ``path - ACCEPTED (AI: CATEGORY: summary)`` (the rule's
    decision where no human's)."""
    from .text import visible

    lines = []
    for t in outcome.changes:
        human = decisions.get(t.change.id)
        verdict = (
            f"{human.upper()}ED by a human"
            if human
            else (
                "waiting for a human"
                if t.decision.outcome == "human"
                else f"{t.decision.outcome.upper()} by rule"
            )
        )
        lines.append(
            visible(
                f"{t.change.path} - {verdict} (AI: {t.triage.label}: {t.triage.summary})",
                newlines=False,
            )
        )
    return lines


def failed(outcome: TriageOutcome, decisions: dict[str, str] | None = None) -> bool:
    """Whether CI should fail: a change rejected (by a rule or a human), still waiting for a human,
    or left out as too large (nobody decided it; ``--exclude`` it to pass).

    ``decisions`` are the humans' (change id → ``accept``/``reject``); a human's decision replaces a
    rule's.
    """
    if outcome.left_out:
        return True
    decisions = decisions or {}
    for t in outcome.changes:
        human = decisions.get(t.change.id)
        if human == "reject" or (human is None and t.decision.outcome in ("rejected", "human")):
            return True
    return False


# -------------------------------------------------------------------------------- humans' decisions


@dataclass
class Applied:
    """What :func:`apply_accepted` did."""

    written: list[str] = field(default_factory=list)
    """Expected files replaced by their actual ones (or deleted, for a removal)."""
    unchanged: list[str] = field(default_factory=list)
    """Accepted changes already in place (applied before): nothing to do, and no failure."""
    refused: list[str] = field(default_factory=list)
    """Accepted changes not applied, each as ``path — why``."""


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
    guard = _guard(store)
    for change in changes:
        if change.source != "snapshots":
            continue
        try:
            done = _apply_one(change, guard)
        except snapshots.SnapshotError as exc:
            applied.refused.append(f"{change.path} — {exc.one_line()}")
            continue
        except OSError as exc:
            applied.refused.append(f"{change.path} — {os_reason(exc)} — {_AGAIN}")
            continue
        (applied.written if done else applied.unchanged).append(change.path)
    return applied


_AGAIN = "triage the trees again (hilbot triage EXPECTED ACTUAL) and apply that run"


def _stale(what: str) -> snapshots.SnapshotError:
    return snapshots.SnapshotError(f"{what} since the triage", fix=_AGAIN)


def _apply_one(change: Change, guard: dict[snapshots.Identity, str]) -> bool:
    """Apply one accepted snapshot change; whether it wrote anything (False: already in place)."""
    if not change.expected_root or not change.actual_root:
        raise snapshots.SnapshotError(
            "the run records an absolute path for it (an older hilbot "
            "wrote it), which --apply does not trust",
            fix=_AGAIN,
        )
    try:
        names = snapshots.parts(change.path)
    except ValueError as exc:
        raise snapshots.SnapshotError(str(exc), fix=_AGAIN) from None
    new = _actual_now(change, _tree(change.actual_root, change.expected_root, guard))
    expected = _tree(change.expected_root, change.actual_root, guard)
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


_STATUSES = ("changed", "added", "removed")
_SOURCES = ("runs", "snapshots", "file")
_CRAFTED = "this run was not written by hilbot triage, or was edited since: " + _AGAIN


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


# -------------------------------------------------------------------------------------- the command


@dataclass(frozen=True)
class TriageOptions:
    """What ``hilbot triage`` was asked for."""

    mode: str = "compact"
    """``compact``, ``verbose`` or ``silent``."""
    only_failed: bool = False
    """Leave out the changes a rule accepted."""
    judge: str | None = None
    """The triage judge (default: ``[triage] judge``)."""
    update: bool = False
    """Write the snapshot changes rules accepted over their expected files."""
    interactive: bool = False
    """Review the changes left for humans now, then write what they accepted."""
    reviewer: str = "me"
    """Who reviews, with ``interactive``."""
    exclude: tuple[str, ...] = ()
    """Glob patterns of snapshot paths never compared, besides ``[triage] exclude``."""


@dataclass
class CommandResult:
    """What a triage command prints and its exit code."""

    lines: list[str]
    exit_code: int = 0
    warnings: list[str] = field(default_factory=list)


def triage_command(
    store: "Store",
    config: "HilbotConfig",
    sources: Sequence[str],
    options: TriageOptions,
    review: Callable[["Store", "HilbotConfig", str, str], None] | None = None,
    show: Callable[[list[str]], None] | None = None,
) -> CommandResult:
    """``hilbot triage``: triage, report, optionally review (``review`` runs a terminal review of a
    run) and apply.

    With a review, the report is handed to ``show`` first, so it is read before the cards come.
    """
    outcome = run_triage(store, config, sources, judge=options.judge, exclude=options.exclude)
    lines = report_lines(outcome, mode=options.mode, only_failed=options.only_failed)
    warnings = outcome.warnings + _sent_warning(store, outcome)
    applied = (
        apply_rule_accepted(store, outcome) if options.update or options.interactive else Applied()
    )
    decisions: dict[str, str] = {}
    if (
        options.interactive
        and review is not None
        and any(t.decision.to_humans for t in outcome.changes)
    ):
        if show is not None:
            show(lines)
            lines = []
        review(store, config, outcome.run_id, options.reviewer)
        decisions = human_decisions(store, store.load_run(outcome.run_id))
        human = apply_accepted(store, outcome.run_id, decisions)
        applied.written += human.written
        applied.unchanged += human.unchanged
        applied.refused += human.refused
        lines += ["", *decided_lines(outcome, decisions)]
    lines += _applied_lines(applied)
    return CommandResult(lines, 1 if failed(outcome, decisions) or applied.refused else 0, warnings)


def _sent_warning(store: "Store", outcome: TriageOutcome) -> list[str]:
    """Outputs may hold sensitive data: say where they went, and where the record of it is."""
    sent = [t for t in outcome.changes if t.triage.judge_kind == "llm"]
    if not sent:
        return []
    what = "1 change was" if len(sent) == 1 else f"{len(sent)} changes were"
    return [
        f"{what} sent to {outcome.judge} (each prompt as sent is in "
        f"{store.root / 'llm-calls.jsonl'}; [llm] redact masks patterns, and a local model keeps "
        "them on your network)"
    ]


def apply_command(store: "Store", run_id: str, extra: Sequence[str]) -> CommandResult:
    """``hilbot triage --apply RUN``: write what humans accepted on the triage run."""
    if extra:
        raise TriageError(
            "--apply takes a triage run, not sources",
            fix=f"run `hilbot triage --apply {run_id}` alone",
        )
    run = store.load_run(run_id)
    if run.header.kind != "change":
        raise TriageError(
            f"run {run_id!r} is not a triage run",
            fix="name the run `hilbot triage` printed (set triage)",
        )
    decided = human_decisions(store, run)
    applied = apply_accepted(store, run_id, decided)
    waiting = len(run.items) - len(decided)
    lines = _applied_lines(applied) or [
        "nothing to write: no snapshot change of this run was accepted"
    ]
    return CommandResult(
        lines + ([f"{waiting} changes still wait for a human"] if waiting else []),
        1 if applied.refused else 0,
    )


def _applied_lines(applied: Applied) -> list[str]:
    """What was written, what was in place already, and ``not written: path — why`` per refusal."""
    lines = []
    if applied.written:
        written = ", ".join(applied.written)
        lines.append(f"wrote {len(applied.written)} expected file(s): {written}")
    if applied.unchanged:
        lines.append("already written: " + ", ".join(applied.unchanged))
    lines += [f"not written: {r}" for r in applied.refused]
    return [visible(line, newlines=False) for line in lines]


__all__ = [
    "CATEGORIES",
    "DIMENSION",
    "Applied",
    "CommandResult",
    "TriageOptions",
    "TriageOutcome",
    "Triaged",
    "accepted_outputs",
    "against_accepted",
    "apply_accepted",
    "apply_changes",
    "apply_command",
    "apply_rule_accepted",
    "change_of",
    "decided_lines",
    "failed",
    "human_decisions",
    "report_lines",
    "run_changes",
    "run_triage",
    "triage_command",
    "triage_text",
]
