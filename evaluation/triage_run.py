"""A triage from start to end: find the changes, triage them, decide, record, report, apply what was accepted.

:func:`run_triage` writes, through the store:

* a run of kind ``change`` holding the changes humans decide (those the policy sent to them and the
  audit sample), so ``hilbot review RUN`` and the Telegram and Slack bots deal them like any other item:
  a human's decision is a rating on the dimension ``change`` (``accept`` or ``reject``);
* one ``triage_decision`` record per change in the log: accepted or rejected by a rule, or sent to humans;
* for snapshot trees, an ``.ai.json`` beside each changed actual file with its triage.

:func:`apply_accepted` then writes each accepted snapshot change's actual file over its expected one
(atomically), as ``booktest -u`` and ``cargo insta accept`` do; a rejected one is left as it is.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .changes import Change, Tolerance, find_changes, marked_diff
from .records import Evaluation, ItemData, JudgeInfo, Query, QueryEvaluation, RunHeader, RunSummary, TriageDecision
from .triage import CATEGORIES, Decision, Triage, TriageError, decide, tolerance, triage_all, triage_judge

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

    def counts(self) -> Counter[str]:
        """Changes per category name."""
        return Counter(t.triage.label for t in self.changes)

    def waiting(self) -> list[Triaged]:
        """Changes sent to humans (not those only in the audit sample: a rule decided them)."""
        return [t for t in self.changes if t.decision.outcome == "human"]

    def rejected(self) -> list[Triaged]:
        """Changes a rule rejected."""
        return [t for t in self.changes if t.decision.outcome == "rejected"]


def run_triage(store: "Store", config: "HilbotConfig", sources: Sequence[str], *, judge: str | None = None) -> TriageOutcome:
    """Find the changes of ``sources``, triage each with ``judge`` (default ``[triage] judge``), decide, and record it all.

    Between two runs, an item whose output a human accepted in an earlier triage is compared with
    that accepted output, not with the baseline run's: accepting made it the item's new baseline.
    """
    changes = find_changes(store, sources)
    if changes and changes[0].source == "runs":
        changes = against_accepted(changes, accepted_outputs(store))
    triager = triage_judge(judge or config.triage.judge, config, store)
    if not changes:  # nothing to triage: no run, no records
        return TriageOutcome("", triager.name)
    triages = asyncio.run(triage_all(triager, changes, close=True))
    run_id = store.new_run_id()
    triaged = [Triaged(c, t, decide(c, t, config.triage, run_id)) for c, t in zip(changes, triages)]
    label = triages[0].judge if triages else triager.name
    run_id = _create_run(store, config, run_id, triaged, JudgeInfo(name=label, registry_name=triager.name, kind=triager.kind))
    store.ratings.append_many(_decision(run_id, t) for t in triaged)
    outcome = TriageOutcome(run_id, label, triaged, tolerance=tolerance(config.triage))
    outcome.ai_files = [_write_ai_json(store, t) for t in triaged if t.change.source == "snapshots" and t.change.actual_file]
    return outcome


def _create_run(store: "Store", config: "HilbotConfig", run_id: str, triaged: list[Triaged], judge: JudgeInfo) -> str:
    """The run of the changes humans decide; its id (moved on when taken)."""
    tol = tolerance(config.triage)
    items = [_item(t, marked_diff(t.change, tol)) for t in triaged if t.decision.to_humans]
    header = RunHeader(run_id=run_id, set="triage", kind="change", source="hilbot triage", judge=judge, dimensions=[DIMENSION],
                       item_count=len(items))
    placed = store.create_run(header, (QueryEvaluation(run_id=run_id, data=i) for i in items),
                              RunSummary(run_id=run_id, item_count=len(items)), generated=True)
    return placed.stem


def _item(t: Triaged, diff: str) -> ItemData:
    """A change as a run item: the name as the query, both outputs, the triage as the evaluation, the rest as features."""
    change, triage = t.change, t.triage
    evaluation = Evaluation(scores={DIMENSION: (triage.category - 1) / 4}, verdict=triage.label, confidence=triage.confidence,
                            rationale=triage.rationale, judge=triage.judge, error=triage.error, cost_usd=triage.cost_usd)
    features = {"path": change.path, "status": change.status, "source": change.source, "diff": diff, "audit": t.decision.audit,
                "rule": t.decision.rule, "summary": triage.summary, "issues": triage.issues, "suggestions": triage.suggestions,
                "flags_for_human": triage.flags_for_human, "expected_file": change.expected_file, "actual_file": change.actual_file}
    return ItemData(id=change.id, query=Query(query=change.name, intent=change.description, expected_answer=change.expected),
                    answer=change.actual, evaluation=evaluation, features=features)


def _decision(run_id: str, t: Triaged) -> TriageDecision:
    return TriageDecision(run_id=run_id, change_id=t.change.id, path=t.change.path, outcome=t.decision.outcome, rule=t.decision.rule,
                          audit=t.decision.audit, category=t.triage.category, confidence=t.triage.confidence, judge=t.triage.judge,
                          judge_kind=t.triage.judge_kind)


def _write_ai_json(store: "Store", t: Triaged) -> Path:
    """``<actual file without its suffix>.ai.json``: the triage and the decision, beside the snapshot."""
    actual = Path(t.change.actual_file or "")
    record = {"path": t.change.path, "status": t.change.status, "category": t.triage.category, "category_name": t.triage.label,
              **t.triage.model_dump(exclude={"category"}), "decision": t.decision.outcome, "rule": t.decision.rule,
              "audit": t.decision.audit}
    return store.write_file(actual.with_name(actual.stem + ".ai.json"), json.dumps(record, indent=2, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------------------------- reports


def report_lines(outcome: TriageOutcome, *, mode: str = "compact", only_failed: bool = False, diff: bool = True) -> list[str]:
    """The triage as text: ``path - CATEGORY (summary)`` per change (``compact``), the whole analysis (``verbose``),
    or one line per category (``silent``); then what was decided and where the rest waits."""
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

    return visible(f"{t.change.path} - {t.triage.label} ({t.triage.summary}) → {_decided(t.decision)}", newlines=False)


def _decided(decision: Decision) -> str:
    text = {"accepted": "accepted by rule", "rejected": "rejected by rule", "human": "to a human"}[decision.outcome]
    return text + (" (audit: a human checks it too)" if decision.audit else "")


def triage_text(triage: Triage) -> str:
    """A triage in full: category, confidence, who, summary, rationale, issues, suggestions."""
    return "\n".join(_analysis(triage))


def _analysis(triage: Triage) -> list[str]:
    lines = [f"AI review (confidence: {triage.confidence:.2f}, by {triage.judge}):", f"  Category: {triage.label}",
             f"  Summary: {triage.summary}", "", "  Rationale:", *_indented(triage.rationale)]
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
    text = (f"{len(outcome.changes)} changes: {decided['accepted']} accepted and {decided['rejected']} rejected by rules, "
            f"{decided['human']} for humans" + (f", {audit} more in the audit sample" if audit else "") + f"; triaged by {outcome.judge}")
    return text + (f"; review them: hilbot review {outcome.run_id}" if decided["human"] or audit else "")


def decided_lines(outcome: TriageOutcome, decisions: dict[str, str]) -> list[str]:
    """Each change after the humans' review: ``path - ACCEPTED (AI: CATEGORY: summary)`` (the rule's decision where no human's)."""
    from .text import visible

    lines = []
    for t in outcome.changes:
        human = decisions.get(t.change.id)
        verdict = f"{human.upper()}ED by a human" if human else ("waiting for a human" if t.decision.outcome == "human"
                                                                  else f"{t.decision.outcome.upper()} by rule")
        lines.append(visible(f"{t.change.path} - {verdict} (AI: {t.triage.label}: {t.triage.summary})", newlines=False))
    return lines


