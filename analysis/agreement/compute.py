"""Computing inter-rater agreement: :func:`agreement` turns the ratings frame into an
:class:`~analysis.agreement.report.AgreementReport`, by the conventions below (the report's
dataclasses are :mod:`analysis.agreement.report`, its Markdown :mod:`analysis.agreement.markdown`).

Per dimension: every chance-corrected agreement coefficient a methods reviewer asks for, over all
reviewers (percent agreement, Fleiss' κ, Conger's κ, Gwet's AC1/AC2, Brennan–Prediger,
Krippendorff's α) under each weighting, Krippendorff's α at the four levels of measurement, and per
reviewer pair (Cohen's κ, Scott's π, AC1/AC2, Brennan–Prediger, Krippendorff's α, percent
agreement); each with Gwet's analytic standard error, 95% CI and p-value, a bootstrap CI and its
target band; plus the items reviewers disagree on (the ones to resolve first). The statistics, with
their own conventions, are :mod:`analysis.stats` (the coefficients: :mod:`~analysis.stats.gwet` and
:mod:`~analysis.stats.tables`; α: :mod:`~analysis.stats.krippendorff`; the bootstrap:
:mod:`~analysis.stats.bootstrap`; bands: :mod:`~analysis.stats.bands`). Conventions of the report:

* **Undefined, never NaN, never an exception.** A statistic that has no value is
  ``Undefined(reason)`` with the statistics' reasons; a bootstrap CI also ``"no bootstrap"``
  (``n_boot`` = 0) or, for a pair's coefficients other than Cohen's κ, ``"not bootstrapped (per
  pair: Cohen's κ only)"``; a weighting the category values cannot take (ratio weights on negative
  values, a category without a value) is Undefined for that weighting.
* **Units.** A unit is one item: (run, item) on one dimension. Missing ratings are handled as Gwet's
  formulas handle them, never by dropping units: the multi-rater coefficients use every item with a
  rating (percent agreement: those with two or more; Krippendorff's α: only those, "pairable"); a
  pair's coefficients use the items both reviewers rated. Ratings without a run, item, reviewer or
  judgment are left out, and of duplicate ratings (same reviewer and item) the last one counts; the
  dimension's notes say so.
* **Categories and values** (:func:`analysis.vocabulary.valued_categories`): the scale's options in
  ascending score order, each valued at its ``number`` (e.g. 1–5), else its score; a judgment off
  the scale, or of a dimension the configuration lacks, at its mean score. The weights (ordinal: the
  positions) and interval/ratio α measure distances on the values. Weighted coefficients are
  reported for every weighting of :data:`WEIGHTINGS` from three categories (with two, each is the
  identity). A ``dimension`` neither configured nor rated is an :class:`AnalysisError` with the fix.
* **Bootstrap CIs** (``n_boot`` replicates, ``seed``): a dimension's by
  :func:`analysis.stats.units_bootstrap`, a pair's Cohen's κ by
  :func:`analysis.stats.start_pair_bootstrap`; a pair's other coefficients have the analytic CI
  only.
* **Across dimensions** (:class:`AcrossDimensions`, when two dimensions or more have agreement to
  measure): each coefficient of :data:`POOLED_COEFFICIENTS` pooled by
  :func:`analysis.stats.gwet.pooled` (De Vries et al. 2008): each dimension keeps its own chance
  agreement (pooling the ratings would put different scales in one chance model and inflate κ) and
  its own weights; the SE linearises over *items*; no bootstrap; α per dimension only. A dimension
  named ``overall`` (hilbot's default one) is one dimension among the others.
* **Disagreements**: items with ≥ 2 ratings whose judgments are not all the same, by spread (max −
  min score) descending, then number of raters descending, then run id and item id.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from evaluation.config import HilbotConfig

from .. import stats
from ..errors import AnalysisError
from ..stats import Bounds, Coefficient, Undefined
from ..stats.bands import UNDEFINED_BAND
from ..vocabulary import (
    CodedRatings,
    check_dimensions,
    coded_ratings,
    latest_ratings,
    valued_categories,
)
from .report import (
    COEFFICIENTS,
    DEFAULT_WEIGHTS,
    PAIR_COEFFICIENTS,
    PAIR_WEIGHTINGS,
    POOLED_COEFFICIENTS,
    VERSION,
    WEIGHTINGS,
    AcrossDimensions,
    AgreementEstimate,
    AgreementReport,
    DimensionAgreement,
    ItemDisagreement,
    PairAgreement,
)

if TYPE_CHECKING:
    import pandas as pd

NOT_BOOTSTRAPPED_ACROSS = Undefined("not bootstrapped (across dimensions: analytic only)")
_COLUMNS = ("run_id", "item_id", "dimension", "reviewer", "judgment", "score", "line")
"""The columns of the ratings frame agreement reads."""


def _estimate(coefficient: Coefficient, name: str, boot: Bounds) -> AgreementEstimate:
    value = coefficient.value
    boot = value if isinstance(value, Undefined) else boot
    return AgreementEstimate(
        value,
        coefficient.se,
        coefficient.ci,
        coefficient.p_value,
        boot,
        stats.band(value, name),
        coefficient.n_units,
        coefficient.pa,
        coefficient.pe,
    )


def _undefined_estimate(why: Undefined, n_items: int = 0) -> AgreementEstimate:
    return AgreementEstimate(why, why, why, why, why, UNDEFINED_BAND, n_items, why, why)


# -------------------------------------------------------------------------------------- a dimension


def _weightings(n_categories: int, shown: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(a dimension's weightings, a pair's): every weighting, and identity, linear, quadratic and
    ``shown``, from three categories; identity only with two."""
    if n_categories < 3:
        return ("identity",), ("identity",)
    return WEIGHTINGS, tuple(dict.fromkeys((*PAIR_WEIGHTINGS, shown)))


