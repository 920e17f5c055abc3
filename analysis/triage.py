"""Learning from the humans' corrections of ``hilbot triage``: how often the AI and its rules are
right.

``hilbot triage`` appends one ``triage_decision`` record per change to the ratings log (accepted or
rejected by a rule, or sent to humans; an automatic decision may also be in the blind audit sample)
and deals the changes humans see as the items of a run of kind ``change``, whose ratings on the
dimension ``change`` (``accept`` / ``reject``) are the humans' decisions. This module reads both and
says how far the AI can be trusted. Conventions:

* **Decisions** are read by :func:`read_decisions`, fast: only lines holding the bytes
  ``"triage_decision"`` are parsed (orjson, then :func:`evaluation.records.parse_record`; a line
  orjson refuses goes to the log's own parser, which decides). A bad one is a ``file:line``
  :class:`LogIssue` worded as the loader words it (so a warning the loader gives already is not
  repeated). A change decided twice in one triage run (the same ``run_id`` and ``change_id``) counts
  once, at its last record.
* **The scope** is every triage run in the log, or the one ``--run`` names.
* **The human decision** on a change is its latest current rating on the dimension ``change`` of the
  triage run, whoever gave it: latest by timestamp, then by log order (a rating without a time
  counts as the latest, as the ledger's "now" would make it), as
  :func:`evaluation.triage_run.human_decisions` does. Each reviewer's rating is his current one (the
  loader's fold: a later skip withdraws it). The judgment ``accept`` or ``reject`` decides; any
  other judgment counts as accept when its score ≥ 0.5.
* **Counts**: *decided by rules* = accepted + rejected by a rule; *sent to humans* = outcome
  ``human``;
  *audit* = automatic decisions also sent to humans; *decided by humans* = changes with a human
  decision; *waiting* = changes sent to humans without one (audit changes not yet checked are
  counted apart, in ``audit_waiting``).
* **Confusion matrix**: the AI's category (1 FAIL … 5 ACCEPT, every row shown) against the human
  decision (accept, reject), over the changes with a human decision.
* **Audit accuracy**: over the audit changes with a human decision, the share where the human agrees
  with the rule (accepted ↔ accept, rejected ↔ reject), for auto-accepts, auto-rejects and both,
  each with a 95% Wilson interval (:func:`analysis.stats.wilson_interval`).
* **The AI's side and agreement**: the AI *says accept* when the category is ≥ 4 (RECOMMEND ACCEPT,
  ACCEPT) and *says reject* when it is ≤ 2 (FAIL, RECOMMEND FAIL); UNSURE (3) takes no side, is left
  out of the calibration and the path groups, and is counted (``unsure_left_out``). A change is
  *correct* when the human decided the way the AI said.
* **Reliability curve**: confidence bins [0, 0.5), [0.5, 0.6), [0.6, 0.7), [0.7, 0.8), [0.8, 0.9)
  and [0.9, 1.0] (closed on the left; 1.0 falls in the last), each with n, the mean confidence and
  the
  observed accuracy (Undefined when empty). **Brier score** = mean over those changes of
  (confidence − correct)², correct being 1 or 0; 0 is perfect, 0.25 is a coin at confidence 0.5.
* **Safe thresholds**, for auto-accept (the categories of ``[triage] auto_accept_categories``) and
  auto-reject (``auto_reject_categories``) apart: over the human-decided changes of those
  categories, for
  each distinct confidence t, precision(t) = share of those with confidence ≥ t the human decided
  the same way (accept, or reject). The suggested threshold is the smallest t with
  precision ≥ ``target_precision`` and at least ``min_n`` such changes, given with its Wilson
  interval (its lower bound is the cautious figure) and how much it would automate: the share
  of *all* triaged changes in scope whose category is in the set and whose confidence ≥ t. The
  configured threshold is measured the same way on the same data. The human-decided changes above a
  configured threshold are only its audit sample (the rule decided the rest), so a threshold's
  figures are only as good as that sample is large.
* **By path**: agreement as above, grouped by each ``[triage] require_human`` pattern the path
  matches (:func:`evaluation.changes.path_matches`; every configured pattern is listed, matched or
  not) and by the first segment of the path (``test/api/x.md`` → ``test``; a path without
  ``/`` → ``(top level)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Literal, Sequence

import numpy as np
import pandas as pd

from evaluation.changes import path_matches
from evaluation.log import LogIssue

from .errors import AnalysisError
from .registry import Inputs, Option, analysis
from .stats import Interval, Number, Undefined, wilson_interval
from .vocabulary import Report

if TYPE_CHECKING:
    from evaluation.config import TriageSettings

VERSION = 1
"""The version of the report's JSON (``to_dict()["version"]``)."""
DIMENSION = "change"
"""The dimension humans decide changes on (as :data:`evaluation.triage_run.DIMENSION`)."""
CATEGORIES = {1: "FAIL", 2: "RECOMMEND FAIL", 3: "UNSURE", 4: "RECOMMEND ACCEPT", 5: "ACCEPT"}
"""Category number → its name (as :data:`evaluation.triage.CATEGORIES`)."""
BIN_EDGES = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The reliability curve's bins: [0, 0.5), [0.5, 0.6) … [0.9, 1.0]."""
DECISION_COLUMNS = [
    "run_id",
    "change_id",
    "path",
    "outcome",
    "rule",
    "audit",
    "category",
    "confidence",
    "judge",
    "judge_kind",
    "timestamp",
    "line",
]
"""The columns of :func:`read_decisions`' frame, one row per ``triage_decision`` record, in log
order."""
TOP_LEVEL = "(top level)"
"""The first segment of a path without ``/``."""


