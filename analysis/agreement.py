"""Inter-rater reliability: do reviewers agree with each other?

Per dimension: every chance-corrected agreement coefficient a methods reviewer asks for, over all reviewers
(percent agreement, Fleiss' κ, Conger's κ, Gwet's AC1/AC2, Brennan–Prediger, Krippendorff's α) under each
weighting, Krippendorff's α at the four levels of measurement, and per reviewer pair (Cohen's κ, Scott's π,
AC1/AC2, Brennan–Prediger, Krippendorff's α, percent agreement); each with Gwet's analytic standard error,
95% CI and p-value (:mod:`analysis.coefficients`, irrCAC's formulas), a bootstrap CI and its target band; plus
the items reviewers disagree on (the ones to resolve first). Everything returns values; nothing prints or
renders (markdown lives in :mod:`analysis.report`). Conventions:

* **Undefined, never NaN, never an exception.** A statistic that has no value is ``Undefined(reason)``:
  ``"no ratings"``, ``"one rater"``, ``"no shared items"``, ``"fewer than 2 shared items"``,
  ``"fewer than 2 ratings per item"``, ``"all ratings identical"``, ``"one category"`` (and, rarely,
  ``"no expected disagreement"`` for ratio α on values v and −v only); an SE, analytic CI or p-value also
  ``"fewer than 2 items"``; a bootstrap CI also ``"no bootstrap"`` (``n_boot`` = 0), ``"too few defined bootstrap
  replicates (k of B)"`` or, for a pair's coefficients other than Cohen's κ, ``"not bootstrapped (per pair:
  Cohen's κ only)"``; a weighting the category values cannot take (ratio weights on negative values, a
  category without a value) is Undefined for that weighting. Only a programming error (a label outside
  ``categories``, an unknown level, a wrongly shaped array) raises ``ValueError``.
* **Units.** A unit is one item: (run, item) on one dimension. Missing ratings are handled as Gwet's formulas
  handle them, never by dropping units: the multi-rater coefficients use every item with a rating (percent
  agreement: those with two or more; Krippendorff's α: only those, "pairable"); a pair's coefficients use the
  items both reviewers rated. Fleiss' κ is Gwet's missing-data Fleiss' κ (for items all rated by the same
  number of reviewers it is Fleiss' 1971 κ).
* **Categories and values.** The categories are the dimension scale's options in ascending score order. Each
  has a value: the option's ``number`` when the scale declares one (e.g. 1–5), else its score; a judgment the
  scale does not offer keeps its score (its mean score, with a note). The values are what the weights
  (linear, quadratic, radical, ratio, circular; ordinal uses the positions) and interval/ratio α measure
  distances on. Weighted coefficients are reported for every weighting of :data:`analysis.coefficients.WEIGHTS`
  when the scale has three categories or more (with two, every weighting is the identity).
* **Dimensions the configuration lacks** are described from the log itself: their categories are the judgments
  rated on them, by mean score (:func:`judgment_means`: ascending, ties by judgment, a judgment without a
  score last), their values the mean scores, and the dimension's notes say so (:func:`not_configured`); a
  judgment a configured scale does not offer is placed among the options by its mean score.
  :mod:`analysis.calibration` and :mod:`analysis.patterns` follow the same convention. A ``dimension`` asked for
  that neither the configuration defines nor any rating carries is a :class:`AnalysisError` with the fix
  (:func:`check_dimensions`).
* **Krippendorff's α** (:func:`krippendorff_alpha`) uses the coincidence-matrix formulation of Krippendorff (2011),
  "Computing Krippendorff's Alpha-Reliability": o_ck = Σ_u n_uck / (m_u − 1) over pairable units, n_c = Σ_k o_ck,
  α = 1 − (n − 1) Σ o_ck δ_ck / Σ n_c n_k δ_ck. The ordinal δ_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)² is
  computed as (M_k − M_c)² with the mid-ranks M_g = Σ_{h<g} n_h + n_g/2 (the same number). It never builds
  units × values² arrays: memory is O(raters × units + values²). The report computes the same α in Gwet's
  formulation (equal to it, with his variance), the weights 1 − δ / max δ; the ordinal level's SE takes its
  δ, which depends on the category frequencies, as fixed.
* **Analytic precision** (:mod:`analysis.coefficients`): Gwet's linearised variance over units, infinite
  population; 95% CI = value ± t_{0.975, n−1} · SE, the upper bound clipped at 1 (n: items with a rating, or
  shared by the pair); p-value one-sided, H0: coefficient = 0 (irrCAC's since its 1.2).
* **Bootstrap CIs** resample *units* with replacement (``n_boot`` = 1000 replicates, ``numpy.random.
  default_rng(seed)``, so a CI is reproducible), re-compute the statistic on each replicate and take the 2.5
  and 97.5 percentiles (linear interpolation) of the *defined* replicates. The multi-rater coefficients of a
  dimension share one set of resamples of its rated items (every coefficient and weighting from the same
  replicates); α, at every level and weighting, one set of resamples of its pairable items (so each replicate
  has the same number of them: the resamples :func:`bootstrap_ci` draws for ``krippendorff_alpha`` over the
  same items). A pair's Cohen's κ (identity, linear, quadratic and the ``weights`` shown) is bootstrapped from
  its confusion table (each replicate's table one multinomial draw with ``default_rng(seed)``, the same for
  every pair: the same bootstrap distribution as resampling its items); a pair's other coefficients have the
  analytic CI only. A replicate can be undefined (e.g. it drew only units where everyone agreed on one
  category); when fewer than half the replicates are defined the CI is Undefined. A percentile CI need not be
  centred on its estimate; with few items and a statistic at the edge of its range (e.g. κ when reviewers
  systematically disagree) resampling biases the replicates to one side and the CI can even exclude the
  estimate. It is reported as computed, never widened to include it.
* **Bands** (target agreement): the κ-type coefficients (Cohen's, Scott's, Fleiss', Conger's, AC1/AC2,
  Brennan–Prediger) ≥ 0.85 excellent, ≥ 0.75 good, ≥ 0.60 acceptable, else below acceptable; Krippendorff's α
  ≥ 0.90 / ≥ 0.80 / ≥ 0.67. Percent agreement is not chance-corrected: no band (``"n/a"``). Undefined →
  ``"undefined"``.
* **Across dimensions** (:class:`AcrossDimensions`, when two dimensions or more have agreement to measure): each
  coefficient of :data:`POOLED_COEFFICIENTS` pooled as De Vries et al. (2008) pool κ, (p̄_a − p̄_e)/(1 − p̄_e) with
  p̄_a, p̄_e the means of the dimensions' own p_a and p_e (:func:`analysis.coefficients.pooled`). Each dimension
  keeps its own chance agreement: pooling the ratings themselves would put the categories of different scales in
  one chance model and inflate κ. Under a weighting, each dimension's own weights on its own values (a
  two-category scale: the identity). The SE linearises over *items* (an item's dimensions are not independent);
  no bootstrap. Krippendorff's α is reported per dimension only. A dimension named ``overall`` (hilbot's default
  one) is one dimension among the others, not this section.
* **Disagreements**: items with ≥ 2 ratings whose judgments are not all the same, by spread (max − min
  score) descending, then number of raters descending, then run id and item id.

The ``krippendorff`` package (GPL-3.0) is used only by the tests and the bench, never here.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any, Callable, Iterator, Literal, Sequence

import numpy as np

from evaluation.config import HilbotConfig

from . import coefficients as cf
from ._undefined import Jsonable, Undefined
from .errors import AnalysisError
from .registry import Inputs, Option, analysis

if TYPE_CHECKING:
    import pandas as pd

Level = Literal["nominal", "ordinal", "interval", "ratio"]
Weights = Literal["linear", "quadratic"] | None
Number = float | Undefined
Interval = tuple[float, float] | Undefined

VERSION = 2
"""Version of the report's JSON: 2 added the coefficients, their analytic precision, and ``dimensions`` by name."""
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")
"""Krippendorff's levels of measurement, in the order reports list them."""
KAPPA_WEIGHTS: tuple[Weights, ...] = (None, "linear", "quadratic")
"""Cohen's κ variants :func:`cohen_kappa` takes (weights on the category positions)."""
WEIGHTINGS = cf.WEIGHTS
"""The weightings a dimension's coefficients are reported under (identity only for a two-category scale)."""
PAIR_WEIGHTINGS = ("identity", "linear", "quadratic")
"""The weightings every pair is reported under (with the ``weights`` shown, when another)."""
DEFAULT_WEIGHTS = "quadratic"
"""The weighting Markdown shows beside the identity by default (the usual one for ordered scales)."""
COEFFICIENTS = cf.RAW
"""A dimension's coefficients over all its reviewers, per weighting."""
PAIR_COEFFICIENTS = cf.TABLE
"""A pair's coefficients, per weighting."""
POOLED_COEFFICIENTS = cf.POOLED
"""The coefficients pooled across dimensions, per weighting."""
NOT_BOOTSTRAPPED_ACROSS = Undefined("not bootstrapped (across dimensions: analytic only)")
KAPPA_BANDS = ((0.85, "excellent"), (0.75, "good"), (0.60, "acceptable"))
"""Target bands for the κ-type coefficients."""
ALPHA_BANDS = ((0.90, "excellent"), (0.80, "good"), (0.67, "acceptable"))
"""Target bands for Krippendorff's α."""
BELOW = "below acceptable"
UNDEFINED_BAND = "undefined"
NO_BAND = "n/a"
"""The band of percent agreement (not chance-corrected)."""
CONFIDENCE = 0.95
"""Coverage of the CIs."""
MIN_DEFINED = 0.5
"""Share of bootstrap replicates that must be defined for a CI."""
_CHUNK = 1 << 21
"""Unit draws per chunk of bootstrap replicates (bounds the bootstrap's memory)."""
_MAX_CHUNK = 64
"""Replicates per chunk at most. Chunks depend only on the number of units, so every statistic on the same
units draws the same resamples for the same seed."""
_DENSE_PAIR_CELLS = 20_000_000
"""Items × (reviewers × categories) cells up to which the pairs' tables come from a dense one-hot product (80 MB)."""
_COLUMNS = ("run_id", "item_id", "dimension", "reviewer", "judgment", "score", "line")
"""The columns of the ratings frame agreement reads."""
_KAPPA_NAMES = ("cohen", "cohen_kappa", "fleiss", "fleiss_kappa", "kappa", "conger", "conger_kappa", "scott", "scott_pi",
                "gwet", "gwet_ac", "ac1", "ac2", "brennan_prediger", "bp")
