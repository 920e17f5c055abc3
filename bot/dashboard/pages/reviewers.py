"""The reviewers page: who rates how much, how fast, what they skip, and how often they agree with
the gold label.

Computed from the loaded frames (:class:`analysis.load.Frames`: each reviewer's current rating of
each item and dimension, and the current skips) and the items' gold labels
(:attr:`analysis.registry.Inputs.gold`). Conventions:

* **Throughput**: a reviewer's ratings, the UTC days they rated on, and ratings per such day.
* **Time per item**: a reviewer's rated items in time order (an item rated on several dimensions
  counts once, at its last rating); the gaps between consecutive items, those over
  :data:`BREAK_MINUTES` minutes taken as breaks and left out; the median of the rest. Ratings
  without a time are left out.
* **Skip reasons**: the current skips by reason (none given is a reason of its own).
* **Agreement with the gold label**: the share of a reviewer's ratings whose judgment is the
  item's gold label (:mod:`analysis.gold`), with its Wilson interval. Items with a single label
  are left out (that label is the gold label); a gold label derived by majority or median counts
  the reviewer's own vote, so only adjudicated items are an independent check (their own column).

Charts show the :data:`MAX_CHARTED` most active reviewers (most ratings first); tables list up to
:data:`MAX_ROWS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import charts
from ..page import Cell, Query, Section, Table, interval, page, unavailable

if TYPE_CHECKING:
    import pandas as pd

    from ..data import DashboardData

MAX_CHARTED = 30
"""Reviewers (or reasons) a chart shows at most: the most active."""
MAX_ROWS = 200
"""Rows a table lists at most."""
BREAK_MINUTES = 30
"""A gap between two rated items longer than this is a break, not time spent on an item."""
NO_REASON = "(none given)"
"""The skip reason of a skip that gives none."""
KEY3 = ["run_id", "item_id", "dimension"]
"""An item on a dimension: what a gold label labels."""


# ------------------------------------------------------------------------------- figures


def ranked(ratings: "pd.DataFrame") -> list[str]:
    """The reviewers, most ratings first (ties by name)."""
    counts = ratings.groupby("reviewer", sort=False).size()
    return sorted(map(str, counts.index), key=lambda r: (-int(counts[r]), r))


def throughput(ratings: "pd.DataFrame", skips: "pd.DataFrame") -> "pd.DataFrame":
    """Per reviewer: ratings, days active, ratings per active day, skips, first and last day."""
    import pandas as pd

    days = ratings["timestamp"].dt.strftime("%Y-%m-%d")
    frame = ratings.assign(day=days)
    per = frame.groupby("reviewer", sort=False).agg(
        ratings=("judgment", "size"),
        days=("day", "nunique"),
        timed=("day", "count"),
        first=("day", "min"),
        last=("day", "max"),
    )
    per["per_day"] = per["timed"] / per["days"].where(per["days"] > 0)
    skipped = skips.groupby("reviewer", sort=False).size()
    per["skips"] = skipped.reindex(per.index).fillna(0).astype(int)
    extra = skipped.index.difference(per.index)  # reviewers who only skipped
    if len(extra):
        only = pd.DataFrame(
            {"ratings": 0, "days": 0, "timed": 0, "skips": skipped[extra]}, index=extra
        )
        per = pd.concat([per, only])
    return per


def per_day(ratings: "pd.DataFrame") -> "pd.DataFrame":
    """Ratings and reviewers active per UTC day (ratings with a time)."""
    timed = ratings[ratings["timestamp"].notna()]
    frame = timed.assign(day=timed["timestamp"].dt.strftime("%Y-%m-%d"))
    return frame.groupby("day").agg(ratings=("reviewer", "size"), reviewers=("reviewer", "nunique"))


def time_per_item(ratings: "pd.DataFrame") -> "pd.DataFrame":
    """Per reviewer: gaps between consecutive rated items within :data:`BREAK_MINUTES`, their
    median in seconds, and the breaks left out (see the module docstring)."""
    import pandas as pd

    timed = ratings[ratings["timestamp"].notna()]
    items = timed.groupby(["reviewer", "run_id", "item_id"], sort=False)["timestamp"].max()
    items = items.reset_index().sort_values(["reviewer", "timestamp"], kind="stable")
    gaps = items.groupby("reviewer", sort=False)["timestamp"].diff().dt.total_seconds()
    frame = items.assign(gap=gaps)[gaps.notna()]
    kept = frame[frame["gap"] <= BREAK_MINUTES * 60]
    per = pd.DataFrame(
        {
            "gaps": kept.groupby("reviewer", sort=False).size(),
            "median": kept.groupby("reviewer", sort=False)["gap"].median(),
            "breaks": frame[frame["gap"] > BREAK_MINUTES * 60]
            .groupby("reviewer", sort=False)
            .size(),
        }
    )
    return per.fillna({"gaps": 0, "breaks": 0}).astype({"gaps": int, "breaks": int})


def skip_reasons(skips: "pd.DataFrame") -> "pd.DataFrame":
    """Skips and reviewers per reason, most frequent first."""
    reasons = skips["skip_reason"].map(lambda r: NO_REASON if r is None or r != r else str(r))
    frame = skips.assign(reason=reasons)
    per = frame.groupby("reason", sort=False).agg(
        skips=("reviewer", "size"), reviewers=("reviewer", "nunique")
    )
    per["share"] = per["skips"] / len(skips)
    return per.sort_values(["skips"], ascending=False, kind="stable")


def gold_agreement(ratings: "pd.DataFrame", gold: "pd.DataFrame") -> "pd.DataFrame":
    """Per reviewer: ratings of items with a gold label (not a single one), how many equal it, and
    the same on adjudicated items (see the module docstring)."""
    import pandas as pd

    labels = gold[gold["gold_source"] != "single"]
    labels = pd.DataFrame(
        {
            **{c: labels[c].astype(str) for c in KEY3},
            "gold": labels["judgment"].astype(object),
            "adjudicated": (labels["gold_source"] == "consensus").to_numpy(),
        }
    )
    mine = pd.DataFrame(
        {
            **{c: ratings[c].astype(str) for c in KEY3},
            "reviewer": ratings["reviewer"].astype(str),
            "judgment": ratings["judgment"].astype(object),
        }
    )
    merged = mine.merge(labels, on=KEY3, how="inner")
    merged["agree"] = (merged["judgment"] == merged["gold"]).to_numpy(bool)
    merged["adjudicated_agree"] = merged["agree"] & merged["adjudicated"]
    return (
        merged.groupby("reviewer", sort=False)
        .agg(
            n=("agree", "size"),
            agreed=("agree", "sum"),
            adjudicated=("adjudicated", "sum"),
            adjudicated_agreed=("adjudicated_agree", "sum"),
        )
        .astype(int)
    )


# ------------------------------------------------------------------------------- helpers


def number(value: Any) -> Cell:
    """A computed figure as a table cell: a plain int or float, None when missing."""
    if value is None or value != value:  # NaN
        return None
    if isinstance(value, str):
        return value
    as_float = float(value)
    return int(value) if as_float.is_integer() and not isinstance(value, float) else as_float


def ordered(index: Any, reviewers: list[str]) -> list[str]:
    """The reviewers of ``index`` in the order of ``reviewers`` (most active first), then the rest
    by name."""
    present = set(map(str, index))
    rank = [r for r in reviewers if r in present]
    return rank + sorted(present - set(rank))


def plural(n: int, noun: str) -> str:
    """``1 reviewer``, ``2 reviewers``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def cap_note(total: int, what: str) -> list[str]:
    """Lines saying the chart and the table are capped, when they are."""
    lines = []
    if total > MAX_CHARTED:
        lines.append(f"The chart shows the {MAX_CHARTED} most active of {total} {what}.")
    if total > MAX_ROWS:
        lines.append(f"The table lists the {MAX_ROWS} most active of {total} {what}.")
    return lines


