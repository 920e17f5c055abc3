"""The Telegram bot, end to end: the real python-telegram-bot Application, long-polling the
local fake Bot API server, with simulated reviewers tapping buttons and typing notes.

Every assertion is about what a reviewer sees (the fake's messages, edits and callback answers)
or what is on disk (ratings.jsonl).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from bot.channels.telegram import ReviewBot
from bot.demo import RAG_RUN, SEARCH_RUN
from evaluation import ItemData, Query, QueryEvaluation, RunHeader, Store, load_config
from tests.fakes.telegram_api import FakeTelegram

ALICE, BOB, ADMIN, EVE = 101, 102, 900, 666
GROUP = -1001
FAST = "[telegram.limits]\noverall_per_s = 1000\nchat_per_s = 100\ngroup_per_min = 6000\n"


@pytest.fixture
def tg():
    """The fake Bot API with four users: two reviewers, an admin and a stranger."""
    with FakeTelegram(limits=None) as fake:
        for uid, name in ((ALICE, "alice"), (BOB, "bob"), (ADMIN, "admin"), (EVE, "eve")):
            fake.user(uid, first_name=name.title(), username=name)
        fake.group(GROUP, "Reviewers")
        yield fake


def configure(tmp_path: Path, extra: str = "", limits: str = FAST):
    """A hilbot.toml allow-listing Alice, Bob and the admin, plus ``extra``."""
    path = tmp_path / "hilbot.toml"
    path.write_text(f"[telegram]\nreviewers = [{ALICE}, {BOB}]\nadmins = [{ADMIN}]\nrefresh_s = 0.2\n{extra}\n{limits}")
    return load_config(path)


class Bot:
    """A running ReviewBot and helpers to act as its users."""

    def __init__(self, fake: FakeTelegram, store: Store, config):
        self.fake, self.store, self.config = fake, store, config
        self.bot = ReviewBot(store, config)
        self.app = self.bot.application(fake.token, fake.api_url)

    async def __aenter__(self) -> "Bot":
        await self.app.initialize()
        await self.app.start()
        await self.bot.setup(self.app)
        await self.app.updater.start_polling(poll_interval=0, timeout=1)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.app.updater.stop()
        await self.app.stop()
        await self.app.shutdown()

    async def say(self, user: int, text: str, chat: int | None = None, replies: int = 1, reply_to: int | None = None) -> list[dict]:
        """Send a message and wait for ``replies`` new bot messages in the chat."""
        chat = chat or user
        before = len(self.fake.messages(chat))
        self.fake.send_text(user, text, chat_id=chat, reply_to=reply_to)
        await self.fake.until(lambda: len(self.fake.messages(chat)) >= before + replies, what=f"reply to {text!r}")
        return self.fake.messages(chat)[before:]

    async def tap(self, user: int, message: dict, label: str, chat: int | None = None) -> dict:
        """Tap a button by label; wait for the answer; return it."""
        query = self.fake.tap_button(user, chat or message["chat"]["id"], message["message_id"], label)
        return await self.answered(query)

    async def tap_data(self, user: int, message: dict, data: str) -> dict:
        """Tap with raw callback data."""
        return await self.answered(self.fake.tap(user, message["chat"]["id"], message["message_id"], data))

    async def answered(self, query: str) -> dict:
        await self.fake.until(lambda: query in self.fake.answers, what="the callback answer")
        return self.fake.answers[query]

    async def shows(self, message: dict, text: str) -> dict:
        """Wait until a message (edited) contains ``text``; return it."""
        await self.fake.until(lambda: text in self.now(message)["text"], what=f"{text!r} in the message")
        return self.now(message)

    async def labelled(self, message: dict, label: str) -> dict:
        """Wait until a message's keyboard has a button labelled ``label``; return it."""
        await self.fake.until(lambda: label in labels(self.now(message)), what=f"a {label!r} button")
        return self.now(message)

    def now(self, message: dict) -> dict:
        """The message as it is now."""
        return self.fake.message(message["chat"]["id"], message["message_id"])

    def records(self, kind: str | None = None) -> list[dict]:
        path = self.store.ratings.path
        rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        return [r for r in rows if kind is None or r["type"] == kind]


