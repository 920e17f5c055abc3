"""The chat review flow, once for every chat platform: each test runs for each driver
(tests/chat_drivers).

The suite does not know which platform it runs on. It plays users (ALICE and BOB review, ADMIN
pushes and posts digests, EVE is on no list) and asserts only what they see — messages, buttons,
the answers to their taps — and what is in the log (ratings.jsonl).

The tests after "flaws" each pin a flaw of issue 11 §3 (and §1: growing runs after a restart).
"""

from __future__ import annotations

import logging
import re
import subprocess
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from bot.demo import RAG_RUN, SEARCH_RUN
from evaluation import ItemData, Query, QueryEvaluation, RunHeader, Store
from tests.chat_drivers import ADMIN, ALICE, BOB, CAROL, EVE, GROUP, Message, drivers

SCALE = ["good", "okay", "poor", "terrible"]
"""The demo search run's scale."""


LEGS = [
    (platform, backend)
    for platform in ("telegram", "slack", "slack-http")
    for backend in ("jsonl", "postgres")  # the ``backend`` values of tests/bot/chat/conftest.py
    if (platform, backend) != ("slack-http", "postgres")
]
"""Each test runs on each platform and store backend (tests/bot/chat/conftest.py), except Slack
over HTTP on PostgreSQL, to keep the suite's time down: Slack over HTTP differs from Socket Mode
only in how events reach the bot (its JSONL leg runs), and Socket Mode runs on PostgreSQL."""


@pytest.fixture(params=LEGS, ids=["-".join(leg) for leg in LEGS])
def leg(request) -> tuple[str, str]:
    """The platform and the store backend a test runs on."""
    return request.param


@pytest.fixture
def backend(leg) -> str:
    """The store backend of the test's leg (the ``store`` fixture's)."""
    return leg[1]


@pytest.fixture
def driver(leg, tmp_path):
    """A platform with its users, ready to start the bot (``async with driver.bot(store):``)."""
    with drivers()[leg[0]](tmp_path) as platform:
        yield platform


@pytest.fixture(params=["whole log", "index"])
def fold(request, monkeypatch):
    """How the bot starts: folding the whole log, or run by run from the columnar index (which
    every log this small is read whole without)."""
    if request.param == "index":
        monkeypatch.setenv("HILBOT_INDEX_MIN_BYTES", "0")
    return request.param


def title_number(card: Message) -> tuple[int, int]:
    """A card's ``[n/total]``."""
    found = re.match(r"\[(\d+)/(\d+)\]", card.text)
    assert found, f"no [n/total] at the start of {card.text[:80]!r}"
    return int(found[1]), int(found[2])


def shown(driver, *kinds: str) -> list[dict]:
    """The log's deliveries of cards (and of ``kinds``): every card and note prompt sent is logged
    as one."""
    return [d for d in driver.records("delivery") if d["kind"] in (kinds or ("card",))]


def growing_run(store: Store, run_id: str = "live") -> None:
    """A run still being evaluated: a header, no items yet."""
    store.create_run(RunHeader(run_id=run_id, kind="answer", dimensions=["answer"]), [])


def add_item(store: Store, run_id: str, item_id: str, query: str) -> None:
    item = ItemData(id=item_id, query=Query(query=query), answer="42")
    store.run_log(run_id).append(QueryEvaluation(run_id=run_id, data=item))


# ----------------------------------------------------------------------------------------- commands


async def test_start_welcomes_reviewers_and_runs_lists_the_runs(driver, demo_store):
    async with driver.bot(demo_store):
        [reply] = await driver.command(ALICE, "start")
        assert "Welcome" in reply.text and driver.command_text("review") in reply.text
        [runs] = await driver.command(ALICE, "runs")
        assert SEARCH_RUN in runs.text and RAG_RUN in runs.text and "queries" in runs.text


async def test_a_stranger_is_refused_and_nothing_is_written(driver, demo_store):
    async with driver.bot(demo_store):
        [reply] = await driver.command(EVE, "start")
        assert "not on this bot's reviewer list" in reply.text and driver.user_id(EVE) in reply.text
        [reply] = await driver.command(EVE, "review", SEARCH_RUN)
        assert "not on" in reply.text
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        answer = await driver.tap(
            EVE, card, "good"
        )  # a stranger tapping Alice's card (e.g. a forwarded message)
        assert answer.alert and "not on" in answer.text
        assert driver.records("rating") == []


async def test_review_unknown_run_is_one_line_with_the_fix(driver, demo_store):
    async with driver.bot(demo_store):
        [reply] = await driver.command(ALICE, "review", "no-such-run")
        assert "no run 'no-such-run'" in reply.text and driver.command_text("runs") in reply.text
        [reply] = await driver.command(ALICE, "review", SEARCH_RUN, "nonsense")
        assert "unknown dimension 'nonsense'" in reply.text


async def test_status_shows_progress_per_run(driver, demo_store):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "good")
        await driver.until(lambda: len(driver.messages(ALICE)) == 3, what="the next card")
        [status] = await driver.command(ALICE, "status")
        assert f"{SEARCH_RUN} · overall: 1 rated, 0 skipped, 17 left of 18" in status.text


# ----------------------------------------------------------------------------------------- the flow


async def test_a_tap_is_on_disk_before_it_is_answered(driver, demo_store):
    seen: list[int] = []
    driver.on_answer(
        lambda: seen.append(len(driver.records("rating")))
    )  # the moment the answer reaches the platform
    async with driver.bot(demo_store):
        progress, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        assert "Reviewing" in progress.text and "0 rated" in progress.text
        assert "ferret middleware error handling" in card.text or card.text.startswith("[1/")
        await driver.tap(ALICE, card, "good")
        assert seen == [1]
        [rating] = driver.records("rating")
        assert rating["judgment"] == "good" and rating["reviewer"]["id"] == driver.user_id(ALICE)
        assert rating["channel"] == driver.platform and rating["idempotency_key"].startswith(
            f"{driver.platform}:"
        )