def read_decisions(path: str | Path, issues: list[LogIssue] | None = None) -> pd.DataFrame:
    """Every ``triage_decision`` record of the log at ``path`` as a frame
    (:data:`DECISION_COLUMNS`); bad lines → ``issues``.

    Only lines holding the bytes ``"triage_decision"`` are parsed
    (:func:`analysis._records.read_typed`), so a log of a million ratings is read in a fraction of a
    second; a missing log reads as empty.
    """
    from ._records import read_typed

    return _decision_frame(read_typed(path, "triage_decision", issues))


def _decision_frame(found: list[tuple[int, Any]]) -> pd.DataFrame:
    records = [r for _, r in found]
    stamps = (
        pd.to_datetime([r.timestamp for r in records], utc=True)
        if records
        else pd.DatetimeIndex([], tz="UTC")
    )
    return pd.DataFrame(
        {
            **{
                name: pd.Series([getattr(r, name) for r in records], dtype="str")
                for name in (
                    "run_id",
                    "change_id",
                    "path",
                    "outcome",
                    "rule",
                    "judge",
                    "judge_kind",
                )
            },
            "audit": pd.Series([r.audit for r in records], dtype=bool),
            "category": pd.Series([r.category for r in records], dtype="int64"),
            "confidence": pd.Series([r.confidence for r in records], dtype="float64"),
            "timestamp": pd.Series(stamps, dtype="datetime64[ns, UTC]"),
            "line": pd.Series([n for n, _ in found], dtype="int64"),
        },
        columns=DECISION_COLUMNS,
    )


# --------------------------------------------------------------------------------------- the report


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
    """What the humans' corrections say about the triage (see the module docstring)."""

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


# ---------------------------------------------------------------------------------------- computing


def human_decisions(ratings: pd.DataFrame, runs: Iterable[str] | None = None) -> pd.DataFrame:
    """Each change's human decision: ``run_id``, ``change_id``, ``human`` (``accept``/``reject``),
    from the latest current rating on the dimension ``change`` (by timestamp, then log order; see
    the module docstring)."""
    rows = ratings[ratings["dimension"] == DIMENSION]
    if runs is not None:
        rows = rows[rows["run_id"].isin(list(runs))]
    rows = rows.sort_values(["timestamp", "line"], na_position="last", kind="stable")
    rows = rows.drop_duplicates(["run_id", "item_id"], keep="last")
    judgment, score = rows["judgment"].to_numpy(object), rows["score"].to_numpy(float)
    accept = (judgment == "accept") | ((judgment != "reject") & (score >= 0.5))
    return pd.DataFrame(
        {
            "run_id": rows["run_id"].to_numpy(object),
            "change_id": rows["item_id"].to_numpy(object),
            "human": np.where(accept, "accept", "reject").astype(object),
        }
    )


