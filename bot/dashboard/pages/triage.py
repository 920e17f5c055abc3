"""The triage page: how far ``hilbot triage``'s AI and rules can be trusted, from the humans'
corrections.

Everything comes from ``hilbot analyze triage --format json`` (:mod:`analysis.triage`): the AI's
category against the human decision (a heatmap), the reliability curve (the AI's confidence
against how often the humans agreed, with the diagonal of perfect calibration), the safe
thresholds beside the configured ones (``[triage]`` in ``hilbot.toml``), and the agreement by
path pattern and by first path segment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import charts
from ..page import Cell, Query, Section, Table, page, unavailable
from ..values import bounds, cell, span

if TYPE_CHECKING:
    from ..data import DashboardData

MAX_BARS = 30
"""Bars a chart draws at most (the table lists more)."""
MAX_ROWS = 200
"""Rows a table lists at most."""
COMMAND = "hilbot analyze triage"
"""The command whose report the page shows."""


# ------------------------------------------------------------------------------- report values


def share(value: Any) -> str:
    """A share for a sentence: ``0.933``, or why it is undefined."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.3f}"
    return str(cell(value))


def accuracy_row(name: str, accuracy: dict[str, Any]) -> list[Cell]:
    """An accuracy (n, agreed, share, Wilson interval) as a table row named ``name``."""
    return [
        name,
        accuracy["n"],
        accuracy["agreed"],
        cell(accuracy["accuracy"]),
        span(accuracy["ci"]),
    ]


# ------------------------------------------------------------------------------- sections


def summary_section(document: dict[str, Any]) -> Section:
    """The counts and the audit sample's accuracy."""
    c = document["counts"]
    runs, judges = document["runs"], document["judges"]
    text = [
        f"{c['triaged']} changes in {len(runs)} triage run(s), triaged by "
        f"{', '.join(judges) or 'nobody yet'}: {c['decided_by_rules']} decided by rules "
        f"({c['accepted']} accepted, {c['rejected']} rejected; share {share(c['rules_share'])}), "
        f"{c['sent_to_humans']} sent to humans.",
        f"{c['human_decided']} changes have a human decision; {c['waiting']} wait for one, and "
        f"{c['audit_waiting']} of the {c['audit']} audited automatic decisions are not checked "
        "yet.",
        "The audit sample: automatic decisions also sent to humans, blind. The table says how "
        "often the humans agreed with the rule.",
    ]
    audit = document["audit"]
    table = Table(
        "Audited automatic decisions the humans agreed with (95% Wilson interval)",
        ["rule", "checked", "agreed", "agreement", "95% CI (Wilson)"],
        [
            accuracy_row("both", audit["overall"]),
            accuracy_row("auto-accept", audit["auto_accept"]),
            accuracy_row("auto-reject", audit["auto_reject"]),
        ],
    )
    return Section("Triage", text=text, table=table, commands=[COMMAND])


def confusion_section(document: dict[str, Any]) -> Section:
    """The AI's category against the human decision: a heatmap of counts and its table."""
    confusion = document["confusion"]
    names = [f"{r['category']} {r['name']}" for r in confusion]
    chart = charts.heatmap(
        [[r["accept"], r["reject"]] for r in confusion],
        names,
        ["human accept", "human reject"],
        alt="Human-decided changes by the AI's category and the human decision",
        xlabel="human decision",
        ylabel="AI category",
        digits=0,
    )
    table = Table(
        "Human-decided changes by the AI's category (rows) and the human decision",
        ["category", "name", "human accept", "human reject", "decided"],
        [
            [r["category"], r["name"], r["accept"], r["reject"], r["accept"] + r["reject"]]
            for r in confusion
        ],
    )
    text = [
        "Over the changes with a human decision. The AI says accept at 4 and 5, reject at 1 "
        "and 2; UNSURE (3) takes no side."
    ]
    return Section("AI category × human decision", text=text, chart=chart, table=table)


def reliability_section(document: dict[str, Any]) -> Section:
    """The reliability curve: each confidence bin's mean confidence against its agreement."""
    calibration = document["calibration"]
    bins, agreement = calibration["bins"], calibration["agreement"]
    table = Table(
        "Changes per confidence bin: mean confidence and the share the humans agreed with",
        ["bin", "changes", "mean confidence", "agreement"],
        [[b["label"], b["n"], cell(b["mean_confidence"]), cell(b["accuracy"])] for b in bins],
    )
    text = [
        f"Humans agreed with the AI on {agreement['agreed']} of {agreement['n']} changes it took a "
        f"side on: {share(agreement['accuracy'])}, 95% CI {span(agreement['ci'])}. Brier score "
        f"{share(calibration['brier'])} (0 is perfect). {calibration['unsure_left_out']} UNSURE "
        "changes left out.",
        "A well-calibrated AI lies on the dashed diagonal; below it, it is overconfident.",
    ]
    points = [(b["mean_confidence"], b["accuracy"]) for b in bins if b["n"]]
    if not points:
        return Section(
            "Reliability curve", text=[*text, "No bin has a human-decided change."], table=table
        )
    chart = charts.lines(
        {"AI": points},
        alt="The AI's mean confidence per bin against the share the humans agreed with",
        xlabel="mean confidence",
        ylabel="share the humans agreed with",
        diagonal=True,
    )
    return Section("Reliability curve", text=text, chart=chart, table=table)


