"""The triage report as people read it: the Markdown of ``hilbot analyze triage`` (counts, confusion
matrix, audit accuracy, calibration, safe thresholds, agreement by path), the digest's one line, and
the reliability chart; the table helpers and the chart are imported when used
(:mod:`analysis.report`, :mod:`analysis.charts`)."""

from __future__ import annotations

from typing import Any, Iterable

from ..stats import Number, Undefined
from .report import CATEGORIES, Accuracy, Calibration, TriageReport


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


def markdown_lines(report: TriageReport) -> list[str]:
    """Counts, confusion matrix, audit accuracy, calibration, safe thresholds, agreement by path."""
    from ..report import fmt

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
    from ..report import table

    return table(headers, rows)


def _accuracy_row(name: str, acc: Accuracy) -> tuple[Any, ...]:
    from ..report import ci, fmt

    return name, acc.n, acc.agreed, fmt(acc.accuracy), ci(acc.ci) if acc.n else "–"


def _markdown_calibration(cal: Calibration) -> list[str]:
    from ..report import ci, fmt

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
    from ..report import ci, fmt

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
    from ..charts import new_figure, to_png

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