_ALPHA_NAMES = ("krippendorff", "krippendorff_alpha", "alpha")


# ---------------------------------------------------------------- bands


def band(value: Number | None, metric: str | Callable[..., Any]) -> str:
    """The target band for ``value`` of ``metric``: excellent / good / acceptable / below acceptable.

    ``metric`` is a κ-type coefficient (``"cohen"``, ``"fleiss"``, ``"conger"``, ``"scott"``, ``"gwet"``,
    ``"brennan_prediger"`` or their keys, e.g. ``"cohen_kappa"``: thresholds 0.85 / 0.75 / 0.60), Krippendorff's α
    (``"krippendorff"`` / ``"alpha"`` / ``"krippendorff_alpha"``: 0.90 / 0.80 / 0.67), or ``"percent_agreement"``
    (no band: ``"n/a"``); the statistic functions themselves also work. Undefined, None or NaN → ``"undefined"``.
    """
    name = str(getattr(metric, "__name__", metric)).lower()
    if name in _KAPPA_NAMES:
        cuts = KAPPA_BANDS
    elif name in _ALPHA_NAMES:
        cuts = ALPHA_BANDS
    elif name in ("percent_agreement", "percent"):
        return UNDEFINED_BAND if _not_a_number(value) else NO_BAND
    else:
        raise AnalysisError(f"unknown metric {metric!r}", fix="use 'cohen', 'fleiss', 'conger', 'scott', 'gwet', "
                            "'brennan_prediger', 'krippendorff' or 'percent_agreement'")
    if _not_a_number(value):
        return UNDEFINED_BAND
    return next((label for cut, label in cuts if value >= cut), BELOW)  # type: ignore[operator]


def _not_a_number(value: Any) -> bool:
    return value is None or isinstance(value, Undefined) or not math.isfinite(value)


# ---------------------------------------------------------------- Cohen's kappa


def _is_missing(x: Any) -> bool:
    if x is None:
        return True
    try:
        return bool(x != x)  # NaN, NaT
    except (TypeError, ValueError):  # pd.NA
        return True


def _category_index(categories: Sequence[Any]) -> dict[Any, int]:
    index = {c: i for i, c in enumerate(categories)}
    if len(index) != len(categories):
        raise AnalysisError("categories are not distinct", fix="list each category once")
    return index


def _codes(labels: Sequence[Any], index: dict[Any, int]) -> np.ndarray:
    """Category positions of ``labels`` (-1 = missing); a label outside the categories is a ValueError."""
    out = np.empty(len(labels), dtype=np.int64)
    for i, label in enumerate(labels):
        if _is_missing(label):
            out[i] = -1
        elif label in index:
            out[i] = index[label]
        else:
            raise AnalysisError(f"label {label!r} is not one of the categories {list(index)}", fix="add it to the categories, or map it to one")
    return out


def kappa_weights(k: int, weights: Weights = None) -> np.ndarray:
    """The k × k *disagreement* weights: 1 off the diagonal (None), ``|i−j|/(k−1)`` (linear) or its square."""
    pos = np.arange(k)
    diff = np.abs(pos[:, None] - pos[None, :]).astype(float)
    if weights is None:
        return (diff > 0).astype(float)
    if weights == "linear":
        return diff / max(k - 1, 1)
    if weights == "quadratic":
        return (diff / max(k - 1, 1)) ** 2
    raise AnalysisError(f"unknown weights {weights!r}", fix="use None, 'linear' or 'quadratic'")


def _kappa_from_tables(tables: np.ndarray, w: np.ndarray) -> np.ndarray:
    """κ = 1 − Σ w·p_obs / Σ w·p_exp for a batch of (B, K, K) confusion tables; NaN where Σ w·p_exp = 0."""
    total = tables.sum(axis=(1, 2))
    p = tables / np.where(total > 0, total, 1)[:, None, None]
    rows, cols = p.sum(axis=2), p.sum(axis=1)
    observed = np.einsum("bij,ij->b", p, w)
    expected = np.einsum("bi,ij,bj->b", rows, w, cols)
    out = np.full(len(tables), np.nan)
    ok = expected > 0  # exactly 0 only when both raters used one and the same category
    out[ok] = 1.0 - observed[ok] / expected[ok]
    return out


def kappa_of_table(table: Any, weights: Weights = None) -> float:
    """κ of one K × K confusion table (rows: one rater, columns: the other), by :func:`kappa_weights`;
    NaN when the expected disagreement is 0 (both raters used one and the same category)."""
    counts = np.asarray(table, dtype=float)
    return float(_kappa_from_tables(counts[None], kappa_weights(len(counts), weights))[0])


def _cohen_pairs(a: Sequence[Any], b: Sequence[Any], categories: Sequence[Any]) -> tuple[np.ndarray, int]:
    if len(a) != len(b):
        raise AnalysisError(f"a and b do not pair up item by item ({len(a)} and {len(b)} labels)",
                            fix="give one label per item on each side (None for a missing one)")
    index = _category_index(categories)
    ca, cb = _codes(list(a), index), _codes(list(b), index)
    shared = (ca >= 0) & (cb >= 0)
    k = len(index)
    return ca[shared] * k + cb[shared], k


def _cohen_undefined(n_shared: int) -> Undefined | None:
    if n_shared == 0:
        return Undefined("no shared items")
    if n_shared < 2:
        return Undefined("fewer than 2 shared items")
    return None


def cohen_kappa(a: Sequence[Any], b: Sequence[Any], *, categories: Sequence[Any], weights: Weights = None) -> Number:
    """Cohen's κ of two raters' paired labels ``a[i]``, ``b[i]`` (None/NaN = not rated; such pairs are dropped).

    ``categories`` lists every possible label, in order (the order matters only for ``weights``): None =
    unweighted, ``"linear"`` / ``"quadratic"`` = weighted by the distance of the positions. Computed as
    1 − Σ w·p_obs / Σ w·p_exp with p_exp the product of the two raters' marginals (equal to (p_o − p_e)/(1 − p_e)
    when unweighted). Undefined with fewer than 2 shared items, or when the expected disagreement is 0: both
    raters used one and the same category ("all ratings identical"). Two raters who each used a single but
    *different* category give κ = 0.
    """
    codes, k = _cohen_pairs(a, b, categories)
    why = _cohen_undefined(len(codes))
    if why is not None:
        return why
    table = np.bincount(codes, minlength=k * k).reshape(1, k, k).astype(float)
    value = _kappa_from_tables(table, kappa_weights(k, weights))[0]
    return Undefined("all ratings identical") if math.isnan(value) else float(value)


# ---------------------------------------------------------------- Fleiss' kappa


def _as_counts(counts: Any) -> np.ndarray:
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2:
        raise AnalysisError(f"counts have the shape {counts.shape}", fix="give a units × categories matrix")
    if (counts < 0).any() or not np.isfinite(counts).all():
        raise AnalysisError("counts hold a negative or non-finite value", fix="give finite counts ≥ 0")
    return counts


def _count_units(counts: np.ndarray) -> cf.Units | Undefined:
    """The units of a counts matrix (rows with a rating) as :class:`analysis.coefficients.Units`, or why there are none to use."""
    rated = counts[counts.sum(axis=1) > 0]
    if not len(rated):
        return Undefined("no ratings")
    units = cf.Units.from_counts(rated)
    return units if units.pairable.any() else Undefined("fewer than 2 ratings per item")


def fleiss_kappa(counts: Any) -> Number:
    """Fleiss' κ of a units × categories matrix of rating counts, with missing ratings as Gwet handles them.

    Every unit with a rating counts: the observed agreement averages over the units with two or more ratings,
    the category shares over all (Gwet 2014; irrCAC's ``fleiss.kappa.raw``); when every unit has the same number
    of ratings this is Fleiss' (1971) κ. Undefined without a unit with two ratings, or when P̄e = 1 (all ratings
    in one category: "all ratings identical").
    """
    units = _count_units(_as_counts(counts))
    if isinstance(units, Undefined):
        return units
    return cf.units_coefficients(units, np.eye(units.counts.shape[1]))["fleiss_kappa"].value


# ---------------------------------------------------------------- Krippendorff's alpha


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise AnalysisError(f"unknown level {level!r}", fix=f"use one of {', '.join(LEVELS)}")


def _as_reliability_data(data: Any) -> np.ndarray:
    try:
        array = np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        raise AnalysisError("data is not numeric", fix="map labels to numbers first; np.nan or None is a missing value") from None
    if array.ndim != 2:
        raise AnalysisError(f"data has the shape {array.shape}", fix="give a raters × units matrix")
    if np.isinf(array).any():
        raise AnalysisError("data holds an infinite value", fix="use finite values; np.nan or None is a missing value")
    return array


