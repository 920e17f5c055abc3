"""Adjudication: which items are disputed, the gold-label rules, the engine's records and the
terminal command."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from bot.adjudication import AdjudicationSession, Phase
from bot.cards import Action
from bot.demo import PANEL_RUN, build_demo
from bot.review import ReviewEngine
from evaluation import Adjudication, Rating, Reviewer, Store, load_config
from evaluation.config import AdjudicationSettings
from evaluation.gold import disputes, gold_label, gold_of

LEAD = Reviewer(platform="terminal", id="lead", name="Lead")


@pytest.fixture
def panel(store: Store) -> Store:
    """The demo's panel run: 18 searches rated by Ana, Ben and Caro, who disagree on 9."""
    build_demo(store, panel=True)
    return store


def engine_of(store: Store, config=None) -> ReviewEngine:
    return ReviewEngine(store, config or load_config(None))


def adjudications(store: Store) -> list[dict]:
    return [
        r
        for r in map(json.loads, store.ratings.path.read_text().splitlines())
        if r["type"] == "adjudication"
    ]


# --------------------------------------------------------------------------------- gold-label rules


def test_a_single_label_is_its_own_gold(config):
    gold = gold_label([("okay", 0.7)], config.scale_for("overall"))
    assert (gold.judgment, gold.score, gold.source) == ("okay", 0.7, "single")


def test_a_strict_majority_decides(config):
    gold = gold_label(
        [("good", 1.0), ("terrible", 0.1), ("good", 1.0)], config.scale_for("overall")
    )
    assert (gold.judgment, gold.source) == ("good", "majority")


def test_without_a_majority_an_ordinal_scale_takes_the_lower_median(config):
    # four labels, two middle ones okay (0.7) and poor (0.4): the lower one, poor
    gold = gold_label(
        [("good", 1.0), ("okay", 0.7), ("poor", 0.4), ("terrible", 0.1)],
        config.scale_for("overall"),
    )
    assert (gold.judgment, gold.score, gold.source) == ("poor", 0.4, "median")
    three = gold_label(
        [("good", 1.0), ("okay", 0.7), ("terrible", 0.1)], config.scale_for("overall")
    )
    assert (three.judgment, three.source) == ("okay", "median")


def test_a_tie_on_a_two_option_scale_is_unresolved(config):
    gold = gold_label([("yes", 1.0), ("no", 0.0)], config.scale_for("trigger-accuracy"))
    assert gold.source == "unresolved" and gold.judgment is None and not gold.usable


def test_a_consensus_overrides_the_rule_and_an_exclusion_removes_the_item(config):
    labels = [("good", 1.0), ("good", 1.0), ("poor", 0.4)]
    consensus = Adjudication(
        run_id="r",
        item_id="i",
        reviewer=LEAD,
        idempotency_key="k",
        decision="consensus",
        judgment="poor",
        score=0.4,
    )
    gold = gold_label(labels, config.scale_for("overall"), consensus)
    assert (gold.judgment, gold.source, gold.adjudicator, gold.n_labels) == (
        "poor",
        "consensus",
        "terminal:lead",
        3,
    )
    excluded = Adjudication(
        run_id="r",
        item_id="i",
        reviewer=LEAD,
        idempotency_key="k2",
        decision="exclude",
        reason="broken item",
    )
    gold = gold_label(labels, config.scale_for("overall"), excluded)
    assert (gold.source, gold.judgment, gold.reason, gold.usable) == (
        "excluded",
        None,
        "broken item",
        False,
    )


@pytest.mark.parametrize(
    "fields",
    [
        dict(decision="consensus"),
        dict(decision="consensus", judgment="good"),
        dict(decision="exclude"),
        dict(decision="exclude", reason="  "),
    ],
)
def test_an_adjudication_missing_its_label_or_reason_is_invalid(fields):
    with pytest.raises(ValidationError):
        Adjudication(run_id="r", item_id="i", reviewer=LEAD, idempotency_key="k", **fields)


# ----------------------------------------------------------------------------------------- disputes


