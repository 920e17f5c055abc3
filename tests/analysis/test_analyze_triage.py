"""``hilbot analyze triage``: what the humans' corrections say about the diff triage, worked by
hand.

The TEN changes of one triage run ``tri`` (the table most tests use); ``human`` is the latest
decision:

    change                  cat conf  outcome   audit  human
    c1  test/a.md            5  0.99  accepted  yes    accept
    c2  test/b.md            5  0.97  accepted  yes    reject
    c3  docs/c.md            4  0.80  human            accept
    c4  test/security_x.md  4  0.70  human            reject
    c5  test/e.md            3  0.00  human            accept
    c6  test/f.md            3  0.00  human            reject
    c7  docs/g.md            2  0.60  human            reject
    c8  h.md                 1  0.98  rejected  yes    reject
    c9  test/i.md            1  0.96  rejected         –
    c10 test/j.md            3  0.20  human            –      (waiting)
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from itertools import count

import pytest

from analysis import analyses
from analysis.load import load
from analysis.stats import Undefined, wilson_interval
from analysis.triage import (
    TriageReport,
    digest_line,
    human_decisions,
    read_decisions,
    reliability_png,
    triage_report,
)
from evaluation import Store, load_config
from evaluation.log import read_numbered
from evaluation.records import Note, Rating, Reviewer, TriageDecision
from tests.bot.test_triage import write_trees

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)
ANN = Reviewer(platform="terminal", id="ann")
BOB = Reviewer(platform="telegram", id="42")
_keys = count()

TEN = [  # change, path, category, confidence, outcome, audit, human
    ("c1", "test/a.md", 5, 0.99, "accepted", True, "accept"),
    ("c2", "test/b.md", 5, 0.97, "accepted", True, "reject"),
    ("c3", "docs/c.md", 4, 0.80, "human", False, "accept"),
    ("c4", "test/security_x.md", 4, 0.70, "human", False, "reject"),
    ("c5", "test/e.md", 3, 0.0, "human", False, "accept"),
    ("c6", "test/f.md", 3, 0.0, "human", False, "reject"),
    ("c7", "docs/g.md", 2, 0.60, "human", False, "reject"),
    ("c8", "h.md", 1, 0.98, "rejected", True, "reject"),
    ("c9", "test/i.md", 1, 0.96, "rejected", False, None),
    ("c10", "test/j.md", 3, 0.20, "human", False, None),
]


def decision(
    change: str,
    category: int,
    confidence: float,
    outcome: str = "human",
    audit: bool = False,
    *,
    path: str | None = None,
    run: str = "tri",
) -> TriageDecision:
    return TriageDecision(
        run_id=run,
        change_id=change,
        path=path or f"test/{change}.md",
        outcome=outcome,
        rule="r",
        audit=audit,
        category=category,
        confidence=confidence,
        judge="local",
        timestamp=T0,
    )


def rating(
    change: str, judgment: str, minutes: float = 0, reviewer: Reviewer = ANN, *, run: str = "tri"
) -> Rating:
    return Rating(
        run_id=run,
        item_id=change,
        dimension="change",
        reviewer=reviewer,
        channel=reviewer.platform,
        idempotency_key=f"k-{next(_keys)}",
        judgment=judgment,
        score=1.0 if judgment == "accept" else 0.0,
        timestamp=T0 + timedelta(minutes=minutes),
    )


def write(store: Store, rows) -> None:
    """Decisions then ratings for (change, path, category, confidence, outcome, audit, human)
    rows."""
    store.ratings.append_many(
        [
            decision(c, cat, conf, out, audit, path=path)
            for c, path, cat, conf, out, audit, _ in rows
        ]
    )
    store.ratings.append_many([rating(c, human) for c, *_, human in rows if human])


def settings(**changes):
    return load_config(None).triage.model_copy(update=changes)


def report(store: Store, policy=None, **options) -> TriageReport:
    return triage_report(
        read_decisions(store.ratings.path), load(store).ratings, policy or settings(), **options
    )


@pytest.fixture
def ten(store: Store) -> Store:
    write(store, TEN)
    return store


# ------------------------------------------------------------------------- counts, confusion, audit


def test_counts_of_the_ten_changes(ten):
    c = report(ten).counts
    assert (c.triaged, c.accepted, c.rejected, c.decided_by_rules, c.rules_share) == (
        10,
        2,
        2,
        4,
        0.4,
    )
    assert (c.sent_to_humans, c.audit, c.human_decided, c.waiting, c.audit_waiting) == (
        6,
        3,
        8,
        1,
        0,
    )


def test_confusion_matrix_of_the_ten_changes(ten):
    rows = [(r.category, r.name, r.accept, r.reject) for r in report(ten).confusion]
    assert rows == [
        (1, "FAIL", 0, 1),
        (2, "RECOMMEND FAIL", 0, 1),
        (3, "UNSURE", 1, 1),
        (4, "RECOMMEND ACCEPT", 1, 1),
        (5, "ACCEPT", 1, 1),
    ]  # c9 and c10 have no human decision


def test_audit_accuracy_of_the_ten_changes(ten):
    audit = report(ten).audit  # c1 agreed, c2 not (auto-accepts); c8 agreed (auto-reject)
    assert [(a.n, a.agreed) for a in (audit.overall, audit.auto_accept, audit.auto_reject)] == [
        (3, 2),
        (2, 1),
        (1, 1),
    ]
    assert audit.overall.accuracy == pytest.approx(2 / 3) and audit.overall.ci == wilson_interval(
        2, 3
    )


def test_audit_accuracy_four_of_five_with_its_wilson_interval(store):
    write(
        store,
        [
            ("a1", "x/a1", 5, 0.99, "accepted", True, "accept"),
            ("a2", "x/a2", 5, 0.98, "accepted", True, "accept"),
            ("a3", "x/a3", 5, 0.97, "accepted", True, "reject"),
            ("r1", "x/r1", 1, 0.99, "rejected", True, "reject"),
            ("r2", "x/r2", 1, 0.96, "rejected", True, "reject"),
            ("n1", "x/n1", 5, 0.99, "accepted", False, None),
            ("h1", "x/h1", 4, 0.9, "human", False, "reject"),
        ],
    )
    audit = report(store).audit
    assert (audit.overall.n, audit.overall.agreed, audit.overall.accuracy) == (5, 4, 0.8)
    assert audit.overall.ci == wilson_interval(4, 5)
    assert audit.overall.ci.low == pytest.approx(
        0.3755, abs=1e-4
    ) and audit.overall.ci.high == pytest.approx(0.9638, abs=1e-4)
    assert (audit.auto_accept.agreed, audit.auto_accept.n, audit.auto_accept.ci) == (
        2,
        3,
        wilson_interval(2, 3),
    )
    assert (audit.auto_reject.agreed, audit.auto_reject.n, audit.auto_reject.ci) == (
        2,
        2,
        wilson_interval(2, 2),
    )


# --------------------------------------------------------------------------- calibration


def test_calibration_and_brier_score_by_hand(ten):
    cal = report(ten).calibration
    # The AI took a side on c1 c2 c3 c4 (accept) and c7 c8 (reject); the humans agreed on c1 c3 c7
    # c8; c5 c6 are UNSURE.
    assert (cal.agreement.n, cal.agreement.agreed, cal.unsure_left_out) == (6, 4, 2)
    brier = (
        (0.99 - 1) ** 2
        + (0.97 - 0) ** 2
        + (0.80 - 1) ** 2
        + (0.70 - 0) ** 2
        + (0.60 - 1) ** 2
        + (0.98 - 1) ** 2
    ) / 6
    assert cal.brier == pytest.approx(brier) and cal.brier == pytest.approx(1.6314 / 6)
    bins = [(b.label, b.n) for b in cal.bins]
    assert bins == [
        ("[0.0, 0.5)", 0),
        ("[0.5, 0.6)", 0),
        ("[0.6, 0.7)", 1),
        ("[0.7, 0.8)", 1),
        ("[0.8, 0.9)", 1),
        ("[0.9, 1.0]", 3),
    ]
    low = cal.bins[0]
    assert isinstance(low.mean_confidence, Undefined) and isinstance(low.accuracy, Undefined)
    assert [(b.mean_confidence, b.accuracy) for b in cal.bins[2:5]] == [
        (0.6, 1.0),
        (0.7, 0.0),
        (0.8, 1.0),
    ]  # left edges included
    top = cal.bins[-1]  # c1 .99 agreed, c2 .97 not, c8 .98 agreed
    assert top.mean_confidence == pytest.approx(0.98) and top.accuracy == pytest.approx(2 / 3)


def test_confidence_one_falls_in_the_last_bin(store):
    write(
        store,
        [
            ("a", "a", 5, 1.0, "accepted", True, "accept"),
            ("b", "b", 2, 0.0, "human", False, "accept"),
        ],
    )
    cal = report(store).calibration
    assert [b.n for b in cal.bins] == [1, 0, 0, 0, 0, 1]
    assert cal.brier == pytest.approx(
        0.0
    )  # (1 − 1)² and (0 − 0)²: both sure, one right, one wrong at confidence 0


# --------------------------------------------------------------------------- safe thresholds

SAFE = (
    [(f"s{n}", f"t/s{n}", 5, 0.99, "human", False, "accept") for n in range(10)]
    + [
        (f"m{n}", f"t/m{n}", 5, 0.9, "human", False, "reject" if n < 2 else "accept")
        for n in range(10)
    ]
    + [(f"u{n}", f"t/u{n}", 5, 0.995, "accepted", False, None) for n in range(5)]
    + [(f"q{n}", f"t/q{n}", 3, 0.999, "human", False, None) for n in range(5)]
)


def test_the_smallest_safe_threshold_and_how_much_it_automates(store):
    write(store, SAFE)
    accept, reject = report(
        store, settings(auto_accept_threshold=0.9), target_precision=0.99, min_n=5
    ).thresholds
    # at 0.9: 18 of 20 (0.9) < 0.99; at 0.99: 10 of 10. It would decide the 10 + 5 ACCEPTs at ≥ 0.99
    # of the 30 triaged.
    t = accept.suggested
    assert (accept.side, accept.categories, accept.decided) == ("accept", (5,), 20)
    assert (t.threshold, t.n, t.agreed, t.precision) == (0.99, 10, 10, 1.0)
    assert t.ci == wilson_interval(10, 10) and t.wilson_low == wilson_interval(10, 10).low
    assert (t.automated, t.automates) == (15, 0.5)
    c = accept.configured  # the configured 0.9 on the same data
    assert (c.threshold, c.n, c.agreed, c.precision, c.automated, c.automates) == (
        0.9,
        20,
        18,
        0.9,
        25,
        25 / 30,
    )
    assert reject.suggested == Undefined("no change in FAIL has a human decision yet")


def test_a_lower_target_takes_the_lower_threshold(store):
    write(store, SAFE)
    (accept, _) = report(store, target_precision=0.9, min_n=5).thresholds
    assert (accept.suggested.threshold, accept.suggested.n, accept.suggested.precision) == (
        0.9,
        20,
        0.9,
    )


def test_no_threshold_qualifies_says_why(store):
    write(store, SAFE)
    (accept, _) = report(
        store, target_precision=0.99, min_n=11
    ).thresholds  # 0.99 has only 10 changes
    assert accept.suggested == Undefined(
        "no threshold with at least 11 human-decided changes reaches precision 0.99 "
        "(best: 0.900 at 0.9, n = 20)"
    )
    (few, _) = report(store, min_n=21).thresholds
    assert few.suggested == Undefined(
        "only 20 human-decided changes in ACCEPT, fewer than min_n 21"
    )


def test_the_reject_side_uses_the_auto_reject_categories(ten):
    _, reject = report(
        ten, min_n=1
    ).thresholds  # FAIL decided by humans: c8 (.98, reject); c9 (.96) undecided
    assert (reject.suggested.threshold, reject.suggested.n, reject.suggested.precision) == (
        0.98,
        1,
        1.0,
    )
    assert (reject.suggested.automated, reject.suggested.automates) == (1, 0.1)
    _, wider = report(
        ten, settings(auto_reject_categories=[1, 2]), min_n=1
    ).thresholds  # c7 (.60, reject) joins
    assert (
        wider.categories,
        wider.decided,
        wider.suggested.threshold,
        wider.suggested.automated,
    ) == ((1, 2), 2, 0.6, 3)


# --------------------------------------------------------------------------- by path


def test_agreement_by_pattern_and_first_segment(ten):
    groups = {
        (g.kind, g.group): (g.agreement.n, g.agreement.agreed)
        for g in report(ten, settings(require_human=["**/security_*", "**/payment_*"])).by_path
    }
    assert groups == {
        ("pattern", "**/security_*"): (1, 0),
        ("pattern", "**/payment_*"): (0, 0),
        ("segment", "docs"): (2, 2),
        ("segment", "test"): (3, 1),
        ("segment", "(top level)"): (1, 1),
    }
    test = next(g for g in report(ten).by_path if g.group == "test")
    assert test.agreement.ci == wilson_interval(1, 3)


# --------------------------------------------------------------------------- human decisions


def test_a_change_decided_twice_uses_the_latest_rating(store):
    store.ratings.append_many(
        [
            decision("c1", 5, 0.99),
            decision("c2", 5, 0.99),
            decision("c3", 5, 0.99),
            decision("c4", 5, 0.99),
        ]
    )
    store.ratings.append_many(
        [
            rating("c1", "accept", 0, ANN),
            rating("c1", "reject", 5, BOB),  # later in time and in the log: reject
            rating("c2", "reject", 5, BOB),
            rating("c2", "accept", 0, ANN),  # later in the log, earlier in time: reject
            rating("c3", "accept", 7, ANN),
            rating("c3", "reject", 7, BOB),  # the same time: the later line wins
            rating("c4", "reject", 0, ANN),
            rating("c4", "accept", 9, ANN),  # one reviewer changed his mind: accept
        ]
    )
    decided = human_decisions(load(store).ratings)
    assert dict(zip(decided["change_id"], decided["human"])) == {
        "c1": "reject",
        "c2": "reject",
        "c3": "reject",
        "c4": "accept",
    }
    assert [(r.accept, r.reject) for r in report(store).confusion][4] == (1, 3)


def test_a_change_triaged_again_counts_once_at_its_latest_triage(store):
    store.ratings.append_many(
        [
            decision("c1", 3, 0.0, run="t1"),
            decision("c2", 5, 0.99, "accepted", run="t1"),
            decision("c1", 1, 0.98, "rejected", run="t2"),  # c1 changed again: its latest triage
            decision("c2", 5, 0.99, "accepted", run="t2"),
        ]
    )
    store.ratings.append(rating("c1", "accept", run="t1"))  # on c1's earlier version
    r = report(store)
    assert (r.counts.triaged, r.counts.accepted, r.counts.rejected, r.counts.human_decided) == (
        2,
        1,
        1,
        0,
    )
    assert r.runs == ("t1", "t2")
    assert (
        report(store, run="t1").counts.triaged,
        report(store, run="t1").counts.human_decided,
    ) == (
        2,
        1,
    )  # one run: its own changes


def test_a_change_decided_by_precedent_counts_at_the_human_decision_it_repeats(store):
    precedent = "precedent: rejected by ann on 2026-11-20 — same change"
    store.ratings.append_many(
        [
            decision("c1", 3, 0.0, run="t1"),
            rating("c1", "reject", run="t1"),
            decision("c1", 3, 0.0, "rejected", run="t2").model_copy(update={"rule": precedent}),
            decision("c2", 3, 0.0, "rejected", run="t2").model_copy(update={"rule": precedent}),
        ]
    )
    r = report(store)
    assert (r.counts.triaged, r.counts.human_decided, r.counts.rejected) == (2, 1, 1)
    assert [(row.accept, row.reject) for row in r.confusion][2] == (0, 1)  # UNSURE, rejected


def test_triaging_twice_counts_each_change_once_end_to_end(run_cli, tmp_path):
    expected, actual = _trees(tmp_path)
    (tmp_path / "hilbot.toml").write_text("[triage]\naudit_share = 0.0\n")
    for _ in range(2):  # the same trees: the open run is reused
        run_cli("triage", str(expected), str(actual))
    (actual / "test" / "words.md").write_text("answer: Nice\n")
    run_cli("triage", str(expected), str(actual))  # one change moved on: a new triage run
    data = json.loads(run_cli("analyze", "triage", "--format", "json").stdout)
    assert data["counts"]["triaged"] == 4 and len(data["runs"]) == 2


def test_ratings_of_other_runs_and_dimensions_are_not_decisions(store):
    store.ratings.append(decision("c1", 5, 0.99))
    other = rating("c1", "reject", 0, run="else")
    store.ratings.append_many(
        [other, rating("c1", "reject", 0).model_copy(update={"dimension": "overall"})]
    )
    assert report(store).counts.human_decided == 0


# --------------------------------------------------------------------------- undefined


def test_no_human_decision_is_undefined_with_the_reason(store):
    write(store, [(c, p, cat, conf, out, audit, None) for c, p, cat, conf, out, audit, _ in TEN])
    r = report(store)
    assert (r.counts.triaged, r.counts.human_decided, r.counts.waiting, r.counts.audit_waiting) == (
        10,
        0,
        6,
        3,
    )
    why = "no human decision on a change the AI accepted or rejected"
    assert r.calibration.agreement.accuracy == Undefined(why) and r.calibration.brier == Undefined(
        why
    )
    assert r.audit.overall.accuracy == Undefined("no audited decision checked by a human yet")
    assert r.thresholds[0].suggested == Undefined("no change in ACCEPT has a human decision yet")
    assert r.thresholds[0].configured.precision == Undefined(
        "no human-decided change at or above it"
    )
    assert r.to_dict()["calibration"]["brier"] == {"undefined": why}


def test_no_audit_decision_is_undefined_while_the_rest_is_computed(store):
    write(store, [(c, p, cat, conf, out, False, h) for c, p, cat, conf, out, _, h in TEN])
    r = report(store)
    assert r.audit.overall.n == 0 and r.audit.overall.ci == Undefined(
        "no audited decision checked by a human yet"
    )
    assert r.audit.auto_accept.accuracy == Undefined(
        "no audited auto-accept checked by a human yet"
    )
    assert r.calibration.agreement.n == 6


def test_an_empty_log(store):
    r = report(store)
    assert (
        r.counts.triaged == 0
        and r.counts.rules_share == Undefined("no change triaged")
        and r.runs == ()
    )
    assert digest_line(r) is None


# --------------------------------------------------------------------------- reading the decisions


def test_the_reader_reads_what_the_log_reader_reads_at_any_block_size(store, monkeypatch):
    import analysis._records as records

    good = decision("c1", 5, 0.99)
    store.ratings.append_many(
        [
            good,
            Note(
                run_id="tri",
                item_id="c1",
                reviewer=ANN,
                idempotency_key="n",
                text='"triage_decision"',
            ),
            rating("c1", "accept"),
            decision("c2", 3, 0.0, path="a/b.md"),
        ]
    )
    with store.ratings.path.open("ab") as log:
        log.write(
            b'{"type":"triage_decision","run_id":"tri","change_id":"c3"}\n'
        )  # a bad one: line 5
        log.write(b'not json, but it says "triage_decision"\n')  # line 6
        log.write(good.model_copy(update={"change_id": "c9"}).model_dump_json().encode() + b"\n")
        log.write(b'{"type":"triage_decision","v":1,"run_id":"tri"')  # torn last line: 8
    expected_issues: list = []
    expected = [
        (n, r)
        for n, r in read_numbered(store.ratings.path, expected_issues)
        if r.type == "triage_decision"
    ]
    for block in (1, 7, 64, 300, 1 << 20):
        monkeypatch.setattr(records, "_BLOCK", block)
        issues: list = []
        frame = read_decisions(store.ratings.path, issues)
        assert (
            list(zip(frame["line"], frame["change_id"]))
            == [(n, r.change_id) for n, r in expected]
            == [(1, "c1"), (4, "c2"), (7, "c9")]
        )
        assert [str(i) for i in issues] == [str(i) for i in expected_issues], block
    assert [(i.line, i.torn) for i in issues] == [(5, False), (6, False), (8, True)]
    assert "missing" in issues[0].reason.lower() or "required" in issues[0].reason.lower()
    assert frame["confidence"].tolist() == [0.99, 0.0, 0.99] and frame["path"].tolist() == [
        "test/c1.md",
        "a/b.md",
        "test/c1.md",
    ]


def test_a_missing_log_reads_as_no_decisions(tmp_path):
    frame = read_decisions(tmp_path / "none.jsonl")
    assert len(frame) == 0 and "confidence" in frame.columns


# --------------------------------------------------------------------------- the command


def test_triage_is_a_builtin_analysis_with_its_help():
    spec = analyses.get("triage")
    assert spec.compute.__module__ == "analysis.triage" and [o.name for o in spec.options] == [
        "target_precision",
        "min_n",
    ]
    assert (
        spec.help.splitlines()[0].endswith(".")
        and spec.help.splitlines()[-1] == "Example: hilbot analyze triage --target-precision 0.99"
    )


def _trees(root):
    return write_trees(
        root,
        {
            "test/format.md": (
                "total: 10\n",
                "total:  10\n",
            ),  # ACCEPT 1.0 → accepted (and audited: share 1)
            "test/numbers.md": ("f1: 0.850\n", "f1: 0.851\n"),  # RECOMMEND ACCEPT 0.8 → human
            "test/words.md": ("answer: Paris\n", "answer: Lyon\n"),  # UNSURE → human
            "api/security_login.md": ("ok\n", " ok\n"),
        },
    )  # ACCEPT, but require_human → human


@pytest.fixture
def triaged(tmp_path):
    """A real triage of four snapshot changes; the human decided three of them. Returns the run
    id."""
    from evaluation.triage_run import run_triage

    (tmp_path / "hilbot.toml").write_text(
        '[triage]\nrelative_tolerance = 0.01\nrequire_human = ["**/security_*"]\naudit_share = '
        "1.0\n"
    )
    store = Store(tmp_path / "results")
    outcome = run_triage(
        store, load_config(tmp_path / "hilbot.toml"), [str(p) for p in _trees(tmp_path)]
    )
    store.ratings.append_many(
        [
            rating("test/format.md", "accept", run=outcome.run_id),
            rating("test/numbers.md", "reject", run=outcome.run_id),
            rating("api/security_login.md", "accept", run=outcome.run_id),
        ]
    )
    return outcome.run_id


def test_the_command_end_to_end(triaged, run_cli, tmp_path):
    result = run_cli("analyze", "triage")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith("# Triage: what the humans' corrections say")
    assert "| 4 | 1 (0.250) | 1 | 0 | 3 | 1 | 3 | 1 | 0 |" in text  # counts
    assert "| 5 ACCEPT | 2 | 0 | 2 |" in text and "| 4 RECOMMEND ACCEPT | 0 | 1 | 1 |" in text
    assert "humans agreed on 2 of 3" in text and "| pattern **/security_* | 1 | 1 | 1.000 |" in text
    data = json.loads(run_cli("analyze", "triage", "--format", "json", "--run", triaged).stdout)
    assert data["version"] == 1 and data["run"] == triaged and data["runs"] == [triaged]
    assert data["counts"]["triaged"] == 4 and data["audit"]["auto_accept"]["agreed"] == 1
    # format.md ACCEPT 1.0 agreed, security ACCEPT 1.0 agreed, numbers RECOMMEND ACCEPT 0.8 not:
    # (0 + 0 + 0.64) / 3
    assert data["calibration"]["brier"] == pytest.approx(0.64 / 3)
    out = tmp_path / "reports"
    written = run_cli("analyze", "triage", "--out", str(out), "--min-n", "1")
    assert written.returncode == 0, written.stderr
    assert sorted(p.name for p in out.iterdir()) == ["triage.json", "triage.md", "triage.png"]
    assert (out / "triage.png").read_bytes().startswith(b"\x89PNG")
    assert json.loads((out / "triage.json").read_text())["min_n"] == 1


@pytest.mark.parametrize(
    "args, flag",
    [
        (("--dimension", "change"), "--dimension"),
        (("--target-precision", "0.3"), "--target-precision"),
        (("--min-n", "0"), "--min-n"),
        (("--run", "nope"), "nope"),
    ],
)
def test_the_command_refuses_in_one_line(triaged, run_cli, args, flag):
    result = run_cli("analyze", "triage", *args)
    assert (
        result.returncode == 2
        and len(result.stderr.strip().splitlines()) == 1
        and flag in result.stderr
    ), result.stderr


def test_a_run_that_is_no_triage_is_refused(triaged, run_cli, tmp_path):
    from evaluation.records import Evaluation, ItemData, Query, QueryEvaluation, RunHeader

    Store(tmp_path / "results").create_run(
        RunHeader(run_id="plain"),
        [
            QueryEvaluation(
                run_id="plain",
                data=ItemData(
                    id="i", query=Query(query="q"), evaluation=Evaluation(scores={"overall": 0.5})
                ),
            )
        ],
    )
    result = run_cli("analyze", "triage", "--run", "plain")
    assert result.returncode == 2 and "run 'plain' has no triage decisions" in result.stderr


def test_a_bad_decision_line_is_one_warning_and_the_rest_is_analysed(triaged, run_cli, tmp_path):
    log = Store(tmp_path / "results").ratings.path
    lines = len(log.read_bytes().splitlines())
    with log.open("ab") as handle:
        handle.write(
            b'{"type":"triage_decision","v":1,"run_id":"x","change_id":"c","path":"p","outcome":"maybe","rule":"r",'
            b'"category":5,"confidence":1,"judge":"local"}\n'
        )
    result = run_cli("analyze", "triage", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["counts"]["triaged"] == 4
    where = f"ratings.jsonl:{lines + 1}: outcome:"
    assert result.stderr.count(where) == 1, result.stderr  # once, though both readers see it


def test_the_reliability_chart(ten):
    png = reliability_png(report(ten))
    assert png.startswith(b"\x89PNG") and len(png) > 5000


# --------------------------------------------------------------------------- the digest line


def test_the_digest_line_from_the_reports_figures(ten):
    r = report(ten)
    assert (
        digest_line(r)
        == "Triage: 10 changes, 4 decided by rules (40%), humans agreed with the AI on 4 of 6 (67%)"
    )
    assert (
        r.counts.triaged,
        r.counts.decided_by_rules,
        r.calibration.agreement.agreed,
        r.calibration.agreement.n,
    ) == (10, 4, 4, 6)


def test_the_digest_line_before_any_human_decision(store):
    store.ratings.append_many([decision("c1", 5, 0.99, "accepted"), decision("c2", 3, 0.0)])
    assert digest_line(report(store)) == (
        "Triage: 2 changes, 1 decided by rules (50%), "
        "no human decision yet on a change the AI accepted or rejected"
    )