def labels(message: dict) -> list[str]:
    """Every button label of a message's inline keyboard."""
    rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
    return [button["text"] for row in rows for button in row]


def datas(message: dict) -> list[str]:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
    return [button["callback_data"] for row in rows for button in row]


@pytest.fixture
def bot(tg, demo_store, tmp_path):
    """The bot over the demo runs, with flood limits high enough not to slow the tests."""
    return Bot(tg, demo_store, configure(tmp_path))


# ---------------------------------------------------------------------------------------------- commands


async def test_start_registers_commands_and_welcomes_reviewers(bot):
    async with bot:
        await bot.fake.until(lambda: bot.fake.commands, what="setMyCommands")
        names = [c["command"] for c in bot.fake.commands]
        assert names == ["start", "help", "runs", "review", "next", "status", "push", "digest"]
        [reply] = await bot.say(ALICE, "/start")
        assert "Welcome" in reply["text"] and "/review" in reply["text"]
        [runs] = await bot.say(ALICE, "/runs")
        assert SEARCH_RUN in runs["text"] and RAG_RUN in runs["text"] and "queries" in runs["text"]


async def test_a_stranger_is_refused_and_nothing_is_written(bot):
    async with bot:
        [reply] = await bot.say(EVE, "/start")
        assert "not on this bot's reviewer list" in reply["text"] and str(EVE) in reply["text"]
        [reply] = await bot.say(EVE, f"/review {SEARCH_RUN}")
        assert "not on" in reply["text"]
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        answer = await bot.tap(EVE, card, "good")  # a stranger tapping Alice's card (e.g. a forwarded message)
        assert answer["show_alert"] and "not on" in answer["text"]
        assert bot.records("rating") == []


async def test_review_unknown_run_is_one_line_with_the_fix(bot):
    async with bot:
        [reply] = await bot.say(ALICE, "/review no-such-run")
        assert "no run 'no-such-run'" in reply["text"] and "/runs" in reply["text"]
        [reply] = await bot.say(ALICE, f"/review {SEARCH_RUN} nonsense")
        assert "unknown dimension 'nonsense'" in reply["text"]


# ---------------------------------------------------------------------------------------------- the flow


async def test_a_tap_is_on_disk_before_the_callback_is_answered(bot):
    seen: list[int] = []

    def check(call) -> None:  # runs in the server the moment answerCallbackQuery arrives
        if call.method.lower() == "answercallbackquery":
            seen.append(len(bot.records("rating")))

    bot.fake.on_call = check
    async with bot:
        progress, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        assert "Reviewing" in progress["text"] and "0 rated" in progress["text"]
        assert "ferret middleware error handling" in card["text"] or card["text"].startswith("[1/")
        await bot.tap(ALICE, card, "good")
        assert seen == [1]
        [rating] = bot.records("rating")
        assert rating["judgment"] == "good" and rating["reviewer"]["id"] == str(ALICE)
        assert rating["channel"] == "telegram" and rating["idempotency_key"].startswith("telegram:")


async def test_the_card_is_blind_until_rated_then_shows_the_ai_verdict(bot):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        await bot.fake.until(lambda: bot.bot.engine.ledger.cards, what="the delivery in the log")
        [dealt] = bot.bot.engine.ledger.cards.values()
        item = bot.bot.engine.run(SEARCH_RUN).item(dealt.item_id)
        assert item.evaluation.verdict not in card["text"] and "🤖" not in card["text"]
        assert item.evaluation.rationale[:40] not in card["text"]
        assert labels(card)[:4] == ["good", "okay", "poor", "terrible"]
        assert "Note only" in labels(card) and "Skip" in labels(card) and "View full" in labels(card)
        assert all(len(d.encode()) <= 64 for d in datas(card))
        await bot.tap(ALICE, card, "good")
        edited = await bot.shows(card, "✓ Recorded: good")
        assert "✓ Recorded: good" in edited["text"] and "🤖" in edited["text"] and item.evaluation.verdict in edited["text"]
        assert labels(edited) == ["good", "okay", "poor", "terrible"]  # change the rating; no tags after good


