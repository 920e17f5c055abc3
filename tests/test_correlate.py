"""`analysis.correlate`: success rate by bucket of a feature, Wilson intervals, monotonicity, Spearman ρ.

The quality scale: excellent 1.0 and good .7 are successes (``success = true``); okay .4 and miss .1
are not (no flag, score < .5).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis._undefined import Undefined
from analysis.correlate import Bucket, correlate, monotonicity, wilson_interval
from evaluation import HilbotError, load_config

from .test_calibration import CONFIG, assert_json_safe, make_items, make_ratings, rating, rounded

Q = "quality"


def frames(groups: dict[float, list[str]], feature: str = "leap_distance"):
    """One item per judgment, its feature the dict key (one rating each, on the quality dimension)."""
    ratings, items = [], []
    for value, judgments in groups.items():
        for judgment in judgments:
            item = f"i{len(items):03d}"
            ratings.append(rating(item, judgment, dimension=Q))
            items.append({"item_id": item, f"feature_{feature}": value, "ai_overall": 0.5})
    return make_ratings(ratings), make_items(items, features=(feature,))


# ---------------------------------------------------------------- Wilson intervals


@pytest.mark.parametrize("k, n, low, high", [
    # Newcombe (1998), Statistics in Medicine 17:857–872, Table I, method 3 (Wilson score, no correction).
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),  # for k = 0 the upper bound is z²/(n + z²) = 3.8415/23.8415 = 0.16112
    (1, 29, 0.0061, 0.1718),
    (29, 29, 0.8830, 1.0000),
])
def test_wilson_matches_newcombes_published_intervals(k, n, low, high):
    interval = wilson_interval(k, n)
    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)
    assert interval.method == "wilson" and interval.level == 0.95


def test_wilson_matches_statsmodels_on_a_grid():
    from statsmodels.stats.proportion import proportion_confint

    for n in (1, 2, 5, 13, 50):
        for k in range(n + 1):
            interval = wilson_interval(k, n)
            low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
            assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-12)
    assert wilson_interval(3, 10, level=0.9).high == pytest.approx(proportion_confint(3, 10, 0.1, "wilson")[1])


def test_wilson_of_no_trials_is_undefined():
    assert wilson_interval(0, 0) == Undefined("no ratings")


# ---------------------------------------------------------------- buckets, rates, monotonicity

# leap 0: excellent excellent good good → 4/4 = 1.00, mean (1 + 1 + .7 + .7)/4 = .85
# leap 1: good miss miss okay          → 1/4 = .25, mean (.7 + .1 + .1 + .4)/4 = .325
# leap 2: excellent good good miss     → 3/4 = .75, mean (1 + .7 + .7 + .1)/4 = .625
# leap 3: miss miss miss miss          → 0/4 = 0,   mean .1
# Expecting "decreasing", 1 → 2 breaks the order (.25 < .75); Wilson 1/4 = [.0456, .6994] and
# 3/4 = [.3006, .9544] overlap, so the break is not beyond the CIs. The ends agree (leap 3's 0 < leap 0's 1).
BROKEN = {0: ["excellent", "excellent", "good", "good"], 1: ["good", "miss", "miss", "okay"],
          2: ["excellent", "good", "good", "miss"], 3: ["miss"] * 4}


def test_success_rate_per_distinct_value_worked_by_hand():
    report = correlate(*frames(BROKEN), CONFIG, "leap_distance")
    assert report.bucketing == "distinct" and report.feature == "leap_distance"
    assert [b.label for b in report.buckets] == ["0", "1", "2", "3"]
    assert [b.n for b in report.buckets] == [4, 4, 4, 4]
    assert [b.successes for b in report.buckets] == [4, 1, 3, 0]
    assert [b.success_rate for b in report.buckets] == [1.0, 0.25, 0.75, 0.0]
    assert [b.mean_score for b in report.buckets] == pytest.approx([0.85, 0.325, 0.625, 0.1])
    assert (round(report.buckets[1].ci.low, 4), round(report.buckets[1].ci.high, 4)) == (0.0456, 0.6994)
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
    assert [b.beyond_ci for b in decreasing.breaks] == [True] and decreasing.ends_as_expected is False
    increasing = correlate(*data, CONFIG, "leap_distance", expect="increasing").monotonicity
    assert increasing.monotonic is True and increasing.breaks == () and increasing.ends_as_expected is True
    # A monotone decreasing set, ties allowed: 1, .5, .5, 0 has no break.
    steady = frames({0: ["good", "good"], 1: ["good", "miss"], 2: ["okay", "excellent"], 3: ["miss", "okay"]})
    assert correlate(*steady, CONFIG, "leap_distance").monotonicity.monotonic is True


def test_monotonicity_skips_empty_buckets_and_needs_two():
    def bucket(label, k, n):
        return Bucket(label, 0, 0, n, n, k, k / n if n else Undefined("no ratings"), wilson_interval(k, n),
                      Undefined("x"))

    check = monotonicity([bucket("a", 1, 4), bucket("b", 0, 0), bucket("c", 3, 4)])
    assert [(b.lower, b.upper) for b in check.breaks] == [("a", "c")]
    lonely = monotonicity([bucket("a", 1, 4), bucket("b", 0, 0)])
    assert lonely.monotonic == Undefined("fewer than 2 non-empty buckets (1)")
    assert lonely.ends_as_expected == Undefined("fewer than 2 non-empty buckets (1)")


def test_more_than_ten_values_get_quintiles_and_an_int_gets_that_many_quantiles():
    # 20 items with leap 1…20: quintile edges (linear interpolation) 1, 4.8, 8.6, 12.4, 16.2, 20 → 4 per bucket.
    data = frames({float(v): ["good" if v <= 10 else "miss"] for v in range(1, 21)})
    report = correlate(*data, CONFIG, "leap_distance")
    assert report.bucketing == "quantile"
    assert [b.label for b in report.buckets] == ["[1, 4.8]", "(4.8, 8.6]", "(8.6, 12.4]", "(12.4, 16.2]", "(16.2, 20]"]
    assert [b.n for b in report.buckets] == [4, 4, 4, 4, 4]
    assert [b.successes for b in report.buckets] == [4, 4, 2, 0, 0]  # 9, 10 good; 11, 12 miss in (8.6, 12.4]
    quartiles = correlate(*data, CONFIG, "leap_distance", buckets=4)  # edges 1, 5.75, 10.5, 15.25, 20
    assert [b.n for b in quartiles.buckets] == [5, 5, 5, 5]
    few = correlate(*frames({0: ["good"], 1: ["miss"]}), CONFIG, "leap_distance", buckets=3)
    # Two values, three quantiles: edges 0, 1/3, 2/3, 1 → the middle bucket (1/3, 2/3] is empty.
    assert [b.n for b in few.buckets] == [1, 0, 1]
    assert few.buckets[1].success_rate == Undefined("no ratings")


def test_explicit_edges_with_an_empty_bucket_and_values_outside():
    # Values 0, .5, 1, 5, 11 against edges 0 | 1 | 2 | 10: [0, 1] holds 3, (1, 2] none, (2, 10] one; 11 is outside.
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
    assert report.spearman.n == 3 and report.spearman.coefficient == Undefined("fewer than 4 pairs (n=3)")


def test_success_uses_the_option_flag_then_score(tmp_path: Path):
    toml = tmp_path / "hilbot.toml"
    toml.write_text('''
[scales.quality]
question = "?"
options = [
  { value = "excellent", label = "E", key = "e", score = 1.0 },
  { value = "meh", label = "M", key = "m", score = 0.6, success = false },
  { value = "okay", label = "O", key = "o", score = 0.3, success = true },
]
''')
    config = load_config(toml)
    # excellent: no flag, 1.0 ≥ .5 → success; meh: flag false; okay: flag true; "legacy" (not an option) .8 → success.
    ratings = make_ratings([rating("a", "excellent", dimension=Q, score=1.0), rating("b", "meh", dimension=Q, score=0.6),
                            rating("c", "okay", dimension=Q, score=0.3), rating("d", "legacy", dimension=Q, score=0.8)])
    items = make_items([{"item_id": i, "feature_leap_distance": float(k)} for k, i in enumerate("abcd")],
                       features=("leap_distance",))
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
        correlate(ratings, items.drop(columns=["feature_tokens", "feature_leap_distance"]), CONFIG, "leap")
    assert "no feature_* columns" in none.value.fix


def test_no_ratings_and_one_value():
    ratings, items = frames(BROKEN)
    empty = correlate(ratings.head(0), items, CONFIG, "leap_distance")
    assert empty.buckets == () and empty.n_ratings == 0
    assert empty.monotonicity.monotonic == Undefined("fewer than 2 non-empty buckets (0)")
    assert empty.spearman.coefficient == Undefined("fewer than 4 pairs (n=0)")
    one = correlate(*frames({2: ["good", "miss", "okay", "good"]}), CONFIG, "leap_distance", buckets=5)
    assert [b.label for b in one.buckets] == ["2"]  # one distinct value → one bucket, whatever was asked
    assert one.spearman.coefficient == Undefined("feature is constant (2 throughout)")
    assert_json_safe(empty)
    assert_json_safe(one)


# ---------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None)
@given(data=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(["excellent", "good", "okay", "miss"])),
                     min_size=1, max_size=40),
       buckets=st.sampled_from([None, 3, [0, 10, 20]]))
def test_buckets_partition_the_ratings_and_rates_sit_in_their_intervals(data, buckets):
    groups: dict[float, list[str]] = {}
    for value, judgment in data:
        groups.setdefault(float(value), []).append(judgment)
    report = correlate(*frames(groups), CONFIG, "leap_distance", buckets=buckets)
    assert sum(b.n for b in report.buckets) + report.outside_buckets == report.n_ratings == len(data)
    for b in report.buckets:
        if b.n:
            assert 0 <= b.ci.low <= b.success_rate <= b.ci.high <= 1
    assert_json_safe(report)


@settings(max_examples=25, deadline=None)
@given(data=st.lists(st.tuples(st.integers(0, 12), st.sampled_from(["excellent", "good", "okay", "miss"])),
                     min_size=1, max_size=25), seed=st.integers(0, 1000))
def test_reordering_and_relabelling_items_changes_nothing(data, seed):
    groups: dict[float, list[str]] = {}
    for value, judgment in data:
        groups.setdefault(float(value), []).append(judgment)
    ratings, items = frames(groups)
    names = {i: f"z{seed}-{k}" for k, i in enumerate(np.random.default_rng(seed).permutation(items["item_id"]))}
    shuffled = (ratings.assign(item_id=ratings["item_id"].map(names)).sample(frac=1, random_state=seed),
                items.assign(item_id=items["item_id"].map(names)).sample(frac=1, random_state=seed))
    first = correlate(ratings, items, CONFIG, "leap_distance").to_dict()
    assert rounded(correlate(*shuffled, CONFIG, "leap_distance").to_dict()) == rounded(first)
