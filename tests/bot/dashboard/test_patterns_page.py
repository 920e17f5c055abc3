"""The dashboard's patterns page: success by feature bucket, concern counts and drift, each table
holding the figures of ``hilbot analyze … --format json``.

The run ``pat`` (dimension ``quality``: excellent and good succeed, okay and miss do not), one
rating per item by ann:

    items     category  leap    words  judgment   day  concerns
    m0–m9     macro     small   50     excellent   0
    u0–u5     micro     medium  30     good        7
    m10–m19   macro     large   10     miss       14   lacks_catalyst (m10–m13),
                                                         <script>… (m10)

So success falls along ``leap`` (small 10/10, medium 6/6, large 0/10: monotonic) and rises along
``words`` (10 → 30 breaks the decreasing order, beyond the Wilson intervals), and the pattern
(macro, no source type) regressed from 10/10 in the first week to 0/10 in the third.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from itertools import count
from typing import Any

import pytest

from bot.dashboard import charts
from bot.dashboard.data import DashboardData
from bot.dashboard.page import Section, pages
from bot.dashboard.pages.patterns import patterns
from evaluation import ItemData, Query, QueryEvaluation, RunHeader, Store
from evaluation.records import Rating, Reviewer

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
ANN = Reviewer(platform="terminal", id="ann")
HOSTILE = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
_keys = count()


# ------------------------------------------------------------------------------- helpers


def rating(
    item: str,
    judgment: str,
    when: datetime,
    *,
    run: str = "pat",
    dimension: str = "quality",
    reviewer: Reviewer = ANN,
    concerns: tuple[str, ...] = (),
) -> Rating:
    scores = {"excellent": 1.0, "good": 0.7, "okay": 0.4, "miss": 0.1}
    return Rating(
        run_id=run,
        item_id=item,
        dimension=dimension,
        reviewer=reviewer,
        channel=reviewer.platform,
        idempotency_key=f"k-{next(_keys)}",
        judgment=judgment,
        score=scores.get(judgment, 0.5),
        timestamp=when,
        concerns=list(concerns),
    )


def section(sections: list[Section], heading: str) -> Section:
    """The section of ``sections`` headed ``heading``."""
    found = [s for s in sections if s.heading == heading]
    assert found, f"no section {heading!r} in {[s.heading for s in sections]}"
    return found[0]


def texts(svg: str) -> list[str]:
    """The contents of the SVG's ``<text>`` elements, as written (escaped)."""
    return re.findall(r"<text\b[^>]*>([^<]*)</text>", svg)


def three(value: Any) -> Any:
    """A figure as the renderer writes a float (three decimals); other values as they are."""
    return f"{value:.3f}" if isinstance(value, float) else value


def shown(row: Any) -> list[Any]:
    return [three(v) for v in row]


def span(ci: dict[str, Any]) -> str:
    return f"[{ci['low']:.3f}, {ci['high']:.3f}]"


# ------------------------------------------------------------------------------- the data


ITEMS = (
    [(f"m{n}", "macro", "small", 50, "excellent", 0) for n in range(10)]
    + [(f"u{n}", "micro", "medium", 30, "good", 7) for n in range(6)]
    + [(f"m{n}", "macro", "large", 10, "miss", 14) for n in range(10, 20)]
)


def write_patterns(store: Store) -> None:
    items = [
        QueryEvaluation(
            run_id="pat",
            data=ItemData(
                id=item,
                query=Query(query=f"q {item}", category=category),
                answer="a",
                features={"leap": leap, "words": words},
            ),
        )
        for item, category, leap, words, _, _ in ITEMS
    ]
    store.create_run(RunHeader(run_id="pat", kind="answer", dimensions=["quality"]), items)
    made = []
    for n, (item, _, _, _, judgment, day) in enumerate(ITEMS):
        tags = ("lacks_catalyst",) if item in ("m10", "m11", "m12", "m13") else ()
        tags += (HOSTILE,) if item == "m10" else ()
        made.append(rating(item, judgment, T0 + timedelta(days=day, minutes=n), concerns=tags))
    store.ratings.append_many(made)


