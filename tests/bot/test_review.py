"""The channel-agnostic review engine: assignment, blind protocol, follow-ups, durability,
resume."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import Action, ReviewEngine, State
from bot.assignment import progress, queue
from evaluation import Ledger, Note, Rating, Reviewer, Skip, Store, load_config
from tests.conftest import RAG_RUN, SEARCH_RUN

ALICE = Reviewer(platform="terminal", id="alice", name="Alice")
BOB = Reviewer(platform="telegram", id="42", name="Bob")


def _session(store, reviewer=ALICE, run=SEARCH_RUN, dimension=None, config=None):
    engine = ReviewEngine(store, config or load_config(None))
    return engine.session(run, reviewer, dimension)


def _card_text(card) -> str:
    return json.dumps(
        [
            card.title,
            [s.lines for s in card.sections],
            card.question,
            [[b.label for b in row] for row in card.buttons],
        ],
        ensure_ascii=False,
    )


def _on_disk(store: Store) -> list:
    return list(Store(store.root).human_events())


def test_least_confident_first_then_stratified(demo_store, config):
    run = demo_store.load_run(SEARCH_RUN)
    order = queue(run, Ledger(), "overall", ALICE)
    unsure = [i.id for i in run.items if i.evaluation.verdict == "UNSURE"]
    assert [i.id for i in order[: len(unsure)]] == unsure
    confidences = [
        0.0 if i.evaluation.verdict == "UNSURE" else i.evaluation.confidence for i in order
    ]
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
    session = _session(
        demo_store, run=RAG_RUN
    )  # the RAG run is rated on the four-button quality scale
    session.start()
    assert [b.label for b in session.start().card.buttons[0]] == [
        "⭐ Excellent",
        "✓ Good",
        "⚠️ Okay",
        "✗ Miss",
    ]
    assert session.act(Action("rate", "excellent")).state == State.RATING
    step = session.act(Action("rate", "miss"))
    assert step.state == State.FOLLOW_UP
    assert [b.action.value for b in step.card.buttons[0]] == load_config(None).concerns_for(
        "answer"
    )


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
        ("okay", []),
        ("okay", ["bad_ranking"]),
        ("okay", ["bad_ranking", "weak_snippet"]),
        ("okay", ["weak_snippet"]),
        ("poor", ["weak_snippet"]),
    ]
    assert [e.ai_verdict_shown for e in events] == [False, True, True, True, True]
    ledger = Ledger.from_events(_on_disk(demo_store))
    latest = ledger.judgment(SEARCH_RUN, item, "overall", ALICE)
    assert (latest.judgment, latest.score, latest.concerns) == ("poor", 0.4, ["weak_snippet"])
    assert len(ledger.ratings(SEARCH_RUN)) == 1


def test_a_rating_changed_to_one_that_asks_no_concerns_drops_its_tags_and_records_so(demo_store):
    """A changed rating carried the tags over to "good", which takes none: `validate` flagged it."""
    from analysis.validate import validate

    session = _session(demo_store)
    session.start()
    item = session.item.id
    session.act(Action("rate", "okay"))
    session.act(Action("toggle", "bad_ranking"))
    session.act(Action("toggle", "weak_snippet"))
    step = session.act(Action("rate", "good"))
    assert step.finished.item_id == item and step.finished.concerns == ()
    latest = _on_disk(demo_store)[-1]
    assert (latest.judgment, latest.concerns, latest.concerns_dropped) == (
        "good",
        [],
        ["bad_ranking", "weak_snippet"],
    )
    report = validate(Store(demo_store.root), load_config(None))
    assert not [f for f in report.flags if f.flag == "excellent_with_concern"], report.flags
    again = _session(demo_store).card(item)  # the tags are gone for good, and a rating that
    assert again.concerns == ()  # asks for them starts without them
    session.act(Action("rate", "poor", item_id=item))
    assert (_on_disk(demo_store)[-1].concerns, _on_disk(demo_store)[-1].concerns_dropped) == (
        [],
        None,
    )


def test_a_chat_session_ended_at_its_last_rating_still_takes_that_cards_tags(demo_store):
    """A chat ends a session when its last card is rated; the tags then asked were refused ("This
    review is finished."), and so was every later change of a rating on that run."""
    session = _session(demo_store, BOB)  # a chat: every action names its item
    item = session.pending(limit=1)[0].id
    session.act(Action("rate", "okay", item_id=item))
    assert session.act(Action("quit")).summary is not None  # the chat says "All done"
    step = session.act(Action("toggle", "bad_ranking", item_id=item))
    assert step.alert is None and step.stored == 1
    assert session.act(Action("rate", "poor", item_id=item)).stored == 1
    assert _on_disk(demo_store)[-1].concerns == ["bad_ranking"]
    assert session.act(Action("rate", "good")).alert == "This review is finished."  # no item


def test_notes_skip_and_note_only(demo_store):
    session = _session(demo_store)
    session.start()
    first = session.item.id
    session.act(Action("rate", "terrible"))
    assert session.act(Action("note")).state == State.NOTE
    assert session.act(Action("text", "  stale v1 page on top ")).state == State.FOLLOW_UP
    session.act(Action("next"))
    second = session.item.id
    assert session.act(Action("skip")).state == State.SKIP_REASON  # stored; why is asked next
    session.act(Action("next"))  # no reason
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
    assert summary.aiVsHumanDelta == pytest.approx(  # AI − human
        sum(ai[i] - rated[i] for i in rated) / 2, abs=1e-4
    )
    assert _on_disk(demo_store)[-1].type == "review_summary"


def test_session_resumes_from_the_log_on_another_channel(demo_store):
    session = _session(demo_store)
    session.start()
    seen = [session.item.id]
    session.act(Action("rate", "good"))
    seen.append(session.item.id)
    session.act(Action("skip"))
    # a crash: nothing but the log survives; a new engine resumes
    resumed = ReviewEngine(Store(demo_store.root), load_config(None)).session(
        SEARCH_RUN, ALICE, channel="telegram"
    )
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
    assert [b.key for b in card.buttons[0]] == ["y", "o"]
    assert card.button_for_key("n").action.kind == "note"  # n is the note on every scale
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
        ("terrible", [], "terminal"),
        ("terrible", ["stale_content"], "terminal"),
    ]


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
    with demo_store.run_path(SEARCH_RUN).open(
        "ab"
    ) as handle:  # the run grows: re-read, the old issue not repeated
        handle.write(b"\n")
    engine.refresh(SEARCH_RUN)
    assert [(i.path, i.line) for i in issues] == [(demo_store.run_path(SEARCH_RUN), 5)]