async def test_okay_offers_concern_tags_that_toggle_and_the_next_card_comes(bot):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        await bot.tap(ALICE, card, "okay")
        follow_up = await bot.labelled(card, "bad_ranking")
        assert "bad_ranking" in labels(follow_up) and "Add note" in labels(follow_up)
        await bot.fake.until(lambda: len(bot.fake.messages(ALICE)) == 3, what="the next card")
        answer = await bot.tap(ALICE, follow_up, "bad_ranking")
        assert answer["text"] == "bad_ranking: on"
        await bot.labelled(card, "✓ bad_ranking")
        assert "concerns: bad_ranking" in bot.now(card)["text"]
        await bot.tap(ALICE, bot.now(card), "weak_snippet")
        await bot.tap(ALICE, await bot.labelled(card, "✓ weak_snippet"), "✓ bad_ranking")
        await bot.labelled(card, "bad_ranking")
        ratings = bot.records("rating")
        assert [r["concerns"] for r in ratings] == [[], ["bad_ranking"], ["bad_ranking", "weak_snippet"], ["weak_snippet"]]
        assert len(bot.fake.messages(ALICE)) == 3  # toggles deal nothing new
        await bot.tap(ALICE, bot.now(card), "✓ Done")
        await bot.fake.until(lambda: labels(bot.now(card)) == ["good", "okay", "poor", "terrible"], what="the final card")


async def test_a_rating_can_be_changed_and_the_latest_counts(bot):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        await bot.tap(ALICE, card, "good")
        await bot.tap(ALICE, await bot.shows(card, "✓ Recorded: good"), "poor")
        assert [r["judgment"] for r in bot.records("rating")] == ["good", "poor"]
        await bot.shows(card, "✓ Recorded: poor")
        assert len(bot.fake.messages(ALICE)) == 3  # one next card, not two


async def test_add_note_asks_for_a_reply_and_stores_it(bot):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        await bot.tap(ALICE, card, "okay")
        await bot.fake.until(lambda: len(bot.fake.messages(ALICE)) == 3, what="the next card")
        await bot.tap(ALICE, await bot.labelled(card, "Add note"), "Add note")
        await bot.fake.until(lambda: len(bot.fake.messages(ALICE)) == 4, what="the note prompt")
        prompt = bot.fake.messages(ALICE)[-1]
        sent = [c for c in bot.fake.calls_to("sendMessage") if "reply to this message" in c.params.get("text", "")]
        assert sent[-1].params["reply_markup"]["force_reply"] is True and "reply to this message" in prompt["text"]
        [saved] = await bot.say(ALICE, "Ranks the <script> page & misses errors.md", reply_to=prompt["message_id"])
        assert saved["text"] == "📝 Note saved."
        [note] = bot.records("note")
        assert note["text"] == "Ranks the <script> page & misses errors.md" and note["item_id"] == bot.records("rating")[0]["item_id"]
        [reply] = await bot.say(ALICE, "just chatting")
        assert "Tap a card" in reply["text"] and len(bot.records("note")) == 1


async def test_note_only_before_rating_skips_with_the_note(bot):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        await bot.tap(ALICE, card, "Note only")
        await bot.fake.until(lambda: len(bot.fake.messages(ALICE)) == 3, what="the note prompt")
        await bot.say(ALICE, "Can't judge without the source", replies=2)  # no reply_to: the open prompt takes it
        [skip] = bot.records("skip")
        assert skip["skip_reason"] == "note only" and bot.records("note")[0]["text"] == "Can't judge without the source"
        await bot.shows(card, "Skipped")


async def test_skip_records_and_deals_the_next_card(bot):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        await bot.tap(ALICE, card, "Skip")
        await bot.fake.until(lambda: len(bot.fake.messages(ALICE)) == 3, what="the next card")
        assert len(bot.records("skip")) == 1
        await bot.shows(card, "Skipped")
        nxt = bot.fake.messages(ALICE)[-1]
        assert nxt["text"].startswith("[2/18]") and labels(nxt)[0] == "good"


