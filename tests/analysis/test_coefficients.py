"""Chance-corrected agreement coefficients and Gwet's variances: published values, hand-worked
examples, a second implementation, the resampling sums, edge cases.

Published values, each from a source read for this file:

* irrCAC README (github.com/kgwet/irrCAC, README.md, irrCAC 1.4): ``cac.raw4raters`` (Gwet 2014, the
  4 raters × 12 units of p. 120; the same data as Krippendorff's 2011 example) — pa, pe,
  coefficient, SE, 95% CI and p-value of ``pa.coeff.raw``, ``gwet.ac1.raw``, ``fleiss.kappa.raw``,
  ``krippen.alpha.raw``, ``conger.kappa.raw``, ``bp.coeff.raw``; ``distrib.6raters`` (15
  patients × 6 raters) with the ``*.dist`` functions.
* irrCAC overview vignette (CRAN irrCAC 1.0, inst/doc/overview.html): ``cont3x3abstractors`` with
  ``kappa2.table``, ``scott2.table``, ``gwet.ac1.table``, ``bp2.table``, ``krippen2.table``,
  ``pa2.table`` (also in the README).
* irrCAC weighting vignette (CRAN irrCAC 1.0, inst/doc/weighting.html): the weights of 1:3; the same
  tables and ``cac.raw4raters`` with quadratic weights. irrCAC 1.0 printed two-sided p-values, 2
  (1 − T(|κ|/SE)); its sources print the one-sided 1 − T(κ/SE) hilbot reports since November 2021
  (irrCAC 1.2), so those are checked as 2 p. In August 2021 Krippendorff's α's variance changed too
  (p'_a instead of p_a in its linearisation, the n − 1 df of every rated unit): the README's
  unweighted α SE is the current formula; the vignette's quadratic α is checked for its value, pa
  and pe only.
* The ``*.dist`` functions compute Krippendorff's α's variance by another formula than
  ``krippen.alpha.raw`` (whose formula hilbot follows), so for ``distrib.6raters`` only α's value,
  pa and pe are checked.

The second implementations (``krippendorff``, GPL-3.0, a test extra; ``statsmodels``) check the
values on random data. The irrCAC Python port (0.4.4) was used by hand while writing this module,
not here: it has no licence and pins scipy 1.12.
"""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from analysis.errors import AnalysisError
from analysis.stats import (
    POOLED,
    RAW,
    TABLE,
    WEIGHTS,
    Coefficient,
    Ratings,
    Undefined,
    Units,
    alpha,
    alpha_features,
    features,
    inference,
    ordinal_alpha_weights,
    pooled,
    raw_coefficients,
    resampled,
    resampled_alpha,
    table_coefficients,
    terms,
    units_coefficients,
    weights,
)

N = np.nan
# cac.raw4raters: units (rows) × Rater1–Rater4, categories 1–5, NA = not rated (irrCAC README)
RAW4 = (
    np.array(
        [
            [1, 1, N, 1],
            [2, 2, 3, 2],
            [3, 3, 3, 3],
            [3, 3, 3, 3],
            [2, 2, 2, 2],
            [1, 2, 3, 4],
            [4, 4, 4, 4],
            [1, 1, 2, 1],
            [2, 2, 2, 2],
            [N, 5, 5, 5],
            [N, N, 1, 1],
            [N, N, 3, N],
        ]
    )
    - 1
)
FIVE = [1, 2, 3, 4, 5]
# cont3x3abstractors: rows rater 1 (Ectopic, AIU, NIU), columns rater 2
ABSTRACTORS = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
# distrib.6raters: raters per patient and category (Depression, Personality Disorder, Schizophrenia,
# Neurosis, Other)
DISTRIB = np.array(
    [
        [0, 0, 0, 6, 0],
        [0, 3, 0, 0, 3],
        [0, 1, 4, 0, 1],
        [0, 0, 0, 0, 6],
        [0, 3, 0, 3, 0],
        [2, 0, 4, 0, 0],
        [0, 0, 4, 0, 2],
        [2, 0, 3, 1, 0],
        [2, 0, 0, 4, 0],
        [0, 0, 0, 0, 6],
        [1, 0, 0, 5, 0],
        [1, 1, 0, 4, 0],
        [0, 3, 3, 0, 0],
        [1, 0, 0, 5, 0],
        [0, 2, 0, 3, 1],
    ]
)