def test_hilbot_review_warns_about_a_run_line_it_cannot_read(demo_store, tmp_path):
    from tests.auxil.cli import invoke

    _corrupt_line(demo_store, SEARCH_RUN, 5)
    result = invoke(
        "review",
        SEARCH_RUN,
        "--reviewer",
        "alice",
        input="q",
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
        cwd=tmp_path,
    )
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and warnings[0].startswith(
        f"warning: {demo_store.run_path(SEARCH_RUN)}:5: "
    )
    assert "(17 queries" in result.stdout


def test_an_empty_dimension_is_an_unknown_dimension_not_the_default(demo_store):
    from evaluation import HilbotError

    with pytest.raises(HilbotError, match="dimension ''"):
        _session(demo_store, dimension="")


def _ledger_steps(data):
    """A run, a ledger and reviewers, driven through any mix of deals, ratings, skips, released
    cards and items added to a growing run; yields (run, ledger, reviewers, k, grew) after each
    step."""
    from evaluation import ItemData, Query, RunHeader
    from evaluation.runs import Run

    items = [
        ItemData(id=f"i{n}", query=Query(query="q", category=f"c{n % 3}"))
        for n in range(data.draw(st.integers(1, 10)))
    ]
    run, ledger = Run("r", RunHeader(run_id="r"), items), Ledger()
    reviewers = [Reviewer(id=f"u{n}") for n in range(data.draw(st.integers(1, 4)))]
    k = data.draw(st.integers(1, 3))
    for step in range(data.draw(st.integers(0, 30))):
        who, item = data.draw(st.sampled_from(reviewers)), data.draw(st.sampled_from(items)).id
        op = data.draw(st.sampled_from(["deal", "rate", "skip", "release", "grow"]))
        if op == "deal":
            ledger.reserve(("r", item, "overall"), who.key)
        elif op == "rate":
            ledger.add(
                Rating(
                    run_id="r",
                    item_id=item,
                    reviewer=who,
                    idempotency_key=f"k{step}",
                    judgment="good",
                    score=1.0,
                )
            )
        elif op == "skip":
            ledger.add(Skip(run_id="r", item_id=item, reviewer=who, idempotency_key=f"k{step}"))
        elif op == "release":
            ledger.release(("r", item, "overall"), who.key)
        else:
            items.insert(
                data.draw(st.integers(0, len(items))),
                ItemData(id=f"new{step}", query=Query(query="q")),
            )
        yield run, ledger, reviewers, k, op == "grow"


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_progress_from_running_counts_equals_walking_the_queue(data):
    """`progress` counts what is left from the ledger's running counts; it must equal
    len(queue) + open cards under any mix of deals, ratings, skips, released cards and items added
    to a growing run."""
    for run, ledger, reviewers, k, _ in _ledger_steps(data):
        for reviewer in reviewers:
            left = progress(run, ledger, "overall", reviewer, k).remaining
            assert left == len(queue(run, ledger, "overall", reviewer, k)) + len(
                ledger.open_cards("r", "overall", reviewer)
            )


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_kept_count_of_raters_equals_the_raters(data):
    """An item's load is counted from the raters' running count (walking every reviewer of the
    item on each event made a 1M-line fold quadratic); the count must equal the raters under any
    mix of ratings, skips and re-ratings."""
    for run, ledger, _, _, _ in _ledger_steps(data):
        for item in run.items:
            raters = ledger.raters("r", item.id, "overall")
            assert ledger.rating_count("r", item.id, "overall") == len(raters)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_dealing_from_the_full_prefix_equals_a_fresh_walk(data):
    """The queue starts its walk after the items already known to be full (kept per assignment
    order); it must equal a walk from the first item with nothing cached, whatever reopens items or
    grows the run."""
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


