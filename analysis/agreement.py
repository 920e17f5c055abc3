"""Inter-rater reliability: do reviewers agree with each other?

Cohen's κ for every reviewer pair, Fleiss' κ over all reviewers, Krippendorff's α at the four levels of
measurement, each with a bootstrap CI and its target band, plus the items reviewers disagree on
(the ones to resolve first). Everything returns values; nothing prints or renders
(markdown lives in :mod:`analysis.report`). Conventions:

* **Undefined, never NaN, never an exception.** A statistic that has no value is ``Undefined(reason)``:
  ``"no ratings"``, ``"one rater"``, ``"no shared items"``, ``"fewer than 2 shared items"``,
  ``"fewer than 2 ratings per item"``, ``"fewer than 2 items with n ratings"``, ``"all ratings identical"``
  (and, rarely, ``"no expected disagreement"`` for ratio α on values v and −v only); a CI also
  ``"no bootstrap"`` (``n_boot`` = 0) or ``"too few defined bootstrap replicates (k of B)"``.
  Only a programming error (a label outside ``categories``, an unknown level, a wrongly shaped array) raises
  ``ValueError``.
* **Units.** A unit is one item: (run, item) on one dimension. Missing values are allowed everywhere; each
  statistic uses the units it can (Cohen: the items both reviewers rated; Fleiss: the items rated by the modal
  number of reviewers; α: the items with ≥ 2 ratings, "pairable").
* **Categories** for Cohen, Fleiss and nominal α are the dimension scale's options in ascending score order;
  weighted κ weighs disagreements by the distance of the category *positions* (linear ``|i−j|/(K−1)``,
  quadratic its square). Ordinal, interval and ratio α use the stored ``score`` (ordinal α only uses its order).
* **Dimensions the configuration lacks** are described from the log itself: their categories are the judgments
  rated on them, by mean score (:func:`judgment_means`: ascending, ties by judgment, a judgment without a
  score last), and the dimension's notes say so (:func:`not_configured`); a judgment a configured scale does
  not offer is placed among the options by its mean score. :mod:`analysis.calibration` and
  :mod:`analysis.patterns` follow the same convention. A ``dimension`` asked for that neither the configuration
  defines nor any rating carries is a :class:`AnalysisError` with the fix (:func:`check_dimensions`).
* **Krippendorff's α** uses the coincidence-matrix formulation of Krippendorff (2011), "Computing
  Krippendorff's Alpha-Reliability": o_ck = Σ_u n_uck / (m_u − 1) over pairable units, n_c = Σ_k o_ck,
  α = 1 − (n − 1) Σ o_ck δ_ck / Σ n_c n_k δ_ck. The ordinal δ_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)² is
  computed as (M_k − M_c)² with the mid-ranks M_g = Σ_{h<g} n_h + n_g/2 (the same number). It never builds
  units × values² arrays: memory is O(raters × units + values²).
* **Bootstrap CIs** resample *units* with replacement (``n_boot`` = 1000 replicates, ``numpy.random.
  default_rng(seed)``, so a CI is reproducible), re-compute the statistic on each replicate (for α over the
  pairable units, so each replicate has the same number of them) and take the 2.5 and 97.5 percentiles
  (linear interpolation) of the *defined* replicates. A replicate can be undefined (e.g. it drew only units
  where everyone agreed on one category); when fewer than half the replicates are defined the CI is
  Undefined. A percentile CI need not be centred on its estimate; with few items and a statistic at the edge
  of its range (e.g. κ when reviewers systematically disagree) resampling biases the replicates to one side and
  the CI can even exclude the estimate. It is reported as computed, never widened to include it.
* **Bands** (target agreement): κ (Cohen's and Fleiss') ≥ 0.85 excellent, ≥ 0.75 good, ≥ 0.60
  acceptable, else below acceptable; Krippendorff's α ≥ 0.90 / ≥ 0.80 / ≥ 0.67. Undefined → ``"undefined"``.
* **Disagreements**: items with ≥ 2 ratings whose judgments are not all the same, by spread (max − min
  score) descending, then number of raters descending, then run id and item id.

The ``krippendorff`` package (GPL-3.0) is used only by the tests and the bench, never here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

import numpy as np

from evaluation.config import HilbotConfig

from ._undefined import Jsonable, Undefined
from .errors import AnalysisError
from .registry import Inputs, Option, analysis

if TYPE_CHECKING:
    import pandas as pd

Level = Literal["nominal", "ordinal", "interval", "ratio"]
Weights = Literal["linear", "quadratic"] | None
Number = float | Undefined

LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")
"""Krippendorff's levels of measurement, in the order reports list them."""
KAPPA_WEIGHTS: tuple[Weights, ...] = (None, "linear", "quadratic")
"""Cohen's κ variants a report gives per reviewer pair."""
KAPPA_BANDS = ((0.85, "excellent"), (0.75, "good"), (0.60, "acceptable"))
"""Target bands for Cohen's (and Fleiss') κ."""
ALPHA_BANDS = ((0.90, "excellent"), (0.80, "good"), (0.67, "acceptable"))
"""Target bands for Krippendorff's α."""
BELOW = "below acceptable"
UNDEFINED_BAND = "undefined"
CONFIDENCE = 0.95
"""Coverage of the bootstrap CIs."""
MIN_DEFINED = 0.5
"""Share of bootstrap replicates that must be defined for a CI."""
_CHUNK = 1 << 21
"""Unit draws per chunk of bootstrap replicates (bounds the bootstrap's memory)."""
_MAX_CHUNK = 64
"""Replicates per chunk at most. Chunks depend only on the number of units, so every statistic on the same
units draws the same resamples for the same seed."""