# ------------------------------------------------------------------------------- sections


def throughput_section(
    ratings: "pd.DataFrame", skips: "pd.DataFrame", reviewers: list[str]
) -> Section:
    """Ratings per active day of each reviewer: bars and the table."""
    per = throughput(ratings, skips)
    names = ordered(per.index, reviewers)
    rows = [
        [
            name,
            number(per.at[name, "ratings"]),
            number(per.at[name, "days"]),
            number(per.at[name, "per_day"]),
            number(per.at[name, "skips"]),
            number(per.at[name, "first"]),
            number(per.at[name, "last"]),
        ]
        for name in names
    ]
    table = Table(
        "Ratings, active days (UTC) and ratings per active day, per reviewer, most active first",
        [
            "reviewer",
            "ratings",
            "days active",
            "ratings per active day",
            "skips",
            "first day",
            "last day",
        ],
        rows[:MAX_ROWS],
    )
    drawn = [(name, row[3]) for name, row in zip(names, rows) if row[3] is not None]
    drawn = drawn[:MAX_CHARTED]
    text = [
        f"{len(ratings)} current ratings by {plural(len(reviewers), 'reviewer')}; a day is a UTC "
        "day with at least one rating.",
        *cap_note(len(names), "reviewers"),
    ]
    if not drawn:
        return Section("Throughput", text=[*text, "No rating has a time."], table=table)
    chart = charts.bars(
        drawn,
        alt="Ratings per active day of the most active reviewers",
        xlabel="ratings per active day",
    )
    return Section("Throughput", text=text, chart=chart, table=table)


