"""The dashboard's reviewers page: throughput, time per item, skip reasons and agreement with the
gold label, worked by hand on a small log (run ``r``, dimension ``overall`` unless said; seconds
after T0):

    ann    i1 good 0 · i2 poor 40 · i3 good 100, i3 completeness "3" 110 · i4 good 130
           · (a two-hour break) i5 okay 7330 · i6 good 7420
    bob    a day later: i1 good 0 · i2 okay 600 · i3 good 1200
    carol  two days later: i1 okay 0 · i2 okay 2000
    dave   skips i7, i8 ("unclear"), i9 (no reason), i10 (a hostile reason)

Time per item: ann's items at 0, 40, 110 (i3 counts once, at its last rating), 130, 7330, 7420:
gaps 40, 70, 20, 90 (median 55) and one break; bob's 600 and 600; carol's one gap is a break.

Gold labels (overall): i1 majority good; i2 majority okay, but adjudicated poor; i3 majority good;
i3 on completeness, i4, i5, i6 have one label and are left out. So ann agrees on 3 of 3, bob on
2 of 3 (not on i2), carol on 0 of 2; on the adjudicated i2 ann 1 of 1, bob and carol 0 of 1.
"""

from __future__ import annotations

from datetime import timedelta
from itertools import count
from typing import Any

import pytest

from bot.dashboard import charts
from bot.dashboard.data import DashboardData
from bot.dashboard.page import pages
from bot.dashboard.pages.reviewers import reviewers
from evaluation import Store
from evaluation.records import Adjudication, Rating, Reviewer, Skip
from tests.bot.dashboard.test_patterns_page import (
    ESCAPED,
    HOSTILE,
    T0,
    generated,  # noqa: F401 - the module-scoped generated log, a fixture
    section,
    shown,
    texts,
)

ANN = Reviewer(platform="terminal", id="ann")
BOB = Reviewer(platform="telegram", id="7")
CAROL = Reviewer(platform="slack", id="carol")
DAVE = Reviewer(platform="terminal", id="dave")
SCORES = {"good": 1.0, "okay": 0.7, "poor": 0.4, "terrible": 0.1, "3": 0.5}
_keys = count()


def common(reviewer: Reviewer, item: str, seconds: float, dimension: str = "overall") -> dict:
    return dict(
        run_id="r",
        item_id=item,
        dimension=dimension,
        reviewer=reviewer,
        channel=reviewer.platform,
        idempotency_key=f"k-{next(_keys)}",
        timestamp=T0 + timedelta(seconds=seconds),
    )


def rate(
    reviewer: Reviewer, item: str, judgment: str, seconds: float, dimension: str = "overall"
) -> Rating:
    return Rating(
        **common(reviewer, item, seconds, dimension), judgment=judgment, score=SCORES[judgment]
    )


DAY = 86400
LOG = [
    rate(ANN, "i1", "good", 0),
    rate(ANN, "i2", "poor", 40),
    rate(ANN, "i3", "good", 100),
    rate(ANN, "i3", "3", 110, "completeness"),
    rate(ANN, "i4", "good", 130),
    rate(ANN, "i5", "okay", 7330),
    rate(ANN, "i6", "good", 7420),
    rate(BOB, "i1", "good", DAY),
    rate(BOB, "i2", "okay", DAY + 600),
    rate(BOB, "i3", "good", DAY + 1200),
    rate(CAROL, "i1", "okay", 2 * DAY),
    rate(CAROL, "i2", "okay", 2 * DAY + 2000),
]


def write_log(store: Store) -> None:
    store.ratings.append_many(LOG)
    store.ratings.append_many(
        [
            Skip(**common(DAVE, "i7", 3 * DAY), skip_reason="unclear"),
            Skip(**common(DAVE, "i8", 3 * DAY + 10), skip_reason="unclear"),
            Skip(**common(DAVE, "i9", 3 * DAY + 20)),
            Skip(**common(DAVE, "i10", 3 * DAY + 30), skip_reason=HOSTILE),
            Adjudication(
                **common(Reviewer(platform="terminal", id="judge"), "i2", 4 * DAY),
                decision="consensus",
                judgment="poor",
                score=0.4,
            ),
        ]
    )


@pytest.fixture
def data(store: Store, config) -> DashboardData:
    write_log(store)
    return DashboardData(store, config)


@pytest.fixture
def drawn(monkeypatch) -> list[dict[str, Any]]:
    """Every call of charts.bars: its rows and keywords (the chart is drawn as well)."""
    calls: list[dict[str, Any]] = []
    original = charts.bars
    monkeypatch.setattr(
        charts,
        "bars",
        lambda rows, **kw: calls.append({"rows": list(rows), **kw}) or original(rows, **kw),
    )
    return calls


def test_the_page_is_registered_in_order():
    spec = pages.get("reviewers")
    assert (spec.title, spec.order, spec.build) == ("Reviewers", 70, reviewers)