def _encode(data: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, values): ``codes[r, u]`` indexes the sorted distinct ``values``; missing = len(values).

    Integer data (e.g. category positions) take a look-up table instead of a sort.
    """
    low, high = float(np.nanmin(data)), float(np.nanmax(data))
    if high - low <= 1_000_000:
        span = int(high - low)
        offsets = np.subtract(data, low)
        np.copyto(offsets, span + 1, where=~present)
        codes = offsets.astype(np.intp)
        if np.equal(codes, offsets).all():  # integer data
            del offsets
            used = np.bincount(codes.ravel(), minlength=span + 2)[: span + 1] > 0
            values = low + np.flatnonzero(used).astype(float)
            if used.all():
                return codes, values  # every value in the range occurs: the offsets are the codes
            return np.append(np.cumsum(used) - 1, used.sum())[codes], values
        del offsets, codes
    values, inverse = np.unique(data[present], return_inverse=True)
    codes = np.full(data.shape, len(values), dtype=np.intp)
    codes[present] = inverse
    return codes, values


@dataclass(frozen=True)
class _Coded:
    """Reliability data ready for the coincidence matrix."""

    codes: np.ndarray
    """rows × units indices into ``values``; missing = len(values)."""
    values: np.ndarray
    """The distinct values, ascending."""
    weight: np.ndarray
    """1/(m_u − 1) per unit; 0 for a unit with fewer than 2 values."""


def _code(data: np.ndarray, *, pairable_only: bool = False) -> _Coded | Undefined:
    """Encode ``data`` (raters × units) or say why α is undefined.

    Units with fewer than 2 values need no filtering (all their pairs hit a missing value), unless
    ``pairable_only`` (the bootstrap resamples pairable units). When no unit has a value from every rater,
    each unit's values are moved to its top rows (a sort; missing sorts last), so only max m_u rows — not
    all raters — enter the pair loop.
    """
    present = ~np.isnan(data)
    m_u = present.sum(axis=0)
    if not m_u.any():
        return Undefined("no ratings")
    if present.any(axis=1).sum() < 2:
        return Undefined("one rater")
    pairable = m_u >= 2
    if not pairable.any():
        return Undefined("fewer than 2 ratings per item")
    if pairable_only and not pairable.all():
        data, present, m_u = data[:, pairable], present[:, pairable], m_u[pairable]
    codes, values = _encode(data, present)
    weight = np.divide(1.0, m_u - 1.0, out=np.zeros(len(m_u)), where=m_u >= 2)
    top = int(m_u.max())
    if top < codes.shape[0]:
        codes = np.sort(codes, axis=0)[:top]
    return _Coded(codes, values, weight)


def _coincidences(coded: _Coded) -> np.ndarray:
    """o_ck = Σ_u n_uck / (m_u − 1), as T + Tᵀ with T[a, b] = Σ 1/(m_u − 1) over rater pairs r < s with codes a, b.

    One weighted ``np.bincount`` per pair of rows; pairs with a missing value fall in the extra row/column
    ``V`` and are cut off. Nothing of size units × values² is built: memory is O(rows × units + V²).
    """
    v = len(coded.values)
    side = v + 1
    t = np.zeros(side * side)
    for r, s in combinations(range(coded.codes.shape[0]), 2):
        t += np.bincount(coded.codes[r] * side + coded.codes[s], weights=coded.weight, minlength=side * side)
    t = t.reshape(side, side)[:v, :v]
    return t + t.T


def _delta(values: np.ndarray, n_c: np.ndarray, level: str) -> np.ndarray:
    """δ over the distinct values, (V, V) — or (B, V, V) for ordinal with a batch of frequencies n_c (B, V)."""
    if level == "nominal":
        return 1.0 - np.eye(len(values))
    if level == "ordinal":
        mid = np.cumsum(n_c, axis=-1) - n_c / 2.0  # mid-ranks M_g
        return (mid[..., :, None] - mid[..., None, :]) ** 2
    diff = values[:, None] - values[None, :]
    if level == "interval":
        return diff**2
    total = values[:, None] + values[None, :]
    return np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2  # ratio


def _alpha_from_coincidences(o: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
    """α = 1 − (n − 1) Σ o·δ / Σ n_c n_k δ for a batch of (B, V, V) coincidence matrices; NaN if undefined."""
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    d = _delta(values, n_c, level)
    observed = (o * d).sum(axis=(1, 2)) if d.ndim == 3 else np.einsum("bck,ck->b", o, d)
    expected = np.einsum("bc,bck,bk->b", n_c, d, n_c) if d.ndim == 3 else np.einsum("bc,ck,bk->b", n_c, d, n_c)
    out = np.full(len(o), np.nan)
    ok = ((n_c > 0).sum(axis=1) >= 2) & (expected > 0)
    out[ok] = 1.0 - (n[ok] - 1.0) * observed[ok] / expected[ok]
    return out


def krippendorff_alpha(data: Any, level: Level) -> Number:
    """Krippendorff's α of ``data``, a raters × units matrix of numbers (``np.nan`` or None = missing).

    ``level`` is ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"`` (ratio expects values ≥ 0; a pair
    summing to 0 has distance 0). Only pairable units (≥ 2 values) count. Undefined: no values ("no ratings"),
    values from one rater only ("one rater"), no unit with 2 values ("fewer than 2 ratings per item"), a single
    distinct value among the pairable ones ("all ratings identical"). α ≤ 1; 1 = perfect agreement, 0 = chance.

    Memory is O(raters × units + V²) for V distinct values (the coincidence and δ matrices): fine for rating
    scales and 0.01 grids; round free-form continuous scores (tens of thousands of distinct values) first.
    """
    _check_level(level)
    coded = _code(_as_reliability_data(data))
    if isinstance(coded, Undefined):
        return coded
    o = _coincidences(coded)
    if (o.sum(axis=1) > 0).sum() < 2:
        return Undefined("all ratings identical")
    value = _alpha_from_coincidences(o[None], coded.values, level)[0]
    return Undefined("no expected disagreement") if math.isnan(value) else float(value)  # ratio: only v and −v


# ---------------------------------------------------------------- bootstrap


@dataclass(frozen=True)
class _Resampler:
    """A statistic ready for resampling: ``evaluate(multiplicity (B, n_units)) -> (B,)`` (NaN = undefined).

    ``replicates(n_boot, seed)``, when set, draws the replicates itself (Cohen's κ: from its confusion table).
    """

    n_units: int
    evaluate: Callable[[np.ndarray], np.ndarray]
    replicates: Callable[[int, int], np.ndarray] | None = None


def _table_draws(table: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` resampled confusion tables of a pair, (B, k·k): multinomial draws with ``default_rng(seed)``.

    κ depends on the items only through their k × k confusion table, and n items drawn with replacement
    put Multinomial(n, table / n) counts into its cells: so each replicate's table is one multinomial draw,
    the same bootstrap distribution as resampling the items, at k² numbers a replicate instead of n.
    """
    n = table.sum()
    return np.random.default_rng(seed).multinomial(int(n), table / n, size=n_boot)


def _cohen_replicates(codes: np.ndarray, k: int, weights: Sequence[np.ndarray], n_boot: int, seed: int) -> np.ndarray:
    """Replicate κ for each *disagreement* weight matrix, (B, len(weights)), drawn from the confusion table of the
    paired codes a·k + b (:func:`_table_draws`)."""
    table = np.bincount(codes, minlength=k * k).astype(float)
    tables = _table_draws(table, n_boot, seed).reshape(n_boot, k, k).astype(float)
    return np.stack([_kappa_from_tables(tables, w) for w in weights], axis=1)


def _cohen_evaluate(codes: np.ndarray, k: int, weights: Sequence[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """Replicate κ for each weight matrix from the paired codes a·k + b: (B, len(weights)).

    A replicate's confusion table is ``multiplicity @ onehot(codes)`` (a sparse items × k² matrix).
    """
    from scipy import sparse

    onehot = sparse.csr_array((np.ones(len(codes)), (np.arange(len(codes)), codes)), shape=(len(codes), k * k))

    def evaluate(mult: np.ndarray) -> np.ndarray:
        tables = np.asarray(mult @ onehot).reshape(len(mult), k, k)
        return np.stack([_kappa_from_tables(tables, w) for w in weights], axis=1)

    return evaluate


def _cohen_resampler(a: Sequence[Any], b: Sequence[Any], *, categories: Sequence[Any], weights: Weights = None) -> _Resampler:
    codes, k = _cohen_pairs(a, b, categories)
    evaluate = _cohen_evaluate(codes, k, [kappa_weights(k, weights)])
    return _Resampler(len(codes), lambda mult: evaluate(mult)[:, 0],
                      lambda n_boot, seed: _cohen_replicates(codes, k, [kappa_weights(k, weights)], n_boot, seed)[:, 0])


def _fleiss_resampler(counts: Any) -> _Resampler:
    """Fleiss' κ of resampled units (every unit with a rating) from the sums of their features."""
    units = _count_units(_as_counts(counts))
    if isinstance(units, Undefined):  # bootstrap_ci only resamples defined estimates
        raise AnalysisError(units.reason, fix="bootstrap only a defined estimate")
    features, identity = cf.features(units), np.eye(units.counts.shape[1])

    def evaluate(mult: np.ndarray) -> np.ndarray:
        return cf.resampled(mult @ features, identity, units.counts.shape[1], 0)["fleiss_kappa"]

    return _Resampler(units.n, evaluate)


def _alpha_resampler(data: Any, level: Level) -> _Resampler:
    """Each pairable unit's coincidence contributions as a sparse units × V² matrix U (T[a, b] += 1/(m_u − 1) per
    rater pair); a replicate's T is ``multiplicity @ U`` and its o = T + Tᵀ."""
    from scipy import sparse

    _check_level(level)
    coded = _code(_as_reliability_data(data), pairable_only=True)
    if isinstance(coded, Undefined):  # bootstrap_ci only resamples defined estimates
        raise AnalysisError(coded.reason, fix="bootstrap only a defined estimate")
    codes, values, v = coded.codes, coded.values, len(coded.values)
    units = np.arange(codes.shape[1])
    unit_parts, cell_parts, weight_parts = [], [], []
    for r, s in combinations(range(codes.shape[0]), 2):
        both = (codes[r] < v) & (codes[s] < v)
        unit_parts.append(units[both])
        cell_parts.append(codes[r][both] * v + codes[s][both])
        weight_parts.append(coded.weight[both])
    contributions = sparse.csr_array(  # duplicates (same unit and cell) are summed
        (np.concatenate(weight_parts), (np.concatenate(unit_parts), np.concatenate(cell_parts))),
        shape=(len(units), v * v))

    def evaluate(mult: np.ndarray) -> np.ndarray:
        t = np.asarray(mult @ contributions).reshape(len(mult), v, v)
        return _alpha_from_coincidences(t + t.transpose(0, 2, 1), values, level)

    return _Resampler(len(units), evaluate)


_RESAMPLERS: dict[Callable[..., Any], Callable[..., _Resampler]] = {
    cohen_kappa: _cohen_resampler,
    fleiss_kappa: _fleiss_resampler,
    krippendorff_alpha: _alpha_resampler,
}


def _multiplicities(n_units: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """``n_boot`` resamples of ``n_units`` units with ``default_rng(seed)``, in chunks: how often each unit was drawn.

    A chunk draws (reps × n_units) unit indices and counts them ((reps, n_units) floats). The chunks depend
    only on the number of units, so every statistic on the same units draws the same resamples.
    """
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, _MAX_CHUNK, _CHUNK // max(n_units, 1)))
    for start in range(0, n_boot, chunk):
        reps = min(chunk, n_boot - start)
        draws = rng.integers(0, n_units, size=(reps, n_units)) + (np.arange(reps) * n_units)[:, None]
        yield np.bincount(draws.ravel(), minlength=reps * n_units).reshape(reps, n_units).astype(float)


def _replicates(n_units: int, evaluate: Callable[[np.ndarray], np.ndarray], n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` replicate values (NaN = undefined), resampling units with ``default_rng(seed)``
    (:func:`_multiplicities`); ``evaluate`` weighs the per-unit contributions by the multiplicities."""
    return np.concatenate([evaluate(mult) for mult in _multiplicities(n_units, n_boot, seed)])


def _percentile_ci(values: np.ndarray, confidence: float = CONFIDENCE) -> Interval:
    """The percentile interval of the defined replicates, or Undefined when fewer than half are defined."""
    defined = values[np.isfinite(values)]
    if len(defined) < MIN_DEFINED * len(values):
        return Undefined(f"too few defined bootstrap replicates ({len(defined)} of {len(values)})")
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return float(low), float(high)


def _percentile_rows(values: np.ndarray, confidence: float = CONFIDENCE) -> list[Interval]:
    """:func:`_percentile_ci` of each row of (P, B) replicates, vectorised (the same numbers)."""
    p, b = values.shape
    if b == 0:
        return [Undefined("too few defined bootstrap replicates (0 of 0)")] * p
    ordered = np.sort(np.where(np.isfinite(values), values, np.inf), axis=1)
    defined = np.isfinite(values).sum(axis=1)
    tail = (1.0 - confidence) / 2.0
    rows = np.arange(p)
    ends = []
    for q in (tail, 1.0 - tail):
        position = (np.maximum(defined, 1) - 1) * q
        low = np.floor(position).astype(int)
        high = np.minimum(low + 1, np.maximum(defined - 1, 0))
        below, above = ordered[rows, low], ordered[rows, high]
        with np.errstate(invalid="ignore"):
            ends.append(below + (above - below) * (position - low))
    enough = defined >= MIN_DEFINED * b
    return [(float(lo), float(hi)) if ok else Undefined(f"too few defined bootstrap replicates ({d} of {b})")
            for lo, hi, ok, d in zip(ends[0].tolist(), ends[1].tolist(), enough.tolist(), defined.tolist())]


def bootstrap_ci(statistic: Callable[..., Number], *args: Any, n_boot: int = 1000, seed: int = 0,
                 confidence: float = CONFIDENCE, **kwargs: Any) -> Interval:
    """Percentile bootstrap CI of ``statistic(*args, **kwargs)``, resampling units (items) with replacement.

    ``statistic`` is :func:`cohen_kappa`, :func:`fleiss_kappa` or :func:`krippendorff_alpha`, called as usual,
    e.g. ``bootstrap_ci(krippendorff_alpha, data, "ordinal", seed=1)``. Units are the shared items (Cohen), the
    units with a rating (Fleiss) or the pairable units (α). Replicates are evaluated in vectorised chunks (numpy
    ``Generator`` seeded with ``seed``: the same call gives the same CI). Returns (low, high) at ``confidence``
    (percentiles of the defined replicates, linear interpolation), or Undefined: the estimate's own reason when it
    is undefined, ``"no bootstrap"`` when ``n_boot`` = 0, ``"too few defined bootstrap replicates"`` when fewer
    than half of them are defined.
    """
    if statistic not in _RESAMPLERS:
        raise AnalysisError(f"cannot bootstrap {getattr(statistic, '__name__', statistic)!r}", fix="use cohen_kappa, fleiss_kappa or krippendorff_alpha")
    if n_boot < 0 or not 0 < confidence < 1:
        raise AnalysisError(f"n_boot={n_boot}, confidence={confidence}", fix="use n_boot ≥ 0 and a confidence in (0, 1)")
    estimate = statistic(*args, **kwargs)
    if isinstance(estimate, Undefined):
        return estimate
    if n_boot == 0:
        return Undefined("no bootstrap")
    resampler = _RESAMPLERS[statistic](*args, **kwargs)
    if resampler.replicates is not None:
        return _percentile_ci(resampler.replicates(n_boot, seed), confidence)
    return _percentile_ci(_replicates(resampler.n_units, resampler.evaluate, n_boot, seed), confidence)


# ---------------------------------------------------------------- the report


@dataclass(frozen=True)
class AgreementEstimate(Jsonable):
    """One agreement coefficient: its value, analytic precision, bootstrap CI, target band and the items it rests on."""

    value: Number
    se: Number
    """Standard error (Gwet's linearisation)."""
    ci: Interval
    """Analytic 95% CI: value ± t · SE, the upper bound clipped at 1."""
    p_value: Number
    """One-sided p-value of H0: coefficient = 0."""
    bootstrap_ci: Interval
    """Percentile bootstrap 95% CI."""
    band: str
    n_items: int
    """Items (units) the coefficient used."""
    pa: Number
    """Percent agreement it rests on (weighted under weights)."""
    pe: Number
    """Chance agreement."""


@dataclass(frozen=True)
class PairAgreement(Jsonable):
    """Two reviewers' agreement over the items both rated."""

    reviewer_a: str
    reviewer_b: str
    n_shared: int
    coefficients: dict[str, dict[str, AgreementEstimate]]
    """By weighting (identity; linear, quadratic and the report's ``weights`` for three categories or more), then by
    coefficient (:data:`PAIR_COEFFICIENTS`)."""

    @property
    def unweighted(self) -> AgreementEstimate:
        """Cohen's κ."""
        return self.coefficients["identity"]["cohen_kappa"]

    @property
    def linear(self) -> AgreementEstimate:
        """Cohen's κ with linear weights (the unweighted κ for two categories, where they are the same)."""
        return self.coefficients.get("linear", self.coefficients["identity"])["cohen_kappa"]

    @property
    def quadratic(self) -> AgreementEstimate:
        """Cohen's κ with quadratic weights (the unweighted κ for two categories, where they are the same)."""
        return self.coefficients.get("quadratic", self.coefficients["identity"])["cohen_kappa"]


@dataclass(frozen=True)
class ItemDisagreement(Jsonable):
    """An item whose reviewers gave different judgments."""

    run_id: str
    item_id: str
    spread: float
    """max − min score."""
    n_raters: int
    ratings: tuple[tuple[str, str, float], ...]
    """(reviewer, judgment, score), by reviewer."""


@dataclass(frozen=True)
class DimensionAgreement(Jsonable):
    """Agreement among the reviewers of one dimension."""

    dimension: str
    scale: str | None
    """Name of the dimension's scale; None when the dimension is not configured."""
    categories: tuple[str, ...]
    """Judgments in ascending score order."""
    values: tuple[float, ...]
    """Each category's value (the scale's ``number``, else its score; NaN: none), what weights measure distances on."""
    n_items: int
    """Items with at least one rating."""
    n_pairable: int
    """Items with at least two ratings."""
    n_raters: int
    n_ratings: int
    reviewers: tuple[str, ...]
    coefficients: dict[str, dict[str, AgreementEstimate]]
    """Over all reviewers: by weighting (:data:`WEIGHTINGS`; identity only for two categories), then by coefficient
    (:data:`COEFFICIENTS`)."""
    alpha: dict[str, AgreementEstimate]
    """Krippendorff's α by level: nominal, ordinal, interval, ratio."""
    pairs: tuple[PairAgreement, ...]
    """Reviewer pairs with ≥ ``min_shared`` shared items, by reviewer ids."""
    pairs_below_min_shared: int
    """Reviewer pairs sharing 1 … min_shared − 1 items (left out of ``pairs``)."""
    disagreements: tuple[ItemDisagreement, ...]
    notes: tuple[str, ...] = ()
    """Anything unusual about the data (judgments off the scale, an unconfigured dimension, duplicates)."""

    @property
    def fleiss(self) -> AgreementEstimate:
        """Fleiss' κ (unweighted)."""
        return self.coefficients["identity"]["fleiss_kappa"]


@dataclass(frozen=True)
class AcrossDimensions(Jsonable):
    """The coefficients pooled over the dimensions (module doc: each dimension keeps its own chance agreement)."""

    dimensions: tuple[str, ...]
    """The dimensions pooled: every one with two ratings of an item."""
    left_out: dict[str, str]
    """Dimensions not pooled, and why (e.g. "one rater")."""
    n_items: int
    """Items rated on any pooled dimension: the sampling units of the SE."""
    coefficients: dict[str, dict[str, AgreementEstimate]]
    """By weighting (:data:`WEIGHTINGS`), then by coefficient (:data:`POOLED_COEFFICIENTS`); analytic CIs only."""


@dataclass(frozen=True)
class AgreementReport(Jsonable):
    """Inter-rater agreement per dimension."""

    version: int
    """The JSON's version (:data:`VERSION`)."""
    run: str | None
    """The run the ratings were limited to, or None (all runs; items of different runs are different units)."""
    weights: str
    """The weighting Markdown shows beside the identity (and every pair is reported under)."""
    dimensions: dict[str, DimensionAgreement]
    """By dimension name, in name order."""
    n_boot: int
    seed: int
    min_shared: int
    across: AcrossDimensions | None = None
    """The pooled coefficients, when two dimensions or more have agreement to pool."""

    def dimension(self, name: str) -> DimensionAgreement:
        """The named dimension's agreement (KeyError if absent)."""
        return self.dimensions[name]


def _estimate(coefficient: cf.Coefficient, name: str, boot: Interval) -> AgreementEstimate:
    value = coefficient.value
    return AgreementEstimate(value, coefficient.se, coefficient.ci, coefficient.p_value, value if isinstance(value, Undefined) else boot,
                             band(value, name), coefficient.n_units, coefficient.pa, coefficient.pe)


def _undefined_estimate(why: Undefined, n_items: int = 0) -> AgreementEstimate:
    return AgreementEstimate(why, why, why, why, why, UNDEFINED_BAND, n_items, why, why)


# ---------------------------------------------------------------- dimensions: configured or from the log


def not_configured(dimension: str) -> str:
    """The note every analysis gives a dimension hilbot.toml does not define (its judgments come from the log)."""
    return f"dimension {dimension!r} is not configured: judgments ordered by their mean score"


def judgment_means(frame: pd.DataFrame) -> list[tuple[str, float]]:
    """Each judgment of ``frame`` (ratings) with its mean score, ascending; ties by judgment.

    How an analysis describes a dimension the configuration lacks, from the log itself. A judgment none of
    whose ratings has a score gets ``math.inf`` (it comes last).
    """
    means = frame.groupby("judgment", observed=True)["score"].mean()
    ranked = sorted((float(mean) if math.isfinite(mean) else math.inf, str(judgment)) for judgment, mean in means.items())
    return [(judgment, mean) for mean, judgment in ranked]


def check_dimensions(ratings: pd.DataFrame, config: HilbotConfig, dimension: str | Any | None, run: Any = None) -> None:
    """A ``dimension`` (a name or several) that neither the configuration defines nor any of ``ratings`` carries: a
    one-line :class:`AnalysisError` naming the dimensions there are. A configured dimension without ratings is fine
    (an empty report), and so is a rated one the configuration lacks (described from the log)."""
    if dimension is None:
        return
    rated = {str(d) for d in ratings["dimension"].dropna().unique()}
    for name in [dimension] if isinstance(dimension, str) else list(dimension):
        if name not in config.dimensions and name not in rated:
            scope = f" in run {run!r}" if isinstance(run, str) else ""
            known = ", ".join(sorted(rated | set(config.dimensions))) or "none"
            raise AnalysisError(f"no ratings on dimension {name!r}{scope}, and hilbot.toml does not define it",
                              fix=f"use one of {known} (rated or configured), or add [dimensions.{name}] to hilbot.toml")


def _categories(frame: pd.DataFrame, dimension: str, config: HilbotConfig) -> tuple[str | None, list[str], list[float], list[str]]:
    """(scale name, judgments in ascending score order, their values, notes). A scale option's value is its
    ``number``, else its score; judgments off the scale go by their mean score, which is their value too; a
    dimension the configuration lacks has only those (:func:`judgment_means`). NaN: a judgment without a score."""
    notes: list[str] = []
    ranked: list[tuple[float, int, str, float]] = []
    dim = config.dimensions.get(dimension)
    scale_name = dim.scale if dim else None
    if scale_name is not None:
        # ascending score; on a tie the option listed later (options are best first) comes first
        ranked = [(o.score, -i, o.value, o.score if o.number is None else o.number)
                  for i, o in enumerate(config.scales[scale_name].options)]
    else:
        notes.append(not_configured(dimension))
    known = {value for _, _, value, _ in ranked}
    for judgment, mean in judgment_means(frame):
        if judgment not in known:
            if scale_name:
                where = f"placed by its mean score {mean:.2f}, its value" if math.isfinite(mean) else "placed last, without a value (no score)"
                notes.append(f"judgment {judgment!r} is not on scale {scale_name!r}: {where}")
            ranked.append((mean, 1, judgment, mean if math.isfinite(mean) else math.nan))
    ranked.sort()
    return scale_name, [value for _, _, value, _ in ranked], [number for *_, number in ranked], notes


def _disagreements(frame: pd.DataFrame, coded: _Dimension) -> tuple[ItemDisagreement, ...]:
    """The items whose reviewers disagree, by spread (max − min score, NaN scores ignored), raters, run and item.

    ``coded`` numbers the units in (run_id, item_id) order and the reviewers in id order, which the sort uses.
    """
    data, units = coded.data, coded.units
    split = (units.size >= 2) & ((units.counts > 0).sum(axis=1) >= 2)
    if not split.any():
        return ()
    score = frame["score"].to_numpy(dtype=float)
    low, high = np.full(units.n, np.inf), np.full(units.n, -np.inf)
    np.fmin.at(low, data.unit, score)
    np.fmax.at(high, data.unit, score)
    spread = np.where(np.isfinite(high - low), high - low, 0.0)
    items = np.flatnonzero(split)
    items = items[np.lexsort((items, -units.size[items], -spread[items]))]
    place = np.full(units.n, -1)
    place[items] = np.arange(len(items))
    rows = np.flatnonzero(split[data.unit])
    rows = rows[np.lexsort((data.rater[rows], place[data.unit[rows]]))]
    first = np.empty(units.n, dtype=np.intp)
    first[data.unit[::-1]] = np.arange(len(data.unit))[::-1]  # a rating of each unit
    run_ids = frame["run_id"].to_numpy(dtype=object)[first[items]].tolist()
    item_ids = frame["item_id"].to_numpy(dtype=object)[first[items]].tolist()
    triples = list(zip(np.asarray(coded.reviewers, dtype=object)[data.rater[rows]].tolist(),
                       np.asarray(coded.categories, dtype=object)[data.category[rows]].tolist(), score[rows].tolist()))
    ends = np.cumsum(units.size[items]).astype(int).tolist()
    starts = [0, *ends[:-1]]
    return tuple(ItemDisagreement(str(run_id), str(item_id), float(d), int(n), tuple(triples[a:b]))
                 for run_id, item_id, d, n, a, b in zip(run_ids, item_ids, spread[items].tolist(),
                                                        units.size[items].astype(int).tolist(), starts, ends))


# ---------------------------------------------------------------- a dimension's coefficients


def _clean(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Ratings without a run, item, reviewer or judgment left out; the last of duplicate ratings kept; and notes saying so."""
    notes: list[str] = []
    unjudged = frame[["run_id", "item_id", "reviewer", "judgment"]].isna().any(axis=1)
    if unjudged.any():
        notes.append(f"{int(unjudged.sum())} ratings without a run, item, reviewer or judgment left out")
        frame = frame[~unjudged]
    if "line" in frame.columns and not frame["line"].is_monotonic_increasing:  # loaded frames are in log order already
        frame = frame.sort_values("line", kind="stable")
    deduped = frame.drop_duplicates(["run_id", "item_id", "reviewer"], keep="last")
    if len(deduped) < len(frame):
        notes.append(f"{len(frame) - len(deduped)} duplicate ratings (same reviewer and item) dropped; the last one kept")
    return deduped, notes


def _weightings(n_categories: int, shown: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(a dimension's weightings, a pair's): every weighting, and identity, linear, quadratic and ``shown``, from
    three categories; identity only with two."""
    if n_categories < 3:
        return ("identity",), ("identity",)
    return WEIGHTINGS, tuple(dict.fromkeys((*PAIR_WEIGHTINGS, shown)))


def _weight_matrix(kind: str, categories: Sequence[str], values: Sequence[float]) -> np.ndarray | Undefined:
    """The agreement weights ``kind`` on the category values, or why the values cannot take them."""
    if kind not in ("identity", "ordinal"):
        missing = [c for c, v in zip(categories, values) if not math.isfinite(v)]
        if missing:
            return Undefined(f"{kind} weights: category {missing[0]!r} has no value")
    try:
        return cf.weights(kind, values if kind not in ("identity", "ordinal") else len(values))
    except AnalysisError as exc:
        return Undefined(exc.what)


def _level_weights(level: str, units: cf.Units, categories: Sequence[str], values: Sequence[float]) -> np.ndarray | Undefined:
    """Krippendorff's δ of ``level`` as agreement weights 1 − δ / max δ (ordinal: from the pairable units' category counts)."""
    q = len(values)
    if level == "nominal":
        return np.eye(q)
    if level == "ordinal":
        return cf.ordinal_alpha_weights(units.counts[units.pairable].sum(axis=0))
    missing = [c for c, v in zip(categories, values) if not math.isfinite(v)]
    if missing:
        return Undefined(f"{level} α: category {missing[0]!r} has no value")
    delta = _delta(np.asarray(values, dtype=float), np.zeros(q), level)
    top = delta.max()
    return 1.0 - delta / top if top > 0 else np.ones((q, q))


@dataclass(frozen=True)
class _Dimension:
    """One dimension's ratings, coded: the reviewers, the categories and their values, and the ratings' summaries."""

    categories: list[str]
    values: list[float]
    reviewers: list[str]
    data: cf.Ratings
    units: cf.Units
    items: pd.MultiIndex
    """(run_id, item_id) of each unit, in unit order."""


def _coded(frame: pd.DataFrame, categories: list[str], values: list[float]) -> _Dimension:
    import pandas as pd

    reviewers = sorted(frame["reviewer"].astype(str).unique())
    grouped = frame.groupby(["run_id", "item_id"], sort=True)
    unit = grouped.ngroup().to_numpy()
    rater = pd.Categorical(frame["reviewer"].astype(str), categories=reviewers).codes.astype(np.intp)
    category = pd.Categorical(frame["judgment"].astype(str), categories=categories).codes.astype(np.intp)
    n_units = int(unit.max()) + 1 if len(unit) else 0
    data = cf.Ratings(unit.astype(np.intp), rater, category, n_units, len(reviewers), max(len(categories), 1))
    items = grouped.size().index
    if not isinstance(items, pd.MultiIndex):  # no ratings
        items = pd.MultiIndex.from_tuples([], names=["run_id", "item_id"])
    return _Dimension(categories, values, reviewers, data, cf.Units.of(data), items)


@dataclass(frozen=True)
class _PairSet:
    """The reviewer pairs of a dimension sharing enough items: their indices and contingency tables."""

    first: np.ndarray
    second: np.ndarray
    tables: np.ndarray
    """(P, q, q): rows the first reviewer's categories."""
    below: int
    """Pairs sharing 1 … min_shared − 1 items."""
    matrices: dict[str, np.ndarray | Undefined]
    """The pairs' weightings."""
    shown: str

    @property
    def defined(self) -> dict[str, np.ndarray]:
        return {w: m for w, m in self.matrices.items() if not isinstance(m, Undefined)}


@dataclass(frozen=True)
class _Prepared:
    """A dimension coded, with its weight matrices and its pairs' tables."""

    dimension: str
    scale: str | None
    frame: pd.DataFrame
    notes: list[str]
    coded: _Dimension
    matrices: dict[str, np.ndarray | Undefined]
    levels: dict[str, np.ndarray | Undefined]
    pairs: _PairSet


def _prepare(frame: pd.DataFrame, dimension: str, config: HilbotConfig, *, min_shared: int, weights: str) -> _Prepared:
    frame, notes = _clean(frame)
    scale_name, categories, values, more = _categories(frame, dimension, config)
    coded = _coded(frame, categories, values)
    units = coded.units
    shown, pair_shown = _weightings(len(categories), weights)
    if units.why_undefined() is not None:
        matrices: dict[str, np.ndarray | Undefined] = {w: Undefined("unused") for w in shown}
        levels: dict[str, np.ndarray | Undefined] = {}
    else:
        matrices = {w: _weight_matrix(w, categories, values) for w in shown}
        levels = {level: _level_weights(level, units, categories, values) for level in LEVELS}
    return _Prepared(dimension, scale_name, frame, notes + more, coded, matrices, levels,
                     _pair_set(coded, pair_shown, weights, min_shared))


@dataclass(frozen=True)
class _Analytic:
    """A dimension's analytic figures: its coefficients by weighting, α by level, its pairs', and the items in dispute."""

    coefficients: dict[str, dict[str, cf.Coefficient] | Undefined]
    alpha: dict[str, cf.Coefficient | Undefined]
    pairs: dict[str, dict[str, list[cf.Coefficient]]]
    disagreements: tuple[ItemDisagreement, ...]


def _analytic(p: _Prepared) -> _Analytic:
    """Everything but the bootstrap (no BLAS: it runs beside the threads drawing the pairs' tables)."""
    units = p.coded.units
    coefficients: dict[str, dict[str, cf.Coefficient] | Undefined] = {}
    alpha: dict[str, cf.Coefficient | Undefined] = {}
    if units.why_undefined() is None:
        coefficients = {w: m if isinstance(m, Undefined) else cf.units_coefficients(units, m) for w, m in p.matrices.items()}
        alpha = {level: m if isinstance(m, Undefined) else cf.alpha(units, m) for level, m in p.levels.items()}
    return _Analytic(coefficients, alpha, _pair_coefficients(p.pairs), _disagreements(p.frame, p.coded))


def _dimension_estimates(p: _Prepared, analytic: _Analytic, boot: dict[tuple[str, str], Interval],
                         level_boot: dict[str, Interval]) -> tuple[dict[str, dict[str, AgreementEstimate]], dict[str, AgreementEstimate]]:
    """A dimension's coefficients by weighting and α by level, with their bootstrap CIs."""
    units = p.coded.units
    why = units.why_undefined()
    if why is not None:
        return ({w: {name: _undefined_estimate(why, units.n) for name in COEFFICIENTS} for w in p.matrices},
                {level: _undefined_estimate(why, 0) for level in LEVELS})
    coefficients = {}
    for w, found in analytic.coefficients.items():
        coefficients[w] = ({name: _undefined_estimate(found, units.n) for name in COEFFICIENTS} if isinstance(found, Undefined)
                           else {name: _estimate(c, name, boot.get((w, name), Undefined("no bootstrap"))) for name, c in found.items()})
    alpha = {level: _undefined_estimate(c) if isinstance(c, Undefined) else _estimate(c, "krippendorff_alpha", level_boot[level])
             for level, c in analytic.alpha.items()}
    return coefficients, alpha


def _assemble(p: _Prepared, analytic: _Analytic, n_boot: int, seed: int, kappa_boot: dict[str, list[Interval]]) -> DimensionAgreement:
    """The dimension's report: its bootstrap (BLAS: after the pairs' threads are done) and its estimates."""
    coded, units = p.coded, p.coded.units
    boot: dict[tuple[str, str], Interval] = {}
    level_boot: dict[str, Interval] = {}
    if units.why_undefined() is None:
        boot, level_boot = _dimension_bootstrap(units, p.matrices, p.levels, n_boot, seed)
    coefficients, alpha = _dimension_estimates(p, analytic, boot, level_boot)
    return DimensionAgreement(
        dimension=p.dimension, scale=p.scale, categories=tuple(coded.categories), values=tuple(coded.values), n_items=units.n,
        n_pairable=int(units.pairable.sum()), n_raters=len(coded.reviewers), n_ratings=len(p.frame),
        reviewers=tuple(coded.reviewers), coefficients=coefficients, alpha=alpha,
        pairs=tuple(_pair_agreements(p, analytic.pairs, kappa_boot)), pairs_below_min_shared=p.pairs.below,
        disagreements=analytic.disagreements, notes=tuple(p.notes))


def _dimension_bootstrap(units: cf.Units, matrices: dict[str, np.ndarray | Undefined], levels: dict[str, np.ndarray | Undefined],
                         n_boot: int, seed: int) -> tuple[dict[tuple[str, str], Interval], dict[str, Interval]]:
    """Bootstrap CIs of every coefficient (by weighting) and of α at each level (module doc: one set of resamples of
    the rated items; α one of the pairable items)."""
    defined = {w: m for w, m in matrices.items() if not isinstance(m, Undefined)}
    level_matrices = {lvl: m for lvl, m in levels.items() if not isinstance(m, Undefined)}
    if n_boot == 0:
        none = Undefined("no bootstrap")
        return {(w, name): none for w in defined for name in COEFFICIENTS}, {lvl: none for lvl in levels}
    q, raters = units.counts.shape[1], len(units.raters) if units.raters is not None else 0
    everyone, pairable = cf.features(units), cf.alpha_features(units)
    reps: dict[tuple[str, str], list[np.ndarray]] = {(w, name): [] for w in defined for name in COEFFICIENTS}
    level_reps: dict[str, list[np.ndarray]] = {lvl: [] for lvl in level_matrices}

    def alphas(sums: np.ndarray) -> None:
        for w, m in defined.items():
            reps[(w, "krippendorff_alpha")].append(cf.resampled_alpha(sums, m))
        for lvl, m in level_matrices.items():
            level_reps[lvl].append(cf.resampled_alpha(sums, None if lvl == "ordinal" else m))

    same = len(pairable) == units.n  # every rated item pairable: the same resamples
    for mult in _multiplicities(units.n, n_boot, seed):
        for w, replicates in cf.resampled_weightings(mult @ everyone, defined, q, raters).items():
            for name, values in replicates.items():
                reps[(w, name)].append(values)
        if same:
            alphas(mult @ pairable)
    if not same:
        for mult in _multiplicities(len(pairable), n_boot, seed):
            alphas(mult @ pairable)
    keys = list(reps) + list(level_reps)
    cis = _percentile_rows(np.stack([np.concatenate(v) for v in [*reps.values(), *level_reps.values()]])) if keys else []
    found = dict(zip(keys, cis))
    return {k: found[k] for k in reps}, {lvl: found.get(lvl, Undefined("no bootstrap")) for lvl in levels}


# ---------------------------------------------------------------- reviewer pairs


def _pair_tables(data: cf.Ratings) -> np.ndarray:
    """Every reviewer pair's q × q contingency table at once, (r, r, q, q): rows the first reviewer's categories.

    One product of the items × (reviewer, category) one-hot matrix with itself.
    """
    r, q = data.n_raters, data.n_categories
    cells = data.rater * q + data.category
    if data.n_units * r * q <= _DENSE_PAIR_CELLS and data.n_units < 1 << 24:  # float32 counts are exact below 2²⁴
        onehot = np.zeros((data.n_units, r * q), dtype=np.float32)
        onehot[data.unit, cells] = 1.0
        product = (onehot.T @ onehot).astype(np.float64)
    else:  # many items, raters or categories: sparse
        from scipy import sparse

        matrix = sparse.csr_array((np.ones(len(cells)), (data.unit, cells)), shape=(data.n_units, r * q))
        product = (matrix.T @ matrix).toarray()
    return product.reshape(r, q, r, q).transpose(0, 2, 1, 3)


def _pair_set(coded: _Dimension, weightings: tuple[str, ...], shown: str, min_shared: int) -> _PairSet:
    """The pairs sharing ≥ ``min_shared`` items (and how many shared fewer), with their tables."""
    data, reviewers = coded.data, coded.reviewers
    matrices = {w: _weight_matrix(w, coded.categories, coded.values) for w in weightings}
    none = np.zeros(0, dtype=int)
    if len(reviewers) < 2 or data.n_units == 0:
        return _PairSet(none, none, np.zeros((0, data.n_categories, data.n_categories)), 0, matrices, shown)
    tables = _pair_tables(data)
    first, second = np.triu_indices(len(reviewers), 1)
    shared = tables[first, second].sum(axis=(1, 2))
    keep = shared >= min_shared
    below = int(((shared > 0) & ~keep).sum())
    return _PairSet(first[keep], second[keep], tables[first[keep], second[keep]], below, matrices, shown)


def _pair_coefficients(pairs: _PairSet) -> dict[str, dict[str, list[cf.Coefficient]]]:
    """Each pair's analytic coefficients by weighting: all of them unweighted and under the ``shown`` weights, Cohen's κ
    alone under the others (weightings the values cannot take: left out, see :func:`_pair_agreements`)."""
    if not len(pairs.tables):
        return {}
    full = ("identity", pairs.shown)
    out = {}
    for w, m in pairs.defined.items():
        batches = cf.table_batch(pairs.tables, m)
        out[w] = {name: cf.batch_coefficients(batches[name]) for name in (PAIR_COEFFICIENTS if w in full else ("cohen_kappa",))}
    return out


def _pair_agreements(p: _Prepared, coefficients: dict[str, dict[str, list[cf.Coefficient]]],
                     kappa_boot: dict[str, list[Interval]]) -> list[PairAgreement]:
    pairs, reviewers = p.pairs, p.coded.reviewers
    n = pairs.tables.sum(axis=(1, 2)).astype(int).tolist()
    if not n:
        return []
    not_boot = Undefined("not bootstrapped (per pair: Cohen's κ only)")
    per_weighting: dict[str, list[dict[str, AgreementEstimate]]] = {}
    for w, m in pairs.matrices.items():
        if isinstance(m, Undefined):
            names = PAIR_COEFFICIENTS if w in ("identity", pairs.shown) else ("cohen_kappa",)
            per_weighting[w] = [{name: _undefined_estimate(m, k) for name in names} for k in n]
            continue
        rows: list[dict[str, AgreementEstimate]] = [{} for _ in n]
        for name, column in coefficients[w].items():
            boots = kappa_boot[w] if name == "cohen_kappa" else [not_boot] * len(n)
            for row, c, b in zip(rows, column, boots):
                row[name] = _estimate(c, name, b)
        per_weighting[w] = rows
    return [PairAgreement(reviewers[a], reviewers[b], n[i], {w: per_weighting[w][i] for w in pairs.matrices})
            for i, (a, b) in enumerate(zip(pairs.first.tolist(), pairs.second.tolist()))]


def _threads() -> int:
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, min(4, os.cpu_count() or 1))


def _kappas(tables: np.ndarray, disagreements: np.ndarray) -> np.ndarray:
    """Cohen's κ of N q × q tables (N, q, q) under each of W disagreement weight matrices (W, q, q): (N, W).

    κ = 1 − Σ d·t · Σ t / Σ d_kl rows_k cols_l (:func:`_kappa_from_tables`, all weightings at once); NaN where the
    expected disagreement is 0. ``einsum`` rather than BLAS: this runs beside the threads drawing the tables, and
    BLAS's own threads would spin against them.
    """
    rows, cols = np.einsum("nkl->nk", tables), np.einsum("nkl->nl", tables)
    total = rows.sum(axis=1)
    observed = np.einsum("nkl,wkl->nw", tables, disagreements)
    expected = np.einsum("nkl,wkl->nw", rows[:, :, None] * cols[:, None, :], disagreements)
    ok = expected > 0
    return np.where(ok, 1.0 - observed * total[:, None] / np.where(ok, expected, 1.0), np.nan)


def _start_pair_bootstrap(pool: ThreadPoolExecutor, pairs: _PairSet, n_boot: int, seed: int,
                          batch: int = 32) -> Callable[[], dict[str, list[Interval]]]:
    """Start the pairs' Cohen's κ bootstrap on ``pool``; returns the function that waits for each pair's CI per weighting.

    Each pair's tables are drawn by :func:`_table_draws` (the same ``seed`` for every pair, as :func:`bootstrap_ci`
    draws them), κ of every drawn table under every weighting at once; a task per ``batch`` pairs.
    """
    matrices, p = pairs.defined, len(pairs.tables)
    if n_boot == 0 or not matrices or not p:
        return lambda: {w: [Undefined("no bootstrap")] * p for w in matrices}
    q = pairs.tables.shape[1]
    flat = pairs.tables.reshape(p, q * q)
    disagreements = np.stack([1.0 - m for m in matrices.values()])
    drawable = np.flatnonzero(flat.sum(axis=1) >= 2)  # the others are undefined (fewer than 2 shared items)
    batch = max(1, min(batch, _CHUNK // (n_boot * q * q)))  # a task's draws: at most _CHUNK cells (16 MB)

    def task(rows: np.ndarray) -> list[list[Interval]]:
        draws = np.stack([_table_draws(flat[i], n_boot, seed) for i in rows.tolist()]).astype(float)
        kappas = _kappas(draws.reshape(len(rows) * n_boot, q, q), disagreements)  # (rows · B, W)
        return [_percentile_rows(kappas[:, j].reshape(len(rows), n_boot)) for j in range(len(matrices))]

    futures = [(rows, pool.submit(task, rows)) for rows in np.array_split(drawable, max(1, -(-len(drawable) // batch)))
               if len(rows)]

    def collect() -> dict[str, list[Interval]]:
        out: list[list[Interval]] = [[Undefined("fewer than 2 shared items")] * p for _ in matrices]
        for rows, future in futures:
            for j, cis in enumerate(future.result()):
                for i, ci in zip(rows.tolist(), cis):
                    out[j][i] = ci
        return dict(zip(matrices, out))

    return collect


# ---------------------------------------------------------------- the whole report


def agreement(ratings: pd.DataFrame, config: HilbotConfig, *, run: str | None = None, dimension: str | None = None,
              n_boot: int = 1000, seed: int = 0, min_shared: int = 5, weights: str = DEFAULT_WEIGHTS) -> AgreementReport:
    """Inter-rater agreement per dimension over the ``ratings`` frame (columns per the analysis contract).

    ``run`` limits the ratings to one run; ``dimension`` to one dimension (else every dimension rated, by name).
    Per dimension: every coefficient of :data:`COEFFICIENTS` over all reviewers under each weighting (identity
    only for a two-category scale), Krippendorff's α at the four levels, and for every reviewer pair sharing
    ≥ ``min_shared`` items the coefficients of :data:`PAIR_COEFFICIENTS` under identity, linear, quadratic and
    ``weights`` weights; each with its analytic SE, 95% CI and p-value, a 95% bootstrap CI (``n_boot``
    replicates, 0 = none, ``seed``; per pair Cohen's κ only) and its band; and the items reviewers disagree on.
    With fewer than two reviewers every statistic is Undefined ("one rater"). A dimension the configuration lacks
    is described from the log (its judgments by mean score, see the module docstring); a ``dimension`` neither
    configured nor rated is a :class:`AnalysisError` with the fix.
    """
    if n_boot < 0 or min_shared < 1:
        raise AnalysisError(f"n_boot={n_boot}, min_shared={min_shared}", fix="use n_boot ≥ 0 and min_shared ≥ 1")
    if weights not in WEIGHTINGS:
        raise AnalysisError(f"unknown weights {weights!r}", fix=f"use one of {', '.join(WEIGHTINGS)}")
    frame = ratings[[c for c in _COLUMNS if c in ratings.columns]]
    if run is not None:
        frame = frame[frame["run_id"] == run]
    check_dimensions(frame, config, dimension, run)
    if dimension is not None:
        groups = [(dimension, frame[frame["dimension"] == dimension])]
    else:
        groups = sorted(((str(name), group) for name, group in frame.groupby(frame["dimension"].astype(str), sort=False)),
                        key=lambda pair: pair[0])
    # the pairs' draws on threads while this thread computes the analytic figures, BLAS-free (OpenBLAS's own threads
    # would spin against the draws); then the multi-rater bootstraps, which use BLAS
    prepared = [_prepare(group, name, config, min_shared=min_shared, weights=weights) for name, group in groups]
    with ThreadPoolExecutor(_threads()) as pool:
        waiting = [_start_pair_bootstrap(pool, p.pairs, n_boot, seed) for p in prepared]
        analytic = [_analytic(p) for p in prepared]
        kappa_boot = [wait() for wait in waiting]
    dims = {p.dimension: _assemble(p, a, n_boot, seed, k) for p, a, k in zip(prepared, analytic, kappa_boot)}
    return AgreementReport(version=VERSION, run=run, weights=weights, dimensions=dims, n_boot=n_boot, seed=seed,
                           min_shared=min_shared, across=_across(prepared))


# ---------------------------------------------------------------------------------------------- across dimensions


def _across(prepared: Sequence[_Prepared]) -> AcrossDimensions | None:
    """The pooled coefficients of every weighting, when two dimensions or more can be pooled."""
    pooled = [p for p in prepared if p.coded.units.why_undefined() is None]
    if len(pooled) < 2:
        return None
    left_out = {p.dimension: str(why.reason) for p in prepared if (why := p.coded.units.why_undefined()) is not None}
    keys = pooled[0].coded.items
    for p in pooled[1:]:
        keys = keys.union(p.coded.items)
    items = [keys.get_indexer(p.coded.items) for p in pooled]
    coefficients = {w: _pooled_weighting(w, pooled, items, len(keys)) for w in WEIGHTINGS}
    return AcrossDimensions(tuple(p.dimension for p in pooled), left_out, len(keys), coefficients)


def _pooled_weighting(weighting: str, pooled: Sequence[_Prepared], items: Sequence[np.ndarray], n_items: int) -> dict[str, AgreementEstimate]:
    """Every pooled coefficient under one weighting (a two-category dimension's weights are all the identity)."""
    parts: dict[str, list[tuple[cf.Terms, np.ndarray]]] = {name: [] for name in POOLED_COEFFICIENTS}
    why: dict[str, Undefined] = {}
    for p, item in zip(pooled, items):
        matrix = p.matrices.get(weighting, p.matrices["identity"])
        if isinstance(matrix, Undefined):
            return {name: _undefined_estimate(Undefined(f"{matrix.reason} ({p.dimension})"), n_items) for name in POOLED_COEFFICIENTS}
        for name, t in cf.terms(p.coded.units, matrix).items():
            if isinstance(t, Undefined):
                why.setdefault(name, Undefined(f"{t.reason} ({p.dimension})"))
            else:
                parts[name].append((t, item))
    return {name: _undefined_estimate(why[name], n_items) if name in why
            else _estimate(cf.pooled(parts[name], n_items), name, NOT_BOOTSTRAPPED_ACROSS) for name in POOLED_COEFFICIENTS}


# ---------------------------------------------------------------------------------------------- the command

PAIRS = 30
"""Reviewer pairs shown in Markdown."""
BOOTSTRAP_MAX = 100_000
"""The most bootstrap replicates ``--bootstrap`` takes."""
NAMES = {"percent_agreement": "Percent agreement", "fleiss_kappa": "Fleiss' κ", "conger_kappa": "Conger's κ",
         "gwet_ac": "Gwet's AC", "brennan_prediger": "Brennan–Prediger", "krippendorff_alpha": "Krippendorff's α",
         "cohen_kappa": "Cohen's κ", "scott_pi": "Scott's π"}
"""Coefficients as Markdown names them."""


def _name(name: str, weighting: str) -> str:
    if name == "gwet_ac":
        return "Gwet's AC1" if weighting == "identity" else "Gwet's AC2"
    return NAMES[name]


def _markdown(report: AgreementReport) -> list[str]:
    """Per dimension: one table of the coefficients (identity and ``weights``), the pairs, the items to resolve."""
    scope = f"run {report.run}" if report.run else "all runs"
    boot = f"percentile bootstrap over items, {report.n_boot} replicates, seed {report.seed}" if report.n_boot else "none (--bootstrap 0)"
    lines = [f"# Inter-rater agreement ({scope})", "",
             "95% CIs: analytic (Gwet's linearised SE, value ± t₀.₉₇₅ × SE on n − 1 df, at most 1); "
             f"bootstrap: {boot}. p: one-sided, H0: coefficient = 0. "
             "Bands: κ-type ≥ 0.60 acceptable, ≥ 0.75 good, ≥ 0.85 excellent; α ≥ 0.67 / 0.80 / 0.90. "
             f"Weighted rows: {report.weights} weights on the categories' values (all weightings in --format json)."]
    lines += _markdown_across(report.across, report.weights)
    for dim in report.dimensions.values():
        lines += _markdown_dimension(dim, report.min_shared, report.weights)
    return lines


def _markdown_across(across: AcrossDimensions | None, weights: str) -> list[str]:
    from .report import table

    if across is None:
        return []
    rows = [_row(_name(name, "identity"), e) for name, e in across.coefficients["identity"].items()]
    if weights != "identity":
        rows += [_row(f"{_name(name, weights)} ({weights})", e) for name, e in across.coefficients[weights].items()]
    left = "".join(f" Not pooled: {name} ({why})." for name, why in across.left_out.items())
    return ["", "## Across dimensions (pooled)", "",
            f"{', '.join(across.dimensions)} on {across.n_items} items. Each dimension keeps its own chance agreement: "
            "(mean p_a − mean p_e) / (1 − mean p_e) over the dimensions (De Vries et al. 2008); SE by Gwet's linearisation "
            f"over items; no bootstrap. Krippendorff's α is per dimension only.{left}", "",
            *table(["coefficient", "value", "SE", "95% CI", "p", "band"], [(*r[:4], *r[5:]) for r in rows])]


def _interval(interval: Interval) -> str:
    from .report import fmt

    return f"[{interval[0]:.3f}, {interval[1]:.3f}]" if isinstance(interval, tuple) else fmt(interval)


def _row(label: str, e: AgreementEstimate) -> tuple[str, ...]:
    from .report import fmt, p_value

    return label, fmt(e.value), fmt(e.se), _interval(e.ci), _interval(e.bootstrap_ci), p_value(e.p_value), e.band


def _coefficient_rows(dim: DimensionAgreement, weights: str) -> list[tuple[str, ...]]:
    rows = [_row(_name(name, "identity"), e) for name, e in dim.coefficients["identity"].items()]
    rows[-1] = _row("Krippendorff's α (nominal)", dim.coefficients["identity"]["krippendorff_alpha"])
    if weights != "identity" and weights in dim.coefficients:
        for name, e in dim.coefficients[weights].items():
            if name != "krippendorff_alpha" or weights not in ("quadratic", "ratio"):  # = α interval / ratio below
                rows.append(_row(f"{_name(name, weights)} ({weights})", e))
    rows += [_row(f"Krippendorff's α ({level})", dim.alpha[level]) for level in LEVELS[1:]]
    return rows


def _markdown_dimension(dim: DimensionAgreement, min_shared: int, weights: str) -> list[str]:
    from .report import fmt, table

    values = ", ".join(fmt(v, 3).rstrip("0").rstrip(".") if math.isfinite(v) else "–" for v in dim.values)
    lines = ["", f"## {dim.dimension}", "",
             f"{dim.n_ratings} ratings of {dim.n_items} items by {dim.n_raters} reviewers; {dim.n_pairable} items have ≥ 2 ratings. "
             f"Scale: {' < '.join(dim.categories)} (values {values}).", ""]
    lines += table(["coefficient", "value", "SE", "95% CI", "bootstrap 95% CI", "p", "band"], _coefficient_rows(dim, weights))
    lines += _markdown_pairs(dim, min_shared, weights)
    lines += [f"- note: {n}" for n in dim.notes]
    if dim.disagreements:
        lines += ["", f"Items to resolve ({len(dim.disagreements)}; largest spread first):", ""]
        lines += table(["run", "item", "spread", "ratings"],
                       [(d.run_id, d.item_id, fmt(d.spread, 2), "; ".join(f"{who}: {j}" for who, j, _ in d.ratings))
                        for d in dim.disagreements[:25]])
    return lines


def _markdown_pairs(dim: DimensionAgreement, min_shared: int, weights: str) -> list[str]:
    from .report import fmt, table

    if not dim.pairs:
        return []
    shown = sorted(dim.pairs, key=lambda p: (-p.n_shared, p.reviewer_a, p.reviewer_b))[:PAIRS]
    more = f"; the {PAIRS} with most shared items shown, all {len(dim.pairs)} in --format json" if len(dim.pairs) > PAIRS else ""
    weighted = weights if weights in shown[0].coefficients else "identity"
    rows = []
    for p in shown:
        c = p.coefficients["identity"]
        kappa = c["cohen_kappa"]
        rows.append((f"{p.reviewer_a} · {p.reviewer_b}", p.n_shared, fmt(kappa.value), _interval(kappa.ci), _interval(kappa.bootstrap_ci),
                     kappa.band, fmt(p.coefficients[weighted]["cohen_kappa"].value), fmt(c["scott_pi"].value),
                     fmt(c["gwet_ac"].value), fmt(c["brennan_prediger"].value), fmt(c["percent_agreement"].value)))
    return ["", f"Per reviewer pair (≥ {min_shared} shared items; {dim.pairs_below_min_shared} pairs had fewer{more}):", "",
            *table(["pair", "shared", "Cohen's κ", "95% CI", "bootstrap 95% CI", "band", f"κ ({weighted})", "Scott's π", "AC1",
                    "Brennan–Prediger", "% agreement"], rows)]


def _chart(report: AgreementReport) -> bytes:
    from .charts import interval_bars

    estimates = [(name, dim.alpha["ordinal"]) for name, dim in report.dimensions.items()]
    values = [None if isinstance(e.value, Undefined) else e.value for _, e in estimates]
    intervals = [e.bootstrap_ci if isinstance(e.bootstrap_ci, tuple) else e.ci if isinstance(e.ci, tuple) else None for _, e in estimates]
    return interval_bars([name for name, _ in estimates], values, intervals, title="Krippendorff's α (ordinal) per dimension",
                         ylabel="α", lines=[(0.67, "acceptable"), (0.8, "good"), (0.9, "excellent")])


@analysis("agreement", markdown=_markdown, charts=lambda report, inputs: {"agreement": lambda: _chart(report)}, options=[
    Option("n_boot", int, 1000, "Bootstrap replicates for the 95% CIs", flag="--bootstrap", low=0, high=BOOTSTRAP_MAX),
    Option("seed", int, 0, "Bootstrap seed", low=0, high=2**32 - 1),
    Option("weights", str, DEFAULT_WEIGHTS, "Weighting shown beside the unweighted coefficients (JSON has all)",
           choices=WEIGHTINGS)])
def agreement_command(inputs: Inputs, *, n_boot: int, seed: int, weights: str) -> AgreementReport:
    """Inter-rater agreement per dimension, every coefficient with its standard error, CIs and p-value.

    Percent agreement, Fleiss', Conger's and Cohen's κ, Scott's π, Gwet's AC1/AC2, Brennan–Prediger and
    Krippendorff's α at four levels, with analytic and bootstrap CIs, p-values and bands.

    Example: hilbot analyze agreement --run demo-docs-search --weights linear
    """
    return agreement(inputs.frames.ratings, inputs.config, run=inputs.run, dimension=inputs.dimension, n_boot=n_boot, seed=seed,
                     weights=weights)


__all__ = [
    "ALPHA_BANDS", "COEFFICIENTS", "KAPPA_BANDS", "LEVELS", "PAIR_COEFFICIENTS", "POOLED_COEFFICIENTS", "VERSION", "WEIGHTINGS",
    "AcrossDimensions", "AgreementEstimate",
    "AgreementReport", "DimensionAgreement", "ItemDisagreement", "PairAgreement", "agreement", "band", "bootstrap_ci",
    "check_dimensions", "cohen_kappa", "fleiss_kappa", "judgment_means", "kappa_weights", "krippendorff_alpha", "not_configured",
]
