"""Gwet's family of chance-corrected agreement coefficients, with analytic standard errors.

Percent agreement, Fleiss' κ, Conger's κ, Gwet's AC1/AC2, Brennan–Prediger and Krippendorff's α (in
Gwet's formulation) of raw ratings from any number of raters, unweighted or weighted, each with its
standard error, 95% confidence interval and p-value, as Gwet (2014), *Handbook of Inter-Rater
Reliability*, 4th ed., defines them and his R package irrCAC (``agree.coeff3.raw.r``) computes them;
the same coefficients pooled across dimensions (De Vries et al. 2008); and each of them as a
function of sums over units, which is what the bootstrap resamples. Two raters' contingency tables
are :mod:`analysis.stats.tables`. Pure numpy, vectorised: no loop over units or raters. Conventions:

* **Input**: :class:`analysis.stats.ratings.Ratings` or a units × raters matrix of category indices
  (NaN = not rated). Fleiss' κ *is* Scott's π generalised to many raters; Conger's κ is Cohen's κ
  generalised.
* **Missing ratings** are handled as Gwet's formulas handle them; no unit is dropped for having
  fewer raters than others. The units are those with at least one rating (n); percent agreement p_a
  averages over the units with two or more ratings (n₂), p_a = Σ p_a,i / n₂ with p_a,i = Σ_k r_ik
  (r*_ik − 1) / (r_i (r_i − 1)), r*_ik = Σ_l w_kl r_il; the chance agreement uses every unit: π_k =
  (1/n) Σ_i r_ik / r_i. Krippendorff's α uses the units with two or more ratings only (its r̄, ε =
  1/Σ r_i and p_a = (1 − ε) p'_a + ε, which equals Krippendorff's coincidence-matrix α,
  :mod:`analysis.stats.krippendorff`). Conger's κ uses each rater's own category shares over the
  units that rater rated (raters without a rating do not count).
* **Categories and weights.** q is the number of categories *offered* (unused ones included: they
  change AC1/AC2 and Brennan–Prediger, through q, and the weights, through the value range). Weights
  are irrCAC's agreement weights (:mod:`analysis.stats.weightings`); Krippendorff's *ordinal* level
  uses :func:`analysis.stats.krippendorff.ordinal_alpha_weights`, whose standard error treats them
  as fixed.
* **Variance** (Gwet's linearisation over units, finite-population correction f = 0, i.e. N
  infinite): v = Σ_i (κ*_i − κ)² / (n (n − 1)) with each unit's linearised contribution κ*_i,
  negative rounding errors set to 0. Krippendorff's α centres on α' = (p'_a − p_e)/(1 − p_e) over
  the n₂ units.
* **95% CI and p-value**: :func:`analysis.stats.intervals.inference` on n − 1 degrees of freedom (n:
  units with a rating, also for α): value ± t · SE, the upper bound clipped at 1; p one-sided, H0:
  coefficient = 0, as irrCAC computes it since November 2021 (irrCAC 1.2; 1.0 printed the two-sided
  2 (1 − T(|value|/SE))). An SE of 0 gives the interval [value, value] and p = 0 (value > 0) or 1
  (value < 0).
* **Undefined, never NaN, never an exception** for data: ``"no ratings"``, ``"one rater"``, ``"fewer
  than 2 ratings per item"``, ``"all ratings identical"`` (chance agreement p_e = 1: κ, α), ``"one
  category"`` (AC1/AC2, Brennan–Prediger with q = 1), ``"raters unknown"`` (Conger's κ of counts);
  SE, CI and p also ``"fewer than 2 items"`` (α: ``"fewer than 2 items with 2 ratings"``) and, for
  an SE of 0 at a value of 0, ``"zero standard error"`` (the p-value). AC1 and Brennan–Prediger stay
  defined when every rating is the same category (both are 1). A bad argument is a
  :func:`analysis.stats.errors.bad_argument`.
* **Resampled units** (:func:`features`, :func:`resampled`, :func:`alpha_features`,
  :func:`resampled_alpha`): per unit, the columns whose sums over a sample of units (with
  multiplicities) give every coefficient — the same numbers as computing it on the resampled units;
  NaN where undefined.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .intervals import inference
from .jsonable import Jsonable
from .krippendorff import ordinal_alpha_weights
from .names import POOLED, RAW
from .ratings import Ratings, Units
from .undefined import Bounds, Number, Undefined
from .weightings import category_values, weight_matrix

TINY = 1e-12
"""1 − p_e at or below this is p_e = 1 (every rating one category): the κ-type coefficients are
undefined."""


@dataclass(frozen=True)
class Coefficient(Jsonable):
    """One agreement coefficient with its analytic precision (see the module doc for the
    conventions)."""

    value: Number
    pa: Number
    """Percent agreement it rests on (weighted when the weights are)."""
    pe: Number
    """Chance agreement (0 for percent agreement)."""
    se: Number
    """Standard error (Gwet's linearisation)."""
    ci: Bounds
    """95% confidence interval, value ± t · SE, the upper bound clipped at 1."""
    p_value: Number
    """One-sided p-value of H0: coefficient = 0."""
    n_units: int
    """Units it rests on (raw: units with a rating; α: with two; table: the table's total)."""


def _coefficient(
    value: Number, pa: Number, pe: Number, variance: float | Undefined, n_units: int, df: int
) -> Coefficient:
    """A :class:`Coefficient` from its value and variance (Undefined value: everything undefined
    alike)."""
    if isinstance(value, Undefined):
        return Coefficient(value, pa, pe, value, value, value, n_units)
    if isinstance(variance, Undefined):
        return Coefficient(value, pa, pe, variance, variance, variance, n_units)
    se = math.sqrt(max(variance, 0.0))
    lower, upper, p = (float(a) for a in inference(np.array(value), np.array(se), np.array(df)))
    p_value: Number = p if math.isfinite(p) else Undefined("zero standard error")
    return Coefficient(value, pa, pe, se, (lower, upper), p_value, n_units)


def _dot(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` without BLAS: its threads would spin against the bootstrap's
    (:mod:`analysis.stats.bootstrap`)."""
    return np.einsum("ij,j->i", matrix, vector)


def _chance_corrected(pa: float, pe: float) -> Number:
    return Undefined("all ratings identical") if 1.0 - pe <= TINY else (pa - pe) / (1.0 - pe)


def raw_coefficients(
    ratings: Any,
    values: Sequence[float] | int | None = None,
    weights: str | np.ndarray = "identity",
) -> dict[str, Coefficient]:
    """Every coefficient of :data:`RAW` for raw ratings (units × raters category indices, NaN =
    missing).

    ``values``: the categories' values (their number q; default 1 … q with q the largest index + 1);
    ``weights``: a name of :data:`analysis.stats.weightings.WEIGHTS` or a q × q matrix of agreement
    weights. See the module doc.
    """
    q = None if values is None else len(category_values(values))
    data = ratings if isinstance(ratings, Ratings) else Ratings.from_matrix(ratings, q)
    w = weight_matrix(weights, values if values is not None else data.n_categories)
    return units_coefficients(Units.of(data), w)


def units_coefficients(units: Units, w: np.ndarray) -> dict[str, Coefficient]:
    """:func:`raw_coefficients` of summarised ratings under the weight matrix ``w``."""
    why = units.why_undefined()
    if why is not None:
        return {name: Coefficient(why, why, why, why, why, why, units.n) for name in RAW}
    common = _Common.of(units, w)
    unknown = Undefined("raters unknown")
    conger = (
        _conger(units, w, common)
        if units.raters is not None
        else common.done(unknown, unknown, 0.0)
    )
    return {
        "percent_agreement": common.percent(),
        "fleiss_kappa": common.fleiss(),
        "conger_kappa": conger,
        "gwet_ac": common.gwet(),
        "brennan_prediger": common.brennan_prediger(),
        "krippendorff_alpha": alpha(units, w),
    }


@dataclass(frozen=True)
class _Common:
    """What percent agreement, Fleiss, Gwet and Brennan–Prediger share: p_a per unit, π_k, the
    units."""

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
        pa_unit = np.divide(
            _dot(units.pairs, w.ravel()), denominator, out=np.zeros(units.n), where=denominator > 0
        )
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
        """Fleiss' p_e and each unit's p_e,i (Gwet's linearisation: p_e's change is Σ_i 2 (p_e,i −
        p_e) / n)."""
        pe = float(self.pi @ self.w @ self.pi)
        return pe, _dot(self.units.counts, (self.w + self.w.T) / 2.0 @ self.pi) / self.units.size

    def gwet_chance(self) -> tuple[float, np.ndarray] | Undefined:
        q = len(self.pi)
        if q < 2:
            return Undefined("one category")
        factor = self.w.sum() / (q * (q - 1))
        pe_unit = factor * _dot(self.units.counts, 1.0 - self.pi) / self.units.size
        return float(factor * (self.pi * (1.0 - self.pi)).sum()), pe_unit

    def brennan_prediger_chance(self) -> tuple[float, np.ndarray] | Undefined:
        q = len(self.pi)
        if q < 2:
            return Undefined("one category")
        pe = float(self.w.sum() / q**2)
        return pe, np.full(self.n, pe)

    def fleiss(self) -> Coefficient:
        return self._chance_corrected(self.fleiss_chance())

    def gwet(self) -> Coefficient:
        return self._chance_corrected(self.gwet_chance())

    def brennan_prediger(self) -> Coefficient:
        return self._chance_corrected(self.brennan_prediger_chance())

    def _chance_corrected(self, chance: tuple[float, np.ndarray] | Undefined) -> Coefficient:
        """The coefficient (p_a − p_e)/(1 − p_e) with its linearised variance (a constant p_e,i adds
        no term)."""
        if isinstance(chance, Undefined):
            return _coefficient(chance, self.pa, chance, 0.0, self.n, self.n - 1)
        pe, pe_unit = chance
        value = _chance_corrected(self.pa, pe)
        return self.done(value, pe, self.linearised(value, pe, pe_unit))


def _conger(units: Units, w: np.ndarray, common: _Common) -> Coefficient:
    """Conger's κ: chance agreement from each rater's own category shares p_gk (raters with a
    rating)."""
    return common._chance_corrected(_conger_chance_units(units, w))


def _conger_chance_units(units: Units, w: np.ndarray) -> tuple[float, np.ndarray]:
    """Conger's p_e and each unit's p_e,i."""
    data, n, raters = units.ratings, units.n, units.raters
    assert data is not None and raters is not None
    shares = raters / raters.sum(axis=1, keepdims=True)
    r = len(shares)
    mean = shares.mean(axis=0)
    spread = (shares.T @ shares - r * np.outer(mean, mean)) / (r - 1)
    pe = float((w * (np.outer(mean, mean) - spread / r)).sum())
    # pe_i = Σ_g λ_ig / (r (r − 1)), λ_ig = d_g + [g rated i] (n / n_g)(c_g,k(i,g) − d_g),
    # c_g = (r p̄ − p_g) W, d_g = c_g · p_g
    c = (r * mean - shares) @ w
    d = (c * shares).sum(axis=1)
    rated = raters.sum(axis=1)
    # rater number → row of ``shares``
    index = np.cumsum(np.bincount(data.rater, minlength=data.n_raters) > 0) - 1
    g = index[data.rater]
    per_rating = (n / rated[g]) * (c[g, data.category] - d[g])
    return pe, (d.sum() + np.bincount(data.unit, weights=per_rating, minlength=n)) / (r * (r - 1))


def alpha(units: Units, w: np.ndarray) -> Coefficient:
    """Krippendorff's α in Gwet's formulation over the units with two or more ratings (module
    doc)."""
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
        why = Undefined("fewer than 2 items with 2 ratings")
        return _coefficient(value, pa, pe, why, n2, units.n - 1)
    prime = (pa_prime - pe) / (1.0 - pe)
    relative = (size - mean_size) / mean_size
    contribution = (pa_unit_prime - pa_prime * relative - pe) / (1.0 - pe)
    pe_unit = _dot(counts, (w + w.T) / 2.0 @ pi) / mean_size - pe * relative
    contribution -= 2.0 * (1.0 - prime) * (pe_unit - pe) / (1.0 - pe)
    variance = float(((contribution - prime) ** 2).sum() / (n2 * (n2 - 1)))
    return _coefficient(value, pa, pe, variance, n2, units.n - 1)


# ------------------------------------------------------------------------ pooled across dimensions


@dataclass(frozen=True)
class Terms:
    """One coefficient of one dimension, as pooling needs it: p_a, p_e and each unit's linearised
    terms."""

    pa: float
    pe: float
    a: np.ndarray
    """Per unit, (n / n₂)(p_a,i − p_e [r_i ≥ 2]): its mean over the units is p_a − p_e."""
    e: np.ndarray
    """Per unit, 2 (p_e,i − p_e): its mean is 0 (0 throughout when p_e is fixed)."""


def terms(units: Units, w: np.ndarray) -> dict[str, Terms | Undefined]:
    """Each coefficient of :data:`POOLED` of one dimension's ratings as :class:`Terms` (Undefined:
    why not)."""
    why = units.why_undefined()
    if why is not None:
        return dict.fromkeys(POOLED, why)
    common = _Common.of(units, w)
    chances: dict[str, tuple[float, np.ndarray] | Undefined] = {
        "percent_agreement": (0.0, np.zeros(units.n)),
        "fleiss_kappa": common.fleiss_chance(),
        "conger_kappa": (
            _conger_chance_units(units, w)
            if units.raters is not None
            else Undefined("raters unknown")
        ),
        "gwet_ac": common.gwet_chance(),
        "brennan_prediger": common.brennan_prediger_chance(),
    }
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
    """One coefficient pooled over D dimensions as De Vries et al. (2008) pool κ, with its
    linearised variance.

    ``parts``: per dimension its :class:`Terms` and, per unit, the item it is (0 … ``n_items`` − 1;
    an item may be rated on any of the dimensions). The pooled value is (p̄_a − p̄_e)/(1 − p̄_e),
    p̄_a and p̄_e the means of the dimensions' p_a and p_e: each dimension keeps its own chance
    agreement (a weighted mean of the dimensions' coefficients, weights 1 − p_e). Its variance
    follows Gwet's linearisation with the items as the sampling units (the dimensions of an item are
    not independent): per item h_j = Σ_d (N / n_d)(a_dj − (1 − P) e_dj) / (D (1 − p̄_e)) over the
    dimensions rating it, v = Σ_j (h_j − P)² / (N (N − 1)), N = ``n_items``. With one dimension it
    is the dimension's own coefficient and variance. De Vries, Elliott, Kanouse & Teleki (2008),
    "Using pooled kappa to summarize interrater agreement across many items", *Field Methods* 20(3).
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
        contribution = (n_items / len(item)) * (t.a - (1.0 - value) * t.e)
        h += np.bincount(item, weights=contribution, minlength=n_items)
    h /= d * (1.0 - pe)
    variance: float | Undefined = (
        Undefined("fewer than 2 items")
        if n_items < 2
        else float(((h - value) ** 2).sum() / (n_items * (n_items - 1)))
    )
    return _coefficient(value, pa, pe, variance, n_items, n_items - 1)


# ---------------------------------------------------------------------------------- resampled units


_DENSE_CELLS = 10_000_000
"""Units × (raters × categories) cells up to which :func:`features` is a dense array (80 MB)."""


def features(units: Units) -> Any:
    """Per unit, the columns whose sums over a sample of units (with multiplicities) give every
    coefficient of :data:`RAW` but α (:func:`resampled`): 1, [r_i ≥ 2], r_ik / r_i (q), pairs_ikl /
    (r_i (r_i − 1)) (q²) and, when the raters are known, the unit's ratings by (rater, category) (r'
    q). A numpy array, or a scipy sparse array for many raters and categories."""
    size = units.size
    denominator = size * (size - 1)
    shares = units.counts / size[:, None]
    pairs = np.divide(
        units.pairs,
        denominator[:, None],
        out=np.zeros_like(units.pairs),
        where=denominator[:, None] > 0,
    )
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
    # many raters × categories: sparse (a sample's sums are still ``multiplicity @ features``)
    from scipy import sparse

    onehot = sparse.csr_array((np.ones(len(cells)), (data.unit, cells)), shape=(units.n, width))
    return sparse.hstack([sparse.csr_array(dense), onehot], format="csr")


def alpha_features(units: Units) -> np.ndarray:
    """Per unit with two ratings or more, the columns whose sums give Krippendorff's α
    (:func:`resampled_alpha`): 1, r_i, r_ik (q), pairs_ikl / (r_i − 1) (q², summed: the coincidence
    matrix)."""
    keep = units.pairable
    size = units.size[keep]
    return np.hstack(
        [
            np.ones((len(size), 1)),
            size[:, None],
            units.counts[keep],
            units.pairs[keep] / (size - 1)[:, None],
        ]
    )


def resampled(sums: np.ndarray, w: np.ndarray, q: int, raters: int) -> dict[str, np.ndarray]:
    """Each coefficient of :data:`RAW` but α, (B,), from B rows of :func:`features` sums (NaN =
    undefined).

    The same numbers as :func:`units_coefficients` on the resampled units (a replicate's raters:
    those with a rating in it; ``raters`` = 0: no Conger's κ).
    """
    return resampled_weightings(sums, {"": w}, q, raters)[""]


def resampled_weightings(
    sums: np.ndarray, matrices: dict[str, np.ndarray], q: int, raters: int
) -> dict[str, dict[str, np.ndarray]]:
    """:func:`resampled` under each weight matrix of ``matrices`` (what does not depend on the
    weights, once)."""
    b = len(sums)
    n, n2 = sums[:, 0], sums[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = sums[:, 2 : 2 + q] / n[:, None]
    pairs = sums[:, 2 + q : 2 + q + q * q]
    products = np.einsum("bk,bl->bkl", pi, pi).reshape(b, q * q)
    spread = (pi * (1.0 - pi)).sum(axis=1)
    conger = _conger_chance(sums[:, 2 + q + q * q :], b, q, raters)
    out = {}
    for key, w in matrices.items():
        flat = w.ravel()
        with np.errstate(divide="ignore", invalid="ignore"):
            pa = np.where(n2 > 0, (pairs @ flat) / n2, np.nan)
        found = {
            "percent_agreement": pa,
            "fleiss_kappa": _corrected(pa, products @ flat),
            "conger_kappa": (
                np.full(b, np.nan) if conger is None else _corrected(pa, conger @ flat)
            ),
        }
        if q >= 2:
            found["gwet_ac"] = _corrected(pa, w.sum() / (q * (q - 1)) * spread)
            found["brennan_prediger"] = _corrected(pa, np.full(b, w.sum() / q**2))
        else:
            found["gwet_ac"] = found["brennan_prediger"] = np.full(b, np.nan)
        out[key] = found
    return out


def _corrected(pa: np.ndarray, pe: np.ndarray) -> np.ndarray:
    ok = np.isfinite(pa) & np.isfinite(pe) & (1.0 - pe > TINY)
    return np.where(ok, (pa - pe) / np.where(ok, 1.0 - pe, 1.0), np.nan)


def _conger_chance(ratings: np.ndarray, b: int, q: int, raters: int) -> np.ndarray | None:
    """Per replicate, p̄_k p̄_l − s²_kl / r flattened (b, q²), whose contraction with the weights is
    Conger's p_e (NaN where fewer than 2 raters have a rating); None without raters."""
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
        spread = (np.einsum("bgk,bgl->bkl", shares, shares) - r[:, None, None] * outer) / (r - 1.0)[
            :, None, None
        ]
        chance = (outer - spread / r[:, None, None]).reshape(b, q * q)
    return np.where((r >= 2)[:, None], chance, np.nan)


def resampled_alpha(sums: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Krippendorff's α, (B,), from B rows of :func:`alpha_features` sums; ``w`` None: the ordinal
    level (its weights from each replicate's category frequencies). NaN where undefined."""
    q = int(round(math.sqrt(sums.shape[1] - 2 + 0.25) - 0.5))  # 2 + q + q² columns
    total, frequencies = sums[:, 1], sums[:, 2 : 2 + q]
    coincidences = sums[:, 2 + q :].reshape(len(sums), q, q)
    weights_ = (
        ordinal_alpha_weights(frequencies) if w is None else np.broadcast_to(w, (len(sums), q, q))
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        pa_prime = np.einsum("bkl,bkl->b", coincidences, weights_) / total
        epsilon = 1.0 / total
        pi = frequencies / total[:, None]
    pa = np.where(total > 0, (1.0 - epsilon) * pa_prime + epsilon, np.nan)
    return _corrected(pa, np.einsum("bk,bkl,bl->b", pi, weights_, pi))


__all__ = [
    "POOLED",
    "RAW",
    "TINY",
    "Coefficient",
    "Terms",
    "alpha",
    "alpha_features",
    "features",
    "pooled",
    "raw_coefficients",
    "resampled",
    "resampled_alpha",
    "resampled_weightings",
    "terms",
    "units_coefficients",
]
