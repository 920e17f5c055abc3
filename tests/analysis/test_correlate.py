"""`analysis.correlate`: success rate by bucket of a feature, Wilson intervals, monotonicity,
Spearman ρ.

The quality scale: excellent 1.0 and good .7 are successes (``success = true``); okay .4 and miss .1
are not (no flag, score < .5).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from analysis.correlate import ORDERS, Bucket, FeatureError, coerce_feature, correlate, monotonicity
from analysis.stats import Undefined, wilson_interval
from evaluation import HilbotError, Store, load_config
from tests.analysis.test_calibration import (
    CONFIG,
    assert_json_safe,
    make_items,
    make_ratings,
    rating,
    rounded,
)

Q = "quality"


def frames(groups: dict[float, list[str]], feature: str = "leap_distance"):
    """One item per judgment, its feature the dict key (one rating each, on the quality
    dimension)."""
    ratings, items = [], []
    for value, judgments in groups.items():
        for judgment in judgments:
            item = f"i{len(items):03d}"
            ratings.append(rating(item, judgment, dimension=Q))
            items.append({"item_id": item, f"feature_{feature}": value, "ai_overall": 0.5})
    return make_ratings(ratings), make_items(items, features=(feature,))


def raw_frames(pairs: list[tuple[object, str]], feature: str = "leap_distance"):
    """One item per (feature value, judgment), the values kept as given (an object column, as a run
    file holds them)."""
    ratings = make_ratings(
        [rating(f"i{k:03d}", judgment, dimension=Q) for k, (_, judgment) in enumerate(pairs)]
    )
    items = make_items([{"item_id": f"i{k:03d}", "ai_overall": 0.5} for k in range(len(pairs))])
    items[f"feature_{feature}"] = pd.Series([value for value, _ in pairs], dtype=object)
    return ratings, items


def as_pairs(groups: dict) -> list[tuple[object, str]]:
    """``frames``' groups as (value, judgment) pairs, in the same item order."""
    return [(value, judgment) for value, judgments in groups.items() for judgment in judgments]


# ---------------------------------------------------------------- Wilson intervals


@pytest.mark.parametrize(
    "k, n, low, high",
    [
        # Newcombe (1998), Statistics in Medicine 17:857–872, Table I, method 3 (Wilson score, no
        # correction).
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (
            0,
            20,
            0.0000,
            0.1611,
        ),  # for k = 0 the upper bound is z²/(n + z²) = 3.8415/23.8415 = 0.16112
        (1, 29, 0.0061, 0.1718),
        (29, 29, 0.8830, 1.0000),
    ],
)
def test_wilson_matches_newcombes_published_intervals(k, n, low, high):
    interval = wilson_interval(k, n)
    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)
    assert interval.method == "wilson" and interval.level == 0.95


def test_wilson_is_exactly_0_or_1_at_all_failures_or_all_successes():
    """At k = n the upper bound is exactly 1 and at k = 0 the lower bound exactly 0 (Wilson's
    formula, not rounding: 10 of 10 gave 0.9999999999999999, below the success rate the interval
    must contain)."""
    for n in range(1, 200):
        assert wilson_interval(n, n).high == 1.0 and wilson_interval(0, n).low == 0.0
        assert wilson_interval(n, n).low <= 1.0 and wilson_interval(0, n).high >= 0.0
    for level in (0.8, 0.9, 0.95, 0.99):
        assert wilson_interval(10, 10, level).high == 1.0


def test_wilson_matches_statsmodels_on_a_grid():
    from statsmodels.stats.proportion import proportion_confint

    for n in (1, 2, 5, 13, 50):
        for k in range(n + 1):
            interval = wilson_interval(k, n)
            low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
            assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-12)
    assert wilson_interval(3, 10, level=0.9).high == pytest.approx(
        proportion_confint(3, 10, 0.1, "wilson")[1]
    )


def test_wilson_of_no_trials_is_undefined():
    assert wilson_interval(0, 0) == Undefined("no ratings")


# ---------------------------------------------------------------- buckets, rates, monotonicity

