"""The dashboard's charts: matplotlib, drawn on the server as SVG and put inline in the page.

matplotlib is already hilbot's chart library (the digest's PNG, ``analyze --out``): it needs no
JavaScript, no network and no CDN, so the live page and the static report show the same charts,
and the page's Content-Security-Policy forbids every script but hilbot's own. Text stays text
(``svg.fonttype = none``): screen readers, search and the tests read the figures in a chart.

One colour scheme: the Okabe–Ito palette (told apart by colour-blind readers) for series, and
cividis (uniform in lightness, readable without hue) for heatmaps. Axes, ticks and labels are
drawn in the page's own text colour (``currentColor``), so a chart reads in light and dark mode.
"""

from __future__ import annotations

import functools
import io
import math
import re
from typing import Any, Callable, Sequence, TypeVar

from .page import Chart

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442")
"""Okabe–Ito: blue, orange, green, vermillion, purple, sky blue, yellow."""
HEATMAP = "cividis"
"""The heatmaps' colour map: blue to yellow, uniform in lightness."""
INK = "#010203"
"""The colour matplotlib draws text and axes in; replaced by ``currentColor`` in the SVG."""
GRID = "#8c8c8c"
"""Grid lines and reference lines: mid grey, visible on light and dark backgrounds."""
RASTER_POINTS = 2000
"""Above this many dots a scatter's dots are one embedded image (the axes stay text): 10,000
dots as SVG shapes weigh a megabyte."""
MAX_LABEL = 28
"""Characters of a label drawn on an axis (the table holds the whole text)."""

_RC: dict[str, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "hilbot",
    "text.parse_math": False,
    "text.color": INK,
    "axes.labelcolor": INK,
    "axes.edgecolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "axes.facecolor": "none",
    "figure.facecolor": "none",
    "savefig.facecolor": "none",
    "font.size": 9,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
}
_Draw = TypeVar("_Draw", bound=Callable[..., Any])
_HEADER = re.compile(r"^.*?(<svg\b)", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)


def label(value: Any) -> str:
    """Text from the logs as an axis shows it: control characters visible, cut to
    :data:`MAX_LABEL`."""
    from evaluation.text import visible

    text = visible(str(value), newlines=False)
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def styled(draw: _Draw) -> _Draw:
    """Run a chart function in the dashboard's style (matplotlib's settings changed for the call
    only: the digest's PNG, drawn in the same process, keeps its own)."""

    @functools.wraps(draw)
    def drawn(*args: Any, **kwargs: Any) -> Any:
        import matplotlib
        from cycler import cycler

        matplotlib.use("Agg")
        style: Any = {**_RC, "axes.prop_cycle": cycler(color=PALETTE)}
        with matplotlib.rc_context(style):
            return draw(*args, **kwargs)

    return drawn  # type: ignore[return-value]