@pytest.fixture
def data(store: Store, config) -> DashboardData:
    write_patterns(store)
    return DashboardData(store, config)


# ------------------------------------------------------------------------------- feature buckets


def test_the_page_is_registered_in_order():
    spec = pages.get("patterns")
    assert (spec.title, spec.order, spec.build) == ("Patterns", 50, patterns)


def test_feature_buckets_hold_the_correlate_reports_figures(data):
    page = section(patterns(data, {}), "Success by leap")
    document = data.report("correlate", feature="leap").document
    assert [b["label"] for b in document["buckets"]] == ["small", "medium", "large"]
    expected = [
        [
            b["label"],
            b["n"],
            b["n_items"],
            b["successes"],
            three(b["success_rate"]),
            span(b["ci"]),
            three(b["mean_score"]),
        ]
        for b in document["buckets"]
    ]
    assert [shown(row) for row in page.table.rows] == expected
    assert expected[2][1:5] == [10, 10, 0, "0.000"]  # large: 10 misses
    labels = texts(page.chart.svg)
    assert {"small", "medium", "large"} <= set(labels)


def test_the_monotonicity_verdict_and_its_breaks(data):
    sections = patterns(data, {})
    leap = section(sections, "Success by leap")
    assert data.report("correlate", feature="leap").document["monotonicity"]["monotonic"] is True
    assert any("grows — monotonic;" in line for line in leap.text)
    words = section(sections, "Success by words")
    m = data.report("correlate", feature="words").document["monotonicity"]
    assert m["monotonic"] is False and len(m["breaks"]) == 1
    assert any("— not monotonic;" in line for line in words.text)
    assert "Break: 10 → 30: 0.000 → 1.000 (beyond the Wilson intervals)" in words.text


def test_a_feature_without_an_order_is_listed_with_its_reason(store, config):
    write_patterns(store)
    items = [
        QueryEvaluation(
            run_id="odd",
            data=ItemData(
                id="x", query=Query(query="q"), answer="a", features={"flavour": "sweet"}
            ),
        )
    ]
    store.create_run(RunHeader(run_id="odd", kind="answer", dimensions=["quality"]), items)
    store.ratings.append_many([rating("x", "good", T0, run="odd")])
    other = section(patterns(DashboardData(store, config), {}), "Other features")
    assert any(
        line.startswith("Not shown — flavour: feature 'flavour' has text values")
        for line in other.text
    )


# ------------------------------------------------------------------------------- concerns


def test_concern_counts_hold_the_patterns_reports_figures(data):
    page = section(patterns(data, {}), "Concerns: quality")
    dim = data.report("patterns").document["dimensions"][0]
    expected = [
        [c["tag"], c["count"], three(c["share"]), three(c["mean_score"]), three(c["success_rate"])]
        for c in dim["by_concern"]
    ]
    assert [shown(row) for row in page.table.rows][:2] == expected[:2]
    assert [r[:2] for r in page.table.rows[:2]] == [["lacks_catalyst", 4], [HOSTILE, 1]]
    assert three(page.table.rows[0][2]) == f"{4 / 26:.3f}"


def test_a_hostile_concern_tag_is_plain_text_and_escaped_in_the_chart(data):
    page = section(patterns(data, {}), "Concerns: quality")
    assert HOSTILE in [row[0] for row in page.table.rows]  # the table holds the plain string
    assert ESCAPED in texts(page.chart.svg)
    assert "<script" not in page.chart.svg


# ------------------------------------------------------------------------------- drift