# leap 0: excellent excellent good good → 4/4 = 1.00, mean (1 + 1 + .7 + .7)/4 = .85
# leap 1: good miss miss okay          → 1/4 = .25, mean (.7 + .1 + .1 + .4)/4 = .325
# leap 2: excellent good good miss     → 3/4 = .75, mean (1 + .7 + .7 + .1)/4 = .625
# leap 3: miss miss miss miss          → 0/4 = 0,   mean .1
# Expecting "decreasing", 1 → 2 breaks the order (.25 < .75); Wilson 1/4 = [.0456, .6994] and
# 3/4 = [.3006, .9544] overlap, so the break is not beyond the CIs. The ends agree (leap 3's
# 0 < leap 0's 1).
BROKEN = {
    0: ["excellent", "excellent", "good", "good"],
    1: ["good", "miss", "miss", "okay"],
    2: ["excellent", "good", "good", "miss"],
    3: ["miss"] * 4,
}


def test_success_rate_per_distinct_value_worked_by_hand():
    report = correlate(*frames(BROKEN), CONFIG, "leap_distance")
    assert report.bucketing == "distinct" and report.feature == "leap_distance"
    assert [b.label for b in report.buckets] == ["0", "1", "2", "3"]
    assert [b.n for b in report.buckets] == [4, 4, 4, 4]
    assert [b.successes for b in report.buckets] == [4, 1, 3, 0]
    assert [b.success_rate for b in report.buckets] == [1.0, 0.25, 0.75, 0.0]
    assert [b.mean_score for b in report.buckets] == pytest.approx([0.85, 0.325, 0.625, 0.1])
    assert (round(report.buckets[1].ci.low, 4), round(report.buckets[1].ci.high, 4)) == (
        0.0456,
        0.6994,
    )
    assert report.n_ratings == 16 and report.dimensions == (Q,)


def test_monotonicity_flags_the_break_within_the_cis():
    check = correlate(*frames(BROKEN), CONFIG, "leap_distance").monotonicity
    assert check.expect == "decreasing" and check.monotonic is False
    (brk,) = check.breaks
    assert (brk.lower, brk.upper, brk.lower_rate, brk.upper_rate) == ("1", "2", 0.25, 0.75)
    assert brk.beyond_ci is False
    assert check.ends_as_expected is True


def test_monotonicity_break_beyond_the_cis_and_the_other_expectation():
    # leap 0: 0/10 → Wilson [0, .2775]; leap 1: 10/10 → [.7225, 1]: the intervals do not overlap.
    data = frames({0: ["miss"] * 10, 1: ["excellent"] * 10})
    decreasing = correlate(*data, CONFIG, "leap_distance").monotonicity
    assert [b.beyond_ci for b in decreasing.breaks] == [
        True
    ] and decreasing.ends_as_expected is False
    increasing = correlate(*data, CONFIG, "leap_distance", expect="increasing").monotonicity
    assert (
        increasing.monotonic is True
        and increasing.breaks == ()
        and increasing.ends_as_expected is True
    )
    # A monotone decreasing set, ties allowed: 1, .5, .5, 0 has no break.
    steady = frames(
        {0: ["good", "good"], 1: ["good", "miss"], 2: ["okay", "excellent"], 3: ["miss", "okay"]}
    )
    assert correlate(*steady, CONFIG, "leap_distance").monotonicity.monotonic is True


def test_monotonicity_skips_empty_buckets_and_needs_two():
    def bucket(label, k, n):
        return Bucket(
            label,
            0,
            0,
            n,
            n,
            k,
            k / n if n else Undefined("no ratings"),
            wilson_interval(k, n),
            Undefined("x"),
        )

    check = monotonicity([bucket("a", 1, 4), bucket("b", 0, 0), bucket("c", 3, 4)])
    assert [(b.lower, b.upper) for b in check.breaks] == [("a", "c")]
    lonely = monotonicity([bucket("a", 1, 4), bucket("b", 0, 0)])
    assert lonely.monotonic == Undefined("fewer than 2 non-empty buckets (1)")
    assert lonely.ends_as_expected == Undefined("fewer than 2 non-empty buckets (1)")