def test_the_panels_disputes_come_largest_disagreement_first(panel, config):
    engine = engine_of(panel)
    found = disputes(
        engine.run(PANEL_RUN),
        engine.ledger,
        "overall",
        config.scale_for("overall"),
        config.adjudication,
    )
    # good/okay/terrible (0.9 apart, 3 levels), then okay/good/poor and okay/poor/okay-likes by
    # spread
    assert [d.item_id for d in found][:2] == ["q18", "q04"]
    assert found[0].levels == 3 and found[0].why == "labels 3 levels apart"
    assert {d.item_id for d in found} == {
        "q03",
        "q04",
        "q05",
        "q09",
        "q10",
        "q11",
        "q14",
        "q17",
        "q18",
    }
    assert [d.size for d in found] == sorted((d.size for d in found), reverse=True)


def test_min_spread_leaves_out_labels_one_level_apart(panel, config):
    engine = engine_of(panel)
    strict = AdjudicationSettings(min_spread=2, ai_gap=None)
    found = disputes(
        engine.run(PANEL_RUN), engine.ledger, "overall", config.scale_for("overall"), strict
    )
    assert [d.item_id for d in found] == ["q18", "q04"]


def test_an_ai_far_from_the_humans_is_a_dispute_even_with_one_label(store, config):
    build_demo(store)
    item = store.load_run("demo-docs-search").items[0]  # the AI scored it 0.87
    store.ratings.append(
        Rating(
            run_id="demo-docs-search",
            item_id=item.id,
            reviewer=Reviewer(id="ana"),
            idempotency_key="a",
            judgment="terrible",
            score=0.1,
        )
    )
    engine = engine_of(store)
    found = disputes(
        engine.run("demo-docs-search"),
        engine.ledger,
        "overall",
        config.scale_for("overall"),
        config.adjudication,
    )
    assert [(d.item_id, d.why) for d in found] == [(item.id, "AI 0.87 vs humans 0.10")]
    assert (
        disputes(
            engine.run("demo-docs-search"),
            engine.ledger,
            "overall",
            config.scale_for("overall"),
            AdjudicationSettings(ai_gap=None),
        )
        == []
    )


# --------------------------------------------------------------------------------------- the engine


def test_a_consensus_is_on_disk_before_the_turn_returns_and_the_ratings_stay(panel):
    before = [r for r in panel.ratings.path.read_text().splitlines()]
    session = AdjudicationSession(engine_of(panel), PANEL_RUN, None, LEAD)
    first = session.start()
    assert first.phase == Phase.DECIDING and first.card.item_id == "q18"
    text = "\n".join(line for s in first.card.sections for line in s.lines)
    assert (
        "Ana: good" in text
        and "Caro: terrible [query_ambiguous]" in text
        and "reload.md is the real answer" in text
    )
    assert first.card.reveal is not None  # not blind: the AI's verdict is on the card
    turn = session.act(Action("rate", "okay", "q18"))
    [record] = adjudications(panel)
    assert (record["decision"], record["judgment"], record["score"], record["item_id"]) == (
        "consensus",
        "okay",
        0.7,
        "q18",
    )
    assert [(x["reviewer"], x["judgment"]) for x in record["labels"]] == [
        ("demo:ana", "good"),
        ("demo:ben", "okay"),
        ("demo:caro", "terrible"),
    ]
    assert turn.stored == 1 and turn.card.item_id == "q04"  # the next dispute
    assert panel.ratings.path.read_text().splitlines()[: len(before)] == before  # nothing rewritten
    assert (
        gold_of(session.engine.ledger, PANEL_RUN, "q18", "overall", session.scale).source
        == "consensus"
    )


def test_exclude_asks_a_reason_and_other_asks_its_text(panel):
    session = AdjudicationSession(engine_of(panel), PANEL_RUN, None, LEAD)
    session.start()
    asked = session.act(Action("exclude", None, "q18"))
    assert asked.phase == Phase.REASON and asked.stored == 0
    assert [b.label for b in asked.card.buttons[0]] == load_config(
        None
    ).adjudication.exclude_reasons
    session.act(Action("exclude", "broken item", "q18"))
    session.act(Action("exclude", None, "q04"))
    assert session.act(Action("exclude", "other", "q04")).phase == Phase.REASON_TEXT
    assert session.act(Action("text", "   ", "q04")).alert  # an empty reason excludes nothing
    session.act(Action("exclude", "other", "q04"))
    session.act(Action("text", "the query names two products", "q04"))
    assert [(r["item_id"], r["decision"], r["reason"]) for r in adjudications(panel)] == [
        ("q18", "exclude", "broken item"),
        ("q04", "exclude", "other: the query names two products"),
    ]