# --------------------------------------------- the full label: confidence, skip reasons, follow-ups

FULL_LABEL = """
[review]
skip_reasons = ["unclear item", "broken item", "other"]

[dimensions.code-validity]
scale = "code"
concerns = "answer"
confidence = true

[[dimensions.code-validity.follow_ups]]
field = "code_issues"
question = "Which issues?"
choices = ["syntax error", "missing import", "wrong API"]
when = ["parses", "broken"]
multiple = true
text = true

[[dimensions.code-validity.follow_ups]]
field = "blocked_by"
question = "What would have made it run?"
choices = ["missing dependency", "missing docs"]
when = ["parses"]
"""
"""code-validity asking how sure, then its issues (after parses or broken), then what blocked it
(after parses)."""


def _labelled(store, tmp_path, reviewer=ALICE):
    (tmp_path / "full.toml").write_text(FULL_LABEL)
    return _session(
        store, reviewer, dimension="code-validity", config=load_config(tmp_path / "full.toml")
    )


def _latest(store, item_id, dimension="code-validity", reviewer=ALICE):
    return Ledger.from_events(_on_disk(store)).judgment(SEARCH_RUN, item_id, dimension, reviewer)


def _labels(card, row=0):
    return [b.label for b in card.buttons[row]]


def test_confidence_is_asked_only_where_configured_and_can_be_passed(demo_store, tmp_path):
    plain = _session(demo_store)  # overall asks no confidence: a top rating moves on at once
    plain.start()
    assert plain.act(Action("rate", "good")).state == State.RATING
    session = _labelled(demo_store, tmp_path, BOB)
    session.start()
    first = session.item.id
    step = session.act(Action("rate", "runs"))
    assert step.state == State.CONFIDENCE and session.item.id == first
    assert [(b.label, b.key) for b in step.card.buttons[0]] == [
        ("High", "h"),
        ("Medium", "m"),
        ("Low", "l"),
    ]
    assert (
        step.card.prompt == "How sure are you?" and step.card.reveal is None
    )  # blind until the label is complete
    step = session.act(Action("confidence", "medium"))
    assert step.state == State.RATING and session.item.id != first  # "runs" asks nothing more
    second = session.item.id
    session.act(Action("rate", "runs"))
    step = session.act(Action("next", "confidence"))  # passed: nothing stored
    assert step.stored == 0 and session.item.id not in (first, second)
    assert _latest(demo_store, first, reviewer=BOB).confidence == "medium"
    assert _latest(demo_store, second, reviewer=BOB).confidence is None
    ratings = [
        e for e in _on_disk(demo_store) if isinstance(e, Rating) and e.dimension == "code-validity"
    ]
    assert [(r.judgment, r.confidence, r.ai_verdict_shown) for r in ratings] == [
        ("runs", None, False),
        ("runs", "medium", False),
        ("runs", None, False),
    ]


