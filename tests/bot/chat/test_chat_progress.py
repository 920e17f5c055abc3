"""Progress that means one thing, in the chats (issue 26 §11), once for every chat platform:
``runs``, the session's first line and every card say the run's ``rated R/N · complete C/N
(k=K)``, not "(reviewed)" after one rating; a card's number is its item's place in the run, the
same after a restart and for the next reviewer. The App Home (Slack only) says it too. The
terminal and the listing: tests/bot/test_progress.py."""

from __future__ import annotations

import re

import pytest

from bot.demo import RAG_RUN, SEARCH_RUN
from tests.chat_drivers import ALICE, BOB, Message, drivers
from tests.chat_drivers.slack import IDS, SlackDriver, flatten

K2 = "[review]\nk = 2"


@pytest.fixture(params=["telegram", "slack", "slack-http"])
def driver(request, tmp_path):
    with drivers()[request.param](tmp_path) as platform:
        yield platform


def title(card: Message) -> str:
    """A card's ``[n/total] "query"``."""
    found = re.match(r"\[\d+/\d+\] \"[^\"]*\"", card.text)
    assert found, f"no [n/total] at the start of {card.text[:80]!r}"
    return found[0]


async def test_runs_says_rated_and_complete_not_reviewed(driver, demo_store):
    async with driver.bot(demo_store, K2):
        _, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, card, "good")
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the next card")
        [runs] = await driver.command(ALICE, "runs")
        search = next(line for line in runs.text.splitlines() if SEARCH_RUN in line)
        assert "queries  overall=0.62  rated 1/18 · complete 0/18 (k=2)" in search
        rag = next(line for line in runs.text.splitlines() if RAG_RUN in line)
        assert "queries  overall=0.69  rated 0/12 · complete 0/12 (k=2)" in rag
        assert "reviewed" not in runs.text and "HIL review" not in runs.text


async def test_the_first_line_and_every_card_say_the_runs_progress(driver, demo_store):
    async with driver.bot(demo_store):
        start, card = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        assert "18 left of 18 for you · run: rated 0/18 · complete 0/18 (k=1)" in start.text
        assert "rated 0/18 · complete 0/18 (k=1)" in card.text
        await driver.tap(ALICE, card, "good")
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the next card")
        assert "rated 1/18 · complete 1/18 (k=1)" in driver.cards(ALICE)[1].text


async def test_card_numbers_stay_across_a_restart_and_for_the_next_reviewer(
    driver, demo_store, monkeypatch
):
    monkeypatch.setenv("HILBOT_INDEX_MIN_BYTES", "0")  # the restarted bot starts from the index
    """A card's number counted the reviewer's own cards of their shrinking share of the run."""
    async with driver.bot(demo_store, K2):
        _, first = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        assert title(first).startswith("[1/18] ")
        await driver.tap(ALICE, first, "good")
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the next card")
        second = driver.cards(ALICE)[1]
        assert title(second).startswith("[2/18] ")
        await driver.restart()  # a new process: everything from the log
        [again] = await driver.command(ALICE, "next")
        assert title(again) == title(second)
        _, bobs = await driver.command(BOB, "review", SEARCH_RUN, replies=2)
        assert title(bobs) == title(first)  # the same item, the same number (k = 2)
        assert "rated 1/18 · complete 0/18 (k=2)" in bobs.text


async def test_a_card_is_numbered_by_its_items_place_not_by_the_reviewers_count(driver, demo_store):
    """Bob's first card was [1/16] when Alice had rated one item and held another (k = 1); the
    same item had been [3/18] on Alice's screen."""
    async with driver.bot(demo_store):
        _, first = await driver.command(ALICE, "review", SEARCH_RUN, replies=2)
        await driver.tap(ALICE, first, "good")
        await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the next card")
        _, bobs = await driver.command(BOB, "review", SEARCH_RUN, replies=2)
        assert title(bobs).startswith("[3/18] ")  # the first two are Alice's
        await driver.tap(BOB, bobs, "good")
        await driver.until(lambda: len(driver.cards(BOB)) == 2, what="Bob's next card")
        assert title(driver.cards(BOB)[1]).startswith("[4/18] ")


@pytest.fixture
def slack(tmp_path):
    with SlackDriver(tmp_path) as platform:
        yield platform


async def test_app_home_says_each_runs_progress(slack, demo_store):
    async with slack.bot(demo_store, K2):
        _, card = await slack.command(ALICE, "review", SEARCH_RUN, replies=2)
        await slack.tap(ALICE, card, "good")
        await slack.fake.open_home(IDS[BOB]).wait_acked()
        await slack.until(lambda: slack.fake.home(IDS[BOB]), what="the Home tab")
        text = flatten(slack.fake.home(IDS[BOB])["blocks"])
        assert f"{SEARCH_RUN} · overall: 0 rated, 0 skipped, 18 left of 18 for you" in text
        assert "run: rated 1/18 · complete 0/18 (k=2)" in text
        assert "run: rated 0/12 · complete 0/12 (k=2)" in text
