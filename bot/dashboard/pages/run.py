"""One run: its items (sortable by AI score, human score, disagreement and confidence; filtered by
category or concern), each item's card as the reviewer saw it with its ratings after the fact and
its adjudication, and the commands that review or adjudicate it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from ..page import Link, Query, Section, Table, page

if TYPE_CHECKING:
    import pandas as pd

    from ..data import DashboardData

SORTS = {
    "item": ("item_id", False),
    "ai": ("ai", True),
    "human": ("human", True),
    "disagreement": ("disagreement", True),
    "confidence": ("confidence", False),
}
"""``?sort=`` → (column, highest first): confidence lowest first (the least sure first)."""
CARDS = 100
"""Cards shown with their ratings (the first in the chosen order); the items table lists all."""
ROWS = 2000
"""Rows of the items table at most."""
LIMITS = {"rows": ROWS, "cards": CARDS}
"""``?rows=`` and ``?cards=`` show fewer (the static report does, to stay small to post)."""


@page("run", "Run", order=20, nav=False)
def run(data: "DashboardData", query: Query) -> list[Section]:
    """A run's sections (``query["run"]`` names it; the first run when it is not given)."""
    frames = data.frames
    runs = list(frames.runs["run_id"])
    run_id = query.get("run") or (runs[0] if runs else "")
    if run_id not in runs:
        return [
            Section(
                "Run not found",
                text=(f"There is no run {run_id!r} in the data dir.",),
                links=tuple(Link(r, "run/" + r) for r in runs[:50]),
            )
        ]
    header = frames.runs[frames.runs["run_id"] == run_id].iloc[0]
    dimensions = [d for d in str(header["dimensions"]).split(",") if d] or ["overall"]
    asked = query.get("dimension", "")
    dimension = asked if asked in dimensions else dimensions[0]
    items = _items(data, run_id, dimension)
    chosen = _filtered(items, query)
    chosen = _sorted(chosen, query.get("sort", "item"))
    rows, cards = (_limit(query.get(name), most) for name, most in LIMITS.items())
    return [
        _items_section(run_id, dimension, dimensions, items, chosen, query, rows),
        _cards_section(data, run_id, dimension, chosen.head(cards)),
        _commands(run_id),
    ]


def _limit(asked: str | None, most: int) -> int:
    """A ``?rows=``/``?cards=`` value within 1 and ``most`` (``most`` when absent or not a
    number)."""
    try:
        return max(1, min(int(asked or most), most))
    except ValueError:
        return most


def _items(data: "DashboardData", run_id: str, dimension: str) -> "pd.DataFrame":
    """One row per item of the run: its AI score, human mean, ratings, disagreement, concerns and
    adjudication."""
    import pandas as pd

    from analysis.load import ai_score_column

    frames = data.frames
    items = frames.items[frames.items["run_id"] == run_id].copy()
    items["ai"] = ai_score_column(items, dimension, data.config.metric_for(dimension))
    ratings = frames.ratings[
        (frames.ratings["run_id"] == run_id) & (frames.ratings["dimension"] == dimension)
    ]
    scores = ratings.groupby("item_id")["score"]
    table = pd.DataFrame(
        {
            "human": scores.mean(),
            "n": scores.size(),
            "disagreement": scores.max() - scores.min(),
        }
    )
    concerns = frames.concerns[
        (frames.concerns["run_id"] == run_id) & (frames.concerns["dimension"] == dimension)
    ]
    tags = concerns.groupby("item_id")["tag"].agg(lambda t: ", ".join(sorted(set(map(str, t)))))
    items = items.join(table, on="item_id").join(tags.rename("concerns"), on="item_id")
    items["n"] = items["n"].fillna(0).astype(int)
    items["concerns"] = items["concerns"].fillna("")
    state = _adjudications(data, run_id, dimension)
    items["adjudication"] = [state.get(item, "") for item in items["item_id"]]
    return items


def _adjudications(data: "DashboardData", run_id: str, dimension: str) -> dict[str, str]:
    """Each adjudicated item's latest decision: ``consensus: good`` or ``exclude``."""
    from analysis.gold import read_adjudications

    state: dict[str, str] = {}
    for record in read_adjudications(data.store.ratings.path):
        if record.run_id != run_id or record.dimension != dimension:
            continue
        label = f"consensus: {record.judgment}" if record.judgment else record.decision
        state[record.item_id] = label
    return state


def _filtered(items: "pd.DataFrame", query: Query) -> "pd.DataFrame":
    if query.get("category"):
        items = items[items["category"].astype(str) == query["category"]]
    if query.get("concern"):
        wanted = query["concern"]
        items = items[items["concerns"].map(lambda tags: wanted in tags.split(", "))]
    return items