def changes_table(
    decisions: pd.DataFrame, ratings: pd.DataFrame, run: str | None = None
) -> pd.DataFrame:
    """One row per change in scope: its decision (the last record of it) and ``human`` (None while
    undecided)."""
    scoped = decisions if run is None else decisions[decisions["run_id"] == run]
    scoped = scoped.drop_duplicates(["run_id", "change_id"], keep="last")
    table = pd.DataFrame(
        {
            name: scoped[name].to_numpy(object)
            for name in ("run_id", "change_id", "path", "outcome", "judge")
        }
    )
    table["audit"] = scoped["audit"].to_numpy(bool)
    table["category"] = scoped["category"].to_numpy("int64")
    table["confidence"] = scoped["confidence"].to_numpy("float64")
    humans = human_decisions(ratings, set(table["run_id"]))
    table = table.merge(humans, on=["run_id", "change_id"], how="left")
    table["human"] = table["human"].astype(object).where(table["human"].notna(), None)
    return table


def _accuracy(agreed: np.ndarray, what: str) -> Accuracy:
    n, k = len(agreed), int(np.sum(agreed))
    return Accuracy(
        n,
        k,
        k / n if n else Undefined(f"no {what}"),
        wilson_interval(k, n) if n else Undefined(f"no {what}"),
    )


def _side(category: np.ndarray) -> np.ndarray:
    """The AI's side per change: ``accept`` (category ≥ 4), ``reject`` (≤ 2), or None (UNSURE)."""
    side = np.full(len(category), None, dtype=object)
    side[category >= 4], side[category <= 2] = "accept", "reject"
    return side


def _counts(table: pd.DataFrame) -> Counts:
    outcome, audit, decided = (
        table["outcome"].to_numpy(object),
        table["audit"].to_numpy(bool),
        table["human"].notna().to_numpy(),
    )
    accepted, rejected = int(np.sum(outcome == "accepted")), int(np.sum(outcome == "rejected"))
    n = len(table)
    return Counts(
        triaged=n,
        accepted=accepted,
        rejected=rejected,
        decided_by_rules=accepted + rejected,
        rules_share=(accepted + rejected) / n if n else Undefined("no change triaged"),
        sent_to_humans=int(np.sum(outcome == "human")),
        audit=int(np.sum(audit)),
        human_decided=int(np.sum(decided)),
        waiting=int(np.sum((outcome == "human") & ~decided)),
        audit_waiting=int(np.sum(audit & ~decided)),
    )


def _confusion(decided: pd.DataFrame) -> tuple[ConfusionRow, ...]:
    category, human = decided["category"].to_numpy("int64"), decided["human"].to_numpy(object)
    return tuple(
        ConfusionRow(
            c,
            name,
            int(np.sum((category == c) & (human == "accept"))),
            int(np.sum((category == c) & (human == "reject"))),
        )
        for c, name in CATEGORIES.items()
    )


def _audit(decided: pd.DataFrame) -> AuditAccuracy:
    audited = decided[decided["audit"].to_numpy(bool)]
    outcome, human = audited["outcome"].to_numpy(object), audited["human"].to_numpy(object)
    accepts, rejects = outcome == "accepted", outcome == "rejected"
    agreed = (accepts & (human == "accept")) | (rejects & (human == "reject"))
    return AuditAccuracy(
        overall=_accuracy(agreed[accepts | rejects], "audited decision checked by a human yet"),
        auto_accept=_accuracy(agreed[accepts], "audited auto-accept checked by a human yet"),
        auto_reject=_accuracy(agreed[rejects], "audited auto-reject checked by a human yet"),
    )


def _bin_label(low: float, high: float) -> str:
    return f"[{low:.1f}, {high:.1f}]" if high == BIN_EDGES[-1] else f"[{low:.1f}, {high:.1f})"


