"""Agreement coefficients of two raters' contingency tables, with analytic standard errors.

Percent agreement, Cohen's κ, Scott's π, Gwet's AC1/AC2, Brennan–Prediger and Krippendorff's α of a
q × q table (rows: one rater's categories, columns: the other's), unweighted or weighted, as
irrCAC's ``pa2.table``, ``kappa2.table``, ``scott2.table``, ``gwet.ac1.table``, ``bp2.table`` and
``krippen2.table`` compute them; one table (:func:`table_coefficients`) or a stack of P tables at
once (:func:`table_batch`, every reviewer pair of a dimension). Conventions:

* **Weights**: agreement weights (:mod:`analysis.stats.weightings`) on the category values (default
  1 … q).
* **Variance**: v = (Σ_kl p_kl (w_kl − (1 − κ)(a_k + b_l))² − (p_a − 2 (1 − κ) p_e)²) / (n (1 −
  p_e)²), n the table's total, negative rounding errors set to 0; CI and p-value as for raw ratings
  (:func:`analysis.stats.intervals.inference`, n − 1 degrees of freedom).
* **Undefined** (never NaN, never an exception): ``"no shared items"`` (an empty table), ``"fewer
  than 2 shared items"``, ``"all ratings identical"`` (p_e = 1), ``"one category"`` (AC1/AC2,
  Brennan–Prediger with q = 1); the p-value of an SE of 0 at a value of 0: ``"zero standard
  error"``. A table that is not square counts ≥ 0 is a :func:`analysis.stats.errors.bad_argument`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .errors import bad_argument
from .gwet import TINY, Coefficient
from .intervals import inference
from .names import TABLE
from .undefined import Number, Undefined
from .weightings import weight_matrix


@dataclass(frozen=True)
class TableBatch:
    """Coefficients of a stack of P tables under one weighting, as arrays of P (NaN = undefined)."""

    value: np.ndarray
    pa: np.ndarray
    pe: np.ndarray
    variance: np.ndarray
    n: np.ndarray


def table_batch(tables: np.ndarray, w: np.ndarray) -> dict[str, TableBatch]:
    """Every coefficient of :data:`TABLE` for P tables (P, q, q) at once under the agreement weights
    ``w``.

    irrCAC's ``kappa2.table``, ``scott2.table``, ``gwet.ac1.table``, ``bp2.table``,
    ``krippen2.table`` and ``pa2.table``; NaN where a table has fewer than 2 items or a coefficient
    is undefined (p_e = 1, q = 1).
    """
    t = np.asarray(tables, dtype=float)
    n = t.sum(axis=(1, 2))
    p = t / np.where(n > 0, n, 1.0)[:, None, None]
    q = t.shape[1]
    rows, cols = p.sum(axis=2), p.sum(axis=1)
    pa = np.einsum("pkl,kl->p", p, w)
    square = np.einsum("pkl,kl->p", p, w**2)
    pi = (rows + cols) / 2.0
    # Σ_l w_kl p_+l; Σ_k w_kl p_k+
    by_row, by_col = np.einsum("pl,kl->pk", cols, w), np.einsum("pk,kl->pl", rows, w)
    mean = (by_row + by_col) / 2.0
    batch = _Tables(p, n, w)
    percent = batch.finish(pa, (square - pa**2) / batch.n_safe, pa, np.zeros(len(n)))
    out = {
        "percent_agreement": percent,
        "cohen_kappa": batch.kappa(pa, np.einsum("pk,kl,pl->p", rows, w, cols), by_row, by_col),
    }
    pe = np.einsum("pk,kl,pl->p", pi, w, pi)
    out["scott_pi"] = batch.kappa(pa, pe, mean, mean)
    epsilon = 1.0 / (2.0 * batch.n_safe)
    out["krippendorff_alpha"] = batch.kappa((1.0 - epsilon) * pa + epsilon, pe, mean, mean, pa0=pa)
    if q >= 2:
        factor = w.sum() / (q * (q - 1))
        # 2 (1 − κ) T_w (1 − (π_k + π_l)/2) / (q (q − 1)) = (1 − κ)(a_k + a_l)
        half = factor * (1.0 - pi)
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
        ok = 1.0 - pe > TINY
        return np.where(ok, (pa - pe) / np.where(ok, 1.0 - pe, 1.0), np.nan)

    def kappa(
        self,
        pa: np.ndarray,
        pe: np.ndarray,
        a: np.ndarray,
        b: np.ndarray,
        pa0: np.ndarray | None = None,
    ) -> TableBatch:
        """A κ-type coefficient (p_a − p_e)/(1 − p_e) and irrCAC's variance (Σ p_kl (w_kl − (1 −
        κ₀)(a_k + b_l))² − (p_a0 − 2 (1 − κ₀) p_e)²) / (n (1 − p_e)²), κ₀ from p_a0 (default
        p_a)."""
        base = pa if pa0 is None else pa0
        value, centre = self.corrected(pa, pe), self.corrected(base, pe)
        spread = self.w[None] - (1.0 - centre)[:, None, None] * (a[:, :, None] + b[:, None, :])
        total = (self.p * spread**2).sum(axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            variance = (total - (base - 2.0 * (1.0 - centre) * pe) ** 2) / (
                self.n_safe * (1.0 - pe) ** 2
            )
        return self.finish(value, variance, pa, pe)

    def finish(
        self, value: np.ndarray, variance: np.ndarray, pa: np.ndarray, pe: np.ndarray
    ) -> TableBatch:
        """Tables of fewer than 2 items: every figure NaN."""
        small = self.n < 2
        value, pa, pe, variance = (np.where(small, np.nan, a) for a in (value, pa, pe, variance))
        return TableBatch(value, pa, pe, variance, self.n)


def pair_coefficients(
    tables: np.ndarray, matrices: dict[str, np.ndarray], full: Sequence[str]
) -> dict[str, dict[str, list[Coefficient]]]:
    """Each table's coefficients by weighting: every one of :data:`TABLE` under the weightings in
    ``full``, Cohen's κ alone under the others; {} without tables."""
    if not len(tables):
        return {}
    out = {}
    for w, m in matrices.items():
        batches = table_batch(tables, m)
        names = TABLE if w in full else ("cohen_kappa",)
        out[w] = {name: batch_coefficients(batches[name]) for name in names}
    return out


