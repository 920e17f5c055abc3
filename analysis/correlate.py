"""Ratings against a numeric item feature, and whether success follows the expected trend.

Does a feature (e.g. ``leap_distance``) calibrate to human ratings? Everything returns values. Conventions:

* **Dimensions.** ``dimension=None`` pools every selected dimension (``dimensions`` lists them; success is
  comparable across scales, scores less so); pass one to keep scales apart.
* **Success** of a rating: its option's ``success`` flag, else score ≥ 0.5 (also when the judgment is not an
  option of the dimension's scale, or the dimension is not configured).
* **Buckets** of the feature, counted over ratings (a rating takes its item's feature value):
  ``buckets=None``: one bucket per distinct value when there are at most 10 of them, else quintiles;
  ``buckets=k``: k quantile buckets (edges = quantiles of the ratings' values, repeated edges merged, so there
  may be fewer); ``buckets=[e0, e1, …]``: the given edges. Interval buckets are ``[e0, e1]``, ``(e1, e2]``, …
  (the first closed on the left); ratings outside explicit edges are counted in ``outside_buckets``. A
  bucket may be empty (explicit edges, or quantile edges between sparse values): its rate is Undefined. Ratings whose item lacks the feature are counted in
  ``missing_feature``.
* **Wilson score interval** (no continuity correction; Wilson 1927, Newcombe 1998 method 3) for each bucket's
  success rate.
* **Monotonicity**: with ``expect="decreasing"`` (larger leaps should do worse) a pair of adjacent
  non-empty buckets (empty ones are skipped) breaks the order when the larger-feature bucket has a strictly
  higher success rate (``"increasing"``: strictly lower). A break is ``beyond_ci`` when the two Wilson
  intervals do not overlap. ``ends_as_expected`` is the end-to-end check: the last bucket against the first.
* **Spearman ρ** between the feature and the human score, over (run, item, dimension) with the human score =
  mean of the item's current ratings (so several reviewers of one item do not count as independent pairs);
  CI as in :func:`analysis.calibration.spearman`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Sequence

import numpy as np
import pandas as pd

from evaluation.config import HilbotConfig
from evaluation.errors import HilbotError
from evaluation.text import visible

from ._undefined import Undefined
from .calibration import KEY3, Interval, Number, RankCorrelation, _Report, option_success, select, spearman, z_value

MAX_DISTINCT = 10
"""At most this many distinct feature values get one bucket each; more get quantile buckets."""
DEFAULT_QUANTILES = 5
"""Quantile buckets when there are more distinct values."""


def wilson_interval(successes: int, n: int, level: float = 0.95) -> Interval | Undefined:
    """Wilson's score interval for ``successes`` out of ``n`` (no continuity correction)."""
    if n <= 0:
        return Undefined("no ratings")
    z, p = z_value(level), successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return Interval(max(0.0, centre - half), min(1.0, centre + half), level, "wilson")


def success_flags(ratings: pd.DataFrame, config: HilbotConfig) -> pd.Series:
    """Per rating: its option's ``success`` flag, else score ≥ 0.5."""
    flags = ratings["score"] >= 0.5
    for dimension, rows in ratings.groupby("dimension").groups.items():
        dim = config.dimensions.get(dimension)
        options = {o.value: option_success(o) for o in config.scales[dim.scale].options} if dim else {}
        known = ratings.loc[rows, "judgment"].map(options)
        flags[rows] = known.where(known.notna(), flags[rows]).astype(bool)
    return flags.astype(bool)


def rate_fields(ratings: pd.DataFrame, success: pd.Series, level: float = 0.95) -> dict[str, Any]:
    """``n``, ``successes``, ``success_rate``, its Wilson ``ci`` and ``mean_score`` of some ratings."""
    n, k = len(ratings), int(success.sum())
    empty = Undefined("no ratings")
    return {"n": n, "successes": k, "success_rate": k / n if n else empty, "ci": wilson_interval(k, n, level),
            "mean_score": float(ratings["score"].mean()) if n else empty}


# ---------------------------------------------------------------- buckets