def test_more_than_ten_values_get_quintiles_and_an_int_gets_that_many_quantiles():
    # 20 items with leap 1…20: quintile edges (linear interpolation) 1, 4.8, 8.6, 12.4, 16.2, 20 → 4
    # per bucket.
    data = frames({float(v): ["good" if v <= 10 else "miss"] for v in range(1, 21)})
    report = correlate(*data, CONFIG, "leap_distance")
    assert report.bucketing == "quantile"
    assert [b.label for b in report.buckets] == [
        "[1, 4.8]",
        "(4.8, 8.6]",
        "(8.6, 12.4]",
        "(12.4, 16.2]",
        "(16.2, 20]",
    ]
    assert [b.n for b in report.buckets] == [4, 4, 4, 4, 4]
    assert [b.successes for b in report.buckets] == [
        4,
        4,
        2,
        0,
        0,
    ]  # 9, 10 good; 11, 12 miss in (8.6, 12.4]
    quartiles = correlate(
        *data, CONFIG, "leap_distance", buckets=4
    )  # edges 1, 5.75, 10.5, 15.25, 20
    assert [b.n for b in quartiles.buckets] == [5, 5, 5, 5]
    few = correlate(*frames({0: ["good"], 1: ["miss"]}), CONFIG, "leap_distance", buckets=3)
    # Two values, three quantiles: edges 0, 1/3, 2/3, 1 → the middle bucket (1/3, 2/3] is empty.
    assert [b.n for b in few.buckets] == [1, 0, 1]
    assert few.buckets[1].success_rate == Undefined("no ratings")


def test_explicit_edges_with_an_empty_bucket_and_values_outside():
    # Values 0, .5, 1, 5, 11 against edges 0 | 1 | 2 | 10: [0, 1] holds 3, (1, 2] none, (2, 10] one;
    # 11 is outside.
    data = frames({0: ["good"], 0.5: ["good"], 1: ["miss"], 5: ["miss"], 11: ["good"]})
    report = correlate(*data, CONFIG, "leap_distance", buckets=[0, 1, 2, 10])
    assert report.bucketing == "edges"
    assert [b.label for b in report.buckets] == ["[0, 1]", "(1, 2]", "(2, 10]"]
    assert [b.n for b in report.buckets] == [3, 0, 1]
    empty = report.buckets[1]
    assert empty.success_rate == Undefined("no ratings") and empty.ci == Undefined("no ratings")
    assert empty.mean_score == Undefined("no ratings")
    assert report.outside_buckets == 1 and report.n_ratings == 5
    assert report.monotonicity.monotonic is True  # 2/3 then 0/1, the empty bucket skipped
    assert_json_safe(report)


def test_bad_bucket_edges_and_expectations_are_errors():
    data = frames(BROKEN)
    with pytest.raises(HilbotError, match="not increasing"):
        correlate(*data, CONFIG, "leap_distance", buckets=[1, 1, 2])
    with pytest.raises(HilbotError, match="expect"):
        correlate(*data, CONFIG, "leap_distance", expect="sideways")


# ---------------------------------------------------------------- Spearman, success flags, items


def test_spearman_of_feature_and_human_score_worked_by_hand():
    # Feature 1…5; human 1.0 .7 .7 .4 .1 → ranks 5 3.5 3.5 2 1. Deviations from 3: x −2 −1 0 1 2,
    # y 2 .5 .5 −1 −2; Σxy = −9.5, Σx² = 10, Σy² = 9.5, ρ = −9.5/√95 = −0.974679.
    data = frames({1: ["excellent"], 2: ["good"], 3: ["good"], 4: ["okay"], 5: ["miss"]})
    result = correlate(*data, CONFIG, "leap_distance").spearman
    assert result.coefficient == pytest.approx(-9.5 / math.sqrt(95))
    assert result.n == 5 and result.ci.low < result.coefficient < result.ci.high


def test_spearman_counts_items_not_ratings_and_buckets_count_ratings():
    ratings, items = frames({1: ["excellent"], 2: ["good"], 3: ["okay"]})
    second = make_ratings([rating("i000", "miss", dimension=Q, reviewer="telegram:9")])
    both = pd.concat([ratings, second], ignore_index=True)
    report = correlate(both, items, CONFIG, "leap_distance")
    first = report.buckets[0]
    assert (first.n, first.n_items, first.successes) == (2, 1, 1)
    assert first.mean_score == pytest.approx(0.55)  # (1.0 + .1)/2
    assert report.spearman.n == 3 and report.spearman.coefficient == Undefined(
        "fewer than 4 pairs (n=3)"
    )


