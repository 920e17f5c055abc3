"""The agreement page: do reviewers agree with each other?

Per dimension, from ``hilbot analyze agreement --format json`` (the figures the command prints):
forest plots of the agreement coefficients with their 95% intervals and the target bands'
thresholds (the κ-type coefficients, then Krippendorff's α at each level: the two families have
different bands); a heatmap of Cohen's κ between reviewer pairs (the report's pairs, of at most the
:data:`HEATMAP_REVIEWERS` most active reviewers); and the items reviewers disagree on. Then the
coefficients pooled across dimensions, when the report has them. Every chart carries the table of
its figures; each coefficient is named by its path in the JSON report (``quadratic.fleiss_kappa``,
``alpha.ordinal``), so a figure on the page is found on the command line.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any, Mapping, Sequence
from urllib.parse import quote

from .. import charts
from ..page import Cell, Link, Query, Section, Table, interval, page, slug, unavailable
from ..values import bounds, cell, number

if TYPE_CHECKING:
    from ..data import DashboardData

HEATMAP_REVIEWERS = 30
"""Reviewers the pairwise κ heatmap shows at most: the most active ones (most ratings)."""
DISAGREEMENTS = 50
"""Items in dispute listed per dimension (largest spread first, as the report orders them)."""
COMMANDS = 5
"""``hilbot adjudicate`` commands offered per dimension (one per run in dispute)."""
COEFFICIENT_COLUMNS = ("coefficient", "name", "value", "95% CI", "interval", "band", "n")
"""The columns of a forest plot's table (``interval``: bootstrap or analytic)."""
PAIR_COLUMNS = ("reviewer", "reviewer", "shared items", "Cohen's κ", "95% CI", "interval", "band")
"""The columns of the pairs' table (then the κ under the report's weights)."""

Row = tuple[str, str, Mapping[str, Any]]
"""A coefficient as a forest plot draws it: its path in the report, its name, its estimate."""


@page("agreement", "Agreement", order=30)
def agreement(data: DashboardData, query: Query) -> list[Section]:
    """Per dimension the coefficients, the reviewer pairs and the items in dispute; then the
    pooled coefficients."""
    report = data.report("agreement")
    if report.document is None:
        return [unavailable("Agreement", report.error)]
    document = report.document
    if not document["dimensions"]:  # the report of a log without ratings is empty, not an error
        return [unavailable("Agreement", "no human ratings yet")]
    weights = document["weights"]
    sections = [_overview(document)]
    for name, dimension in document["dimensions"].items():
        sections += [
            _forest_section(
                f"κ-type coefficients: {name}", kappa_rows(dimension, weights), dimension, "kappa"
            ),
            _forest_section(
                f"Krippendorff's α: {name}", alpha_rows(dimension, weights), dimension, "alpha"
            ),
            _pairs(name, dimension, document, _activity(data, name)),
            _disagreements(name, dimension),
        ]
    if document.get("across"):
        sections.append(_across(document["across"], weights))
    return sections


# ------------------------------------------------------------------------------- report values


def drawn(estimate: Mapping[str, Any]) -> tuple[tuple[Any, Any], str]:
    """The interval a chart draws for an estimate and which one it is: the percentile
    bootstrap's when there is one (as the command's summary shows), else the analytic one;
    ``(None, None)`` and ``–`` when neither is defined."""
    for key, kind in (("bootstrap_ci", "bootstrap"), ("ci", "analytic")):
        low, high = bounds(estimate.get(key))
        if low is not None and high is not None:
            return (low, high), kind
    return (None, None), "–"


def thresholds(family: str) -> list[tuple[float, str]]:
    """The target bands' thresholds of a family (``kappa`` or ``alpha``) as reference lines."""
    from analysis.stats.bands import ALPHA_BANDS, KAPPA_BANDS

    return [(cut, name) for cut, name in (ALPHA_BANDS if family == "alpha" else KAPPA_BANDS)]


def bands_text() -> str:
    """The bands in words, for a section's text."""

    def cuts(family: str) -> str:
        return ", ".join(f"≥ {cut:.2f} {name}" for cut, name in reversed(thresholds(family)))

    return (
        f"Bands: κ-type coefficients {cuts('kappa')}; Krippendorff's α {cuts('alpha')}; "
        "percent agreement has none (it is not chance-corrected)."
    )