async def test_the_card_is_blind_until_rated_then_shows_the_ai_verdict(driver, demo_store):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.until(lambda: shown(driver), what="the delivery in the log")
        [dealt] = shown(driver)
        item = demo_store.load_run(SEARCH_RUN).item(dealt["item_id"])
        assert item.evaluation.verdict not in card.text and "🤖" not in card.text
        assert item.evaluation.rationale[:40] not in card.text
        assert card.labels[:4] == SCALE
        assert "Note only" in card.labels and "Skip" in card.labels and "View full" in card.labels
        assert all(len(data.encode()) <= driver.data_limit for data in card.datas)
        await driver.tap(ALICE, card, "good")
        edited = await driver.shows(card, "✓ Recorded: good")
        assert (
            "✓ Recorded: good" in edited.text
            and "🤖" in edited.text
            and item.evaluation.verdict in edited.text
        )
        assert edited.labels == SCALE  # change the rating; no tags after good


async def test_okay_offers_concern_tags_that_toggle_and_the_next_card_comes(driver, demo_store):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "okay")
        follow_up = await driver.labelled(card, "bad_ranking")
        assert "bad_ranking" in follow_up.labels and "Add note" in follow_up.labels
        await driver.until(lambda: len(driver.messages(ALICE)) == 3, what="the next card")
        answer = await driver.tap(ALICE, follow_up, "bad_ranking")
        assert answer.text == "bad_ranking: on" or not driver.toasts
        await driver.labelled(card, "✓ bad_ranking")
        assert "concerns: bad_ranking" in driver.now(card).text
        await driver.tap(ALICE, driver.now(card), "weak_snippet")
        await driver.tap(ALICE, await driver.labelled(card, "✓ weak_snippet"), "✓ bad_ranking")
        await driver.labelled(card, "bad_ranking")
        ratings = driver.records("rating")
        assert [r["concerns"] for r in ratings] == [
            [],
            ["bad_ranking"],
            ["bad_ranking", "weak_snippet"],
            ["weak_snippet"],
        ]
        assert len(driver.messages(ALICE)) == 3  # toggles deal nothing new
        await driver.tap(ALICE, driver.now(card), "✓ Done")
        await driver.until(lambda: driver.labels(card) == SCALE, what="the final card")


async def test_a_rating_can_be_changed_and_the_latest_counts(driver, demo_store):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "good")
        await driver.tap(ALICE, await driver.shows(card, "✓ Recorded: good"), "poor")
        assert [r["judgment"] for r in driver.records("rating")] == ["good", "poor"]
        await driver.shows(card, "✓ Recorded: poor")


async def test_a_rating_changed_to_one_that_takes_no_tags_drops_them(driver, demo_store):
    """Okay with a tag, then good: the tag stayed on a rating that takes none (`validate` flagged
    it)."""
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "okay")
        await driver.tap(ALICE, await driver.labelled(card, "bad_ranking"), "bad_ranking")
        await driver.tap(ALICE, await driver.labelled(card, "✓ bad_ranking"), "good")
        edited = await driver.shows(card, "✓ Recorded: good")
        assert "bad_ranking" not in edited.text and edited.labels == SCALE
        latest = driver.records("rating")[-1]
        assert (latest["judgment"], latest["concerns"], latest["concerns_dropped"]) == (
            "good",
            [],
            ["bad_ranking"],
        )
        assert len(driver.messages(ALICE)) == 3  # one next card, not two


async def _note_prompt_open(driver):
    """Alice rates her first card "okay", taps "Add note" on it and gets the note prompt; returns
    that card."""
    _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
    await driver.tap(ALICE, card, "okay")
    await driver.until(lambda: len(driver.messages(ALICE)) == 3, what="the next card")
    await driver.tap(ALICE, await driver.labelled(card, "Add note"), "Add note")
    await driver.until(lambda: len(driver.messages(ALICE)) == 4, what="the note prompt")
    return card


async def test_add_note_asks_for_a_reply_and_stores_it(driver, demo_store):
    async with driver.bot(demo_store):
        await _note_prompt_open(driver)
        prompt = driver.messages(ALICE)[-1]
        assert driver.asks_for_reply(prompt) and "Note on" in prompt.text
        [saved] = await driver.say(
            ALICE, "Ranks the <script> page & misses errors.md", reply_to=prompt
        )
        assert saved.text == "📝 Note saved."
        [note] = driver.records("note")
        assert (
            note["text"] == "Ranks the <script> page & misses errors.md"
            and note["item_id"] == driver.records("rating")[0]["item_id"]
        )
        [reply] = await driver.say(ALICE, "just chatting")
        assert "Tap a card" in reply.text and len(driver.records("note")) == 1


async def test_note_only_before_rating_skips_with_the_note(driver, demo_store):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "Note only")
        await driver.until(lambda: len(driver.messages(ALICE)) == 3, what="the note prompt")
        await driver.say(
            ALICE, "Can't judge without the source", replies=2
        )  # no reply_to: the open prompt takes it
        [skip] = driver.records("skip")
        assert (
            skip["skip_reason"] == "note only"
            and driver.records("note")[0]["text"] == "Can't judge without the source"
        )
        await driver.shows(card, "Skipped")


async def test_skip_records_and_deals_the_next_card(driver, demo_store):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "Skip")
        await driver.until(lambda: len(driver.messages(ALICE)) == 3, what="the next card")
        assert len(driver.records("skip")) == 1
        await driver.shows(card, "Skipped")
        nxt = driver.messages(ALICE)[-1]
        assert nxt.text.startswith("[2/18]") and nxt.labels[0] == "good"