def daily_section(ratings: "pd.DataFrame") -> Section:
    """Ratings per UTC day, every reviewer together."""
    from datetime import date

    days = per_day(ratings)
    heading = "Ratings per day"
    if days.empty:
        return Section(heading, text=("No rating has a time.",))
    points = [(date.fromisoformat(d), int(n)) for d, n in days["ratings"].items()]
    chart = charts.lines(
        {"ratings": points},
        alt="Ratings per UTC day, all reviewers",
        xlabel="day (UTC)",
        ylabel="ratings",
    )
    rows = [[d, int(r["ratings"]), int(r["reviewers"])] for d, r in days.iterrows()]
    text = (
        []
        if len(rows) <= MAX_ROWS
        else [f"The table lists the latest {MAX_ROWS} of {len(rows)} days."]
    )
    table = Table(
        "Ratings and reviewers active per UTC day",
        ["day", "ratings", "reviewers"],
        rows[-MAX_ROWS:],
    )
    return Section(heading, text=text, chart=chart, table=table)


def time_section(ratings: "pd.DataFrame", reviewers: list[str]) -> Section:
    """The median time per item of each reviewer."""
    per = time_per_item(ratings)
    names = ordered(per.index, reviewers)
    rows = [
        [
            name,
            number(per.at[name, "gaps"]),
            number(per.at[name, "median"]),
            number(per.at[name, "breaks"]),
        ]
        for name in names
    ]
    text = [
        "Time per item: the median number of seconds between a reviewer's consecutive rated "
        f"items. A gap over {BREAK_MINUTES} minutes is taken as a break and left out (counted in "
        "'breaks'); an item rated on several dimensions counts once, at its last rating; ratings "
        "without a time are left out.",
        *cap_note(len(names), "reviewers"),
    ]
    table = Table(
        f"Median seconds per item (gaps of at most {BREAK_MINUTES} minutes), per reviewer",
        ["reviewer", "gaps", "median seconds", "breaks"],
        rows[:MAX_ROWS],
    )
    drawn = [(name, row[2]) for name, row in zip(names, rows) if row[2] is not None]
    drawn = drawn[:MAX_CHARTED]
    if not drawn:
        return Section(
            "Time per item",
            text=[*text, f"No reviewer rated two items within {BREAK_MINUTES} minutes."],
            table=table,
        )
    chart = charts.bars(
        drawn,
        alt="Median seconds per item of the most active reviewers",
        xlabel=f"median seconds per item (gaps over {BREAK_MINUTES} min left out)",
    )
    return Section("Time per item", text=text, chart=chart, table=table)