async def test_taps_answered_after_sed_i_on_the_log_are_in_the_file(bot):
    """The reported bug: after `sed -i` on ratings.jsonl, taps were answered "Recorded" and written to the deleted file."""
    import subprocess

    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        await bot.tap(ALICE, card, "good")
        await bot.fake.until(lambda: len(bot.fake.messages(ALICE)) == 3, what="the next card")
        path = bot.store.ratings.path
        subprocess.run(["sed", "-i", "s/x/x/", str(path)], check=True)  # an edit that saves by rename
        for n in range(3):
            card = bot.fake.messages(ALICE)[-1]
            await bot.tap(ALICE, card, "poor")
            await bot.fake.until(lambda: len(bot.fake.messages(ALICE)) == 4 + n, what="the next card")
        assert [r["judgment"] for r in bot.records("rating")] == ["good", "poor", "poor", "poor"]


async def test_view_full_sends_everything_the_card_cut(tg, store, tmp_path):
    long_answer = "<b>not a tag</b> & " + "word " * 3000
    header = RunHeader(run_id="long", kind="answer", dimensions=["answer"])
    item = ItemData(id="q1", query=Query(query="Explain <everything> & more"), answer=long_answer)
    store.create_run(header, [QueryEvaluation(run_id="long", data=item)])
    bot = Bot(tg, store, configure(tmp_path))
    async with bot:
        _, card = await bot.say(ALICE, "/review long", replies=2)
        assert len(card["text"]) <= 4096 and "View full" in labels(card)
        assert "Explain <everything> & more" in card["text"]  # escaped on the way, shown as typed
        await bot.tap(ALICE, card, "View full")
        def full() -> str:
            return "".join(m["text"] for m in bot.fake.messages(ALICE)[2:])

        await bot.fake.until(lambda: full().count("word") >= 3000, what="the full view")
        assert full().count("word") == 3000 and "<b>not a tag</b> & " in full()
        assert all(len(m["text"]) <= 4096 for m in bot.fake.messages(ALICE))


async def test_window_deals_at_most_w_unanswered_cards(tg, demo_store, tmp_path):
    bot = Bot(tg, demo_store, configure(tmp_path, "[review]\nwindow = 3"))
    async with bot:
        await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=4)
        await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)  # resuming deals nothing more
        assert "3 open card(s) above" in bot.fake.messages(ALICE)[-1]["text"]
        cards = [m for m in bot.fake.messages(ALICE) if labels(m)]
        assert len(cards) == 3 and len({m["text"] for m in cards}) == 3
        await bot.tap(ALICE, cards[1], "good")
        await bot.fake.until(lambda: len([m for m in bot.fake.messages(ALICE) if labels(m)]) == 4, what="one more card")


# ---------------------------------------------------------------------------------------------- safety


async def test_forged_and_stale_button_data_is_refused_and_logged(bot, caplog):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        good = datas(card)[0]
        op, key, index, dim = good.split("|")
        forged = ["garbage", f"{op}|{key}|999|{dim}", f"r9|{key}|{index}|{dim}", f"{op}|deadbeef|{index}|{dim}",
                  f"{op}|{key}|{int(index) + 1}|{dim}"]  # the last: a real item, never dealt to Alice
        with caplog.at_level(logging.WARNING, logger="hilbot.telegram"):
            for data in forged:
                answer = await bot.tap_data(ALICE, card, data)
                assert answer["show_alert"] and "not valid" in answer["text"]
        assert bot.records("rating") == [] and bot.records("skip") == []
        assert sum("refused tap" in r.message for r in caplog.records) == len(forged)
        _, bob_card = await bot.say(BOB, f"/review {SEARCH_RUN}", replies=2)
        answer = await bot.tap_data(BOB, bob_card, good)  # Alice's item, Bob's message
        assert answer["show_alert"] and bot.records("rating") == []


async def test_a_redelivered_update_and_a_double_tap_count_once(bot):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        query = bot.fake.tap_button(ALICE, ALICE, card["message_id"], "good")
        await bot.answered(query)
        update_id = max(u for u in bot.fake._updates)
        bot.fake.redeliver(update_id)
        await bot.tap(ALICE, bot.now(card), "good")  # the double tap
        await bot.fake.until(lambda: len(bot.fake.calls_to("getUpdates")) > 6, what="more polling")
        assert len(bot.records("rating")) == 1
        assert len([m for m in bot.fake.messages(ALICE) if labels(m)]) == 2  # one next card


