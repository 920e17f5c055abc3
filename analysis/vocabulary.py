"""What every analysis says the same way: which ratings, which categories, success, a report.

The statistics themselves are :mod:`analysis.stats`; this module is what the analyses built on them
(agreement, calibration, correlate, patterns, triage, …) say the same way. Anything more than one
analysis needs lives here or in :mod:`analysis.stats`; an analysis module never imports another.
Conventions:

* **Keys.** :data:`KEY3` names an item on one dimension, (run, item, dimension); :data:`KEY4` one
  reviewer's current judgment of it.
* **Selection** (:func:`select`): the ratings of the given run(s) and dimension(s); None selects
  all. :func:`latest_ratings` keeps each reviewer's last rating of an item; :func:`coded_ratings`
  codes a dimension's ratings for the agreement statistics (:class:`analysis.stats.Ratings`).
* **A dimension the configuration lacks** is described from the log itself, the same way by every
  analysis: its judgments ordered by their mean score (:func:`judgment_means`: ascending, ties by
  judgment, a judgment without a score last), and a note saying so (:func:`not_configured`). A
  ``dimension`` asked for that neither the configuration defines nor any rating carries is an
  :class:`AnalysisError` with the fix (:func:`check_dimensions`); a configured one without ratings
  is fine (an empty report).
* **Categories of a dimension** (:func:`dimension_categories`): its scale's options in ascending
  score order (:func:`ascending`), or, when the configuration lacks the dimension, its rated
  judgments with a score, each standing at its mean score. A score goes to the nearest category
  (:func:`nearest`): boundaries at the midpoints between adjacent scores, a score exactly on a
  midpoint goes to the *higher* one (round half up), scores rounded to 9 decimals first, against
  float noise. With the values distances are measured on (:func:`valued_categories`, agreement's):
  each option's ``number``, else its score, and every rated judgment off the scale placed by its
  mean score, which is its value.
* **Success** of a rating (:func:`success_flags`): its option's ``success`` flag, else score ≥ 0.5
  (:func:`option_success`; also for a judgment the scale does not offer, or a dimension the
  configuration lacks). :func:`rate_fields` gives a group's count, successes, success rate with its
  Wilson 95% interval (:func:`analysis.stats.wilson_interval`) and mean score; an empty group's rate
  and mean are ``Undefined("no ratings")``.
* **Means** that must equal :func:`statistics.mean` to the last bit (the digest's, the synthesis's
  AI − human) are :func:`exact_means`: the exact sum per group, rounded once, vectorised.
* **Reports** are frozen dataclasses deriving from :class:`Report`: ``to_dict()`` gives JSON-safe
  values (:func:`analysis.stats.to_jsonable`: Undefined → ``{"undefined": reason}``, never NaN). A
  group's key value goes into a report through :func:`key_value` (numpy scalars as Python values,
  NaN as None).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

from .errors import AnalysisError
from .stats import Interval, Jsonable, Number, Undefined, wilson_interval

if TYPE_CHECKING:  # numpy and pandas are imported by the functions that use them, when they run
    import numpy as np
    import pandas as pd

    from evaluation.config import HilbotConfig, Scale, ScaleOption

    from .stats import Ratings, Units

KEY3 = ["run_id", "item_id", "dimension"]
"""An item on one dimension."""
KEY4 = [*KEY3, "reviewer"]
"""One reviewer's current judgment."""


# ------------------------------------------------------------------------------------------ reports


class Report(Jsonable):
    """Base of the analyses' report dataclasses: ``to_dict()`` gives JSON-safe values
    (:func:`analysis.stats.to_jsonable`)."""


def key_value(value: Any) -> Any:
    """A group's key value as a report holds it: a numpy scalar as a Python value, NaN as None."""
    import numpy as np

    value = value.item() if isinstance(value, np.generic) else value
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


# ---------------------------------------------------------------------------------------- selection


def select(
    ratings: pd.DataFrame, run: str | Iterable[str] | None, dimension: str | Iterable[str] | None
) -> pd.DataFrame:
    """The ratings of the given run(s) and dimension(s) (None: all)."""
    import numpy as np

    keep = np.ones(len(ratings), dtype=bool)
    for column, wanted in (("run_id", run), ("dimension", dimension)):
        if wanted is not None:
            values = [wanted] if isinstance(wanted, str) else list(wanted)
            keep &= ratings[column].isin(values).to_numpy()
    return ratings[keep].reset_index(drop=True)