# ---------------------------------------------------------------- bands


def band(value: Number | None, metric: str | Callable[..., Any]) -> str:
    """The target band for ``value`` of ``metric``: excellent / good / acceptable / below acceptable.

    ``metric`` is ``"cohen"`` or ``"fleiss"`` (κ thresholds 0.85 / 0.75 / 0.60) or ``"krippendorff"`` / ``"alpha"``
    (α thresholds 0.90 / 0.80 / 0.67); the function names (``"cohen_kappa"``, …) or the functions themselves also
    work. Undefined, None or NaN → ``"undefined"``.
    """
    name = getattr(metric, "__name__", metric)
    name = str(name).lower()
    if name in ("cohen", "cohen_kappa", "fleiss", "fleiss_kappa", "kappa"):
        cuts = KAPPA_BANDS
    elif name in ("krippendorff", "krippendorff_alpha", "alpha"):
        cuts = ALPHA_BANDS
    else:
        raise AnalysisError(f"unknown metric {metric!r}", fix="use 'cohen', 'fleiss' or 'krippendorff'")
    if value is None or isinstance(value, Undefined) or not math.isfinite(value):
        return UNDEFINED_BAND
    return next((label for cut, label in cuts if value >= cut), BELOW)


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


def _fleiss_units(counts: np.ndarray, n_raters: int | None) -> tuple[np.ndarray, float] | Undefined:
    """The units Fleiss' κ uses (mask) and their number of ratings n, or why there are too few."""
    totals = counts.sum(axis=1)
    if n_raters is None:
        rated = totals[totals >= 2]
        if rated.size == 0:
            return Undefined("no ratings" if not totals.any() else "fewer than 2 ratings per item")
        values, freq = np.unique(rated, return_counts=True)
        n = float(values[freq == freq.max()].max())
    else:
        if n_raters < 2:
            raise AnalysisError(f"n_raters={n_raters}", fix="give at least 2 raters")
        n = float(n_raters)
    keep = totals == n
    if keep.sum() < 2:
        return Undefined(f"fewer than 2 items with {n:g} ratings")
    return keep, n


def _fleiss_from_sums(agreement_sum: np.ndarray, category_sums: np.ndarray, units: np.ndarray, n: float) -> np.ndarray:
    """Batch Fleiss' κ from Σ P_i (B,), Σ n_ij per category (B, K) and the number of units (B,); NaN if undefined."""
    p_bar = agreement_sum / units
    p = category_sums / (units * n)[:, None]
    p_e = (p**2).sum(axis=1)
    out = np.full(len(p_bar), np.nan)
    ok = (category_sums > 0).sum(axis=1) >= 2  # else P̄e = 1
    out[ok] = (p_bar[ok] - p_e[ok]) / (1.0 - p_e[ok])
    return out