def _disagreements(frame: pd.DataFrame, coded: CodedRatings) -> tuple[ItemDisagreement, ...]:
    """The items whose reviewers disagree, by spread (max − min score, NaN scores ignored), raters,
    run and item (``coded`` numbers the units in (run_id, item_id) order, the reviewers by id)."""
    data, units = coded.data, coded.units
    split = (units.size >= 2) & ((units.counts > 0).sum(axis=1) >= 2)
    if not split.any():
        return ()
    score = frame["score"].to_numpy(dtype=float)
    low, high = np.full(units.n, np.inf), np.full(units.n, -np.inf)
    np.fmin.at(low, data.unit, score)
    np.fmax.at(high, data.unit, score)
    spread = np.where(np.isfinite(high - low), high - low, 0.0)
    items = np.flatnonzero(split)
    items = items[np.lexsort((items, -units.size[items], -spread[items]))]
    place = np.full(units.n, -1)
    place[items] = np.arange(len(items))
    rows = np.flatnonzero(split[data.unit])
    rows = rows[np.lexsort((data.rater[rows], place[data.unit[rows]]))]
    first = np.empty(units.n, dtype=np.intp)
    first[data.unit[::-1]] = np.arange(len(data.unit))[::-1]  # a rating of each unit
    run_ids = frame["run_id"].to_numpy(dtype=object)[first[items]].tolist()
    item_ids = frame["item_id"].to_numpy(dtype=object)[first[items]].tolist()
    triples = list(
        zip(
            np.asarray(coded.reviewers, dtype=object)[data.rater[rows]].tolist(),
            np.asarray(coded.categories, dtype=object)[data.category[rows]].tolist(),
            score[rows].tolist(),
        )
    )
    ends = np.cumsum(units.size[items]).astype(int).tolist()
    starts = [0, *ends[:-1]]
    sizes = units.size[items].astype(int).tolist()
    found = zip(run_ids, item_ids, spread[items].tolist(), sizes, starts, ends)
    return tuple(
        ItemDisagreement(str(run_id), str(item_id), float(d), int(n), tuple(triples[a:b]))
        for run_id, item_id, d, n, a, b in found
    )


@dataclass(frozen=True)
class _PairSet:
    """The reviewer pairs of a dimension sharing enough items: their indices and contingency
    tables."""

    first: np.ndarray
    second: np.ndarray
    tables: np.ndarray
    """(P, q, q): rows the first reviewer's categories."""
    below: int
    """Pairs sharing 1 … min_shared − 1 items."""
    matrices: dict[str, np.ndarray | Undefined]
    """The pairs' weightings."""
    shown: str

    @property
    def defined(self) -> dict[str, np.ndarray]:
        return {w: m for w, m in self.matrices.items() if not isinstance(m, Undefined)}


@dataclass(frozen=True)
class _Prepared:
    """A dimension coded, with its weight matrices and its pairs' tables."""

    dimension: str
    scale: str | None
    frame: pd.DataFrame
    notes: list[str]
    coded: CodedRatings
    matrices: dict[str, np.ndarray | Undefined]
    levels: dict[str, np.ndarray | Undefined]
    pairs: _PairSet


