"""Raw ratings as the agreement statistics take them: long form, per-unit summaries, pair tables.

Conventions:

* **Units** are what ratings are given to (items on one dimension); they and the raters are numbered
  from 0. :class:`Ratings` holds one entry per rating (unit, rater, category index); every unit
  below ``n_units`` has a rating (units without one are left out when the ratings are built).
* :class:`Units` summarises them once for every weighting: per unit the ratings per category r_ik,
  their number r_i, the ordered pairs of ratings by category; per rater with a rating, the ratings
  per category. A unit with one rating has no pair; a unit is *pairable* with two ratings or more.
* ``Units.why_undefined()`` says why no coefficient of the ratings has a value: ``"no ratings"``,
  ``"one rater"`` (raters known and fewer than two rated), ``"fewer than 2 ratings per item"``.
* :func:`pair_tables` gives every rater pair's q × q contingency table at once (rows: the first
  rater's categories), from a dense one-hot product up to 20 million cells (80 MB), else a sparse
  one.
* :func:`shared_pairs` keeps the pairs sharing at least ``min_shared`` units (and counts the others
  that share any).
* A bad argument (ratings that are not category indices, a wrong shape) is a
  :func:`analysis.stats.errors.bad_argument`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import bad_argument
from .undefined import Undefined

_DENSE_PAIR_CELLS = 20_000_000
"""Units × (raters × categories) cells up to which :func:`pair_tables` uses a dense one-hot product
(80 MB)."""


@dataclass(frozen=True)
class Ratings:
    """Raw ratings in long form: one entry per rating (unit, rater, category); units and raters
    numbered from 0."""

    unit: np.ndarray
    rater: np.ndarray
    category: np.ndarray
    n_units: int
    """Units with at least one rating (every number below it has one)."""
    n_raters: int
    n_categories: int

    @classmethod
    def from_matrix(cls, ratings: Any, n_categories: int | None = None) -> "Ratings":
        """From units × raters category indices 0 … q − 1 (NaN or None = not rated); units without a
        rating are left out."""
        try:
            matrix = np.asarray(ratings, dtype=float)
        except (TypeError, ValueError):
            raise bad_argument(
                "ratings are not category indices",
                fix="give numbers 0 … q − 1, NaN for a missing rating",
            ) from None
        if matrix.ndim != 2:
            raise bad_argument(
                f"ratings have the shape {matrix.shape}", fix="give a units × raters matrix"
            )
        present = ~np.isnan(matrix)
        codes = matrix[present]
        q = int(codes.max()) + 1 if n_categories is None and codes.size else (n_categories or 0)
        if codes.size and ((codes != np.round(codes)) | (codes < 0) | (codes >= q)).any():
            raise bad_argument(
                f"ratings hold values other than category indices 0 … {q - 1}",
                fix="code the categories 0 … q − 1",
            )
        rated = present.any(axis=1)
        unit, rater = np.nonzero(present[rated])
        category = matrix[rated][unit, rater].astype(np.intp)
        return cls(unit, rater, category, int(rated.sum()), matrix.shape[1], max(q, 1))


@dataclass(frozen=True)
class Units:
    """Per-unit summaries of raw ratings, computed once and shared by every weighting."""

    counts: np.ndarray
    """n × q: ratings per category, r_ik (every unit has one at least)."""
    size: np.ndarray
    """r_i, ratings per unit (≥ 1)."""
    pairs: np.ndarray
    """n × q²: the unit's ordered pairs of ratings by category, r_ik r_il − [k = l] r_ik (0 for one
    rating)."""
    raters: np.ndarray | None
    """Per rater with a rating: ratings per category (r' × q); None when only the counts are known
    (no Conger's κ)."""
    ratings: Ratings | None

    @classmethod
    def of(cls, data: Ratings) -> "Units":
        n, q = data.n_units, data.n_categories
        cells = data.unit * q + data.category
        counts = np.bincount(cells, minlength=n * q).reshape(n, q).astype(float)
        raters = (
            np.bincount(data.rater * q + data.category, minlength=data.n_raters * q)
            .reshape(data.n_raters, q)
            .astype(float)
        )
        return cls(counts, counts.sum(axis=1), _pairs(counts), raters[raters.sum(axis=1) > 0], data)

    @classmethod
    def from_counts(cls, counts: np.ndarray) -> "Units":
        """From a units × categories matrix of counts, each row with a rating (the raters
        unknown)."""
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


def pair_tables(data: Ratings) -> np.ndarray:
    """Every rater pair's q × q contingency table at once, (r, r, q, q): rows the first rater's
    categories.

    One product of the units × (rater, category) one-hot matrix with itself.
    """
    r, q = data.n_raters, data.n_categories
    cells = data.rater * q + data.category
    # float32 counts are exact below 2²⁴
    if data.n_units * r * q <= _DENSE_PAIR_CELLS and data.n_units < 1 << 24:
        onehot = np.zeros((data.n_units, r * q), dtype=np.float32)
        onehot[data.unit, cells] = 1.0
        product = (onehot.T @ onehot).astype(np.float64)
    else:  # many units, raters or categories: sparse
        from scipy import sparse

        matrix = sparse.csr_array(
            (np.ones(len(cells)), (data.unit, cells)), shape=(data.n_units, r * q)
        )
        product = (matrix.T @ matrix).toarray()
    return product.reshape(r, q, r, q).transpose(0, 2, 1, 3)


def shared_pairs(data: Ratings, min_shared: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The rater pairs (first < second) sharing ≥ ``min_shared`` units: (first, second, their
    (P, q, q) tables, and how many pairs shared 1 … ``min_shared`` − 1 units)."""
    first, second = np.triu_indices(data.n_raters, 1)
    if data.n_raters < 2 or data.n_units == 0:
        none = np.zeros(0, dtype=int)
        return none, none, np.zeros((0, data.n_categories, data.n_categories)), 0
    tables = pair_tables(data)
    shared = tables[first, second].sum(axis=(1, 2))
    keep = shared >= min_shared
    below = int(((shared > 0) & ~keep).sum())
    return first[keep], second[keep], tables[first[keep], second[keep]], below


__all__ = ["Ratings", "Units", "pair_tables", "shared_pairs"]
