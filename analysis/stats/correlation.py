"""Rank correlation: Spearman's ρ with a Fisher-z interval, and Kendall's τ-b.

Conventions:

* **Spearman ρ** (scipy, average ranks for ties; p-value from the t approximation with n − 2 df),
  with a 95% CI from Fisher's z and the Bonett–Wright standard error
  (:func:`analysis.stats.intervals.fisher_ci`).
* **Kendall τ-b** (scipy; exact p for small n without ties, else the normal approximation); no CI.
* Both are Undefined when n < :data:`analysis.stats.intervals.MIN_N` (``"fewer than 4 pairs
  (n=3)"``) or when either side is constant (``"<name> is constant (<value> throughout)"``,
  ``names`` naming the two sides); the CI also when |ρ| = 1.
* A coefficient within 1e-12 of ±1 is ±1 (scipy can return 0.9999999999999999).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from .intervals import CONFIDENCE, MIN_N, Interval, fisher_ci
from .jsonable import Jsonable
from .undefined import Number, Undefined

if TYPE_CHECKING:  # numpy and scipy are imported by the functions that use them, when they run
    import numpy as np


@dataclass(frozen=True)
class RankCorrelation(Jsonable):
    """A rank correlation coefficient with its p-value (and, for Spearman, a CI)."""

    coefficient: Number
    p_value: Number
    ci: Interval | Undefined
    n: int


def _rank_undefined(x: np.ndarray, y: np.ndarray, names: tuple[str, str]) -> Undefined | None:
    import numpy as np

    if len(x) < MIN_N:
        return Undefined(f"fewer than {MIN_N} pairs (n={len(x)})")
    for name, values in zip(names, (x, y)):
        if np.all(values == values[0]):
            return Undefined(f"{name} is constant ({values[0]:g} throughout)")
    return None


def _unit(r: float) -> float:
    """A coefficient within float noise of ±1 is ±1 (scipy can return 0.9999999999999999)."""
    return math.copysign(1.0, r) if abs(r) > 1 - 1e-12 else r


def spearman(
    x: Iterable[float],
    y: Iterable[float],
    *,
    level: float = CONFIDENCE,
    names: tuple[str, str] = ("x", "y"),
) -> RankCorrelation:
    """Spearman ρ, its p-value and a Fisher-z CI with the Bonett–Wright standard error."""
    import numpy as np
    from scipy import stats

    xs, ys = np.asarray(list(x), float), np.asarray(list(y), float)
    why = _rank_undefined(xs, ys, names)
    if why is not None:
        return RankCorrelation(why, why, why, len(xs))
    result = stats.spearmanr(xs, ys)
    rho = _unit(float(result.statistic))
    return RankCorrelation(rho, float(result.pvalue), fisher_ci(rho, len(xs), level), len(xs))


def kendall_tau(
    x: Iterable[float], y: Iterable[float], *, names: tuple[str, str] = ("x", "y")
) -> RankCorrelation:
    """Kendall τ-b and its p-value (no CI)."""
    import numpy as np
    from scipy import stats

    xs, ys = np.asarray(list(x), float), np.asarray(list(y), float)
    why = _rank_undefined(xs, ys, names)
    if why is not None:
        return RankCorrelation(why, why, why, len(xs))
    result = stats.kendalltau(xs, ys)
    return RankCorrelation(
        _unit(float(result.statistic)),
        float(result.pvalue),
        Undefined("no CI for Kendall τ"),
        len(xs),
    )


__all__ = ["RankCorrelation", "kendall_tau", "spearman"]