def test_drift_holds_the_windows_and_marks_the_regressed_pattern(data, monkeypatch):
    drawn: list[dict[str, Any]] = []
    lines = charts.lines
    monkeypatch.setattr(
        charts,
        "lines",
        lambda series, **kw: drawn.append({"series": series, **kw}) or lines(series, **kw),
    )
    page = section(patterns(data, {}), "Drift: quality")
    dim = data.report("patterns").document["dimensions"][0]
    (regression,) = dim["regressions"]
    assert (regression["category"], regression["source_type"], regression["drop"]) == (
        "macro",
        None,
        1.0,
    )
    name = "category=macro, source_type=None"
    recent, earlier = regression["recent"], regression["earlier"]
    rows = page.table.rows
    assert shown(rows[0]) == [
        name,
        earlier["start"][:10],
        earlier["end"][:10],
        10,
        "1.000",
        span(earlier["ci"]),
        "1.000",
        "earlier",
    ]
    assert shown(rows[1]) == [
        name,
        recent["start"][:10],
        recent["end"][:10],
        10,
        "0.000",
        span(recent["ci"]),
        three(recent["mean_score"]),
        "regressed",
    ]
    assert [shown(r)[3:7] for r in rows[2:]] == [
        [w["n"], three(w["success_rate"]), span(w["ci"]), three(w["mean_score"])]
        for w in dim["drift"]
    ]
    assert [r[3] for r in rows[2:]] == [10, 6, 10]
    (chart,) = [d for d in drawn if "regressed" in d["alt"]]
    assert chart["marked"] == [(datetime.fromisoformat(recent["start"]), 0.0)]
    assert chart["series"][name] == [
        (datetime.fromisoformat(earlier["start"]), 1.0),
        (datetime.fromisoformat(recent["start"]), 0.0),
    ]
    assert "#d55e00" in page.chart.svg.lower()  # the ring
    assert charts.label(name) in texts(page.chart.svg)  # the legend names the pattern
    assert any(line.startswith(f"Regressed: {name}: 1.000") for line in page.text)
    assert page.text[0].startswith("1 regressed of 1 (category, source type) patterns checked")


def test_no_regression_draws_no_ring(store, config):
    store.ratings.append_many(
        [rating(f"i{n}", "good", T0 + timedelta(days=n), run="r") for n in range(3)]
    )
    page = section(patterns(DashboardData(store, config), {}), "Drift: quality")
    assert "#d55e00" not in page.chart.svg.lower()
    assert [row[-1] for row in page.table.rows] == [""]  # one window
    assert page.text[0].startswith("0 regressed of 0")


# ------------------------------------------------------------------------------- nothing to show


def test_an_empty_data_dir_says_why_without_raising(store, config):
    (only,) = patterns(DashboardData(store, config), {})
    assert only.heading == "Patterns" and only.chart is None
    assert only.text == ("Nothing to show yet: no ratings yet",)


def test_a_run_without_ratings_says_why(store, config):
    items = [QueryEvaluation(run_id="r", data=ItemData(id="x", query=Query(query="q"), answer="a"))]
    store.create_run(RunHeader(run_id="r", kind="answer", dimensions=["quality"]), items)
    (only,) = patterns(DashboardData(store, config), {})
    assert only.text[0].startswith("Nothing to show yet")


# ------------------------------------------------------------------------------- a generated log


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Store:
    from analysis.synthetic import write_synthetic
    from evaluation import load_config

    store = Store(tmp_path_factory.mktemp("generated") / "results")
    write_synthetic(
        store,
        ratings=2000,
        runs=3,
        items_per_run=80,
        reviewers=40,
        seed=4,
        config=load_config(None),
    )
    return store


def test_a_generated_log_builds_with_capped_charts(generated, config, monkeypatch):
    bars: list[int] = []
    original = charts.bars
    monkeypatch.setattr(
        charts, "bars", lambda rows, **kw: bars.append(len(rows)) or original(rows, **kw)
    )
    data = DashboardData(generated, config)
    sections = patterns(data, {})
    headings = [s.heading for s in sections]
    assert "Success by leap_distance" in headings
    assert {"Drift: quality", "Drift: answer", "Drift: overall"} <= set(headings)
    leap = section(sections, "Success by leap_distance")
    document = data.report("correlate", feature="leap_distance").document
    assert [shown(r)[:5] for r in leap.table.rows] == [
        [b["label"], b["n"], b["n_items"], b["successes"], three(b["success_rate"])]
        for b in document["buckets"]
    ]
    assert bars and max(bars) <= 30
    assert all(len(s.table.rows) <= 200 for s in sections if s.table)
    assert all(s.chart.svg.startswith("<svg") for s in sections if s.chart)