def _coded(
    frame: pd.DataFrame, dimension: str, config: HilbotConfig
) -> tuple[pd.DataFrame, list[str], str | None, list[str], list[float], CodedRatings]:
    """A dimension's latest ratings, the notes on them, its scale, categories and values, and the
    ratings coded."""
    frame, notes = latest_ratings(frame)
    scale_name, categories, values, more = valued_categories(frame, dimension, config)
    return (
        frame,
        notes + more,
        scale_name,
        categories,
        values,
        coded_ratings(frame, categories, values),
    )


def _prepare(
    frame: pd.DataFrame, dimension: str, config: HilbotConfig, *, min_shared: int, weights: str
) -> _Prepared:
    frame, notes, scale_name, categories, values, coded = _coded(frame, dimension, config)
    units = coded.units
    shown, pair_shown = _weightings(len(categories), weights)
    if units.why_undefined() is not None:
        matrices: dict[str, np.ndarray | Undefined] = {w: Undefined("unused") for w in shown}
        levels: dict[str, np.ndarray | Undefined] = {}
    else:
        matrices = {w: stats.category_weights(w, categories, values) for w in shown}
        levels = {
            level: stats.category_level_weights(level, units, categories, values)
            for level in stats.LEVELS
        }
    # the pairs sharing ≥ min_shared items (and how many shared fewer), with their tables
    pair_matrices = {w: stats.category_weights(w, categories, values) for w in pair_shown}
    pairs = _PairSet(*stats.shared_pairs(coded.data, min_shared), pair_matrices, weights)
    return _Prepared(dimension, scale_name, frame, notes, coded, matrices, levels, pairs)


# -------------------------------------------------------------------------------------- its figures


@dataclass(frozen=True)
class _Analytic:
    """A dimension's coefficients by weighting, α by level, its pairs', and the items in dispute."""

    coefficients: dict[str, dict[str, Coefficient] | Undefined]
    alpha: dict[str, Coefficient | Undefined]
    pairs: dict[str, dict[str, list[Coefficient]]]
    disagreements: tuple[ItemDisagreement, ...]


def _analytic(p: _Prepared) -> _Analytic:
    """Everything but the bootstrap (no BLAS: it runs beside the threads drawing pairs' tables)."""
    units = p.coded.units
    coefficients: dict[str, dict[str, Coefficient] | Undefined] = {}
    alpha: dict[str, Coefficient | Undefined] = {}
    if units.why_undefined() is None:
        coefficients = {
            w: m if isinstance(m, Undefined) else stats.units_coefficients(units, m)
            for w, m in p.matrices.items()
        }
        alpha = {
            level: m if isinstance(m, Undefined) else stats.alpha(units, m)
            for level, m in p.levels.items()
        }
    pairs = stats.pair_coefficients(p.pairs.tables, p.pairs.defined, ("identity", p.pairs.shown))
    return _Analytic(coefficients, alpha, pairs, _disagreements(p.frame, p.coded))


def _dimension_estimates(
    p: _Prepared,
    analytic: _Analytic,
    boot: dict[tuple[str, str], Bounds],
    level_boot: dict[str, Bounds],
) -> tuple[dict[str, dict[str, AgreementEstimate]], dict[str, AgreementEstimate]]:
    """A dimension's coefficients by weighting and α by level, with their bootstrap CIs."""
    units = p.coded.units
    why = units.why_undefined()
    if why is not None:
        return (
            {
                w: {name: _undefined_estimate(why, units.n) for name in COEFFICIENTS}
                for w in p.matrices
            },
            {level: _undefined_estimate(why, 0) for level in stats.LEVELS},
        )
    coefficients = {}
    for w, found in analytic.coefficients.items():
        if isinstance(found, Undefined):
            coefficients[w] = {name: _undefined_estimate(found, units.n) for name in COEFFICIENTS}
        else:
            none = Undefined("no bootstrap")
            coefficients[w] = {
                name: _estimate(c, name, boot.get((w, name), none)) for name, c in found.items()
            }
    alpha = {
        level: _undefined_estimate(c)
        if isinstance(c, Undefined)
        else _estimate(c, "krippendorff_alpha", level_boot[level])
        for level, c in analytic.alpha.items()
    }
    return coefficients, alpha