async def test_taps_answered_after_sed_i_on_the_log_are_in_the_file(driver, demo_store):
    """The reported bug: after `sed -i` on ratings.jsonl, taps were answered "Recorded" and written
    to the deleted file."""
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "good")
        await driver.until(lambda: len(driver.messages(ALICE)) == 3, what="the next card")
        subprocess.run(
            ["sed", "-i", "s/x/x/", str(demo_store.ratings.path)], check=True
        )  # an edit that saves by rename
        for n in range(3):
            card = driver.messages(ALICE)[-1]
            await driver.tap(ALICE, card, "poor")
            await driver.until(lambda: len(driver.messages(ALICE)) == 4 + n, what="the next card")
        assert [r["judgment"] for r in driver.records("rating")] == ["good", "poor", "poor", "poor"]


async def test_window_deals_at_most_w_unanswered_cards(driver, demo_store):
    async with driver.bot(demo_store, "[review]\nwindow = 3"):
        await driver.command(ALICE, "review", SEARCH_RUN, replies=4)
        await driver.command(ALICE, "review", SEARCH_RUN, replies=2)  # resuming deals nothing more
        assert "3 open card(s) above" in driver.messages(ALICE)[-1].text
        cards = driver.cards(ALICE)
        assert len(cards) == 3 and len({m.text for m in cards}) == 3
        await driver.tap(ALICE, cards[1], "good")
        await driver.until(lambda: len(driver.cards(ALICE)) == 4, what="one more card")


# ------------------------------------------------------------------------------------------- safety


async def test_forged_and_stale_button_data_is_refused_and_logged(driver, demo_store, caplog):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        good = card.datas[0]
        op, key, index, dim = good.split("|")
        forged = [
            "garbage",
            f"{op}|{key}|999|{dim}",
            f"r9|{key}|{index}|{dim}",
            f"{op}|deadbeef|{index}|{dim}",
            f"{op}|{key}|{int(index) + 1}|{dim}",
        ]  # the last: a real item, never dealt to Alice
        with caplog.at_level(logging.WARNING, logger="hilbot"):
            for data in forged:
                answer = await driver.tap_data(ALICE, card, data)
                assert answer.alert and "not valid" in answer.text
        assert driver.records("rating") == [] and driver.records("skip") == []
        assert sum("refused tap" in r.message for r in caplog.records) == len(forged)
        _, bob_card = await driver.command(BOB, "review", SEARCH_RUN, replies=2)
        answer = await driver.tap_data(BOB, bob_card, good)  # Alice's item, Bob's message
        assert answer.alert and driver.records("rating") == []


async def test_a_redelivered_tap_and_a_double_tap_count_once(driver, demo_store):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "good")
        await driver.redeliver_last_tap()
        await driver.tap(ALICE, driver.now(card), "good")  # the double tap
        await driver.settle()
        assert len(driver.records("rating")) == 1
        assert len(driver.cards(ALICE)) == 2  # one next card


async def test_a_restart_finds_open_sessions_and_old_buttons_still_work(driver, demo_store, fold):
    async with driver.bot(demo_store):
        card = await _note_prompt_open(driver)
        await driver.restart()  # a new process: everything from the log
        await driver.tap(
            ALICE, driver.now(card), "bad_ranking"
        )  # a button on a message from before
        assert driver.records("rating")[-1]["concerns"] == ["bad_ranking"]
        await driver.say(ALICE, "Second page is stale", replies=1)  # the open prompt survived too
        assert driver.records("note")[0]["text"] == "Second page is stale"
        [again] = await driver.command(ALICE, "next")
        open_card = driver.messages(ALICE)[2]
        assert again.text == open_card.text and again.labels[0] == "good"
        await driver.tap(ALICE, open_card, "good")  # the open card from before the restart
        assert [r["judgment"] for r in driver.records("rating")][-1] == "good"
        await driver.until(
            lambda: len(driver.cards(ALICE)) == 4, what="the re-shown card + one new"
        )
        # 2 cards + the prompt before; the re-shown card + the new one after
        await driver.until(
            lambda: len(shown(driver, "card", "note_prompt")) == 5, what="every delivery logged"
        )


async def test_in_a_group_the_tapper_counts_and_the_card_stays_blind(driver, demo_store):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, chat=GROUP, replies=2)
        answer = await driver.tap(BOB, card, "poor", chat=GROUP)
        assert answer.alert and "Recorded: poor" in answer.text and "🤖" in answer.text
        [rating] = driver.records("rating")
        assert rating["reviewer"]["id"] == driver.user_id(BOB)
        assert "🤖" not in driver.now(card).text and driver.now(card).edits == 0
        await driver.until(lambda: len(driver.messages(GROUP)) == 3, what="the group's next card")
        answer = await driver.tap(EVE, driver.messages(GROUP)[-1], "good", chat=GROUP)
        assert "not on" in answer.text and len(driver.records("rating")) == 1


# ------------------------------------------------------------------------------------------- admins


async def test_push_deals_first_cards_to_every_reviewer_admins_only(driver, demo_store):
    async with driver.bot(demo_store):
        [reply] = await driver.command(ALICE, "push", SEARCH_RUN)
        assert "Only admins" in reply.text
        await driver.command(ADMIN, "push", SEARCH_RUN, replies=2)
        assert "Pushed demo-docs-search: 2 cards to 2 reviewers" in driver.messages(ADMIN)[-1].text
        alice, bob = driver.cards(ALICE), driver.messages(BOB)
        assert (
            len(alice) == len(bob) == 1 and alice[0].text != bob[0].text
        )  # k = 1: different items


async def test_push_reports_reviewers_it_cannot_reach(driver, demo_store):
    async with driver.bot(demo_store, reviewers=(ALICE, BOB, CAROL)):  # Carol has blocked the bot
        await driver.command(ADMIN, "push", SEARCH_RUN, replies=2)
        assert f"Could not reach {driver.user_id(CAROL)}" in driver.messages(ADMIN)[-1].text
        assert len(shown(driver)) == 2