def test_leave_writes_nothing_and_the_item_comes_back_next_session(panel):
    engine = engine_of(panel)
    session = AdjudicationSession(engine, PANEL_RUN, None, LEAD)
    session.start()
    turn = session.act(Action("skip", None, "q18"))
    assert turn.card.item_id == "q04" and adjudications(panel) == []
    assert "q18" not in [d.item_id for d in session.queue()] and session.unresolved() == 9
    assert (
        AdjudicationSession(engine_of(panel), PANEL_RUN, None, LEAD).start().card.item_id == "q18"
    )


def test_a_redelivered_tap_writes_nothing(panel):
    session = AdjudicationSession(engine_of(panel), PANEL_RUN, None, LEAD, channel="telegram")
    session.start()
    session.act(Action("rate", "okay", "q18", delivery_id="cq:1"))
    again = session.act(Action("rate", "okay", "q18", delivery_id="cq:1"))
    assert again.repeated and again.stored == 0 and again.decided.judgment == "okay"
    assert len(adjudications(panel)) == 1
    fresh = ReviewEngine(panel, load_config(None))  # a restarted process knows the key from the log
    assert (
        AdjudicationSession(fresh, PANEL_RUN, None, LEAD, "telegram")
        .act(Action("rate", "good", "q18", delivery_id="cq:1"))
        .stored
        == 0
    )


def test_an_adjudicated_item_leaves_the_queue_and_the_latest_decision_counts(panel):
    engine = engine_of(panel)
    session = AdjudicationSession(engine, PANEL_RUN, None, LEAD)
    session.start()
    session.act(Action("rate", "okay", "q18"))
    assert "q18" not in [d.item_id for d in session.queue()]
    session.act(Action("rate", "poor", "q18"))  # a change of mind, from the final card
    assert engine.ledger.adjudications[(PANEL_RUN, "q18", "overall")].judgment == "poor"
    assert (
        ReviewEngine(panel, load_config(None))
        .ledger.adjudications[(PANEL_RUN, "q18", "overall")]
        .judgment
        == "poor"
    )


def test_an_unknown_dimension_is_a_one_line_error(panel):
    from evaluation import HilbotError

    with pytest.raises(HilbotError, match="dimension"):
        AdjudicationSession(engine_of(panel), PANEL_RUN, "nope", LEAD)


# -------------------------------------------------------------------------------------- the command


def test_hilbot_adjudicate_in_the_terminal(run_cli, tmp_path):
    build_demo(Store(tmp_path / "results"), panel=True)
    # q18: consensus okay; q04: exclude, reason 2 (broken item); q03: leave (enter); then quit
    result = run_cli("adjudicate", PANEL_RUN, "--adjudicator", "lead", input="ox2\nq")
    assert result.returncode == 0, result.stderr
    assert "9 disputed items" in result.stdout and "Caro: terrible" in result.stdout
    assert "Adjudicated 2: 1 consensus, 1 excluded; 7 disputed items remain." in result.stdout
    records = adjudications(Store(tmp_path / "results"))
    assert [(r["item_id"], r["decision"], r.get("judgment"), r.get("reason")) for r in records] == [
        ("q18", "consensus", "okay", None),
        ("q04", "exclude", None, "broken item"),
    ]
    assert all(
        r["reviewer"] == {"platform": "terminal", "id": "lead", "name": "lead"} for r in records
    )


def test_hilbot_adjudicate_an_unknown_run_is_one_line_exit_2(run_cli):
    result = run_cli("adjudicate", "no-such-run")
    assert (
        result.returncode == 2
        and len(result.stderr.strip().splitlines()) == 1
        and "no-such-run" in result.stderr
    )


# --------------------------------------------------------------------------- gold labels downstream


