"""What only Telegram has: the real python-telegram-bot bot long-polling the local fake Bot API
server.

The chat behaviour every platform shares is in tests/test_chat.py; here are the command list,
HTML and the 4,096-character limit, flood control faults (429s, timeouts), the one error handler
and the long-poll settings. The bot is built, started and stopped only by the driver
(tests/chat_drivers/telegram.py).

Every assertion is about what a reviewer sees (the fake's messages, edits and callback answers),
what the fake received, or what is on disk (ratings.jsonl).
"""

from __future__ import annotations

import logging

import pytest

from evaluation import ItemData, Query, QueryEvaluation, RunHeader
from tests.chat_drivers import ALICE
from tests.chat_drivers.telegram import IDS, TelegramDriver

SEARCH_RUN = "demo-docs-search"


@pytest.fixture
def driver(tmp_path):
    """The fake Bot API with the suite's users, ready to start the bot."""
    with TelegramDriver(tmp_path) as platform:
        yield platform


async def test_start_registers_the_command_list(driver, demo_store):
    async with driver.bot(demo_store):
        await driver.until(lambda: driver.fake.commands, what="setMyCommands")
        names = [c["command"] for c in driver.fake.commands]
        assert names == [
            "start",
            "help",
            "runs",
            "review",
            "next",
            "status",
            "push",
            "digest",
            "adjudicate",
        ]


async def test_view_full_sends_everything_the_card_cut(driver, store):
    long_answer = "<b>not a tag</b> & " + "word " * 3000
    header = RunHeader(run_id="long", kind="answer", dimensions=["answer"])
    item = ItemData(id="q1", query=Query(query="Explain <everything> & more"), answer=long_answer)
    store.create_run(header, [QueryEvaluation(run_id="long", data=item)])
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", "long", replies=2)
        assert len(card.text) <= 4096 and "View full" in card.labels
        assert "Explain <everything> & more" in card.text  # escaped on the way, shown as typed
        await driver.tap(ALICE, card, "View full")

        def full() -> str:
            return "".join(m.text for m in driver.messages(ALICE)[2:])

        await driver.until(lambda: full().count("word") >= 3000, what="the full view")
        assert full().count("word") == 3000 and "<b>not a tag</b> & " in full()
        assert all(len(m.text) <= 4096 for m in driver.messages(ALICE))


async def test_a_429_and_a_timeout_on_send_lose_no_card_and_send_none_twice(driver, demo_store):
    tg = driver.fake
    async with driver.bot(demo_store, "read_timeout_s = 0.5"):
        tg.fail_next("sendMessage", status=429, retry_after=1, count=1)
        await driver.command(
            ALICE, "review", SEARCH_RUN, replies=1
        )  # the progress line, retried after 1 s
        await driver.until(lambda: len(driver.messages(ALICE)) == 2, timeout=6, what="the card")
        tg.stall_next("sendMessage", 1.5, process=False)
        await driver.tap(ALICE, driver.messages(ALICE)[1], "good")
        await driver.until(
            lambda: len(driver.messages(ALICE)) == 3,
            timeout=8,
            what="the next card after a timeout",
        )
        cards = driver.cards(ALICE)
        assert len(cards) == 2 and cards[0].text != cards[1].text
        await driver.until(
            lambda: len([d for d in driver.records("delivery") if d["kind"] == "card"]) == 2,
            what="both deliveries logged",
        )