def table_coefficients(
    table: Any, values: Sequence[float] | int | None = None, weights: str | np.ndarray = "identity"
) -> dict[str, Coefficient]:
    """Every coefficient of :data:`TABLE` for two raters' q × q contingency table (rows: one rater,
    columns: the other).

    ``values``: the categories' values (default 1 … q); ``weights``: a name of
    :data:`analysis.stats.weightings.WEIGHTS` or a q × q matrix of agreement weights.
    """
    counts = np.asarray(table, dtype=float)
    square = counts.ndim == 2 and counts.shape[0] == counts.shape[1]
    if not square or (counts < 0).any() or not np.isfinite(counts).all():
        raise bad_argument(
            f"a table of shape {counts.shape}", fix="give a square table of counts ≥ 0"
        )
    w = weight_matrix(weights, values if values is not None else len(counts))
    batches = table_batch(counts[None], w)
    return {name: batch_coefficients(batch)[0] for name, batch in batches.items()}


def batch_coefficients(batch: TableBatch) -> list[Coefficient]:
    """The :class:`Coefficient` of each table of a batch (undefined ones with their reason)."""
    se = np.sqrt(np.maximum(batch.variance, 0.0))
    lower, upper, p = inference(batch.value, se, batch.n - 1)
    out = []
    for i, n in enumerate(batch.n.astype(int).tolist()):
        why = _table_undefined(n, batch, i)
        if why is not None:
            pa = why if n < 2 else float(batch.pa[i])
            pe = why if n < 2 or math.isnan(batch.pe[i]) else float(batch.pe[i])
            out.append(Coefficient(why, pa, pe, why, why, why, n))
            continue
        p_value: Number = float(p[i]) if math.isfinite(p[i]) else Undefined("zero standard error")
        out.append(
            Coefficient(
                float(batch.value[i]),
                float(batch.pa[i]),
                float(batch.pe[i]),
                float(se[i]),
                (float(lower[i]), float(upper[i])),
                p_value,
                n,
            )
        )
    return out


def _table_undefined(n: int, batch: TableBatch, i: int) -> Undefined | None:
    if n == 0:
        return Undefined("no shared items")
    if n < 2:
        return Undefined("fewer than 2 shared items")
    if math.isnan(batch.value[i]):
        return Undefined("one category" if math.isnan(batch.pe[i]) else "all ratings identical")
    return None


__all__ = [
    "TABLE",
    "TableBatch",
    "batch_coefficients",
    "pair_coefficients",
    "table_batch",
    "table_coefficients",
]