def printed(x: float) -> float:
    """Half a unit in the last digit irrCAC printed ``x`` with (``0.12561`` → 5e-6)."""
    text = repr(float(x))
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 0
    return 0.5 * 10.0**-decimals + 1e-12


def check(c: Coefficient, *, value, se=None, ci=None, p=None, pa=None, pe=None) -> None:
    """``c`` equals the published figures to the digits printed (p-values: their 7 significant
    digits)."""
    assert c.value == pytest.approx(value, abs=printed(value))
    for got, published in ((c.se, se), (c.pa, pa), (c.pe, pe)):
        if published is not None:
            assert got == pytest.approx(published, abs=printed(published))
    if ci is not None:
        assert c.ci == pytest.approx(ci, abs=5e-4 + 1e-12)
    if p is not None:
        assert c.p_value == pytest.approx(p, rel=1e-6)


# ------------------------------------------------------- published: raw ratings with missing values


def test_cac_raw4raters_unweighted_irrcac_readme():
    """irrCAC README: ``*.raw(cac.raw4raters)``, every coefficient with pa, pe, SE, CI and
    (one-sided) p."""
    got = raw_coefficients(RAW4, FIVE)
    check(
        got["percent_agreement"],
        value=0.8181818,
        se=0.12561,
        ci=(0.542, 1),
        p=2.172686e-05,
        pa=0.8181818,
        pe=0,
    )
    check(
        got["gwet_ac"],
        value=0.77544,
        se=0.14295,
        ci=(0.461, 1),
        p=0.0001043605,
        pa=0.8181818,
        pe=0.1903212,
    )
    check(
        got["fleiss_kappa"],
        value=0.76117,
        se=0.15302,
        ci=(0.424, 1),
        p=0.0002095865,
        pa=0.8181818,
        pe=0.2387153,
    )
    check(
        got["krippendorff_alpha"],
        value=0.74342,
        se=0.14548,
        ci=(0.423, 1),
        p=0.0001693123,
        pa=0.805,
        pe=0.24,
    )
    check(
        got["conger_kappa"],
        value=0.76282,
        se=0.14917,
        ci=(0.435, 1),
        p=0.0001683533,
        pa=0.8181818,
        pe=0.2334252,
    )
    check(
        got["brennan_prediger"],
        value=0.77273,
        se=0.14472,
        ci=(0.454, 1),
        p=0.0001187804,
        pa=0.8181818,
        pe=0.2,
    )
    assert {c.n_units for name, c in got.items() if name != "krippendorff_alpha"} == {12}
    assert got["krippendorff_alpha"].n_units == 11  # unit 12 has one rating


def test_cac_raw4raters_quadratic_irrcac_weighting_vignette():
    """irrCAC weighting vignette (irrCAC 1.0): ``*.raw(cac.raw4raters, weights = "quadratic")``; its
    p-values are two-sided (2 p); its α variance predates August 2021's (value, pa and pe only)."""
    got = raw_coefficients(RAW4, FIVE, "quadratic")
    check(got["percent_agreement"], value=0.9753788, se=0.09062, ci=(0.776, 1), pa=0.9753788, pe=0)
    check(got["gwet_ac"], value=0.914, se=0.10396, ci=(0.685, 1), pa=0.9753788, pe=0.7137044)
    check(got["fleiss_kappa"], value=0.86494, se=0.14603, ci=(0.544, 1), pa=0.9753788, pe=0.8177083)
    check(got["conger_kappa"], value=0.85771, se=0.14367, ci=(0.541, 1), pa=0.9753788, pe=0.8269638)
    check(got["brennan_prediger"], value=0.90152, se=0.11089, ci=(0.657, 1), pa=0.9753788, pe=0.75)
    check(got["krippendorff_alpha"], value=0.84911, pa=0.9735938, pe=0.825)
    two_sided = {
        "percent_agreement": 3.526377e-07,
        "gwet_ac": 2.634438e-06,
        "fleiss_kappa": 9.976081e-05,
        "conger_kappa": 9.319979e-05,
        "brennan_prediger": 5.60548e-06,
    }
    for name, p in two_sided.items():
        assert 2 * got[name].p_value == pytest.approx(p, rel=1e-5), name


