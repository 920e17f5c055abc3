"""Inter-rater agreement: published values, hand-worked κ, cross-checks, edge cases, properties, the
report.

Reference values:

* Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 observers × 12 units
  example with
  missing values: α nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797 (n.. = 40 pairable
  values).
* Fleiss (1971), 30 patients × 6 psychiatrists × 5 diagnoses: κ = 0.430 (also ``statsmodels``).
* Cohen's κ worked by hand below, and weighted κ against
  ``statsmodels.stats.inter_rater.cohens_kappa``.

The ``krippendorff`` package (GPL-3.0) is a test-only oracle; analysis/ never imports it.
The statistics are :mod:`analysis.stats`; the report is :mod:`analysis.agreement`.
"""

from __future__ import annotations

import json
import tracemalloc

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from analysis.agreement import (
    COEFFICIENTS,
    PAIR_COEFFICIENTS,
    WEIGHTINGS,
    AgreementReport,
    agreement,
)
from analysis.stats import (
    LEVELS,
    Undefined,
    band,
    bootstrap_ci,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    raw_coefficients,
    table_coefficients,
)
from analysis.stats.kappa import cohen_resampler as _cohen_resampler
from analysis.stats.kappa import fleiss_resampler as _fleiss_resampler
from analysis.stats.krippendorff import _code, _coincidences
from analysis.stats.krippendorff import alpha_resampler as _alpha_resampler
from analysis.stats.resampling import replicates as _replicates
from evaluation import load_config

NAN = np.nan

# Krippendorff (2011), p. 7: observers A–D (rows) × units 1–12 (columns), "." = missing.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
)
KRIPPENDORFF_2011_ALPHA = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}

# Fleiss (1971), Table 1: the diagnosis (1 depression, 2 personality disorder, 3 schizophrenia, 4
# neurosis, 5 other) each of 6 raters gave each of 30 patients (raters differ per patient, so only
# the counts matter).
FLEISS_1971 = np.array(
    [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ]
)


def fleiss_counts(table: np.ndarray) -> np.ndarray:
    counts, _ = aggregate_raters(table, n_cat=None)
    return counts


