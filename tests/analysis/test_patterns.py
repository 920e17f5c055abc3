"""`analysis.patterns`: distribution, success by source type / category / concern, drift and
regressed patterns.

The quality scale: excellent 1.0 and good .7 are successes; okay .4 and miss .1 are not.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.patterns import patterns
from analysis.stats import Undefined
from evaluation import HilbotError
from tests.analysis.test_calibration import (
    CONFIG,
    T0,
    assert_json_safe,
    make_concerns,
    make_items,
    make_ratings,
    rating,
    rounded,
)

Q = "quality"
ALICE, BOB = "terminal:alice", "telegram:7"
NO_TAG = Undefined("no rating carries this tag")


def day(n: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(days=n)


def utc(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=timezone.utc)


# ---------------------------------------------------------------- one small set worked by hand


#   rating  item  judgment   score  rating source  → source type    item category
#   r1      i1    excellent  1.0    –                chat (item's)   macro
#   r2      i2    good        .7    transcript       transcript      macro   (item says tweet; the rating wins)
#   r3      i3    okay        .4    –                None            micro
#   r4      i4    miss        .1    –                article         None
#   r5      i1    miss        .1    – (bob)          chat            macro
#   r6      i2    okay        .4    transcript (bob) transcript      macro
def small():
    items = make_items(
        [
            {"item_id": "i1", "category": "macro", "source_type": "chat"},
            {"item_id": "i2", "category": "macro", "source_type": "tweet"},
            {"item_id": "i3", "category": "micro"},
            {"item_id": "i4", "source_type": "article"},
        ]
    )
    ratings = make_ratings(
        [
            rating("i1", "excellent", dimension=Q),
            rating("i2", "good", dimension=Q, source_type="transcript"),
            rating("i3", "okay", dimension=Q),
            rating("i4", "miss", dimension=Q),
            rating("i1", "miss", dimension=Q, reviewer=BOB),
            rating("i2", "okay", dimension=Q, reviewer=BOB, source_type="transcript"),
        ]
    )
    concerns = make_concerns(
        [
            {"item_id": "i3", "dimension": Q, "tag": "thesis_unclear"},
            {"item_id": "i3", "dimension": Q, "tag": "lacks_catalyst"},
            {"item_id": "i4", "dimension": Q, "tag": "lacks_catalyst"},
            {"item_id": "i1", "dimension": Q, "reviewer": BOB, "tag": "lacks_catalyst"},
            {"item_id": "i2", "dimension": Q, "reviewer": BOB, "tag": "custom_tag"},
            {
                "item_id": "i2",
                "dimension": Q,
                "reviewer": "slack:carol",
                "tag": "lacks_catalyst",
            },  # no current rating
            {"item_id": "i1", "dimension": "overall", "tag": "bad_ranking"},  # another dimension
        ]
    )
    return ratings, items, concerns


def test_distribution_and_overall_worked_by_hand():
    (dim,) = patterns(*small(), CONFIG).dimensions
    assert dim.dimension == Q and dim.n == 6
    # excellent 1, good 1, okay 2, miss 2 (best first) → 1/6, 1/6, 2/6, 2/6.
    assert [(j.value, j.count) for j in dim.distribution] == [
        ("excellent", 1),
        ("good", 1),
        ("okay", 2),
        ("miss", 2),
    ]
    assert [j.share for j in dim.distribution] == pytest.approx([1 / 6, 1 / 6, 1 / 3, 1 / 3])
    # 2 successes of 6; mean (1 + .7 + .4 + .1 + .1 + .4)/6 = 2.7/6 = .45.
    assert (dim.overall.n, dim.overall.successes) == (6, 2)
    assert dim.overall.success_rate == pytest.approx(
        1 / 3
    ) and dim.overall.mean_score == pytest.approx(0.45)


def test_by_source_type_prefers_the_ratings_own_source():
    (dim,) = patterns(*small(), CONFIG).dimensions
    # article r4 0/1 .1; chat r1 r5 1/2 (1 + .1)/2 = .55; transcript r2 r6 1/2 (.7 + .4)/2 = .55;
    # None r3 0/1 .4.
    got = [(g.key, g.n, g.successes, round(g.mean_score, 9)) for g in dim.by_source_type]
    assert got == [
        ("article", 1, 0, 0.1),
        ("chat", 2, 1, 0.55),
        ("transcript", 2, 1, 0.55),
        (None, 1, 0, 0.4),
    ]
    chat = dim.by_source_type[1]
    assert (round(chat.ci.low, 4), round(chat.ci.high, 4)) == (0.0945, 0.9055)  # Wilson 1/2


def test_by_category_worked_by_hand():
    (dim,) = patterns(*small(), CONFIG).dimensions
    # macro r1 r2 r5 r6: 2/4, (1 + .7 + .1 + .4)/4 = .55; micro r3: 0/1 .4; None r4: 0/1 .1.
    got = [(g.key, g.n, g.successes, round(g.mean_score, 9)) for g in dim.by_category]
    assert got == [("macro", 4, 2, 0.55), ("micro", 1, 0, 0.4), (None, 1, 0, 0.1)]


def test_concern_tags_count_share_and_mean_score():
    (dim,) = patterns(*small(), CONFIG).dimensions
    tags = {c.tag: c for c in dim.by_concern}
    # lacks_catalyst on r3 (.4), r4 (.1), r5 (.1): 3 of 6 ratings, mean .2, no success.
    # carol's tag has no current rating and "bad_ranking" is on another dimension: neither counts.
    lacks = tags["lacks_catalyst"]
    assert (lacks.count, lacks.share, lacks.success_rate) == (3, 0.5, 0.0)
    assert lacks.mean_score == pytest.approx(0.2)
    assert (tags["thesis_unclear"].count, tags["thesis_unclear"].mean_score) == (1, 0.4)
    assert tags["custom_tag"].count == 1  # in use though the dimension does not offer it
    assert tags["tick_too_risky"].count == 0 and tags["tick_too_risky"].share == 0.0
    assert tags["tick_too_risky"].mean_score == NO_TAG
    assert "bad_ranking" not in tags
    assert [c.tag for c in dim.by_concern] == [
        "lacks_catalyst",
        "custom_tag",
        "thesis_unclear",
        "conviction_too_high",
        "leap_unjustified",
        "missing_market_data",
        "tick_too_risky",
    ]


def test_unknown_judgments_are_listed_after_the_scale():
    ratings, items, concerns = small()
    extra = make_ratings([rating("i3", "legacy", dimension=Q, reviewer=BOB, score=0.9)])
    (dim,) = patterns(
        pd.concat([ratings, extra], ignore_index=True), items, concerns, CONFIG
    ).dimensions
    assert [j.value for j in dim.distribution][-1] == "legacy"
    assert dim.overall.successes == 3  # "legacy" is no option: its score .9 ≥ .5 makes it a success


def test_an_unconfigured_dimension_is_described_from_the_log():
    # tone, in no configuration: mean scores warm .9, aloof (.3, .5) → .4, cold .1, and "blank" (no
    # score) last
    ratings = make_ratings(
        [
            rating("i1", "aloof", dimension="tone", score=0.3),
            rating("i2", "warm", dimension="tone", score=0.9),
            rating("i3", "cold", dimension="tone", score=0.1),
            rating("i4", "aloof", dimension="tone", score=0.5),
            rating("i1", "blank", dimension="tone", score=float("nan"), reviewer=BOB),
        ]
    )
    concerns = make_concerns([{"item_id": "i3", "dimension": "tone", "tag": "too_formal"}])
    items = small()[1]
    (dim,) = patterns(ratings, items, concerns, CONFIG).dimensions
    assert dim.dimension == "tone" and dim.scale is None
    assert [(j.value, j.count) for j in dim.distribution] == [
        ("warm", 1),
        ("aloof", 2),
        ("cold", 1),
        ("blank", 1),
    ]
    assert dim.notes == (
        (
            "dimension 'tone' is not configured: judgments ordered by their mean score, best "
            "first; a rating succeeds when its score ≥ 0.5"
        ),
    )
    assert dim.overall.successes == 2  # warm .9 and aloof .5
    assert [(c.tag, c.count) for c in dim.by_concern] == [
        ("too_formal", 1)
    ]  # in use, though none is offered
    assert_json_safe(patterns(ratings, items, concerns, CONFIG))
    (configured,) = patterns(small()[0], items, small()[2], CONFIG).dimensions
    assert configured.scale == Q and configured.notes == ()


def test_a_dimension_neither_configured_nor_rated_is_a_clear_error():
    ratings, items, concerns = small()
    with pytest.raises(
        HilbotError, match="no ratings on dimension 'qualty', and hilbot.toml does not define it"
    ) as caught:
        patterns(ratings, items, concerns, CONFIG, dimension="qualty")
    assert "use one of" in caught.value.fix and Q in caught.value.fix
    with pytest.raises(HilbotError, match="in run 'run-b'"):
        patterns(ratings, items, concerns, CONFIG, run="run-b", dimension="tone")


# ---------------------------------------------------------------- drift


def test_drift_per_window_with_an_empty_week():
    # Anchor: 2025-03-03 00:00 UTC (the day of the first rating). Days 0 and 1 → week 1 (excellent,
    # good: 2/2, mean .85); nothing in week 2; days 15 and 16 → week 3 (miss, okay: 0/2, mean .25).
    ratings = make_ratings(
        [
            rating("a", "excellent", dimension=Q, timestamp=day(0)),
            rating("b", "good", dimension=Q, timestamp=day(1)),
            rating("c", "miss", dimension=Q, timestamp=day(15)),
            rating("d", "okay", dimension=Q, timestamp=day(16)),
        ]
    )
    items = make_items([{"item_id": i} for i in "abcd"])
    (dim,) = patterns(ratings, items, make_concerns([]), CONFIG).dimensions
    assert [(w.start, w.end) for w in dim.drift] == [
        (utc(2025, 3, 3), utc(2025, 3, 10)),
        (utc(2025, 3, 10), utc(2025, 3, 17)),
        (utc(2025, 3, 17), utc(2025, 3, 24)),
    ]
    assert [w.n for w in dim.drift] == [2, 0, 2]
    assert dim.drift[0].success_rate == 1.0 and dim.drift[0].mean_score == pytest.approx(0.85)
    assert dim.drift[1].success_rate == Undefined("no ratings") and dim.drift[1].ci == Undefined(
        "no ratings"
    )
    assert dim.drift[2].judgments == {"miss": 1, "okay": 1} and dim.drift[
        2
    ].mean_score == pytest.approx(0.25)
    daily = patterns(ratings, items, make_concerns([]), CONFIG, window_days=1).dimensions[0]
    assert len(daily.drift) == 17 and sum(w.n for w in daily.drift) == 4
    data = assert_json_safe(patterns(ratings, items, make_concerns([]), CONFIG))
    assert data["dimensions"][0]["drift"][0]["start"] == "2025-03-03T00:00:00+00:00"


def test_window_days_must_be_positive():
    with pytest.raises(HilbotError, match="window_days=0"):
        patterns(*small(), CONFIG, window_days=0)


# ---------------------------------------------------------------- regressed patterns


def group_ratings(category, source, week1: list[str], week3: list[str]):
    """Ratings of one (category, source type): ``week1`` on days 0–4, ``week3`` on days 14–18, one
    item each."""
    rows, items = [], []
    for offset, judgments in ((0, week1), (14, week3)):
        for k, judgment in enumerate(judgments):
            item = f"{category}-{source}-{offset}-{k}"
            rows.append(rating(item, judgment, dimension=Q, timestamp=day(offset + k)))
            items.append({"item_id": item, "category": category, "source_type": source})
    return rows, items


def regression_frames(*groups):
    rows, items = [], []
    for group in groups:
        r, i = group_ratings(*group)
        rows += r
        items += i
    return make_ratings(rows), make_items(items), make_concerns([])


REGRESSED = (
    "macro",
    "tweet",
    ["excellent"] * 5,
    ["miss"] * 5,
)  # 5/5 → 0/5: Wilson [.5655, 1] vs [0, .4345]
STABLE = ("micro", "chat", ["excellent"] * 5, ["excellent"] * 5)  # 5/5 → 5/5
NOISY = (
    "macro",
    "chat",
    ["good"] * 4 + ["okay"],
    ["good"] + ["miss"] * 4,
)  # 4/5 → 1/5: drop .6 but
# Wilson 4/5 = [.3755, .9638] and 1/5 = [.0362, .6245] overlap → not flagged.
THIN = ("micro", "tweet", ["excellent"] * 5, ["miss"] * 3)  # the recent window has only 3 ratings


def test_regression_flags_excellent_early_miss_late_and_not_the_stable_ones():
    (dim,) = patterns(*regression_frames(REGRESSED, STABLE, NOISY, THIN), CONFIG).dimensions
    assert dim.groups_checked == 3  # THIN has one window with ≥ 5 ratings
    (found,) = dim.regressions
    assert (found.category, found.source_type, found.drop) == ("macro", "tweet", 1.0)
    assert (found.earlier.start, found.earlier.n, found.earlier.judgments) == (
        utc(2025, 3, 3),
        5,
        {"excellent": 5},
    )
    assert (found.recent.start, found.recent.n, found.recent.judgments) == (
        utc(2025, 3, 17),
        5,
        {"miss": 5},
    )
    assert round(found.earlier.ci.low, 4) == 0.5655 and round(found.recent.ci.high, 4) == 0.4345
    assert_json_safe(patterns(*regression_frames(REGRESSED, STABLE, NOISY, THIN), CONFIG))


def test_regression_thresholds_are_parameters():
    frames = regression_frames(REGRESSED, STABLE, NOISY, THIN)
    # With 3 ratings enough, THIN is checked: 5/5 → 0/3, Wilson 0/3 = [0, .5615] below 5/5's
    # .5655 → flagged.
    loose = patterns(*frames, CONFIG, min_ratings=3).dimensions[0]
    assert {(r.category, r.source_type) for r in loose.regressions} == {
        ("macro", "tweet"),
        ("micro", "tweet"),
    }
    # A drop of at least 1.01 is impossible.
    assert patterns(*frames, CONFIG, min_drop=1.01).dimensions[0].regressions == ()


def test_regression_compares_the_first_and_last_full_windows():
    # No category or source type (a None group); weeks 1, 2, 3: 5/5, 5/5 (good), 0/5 → week 1
    # against week 3.
    rows, items = group_ratings(None, None, ["excellent"] * 5, ["miss"] * 5)
    middle = [rating(f"mid{k}", "good", dimension=Q, timestamp=day(7 + k)) for k in range(5)]
    items += [{"item_id": f"mid{k}"} for k in range(5)]
    (dim,) = patterns(
        make_ratings(rows + middle), make_items(items), make_concerns([]), CONFIG
    ).dimensions
    (found,) = dim.regressions
    assert (found.category, found.source_type) == (None, None)
    assert (found.earlier.start, found.recent.start) == (utc(2025, 3, 3), utc(2025, 3, 17))


# ---------------------------------------------------------------- filters and edge cases


def test_dimensions_are_reported_apart_and_filters_apply():
    ratings, items, concerns = small()
    other = make_ratings(
        [rating("i1", "good", dimension="overall"), rating("i1", "poor", run_id="run-b")]
    )
    both = pd.concat([ratings, other], ignore_index=True)
    report = patterns(both, items, concerns, CONFIG)
    assert [d.dimension for d in report.dimensions] == ["overall", Q]
    assert report.dimensions[0].n == 2
    assert [d.n for d in patterns(both, items, concerns, CONFIG, run="run-b").dimensions] == [1]
    assert [
        d.dimension for d in patterns(both, items, concerns, CONFIG, dimension=Q).dimensions
    ] == [Q]


def test_no_ratings_gives_undefined_not_nan():
    ratings, items, concerns = small()
    assert patterns(ratings.head(0), items, concerns, CONFIG).dimensions == ()
    (dim,) = patterns(ratings.head(0), items, concerns, CONFIG, dimension=Q).dimensions
    assert dim.n == 0 and dim.drift == () and dim.regressions == ()
    assert dim.overall.success_rate == Undefined("no ratings")
    assert [j.share for j in dim.distribution] == [Undefined("no ratings")] * 4
    assert all(c.share == Undefined("no ratings") for c in dim.by_concern)
    assert_json_safe(patterns(ratings.head(0), items, concerns, CONFIG, dimension=Q))


def test_a_single_category_and_source():
    ratings = make_ratings([rating(f"x{k}", "good", dimension=Q) for k in range(3)])
    items = make_items(
        [{"item_id": f"x{k}", "category": "only", "source_type": "chat"} for k in range(3)]
    )
    (dim,) = patterns(ratings, items, make_concerns([]), CONFIG).dimensions
    assert [g.key for g in dim.by_category] == ["only"] and [g.key for g in dim.by_source_type] == [
        "chat"
    ]
    assert dim.by_category[0].success_rate == 1.0 and dim.groups_checked == 0
    assert_json_safe(patterns(ratings, items, make_concerns([]), CONFIG))


# ---------------------------------------------------------------- properties


@settings(max_examples=25, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["excellent", "good", "okay", "miss"]),
            st.integers(0, 30),
            st.sampled_from(["a", "b", None]),
            st.sampled_from(["chat", "tweet", None]),
        ),
        min_size=0,
        max_size=30,
    ),
    seed=st.integers(0, 1000),
)
def test_counts_add_up_and_order_and_item_names_do_not_matter(rows, seed):
    ratings = make_ratings(
        [rating(f"i{k}", j, dimension=Q, timestamp=day(d)) for k, (j, d, _, _) in enumerate(rows)]
    )
    items = make_items(
        [
            {"item_id": f"i{k}", "category": c, "source_type": s}
            for k, (_, _, c, s) in enumerate(rows)
        ]
    )
    report = patterns(ratings, items, make_concerns([]), CONFIG)
    for dim in report.dimensions:
        assert (
            sum(j.count for j in dim.distribution)
            == sum(w.n for w in dim.drift)
            == dim.n
            == len(rows)
        )
        assert sum(g.n for g in dim.by_category) == sum(g.n for g in dim.by_source_type) == dim.n
    names = {
        f"i{k}": f"n{v}" for k, v in enumerate(np.random.default_rng(seed).permutation(len(rows)))
    }
    shuffled = (
        ratings.assign(item_id=ratings["item_id"].map(names)).sample(frac=1, random_state=seed),
        items.assign(item_id=items["item_id"].map(names)).sample(frac=1, random_state=seed),
    )
    again = patterns(*shuffled, make_concerns([]), CONFIG)
    assert rounded(again.to_dict()) == rounded(assert_json_safe(report))


# ---------------------------------------------------------------- the digest's regression alerts


@pytest.mark.parametrize(
    "counts, low, high",
    [  # Newcombe (1998), Statistics in Medicine 17:873–890, Table II, method 10
        ((56, 70, 48, 80), 0.0524, 0.3339),
        ((9, 10, 3, 10), 0.1705, 0.8090),
        ((6, 7, 2, 7), 0.0582, 0.8062),
        ((5, 56, 0, 29), -0.0381, 0.1926),
        ((0, 10, 0, 20), -0.1611, 0.2775),
        ((0, 10, 0, 10), -0.2775, 0.2775),
        ((10, 10, 0, 20), 0.6791, 1.0),
        ((10, 10, 0, 10), 0.6075, 1.0),
    ],
)
def test_newcombes_interval_of_a_difference_matches_his_table(counts, low, high):
    from analysis.stats import newcombe_interval

    got = newcombe_interval(*counts)
    assert (round(got.low, 4), round(got.high, 4)) == (low, high) and got.method == "newcombe"
    assert newcombe_interval(1, 0, 1, 2) == Undefined("no ratings on one side")


def _alert_frames(before: list[str], now: list[str], *, tags_now: int = 0):
    """One category (``tasks``) and a feature (``size``): ``before`` judgments the day before T0 +
    1, ``now`` the day after; the first ``tags_now`` new ratings carry ``lacks_catalyst``."""
    judgments = [(f"b{n}", j, day(0.5)) for n, j in enumerate(before)]
    judgments += [(f"n{n}", j, day(1.5)) for n, j in enumerate(now)]
    items = make_items(
        [{"item_id": i, "category": "tasks", "feature_size": 3.0} for i, _, _ in judgments],
        features=("size",),
    )
    ratings = make_ratings([rating(i, j, dimension=Q, timestamp=t) for i, j, t in judgments])
    concerns = make_concerns(
        [
            {"item_id": i, "dimension": Q, "tag": "lacks_catalyst"}
            for i, _, _ in judgments[len(before) :][:tags_now]
        ]
    )
    return ratings, items, concerns


def test_a_pattern_rated_excellent_and_now_miss_is_an_alert_with_its_interval():
    from analysis.patterns import regression_alerts

    ratings, items, concerns = _alert_frames(["excellent"] * 4, ["miss"] * 4, tags_now=4)
    alerts = regression_alerts(
        ratings, items, concerns, CONFIG, since=day(1).to_pydatetime(), until=day(2).to_pydatetime()
    )
    # 4/4 → 0/4: Wilson [0.510, 1] and [0, 0.490]; Newcombe: −1 − 0 to −1 + √(2 · 0.490²) = −0.307
    assert [a.line() for a in alerts] == [
        "⚠ quality · category=tasks: success 100% (excellent 4) → 0% (miss 4), −100 pts "
        "(95% CI −100 to −31)",
        "⚠ quality · feature size=3: success 100% (excellent 4) → 0% (miss 4), −100 pts "
        "(95% CI −100 to −31)",
        "⚠ quality · concern lacks_catalyst: on 0% of 4 ratings → 100% of 4, +100 pts "
        "(95% CI 31 to 100)",
    ]
    tasks = alerts[0]
    assert (tasks.before.n, tasks.now.n, tasks.change) == (4, 4, -1.0)
    z2 = 1.959964**2  # Wilson's upper bound at 0 of 4: 2 · (z²/8) / (1 + z²/4)
    assert tasks.ci.high == pytest.approx(-1 + math.sqrt(2) * 2 * (z2 / 8) / (1 + z2 / 4), abs=1e-6)
    assert tasks.to_dict()["ci"]["method"] == "newcombe"


def test_a_concern_alert_matches_tags_to_ratings_even_when_a_rating_is_listed_twice():
    """Tags belong to a reviewer's rating: every row of a rating the frame lists twice carries its
    tags (as a merge on the rating's key matches them), and the judgments of a side are counted in
    the order they come (ties in the line by that order)."""
    from analysis.patterns import regression_alerts

    ratings, items, concerns = _alert_frames(
        ["excellent"] * 4, ["good", "excellent", "good", "excellent"], tags_now=4
    )
    ratings = pd.concat([ratings, ratings.iloc[[-1]]], ignore_index=True)  # n3 listed twice
    since, until = day(1).to_pydatetime(), day(2).to_pydatetime()
    (alert,) = regression_alerts(ratings, items, concerns, CONFIG, since=since, until=until)
    assert (alert.pattern, alert.now.n, alert.now.successes) == ("concern lacks_catalyst", 5, 0)
    assert list(alert.now.judgments.items()) == [("good", 2), ("excellent", 3)]


@pytest.mark.parametrize(
    "before, now",
    [
        (["excellent"] * 4, ["good"] * 4),  # both succeed
        (["excellent"] * 2, ["miss"] * 4),  # too few before
        (["excellent"] * 3 + ["miss"], ["excellent"] + ["miss"] * 3),  # 75% → 25%: not significant
        (["miss"] * 4, ["excellent"] * 4),  # better, not worse
    ],
)
def test_no_alert_without_a_significant_fall(before, now):
    from analysis.patterns import regression_alerts

    ratings, items, concerns = _alert_frames(before, now)
    since, until = day(1).to_pydatetime(), day(2).to_pydatetime()
    assert regression_alerts(ratings, items, concerns, CONFIG, since=since, until=until) == []


def test_ratings_outside_the_two_windows_are_left_out():
    from analysis.patterns import regression_alerts

    ratings, items, concerns = _alert_frames(["excellent"] * 4, ["miss"] * 4)
    # the new window ends before the misses: nothing new, nothing to compare
    since, until = day(0.75).to_pydatetime(), day(1).to_pydatetime()
    assert regression_alerts(ratings, items, concerns, CONFIG, since=since, until=until) == []


def test_the_digest_lists_the_surest_five_alerts_and_counts_the_rest():
    from types import SimpleNamespace

    from analysis.registry import Inputs, analyses

    rated, judged = [], []
    for n in range(7):  # seven categories, each rated excellent 4 times, then miss 4 times
        ratings, items, _ = _alert_frames(["excellent"] * 4, ["miss"] * 4)
        items["category"] = f"c{n}"
        ratings["item_id"] = ratings["item_id"] + f"-{n}"
        items["item_id"] = items["item_id"] + f"-{n}"
        rated.append(ratings)
        judged.append(items)
    frames = SimpleNamespace(
        ratings=pd.concat(rated, ignore_index=True),
        items=pd.concat(judged, ignore_index=True).drop(columns=["feature_size"]),
        concerns=make_concerns([]),
    )
    window = (day(1).to_pydatetime(), day(2).to_pydatetime())
    inputs = Inputs(None, CONFIG, window=window).with_frames(frames)  # type: ignore[arg-type]
    lines = analyses.get("patterns").digest(inputs, None)
    assert [line.split(":")[0] for line in lines[:5]] == [
        f"⚠ quality · category=c{n}" for n in range(5)
    ]
    assert lines[5:] == ["… and 2 more regression alerts"]
    assert analyses.get("patterns").digest(Inputs(None, CONFIG).with_frames(frames), None) == []
