"""PNG charts for reports (matplotlib, Agg, drawn on a plain Figure: no pyplot state)."""

from __future__ import annotations

import io
from typing import Any, Sequence

DPI = 110


def new_figure(width: float = 7.0, height: float = 4.0) -> Any:
    """A blank matplotlib ``Figure`` (Agg, constrained layout) of ``width`` × ``height`` inches."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def to_png(figure: Any) -> bytes:
    """``figure`` as PNG bytes (a glyph the font lacks is drawn as a box, not reported)."""
    import warnings

    buffer = io.BytesIO()
    with (
        warnings.catch_warnings()
    ):  # a glyph the font lacks is drawn as a box, not reported on stderr
        warnings.simplefilter("ignore")
        figure.savefig(buffer, format="png")
    return buffer.getvalue()


def text(value: Any) -> str:
    """Text from the logs as a chart draws it: control characters visible, ``$`` literal (never
    mathtext)."""
    from evaluation.text import visible

    return visible(str(value), newlines=False).replace("$", r"\$")


def calibration_scatter(
    points: Sequence[tuple[float, float]], title: str = "AI judge vs humans"
) -> bytes:
    """One dot per item: AI score (x) against the mean human score (y), with the diagonal."""
    figure = new_figure(5.0, 5.0)
    axes = figure.add_subplot()
    axes.plot([0, 1], [0, 1], color="grey", linewidth=1, linestyle="--", label="agreement")
    if points:
        xs, ys = zip(*points)
        axes.scatter(xs, ys, s=18, alpha=0.6)
    axes.set(
        xlim=(-0.02, 1.02),
        ylim=(-0.02, 1.02),
        xlabel="AI score",
        ylabel="human score (mean)",
        title=title,
    )
    axes.legend(loc="upper left")
    return to_png(figure)


def rating_distribution(counts: dict[str, dict[str, int]], order: Sequence[str]) -> bytes:
    """Stacked bars: per run, how many ratings of each judgment (``order``: worst first)."""
    figure = new_figure(7.0, 0.8 + 0.45 * max(len(counts), 1))
    axes = figure.add_subplot()
    runs = list(counts)
    left = [0] * len(runs)
    for judgment in order:
        widths = [counts[r].get(judgment, 0) for r in runs]
        axes.barh(range(len(runs)), widths, left=left, label=text(judgment))
        left = [a + b for a, b in zip(left, widths)]
    axes.set_yticks(range(len(runs)), [text(r) for r in runs])
    axes.set(xlabel="ratings", title="Ratings per run")
    axes.invert_yaxis()
    if runs and order:
        axes.legend(loc="lower right", fontsize="small")
    return to_png(figure)


def interval_bars(
    labels: Sequence[str],
    values: Sequence[float | None],
    intervals: Sequence[tuple[float, float] | None],
    *,
    title: str,
    ylabel: str,
    lines: Sequence[tuple[float, str]] = (),
) -> bytes:
    """Bars with 95% CI whiskers (agreement per dimension, success rate per bucket); ``lines``:
    reference levels."""
    figure = new_figure(max(4.0, 1.0 + 0.9 * len(labels)), 4.0)
    axes = figure.add_subplot()
    heights = [v if v is not None else 0.0 for v in values]
    low = [h - i[0] if i else 0.0 for h, i in zip(heights, intervals)]
    high = [i[1] - h if i else 0.0 for h, i in zip(heights, intervals)]
    axes.bar(range(len(labels)), heights, yerr=[low, high], capsize=4, color="#4c72b0")
    for level, name in lines:
        axes.axhline(level, color="grey", linewidth=0.8, linestyle=":")
        axes.annotate(
            name,
            (len(labels) - 0.5, level),
            fontsize="x-small",
            ha="right",
            va="bottom",
            color="grey",
        )
    axes.set_xticks(range(len(labels)), [text(label) for label in labels], rotation=20, ha="right")
    axes.set(ylabel=text(ylabel), title=text(title), ylim=(min([0.0, *heights]) - 0.05, 1.05))
    return to_png(figure)


__all__ = [
    "calibration_scatter",
    "interval_bars",
    "new_figure",
    "rating_distribution",
    "text",
    "to_png",
]


def judgment_distribution(ratings: Any, config: Any) -> bytes:
    """:func:`rating_distribution` of a ratings frame per run and dimension, judgments in scale
    order.

    Judgments of the configured scales come first, lowest score first; judgments off every
    configured scale are drawn after them, in name order.
    """
    counts = {
        f"{run} · {dim}": dict(group["judgment"].value_counts())
        for (run, dim), group in ratings.groupby(["run_id", "dimension"])
    }
    dims = sorted(set(ratings["dimension"]) & set(config.dimensions))
    order = list(
        dict.fromkeys(
            o.value
            for d in dims
            for o in sorted(config.scale_for(d).options, key=lambda o: o.score)
        )
    )
    order += sorted(set(ratings["judgment"]) - set(order))
    return rating_distribution(counts, order)