async def test_digest_posts_text_and_a_chart(driver, demo_store):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "poor")
        await driver.tap(ALICE, await driver.labelled(card, "bad_ranking"), "bad_ranking")
        [digest] = await driver.command(ADMIN, "digest")
        assert (
            "hilbot digest" in digest.text
            and SEARCH_RUN in digest.text
            and "bad_ranking 1" in digest.text
        )
        await driver.until(lambda: driver.uploads(), what="the chart")
        chat, png = driver.uploads()[0]
        assert chat == ADMIN and png.startswith(b"\x89PNG")


async def test_scheduled_digest_is_registered_and_posts_to_its_chats(driver, demo_store):
    async with driver.bot(
        demo_store, driver.digest_config([GROUP], time="09:30", timezone="Europe/Berlin")
    ):
        fire = driver.next_digest(datetime.now(timezone.utc))
        assert fire is not None
        fire = fire.astimezone(ZoneInfo("Europe/Berlin"))
        assert (fire.hour, fire.minute) == (9, 30)
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "good")
        await driver.digest_now()
        await driver.until(lambda: driver.uploads(), what="the scheduled chart")
        assert "hilbot digest" in driver.messages(GROUP)[0].text


async def test_a_scheduled_digest_says_what_changed(driver, demo_store):
    """The scheduled digest carries the regression alerts of its window (the hour since the last
    one, against the hour before) and the synthesis and action items of the runs rated in it."""
    from datetime import timedelta

    from tests.bot.test_digest_cli import rate_then_and_now

    rate_then_and_now(demo_store, before=timedelta(minutes=90), new=timedelta(minutes=10))
    async with driver.bot(demo_store, driver.digest_config([GROUP], every_minutes=60)):
        await driver.digest_now()
        text = "\n".join(m.text for m in driver.messages(GROUP))
        assert "Regressions since " in text and "(against the 60 minutes before):" in text
        assert "⚠ overall · concern bad_ranking: on 0% of 4 ratings → 100% of 4, +100 pts" in text
        assert f"Synthesis of {SEARCH_RUN} · overall (statistical): " in text
        assert "→ Address bad_ranking: flagged in 4 rating(s)" in text


def _posted(driver, store: Store, minutes_ago: float) -> None:
    """The log says the bot posted its scheduled digest ``minutes_ago`` (and then, say, went
    down)."""
    from datetime import timedelta

    from evaluation.records import DigestPosted

    at = datetime.now(timezone.utc) - timedelta(minutes=minutes_ago)
    store.ratings.append(
        DigestPosted(
            channel=driver.platform, chats=["c"], since=at - timedelta(hours=1), timestamp=at
        )
    )


async def test_a_scheduled_digest_is_recorded_in_the_log(driver, demo_store):
    async with driver.bot(demo_store, driver.digest_config([GROUP], every_minutes=60)):
        await driver.digest_now()
        [record] = driver.records("digest_posted")
        assert record["channel"] == driver.platform and record["scheduled"] is True


async def test_a_digest_missed_while_the_bot_was_down_is_posted_when_it_starts(driver, demo_store):
    _posted(
        driver, demo_store, minutes_ago=150
    )  # hourly: two were due while it was down, one is posted
    async with driver.bot(demo_store, driver.digest_config([GROUP], every_minutes=60)):
        await driver.until(
            lambda: driver.messages(GROUP), what="the digest missed while the bot was down"
        )
        assert "hilbot digest" in driver.messages(GROUP)[0].text
        await driver.until(lambda: len(driver.records("digest_posted")) == 2, what="its record")
    assert len(driver.messages(GROUP)) == 1


async def test_a_digest_posted_before_a_restart_is_not_posted_again(driver, demo_store):
    import asyncio

    _posted(driver, demo_store, minutes_ago=10)
    async with driver.bot(demo_store, driver.digest_config([GROUP], every_minutes=60)):
        await asyncio.sleep(0.5)
        assert driver.messages(GROUP) == [] and len(driver.records("digest_posted")) == 1
        fire = driver.next_digest(datetime.now(timezone.utc))
        assert (
            fire is not None
            and 45 * 60 < (fire - datetime.now(timezone.utc)).total_seconds() <= 50 * 60
        )


async def test_items_of_a_run_still_being_evaluated_are_dealt_as_they_come(driver, store):
    growing_run(store)
    async with driver.bot(store):
        await driver.command(ALICE, "review", "live", replies=2)
        assert "Nothing left" in driver.messages(ALICE)[-1].text
        add_item(store, "live", "q1", "fresh item")
        await driver.until(
            lambda: any("fresh item" in m.text for m in driver.messages(ALICE)),
            what="the new item's card",
        )


# --------------------------------------------------------------------------------- flaws (issue 11)


async def test_items_of_a_growing_run_are_dealt_after_a_restart_without_a_command(
    driver, store, fold
):
    """§1: which chat a reviewer's session deals into lived only in memory."""
    growing_run(store)
    async with driver.bot(store):
        await driver.command(ALICE, "review", "live", replies=2)
        assert "Nothing left" in driver.messages(ALICE)[-1].text
        await driver.restart()
        add_item(store, "live", "q1", "fresh item")
        await driver.until(
            lambda: any("fresh item" in m.text for m in driver.messages(ALICE)),
            what="the new item's card after a restart",
        )