def test_distrib_6raters_irrcac_readme():
    """irrCAC README: ``*.dist(distrib.6raters)`` (every patient rated by all 6: the raw formulas
    give the same)."""
    ratings = np.array([np.repeat(np.arange(5), row) for row in DISTRIB], dtype=float)
    got = raw_coefficients(ratings, FIVE)
    check(
        got["gwet_ac"],
        value=0.4448007,
        se=0.08418757,
        ci=(0.264, 0.625),
        p=5.779637e-05,
        pa=0.5511111,
        pe=0.1914815,
    )
    check(
        got["fleiss_kappa"],
        value=0.4139265,
        se=0.08119291,
        ci=(0.24, 0.588),
        p=8.113618e-05,
        pe=0.2340741,
    )
    check(
        got["brennan_prediger"],
        value=0.4388889,
        se=0.08312142,
        ci=(0.261, 0.617),
        p=5.814998e-05,
        pe=0.2,
    )
    check(got["krippendorff_alpha"], value=0.4204384, pa=0.5560988, pe=0.2340741)


# ---------------------------------------------------------------- published: two raters' tables


@pytest.mark.parametrize(
    "weighting, expected",
    [
        (
            "identity",
            {  # irrCAC overview vignette and README
                "cohen_kappa": (0.7964094, 0.05891072, (0.68, 0.913)),
                "scott_pi": (0.7962397, 0.05905473, (0.679, 0.913)),
                "gwet_ac": (0.8493305, 0.04321747, (0.764, 0.935)),
                "brennan_prediger": (0.835, 0.04693346, (0.742, 0.928)),
                "krippendorff_alpha": (0.7972585, 0.05905473, (0.68, 0.914)),
                "percent_agreement": (0.89, 0.03128898, (0.828, 0.952)),
            },
        ),
        (
            "quadratic",
            {  # irrCAC weighting vignette
                "cohen_kappa": (0.8921569, 0.03535151, (0.822, 0.962)),
                "scott_pi": (0.8921093, 0.03539506, (0.822, 0.962)),
                "gwet_ac": (0.9402369, 0.01792019, (0.905, 0.976)),
                "brennan_prediger": (0.9175, 0.02346673, (0.871, 0.964)),
                "krippendorff_alpha": (0.8926487, 0.03539506, (0.822, 0.963)),
                "percent_agreement": (0.9725, 0.007822244, (0.957, 0.988)),
            },
        ),
    ],
)
def test_cont3x3abstractors_irrcac_vignettes(weighting, expected):
    got = table_coefficients(ABSTRACTORS, weights=weighting)
    assert set(got) == set(TABLE)
    for name, (value, se, ci) in expected.items():
        c = got[name]
        assert c.value == pytest.approx(value, abs=5e-8), name
        assert c.se == pytest.approx(se, rel=1e-6), name
        assert (round(c.ci[0], 3), round(c.ci[1], 3)) == pytest.approx(ci), name
        assert c.n_units == 100 and c.p_value < 1e-20  # irrCAC prints 0e+00


def test_weights_of_three_categories_irrcac_weighting_vignette():
    off = {
        "identity": (0, 0),
        "radical": (0.2928932, 0),
        "linear": (0.5, 0),
        "ordinal": (0.6666667, 0),
        "quadratic": (0.75, 0),
        "circular": (0, 0),
    }  # circular printed as 3.330669e-16
    for kind, (near, far) in off.items():
        w = weights(kind, [1, 2, 3])
        assert np.diag(w) == pytest.approx(1.0) and w == pytest.approx(w.T)
        assert w[0, 1] == pytest.approx(near, abs=5e-8) and w[1, 2] == pytest.approx(
            near, abs=5e-8
        ), kind
        assert w[0, 2] == pytest.approx(far, abs=1e-12), kind
    # ratio (by hand): 1 − ((x_k − x_l)/(x_k + x_l))² / ((3 − 1)/(3 + 1))²: (1,
    # 2) → 1 − (1/9)/(1/4) = 5/9, (2, 3) → 1 − (1/25)·4
    assert weights("ratio", [1, 2, 3])[0, 1] == pytest.approx(5 / 9) and weights(
        "ratio", [1, 2, 3]
    )[1, 2] == pytest.approx(0.84)
    assert weights("quadratic", [0.0, 0.25, 0.5, 0.75, 1.0]) == pytest.approx(
        weights("quadratic", 5)
    )  # any equal spacing
    assert weights("ratio", [0.0, 1.0])[0, 0] == 1.0  # 0/0 on the diagonal: agreement


