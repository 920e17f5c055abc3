"""The channel-agnostic review engine: assignment, blind protocol, follow-ups, durability, resume."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import Action, ReviewEngine, State
from bot.assignment import progress, queue
from evaluation import Ledger, Note, Rating, Reviewer, Skip, Store, load_config

from .conftest import RAG_RUN, SEARCH_RUN

ALICE = Reviewer(platform="terminal", id="alice", name="Alice")
BOB = Reviewer(platform="telegram", id="42", name="Bob")


def _session(store, reviewer=ALICE, run=SEARCH_RUN, dimension=None, config=None):
    engine = ReviewEngine(store, config or load_config(None))
    return engine.session(run, reviewer, dimension)


def _card_text(card) -> str:
    return json.dumps([card.title, [s.lines for s in card.sections], card.question,
                       [[b.label for b in row] for row in card.buttons]], ensure_ascii=False)


def _on_disk(store: Store) -> list:
    return list(Store(store.root).human_events())


def test_least_confident_first_then_stratified(demo_store, config):
    run = demo_store.load_run(SEARCH_RUN)
    order = queue(run, Ledger(), "overall", ALICE)
    unsure = [i.id for i in run.items if i.evaluation.verdict == "UNSURE"]
    assert [i.id for i in order[: len(unsure)]] == unsure
    confidences = [0.0 if i.evaluation.verdict == "UNSURE" else i.evaluation.confidence for i in order]
    bands = [0 if c < 0.5 else 1 if c < 0.8 else 2 for c in confidences]
    assert bands == sorted(bands)
    high = [i for i in order if i.evaluation.verdict != "UNSURE" and i.evaluation.confidence >= 0.8]
    first_round = [i.query.category for i in high[: len({i.query.category for i in high})]]
    assert len(set(first_round)) == len(first_round), "each category once before any repeats"
    assert sorted(i.id for i in order) == sorted(i.id for i in run.items)


def test_card_is_blind_until_rating_is_stored(demo_store):
    session = _session(demo_store)
    step = session.start()
    item = session.item
    text = _card_text(step.card)
    assert step.card.reveal is None
    assert item.evaluation.rationale not in text and item.evaluation.verdict not in text
    assert "0.65" not in text  # the AI overall of the first (UNSURE) item stays hidden
    step = session.act(Action("rate", "okay"))
    assert step.state == State.FOLLOW_UP
    assert step.card.reveal is not None and step.card.reveal.rationale == item.evaluation.rationale
    assert step.card.recorded == "okay"


def test_reveal_can_be_switched_off(demo_store, tmp_path):
    (tmp_path / "h.toml").write_text("[review]\nreveal_after_rating = false\n")
    session = _session(demo_store, config=load_config(tmp_path / "h.toml"))
    session.start()
    step = session.act(Action("rate", "poor"))
    assert step.card.reveal is None


def test_each_judgment_is_on_disk_before_act_returns(demo_store):
    session = _session(demo_store)
    session.start()
    first = session.item.id
    step = session.act(Action("rate", "good"))
    events = _on_disk(demo_store)
    assert [(e.type, e.item_id, e.judgment) for e in events] == [("rating", first, "good")]
    assert events[0].ai_verdict_shown is False and events[0].score == 1.0
    assert step.finished.item_id == first and step.finished.reveal is not None
    assert step.card.item_id != first and step.state == State.RATING


def test_follow_up_only_after_okay_or_miss(demo_store):
    session = _session(demo_store, run=RAG_RUN)  # the RAG run is rated on the four-button quality scale
    session.start()
    assert [b.label for b in session.start().card.buttons[0]] == ["⭐ Excellent", "✓ Good", "⚠️ Okay", "✗ Miss"]
    assert session.act(Action("rate", "excellent")).state == State.RATING
    step = session.act(Action("rate", "miss"))
    assert step.state == State.FOLLOW_UP
    assert [b.action.value for b in step.card.buttons[0]] == load_config(None).concerns_for("answer")


def test_concern_toggles_and_changed_rating_are_new_events(demo_store):
    session = _session(demo_store)
    session.start()
    item = session.item.id
    session.act(Action("rate", "okay"))
    step = session.act(Action("toggle", "bad_ranking"))
    assert "✓ bad_ranking" in [b.label for b in step.card.buttons[0]]
    session.act(Action("toggle", "weak_snippet"))
    session.act(Action("toggle", "bad_ranking"))
    session.act(Action("rate", "poor"))
    events = [e for e in _on_disk(demo_store) if isinstance(e, Rating)]
    assert [(e.judgment, e.concerns) for e in events] == [
        ("okay", []), ("okay", ["bad_ranking"]), ("okay", ["bad_ranking", "weak_snippet"]),
        ("okay", ["weak_snippet"]), ("poor", ["weak_snippet"])]
    assert [e.ai_verdict_shown for e in events] == [False, True, True, True, True]
    ledger = Ledger.from_events(_on_disk(demo_store))
    latest = ledger.judgment(SEARCH_RUN, item, "overall", ALICE)
    assert (latest.judgment, latest.score, latest.concerns) == ("poor", 0.4, ["weak_snippet"])
    assert len(ledger.ratings(SEARCH_RUN)) == 1


def test_notes_skip_and_note_only(demo_store):
    session = _session(demo_store)
    session.start()
    first = session.item.id
    session.act(Action("rate", "terrible"))
    assert session.act(Action("note")).state == State.NOTE
    assert session.act(Action("text", "  stale v1 page on top ")).state == State.FOLLOW_UP
    session.act(Action("next"))
    second = session.item.id
    session.act(Action("skip"))
    third = session.item.id
    session.act(Action("note"))
    step = session.act(Action("text", "cannot judge without the v2 docs"))
    assert step.state == State.RATING and session.item.id not in (first, second, third)
    events = _on_disk(demo_store)
    notes = [(e.item_id, e.text) for e in events if isinstance(e, Note)]
    assert notes == [(first, "stale v1 page on top"), (third, "cannot judge without the v2 docs")]
    skips = [(e.item_id, e.skip_reason) for e in events if isinstance(e, Skip)]
    assert skips == [(second, None), (third, "note only")]
    assert len({e.idempotency_key for e in events}) == len(events)
    progress = session.progress()
    assert (progress.done, progress.skipped, progress.remaining) == (1, 2, 15)


def test_empty_note_is_not_stored(demo_store):
    session = _session(demo_store)
    session.start()
    session.act(Action("note"))
    step = session.act(Action("text", "   "))
    assert step.state == State.RATING and step.alert and _on_disk(demo_store) == []


def test_quit_summary_matches_hand_computation(demo_store):
    session = _session(demo_store)
    session.start()
    rated = {}
    for judgment in ("good", "poor"):
        rated[session.item.id] = {"good": 1.0, "poor": 0.4}[judgment]
        session.act(Action("rate", judgment))
        if session.state == State.FOLLOW_UP:
            session.act(Action("toggle", "bad_ranking"))
            session.act(Action("next"))
    session.act(Action("skip"))
    step = session.act(Action("quit"))
    run = demo_store.load_run(SEARCH_RUN)
    ai = {i.id: i.evaluation.scores["overall"] for i in run.items}
    summary = step.summary
    assert step.state == State.QUIT
    assert (summary.queriesReviewed, summary.queriesSkipped, summary.queriesFlagged) == (2, 1, 1)
    assert summary.humanAverageScore == pytest.approx(0.7)
    assert summary.aiVsHumanDelta == pytest.approx(sum(rated[i] - ai[i] for i in rated) / 2, abs=1e-4)
    assert _on_disk(demo_store)[-1].type == "review_summary"


def test_session_resumes_from_the_log_on_another_channel(demo_store):
    session = _session(demo_store)
    session.start()
    seen = [session.item.id]
    session.act(Action("rate", "good"))
    seen.append(session.item.id)
    session.act(Action("skip"))
    # a crash: nothing but the log survives; a new engine resumes
    resumed = ReviewEngine(Store(demo_store.root), load_config(None)).session(SEARCH_RUN, ALICE, channel="telegram")
    step = resumed.start()
    assert step.card.item_id not in seen
    assert (step.progress.done, step.progress.skipped, step.progress.remaining) == (1, 1, 16)
    assert step.card.title.startswith("[3/18]")


def test_k_ratings_and_never_twice_to_one_reviewer(demo_store, tmp_path):
    alice = _session(demo_store)
    alice.start()
    while alice.state != State.DONE:
        alice.act(Action("rate", "good"))
    assert alice.progress().done == 18
    assert _session(demo_store, BOB).start().state == State.DONE  # k = 1: nothing left for Bob
    (tmp_path / "k2.toml").write_text("[review]\nk = 2\n")
    k2 = load_config(tmp_path / "k2.toml")
    bob = _session(demo_store, BOB, config=k2)
    assert bob.start().state == State.RATING
    assert _session(demo_store, ALICE, config=k2).start().state == State.DONE


def test_redelivered_action_counts_once_and_stale_buttons_write_nothing(demo_store):
    session = _session(demo_store, BOB)
    session.start()
    item = session.item.id
    session.act(Action("rate", "okay", item_id=item, delivery_id="update-1001"))
    again = session.act(Action("rate", "okay", item_id=item, delivery_id="update-1001"))
    assert again.stored == 0
    stale = session.act(Action("toggle", "bad_ranking", item_id="q99", delivery_id="update-1002"))
    assert stale.alert and stale.stored == 0
    assert len(_on_disk(demo_store)) == 1


def test_scenario_labels_are_filled_from_the_scale(demo_store):
    session = _session(demo_store, dimension="trigger-accuracy")
    card = session.start().card
    assert [b.key for b in card.buttons[0]] == ["y", "n"]
    assert card.button_for_key("m").action.kind == "note"  # n is "No" here, so note moves to m
    session.act(Action("rate", "no"))
    session.act(Action("next"))
    session.act(Action("rate", "yes"))
    labels = [e.labels.trigger_correct for e in _on_disk(demo_store) if isinstance(e, Rating)]
    assert labels == [False, True]


def test_unknown_dimension_is_a_clear_error(demo_store):
    from evaluation import ConfigError

    with pytest.raises(ConfigError, match="unknown dimension"):
        _session(demo_store, dimension="vibes")


async def test_async_actions_are_durable_before_they_resolve(demo_store):
    session = _session(demo_store, BOB)
    session.start()
    step = await session.aact(Action("rate", "terrible", delivery_id="u1"))
    assert step.state == State.FOLLOW_UP
    await session.aact(Action("toggle", "stale_content", delivery_id="u2"))
    events = _on_disk(demo_store)
    assert [(e.judgment, e.concerns, e.channel) for e in events] == [
        ("terrible", [], "terminal"), ("terrible", ["stale_content"], "terminal")]


def test_finishing_every_item_then_quitting_stores_the_summary(demo_store):
    session = _session(demo_store, run=RAG_RUN)
    session.start()
    while session.state != State.DONE:
        session.act(Action("rate", "excellent"))
    step = session.act(Action("quit"))
    assert step.state == State.QUIT and step.summary.queriesReviewed == 12
    assert _on_disk(demo_store)[-1].type == "review_summary"
    assert session.act(Action("rate", "good")).stored == 0


def _corrupt_line(store: Store, run_id: str, number: int) -> None:
    path = store.run_path(run_id)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[number - 1] = b'{"type": "query_evaluation", "oops\n'
    path.write_bytes(b"".join(lines))


def test_unreadable_run_lines_are_reported_through_the_engines_issues(demo_store):
    _corrupt_line(demo_store, SEARCH_RUN, 5)
    issues: list = []
    engine = ReviewEngine(demo_store, load_config(None), issues)
    session = engine.session(SEARCH_RUN, ALICE)
    assert len(session.run.items) == 17
    assert [(i.path, i.line) for i in issues] == [(demo_store.run_path(SEARCH_RUN), 5)]
    with demo_store.run_path(SEARCH_RUN).open("ab") as handle:  # the run grows: re-read, the old issue not repeated
        handle.write(b"\n")
    engine.refresh(SEARCH_RUN)
    assert [(i.path, i.line) for i in issues] == [(demo_store.run_path(SEARCH_RUN), 5)]


def test_hilbot_review_warns_about_a_run_line_it_cannot_read(demo_store, tmp_path):
    from tests._cli import invoke

    _corrupt_line(demo_store, SEARCH_RUN, 5)
    result = invoke("review", SEARCH_RUN, "--reviewer", "alice", input="q", env={"HILBOT_DATA_DIR": str(demo_store.root)},
                    cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: {demo_store.run_path(SEARCH_RUN)}:5: ")
    assert "(17 queries" in result.stdout


def test_an_empty_dimension_is_an_unknown_dimension_not_the_default(demo_store):
    from evaluation import HilbotError

    with pytest.raises(HilbotError, match="dimension ''"):
        _session(demo_store, dimension="")


def _ledger_steps(data):
    """A run, a ledger and reviewers, driven through any mix of deals, ratings, skips, released cards and
    items added to a growing run; yields (run, ledger, reviewers, k, grew) after each step."""
    from evaluation import ItemData, Query, RunHeader
    from evaluation.runs import Run

    items = [ItemData(id=f"i{n}", query=Query(query="q", category=f"c{n % 3}")) for n in range(data.draw(st.integers(1, 10)))]
    run, ledger = Run("r", RunHeader(run_id="r"), items), Ledger()
    reviewers = [Reviewer(id=f"u{n}") for n in range(data.draw(st.integers(1, 4)))]
    k = data.draw(st.integers(1, 3))
    for step in range(data.draw(st.integers(0, 30))):
        who, item = data.draw(st.sampled_from(reviewers)), data.draw(st.sampled_from(items)).id
        op = data.draw(st.sampled_from(["deal", "rate", "skip", "release", "grow"]))
        if op == "deal":
            ledger.reserve(("r", item, "overall"), who.key)
        elif op == "rate":
            ledger.add(Rating(run_id="r", item_id=item, reviewer=who, idempotency_key=f"k{step}", judgment="good", score=1.0))
        elif op == "skip":
            ledger.add(Skip(run_id="r", item_id=item, reviewer=who, idempotency_key=f"k{step}"))
        elif op == "release":
            ledger.release(("r", item, "overall"), who.key)
        else:
            items.insert(data.draw(st.integers(0, len(items))), ItemData(id=f"new{step}", query=Query(query="q")))
        yield run, ledger, reviewers, k, op == "grow"


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_progress_from_running_counts_equals_walking_the_queue(data):
    """`progress` counts what is left from the ledger's running counts; it must equal len(queue) + open cards
    under any mix of deals, ratings, skips, released cards and items added to a growing run."""
    for run, ledger, reviewers, k, _ in _ledger_steps(data):
        for reviewer in reviewers:
            left = progress(run, ledger, "overall", reviewer, k).remaining
            assert left == len(queue(run, ledger, "overall", reviewer, k)) + len(ledger.open_cards("r", "overall", reviewer))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_dealing_from_the_full_prefix_equals_a_fresh_walk(data):
    """The queue starts its walk after the items already known to be full (kept per assignment order);
    it must equal a walk from the first item with nothing cached, whatever reopens items or grows the run."""
    from bot.assignment import order

    ordered = None
    for run, ledger, reviewers, k, grew in _ledger_steps(data):
        if ordered is None or grew:
            ordered = order(run)  # as the engine does: one order per reading of the run
        for reviewer in reviewers:
            cached = [i.id for i in queue(run, ledger, "overall", reviewer, k, ordered=ordered)]
            kept = ledger.full, ledger.full_prefix
            ledger.full, ledger.full_prefix = {}, {}
            fresh = [i.id for i in queue(run, ledger, "overall", reviewer, k, ordered=ordered)]
            ledger.full, ledger.full_prefix = kept
            assert cached == fresh