async def test_a_new_tap_is_stored_when_the_platforms_event_ids_start_again(driver, demo_store):
    """§3.1: the key was the update id, so a new tap reusing an old id was "Already recorded." and
    dropped."""
    async with driver.bot(demo_store):
        _, first = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, first, "good")
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the second card")
        second = driver.cards(ALICE)[1]
        await driver.restart(fresh_ids=True)
        await driver.command(
            ALICE, "status"
        )  # the same events as before the restart: a command, then a tap
        answer = await driver.tap(ALICE, second, "poor")
        assert answer.text != "Already recorded."
        dealt = [d["item_id"] for d in shown(driver)]
        ratings = [(r["item_id"], r["judgment"]) for r in driver.records("rating")]
        assert ratings == [(dealt[0], "good"), (dealt[1], "poor")]
        await driver.shows(second, "✓ Recorded: poor")
        await driver.redeliver_last_tap()  # the same tap again: still counted once
        assert len(driver.records("rating")) == 2


@pytest.mark.parametrize("label", ["terrible", "good"])
async def test_a_tap_stored_before_a_crash_is_finished_by_tapping_again(driver, demo_store, label):
    """§3.2: after a crash between storing a tap and answering it, a re-tap said "Already recorded."
    and did nothing else."""
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap_and_crash(ALICE, card, label)
        assert [r["judgment"] for r in driver.records("rating")] == [
            label
        ]  # stored before the crash...
        assert (
            "✓ Recorded" not in driver.now(card).text and len(driver.cards(ALICE)) == 1
        )  # ...and nothing after it
        await driver.tap(ALICE, card, label)
        shown = await driver.shows(card, f"✓ Recorded: {label}")
        assert "🤖" in shown.text  # revealed
        if label == "terrible":
            await driver.labelled(card, "bad_ranking")  # the concern tags offered
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the next card")
        await driver.settle()
        assert (
            len(driver.records("rating")) == 1 and len(driver.cards(ALICE)) == 2
        )  # nothing written or dealt twice


async def test_a_card_keeps_its_number_when_it_is_edited(driver, demo_store):
    """§3.4: a [1/18] card became [2/18] when edited after a rating."""
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        assert title_number(card) == (1, 18)
        await driver.tap(ALICE, card, "okay")
        edited = await driver.labelled(card, "bad_ranking")
        assert title_number(edited) == (1, 18)
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the next card")
        second = driver.cards(ALICE)[1]
        assert title_number(second) == (2, 18)
        await driver.tap(ALICE, driver.now(card), "bad_ranking")
        assert title_number(await driver.labelled(card, "✓ bad_ranking")) == (1, 18)
        await driver.tap(ALICE, second, "poor")
        assert title_number(await driver.labelled(second, "bad_ranking")) == (2, 18)


async def test_no_two_open_cards_show_the_same_number(driver, demo_store):
    """§3.4: every card dealt into a window of three said [1/18]."""
    async with driver.bot(demo_store, "[review]\nwindow = 3"):
        await driver.command(ALICE, "review", SEARCH_RUN, replies=4)
        numbers = [title_number(card) for card in driver.cards(ALICE)]
        assert numbers == [(1, 18), (2, 18), (3, 18)]


async def test_a_second_reviewers_card_numbers_agree_with_their_progress(driver, demo_store):
    """§3.4: Bob's first card said [1/18] while his progress said "15 left of 15". Since issue 26
    §11 a card's number is its item's place in the run (of the run's items, as the progress line
    counts them): Bob's cards follow the three Alice holds."""
    async with driver.bot(demo_store, "[review]\nwindow = 3"):
        await driver.command(
            ALICE, "review", SEARCH_RUN, replies=4
        )  # Alice holds three items (k = 1)
        progress, *cards = await driver.command(BOB, "review", SEARCH_RUN, replies=4)
        total = int(re.search(r"left of (\d+)", progress.text)[1])
        size = int(re.search(r"rated \d+/(\d+)", progress.text)[1])
        assert [title_number(card) for card in cards] == [(4, size), (5, size), (6, size)]
        [status] = await driver.command(BOB, "status")
        assert f"0 rated, 0 skipped, {total} left of {total}" in status.text


async def test_status_names_each_run_once(driver, demo_store):
    """§3.5: /status said "demo-docs-search demo-docs-search · …"."""
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "good")
        await driver.until(lambda: len(driver.messages(ALICE)) == 3, what="the next card")
        [status] = await driver.command(ALICE, "status")
        assert status.text.count(SEARCH_RUN) == 1, status.text


async def test_start_tells_a_reviewer_their_user_id(driver, demo_store):
    """§3.5: /start promised the user id and did not show it."""
    async with driver.bot(demo_store):
        [reply] = await driver.command(ALICE, "start")
        assert driver.user_id(ALICE) in reply.text, reply.text


async def test_help_names_each_command_once(driver, demo_store):
    """§3.5: /help named /review (and /push) twice."""
    async with driver.bot(demo_store):
        for user in (ALICE, ADMIN):
            [reply] = await driver.command(user, "help")
            named = {
                name: len(
                    re.findall(re.escape(driver.command_text(name)) + r"(?![\w-])", reply.text)
                )
                for name in ("start", "help", "runs", "review", "next", "status", "push", "digest")
            }
            assert all(n <= 1 for n in named.values()) and all(
                named[n] == 1 for n in ("runs", "review", "next", "status")
            ), named


async def test_a_strangers_help_is_their_id_and_how_to_be_added(driver, demo_store):
    """§3.5: a stranger's /help got the full help."""
    async with driver.bot(demo_store):
        [reply] = await driver.command(EVE, "help")
        assert (
            driver.user_id(EVE) in reply.text and "not on" in reply.text and "admin" in reply.text
        ), reply.text
        assert (
            driver.command_text("review") not in reply.text
            and driver.command_text("next") not in reply.text
        )


@pytest.mark.parametrize("user, name", [(ALICE, "review"), (ADMIN, "push")])
async def test_a_chat_error_never_names_a_terminal_command(driver, demo_store, user, name):
    """§3.5: an invalid run id told the reviewer to run `hilbot review --list`."""
    async with driver.bot(demo_store):
        [reply] = await driver.command(user, name, "../etc")
        assert "hilbot review" not in reply.text and "--list" not in reply.text, reply.text
        assert "\n" not in reply.text.strip()