def _sorted(items: "pd.DataFrame", sort: str) -> "pd.DataFrame":
    column, descending = SORTS.get(sort, SORTS["item"])
    return items.sort_values(
        [column, "item_id"], ascending=[not descending, True], na_position="last", kind="stable"
    )


def _path(run_id: str, **query: str) -> str:
    shown = {name: value for name, value in query.items() if value}
    return f"run/{run_id}" + ("?" + urlencode(shown) if shown else "")


def _items_section(
    run_id: str,
    dimension: str,
    dimensions: list[str],
    items: "pd.DataFrame",
    chosen: "pd.DataFrame",
    query: Query,
    limit: int = ROWS,
) -> Section:
    keep = {
        "dimension": dimension if len(dimensions) > 1 else "",
        "category": query.get("category", ""),
        "concern": query.get("concern", ""),
    }
    links = [Link(f"sort by {name}", _path(run_id, **keep, sort=name)) for name in SORTS]
    links += [
        Link(f"dimension {d}", _path(run_id, dimension=d))
        for d in dimensions
        if len(dimensions) > 1
    ]
    categories = sorted({str(c) for c in items["category"].dropna()})
    links += [
        Link(f"category {c}", _path(run_id, **{**keep, "category": c})) for c in categories[:40]
    ]
    tags = sorted({t for value in items["concerns"] for t in value.split(", ") if t})
    links += [Link(f"concern {t}", _path(run_id, **{**keep, "concern": t})) for t in tags[:40]]
    if query.get("category") or query.get("concern"):
        links.append(Link("all items", _path(run_id, dimension=keep["dimension"])))
    rows = [
        (
            str(r.item_id),
            _one_line(r.query),
            _text(r.category),
            r.ai,
            r.human,
            int(r.n),
            r.disagreement,
            r.confidence,
            _text(r.verdict),
            r.concerns,
            r.adjudication,
        )
        for r in chosen.head(limit).itertuples()
    ]
    table = Table(
        f"Items of {run_id} on {dimension}: AI score, mean human score, ratings, disagreement "
        "(highest minus lowest human score), AI confidence, verdict, concerns, adjudication",
        (
            "item",
            "query",
            "category",
            "AI score",
            "human score",
            "ratings",
            "disagreement",
            "confidence",
            "verdict",
            "concerns",
            "adjudication",
        ),
        rows,
    )
    shown = f"{len(chosen)} of {len(items)} items"
    if len(chosen) > limit:
        shown += f" (the first {limit} listed)"
    return Section(
        f"Items of {run_id}",
        text=(f"{shown}, on {dimension}.",),
        links=links,
        table=table,
        id="items",
    )


def _text(value: Any) -> str:
    return "" if value is None or value != value else str(value)


def _one_line(value: Any) -> str:
    from evaluation.text import visible

    return visible(_text(value), newlines=False)


def _cards_section(
    data: "DashboardData", run_id: str, dimension: str, chosen: "pd.DataFrame"
) -> Section:
    from bot.render import full_text

    run = data.store.load_run(run_id)
    ratings = data.frames.ratings
    mine = ratings[(ratings["run_id"] == run_id) & (ratings["dimension"] == dimension)]
    by_item = {item: group for item, group in mine.groupby("item_id")}
    rows = []
    for row in chosen.itertuples():
        item = run.item(row.item_id) if row.item_id in run.item_ids else None
        card = full_text(item) if item is not None else "(not in the run file)"
        rows.append(
            (
                str(row.item_id),
                card,
                _ratings(by_item.get(row.item_id)),
                row.adjudication or "not adjudicated",
            )
        )
    return Section(
        "Cards and ratings",
        text=(
            f"The first {len(chosen)} items in the order above: each card as the "
            "reviewer saw it (never the AI's verdict), then the ratings it got.",
        ),
        table=Table(
            f"Cards and ratings of {run_id} on {dimension}",
            ("item", "card", "ratings", "adjudication"),
            rows,
        ),
        id="cards",
    )


def _ratings(group: "pd.DataFrame | None") -> str:
    if group is None or group.empty:
        return "no ratings yet"
    lines = []
    for rating in group.sort_values("timestamp").itertuples():
        note = f" — {rating.note}" if isinstance(rating.note, str) and rating.note else ""
        lines.append(f"{rating.reviewer}: {rating.judgment} ({rating.score:.2f}){note}")
    return "\n".join(lines)


def _commands(run_id: str) -> Section:
    from shlex import quote

    return Section(
        "Commands",
        commands=(
            f"hilbot review {quote(run_id)}",
            f"hilbot adjudicate {quote(run_id)}",
            f"hilbot export {quote(run_id)} --format csv",
            f"hilbot analyze agreement --run {quote(run_id)}",
        ),
    )