def package_alpha(data: np.ndarray, level: str) -> float:
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def random_reliability_data(
    seed: int, raters: int, units: int, values: np.ndarray, missing: float
) -> np.ndarray:
    """Raters who agree with a unit's true value 60% of the time, with values missing at random."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(values, size=units)
    data = np.where(
        rng.random((raters, units)) < 0.6, truth, rng.choice(values, size=(raters, units))
    )
    data[rng.random(data.shape) < missing] = NAN
    return data


def is_number(value) -> bool:
    return isinstance(value, float) and np.isfinite(value)


# ---------------------------------------------------------------- published values


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_2011_published_alpha(level):
    value = krippendorff_alpha(KRIPPENDORFF_2011, level)
    assert round(value, 3) == KRIPPENDORFF_2011_ALPHA[level]
    assert value == pytest.approx(package_alpha(KRIPPENDORFF_2011, level), abs=1e-12)


def test_krippendorff_2011_coincidence_matrix():
    # o_ck = Σ_u n_uck / (m_u − 1), unit by unit (unit 12 has one value: not pairable):
    #   u1 1,1,1 → o11 += 3·2/2 = 3        u2 2,2,3,2 → o22 += 3·2/3 = 2, o23 += 3·1/3 = 1
    #   u3, u4 3×4 → o33 += 4 + 4         u5, u9 2×4 → o22 += 4 + 4        u7 4×4 → o44 += 4
    #   u6 1,2,3,4 → every o_ck (c ≠ k in 1–4) += 1/3                        u8 1,1,2,1 → o11 += 2, o12 += 1
    #   u10 5,5,5 → o55 += 3               u11 1,1 → o11 += 2
    third = 1 / 3
    expected = np.array(
        [
            [7, 1 + third, third, third, 0],
            [1 + third, 10, 1 + third, third, 0],
            [third, 1 + third, 8, third, 0],
            [third, third, third, 4, 0],
            [0, 0, 0, 0, 3],
        ]
    )
    coded = _code(KRIPPENDORFF_2011)
    o = _coincidences(coded)
    assert list(coded.values) == [1, 2, 3, 4, 5]
    assert o == pytest.approx(expected)
    assert o.sum(axis=1) == pytest.approx([9, 13, 10, 5, 3])  # n_c; n.. = 40
    # nominal: α = 1 − (n − 1) Σ_{c≠k} o_ck / (n² − Σ n_c²) = 1 − 39 · 8 / (1600 − 384) = 1 −
    # 312/1216
    assert krippendorff_alpha(KRIPPENDORFF_2011, "nominal") == pytest.approx(
        1 - 312 / 1216, abs=1e-12
    )


def test_fleiss_1971_published_kappa():
    counts = fleiss_counts(FLEISS_1971)
    assert counts.shape == (30, 5) and (counts.sum(axis=1) == 6).all()
    value = fleiss_kappa(counts)
    assert round(value, 3) == 0.430
    assert value == pytest.approx(sm_fleiss_kappa(counts, method="fleiss"), abs=1e-12)


# ---------------------------------------------------------------- Cohen's kappa by hand

# Two reviewers, 10 items, categories in order bad < ok < good:
#
#              B: bad  ok  good | A's total
#   A: bad         2    1    0  |  3
#   A: ok          0    3    1  |  4
#   A: good        0    0    3  |  3
#   B's total      2    4    4  | 10
#
# p_o = (2 + 3 + 3)/10 = 0.8;  p_e = (3·2 + 4·4 + 3·4)/100 = (6 + 16 + 12)/100 = 0.34
# κ = (0.8 − 0.34)/(1 − 0.34) = 0.46/0.66 = 23/33 = 0.696969…
# linear weights |i−j|/2: observed disagreement = (1 + 1)·0.5/10 = 0.1; expected = Σ
# w_ij·r_i·c_j / 100 =
#   (3·4·0.5 + 3·4·1 + 4·2·0.5 + 4·4·0.5 + 3·2·1 + 3·4·0.5)/100 = (6 + 12 + 4 + 8 + 6 + 6)/100 =
#   0.42
#   κ_linear = 1 − 0.1/0.42 = 16/21 = 0.761904…
# quadratic weights (|i−j|/2)²: observed = (1 + 1)·0.25/10 = 0.05;
# expected = (3 + 12 + 2 + 4 + 6 + 3)/100 = 0.30
#   κ_quadratic = 1 − 0.05/0.30 = 5/6 = 0.8333…
HAND_A = ["bad", "bad", "bad", "ok", "ok", "ok", "ok", "good", "good", "good"]
HAND_B = ["bad", "bad", "ok", "ok", "ok", "ok", "good", "good", "good", "good"]
HAND_TABLE = np.array([[2, 1, 0], [0, 3, 1], [0, 0, 3]])
ORDER = ["bad", "ok", "good"]


def test_cohen_kappa_worked_by_hand():
    assert cohen_kappa(HAND_A, HAND_B, categories=ORDER) == pytest.approx(23 / 33, abs=1e-12)
    assert cohen_kappa(HAND_A, HAND_B, categories=ORDER, weights="linear") == pytest.approx(
        16 / 21, abs=1e-12
    )
    assert cohen_kappa(HAND_A, HAND_B, categories=ORDER, weights="quadratic") == pytest.approx(
        5 / 6, abs=1e-12
    )


def test_cohen_kappa_matches_statsmodels():
    assert cohen_kappa(HAND_A, HAND_B, categories=ORDER) == pytest.approx(
        cohens_kappa(HAND_TABLE).kappa, abs=1e-12
    )
    for weights in ("linear", "quadratic"):
        expected = cohens_kappa(HAND_TABLE, wt=weights).kappa
        assert cohen_kappa(HAND_A, HAND_B, categories=ORDER, weights=weights) == pytest.approx(
            expected, abs=1e-12
        )
    rng = np.random.default_rng(7)
    for _ in range(20):
        k = int(rng.integers(2, 7))
        a = rng.integers(0, k, 60)
        b = np.where(rng.random(60) < 0.5, a, rng.integers(0, k, 60))
        table = np.bincount(a * k + b, minlength=k * k).reshape(k, k)
        for weights, wt in ((None, None), ("linear", "linear"), ("quadratic", "quadratic")):
            expected = cohens_kappa(table, wt=wt).kappa
            assert cohen_kappa(a, b, categories=range(k), weights=weights) == pytest.approx(
                expected, abs=1e-10
            )


def test_cohen_kappa_categories_order_matters_only_for_weights():
    flipped = list(reversed(ORDER))
    assert cohen_kappa(HAND_A, HAND_B, categories=flipped) == pytest.approx(23 / 33)
    shuffled = ["ok", "bad", "good"]  # bad and good now adjacent: weighted κ changes
    assert cohen_kappa(HAND_A, HAND_B, categories=shuffled, weights="linear") != pytest.approx(
        16 / 21
    )
    # an unused category at the end changes nothing (weighted κ is invariant to rescaling the
    # weights) …
    for weights, expected in ((None, 23 / 33), ("linear", 16 / 21), ("quadratic", 5 / 6)):
        assert cohen_kappa(
            HAND_A, HAND_B, categories=[*ORDER, "great"], weights=weights
        ) == pytest.approx(expected)
    # … but one between used categories moves them apart: 1 − (2·½)/(…) with positions 0, 2, 3
    # instead of 0, 1, 2
    assert cohen_kappa(
        HAND_A, HAND_B, categories=["bad", "meh", "ok", "good"], weights="linear"
    ) != pytest.approx(16 / 21)


# ---------------------------------------------------------------- cross-checks against the package


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    "seed, raters, units, missing",
    [(1, 2, 30, 0.1), (2, 3, 200, 0.3), (3, 6, 500, 0.5), (4, 12, 80, 0.8)],
)
def test_alpha_matches_package_on_random_categories(level, seed, raters, units, missing):
    data = random_reliability_data(seed, raters, units, np.arange(1, 6, dtype=float), missing)
    assert krippendorff_alpha(data, level) == pytest.approx(package_alpha(data, level), abs=1e-10)


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_matches_package_on_a_fine_grid_of_scores(level):
    data = random_reliability_data(5, 4, 300, np.round(np.linspace(0, 1, 101), 2), 0.25)
    assert len(np.unique(data[~np.isnan(data)])) > 60
    assert krippendorff_alpha(data, level) == pytest.approx(package_alpha(data, level), abs=1e-10)


def test_alpha_accepts_lists_with_none_and_negative_values():
    data = [[1.5, None, -2.0, 3.0, 1.5], [1.5, 2.0, -2.0, None, 0.5], [None, 2.0, -1.0, 3.0, 1.5]]
    array = np.array(data, dtype=float)
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha(data, level) == pytest.approx(
            package_alpha(array, level), abs=1e-12
        )


def test_fleiss_and_cohen_match_statsmodels_on_random_data():
    rng = np.random.default_rng(11)
    for _ in range(20):
        units, raters, k = (
            int(rng.integers(5, 40)),
            int(rng.integers(2, 8)),
            int(rng.integers(2, 6)),
        )
        truth = rng.integers(0, k, units)
        table = np.where(
            rng.random((units, raters)) < 0.6, truth[:, None], rng.integers(0, k, (units, raters))
        )
        counts = np.stack([np.bincount(row, minlength=k) for row in table])
        if (counts.sum(axis=0) > 0).sum() < 2:
            continue
        assert fleiss_kappa(counts) == pytest.approx(sm_fleiss_kappa(counts), abs=1e-10)


def test_alpha_never_builds_units_by_values_squared():
    # 200k units × 3 raters × 101 values: a units × values² array would be 200k · 101² · 8 B ≈ 16
    # GB.
    data = random_reliability_data(9, 3, 200_000, np.round(np.linspace(0, 1, 101), 2), 0.1)
    tracemalloc.start()
    try:
        value = krippendorff_alpha(data, "interval")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert is_number(value)
    assert peak < 80e6


# ---------------------------------------------------------------- edge cases: Undefined, never NaN


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_undefined_cases(level):
    cases = {
        "no ratings": np.full((3, 4), NAN),
        "one rater": np.array([[1.0, 2.0, 3.0]]),
        "one rater ": np.array([[1.0, 2.0, 3.0], [NAN, NAN, NAN], [NAN, NAN, NAN]]),
        "fewer than 2 ratings per item": np.array([[1.0, NAN, 3.0], [NAN, 2.0, NAN]]),
        "all ratings identical": np.array([[2.0, 2.0, NAN, 5.0], [2.0, 2.0, 2.0, NAN]]),
    }
    for reason, data in cases.items():
        value = krippendorff_alpha(data, level)
        assert value == Undefined(reason.strip()), (reason, value)
        assert band(value, "krippendorff") == "undefined"
        assert bootstrap_ci(krippendorff_alpha, data, level) == Undefined(reason.strip())
    assert krippendorff_alpha(np.empty((0, 0)), level) == Undefined("no ratings")


def test_alpha_ratio_with_only_opposite_values_has_no_expected_disagreement():
    data = np.array([[-1.0, 1.0, 1.0], [-1.0, 1.0, NAN]])
    assert krippendorff_alpha(data, "ratio") == Undefined("no expected disagreement")
    assert krippendorff_alpha(data, "interval") == 1.0


def test_cohen_kappa_undefined_cases():
    assert cohen_kappa(["a", None], [None, "b"], categories="ab") == Undefined("no shared items")
    assert cohen_kappa(["a", "b"], [NAN, "b"], categories="ab") == Undefined(
        "fewer than 2 shared items"
    )
    assert cohen_kappa([], [], categories="ab") == Undefined("no shared items")
    for weights in (None, "linear", "quadratic"):
        assert cohen_kappa(["a"] * 5, ["a"] * 5, categories="ab", weights=weights) == Undefined(
            "all ratings identical"
        )
    # each rater constant, but on different categories: defined, chance-level
    assert cohen_kappa(["a"] * 5, ["b"] * 5, categories="ab") == 0.0
    with pytest.raises(ValueError, match="not one of the categories"):
        cohen_kappa(["a", "z"], ["a", "b"], categories="ab")
    with pytest.raises(ValueError, match="pair up"):
        cohen_kappa(["a"], ["a", "b"], categories="ab")


def test_fleiss_kappa_undefined_cases():
    assert fleiss_kappa(np.zeros((3, 2))) == Undefined("no ratings")
    assert fleiss_kappa([[1, 0], [0, 1]]) == Undefined("fewer than 2 ratings per item")
    assert fleiss_kappa([[3, 0], [3, 0], [1, 0]]) == Undefined("all ratings identical")
    with pytest.raises(ValueError, match="shape"):
        fleiss_kappa([1, 2, 3])


def test_fleiss_kappa_keeps_every_unit_with_missing_ratings():
    """Fleiss' κ with missing ratings as Gwet's formulas handle them: every unit counts (a bug
    fixed: units with another number of ratings than the most common one were dropped, 0.6415 here
    instead of the published 0.76117).

    cac.raw4raters (Krippendorff 2011's data; irrCAC README: ``fleiss.kappa.raw(cac.raw4raters)`` →
    0.76117, pa 0.8181818, pe 0.2387153). Units have 3, 4, 4, 4, 4, 4, 4, 4, 4, 3, 2 and 1 ratings.
    """
    counts = np.stack(
        [
            np.bincount(col[~np.isnan(col)].astype(int), minlength=6)[1:]
            for col in KRIPPENDORFF_2011.T
        ]
    )
    assert round(fleiss_kappa(counts), 5) == 0.76117
    # by hand, from the formula: p_a over the 11 units with 2+ ratings, π_k over all 12 units
    size = counts.sum(axis=1)
    two = size >= 2
    pa = ((counts * (counts - 1)).sum(axis=1)[two] / (size * (size - 1))[two]).mean()
    pi = (counts / size[:, None]).mean(axis=0)
    assert fleiss_kappa(counts) == pytest.approx((pa - pi @ pi) / (1 - pi @ pi), abs=1e-12)
    assert pa == pytest.approx(0.8181818, abs=5e-8) and pi @ pi == pytest.approx(
        0.2387153, abs=5e-8
    )
    # units of 2, 3 and 4 ratings all count; a unit of one rating changes only the chance agreement
    assert fleiss_kappa([[2, 0], [1, 1], [2, 1], [0, 1]]) != pytest.approx(
        fleiss_kappa([[2, 0], [1, 1], [2, 1]])
    )
    assert fleiss_kappa([[3, 0], [1, 2], [0, 3], [2, 1], [0, 0]]) == pytest.approx(
        sm_fleiss_kappa(np.array([[3, 0], [1, 2], [0, 3], [2, 1]]))
    )


def test_bootstrap_undefined_cases():
    data = np.array(
        [[1.0, 2.0], [1.0, 2.0]]
    )  # 2 units: half the replicates draw one unit twice → identical
    assert krippendorff_alpha(data, "nominal") == 1.0
    outcomes = set()
    for seed in range(12):
        defined = int(
            np.isfinite(run_replicates(_alpha_resampler(data, "nominal"), 100, seed)).sum()
        )
        ci = bootstrap_ci(krippendorff_alpha, data, "nominal", n_boot=100, seed=seed)
        if defined >= 50:
            assert ci == (1.0, 1.0)
        else:
            assert ci == Undefined(f"too few defined bootstrap replicates ({defined} of 100)")
        outcomes.add(defined >= 50)
    assert outcomes == {True, False}
    assert bootstrap_ci(krippendorff_alpha, KRIPPENDORFF_2011, "nominal", n_boot=0) == Undefined(
        "no bootstrap"
    )
    assert bootstrap_ci(cohen_kappa, ["a"] * 3, ["a"] * 3, categories="ab") == Undefined(
        "all ratings identical"
    )
    with pytest.raises(ValueError):
        bootstrap_ci(len, [1, 2])


def test_band_thresholds():
    for metric in ("cohen", "fleiss", "cohen_kappa", cohen_kappa, fleiss_kappa):
        assert [band(v, metric) for v in (0.85, 0.849, 0.75, 0.6, 0.599, -0.2)] == [
            "excellent",
            "good",
            "good",
            "acceptable",
            "below acceptable",
            "below acceptable",
        ]
    for metric in ("krippendorff", "alpha", krippendorff_alpha):
        assert [band(v, metric) for v in (1.0, 0.9, 0.89, 0.8, 0.67, 0.66)] == [
            "excellent",
            "excellent",
            "good",
            "good",
            "acceptable",
            "below acceptable",
        ]
    assert band(Undefined("one rater"), "cohen") == "undefined"
    assert band(None, "alpha") == "undefined"
    assert band(float("nan"), "alpha") == "undefined"
    with pytest.raises(ValueError):
        band(0.5, "spearman")


def test_bootstrap_is_reproducible_and_resamples_units():
    first = bootstrap_ci(krippendorff_alpha, KRIPPENDORFF_2011, "ordinal", seed=3)
    assert first == bootstrap_ci(krippendorff_alpha, KRIPPENDORFF_2011, "ordinal", seed=3)
    assert first != bootstrap_ci(krippendorff_alpha, KRIPPENDORFF_2011, "ordinal", seed=4)
    low, high = first
    assert low < krippendorff_alpha(KRIPPENDORFF_2011, "ordinal") <= high <= 1.0


def _draws(seed: int, n_boot: int, n: int) -> np.ndarray:
    """The unit indices :func:`_replicates` draws for a few units (chunks of 64 replicates)."""
    rng = np.random.default_rng(seed)
    return np.concatenate(
        [rng.integers(0, n, size=(min(64, n_boot - start), n)) for start in range(0, n_boot, 64)]
    )


def run_replicates(resampler, n_boot: int, seed: int) -> np.ndarray:
    return _replicates(resampler.n_units, resampler.evaluate, n_boot, seed)


@pytest.mark.parametrize("level", LEVELS)
def test_vectorised_alpha_replicates_equal_recomputing_on_resampled_units(level):
    data = random_reliability_data(21, 4, 40, np.arange(1, 6, dtype=float), 0.3)
    pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    reps = run_replicates(_alpha_resampler(data, level), 25, seed=5)
    for rep, idx in zip(reps, _draws(5, 25, pairable.shape[1])):
        expected = krippendorff_alpha(pairable[:, idx], level)
        assert (np.isnan(rep) and isinstance(expected, Undefined)) or rep == pytest.approx(
            expected, abs=1e-12
        )


def test_vectorised_kappa_replicates_equal_recomputing_on_resampled_units():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 4, 30)
    b = np.where(rng.random(30) < 0.6, a, rng.integers(0, 4, 30))
    for weights in (None, "linear", "quadratic"):
        reps = run_replicates(
            _cohen_resampler(a, b, categories=range(4), weights=weights), 100, seed=1
        )
        for rep, idx in zip(reps, _draws(1, 100, 30)):
            assert rep == pytest.approx(
                cohen_kappa(a[idx], b[idx], categories=range(4), weights=weights), abs=1e-12
            )
    counts = fleiss_counts(FLEISS_1971)
    reps = run_replicates(_fleiss_resampler(counts), 25, seed=1)
    for rep, idx in zip(reps, _draws(1, 25, 30)):
        assert rep == pytest.approx(sm_fleiss_kappa(counts[idx]), abs=1e-12)


def test_kappa_replicates_are_kappa_of_the_multinomial_tables_drawn_with_the_seed():
    """The report's κ bootstrap draws each replicate's confusion table (Multinomial(n, table / n)):
    pinned here."""
    from analysis.stats.kappa import _cohen_pairs, _cohen_replicates
    from analysis.stats.weightings import kappa_weights

    rng = np.random.default_rng(2)
    a = rng.integers(0, 4, 30)
    b = np.where(rng.random(30) < 0.6, a, rng.integers(0, 4, 30))
    codes, k = _cohen_pairs(a, b, range(4))
    weights = [kappa_weights(k, w) for w in (None, "linear", "quadratic")]
    reps = _cohen_replicates(codes, k, weights, 50, seed=1)
    tables = np.random.default_rng(1).multinomial(
        30, np.bincount(codes, minlength=16) / 30, size=50
    )
    for rep, table in zip(reps, tables):
        cells = np.repeat(np.arange(16), table)  # a resample of the items, rebuilt from its table
        for j, name in enumerate((None, "linear", "quadratic")):
            expected = cohen_kappa(cells // 4, cells % 4, categories=range(4), weights=name)
            assert (np.isnan(rep[j]) and isinstance(expected, Undefined)) or rep[
                j
            ] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_the_table_bootstrap_of_kappa_matches_resampling_the_items(seed):
    """Same bootstrap distribution: the percentile CIs of the two ways agree to within Monte-Carlo
    error."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, 200)
    b = np.where(rng.random(200) < 0.7, a, rng.integers(0, 4, 200))
    resampler = _cohen_resampler(a, b, categories=range(4), weights="quadratic")
    by_items = np.quantile(run_replicates(resampler, 4000, seed), [0.025, 0.975])
    by_tables = np.quantile(resampler.replicates(4000, seed + 100), [0.025, 0.975])
    assert by_tables == pytest.approx(by_items, abs=0.02)