# ---------------------------------------------------------------- hand-worked


# Three units, two categories a (0) and b (1); u3 has one rating (it counts for the chance agreement
# only):
#        R1 R2 R3
#   u1   a  a  b     p_a,1 = (2·1 + 1·0)/(3·2) = 1/3
#   u2   a  a  –     p_a,2 = 2·1/(2·1) = 1
#   u3   –  –  b     p_a,3 = 0 (one rating)
# p_a = (1/3 + 1)/2 = 2/3 (n₂ = 2); π = ((2/3 + 1 + 0)/3, (1/3 + 0 + 1)/3) = (5/9, 4/9)
# Fleiss: p_e = 25/81 + 16/81 = 41/81 → κ = (54/81 − 41/81)/(40/81) = 13/40
# AC1: p_e = 2 · (5/9 · 4/9 · 2)/(2 · 1) = 40/81 → (54 − 40)/(81 − 40) = 14/41;  BP: p_e = 1/2 → 1/3
# Conger: rater shares R1 (1, 0), R2 (1, 0), R3 (0, 1); p̄ = (2/3, 1/3);
# s²_aa = (2 − 3·4/9)/2 = 1/3,
#   s²_bb = (1 − 3·1/9)/2 = 1/3; p_e = (4/9 − 1/9) + (1/9 − 1/9) = 1/3 → κ = (2/3 − 1/3)/(2/3) = 1/2
# Krippendorff (u1, u2 only): coincidences o_aa = 2/2 + 2/1 = 3, o_ab = o_ba = 2/2 = 1, o_bb = 0;
# n = 5, n_a = 4,
#   n_b = 1 → α = 1 − (5 − 1)(1 + 1)/(2·4·1) = 0; Gwet's form: p'_a = 3/5,
#   p_a = (4/5)(3/5) + 1/5 = 17/25 = p_e
# Percent agreement's SE: (n/n₂) p_a,i = (1/2, 3/2, 0); Σ (· − 2/3)² = (1 + 25 + 16)/36 → v =
# (42/36)/(3·2) = 7/36
SMALL = np.array([[0, 0, 1], [0, 0, N], [N, N, 1]])


def test_hand_worked_missing_ratings():
    got = raw_coefficients(SMALL, [1, 2])
    assert got["percent_agreement"].value == pytest.approx(2 / 3)
    assert got["fleiss_kappa"].value == pytest.approx(13 / 40) and got[
        "fleiss_kappa"
    ].pe == pytest.approx(41 / 81)
    assert got["gwet_ac"].value == pytest.approx(14 / 41)
    assert got["brennan_prediger"].value == pytest.approx(1 / 3)
    assert got["conger_kappa"].value == pytest.approx(1 / 2) and got[
        "conger_kappa"
    ].pe == pytest.approx(1 / 3)
    assert got["krippendorff_alpha"].value == pytest.approx(0.0, abs=1e-12) and got[
        "krippendorff_alpha"
    ].pa == pytest.approx(17 / 25)
    assert got["percent_agreement"].se == pytest.approx(math.sqrt(7 / 36))
    assert got["fleiss_kappa"].n_units == 3 and got["krippendorff_alpha"].n_units == 2


# Two raters, 10 items, categories bad < ok < good (as in test_agreement's hand-worked κ):
#   [[2, 1, 0], [0, 3, 1], [0, 0, 3]]: p_o = 0.8; rows (.3, .4, .3), columns (.2, .4, .4); κ = 23/33
#   π = (.25, .4, .35): Scott p_e = .0625 + .16 + .1225 = .345 → π = .455/.655
#   AC1 p_e = (.25·.75 + .4·.6 + .35·.65)/2 = .3275 → .4725/.6725;  BP p_e = 1/3 → 0.7
#   Krippendorff: ε = 1/20, p_a = .95·.8 + .05 = .81 → α = .465/.655;  percent agreement
#   SE = √((.8 − .64)/10)
HAND = np.array([[2, 1, 0], [0, 3, 1], [0, 0, 3]])