def test_throughput_per_reviewer(data):
    page = section(reviewers(data, {}), "Throughput")
    day = T0.date().isoformat()
    assert [shown(row) for row in page.table.rows] == [
        ["terminal:ann", 7, 1, "7.000", 0, day, day],
        [
            "telegram:7",
            3,
            1,
            "3.000",
            0,
            (T0 + timedelta(days=1)).date().isoformat(),
            (T0 + timedelta(days=1)).date().isoformat(),
        ],
        [
            "slack:carol",
            2,
            1,
            "2.000",
            0,
            (T0 + timedelta(days=2)).date().isoformat(),
            (T0 + timedelta(days=2)).date().isoformat(),
        ],
        ["terminal:dave", 0, 0, None, 4, None, None],  # only skipped
    ]
    assert {"terminal:ann", "telegram:7", "slack:carol"} <= set(texts(page.chart.svg))


def test_ratings_per_day(data):
    page = section(reviewers(data, {}), "Ratings per day")
    days = [(T0 + timedelta(days=n)).date().isoformat() for n in range(3)]
    assert [list(row) for row in page.table.rows] == [
        [days[0], 7, 1],
        [days[1], 3, 1],
        [days[2], 2, 1],
    ]


def test_time_per_item_is_the_median_gap_without_breaks(data, drawn):
    page = section(reviewers(data, {}), "Time per item")
    assert [list(row) for row in page.table.rows] == [
        ["terminal:ann", 4, 55.0, 1],
        ["telegram:7", 2, 600.0, 0],
        ["slack:carol", 0, None, 1],
    ]
    assert any("over 30 minutes is taken as a break" in line for line in page.text)
    (chart,) = [c for c in drawn if "seconds" in c["alt"]]
    assert chart["rows"] == [("terminal:ann", 55.0), ("telegram:7", 600.0)]  # carol has no gap


def test_skip_reasons(data):
    page = section(reviewers(data, {}), "Skip reasons")
    rows = {row[0]: shown(row[1:]) for row in page.table.rows}
    assert rows == {
        "unclear": [2, "0.500", 1],
        "(none given)": [1, "0.250", 1],
        HOSTILE: [1, "0.250", 1],
    }
    assert page.table.rows[0][0] == "unclear"
    assert ESCAPED in texts(page.chart.svg) and "<script" not in page.chart.svg


def test_agreement_with_the_gold_label_by_hand(data, drawn):
    page = section(reviewers(data, {}), "Agreement with the gold label")
    rows = [shown(row) for row in page.table.rows]
    assert [row[:4] + row[5:] for row in rows] == [
        ["terminal:ann", 3, 3, "1.000", 1, "1.000"],
        ["telegram:7", 3, 2, "0.667", 1, "0.000"],
        ["slack:carol", 2, 0, "0.000", 1, "0.000"],
    ]
    assert rows[1][4] == "[0.208, 0.939]"  # Wilson, 2 of 3
    assert page.text[0].startswith("Gold labels: 7 items — 1 adjudicated, 6 derived by rule")
    (chart,) = [c for c in drawn if "gold" in c["alt"]]
    assert [name for name, _ in chart["rows"]] == ["terminal:ann", "telegram:7", "slack:carol"]
    assert chart["errors"][2] == (0.0, pytest.approx(0.6576, abs=1e-4))


def test_a_hostile_reviewer_is_escaped_in_the_charts(store, config):
    who = Reviewer(platform="terminal", id=HOSTILE)
    store.ratings.append_many([rate(who, "i1", "good", 0), rate(who, "i2", "okay", 30)])
    sections = reviewers(DashboardData(store, config), {})
    page = section(sections, "Throughput")
    assert page.table.rows[0][0] == f"terminal:{HOSTILE}"
    assert any(t.startswith("terminal:&lt;script&gt;alert(1)") for t in texts(page.chart.svg))
    assert all("<script" not in s.chart.svg for s in sections if s.chart)


def test_an_empty_data_dir_says_why_without_raising(store, config):
    (only,) = reviewers(DashboardData(store, config), {})
    assert (only.heading, only.text) == ("Reviewers", ("Nothing to show yet: no ratings yet",))


def test_skips_alone_show_throughput_and_reasons(store, config):
    store.ratings.append_many([Skip(**common(DAVE, "i1", 0), skip_reason="unclear")])
    sections = reviewers(DashboardData(store, config), {})
    assert [s.heading for s in sections] == ["Throughput", "Skip reasons"]


def test_a_generated_log_builds_with_capped_charts(generated, config, drawn):  # noqa: F811
    data = DashboardData(generated, config)
    sections = reviewers(data, {})
    counts = data.frames.ratings.groupby("reviewer").size()
    assert len(counts) == 40
    most = sorted(counts.index, key=lambda r: (-counts[r], r))[:30]
    assert drawn and all(len(c["rows"]) <= 30 for c in drawn)
    (gold,) = [c for c in drawn if "gold" in c["alt"]]
    assert [name for name, _ in gold["rows"]] == [
        r for r in most if r in {n for n, _ in gold["rows"]}
    ]
    throughput = section(sections, "Throughput")
    assert "The chart shows the 30 most active of 40 reviewers." in throughput.text
    assert len(throughput.table.rows) == 40
    assert [row[0] for row in throughput.table.rows][:30] == most
    time = section(sections, "Time per item")
    assert all(row[2] is None or 0 <= row[2] <= 1800 for row in time.table.rows)
