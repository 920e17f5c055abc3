"""A triage as text: ``hilbot triage``'s report of each change (compact, verbose or one line per
category) and the footer saying what was decided and where the rest waits
(:func:`report_lines`), a triage's analysis in full (:func:`triage_text`, the "AI review"), each
change after the humans' review (:func:`decided_lines`), and whether CI fails (:func:`failed`).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .changes import Tolerance, marked_diff
from .text import visible
from .triage import CATEGORIES, Decision, Triage

if TYPE_CHECKING:
    from .triage_run import Triaged, TriageOutcome


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
    return visible(
        f"{t.change.path} - {t.triage.label} ({t.triage.summary}) → {_decided(t.decision)}",
        newlines=False,
    )


def _decided(decision: Decision) -> str:
    if decision.precedent:  # rejected by alice on 2026-11-26 — same change
        return decision.rule.split(":", 1)[1].strip()
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
    lines = [f"{t.change.path} - {t.triage.label}", "", *_analysis(t.triage)]
    rule = "" if t.decision.precedent else f" — {t.decision.rule}"
    lines += ["", f"  Decision: {_decided(t.decision)}{rule}"]
    if diff and t.change.expected != t.change.actual:
        lines += ["", *marked_diff(t.change, tol).splitlines()]
    return [visible(line, newlines=False) for line in lines] + [""]


def _indented(text: str) -> list[str]:
    return [f"  {line}" for line in (text or "(none)").splitlines()]


def _footer(outcome: TriageOutcome) -> str:
    decided = Counter(t.decision.outcome for t in outcome.changes)
    audit = sum(t.decision.audit for t in outcome.changes)
    before = sum(t.decision.precedent for t in outcome.changes)
    text = (
        f"{len(outcome.changes)} changes: {decided['accepted']} accepted and {decided['rejected']} "
        "rejected by rules"
        + (f" ({before} as a human decided before)" if before else "")
        + f", {decided['human']} for humans"
        + (f", {audit} more in the audit sample" if audit else "")
        + f"; triaged by {outcome.judge}"
    )
    if outcome.reused:
        text += f"; unchanged since triage run {outcome.run_id} (reused, nothing recorded again)"
    return text + (
        f"; review them: hilbot review {outcome.run_id}" if decided["human"] or audit else ""
    )


def decided_lines(outcome: TriageOutcome, decisions: dict[str, str]) -> list[str]:
    """Each change after the humans' review: ``path - ACCEPTED by a human (AI: CATEGORY: summary)``
    (the rule's decision where no human's, ``REJECTED by alice on 2026-11-26 — same change`` for a
    precedent)."""
    lines = []
    for t in outcome.changes:
        human = decisions.get(t.change.id)
        verdict = (
            f"{human.upper()}ED by a human"
            if human
            else (
                "waiting for a human"
                if t.decision.outcome == "human"
                else f"{t.decision.outcome.upper()} "
                + (_decided(t.decision).split(" ", 1)[1] if t.decision.precedent else "by rule")
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

    ``decisions`` are the humans' (change id → ``accept``/``reject``); a human's decision
    replaces a rule's.
    """
    if outcome.left_out:
        return True
    decisions = decisions or {}
    for t in outcome.changes:
        human = decisions.get(t.change.id)
        if human == "reject" or (human is None and t.decision.outcome in ("rejected", "human")):
            return True
    return False


__all__ = ["decided_lines", "failed", "report_lines", "triage_text"]
