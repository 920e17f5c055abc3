"""The bootstrap's engine: units drawn with replacement, replicates, percentile intervals.

Conventions:

* **Resamples** draw *units* with replacement (numpy ``default_rng(seed)``, so a CI is
  reproducible), in chunks of at most :data:`MAX_CHUNK` replicates and :data:`CHUNK` unit draws
  (bounds the memory). The chunks depend only on the number of units, so every statistic on the same
  units draws the same resamples for the same seed. A replicate is a vector of multiplicities (how
  often each unit was drawn); a statistic ready for resampling (:class:`Resampler`) evaluates a
  batch of them at once (NaN = undefined replicate).
* **Tables**: a statistic that depends on the units only through a k × k confusion table (Cohen's κ)
  can draw each replicate's table as one multinomial draw (:func:`table_draws`): the same bootstrap
  distribution as resampling the units.
* **Percentile CI** (:func:`percentile_ci`, :func:`percentile_rows`): the (1 − level)/2 and (1 +
  level)/2 percentiles (linear interpolation) of the *defined* replicates; ``Undefined("too few
  defined bootstrap replicates (k of B)")`` when fewer than :data:`MIN_DEFINED` of them are defined.
  A percentile CI need not be centred on its estimate; with few units and a statistic at the edge of
  its range the CI can even exclude the estimate. It is reported as computed, never widened to
  include it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from .intervals import CONFIDENCE
from .undefined import Bounds, Undefined

MIN_DEFINED = 0.5
"""Share of bootstrap replicates that must be defined for a CI."""
CHUNK = 1 << 21
"""Unit draws per chunk of bootstrap replicates (bounds the bootstrap's memory)."""
MAX_CHUNK = 64
"""Replicates per chunk at most. Chunks depend only on the number of units, so every statistic on
the same units draws the same resamples for the same seed."""


@dataclass(frozen=True)
class Resampler:
    """A statistic ready for resampling: ``evaluate(multiplicity (B, n_units)) -> (B,)`` (NaN =
    undefined).

    ``replicates(n_boot, seed)``, when set, draws the replicates itself (Cohen's κ: from its
    confusion table).
    """

    n_units: int
    evaluate: Callable[[np.ndarray], np.ndarray]
    replicates: Callable[[int, int], np.ndarray] | None = None


def table_draws(table: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` resampled confusion tables of a pair, (B, k·k): multinomial draws with
    ``default_rng(seed)``.

    κ depends on the items only through their k × k confusion table, and n items drawn with
    replacement put Multinomial(n, table / n) counts into its cells: so each replicate's table is
    one multinomial draw, the same bootstrap distribution as resampling the items, at k² numbers a
    replicate instead of n.
    """
    n = table.sum()
    return np.random.default_rng(seed).multinomial(int(n), table / n, size=n_boot)


def multiplicities(n_units: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """``n_boot`` resamples of ``n_units`` units with ``default_rng(seed)``, in chunks: how often
    each unit was drawn.

    A chunk draws (reps × n_units) unit indices and counts them ((reps, n_units) floats). The chunks
    depend only on the number of units, so every statistic on the same units draws the same
    resamples.
    """
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, MAX_CHUNK, CHUNK // max(n_units, 1)))
    for start in range(0, n_boot, chunk):
        reps = min(chunk, n_boot - start)
        offsets = (np.arange(reps) * n_units)[:, None]
        draws = rng.integers(0, n_units, size=(reps, n_units)) + offsets
        counts = np.bincount(draws.ravel(), minlength=reps * n_units)
        yield counts.reshape(reps, n_units).astype(float)


def replicates(
    n_units: int, evaluate: Callable[[np.ndarray], np.ndarray], n_boot: int, seed: int
) -> np.ndarray:
    """``n_boot`` replicate values (NaN = undefined), resampling units with ``default_rng(seed)``
    (:func:`multiplicities`); ``evaluate`` weighs the per-unit contributions by the
    multiplicities."""
    return np.concatenate([evaluate(mult) for mult in multiplicities(n_units, n_boot, seed)])


def percentile_ci(values: np.ndarray, confidence: float = CONFIDENCE) -> Bounds:
    """The percentile interval of the defined replicates, or Undefined when fewer than half are
    defined."""
    defined = values[np.isfinite(values)]
    if len(defined) < MIN_DEFINED * len(values):
        return Undefined(f"too few defined bootstrap replicates ({len(defined)} of {len(values)})")
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return float(low), float(high)


def percentile_rows(values: np.ndarray, confidence: float = CONFIDENCE) -> list[Bounds]:
    """:func:`percentile_ci` of each row of (P, B) replicates, vectorised (the same numbers)."""
    p, b = values.shape
    if b == 0:
        return [Undefined("too few defined bootstrap replicates (0 of 0)")] * p
    ordered = np.sort(np.where(np.isfinite(values), values, np.inf), axis=1)
    defined = np.isfinite(values).sum(axis=1)
    tail = (1.0 - confidence) / 2.0
    rows = np.arange(p)
    ends = []
    for q in (tail, 1.0 - tail):
        position = (np.maximum(defined, 1) - 1) * q
        low = np.floor(position).astype(int)
        high = np.minimum(low + 1, np.maximum(defined - 1, 0))
        below, above = ordered[rows, low], ordered[rows, high]
        with np.errstate(invalid="ignore"):
            ends.append(below + (above - below) * (position - low))
    enough = defined >= MIN_DEFINED * b
    return [
        (float(lo), float(hi))
        if ok
        else Undefined(f"too few defined bootstrap replicates ({d} of {b})")
        for lo, hi, ok, d in zip(
            ends[0].tolist(), ends[1].tolist(), enough.tolist(), defined.tolist()
        )
    ]


__all__ = [
    "CHUNK",
    "MAX_CHUNK",
    "MIN_DEFINED",
    "Resampler",
    "multiplicities",
    "percentile_ci",
    "percentile_rows",
    "replicates",
    "table_draws",
]
