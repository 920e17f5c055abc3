"""The scheduled review digest: hand-worked figures, ordering, text and chart.

The ``reviewed`` store holds three runs (k = 2 ratings per item):

* ``alpha`` (overall), AI overall: a1 .8, a2 .6, a3 .4, a4 unscored.
* ``beta`` (overall, relevance), AI: b1 overall .5 / relevance .9, b2 overall .3 (relevance falls
  back to .3).
* ``gamma`` (overall), 3 items, never judged.

SINCE = 2026-11-20 09:00 UTC; NOW = a day later. Events (minutes relative to SINCE):

    alpha a1  alice 0.25 [broken] @-60, changed to 1.0 [stale] @+10   -> current 1.0 [stale], new
    alpha a1  bob   0.75 [stale, vague] @-50
    alpha a2  alice 0.5 @-40
    alpha a2  bob   0.0 [vague] @+20                                  new
    alpha a2  carol 0.75 @+25                                         new
    alpha a3  carol 0.25 [wrong] @+30                                 new
    alpha a3  alice skip @+5
    alpha a4  bob   1.0 @+40 (redelivered with the same key as 0.0: ignored)   new, latest of alpha
    alpha a4  dave  0.0 @-10, then skip @+45                          -> a skip, his rating is gone
    beta  b1  carol relevance 0.5 [vague] @-30
    beta  b2  alice relevance 1.0 @-20                                latest of beta
    + a note and a chat ``delivery`` record, which count for nothing.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from io import BytesIO

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.digest import Digest, RunProgress, build_digest, chart_png, top_concerns
from evaluation import Store, load_config
from evaluation.records import (
    Evaluation,
    ItemData,
    Note,
    Query,
    QueryEvaluation,
    Rating,
    Reviewer,
    RunHeader,
    Skip,
)
from tests.conftest import ROOT

ALICE = Reviewer(platform="terminal", id="alice", name="Alice")
BOB = Reviewer(platform="telegram", id="42", name="Bob")
CAROL = Reviewer(platform="slack", id="U3", name="Carol")
DAVE = Reviewer(platform="telegram", id="77", name="Dave")
SINCE = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)
NOW = SINCE + timedelta(days=1)

_keys = iter(range(10**6))


def _t(minutes: float) -> datetime:
    return SINCE + timedelta(minutes=minutes)


def make_run(
    store: Store, run_id: str, scores: dict[str, dict[str, float]], dimensions: list[str]
) -> None:
    items = [
        QueryEvaluation(
            run_id=run_id,
            data=ItemData(
                id=item, query=Query(query=f"query {item}"), evaluation=Evaluation(scores=s)
            ),
        )
        for item, s in scores.items()
    ]
    store.create_run(RunHeader(run_id=run_id, dimensions=dimensions), items)


def rate(
    store: Store,
    run: str,
    item: str,
    score: float,
    reviewer: Reviewer,
    minutes: float,
    *,
    dimension: str = "overall",
    concerns: tuple[str, ...] = (),
    key: str | None = None,
) -> None:
    store.ratings.append(
        Rating(
            run_id=run,
            item_id=item,
            dimension=dimension,
            reviewer=reviewer,
            channel=reviewer.platform,
            idempotency_key=key or f"r-{next(_keys)}",
            judgment="x",
            score=score,
            concerns=list(concerns),
            timestamp=_t(minutes),
        )
    )


def skip(store: Store, run: str, item: str, reviewer: Reviewer, minutes: float) -> None:
    store.ratings.append(
        Skip(
            run_id=run,
            item_id=item,
            reviewer=reviewer,
            channel=reviewer.platform,
            idempotency_key=f"s-{next(_keys)}",
            timestamp=_t(minutes),
        )
    )


@pytest.fixture
def k2(tmp_path):
    (tmp_path / "k2.toml").write_text("[review]\nk = 2\n")
    return load_config(tmp_path / "k2.toml")


@pytest.fixture
def reviewed(store: Store) -> Store:
    make_run(
        store,
        "alpha",
        {"a1": {"overall": 0.8}, "a2": {"overall": 0.6}, "a3": {"overall": 0.4}, "a4": {}},
        ["overall"],
    )
    make_run(
        store,
        "beta",
        {"b1": {"overall": 0.5, "relevance": 0.9}, "b2": {"overall": 0.3}},
        ["overall", "relevance"],
    )
    make_run(store, "gamma", {"g1": {"overall": 0.1}, "g2": {}, "g3": {}}, ["overall"])
    rate(store, "alpha", "a1", 0.25, ALICE, -60, concerns=("broken",))
    rate(store, "alpha", "a1", 0.75, BOB, -50, concerns=("stale", "vague"))
    rate(store, "alpha", "a2", 0.5, ALICE, -40)
    rate(store, "beta", "b1", 0.5, CAROL, -30, dimension="relevance", concerns=("vague",))
    rate(store, "beta", "b2", 1.0, ALICE, -20, dimension="relevance")
    rate(store, "alpha", "a4", 0.0, DAVE, -10)
    skip(store, "alpha", "a3", ALICE, 5)
    rate(store, "alpha", "a1", 1.0, ALICE, 10, concerns=("stale",))
    rate(store, "alpha", "a2", 0.0, BOB, 20, concerns=("vague",))
    rate(store, "alpha", "a2", 0.75, CAROL, 25)
    rate(store, "alpha", "a3", 0.25, CAROL, 30, concerns=("wrong",))
    rate(store, "alpha", "a4", 1.0, BOB, 40, key="tap-a4")
    rate(store, "alpha", "a4", 0.0, BOB, 41, key="tap-a4")  # redelivery: same key, dropped
    skip(store, "alpha", "a4", DAVE, 45)
    store.ratings.append(
        Note(
            run_id="alpha",
            item_id="a2",
            reviewer=BOB,
            idempotency_key="n-1",
            text="hm",
            timestamp=_t(50),
        )
    )
    store.ratings.append(
        {
            "type": "delivery",
            "v": 1,
            "run_id": "alpha",
            "item_id": "a3",
            "dimension": "overall",
            "reviewer": BOB.model_dump(),
            "channel": "telegram",
            "kind": "card",
            "chat_id": "42",
            "message_id": "9",
        }
    )
    return store


# --------------------------------------------------------------------------- figures


def test_run_progress_figures(reviewed, k2):
    digest = build_digest(reviewed, k2, since=SINCE, now=NOW, chart=False)
    alpha, relevance = digest.runs
    # alpha: current ratings a1 {1.0, .75}, a2 {.5, 0, .75}, a3 {.25}, a4 {1.0}; skips: alice a3,
    # dave a4.
    # Rated (>= 2 ratings): a1 mean .875, a2 mean 1.25/3; human = (.875 + 1.25/3) / 2;
    # AI = (.8 + .6) / 2.
    # Δ (human − AI) over the same two items: ((.875 - .8) + (1.25/3 - .6)) / 2 = human − AI
    # exactly.
    assert alpha == RunProgress(
        run_id="alpha",
        dimension="overall",
        items=4,
        rated_items=2,
        ratings=7,
        skips=2,
        reviewers=4,
        human_average=pytest.approx((0.875 + 1.25 / 3) / 2),
        ai_average=pytest.approx(0.7),
        ai_vs_human_delta=pytest.approx((0.875 - 0.8 + 1.25 / 3 - 0.6) / 2),
    )
    assert alpha.ai_vs_human_delta == pytest.approx(alpha.human_average - alpha.ai_average)
    # beta relevance: one rating per item, so nothing rated: no human figure, and no Δ beside it
    # either
    # (before, Δ = .15 from the single ratings stood next to "human –").
    assert relevance == RunProgress(
        run_id="beta",
        dimension="relevance",
        items=2,
        rated_items=0,
        ratings=2,
        skips=0,
        reviewers=2,
        human_average=None,
        ai_average=None,
        ai_vs_human_delta=None,
    )


def test_digest_totals(reviewed, k2):
    digest = build_digest(reviewed, k2, since=SINCE, now=NOW, chart=False)
    assert digest.generated_at == NOW and digest.since == SINCE
    # New: alice a1 (+10, a change of an older rating), bob a2, carol a2, carol a3, bob a4 -> 5 from
    # 3 reviewers.
    assert (digest.new_ratings, digest.new_reviewers) == (5, 3)
    # All 9 current ratings: alpha 1 + .75 + .5 + 0 + .75 + .25 + 1 = 4.25, beta 1.5 -> 5.75 / 9.
    assert digest.human_average == pytest.approx(5.75 / 9)
    # Δ: alpha -.55 over 6, beta +.3 over 2 -> -.25 / 8.
    assert digest.ai_vs_human_delta == pytest.approx(-0.25 / 8)
    # Alice's replaced "broken" is gone; vague: bob a1, bob a2, carol b1; stale: alice a1, bob a1.
    assert digest.top_concerns == [("vague", 3), ("stale", 2), ("wrong", 1)]
    assert digest.chart_png is None


def test_since_none_counts_every_current_rating(reviewed, k2):
    digest = build_digest(reviewed, k2, now=NOW, chart=False)
    assert (digest.since, digest.new_ratings, digest.new_reviewers) == (None, 9, 3)
    assert digest.lines()[-2] == "All time: 9 ratings from 3 reviewers"


def test_since_is_inclusive_and_naive_means_utc(reviewed, k2):
    digest = build_digest(reviewed, k2, since=datetime(2026, 11, 20, 9, 40), now=NOW, chart=False)
    assert (digest.since, digest.new_ratings, digest.new_reviewers) == (
        _t(40),
        1,
        1,
    )  # bob a4 at exactly +40


def test_k_changes_rated_items_and_averages(reviewed, config):
    alpha, relevance = build_digest(reviewed, config, now=NOW, chart=False).runs  # built-in k = 1
    # Every rated item counts: a1 .875, a2 1.25/3, a3 .25, a4 1.0; AI over the scored ones a1..a3.
    assert (alpha.rated_items, relevance.rated_items) == (4, 2)
    assert alpha.human_average == pytest.approx((0.875 + 1.25 / 3 + 0.25 + 1.0) / 4)
    assert alpha.ai_average == pytest.approx((0.8 + 0.6 + 0.4) / 3)
    assert relevance.human_average == pytest.approx(0.75) and relevance.ai_average == pytest.approx(
        0.6
    )
    # Δ over the rated items the AI scored (a1..a3; a4 is unscored): with k = 1 every rated item
    # counts
    assert alpha.ai_vs_human_delta == pytest.approx((0.875 - 0.8 + 1.25 / 3 - 0.6 + 0.25 - 0.4) / 3)


def test_listed_runs_only_and_unrated_ones_get_a_line(reviewed, k2):
    digest = build_digest(reviewed, k2, since=SINCE, now=NOW, runs=["gamma", "beta"], chart=False)
    # beta (rated @-20) before gamma (never rated); beta's header dimensions all appear.
    assert [(r.run_id, r.dimension) for r in digest.runs] == [
        ("beta", "overall"),
        ("beta", "relevance"),
        ("gamma", "overall"),
    ]
    beta_overall, _, gamma = digest.runs
    assert gamma == RunProgress(
        "gamma",
        "overall",
        items=3,
        rated_items=0,
        ratings=0,
        skips=0,
        reviewers=0,
        human_average=None,
        ai_average=None,
        ai_vs_human_delta=None,
    )
    assert beta_overall.items == 2 and beta_overall.ratings == 0
    # Totals cover the listed runs only: beta's two ratings, both before SINCE.
    assert (digest.new_ratings, digest.new_reviewers) == (0, 0)
    assert digest.human_average == pytest.approx(
        0.75
    ) and digest.ai_vs_human_delta == pytest.approx(0.15)
    assert digest.top_concerns == [("vague", 1)]
    assert digest.lines()[1:4] == [
        "beta · overall: 0/2 rated · 0 ratings · human – · AI – · human − AI –",
        "beta · relevance: 0/2 rated · 2 ratings · human – · AI – · human − AI –",
        "gamma · overall: 0/3 rated · 0 ratings · human – · AI – · human − AI –",
    ]
    assert digest.lines()[5] == "No new ratings since 2026-11-20 09:00 UTC"


def test_unknown_listed_run_has_no_items(reviewed, k2):
    (progress,) = build_digest(reviewed, k2, now=NOW, runs=["nope"], chart=False).runs
    assert (progress.run_id, progress.dimension, progress.items, progress.ratings) == (
        "nope",
        "overall",
        0,
        0,
    )


def test_runs_ordered_by_latest_rating_then_id(store, config):
    for run_id in ("b", "a", "c"):
        make_run(store, run_id, {"i": {"overall": 0.5}}, ["overall"])
    rate(store, "c", "i", 1.0, ALICE, 0)
    rate(store, "a", "i", 1.0, ALICE, 5)
    rate(store, "b", "i", 1.0, BOB, 5)
    skip(store, "c", "i", BOB, 99)  # a skip is not a rating: c's latest rating stays @0
    assert [r.run_id for r in build_digest(store, config, chart=False).runs] == ["a", "b", "c"]


def test_top_concerns_keeps_five_and_breaks_ties_by_name():
    def r(*tags: str) -> Rating:
        return Rating(
            run_id="x",
            item_id="i",
            reviewer=ALICE,
            idempotency_key="k",
            judgment="x",
            score=1,
            concerns=list(tags),
        )

    ratings = [r("f", "e", "e"), r("e", "d"), r("c", "b"), r("a", "g"), r("zz", "zz", "zz")]
    # each tag once per rating: e 2, then a b c d f g zz with 1 each, by name
    assert top_concerns(ratings) == [("e", 2), ("a", 1), ("b", 1), ("c", 1), ("d", 1)]


# --------------------------------------------------------------------------- text


def test_lines(reviewed, k2):
    digest = build_digest(reviewed, k2, since=SINCE, now=NOW, chart=False)
    assert digest.lines() == [
        "hilbot digest · 2026-11-21 09:00 UTC",
        # human (.875 + .41667) / 2 = .64583, AI (.8 + .6) / 2 = .7, over the items rated k = 2
        # times;
        # Δ over the same items: ((.875 - .8) + (.41667 - .6)) / 2 = -.05417, the difference of the
        # two shown
        "alpha · overall: 2/4 rated · 7 ratings, 2 skips · human 0.65 · AI 0.70 · human − AI −0.05",
        # no item has its k ratings yet: no human figure, so no AI figure and no Δ either
        "beta · relevance: 0/2 rated · 2 ratings · human – · AI – · human − AI –",
        # 5.75 / 9 = .6389; -.25 / 8 = -.03125
        "All runs: 9 ratings · human 0.64 · human − AI −0.03",
        "New since 2026-11-20 09:00 UTC: 5 ratings from 3 reviewers",
        "Top concerns: vague 3, stale 2, wrong 1",
    ]
    assert digest.text() == "\n".join(digest.lines())


def test_stored_figures_are_not_rounded(reviewed, k2):
    digest = build_digest(reviewed, k2, now=NOW, chart=False)
    assert digest.human_average == 5.75 / 9 != round(5.75 / 9, 2)


def test_empty_store(store, config):
    digest = build_digest(store, config, since=SINCE, now=NOW)
    assert digest == Digest(
        generated_at=NOW,
        since=SINCE,
        runs=[],
        new_ratings=0,
        new_reviewers=0,
        human_average=None,
        ai_vs_human_delta=None,
        top_concerns=[],
        chart_png=None,
    )
    assert digest.lines() == ["hilbot digest · 2026-11-21 09:00 UTC", "No ratings yet."]


def test_skips_only_is_still_no_ratings(store, config):
    make_run(store, "alpha", {"a1": {"overall": 0.8}}, ["overall"])
    skip(store, "alpha", "a1", ALICE, 0)
    digest = build_digest(store, config, now=NOW)
    assert digest.chart_png is None
    assert digest.lines() == [
        "hilbot digest · 2026-11-21 09:00 UTC",
        "alpha · overall: 0/1 rated · 0 ratings, 1 skip · human – · AI – · human − AI –",
        "No ratings yet.",
    ]


# --------------------------------------------------------------------------- the triage line


def _triage(store: Store) -> None:
    """Run ``tri``: t1 ACCEPT .99 accepted by a rule; the humans agreed on t2 (RECOMMEND ACCEPT),
    not on t3 (RECOMMEND FAIL); t4 is UNSURE (no side, left out of the agreement), t5 waits."""
    from evaluation.records import TriageDecision

    rows = [
        ("t1", 5, 0.99, "accepted"),
        ("t2", 4, 0.8, "human"),
        ("t3", 2, 0.7, "human"),
        ("t4", 3, 0.0, "human"),
        ("t5", 3, 0.0, "human"),
    ]
    store.ratings.append_many(
        [
            TriageDecision(
                run_id="tri",
                change_id=c,
                path=f"test/{c}.md",
                outcome=o,
                rule="r",
                category=cat,
                confidence=conf,
                judge="local",
                timestamp=_t(0),
            )
            for c, cat, conf, o in rows
        ]
    )
    for item, judgment in (("t2", "accept"), ("t3", "accept"), ("t4", "reject")):
        store.ratings.append(
            Rating(
                run_id="tri",
                item_id=item,
                dimension="change",
                reviewer=ALICE,
                channel="terminal",
                idempotency_key=f"r-{next(_keys)}",
                judgment=judgment,
                score=float(judgment == "accept"),
                timestamp=_t(60),
            )
        )


def test_the_triage_line(reviewed, k2):
    _triage(reviewed)
    digest = build_digest(reviewed, k2, since=SINCE, now=NOW, chart=False)
    line = "Triage: 5 changes, 1 decided by rules (20%), humans agreed with the AI on 1 of 2 (50%)"
    assert digest.triage == line
    lines = digest.lines()
    assert lines.index(line) == len(digest.runs) + 1 and lines[lines.index(line) + 1].startswith(
        "All runs: "
    )  # after the run lines


def test_the_triage_line_only_for_listed_triage_runs(reviewed, k2):
    _triage(reviewed)
    assert build_digest(reviewed, k2, now=NOW, runs=["alpha"], chart=False).triage is None
    listed = build_digest(
        reviewed, k2, now=NOW, runs=iter(["tri", "alpha"]), chart=False
    )  # any iterable, read twice
    assert listed.triage is not None and listed.triage.startswith("Triage: 5 changes")
    assert list(dict.fromkeys(r.run_id for r in listed.runs)) == ["tri", "alpha"]


def test_no_triage_line_without_triage_decisions(reviewed, k2):
    digest = build_digest(reviewed, k2, now=NOW, chart=False)
    assert digest.triage is None and not any(line.startswith("Triage:") for line in digest.lines())


def test_the_triage_line_shows_before_any_rating(store, config):
    _triage(store)
    store.ratings.path.write_text(
        "".join(
            line + "\n"
            for line in store.ratings.path.read_text().splitlines()
            if '"triage_decision"' in line
        )
    )  # the decisions only: nobody has decided yet
    assert build_digest(store, config, now=NOW).lines() == [
        "hilbot digest · 2026-11-21 09:00 UTC",
        "Triage: 5 changes, 1 decided by rules (20%), no human decision yet on a change the AI "
        "accepted or rejected",
        "No ratings yet.",
    ]


# --------------------------------------------------------------------------- chart


def _decode(png: bytes):
    image = pytest.importorskip("matplotlib.image")
    return image.imread(BytesIO(png), format="png")


def test_chart_png(reviewed, k2):
    png = build_digest(reviewed, k2, now=NOW).chart_png
    assert png is not None and png.startswith(b"\x89PNG") and len(png) < 150_000
    height, width = _decode(png).shape[:2]
    assert width >= 300 and height >= 100


def test_chart_for_one_run_and_for_many():
    one = RunProgress("r", "overall", 3, 1, 2, 0, 1, 0.5, None, None)
    assert chart_png([one]).startswith(b"\x89PNG")
    many = [
        RunProgress(f"run-{n:02d}", "overall", 20, n % 20, n, 1, 2, n / 40, 1 - n / 40, -0.1)
        for n in range(40)
    ]
    png = chart_png(many)
    assert png.startswith(b"\x89PNG") and len(png) < 150_000
    with pytest.raises(ValueError):
        chart_png([])


def test_importing_digest_does_not_import_matplotlib():
    code = "import analysis.digest, sys; print('matplotlib' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- what changed

QUALITY = {"excellent": 1.0, "good": 0.7, "okay": 0.4, "miss": 0.1}


def _quality_run(store: Store, run_id: str, items: dict[str, tuple[str, str]]) -> None:
    store.create_run(
        RunHeader(run_id=run_id, dimensions=["quality"]),
        [
            QueryEvaluation(
                run_id=run_id,
                data=ItemData(
                    id=item,
                    query=Query(query=f"query {item}", category=category),
                    features={"size": size},
                    evaluation=Evaluation(scores={"overall": 0.9}),
                ),
            )
            for item, (category, size) in items.items()
        ],
    )


def _judge(store: Store, run: str, item: str, judgment: str, who: Reviewer, minutes: float, *tags):
    store.ratings.append(
        Rating(
            run_id=run,
            item_id=item,
            dimension="quality",
            reviewer=who,
            channel=who.platform,
            idempotency_key=f"q-{next(_keys)}",
            judgment=judgment,
            score=QUALITY[judgment],
            concerns=list(tags),
            timestamp=_t(minutes),
        )
    )


@pytest.fixture
def regressed(store: Store) -> Store:
    """v1 rated the day before SINCE, v2 since: the six tasks items (small) excellent, then miss
    with lacks_catalyst; the three orm items (large) good both times."""
    items = {f"t{n}": ("tasks", "small") for n in range(6)}
    items |= {f"o{n}": ("orm", "large") for n in range(3)}
    _quality_run(store, "v1", items)
    _quality_run(store, "v2", items)
    for n in range(6):
        _judge(store, "v1", f"t{n}", "excellent", ALICE, -600 + n)
        _judge(store, "v2", f"t{n}", "miss", ALICE, 60 + n, "lacks_catalyst")
    for n in range(3):
        _judge(store, "v1", f"o{n}", "good", BOB, -500 + n)
        _judge(store, "v2", f"o{n}", "good", BOB, 100 + n)
    return store


def test_the_digest_carries_regression_alerts_with_their_interval(regressed, config):
    """6/6 excellent before, 0/6 since: Newcombe's interval of the fall is −100 to −45 points
    (Wilson's 0 of 6 reaches 0.390); lacks_catalyst went from 0 of 9 ratings to 6 of 9."""
    digest = build_digest(regressed, config, since=SINCE, now=NOW, chart=False, figures=True)
    assert digest.alerts == (
        "⚠ quality · category=tasks: success 100% (excellent 6) → 0% (miss 6), −100 pts "
        "(95% CI −100 to −45)",
        "⚠ quality · feature size=small: success 100% (excellent 6) → 0% (miss 6), −100 pts "
        "(95% CI −100 to −45)",
        "⚠ quality · concern lacks_catalyst: on 0% of 9 ratings → 67% of 9, +67 pts "
        "(95% CI 23 to 88)",
    )
    lines = digest.lines()
    header = lines.index("Regressions since 2026-11-20 09:00 UTC (against the 24 hours before):")
    assert tuple(lines[header + 1 : header + 4]) == digest.alerts
    assert lines[header - 1] == "New since 2026-11-20 09:00 UTC: 9 ratings from 2 reviewers"
    assert not any("orm" in line or "large" in line for line in digest.alerts)
    # the digest without the analyses' lines (figures=False) has none
    assert build_digest(regressed, config, since=SINCE, now=NOW, chart=False).alerts == ()


def test_no_alert_without_a_previous_window(regressed, config):
    digest = build_digest(regressed, config, now=NOW, chart=False, figures=True)  # all time
    assert digest.alerts == () and not any(
        line.startswith("Regressions") for line in digest.lines()
    )


def test_the_digest_carries_the_synthesis_of_the_runs_rated_anew(regressed, config):
    digest = build_digest(regressed, config, since=SINCE, now=NOW, chart=False, figures=True)
    first, *actions = digest.synthesis
    assert first.startswith(
        "Synthesis of v2 · quality (statistical): 9 ratings of 9 items by 2 reviewer(s)"
    )
    assert actions[0] == "  → Address lacks_catalyst: flagged in 6 rating(s)"
    assert len(actions) <= 3 and not any("v1" in line for line in digest.synthesis)
    assert digest.lines()[-len(digest.synthesis) :] == list(digest.synthesis)


def test_a_stored_synthesis_newer_than_the_ratings_is_the_one_shown(regressed, config):
    """An LLM's synthesis (written at a session's end, say) speaks for the ratings before it."""
    from evaluation.records import ReviewSummary

    def stored(minutes: float, text: str) -> None:
        regressed.ratings.append(
            ReviewSummary(
                run_id="v2",
                dimension="quality",
                reviewedAt=_t(minutes),
                synthesis=text,
                synthesis_source="claude-sonnet-5",
                actionItems=["Look at the tasks answers", "Re-run the judge", "Ship", "Party"],
            )
        )

    stored(50, "Written before the latest ratings.")
    digest = build_digest(regressed, config, since=SINCE, now=NOW, chart=False, figures=True)
    assert "(statistical)" in digest.synthesis[0]
    stored(200, "Tasks answers regressed.")
    digest = build_digest(regressed, config, since=SINCE, now=NOW, chart=False, figures=True)
    assert digest.synthesis == (
        "Synthesis of v2 · quality (by claude-sonnet-5): Tasks answers regressed.",
        "  → Look at the tasks answers",
        "  → Re-run the judge",
        "  → Ship",
    )


# --------------------------------------------------------------------------- counted with arrays


def per_rating(frames, runs, config, start) -> dict:
    """The digest's figures one rating at a time, averaged with :func:`statistics.mean`: how the
    digest counted before it counted with arrays (the reference the arrays must equal)."""
    from collections import Counter
    from statistics import mean

    from analysis.load import ai_score_column

    def avg(values):
        values = list(values)
        return mean(values) if values else None

    tags: dict = {}
    for row in frames.concerns.itertuples(index=False):
        tags.setdefault((row.run_id, row.item_id, row.dimension, row.reviewer), []).append(row.tag)
    judged: dict = {}  # (run, dimension) -> [(item, reviewer, time, score or None, tags)]
    for row in frames.ratings.itertuples(index=False):
        key = (row.run_id, row.item_id, row.dimension, row.reviewer)
        when = None if row.timestamp is pd.NaT else row.timestamp.to_pydatetime()
        judged.setdefault((row.run_id, row.dimension), []).append(
            (row.item_id, row.reviewer, when, float(row.score), tags.get(key, ()))
        )
    for row in frames.skips.itertuples(index=False):
        when = None if row.timestamp is pd.NaT else row.timestamp.to_pydatetime()
        judged.setdefault((row.run_id, row.dimension), []).append(
            (row.item_id, row.reviewer, when, None, ())
        )
    by_run: dict = {}
    for run_id, dimension in judged:
        by_run.setdefault(run_id, set()).add(dimension)
    listed = list(dict.fromkeys(runs)) if runs is not None else sorted(by_run)
    headers = dict(zip(frames.runs["run_id"], frames.runs["dimensions"]))
    slices = []
    for run_id in listed:
        dimensions = set(by_run.get(run_id, set()))
        if runs is not None:
            dimensions |= set(headers.get(run_id, "overall").split(","))
        items = frames.items[frames.items["run_id"] == run_id]
        for d in sorted(dimensions):
            column = ai_score_column(items, d, config.metric_for(d))
            ai = {i: (None if a != a else float(a)) for i, a in zip(items["item_id"], column)}
            slices.append((run_id, d, judged.get((run_id, d), []), ai))
    latest: dict = {}
    for run_id, _, judgments, _ in slices:
        for *_, when, score, _ in judgments:
            if score is not None and when is not None:
                latest[run_id] = max(latest.get(run_id, when), when)

    def order(s):
        when = latest.get(s[0])
        return (when is None, -when.timestamp() if when else 0.0, s[0], s[1])

    slices.sort(key=order)
    progress = []
    for run_id, d, judgments, ai in slices:
        ratings = [j for j in judgments if j[3] is not None]
        by_item: dict = {}
        for item, _, _, score, _ in ratings:
            by_item.setdefault(item, []).append(score)
        rated = [i for i, scores in by_item.items() if len(scores) >= config.review.k]
        progress.append(
            RunProgress(
                run_id=run_id,
                dimension=d,
                items=len(set(ai) | {j[0] for j in judgments}),
                rated_items=len(rated),
                ratings=len(ratings),
                skips=len(judgments) - len(ratings),
                reviewers=len({j[1] for j in judgments}),
                human_average=avg(mean(by_item[i]) for i in rated),
                ai_average=avg(ai[i] for i in rated if ai.get(i) is not None),
                ai_vs_human_delta=avg(
                    mean(by_item[i]) - ai[i] for i in rated if ai.get(i) is not None
                ),
            )
        )
    ratings = [(s, j) for s in slices for j in s[2] if j[3] is not None]
    new = [j for _, j in ratings if start is None or (j[2] is not None and j[2] >= start)]
    counts = Counter(tag for _, j in ratings for tag in set(j[4]))
    return {
        "runs": progress,
        "new_ratings": len(new),
        "new_reviewers": len({j[1] for j in new}),
        "human_average": avg(j[3] for _, j in ratings),
        "ai_vs_human_delta": avg(
            j[3] - s[3][j[0]] for s, j in ratings if s[3].get(j[0]) is not None
        ),
        "top_concerns": sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5],
    }