@dataclass(frozen=True)
class Bucket(_Report):
    """Ratings whose item's feature falls in one bucket."""

    label: str
    low: float
    high: float
    n: int
    """Ratings."""
    n_items: int
    """Distinct (run, item, dimension) among them."""
    successes: int
    success_rate: Number
    ci: Interval | Undefined
    """Wilson interval of the success rate."""
    mean_score: Number


def _fmt(value: float) -> str:
    return f"{value:g}"


def _edges(values: np.ndarray, buckets: int | Sequence[float]) -> np.ndarray:
    if isinstance(buckets, int):
        if buckets < 1:
            raise HilbotError(f"buckets={buckets}", fix="give a positive number of quantile buckets")
        return np.unique(np.quantile(values, np.linspace(0, 1, buckets + 1)))
    edges = np.asarray(list(buckets), float)
    if len(edges) < 2 or np.any(np.diff(edges) <= 0):
        raise HilbotError(f"bucket edges {list(buckets)} are not increasing", fix="give at least two increasing edges")
    return edges


def assign(values: pd.Series, buckets: int | Sequence[float] | None) -> tuple[str, pd.Series, list[tuple[str, float, float]]]:
    """How ``values`` are bucketed: the method, each value's bucket number (−1 outside), and (label, low, high)."""
    distinct = np.unique(values.to_numpy(float))
    explicit = buckets is not None and not isinstance(buckets, int)
    if not explicit and (len(distinct) <= 1 or buckets is None and len(distinct) <= MAX_DISTINCT):
        codes = pd.Series(np.searchsorted(distinct, values.to_numpy(float)), index=values.index)
        return "distinct", codes, [(_fmt(v), float(v), float(v)) for v in distinct]
    method = "edges" if explicit else "quantile"
    edges = _edges(values.to_numpy(float), DEFAULT_QUANTILES if buckets is None else buckets)
    codes = pd.cut(values, edges, right=True, include_lowest=True, labels=False)
    labels = [(f"{'[' if i == 0 else '('}{_fmt(lo)}, {_fmt(hi)}]", float(lo), float(hi))
              for i, (lo, hi) in enumerate(zip(edges, edges[1:]))]
    return method, codes.fillna(-1).astype(int), labels


def _bucket(spec: tuple[str, float, float], rows: pd.DataFrame, level: float) -> Bucket:
    n_items = int(rows[KEY3].drop_duplicates().shape[0])
    return Bucket(label=spec[0], low=spec[1], high=spec[2], n_items=n_items,
                  **rate_fields(rows, rows["success"], level))


# ---------------------------------------------------------------- monotonicity


@dataclass(frozen=True)
class MonotonicityBreak(_Report):
    """Two adjacent non-empty buckets in the wrong order."""

    lower: str
    """Label of the bucket with the smaller feature values."""
    upper: str
    """Label of the bucket with the larger feature values."""
    lower_rate: float
    upper_rate: float
    beyond_ci: bool
    """The two Wilson intervals do not overlap."""


@dataclass(frozen=True)
class Monotonicity(_Report):
    """Whether success rate moves the expected way as the feature grows."""

    expect: str
    """``decreasing`` (larger values should do worse) or ``increasing``."""
    monotonic: bool | Undefined
    breaks: tuple[MonotonicityBreak, ...]
    ends_as_expected: bool | Undefined
    """The last non-empty bucket's rate is below (``increasing``: above) the first's."""


def _wrong_way(first: float, second: float, expect: str) -> bool:
    return second > first if expect == "decreasing" else second < first


def _apart(a: Bucket, b: Bucket) -> bool:
    return a.ci.high < b.ci.low or b.ci.high < a.ci.low


def monotonicity(buckets: Sequence[Bucket], expect: Literal["decreasing", "increasing"] = "decreasing") -> Monotonicity:
    """Flag adjacent non-empty buckets whose success rates break the expected order."""
    filled = [b for b in buckets if b.n > 0]
    if len(filled) < 2:
        why = Undefined(f"fewer than 2 non-empty buckets ({len(filled)})")
        return Monotonicity(expect, why, (), why)
    breaks = tuple(MonotonicityBreak(a.label, b.label, a.success_rate, b.success_rate, _apart(a, b))
                   for a, b in zip(filled, filled[1:]) if _wrong_way(a.success_rate, b.success_rate, expect))
    ends = _wrong_way(filled[-1].success_rate, filled[0].success_rate, expect)
    return Monotonicity(expect, not breaks, breaks, ends)