# ------------------------------------------------------------------------------- the overview


def called_for(dimension: Mapping[str, Any]) -> str:
    """The level of α the dimension's scale calls for, as the command's summary picks it:
    nominal on two options, ordinal on three or more."""
    return "nominal" if len(dimension["categories"]) <= 2 else "ordinal"


def _overview_row(name: str, dimension: Mapping[str, Any]) -> list[Cell]:
    level = called_for(dimension)
    alpha = dimension["alpha"][level]
    (low, high), kind = drawn(alpha)
    return [
        name,
        f"alpha.{level}",
        cell(alpha.get("value")),
        interval(low, high),
        kind,
        alpha.get("band"),
        dimension["n_raters"],
        dimension["n_ratings"],
        dimension["n_items"],
        len(dimension["pairs"]),
        len(dimension["disagreements"]),
    ]


def _overview(document: Mapping[str, Any]) -> Section:
    scope = f"run {document['run']}" if document.get("run") else "all runs"
    boot = (
        f"the percentile bootstrap's over items ({document['n_boot']} replicates, seed "
        f"{document['seed']}) where the report has one, else the analytic one (Gwet's SE)"
        if document.get("n_boot")
        else "analytic (Gwet's linearised SE)"
    )
    return Section(
        "Agreement between reviewers",
        text=(
            f"Over {scope}, per dimension: the coefficient its scale calls for (Krippendorff's α, "
            "nominal on two options, ordinal on more), as hilbot analyze agreement reports it; "
            f"below, every coefficient, the reviewer pairs and the items in dispute. 95% "
            f"intervals: {boot}.",
            bands_text(),
        ),
        table=Table(
            "Agreement per dimension",
            [
                "dimension",
                "coefficient",
                "value",
                "95% CI",
                "interval",
                "band",
                "reviewers",
                "ratings",
                "items",
                "pairs",
                "items in dispute",
            ],
            [_overview_row(name, dim) for name, dim in document["dimensions"].items()],
        ),
        commands=("hilbot analyze agreement --detail", "hilbot analyze agreement --format json"),
        id="agreement",
    )


# ------------------------------------------------------------------------ coefficients: forest


def _name(key: str, weighting: str) -> str:
    from analysis.agreement import NAMES

    if key == "gwet_ac":
        name = "Gwet's AC1" if weighting == "identity" else "Gwet's AC2"
    else:
        name = NAMES.get(key, key)
    return name if weighting == "identity" else f"{name} ({weighting})"


def kappa_rows(found: Mapping[str, Any], weights: str) -> list[Row]:
    """The κ-type coefficients and percent agreement of a dimension (or of the pooled ones):
    each unweighted, then each under the report's ``weights``; Krippendorff's α is
    :func:`alpha_rows`'."""
    coefficients = found["coefficients"]
    shown_weightings = ["identity"] + ([weights] if weights != "identity" else [])
    return [
        (f"{weighting}.{key}", _name(key, weighting), estimate)
        for weighting in shown_weightings
        for key, estimate in coefficients.get(weighting, {}).items()
        if key != "krippendorff_alpha"
    ]


def alpha_rows(dimension: Mapping[str, Any], weights: str) -> list[Row]:
    """Krippendorff's α of a dimension at each level (``alpha.nominal`` is
    ``identity.krippendorff_alpha``; α under quadratic or ratio weights is ``alpha.interval`` or
    ``alpha.ratio``), and under the report's ``weights`` when that is none of those."""
    rows: list[Row] = [
        (f"alpha.{level}", f"Krippendorff's α ({level})", estimate)
        for level, estimate in dimension["alpha"].items()
    ]
    weighted = dimension["coefficients"].get(weights, {}).get("krippendorff_alpha")
    if weighted is not None and weights not in ("identity", "quadratic", "ratio"):
        rows.append(
            (f"{weights}.krippendorff_alpha", _name("krippendorff_alpha", weights), weighted)
        )
    return rows


