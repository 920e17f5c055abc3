"""The dashboard's triage page: the AI's category against the human decision, the reliability
curve, the safe thresholds beside the configured ones and the agreement by path, each table holding
the figures of ``hilbot analyze triage --format json``.

The triage run ``tri`` (``[triage] auto_accept_threshold = 0.9``, ``require_human =
["**/security_*"]``), its changes written as ``hilbot triage`` writes them (``triage_decision``
records) and decided by humans on the dimension ``change``:

    a0–a29   ACCEPT, confidence 0.70 … 0.99: the humans reject a0–a4 (0.70–0.74), accept
             the rest;
             0.90 and above were accepted by the rule and audited
    f0–f2    FAIL at 0.98, 0.97 (rejected by the rule, audited) and 0.60: humans reject, accept,
             reject
    u0, u1   UNSURE: u0 accepted by a human, u1 waiting
    h        RECOMMEND ACCEPT at 0.80 under the hostile first path segment <script>alert(1)<:
             accepted
    s        RECOMMEND ACCEPT at 0.70, test/security_x.md: rejected

So the safe auto-accept threshold is 0.75 (25 of 25 changes at or above it accepted), and the
configured 0.9 holds on its 10 audited changes.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from itertools import count
from typing import Any

import pytest

from bot.dashboard import charts
from bot.dashboard.data import DashboardData
from bot.dashboard.page import pages
from bot.dashboard.pages.triage import triage
from evaluation import Store
from evaluation.records import Rating, Reviewer, TriageDecision
from tests.bot.dashboard.test_patterns_page import (
    ESCAPED,
    HOSTILE,
    section,
    shown,
    span,
    texts,
    three,
)

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)
ANN = Reviewer(platform="terminal", id="ann")
SEGMENT = HOSTILE.split("/")[0]
"""A hostile first path segment: ``<script>alert(1)<`` (a path's first ``/`` ends it)."""
_keys = count()

Change = tuple[str, str, int, float, str, bool, str | None]
"""change, path, category, confidence, outcome, audit, the human decision (None: waiting)."""


def accepts() -> list[Change]:
    made: list[Change] = []
    for n in range(30):
        confidence = round(0.70 + n / 100, 2)
        ruled = confidence >= 0.9
        made.append(
            (
                f"a{n}",
                f"src/a{n}.md",
                5,
                confidence,
                "accepted" if ruled else "human",
                ruled,
                "reject" if n < 5 else "accept",
            )
        )
    return made


CHANGES: list[Change] = accepts() + [
    ("f0", "lib/f0.md", 1, 0.98, "rejected", True, "reject"),
    ("f1", "lib/f1.md", 1, 0.97, "rejected", True, "accept"),
    ("f2", "lib/f2.md", 1, 0.60, "human", False, "reject"),
    ("u0", "docs/u0.md", 3, 0.0, "human", False, "accept"),
    ("u1", "docs/u1.md", 3, 0.2, "human", False, None),
    ("h", f"{SEGMENT}/x.md", 4, 0.80, "human", False, "accept"),
    ("s", "test/security_x.md", 4, 0.70, "human", False, "reject"),
]


def write(store: Store, changes: list[Change], run: str = "tri") -> None:
    store.ratings.append_many(
        [
            TriageDecision(
                run_id=run,
                change_id=change,
                path=path,
                outcome=outcome,
                rule="r",
                audit=audit,
                category=category,
                confidence=confidence,
                judge="local",
                timestamp=T0,
            )
            for change, path, category, confidence, outcome, audit, _ in changes
        ]
    )
    store.ratings.append_many(
        [
            Rating(
                run_id=run,
                item_id=change,
                dimension="change",
                reviewer=ANN,
                channel="terminal",
                idempotency_key=f"k-{next(_keys)}",
                judgment=human,
                score=1.0 if human == "accept" else 0.0,
                timestamp=T0 + timedelta(minutes=n),
            )
            for n, (change, *_, human) in enumerate(changes)
            if human
        ]
    )


@pytest.fixture
def settings(config):
    triage_settings = config.triage.model_copy(
        update={"auto_accept_threshold": 0.9, "require_human": ["**/security_*"]}
    )
    return config.model_copy(update={"triage": triage_settings})


@pytest.fixture
def data(store: Store, settings) -> DashboardData:
    write(store, CHANGES)
    return DashboardData(store, settings)


def document(data: DashboardData) -> dict[str, Any]:
    report = data.report("triage")
    assert report.document is not None
    return report.document


def test_the_page_is_registered_in_order():
    spec = pages.get("triage")
    assert (spec.title, spec.order, spec.build) == ("Triage", 60, triage)


def test_the_summary_and_the_audit_sample(data):
    page = section(triage(data, {}), "Triage")
    audit = document(data)["audit"]
    assert [shown(row) for row in page.table.rows] == [
        [name, a["n"], a["agreed"], three(a["accuracy"]), span(a["ci"])]
        for name, a in (
            ("both", audit["overall"]),
            ("auto-accept", audit["auto_accept"]),
            ("auto-reject", audit["auto_reject"]),
        )
    ]
    assert [row[1:3] for row in page.table.rows] == [[12, 11], [10, 10], [2, 1]]
    assert page.text[0].startswith("37 changes in 1 triage run(s), triaged by local: 12 decided")


def test_category_by_decision_holds_the_confusion_matrix(data):
    page = section(triage(data, {}), "AI category × human decision")
    confusion = document(data)["confusion"]
    assert [list(row) for row in page.table.rows] == [
        [r["category"], r["name"], r["accept"], r["reject"], r["accept"] + r["reject"]]
        for r in confusion
    ]
    assert [list(row) for row in page.table.rows][0] == [1, "FAIL", 1, 2, 3]
    assert [list(row) for row in page.table.rows][4] == [5, "ACCEPT", 25, 5, 30]
    labels = texts(page.chart.svg)
    assert {"1 FAIL", "3 UNSURE", "5 ACCEPT", "human accept", "human reject", "25"} <= set(labels)


def test_the_reliability_curve_holds_the_bins(data, monkeypatch):
    calls: list[dict[str, Any]] = []
    original = charts.lines
    monkeypatch.setattr(
        charts,
        "lines",
        lambda series, **kw: calls.append({"series": series, **kw}) or original(series, **kw),
    )
    page = section(triage(data, {}), "Reliability curve")
    calibration = document(data)["calibration"]
    bins = calibration["bins"]
    assert [shown(row) for row in page.table.rows] == [
        [b["label"], b["n"], three(b["mean_confidence"]), three(b["accuracy"])]
        if b["n"]
        else [
            b["label"],
            0,
            "undefined (no change in this bin)",
            "undefined (no change in this bin)",
        ]
        for b in bins
    ]
    (call,) = calls
    assert call["diagonal"] is True
    assert call["series"]["AI"] == [(b["mean_confidence"], b["accuracy"]) for b in bins if b["n"]]
    agreement = calibration["agreement"]
    assert (
        f"Humans agreed with the AI on {agreement['agreed']} of {agreement['n']} changes it "
        f"took a side on: {agreement['accuracy']:.3f}"
    ) in page.text[0]
    assert f"Brier score {calibration['brier']:.3f}" in page.text[0]


def test_the_safe_thresholds_beside_the_configured_ones(data, settings):
    page = section(triage(data, {}), "Thresholds")
    accept, reject = document(data)["thresholds"]
    safe, configured = accept["suggested"], accept["configured"]
    assert (safe["threshold"], safe["n"], safe["agreed"]) == (0.75, 25, 25)
    assert configured["threshold"] == settings.triage.auto_accept_threshold == 0.9
    rows = [shown(row) for row in page.table.rows]
    assert rows[0] == [
        "accept",
        "safe",
        "0.750",
        25,
        25,
        "1.000",
        span(safe["ci"]),
        safe["automated"],
        three(safe["automates"]),
    ]
    assert rows[1] == [
        "accept",
        "configured",
        "0.900",
        10,
        10,
        "1.000",
        span(configured["ci"]),
        10,
        three(configured["automates"]),
    ]
    assert rows[2][:3] == ["reject", "safe", f"undefined ({reject['suggested']['undefined']})"]
    assert rows[3][:6] == ["reject", "configured", "0.950", 2, 1, "0.500"]
    assert any(
        "auto_accept_threshold = 0.9 on 5 ACCEPT" in line
        and "auto_reject_threshold = 0.95 on 1 FAIL" in line
        for line in page.text
    )


def test_accuracy_by_pattern_and_segment(data):
    page = section(triage(data, {}), "Accuracy by pattern")
    groups = {(g["kind"], g["group"]): g["agreement"] for g in document(data)["by_path"]}
    rows = [shown(row) for row in page.table.rows]
    assert len(rows) == len(groups)
    for kind, group, n, agreed, accuracy, ci in rows:
        a = groups[(kind, group)]
        assert [n, agreed, accuracy, ci] == [
            a["n"],
            a["agreed"],
            three(a["accuracy"]),
            span(a["ci"]),
        ]
    assert rows[0][:4] == ["pattern", "**/security_*", 1, 0]  # patterns first
    assert rows[1][:4] == ["segment", "src", 30, 25]  # then segments, most decided first
    assert SEGMENT in [row[1] for row in rows]
    assert ESCAPED.split("/")[0] in texts(page.chart.svg) and "<script" not in page.chart.svg


def test_the_path_chart_is_capped(store, settings, monkeypatch):
    calls: list[int] = []
    original = charts.bars
    monkeypatch.setattr(
        charts, "bars", lambda rows, **kw: calls.append(len(rows)) or original(rows, **kw)
    )
    write(
        store, [(f"c{n}", f"seg{n:02d}/x.md", 5, 0.8, "human", False, "accept") for n in range(40)]
    )
    page = section(triage(DashboardData(store, settings), {}), "Accuracy by pattern")
    assert calls == [30] and len(page.table.rows) == 41  # the pattern, then 40 segments
    assert any("draws the 30 groups listed first of 40" in line for line in page.text)


def test_an_empty_data_dir_says_why_without_raising(store, config):
    (only,) = triage(DashboardData(store, config), {})
    assert only.heading == "Triage" and only.text[0].startswith(
        "Nothing to show yet: no triage decisions yet"
    )


def test_ratings_without_triage_decisions_say_why(store, config):
    store.ratings.append_many(
        [
            Rating(
                run_id="r",
                item_id="i",
                dimension="overall",
                reviewer=ANN,
                channel="terminal",
                idempotency_key="k-r",
                judgment="good",
                score=1.0,
                timestamp=T0,
            )
        ]
    )
    (only,) = triage(DashboardData(store, config), {})
    assert only.text[0].startswith("Nothing to show yet: no triage decisions yet")


def test_decisions_without_a_human_decision_still_build(store, config):
    write(
        store, [(c, p, cat, conf, out, audit, None) for c, p, cat, conf, out, audit, _ in CHANGES]
    )
    sections = triage(DashboardData(store, config), {})
    reliability = section(sections, "Reliability curve")
    assert reliability.chart is None and "No bin has a human-decided change." in reliability.text
    assert section(sections, "Accuracy by pattern").chart is None
