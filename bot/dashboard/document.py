"""Whole documents: one page of the live app, or every page in the static report."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Sequence

from evaluation.scrub import scrub

from .html import Rendered, anchor, render
from .page import Link, Page, Query, pages

if TYPE_CHECKING:
    from .data import DashboardData

RUN = "run"
"""The page that shows one run (``/run/RUN``)."""
REPORT_LIMITS = {"rows": "500", "cards": "25"}
"""A run's items and cards in the static report at most, so that a year's report can be posted
(the live page shows up to 2,000 and 100)."""


def navigation() -> list[Page]:
    """The pages the navigation lists, in order (plugins' pages too)."""
    listed = [pages.get(name) for name in pages.names()]
    return sorted((p for p in listed if p.nav), key=lambda p: (p.order, p.name))


def build(data: "DashboardData", name: str, query: Query) -> Rendered:
    """The page ``name`` built on ``data`` (an unknown name raises the registry's error)."""
    spec = pages.get(name)
    sections = spec.build(data, query)
    run = query.get("run", "")
    title = f"Run {run}" if name == RUN and run else spec.title
    return Rendered(name, title, anchor(f"{RUN}/{run}" if name == RUN else name), sections)


def _nav(current: str) -> list[tuple[Link, bool]]:
    return [(Link(p.title, p.name), p.name == current) for p in navigation()]


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def live_page(data: "DashboardData", name: str, query: Query, version: str) -> str:
    """One page of the live app, scrubbed of secrets."""
    page = build(data, name, query)
    html = render(
        [page],
        _nav(name),
        static=False,
        version=version,
        title=page.title,
        status=f"Live · read {_stamp()}",
        footer=f"hilbot dashboard · {data.store.root} · read-only",
        subtitle="dashboard",
    )
    return scrub(html)


def report(data: "DashboardData", runs: Sequence[str] | None = None) -> str:
    """Every page in one self-contained document (each run's page after the overview), scrubbed
    of secrets."""
    built = [build(data, p.name, {}) for p in navigation()]
    run_ids = list(data.frames.runs["run_id"]) if runs is None else list(runs)
    built[1:1] = [build(data, RUN, {"run": run_id, **REPORT_LIMITS}) for run_id in run_ids]
    nav = [(Link(p.title, p.name), False) for p in navigation()]
    html = render(
        built,
        nav,
        static=True,
        title="hilbot report",
        status=f"Report of {_stamp()}",
        footer="hilbot report · a snapshot: hilbot dashboard shows it live",
        subtitle="report",
    )
    return scrub(html)


__all__ = ["REPORT_LIMITS", "RUN", "build", "live_page", "navigation", "report"]