def skip_section(skips: "pd.DataFrame") -> Section:
    """The current skips by reason."""
    heading = "Skip reasons"
    if skips.empty:
        return Section(heading, text=("No current skip.",))
    per = skip_reasons(skips)
    reasons = [str(reason) for reason in per.index]
    counts = [int(n) for n in per["skips"]]
    rows: list[list[Cell]] = [
        [reason, n, float(part), int(who)]
        for reason, n, part, who in zip(reasons, counts, per["share"], per["reviewers"])
    ]
    text = [
        f"{plural(len(skips), 'current skip')} (a later rating of the item replaces a skip).",
        *cap_note(len(rows), "reasons"),
    ]
    chart = charts.bars(
        list(zip(reasons, counts))[:MAX_CHARTED], alt="Current skips by reason", xlabel="skips"
    )
    table = Table(
        "Current skips by reason, most frequent first",
        ["reason", "skips", "share", "reviewers"],
        rows[:MAX_ROWS],
    )
    return Section(heading, text=text, chart=chart, table=table)


def gold_rows(per: "pd.DataFrame", names: list[str]) -> list[tuple[list[Cell], Any]]:
    """One row per reviewer (n, agreed, agreement, Wilson interval, the same on adjudicated items)
    with the Wilson interval itself."""
    from analysis.stats import Interval, wilson_interval

    rows = []
    for name in names:
        n, agreed = int(per.at[name, "n"]), int(per.at[name, "agreed"])
        adjudicated = int(per.at[name, "adjudicated"])
        right = int(per.at[name, "adjudicated_agreed"])
        ci = wilson_interval(agreed, n)
        bounds = (ci.low, ci.high) if isinstance(ci, Interval) else (None, None)
        row: list[Cell] = [
            name,
            n,
            agreed,
            agreed / n if n else None,
            interval(*bounds),
            adjudicated,
            right / adjudicated if adjudicated else None,
        ]
        rows.append((row, bounds))
    return rows


def gold_section(data: "DashboardData", ratings: "pd.DataFrame", reviewers: list[str]) -> Section:
    """How often each reviewer's rating is the item's gold label."""
    heading = "Agreement with the gold label"
    frames, counts = data.inputs.gold
    per = gold_agreement(ratings, frames.ratings)
    names = ordered(per.index, reviewers)
    text = [
        counts.line(),
        "Agreement: the share of a reviewer's ratings equal to the item's gold label. Items with "
        "a single label are left out (it is its own gold label); a label derived by majority or "
        "median includes the reviewer's own vote, so the adjudicated items (their own columns) "
        "are the independent check.",
        *cap_note(len(names), "reviewers"),
    ]
    if not names:
        return Section(
            heading, text=[*text, "No item has more than one label or an adjudication yet."]
        )
    rows = gold_rows(per, names)
    table = Table(
        "Ratings equal to the gold label, per reviewer (95% Wilson interval)",
        [
            "reviewer",
            "ratings",
            "equal to gold",
            "agreement",
            "95% CI (Wilson)",
            "adjudicated",
            "agreement on adjudicated",
        ],
        [row for row, _ in rows[:MAX_ROWS]],
    )
    drawn = rows[:MAX_CHARTED]
    chart = charts.bars(
        [(str(row[0]), row[3]) for row, _ in drawn],
        errors=[bounds for _, bounds in drawn],
        alt="Agreement with the gold label of the most active reviewers, with 95% Wilson intervals",
        xlabel="share equal to the gold label (95% Wilson interval)",
        xlim=(0.0, 1.0),
    )
    return Section(heading, text=text, chart=chart, table=table)


# ------------------------------------------------------------------------------- the page


@page("reviewers", "Reviewers", order=70)
def reviewers(data: "DashboardData", query: Query) -> list[Section]:
    """Throughput, time per item, skip reasons and agreement with the gold label."""
    from evaluation.errors import HilbotError

    try:
        frames = data.frames
    except HilbotError as exc:
        return [unavailable("Reviewers", str(exc).splitlines()[0] if str(exc) else None)]
    ratings, skips = frames.ratings, frames.skips
    if ratings.empty and skips.empty:
        return [unavailable("Reviewers", "no ratings yet")]
    names = ranked(ratings)
    sections = [throughput_section(ratings, skips, names)]
    if not ratings.empty:
        sections += [daily_section(ratings), time_section(ratings, names)]
    sections.append(skip_section(skips))
    if not ratings.empty:
        sections.append(gold_section(data, ratings, names))
    return sections


__all__ = ["reviewers"]