def test_success_uses_the_option_flag_then_score(tmp_path: Path):
    toml = tmp_path / "hilbot.toml"
    toml.write_text("""
[scales.quality]
question = "?"
options = [
  { value = "excellent", label = "E", key = "e", score = 1.0 },
  { value = "meh", label = "M", key = "m", score = 0.6, success = false },
  { value = "okay", label = "O", key = "o", score = 0.3, success = true },
]
""")
    config = load_config(toml)
    # excellent: no flag, 1.0 ≥ .5 → success; meh: flag false; okay: flag true; "legacy" (not an
    # option) .8 → success.
    ratings = make_ratings(
        [
            rating("a", "excellent", dimension=Q, score=1.0),
            rating("b", "meh", dimension=Q, score=0.6),
            rating("c", "okay", dimension=Q, score=0.3),
            rating("d", "legacy", dimension=Q, score=0.8),
        ]
    )
    items = make_items(
        [{"item_id": i, "feature_leap_distance": float(k)} for k, i in enumerate("abcd")],
        features=("leap_distance",),
    )
    buckets = correlate(ratings, items, config, "leap_distance").buckets
    assert [b.successes for b in buckets] == [1, 0, 1, 1]  # by score alone it would be 1, 1, 0, 1


def test_missing_feature_values_are_counted_not_bucketed():
    ratings, items = frames(BROKEN)
    items.loc[0, "feature_leap_distance"] = np.nan
    report = correlate(ratings, items, CONFIG, "feature_leap_distance")
    assert report.missing_feature == 1 and report.n_ratings == 15


def test_unknown_feature_lists_the_available_ones():
    ratings, items = frames(BROKEN)
    items["feature_tokens"] = 3.0
    with pytest.raises(HilbotError, match="unknown feature 'leap'") as caught:
        correlate(ratings, items, CONFIG, "leap")
    assert caught.value.fix == "use one of: leap_distance, tokens"
    with pytest.raises(HilbotError) as none:
        correlate(
            ratings, items.drop(columns=["feature_tokens", "feature_leap_distance"]), CONFIG, "leap"
        )
    assert "no feature_* columns" in none.value.fix


def test_no_ratings_and_one_value():
    ratings, items = frames(BROKEN)
    empty = correlate(ratings.head(0), items, CONFIG, "leap_distance")
    assert empty.buckets == () and empty.n_ratings == 0
    assert empty.monotonicity.monotonic == Undefined("fewer than 2 non-empty buckets (0)")
    assert empty.spearman.coefficient == Undefined("fewer than 4 pairs (n=0)")
    one = correlate(
        *frames({2: ["good", "miss", "okay", "good"]}), CONFIG, "leap_distance", buckets=5
    )
    assert [b.label for b in one.buckets] == [
        "2"
    ]  # one distinct value → one bucket, whatever was asked
    assert one.spearman.coefficient == Undefined("feature is constant (2 throughout)")
    assert_json_safe(empty)
    assert_json_safe(one)


# ---------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.integers(0, 30), st.sampled_from(["excellent", "good", "okay", "miss"])),
        min_size=1,
        max_size=40,
    ),
    buckets=st.sampled_from([None, 3, [0, 10, 20]]),
)
def test_buckets_partition_the_ratings_and_rates_sit_in_their_intervals(data, buckets):
    groups: dict[float, list[str]] = {}
    for value, judgment in data:
        groups.setdefault(float(value), []).append(judgment)
    report = correlate(*frames(groups), CONFIG, "leap_distance", buckets=buckets)
    assert (
        sum(b.n for b in report.buckets) + report.outside_buckets == report.n_ratings == len(data)
    )
    for b in report.buckets:
        if b.n:
            assert 0 <= b.ci.low <= b.success_rate <= b.ci.high <= 1
    assert_json_safe(report)