async def test_a_restart_finds_open_sessions_and_old_buttons_still_work(tg, demo_store, tmp_path):
    config = configure(tmp_path)
    first = Bot(tg, demo_store, config)
    async with first:
        _, card = await first.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        await first.tap(ALICE, card, "okay")
        await tg.until(lambda: len(tg.messages(ALICE)) == 3, what="the second card")
        await first.tap(ALICE, await first.labelled(card, "Add note"), "Add note")
        await tg.until(lambda: len(tg.messages(ALICE)) == 4, what="the note prompt")
    second = Bot(tg, Store(demo_store.root), config)  # a new process: everything from the log
    async with second:
        await second.tap(ALICE, second.now(card), "bad_ranking")  # a button on a message from before
        assert second.records("rating")[-1]["concerns"] == ["bad_ranking"]
        await second.say(ALICE, "Second page is stale", replies=1)  # the open prompt survived too
        assert second.records("note")[0]["text"] == "Second page is stale"
        [again] = await second.say(ALICE, "/next")
        open_card = tg.messages(ALICE)[2]
        assert again["text"] == open_card["text"] and labels(again)[0] == "good"
        await second.tap(ALICE, open_card, "good")  # the open card from before the restart
        assert [r["judgment"] for r in second.records("rating")][-1] == "good"
        await tg.until(lambda: len([m for m in tg.messages(ALICE) if labels(m)]) == 4, what="the re-shown card + one new")
        # 2 cards + the prompt before; the re-shown card + the new one after
        await tg.until(lambda: len(second.records("delivery")) == 5, what="every delivery logged")


async def test_a_429_and_a_timeout_on_send_lose_no_card_and_send_none_twice(tg, demo_store, tmp_path):
    bot = Bot(tg, demo_store, configure(tmp_path, "read_timeout_s = 0.5"))
    async with bot:
        tg.fail_next("sendMessage", status=429, retry_after=1, count=1)
        await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=1)  # the progress line, retried after 1 s
        await tg.until(lambda: len(tg.messages(ALICE)) == 2, timeout=6, what="the card")
        tg.stall_next("sendMessage", 1.5, process=False)
        await bot.tap(ALICE, tg.messages(ALICE)[1], "good")
        await tg.until(lambda: len(tg.messages(ALICE)) == 3, timeout=8, what="the next card after a timeout")
        cards = [m for m in tg.messages(ALICE) if labels(m)]
        assert len(cards) == 2 and cards[0]["text"] != cards[1]["text"]
        await tg.until(lambda: len(bot.records("delivery")) == 2, what="both deliveries logged")


async def test_in_a_group_the_tapper_counts_and_the_card_stays_blind(bot):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", chat=GROUP, replies=2)
        answer = await bot.tap(BOB, card, "poor", chat=GROUP)
        assert answer["show_alert"] and "Recorded: poor" in answer["text"] and "🤖" in answer["text"]
        [rating] = bot.records("rating")
        assert rating["reviewer"]["id"] == str(BOB)
        assert "🤖" not in bot.now(card)["text"] and bot.now(card)["edits"] == 0
        await bot.fake.until(lambda: len(bot.fake.messages(GROUP)) == 3, what="the group's next card")
        answer = await bot.tap(EVE, bot.fake.messages(GROUP)[-1], "good", chat=GROUP)
        assert "not on" in answer["text"] and len(bot.records("rating")) == 1


# ---------------------------------------------------------------------------------------------- admins


async def test_push_deals_first_cards_to_every_reviewer_admins_only(bot):
    async with bot:
        [reply] = await bot.say(ALICE, f"/push {SEARCH_RUN}")
        assert "Only admins" in reply["text"]
        await bot.say(ADMIN, f"/push {SEARCH_RUN}", replies=2)
        assert "Pushed demo-docs-search: 2 cards to 2 reviewers" in bot.fake.messages(ADMIN)[-1]["text"]
        alice, bob = [m for m in bot.fake.messages(ALICE) if labels(m)], bot.fake.messages(BOB)
        assert len(alice) == len(bob) == 1 and alice[0]["text"] != bob[0]["text"]  # k = 1: different items