def test_bootstrap_ci_is_the_2_5_and_97_5_percentiles_of_naive_replicates():
    # the same unit draws, recomputed one replicate at a time with the public function
    data = random_reliability_data(8, 3, 25, np.arange(1, 6, dtype=float), 0.2)
    pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    naive = [
        krippendorff_alpha(pairable[:, idx], "interval")
        for idx in _draws(4, 200, pairable.shape[1])
    ]
    defined = [v for v in naive if not isinstance(v, Undefined)]
    assert len(defined) >= 100
    expected = np.percentile(defined, [2.5, 97.5])
    assert bootstrap_ci(krippendorff_alpha, data, "interval", n_boot=200, seed=4) == pytest.approx(
        tuple(expected), abs=1e-12
    )


# ---------------------------------------------------------------- properties

CELL = st.one_of(st.none(), st.integers(1, 4))


@st.composite
def reliability_data(draw, min_raters=1):
    raters = draw(st.integers(min_raters, 5))
    units = draw(st.integers(1, 12))
    rows = draw(
        st.lists(st.lists(CELL, min_size=units, max_size=units), min_size=raters, max_size=raters)
    )
    return np.array([[NAN if c is None else float(c) for c in row] for row in rows])


@st.composite
def perfect_data(draw):
    units = draw(st.integers(1, 12))
    truth = draw(st.lists(st.integers(0, 3), min_size=units, max_size=units))
    raters = draw(st.integers(2, 5))
    shown = draw(
        st.lists(
            st.lists(st.booleans(), min_size=units, max_size=units),
            min_size=raters,
            max_size=raters,
        )
    )
    return np.where(np.array(shown), np.array(truth, float)[None, :], NAN)


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(reliability_data(), st.sampled_from(LEVELS))
def test_property_alpha_is_a_number_at_most_one_or_undefined_and_equals_the_package(data, level):
    value = krippendorff_alpha(data, level)
    if isinstance(value, Undefined):
        return
    assert is_number(value) and value <= 1.0
    assert value == pytest.approx(package_alpha(data, level), abs=1e-9)