_SCORES = st.sampled_from((0.0, 0.1, 0.2, 0.3, 0.7, 1.0, 1 / 3, 2 / 3)) | st.floats(0, 1)
_AI = st.none() | _SCORES | st.sampled_from((1e-300, 5e-324, 0.30000000000000004))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_the_digest_counted_with_arrays_equals_the_digest_rating_by_rating(tmp_path_factory, data):
    """Any mix of ratings, changed ratings, skips, concerns, runs with and without files, listed or
    not, AI scores missing or tiny, and any ``k``: the same lines, counts and averages — each
    average equal to :func:`statistics.mean`'s to the last bit — as counting rating by rating."""
    from analysis.load import load

    root = tmp_path_factory.mktemp("digest")
    store = Store(root / "results")
    items = ("i0", "i1", "i2")
    for run_id in ("r1", "r2"):
        dimensions = data.draw(st.sampled_from((["overall"], ["overall", "relevance"])))
        scores = {
            i: {d: s for d in ("overall", "relevance") if (s := data.draw(_AI)) is not None}
            for i in items
        }
        make_run(store, run_id, scores, dimensions)
    people = (ALICE, BOB, CAROL, DAVE)
    for _ in range(data.draw(st.integers(0, 30))):
        run_id = data.draw(st.sampled_from(("r1", "r2", "r3")))
        item, who = data.draw(st.sampled_from(items)), data.draw(st.sampled_from(people))
        minutes = data.draw(st.integers(-120, 120))
        if data.draw(st.integers(0, 4)) == 0:
            skip(store, run_id, item, who, minutes)
            continue
        rate(
            store,
            run_id,
            item,
            data.draw(_SCORES),
            who,
            minutes,
            dimension=data.draw(st.sampled_from(("overall", "relevance"))),
            concerns=tuple(
                data.draw(st.lists(st.sampled_from(("stale", "vague", "x")), max_size=3))
            ),
        )
    (root / "k.toml").write_text(f"[review]\nk = {data.draw(st.integers(1, 3))}\n")
    config = load_config(root / "k.toml")
    since = data.draw(st.sampled_from((SINCE, None, SINCE + timedelta(minutes=30))))
    runs = data.draw(st.sampled_from((None, ["r2", "r1"], ["r3", "r9", "r3"], ["r1"])))
    digest = build_digest(store, config, since=since, now=NOW, runs=runs, chart=False)
    want = per_rating(load(store), runs, config, since)
    assert digest.runs == want["runs"]
    for name in ("new_ratings", "new_reviewers", "top_concerns"):
        assert getattr(digest, name) == want[name], name
    for name in ("human_average", "ai_vs_human_delta"):  # the very same float, not a close one
        assert repr(getattr(digest, name)) == repr(want[name]), name


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 4),
            st.floats(-1, 1) | st.sampled_from((0.1, 0.7, 1 / 3, 1e-300, -5e-324, -0.0)),
        ),
        max_size=60,
    )
)
def test_exact_means_are_the_statistics_modules_means(pairs):
    """The digest's means without a Python call per value: per group exactly what
    :func:`statistics.mean` gives (the exact sum, rounded once), None for an empty group."""
    from statistics import mean

    import numpy as np

    from analysis.vocabulary import exact_means

    group = np.array([g for g, _ in pairs], dtype=np.int64)
    values = np.array([v for _, v in pairs], dtype=np.float64)
    want = [mean(vs) if (vs := [v for g, v in pairs if g == k]) else None for k in range(5)]
    assert [repr(m) for m in exact_means(group, values, 5)] == [repr(m) for m in want]


def test_the_digest_of_a_hundred_thousand_lines_adds_little_to_reading_them(store):
    """The digest counts with arrays, not an object per rating: on a 100,000-line log it adds well
    under a second to reading the log (rating by rating it added about 1.5 s here; generous
    bound)."""
    import time

    from analysis.load import load
    from analysis.synthetic import write_synthetic

    config = load_config(None)
    write_synthetic(store, ratings=100_000, runs=20, items_per_run=500, reviewers=40, seed=3)
    load(store)  # a first read may build what later reads use
    started = time.perf_counter()
    load(store)
    read = time.perf_counter() - started
    started = time.perf_counter()
    digest = build_digest(store, config, since=SINCE, now=NOW, chart=False)
    assert time.perf_counter() - started - read < 0.8
    assert (
        len(digest.runs) == 34 and digest.total_ratings > 50_000
    )  # 14 runs of 2 dimensions, 6 of 1