def test_hand_worked_table():
    got = table_coefficients(HAND)
    assert got["cohen_kappa"].value == pytest.approx(23 / 33)
    assert got["scott_pi"].value == pytest.approx(0.455 / 0.655)
    assert got["gwet_ac"].value == pytest.approx(0.4725 / 0.6725)
    assert got["brennan_prediger"].value == pytest.approx(0.7)
    assert got["krippendorff_alpha"].value == pytest.approx(0.465 / 0.655) and got[
        "krippendorff_alpha"
    ].pa == pytest.approx(0.81)
    assert got["percent_agreement"].se == pytest.approx(math.sqrt(0.016))


def test_inference_is_t_on_n_minus_1_df_clipped_at_one():
    lower, upper, p = inference(
        np.array([0.5, 0.9, -0.2]), np.array([0.1, 0.1, 0.1]), np.array([9, 9, 9])
    )
    t = 2.262157162740992  # t_{0.975, 9}
    assert lower == pytest.approx([0.5 - t * 0.1, 0.9 - t * 0.1, -0.2 - t * 0.1])
    assert upper == pytest.approx([0.5 + t * 0.1, 1.0, -0.2 + t * 0.1])
    from scipy.stats import t as student

    assert p == pytest.approx([student.sf(5, 9), student.sf(9, 9), student.sf(-2, 9)])


# ---------------------------------------------------------------- pooled across dimensions


def units_of(data: np.ndarray, q: int) -> Units:
    return Units.of(Ratings.from_matrix(data, q))


def pool(
    dimensions: list[tuple[np.ndarray, int, np.ndarray]], weighting: str, name: str
) -> Coefficient:
    """``pooled`` of the dimensions (ratings, q, each rated unit's item) over the items they
    name."""
    parts = []
    for data, q, items in dimensions:
        t = terms(units_of(data, q), weights(weighting, q))[name]
        assert not isinstance(t, Undefined)
        parts.append((t, items))
    return pooled(parts, 1 + max(int(items.max()) for _, _, items in dimensions))


@pytest.mark.parametrize("weighting", ["identity", "quadratic", "ordinal"])
@pytest.mark.parametrize("name", POOLED)
def test_pooling_one_dimension_is_that_dimension_with_its_irrcac_se(weighting, name):
    """One dimension pooled is the dimension's coefficient with Gwet's SE (published for the
    identity above)."""
    own = raw_coefficients(RAW4, FIVE, weighting)[name]
    got = pool([(RAW4, 5, np.arange(12))], weighting, name)
    assert got.value == pytest.approx(own.value, abs=1e-12) and got.se == pytest.approx(
        own.se, abs=1e-12
    )
    assert got.ci == pytest.approx(own.ci, abs=1e-12) and got.n_units == 12
    if weighting == "identity" and name == "fleiss_kappa":
        check(got, value=0.76117, se=0.15302, ci=(0.424, 1), p=0.0002095865)  # irrCAC README


def test_pooled_kappa_worked_by_hand_is_not_the_mean_of_the_kappas():
    """De Vries et al. (2008): (mean p_a − mean p_e)/(1 − mean p_e), each dimension with its own
    chance agreement.

    A: 2 raters, items 0–2 rated (0,0) (1,1) (1,1): p_a = 1, π = (1/3, 2/3), p_e = 5/9, κ = 1.
    B: 2 raters, items 0–1 rated (0,1) (1,1): p_a = 1/2, π = (1/4, 3/4), p_e = 5/8, κ = −1/3.
    Pooled: p̄_a = 3/4, p̄_e = (5/9 + 5/8)/2 = 85/144, κ = (108/144 − 85/144)/(59/144) = 23/59 (the
    mean κ: 1/3).
    """
    a = np.array([[0, 0], [1, 1], [1, 1]], dtype=float)
    b = np.array([[0, 1], [1, 1]], dtype=float)
    got = pool([(a, 2, np.arange(3)), (b, 2, np.arange(2))], "identity", "fleiss_kappa")
    assert got.value == pytest.approx(23 / 59, abs=1e-12)
    assert (got.pa, got.pe, got.n_units) == (pytest.approx(0.75), pytest.approx(85 / 144), 3)
    percent = pool([(a, 2, np.arange(3)), (b, 2, np.arange(2))], "identity", "percent_agreement")
    assert percent.value == pytest.approx(0.75)