@FAST
@given(perfect_data(), st.sampled_from(LEVELS))
def test_property_perfect_agreement_is_one(data, level):
    value = krippendorff_alpha(data, level)
    assert value == 1.0 or isinstance(value, Undefined)
    units = ~np.isnan(data[0]) & ~np.isnan(data[1])
    kappa = cohen_kappa(
        list(data[0, units]),
        list(data[1, units]),
        categories=[0.0, 1.0, 2.0, 3.0],
        weights="linear",
    )
    assert kappa == 1.0 or isinstance(kappa, Undefined)
    counts = np.stack([np.bincount(col[~np.isnan(col)].astype(int), minlength=4) for col in data.T])
    assert fleiss_kappa(counts) == 1.0 or isinstance(fleiss_kappa(counts), Undefined)


@FAST
@given(reliability_data(min_raters=2), st.sampled_from(LEVELS), st.randoms(use_true_random=False))
def test_property_permuting_raters_or_units_changes_nothing(data, level, random):
    raters, units = list(range(data.shape[0])), list(range(data.shape[1]))
    random.shuffle(raters)
    random.shuffle(units)
    value = krippendorff_alpha(data, level)
    for other in (data[raters], data[:, units]):
        again = krippendorff_alpha(other, level)
        assert (
            again == value
            if isinstance(value, Undefined)
            else again == pytest.approx(value, abs=1e-12)
        )
    a, b = data[0], data[1]
    labels = lambda row: [None if np.isnan(x) else x for x in row]  # noqa: E731
    kappa = cohen_kappa(labels(a), labels(b), categories=[1.0, 2.0, 3.0, 4.0], weights="quadratic")
    swapped = cohen_kappa(
        labels(b[units]), labels(a[units]), categories=[1.0, 2.0, 3.0, 4.0], weights="quadratic"
    )
    assert (
        swapped == kappa
        if isinstance(kappa, Undefined)
        else swapped == pytest.approx(kappa, abs=1e-12)
    )


@settings(max_examples=40, deadline=None)
@given(reliability_data(min_raters=2), st.sampled_from(LEVELS), st.integers(0, 2**32 - 1))
def test_property_alpha_bootstrap_ci_is_ordered_bounded_and_exact_at_perfect_agreement(
    data, level, seed
):
    value = krippendorff_alpha(data, level)
    assume(not isinstance(value, Undefined))
    ci = bootstrap_ci(krippendorff_alpha, data, level, n_boot=200, seed=seed)
    if isinstance(ci, Undefined):
        assert ci.reason.startswith("too few defined bootstrap replicates")
        return
    low, high = ci
    assert is_number(low) and is_number(high) and low <= high <= 1.0
    if value == 1.0:  # every defined replicate agrees perfectly too
        assert ci == (1.0, 1.0)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=25),
    st.sampled_from([None, "linear", "quadratic"]),
    st.integers(0, 2**32 - 1),
)
def test_property_kappa_bootstrap_cis_are_ordered_bounded_and_exact_at_perfect_agreement(
    pairs, weights, seed
):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    value = cohen_kappa(a, b, categories=range(4), weights=weights)
    if not isinstance(value, Undefined):
        assert is_number(value) and value <= 1.0
        ci = bootstrap_ci(
            cohen_kappa, a, b, categories=range(4), weights=weights, n_boot=200, seed=seed
        )
        assert isinstance(ci, Undefined) or ci[0] <= ci[1] <= 1.0
        assert value != 1.0 or ci in ((1.0, 1.0),) or isinstance(ci, Undefined)
    counts = np.zeros((len(pairs), 4))
    np.add.at(counts, (np.arange(len(pairs)), a), 1)
    np.add.at(counts, (np.arange(len(pairs)), b), 1)
    value = fleiss_kappa(counts)
    if not isinstance(value, Undefined):
        assert value == pytest.approx(sm_fleiss_kappa(counts), abs=1e-10)
        ci = bootstrap_ci(fleiss_kappa, counts, n_boot=200, seed=seed)
        assert isinstance(ci, Undefined) or ci[0] <= ci[1] <= 1.0
        assert value != 1.0 or ci == (1.0, 1.0) or isinstance(ci, Undefined)


@pytest.mark.parametrize("seed", range(6))
def test_bootstrap_cis_contain_their_estimates_on_typical_data(seed):
    rng = np.random.default_rng(seed)
    units, agree = int(rng.integers(30, 200)), float(rng.uniform(0.3, 0.9))
    truth = rng.integers(1, 6, units)
    data = np.where(rng.random((3, units)) < agree, truth, rng.integers(1, 6, (3, units))).astype(
        float
    )
    data[rng.random(data.shape) < 0.2] = NAN
    for level in LEVELS:
        low, high = bootstrap_ci(krippendorff_alpha, data, level, n_boot=300, seed=seed)
        assert low <= krippendorff_alpha(data, level) <= high
    shared = ~np.isnan(data[0]) & ~np.isnan(data[1])
    a, b = data[0, shared].astype(int), data[1, shared].astype(int)
    for weights in (None, "linear", "quadratic"):
        low, high = bootstrap_ci(
            cohen_kappa, a, b, categories=range(1, 6), weights=weights, n_boot=300, seed=seed
        )
        assert low <= cohen_kappa(a, b, categories=range(1, 6), weights=weights) <= high
    counts = np.stack(
        [np.bincount(col[~np.isnan(col)].astype(int), minlength=6)[1:] for col in data.T]
    )
    low, high = bootstrap_ci(fleiss_kappa, counts, n_boot=300, seed=seed)
    assert low <= fleiss_kappa(counts) <= high


