"""The calibration page: does the AI judge score items as the humans do?

From ``hilbot analyze calibration --format json`` (the figures the command prints): per dimension
the confusion heatmap of the AI's category against the humans', and the AI score against the human
score per item (a scatter, jittered a little: scores sit on a scale's few options); Spearman's ρ
(with its 95% interval) and Kendall's τ per dimension, per AI metric (``--by metric``) and per
judge prompt (``--by prompt_hash``). Every chart carries the table of its figures.

The scatter's points are the items the report counts, paired as :mod:`analysis.calibration` pairs
them: each rated item's gold label (:mod:`analysis.gold`: an adjudicated consensus, else a single
label, the majority or the lower median) against its AI score (``items.ai_<metric>``, by
:func:`analysis.calibration.item_table`), items without an AI score left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence
from urllib.parse import quote

from .. import charts
from ..page import Cell, Link, Query, Section, Table, interval, page, unavailable
from ..values import bounds, cell, number

if TYPE_CHECKING:
    import pandas as pd

    from ..data import DashboardData

JITTER = 0.01
"""How far (at most, on both axes) the scatter moves each point, so equal scores do not hide each
other (the table holds the exact scores)."""
POINT_ROWS = 500
"""Points the table behind a scatter lists at most (the largest gaps; the chart draws all)."""
GROUPINGS = (("metric", "AI metric"), ("prompt_hash", "judge prompt"))
"""The groupings beyond the dimension: the calibration's ``--by`` value and what it is in words."""
CORRELATION_COLUMNS = ("statistic", "value", "95% CI", "p", "n")
"""The columns of a correlation forest plot's table, after the group's (its ``--by`` value)."""
POINT_COLUMNS = ("run", "item", "AI score", "human score", "human − AI", "metric", "judgments")
"""The columns of the scatter's table."""


@page("calibration", "Calibration", order=40)
def calibration(data: DashboardData, query: Query) -> list[Section]:
    """The summary per dimension; per dimension the confusion heatmap and the scatter; the rank
    correlations per dimension, per metric and per prompt hash."""
    report = data.report("calibration")
    if report.document is None:
        return [unavailable("Calibration", report.error)]
    document = report.document
    if not document["groups"]:  # the report of a log without ratings is empty, not an error
        unscored = document.get("unscored") or 0
        why = f"the AI scored none of the {unscored} rated items" if unscored else "no ratings yet"
        return [unavailable("Calibration", f"no item has a human and an AI score ({why})")]
    items = scored_items(data)
    sections = [_overview(document), _correlations(document, "dimension", "dimension")]
    for group in document["groups"]:
        name = str(group["key"].get("dimension"))
        sections += [
            _confusion(name, group),
            _scatter(name, group, items[items["dimension"].astype(str) == name]),
        ]
    for by, what in GROUPINGS:
        grouped = data.report("calibration", by=by)
        if grouped.document is None:
            sections.append(unavailable(f"Rank correlation by {what}", grouped.error))
        else:
            sections.append(_correlations(grouped.document, by, what))
    return sections


# ------------------------------------------------------------------------------- report values


def group_name(key: Mapping[str, Any]) -> str:
    """A group's key as a label: its values (``overall``; ``overall, 290ab7ea20c5`` for two); a
    missing one (an item without a prompt hash, say) is ``none``."""
    return ", ".join("none" if v is None else str(v) for v in key.values()) or "all"


# ------------------------------------------------------------------------------- the items


def scored_items(data: DashboardData) -> pd.DataFrame:
    """One row per rated (run, item, dimension) the AI scored, as the calibration report counts
    them: its gold label's ``human_score`` and the AI's ``ai_score`` (and ``metric``)."""
    from analysis.calibration import item_table

    frames = data.inputs.gold[0]
    table = item_table(frames.ratings, frames.items, None, data.config)
    return table[table["ai_score"].notna()].reset_index(drop=True)