# ---------------------------------------------------------------- the report


@dataclass(frozen=True)
class CorrelationReport(_Report):
    """Success rate by bucket of a feature, its monotonicity, and Spearman ρ of feature and human score."""

    feature: str
    dimensions: tuple[str, ...]
    bucketing: str
    """``distinct``, ``quantile`` or ``edges``."""
    buckets: tuple[Bucket, ...]
    monotonicity: Monotonicity
    spearman: RankCorrelation
    """Feature against the item's mean human score, over items."""
    n_ratings: int
    """Ratings with the feature (bucketed or not)."""
    missing_feature: int
    """Ratings whose item has no value for the feature."""
    outside_buckets: int
    """Ratings outside explicit bucket edges."""


def feature_column(items: pd.DataFrame, feature: str) -> str:
    """``feature_<name>`` for ``name`` or ``feature_<name>``, or a HilbotError listing the available ones."""
    column = feature if feature.startswith("feature_") else f"feature_{feature}"
    if column in items.columns:
        return column
    available = sorted(visible(c.removeprefix("feature_"), newlines=False)[:60] for c in items.columns
                       if c.startswith("feature_"))  # names from the run files: shown safely, a few
    more = f" and {len(available) - 20} more" if len(available) > 20 else ""
    fix = (f"use one of: {', '.join(available[:20])}{more}" if available
           else "the items carry no feature_* columns (no numeric features)")
    raise HilbotError(f"unknown feature {feature!r}", fix=fix)


def _rated_with_feature(ratings: pd.DataFrame, items: pd.DataFrame, column: str, config: HilbotConfig) -> pd.DataFrame:
    values = items[["run_id", "item_id", column]].rename(columns={column: "value"})
    rated = ratings.merge(values, on=["run_id", "item_id"], how="left")
    rated["value"] = pd.to_numeric(rated["value"], errors="coerce")
    rated["success"] = success_flags(rated, config) if len(rated) else pd.Series(dtype=bool)
    return rated


def _feature_spearman(rated: pd.DataFrame) -> RankCorrelation:
    per_item = rated.groupby(KEY3).agg(value=("value", "first"), human=("score", "mean"))
    return spearman(per_item["value"], per_item["human"], names=("feature", "human score"))


def correlate(ratings: pd.DataFrame, items: pd.DataFrame, config: HilbotConfig, feature: str, *,
              run: str | Iterable[str] | None = None, dimension: str | Iterable[str] | None = None,
              buckets: int | Sequence[float] | None = None,
              expect: Literal["decreasing", "increasing"] = "decreasing", level: float = 0.95) -> CorrelationReport:
    """Success rate per bucket of ``feature``, a monotonicity check and Spearman ρ (see the module docstring)."""
    if expect not in ("decreasing", "increasing"):
        raise HilbotError(f"expect={expect!r}", fix="use 'decreasing' or 'increasing'")
    column = feature_column(items, feature)
    rated = _rated_with_feature(select(ratings, run, dimension), items, column, config)
    known = rated[rated["value"].notna()]
    method, codes, specs = assign(known["value"], buckets)
    made = tuple(_bucket(spec, known[codes == i], level) for i, spec in enumerate(specs))
    return CorrelationReport(
        feature=column.removeprefix("feature_"), dimensions=tuple(sorted(rated["dimension"].unique())),
        bucketing=method, buckets=made, monotonicity=monotonicity(made, expect), spearman=_feature_spearman(known),
        n_ratings=len(known), missing_feature=len(rated) - len(known), outside_buckets=int((codes < 0).sum()))


__all__ = ["Bucket", "CorrelationReport", "Monotonicity", "MonotonicityBreak", "correlate", "monotonicity",
           "wilson_interval"]