def test_percentile_ci_can_exclude_its_estimate_at_systematic_disagreement():
    # Found by hypothesis: 12 items, two ratings each, never the same category. Every P_i = 0, so
    # κ = −P̄e/(1 − P̄e); resampling items makes the category shares more uneven on average
    # (E[Σ p̂²] = Σ p² + Σ Var p̂), so nearly every replicate's κ is below the estimate and the 95%
    # percentile interval lies entirely below it. That is the percentile bootstrap of a biased
    # statistic at the edge of its range in a small sample, not an arithmetic error; the CI is
    # reported as is.
    pairs = [
        (0, 1),
        (0, 1),
        (0, 2),
        (0, 2),
        (0, 2),
        (0, 3),
        (1, 2),
        (1, 3),
        (1, 3),
        (1, 3),
        (2, 3),
        (2, 3),
    ]
    counts = np.zeros((12, 4))
    for i, (a, b) in enumerate(pairs):
        counts[i, [a, b]] = 1
    value = fleiss_kappa(counts)
    assert value == pytest.approx(
        -1 / 3, abs=1e-12
    )  # p = (6, 6, 6, 6)/24 → P̄e = 1/4 → κ = −(1/4)/(3/4)
    replicates = run_replicates(_fleiss_resampler(counts), 200, seed=0)
    assert (replicates < value - 1e-12).mean() >= 0.975
    low, high = bootstrap_ci(fleiss_kappa, counts, n_boot=200, seed=0)
    assert low < high < value


# ---------------------------------------------------------------- the report over a ratings frame

ALICE, BOB, CAROL = "terminal:alice", "telegram:bob", "terminal:carol"
COMPLETENESS = {"1": 0.0, "2": 0.25, "3": 0.5, "4": 0.75, "5": 1.0}
# completeness judgments, item → (alice, bob, carol); None = not rated
GRID = {
    "i01": ("5", "5", "5"),
    "i02": ("4", "4", "3"),
    "i03": ("3", "3", "3"),
    "i04": ("2", "1", "2"),
    "i05": ("1", "1", "1"),
    "i06": ("5", "4", None),
    "i07": ("4", None, "4"),
    "i08": ("2", "2", "5"),
    "i09": (None, "3", "3"),
    "i10": ("1", None, None),
}


def ratings_frame(rows: list[tuple[str, str, str, str, str, float]]) -> pd.DataFrame:
    """A ``ratings`` frame with the contract's columns from (run, item, dimension, reviewer,
    judgment, score)."""
    frame = pd.DataFrame(
        rows, columns=["run_id", "item_id", "dimension", "reviewer", "judgment", "score"]
    )
    n = len(frame)
    frame["score"] = frame["score"].astype("float64")
    frame["n_concerns"] = 0
    frame["note"] = None
    frame["timestamp"] = pd.Timestamp("2026-11-20T09:00:00Z") + pd.to_timedelta(
        np.arange(n), unit="min"
    )
    frame["channel"] = frame["reviewer"].str.split(":").str[0]
    frame["source_type"] = None
    frame["session_date"] = None
    frame["line"] = np.arange(1, n + 1)
    return frame


def hand_built() -> pd.DataFrame:
    rows = []
    for item, judgments in GRID.items():
        for reviewer, judgment in zip((ALICE, BOB, CAROL), judgments):
            if judgment is not None:
                rows.append(
                    ("r1", item, "completeness", reviewer, judgment, COMPLETENESS[judgment])
                )
    # another run: a wide disagreement that run="r1" must leave out
    rows += [
        ("r2", "i01", "completeness", ALICE, "1", 0.0),
        ("r2", "i01", "completeness", BOB, "5", 1.0),
    ]
    # technical accuracy: alice and bob always say "correct" → nothing is defined
    rows += [
        ("r1", f"i0{n}", "technical-accuracy", who, "correct", 1.0)
        for n in range(1, 7)
        for who in (ALICE, BOB)
    ]
    # overall: one reviewer
    rows += [("r1", f"i0{n}", "overall", CAROL, "good", 1.0) for n in range(1, 4)]
    return ratings_frame(rows)


def grid_matrix(value) -> np.ndarray:
    """reviewers (alice, bob, carol) × items i01–i10 of ``value(judgment)``, NaN where not rated."""
    return np.array(
        [[NAN if row[r] is None else value(row[r]) for row in GRID.values()] for r in range(3)]
    )


NUMBERS = {"1": 1.0, "2": 2.0, "3": 3.0, "4": 4.0, "5": 5.0}
"""The completeness scale's numbers (defaults.toml)."""


@pytest.fixture(scope="module")
def report() -> AgreementReport:
    return agreement(hand_built(), load_config(None), run="r1", n_boot=300, seed=1)


def test_report_counts_and_categories(report):
    assert report.version == 2 and report.weights == "quadratic"
    assert list(report.dimensions) == ["completeness", "overall", "technical-accuracy"]
    dim = report.dimension("completeness")
    assert dim.scale == "completeness"
    assert dim.categories == ("1", "2", "3", "4", "5")
    assert dim.values == (1.0, 2.0, 3.0, 4.0, 5.0)  # the scale's numbers, not its 0–1 scores
    assert (dim.n_items, dim.n_pairable, dim.n_raters, dim.n_ratings) == (10, 9, 3, 25)
    assert dim.reviewers == (BOB, ALICE, CAROL)  # sorted ids: telegram:… before terminal:…
    assert dim.notes == ()
    assert list(dim.coefficients) == list(WEIGHTINGS)  # five categories: every weighting
    assert all(list(c) == list(COEFFICIENTS) for c in dim.coefficients.values())


