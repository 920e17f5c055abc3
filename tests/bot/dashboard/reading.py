"""Reading a built dashboard page in the page tests: its sections, its charts' text, its cells."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from typing import Any

from bot.dashboard.data import DashboardData
from bot.dashboard.page import Link, Section, pages
from evaluation import Store

HOSTILE = "<script>alert(1)</script>"
"""Markup a hostile name holds; a chart must show it escaped."""
SVG = "{http://www.w3.org/2000/svg}"
"""The SVG namespace, as ElementTree names tags."""


def built(name: str, store: Store, config: Any) -> list[Section]:
    """The page ``name`` of ``store``, as the registry builds it."""
    return pages.get(name).build(DashboardData(store, config), {})


def section(sections: list[Section], heading: str) -> Section:
    """The one section headed ``heading``."""
    found = [s for s in sections if s.heading == heading]
    assert len(found) == 1, [s.heading for s in sections]
    return found[0]


def texts(svg: str, style: str = "") -> list[str]:
    """Every ``<text>`` of a chart (whose style has ``style``: ``font-size: 7px`` for a heatmap's
    cells), unescaped."""
    root = ElementTree.fromstring(svg)
    found = root.iter(f"{SVG}text")
    return ["".join(t.itertext()) for t in found if style in (t.get("style") or "")]


def cell(value: Any) -> str:
    """A table cell as the renderer writes it: floats with 3 decimals."""
    if isinstance(value, Link):
        return value.text
    return f"{value:.3f}" if isinstance(value, float) else str(value)