def _calibration(decided: pd.DataFrame) -> Calibration:
    side = _side(decided["category"].to_numpy("int64"))
    sided = side != None  # noqa: E711 - elementwise
    confidence = decided["confidence"].to_numpy("float64")[sided]
    correct = (side[sided] == decided["human"].to_numpy(object)[sided]).astype(float)
    where = np.searchsorted(np.asarray(BIN_EDGES[1:-1]), confidence, side="right")
    bins = []
    for i, (low, high) in enumerate(zip(BIN_EDGES, BIN_EDGES[1:])):
        inside = where == i
        n = int(np.sum(inside))
        empty = Undefined("no change in this bin")
        bins.append(
            ReliabilityBin(
                _bin_label(low, high),
                low,
                high,
                n,
                float(np.mean(confidence[inside])) if n else empty,
                float(np.mean(correct[inside])) if n else empty,
            )
        )
    what = "human decision on a change the AI accepted or rejected"
    brier = float(np.mean((confidence - correct) ** 2)) if len(correct) else Undefined(f"no {what}")
    return Calibration(
        _accuracy(correct.astype(bool), what), int(np.sum(~sided)), brier, tuple(bins)
    )


def _at(
    threshold: float,
    confidence: np.ndarray,
    agreed: np.ndarray,
    scope_confidence: np.ndarray,
    triaged: int,
) -> AtThreshold:
    above = confidence >= threshold
    n, k = int(np.sum(above)), int(np.sum(agreed[above]))
    automated = int(np.sum(scope_confidence >= threshold))
    none = Undefined("no human-decided change at or above it")
    ci = wilson_interval(k, n) if n else none
    return AtThreshold(
        float(threshold),
        n,
        k,
        k / n if n else none,
        ci,
        ci.low if isinstance(ci, Interval) else none,
        automated,
        automated / triaged if triaged else Undefined("no change triaged"),
    )


def _threshold(
    side: Literal["accept", "reject"],
    categories: Sequence[int],
    configured: float,
    table: pd.DataFrame,
    target: float,
    min_n: int,
) -> SafeThreshold:
    cats = tuple(sorted(categories))
    in_set = table["category"].isin(cats).to_numpy()
    decided = in_set & table["human"].notna().to_numpy()
    confidence = table["confidence"].to_numpy("float64")[decided]
    agreed = table["human"].to_numpy(object)[decided] == side
    scope_confidence = table["confidence"].to_numpy("float64")[in_set]
    at = lambda t: _at(t, confidence, agreed, scope_confidence, len(table))  # noqa: E731
    names = ", ".join(CATEGORIES[c] for c in cats) or "no category"
    suggested: AtThreshold | Undefined
    if not cats:
        suggested = Undefined(
            f"no auto-{side} category is configured ([triage] auto_{side}_categories)"
        )
    elif not len(confidence):
        suggested = Undefined(f"no change in {names} has a human decision yet")
    elif len(confidence) < min_n:
        suggested = Undefined(
            f"only {len(confidence)} human-decided changes in {names}, fewer than min_n {min_n}"
        )
    else:
        suggested = _smallest(sorted(set(confidence.tolist())), at, target, min_n)
    return SafeThreshold(side, cats, len(confidence), suggested, at(configured))


def _smallest(
    candidates: list[float], at: Any, target: float, min_n: int
) -> AtThreshold | Undefined:
    """The smallest candidate whose precision ≥ target on ≥ min_n changes; else why none is."""
    best: AtThreshold | None = None
    for t in candidates:
        measured = at(t)
        if measured.n < min_n:
            break  # fewer changes at every higher threshold too
        if measured.precision >= target:
            return measured
        if best is None or measured.precision > best.precision:
            best = measured
    assert best is not None  # the smallest candidate holds every decided change, which are ≥ min_n
    return Undefined(
        f"no threshold with at least {min_n} human-decided changes reaches precision {target:g} "
        f"(best: {best.precision:.3f} at {best.threshold:g}, n = {best.n})"
    )


def segment(path: str) -> str:
    """The first segment of a change's path (``test/api/x.md`` → ``test``; no
    ``/`` → :data:`TOP_LEVEL`)."""
    return path.split("/", 1)[0] if "/" in path else TOP_LEVEL


def _by_path(decided: pd.DataFrame, patterns: Sequence[str]) -> tuple[PathGroup, ...]:
    side = _side(decided["category"].to_numpy("int64"))
    sided = side != None  # noqa: E711 - elementwise
    paths = [str(p) for p in decided["path"].to_numpy(object)[sided]]
    agreed = side[sided] == decided["human"].to_numpy(object)[sided]
    what = "human decision on a change the AI accepted or rejected"
    groups = [
        PathGroup(
            "pattern",
            pattern,
            _accuracy(agreed[np.asarray([path_matches(p, [pattern]) for p in paths], bool)], what),
        )
        for pattern in dict.fromkeys(patterns)
    ]
    segments = np.asarray([segment(p) for p in paths], dtype=object)
    groups += [
        PathGroup("segment", name, _accuracy(agreed[segments == name], what))
        for name in sorted(set(segments.tolist()))
    ]
    return tuple(groups)


