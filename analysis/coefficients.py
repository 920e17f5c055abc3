"""Chance-corrected agreement coefficients with Gwet's analytic standard errors (the formulas of irrCAC).

Percent agreement, Cohen's κ, Scott's π, Fleiss' κ, Conger's κ, Gwet's AC1/AC2, Brennan–Prediger and
Krippendorff's α, unweighted or weighted, each with its standard error, 95% confidence interval and p-value,
as Gwet (2014), *Handbook of Inter-Rater Reliability*, 4th ed., defines them and his R package irrCAC
(``agree.coeff3.raw.r``, ``agree.coeff2.r``, ``weights.gen.r``) computes them. Pure numpy, vectorised: no
loop over units, raters or tables. Conventions:

* **Two kinds of input.** :func:`raw_coefficients` takes raw ratings (units × raters, a category index per
  cell, NaN = not rated) from any number of raters: percent agreement, Fleiss' κ (which *is* Scott's π
  generalised to many raters), Conger's κ (Cohen's κ generalised), Gwet's AC1/AC2, Brennan–Prediger and
  Krippendorff's α. :func:`table_coefficients` takes two raters' q × q contingency table: percent agreement,
  Cohen's κ, Scott's π, Gwet's AC1/AC2, Brennan–Prediger and Krippendorff's α (irrCAC's ``*.table`` functions).
* **Missing ratings** (raw data) are handled as Gwet's formulas handle them; no unit is dropped for having fewer
  raters than others. The units are those with at least one rating (n); percent agreement p_a averages over
  the units with two or more ratings (n₂), p_a = Σ p_a,i / n₂ with p_a,i = Σ_k r_ik (r*_ik − 1) / (r_i (r_i − 1)),
  r*_ik = Σ_l w_kl r_il; the chance agreement uses every unit: π_k = (1/n) Σ_i r_ik / r_i. Krippendorff's α
  uses the units with two or more ratings only (its r̄, ε = 1/Σ r_i and p_a = (1 − ε) p'_a + ε, which equals
  Krippendorff's coincidence-matrix α). Conger's κ uses each rater's own category shares over the units that
  rater rated (raters without a rating do not count).
* **Categories and weights.** q is the number of categories *offered* (unused ones included: they change
  AC1/AC2 and Brennan–Prediger, through q, and the weights, through the value range). Weights are irrCAC's
  agreement weights (1 on the diagonal) on the category *values* x (by default 1 … q): identity; linear
  1 − |x_k − x_l| / (x_max − x_min); quadratic 1 − (x_k − x_l)² / (x_max − x_min)²; radical
  1 − √|x_k − x_l| / √(x_max − x_min); ratio 1 − ((x_k − x_l)/(x_k + x_l))² / ((x_max − x_min)/(x_max + x_min))²
  (values ≥ 0; 1 on the diagonal, also at 0); circular 1 − sin²(π (x_k − x_l) / U) / max, U = x_max − x_min + 1;
  ordinal on the positions 1 … q: 1 − m(m − 1)/2 / max with m = |k − l| + 1. Krippendorff's *ordinal* level
  of measurement is another thing, a metric from the observed category frequencies
  (:func:`ordinal_alpha_weights`); its standard error treats those weights as fixed.
* **Variance** (Gwet's linearisation over units, finite-population correction f = 0, i.e. N infinite):
  v = Σ_i (κ*_i − κ)² / (n (n − 1)) with each unit's linearised contribution κ*_i; for the tables,
  v = (Σ_kl p_kl (w_kl − (1 − κ)(…))² − (p_a − 2 (1 − κ) p_e)²) / (n (1 − p_e)²), negative rounding
  errors set to 0. Krippendorff's α (raw) centres on α' = (p'_a − p_e)/(1 − p_e) over the n₂ units.
* **95% CI** = value ± t_{0.975, n − 1} · SE with Student's t on n − 1 degrees of freedom (n: units with a
  rating, also for α; table: the table's total), the upper bound clipped at 1, the lower bound not clipped
  (as irrCAC). **p-value**: one-sided, H0: coefficient = 0 against > 0, 1 − T_{n − 1}(value / SE), as irrCAC
  computes it since November 2021 (irrCAC 1.2; 1.0 printed the two-sided 2 (1 − T(|value|/SE))).
  An SE of 0 gives the interval [value, value] and p = 0 (value > 0) or 1 (value < 0).
* **Undefined, never NaN, never an exception** for data: ``"no ratings"``, ``"one rater"``, ``"fewer than 2
  ratings per item"``, ``"no shared items"``, ``"fewer than 2 shared items"`` (tables), ``"all ratings
  identical"`` (chance agreement p_e = 1: κ, π, α), ``"one category"`` (AC1/AC2, Brennan–Prediger with q = 1);
  SE, CI and p also ``"fewer than 2 items"`` (α: ``"fewer than 2 items with 2 ratings"``) and, for an SE of 0
  at a value of 0, ``"zero standard error"`` (the p-value). AC1 and Brennan–Prediger stay defined when every
  rating is the same category (both are 1). A bad argument (a wrong shape, an unknown weighting, weights a
  category's values cannot take) is an :class:`AnalysisError` with the fix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ._undefined import Jsonable, Undefined
from .errors import AnalysisError

WEIGHTS = ("identity", "linear", "quadratic", "ordinal", "radical", "ratio", "circular")
"""The weightings (irrCAC's names)."""
RAW = ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac", "brennan_prediger", "krippendorff_alpha")
"""Coefficients of raw ratings from any number of raters (:func:`raw_coefficients`)."""
TABLE = ("percent_agreement", "cohen_kappa", "scott_pi", "gwet_ac", "brennan_prediger", "krippendorff_alpha")
"""Coefficients of two raters' contingency table (:func:`table_coefficients`)."""
CONFIDENCE = 0.95
_TINY = 1e-12
"""1 − p_e at or below this is p_e = 1 (every rating one category): the κ-type coefficients are undefined."""

Number = float | Undefined
Interval = tuple[float, float] | Undefined


@dataclass(frozen=True)
class Coefficient(Jsonable):
    """One agreement coefficient with its analytic precision (see the module doc for the conventions)."""

    value: Number
    pa: Number
    """Percent agreement it rests on (weighted when the weights are)."""
    pe: Number
    """Chance agreement (0 for percent agreement)."""
    se: Number
    """Standard error (Gwet's linearisation)."""
    ci: Interval
    """95% confidence interval, value ± t · SE, the upper bound clipped at 1."""
    p_value: Number
    """One-sided p-value of H0: coefficient = 0."""
    n_units: int
    """Units it rests on (raw: units with a rating; α: with two; table: the table's total)."""


# ---------------------------------------------------------------------------------------------- weights


def weights(kind: str, values: Sequence[float] | int) -> np.ndarray:
    """The q × q agreement weights ``kind`` (one of :data:`WEIGHTS`) on the category ``values`` (or 1 … q for an int q).

    irrCAC's definitions (module doc); the order of ``values`` is the categories' order (it matters for
    ``ordinal`` only, which uses the positions). One category: [[1]].
    """
    x = _category_values(values)
    q = len(x)
    if kind not in WEIGHTS:
        raise AnalysisError(f"unknown weights {kind!r}", fix=f"use one of {', '.join(WEIGHTS)}")
    if kind == "identity" or q == 1:
        return np.eye(q)
    if kind == "ordinal":
        m = np.abs(np.subtract.outer(np.arange(q), np.arange(q))) + 1.0
        return _normalised(m * (m - 1) / 2)
    span = float(x.max() - x.min())
    if span <= 0:
        raise AnalysisError(f"{kind} weights need distinct category values, got {_listed(x)}", fix="give the categories different values")
    diff = np.subtract.outer(x, x)
    if kind == "linear":
        return 1.0 - np.abs(diff) / span
    if kind == "quadratic":
        return 1.0 - diff**2 / span**2
    if kind == "radical":
        return 1.0 - np.sqrt(np.abs(diff)) / math.sqrt(span)
    if kind == "circular":
        return _normalised(np.sin(np.pi * diff / (span + 1.0)) ** 2)
    return _ratio_weights(x, diff, span)


def _category_values(values: Sequence[float] | int) -> np.ndarray:
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        return np.arange(1.0, int(values) + 1.0)
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise AnalysisError("category values are not numbers", fix="give one number per category") from None
    if x.ndim != 1 or len(x) == 0 or not np.isfinite(x).all():
        raise AnalysisError(f"category values {values!r} are not a list of finite numbers", fix="give one finite number per category")
    return x


def _listed(x: np.ndarray) -> str:
    return ", ".join(f"{v:g}" for v in x.tolist())


def _normalised(disagreement: np.ndarray) -> np.ndarray:
    top = disagreement.max()
    return 1.0 - disagreement / top if top > 0 else np.ones_like(disagreement)


def _ratio_weights(x: np.ndarray, diff: np.ndarray, span: float) -> np.ndarray:
    if (x < 0).any():
        raise AnalysisError(f"ratio weights need category values ≥ 0, got {_listed(x)}", fix="use another weighting, or values ≥ 0")
    total = np.add.outer(x, x)
    ratio = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2
    return 1.0 - ratio / (span / (x.max() + x.min())) ** 2


def ordinal_alpha_weights(frequencies: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal metric as agreement weights, 1 − δ / max δ, from the category frequencies n_g.

    δ_ck = (M_k − M_c)² with the mid-ranks M_g = Σ_{h<g} n_h + n_g / 2 (the same number as
    (Σ_{g=c..k} n_g − (n_c + n_k)/2)²). ``frequencies`` (…, q) gives (…, q, q); where max δ = 0 (one category
    used) every weight is 1.
    """
    n = np.asarray(frequencies, dtype=float)
    mid = np.cumsum(n, axis=-1) - n / 2.0
    delta = (mid[..., :, None] - mid[..., None, :]) ** 2
    top = delta.max(axis=(-2, -1), keepdims=True)
    return 1.0 - np.divide(delta, top, out=np.zeros_like(delta), where=top > 0)


def _weight_matrix(spec: str | np.ndarray, values: Sequence[float] | int) -> np.ndarray:
    if isinstance(spec, str):
        return weights(spec, values)
    matrix = np.asarray(spec, dtype=float)
    q = len(_category_values(values))
    if matrix.shape != (q, q) or not np.isfinite(matrix).all():
        raise AnalysisError(f"weights of shape {matrix.shape} for {q} categories", fix=f"give a {q} × {q} matrix of finite numbers")
    return matrix


# ---------------------------------------------------------------------------------------------- inference


def inference(value: np.ndarray, se: np.ndarray, df: np.ndarray, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower, upper, p) of arrays of values and SEs on ``df`` degrees of freedom (see the module doc).

    NaN where the value or SE is NaN, or df < 1; p is NaN where value = SE = 0.
    """
    from scipy.special import stdtr, stdtrit

    value, se, df = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (value, se, df)))
    ok = np.isfinite(value) & np.isfinite(se) & (df >= 1)
    t = np.where(ok, stdtrit(np.where(ok, df, 1.0), 1.0 - (1.0 - confidence) / 2.0), np.nan)
    lower = np.where(ok, value - t * se, np.nan)
    upper = np.where(ok, np.minimum(1.0, value + t * se), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(se > 0, value / np.where(se > 0, se, 1.0), np.sign(value) * np.inf)
    p = np.where(ok & ~((se == 0) & (value == 0)), stdtr(np.where(ok, df, 1.0), -ratio), np.nan)
    return lower, upper, p


def _coefficient(value: Number, pa: Number, pe: Number, variance: float | Undefined, n_units: int, df: int) -> Coefficient:
    """A :class:`Coefficient` from its value and variance (Undefined value: everything undefined alike)."""
    if isinstance(value, Undefined):
        return Coefficient(value, pa, pe, value, value, value, n_units)
    if isinstance(variance, Undefined):
        return Coefficient(value, pa, pe, variance, variance, variance, n_units)
    se = math.sqrt(max(variance, 0.0))
    lower, upper, p = (float(a) for a in inference(np.array(value), np.array(se), np.array(df)))
    p_value: Number = p if math.isfinite(p) else Undefined("zero standard error")
    return Coefficient(value, pa, pe, se, (lower, upper), p_value, n_units)


def _dot(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` without BLAS: its threads would spin against the bootstrap's (:mod:`analysis.agreement`)."""
    return np.einsum("ij,j->i", matrix, vector)


def _chance_corrected(pa: float, pe: float) -> Number:
    return Undefined("all ratings identical") if 1.0 - pe <= _TINY else (pa - pe) / (1.0 - pe)


# ---------------------------------------------------------------------------------------------- raw ratings


@dataclass(frozen=True)
class Ratings:
    """Raw ratings in long form: one entry per rating (unit, rater, category); units and raters numbered from 0."""

    unit: np.ndarray
    rater: np.ndarray
    category: np.ndarray
    n_units: int
    """Units with at least one rating (every number below it has one)."""
    n_raters: int
    n_categories: int

    @classmethod
    def from_matrix(cls, ratings: Any, n_categories: int | None = None) -> "Ratings":
        """From units × raters category indices 0 … q − 1 (NaN or None = not rated); units without a rating are left out."""
        try:
            matrix = np.asarray(ratings, dtype=float)
        except (TypeError, ValueError):
            raise AnalysisError("ratings are not category indices", fix="give numbers 0 … q − 1, NaN for a missing rating") from None
        if matrix.ndim != 2:
            raise AnalysisError(f"ratings have the shape {matrix.shape}", fix="give a units × raters matrix")
        present = ~np.isnan(matrix)
        codes = matrix[present]
        q = int(codes.max()) + 1 if n_categories is None and codes.size else (n_categories or 0)
        if codes.size and ((codes != np.round(codes)) | (codes < 0) | (codes >= q)).any():
            raise AnalysisError(f"ratings hold values other than category indices 0 … {q - 1}", fix="code the categories 0 … q − 1")
        rated = present.any(axis=1)
        unit, rater = np.nonzero(present[rated])
        return cls(unit, rater, matrix[rated][unit, rater].astype(np.intp), int(rated.sum()), matrix.shape[1], max(q, 1))


@dataclass(frozen=True)
class Units:
    """Per-unit summaries of raw ratings, computed once and shared by every weighting."""

    counts: np.ndarray
    """n × q: ratings per category, r_ik (every unit has one at least)."""
    size: np.ndarray
    """r_i, ratings per unit (≥ 1)."""
    pairs: np.ndarray
    """n × q²: the unit's ordered pairs of ratings by category, r_ik r_il − [k = l] r_ik (0 for one rating)."""
    raters: np.ndarray | None
    """Per rater with a rating: ratings per category (r' × q); None when only the counts are known (no Conger's κ)."""
    ratings: Ratings | None

    @classmethod
    def of(cls, data: Ratings) -> "Units":
        n, q = data.n_units, data.n_categories
        counts = np.bincount(data.unit * q + data.category, minlength=n * q).reshape(n, q).astype(float)
        raters = np.bincount(data.rater * q + data.category, minlength=data.n_raters * q).reshape(data.n_raters, q).astype(float)
        return cls(counts, counts.sum(axis=1), _pairs(counts), raters[raters.sum(axis=1) > 0], data)

    @classmethod
    def from_counts(cls, counts: np.ndarray) -> "Units":
        """From a units × categories matrix of counts, each row with a rating (the raters unknown)."""
        counts = np.asarray(counts, dtype=float)
        return cls(counts, counts.sum(axis=1), _pairs(counts), None, None)

    @property
    def n(self) -> int:
        return len(self.size)

    @property
    def pairable(self) -> np.ndarray:
        return self.size >= 2

    def why_undefined(self) -> Undefined | None:
        """Why no coefficient of these ratings has a value, if so."""
        if self.n == 0:
            return Undefined("no ratings")
        if self.raters is not None and len(self.raters) < 2:
            return Undefined("one rater")
        if not self.pairable.any():
            return Undefined("fewer than 2 ratings per item")
        return None


def _pairs(counts: np.ndarray) -> np.ndarray:
    n, q = counts.shape
    pairs = (counts[:, :, None] * counts[:, None, :]).reshape(n, q * q)
    pairs[:, :: q + 1] -= counts
    return pairs


def raw_coefficients(ratings: Any, values: Sequence[float] | int | None = None,
                     weights: str | np.ndarray = "identity") -> dict[str, Coefficient]:
    """Every coefficient of :data:`RAW` for raw ratings (units × raters category indices, NaN = missing).

    ``values``: the categories' values (their number q; default 1 … q with q the largest index + 1);
    ``weights``: a name of :data:`WEIGHTS` or a q × q matrix of agreement weights. See the module doc.
    """
    q = None if values is None else len(_category_values(values))
    data = ratings if isinstance(ratings, Ratings) else Ratings.from_matrix(ratings, q)
    return units_coefficients(Units.of(data), _weight_matrix(weights, values if values is not None else data.n_categories))


def units_coefficients(units: Units, w: np.ndarray) -> dict[str, Coefficient]:
    """:func:`raw_coefficients` of summarised ratings under the weight matrix ``w``."""
    why = units.why_undefined()
    if why is not None:
        return {name: Coefficient(why, why, why, why, why, why, units.n) for name in RAW}
    common = _Common.of(units, w)
    conger = _conger(units, w, common) if units.raters is not None else common.done(Undefined("raters unknown"), Undefined("raters unknown"), 0.0)
    return {"percent_agreement": common.percent(), "fleiss_kappa": common.fleiss(), "conger_kappa": conger,
            "gwet_ac": common.gwet(), "brennan_prediger": common.brennan_prediger(),
            "krippendorff_alpha": alpha(units, w)}


@dataclass(frozen=True)
class _Common:
    """What percent agreement, Fleiss, Gwet and Brennan–Prediger share: p_a per unit, π_k, the units."""

    units: Units
    w: np.ndarray
    pa_unit: np.ndarray
    """p_a,i (0 for a unit with one rating)."""
    pa: float
    pi: np.ndarray
    n: int
    n2: int

    @classmethod
    def of(cls, units: Units, w: np.ndarray) -> "_Common":
        size = units.size
        denominator = size * (size - 1)
        pa_unit = np.divide(_dot(units.pairs, w.ravel()), denominator, out=np.zeros(units.n), where=denominator > 0)
        n2 = int(units.pairable.sum())
        pi = (units.counts / size[:, None]).mean(axis=0)
        return cls(units, w, pa_unit, float(pa_unit.sum() / n2), pi, units.n, n2)

    def variance(self, contributions: np.ndarray, centre: float) -> float | Undefined:
        if self.n < 2:
            return Undefined("fewer than 2 items")
        return float(((contributions - centre) ** 2).sum() / (self.n * (self.n - 1)))

    def scaled(self, pe: float) -> np.ndarray:
        """(n / n₂)(p_a,i − p_e [r_i ≥ 2]) / (1 − p_e) per unit."""
        return (self.n / self.n2) * (self.pa_unit - pe * self.units.pairable) / (1.0 - pe)

    def linearised(self, value: Number, pe: float, pe_unit: np.ndarray) -> float | Undefined:
        if isinstance(value, Undefined):
            return value
        contributions = self.scaled(pe) - 2.0 * (1.0 - value) * (pe_unit - pe) / (1.0 - pe)
        return self.variance(contributions, value)

    def done(self, value: Number, pe: Number, variance: float | Undefined) -> Coefficient:
        return _coefficient(value, self.pa, pe, variance, self.n, self.n - 1)

    def percent(self) -> Coefficient:
        return self.done(self.pa, 0.0, self.variance((self.n / self.n2) * self.pa_unit, self.pa))

    def fleiss_chance(self) -> tuple[float, np.ndarray]:
        """Fleiss' p_e and each unit's p_e,i (Gwet's linearisation: p_e's change is Σ_i 2 (p_e,i − p_e) / n)."""
        pe = float(self.pi @ self.w @ self.pi)
        return pe, _dot(self.units.counts, (self.w + self.w.T) / 2.0 @ self.pi) / self.units.size

    def gwet_chance(self) -> tuple[float, np.ndarray] | Undefined:
        q = len(self.pi)
        if q < 2:
            return Undefined("one category")
        factor = self.w.sum() / (q * (q - 1))
        return float(factor * (self.pi * (1.0 - self.pi)).sum()), factor * _dot(self.units.counts, 1.0 - self.pi) / self.units.size

    def brennan_prediger_chance(self) -> tuple[float, np.ndarray] | Undefined:
        q = len(self.pi)
        if q < 2:
            return Undefined("one category")
        pe = float(self.w.sum() / q**2)
        return pe, np.full(self.n, pe)

    def fleiss(self) -> Coefficient:
        return self.chance_corrected(self.fleiss_chance())

    def gwet(self) -> Coefficient:
        return self.chance_corrected(self.gwet_chance())

    def brennan_prediger(self) -> Coefficient:
        return self.chance_corrected(self.brennan_prediger_chance())

    def chance_corrected(self, chance: tuple[float, np.ndarray] | Undefined) -> Coefficient:
        """The coefficient (p_a − p_e)/(1 − p_e) with its linearised variance (a constant p_e,i adds no term)."""
        if isinstance(chance, Undefined):
            return _coefficient(chance, self.pa, chance, 0.0, self.n, self.n - 1)
        pe, pe_unit = chance
        value = _chance_corrected(self.pa, pe)
        return self.done(value, pe, self.linearised(value, pe, pe_unit))


def _conger(units: Units, w: np.ndarray, common: _Common) -> Coefficient:
    """Conger's κ: chance agreement from each rater's own category shares p_gk (raters with a rating)."""
    return common.chance_corrected(_conger_chance_units(units, w))


def _conger_chance_units(units: Units, w: np.ndarray) -> tuple[float, np.ndarray]:
    """Conger's p_e and each unit's p_e,i."""
    data, n, raters = units.ratings, units.n, units.raters
    assert data is not None and raters is not None
    shares = raters / raters.sum(axis=1, keepdims=True)
    r = len(shares)
    mean = shares.mean(axis=0)
    spread = (shares.T @ shares - r * np.outer(mean, mean)) / (r - 1)
    pe = float((w * (np.outer(mean, mean) - spread / r)).sum())
    # pe_i = Σ_g λ_ig / (r (r − 1)), λ_ig = d_g + [g rated i] (n / n_g)(c_g,k(i,g) − d_g), c_g = (r p̄ − p_g) W, d_g = c_g · p_g
    c = (r * mean - shares) @ w
    d = (c * shares).sum(axis=1)
    rated = raters.sum(axis=1)
    index = np.cumsum(np.bincount(data.rater, minlength=data.n_raters) > 0) - 1  # rater number → row of ``shares``
    g = index[data.rater]
    per_rating = (n / rated[g]) * (c[g, data.category] - d[g])
    return pe, (d.sum() + np.bincount(data.unit, weights=per_rating, minlength=n)) / (r * (r - 1))


def alpha(units: Units, w: np.ndarray) -> Coefficient:
    """Krippendorff's α in Gwet's formulation over the units with two or more ratings (module doc)."""
    why = units.why_undefined()
    if why is not None:
        return Coefficient(why, why, why, why, why, why, 0)
    keep = units.pairable
    counts, size, pairs = units.counts[keep], units.size[keep], units.pairs[keep]
    n2, total = len(size), float(size.sum())
    mean_size = total / n2
    pa_unit_prime = _dot(pairs, w.ravel()) / (mean_size * (size - 1))
    pa_prime = float(pa_unit_prime.mean())
    epsilon = 1.0 / total
    pa = (1.0 - epsilon) * pa_prime + epsilon
    pi = counts.sum(axis=0) / total
    pe = float(pi @ w @ pi)
    value = _chance_corrected(pa, pe)
    if isinstance(value, Undefined):
        return _coefficient(value, pa, pe, value, n2, units.n - 1)
    if n2 < 2:
        return _coefficient(value, pa, pe, Undefined("fewer than 2 items with 2 ratings"), n2, units.n - 1)
    prime = (pa_prime - pe) / (1.0 - pe)
    relative = (size - mean_size) / mean_size
    contribution = (pa_unit_prime - pa_prime * relative - pe) / (1.0 - pe)
    pe_unit = _dot(counts, (w + w.T) / 2.0 @ pi) / mean_size - pe * relative
    contribution -= 2.0 * (1.0 - prime) * (pe_unit - pe) / (1.0 - pe)
    variance = float(((contribution - prime) ** 2).sum() / (n2 * (n2 - 1)))
    return _coefficient(value, pa, pe, variance, n2, units.n - 1)


# ---------------------------------------------------------------------------------------------- pooled across dimensions

POOLED = ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac", "brennan_prediger")
"""Coefficients :func:`pooled` combines across dimensions (every one of the form (p_a − p_e)/(1 − p_e))."""


@dataclass(frozen=True)
class Terms:
    """One coefficient of one dimension, as pooling needs it: p_a, p_e and each unit's linearised terms."""

    pa: float
    pe: float
    a: np.ndarray
    """Per unit, (n / n₂)(p_a,i − p_e [r_i ≥ 2]): its mean over the units is p_a − p_e."""
    e: np.ndarray
    """Per unit, 2 (p_e,i − p_e): its mean is 0 (0 throughout when p_e is fixed)."""


def terms(units: Units, w: np.ndarray) -> dict[str, Terms | Undefined]:
    """Each coefficient of :data:`POOLED` of one dimension's ratings as :class:`Terms` (Undefined: why not)."""
    why = units.why_undefined()
    if why is not None:
        return dict.fromkeys(POOLED, why)
    common = _Common.of(units, w)
    chances: dict[str, tuple[float, np.ndarray] | Undefined] = {
        "percent_agreement": (0.0, np.zeros(units.n)), "fleiss_kappa": common.fleiss_chance(),
        "conger_kappa": _conger_chance_units(units, w) if units.raters is not None else Undefined("raters unknown"),
        "gwet_ac": common.gwet_chance(), "brennan_prediger": common.brennan_prediger_chance()}
    out: dict[str, Terms | Undefined] = {}
    for name, chance in chances.items():
        if isinstance(chance, Undefined):
            out[name] = chance
            continue
        pe, pe_unit = chance
        a = (units.n / common.n2) * (common.pa_unit - pe * units.pairable)
        out[name] = Terms(common.pa, pe, a, 2.0 * (pe_unit - pe))
    return out


def pooled(parts: Sequence[tuple[Terms, np.ndarray]], n_items: int) -> Coefficient:
    """One coefficient pooled over D dimensions as De Vries et al. (2008) pool κ, with its linearised variance.

    ``parts``: per dimension its :class:`Terms` and, per unit, the item it is (0 … ``n_items`` − 1; an item may
    be rated on any of the dimensions). The pooled value is (p̄_a − p̄_e)/(1 − p̄_e), p̄_a and p̄_e the means of the
    dimensions' p_a and p_e: each dimension keeps its own chance agreement (a weighted mean of the dimensions'
    coefficients, weights 1 − p_e). Its variance follows Gwet's linearisation with the items as the sampling units
    (the dimensions of an item are not independent): per item h_j = Σ_d (N / n_d)(a_dj − (1 − P) e_dj) / (D (1 − p̄_e))
    over the dimensions rating it, v = Σ_j (h_j − P)² / (N (N − 1)), N = ``n_items``. With one dimension it is the
    dimension's own coefficient and variance. De Vries, Elliott, Kanouse & Teleki (2008), "Using pooled kappa to
    summarize interrater agreement across many items", *Field Methods* 20(3).
    """
    if not parts:
        why = Undefined("no dimension to pool")
        return Coefficient(why, why, why, why, why, why, 0)
    d = len(parts)
    pa = sum(t.pa for t, _ in parts) / d
    pe = sum(t.pe for t, _ in parts) / d
    value = _chance_corrected(pa, pe)
    if isinstance(value, Undefined):
        return _coefficient(value, pa, pe, value, n_items, n_items - 1)
    h = np.zeros(n_items)
    for t, item in parts:
        h += np.bincount(item, weights=(n_items / len(item)) * (t.a - (1.0 - value) * t.e), minlength=n_items)
    h /= d * (1.0 - pe)
    variance: float | Undefined = (Undefined("fewer than 2 items") if n_items < 2
                                   else float(((h - value) ** 2).sum() / (n_items * (n_items - 1))))
    return _coefficient(value, pa, pe, variance, n_items, n_items - 1)


# ---------------------------------------------------------------------------------------------- resampled units


_DENSE_CELLS = 10_000_000
"""Units × (raters × categories) cells up to which :func:`features` is a dense array (80 MB)."""


def features(units: Units) -> Any:
    """Per unit, the columns whose sums over a sample of units (with multiplicities) give every coefficient of
    :data:`RAW` but α (:func:`resampled`): 1, [r_i ≥ 2], r_ik / r_i (q), pairs_ikl / (r_i (r_i − 1)) (q²) and,
    when the raters are known, the unit's ratings by (rater, category) (r' q). A numpy array, or a scipy sparse
    array for many raters and categories."""
    size = units.size
    denominator = size * (size - 1)
    shares = units.counts / size[:, None]
    pairs = np.divide(units.pairs, denominator[:, None], out=np.zeros_like(units.pairs), where=denominator[:, None] > 0)
    dense = np.hstack([np.ones((units.n, 1)), units.pairable[:, None].astype(float), shares, pairs])
    if units.ratings is None or units.raters is None:
        return dense
    data, q = units.ratings, units.counts.shape[1]
    width = len(units.raters) * q
    index = np.cumsum(np.bincount(data.rater, minlength=data.n_raters) > 0) - 1
    cells = index[data.rater] * q + data.category
    if units.n * width <= _DENSE_CELLS:
        onehot = np.zeros((units.n, width))
        onehot[data.unit, cells] = 1.0
        return np.hstack([dense, onehot])
    from scipy import sparse  # many raters × categories: sparse (a sample's sums are still ``multiplicity @ features``)

    onehot = sparse.csr_array((np.ones(len(cells)), (data.unit, cells)), shape=(units.n, width))
    return sparse.hstack([sparse.csr_array(dense), onehot], format="csr")


def alpha_features(units: Units) -> np.ndarray:
    """Per unit with two ratings or more, the columns whose sums give Krippendorff's α (:func:`resampled_alpha`):
    1, r_i, r_ik (q), pairs_ikl / (r_i − 1) (q², summed: the coincidence matrix)."""
    keep = units.pairable
    size = units.size[keep]
    return np.hstack([np.ones((len(size), 1)), size[:, None], units.counts[keep], units.pairs[keep] / (size - 1)[:, None]])


def resampled(sums: np.ndarray, w: np.ndarray, q: int, raters: int) -> dict[str, np.ndarray]:
    """Each coefficient of :data:`RAW` but α, (B,), from B rows of :func:`features` sums (NaN = undefined).

    The same numbers as :func:`units_coefficients` on the resampled units (a replicate's raters: those with a
    rating in it; ``raters`` = 0: no Conger's κ).
    """
    return resampled_weightings(sums, {"": w}, q, raters)[""]


def resampled_weightings(sums: np.ndarray, matrices: dict[str, np.ndarray], q: int, raters: int) -> dict[str, dict[str, np.ndarray]]:
    """:func:`resampled` under each weight matrix of ``matrices`` (what does not depend on the weights, once)."""
    b = len(sums)
    n, n2 = sums[:, 0], sums[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = sums[:, 2:2 + q] / n[:, None]
    pairs = sums[:, 2 + q:2 + q + q * q]
    products = np.einsum("bk,bl->bkl", pi, pi).reshape(b, q * q)
    spread = (pi * (1.0 - pi)).sum(axis=1)
    conger = _conger_chance(sums[:, 2 + q + q * q:], b, q, raters)
    out = {}
    for key, w in matrices.items():
        flat = w.ravel()
        with np.errstate(divide="ignore", invalid="ignore"):
            pa = np.where(n2 > 0, (pairs @ flat) / n2, np.nan)
        found = {"percent_agreement": pa, "fleiss_kappa": _corrected(pa, products @ flat),
                 "conger_kappa": np.full(b, np.nan) if conger is None else _corrected(pa, conger @ flat)}
        if q >= 2:
            found["gwet_ac"] = _corrected(pa, w.sum() / (q * (q - 1)) * spread)
            found["brennan_prediger"] = _corrected(pa, np.full(b, w.sum() / q**2))
        else:
            found["gwet_ac"] = found["brennan_prediger"] = np.full(b, np.nan)
        out[key] = found
    return out


def _corrected(pa: np.ndarray, pe: np.ndarray) -> np.ndarray:
    ok = np.isfinite(pa) & np.isfinite(pe) & (1.0 - pe > _TINY)
    return np.where(ok, (pa - pe) / np.where(ok, 1.0 - pe, 1.0), np.nan)


def _conger_chance(ratings: np.ndarray, b: int, q: int, raters: int) -> np.ndarray | None:
    """Per replicate, p̄_k p̄_l − s²_kl / r flattened (b, q²), whose contraction with the weights is Conger's p_e (NaN
    where fewer than 2 raters have a rating); None without raters."""
    if raters == 0:
        return None
    counts = ratings.reshape(b, raters, q)
    rated = counts.sum(axis=2)
    present = rated > 0
    r = present.sum(axis=1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where(present[:, :, None], counts / rated[:, :, None], 0.0)
        mean = shares.sum(axis=1) / r[:, None]
        outer = np.einsum("bk,bl->bkl", mean, mean)
        spread = (np.einsum("bgk,bgl->bkl", shares, shares) - r[:, None, None] * outer) / (r - 1.0)[:, None, None]
        chance = (outer - spread / r[:, None, None]).reshape(b, q * q)
    return np.where((r >= 2)[:, None], chance, np.nan)


def resampled_alpha(sums: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Krippendorff's α, (B,), from B rows of :func:`alpha_features` sums; ``w`` None: the ordinal level (its
    weights from each replicate's category frequencies). NaN where undefined."""
    q = int(round(math.sqrt(sums.shape[1] - 2 + 0.25) - 0.5))  # 2 + q + q² columns
    total, frequencies = sums[:, 1], sums[:, 2:2 + q]
    coincidences = sums[:, 2 + q:].reshape(len(sums), q, q)
    weights_ = ordinal_alpha_weights(frequencies) if w is None else np.broadcast_to(w, (len(sums), q, q))
    with np.errstate(divide="ignore", invalid="ignore"):
        pa_prime = np.einsum("bkl,bkl->b", coincidences, weights_) / total
        epsilon = 1.0 / total
        pi = frequencies / total[:, None]
    pa = np.where(total > 0, (1.0 - epsilon) * pa_prime + epsilon, np.nan)
    return _corrected(pa, np.einsum("bk,bkl,bl->b", pi, weights_, pi))


# ---------------------------------------------------------------------------------------------- two raters' tables


@dataclass(frozen=True)
class TableBatch:
    """Coefficients of a stack of P tables under one weighting, as arrays of P (NaN = undefined)."""

    value: np.ndarray
    pa: np.ndarray
    pe: np.ndarray
    variance: np.ndarray
    n: np.ndarray


def table_batch(tables: np.ndarray, w: np.ndarray) -> dict[str, TableBatch]:
    """Every coefficient of :data:`TABLE` for P tables (P, q, q) at once under the agreement weights ``w``.

    irrCAC's ``kappa2.table``, ``scott2.table``, ``gwet.ac1.table``, ``bp2.table``, ``krippen2.table`` and
    ``pa2.table``; NaN where a table has fewer than 2 items or a coefficient is undefined (p_e = 1, q = 1).
    """
    t = np.asarray(tables, dtype=float)
    n = t.sum(axis=(1, 2))
    p = t / np.where(n > 0, n, 1.0)[:, None, None]
    q = t.shape[1]
    rows, cols = p.sum(axis=2), p.sum(axis=1)
    pa = np.einsum("pkl,kl->p", p, w)
    square = np.einsum("pkl,kl->p", p, w**2)
    pi = (rows + cols) / 2.0
    by_row, by_col = np.einsum("pl,kl->pk", cols, w), np.einsum("pk,kl->pl", rows, w)  # Σ_l w_kl p_+l; Σ_k w_kl p_k+
    mean = (by_row + by_col) / 2.0
    batch = _Tables(p, n, w)
    out = {"percent_agreement": batch.finish(pa, (square - pa**2) / batch.n_safe, pa, np.zeros(len(n))),
           "cohen_kappa": batch.kappa(pa, np.einsum("pk,kl,pl->p", rows, w, cols), by_row, by_col)}
    pe = np.einsum("pk,kl,pl->p", pi, w, pi)
    out["scott_pi"] = batch.kappa(pa, pe, mean, mean)
    epsilon = 1.0 / (2.0 * batch.n_safe)
    out["krippendorff_alpha"] = batch.kappa((1.0 - epsilon) * pa + epsilon, pe, mean, mean, pa0=pa)
    if q >= 2:
        factor = w.sum() / (q * (q - 1))
        half = factor * (1.0 - pi)  # 2 (1 − κ) T_w (1 − (π_k + π_l)/2) / (q (q − 1)) = (1 − κ)(a_k + a_l)
        out["gwet_ac"] = batch.kappa(pa, factor * (pi * (1.0 - pi)).sum(axis=1), half, half)
        pe = np.full(len(n), w.sum() / q**2)
        variance = (square - pa**2) / (batch.n_safe * (1.0 - pe) ** 2)
        out["brennan_prediger"] = batch.finish(batch.corrected(pa, pe), variance, pa, pe)
    else:
        nan = np.full(len(n), np.nan)
        out["gwet_ac"] = out["brennan_prediger"] = batch.finish(nan, nan, pa, nan)
    return {name: out[name] for name in TABLE}


@dataclass(frozen=True)
class _Tables:
    """A stack of tables as proportions, with what every coefficient of them needs."""

    p: np.ndarray
    n: np.ndarray
    w: np.ndarray

    @property
    def n_safe(self) -> np.ndarray:
        return np.where(self.n > 0, self.n, 1.0)

    def corrected(self, pa: np.ndarray, pe: np.ndarray) -> np.ndarray:
        ok = 1.0 - pe > _TINY
        return np.where(ok, (pa - pe) / np.where(ok, 1.0 - pe, 1.0), np.nan)

    def kappa(self, pa: np.ndarray, pe: np.ndarray, a: np.ndarray, b: np.ndarray, pa0: np.ndarray | None = None) -> TableBatch:
        """A κ-type coefficient (p_a − p_e)/(1 − p_e) and irrCAC's variance
        (Σ p_kl (w_kl − (1 − κ₀)(a_k + b_l))² − (p_a0 − 2 (1 − κ₀) p_e)²) / (n (1 − p_e)²), κ₀ from p_a0 (default p_a)."""
        base = pa if pa0 is None else pa0
        value, centre = self.corrected(pa, pe), self.corrected(base, pe)
        spread = self.w[None] - (1.0 - centre)[:, None, None] * (a[:, :, None] + b[:, None, :])
        total = (self.p * spread**2).sum(axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            variance = (total - (base - 2.0 * (1.0 - centre) * pe) ** 2) / (self.n_safe * (1.0 - pe) ** 2)
        return self.finish(value, variance, pa, pe)

    def finish(self, value: np.ndarray, variance: np.ndarray, pa: np.ndarray, pe: np.ndarray) -> TableBatch:
        """Tables of fewer than 2 items: every figure NaN."""
        small = self.n < 2
        value, pa, pe, variance = (np.where(small, np.nan, a) for a in (value, pa, pe, variance))
        return TableBatch(value, pa, pe, variance, self.n)


def table_coefficients(table: Any, values: Sequence[float] | int | None = None,
                       weights: str | np.ndarray = "identity") -> dict[str, Coefficient]:
    """Every coefficient of :data:`TABLE` for two raters' q × q contingency table (rows: one rater, columns: the other).

    ``values``: the categories' values (default 1 … q); ``weights`` as in :func:`raw_coefficients`.
    """
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1] or (counts < 0).any() or not np.isfinite(counts).all():
        raise AnalysisError(f"a table of shape {counts.shape}", fix="give a square table of counts ≥ 0")
    w = _weight_matrix(weights, values if values is not None else len(counts))
    return {name: batch_coefficients(batch)[0] for name, batch in table_batch(counts[None], w).items()}


def batch_coefficients(batch: TableBatch) -> list[Coefficient]:
    """The :class:`Coefficient` of each table of a batch (undefined ones with their reason)."""
    se = np.sqrt(np.maximum(batch.variance, 0.0))
    lower, upper, p = inference(batch.value, se, batch.n - 1)
    out = []
    for i, n in enumerate(batch.n.astype(int).tolist()):
        why = _table_undefined(n, batch, i)
        if why is not None:
            pa = why if n < 2 else float(batch.pa[i])
            out.append(Coefficient(why, pa, why if n < 2 or math.isnan(batch.pe[i]) else float(batch.pe[i]), why, why, why, n))
            continue
        p_value: Number = float(p[i]) if math.isfinite(p[i]) else Undefined("zero standard error")
        out.append(Coefficient(float(batch.value[i]), float(batch.pa[i]), float(batch.pe[i]), float(se[i]),
                               (float(lower[i]), float(upper[i])), p_value, n))
    return out


def _table_undefined(n: int, batch: TableBatch, i: int) -> Undefined | None:
    if n == 0:
        return Undefined("no shared items")
    if n < 2:
        return Undefined("fewer than 2 shared items")
    if math.isnan(batch.value[i]):
        return Undefined("one category" if math.isnan(batch.pe[i]) else "all ratings identical")
    return None


__all__ = ["CONFIDENCE", "POOLED", "RAW", "TABLE", "WEIGHTS", "Coefficient", "Ratings", "TableBatch", "Terms", "Units", "alpha",
           "alpha_features", "batch_coefficients", "features", "inference", "ordinal_alpha_weights", "pooled", "raw_coefficients",
           "resampled", "resampled_alpha", "resampled_weightings", "table_batch", "table_coefficients", "terms",
           "units_coefficients", "weights"]
