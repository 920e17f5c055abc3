"""The patterns page: where the ratings are good and where they are not.

Three parts, each from an analysis's JSON report exactly as ``hilbot analyze … --format json``
prints it:

* **success rate by feature bucket** (``correlate --feature NAME``, one per configured or available
  item feature): bars with their Wilson intervals, the monotonicity verdict, its breaks and
  Spearman's ρ;
* **concern counts** per dimension (``patterns``): how many ratings carry each tag;
* **drift** per dimension (``patterns``): the success rate per window, with the regressed
  (category, source type) patterns drawn from their earlier to their recent window and ringed.

Both analyses read gold labels (one per item and dimension), so the figures count items rather than
every reviewer's rating; a line says so when the gold labels differ from the ratings.
"""

from __future__ import annotations

import shlex
from datetime import datetime
from typing import TYPE_CHECKING, Any, Sequence

from .. import charts
from ..page import Cell, Query, Section, Table, page, unavailable
from ..values import bounds, cell, number, span

if TYPE_CHECKING:
    from ..data import DashboardData

MAX_BARS = 30
"""Bars a chart draws at most (the table lists more)."""
MAX_ROWS = 200
"""Rows a table lists at most."""
MAX_FEATURES = 12
"""Features the page shows at most (configured ones first)."""
MAX_DIMENSIONS = 12
"""Dimensions whose concerns and drift the page shows at most."""
MAX_REGRESSIONS_DRAWN = 6
"""Regressed patterns drawn on a drift chart (each is a line of its own; the table lists all)."""
OVERALL = "all ratings"
"""The drift chart's series of every rating of the dimension."""


# ------------------------------------------------------------------------------- report values


def when(text: str) -> datetime:
    """A report's ISO 8601 time."""
    return datetime.fromisoformat(text)


def day(text: str) -> str:
    """A report's ISO 8601 time as its date."""
    return text[:10]


def capped(rows: Sequence[Any], limit: int, what: str) -> tuple[list[Any], list[str]]:
    """The first ``limit`` of ``rows`` and a line saying how many more there are, if any."""
    if len(rows) <= limit:
        return list(rows), []
    return list(rows[:limit]), [f"Showing the first {limit} of {len(rows)} {what}."]


def gold_line(document: dict[str, Any]) -> list[str]:
    """A line on the gold labels the report counts, when they differ from the ratings."""
    gold = document.get("gold")
    if not isinstance(gold, dict):
        return []
    return [
        f"Counted on gold labels, one per item: {gold.get('items')} items — "
        f"{gold.get('adjudicated')} adjudicated, {gold.get('derived')} derived by rule; "
        f"{gold.get('excluded')} excluded and {gold.get('unresolved')} unresolved, left out."
    ]


# ------------------------------------------------------------------------------- feature buckets


def feature_names(data: "DashboardData") -> list[str]:
    """The features to show: the configured ones, then the items' ``feature_*`` columns."""
    from evaluation.errors import HilbotError

    try:
        columns = list(data.frames.items.columns)
    except HilbotError:
        columns = []
    found = [c.removeprefix("feature_") for c in columns if c.startswith("feature_")]
    return list(dict.fromkeys([*data.config.features, *found]))


def verdict(monotonicity: dict[str, Any]) -> str:
    """``monotonic``, ``not monotonic`` or why it is undefined."""
    value = monotonicity.get("monotonic")
    if value is True:
        return "monotonic"
    return "not monotonic" if value is False else str(cell(value))


def monotonicity_lines(document: dict[str, Any]) -> list[str]:
    """The verdict, each break and Spearman's ρ, as lines."""
    m, feature = document["monotonicity"], document["feature"]
    lines = [
        f"Expectation: success {m['expect']} as {feature} grows — {verdict(m)}; last bucket "
        f"against the first as expected: {cell(m['ends_as_expected'])}."
    ]
    lines += [
        f"Break: {b['lower']} → {b['upper']}: {b['lower_rate']:.3f} → {b['upper_rate']:.3f} "
        f"({'beyond' if b['beyond_ci'] else 'within'} the Wilson intervals)"
        for b in m["breaks"]
    ]
    s = document["spearman"]
    coefficient = number(s["coefficient"])
    rho = f"{coefficient:.3f}" if coefficient is not None else cell(s["coefficient"])
    lines.append(
        f"Spearman ρ ({feature} against the item's mean human score): {rho}, 95% CI "
        f"{span(s['ci'])}, n = {s['n']} items."
    )
    return lines