def test_follow_ups_are_asked_after_their_options_only_and_stored_in_their_fields(
    demo_store, tmp_path
):
    session = _labelled(demo_store, tmp_path)
    session.start()
    first = session.item.id
    session.act(Action("rate", "broken"))
    step = session.act(Action("confidence", "low"))
    assert step.state == State.QUESTION and step.card.prompt.startswith("Which issues?")
    assert _labels(step.card) == ["syntax error", "missing import", "wrong API"]
    assert [b.key for b in step.card.buttons[0]] == ["1", "2", "3"]
    session.act(Action("answer", "code_issues:wrong API"))
    step = session.act(Action("answer", "code_issues:syntax error"))
    assert step.state == State.QUESTION  # several may be picked: they toggle
    assert _labels(step.card) == ["✓ syntax error", "missing import", "✓ wrong API"]
    step = session.act(Action("next", "code_issues"))  # done with the issues
    assert (
        step.state == State.FOLLOW_UP and step.card.reveal is not None
    )  # blocked_by is asked only after "parses"
    session.act(Action("next"))
    latest = _latest(demo_store, first)
    assert (
        latest.labels.code_issues == ["syntax error", "wrong API"]
        and latest.labels.code_parses is False
    )
    assert latest.confidence == "low" and latest.metadata.blocked_by is None
    second = session.item.id
    session.act(Action("rate", "parses"))
    session.act(Action("next", "confidence"))
    session.act(Action("answer", "code_issues:missing import"))
    step = session.act(Action("next", "code_issues"))
    assert step.state == State.QUESTION and step.card.prompt == "What would have made it run?"
    step = session.act(
        Action("answer", "blocked_by:missing docs")
    )  # one answer: on to the concern tags
    assert step.state == State.FOLLOW_UP
    assert "blocked by: missing docs" in step.card.answers
    latest = _latest(demo_store, second)
    assert (latest.labels.code_issues, latest.metadata.blocked_by) == (
        ["missing import"],
        "missing docs",
    )
    summary = session.summary()  # a rating with its answers is still one judgment
    assert (summary.queriesReviewed, summary.queriesSkipped) == (2, 0)
    assert summary.humanAverageScore == pytest.approx(0.25)
    assert len(Ledger.from_events(_on_disk(demo_store)).ratings(SEARCH_RUN, "code-validity")) == 2


def test_a_typed_answer_is_stored_in_its_field_and_an_empty_one_is_not(demo_store, tmp_path):
    session = _labelled(demo_store, tmp_path)
    session.start()
    item = session.item.id
    session.act(Action("rate", "broken"))
    session.act(Action("next", "confidence"))
    assert session.act(Action("type", "code_issues")).state == State.ANSWER
    step = session.act(Action("text", "   "))
    assert step.state == State.QUESTION and step.alert and step.stored == 0
    session.act(Action("answer", "code_issues:syntax error"))
    session.act(Action("type", "code_issues"))
    step = session.act(Action("text", " uses a removed API "))
    assert (
        step.state == State.QUESTION
        and step.stored == 1
        and _labels(step.card)[0] == "✓ syntax error"
    )
    assert _latest(demo_store, item).labels.code_issues == ["syntax error", "uses a removed API"]
    assert not [e for e in _on_disk(demo_store) if isinstance(e, Note)]  # an answer, not a note
    assert session.act(
        Action("type", "blocked_by")
    ).alert  # not asked after "broken", and it takes no typing