def figure(width: float = 6.4, height: float = 3.2) -> Any:
    """A blank figure (no pyplot state); draw it inside a :func:`styled` function."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def to_chart(fig: Any, alt: str) -> Chart:
    """``fig`` as an inline SVG chart with ``alt`` as its title and label."""
    import warnings

    from markupsafe import escape

    buffer = io.StringIO()
    with warnings.catch_warnings():  # a glyph the font lacks is drawn as a box, not reported
        warnings.simplefilter("ignore")
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = _HEADER.sub(r"\1", buffer.getvalue(), count=1).replace(INK, "currentColor")
    svg = _METADATA.sub("", svg, count=1)
    title = f'<svg role="img" aria-label="{escape(alt)}"'
    svg = svg.replace("<svg", title, 1)
    svg = re.sub(r"(<svg\b[^>]*>)", lambda m: m.group(1) + f"<title>{escape(alt)}</title>", svg, 1)
    return Chart(svg=svg, alt=alt)


def _is_date(value: Any) -> bool:
    from datetime import date

    return isinstance(value, date) or type(value).__name__ in ("Timestamp", "datetime64")


def _finite(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


@styled
def intervals(
    rows: Sequence[tuple[str, Any, Any, Any]],
    *,
    alt: str,
    xlabel: str,
    lines: Sequence[tuple[float, str]] = (),
    xlim: tuple[float, float] | None = None,
) -> Chart:
    """A forest plot: one row per ``(label, value, low, high)``, a dot and its interval, with
    vertical reference ``lines`` (``(x, name)``, such as agreement bands). Undefined values are
    left out of the drawing (the table says why)."""
    fig = figure(6.4, 0.5 + 0.32 * max(len(rows), 2))
    axes = fig.add_subplot()
    for n, (_, value, low, high) in enumerate(rows):
        y, v = len(rows) - 1 - n, _finite(value)
        lo, hi = _finite(low), _finite(high)
        if lo is not None and hi is not None:
            axes.plot([lo, hi], [y, y], color=PALETTE[0], linewidth=2)
        if v is not None:
            axes.plot([v], [y], "o", color=PALETTE[1], markersize=5)
    for x, _ in lines:
        axes.axvline(x, color=GRID, linewidth=0.8, linestyle="--")
    if lines:  # the lines' names above the plot, clear of its rows
        top = axes.secondary_xaxis("top")
        top.set_xticks([x for x, _ in lines], [label(name) for _, name in lines])
        top.tick_params(labelsize=7, length=0)
    axes.set_ylim(-0.6, len(rows) - 0.4)  # the first and last rows' dots clear of the frame
    return _rows_chart(fig, axes, [r[0] for r in reversed(rows)], xlabel, xlim, alt)


def _rows_chart(
    fig: Any, axes: Any, names: Sequence[str], xlabel: str, xlim: Any, alt: str
) -> Chart:
    """A chart of one row per name (bottom first), finished: names, x label and range, grid."""
    axes.set_yticks(range(len(names)), [label(name) for name in names])
    axes.set_xlabel(xlabel)
    if xlim:
        axes.set_xlim(*xlim)
    axes.grid(axis="x", color=GRID, linewidth=0.4, alpha=0.5)
    return to_chart(fig, alt)


@styled
def heatmap(
    values: Sequence[Sequence[Any]],
    rows: Sequence[str],
    columns: Sequence[str],
    *,
    alt: str,
    xlabel: str = "",
    ylabel: str = "",
    digits: int = 2,
    limits: tuple[float, float] | None = None,
) -> Chart:
    """A grid of ``values`` (rows × columns), each cell coloured and written; a missing or
    undefined value is an empty cell marked ``–``."""
    import numpy as np

    grid = np.array([[_finite(v) if _finite(v) is not None else np.nan for v in row]
                     for row in values], dtype=float).reshape(len(rows), len(columns))
    side = max(len(rows), len(columns))
    fig = figure(min(2.4 + 0.45 * len(columns), 12), min(1.6 + 0.4 * len(rows), 12))
    axes = fig.add_subplot()
    low, high = limits or (np.nanmin(grid) if np.isfinite(grid).any() else 0.0,
                           np.nanmax(grid) if np.isfinite(grid).any() else 1.0)
    image = axes.imshow(grid, cmap=HEATMAP, vmin=low, vmax=high if high > low else low + 1,
                        aspect="auto")
    if side <= 30:
        for (r, c), v in np.ndenumerate(grid):
            cell = axes.text(c, r, _cell_text(v, digits), ha="center", va="center", fontsize=7,
                             color=_cell_ink(v, low, high))
            cell.set_in_layout(False)  # 900 labels measured by the layout: seconds, for nothing
    axes.set_xticks(range(len(columns)), [label(c) for c in columns], rotation=45, ha="right")
    axes.set_yticks(range(len(rows)), [label(r) for r in rows])
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    fig.colorbar(image, ax=axes, shrink=0.8)
    return to_chart(fig, alt)


def _cell_text(value: float, digits: int) -> str:
    if not math.isfinite(value):
        return "–"
    return f"{round(value, digits) + 0.0:.{digits}f}"  # never "-0.00"


def _cell_ink(value: float, low: float, high: float) -> str:
    """Black or white, whichever contrasts more with the cell's colour (WCAG's ratio)."""
    if not math.isfinite(value):
        return INK  # an empty cell shows the page's background: its dash in the page's text colour
    from matplotlib import colormaps

    red, green, blue, _ = colormaps[HEATMAP]((value - low) / ((high - low) or 1))
    light = luminance((red, green, blue))
    return "#000000" if (light + 0.05) / 0.05 >= 1.05 / (light + 0.05) else "#ffffff"


def luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG's relative luminance of an sRGB colour (each channel 0–1)."""

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(c) for c in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(one: tuple[float, float, float], other: tuple[float, float, float]) -> float:
    """WCAG's contrast ratio of two sRGB colours (1–21; AA asks 4.5 of text)."""
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@styled
def scatter(
    points: Sequence[tuple[float, float]],
    *,
    alt: str,
    xlabel: str,
    ylabel: str,
    jitter: float = 0.0,
    diagonal: bool = True,
) -> Chart:
    """One dot per point, jittered by up to ``jitter`` on both axes (the same jitter on every
    drawing), with the diagonal ``y = x``."""
    import numpy as np

    fig = figure(4.6, 4.0)
    axes = fig.add_subplot()
    if diagonal:
        axes.plot([0, 1], [0, 1], color=GRID, linewidth=0.8, linestyle="--")
    if points:
        xy = np.array(points, dtype=float)
        if jitter:
            shake = np.random.default_rng(0).uniform(-jitter, jitter, size=xy.shape)
            xy = xy + shake
        axes.scatter(xy[:, 0], xy[:, 1], s=12, alpha=0.6, color=PALETTE[0], linewidths=0,
                     rasterized=len(xy) > RASTER_POINTS)
    axes.set(xlabel=xlabel, ylabel=ylabel)
    return to_chart(fig, alt)


