"""Computing the triage report: :func:`triage_report` turns what was decided on each change into a
:class:`~analysis.triage.report.TriageReport` that says how often the AI and its rules are right.

``hilbot triage`` appends one ``triage_decision`` record per change to the ratings log (accepted or
rejected by a rule, or sent to humans; an automatic decision may also be in the blind audit sample)
and deals the changes humans see as the items of a run of kind ``change``, whose ratings on the
dimension ``change`` (``accept`` / ``reject``) are the humans' decisions;
:mod:`analysis.triage.decisions` reads both (its docstring says how). This module says how far the
AI can be trusted. Conventions:

* **The scope** is every triage run in the log, or the one ``--run`` names; over every run, a
  change triaged again counts once, at its latest triage
  (:func:`analysis.triage.decisions.latest_triages`).
* **Counts**: *decided by rules* = accepted + rejected by a rule; *sent to humans* = outcome
  ``human``; *audit* = automatic decisions also sent to humans; *decided by humans* = changes with a
  human decision; *waiting* = changes sent to humans without one (audit changes not yet checked are
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
  the observed accuracy (Undefined when empty). **Brier score** = mean over those changes of
  (confidence − correct)², correct being 1 or 0; 0 is perfect, 0.25 is a coin at confidence 0.5.
* **Safe thresholds**, for auto-accept (the categories of ``[triage] auto_accept_categories``) and
  auto-reject (``auto_reject_categories``) apart: over the human-decided changes of those
  categories, for each distinct confidence t, precision(t) = share of those with confidence ≥ t the
  human decided the same way (accept, or reject). The suggested threshold is the smallest t with
  precision ≥ ``target_precision`` and at least ``min_n`` such changes, given with its Wilson
  interval (its lower bound is the cautious figure) and how much it would automate: the share of
  *all* triaged changes in scope whose category is in the set and whose confidence ≥ t. The
  configured threshold is measured the same way on the same data. The human-decided changes above a
  configured threshold are only its audit sample (the rule decided the rest), so a threshold's
  figures are only as good as that sample is large.
* **By path**: agreement as above, grouped by each ``[triage] require_human`` pattern the path
  matches (:func:`evaluation.changes.path_matches`; every configured pattern is listed, matched or
  not) and by the first segment of the path (``test/api/x.md`` → ``test``; a path without
  ``/`` → ``(top level)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Sequence

import numpy as np
import pandas as pd

from evaluation.changes import path_matches

from ..errors import AnalysisError
from ..stats import Interval, Undefined, wilson_interval
from .decisions import changes_table
from .report import (
    CATEGORIES,
    Accuracy,
    AtThreshold,
    AuditAccuracy,
    Calibration,
    ConfusionRow,
    Counts,
    PathGroup,
    ReliabilityBin,
    SafeThreshold,
    TriageReport,
)

if TYPE_CHECKING:
    from evaluation.config import TriageSettings

BIN_EDGES = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The reliability curve's bins: [0, 0.5), [0.5, 0.6) … [0.9, 1.0]."""
TOP_LEVEL = "(top level)"
"""The first segment of a path without ``/``."""


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


def _runs(decisions: pd.DataFrame, run: str | None) -> tuple[str, ...]:
    """The triage runs in scope, in log order (also one whose changes were all triaged again)."""
    scoped = decisions if run is None else decisions[decisions["run_id"] == run]
    return tuple(dict.fromkeys(scoped["run_id"]))


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
        runs=_runs(decisions, run),
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
