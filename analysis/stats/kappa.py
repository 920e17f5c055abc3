"""Cohen's κ of two raters and Fleiss' κ of many, from labels, confusion tables or counts.

Conventions:

* **Cohen's κ** (:func:`cohen_kappa`): 1 − Σ w·p_obs / Σ w·p_exp with p_exp the product of the two
  raters' marginals (equal to (p_o − p_e)/(1 − p_e) when unweighted), w the disagreement weights on
  the category positions (:func:`analysis.stats.weightings.kappa_weights`: unweighted, linear or
  quadratic). Pairs with a missing label (None, NaN, NaT, ``pd.NA``) are dropped. Undefined with no
  shared item (``"no shared items"``), one (``"fewer than 2 shared items"``), or when the expected
  disagreement is 0: both raters used one and the same category (``"all ratings identical"``). Two
  raters who each used a single but *different* category give κ = 0. :func:`kappa_of_table` is the
  same κ of a confusion table (NaN where undefined), the one computation behind every Cohen's κ in
  hilbot's reports.
* **Fleiss' κ** (:func:`fleiss_kappa`): of a units × categories matrix of counts, with missing
  ratings as Gwet handles them (:func:`analysis.stats.gwet.units_coefficients`): the observed
  agreement averages over the units with two or more ratings, the category shares over all (irrCAC's
  ``fleiss.kappa.raw``); when every unit has the same number of ratings this is Fleiss' (1971) κ.
  Undefined: ``"no ratings"``, ``"fewer than 2 ratings per item"``, ``"all ratings identical"`` (P̄e
  = 1).
* **Resampling** (:func:`cohen_resampler`, :func:`fleiss_resampler`, for
  :func:`analysis.stats.bootstrap.bootstrap_ci`): Cohen's κ of a replicate from its confusion table
  (drawn as one multinomial draw, :func:`analysis.stats.resampling.table_draws`, or summed from the
  resampled items); Fleiss' κ from sums of per-unit features (:func:`analysis.stats.gwet.features`).
* A bad argument — a label outside ``categories``, categories listed twice, label lists that do not
  pair up item by item, counts that are not a units × categories matrix of finite counts ≥ 0 — is a
  :func:`analysis.stats.errors.bad_argument`.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from .errors import bad_argument
from .gwet import features, resampled, units_coefficients
from .ratings import Units
from .resampling import Resampler, table_draws
from .undefined import Number, Undefined
from .weightings import Weights, kappa_weights


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
        raise bad_argument("categories are not distinct", fix="list each category once")
    return index


def _codes(labels: Sequence[Any], index: dict[Any, int]) -> np.ndarray:
    """Category positions of ``labels`` (-1 = missing); a label outside the categories is a
    ValueError."""
    out = np.empty(len(labels), dtype=np.int64)
    for i, label in enumerate(labels):
        if _is_missing(label):
            out[i] = -1
        elif label in index:
            out[i] = index[label]
        else:
            raise bad_argument(
                f"label {label!r} is not one of the categories {list(index)}",
                fix="add it to the categories, or map it to one",
            )
    return out


def _kappa_from_tables(tables: np.ndarray, w: np.ndarray) -> np.ndarray:
    """κ = 1 − Σ w·p_obs / Σ w·p_exp for a batch of (B, K, K) confusion tables; NaN where Σ w·p_exp
    = 0."""
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
    """κ of one K × K confusion table (rows: one rater, columns: the other), by
    :func:`kappa_weights`; NaN when the expected disagreement is 0 (both raters used one and the
    same category)."""
    counts = np.asarray(table, dtype=float)
    return float(_kappa_from_tables(counts[None], kappa_weights(len(counts), weights))[0])


def _cohen_pairs(
    a: Sequence[Any], b: Sequence[Any], categories: Sequence[Any]
) -> tuple[np.ndarray, int]:
    if len(a) != len(b):
        raise bad_argument(
            f"a and b do not pair up item by item ({len(a)} and {len(b)} labels)",
            fix="give one label per item on each side (None for a missing one)",
        )
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


def cohen_kappa(
    a: Sequence[Any], b: Sequence[Any], *, categories: Sequence[Any], weights: Weights = None
) -> Number:
    """Cohen's κ of two raters' paired labels ``a[i]``, ``b[i]`` (None/NaN = not rated; such pairs
    are dropped).

    ``categories`` lists every possible label, in order (the order matters only for ``weights``):
    None = unweighted, ``"linear"`` / ``"quadratic"`` = weighted by the distance of the positions.
    Computed as 1 − Σ w·p_obs / Σ w·p_exp with p_exp the product of the two raters' marginals (equal
    to (p_o − p_e)/(1 − p_e) when unweighted). Undefined with fewer than 2 shared items, or when the
    expected disagreement is 0: both raters used one and the same category ("all ratings
    identical"). Two raters who each used a single but *different* category give κ = 0.
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
        raise bad_argument(
            f"counts have the shape {counts.shape}", fix="give a units × categories matrix"
        )
    if (counts < 0).any() or not np.isfinite(counts).all():
        raise bad_argument(
            "counts hold a negative or non-finite value", fix="give finite counts ≥ 0"
        )
    return counts


def _count_units(counts: np.ndarray) -> Units | Undefined:
    """The units of a counts matrix (rows with a rating) as :class:`analysis.stats.ratings.Units`,
    or why there are none to use."""
    rated = counts[counts.sum(axis=1) > 0]
    if not len(rated):
        return Undefined("no ratings")
    units = Units.from_counts(rated)
    return units if units.pairable.any() else Undefined("fewer than 2 ratings per item")


def fleiss_kappa(counts: Any) -> Number:
    """Fleiss' κ of a units × categories matrix of rating counts, with missing ratings as Gwet
    handles them.

    Every unit with a rating counts: the observed agreement averages over the units with two or more
    ratings, the category shares over all (Gwet 2014; irrCAC's ``fleiss.kappa.raw``); when every
    unit has the same number of ratings this is Fleiss' (1971) κ. Undefined without a unit with two
    ratings, or when P̄e = 1 (all ratings in one category: "all ratings identical").
    """
    units = _count_units(_as_counts(counts))
    if isinstance(units, Undefined):
        return units
    return units_coefficients(units, np.eye(units.counts.shape[1]))["fleiss_kappa"].value


# ---------------------------------------------------------------- resampling


def _cohen_replicates(
    codes: np.ndarray, k: int, weights: Sequence[np.ndarray], n_boot: int, seed: int
) -> np.ndarray:
    """Replicate κ for each *disagreement* weight matrix, (B, len(weights)), drawn from the
    confusion table of the paired codes a·k + b (:func:`analysis.stats.resampling.table_draws`)."""
    table = np.bincount(codes, minlength=k * k).astype(float)
    tables = table_draws(table, n_boot, seed).reshape(n_boot, k, k).astype(float)
    return np.stack([_kappa_from_tables(tables, w) for w in weights], axis=1)


def _cohen_evaluate(
    codes: np.ndarray, k: int, weights: Sequence[np.ndarray]
) -> Callable[[np.ndarray], np.ndarray]:
    """Replicate κ for each weight matrix from the paired codes a·k + b: (B, len(weights)).

    A replicate's confusion table is ``multiplicity @ onehot(codes)`` (a sparse items × k² matrix).
    """
    from scipy import sparse

    onehot = sparse.csr_array(
        (np.ones(len(codes)), (np.arange(len(codes)), codes)), shape=(len(codes), k * k)
    )

    def evaluate(mult: np.ndarray) -> np.ndarray:
        tables = np.asarray(mult @ onehot).reshape(len(mult), k, k)
        return np.stack([_kappa_from_tables(tables, w) for w in weights], axis=1)

    return evaluate


def cohen_resampler(
    a: Sequence[Any], b: Sequence[Any], *, categories: Sequence[Any], weights: Weights = None
) -> Resampler:
    codes, k = _cohen_pairs(a, b, categories)
    evaluate = _cohen_evaluate(codes, k, [kappa_weights(k, weights)])

    def draw(n_boot: int, seed: int) -> np.ndarray:
        return _cohen_replicates(codes, k, [kappa_weights(k, weights)], n_boot, seed)[:, 0]

    return Resampler(len(codes), lambda mult: evaluate(mult)[:, 0], draw)


def fleiss_resampler(counts: Any) -> Resampler:
    """Fleiss' κ of resampled units (every unit with a rating) from the sums of their features."""
    units = _count_units(_as_counts(counts))
    if isinstance(units, Undefined):  # bootstrap_ci only resamples defined estimates
        raise bad_argument(units.reason, fix="bootstrap only a defined estimate")
    columns, identity = features(units), np.eye(units.counts.shape[1])

    def evaluate(mult: np.ndarray) -> np.ndarray:
        return resampled(mult @ columns, identity, units.counts.shape[1], 0)["fleiss_kappa"]

    return Resampler(units.n, evaluate)


def kappas(tables: np.ndarray, disagreements: np.ndarray) -> np.ndarray:
    """Cohen's κ of N q × q tables (N, q, q) under each of W disagreement weight matrices (W, q, q):
    (N, W).

    κ = 1 − Σ d·t · Σ t / Σ d_kl rows_k cols_l (:func:`_kappa_from_tables`, all weightings at once);
    NaN where the expected disagreement is 0. ``einsum`` rather than BLAS: this runs beside the
    threads drawing the tables, and BLAS's own threads would spin against them.
    """
    rows, cols = np.einsum("nkl->nk", tables), np.einsum("nkl->nl", tables)
    total = rows.sum(axis=1)
    observed = np.einsum("nkl,wkl->nw", tables, disagreements)
    expected = np.einsum("nkl,wkl->nw", rows[:, :, None] * cols[:, None, :], disagreements)
    ok = expected > 0
    return np.where(ok, 1.0 - observed * total[:, None] / np.where(ok, expected, 1.0), np.nan)


__all__ = [
    "cohen_kappa",
    "cohen_resampler",
    "fleiss_kappa",
    "fleiss_resampler",
    "kappa_of_table",
    "kappas",
]