def failed(outcome: TriageOutcome, decisions: dict[str, str] | None = None) -> bool:
    """Whether CI should fail: a change rejected (by a rule or a human) or still waiting for a human.

    ``decisions`` are the humans' (change id → ``accept``/``reject``); a human's decision replaces a rule's.
    """
    decisions = decisions or {}
    for t in outcome.changes:
        human = decisions.get(t.change.id)
        if human == "reject" or (human is None and t.decision.outcome in ("rejected", "human")):
            return True
    return False


# ---------------------------------------------------------------------------------------------- humans' decisions


@dataclass
class Applied:
    """What :func:`apply_accepted` did."""

    written: list[str] = field(default_factory=list)
    """Expected files replaced by their actual ones."""
    refused: list[str] = field(default_factory=list)
    """Accepted changes not applied, each with why."""


def human_decisions(store: "Store", run: "Run") -> dict[str, str]:
    """Each change's current human decision (``accept`` / ``reject``) on the triage run: the latest rating, any reviewer."""
    from .reviews import Ledger

    return {item_id: judgment for item_id, (_, judgment) in _latest(Ledger.from_events(store.human_events()), run.run_id).items()}


def accepted_outputs(store: "Store") -> dict[str, str | None]:
    """For changes between runs: each path's output as a human last accepted it, over every triage run."""
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
            if item.features.get("source") == "runs" and decided.get(item.id, ("", ""))[1] == "accept":
                accepted[str(item.features.get("path"))] = (decided[item.id][0], item.answer)
    return {path: output for path, (_, output) in sorted(accepted.items(), key=lambda kv: kv[1][0])}