def feature_section(document: dict[str, Any]) -> Section:
    """Success rate per bucket of one feature: bars with Wilson whiskers, and the table."""
    feature, buckets = document["feature"], document["buckets"]
    drawn, cut = capped(buckets, MAX_BARS, "buckets in the chart")
    chart = charts.bars(
        [(b["label"], b["success_rate"]) for b in drawn],
        errors=[bounds(b["ci"]) for b in drawn],
        alt=f"Success rate by bucket of {feature}, with 95% Wilson intervals",
        xlabel="success rate (95% Wilson interval)",
        xlim=(0.0, 1.0),
    )
    listed, more = capped(buckets, MAX_ROWS, "buckets in the table")
    rows = [
        [
            b["label"],
            b["n"],
            b["n_items"],
            b["successes"],
            cell(b["success_rate"]),
            span(b["ci"]),
            cell(b["mean_score"]),
        ]
        for b in listed
    ]
    text = [
        f"{document['n_ratings']} ratings on {', '.join(document['dimensions'])} (pooled); "
        f"buckets: {document['bucketing']}; {document['missing_feature']} without the feature, "
        f"{document['outside_buckets']} outside the buckets.",
        *monotonicity_lines(document),
        *gold_line(document),
        *cut,
        *more,
    ]
    from analysis.correlate import BUCKET_COLUMNS

    table = Table(f"Success rate by bucket of {feature}", BUCKET_COLUMNS, rows)
    return Section(
        f"Success by {feature}",
        text=text,
        chart=chart,
        table=table,
        commands=[f"hilbot analyze correlate --feature {shlex.quote(feature)}"],
    )


def feature_sections(data: "DashboardData") -> list[Section]:
    """One section per feature with rated items, then a line on the features left out."""
    names = feature_names(data)
    shown, left = names[:MAX_FEATURES], names[MAX_FEATURES:]
    sections, skipped = [], []
    for name in shown:
        report = data.report("correlate", feature=name)
        if report.document is None:
            skipped.append(f"{name}: {report.error or 'no report'}")
        elif not report.document.get("n_ratings"):
            skipped.append(f"{name}: no rated item has it")
        else:
            sections.append(feature_section(report.document))
    notes = [f"Not shown — {line}" for line in skipped]
    if left:
        notes.append(
            f"{len(left)} more features not shown (at most {MAX_FEATURES}): " + ", ".join(left)
        )
    if not names:
        return [unavailable("Success by feature", "no item has features")]
    if notes:
        sections.append(Section("Other features", text=notes))
    return sections


# ------------------------------------------------------------------------------- concerns


def concern_section(dim: dict[str, Any], document: dict[str, Any]) -> Section:
    """How many of one dimension's ratings carry each concern tag."""
    name, tags = dim["dimension"], dim["by_concern"]
    heading = f"Concerns: {name}"
    if not tags:
        return Section(heading, text=("No concern tag is offered or used on this dimension.",))
    listed, more = capped(tags, MAX_ROWS, "tags in the table")
    table = Table(
        f"Ratings of {name} carrying each concern tag",
        ["tag", "ratings", "share", "mean score", "success rate"],
        [
            [t["tag"], t["count"], cell(t["share"]), cell(t["mean_score"]), cell(t["success_rate"])]
            for t in listed
        ],
    )
    text = [f"{dim['n']} ratings of {name}; most frequent tags first.", *gold_line(document), *more]
    if not any(t["count"] for t in tags):
        return Section(heading, text=[*text, "No rating carries a tag yet."], table=table)
    drawn, cut = capped(tags, MAX_BARS, "tags in the chart")
    chart = charts.bars(
        [(t["tag"], t["count"]) for t in drawn],
        alt=f"Ratings of {name} carrying each concern tag",
        xlabel="ratings carrying the tag",
    )
    return Section(heading, text=[*text, *cut], chart=chart, table=table)


# ------------------------------------------------------------------------------- drift


def pattern_name(regression: dict[str, Any]) -> str:
    """A regressed pattern as a series name: ``category=…, source_type=…``."""
    return f"category={regression['category']}, source_type={regression['source_type']}"


def window_row(series: str, window: dict[str, Any], marked: str = "") -> list[Cell]:
    """One window of a series as a row of the drift table."""
    return [
        series,
        day(window["start"]),
        day(window["end"]),
        window["n"],
        cell(window["success_rate"]),
        span(window["ci"]),
        cell(window["mean_score"]),
        marked,
    ]


def drift_series(dim: dict[str, Any]) -> tuple[dict[str, Sequence[tuple[Any, Any]]], list[Any]]:
    """The drift chart's series (every rating, then each regressed pattern drawn from its earlier
    to its recent window) and the ringed points (each regression's recent window)."""
    series: dict[str, Sequence[tuple[Any, Any]]] = {
        OVERALL: [
            (when(w["start"]), w["success_rate"])
            for w in dim["drift"]
            if number(w["success_rate"]) is not None
        ]
    }
    marked = []
    for r in dim["regressions"][:MAX_REGRESSIONS_DRAWN]:
        earlier, recent = r["earlier"], r["recent"]
        series[pattern_name(r)] = [
            (when(earlier["start"]), earlier["success_rate"]),
            (when(recent["start"]), recent["success_rate"]),
        ]
        marked.append((when(recent["start"]), recent["success_rate"]))
    return series, marked