@styled
def bars(
    rows: Sequence[tuple[str, Any]],
    *,
    alt: str,
    xlabel: str,
    errors: Sequence[tuple[Any, Any]] | None = None,
    xlim: tuple[float, float] | None = None,
    colors: Sequence[str] | None = None,
) -> Chart:
    """Horizontal bars, one per ``(label, value)``, with optional ``errors`` (low, high) drawn as
    whiskers (Wilson intervals, say)."""
    fig = figure(6.4, 0.5 + 0.3 * max(len(rows), 2))
    axes = fig.add_subplot()
    ys = list(range(len(rows)))[::-1]
    values = [_finite(v) or 0.0 for _, v in rows]
    axes.barh(ys, values, color=list(colors) if colors else PALETTE[0], height=0.6)
    if errors:
        for y, v, (lo, hi) in zip(ys, values, errors):
            if _finite(lo) is not None and _finite(hi) is not None:
                axes.plot([lo, hi], [y, y], color=INK, linewidth=1)
    return _rows_chart(fig, axes, [name for name, _ in reversed(rows)], xlabel, xlim, alt)


@styled
def lines(
    series: dict[str, Sequence[tuple[Any, Any]]],
    *,
    alt: str,
    xlabel: str,
    ylabel: str,
    marked: Sequence[tuple[Any, Any]] = (),
    diagonal: bool = False,
    ylim: tuple[float, float] | None = None,
) -> Chart:
    """One line per series of ``(x, y)`` points (x may be dates, their ticks written concisely),
    with ``marked`` points ringed (regressions, say), an optional diagonal and ``ylim`` (a rate
    on 0–1, say, so a small change is not drawn large)."""
    fig = figure(6.4, 3.2)
    axes = fig.add_subplot()
    if diagonal:
        axes.plot([0, 1], [0, 1], color=GRID, linewidth=0.8, linestyle="--")
    for n, (name, points) in enumerate(series.items()):
        if points:
            xs, ys = zip(*points)
            axes.plot(xs, ys, marker="o", markersize=3, label=label(name),
                      color=PALETTE[n % len(PALETTE)])
    for x, y in marked:
        axes.plot([x], [y], "o", markersize=10, markerfacecolor="none",
                  markeredgecolor=PALETTE[3], markeredgewidth=1.5)
    if len(series) > 1:
        axes.legend(fontsize=7, frameon=False)
    axes.set(xlabel=xlabel, ylabel=ylabel)
    if ylim:
        axes.set_ylim(*ylim)
    if any(_is_date(x) for points in series.values() for x, _ in points[:1]):
        from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

        locator = AutoDateLocator(maxticks=7)
        axes.xaxis.set_major_locator(locator)
        axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    axes.grid(color=GRID, linewidth=0.4, alpha=0.5)
    return to_chart(fig, alt)


__all__ = ["GRID", "HEATMAP", "INK", "PALETTE", "bars", "figure", "heatmap", "intervals",
           "contrast", "label", "lines", "luminance", "scatter", "styled", "to_chart"]