def test_report_pairs_with_hand_worked_kappa(report):
    dim = report.dimension("completeness")
    assert [(p.reviewer_a, p.reviewer_b, p.n_shared) for p in dim.pairs] == [
        (BOB, ALICE, 7),
        (BOB, CAROL, 7),
        (ALICE, CAROL, 7),
    ]
    bob_alice = dim.pairs[0]
    assert list(bob_alice.coefficients) == ["identity", "linear", "quadratic"]
    assert (
        list(bob_alice.coefficients["identity"])
        == list(PAIR_COEFFICIENTS)
        == list(bob_alice.coefficients["quadratic"])
    )
    assert list(bob_alice.coefficients["linear"]) == [
        "cohen_kappa"
    ]  # the others only unweighted and under --weights
    # alice vs bob on i01–i06, i08: (5,5) (4,4) (3,3) (2,1) (1,1) (5,4) (2,2) → 5 of 7 agree,
    # p_o = 5/7.
    # marginals (categories 1–5): alice 1,2,1,1,2 / bob 2,1,1,2,1 → p_e = (2 + 2 + 1 + 2 + 2)/49 =
    # 9/49
    # κ = (5/7 − 9/49)/(1 − 9/49) = (26/49)/(40/49) = 0.65 → "acceptable"
    assert bob_alice.unweighted.value == pytest.approx(0.65, abs=1e-12)
    assert bob_alice.unweighted.band == "acceptable"
    assert bob_alice.unweighted.n_items == 7
    assert bob_alice.coefficients["identity"]["percent_agreement"].value == pytest.approx(5 / 7)
    assert bob_alice.coefficients["identity"]["percent_agreement"].band == "n/a"
    a, b = grid_matrix(int)[0], grid_matrix(int)[1]
    shared = ~np.isnan(a) & ~np.isnan(b)
    table = np.zeros((5, 5))
    np.add.at(table, (b[shared].astype(int) - 1, a[shared].astype(int) - 1), 1)
    for name in ("linear", "quadratic"):
        estimate = getattr(bob_alice, name)
        assert estimate.value == pytest.approx(cohens_kappa(table, wt=name).kappa, abs=1e-12)
        assert estimate.band == band(estimate.value, "cohen")
        low, high = estimate.bootstrap_ci
        assert low <= estimate.value <= high <= 1.0
    # the analytic figures are irrCAC's table formulas (analysis.stats.tables), the bootstrap CIs
    # bootstrap_ci's (same seed, same items in the same order → same resamples)
    analytic = table_coefficients(table, values=[1, 2, 3, 4, 5], weights="quadratic")
    for name in PAIR_COEFFICIENTS:
        got, expected = bob_alice.coefficients["quadratic"][name], analytic[name]
        assert (got.value, got.se, *got.ci, got.p_value) == pytest.approx(
            (expected.value, expected.se, *expected.ci, expected.p_value)
        )
        if name != "cohen_kappa":
            assert got.bootstrap_ci == Undefined("not bootstrapped (per pair: Cohen's κ only)")
    bob, alice = list(b[shared].astype(int) - 1), list(a[shared].astype(int) - 1)
    for name in ("unweighted", "linear", "quadratic"):
        expected = bootstrap_ci(
            cohen_kappa,
            bob,
            alice,
            categories=range(5),
            weights=None if name == "unweighted" else name,
            n_boot=300,
            seed=1,
        )
        assert getattr(bob_alice, name).bootstrap_ci == pytest.approx(expected, abs=1e-12)
    # alice vs carol: i01 i02 i03 i04 i05 i07 i08 → (5,5) (4,3) (3,3) (2,2) (1,1) (4,4) (2,5)
    alice_carol = dim.pairs[2]
    expected = cohen_kappa(list("5432142"), list("5332145"), categories=list("12345"))
    assert alice_carol.unweighted.value == pytest.approx(expected, abs=1e-12)


def test_report_coefficients_fleiss_and_alpha(report):
    dim = report.dimension("completeness")
    numbers, scores = grid_matrix(NUMBERS.get), grid_matrix(COMPLETENESS.get)
    positions = grid_matrix(int)
    # Fleiss' κ over every item with a rating (i10 has one: it counts for the chance agreement), as
    # Gwet's formulas do
    counts = np.stack(
        [np.bincount(col[~np.isnan(col)].astype(int), minlength=6)[1:] for col in positions.T]
    )
    assert (
        dim.fleiss.value == pytest.approx(fleiss_kappa(counts), abs=1e-12)
        and dim.fleiss.n_items == 10
    )
    assert dim.fleiss.band == band(dim.fleiss.value, "fleiss")
    assert dim.fleiss.bootstrap_ci == pytest.approx(
        bootstrap_ci(fleiss_kappa, counts, n_boot=300, seed=1), abs=1e-12
    )
    # every coefficient and weighting: irrCAC's raw formulas on the items × reviewers matrix, the
    # numbers as values
    for weighting, coefficients in dim.coefficients.items():
        expected = raw_coefficients(positions.T - 1, values=[1, 2, 3, 4, 5], weights=weighting)
        for name, estimate in coefficients.items():
            e = expected[name]
            assert (
                estimate.value,
                estimate.se,
                *estimate.ci,
                estimate.p_value,
                estimate.pa,
                estimate.pe,
            ) == pytest.approx((e.value, e.se, *e.ci, e.p_value, e.pa, e.pe), abs=1e-12), (
                weighting,
                name,
            )
            assert estimate.band == band(e.value, name)
            assert (
                isinstance(estimate.bootstrap_ci, tuple)
                and estimate.bootstrap_ci[0] <= estimate.bootstrap_ci[1]
            )
    assert set(dim.alpha) == set(LEVELS)
    for level in LEVELS:
        estimate = dim.alpha[level]
        matrix = positions if level in ("nominal", "ordinal") else numbers
        expected = package_alpha(matrix, level)
        assert estimate.value == pytest.approx(expected, abs=1e-12)
        assert estimate.n_items == 9
        assert estimate.band == band(expected, "krippendorff")
        assert isinstance(estimate.se, float) and estimate.ci[0] < estimate.value
        assert estimate.bootstrap_ci == pytest.approx(
            bootstrap_ci(krippendorff_alpha, matrix, level, n_boot=300, seed=1), abs=1e-12
        )
    # interval α does not care whether the values are 1–5 or 0–1; ratio α does (the numbers are what
    # counts)
    assert dim.alpha["interval"].value == pytest.approx(
        package_alpha(scores, "interval"), abs=1e-12
    )
    assert dim.alpha["ratio"].value != pytest.approx(package_alpha(scores, "ratio"), abs=1e-3)
    assert dim.alpha["interval"].value == pytest.approx(
        dim.coefficients["quadratic"]["krippendorff_alpha"].value, abs=1e-12
    )
    assert dim.alpha["nominal"].value == pytest.approx(
        dim.coefficients["identity"]["krippendorff_alpha"].value, abs=1e-12
    )


def test_report_disagreements_by_spread_then_raters(report):
    dim = report.dimension("completeness")
    # i08: 2,2,5 → spread 1.0 − 0.25 = 0.75; then spread 0.25: i02 and i04 (3 raters, by id), i06 (2
    # raters)
    assert [(d.item_id, d.spread, d.n_raters) for d in dim.disagreements] == [
        ("i08", 0.75, 3),
        ("i02", 0.25, 3),
        ("i04", 0.25, 3),
        ("i06", 0.25, 2),
    ]
    assert all(d.run_id == "r1" for d in dim.disagreements)
    assert dim.disagreements[0].ratings == ((BOB, "2", 0.25), (ALICE, "2", 0.25), (CAROL, "5", 1.0))


def test_report_undefined_dimensions(report):
    identical = report.dimension("technical-accuracy")
    assert identical.n_raters == 2 and len(identical.pairs) == 1
    pair = identical.pairs[0]
    chance_corrected = [
        pair.unweighted,
        pair.linear,
        pair.quadratic,
        pair.coefficients["identity"]["scott_pi"],
        pair.coefficients["identity"]["krippendorff_alpha"],
        *identical.alpha.values(),
    ]
    for weighting in identical.coefficients.values():
        chance_corrected += [
            weighting["fleiss_kappa"],
            weighting["conger_kappa"],
            weighting["krippendorff_alpha"],
        ]
    for estimate in chance_corrected:
        assert estimate.value == Undefined("all ratings identical") and estimate.band == "undefined"
        assert (
            estimate.se
            == estimate.ci
            == estimate.p_value
            == estimate.bootstrap_ci
            == Undefined("all ratings identical")
        )
    # everyone agreeing on one category: AC1, Brennan–Prediger and percent agreement are 1
    for name in ("gwet_ac", "brennan_prediger", "percent_agreement"):
        assert identical.coefficients["identity"][name].value == 1.0
        assert pair.coefficients["identity"][name].value == 1.0
    assert identical.disagreements == ()
    lonely = report.dimension("overall")
    assert lonely.n_raters == 1 and lonely.pairs == ()
    for estimate in (
        lonely.fleiss,
        *lonely.alpha.values(),
        *lonely.coefficients["identity"].values(),
    ):
        assert estimate.value == Undefined("one rater") and estimate.ci == Undefined("one rater")
        assert estimate.bootstrap_ci == Undefined("one rater") and estimate.band == "undefined"