def drift_rows(dim: dict[str, Any]) -> tuple[list[list[Cell]], list[str]]:
    """The drift table: each regressed pattern's two windows first, then the latest windows of
    every rating (at most :data:`MAX_ROWS` rows in all)."""
    rows = []
    for r in dim["regressions"][: MAX_ROWS // 4]:
        rows.append(window_row(pattern_name(r), r["earlier"], "earlier"))
        rows.append(window_row(pattern_name(r), r["recent"], "regressed"))
    windows = dim["drift"]
    room = MAX_ROWS - len(rows)
    notes = []
    if len(dim["regressions"]) > MAX_ROWS // 4:
        notes.append(
            f"The table lists the first {MAX_ROWS // 4} of {len(dim['regressions'])} "
            "regressed patterns."
        )
    if len(windows) > room:
        notes.append(f"The table lists the latest {room} of {len(windows)} windows.")
        windows = windows[-room:]
    return rows + [window_row(OVERALL, w) for w in windows], notes


def regression_lines(dim: dict[str, Any], document: dict[str, Any]) -> list[str]:
    """What counts as a regression, how many were found, and each one."""
    found = dim["regressions"]
    lines = [
        f"{len(found)} regressed of {dim['groups_checked']} (category, source type) patterns "
        f"checked: a success-rate drop of at least {document['min_drop']:g} between the first and "
        f"the last {document['window_days']}-day window with {document['min_ratings']} or more "
        "ratings, the Wilson intervals apart. Regressed patterns are ringed at their recent window."
    ]
    lines += [
        f"Regressed: {pattern_name(r)}: {r['earlier']['success_rate']:.3f} "
        f"({day(r['earlier']['start'])}, n = {r['earlier']['n']}) → "
        f"{r['recent']['success_rate']:.3f} ({day(r['recent']['start'])}, n = {r['recent']['n']}),"
        f" a drop of {r['drop']:.3f}"
        for r in found[:MAX_REGRESSIONS_DRAWN]
    ]
    if len(found) > MAX_REGRESSIONS_DRAWN:
        lines.append(f"The chart draws the {MAX_REGRESSIONS_DRAWN} largest drops of {len(found)}.")
    return lines


def drift_section(dim: dict[str, Any], document: dict[str, Any]) -> Section:
    """One dimension's success rate per window, the regressed patterns marked."""
    name = dim["dimension"]
    heading = f"Drift: {name}"
    if not dim["drift"]:
        return Section(heading, text=("No rating of this dimension has a time.",))
    rows, notes = drift_rows(dim)
    series, marked = drift_series(dim)
    chart = charts.lines(
        series,
        alt=f"Success rate of {name} per {document['window_days']}-day window, regressed "
        "patterns ringed",
        xlabel="window start",
        ylabel="success rate",
        marked=marked,
        ylim=(0, 1),
    )
    table = Table(
        f"Success rate of {name} per window; regressed patterns' windows first",
        ["series", "from", "to", "ratings", "success rate", "95% CI", "mean score", "marked"],
        rows,
    )
    text = [*regression_lines(dim, document), *gold_line(document), *notes]
    return Section(
        heading,
        text=text,
        chart=chart,
        table=table,
        commands=[f"hilbot analyze patterns --window-days {document['window_days']}"],
    )


# ------------------------------------------------------------------------------- the page


def dimension_sections(document: dict[str, Any]) -> list[Section]:
    """Concerns and drift of each dimension of the patterns report."""
    dims = document["dimensions"]
    sections = []
    for dim in dims[:MAX_DIMENSIONS]:
        sections += [concern_section(dim, document), drift_section(dim, document)]
    if len(dims) > MAX_DIMENSIONS:
        left = ", ".join(d["dimension"] for d in dims[MAX_DIMENSIONS:])
        sections.append(
            Section(
                "Other dimensions",
                text=(
                    f"{len(dims) - MAX_DIMENSIONS} more dimensions not shown (at most "
                    f"{MAX_DIMENSIONS}): {left}",
                ),
            )
        )
    return sections


@page("patterns", "Patterns", order=50)
def patterns(data: "DashboardData", query: Query) -> list[Section]:
    """Success by feature bucket with the monotonicity verdict, concern counts, and drift with the
    regressed patterns marked."""
    report = data.report("patterns")
    document = report.document
    if document is None or not document.get("dimensions"):
        return [unavailable("Patterns", report.error or "no ratings yet")]
    return [*feature_sections(data), *dimension_sections(document)]


__all__ = ["patterns"]