def latest_ratings(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Each reviewer's current rating of each item: ratings without a run, item, reviewer or
    judgment left out, of duplicate ratings (same reviewer and item) the last in log order kept; and
    notes saying so. (The loaded frames hold current ratings already; this makes any frame so.)"""
    notes: list[str] = []
    unjudged = frame[["run_id", "item_id", "reviewer", "judgment"]].isna().any(axis=1)
    if unjudged.any():
        notes.append(
            f"{int(unjudged.sum())} ratings without a run, item, reviewer or judgment left out"
        )
        frame = frame[~unjudged]
    # loaded frames are in log order already
    if "line" in frame.columns and not frame["line"].is_monotonic_increasing:
        frame = frame.sort_values("line", kind="stable")
    deduped = frame.drop_duplicates(["run_id", "item_id", "reviewer"], keep="last")
    if len(deduped) < len(frame):
        notes.append(
            f"{len(frame) - len(deduped)} duplicate ratings (same reviewer and item) "
            "dropped; the last one kept"
        )
    return deduped, notes


@dataclass(frozen=True)
class CodedRatings:
    """One dimension's ratings as the statistics take them (:class:`analysis.stats.Ratings`): the
    reviewers, the categories and their values, and the ratings' per-item summaries."""

    categories: list[str]
    values: list[float]
    reviewers: list[str]
    """Reviewer ids in order: rater i is ``reviewers[i]``."""
    data: Ratings
    units: Units
    items: pd.MultiIndex
    """(run_id, item_id) of each unit, in unit order."""


def coded_ratings(frame: pd.DataFrame, categories: list[str], values: list[float]) -> CodedRatings:
    """``frame`` (one dimension's current ratings) coded: units are (run_id, item_id) in sorted
    order, raters the reviewers in id order, each judgment its position in ``categories``."""
    import numpy as np
    import pandas as pd

    from .stats import Ratings, Units

    reviewers = sorted(frame["reviewer"].astype(str).unique())
    grouped = frame.groupby(["run_id", "item_id"], sort=True)
    unit = grouped.ngroup().to_numpy()
    rater = pd.Categorical(frame["reviewer"].astype(str), categories=reviewers).codes
    category = pd.Categorical(frame["judgment"].astype(str), categories=categories).codes
    n_units = int(unit.max()) + 1 if len(unit) else 0
    data = Ratings(
        unit.astype(np.intp),
        rater.astype(np.intp),
        category.astype(np.intp),
        n_units,
        len(reviewers),
        max(len(categories), 1),
    )
    items = grouped.size().index
    if not isinstance(items, pd.MultiIndex):  # no ratings
        items = pd.MultiIndex.from_tuples([], names=["run_id", "item_id"])
    return CodedRatings(categories, values, reviewers, data, Units.of(data), items)


# --------------------------------------------------------------------------------------- dimensions


def not_configured(dimension: str) -> str:
    """The note every analysis gives a dimension hilbot.toml does not define (its judgments come
    from the log)."""
    return f"dimension {dimension!r} is not configured: judgments ordered by their mean score"


def judgment_means(frame: pd.DataFrame) -> list[tuple[str, float]]:
    """Each judgment of ``frame`` (ratings) with its mean score, ascending; ties by judgment.

    How an analysis describes a dimension the configuration lacks, from the log itself. A judgment
    none of whose ratings has a score gets ``math.inf`` (it comes last).
    """
    means = frame.groupby("judgment", observed=True)["score"].mean()
    ranked = sorted(
        (float(mean) if math.isfinite(mean) else math.inf, str(judgment))
        for judgment, mean in means.items()
    )
    return [(judgment, mean) for mean, judgment in ranked]


def check_dimensions(
    ratings: pd.DataFrame, config: HilbotConfig, dimension: str | Any | None, run: Any = None
) -> None:
    """A ``dimension`` (a name or several) that neither the configuration defines nor any of
    ``ratings`` carries: a one-line :class:`AnalysisError` naming the dimensions there are. A
    configured dimension without ratings is fine (an empty report), and so is a rated one the
    configuration lacks (described from the log)."""
    if dimension is None:
        return
    rated = {str(d) for d in ratings["dimension"].dropna().unique()}
    for name in [dimension] if isinstance(dimension, str) else list(dimension):
        if name not in config.dimensions and name not in rated:
            scope = f" in run {run!r}" if isinstance(run, str) else ""
            known = ", ".join(sorted(rated | set(config.dimensions))) or "none"
            raise AnalysisError(
                f"no ratings on dimension {name!r}{scope}, and hilbot.toml does not define it",
                fix=f"use one of {known} (rated or configured), or add [dimensions.{name}] "
                "to hilbot.toml",
            )


# --------------------------------------------------------------------------------------- categories


def option_success(option: ScaleOption) -> bool:
    """Whether an option counts as a success: its ``success`` flag, else score ≥ 0.5."""
    return option.success if option.success is not None else option.score >= 0.5


def ascending(scale: Scale) -> list[ScaleOption]:
    """The scale's options worst first (the order of ordinal statistics)."""
    return sorted(scale.options, key=lambda o: o.score)


def scale_or_none(config: HilbotConfig, dimension: str) -> tuple[str, Scale] | None:
    """The (name, scale) of a dimension, or None when the configuration does not know the
    dimension."""
    dim = config.dimensions.get(dimension)
    return (dim.scale, config.scales[dim.scale]) if dim else None


def nearest(scores: Iterable[float], ascending_scores: Iterable[float]) -> np.ndarray:
    """Per score, the position of the nearest of ``ascending_scores``; a score on a midpoint goes to
    the higher one."""
    import numpy as np

    points = list(ascending_scores)
    edges = np.round([(a + b) / 2 for a, b in zip(points, points[1:])], 9)
    return np.searchsorted(edges, np.round(np.asarray(list(scores), float), 9), side="right")


def nearest_options(scores: Iterable[float], scale: Scale) -> list[ScaleOption]:
    """The option nearest to each score; a score on a midpoint goes to the higher option."""
    options = ascending(scale)
    return [options[i] for i in nearest(scores, (o.score for o in options))]


@dataclass(frozen=True)
class Categories:
    """The categories of one dimension, ascending: its scale's options, or, for a dimension the
    configuration lacks, the judgments rated on it by their mean score (``scale`` None)."""

    dimension: str
    scale: str | None
    """The scale's name; None when the categories come from the log."""
    labels: tuple[str, ...]
    scores: tuple[float, ...]
    """Where each category stands: the option's score, or the judgment's mean score."""
    success: tuple[bool, ...]
    """Whether each counts as a success (log categories: mean score ≥ 0.5)."""

    @property
    def note(self) -> str | None:
        """What a report says about categories from the log (None for a configured scale)."""
        if self.scale is not None:
            return None
        pairs = zip(self.labels, self.scores)
        ranked = " < ".join(f"{label} ({score:.2f})" for label, score in pairs)
        return (
            f"{not_configured(self.dimension)} ({ranked or 'none has a score'}); AI and human "
            "scores go to the nearest one"
        )


def dimension_categories(config: HilbotConfig, dimension: str, ratings: pd.DataFrame) -> Categories:
    """The dimension's categories: its scale's options, or, when the configuration lacks it, the
    judgments of its ``ratings`` (rows of other dimensions are ignored) by mean score, those without
    a score left out."""
    found = scale_or_none(config, dimension)
    if found is not None:
        options = ascending(found[1])
        return Categories(
            dimension,
            found[0],
            tuple(o.value for o in options),
            tuple(o.score for o in options),
            tuple(option_success(o) for o in options),
        )
    rated = judgment_means(ratings[ratings["dimension"] == dimension])
    means = [(judgment, mean) for judgment, mean in rated if math.isfinite(mean)]
    return Categories(
        dimension,
        None,
        tuple(j for j, _ in means),
        tuple(m for _, m in means),
        tuple(m >= 0.5 for _, m in means),
    )


def valued_categories(
    frame: pd.DataFrame, dimension: str, config: HilbotConfig
) -> tuple[str | None, list[str], list[float], list[str]]:
    """The categories of a dimension with the values distances are measured on (agreement's
    weights): (scale name, judgments in ascending score order, their values, notes).

    A scale option's value is its ``number``, else its score; the judgments of ``frame`` (ratings)
    off the scale are placed by their mean score, which is their value too (with a note); a
    dimension the configuration lacks has only those (:func:`judgment_means`). NaN: a judgment
    without a score. Unlike :func:`dimension_categories`, every rated judgment is a category.
    """
    notes: list[str] = []
    ranked: list[tuple[float, int, str, float]] = []
    dim = config.dimensions.get(dimension)
    scale_name = dim.scale if dim else None
    if scale_name is not None:
        # ascending score; on a tie the option listed later (options are best first) comes first
        ranked = [
            (o.score, -i, o.value, o.score if o.number is None else o.number)
            for i, o in enumerate(config.scales[scale_name].options)
        ]
    else:
        notes.append(not_configured(dimension))
    known = {value for _, _, value, _ in ranked}
    for judgment, mean in judgment_means(frame):
        if judgment not in known:
            if scale_name:
                where = (
                    f"placed by its mean score {mean:.2f}, its value"
                    if math.isfinite(mean)
                    else "placed last, without a value (no score)"
                )
                notes.append(f"judgment {judgment!r} is not on scale {scale_name!r}: {where}")
            ranked.append((mean, 1, judgment, mean if math.isfinite(mean) else math.nan))
    ranked.sort()
    labels, values = [value for _, _, value, _ in ranked], [number for *_, number in ranked]
    return scale_name, labels, values, notes


# ------------------------------------------------------------------------------------------ success


def success_flags(ratings: pd.DataFrame, config: HilbotConfig) -> pd.Series:
    """Per rating: its option's ``success`` flag, else score ≥ 0.5."""
    flags = ratings["score"] >= 0.5
    for dimension, rows in ratings.groupby("dimension").groups.items():
        dim = config.dimensions.get(str(dimension))
        options = (
            {o.value: option_success(o) for o in config.scales[dim.scale].options} if dim else {}
        )
        known = ratings.loc[rows, "judgment"].map(options)
        flags[rows] = known.where(known.notna(), flags[rows]).astype(bool)
    return flags.astype(bool)


def rate_fields(ratings: pd.DataFrame, success: pd.Series, level: float = 0.95) -> dict[str, Any]:
    """``n``, ``successes``, ``success_rate``, its Wilson ``ci`` and ``mean_score`` of some
    ratings."""
    n, k = len(ratings), int(success.sum())
    empty = Undefined("no ratings")
    rate: Number = k / n if n else empty
    ci: Interval | Undefined = wilson_interval(k, n, level)
    return {
        "n": n,
        "successes": k,
        "success_rate": rate,
        "ci": ci,
        "mean_score": float(ratings["score"].mean()) if n else empty,
    }


def exact_means(group: "np.ndarray", values: "np.ndarray", groups: int) -> list[float | None]:
    """:func:`statistics.mean` of each group's values — the exact sum divided by the count,
    rounded once — and None for an empty group, without a Python call per value.

    Each distinct value is an integer over a common power of two (floats are dyadic), so a group's
    exact sum is an integer: summed in two int64 halves of 31 bits, joined as a Python int, divided
    by the count times that power (int division rounds correctly). Values past 62 bits at that
    power (tiny ones) are summed as Python ints; NaN or infinity goes to the statistics module."""
    import numpy as np
    import pandas as pd

    size = np.bincount(group, minlength=groups).tolist()
    if not len(values):
        return [None] * groups
    if not np.isfinite(values).all():
        from statistics import mean

        buckets: list[list[float]] = [[] for _ in range(groups)]
        for g, value in zip(group.tolist(), values.tolist()):
            buckets[g].append(value)
        return [mean(b) if b else None for b in buckets]
    code, distinct = pd.factorize(values)
    ratios = [value.as_integer_ratio() for value in np.asarray(distinct).tolist()]
    power = max(d.bit_length() - 1 for _, d in ratios)
    numerators = [n << (power - d.bit_length() + 1) for n, d in ratios]
    pair_code, pairs = pd.factorize(group.astype(np.int64) * len(ratios) + code)
    pairs = np.asarray(pairs, dtype=np.int64)
    count = np.bincount(pair_code, minlength=len(pairs))
    owner, which = pairs // len(ratios), pairs % len(ratios)
    if max(abs(n) for n in numerators) < 2**62:
        numerator = np.array(numerators, dtype=np.int64)
        high, low = np.zeros(groups, dtype=np.int64), np.zeros(groups, dtype=np.int64)
        np.add.at(high, owner, count * (numerator >> 31)[which])
        np.add.at(low, owner, count * (numerator & (2**31 - 1))[which])
        sums = [(h << 31) + lo for h, lo in zip(high.tolist(), low.tolist())]
    else:
        sums = [0] * groups
        for g, w, c in zip(owner.tolist(), which.tolist(), count.tolist()):
            sums[g] += c * numerators[w]
    return [total / (n << power) if n else None for total, n in zip(sums, size)]


__all__ = [
    "KEY3",
    "KEY4",
    "Categories",
    "CodedRatings",
    "Report",
    "ascending",
    "check_dimensions",
    "coded_ratings",
    "dimension_categories",
    "exact_means",
    "judgment_means",
    "key_value",
    "latest_ratings",
    "nearest",
    "nearest_options",
    "not_configured",
    "option_success",
    "rate_fields",
    "scale_or_none",
    "select",
    "success_flags",
    "valued_categories",
]