def forest(rows: Sequence[Row], family: str, alt: str) -> tuple[charts.Chart, Table]:
    """A forest plot of ``rows`` with the ``family``'s band thresholds, and its table."""
    points, cells = [], []
    for path, name, estimate in rows:
        (low, high), kind = drawn(estimate)
        points.append((path, number(estimate.get("value")), low, high))
        cells.append(
            [
                path,
                name,
                cell(estimate.get("value")),
                interval(low, high),
                kind,
                estimate.get("band"),
                estimate.get("n_items"),
            ]
        )
    chart = charts.intervals(
        points, alt=alt, xlabel="coefficient (dot) and 95% interval", lines=thresholds(family)
    )
    return chart, Table(f"The figures of: {alt}", COEFFICIENT_COLUMNS, cells)


def _forest_section(
    heading: str, rows: Sequence[Row], dimension: Mapping[str, Any], family: str
) -> Section:
    name = dimension["dimension"]
    anchor = slug(f"{family} {name}")
    if not any(number(estimate.get("value")) is not None for _, _, estimate in rows):
        why = cell(rows[0][2].get("value")) if rows else "no coefficient"
        return Section(heading, text=(f"Nothing to draw on {name}: {why}.",), id=anchor)
    what = "κ-type coefficients" if family == "kappa" else "Krippendorff's α"
    chart, table = forest(rows, family, f"{what} of {name} with their 95% intervals")
    return Section(
        heading,
        text=(
            f"{dimension['n_ratings']} ratings of {dimension['n_items']} items by "
            f"{dimension['n_raters']} reviewers; {dimension['n_pairable']} items have 2+ "
            f"ratings. The coefficient its scale calls for: alpha.{called_for(dimension)}. "
            f"Dashed lines: the {what} bands' thresholds.",
            *(f"Note: {note}" for note in dimension.get("notes", ())),
        ),
        chart=chart,
        table=table,
        id=anchor,
    )


def _across(across: Mapping[str, Any], weights: str) -> Section:
    left = [f"Not pooled: {name} ({why})." for name, why in across.get("left_out", {}).items()]
    chart, table = forest(
        kappa_rows(across, weights), "kappa", "Agreement coefficients pooled across dimensions"
    )
    return Section(
        "Across dimensions (pooled)",
        text=(
            f"{', '.join(across['dimensions'])} on {across['n_items']} items. Each dimension keeps "
            "its own chance agreement (De Vries et al. 2008); analytic intervals only; "
            "Krippendorff's α is per dimension only. Dashed lines: the κ-type bands' thresholds.",
            *left,
        ),
        chart=chart,
        table=table,
        id="across-dimensions",
    )


# ------------------------------------------------------------------------ pairs: κ heatmap


def _activity(data: DashboardData, dimension: str) -> dict[str, int]:
    """Each reviewer's current ratings on ``dimension`` (how active they are)."""
    ratings = data.frames.ratings
    counts = ratings.loc[ratings["dimension"] == dimension, "reviewer"].value_counts()
    return {str(who): int(n) for who, n in counts.items()}


def most_active(reviewers: Sequence[str], activity: Mapping[str, int]) -> list[str]:
    """At most :data:`HEATMAP_REVIEWERS` of ``reviewers``, those with most ratings (ties by
    name), in name order."""
    ranked = sorted(reviewers, key=lambda who: (-activity.get(who, 0), who))
    return sorted(ranked[:HEATMAP_REVIEWERS])


def pair_kappa(pair: Mapping[str, Any], weighting: str = "identity") -> Mapping[str, Any]:
    """A pair's Cohen's κ estimate under ``weighting`` (the unweighted one when the pair has
    none: a two-option scale, where every weighting is the identity)."""
    coefficients = pair["coefficients"]
    return coefficients.get(weighting, coefficients["identity"])["cohen_kappa"]


def pair_matrix(
    pairs: Sequence[Mapping[str, Any]], reviewers: Sequence[str]
) -> list[list[float | None]]:
    """Cohen's κ (unweighted) of each pair of ``reviewers``, symmetric; None on the diagonal, for a
    pair the report lacks (fewer shared items than its ``min_shared``) and for an undefined κ."""
    index = {who: n for n, who in enumerate(reviewers)}
    grid: list[list[float | None]] = [[None] * len(reviewers) for _ in reviewers]
    for pair in pairs:
        a, b = index.get(pair["reviewer_a"]), index.get(pair["reviewer_b"])
        if a is not None and b is not None:
            grid[a][b] = grid[b][a] = number(pair_kappa(pair).get("value"))
    return grid


