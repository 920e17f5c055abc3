"""Krippendorff's α by the coincidence matrix, at four levels; its metrics as weights.

Conventions:

* **Data**: a raters × units matrix of numbers (``np.nan`` or None = missing). Only *pairable* units
  (two values or more) count. ``level`` is one of :data:`LEVELS`: nominal, ordinal, interval, ratio
  (ratio expects values ≥ 0; a pair summing to 0 has distance 0).
* **Formula**: the coincidence-matrix formulation of Krippendorff (2011), "Computing Krippendorff's
  Alpha-Reliability": o_ck = Σ_u n_uck / (m_u − 1) over pairable units, n_c = Σ_k o_ck, α = 1 − (n −
  1) Σ o_ck δ_ck / Σ n_c n_k δ_ck. The ordinal δ_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)² is computed
  as (M_k − M_c)² with the mid-ranks M_g = Σ_{h<g} n_h + n_g/2 (the same number). It never builds
  units × values² arrays: memory is O(raters × units + values²), fine for rating scales and 0.01
  grids; round free-form continuous scores (tens of thousands of distinct values) first.
* **Undefined**: no values (``"no ratings"``), values from one rater only (``"one rater"``), no unit
  with two values (``"fewer than 2 ratings per item"``), a single distinct value among the pairable
  ones (``"all ratings identical"``), and, rarely, ratio α on values v and −v only (``"no expected
  disagreement"``). α ≤ 1; 1 = perfect agreement, 0 = chance.
* **As weights** (:func:`level_weights`, :func:`ordinal_alpha_weights`): a level's δ as agreement
  weights 1 − δ / max δ, how the Gwet formulation of α (:func:`analysis.stats.gwet.alpha`, with its
  standard error) takes a level; the ordinal weights come from the category frequencies (where max δ
  = 0, one category used, every weight is 1), and that standard error treats them as fixed.
* **Resampling** (:func:`alpha_resampler`, for :func:`analysis.stats.bootstrap.bootstrap_ci`): each
  pairable unit's coincidence contributions as a sparse units × V² matrix; a replicate's
  coincidences are its multiplicities times that matrix.
* A bad argument — an unknown level, data that is not a numeric raters × units matrix or holds an
  infinite value — is a :func:`analysis.stats.errors.bad_argument`.

The ``krippendorff`` package (GPL-3.0) is used only by the tests and the bench, never here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal, Sequence

import numpy as np

from .errors import bad_argument
from .ratings import Units
from .resampling import Resampler
from .undefined import Number, Undefined

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")
"""Krippendorff's levels of measurement, in the order reports list them."""


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise bad_argument(f"unknown level {level!r}", fix=f"use one of {', '.join(LEVELS)}")


def _as_reliability_data(data: Any) -> np.ndarray:
    try:
        array = np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        fix = "map labels to numbers first; np.nan or None is a missing value"
        raise bad_argument("data is not numeric", fix=fix) from None
    if array.ndim != 2:
        raise bad_argument(f"data has the shape {array.shape}", fix="give a raters × units matrix")
    if np.isinf(array).any():
        raise bad_argument(
            "data holds an infinite value",
            fix="use finite values; np.nan or None is a missing value",
        )
    return array


def _encode(data: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, values): ``codes[r, u]`` indexes the sorted distinct ``values``; missing =
    len(values).

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
    ``pairable_only`` (the bootstrap resamples pairable units). When no unit has a value from every
    rater, each unit's values are moved to its top rows (a sort; missing sorts last), so only max
    m_u rows — not all raters — enter the pair loop.
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
    """o_ck = Σ_u n_uck / (m_u − 1), as T + Tᵀ with T[a, b] = Σ 1/(m_u − 1) over rater pairs r < s
    with codes a, b.

    One weighted ``np.bincount`` per pair of rows; pairs with a missing value fall in the extra
    row/column ``V`` and are cut off. Nothing of size units × values² is built: memory is O(rows ×
    units + V²).
    """
    v = len(coded.values)
    side = v + 1
    t = np.zeros(side * side)
    for r, s in combinations(range(coded.codes.shape[0]), 2):
        t += np.bincount(
            coded.codes[r] * side + coded.codes[s], weights=coded.weight, minlength=side * side
        )
    t = t.reshape(side, side)[:v, :v]
    return t + t.T


def _delta(values: np.ndarray, n_c: np.ndarray, level: str) -> np.ndarray:
    """δ over the distinct values, (V, V) — or (B, V, V) for ordinal with a batch of frequencies n_c
    (B, V)."""
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
    """α = 1 − (n − 1) Σ o·δ / Σ n_c n_k δ for a batch of (B, V, V) coincidence matrices; NaN if
    undefined."""
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    d = _delta(values, n_c, level)
    observed = (o * d).sum(axis=(1, 2)) if d.ndim == 3 else np.einsum("bck,ck->b", o, d)
    expected = (
        np.einsum("bc,bck,bk->b", n_c, d, n_c)
        if d.ndim == 3
        else np.einsum("bc,ck,bk->b", n_c, d, n_c)
    )
    out = np.full(len(o), np.nan)
    ok = ((n_c > 0).sum(axis=1) >= 2) & (expected > 0)
    out[ok] = 1.0 - (n[ok] - 1.0) * observed[ok] / expected[ok]
    return out