def test_report_to_dict_is_json(report):
    data = report.to_dict()
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text) == data
    assert data["version"] == 2 and list(data["dimensions"]) == [
        "completeness",
        "overall",
        "technical-accuracy",
    ]
    overall = data["dimensions"]["overall"]
    assert overall["alpha"]["nominal"]["value"] == {"undefined": "one rater"}
    pair = data["dimensions"]["completeness"]["pairs"][0]["coefficients"]["identity"]["cohen_kappa"]
    assert set(pair) == {
        "value",
        "se",
        "ci",
        "p_value",
        "bootstrap_ci",
        "band",
        "n_items",
        "pa",
        "pe",
    }
    assert (
        isinstance(pair["bootstrap_ci"], list)
        and len(pair["bootstrap_ci"]) == 2
        and len(pair["ci"]) == 2
    )


def test_report_filters_min_shared_and_run():
    frame, config = hand_built(), load_config(None)
    every_run = agreement(frame, config, dimension="completeness", n_boot=0)
    dim = every_run.dimension("completeness")
    assert list(every_run.dimensions) == ["completeness"]
    assert dim.n_items == 11  # r2's i01 is another unit
    assert (
        dim.disagreements[0].run_id,
        dim.disagreements[0].item_id,
        dim.disagreements[0].spread,
    ) == ("r2", "i01", 1.0)
    assert dim.pairs[0].unweighted.bootstrap_ci == Undefined("no bootstrap")
    assert isinstance(dim.pairs[0].unweighted.ci, tuple)  # the analytic CI needs no bootstrap
    assert dim.fleiss.bootstrap_ci == Undefined("no bootstrap") and isinstance(dim.fleiss.ci, tuple)
    strict = agreement(
        frame, config, run="r1", dimension="completeness", n_boot=0, min_shared=8
    ).dimension("completeness")
    assert strict.pairs == () and strict.pairs_below_min_shared == 3
    empty = agreement(frame, config, run="nope", dimension="completeness", n_boot=0).dimension(
        "completeness"
    )
    assert (empty.n_items, empty.n_ratings) == (0, 0) and empty.alpha["ordinal"].value == Undefined(
        "no ratings"
    )
    assert empty.fleiss.value == Undefined("no ratings")
    assert agreement(frame.iloc[0:0], config).dimensions == {}
    with pytest.raises(ValueError, match="unknown weights"):
        agreement(frame, config, weights="cubic")


def test_report_is_the_same_with_sparse_products_for_many_reviewers_and_categories(monkeypatch):
    """Past a size the pairs' tables and the bootstrap's sums come from sparse products: the same
    figures."""
    import analysis.stats.gwet as coefficients
    import analysis.stats.ratings as module

    frame, config = hand_built(), load_config(None)
    dense = agreement(frame, config, run="r1", n_boot=100, seed=3).to_dict()
    monkeypatch.setattr(module, "_DENSE_PAIR_CELLS", 0)
    monkeypatch.setattr(coefficients, "_DENSE_CELLS", 0)
    sparse = agreement(frame, config, run="r1", n_boot=100, seed=3).to_dict()
    assert leaves(sparse) == pytest.approx(
        leaves(dense), abs=1e-12
    )  # sums in another order: equal to rounding


def leaves(data) -> list:
    """The numbers of a JSON document in order (strings and reasons as they are)."""
    if isinstance(data, dict):
        return [x for k in data for x in [k, *leaves(data[k])]]
    if isinstance(data, list):
        return [x for item in data for x in leaves(item)]
    return [data]


def test_report_seeded_cis_are_reproducible():
    frame, config = hand_built(), load_config(None)
    one = agreement(frame, config, run="r1", dimension="completeness", n_boot=200, seed=5).to_dict()
    assert (
        one
        == agreement(
            frame, config, run="r1", dimension="completeness", n_boot=200, seed=5
        ).to_dict()
    )
    other = agreement(
        frame, config, run="r1", dimension="completeness", n_boot=200, seed=6
    ).to_dict()
    assert (
        one["dimensions"]["completeness"]["alpha"]["ordinal"]["bootstrap_ci"]
        != other["dimensions"]["completeness"]["alpha"]["ordinal"]["bootstrap_ci"]
    )


def test_report_weights_shown_and_two_category_scales():
    frame, config = hand_built(), load_config(None)
    linear = agreement(frame, config, run="r1", n_boot=0, weights="ordinal")
    pair = linear.dimension("completeness").pairs[0]
    assert list(pair.coefficients) == ["identity", "linear", "quadratic", "ordinal"]
    assert list(pair.coefficients["ordinal"]) == list(PAIR_COEFFICIENTS)
    assert list(pair.coefficients["quadratic"]) == ["cohen_kappa"]
    rows = [
        ("r1", f"i{n}", "made-up", who, j, s)
        for n in range(6)
        for who, j, s in ((ALICE, "lo", 0.2), (BOB, "hi" if n % 2 else "lo", 0.9 if n % 2 else 0.2))
    ]
    two = agreement(ratings_frame(rows), config, n_boot=0).dimension("made-up")
    assert list(two.coefficients) == ["identity"] and list(two.pairs[0].coefficients) == [
        "identity"
    ]
    assert (
        two.pairs[0].linear is two.pairs[0].unweighted
    )  # two categories: every weighting is the identity


def test_report_weightings_a_scale_cannot_take_are_undefined():
    from analysis.stats import category_level_weights as _level_weights
    from analysis.stats import category_weights as _weight_matrix

    assert _weight_matrix("ratio", ["a", "b", "c"], [-1.0, 0.0, 1.0]) == Undefined(
        "ratio weights need category values ≥ 0, got -1, 0, 1"
    )
    assert _weight_matrix("linear", ["a", "b", "c"], [0.1, float("nan"), 0.9]) == Undefined(
        "linear weights: category 'b' has no value"
    )
    assert isinstance(
        _weight_matrix("ordinal", ["a", "b", "c"], [0.1, float("nan"), 0.9]), np.ndarray
    )  # positions only
    assert _level_weights("interval", None, ["a", "b"], [0.1, float("nan")]) == Undefined(
        "interval α: category 'b' has no value"
    )


def test_report_markdown_is_one_table_per_dimension():
    from analysis.registry import analyses

    frame, config = hand_built(), load_config(None)
    text = analyses.get("agreement").render(
        agreement(frame, config, run="r1", n_boot=50, seed=2, weights="linear"), detail=True
    )
    section = text.split("## completeness")[1].split("## overall")[0]
    assert "| coefficient | value | SE | 95% CI | bootstrap 95% CI | p | band |" in section
    for label in (
        "Percent agreement",
        "Fleiss' κ",
        "Conger's κ",
        "Gwet's AC1",
        "Brennan–Prediger",
        "Krippendorff's α (nominal)",
        "Fleiss' κ (linear)",
        "Gwet's AC2 (linear)",
        "Krippendorff's α (linear)",
        "Krippendorff's α (ordinal)",
        "Krippendorff's α (interval)",
        "Krippendorff's α (ratio)",
    ):
        assert f"| {label} |" in section, label
    assert "(values 1, 2, 3, 4, 5)" in section and "| κ (linear) |" in section