@settings(max_examples=25, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.integers(0, 12), st.sampled_from(["excellent", "good", "okay", "miss"])),
        min_size=1,
        max_size=25,
    ),
    seed=st.integers(0, 1000),
)
def test_reordering_and_relabelling_items_changes_nothing(data, seed):
    groups: dict[float, list[str]] = {}
    for value, judgment in data:
        groups.setdefault(float(value), []).append(judgment)
    ratings, items = frames(groups)
    names = {
        i: f"z{seed}-{k}"
        for k, i in enumerate(np.random.default_rng(seed).permutation(items["item_id"]))
    }
    shuffled = (
        ratings.assign(item_id=ratings["item_id"].map(names)).sample(frac=1, random_state=seed),
        items.assign(item_id=items["item_id"].map(names)).sample(frac=1, random_state=seed),
    )
    first = correlate(ratings, items, CONFIG, "leap_distance").to_dict()
    assert rounded(correlate(*shuffled, CONFIG, "leap_distance").to_dict()) == rounded(first)


# -------------------------------------------------- feature values: number text, categories, errors


def test_numbers_written_as_text_give_the_same_report_as_numbers():
    # The issue: one run wrote leap_distance 3, another "3". BROKEN again, with most values as text.
    numeric = correlate(*frames(BROKEN), CONFIG, "leap_distance").to_dict()
    spellings = {
        0: [0, "0", " 0 ", 0.0],
        1: ["1", 1, "1.0", "1e0"],
        2: [2, "2", "+2", np.int64(2)],
        3: ["3", "3.", 3.0, "3"],
    }
    pairs = [
        (spellings[value][k], judgment)
        for value, judgments in BROKEN.items()
        for k, judgment in enumerate(judgments)
    ]
    mixed = correlate(*raw_frames(pairs), CONFIG, "leap_distance")
    assert mixed.kind == "numeric" and mixed.order == ()
    assert mixed.to_dict() == numeric
    assert [b.label for b in mixed.buckets] == ["0", "1", "2", "3"]


@settings(max_examples=30, deadline=None)
@given(
    data=st.lists(
        st.tuples(
            st.integers(-5, 40),
            st.sampled_from(["excellent", "good", "okay", "miss"]),
            st.sampled_from([int, float, str, lambda v: f" {float(v)} "]),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_any_mix_of_number_spellings_is_the_numeric_report(data):
    groups: dict[float, list[tuple[str, object]]] = {}
    for value, judgment, spell in data:
        groups.setdefault(float(value), []).append((judgment, spell))
    expected = correlate(
        *frames({v: [j for j, _ in rows] for v, rows in groups.items()}), CONFIG, "leap_distance"
    )
    spelled = [(spell(int(v)), j) for v, rows in groups.items() for j, spell in rows]
    assert rounded(correlate(*raw_frames(spelled), CONFIG, "leap_distance").to_dict()) == rounded(
        expected.to_dict()
    )


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, np.nan),
        (np.nan, np.nan),
        ("", np.nan),
        ("   ", np.nan),  # missing
        (3, 3.0),
        ("3", 3.0),
        (" -2.5 ", -2.5),
        ("1e3", 1000.0),
        (".5", 0.5),
        (np.float32(0.5), 0.5),
    ],
)
def test_number_coercion_and_missing_values(value, expected):
    result = coerce_feature(pd.Series([value, 1], dtype=object), "f")
    assert result.kind == "numeric"
    assert result.values.tolist()[0] == pytest.approx(expected, nan_ok=True)


@pytest.mark.parametrize(
    "value", ["huge", "1_000", "inf", "nan-ish", "0x10", True, float("inf"), 10**400, [1]]
)
def test_a_value_that_is_no_number_and_no_known_label_is_a_one_line_feature_error(value):
    with pytest.raises(FeatureError) as caught:
        coerce_feature(pd.Series([1, value, 2], dtype=object), "leap_distance")
    error = caught.value
    assert isinstance(error, HilbotError) and error.exit_code == 2
    assert "'leap_distance'" in error.what and "\n" not in str(error)
    assert error.fix.startswith("give the order of its values in --order")


