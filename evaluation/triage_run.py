"""A triage from start to end: find the changes, triage them, decide, record; the report, the
humans' decisions and applying what was accepted are its siblings'.

:func:`run_triage` writes, through the store:

* a run of kind ``change`` holding the changes humans decide (those the policy sent to them and the
  audit sample), so ``hilbot review RUN`` and the Telegram and Slack bots deal them like any other
  item: a human's decision is a rating on the dimension ``change`` (``accept`` or ``reject``);
* one ``triage_decision`` record per change in the log: accepted or rejected by a rule (a human's
  earlier decision on the same change is one, ``precedent``), or sent to humans;
* for snapshot trees, a record beside each changed actual file with its triage, named after the
  file's whole name (``x.md`` → ``x.md.ai.json``) and marked as hilbot's; a file of that name that
  is not such a record (a user's own) is left alone, with a warning.

Triaging the same changes the same way again (the same trees, unchanged) reuses the earlier
triage's run and records nothing new (:func:`triage_key`, kept in the run's header). The records
are written aside first (:func:`evaluation.snapshots.stage`): a full disk,
``ulimit -f`` or an unwritable directory stops the triage before the run or a decision is
recorded. A snapshot too large to review is left out with a warning naming ``--exclude``, and
the rest are triaged.

Around it, each re-exported here: the report (:mod:`evaluation.triage_report`), the humans'
decisions (:mod:`evaluation.triage_decisions`), a triage run's items read back as changes
(:mod:`evaluation.triage_items`), writing what was accepted over the expected files
(:mod:`evaluation.triage_apply`: :func:`apply_accepted`) and the ``hilbot triage`` command
(:mod:`evaluation.triage_command`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from . import snapshots
from .changes import Change, Tolerance, find_changes, marked_diff
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
from .triage import (
    CATEGORIES,
    Decision,
    Triage,
    decide,
    tolerance,
    triage_all,
    triage_judge,
)
from .triage_apply import (
    Applied,
    apply_accepted,
    apply_changes,
    apply_rule_accepted,
    data_guard,
    guarded_tree,
)
from .triage_command import CommandResult, TriageOptions, apply_command, triage_command
from .triage_decisions import (
    DIMENSION,
    Precedent,
    accepted_outputs,
    against_accepted,
    change_key,
    human_decisions,
    precedents,
)
from .triage_items import change_of, run_changes
from .triage_report import decided_lines, failed, report_lines, triage_text

if TYPE_CHECKING:
    from .config import HilbotConfig
    from .store import Store


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
    reused: bool = False
    """The same changes were triaged the same way before: that triage's run is this one, and
    nothing was recorded again."""

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
    A change a human decided before comes back decided so (:func:`precedents`). The same changes
    triaged the same way as an earlier triage (:func:`triage_key`) reuse its run: nothing is
    recorded again. ``exclude`` adds glob patterns to ``[triage] exclude``.
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
    key = triage_key(changes, triager.name, config)
    earlier = precedents(store)
    reused = _reusable(store, config, key, changes, triages, earlier)
    if reused is not None:
        run_id, triaged = reused
    else:
        run_id = store.new_run_id()
        triaged = _decided(config, run_id, changes, triages, earlier)
    label = triages[0].judge if triages else triager.name
    staged, left = _stage_records(store, triaged)  # written aside before anything is recorded
    judge_info = JudgeInfo(name=label, registry_name=triager.name, kind=triager.kind)
    try:
        if reused is None:
            run_id = _create_run(store, config, run_id, triaged, judge_info, key)
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
        reused=reused is not None,
    )
    for record in staged:
        why = snapshots.commit(record)
        outcome.warnings += [why] if why else []
        outcome.ai_files += [] if why else [Path(record.tree.path(record.rel))]
    return outcome


def triage_key(changes: Sequence[Change], judge: str, config: "HilbotConfig") -> str:
    """What a triage compared and how: a hash of every change (trees, paths, outputs, purposes),
    the triage judge (the LLM's provider and model) and the ``[triage]`` policy (not what cards
    show)."""
    digest = hashlib.sha256()
    policy = config.triage.model_dump(mode="json", exclude={"show_ai", "llm_on_request"})
    how = [judge, policy]
    how += [f"{config.llm.provider}/{config.llm.model}"] if judge == "llm" else []
    for part in (how, *(change.model_dump(mode="json") for change in changes)):
        digest.update(json.dumps(part, sort_keys=True).encode("ascii") + b"\n")
    return digest.hexdigest()


def _decided(
    config: "HilbotConfig",
    run_id: str,
    changes: list[Change],
    triages: list[Triage],
    earlier: dict[str, Precedent],
) -> list[Triaged]:
    """Each change with its triage and the policy's decision in the triage ``run_id``."""
    return [
        Triaged(c, t, decide(c, t, config.triage, run_id, earlier.get(_key(c))))
        for c, t in zip(changes, triages)
    ]


def _key(change: Change) -> str:
    return change_key(change.path, change.expected, change.actual)


def _reusable(
    store: "Store",
    config: "HilbotConfig",
    key: str,
    changes: list[Change],
    triages: list[Triage],
    earlier: dict[str, Precedent],
) -> tuple[str, list[Triaged]] | None:
    """The latest triage run of the same ``key`` and the changes decided in it, when that run
    holds every change sent to humans now; else None."""
    for run_id in store.run_ids():  # newest first
        header = store.run_header(run_id)
        if header is None or header.kind != "change" or header.triage_key != key:
            continue
        triaged = _decided(config, run_id, changes, triages, earlier)
        held = {item.id for item in store.load_run(run_id).items}
        if all(t.change.id in held for t in triaged if t.decision.to_humans):
            return run_id, triaged
        return None
    return None


def _create_run(
    store: "Store",
    config: "HilbotConfig",
    run_id: str,
    triaged: list[Triaged],
    judge: JudgeInfo,
    key: str,
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
        triage_key=key,
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


def _stage_records(
    store: "Store", triaged: list[Triaged]
) -> tuple[list[snapshots.Staged], list[str]]:
    """Each snapshot change's record written aside beside its actual file, and why any was not.

    A write that fails (a full disk, ``ulimit -f``, an unwritable directory) is a
    :class:`evaluation.snapshots.WriteFailed`, with nothing left aside.
    """
    staged: list[snapshots.Staged] = []
    left: list[str] = []
    guard = data_guard(store)
    try:
        for t in triaged:
            change = t.change
            if change.source != "snapshots" or change.status == "removed" or not change.actual_root:
                continue
            tree = guarded_tree(change.actual_root, change.expected_root, guard)
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
    "precedents",
    "report_lines",
    "run_changes",
    "run_triage",
    "triage_command",
    "triage_key",
    "triage_text",
]
