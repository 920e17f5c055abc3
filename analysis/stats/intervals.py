"""Confidence intervals: Wilson's score interval, Fisher's z for Spearman's ρ, and Student's t.

Conventions:

* **Coverage** is :data:`CONFIDENCE` (95%) unless a ``level`` is given; two-sided.
* **Wilson** (:func:`wilson_interval`): the score interval of a proportion, no continuity correction
  (Wilson 1927; Newcombe 1998, method 3). At 0 successes the lower bound is exactly 0 and at n the
  upper exactly 1, as the formula gives (not its floating-point rounding). No trials:
  ``Undefined("no ratings")``.
* **Fisher's z** (:func:`fisher_ci`): tanh(atanh ρ ± z · √((1 + ρ²/2)/(n − 3))), the Bonett–Wright
  standard error (Bonett & Wright 2000, *Psychometrika* 65:23–28). Undefined with fewer than
  :data:`MIN_N` items, or when |ρ| = 1 (z is infinite).
* **Student's t** (:func:`inference`): value ± t_{(1+level)/2, df} · SE, the upper bound clipped at
  1 (the agreement coefficients' ceiling), the lower bound not clipped; the one-sided p-value of H0:
  value = 0 against > 0, 1 − T_df(value / SE). Arrays in, arrays out, NaN where the value or SE is
  NaN or df < 1; an SE of 0 gives the interval [value, value] and p = 0 (value > 0) or 1 (value <
  0), NaN at value 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .jsonable import Jsonable
from .undefined import Undefined

if TYPE_CHECKING:  # numpy is imported by the one function that uses it, when it runs
    import numpy as np

CONFIDENCE = 0.95
"""Coverage of the confidence intervals."""
MIN_N = 4
"""Items needed for a rank correlation and its interval (Fisher's z needs n − 3 ≥ 1)."""


@dataclass(frozen=True)
class Interval(Jsonable):
    """A confidence interval with its coverage and method."""

    low: float
    high: float
    level: float
    """Coverage, e.g. 0.95."""
    method: str
    """How it was computed, e.g. ``fisher-z bonett-wright`` or ``wilson``."""


def z_value(level: float) -> float:
    """The two-sided normal quantile for ``level`` (1.959964 for 0.95)."""
    from scipy import stats

    return float(stats.norm.ppf(0.5 + level / 2))


def wilson_interval(successes: int, n: int, level: float = CONFIDENCE) -> Interval | Undefined:
    """Wilson's score interval for ``successes`` out of ``n`` (no continuity correction). At 0
    successes the lower bound is exactly 0 and at n the upper exactly 1, as the formula gives (not
    its floating-point rounding)."""
    if n <= 0:
        return Undefined("no ratings")
    z, p = z_value(level), successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return Interval(low, high, level, "wilson")


def fisher_ci(rho: float, n: int, level: float = CONFIDENCE) -> Interval | Undefined:
    """tanh(atanh ρ ± z·√((1 + ρ²/2)/(n − 3))): Bonett & Wright (2000)."""
    if n < MIN_N:
        return Undefined(f"fewer than {MIN_N} items (n={n})")
    if abs(rho) >= 1:
        return Undefined(f"perfect rank agreement (ρ = {rho:g}): Fisher's z is infinite")
    half = z_value(level) * math.sqrt((1 + rho**2 / 2) / (n - 3))
    z = math.atanh(rho)
    return Interval(math.tanh(z - half), math.tanh(z + half), level, "fisher-z bonett-wright")


def inference(
    value: np.ndarray, se: np.ndarray, df: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower, upper, p) of arrays of values and SEs on ``df`` degrees of freedom (see the module
    doc).

    NaN where the value or SE is NaN, or df < 1; p is NaN where value = SE = 0.
    """
    import numpy as np
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


def newcombe_interval(
    successes: int, n: int, before_successes: int, before_n: int, level: float = CONFIDENCE
) -> Interval | Undefined:
    """The difference of two proportions, ``successes/n − before_successes/before_n``, with
    Newcombe's hybrid score interval (Newcombe 1998, *Statistics in Medicine* 17:873–890, method
    10): from each proportion's Wilson interval, d − √((p₁ − l₁)² + (u₂ − p₂)²) to
    d + √((u₁ − p₁)² + (p₂ − l₂)²). Undefined when either side has no trials."""
    now, before = (
        wilson_interval(successes, n, level),
        wilson_interval(before_successes, before_n, level),
    )
    if isinstance(now, Undefined) or isinstance(before, Undefined):
        return Undefined("no ratings on one side")
    p1, p2 = successes / n, before_successes / before_n
    low = p1 - p2 - math.hypot(p1 - now.low, before.high - p2)
    high = p1 - p2 + math.hypot(now.high - p1, p2 - before.low)
    return Interval(max(-1.0, low), min(1.0, high), level, "newcombe")


__all__ = [
    "CONFIDENCE",
    "MIN_N",
    "Interval",
    "fisher_ci",
    "inference",
    "newcombe_interval",
    "wilson_interval",
    "z_value",
]