def _pair_agreements(
    p: _Prepared,
    coefficients: dict[str, dict[str, list[Coefficient]]],
    kappa_boot: dict[str, list[Bounds]],
) -> list[PairAgreement]:
    pairs, reviewers = p.pairs, p.coded.reviewers
    n = pairs.tables.sum(axis=(1, 2)).astype(int).tolist()
    if not n:
        return []
    not_boot = Undefined("not bootstrapped (per pair: Cohen's κ only)")
    per_weighting: dict[str, list[dict[str, AgreementEstimate]]] = {}
    for w, m in pairs.matrices.items():
        if isinstance(m, Undefined):
            names = PAIR_COEFFICIENTS if w in ("identity", pairs.shown) else ("cohen_kappa",)
            per_weighting[w] = [{name: _undefined_estimate(m, k) for name in names} for k in n]
            continue
        rows: list[dict[str, AgreementEstimate]] = [{} for _ in n]
        for name, column in coefficients[w].items():
            boots = kappa_boot[w] if name == "cohen_kappa" else [not_boot] * len(n)
            for row, c, b in zip(rows, column, boots):
                row[name] = _estimate(c, name, b)
        per_weighting[w] = rows
    return [
        PairAgreement(
            reviewers[a], reviewers[b], n[i], {w: per_weighting[w][i] for w in pairs.matrices}
        )
        for i, (a, b) in enumerate(zip(pairs.first.tolist(), pairs.second.tolist()))
    ]


def _assemble(
    p: _Prepared, analytic: _Analytic, n_boot: int, seed: int, kappa_boot: dict[str, list[Bounds]]
) -> DimensionAgreement:
    """The dimension's report: its bootstrap (BLAS: after the pairs' threads are done) and its
    estimates."""
    coded, units = p.coded, p.coded.units
    boot: dict[tuple[str, str], Bounds] = {}
    level_boot: dict[str, Bounds] = {}
    if units.why_undefined() is None:
        boot, level_boot = stats.units_bootstrap(units, p.matrices, p.levels, n_boot, seed)
    coefficients, alpha = _dimension_estimates(p, analytic, boot, level_boot)
    pairs = tuple(_pair_agreements(p, analytic.pairs, kappa_boot))
    return DimensionAgreement(
        dimension=p.dimension,
        scale=p.scale,
        categories=tuple(coded.categories),
        values=tuple(coded.values),
        n_items=units.n,
        n_pairable=int(units.pairable.sum()),
        n_raters=len(coded.reviewers),
        n_ratings=len(p.frame),
        reviewers=tuple(coded.reviewers),
        coefficients=coefficients,
        alpha=alpha,
        pairs=pairs,
        pairs_below_min_shared=p.pairs.below,
        disagreements=analytic.disagreements,
        notes=tuple(p.notes),
    )


# --------------------------------------------------------------------------------- the whole report


def agreement(
    ratings: pd.DataFrame,
    config: HilbotConfig,
    *,
    run: str | None = None,
    dimension: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    min_shared: int = 5,
    weights: str = DEFAULT_WEIGHTS,
) -> AgreementReport:
    """Inter-rater agreement per dimension over the ``ratings`` frame (columns per the analysis
    contract).

    ``run`` limits the ratings to one run; ``dimension`` to one dimension (else every dimension
    rated, by name). Per dimension: every coefficient of :data:`COEFFICIENTS` over all reviewers
    under each weighting (identity only for a two-category scale), Krippendorff's α at the four
    levels, and for every reviewer pair sharing ≥ ``min_shared`` items the coefficients of
    :data:`PAIR_COEFFICIENTS` under identity, linear, quadratic and ``weights`` weights; each with
    its analytic SE, 95% CI and p-value, a 95% bootstrap CI (``n_boot`` replicates, 0 = none,
    ``seed``; per pair Cohen's κ only) and its band; and the items reviewers disagree on. With fewer
    than two reviewers every statistic is Undefined ("one rater"). A dimension the configuration
    lacks is described from the log (its judgments by mean score, see the module docstring); a
    ``dimension`` neither configured nor rated is a :class:`AnalysisError` with the fix.
    """
    if n_boot < 0 or min_shared < 1:
        raise AnalysisError(
            f"n_boot={n_boot}, min_shared={min_shared}", fix="use n_boot ≥ 0 and min_shared ≥ 1"
        )
    if weights not in WEIGHTINGS:
        raise AnalysisError(
            f"unknown weights {weights!r}", fix=f"use one of {', '.join(WEIGHTINGS)}"
        )
    groups = _dimensions(ratings, config, run, dimension)
    # the pairs' draws on threads while this thread computes the analytic figures, BLAS-free
    # (OpenBLAS's own threads would spin against the draws); then the multi-rater bootstraps (BLAS)
    prepared = [
        _prepare(group, name, config, min_shared=min_shared, weights=weights)
        for name, group in groups
    ]
    with ThreadPoolExecutor(stats.threads()) as pool:
        waiting = [
            stats.start_pair_bootstrap(pool, p.pairs.tables, p.pairs.defined, n_boot, seed)
            for p in prepared
        ]
        analytic = [_analytic(p) for p in prepared]
        kappa_boot = [wait() for wait in waiting]
    dims = {
        p.dimension: _assemble(p, a, n_boot, seed, k)
        for p, a, k in zip(prepared, analytic, kappa_boot)
    }
    return AgreementReport(
        version=VERSION,
        run=run,
        weights=weights,
        dimensions=dims,
        n_boot=n_boot,
        seed=seed,
        min_shared=min_shared,
        across=_across(prepared),
    )