def test_pooled_se_counts_the_items_not_the_dimensions():
    """The same ratings as two dimensions of the same items: the same value and SE (no spurious √2);
    on two disjoint sets of items: the same value, and the SE of 2n items, √((n − 1)/(2n − 1)) of
    one set's."""
    data = random_ratings(5, 40, 4, 5, 0.25)
    own = raw_coefficients(data, FIVE)["fleiss_kappa"]
    n = len(units_of(data, 5).size)
    items = np.arange(n)
    same = pool([(data, 5, items), (data, 5, items)], "identity", "fleiss_kappa")
    assert same.value == pytest.approx(own.value, abs=1e-12) and same.se == pytest.approx(
        own.se, abs=1e-12
    )
    disjoint = pool([(data, 5, items), (data, 5, items + n)], "identity", "fleiss_kappa")
    assert disjoint.value == pytest.approx(own.value, abs=1e-12) and disjoint.n_units == 2 * n
    assert disjoint.se == pytest.approx(own.se * math.sqrt((n - 1) / (2 * n - 1)), rel=1e-10)


@pytest.mark.parametrize("name", ["fleiss_kappa", "conger_kappa", "gwet_ac"])
def test_pooled_se_is_the_spread_of_resampled_items(name):
    """Two dimensions rated on the same items, correlated through the items' true category: the
    analytic SE is within 15% of the standard deviation of the pooled value over 300 resamples of
    the items (the dimensions resampled together)."""
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 4, 250)
    dims = []
    for q, raters, missing in ((4, 4, 0.2), (3, 5, 0.3)):
        data = np.where(
            rng.random((250, raters)) < 0.65,
            np.minimum(truth, q - 1)[:, None],
            rng.integers(0, q, (250, raters)),
        ).astype(float)
        data[rng.random(data.shape) < missing] = N
        dims.append((data, q))

    def at(sample: np.ndarray) -> Coefficient:
        parts = []
        for data, q in dims:
            rows = data[sample]
            rated = ~np.isnan(rows).all(axis=1)
            parts.append((rows[rated], q, np.flatnonzero(rated)))
        return pool(parts, "quadratic", name)

    estimate = at(np.arange(250))
    spread = np.std([at(rng.integers(0, 250, 250)).value for _ in range(300)], ddof=1)
    assert estimate.se == pytest.approx(spread, rel=0.15)


def test_pooling_nothing_is_undefined():
    got = pooled([], 0)
    assert isinstance(got.value, Undefined) and got.value.reason == "no dimension to pool"


# ---------------------------------------------------------------- a second implementation


def random_ratings(
    seed: int, units: int, raters: int, q: int, missing: float, agree: float = 0.6
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, q, units)
    data = np.where(
        rng.random((units, raters)) < agree, truth[:, None], rng.integers(0, q, (units, raters))
    ).astype(float)
    data[rng.random(data.shape) < missing] = N
    return data


@pytest.mark.parametrize(
    "seed, units, raters, missing", [(1, 40, 3, 0.2), (2, 300, 6, 0.5), (3, 60, 12, 0.8)]
)
def test_alpha_equals_the_krippendorff_package_at_every_level(seed, units, raters, missing):
    data = random_ratings(seed, units, raters, 5, missing)
    values = np.array(
        [1.0, 2.0, 4.0, 7.0, 11.0]
    )  # unequal spacing: interval and ratio differ from positions
    coded = Units.of(Ratings.from_matrix(data, 5))
    observed = np.where(np.isnan(data), N, values[np.nan_to_num(data).astype(int)]).T
    frequencies = coded.counts[coded.pairable].sum(axis=0)
    levels = {
        "nominal": np.eye(5),
        "interval": weights("quadratic", values),
        "ratio": weights("ratio", values),
        "ordinal": ordinal_alpha_weights(frequencies),
    }
    for level, w in levels.items():
        expected = krippendorff.alpha(reliability_data=observed, level_of_measurement=level)
        assert alpha(coded, w).value == pytest.approx(expected, abs=1e-10), level