def krippendorff_alpha(data: Any, level: Level) -> Number:
    """Krippendorff's α of ``data``, a raters × units matrix of numbers (``np.nan`` or None =
    missing).

    ``level`` is ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"`` (ratio expects values ≥
    0; a pair summing to 0 has distance 0). Only pairable units (≥ 2 values) count. Undefined: no
    values ("no ratings"), values from one rater only ("one rater"), no unit with 2 values ("fewer
    than 2 ratings per item"), a single distinct value among the pairable ones ("all ratings
    identical"). α ≤ 1; 1 = perfect agreement, 0 = chance.

    Memory is O(raters × units + V²) for V distinct values (the coincidence and δ matrices): fine
    for rating scales and 0.01 grids; round free-form continuous scores (tens of thousands of
    distinct values) first.
    """
    _check_level(level)
    coded = _code(_as_reliability_data(data))
    if isinstance(coded, Undefined):
        return coded
    o = _coincidences(coded)
    if (o.sum(axis=1) > 0).sum() < 2:
        return Undefined("all ratings identical")
    value = _alpha_from_coincidences(o[None], coded.values, level)[0]
    # ratio α on values v and −v only
    return Undefined("no expected disagreement") if math.isnan(value) else float(value)


def ordinal_alpha_weights(frequencies: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal metric as agreement weights, 1 − δ / max δ, from the category
    frequencies n_g.

    δ_ck = (M_k − M_c)² with the mid-ranks M_g = Σ_{h<g} n_h + n_g / 2 (the same number as
    (Σ_{g=c..k} n_g − (n_c + n_k)/2)²). ``frequencies`` (…, q) gives (…, q, q); where max δ = 0 (one
    category used) every weight is 1.
    """
    n = np.asarray(frequencies, dtype=float)
    mid = np.cumsum(n, axis=-1) - n / 2.0
    delta = (mid[..., :, None] - mid[..., None, :]) ** 2
    top = delta.max(axis=(-2, -1), keepdims=True)
    return 1.0 - np.divide(delta, top, out=np.zeros_like(delta), where=top > 0)


def level_weights(level: str, values: Any, frequencies: np.ndarray | None = None) -> np.ndarray:
    """Krippendorff's δ of ``level`` on the category ``values`` as agreement weights 1 − δ / max δ
    (all 1 where max δ = 0); ``frequencies``, the categories' counts among pairable units, give the
    ordinal level's."""
    _check_level(level)
    q = len(values)
    if level == "nominal":
        return np.eye(q)
    if level == "ordinal":
        if frequencies is None:
            raise bad_argument(
                "the ordinal level's weights need the category frequencies",
                fix="give the categories' counts among the pairable units",
            )
        return ordinal_alpha_weights(frequencies)
    delta = _delta(np.asarray(values, dtype=float), np.zeros(q), level)
    top = delta.max()
    return 1.0 - delta / top if top > 0 else np.ones((q, q))


def category_level_weights(
    level: str, units: Units | None, categories: Sequence[str], values: Sequence[float]
) -> np.ndarray | Undefined:
    """:func:`level_weights` of rated categories: the ordinal level's from the pairable ``units``'
    category counts; the interval and ratio levels' on the ``values``, Undefined for a category
    without one (NaN)."""
    if level in ("nominal", "ordinal"):
        counts = None
        if units is not None and level == "ordinal":
            counts = units.counts[units.pairable].sum(axis=0)
        return level_weights(level, values, counts)
    missing = [c for c, v in zip(categories, values) if not math.isfinite(v)]
    if missing:
        return Undefined(f"{level} α: category {missing[0]!r} has no value")
    return level_weights(level, values)


# ---------------------------------------------------------------- resampling


def alpha_resampler(data: Any, level: Level) -> Resampler:
    """Each pairable unit's coincidence contributions as a sparse units × V² matrix U (T[a, b] +=
    1/(m_u − 1) per rater pair); a replicate's T is ``multiplicity @ U`` and its o = T + Tᵀ."""
    from scipy import sparse

    _check_level(level)
    coded = _code(_as_reliability_data(data), pairable_only=True)
    if isinstance(coded, Undefined):  # bootstrap_ci only resamples defined estimates
        raise bad_argument(coded.reason, fix="bootstrap only a defined estimate")
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
        shape=(len(units), v * v),
    )

    def evaluate(mult: np.ndarray) -> np.ndarray:
        t = np.asarray(mult @ contributions).reshape(len(mult), v, v)
        return _alpha_from_coincidences(t + t.transpose(0, 2, 1), values, level)

    return Resampler(len(units), evaluate)


__all__ = [
    "LEVELS",
    "Level",
    "alpha_resampler",
    "category_level_weights",
    "krippendorff_alpha",
    "level_weights",
    "ordinal_alpha_weights",
]