def points(items: pd.DataFrame) -> pd.DataFrame:
    """The scatter's points: run, item, AI and human score, their gap, metric and judgments, the
    largest gap first (ties by run and item, as the report lists its disagreements)."""
    found = items.assign(gap=(items["human_score"] - items["ai_score"]))
    found = found.assign(distance=found["gap"].abs().round(9))  # ties despite float noise
    ordered = found.sort_values(["distance", "run_id", "item_id"], ascending=[False, True, True])
    return ordered[["run_id", "item_id", "ai_score", "human_score", "gap", "metric", "judgments"]]


# ------------------------------------------------------------------------------- the overview


def _overview_row(group: Mapping[str, Any]) -> list[Cell]:
    categories, pass_fail = group["categories"], group["pass_fail"]
    return [
        group_name(group["key"]),
        group["n"],
        cell(categories["kappa"]),
        cell(categories["weighted_kappa"]),
        cell(categories["observed"]),
        cell(pass_fail["kappa"]),
        cell(group["mean_ai"]),
        cell(group["mean_human"]),
        cell(group["mean_delta"]),
    ]


def gold_text(document: Mapping[str, Any]) -> str:
    """What the human score of an item is, with the report's gold-label counts."""
    gold = document.get("gold")
    counts = (
        f" Here: {gold['items']} items, {gold['adjudicated']} adjudicated, {gold['derived']} "
        f"derived by rule, {gold['excluded']} excluded and {gold['unresolved']} unresolved (left "
        "out)."
        if isinstance(gold, Mapping)
        else ""
    )
    return (
        "The human score of an item is its gold label: an adjudicator's consensus, else the "
        f"single label, the majority or the lower median of its ratings.{counts}"
    )


def _overview(document: Mapping[str, Any]) -> Section:
    return Section(
        "AI judge against humans",
        text=(
            "Per dimension, how the AI judge's scores track the humans', as hilbot analyze "
            f"calibration reports it. {gold_text(document)}",
            f"Rated items the AI did not score: {document['unscored']} (left out). PASS at an AI "
            f"score ≥ {document['pass_mark']}. Category: the scale's option nearest the score.",
        ),
        table=Table(
            "Agreement of AI and humans per dimension",
            [
                "dimension",
                "items",
                "κ (categories)",
                "κ (quadratic)",
                "same category",
                "κ (pass/fail)",
                "AI mean",
                "human mean",
                "human − AI",
            ],
            [_overview_row(group) for group in document["groups"]],
        ),
        commands=(
            "hilbot analyze calibration",
            "hilbot analyze calibration --by metric --format json",
        ),
        id="calibration",
    )


# ------------------------------------------------------------------------------- correlations


def correlation_rows(groups: Sequence[Mapping[str, Any]]) -> list[list[Cell]]:
    """Per group, Spearman's ρ and Kendall's τ as table rows (the group's name, ``ρ`` or ``τ``,
    value, interval, p-value, n)."""
    rows = []
    for group in groups:
        name = group_name(group["key"])
        for symbol, key in (("ρ", "spearman"), ("τ", "kendall")):
            found = group[key]
            rows.append(
                [
                    name,
                    symbol,
                    cell(found["coefficient"]),
                    interval(*bounds(found["ci"])),
                    cell(found["p_value"]),
                    found["n"],
                ]
            )
    return rows


def _correlations(document: Mapping[str, Any], by: str, what: str) -> Section:
    heading = f"Rank correlation by {what}"
    groups = document["groups"]
    if not groups:
        return Section(heading, text=("No item has both a human and an AI score.",))
    drawn = [
        (
            f"{symbol} {group_name(group['key'])}",
            number(group[key]["coefficient"]),
            *bounds(group[key]["ci"]),
        )
        for group in groups
        for symbol, key in (("ρ", "spearman"), ("τ", "kendall"))
    ]
    alt = f"Spearman's ρ and Kendall's τ of AI and human scores by {what}"
    missing = (
        " Items without one are the group none."
        if by == "prompt_hash" and any(g["key"].get(by) is None for g in groups)
        else ""
    )
    return Section(
        heading,
        text=(
            f"Per {what} (hilbot analyze calibration --by {by}): Spearman's ρ with its 95% "
            "interval (Fisher's z, Bonett–Wright SE) and Kendall's τ-b (the report gives it no "
            f"interval); both undefined under 4 items or when one side is constant.{missing}",
        ),
        chart=charts.intervals(
            drawn,
            alt=alt,
            xlabel="rank correlation (dot) and 95% interval",
            lines=[(0.0, "no correlation")],
            xlim=(-1.05, 1.05),
        ),
        table=Table(f"The figures of: {alt}", [by, *CORRELATION_COLUMNS], correlation_rows(groups)),
        commands=(f"hilbot analyze calibration --by {by}",),
    )