async def test_errors_reach_the_one_error_handler_traceback_first(driver, demo_store, caplog):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        driver.fake.fail_next(
            "editMessageText", status=400, description="Bad Request: something unexpected"
        )
        with caplog.at_level(logging.ERROR, logger="hilbot.telegram"):
            await driver.tap(ALICE, card, "good")
            await driver.until(
                lambda: any(r.levelno == logging.ERROR for r in caplog.records),
                what="the error log",
            )
        [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert record.getMessage().startswith("Traceback (most recent call last)")
        assert (
            "Something unexpected" in record.getMessage()
            and "while handling update" in record.getMessage()
        )
        assert len(driver.records("rating")) == 1  # the tap was stored before the edit failed


# --------------------------------------------------------------------------------- flaws (issue 11)


async def test_poll_interval_s_spaces_the_long_polls(driver, demo_store):
    """§3.8: there was no poll-interval setting next to the long-poll timeout."""
    async with driver.bot(demo_store, "poll_interval_s = 0.3\npoll_timeout_s = 0"):
        await driver.until(
            lambda: len(driver.fake.calls_to("getUpdates")) >= 5, what="five long polls"
        )
        arrivals = [call.at for call in driver.fake.calls_to("getUpdates")][:5]
        gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
        assert all(0.25 <= gap < 1.0 for gap in gaps[1:]), (
            gaps
        )  # timeout 0: each poll answers at once, then the wait
        [runs] = await driver.command(ALICE, "runs")  # and the bot still answers
        assert SEARCH_RUN in runs.text


async def test_a_change_card_shows_its_diff_monospaced_and_ai_review_answers_below(
    driver, store, tmp_path
):
    from tests.bot.chat.test_chat import triage_run

    run_id = triage_run(store, tmp_path / "snapshots")
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", run_id, replies=2)
        raw = driver.fake.message(IDS[ALICE], int(card.id))
        code = [
            raw["text"][e["offset"] : e["offset"] + e["length"]]
            for e in raw.get("entities", [])
            if e["type"] == "code"
        ]
        assert "+answer: Lyon" in code and "-answer: Paris" in code and " score: 0.85" in code
        before = len(driver.messages(ALICE))
        await driver.tap(ALICE, card, "AI review")
        await driver.until(lambda: len(driver.messages(ALICE)) > before, what="the AI review")
        review = "".join(m.text for m in driver.messages(ALICE)[before:])
        assert (
            "AI review (confidence: 0.00, by local)" in review
            and "Category: UNSURE" in review
            and "local rules only" in review
        )
        assert driver.records("rating") == []  # asking for a review decides nothing


async def test_the_guide_button_shows_what_each_option_means(driver, demo_store):
    async with driver.bot(demo_store):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        assert "Guide" in card.labels
        before = len(driver.messages(ALICE))
        await driver.tap(ALICE, card, "Guide")
        await driver.until(lambda: len(driver.messages(ALICE)) > before, what="the guide")
        guide = "".join(m.text for m in driver.messages(ALICE)[before:])
        assert "overall: " in guide and "good — Results nail it - exactly what I'd want" in guide
        assert "terrible" in guide and driver.records("rating") == []


async def test_a_refused_cards_error_never_brings_the_token_into_the_chat(driver, demo_store):
    """Issue 12: Telegram's description of a refused card was relayed as it came (PTB lower-cases
    it), the bot token in it if the server quoted it."""
    from tests.auxil.canary import encodings, leaks, planted

    token = driver.fake.token
    description = "Bad Request: message is too long; " + planted(token).replace("\n", " ")
    async with driver.bot(demo_store):
        driver.fake.fail_next("sendMessage", status=400, description=description, match=_a_card)
        await driver.command(ALICE, "review", SEARCH_RUN)
        await driver.until(lambda: driver.cards(ALICE), what="the next item's card")
        await driver.settle()
    said = [call.params.get("text", "") for call in driver.fake.calls]
    assert any("refused the card" in text for text in said)
    assert len(encodings(token)) > 10 and leaks("\n".join(said), [token]) == []


def _a_card(params: dict) -> bool:
    """Whether a sendMessage call is a card (it has buttons)."""
    return bool((params.get("reply_markup") or {}).get("inline_keyboard"))


async def test_a_card_cut_inside_a_code_block_closes_the_block_and_says_so(driver, store):
    """Issue 26 §2.4: code is a ``<pre>`` block; a card cut to 4,096 units inside one still parses
    (the fake Bot API refuses unbalanced HTML) and shows the code as code up to the cut."""
    code = "\n".join(f"    x{n} = '" + "😀" * 45 + "'" for n in range(30))  # 2 units an emoji
    item = ItemData(
        id="q1",
        query=Query(query="🚀" * 400),
        answer=f"Here it is:\n```python\n{code}\n```",
        tool_captures=[{"tool": "Write", "input": "😀" * 100} for _ in range(5)],
        features={"plugin": "emoji-tools", "plugin_description": "😀" * 300},
    )
    store.create_run(
        RunHeader(run_id="cut", kind="answer", dimensions=["answer"]),
        [QueryEvaluation(run_id="cut", data=item)],
    )
    async with driver.bot(store):
        _, card = await driver.command(ALICE, "review", "cut", replies=2)
        raw = driver.fake.message(IDS[ALICE], int(card.id))
        units = len(raw["text"].encode("utf-16-le")) // 2
        assert units <= 4096 and "more under View full" in card.text
        [pre] = [e for e in raw["entities"] if e["type"] == "pre"]
        assert pre["language"] == "python"
        [shown] = driver.preformatted(card)
        lines = shown.split("\n")
        assert 1 <= len(lines) < 30 and lines == code.split("\n")[: len(lines)]
