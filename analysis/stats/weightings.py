"""Weight matrices: how much two categories agree (or disagree) under a weighting.

Conventions:

* **Agreement weights** (:func:`weights`, irrCAC's ``weights.gen.r``): q × q, 1 on the diagonal, on
  the category *values* x (by default 1 … q, in the categories' order): identity; linear 1 − |x_k −
  x_l| / (x_max − x_min); quadratic 1 − (x_k − x_l)² / (x_max − x_min)²; radical 1 − √|x_k − x_l| /
  √(x_max − x_min); ratio 1 − ((x_k − x_l)/(x_k + x_l))² / ((x_max − x_min)/(x_max + x_min))²
  (values ≥ 0; 1 on the diagonal, also at 0); circular 1 − sin²(π (x_k − x_l) / U) / max, U = x_max
  − x_min + 1; ordinal on the positions 1 … q: 1 − m(m − 1)/2 / max with m = |k − l| + 1. One
  category: [[1]]. These are what the Gwet family (:mod:`analysis.stats.gwet`) and the tables
  (:mod:`analysis.stats.tables`) take.
* **Disagreement weights on positions** (:func:`kappa_weights`, what
  :func:`analysis.stats.kappa.cohen_kappa` takes): 1 off the diagonal (unweighted), |i − j|/(k − 1)
  (linear) or its square (quadratic) — the same weightings as 1 − :func:`weights` on 1 … k, computed
  as Cohen's κ has always computed them.
* Krippendorff's ordinal *level of measurement* is another thing, a metric from the observed
  category frequencies: :func:`analysis.stats.krippendorff.ordinal_alpha_weights`.
* :func:`category_weights` gives weights on categories whose values may be missing: Undefined
  (``"linear weights: category 'b' has no value"``, or the reason :func:`weights` refuses the
  values) instead of an error.
* A bad argument — an unknown weighting, values that are not finite numbers, non-distinct values
  (all but identity and ordinal), negative values (ratio), a matrix of the wrong shape — is a
  :func:`analysis.stats.errors.bad_argument`.
"""

from __future__ import annotations

import math
from typing import Literal, Sequence

import numpy as np

from .errors import StatsError, bad_argument
from .names import WEIGHTS
from .undefined import Undefined

Weights = Literal["linear", "quadratic"] | None
"""The weightings of :func:`kappa_weights` (None: unweighted)."""
KAPPA_WEIGHTS: tuple[Weights, ...] = (None, "linear", "quadratic")
"""The weightings :func:`kappa_weights` (and Cohen's κ) take."""


def weights(kind: str, values: Sequence[float] | int) -> np.ndarray:
    """The q × q agreement weights ``kind`` (one of :data:`WEIGHTS`) on the category ``values`` (or
    1 … q for an int q).

    irrCAC's definitions (module doc); the order of ``values`` is the categories' order (it matters
    for ``ordinal`` only, which uses the positions). One category: [[1]].
    """
    x = category_values(values)
    q = len(x)
    if kind not in WEIGHTS:
        raise bad_argument(f"unknown weights {kind!r}", fix=f"use one of {', '.join(WEIGHTS)}")
    if kind == "identity" or q == 1:
        return np.eye(q)
    if kind == "ordinal":
        m = np.abs(np.subtract.outer(np.arange(q), np.arange(q))) + 1.0
        return _normalised(m * (m - 1) / 2)
    span = float(x.max() - x.min())
    if span <= 0:
        raise bad_argument(
            f"{kind} weights need distinct category values, got {_listed(x)}",
            fix="give the categories different values",
        )
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


def category_values(values: Sequence[float] | int) -> np.ndarray:
    """The categories' values as an array: 1 … q for an int q; a bad argument unless finite
    numbers."""
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        return np.arange(1.0, int(values) + 1.0)
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise bad_argument(
            "category values are not numbers", fix="give one number per category"
        ) from None
    if x.ndim != 1 or len(x) == 0 or not np.isfinite(x).all():
        raise bad_argument(
            f"category values {values!r} are not a list of finite numbers",
            fix="give one finite number per category",
        )
    return x


def _listed(x: np.ndarray) -> str:
    return ", ".join(f"{v:g}" for v in x.tolist())


def _normalised(disagreement: np.ndarray) -> np.ndarray:
    top = disagreement.max()
    return 1.0 - disagreement / top if top > 0 else np.ones_like(disagreement)


def _ratio_weights(x: np.ndarray, diff: np.ndarray, span: float) -> np.ndarray:
    if (x < 0).any():
        raise bad_argument(
            f"ratio weights need category values ≥ 0, got {_listed(x)}",
            fix="use another weighting, or values ≥ 0",
        )
    total = np.add.outer(x, x)
    ratio = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2
    return 1.0 - ratio / (span / (x.max() + x.min())) ** 2


def weight_matrix(spec: str | np.ndarray, values: Sequence[float] | int) -> np.ndarray:
    """Agreement weights from a name of :data:`WEIGHTS` (:func:`weights`) or a q × q matrix of
    finite numbers, q the number of ``values``."""
    if isinstance(spec, str):
        return weights(spec, values)
    matrix = np.asarray(spec, dtype=float)
    q = len(category_values(values))
    if matrix.shape != (q, q) or not np.isfinite(matrix).all():
        raise bad_argument(
            f"weights of shape {matrix.shape} for {q} categories",
            fix=f"give a {q} × {q} matrix of finite numbers",
        )
    return matrix


def category_weights(
    kind: str, categories: Sequence[str], values: Sequence[float]
) -> np.ndarray | Undefined:
    """The agreement weights ``kind`` on the ``categories``' ``values``, or why those values cannot
    take them: a category without a value (NaN; identity and ordinal use the positions only, so they
    take any), or values the weighting refuses (e.g. ratio weights on negative values)."""
    if kind not in ("identity", "ordinal"):
        missing = [c for c, v in zip(categories, values) if not math.isfinite(v)]
        if missing:
            return Undefined(f"{kind} weights: category {missing[0]!r} has no value")
    try:
        return weights(kind, values if kind not in ("identity", "ordinal") else len(values))
    except StatsError as exc:
        return Undefined(exc.what)


def kappa_weights(k: int, weights: Weights = None) -> np.ndarray:
    """The k × k *disagreement* weights: 1 off the diagonal (None), ``|i−j|/(k−1)`` (linear) or its
    square."""
    pos = np.arange(k)
    diff = np.abs(pos[:, None] - pos[None, :]).astype(float)
    if weights is None:
        return (diff > 0).astype(float)
    if weights == "linear":
        return diff / max(k - 1, 1)
    if weights == "quadratic":
        return (diff / max(k - 1, 1)) ** 2
    raise bad_argument(f"unknown weights {weights!r}", fix="use None, 'linear' or 'quadratic'")


__all__ = [
    "KAPPA_WEIGHTS",
    "WEIGHTS",
    "Weights",
    "category_values",
    "category_weights",
    "kappa_weights",
    "weight_matrix",
    "weights",
]