# ------------------------------------------------------------------------------- confusion


def confusion_of(group: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    """The group's confusion matrix on the scale's categories, or on PASS/FAIL (with why) when
    the categories have none (a group mixing scales, say)."""
    matrix = group["categories"]["confusion"]
    if isinstance(matrix, Mapping) and "labels" in matrix:
        return matrix, "categories"
    why = cell(matrix) if isinstance(matrix, Mapping) else "no categories"
    return group["pass_fail"]["confusion"], f"PASS/FAIL (no categories: {why})"


def _confusion(name: str, group: Mapping[str, Any]) -> Section:
    matrix, on = confusion_of(group)
    labels, counts = list(matrix["labels"]), matrix["counts"]
    alt = f"Items by AI category (rows) and human category (columns) on {name}"
    agreement = group["categories"] if on == "categories" else group["pass_fail"]
    return Section(
        f"Confusion: {name}",
        text=(
            f"{group['n']} items on {on}: rows the AI's category, columns the humans' (the scale's "
            "option nearest each score), lowest first; the diagonal is agreement. "
            f"Cohen's κ {_figure(agreement['kappa'])}, quadratic-weighted "
            f"{_figure(agreement['weighted_kappa'])}.",
        ),
        chart=charts.heatmap(
            counts, labels, labels, alt=alt, xlabel="human", ylabel="AI", digits=0
        ),
        table=Table(
            f"The figures of: {alt}",
            ["AI \\ human", *labels],
            [[label, *row] for label, row in zip(labels, counts)],
        ),
    )


def _figure(value: Any) -> str:
    found = number(value)
    return f"{found:.3f}" if found is not None else str(cell(value))


# ------------------------------------------------------------------------------- scatter


def _point_row(row: Any) -> list[Cell | Link]:
    run = str(row.run_id)
    return [
        Link(run, f"run/{quote(run, safe='')}"),
        str(row.item_id),
        float(row.ai_score),
        float(row.human_score),
        float(row.gap),
        str(row.metric),
        ", ".join(map(str, row.judgments)),
    ]


def _scatter(name: str, group: Mapping[str, Any], items: pd.DataFrame) -> Section:
    found = points(items)
    alt = f"AI score against human score per item on {name}"
    spearman = group["spearman"]
    return Section(
        f"AI vs human scores: {name}",
        text=(
            f"One dot per item ({len(found)}): the AI's score across, the human score (the gold "
            f"label) up; dots moved by up to {JITTER} so equal scores stay apart. Dashed: AI = "
            f"human. Spearman's ρ {_figure(spearman['coefficient'])} "
            f"{interval(*bounds(spearman['ci']))}; human − AI on average "
            f"{_figure(group['mean_delta'])}. The table lists the largest gaps first"
            + (f" (the {POINT_ROWS} largest of {len(found)})." if len(found) > POINT_ROWS else "."),
        ),
        chart=charts.scatter(
            list(zip(found["ai_score"].astype(float), found["human_score"].astype(float))),
            alt=alt,
            xlabel="AI score",
            ylabel="human score",
            jitter=JITTER,
        ),
        table=Table(
            f"The figures of: {alt}",
            POINT_COLUMNS,
            [_point_row(row) for row in found.head(POINT_ROWS).itertuples(index=False)],
        ),
    )


__all__ = [
    "CORRELATION_COLUMNS",
    "POINT_ROWS",
    "GROUPINGS",
    "JITTER",
    "POINT_COLUMNS",
    "calibration",
    "confusion_of",
    "correlation_rows",
    "gold_text",
    "group_name",
    "points",
    "scored_items",
]