def _adjudicate_two(store: Store) -> None:
    """q18: consensus okay; q04: excluded as broken."""
    session = AdjudicationSession(engine_of(store), PANEL_RUN, None, LEAD)
    session.start()
    session.act(Action("rate", "okay", "q18"))
    session.act(Action("exclude", "broken item", "q04"))


def test_calibration_uses_gold_labels_and_says_how_they_were_reached(run_cli, tmp_path):
    store = Store(tmp_path / "results")
    build_demo(store, panel=True)
    agreement_before = run_cli(
        "analyze", "agreement", "--run", PANEL_RUN, "--bootstrap", "0", "--format", "json"
    ).stdout
    _adjudicate_two(store)
    result = run_cli("analyze", "calibration", "--run", PANEL_RUN, "--format", "json")
    data = json.loads(result.stdout)
    assert data["gold"] == {
        "items": 18,
        "adjudicated": 1,
        "excluded": 1,
        "derived": 16,
        "unresolved": 0,
        "multi_labelled": True,
    }
    (group,) = data["groups"]
    assert group["n"] == 17  # the excluded item is left out
    markdown = run_cli("analyze", "calibration", "--run", PANEL_RUN).stdout
    assert (
        "Gold labels: 18 items — 1 adjudicated, 16 derived by rule" in markdown
        and "1 excluded" in markdown
    )
    # agreement is measured on the independent ratings: adjudicating changes nothing in it
    assert (
        run_cli(
            "analyze", "agreement", "--run", PANEL_RUN, "--bootstrap", "0", "--format", "json"
        ).stdout
        == agreement_before
    )


def test_the_gold_label_of_an_adjudicated_item_is_the_consensus_in_calibration(run_cli, tmp_path):
    store = Store(tmp_path / "results")
    build_demo(store, panel=True)
    before = json.loads(
        run_cli("analyze", "calibration", "--run", PANEL_RUN, "--format", "json").stdout
    )
    assert before["groups"][0]["disagreements"][0]["item_id"] != "q01"
    session = AdjudicationSession(engine_of(store), PANEL_RUN, None, LEAD)
    session.act(
        Action("rate", "terrible", "q01")
    )  # all three said good; the adjudicator overrules them
    after = json.loads(
        run_cli("analyze", "calibration", "--run", PANEL_RUN, "--format", "json").stdout
    )
    top = after["groups"][0]["disagreements"][0]
    assert (top["item_id"], top["human_score"], top["judgments"], top["ai_score"]) == (
        "q01",
        0.1,
        ["terrible"],
        0.87,
    )
    assert after["groups"][0]["n"] == 18 and after["gold"]["adjudicated"] == 1


def test_the_export_carries_each_items_gold_label(run_cli, tmp_path):
    store = Store(tmp_path / "results")
    build_demo(store, panel=True)
    _adjudicate_two(store)
    document = json.loads(run_cli("export", PANEL_RUN, "--format", "json").stdout)
    gold = {row["scenarioId"]: row for row in document["goldLabels"]}
    assert gold["q18"] == {
        "scenarioId": "q18",
        "dimension": "overall",
        "judgment": "okay",
        "humanScore": 0.7,
        "source": "consensus",
        "labelCount": 3,
        "adjudicatedBy": "terminal:lead",
    }
    assert gold["q04"] == {
        "scenarioId": "q04",
        "dimension": "overall",
        "source": "excluded",
        "labelCount": 3,
        "adjudicatedBy": "terminal:lead",
        "reason": "broken item",
    }
    assert gold["q01"]["source"] == "majority" and gold["q01"]["judgment"] == "good"
    assert (
        gold["q14"]["source"] == "majority" and gold["q14"]["judgment"] == "poor"
    )  # okay, poor, poor
    assert len(document["labels"]) == 54  # every reviewer's own label is exported too


def test_the_synthesis_leaves_excluded_items_out(run_cli, tmp_path):
    store = Store(tmp_path / "results")
    build_demo(store, panel=True)
    _adjudicate_two(store)
    result = run_cli("analyze", "synthesize", "--run", PANEL_RUN)
    assert result.returncode == 0, result.stderr
    assert (
        "51 ratings of 17 items by 3 reviewer(s)" in result.stdout
    )  # q04 and its 3 ratings are left out