def test_markdown_is_a_short_summary_by_default_and_every_table_with_detail(report):
    """Per dimension, the coefficient its scale calls for — Krippendorff's α at the scale's level:
    ordinal on completeness's five ordered options, nominal on technical accuracy's two — with its
    95% CI (bootstrap when there is one), band and n; ``detail=True`` (``--detail``) is the full
    report, unchanged."""
    from analysis.agreement.markdown import markdown_lines
    from analysis.registry import analyses
    from analysis.report import ci

    spec = analyses.get("agreement")
    short = spec.render(report)
    assert short.startswith("# Inter-rater agreement (run r1)")
    rows = {line.split(" | ")[0][2:]: line for line in short.splitlines() if line.startswith("| ")}
    completeness = report.dimension("completeness")
    alpha = completeness.alpha["ordinal"]
    assert rows["completeness"] == (
        f"| completeness | Krippendorff's α (ordinal) | {alpha.value:.3f} | "
        f"{ci(alpha.bootstrap_ci)} | {alpha.band} | {alpha.n_items} items, "
        f"{completeness.n_ratings} ratings, 3 reviewers |"
    )
    accuracy = report.dimension("technical-accuracy").alpha["nominal"]
    assert "| Krippendorff's α (nominal) | undefined (" in rows["technical-accuracy"]
    assert str(accuracy.value) in rows["technical-accuracy"]
    assert "| undefined (one rater) |" in rows["overall"]
    assert "| Fleiss' κ |" not in short and "Per reviewer pair" not in short
    assert "--detail" in short and len(short.splitlines()) < 20
    full = spec.render(report, detail=True)
    assert "| Fleiss' κ |" in full and "## Across dimensions (pooled)" in full
    assert full.rstrip("\n").splitlines() == markdown_lines(report)


def test_report_pools_the_dimensions_with_their_own_chance_agreement(report):
    """completeness and technical-accuracy are pooled; overall (one reviewer) is left out and says
    why. Every pooled value is (mean p_a − mean p_e)/(1 − mean p_e) of the two dimensions' own p_a
    and p_e. technical-accuracy's
    reviewers all say "correct": for Fleiss' and Conger's κ p_a = p_e = 1 there and every item's
    terms are 0, so the pooled κs are completeness's own, with its SE (the items: i01–i10 of either
    dimension)."""
    across = report.across
    assert across is not None
    assert across.dimensions == ("completeness", "technical-accuracy") and across.left_out == {
        "overall": "one rater"
    }
    assert across.n_items == 10 and list(across.coefficients) == list(WEIGHTINGS)
    completeness, accuracy = (
        report.dimension("completeness"),
        report.dimension("technical-accuracy"),
    )
    for weighting in WEIGHTINGS:
        for name, got in across.coefficients[weighting].items():
            own = [
                completeness.coefficients[weighting][name],
                accuracy.coefficients["identity"][name],
            ]  # two options: identity
            pa, pe = sum(c.pa for c in own) / 2, sum(c.pe for c in own) / 2
            assert got.value == pytest.approx((pa - pe) / (1 - pe), abs=1e-12), (weighting, name)
            assert got.band == band(got.value, name) and got.n_items == 10
            assert got.bootstrap_ci == Undefined(
                "not bootstrapped (across dimensions: analytic only)"
            )
            if name in ("fleiss_kappa", "conger_kappa"):
                assert (got.value, got.se, *got.ci) == pytest.approx(
                    (own[0].value, own[0].se, *own[0].ci), abs=1e-12
                )
    assert "krippendorff_alpha" not in across.coefficients["identity"]


def test_report_pools_two_disagreeing_dimensions_by_hand():
    """Two two-reviewer dimensions on items a–c: fluency (good, good) (poor, poor) (good, good):
    p_a = 1,
    π = (1/3, 2/3) → p_e = 5/9; tone on a–b: (poor, good) (good, good): p_a = 1/2, π = (1/4,
    3/4) → p_e = 5/8. Pooled Fleiss' κ (23/59) is not the mean of the two κs (1 and −1/3); the JSON
    keys it under ``across``."""
    rows = [
        ("r1", item, dim, who, j, 1.0 if j == "good" else 0.0)
        for dim, items in (
            ("fluency", {"a": ("good", "good"), "b": ("poor", "poor"), "c": ("good", "good")}),
            ("tone", {"a": ("poor", "good"), "b": ("good", "good")}),
        )
        for item, judgments in items.items()
        for who, j in zip((ALICE, BOB), judgments)
    ]
    got = agreement(ratings_frame(rows), load_config(None), n_boot=0)
    assert got.across is not None and got.across.n_items == 3
    fleiss = got.across.coefficients["identity"]["fleiss_kappa"]
    assert fleiss.value == pytest.approx(23 / 59, abs=1e-12) and fleiss.pe == pytest.approx(
        85 / 144
    )
    assert got.dimension("fluency").fleiss.value == pytest.approx(1.0) and got.dimension(
        "tone"
    ).fleiss.value == pytest.approx(-1 / 3)
    data = json.loads(json.dumps(got.to_dict()))
    assert data["across"]["coefficients"]["identity"]["fleiss_kappa"]["value"] == pytest.approx(
        23 / 59
    )
    single = agreement(
        ratings_frame([r for r in rows if r[2] == "tone"]), load_config(None), n_boot=0
    )
    assert single.across is None  # one dimension: nothing to pool


def test_report_markdown_opens_with_the_pooled_table():
    from analysis.registry import analyses

    text = analyses.get("agreement").render(
        agreement(hand_built(), load_config(None), run="r1", n_boot=0, weights="linear"),
        detail=True,
    )
    section = text.split("## Across dimensions (pooled)")[1].split("## completeness")[0]
    assert (
        "completeness, technical-accuracy on 10 items" in section
        and "Not pooled: overall (one rater)." in section
    )
    assert "| coefficient | value | SE | 95% CI | p | band |" in section
    for label in (
        "Percent agreement",
        "Fleiss' κ",
        "Conger's κ",
        "Gwet's AC1",
        "Brennan–Prediger",
        "Fleiss' κ (linear)",
        "Gwet's AC2 (linear)",
    ):
        assert f"| {label} |" in section, label
    assert "| Krippendorff" not in section and "Krippendorff's α is per dimension only." in section


def test_report_off_scale_judgments_duplicates_and_unknown_dimension():
    rows = [
        ("r1", f"i{n}", "completeness", who, j, COMPLETENESS.get(j, 0.6))
        for n, (x, y) in enumerate([("1", "2"), ("3", "3"), ("meh", "4"), ("5", "meh"), ("2", "2")])
        for who, j in ((ALICE, x), (BOB, y))
    ]
    rows += [
        ("r1", "i0", "completeness", ALICE, "1", 0.0)
    ]  # a duplicate of alice's i0 (same judgment)
    rows += [
        ("r1", f"i{n}", "made-up", who, j, s)
        for n in range(4)
        for who, j, s in ((ALICE, "lo", 0.2), (BOB, "hi" if n % 2 else "lo", 0.9 if n % 2 else 0.2))
    ]
    report = agreement(ratings_frame(rows), load_config(None), n_boot=0, min_shared=2)
    dim = report.dimension("completeness")
    assert dim.categories == (
        "1",
        "2",
        "3",
        "meh",
        "4",
        "5",
    )  # mean score 0.6 sits between 0.5 and 0.75
    assert dim.values == (1.0, 2.0, 3.0, 0.6, 4.0, 5.0)  # off the scale: its score is its value
    assert any(
        "'meh' is not on scale 'completeness': placed by its mean score 0.60, its value" in note
        for note in dim.notes
    )
    assert any("1 duplicate" in note for note in dim.notes)
    assert dim.n_ratings == 10
    made_up = report.dimension("made-up")
    assert (
        made_up.scale is None
        and made_up.categories == ("lo", "hi")
        and made_up.values == pytest.approx((0.2, 0.9))
    )
    assert any("not configured" in note for note in made_up.notes)
    assert is_number(made_up.pairs[0].unweighted.value)
