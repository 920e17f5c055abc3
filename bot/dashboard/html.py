"""Pages as HTML: one Jinja2 template, autoescaped, for the live app and the static report.

Every text a page holds (item text, notes, reviewer names, run ids) is escaped by Jinja2's
autoescaping; the only markup inserted as is, is a chart's SVG, which matplotlib wrote with every
text in it escaped. The live page loads ``dashboard.css`` and ``dashboard.js`` from hilbot's own
origin; the static report carries both inline, its script allowed by its hash in the page's
Content-Security-Policy (no ``'unsafe-inline'`` script either way).
"""

from __future__ import annotations

import base64
import hashlib
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Callable, Sequence
from urllib.parse import quote

from .page import Link, Section, slug

if TYPE_CHECKING:
    from jinja2 import Environment

STATIC = ("dashboard.css", "dashboard.js")
"""The files the live page loads from ``/static/``."""
CSP_LIVE = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
"""The live page's Content-Security-Policy: scripts, styles, data and forms from hilbot's own
origin only (inline style attributes are allowed: matplotlib's SVG is styled with them)."""


@dataclass(frozen=True)
class Rendered:
    """One page, built: its name, title, anchor and sections."""

    name: str
    """The page's name (``overview``, ``run``, …)."""
    title: str
    """Its heading."""
    anchor: str
    """Its id in the document (``page-NAME``, or ``page-run-RUN``)."""
    sections: Sequence[Section]
    """What it shows."""


def static_text(name: str) -> str:
    """The text of one of :data:`STATIC`."""
    return resources.files("bot.dashboard").joinpath("static", name).read_text("utf-8")


def script_hash() -> str:
    """The CSP source that allows the static report's inline script (its SHA-256)."""
    digest = hashlib.sha256(static_text("dashboard.js").encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


def static_csp() -> str:
    """The static report's Content-Security-Policy: nothing loaded from anywhere, its own
    script only."""
    return (
        f"default-src 'none'; script-src {script_hash()}; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def anchor(path: str) -> str:
    """The static report's anchor for a dashboard path (``run/X?sort=ai`` → ``page-run-x``)."""
    return "page-" + slug(path.split("?", 1)[0] or "overview")


def live_href(path: str) -> str:
    """A dashboard path as a URL on hilbot's own origin (each path segment quoted)."""
    page, _, query = path.partition("?")
    url = "/" + "/".join(quote(part, safe="") for part in page.split("/") if part)
    return url + ("?" + query if query else "")


def static_href(path: str) -> str:
    """A dashboard path inside the static report: the anchor of its page."""
    return "#" + anchor(path)


def shown(value: Any) -> Any:
    """Every text a template writes: control, bidi and separator characters made visible (the
    escaping itself is Jinja2's); markup the code made (a chart's SVG) is left as it is."""
    from markupsafe import Markup

    from evaluation.text import visible

    return visible(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def _cell(href: Callable[[str], str]) -> Callable[[Any], Any]:
    """The template's table cell: a number as the reports write it (``analysis.report.fmt``:
    three decimals, ``–`` when missing), text escaped and made visible, a link to a page."""
    from markupsafe import Markup, escape

    from analysis.report import fmt

    def cell(value: Any) -> Any:
        if isinstance(value, Link):
            return Markup('<td><a href="{}">{}</a></td>').format(
                href(value.path), shown(value.text)
            )
        if isinstance(value, bool) or value is None:
            return Markup("<td>{}</td>").format(fmt(value))
        if isinstance(value, (int, float)):
            sort = value if math.isfinite(value) else ""
            return Markup('<td class="num" data-value="{}">{}</td>').format(sort, fmt(value))
        text = shown(str(value))
        if "\n" in text:
            return Markup("<td><pre>{}</pre></td>").format(text)
        return Markup("<td>{}</td>").format(escape(text))

    return cell


@lru_cache(maxsize=2)
def environment(static: bool) -> "Environment":
    """The Jinja2 environment: autoescaping on, links made for the live app or the report."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("bot.dashboard", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        finalize=shown,
    )
    href = static_href if static else live_href
    env.filters["href"] = href
    env.filters["cell"] = _cell(href)
    return env


def render(
    pages: Sequence[Rendered],
    nav: Sequence[tuple[Link, bool]],
    *,
    static: bool,
    version: str = "",
    title: str = "",
    status: str = "",
    footer: str = "",
    subtitle: str = "",
) -> str:
    """The HTML document: ``pages`` (one for the live app, all of them for the report) under the
    navigation (``(link, current)``)."""
    env = environment(static)
    context = {
        "pages": pages,
        "nav": [
            {"path": link.path, "text": link.text, "current": current} for link, current in nav
        ],
        "static": static,
        "live": not static,
        "version": version,
        "title": title or (pages[0].title if pages else "dashboard"),
        "status": status,
        "footer": footer,
        "subtitle": subtitle,
    }
    if static:
        context |= {"csp": static_csp(), "css": static_text("dashboard.css"),
                    "js": static_text("dashboard.js")}
    return env.get_template("dashboard.html").render(context)


__all__ = ["CSP_LIVE", "STATIC", "Rendered", "anchor", "live_href", "render", "script_hash",
           "static_csp", "static_href", "static_text"]