async def test_push_reports_reviewers_it_cannot_reach(tg, demo_store, tmp_path):
    tg.user(103, first_name="Carol", blocked=True)
    bot = Bot(tg, demo_store, configure(tmp_path).model_copy(deep=True))
    bot.config.telegram.reviewers.append(103)
    async with bot:
        await bot.say(ADMIN, f"/push {SEARCH_RUN}", replies=2)
        assert "Could not reach 103" in tg.messages(ADMIN)[-1]["text"]
        assert len(bot.records("delivery")) == 2


async def test_digest_posts_text_and_a_chart(bot):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        await bot.tap(ALICE, card, "poor")
        await bot.tap(ALICE, await bot.labelled(card, "bad_ranking"), "bad_ranking")
        [digest] = await bot.say(ADMIN, "/digest")
        assert "hilbot digest" in digest["text"] and SEARCH_RUN in digest["text"] and "bad_ranking 1" in digest["text"]
        await bot.fake.until(lambda: bot.fake.photos, what="the chart")
        chat, png, caption = bot.fake.photos[0]
        assert chat == ADMIN and png.startswith(b"\x89PNG")


async def test_scheduled_digest_is_registered_and_posts_to_its_chats(tg, demo_store, tmp_path):
    bot = Bot(tg, demo_store, configure(tmp_path, f'[telegram.digest]\nchats = [{GROUP}]\ntime = "09:30"\ntimezone = "Europe/Berlin"'))
    async with bot:
        [job] = [j for j in bot.app.job_queue.jobs() if j.callback == bot.bot._scheduled_digest]
        fire = job.next_t.astimezone(__import__("zoneinfo").ZoneInfo("Europe/Berlin"))
        assert (fire.hour, fire.minute) == (9, 30)
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        await bot.tap(ALICE, card, "good")
        await job.run(bot.app)
        await tg.until(lambda: tg.photos, what="the scheduled chart")
        assert "hilbot digest" in tg.messages(GROUP)[0]["text"]


async def test_status_shows_progress_per_run(bot):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        await bot.tap(ALICE, card, "good")
        await bot.fake.until(lambda: len(bot.fake.messages(ALICE)) == 3, what="the next card")
        [status] = await bot.say(ALICE, "/status")
        assert f"{SEARCH_RUN} · overall: 1 rated, 0 skipped, 17 left of 18" in status["text"]


async def test_items_of_a_run_still_being_evaluated_are_pushed_as_they_come(tg, store, tmp_path):
    header = RunHeader(run_id="live", kind="answer", dimensions=["answer"])
    store.create_run(header, [])
    bot = Bot(tg, store, configure(tmp_path))
    async with bot:
        await bot.say(ALICE, "/review live", replies=2)
        assert "Nothing left" in tg.messages(ALICE)[-1]["text"]
        item = ItemData(id="q1", query=Query(query="fresh item"), answer="42")
        store.run_log("live").append(QueryEvaluation(run_id="live", data=item))
        await tg.until(lambda: any("fresh item" in m["text"] for m in tg.messages(ALICE)), what="the new item's card")


async def test_errors_reach_the_one_error_handler_traceback_first(bot, caplog):
    async with bot:
        _, card = await bot.say(ALICE, f"/review {SEARCH_RUN}", replies=2)
        bot.fake.fail_next("editMessageText", status=400, description="Bad Request: something unexpected")
        with caplog.at_level(logging.ERROR, logger="hilbot.telegram"):
            await bot.tap(ALICE, card, "good")
            await bot.fake.until(lambda: any(r.levelno == logging.ERROR for r in caplog.records), what="the error log")
        [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert record.getMessage().startswith("Traceback (most recent call last)")
        assert "Something unexpected" in record.getMessage() and "while handling update" in record.getMessage()
        assert len(bot.records("rating")) == 1  # the tap was stored before the edit failed
