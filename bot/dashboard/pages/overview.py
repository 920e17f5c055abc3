"""The overview: every run's progress per dimension, the reviewers active, human against AI, the
latest synthesis and action items, and the regression alerts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from .. import charts
from ..page import Link, Query, Section, Table, page, unavailable

if TYPE_CHECKING:
    from analysis.digest import RunProgress

    from ..data import DashboardData

ACTIVE_DAYS = 7
"""A reviewer is active who rated within this many days of the newest rating."""


@page("overview", "Overview", order=10)
def overview(data: "DashboardData", query: Query) -> list[Section]:
    """The overview's sections."""
    from analysis.digest import run_progress

    frames = data.frames
    progress = run_progress(frames, data.config, list(frames.runs["run_id"]))
    rated = frames.ratings.groupby(["run_id", "dimension"])["item_id"].nunique().to_dict()
    sections = [_runs(progress, data.config.review.k, rated), _reviewers(frames)]
    if any(p.ratings for p in progress):
        sections.append(_human_vs_ai(progress))
    sections += [_synthesis(data), _alerts(data)]
    if data.warnings:
        sections.append(_warnings(data.warnings))
    return sections


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _runs(progress: "list[RunProgress]", k: int, rated: dict[tuple[str, str], int]) -> Section:
    """Each run and dimension: items, rated (a rating or more), complete (``k`` or more)."""
    rows = [
        (
            Link(p.run_id, "run/" + p.run_id),
            p.dimension,
            p.items,
            int(rated.get((p.run_id, p.dimension), 0)),
            p.rated_items,
            _share(p.rated_items, p.items),
            p.ratings,
            p.skips,
            p.reviewers,
            p.human_average,
            p.ai_average,
            p.ai_vs_human_delta,
        )
        for p in progress
    ]
    table = Table(
        f"Progress per run and dimension: items rated (a current rating or more) and complete "
        f"(k = {k} or more)",
        (
            "run",
            "dimension",
            "items",
            "rated",
            f"complete (k={k})",
            "share complete",
            "ratings",
            "skips",
            "reviewers",
            "human average",
            "AI average",
            "human − AI",
        ),
        rows,
    )
    if not progress:
        return Section(
            "Runs", text=("No runs yet: hilbot import FILE, or hilbot demo.",), table=table
        )
    chart = charts.bars(
        [(p.label, _share(p.rated_items, p.items)) for p in progress],
        alt=f"Share of each run's items complete (k = {k}), per dimension",
        xlabel=f"share of items with {k} or more ratings",
        xlim=(0, 1),
    )
    pairs = f"{len(progress)} run and dimension pair" + ("s" if len(progress) != 1 else "")
    runs = list(dict.fromkeys(p.run_id for p in progress))[:50]
    return Section(
        "Runs",
        text=(f"{pairs}; each run's page lists its items.",),
        chart=chart,
        table=table,
        links=[Link(run, "run/" + run) for run in runs],
    )


def _reviewers(frames: Any) -> Section:
    ratings = frames.ratings
    if ratings.empty:
        return Section("Reviewers active", text=("No ratings yet.",))
    newest = ratings["timestamp"].max()
    since = newest - timedelta(days=ACTIVE_DAYS)
    recent = ratings[ratings["timestamp"] >= since]
    counts = recent.groupby("reviewer").size().sort_values(ascending=False)
    table = Table(
        f"Ratings per reviewer in the {ACTIVE_DAYS} days up to the newest rating",
        ("reviewer", "ratings"),
        [(str(name), int(n)) for name, n in counts.head(200).items()],
    )
    text = (
        f"{counts.size} of {ratings['reviewer'].nunique()} reviewers rated in the "
        f"{ACTIVE_DAYS} days up to the newest rating ({_when(newest)}).",
    )
    return Section("Reviewers active", text=text, table=table)


def _when(moment: Any) -> str:
    stamp = moment.to_pydatetime() if hasattr(moment, "to_pydatetime") else moment
    if not isinstance(stamp, datetime):
        return "–"
    return stamp.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _human_vs_ai(progress: "list[RunProgress]") -> Section:
    scored = [p for p in progress if p.human_average is not None and p.ai_average is not None]
    table = Table(
        "Mean human score and mean AI score over the rated items",
        ("run · dimension", "human average", "AI average", "human − AI"),
        [(p.label, p.human_average, p.ai_average, p.ai_vs_human_delta) for p in scored],
    )
    chart = charts.scatter(
        [(float(p.ai_average or 0), float(p.human_average or 0)) for p in scored],
        alt="Each run and dimension: mean AI score (x) against mean human score (y)",
        xlabel="AI average",
        ylabel="human average",
    )
    text = ("Above the diagonal the humans score higher than the AI judge; below it, lower.",)
    return Section("Human vs AI", text=text, chart=chart if scored else None, table=table)


def _synthesis(data: "DashboardData") -> Section:
    stored = data.summaries()
    if not stored:
        return Section(
            "Latest synthesis",
            text=("No synthesis stored yet.",),
            commands=("hilbot analyze synthesize --run RUN",),
        )
    rows = [
        (
            run,
            dimension,
            record.synthesis or "",
            "\n".join(f"• {a}" for a in record.actionItems),
            record.synthesis_source or "statistical",
            _when(record.reviewedAt),
        )
        for (run, dimension), record in sorted(stored.items())
    ]
    table = Table(
        "The latest synthesis per run and dimension, with its action items",
        ("run", "dimension", "synthesis", "action items", "by", "when"),
        rows,
    )
    return Section(
        "Latest synthesis", table=table, commands=("hilbot analyze synthesize --run RUN",)
    )


def _alerts(data: "DashboardData") -> Section:
    report = data.report("patterns")
    if report.document is None:
        return unavailable("Regression alerts", report.error)
    window = report.document.get("window_days")
    rows = [
        (dim["dimension"], *_regression(found))
        for dim in report.document.get("dimensions", [])
        for found in dim.get("regressions", [])
    ]
    table = Table(
        f"Patterns whose success rate fell (windows of {window} days)",
        ("dimension", "pattern", "before", "after", "drop"),
        rows,
    )
    if not rows:
        text = (f"No pattern's success rate fell significantly (windows of {window} days).",)
        return Section("Regression alerts", text=text)
    return Section(
        "Regression alerts",
        text=(f"{len(rows)} regressed patterns.",),
        table=table,
        links=(Link("Drift over time on the Patterns page", "patterns"),),
    )


def _regression(found: dict[str, Any]) -> tuple[Any, ...]:
    """A regressed pattern of the patterns report: its name, success rates and drop."""
    parts = [f"{name}={found[name]}" for name in ("category", "source_type") if found.get(name)]
    earlier, recent = found.get("earlier") or {}, found.get("recent") or {}
    return (
        ", ".join(parts) or "all items",
        earlier.get("success_rate"),
        recent.get("success_rate"),
        found.get("drop"),
    )


def _warnings(warnings: list[str]) -> Section:
    return Section(
        "Warnings",
        text=(f"{len(warnings)} lines of the logs could not be read and were left out.",),
        table=Table("Unreadable lines", ("warning",), [(w,) for w in warnings[:200]]),
    )