async def test_a_huge_query_gets_a_card_within_the_limit_and_the_review_goes_on(driver, store):
    """§3.7: a 5,000-character (or 3,000-emoji) query made a card the platform refused; the review
    ended."""
    queries = {"long": "word " * 1000, "emoji": "😀" * 3000, "short": "a short query"}
    items = [
        QueryEvaluation(run_id="huge", data=ItemData(id=item_id, query=Query(query=q), answer="42"))
        for item_id, q in queries.items()
    ]
    store.create_run(RunHeader(run_id="huge", kind="answer", dimensions=["answer"]), items)
    async with driver.bot(store):
        await driver.command(ALICE, "review", "huge", replies=2)
        for n in range(3):
            await driver.until(lambda: len(driver.cards(ALICE)) == n + 1, what=f"card {n + 1}")
            card = driver.cards(ALICE)[-1]
            assert any(q[:20].strip() in card.text for q in queries.values()), card.text[:200]
            await driver.tap(ALICE, card, card.labels[0])
        await driver.until(
            lambda: "All done" in driver.messages(ALICE)[-1].text, what="the end of the run"
        )
        assert len(driver.records("rating")) == 3


async def test_the_end_of_a_review_shows_the_synthesis_and_its_action_items(driver, store):
    """The end said one line of counts; the synthesis and its action items were only in the
    log."""
    items = [
        QueryEvaluation(run_id="small", data=ItemData(id=f"q{n}", query=Query(query=f"query {n}")))
        for n in range(2)
    ]
    store.create_run(RunHeader(run_id="small", kind="answer", dimensions=["answer"]), items)
    async with driver.bot(store):
        await driver.command(ALICE, "review", "small", replies=2)
        await driver.tap(ALICE, driver.cards(ALICE)[-1], "⭐ Excellent")
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the second card")
        card = driver.cards(ALICE)[-1]
        await driver.tap(ALICE, card, "✗ Miss")
        await driver.tap(ALICE, await driver.labelled(card, "hallucination"), "hallucination")
        tagged = await driver.labelled(card, "✓ hallucination")  # the last card still asks: the
        assert not [m for m in driver.messages(ALICE) if "All done" in m.text]  # end waits
        await driver.tap(ALICE, tagged, "✓ Done")
        await driver.until(
            lambda: "All done" in driver.messages(ALICE)[-1].text, what="the end of the run"
        )
        done = driver.messages(ALICE)[-1].text
    assert "2 rated, 0 skipped, 1 flagged" in done
    assert "Synthesis of every review of this run so far (statistical, no LLM):" in done, done
    assert "2 ratings of 2 items by 1 reviewer(s)" in done
    assert "Action items:\n1. Address hallucination: flagged in 1 rating(s)" in done, done


async def test_a_run_ends_once_its_last_skip_has_its_reason(driver, store):
    """The end ("All done") came with the skip, while the card still asked why; the reason was
    then refused ("This review is finished.")."""
    item = ItemData(id="q0", query=Query(query="query 0"))
    store.create_run(
        RunHeader(run_id="one", kind="answer", dimensions=["answer"]),
        [QueryEvaluation(run_id="one", data=item)],
    )
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", "one", replies=2)
        await driver.tap(ALICE, card, "Skip")
        asked = await driver.labelled(card, "Broken item")
        await driver.settle()
        assert not [m for m in driver.messages(ALICE) if "All done" in m.text]
        answer = await driver.tap(ALICE, asked, "Broken item")
        assert not answer.alert, answer.text
        await driver.until(
            lambda: "All done" in driver.messages(ALICE)[-1].text, what="the end of the run"
        )
    assert [s.get("skip_reason") for s in driver.records("skip")] == [None, "broken item"]


async def test_a_card_the_platform_refuses_is_reported_in_one_line_and_the_next_is_dealt(
    driver, demo_store, caplog
):
    """§3.7: one refused card ended the review with "Nothing left for you in this run." while items
    were left."""
    async with driver.bot(demo_store):
        driver.refuse_next_card()
        with caplog.at_level(logging.WARNING, logger="hilbot"):
            await driver.command(ALICE, "review", SEARCH_RUN)
            await driver.until(lambda: driver.cards(ALICE), what="the next item's card")
            await driver.settle()
        reports = [m for m in driver.messages(ALICE)[1:] if not m.buttons]
        assert (
            len(reports) == 1
            and "\n" not in reports[0].text.strip()
            and "Nothing left" not in reports[0].text
        ), reports
        assert any(
            r.levelno >= logging.WARNING and r.name.startswith("hilbot") for r in caplog.records
        )
        [card] = driver.cards(ALICE)
        await driver.tap(ALICE, card, "good")
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the card after that")


async def test_a_huge_command_argument_gets_a_one_line_reply(driver, demo_store):
    """§3.7: `/review` followed by 5,000 characters got no reply at all."""
    async with driver.bot(demo_store):
        [reply] = await driver.command(ALICE, "review", "x" * 5000)
        assert "\n" not in reply.text.strip() and len(reply.text) < 1000, reply.text[:300]


# -------------------------------------------------------------------------------------- diff triage


def triage_run(store: Store, root) -> str:
    """A triage whose one change (a word) goes to humans; its id."""
    from concurrent.futures import ThreadPoolExecutor

    from evaluation import load_config
    from evaluation.triage_run import run_triage

    for side, text in (
        ("books", "answer: Paris\nscore: 0.85\n"),
        ("out", "answer: Lyon\nscore: 0.85\n"),
    ):
        (root / side / "test").mkdir(parents=True)
        (root / side / "test" / "capital.md").write_text(text)
    with ThreadPoolExecutor(
        1
    ) as pool:  # the triage runs its own event loop; the tests are inside one
        return (
            pool.submit(
                run_triage, store, load_config(None), [str(root / "books"), str(root / "out")]
            )
            .result()
            .run_id
        )