def against_accepted(changes: list[Change], accepted: dict[str, str | None]) -> list[Change]:
    """``changes`` with each accepted output as the expected one; a change that then disappears is dropped."""
    moved = []
    for change in changes:
        if change.path in accepted:
            change = change.model_copy(update={"expected": accepted[change.path]})
            if change.expected == change.actual:
                continue
            change.status = "added" if change.expected is None else "removed" if change.actual is None else "changed"
        moved.append(change)
    return moved


def _latest(ledger: Any, run_id: str) -> dict[str, tuple[Any, str]]:
    """Each item's latest human decision on a triage run: (when, accept|reject)."""
    decided: dict[str, tuple[Any, str]] = {}
    for rating in sorted(ledger.ratings(run_id, DIMENSION), key=lambda r: r.timestamp):
        decided[rating.item_id] = (rating.timestamp, rating.judgment)
    return decided


def apply_accepted(store: "Store", run_id: str, decided: dict[str, str] | None = None) -> Applied:
    """Write each snapshot change humans accepted on the triage run over its expected file (see :func:`apply_changes`).

    ``decided`` is :func:`human_decisions` of the run, when the caller has it.
    """
    run = store.load_run(run_id)
    decided = human_decisions(store, run) if decided is None else decided
    return apply_changes(store, [change_of(item) for item in run.items if decided.get(item.id) == "accept"])


def apply_rule_accepted(store: "Store", outcome: TriageOutcome) -> Applied:
    """Write each snapshot change a rule accepted (and no human has rejected yet) over its expected file."""
    return apply_changes(store, [t.change for t in outcome.changes if t.decision.outcome == "accepted"])


def apply_changes(store: "Store", changes: Sequence[Change]) -> Applied:
    """Each snapshot change's actual file written over its expected one, atomically; an accepted removal deletes it.

    A change is applied only while its actual file still holds what was triaged and its expected
    file still holds the old output (or is absent, for an added file): anything else changed since,
    and is refused, saying so. Changes from runs or files have no files to update and are passed over.
    """
    applied = Applied()
    for change in changes:
        if change.source != "snapshots" or not change.expected_file:
            continue
        why = _stale(change)
        if why:
            applied.refused.append(f"{change.path}: {why}")
        elif change.actual is None:
            Path(change.expected_file).unlink(missing_ok=True)
            applied.written.append(change.path)
        else:
            store.write_bytes(change.expected_file, Path(change.actual_file or "").read_bytes())
            applied.written.append(change.path)
    return applied


def change_of(item: ItemData) -> Change:
    """The change a triage run's item holds."""
    f = item.features
    return Change(id=item.id, name=item.query.query, description=item.query.intent, path=str(f.get("path", item.id)),
                  status=f.get("status", "changed"), expected=item.query.expected_answer, actual=item.answer,
                  source=f.get("source", "file"), expected_file=f.get("expected_file"), actual_file=f.get("actual_file"))


