"""The triage report's shape: the dataclasses ``hilbot analyze triage`` returns (the counts, the
confusion matrix, the audit accuracy, the calibration, the safe thresholds, the agreement by path,
the whole report) and the category names its rows carry; nothing here computes
(:mod:`analysis.triage.compute` does, and says the report's conventions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..stats import Interval, Number, Undefined
from ..vocabulary import Report

VERSION = 1
"""The version of the report's JSON (``to_dict()["version"]``)."""
CATEGORIES = {1: "FAIL", 2: "RECOMMEND FAIL", 3: "UNSURE", 4: "RECOMMEND ACCEPT", 5: "ACCEPT"}
"""Category number → its name (as :data:`evaluation.triage.CATEGORIES`)."""


@dataclass(frozen=True)
class Counts(Report):
    """How the changes in scope were decided."""

    triaged: int
    """Changes triaged."""
    accepted: int
    """Accepted by a rule."""
    rejected: int
    """Rejected by a rule."""
    decided_by_rules: int
    """Accepted or rejected by a rule."""
    rules_share: Number
    """``decided_by_rules / triaged``."""
    sent_to_humans: int
    """Sent to humans to decide (outcome ``human``)."""
    audit: int
    """Automatic decisions also sent to humans, blind."""
    human_decided: int
    """Changes with a human decision (sent to humans or audited)."""
    waiting: int
    """Changes sent to humans without a human decision yet."""
    audit_waiting: int
    """Audit changes no human has checked yet."""


@dataclass(frozen=True)
class ConfusionRow(Report):
    """The human decisions on the changes of one AI category."""

    category: int
    name: str
    accept: int
    """Changes the humans accepted."""
    reject: int
    """Changes the humans rejected."""


@dataclass(frozen=True)
class Accuracy(Report):
    """How often the humans agreed."""

    n: int
    """Changes with a human decision."""
    agreed: int
    """Of them, those the human decided the same way."""
    accuracy: Number
    """``agreed / n``."""
    ci: Interval | Undefined
    """95% Wilson interval of the accuracy."""


@dataclass(frozen=True)
class AuditAccuracy(Report):
    """The rules' automatic decisions checked by the humans of the audit sample."""

    overall: Accuracy
    auto_accept: Accuracy
    auto_reject: Accuracy


@dataclass(frozen=True)
class ReliabilityBin(Report):
    """The changes whose confidence falls in one bin."""

    label: str
    low: float
    high: float
    n: int
    mean_confidence: Number
    accuracy: Number
    """Share the humans decided the way the AI said."""


@dataclass(frozen=True)
class Calibration(Report):
    """The AI's confidence against how often the humans agreed (UNSURE left out)."""

    agreement: Accuracy
    """Over every change the AI took a side on and a human decided."""
    unsure_left_out: int
    """Human-decided UNSURE changes: the AI took no side."""
    brier: Number
    """mean (confidence − correct)²."""
    bins: tuple[ReliabilityBin, ...]


@dataclass(frozen=True)
class AtThreshold(Report):
    """One threshold measured on the human-decided changes of a side's categories."""

    threshold: float
    n: int
    """Human-decided changes of the categories at or above the threshold."""
    agreed: int
    """Of them, those the human decided the same way."""
    precision: Number
    ci: Interval | Undefined
    """95% Wilson interval of the precision."""
    wilson_low: Number
    """Its lower bound."""
    automated: int
    """Triaged changes in scope of the categories at or above the threshold."""
    automates: Number
    """``automated / triaged``: how much the threshold would decide without a human."""


@dataclass(frozen=True)
class SafeThreshold(Report):
    """The smallest safe threshold for a rule, and the configured one for comparison."""

    side: Literal["accept", "reject"]
    categories: tuple[int, ...]
    """The categories the rule may decide (``[triage] auto_<side>_categories``)."""
    decided: int
    """Human-decided changes of those categories."""
    suggested: AtThreshold | Undefined
    """The smallest threshold reaching the target precision on at least ``min_n`` changes."""
    configured: AtThreshold
    """``[triage] auto_<side>_threshold`` on the same data."""


@dataclass(frozen=True)
class PathGroup(Report):
    """AI-vs-human agreement over the changes of one path group."""

    kind: Literal["pattern", "segment"]
    """A ``require_human`` pattern, or the first segment of the path."""
    group: str
    agreement: Accuracy


@dataclass(frozen=True)
class TriageReport(Report):
    """What the humans' corrections say about the triage (see
    :mod:`analysis.triage.compute`)."""

    run: str | None
    """The triage run asked for (``--run``), or None for every one."""
    runs: tuple[str, ...]
    """The triage runs in scope."""
    judges: tuple[str, ...]
    """Who triaged them."""
    target_precision: float
    min_n: int
    counts: Counts
    confusion: tuple[ConfusionRow, ...]
    """AI category (FAIL … ACCEPT) × human decision, over the human-decided changes."""
    audit: AuditAccuracy
    calibration: Calibration
    thresholds: tuple[SafeThreshold, ...]
    """Auto-accept, then auto-reject."""
    by_path: tuple[PathGroup, ...]
    """The ``require_human`` patterns in configuration order, then the first path segments by
    name."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe values, with the report's ``version``."""
        return {"version": VERSION, **super().to_dict()}