def test_the_error_names_the_feature_and_an_example_bad_value():
    ratings, items = raw_frames([(1, "good"), ("3", "miss"), ("huge", "miss"), ("none", "good")])
    with pytest.raises(FeatureError) as caught:
        correlate(ratings, items, CONFIG, "leap_distance")
    assert str(caught.value) == (
        "feature 'leap_distance' has text values that are neither numbers nor labels of one known "
        "order, e.g. 'huge' — give the order of its values in --order, lowest first and "
        "comma-separated (e.g. --order none,small,medium,large,max), or in [features.<name>] order "
        "= [...] in hilbot.toml, or correct the values in the run files"
    )
    # Known labels mixed with numbers are no order either: the error shows one of each.
    with pytest.raises(
        FeatureError, match=r"mixes numbers and category labels, e\.g\. 3 and 'large'"
    ):
        coerce_feature(pd.Series(["3", "large", None], dtype=object), "leap_distance")
    # Labels of two different built-in orders (small … large, low … high) are not mixed.
    with pytest.raises(FeatureError, match="e.g. 'high'"):
        coerce_feature(pd.Series(["small", "high"], dtype=object), "leap_distance")
    # A hostile value is shown safely and briefly.
    with pytest.raises(FeatureError) as hostile:
        coerce_feature(pd.Series(["\x1b[31mred" + "x" * 500], dtype=object), "leap_distance")
    assert "\x1b" not in str(hostile.value) and len(str(hostile.value)) < 400


def test_category_labels_use_the_built_in_order_worked_by_hand():
    # Labels none, small, small, large, max → positions 0 1 1 3 4; human 1.0 .7 .4 .4 .1 (excellent
    # good okay okay miss). Ranks x: 1 2.5 2.5 4 5, y: 5 4 2.5 2.5 1; deviations from 3:
    # x −2 −.5 −.5 1 2, y 2 1 −.5 −.5 −2;
    # Σxy = −4 − .5 + .25 − .5 − 4 = −8.75, Σx² = Σy² = 9.5, ρ = −8.75/9.5 = −0.921053.
    pairs = [
        ("none", "excellent"),
        ("Small", "good"),
        (" small ", "okay"),
        ("LARGE", "okay"),
        ("max", "miss"),
    ]
    report = correlate(*raw_frames(pairs), CONFIG, "leap_distance")
    assert report.kind == "ordinal" and report.order == ORDERS[0] == (
        "none",
        "small",
        "medium",
        "large",
        "max",
    )
    assert report.bucketing == "categories"
    assert [(b.label, b.low, b.n) for b in report.buckets] == [
        ("none", 0, 1),
        ("small", 1, 2),
        ("large", 3, 1),
        ("max", 4, 1),
    ]
    assert report.spearman.coefficient == pytest.approx(-8.75 / 9.5)
    # Cross-check from the explicit arrays (any increasing coding of the categories gives the same
    # ρ).
    assert report.spearman.coefficient == pytest.approx(
        stats.spearmanr([0, 1, 1, 3, 4], [1.0, 0.7, 0.4, 0.4, 0.1]).statistic
    )
    assert report.spearman.coefficient == pytest.approx(
        stats.spearmanr([10, 20, 20, 70, 99], [1.0, 0.7, 0.4, 0.4, 0.1]).statistic
    )
    assert report.spearman.n == 5
    assert_json_safe(report)


def test_a_category_feature_is_the_numeric_report_relabelled():
    labels = {0: "none", 1: "small", 2: "medium", 3: "large"}
    numeric = correlate(*frames(BROKEN), CONFIG, "leap_distance")
    ordinal = correlate(
        *raw_frames([(labels[v], j) for v, j in as_pairs(BROKEN)]), CONFIG, "leap_distance"
    )
    assert [b.label for b in ordinal.buckets] == ["none", "small", "medium", "large"]
    strip = lambda b: {k: v for k, v in b.to_dict().items() if k != "label"}  # noqa: E731
    assert [strip(b) for b in ordinal.buckets] == [strip(b) for b in numeric.buckets]
    assert ordinal.spearman == numeric.spearman
    (brk,) = ordinal.monotonicity.breaks
    assert (brk.lower, brk.upper) == ("small", "medium")
    # The other built-in order: low … high.
    levels = {0: "none", 1: "low", 2: "medium", 3: "high"}
    other = correlate(
        *raw_frames([(levels[v], j) for v, j in as_pairs(BROKEN)]), CONFIG, "leap_distance"
    )
    assert other.order == ORDERS[1] and other.spearman == numeric.spearman