def threshold_rows(threshold: dict[str, Any]) -> list[list[Cell]]:
    """One side's suggested (safe) and configured thresholds as table rows."""
    side, rows = threshold["side"], []
    for which, at in (("safe", threshold["suggested"]), ("configured", threshold["configured"])):
        if "undefined" in at:
            rows.append([side, which, cell(at), None, None, None, "–", None, None])
            continue
        rows.append(
            [
                side,
                which,
                at["threshold"],
                at["n"],
                at["agreed"],
                cell(at["precision"]),
                span(at["ci"]),
                at["automated"],
                cell(at["automates"]),
            ]
        )
    return rows


def configured_line(data: "DashboardData", document: dict[str, Any]) -> str:
    """The thresholds and categories ``[triage]`` in ``hilbot.toml`` configures."""
    triage = data.config.triage
    names = {r["category"]: r["name"] for r in document["confusion"]}

    def listed(categories: list[int]) -> str:
        return ", ".join(f"{c} {names.get(c, '')}".strip() for c in categories) or "none"

    return (
        f"Configured ([triage] in hilbot.toml): auto_accept_threshold = "
        f"{triage.auto_accept_threshold:g} on {listed(triage.auto_accept_categories)}; "
        f"auto_reject_threshold = {triage.auto_reject_threshold:g} on "
        f"{listed(triage.auto_reject_categories)}."
    )


def threshold_section(data: "DashboardData", document: dict[str, Any]) -> Section:
    """The smallest safe threshold of each rule beside the configured one, on the same data."""
    thresholds = document["thresholds"]
    rows = [row for t in thresholds for row in threshold_rows(t)]
    text = [
        f"Safe: the smallest confidence at which the humans agreed with at least "
        f"{document['target_precision']:g} of the changes, over {document['min_n']} or more "
        "human-decided changes of the rule's categories. The Wilson interval's lower bound is the "
        "cautious figure; 'automates' is the share of all triaged changes the threshold would "
        "decide without a human.",
        configured_line(data, document),
        "Above a configured threshold the humans see only the audit sample, so its figures are "
        "only as good as that sample is large.",
    ]
    table = Table(
        "Safe and configured thresholds, measured on the human-decided changes",
        [
            "rule",
            "threshold",
            "confidence",
            "decided at or above",
            "agreed",
            "precision",
            "95% CI (Wilson)",
            "automated",
            "automates",
        ],
        rows,
    )
    return Section(
        "Thresholds",
        text=text,
        table=table,
        commands=[f"{COMMAND} --target-precision {document['target_precision']:g}"],
    )


def path_groups(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The path groups: the ``require_human`` patterns in configuration order, then the first path
    segments, most decided first."""
    groups = document["by_path"]
    patterns = [g for g in groups if g["kind"] == "pattern"]
    segments = [g for g in groups if g["kind"] != "pattern"]
    segments.sort(key=lambda g: (-g["agreement"]["n"], str(g["group"])))
    return patterns + segments


def path_section(document: dict[str, Any]) -> Section:
    """Agreement with the AI by path pattern and by first path segment."""
    groups = path_groups(document)
    heading = "Accuracy by pattern"
    if not groups:
        return Section(heading, text=("No human-decided change the AI took a side on yet.",))
    listed = groups[:MAX_ROWS]
    table = Table(
        "Changes the humans agreed with the AI on, by path group (95% Wilson interval)",
        ["kind", "group", "decided", "agreed", "agreement", "95% CI (Wilson)"],
        [[g["kind"], *accuracy_row(g["group"], g["agreement"])] for g in listed],
    )
    text = [
        "Patterns are [triage] require_human's (every one listed, matched or not); segments "
        "are the first part of each change's path. UNSURE changes are left out."
    ]
    if len(groups) > MAX_ROWS:
        text.append(f"The table lists {MAX_ROWS} of {len(groups)} groups.")
    drawn = [g for g in groups if g["agreement"]["n"]]
    if not drawn:
        return Section(heading, text=[*text, "No group has a human decision yet."], table=table)
    if len(drawn) > MAX_BARS:
        text.append(
            f"The chart draws the {MAX_BARS} groups listed first of {len(drawn)} with decisions."
        )
        drawn = drawn[:MAX_BARS]
    chart = charts.bars(
        [(g["group"], g["agreement"]["accuracy"]) for g in drawn],
        errors=[bounds(g["agreement"]["ci"]) for g in drawn],
        alt="Agreement with the AI by path group, with 95% Wilson intervals",
        xlabel="share the humans agreed with (95% Wilson interval)",
        xlim=(0.0, 1.0),
    )
    return Section(heading, text=text, chart=chart, table=table)


# ------------------------------------------------------------------------------- the page


@page("triage", "Triage", order=60)
def triage(data: "DashboardData", query: Query) -> list[Section]:
    """The AI's category against the human decision, the reliability curve, the safe thresholds
    beside the configured ones, and the agreement by path."""
    report = data.report("triage")
    document = report.document
    if document is None:
        return [unavailable("Triage", report.error)]
    if not document["counts"]["triaged"]:
        return [unavailable("Triage", "no triage decisions yet (hilbot triage makes them)")]
    return [
        summary_section(document),
        confusion_section(document),
        reliability_section(document),
        threshold_section(data, document),
        path_section(document),
    ]


__all__ = ["triage"]