def test_the_four_labelled_dimensions_ask_their_follow_ups_by_default(demo_store):
    trigger = _session(demo_store, dimension="trigger-accuracy")
    trigger.start()
    assert (
        trigger.act(Action("rate", "yes")).state == State.CONFIDENCE
    )  # a right trigger asks only how sure
    assert trigger.act(Action("next", "confidence")).state == State.RATING
    item = trigger.item.id
    assert trigger.act(Action("rate", "no")).state == State.CONFIDENCE
    step = trigger.act(Action("next", "confidence"))
    assert step.state == State.QUESTION and step.card.prompt == "What triggered instead?"
    trigger.act(Action("type", "trigger_component_observed"))
    step = trigger.act(Action("text", "search-widget"))
    assert step.state == State.FOLLOW_UP  # then the concern tags of a wrong trigger
    assert (
        _latest(demo_store, item, "trigger-accuracy").labels.trigger_component_observed
        == "search-widget"
    )
    expected = {
        "code-validity": ("broken", State.CONFIDENCE),
        "technical-accuracy": ("incorrect", State.CONFIDENCE),
        "completeness": ("2", State.CONFIDENCE),
    }
    for dimension, (value, state) in expected.items():
        session = _session(demo_store, dimension=dimension)
        session.start()
        assert session.act(Action("rate", value)).state == state, dimension
    fields = {d: [f.field for f in load_config(None).dimension(d).follow_ups] for d in expected}
    assert fields == {
        "code-validity": ["code_issues"],
        "technical-accuracy": ["inaccuracies"],
        "completeness": ["missing_elements"],
    }


def test_a_changed_rating_keeps_the_answers_that_still_apply(demo_store, tmp_path):
    session = _labelled(demo_store, tmp_path)
    session.start()
    item = session.item.id
    session.act(Action("rate", "broken"))
    session.act(Action("confidence", "high"))
    session.act(Action("answer", "code_issues:missing import"))
    session.act(Action("rate", "parses"))  # the issues are asked after "parses" too: kept
    assert (_latest(demo_store, item).labels.code_issues, _latest(demo_store, item).confidence) == (
        ["missing import"],
        "high",
    )
    session.act(Action("rate", "runs"))  # not after "runs": dropped
    latest = _latest(demo_store, item)
    assert (latest.labels.code_issues, latest.labels.code_runs, latest.confidence) == (
        None,
        True,
        "high",
    )


def test_skip_offers_the_reasons_and_other_asks_for_a_note(demo_store):
    session = _session(demo_store)  # the built-in reasons
    session.start()
    first = session.item.id
    step = session.act(Action("skip"))
    assert step.state == State.SKIP_REASON and session.item.id == first and step.stored == 1
    assert _labels(step.card) == [
        "Unclear item",
        "Needs expertise I don't have",
        "Broken item",
        "Other…",
    ]
    assert [b.key for b in step.card.buttons[0]] == ["1", "2", "3", "4"]
    assert (
        session.act(Action("skip", "broken item")).state == State.RATING
        and session.item.id != first
    )
    second = session.item.id
    session.act(Action("skip"))
    assert session.act(Action("skip", "other")).state == State.NOTE
    step = session.act(Action("text", "the results never loaded"))
    assert step.state == State.RATING and session.item.id not in (first, second)
    third = session.item.id
    session.act(Action("skip"))
    session.act(Action("next"))  # no reason: one key more than a bare skip
    events = _on_disk(demo_store)
    assert [(e.item_id, e.skip_reason) for e in events if isinstance(e, Skip)] == [
        (first, None),
        (first, "broken item"),
        (second, None),
        (second, "other"),
        (third, None),
    ]
    assert [(e.item_id, e.text) for e in events if isinstance(e, Note)] == [
        (second, "the results never loaded")
    ]
    ledger = Ledger.from_events(events)
    assert [
        ledger.judgment(SEARCH_RUN, i, "overall", ALICE).skip_reason for i in (first, second, third)
    ] == ["broken item", "other", None]
    progress = session.progress()
    assert (progress.done, progress.skipped, progress.remaining) == (0, 3, 15)
    step = session.act(Action("skip", "bored"))  # only the configured reasons
    assert step.alert and step.stored == 0


