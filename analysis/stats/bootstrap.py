"""Bootstrap confidence intervals of the agreement statistics: one statistic, or many at once.

Conventions (the engine's, :mod:`analysis.stats.resampling`: units resampled with replacement, numpy
``default_rng(seed)``, 2.5 and 97.5 percentiles of the *defined* replicates, Undefined when fewer
than half are defined):

* :func:`bootstrap_ci` bootstraps one statistic called as usual —
  :func:`analysis.stats.kappa.cohen_kappa` (units: the shared items),
  :func:`analysis.stats.kappa.fleiss_kappa` (the units with a rating) or
  :func:`analysis.stats.krippendorff.krippendorff_alpha` (the pairable units). Undefined: the
  estimate's own reason when it is undefined, ``"no bootstrap"`` when ``n_boot`` = 0, ``"too few
  defined bootstrap replicates (k of B)"``.
* :func:`units_bootstrap` bootstraps every coefficient of :data:`analysis.stats.gwet.RAW` under each
  weighting, and α at each level, of one set of ratings: the coefficients share one set of resamples
  of the rated units (every coefficient and weighting from the same replicates); α, at every level
  and weighting, one set of resamples of the pairable units (so each replicate has the same number
  of them: the resamples :func:`bootstrap_ci` draws for ``krippendorff_alpha`` over the same units).
* :func:`start_pair_bootstrap` bootstraps Cohen's κ of many rater pairs' tables under several
  weightings, on a thread pool: each pair's replicate tables are multinomial draws with
  ``default_rng(seed)``, the same seed for every pair
  (:func:`analysis.stats.resampling.table_draws`: the same bootstrap distribution as resampling its
  items). Its κ kernels avoid BLAS, whose own threads would spin against the drawing threads
  (:func:`threads` says how many to use).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np

from . import resampling
from .errors import bad_argument
from .gwet import RAW, alpha_features, features, resampled_alpha, resampled_weightings
from .intervals import CONFIDENCE
from .kappa import cohen_kappa, cohen_resampler, fleiss_kappa, fleiss_resampler, kappas
from .krippendorff import alpha_resampler, krippendorff_alpha
from .ratings import Units
from .undefined import Bounds, Number, Undefined

_RESAMPLERS: dict[Callable[..., Any], Callable[..., resampling.Resampler]] = {
    cohen_kappa: cohen_resampler,
    fleiss_kappa: fleiss_resampler,
    krippendorff_alpha: alpha_resampler,
}


def bootstrap_ci(
    statistic: Callable[..., Number],
    *args: Any,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    **kwargs: Any,
) -> Bounds:
    """Percentile bootstrap CI of ``statistic(*args, **kwargs)``, resampling units (items) with
    replacement.

    ``statistic`` is :func:`cohen_kappa`, :func:`fleiss_kappa` or :func:`krippendorff_alpha`, called
    as usual, e.g. ``bootstrap_ci(krippendorff_alpha, data, "ordinal", seed=1)``. Units are the
    shared items (Cohen), the units with a rating (Fleiss) or the pairable units (α). Replicates are
    evaluated in vectorised chunks (numpy ``Generator`` seeded with ``seed``: the same call gives
    the same CI). Returns (low, high) at ``confidence`` (percentiles of the defined replicates,
    linear interpolation), or Undefined: the estimate's own reason when it is undefined, ``"no
    bootstrap"`` when ``n_boot`` = 0, ``"too few defined bootstrap replicates"`` when fewer than
    half of them are defined.
    """
    if statistic not in _RESAMPLERS:
        raise bad_argument(
            f"cannot bootstrap {getattr(statistic, '__name__', statistic)!r}",
            fix="use cohen_kappa, fleiss_kappa or krippendorff_alpha",
        )
    if n_boot < 0 or not 0 < confidence < 1:
        raise bad_argument(
            f"n_boot={n_boot}, confidence={confidence}",
            fix="use n_boot ≥ 0 and a confidence in (0, 1)",
        )
    estimate = statistic(*args, **kwargs)
    if isinstance(estimate, Undefined):
        return estimate
    if n_boot == 0:
        return Undefined("no bootstrap")
    resampler = _RESAMPLERS[statistic](*args, **kwargs)
    if resampler.replicates is not None:
        return resampling.percentile_ci(resampler.replicates(n_boot, seed), confidence)
    values = resampling.replicates(resampler.n_units, resampler.evaluate, n_boot, seed)
    return resampling.percentile_ci(values, confidence)


def threads() -> int:
    """Threads for the pairs' bootstrap: the CPUs this process may use, at most 4."""
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, min(4, os.cpu_count() or 1))