async def test_a_change_card_shows_its_diff_and_a_human_accepts_it_into_the_snapshot(
    driver, store, tmp_path
):
    from evaluation.triage_run import apply_accepted

    run_id = triage_run(store, tmp_path / "snapshots")
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", run_id, replies=2)
        assert (
            "test/capital.md" in card.text
            and "AI recommends" in card.text
            and "UNSURE" in card.text
        )
        assert "-answer: Paris" in card.text and "+answer: Lyon" in card.text
        assert (
            card.labels[:2] == ["✓ Accept", "✗ Reject"]
            and "AI review" in card.labels
            and "View full" in card.labels
        )
        await driver.tap(ALICE, card, "✓ Accept")
        await driver.until(lambda: driver.records("rating"), what="the decision in the log")
        [rating] = driver.records("rating")
        assert (rating["run_id"], rating["dimension"], rating["judgment"]) == (
            run_id,
            "change",
            "accept",
        )
    assert apply_accepted(store, run_id).written == ["test/capital.md"]
    assert (
        tmp_path / "snapshots" / "books" / "test" / "capital.md"
    ).read_text() == "answer: Lyon\nscore: 0.85\n"


async def test_a_change_runs_end_says_what_was_decided_and_prints_the_apply_command(
    driver, store, tmp_path
):
    """The end of a triage run said "1 rated … human − AI …" and nothing of writing the
    snapshots."""
    run_id = triage_run(store, tmp_path / "snapshots")
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", run_id, replies=2)
        await driver.tap(ALICE, card, "✓ Accept")
        await driver.until(
            lambda: "All done" in driver.messages(ALICE)[-1].text, what="the end of the run"
        )
        done = driver.messages(ALICE)[-1].text
    assert "accepted 1 · rejected 0 · skipped 0 · left 0" in done and "human − AI" not in done
    assert f"triage --apply {run_id}" in done, done


async def test_ai_review_asks_the_llm_about_a_locally_triaged_change_once(
    driver, store, tmp_path, fake
):
    """The triage was local (no model); the AI review button asks [llm] now, and a second tap is
    answered from the cache."""
    from tests.fakes.anthropic_api import tool

    fake.queue(
        tool(
            category=2,
            confidence=0.9,
            summary="the capital changed",
            rationale="Paris is the capital of France.",
            issues=["line 1: answer: Lyon"],
            suggestions=[],
            flags_for_human=False,
        )
    )
    run_id = triage_run(store, tmp_path / "snapshots")
    assert fake.requests == []  # the local triage sent nothing
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", run_id, replies=2)
        for _ in range(2):
            before = len(driver.messages(ALICE))
            await driver.tap(ALICE, card, "AI review")
            await driver.until(lambda: len(driver.messages(ALICE)) > before, what="the AI review")
            review = "".join(m.text for m in driver.messages(ALICE)[before:])
            assert "by anthropic/" in review and "Category: RECOMMEND FAIL" in review, review
            assert "line 1: answer: Lyon" in review
    assert len(fake.requests) == 1 and driver.records("rating") == []


# ----------------------------------------------------------------------------------- the full label


def scenario_run(store: Store, run_id: str = "scenarios") -> None:
    """A run rated on code validity: how sure, then the issues after "parses" or "Doesn't parse"."""
    items = [
        QueryEvaluation(
            run_id=run_id,
            data=ItemData(id=f"s{n}", query=Query(query=f"scenario {n}"), answer="import relay"),
        )
        for n in range(3)
    ]
    store.create_run(RunHeader(run_id=run_id, kind="scenario", dimensions=["code-validity"]), items)


async def test_confidence_follow_ups_and_skip_reasons_are_asked_on_the_card(driver, store):
    scenario_run(store)
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", "scenarios", replies=2)
        await driver.tap(ALICE, card, "Doesn't parse")
        asked = await driver.labelled(card, "Low")
        assert (
            "How sure are you?" in asked.text and "🤖" not in asked.text
        )  # blind until the label is complete
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the next card")
        await driver.tap(ALICE, asked, "Low")
        await driver.tap(ALICE, await driver.labelled(card, "syntax error"), "syntax error")
        await driver.tap(ALICE, await driver.labelled(card, "✓ syntax error"), "Other…")
        await driver.until(
            lambda: len(driver.messages(ALICE)) == 4, what="the prompt for the typed answer"
        )
        [saved] = await driver.say(ALICE, "calls a removed API")
        assert saved.text.startswith("📝 Saved")
        await driver.tap(ALICE, await driver.shows(card, "calls a removed API"), "✓ Done")
        assert (
            "🤖" in (await driver.labelled(card, "hallucination")).text
        )  # then the concern tags, and the AI revealed
        rating = driver.records("rating")[-1]
        assert (rating["judgment"], rating["confidence"], rating["labels"]["code_issues"]) == (
            "broken",
            "low",
            ["syntax error", "calls a removed API"],
        )
        assert driver.records("note") == []  # an answer, not a note
        [reply] = await driver.say(ALICE, "just chatting")  # the answer closed its prompt
        assert "Tap a card" in reply.text and driver.records("note") == []
        second = driver.cards(ALICE)[1]
        await driver.tap(ALICE, second, "Skip")
        await driver.tap(ALICE, await driver.labelled(second, "Broken item"), "Broken item")
        await driver.shows(second, "Skipped")
        await driver.redeliver_last_tap()
        assert [s.get("skip_reason") for s in driver.records("skip")] == [None, "broken item"]


# ------------------------------------------------------------------------- what a card shows (§2)