def _unit_agreement(counts: np.ndarray, n: float) -> np.ndarray:
    """Fleiss' P_i = (Σ_j n_ij² − n) / (n (n − 1)) per unit."""
    return ((counts**2).sum(axis=1) - n) / (n * (n - 1))


def _as_counts(counts: Any) -> np.ndarray:
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2:
        raise AnalysisError(f"counts have the shape {counts.shape}", fix="give a units × categories matrix")
    if (counts < 0).any() or not np.isfinite(counts).all():
        raise AnalysisError("counts hold a negative or non-finite value", fix="give finite counts ≥ 0")
    return counts


def fleiss_kappa(counts: Any, *, n_raters: int | None = None) -> Number:
    """Fleiss' κ (1971) of a units × categories matrix of rating counts.

    Fleiss' κ needs every unit rated by the same number n ≥ 2 of raters: n is ``n_raters`` or, by default, the
    most common number of ratings among units with at least 2 (ties → the larger). Units with any other number
    of ratings (fewer, e.g. still in review, or more) are **dropped**. Undefined with fewer than 2 such units, or
    when P̄e = 1 (all their ratings in one category: "all ratings identical").
    """
    counts = _as_counts(counts)
    chosen = _fleiss_units(counts, n_raters)
    if isinstance(chosen, Undefined):
        return chosen
    keep, n = chosen
    used = counts[keep]
    value = _fleiss_from_sums(np.array([_unit_agreement(used, n).sum()]), used.sum(axis=0)[None, :],
                              np.array([float(len(used))]), n)[0]
    return Undefined("all ratings identical") if math.isnan(value) else float(value)


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


def _cohen_replicates(codes: np.ndarray, k: int, weights: Sequence[np.ndarray], n_boot: int, seed: int) -> np.ndarray:
    """Replicate κ for each weight matrix, (B, len(weights)), drawn from the confusion table of the paired codes a·k + b.

    κ depends on the items only through their k × k confusion table, and n items drawn with replacement
    put Multinomial(n, table / n) counts into its cells: so each replicate's table is one multinomial draw
    (``default_rng(seed)``), the same bootstrap distribution as resampling the items, at k² numbers a
    replicate instead of n (a pair sharing 7,000 items: 7,000 draws a replicate before).
    """
    n = len(codes)
    table = np.bincount(codes, minlength=k * k).astype(float)
    tables = np.random.default_rng(seed).multinomial(n, table / n, size=n_boot).reshape(n_boot, k, k).astype(float)
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


def _fleiss_resampler(counts: Any, *, n_raters: int | None = None) -> _Resampler:
    counts = _as_counts(counts)
    chosen = _fleiss_units(counts, n_raters)
    if isinstance(chosen, Undefined):  # bootstrap_ci only resamples defined estimates
        raise AnalysisError(chosen.reason, fix="bootstrap only a defined estimate")
    keep, n = chosen
    used = counts[keep]
    per_unit = _unit_agreement(used, n)

    def evaluate(mult: np.ndarray) -> np.ndarray:
        return _fleiss_from_sums(mult @ per_unit, mult @ used, mult.sum(axis=1), n)

    return _Resampler(len(used), evaluate)


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