def triage_report(
    decisions: pd.DataFrame,
    ratings: pd.DataFrame,
    settings: "TriageSettings",
    *,
    run: str | None = None,
    target_precision: float = 0.99,
    min_n: int = 20,
) -> TriageReport:
    """The report over the ``decisions`` (:func:`read_decisions`) and the loader's ``ratings`` frame
    (see the module docstring)."""
    if not 0.5 <= target_precision <= 1 or not 1 <= min_n:
        raise AnalysisError(
            f"target_precision={target_precision}, min_n={min_n}",
            fix="use a target precision of 0.5 to 1 and min_n ≥ 1",
        )
    table = changes_table(decisions, ratings, run)
    decided = table[table["human"].notna()].reset_index(drop=True)
    thresholds = (
        _threshold(
            "accept",
            settings.auto_accept_categories,
            settings.auto_accept_threshold,
            table,
            target_precision,
            min_n,
        ),
        _threshold(
            "reject",
            settings.auto_reject_categories,
            settings.auto_reject_threshold,
            table,
            target_precision,
            min_n,
        ),
    )
    return TriageReport(
        run=run,
        runs=tuple(dict.fromkeys(table["run_id"])),
        judges=tuple(sorted(set(table["judge"]))),
        target_precision=target_precision,
        min_n=min_n,
        counts=_counts(table),
        confusion=_confusion(decided),
        audit=_audit(decided),
        calibration=_calibration(decided),
        thresholds=thresholds,
        by_path=_by_path(decided, settings.require_human),
    )