def test_a_given_order_orders_any_labels_and_decides_the_direction():
    pairs = [
        ("tiny", "excellent"),
        ("short", "good"),
        ("short", "okay"),
        ("long", "okay"),
        ("huge", "miss"),
    ]
    data = raw_frames(pairs)
    with pytest.raises(FeatureError, match="e.g. 'tiny'"):
        correlate(*data, CONFIG, "leap_distance")
    report = correlate(
        *data, CONFIG, "leap_distance", order=["tiny", "short", "medium", "long", "huge"]
    )
    assert report.order == ("tiny", "short", "medium", "long", "huge")
    assert [b.label for b in report.buckets] == ["tiny", "short", "long", "huge"]
    assert (
        correlate(*data, CONFIG, "leap_distance", order="tiny, short,medium,long,huge,") == report
    )  # one string
    assert report.spearman.coefficient == pytest.approx(
        -8.75 / 9.5
    )  # the hand-worked example above
    backwards = correlate(
        *data, CONFIG, "leap_distance", order=["huge", "long", "medium", "short", "tiny"]
    )
    assert backwards.spearman.coefficient == pytest.approx(8.75 / 9.5)
    assert [b.label for b in backwards.buckets] == ["huge", "long", "short", "tiny"]
    # A given order overrides the built-in one, and may list numbers (matched by value).
    assert (
        correlate(
            *raw_frames([("max", "good"), ("none", "miss")]),
            CONFIG,
            "leap_distance",
            order=["max", "none"],
        )
        .buckets[0]
        .label
        == "max"
    )
    numbered = correlate(
        *raw_frames([(3, "good"), ("1", "miss"), (2.0, "okay")]),
        CONFIG,
        "leap_distance",
        order=["3", "2", "1"],
    )
    assert [b.label for b in numbered.buckets] == ["3", "2", "1"] and numbered.kind == "ordinal"


@pytest.mark.parametrize(
    "order, message",
    [
        (["tiny", "short"], "the value 'long', which is not in the given order (tiny, short)"),
        (["tiny", "short", "Tiny", "long"], "--order lists 'Tiny' twice"),
        (["tiny"], "--order has 1 value"),
        ([], "--order has 0 values"),
        (["tiny", " ", "long"], "--order has an empty value"),
    ],
)
def test_a_bad_given_order_is_a_one_line_error(order, message):
    with pytest.raises(FeatureError) as caught:
        correlate(
            *raw_frames([("tiny", "good"), ("long", "miss")]), CONFIG, "leap_distance", order=order
        )
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_category_features_count_missing_values_refuse_buckets_and_name_a_constant():
    pairs = [("none", "good"), (None, "miss"), ("", "okay"), ("small", "miss"), (np.nan, "good")]
    report = correlate(*raw_frames(pairs), CONFIG, "leap_distance")
    assert (
        report.missing_feature == 3
        and report.n_ratings == 2
        and [b.n for b in report.buckets] == [1, 1]
    )
    with pytest.raises(FeatureError, match="--buckets does not apply"):
        correlate(*raw_frames(pairs), CONFIG, "leap_distance", buckets=3)
    constant = correlate(
        *raw_frames([("medium", j) for j in ("good", "miss", "okay", "good")]),
        CONFIG,
        "leap_distance",
    )
    assert constant.spearman.coefficient == Undefined("feature is constant (medium throughout)")


# ------------------------------------------------------------- end to end: runs written differently


def _set_feature(store: Store, run_id: str, spell) -> None:
    """Rewrite a run file's leap_distance values through ``spell`` (as another source system would
    write them)."""
    path = store.run_path(run_id)
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for record in records:
        features = (
            record.get("data", {}).get("features")
            if record.get("type") == "query_evaluation"
            else None
        )
        if features and "leap_distance" in features:
            features["leap_distance"] = spell(features["leap_distance"])
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture
def two_runs(store: Store) -> Store:
    from analysis.synthetic import write_synthetic

    write_synthetic(store, ratings=1200, runs=2, items_per_run=50, reviewers=4, seed=5)
    return store


LABELS = ("none", "small", "medium", "large", "max")