def test_complete_data_equal_statsmodels():
    rng = np.random.default_rng(4)
    for _ in range(10):
        data = random_ratings(
            int(rng.integers(1_000_000)), int(rng.integers(5, 60)), int(rng.integers(2, 7)), 4, 0.0
        )
        counts = np.stack([np.bincount(row.astype(int), minlength=4) for row in data])
        got = raw_coefficients(data, 4)
        assert got["fleiss_kappa"].value == pytest.approx(sm_fleiss(counts), abs=1e-10)
        assert got["brennan_prediger"].value == pytest.approx(
            sm_fleiss(counts, method="randolph"), abs=1e-10
        )
        table = np.bincount((data[:, 0] * 4 + data[:, 1]).astype(int), minlength=16).reshape(4, 4)
        for kind, wt in (("identity", None), ("linear", "linear"), ("quadratic", "quadratic")):
            assert table_coefficients(table, weights=kind)["cohen_kappa"].value == pytest.approx(
                cohens_kappa(table, wt=wt).kappa, abs=1e-10
            )
        # two raters: Fleiss' κ is Scott's π, Conger's κ is Cohen's κ
        pair = raw_coefficients(data[:, :2], 4)
        tabled = table_coefficients(table)
        assert pair["fleiss_kappa"].value == pytest.approx(tabled["scott_pi"].value, abs=1e-10)
        assert pair["conger_kappa"].value == pytest.approx(tabled["cohen_kappa"].value, abs=1e-10)


# ---------------------------------------------------------------- resampling sums


@pytest.mark.parametrize("kind", WEIGHTS)
def test_sums_of_features_give_the_coefficients_and_their_resamples(kind):
    data = random_ratings(5, 30, 4, 5, 0.4)
    w = weights(kind, [1.0, 2.0, 4.0, 7.0, 11.0])
    coded = Units.of(Ratings.from_matrix(data, 5))
    everyone, pairable = features(coded), alpha_features(coded)
    raters = len(coded.raters)
    direct = units_coefficients(coded, w)
    got = resampled(everyone.sum(axis=0)[None], w, 5, raters)
    for name in RAW[:-1]:
        assert got[name][0] == pytest.approx(direct[name].value, abs=1e-12), name
    assert resampled_alpha(pairable.sum(axis=0)[None], w)[0] == pytest.approx(
        direct["krippendorff_alpha"].value, abs=1e-12
    )
    # a resample of the units (with multiplicities) gives the coefficients of the repeated units
    rng = np.random.default_rng(6)
    draw = rng.integers(0, coded.n, coded.n)
    rated = data[~np.isnan(data).all(axis=1)]
    again = units_coefficients(Units.of(Ratings.from_matrix(rated[draw], 5)), w)
    mult = np.bincount(draw, minlength=coded.n).astype(float)[None]
    sums = resampled(mult @ everyone, w, 5, raters)
    for name in RAW[:-1]:
        if not isinstance(again[name].value, Undefined):
            assert sums[name][0] == pytest.approx(again[name].value, abs=1e-12), name
    keep = coded.pairable[draw]
    again_alpha = alpha(Units.of(Ratings.from_matrix(rated[draw][keep], 5)), w).value
    assert resampled_alpha((mult[:, coded.pairable]) @ pairable, w)[0] == pytest.approx(
        again_alpha, abs=1e-12
    )
    ordinal = resampled_alpha(pairable.sum(axis=0)[None], None)[0]
    assert ordinal == pytest.approx(
        alpha(coded, ordinal_alpha_weights(coded.counts[coded.pairable].sum(axis=0))).value
    )


# ---------------------------------------------------------------- edge cases: Undefined, never NaN


def undefined_everywhere(c: Coefficient, reason: str) -> bool:
    return all(getattr(c, f) == Undefined(reason) for f in ("value", "se", "ci", "p_value"))


def test_raw_edge_cases_are_undefined_with_a_reason():
    cases = {
        "no ratings": np.full((3, 3), N),
        "one rater": np.array([[0, N], [1, N], [1, N]]),
        "fewer than 2 ratings per item": np.array([[0, N], [N, 1]]),
    }
    for reason, data in cases.items():
        got = raw_coefficients(data, [1, 2])
        assert all(undefined_everywhere(c, reason) for c in got.values()), (reason, got)
    assert all(
        undefined_everywhere(c, "no ratings")
        for c in raw_coefficients(np.zeros((0, 3)), [1, 2]).values()
    )