def _pair_row(pair: Mapping[str, Any], weights: str) -> list[Cell]:
    kappa = pair_kappa(pair)
    (low, high), kind = drawn(kappa)
    return [
        pair["reviewer_a"],
        pair["reviewer_b"],
        pair["n_shared"],
        cell(kappa.get("value")),
        interval(low, high),
        kind,
        kappa.get("band"),
        cell(pair_kappa(pair, weights).get("value")),
    ]


def _pairs(
    name: str,
    dimension: Mapping[str, Any],
    document: Mapping[str, Any],
    activity: Mapping[str, int],
) -> Section:
    heading = f"Reviewer pairs: {name}"
    minimum, pairs, below = (
        document["min_shared"],
        dimension["pairs"],
        dimension["pairs_below_min_shared"],
    )
    if not pairs:
        return Section(
            heading,
            text=(
                f"No two reviewers of {name} share {minimum} items or more ({below} pairs share "
                "fewer).",
            ),
        )
    everyone = dimension["reviewers"]
    reviewers = most_active(everyone, activity)
    chosen = set(reviewers)
    kept = [p for p in pairs if p["reviewer_a"] in chosen and p["reviewer_b"] in chosen]
    weights = document["weights"]
    capped = (
        f"The heatmap shows the {HEATMAP_REVIEWERS} most active of the {len(everyone)} reviewers "
        f"(most ratings on {name}); every pair is in hilbot analyze agreement --format json."
        if len(everyone) > HEATMAP_REVIEWERS
        else f"All {len(everyone)} reviewers of {name} are shown."
    )
    alt = f"Cohen's κ between reviewer pairs on {name}"
    return Section(
        heading,
        text=(
            f"Cohen's κ (unweighted) of each pair over the items both rated. {capped} A blank "
            f"cell (–): the pair shares fewer than {minimum} items ({below} pairs do) or its "
            "κ is undefined. Colours run from 0 to 1; a κ below 0 has the colour of 0.",
        ),
        chart=charts.heatmap(
            pair_matrix(kept, reviewers), reviewers, reviewers, alt=alt, limits=(0.0, 1.0)
        ),
        table=Table(
            f"The figures of: {alt}",
            [*PAIR_COLUMNS, f"κ ({weights})"],
            [_pair_row(p, weights) for p in kept],
        ),
    )


# ------------------------------------------------------------------------ the items in dispute


def _disagreement_row(item: Mapping[str, Any]) -> list[Cell | Link]:
    ratings = "; ".join(f"{who}: {judgment}" for who, judgment, _ in item["ratings"])
    run = str(item["run_id"])
    return [
        Link(run, f"run/{quote(run, safe='')}"),
        str(item["item_id"]),
        item["spread"],
        item["n_raters"],
        ratings,
    ]


def _disagreements(name: str, dimension: Mapping[str, Any]) -> Section:
    heading = f"Items in dispute: {name}"
    items = dimension["disagreements"]
    if not items:
        return Section(heading, text=(f"The reviewers of {name} agree on every item.",))
    more = (
        f" The {DISAGREEMENTS} with the largest spread are listed; all in hilbot analyze "
        "agreement --format json."
        if len(items) > DISAGREEMENTS
        else ""
    )
    runs = list(dict.fromkeys(str(item["run_id"]) for item in items))[:COMMANDS]
    return Section(
        heading,
        text=(
            f"{len(items)} items whose reviewers gave different judgments, the largest spread "
            f"(highest minus lowest score) first.{more}",
        ),
        table=Table(
            f"Items reviewers disagree on, {name}",
            ["run", "item", "spread", "reviewers", "ratings"],
            [_disagreement_row(item) for item in items[:DISAGREEMENTS]],
        ),
        commands=[
            f"hilbot adjudicate {shlex.quote(run)} --dimension {shlex.quote(name)}" for run in runs
        ],
    )


__all__ = [
    "COEFFICIENT_COLUMNS",
    "DISAGREEMENTS",
    "HEATMAP_REVIEWERS",
    "PAIR_COLUMNS",
    "agreement",
    "alpha_rows",
    "bands_text",
    "called_for",
    "drawn",
    "forest",
    "kappa_rows",
    "most_active",
    "pair_kappa",
    "pair_matrix",
    "thresholds",
]