async def test_a_code_answer_keeps_its_lines_and_its_code_is_a_preformatted_block(driver, store):
    """Issue 26 §2.4: a multi-line answer was folded into one line, its code with it."""
    from tests.auxil.items import CODE, code_run

    run_id = code_run(store)
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", run_id, replies=2)
        assert card.text.startswith('[1/2] "Make this retry on errors: …"'), card.text
        assert "Make this retry on errors:" in card.text.split("\n", 1)[1]  # the query whole
        assert "Add a retry:\nwrap the call in a loop." in card.text, card.text
        assert "Then run it." in card.text and "```python" not in card.text
        # the query's code, then the answer's: indentation, line breaks, the long line as written
        assert driver.preformatted(card) == ["return call()", CODE]
        assert "View full" in card.labels
        await driver.tap(ALICE, card, card.labels[0])  # a rating
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the next card")
        assert driver.preformatted(driver.cards(ALICE)[0]) == ["return call()", CODE]
        assert driver.preformatted(driver.cards(ALICE)[1]) == [CODE]


async def test_a_scenario_card_shows_what_the_labeler_needs_and_stays_blind(driver, store):
    """Issue 26 §2.5: the plugin, the component tested, the query, the expected outcome, the tool
    captures and the response — the blind protocol's "shown" list — and not the judge's view."""
    from tests.auxil.items import PLUGIN, RATIONALE, plugin_scenarios

    run_id = plugin_scenarios(store)
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", run_id, replies=2)
        for shown in (
            "plugin: commit-commands",
            "component: /commit",
            "component type: command",
            "plugin description: Git commit helpers",
            "Can you commit my changes with message 'fix login bug",
            "Command /commit should trigger",
            "- Read: src/auth/login.ts",
            '- Bash: git commit -m "fix login bug"',
            "I'll commit your changes with that message.\n[main 1a2b3c] fix login bug",
        ):
            assert shown in card.text, (shown, card.text)
        assert "maturity" not in card.text  # not a context field unless configured
        assert RATIONALE not in card.text and "PASS" not in card.text and "🤖" not in card.text
        before = len(driver.messages(ALICE))
        await driver.tap(ALICE, card, "View full")
        await driver.until(lambda: len(driver.messages(ALICE)) > before, what="the full item")
        full = "\n".join(m.text for m in driver.messages(ALICE)[before:])
        assert f"plugin description: {PLUGIN['plugin_description']}" in full
        assert RATIONALE not in full


async def test_the_context_a_card_shows_is_configured_per_run_kind(driver, store):
    from tests.auxil.items import plugin_scenarios

    run_id = plugin_scenarios(store)
    extra = '[review.context]\nscenario = ["maturity", "component"]\nanswer = []\n'
    async with driver.bot(store, extra):
        _, card = await driver.command(ALICE, "review", run_id, replies=2)
        assert "maturity: polished  ·  component: /commit" in card.text, card.text
        assert "plugin:" not in card.text and "component type" not in card.text


def trigger_run(store: Store, run_id: str = "triggers") -> None:
    """A run rated on trigger accuracy (how sure is asked after either label)."""
    items = [
        QueryEvaluation(
            run_id=run_id,
            data=ItemData(id=f"t{n}", query=Query(query=f"scenario {n}"), answer="ran search"),
        )
        for n in range(3)
    ]
    store.create_run(
        RunHeader(run_id=run_id, kind="scenario", dimensions=["trigger-accuracy"]), items
    )


async def test_the_guide_gives_a_labelling_dimensions_guidelines(driver, store):
    scenario_run(store)
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", "scenarios", replies=2)
        before = len(driver.messages(ALICE))
        await driver.tap(ALICE, card, "Guide")
        await driver.until(lambda: len(driver.messages(ALICE)) > before, what="the guide")
        guide = "".join(m.text for m in driver.messages(ALICE)[before:])
        assert "Parses and runs — PARSES and RUNS" in guide and "Does not PARSE" in guide
        assert "Skip — The response holds no code" in guide and "how sure are you" in guide
        assert driver.records("rating") == []


async def test_a_trigger_label_asks_how_sure_in_one_tap_that_may_be_skipped(driver, store):
    trigger_run(store)
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", "triggers", replies=2)
        await driver.tap(ALICE, card, "Yes, correct")
        asked = await driver.labelled(card, "High")
        assert "How sure are you?" in asked.text and "🤖" not in asked.text
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the next card")
        await driver.tap(ALICE, asked, "High")
        await driver.until(
            lambda: driver.records("rating")[-1].get("confidence") == "high", what="high"
        )
        second = driver.cards(ALICE)[1]
        await driver.tap(ALICE, second, "Yes, correct")
        await driver.tap(ALICE, await driver.labelled(second, "High"), "Skip")  # passed
        await driver.until(lambda: len(driver.cards(ALICE)) == 3, what="the third card")
        assert [(r["item_id"], r.get("confidence")) for r in driver.records("rating")] == [
            ("t0", None),
            ("t0", "high"),
            ("t1", None),
        ]


async def test_a_skip_is_taken_back_with_one_tap_and_a_rating_replaces_it(driver, demo_store):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "Skip")
        asked = await driver.labelled(card, "Undo skip")  # beside the skip's reasons
        answer = await driver.tap(ALICE, asked, "Undo skip")
        assert not answer.alert
        back = await driver.labelled(card, "good")  # the scale again, on the same card
        assert "Undo skip" not in back.labels
        await driver.tap(ALICE, back, "good")
        await driver.until(lambda: driver.records("rating"), what="the rating")
        [status] = await driver.command(ALICE, "status")
        assert f"{SEARCH_RUN} · overall: 1 rated, 0 skipped" in status.text
        assert [r["item_id"] for r in driver.records("skip")] == [
            driver.records("rating")[0]["item_id"]
        ]