def test_cli_numbers_in_one_run_and_number_text_in_another(two_runs, run_cli):
    args = ("analyze", "correlate", "--feature", "leap_distance", "--format", "json")
    numeric = run_cli(*args)
    assert numeric.returncode == 0, numeric.stderr
    first, second = sorted(two_runs.run_ids())
    _set_feature(two_runs, second, str)  # 3 → "3"
    mixed = run_cli(*args)
    assert mixed.returncode == 0 and "Traceback" not in mixed.stderr, mixed.stderr
    assert json.loads(mixed.stdout) == json.loads(numeric.stdout)
    assert [b["label"] for b in json.loads(mixed.stdout)["buckets"]] == ["0", "1", "2", "3", "4"]


def test_cli_category_labels_with_the_built_in_or_a_given_order(two_runs, run_cli):
    args = ("analyze", "correlate", "--feature", "leap_distance", "--format", "json")
    numeric = json.loads(run_cli(*args).stdout)
    for run_id in two_runs.run_ids():
        _set_feature(two_runs, run_id, lambda v: LABELS[v])
    labelled = json.loads(run_cli(*args).stdout)
    assert labelled["kind"] == "ordinal" and labelled["bucketing"] == "categories"
    assert [b["label"] for b in labelled["buckets"]] == list(LABELS)
    assert [b["n"] for b in labelled["buckets"]] == [b["n"] for b in numeric["buckets"]]
    assert [b["successes"] for b in labelled["buckets"]] == [
        b["successes"] for b in numeric["buckets"]
    ]
    assert labelled["spearman"] == numeric["spearman"]
    relabel = {str(k): label for k, label in enumerate(LABELS)}
    assert labelled["monotonicity"]["breaks"] == [
        {**b, "lower": relabel[b["lower"]], "upper": relabel[b["upper"]]}
        for b in numeric["monotonicity"]["breaks"]
    ]
    # Labels no built-in order knows: exit 2, one line naming the feature and a value; --order fixes
    # it.
    own = ("nil", "hop", "skip", "jump", "vault")
    for run_id in two_runs.run_ids():
        _set_feature(two_runs, run_id, lambda v: own[LABELS.index(v)])
    refused = run_cli(*args)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert (
        "feature 'leap_distance'" in line
        and "e.g. '" in line
        and "give the order of its values in --order" in line
    )
    ordered = run_cli(*args, "--order", " nil, hop,skip ,jump,vault,")
    assert ordered.returncode == 0, ordered.stderr
    assert json.loads(ordered.stdout)["spearman"] == numeric["spearman"]
    markdown = run_cli(
        "analyze", "correlate", "--feature", "leap_distance", "--order", ",".join(own)
    )
    assert "| nil |" in markdown.stdout and "buckets: categories" in markdown.stdout


def test_the_order_can_live_in_the_config(two_runs, run_cli, tmp_path):
    own = ("nil", "hop", "skip", "jump", "vault")
    args = ("analyze", "correlate", "--feature", "leap_distance", "--format", "json")
    numeric = json.loads(run_cli(*args).stdout)
    for run_id in two_runs.run_ids():
        _set_feature(two_runs, run_id, lambda v: own[v])
    (tmp_path / "hilbot.toml").write_text(
        f"[features.leap_distance]\norder = {json.dumps(list(own))}\n"
    )
    configured = run_cli(*args)
    assert configured.returncode == 0, configured.stderr
    assert json.loads(configured.stdout)["spearman"] == numeric["spearman"]
    (tmp_path / "hilbot.toml").write_text(
        '[features.leap_distance]\norder = ["nil", "NIL", "hop"]\n'
    )
    refused = run_cli(*args)
    assert refused.returncode == 2 and "features.<name>.order" in refused.stderr


def test_cli_numbers_mixed_with_labels_is_one_line_exit_2(two_runs, run_cli):
    first, second = sorted(two_runs.run_ids())
    _set_feature(two_runs, second, lambda v: LABELS[v])
    result = run_cli("analyze", "correlate", "--feature", "leap_distance")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "mixes numbers and category labels" in line and "'leap_distance'" in line
    # One run alone is fine either way.
    assert (
        run_cli("analyze", "correlate", "--feature", "leap_distance", "--run", second).returncode
        == 0
    )
    assert (
        run_cli("analyze", "correlate", "--feature", "leap_distance", "--run", first).returncode
        == 0
    )