def units_bootstrap(
    units: Units,
    matrices: dict[str, np.ndarray | Undefined],
    levels: dict[str, np.ndarray | Undefined],
    n_boot: int,
    seed: int,
) -> tuple[dict[tuple[str, str], Bounds], dict[str, Bounds]]:
    """Bootstrap CIs of every coefficient of :data:`analysis.stats.gwet.RAW` under each weight
    matrix of ``matrices`` (keyed (weighting, coefficient)) and of α under each level's weights of
    ``levels`` (the ordinal level's recomputed per replicate); see the module doc. An Undefined
    matrix gets no CI."""
    defined = {w: m for w, m in matrices.items() if not isinstance(m, Undefined)}
    level_matrices = {lvl: m for lvl, m in levels.items() if not isinstance(m, Undefined)}
    if n_boot == 0:
        none = Undefined("no bootstrap")
        return {(w, name): none for w in defined for name in RAW}, {lvl: none for lvl in levels}
    q, raters = units.counts.shape[1], len(units.raters) if units.raters is not None else 0
    everyone, pairable = features(units), alpha_features(units)
    reps: dict[tuple[str, str], list[np.ndarray]] = {(w, name): [] for w in defined for name in RAW}
    level_reps: dict[str, list[np.ndarray]] = {lvl: [] for lvl in level_matrices}

    def alphas(sums: np.ndarray) -> None:
        for w, m in defined.items():
            reps[(w, "krippendorff_alpha")].append(resampled_alpha(sums, m))
        for lvl, m in level_matrices.items():
            level_reps[lvl].append(resampled_alpha(sums, None if lvl == "ordinal" else m))

    same = len(pairable) == units.n  # every rated item pairable: the same resamples
    for mult in resampling.multiplicities(units.n, n_boot, seed):
        for w, by_name in resampled_weightings(mult @ everyone, defined, q, raters).items():
            for name, values in by_name.items():
                reps[(w, name)].append(values)
        if same:
            alphas(mult @ pairable)
    if not same:
        for mult in resampling.multiplicities(len(pairable), n_boot, seed):
            alphas(mult @ pairable)
    keys = list(reps) + list(level_reps)
    rows = [np.concatenate(v) for v in [*reps.values(), *level_reps.values()]]
    found = dict(zip(keys, resampling.percentile_rows(np.stack(rows)) if keys else []))
    none = Undefined("no bootstrap")
    return {k: found[k] for k in reps}, {lvl: found.get(lvl, none) for lvl in levels}


def start_pair_bootstrap(
    pool: ThreadPoolExecutor,
    tables: np.ndarray,
    matrices: dict[str, np.ndarray],
    n_boot: int,
    seed: int,
    batch: int = 32,
) -> Callable[[], dict[str, list[Bounds]]]:
    """Start the bootstrap of Cohen's κ of each (q, q) table of ``tables`` (P, q, q) under each
    agreement weight matrix of ``matrices`` on ``pool``; returns the function that waits for each
    table's CI per weighting.

    Each table's replicates are drawn by :func:`analysis.stats.resampling.table_draws` (the same
    ``seed`` for every table, as :func:`bootstrap_ci` draws them), κ of every drawn table under
    every weighting at once; a task per ``batch`` tables. A table of fewer than 2 items: ``"fewer
    than 2 shared items"``.
    """
    p = len(tables)
    if n_boot == 0 or not matrices or not p:
        return lambda: {w: [Undefined("no bootstrap")] * p for w in matrices}
    q = tables.shape[1]
    flat = tables.reshape(p, q * q)
    disagreements = np.stack([1.0 - m for m in matrices.values()])
    # the others are undefined (fewer than 2 shared items)
    drawable = np.flatnonzero(flat.sum(axis=1) >= 2)
    batch = max(1, min(batch, resampling.CHUNK // (n_boot * q * q)))  # a task draws ≤ CHUNK cells

    def task(rows: np.ndarray) -> list[list[Bounds]]:
        drawn = [resampling.table_draws(flat[i], n_boot, seed) for i in rows.tolist()]
        draws = np.stack(drawn).astype(float)
        values = kappas(draws.reshape(len(rows) * n_boot, q, q), disagreements)  # (rows · B, W)
        return [
            resampling.percentile_rows(values[:, j].reshape(len(rows), n_boot))
            for j in range(len(matrices))
        ]

    parts = np.array_split(drawable, max(1, -(-len(drawable) // batch)))
    futures = [(rows, pool.submit(task, rows)) for rows in parts if len(rows)]

    def collect() -> dict[str, list[Bounds]]:
        out: list[list[Bounds]] = [[Undefined("fewer than 2 shared items")] * p for _ in matrices]
        for rows, future in futures:
            for j, cis in enumerate(future.result()):
                for i, ci in zip(rows.tolist(), cis):
                    out[j][i] = ci
        return dict(zip(matrices, out))

    return collect


__all__ = ["bootstrap_ci", "start_pair_bootstrap", "threads", "units_bootstrap"]