def test_all_ratings_identical():
    got = raw_coefficients(np.zeros((4, 3)), [1, 2, 3])
    for name in ("fleiss_kappa", "conger_kappa", "krippendorff_alpha"):
        assert got[name].value == Undefined("all ratings identical"), name
    # AC1 and Brennan–Prediger stay defined (both 1), as percent agreement
    for name in ("gwet_ac", "brennan_prediger", "percent_agreement"):
        assert (
            got[name].value == 1.0
            and got[name].se == 0.0
            and got[name].ci == (1.0, 1.0)
            and got[name].p_value == 0.0
        )
    table = table_coefficients([[5, 0], [0, 0]])
    assert table["cohen_kappa"].value == Undefined("all ratings identical") and table[
        "scott_pi"
    ].se == Undefined("all ratings identical")
    assert table["gwet_ac"].value == 1.0


def test_one_unit_has_a_value_but_no_standard_error():
    got = raw_coefficients(np.array([[0, 0, 1]]), [1, 2])
    assert got["percent_agreement"].value == pytest.approx(1 / 3)
    assert got["percent_agreement"].se == Undefined("fewer than 2 items")
    assert got["krippendorff_alpha"].se == Undefined("fewer than 2 items with 2 ratings")


def test_table_edge_cases():
    assert all(
        undefined_everywhere(c, "no shared items")
        for c in table_coefficients(np.zeros((3, 3))).values()
    )
    assert all(
        undefined_everywhere(c, "fewer than 2 shared items")
        for c in table_coefficients([[1, 0], [0, 0]]).values()
    )
    one = table_coefficients([[4]])  # one category
    assert one["gwet_ac"].value == Undefined("one category") and one[
        "cohen_kappa"
    ].value == Undefined("all ratings identical")
    perfect = table_coefficients([[3, 0], [0, 2]])  # SE 0: the interval is the value, p = 0
    assert (
        perfect["cohen_kappa"].value == 1.0
        and perfect["cohen_kappa"].ci == (1.0, 1.0)
        and perfect["cohen_kappa"].p_value == 0.0
    )


def test_bad_arguments_raise_with_a_fix():
    with pytest.raises(AnalysisError, match="unknown weights"):
        weights("cubic", 3)
    with pytest.raises(AnalysisError, match="≥ 0"):
        weights("ratio", [-1, 0, 1])
    with pytest.raises(AnalysisError, match="distinct"):
        weights("linear", [2, 2, 2])
    with pytest.raises(AnalysisError, match="category indices"):
        raw_coefficients([[0.5, 1]], [1, 2])
    with pytest.raises(AnalysisError, match="square"):
        table_coefficients([[1, 2, 3]])
    with pytest.raises(AnalysisError, match="3 × 3"):
        raw_coefficients([[0, 1]], [1, 2, 3], weights=np.eye(2))


CELL = st.one_of(st.none(), st.integers(0, 2))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(CELL, min_size=3, max_size=3), min_size=0, max_size=8),
    st.sampled_from(WEIGHTS),
)
def test_property_every_figure_is_a_finite_number_or_undefined(rows, kind):
    data = np.array([[N if c is None else c for c in row] for row in rows], dtype=float).reshape(
        len(rows), 3
    )
    for c in raw_coefficients(data, [1, 2, 4], kind).values():
        for figure in (c.value, c.pa, c.pe, c.se, c.p_value):
            assert isinstance(figure, Undefined) or (
                isinstance(figure, float) and math.isfinite(figure)
            ), c
        assert isinstance(c.ci, Undefined) or all(math.isfinite(x) for x in c.ci)
        if not isinstance(c.value, Undefined):
            assert c.value <= 1.0 + 1e-12
            if isinstance(c.ci, tuple):
                assert c.ci[0] <= c.value + 1e-12 and c.ci[1] <= 1.0


def test_a_large_dimension_is_fast():
    """25,000 items × 40 raters × 5 categories, every weighting: well under a second each (generous
    bound here)."""
    import time

    data = random_ratings(7, 25_000, 40, 5, 0.2)
    started = time.perf_counter()
    coded = Units.of(Ratings.from_matrix(data, 5))
    for kind in WEIGHTS:
        got = units_coefficients(coded, weights(kind, 5))
        assert all(isinstance(c.value, float) for c in got.values())
    assert time.perf_counter() - started < 7 * 1.0