def _dimensions(
    ratings: pd.DataFrame, config: HilbotConfig, run: str | None, dimension: str | None
) -> list[tuple[str, pd.DataFrame]]:
    """The ratings of each dimension measured, by name (of ``run`` only, when given)."""
    frame = ratings[[c for c in _COLUMNS if c in ratings.columns]]
    if run is not None:
        frame = frame[frame["run_id"] == run]
    check_dimensions(frame, config, dimension, run)
    if dimension is not None:
        return [(dimension, frame[frame["dimension"] == dimension])]
    by_name = frame.groupby(frame["dimension"].astype(str), sort=False)
    return sorted(((str(name), group) for name, group in by_name), key=lambda pair: pair[0])


def ordinal_alphas(
    ratings: pd.DataFrame, config: HilbotConfig
) -> list[tuple[str, AgreementEstimate, int]]:
    """Per dimension, by name: Krippendorff's α at the ordinal level, as :func:`agreement` gives it
    (no bootstrap), with the items it rests on (two ratings or more); a dimension whose α is
    undefined is left out. Only what the digest's line needs is computed."""
    found = []
    for name, group in _dimensions(ratings, config, None, None):
        _, _, _, categories, values, coded = _coded(group, name, config)
        units = coded.units
        if units.why_undefined() is not None:
            continue
        weights = stats.category_level_weights("ordinal", units, categories, values)
        alpha = weights if isinstance(weights, Undefined) else stats.alpha(units, weights)
        if not isinstance(alpha, Undefined):
            estimate = _estimate(alpha, "krippendorff_alpha", Undefined("no bootstrap"))
            found.append((name, estimate, int(units.pairable.sum())))
    return found


def _across(prepared: Sequence[_Prepared]) -> AcrossDimensions | None:
    """The pooled coefficients of every weighting, when two dimensions or more can be pooled."""
    pooled_dims = [p for p in prepared if p.coded.units.why_undefined() is None]
    if len(pooled_dims) < 2:
        return None
    left_out = {
        p.dimension: str(why.reason)
        for p in prepared
        if (why := p.coded.units.why_undefined()) is not None
    }
    keys = pooled_dims[0].coded.items
    for p in pooled_dims[1:]:
        keys = keys.union(p.coded.items)
    items = [keys.get_indexer(p.coded.items) for p in pooled_dims]
    coefficients = {w: _pooled_weighting(w, pooled_dims, items, len(keys)) for w in WEIGHTINGS}
    names = tuple(p.dimension for p in pooled_dims)
    return AcrossDimensions(names, left_out, len(keys), coefficients)


def _pooled_weighting(
    weighting: str, dims: Sequence[_Prepared], items: Sequence[np.ndarray], n_items: int
) -> dict[str, AgreementEstimate]:
    """Every pooled coefficient under one weighting (a two-category dimension's weights are all the
    identity)."""
    parts: dict[str, list[tuple[stats.Terms, np.ndarray]]] = {n: [] for n in POOLED_COEFFICIENTS}
    why: dict[str, Undefined] = {}
    for p, item in zip(dims, items):
        matrix = p.matrices.get(weighting, p.matrices["identity"])
        if isinstance(matrix, Undefined):
            reason = Undefined(f"{matrix.reason} ({p.dimension})")
            return {name: _undefined_estimate(reason, n_items) for name in POOLED_COEFFICIENTS}
        for name, t in stats.terms(p.coded.units, matrix).items():
            if isinstance(t, Undefined):
                why.setdefault(name, Undefined(f"{t.reason} ({p.dimension})"))
            else:
                parts[name].append((t, item))
    return {
        name: _undefined_estimate(why[name], n_items)
        if name in why
        else _estimate(stats.pooled(parts[name], n_items), name, NOT_BOOTSTRAPPED_ACROSS)
        for name in POOLED_COEFFICIENTS
    }
