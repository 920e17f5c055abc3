"""What a dashboard page is made of, and the registry of pages.

A page is built from the data (:class:`bot.dashboard.data.DashboardData`) and the request's query
(sort, filters) into plain values: sections, each with an optional chart, its table and a few
lines of text. Rendering (HTML, for the live app and the static report) is
:mod:`bot.dashboard.html`'s job; a page never writes markup itself, so every text it holds is
escaped by the template.

The built-in pages register the way a plugin would::

    @page("agreement", "Agreement", order=30)
    def agreement(data: DashboardData, query: Mapping[str, str]) -> list[Section]: ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

from evaluation.registry import Registry

if TYPE_CHECKING:
    from .data import DashboardData

Cell = str | int | float | None
"""One table cell: text, a number (formatted as the reports format it) or nothing (``–``)."""


@dataclass(frozen=True)
class Link:
    """A link inside the dashboard (never outside it): text and a path on hilbot's own origin."""

    text: str
    """What the link says."""
    path: str
    """Where it goes: a page name and optional query, such as ``run/demo-panel?sort=ai``."""


@dataclass(frozen=True)
class Table:
    """The figures behind a chart (or a table on its own): a caption, the columns and the rows."""

    caption: str
    """One line saying what the table holds."""
    columns: Sequence[str]
    """The column headings."""
    rows: Sequence[Sequence[Cell | Link]]
    """The rows, each as many cells as columns."""


@dataclass(frozen=True)
class Chart:
    """A chart drawn on the server: SVG markup from :mod:`bot.dashboard.charts` and its text
    alternative."""

    svg: str
    """The SVG element (made by matplotlib, every text in it escaped)."""
    alt: str
    """What the chart shows, in words (its ``aria-label`` and ``<title>``)."""


@dataclass(frozen=True)
class Section:
    """One part of a page: a heading, then text lines, a chart and the table behind it."""

    heading: str
    """The section's heading."""
    text: Sequence[str] = ()
    """Paragraphs before the chart (plain text, escaped when shown)."""
    chart: Chart | None = None
    """The chart, if any."""
    table: Table | None = None
    """The table: behind the chart (one click away) or, with no chart, shown."""
    links: Sequence[Link] = ()
    """Links after the text (to runs, filters or sort orders)."""
    commands: Sequence[str] = ()
    """hilbot commands to copy (shown as code), such as ``hilbot adjudicate RUN``."""
    id: str = ""
    """The section's anchor (default: made from the heading)."""

    @property
    def anchor(self) -> str:
        """The section's anchor: its id, or its heading in lowercase with dashes."""
        return self.id or slug(self.heading)


Query = Mapping[str, str]
"""The request's query: ``sort``, ``category``, ``concern``, ``run``."""


class Build(Protocol):
    """A page's builder: its sections from the data and the query."""

    def __call__(self, data: "DashboardData", query: Query, /) -> list[Section]: ...


@dataclass(frozen=True)
class Page:
    """One page of the dashboard, registered by name."""

    name: str
    """Its path (``/NAME``) and its key in the static report."""
    title: str
    """Its title in the navigation and the heading."""
    build: Build
    """Its builder."""
    order: int = 100
    """Its place in the navigation (lowest first)."""
    nav: bool = True
    """Whether the navigation lists it (the run page is reached from the overview)."""

    def __post_init__(self) -> None:
        # The registry refuses a built-in's name from any module but the built-in's own.
        object.__setattr__(self, "__module__", getattr(self.build, "__module__", None))


BUILT_IN = ("overview", "run", "agreement", "calibration", "patterns", "triage", "reviewers")
"""The built-in pages, each in its own module of :mod:`bot.dashboard.pages`."""

pages: Registry[Page] = Registry(
    "dashboard page",
    "hilbot.dashboard_pages",
    builtins={name: f"bot.dashboard.pages.{name}" for name in BUILT_IN},
)
"""Every page, by name: the built-ins, then any a plugin registers."""


def page(
    name: str, title: str, *, order: int = 100, nav: bool = True
) -> Callable[[Callable[..., list[Section]]], Callable[..., list[Section]]]:
    """Register ``build(data, query) -> sections`` as the page ``name``."""

    def register(build: Callable[..., list[Section]]) -> Callable[..., list[Section]]:
        pages.register(name)(Page(name, title, build, order, nav))
        return build

    return register


def slug(text: str) -> str:
    """``text`` as an anchor: lowercase letters, digits and dashes."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def interval(low: Any, high: Any) -> str:
    """An interval as the reports write it, ``[0.123, 0.456]``, or ``–`` when either end is
    missing or undefined."""
    from analysis.report import ci

    ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high))
    return ci((float(low), float(high))) if ok else "–"


def unavailable(heading: str, error: str | None) -> Section:
    """A section saying why there is nothing to show (an analysis's one-line error)."""
    return Section(heading, text=(f"Nothing to show yet: {error or 'no data'}",))



__all__ = [
    "BUILT_IN",
    "Build",
    "Cell",
    "Chart",
    "Link",
    "Page",
    "Query",
    "Section",
    "Table",
    "interval",
    "page",
    "pages",
    "slug",
    "unavailable",
]