def _read(path: str | None) -> str | None:
    return Path(path).read_text("utf-8", errors="replace") if path and Path(path).is_file() else None


def _stale(change: Change) -> str | None:
    """Why a change can no longer be applied as triaged, or None."""
    expected = _read(change.expected_file)
    if expected is not None and expected == change.actual:
        return "already applied"
    if expected != change.expected:
        return "the expected file changed since the triage; triage again"
    if _read(change.actual_file) != change.actual:
        return "the actual file changed since the triage; triage again"
    return None


# ---------------------------------------------------------------------------------------------- the command


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


@dataclass
class CommandResult:
    """What a triage command prints and its exit code."""

    lines: list[str]
    exit_code: int = 0
    warnings: list[str] = field(default_factory=list)


def triage_command(store: "Store", config: "HilbotConfig", sources: Sequence[str], options: TriageOptions,
                   review: Callable[["Store", "HilbotConfig", str, str], None] | None = None,
                   show: Callable[[list[str]], None] | None = None) -> CommandResult:
    """``hilbot triage``: triage, report, optionally review (``review`` runs a terminal review of a run) and apply.

    With a review, the report is handed to ``show`` first, so it is read before the cards come.
    """
    outcome = run_triage(store, config, sources, judge=options.judge)
    lines = report_lines(outcome, mode=options.mode, only_failed=options.only_failed)
    warnings = _sent_warning(store, outcome)
    applied = apply_rule_accepted(store, outcome) if options.update or options.interactive else Applied()
    decisions: dict[str, str] = {}
    if options.interactive and review is not None and any(t.decision.to_humans for t in outcome.changes):
        if show is not None:
            show(lines)
            lines = []
        review(store, config, outcome.run_id, options.reviewer)
        decisions = human_decisions(store, store.load_run(outcome.run_id))
        human = apply_accepted(store, outcome.run_id, decisions)
        applied.written += human.written
        applied.refused += human.refused
        lines += ["", *decided_lines(outcome, decisions)]
    lines += _applied_lines(applied)
    return CommandResult(lines, 1 if failed(outcome, decisions) else 0, warnings + [f"not written: {r}" for r in applied.refused])


def _sent_warning(store: "Store", outcome: TriageOutcome) -> list[str]:
    """Outputs may hold sensitive data: say where they went, and where the record of it is."""
    sent = [t for t in outcome.changes if t.triage.judge_kind == "llm"]
    if not sent:
        return []
    what = "1 change was" if len(sent) == 1 else f"{len(sent)} changes were"
    return [f"{what} sent to {outcome.judge} (each prompt as sent is in {store.root / 'llm-calls.jsonl'}; "
            "[llm] redact masks patterns, and a local model keeps them on your network)"]


def apply_command(store: "Store", run_id: str, extra: Sequence[str]) -> CommandResult:
    """``hilbot triage --apply RUN``: write what humans accepted on the triage run."""
    if extra:
        raise TriageError("--apply takes a triage run, not sources", fix=f"run `hilbot triage --apply {run_id}` alone")
    run = store.load_run(run_id)
    if run.header.kind != "change":
        raise TriageError(f"run {run_id!r} is not a triage run", fix="name the run `hilbot triage` printed (set triage)")
    decided = human_decisions(store, run)
    applied = apply_accepted(store, run_id, decided)
    waiting = len(run.items) - len(decided)
    lines = _applied_lines(applied) or ["nothing to write: no snapshot change of this run was accepted"]
    return CommandResult(lines + ([f"{waiting} changes still wait for a human"] if waiting else []), 0,
                         [f"not written: {r}" for r in applied.refused])


def _applied_lines(applied: Applied) -> list[str]:
    return [f"wrote {len(applied.written)} expected file(s): " + ", ".join(applied.written)] if applied.written else []


__all__ = ["CATEGORIES", "DIMENSION", "Applied", "CommandResult", "TriageOptions", "TriageOutcome", "Triaged", "accepted_outputs",
           "against_accepted", "apply_accepted", "apply_changes", "apply_command", "apply_rule_accepted", "change_of", "decided_lines", "failed",
           "human_decisions", "report_lines", "run_triage", "triage_command", "triage_text"]