def digest_line(report: TriageReport) -> str | None:
    """The digest's triage line from the report's own figures; None when the scope has no triage
    decision.

    ``Triage: 120 changes, 85 decided by rules (71%), humans agreed with the AI on 42 of 45 (93%)``:
    the agreement is the calibration's (the AI's accepts and rejects a human decided; UNSURE takes
    no side).
    """
    counts, agreement = report.counts, report.calibration.agreement
    if not counts.triaged:
        return None
    line = (
        f"Triage: {_count(counts.triaged, 'change')}, {counts.decided_by_rules} decided by "
        f"rules ({_percent(counts.rules_share)})"
    )
    if not agreement.n:
        return line + ", no human decision yet on a change the AI accepted or rejected"
    return (
        line + f", humans agreed with the AI on {agreement.agreed} of {agreement.n} "
        f"({_percent(agreement.accuracy)})"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _percent(value: Number) -> str:
    return f"{value:.0%}" if isinstance(value, float) else "–"


# -------------------------------------------------------------------------------------- the command


def _markdown(report: TriageReport) -> list[str]:
    """Counts, confusion matrix, audit accuracy, calibration, safe thresholds, agreement by path."""
    from .report import fmt

    c = report.counts
    scope = f"run {report.run}" if report.run else f"{_count(len(report.runs), 'triage run')}"
    lines = [
        "# Triage: what the humans' corrections say",
        "",
        f"Scope: {scope}; triaged by {', '.join(report.judges) or 'nobody yet'}. "
        f"Target precision {report.target_precision:g}, at least "
        f"{_count(report.min_n, 'human-decided change')} per threshold.",
        "",
        "## Counts",
        "",
    ]
    lines += _table(
        [
            "changes",
            "decided by rules",
            "accepted",
            "rejected",
            "sent to humans",
            "audit sample",
            "decided by humans",
            "waiting",
            "audit waiting",
        ],
        [
            (
                c.triaged,
                f"{c.decided_by_rules} ({fmt(c.rules_share)})",
                c.accepted,
                c.rejected,
                c.sent_to_humans,
                c.audit,
                c.human_decided,
                c.waiting,
                c.audit_waiting,
            )
        ],
    )
    lines += ["", "## AI category vs human decision", ""]
    lines += _table(
        ["AI category", "human accept", "human reject", "decided"],
        [
            (f"{r.category} {r.name}", r.accept, r.reject, r.accept + r.reject)
            for r in report.confusion
        ],
    )
    a = report.audit
    lines += ["", "## Automatic decisions, checked by the audit sample", ""]
    lines += _table(
        ["rule", "audited and decided", "humans agreed", "accuracy", "95% CI (Wilson)"],
        [
            _accuracy_row(name, acc)
            for name, acc in (
                ("auto-accept", a.auto_accept),
                ("auto-reject", a.auto_reject),
                ("both", a.overall),
            )
        ],
    )
    return (
        lines
        + _markdown_calibration(report.calibration)
        + _markdown_thresholds(report)
        + _markdown_paths(report)
    )


def _table(headers: list[str], rows: Iterable[Iterable[Any]]) -> list[str]:
    from .report import table

    return table(headers, rows)


def _accuracy_row(name: str, acc: Accuracy) -> tuple[Any, ...]:
    from .report import ci, fmt

    return name, acc.n, acc.agreed, fmt(acc.accuracy), ci(acc.ci) if acc.n else "–"


def _markdown_calibration(cal: Calibration) -> list[str]:
    from .report import ci, fmt

    g = cal.agreement
    said = "The AI says accept for RECOMMEND ACCEPT and ACCEPT, reject for FAIL and RECOMMEND FAIL"
    if g.n:
        said += (
            f"; humans agreed on {g.agreed} of {g.n} ({fmt(g.accuracy)}, 95% CI {ci(g.ci)}); "
            f"{cal.unsure_left_out} UNSURE left out. Brier score {fmt(cal.brier)} (0 is perfect)."
        )
    else:
        said += f"; no human has decided such a change yet ({cal.unsure_left_out} UNSURE left out)."
    lines = ["", "## Confidence calibration", "", said, ""]
    return lines + _table(
        ["confidence", "changes", "mean confidence", "humans agreed"],
        [
            (b.label, b.n, fmt(b.mean_confidence) if b.n else "–", fmt(b.accuracy) if b.n else "–")
            for b in cal.bins
        ],
    )


def _markdown_thresholds(report: TriageReport) -> list[str]:
    from .report import ci, fmt

    lines = [
        "",
        "## Safe thresholds",
        "",
        "The smallest confidence at or above which the humans decided at least "
        f"{report.target_precision:g} of at least {_count(report.min_n, 'change')} the way the "
        "rule would, and how much it would decide without a human; then the configured threshold "
        "on the same changes.",
        "",
    ]
    rows: list[tuple[Any, ...]] = []
    for s in report.thresholds:
        cats = ", ".join(CATEGORIES[c] for c in s.categories) or "none"
        for which, at in (("suggested", s.suggested), ("configured", s.configured)):
            if isinstance(at, Undefined):
                rows.append((f"auto-{s.side}", cats, which, fmt(at), "", "", "", "", ""))
            else:
                rows.append(
                    (
                        f"auto-{s.side}",
                        cats,
                        which,
                        f"{at.threshold:g}",
                        at.n,
                        fmt(at.precision),
                        ci(at.ci) if at.n else "–",
                        fmt(at.wilson_low) if at.n else "–",
                        f"{at.automated} ({fmt(at.automates)})",
                    )
                )
    return lines + _table(
        [
            "rule",
            "categories",
            "which",
            "confidence ≥",
            "decided",
            "precision",
            "95% CI (Wilson)",
            "lower bound",
            "would automate",
        ],
        rows,
    )


def _markdown_paths(report: TriageReport) -> list[str]:
    if not report.by_path:
        return [
            "",
            "## By path",
            "",
            "No human decision on a change the AI accepted or rejected yet.",
        ]
    lines = ["", "## By path", ""]
    return lines + _table(
        ["group", "changes", "humans agreed", "accuracy", "95% CI (Wilson)"],
        [
            _accuracy_row(
                f"{'pattern' if g.kind == 'pattern' else 'folder'} {g.group}", g.agreement
            )
            for g in report.by_path
        ],
    )


def reliability_png(report: TriageReport) -> bytes:
    """The reliability curve: mean confidence (x) against the share the humans agreed with (y) per
    bin, with the diagonal."""
    from .charts import new_figure, to_png

    figure = new_figure(5.0, 5.0)
    axes = figure.add_subplot()
    axes.plot(
        [0, 1], [0, 1], color="grey", linewidth=1, linestyle="--", label="perfectly calibrated"
    )
    points = [
        (b.mean_confidence, b.accuracy, b.n)
        for b in report.calibration.bins
        if isinstance(b.mean_confidence, float) and isinstance(b.accuracy, float)
    ]
    if points:
        xs, ys, ns = zip(*points)
        axes.plot(xs, ys, marker="o", color="#4c72b0", label="observed")
        for x, y, n in points:
            right = x > 0.85
            axes.annotate(
                f"n={n}",
                (x, y),
                textcoords="offset points",
                xytext=(-5 if right else 5, -12),
                fontsize="x-small",
                ha="right" if right else "left",
            )
    brier = report.calibration.brier
    title = "Triage reliability" + (f" (Brier {brier:.3f})" if isinstance(brier, float) else "")
    axes.set(
        xlim=(-0.02, 1.02),
        ylim=(-0.02, 1.02),
        xlabel="AI confidence",
        ylabel="share the humans agreed with",
        title=title,
    )
    axes.legend(loc="upper left")
    return to_png(figure)


def _charts(report: TriageReport, inputs: Inputs) -> dict[str, Any]:
    return {"triage": lambda: reliability_png(report)}


def decisions_in(inputs: Inputs) -> pd.DataFrame:
    """The triage decisions of the store's log; issues the loader has not reported go to the
    warnings."""
    issues: list[LogIssue] = []
    decisions = read_decisions(inputs.store.ratings.path, issues)
    inputs.warnings += [text for text in map(str, issues) if text not in inputs.warnings]
    return decisions


def _digest(inputs: Inputs, runs: Sequence[str] | None) -> list[str]:
    """The digest's triage line (:func:`digest_line`) over the triage decisions of the log, of the
    ``runs`` listed (None: all); none without a decision. Bad lines are not reported again: the
    loader of ``inputs`` reported them."""
    decisions = read_decisions(inputs.store.ratings.path)
    if runs is not None:
        decisions = decisions[decisions["run_id"].isin(list(runs))]
    if not len(decisions):
        return []
    line = digest_line(triage_report(decisions, inputs.frames.ratings, inputs.config.triage))
    return [line] if line else []


@analysis(
    "triage",
    markdown=_markdown,
    charts=_charts,
    digest=_digest,
    options=[
        Option(
            "target_precision",
            float,
            0.99,
            "Share of a threshold's changes the humans must agree with",
            low=0.5,
            high=1,
        ),
        Option(
            "min_n", int, 20, "Fewest human-decided changes a threshold needs", low=1, high=10000
        ),
    ],
)
def triage_command(inputs: Inputs, *, target_precision: float, min_n: int) -> TriageReport:
    """How often the humans agree with the triage: audit accuracy, calibration, safe auto-accept/reject thresholds.

    Example: hilbot analyze triage --target-precision 0.99
    """
    if inputs.dimension is not None:
        raise AnalysisError(
            "hilbot analyze triage has no --dimension: every change is decided on the dimension "
            f"{DIMENSION!r}",
            fix="leave out --dimension (use --run to see one triage run)",
        )
    ratings = (
        inputs.frames.ratings
    )  # first: an unknown --run is an error, and the loader's warnings come first
    decisions = decisions_in(inputs)
    if inputs.run is not None and not (decisions["run_id"] == inputs.run).any():
        raise AnalysisError(
            f"run {inputs.run!r} has no triage decisions",
            fix="name a run `hilbot triage` made (it prints the id), or leave out --run",
        )
    return triage_report(
        decisions,
        ratings,
        inputs.config.triage,
        run=inputs.run,
        target_precision=target_precision,
        min_n=min_n,
    )


__all__ = [
    "Accuracy",
    "AtThreshold",
    "AuditAccuracy",
    "Calibration",
    "ConfusionRow",
    "Counts",
    "PathGroup",
    "ReliabilityBin",
    "SafeThreshold",
    "TriageReport",
    "changes_table",
    "digest_line",
    "human_decisions",
    "read_decisions",
    "reliability_png",
    "segment",
    "triage_report",
]