def _replicates(n_units: int, evaluate: Callable[[np.ndarray], np.ndarray], n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` replicate values (NaN = undefined), resampling units with ``default_rng(seed)``, in chunks.

    A chunk draws (reps × n_units) unit indices and turns them into multiplicities (how often each unit was
    drawn), which ``evaluate`` weighs the per-unit contributions by.
    """
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, _MAX_CHUNK, _CHUNK // max(n_units, 1)))
    out = []
    for start in range(0, n_boot, chunk):
        reps = min(chunk, n_boot - start)
        draws = rng.integers(0, n_units, size=(reps, n_units)) + (np.arange(reps) * n_units)[:, None]
        mult = np.bincount(draws.ravel(), minlength=reps * n_units).reshape(reps, n_units).astype(float)
        out.append(evaluate(mult))
    return np.concatenate(out)


def _percentile_ci(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float] | Undefined:
    """The percentile interval of the defined replicates, or Undefined when fewer than half are defined."""
    defined = values[np.isfinite(values)]
    if len(defined) < MIN_DEFINED * len(values):
        return Undefined(f"too few defined bootstrap replicates ({len(defined)} of {len(values)})")
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return float(low), float(high)


def bootstrap_ci(statistic: Callable[..., Number], *args: Any, n_boot: int = 1000, seed: int = 0,
                 confidence: float = CONFIDENCE, **kwargs: Any) -> tuple[float, float] | Undefined:
    """Percentile bootstrap CI of ``statistic(*args, **kwargs)``, resampling units (items) with replacement.

    ``statistic`` is :func:`cohen_kappa`, :func:`fleiss_kappa` or :func:`krippendorff_alpha`, called as usual,
    e.g. ``bootstrap_ci(krippendorff_alpha, data, "ordinal", seed=1)``. Units are the shared items (Cohen), the
    units with the modal number of ratings (Fleiss) or the pairable units (α). Replicates are evaluated in
    vectorised chunks (numpy ``Generator`` seeded with ``seed``: the same call gives the same CI). Returns
    (low, high) at ``confidence`` (percentiles of the defined replicates, linear interpolation), or Undefined:
    the estimate's own reason when it is undefined, ``"no bootstrap"`` when ``n_boot`` = 0, ``"too few defined
    bootstrap replicates"`` when fewer than half of them are defined.
    """
    if statistic not in _RESAMPLERS:
        raise AnalysisError(f"cannot bootstrap {getattr(statistic, '__name__', statistic)!r}", fix="use cohen_kappa, fleiss_kappa or krippendorff_alpha")
    if n_boot < 0 or not 0 < confidence < 1:
        raise AnalysisError(f"n_boot={n_boot}, confidence={confidence}", fix="use n_boot ≥ 0 and a confidence in (0, 1)")
    return _bootstrap(statistic, statistic(*args, **kwargs), args, kwargs, n_boot, seed, confidence)


def _bootstrap(statistic: Callable[..., Number], estimate: Number, args: tuple, kwargs: dict, n_boot: int, seed: int,
               confidence: float = CONFIDENCE) -> tuple[float, float] | Undefined:
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
    """One agreement statistic: its value, 95% bootstrap CI, target band and the items it rests on."""

    value: Number
    ci: tuple[float, float] | Undefined
    band: str
    n_items: int
    """Items (units) the statistic used."""


@dataclass(frozen=True)
class PairAgreement(Jsonable):
    """Cohen's κ of two reviewers over the items both rated."""

    reviewer_a: str
    reviewer_b: str
    n_shared: int
    unweighted: AgreementEstimate
    linear: AgreementEstimate
    quadratic: AgreementEstimate


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
    """Judgments in ascending score order (Cohen, Fleiss and nominal α use these)."""
    n_items: int
    """Items with at least one rating."""
    n_pairable: int
    """Items with at least two ratings."""
    n_raters: int
    n_ratings: int
    reviewers: tuple[str, ...]
    pairs: tuple[PairAgreement, ...]
    """Reviewer pairs with ≥ ``min_shared`` shared items, by reviewer ids."""
    pairs_below_min_shared: int
    """Reviewer pairs sharing 1 … min_shared − 1 items (left out of ``pairs``)."""
    fleiss: AgreementEstimate
    fleiss_raters: int | None
    """Ratings per item of the items Fleiss' κ used (the modal number); None when undefined."""
    alpha: dict[str, AgreementEstimate]
    """Krippendorff's α by level: nominal, ordinal, interval, ratio."""
    disagreements: tuple[ItemDisagreement, ...]
    notes: tuple[str, ...] = ()
    """Anything unusual about the data (judgments off the scale, an unconfigured dimension, duplicates)."""


@dataclass(frozen=True)
class AgreementReport(Jsonable):
    """Inter-rater agreement per dimension."""

    run: str | None
    """The run the ratings were limited to, or None (all runs; items of different runs are different units)."""
    dimensions: tuple[DimensionAgreement, ...]
    n_boot: int
    seed: int
    min_shared: int

    def dimension(self, name: str) -> DimensionAgreement:
        """The named dimension's agreement (KeyError if absent)."""
        for dim in self.dimensions:
            if dim.dimension == name:
                return dim
        raise KeyError(name)


def _estimate(statistic: Callable[..., Number], metric: str, n_items: int, args: tuple, kwargs: dict,
              n_boot: int, seed: int) -> AgreementEstimate:
    value = statistic(*args, **kwargs)
    return AgreementEstimate(value, _bootstrap(statistic, value, args, kwargs, n_boot, seed), band(value, metric), n_items)


def _pair_estimates(codes: np.ndarray, k: int, n_boot: int, seed: int) -> list[AgreementEstimate]:
    """Cohen's κ unweighted, linear and quadratic from paired codes a·k + b, their CIs from one set of resamples.

    The same numbers as :func:`cohen_kappa` and :func:`bootstrap_ci` (same seed → same resamples), computed once.
    """
    weights = [kappa_weights(k, w) for w in KAPPA_WEIGHTS]
    why = _cohen_undefined(len(codes))
    if why is not None:
        return [AgreementEstimate(why, why, UNDEFINED_BAND, len(codes)) for _ in weights]
    table = np.bincount(codes, minlength=k * k).reshape(1, k, k).astype(float)
    values: list[Number] = [float(v) if math.isfinite(v) else Undefined("all ratings identical")
                            for v in (_kappa_from_tables(table, w)[0] for w in weights)]
    if all(isinstance(v, Undefined) for v in values):
        cis: list[tuple[float, float] | Undefined] = list(values)  # type: ignore[arg-type]
    elif n_boot == 0:
        cis = [Undefined("no bootstrap")] * len(weights)
    else:
        reps = _cohen_replicates(codes, k, weights, n_boot, seed)
        cis = [_percentile_ci(reps[:, j]) for j in range(len(weights))]
    return [AgreementEstimate(v, v if isinstance(v, Undefined) else ci, band(v, "cohen"), len(codes))
            for v, ci in zip(values, cis)]


def _undefined_estimate(why: Undefined) -> AgreementEstimate:
    return AgreementEstimate(why, why, UNDEFINED_BAND, 0)


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


def _categories(frame: pd.DataFrame, dimension: str, config: HilbotConfig) -> tuple[str | None, list[str], list[str]]:
    """(scale name, judgments in ascending score order, notes). Judgments off the scale go by their mean score;
    a dimension the configuration lacks has only those (:func:`judgment_means`)."""
    notes: list[str] = []
    ranked: list[tuple[float, int, str]] = []
    dim = config.dimensions.get(dimension)
    scale_name = dim.scale if dim else None
    if scale_name is not None:
        # ascending score; on a tie the option listed later (options are best first) comes first
        ranked = [(o.score, -i, o.value) for i, o in enumerate(config.scales[scale_name].options)]
    else:
        notes.append(not_configured(dimension))
    known = {value for _, _, value in ranked}
    for judgment, mean in judgment_means(frame):
        if judgment not in known:
            if scale_name:
                where = f"placed by its mean score {mean:.2f}" if math.isfinite(mean) else "placed last (no score)"
                notes.append(f"judgment {judgment!r} is not on scale {scale_name!r}: {where}")
            ranked.append((mean, 1, judgment))
    return scale_name, [value for *_, value in sorted(ranked)], notes


def _disagreements(frame: pd.DataFrame) -> tuple[ItemDisagreement, ...]:
    per_item = frame.groupby(["run_id", "item_id"], sort=False).agg(
        n=("reviewer", "size"), kinds=("judgment", "nunique"), low=("score", "min"), high=("score", "max"))
    split = per_item[(per_item["n"] >= 2) & (per_item["kinds"] >= 2)]
    if split.empty:
        return ()
    split = split.assign(spread=(split["high"] - split["low"]).fillna(0.0)).reset_index()
    split = split.sort_values(["spread", "n", "run_id", "item_id"], ascending=[False, False, True, True])
    # each rating's item's place in that order (-1 = not a disagreement); then rows by place, then reviewer
    place = frame.merge(split[["run_id", "item_id"]].assign(place=np.arange(len(split))), how="left",
                        on=["run_id", "item_id"])["place"].fillna(-1).to_numpy(dtype=np.intp)
    reviewer = frame["reviewer"].astype(str).to_numpy()
    keep = place >= 0
    order = np.flatnonzero(keep)[np.lexsort((reviewer[keep], place[keep]))]
    triples = list(zip(reviewer[order].tolist(), frame["judgment"].astype(str).to_numpy()[order].tolist(),
                       frame["score"].to_numpy(dtype=float)[order].tolist()))
    ends = np.cumsum(split["n"].to_numpy())
    starts = ends - split["n"].to_numpy()
    return tuple(ItemDisagreement(str(run_id), str(item_id), float(spread), int(n), tuple(triples[a:b]))
                 for run_id, item_id, spread, n, a, b in zip(split["run_id"], split["item_id"], split["spread"],
                                                              split["n"], starts, ends))


def _dimension_agreement(frame: pd.DataFrame, dimension: str, config: HilbotConfig, *, n_boot: int, seed: int,
                         min_shared: int) -> DimensionAgreement:
    import pandas as pd

    notes: list[str] = []
    unjudged = frame[["run_id", "item_id", "reviewer", "judgment"]].isna().any(axis=1)
    if unjudged.any():
        notes.append(f"{int(unjudged.sum())} ratings without a run, item, reviewer or judgment left out")
        frame = frame[~unjudged]
    if "line" in frame.columns:
        frame = frame.sort_values("line", kind="stable")
    deduped = frame.drop_duplicates(["run_id", "item_id", "reviewer"], keep="last")
    if len(deduped) < len(frame):
        notes.append(f"{len(frame) - len(deduped)} duplicate ratings (same reviewer and item) dropped; the last one kept")
    frame = deduped
    scale_name, categories, more = _categories(frame, dimension, config)
    notes += more
    k = len(categories)
    reviewers = sorted(frame["reviewer"].astype(str).unique())
    units = frame.groupby(["run_id", "item_id"], sort=True).ngroup().to_numpy()
    n_units = int(units.max()) + 1 if len(units) else 0
    rater = pd.Categorical(frame["reviewer"].astype(str), categories=reviewers).codes
    category = pd.Categorical(frame["judgment"].astype(str), categories=categories).codes.astype(float)
    nominal = np.full((len(reviewers), n_units), np.nan)
    nominal[rater, units] = category
    score = np.full((len(reviewers), n_units), np.nan)
    score[rater, units] = frame["score"].to_numpy(dtype=float)
    present = ~np.isnan(nominal)
    per_item = present.sum(axis=0)

    common = dict(n_boot=n_boot, seed=seed)
    if len(reviewers) < 2:
        why = Undefined("no ratings" if not reviewers else "one rater")
        fleiss, fleiss_raters, alpha = _undefined_estimate(why), None, {lvl: _undefined_estimate(why) for lvl in LEVELS}
        pairs: list[PairAgreement] = []
        below = 0
    else:
        pairs, below = [], 0
        for i, j in combinations(range(len(reviewers)), 2):
            shared = present[i] & present[j]
            n_shared = int(shared.sum())
            if n_shared < min_shared:
                below += n_shared > 0
                continue
            codes = nominal[i, shared].astype(np.intp) * k + nominal[j, shared].astype(np.intp)
            pairs.append(PairAgreement(reviewers[i], reviewers[j], n_shared, *_pair_estimates(codes, k, n_boot, seed)))
        counts = np.zeros((n_units, k))
        np.add.at(counts, (units, category.astype(int)), 1.0)
        chosen = _fleiss_units(counts, None)
        if isinstance(chosen, Undefined):
            fleiss, fleiss_raters = _undefined_estimate(chosen), None
        else:
            used, n = chosen
            fleiss = _estimate(fleiss_kappa, "fleiss", int(used.sum()), (counts,), {}, **common)
            fleiss_raters = int(n) if not isinstance(fleiss.value, Undefined) else None
        pairable = int((per_item >= 2).sum())
        alpha = {lvl: _estimate(krippendorff_alpha, "krippendorff", pairable,
                                (nominal if lvl == "nominal" else score, lvl), {}, **common) for lvl in LEVELS}
    return DimensionAgreement(
        dimension=dimension, scale=scale_name, categories=tuple(categories), n_items=n_units,
        n_pairable=int((per_item >= 2).sum()), n_raters=len(reviewers), n_ratings=len(frame),
        reviewers=tuple(reviewers), pairs=tuple(pairs), pairs_below_min_shared=below, fleiss=fleiss,
        fleiss_raters=fleiss_raters, alpha=alpha, disagreements=_disagreements(frame), notes=tuple(notes))


def agreement(ratings: pd.DataFrame, config: HilbotConfig, *, run: str | None = None, dimension: str | None = None,
              n_boot: int = 1000, seed: int = 0, min_shared: int = 5) -> AgreementReport:
    """Inter-rater agreement per dimension over the ``ratings`` frame (columns per the analysis contract).

    ``run`` limits the ratings to one run; ``dimension`` to one dimension (else every dimension rated, by name).
    Per dimension: Cohen's κ (unweighted, linear, quadratic) for every reviewer pair sharing ≥ ``min_shared``
    items; Fleiss' κ over the items rated by the modal number of reviewers; Krippendorff's α at the four levels
    (nominal on the judgments' category positions, ordinal / interval / ratio on the scores); each with a 95%
    bootstrap CI (``n_boot`` replicates, 0 = none, ``seed``) and its band; and the items reviewers disagree on.
    With fewer than two reviewers every statistic is Undefined ("one rater"). A dimension the configuration lacks
    is described from the log (its judgments by mean score, see the module docstring); a ``dimension`` neither
    configured nor rated is a :class:`AnalysisError` with the fix.
    """
    if n_boot < 0 or min_shared < 1:
        raise AnalysisError(f"n_boot={n_boot}, min_shared={min_shared}", fix="use n_boot ≥ 0 and min_shared ≥ 1")
    frame = ratings
    if run is not None:
        frame = frame[frame["run_id"] == run]
    check_dimensions(frame, config, dimension, run)
    names = [dimension] if dimension is not None else sorted(frame["dimension"].astype(str).unique())
    dims = tuple(_dimension_agreement(frame[frame["dimension"] == name], name, config, n_boot=n_boot, seed=seed,
                                      min_shared=min_shared) for name in names)
    return AgreementReport(run=run, dimensions=dims, n_boot=n_boot, seed=seed, min_shared=min_shared)



# ---------------------------------------------------------------------------------------------- the command

PAIRS = 30
"""Reviewer pairs shown in Markdown."""
BOOTSTRAP_MAX = 100_000
"""The most bootstrap replicates ``--bootstrap`` takes."""


def _markdown(report: AgreementReport) -> list[str]:
    """α, Fleiss' κ and pairwise Cohen's κ per dimension, with the items to resolve."""
    scope = f"run {report.run}" if report.run else "all runs"
    lines = [f"# Inter-rater agreement ({scope})", "",
             f"95% CIs: percentile bootstrap over items, {report.n_boot} replicates, seed {report.seed}. "
             "Bands: κ ≥ 0.60 acceptable, ≥ 0.75 good, ≥ 0.85 excellent; α ≥ 0.67 / 0.80 / 0.90."]
    for dim in report.dimensions:
        lines += _markdown_dimension(dim, report.min_shared)
    return lines


def _cells(e: AgreementEstimate) -> tuple[str, str, str, int]:
    from .report import fmt

    interval = e.ci if isinstance(e.ci, tuple) else None
    return fmt(e.value), f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else fmt(e.ci), e.band, e.n_items


def _markdown_dimension(dim: DimensionAgreement, min_shared: int) -> list[str]:
    from .report import fmt, table

    lines = ["", f"## {dim.dimension}", "",
             f"{dim.n_ratings} ratings of {dim.n_items} items by {dim.n_raters} reviewers; {dim.n_pairable} items have ≥ 2 ratings. "
             f"Scale: {' < '.join(dim.categories)}.", ""]
    rows = [(f"Krippendorff's α ({level})", *_cells(e)) for level, e in dim.alpha.items()]
    rows.append((f"Fleiss' κ ({dim.fleiss_raters or '–'} raters per item)", *_cells(dim.fleiss)))
    lines += table(["statistic", "value", "95% CI", "band", "items"], rows)
    lines += _markdown_pairs(dim, min_shared)
    lines += [f"- note: {n}" for n in dim.notes]
    if dim.disagreements:
        lines += ["", f"Items to resolve ({len(dim.disagreements)}; largest spread first):", ""]
        lines += table(["run", "item", "spread", "ratings"],
                       [(d.run_id, d.item_id, fmt(d.spread, 2), "; ".join(f"{who}: {j}" for who, j, _ in d.ratings))
                        for d in dim.disagreements[:25]])
    return lines


def _markdown_pairs(dim: DimensionAgreement, min_shared: int) -> list[str]:
    from .report import fmt, table

    if not dim.pairs:
        return []
    shown = sorted(dim.pairs, key=lambda p: (-p.n_shared, p.reviewer_a, p.reviewer_b))[:PAIRS]
    more = f"; the {PAIRS} with most shared items shown, all {len(dim.pairs)} in --format json" if len(dim.pairs) > PAIRS else ""
    return ["", f"Cohen's κ per reviewer pair (≥ {min_shared} shared items; {dim.pairs_below_min_shared} pairs had fewer{more}):", "",
            *table(["pair", "shared", "κ", "95% CI", "band", "κ linear", "κ quadratic"],
                   [(f"{p.reviewer_a} · {p.reviewer_b}", p.n_shared, *_cells(p.unweighted)[:3], fmt(p.linear.value),
                     fmt(p.quadratic.value)) for p in shown])]


def _chart(report: AgreementReport) -> bytes:
    from .charts import interval_bars

    level = lambda dim: "ordinal" if "ordinal" in dim.alpha else next(iter(dim.alpha))  # noqa: E731
    estimates = [(dim.dimension, dim.alpha[level(dim)]) for dim in report.dimensions if dim.alpha]
    values = [None if isinstance(e.value, Undefined) else e.value for _, e in estimates]
    intervals = [e.ci if isinstance(e.ci, tuple) else None for _, e in estimates]
    return interval_bars([name for name, _ in estimates], values, intervals, title="Krippendorff's α (ordinal) per dimension",
                         ylabel="α", lines=[(0.67, "acceptable"), (0.8, "good"), (0.9, "excellent")])


@analysis("agreement", markdown=_markdown, charts=lambda report, inputs: {"agreement": lambda: _chart(report)}, options=[
    Option("n_boot", int, 1000, "Bootstrap replicates for the 95% CIs", flag="--bootstrap", low=0, high=BOOTSTRAP_MAX),
    Option("seed", int, 0, "Bootstrap seed", low=0, high=2**32 - 1)])
def agreement_command(inputs: Inputs, *, n_boot: int, seed: int) -> AgreementReport:
    """Inter-rater agreement: Cohen's κ per pair, Fleiss' κ, Krippendorff's α (4 levels), with CIs and bands.

    Example: hilbot analyze agreement --run demo-docs-search
    """
    return agreement(inputs.frames.ratings, inputs.config, run=inputs.run, dimension=inputs.dimension, n_boot=n_boot, seed=seed)


__all__ = [
    "ALPHA_BANDS", "KAPPA_BANDS", "LEVELS", "AgreementEstimate", "AgreementReport", "DimensionAgreement",
    "ItemDisagreement", "PairAgreement", "agreement", "band", "bootstrap_ci", "check_dimensions", "cohen_kappa",
    "fleiss_kappa", "judgment_means", "kappa_weights", "krippendorff_alpha", "not_configured",
]