def test_redelivered_answers_and_reasons_write_nothing(demo_store, tmp_path):
    session = _labelled(demo_store, tmp_path, BOB)
    session.start()
    item = session.item.id
    session.act(Action("rate", "broken", item, "u1"))
    session.act(Action("confidence", "high", item, "u2"))
    again = session.act(Action("confidence", "high", item, "u2"))
    assert again.repeated and again.stored == 0 and again.state == State.QUESTION
    session.act(Action("answer", "code_issues:missing import", item, "u3"))
    again = session.act(Action("answer", "code_issues:missing import", item, "u3"))
    assert (
        again.repeated
        and again.stored == 0
        and _latest(demo_store, item, reviewer=BOB).labels.code_issues == ["missing import"]
    )
    session.act(Action("next", item_id=item))
    skipped = session.item.id
    session.act(Action("skip", None, skipped, "u4"))
    assert session.act(Action("skip", None, skipped, "u4")).state == State.SKIP_REASON
    session.act(Action("skip", "unclear item", skipped, "u5"))
    assert session.act(Action("skip", "unclear item", skipped, "u5")).stored == 0
    events = _on_disk(demo_store)
    assert [type(e).__name__ for e in events] == ["Rating", "Rating", "Rating", "Skip", "Skip"]


def test_the_guide_says_what_each_label_means_and_when_to_skip(demo_store):
    session = _session(demo_store, dimension="trigger-accuracy")
    session.start()
    guide = session.guide().splitlines()
    assert guide[0] == "trigger-accuracy: Did the correct component trigger?"
    assert guide[1].startswith("  y  Yes, correct — YES if")
    assert guide[2].startswith("  o  No, wrong component — NO if")  # the key the card shows
    assert guide[3].startswith("  s  Skip — SKIP if")
    assert "how sure are you" in guide[4]
    step = session.act(Action("guide"))
    assert step.detail == session.guide() and step.stored == 0
    search = _session(demo_store).guide()
    assert "how sure" not in search and "  s  Skip — " in search


@pytest.mark.parametrize(
    "dimension, label",
    [("trigger-accuracy", "yes"), ("completeness", "5"), ("technical-accuracy", "correct")],
)
def test_every_labelling_dimension_asks_how_sure_after_each_label(demo_store, dimension, label):
    session = _session(demo_store, dimension=dimension)
    session.start()
    first = session.item.id
    step = session.act(Action("rate", label))
    assert step.state == State.CONFIDENCE and step.card.prompt == "How sure are you?"
    assert [b.key for b in step.card.buttons[0]] == ["h", "m", "l"]
    step = session.act(Action("confidence", "high"))
    assert step.state == State.RATING and session.item.id != first
    second = session.item.id
    session.act(Action("rate", label))
    step = session.act(Action("next", "confidence"))  # skipped: the label stands without it
    assert step.stored == 0 and session.item.id not in (first, second)
    latest = Ledger.from_events(_on_disk(demo_store))
    assert [
        (latest.judgment(SEARCH_RUN, i, dimension, ALICE).judgment, _conf(latest, i, dimension))
        for i in (first, second)
    ] == [(label, "high"), (label, None)]


def _conf(ledger, item_id, dimension):
    return ledger.judgment(SEARCH_RUN, item_id, dimension, ALICE).confidence


def test_a_skip_is_taken_back_with_one_key_and_the_rating_replaces_it(demo_store):
    session = _session(demo_store)
    session.start()
    skipped = session.item.id
    session.act(Action("skip"))
    step = session.act(Action("next"))  # no reason: on to the next item
    following = session.item.id
    assert step.card.button_for_key("u").action == Action("undo", item_id=skipped)
    step = session.act(step.card.button_for_key("u").action)
    assert session.item.id == skipped and step.state == State.RATING and step.stored == 0
    assert step.card.button_for_key("u") is None and step.card.title.startswith("[1/")
    session.act(Action("rate", "good"))
    assert session.item.id == following
    assert session.summary().queriesSkipped == 0 and session.summary().queriesReviewed == 1
    refused = session.act(Action("undo", item_id=skipped))  # rated now: nothing to take back
    assert refused.alert and refused.stored == 0 and session.item.id == following


def test_a_skips_reasons_offer_to_take_it_back(demo_store):
    session = _session(demo_store, BOB)
    session.start()
    skipped = session.item.id
    step = session.act(Action("skip", item_id=skipped, delivery_id="u1"))
    assert step.state == State.SKIP_REASON
    assert Action("undo", item_id=skipped) in [b.action for row in step.card.buttons for b in row]
    step = session.act(Action("undo", item_id=skipped, delivery_id="u2"))
    assert step.state == State.RATING and step.card.buttons[0][0].action.kind == "rate"
