"""``/adjudicate`` in every chat (Telegram, Slack, Slack over HTTP): an admin resolves the panel's
disagreements."""

from __future__ import annotations

import pytest

from bot.demo import PANEL_RUN, build_demo
from evaluation import Store
from tests.chat_drivers import ADMIN, ALICE, drivers


@pytest.fixture(params=["telegram", "slack", "slack-http"])
def driver(request, tmp_path):
    with drivers()[request.param](tmp_path) as platform:
        yield platform


@pytest.fixture
def panel(store: Store) -> Store:
    build_demo(store, panel=True)
    return store


async def test_an_admin_records_a_consensus_and_an_exclusion_and_the_next_card_comes(driver, panel):
    async with driver.bot(panel):
        said, card = await driver.command(ADMIN, "adjudicate", PANEL_RUN, replies=2)
        assert "9 disputed items" in said.text
        assert (
            "Ana: good" in card.text
            and "Caro: terrible" in card.text
            and "reload.md is the real answer" in card.text
        )
        assert (
            card.labels[:4] == ["good", "okay", "poor", "terrible"]
            and "Exclude" in card.labels
            and "Leave" in card.labels
        )
        assert all(len(data.encode()) <= driver.data_limit for data in card.datas)
        seen: list[int] = []
        driver.on_answer(lambda: seen.append(len(driver.records("adjudication"))))
        await driver.tap(ADMIN, card, "okay")
        assert seen == [1]  # on disk before the tap was answered
        await driver.shows(card, "Consensus: okay")
        await driver.until(lambda: len(driver.messages(ADMIN)) == 3, what="the next disputed item")
        second = driver.messages(ADMIN)[-1]
        assert driver.labels(card) == []  # the decided card has no buttons left
        assert "ferret vs relay" in second.text
        await driver.tap(ADMIN, second, "Exclude")
        reasons = await driver.labelled(second, "broken item")
        await driver.tap(ADMIN, reasons, "broken item")
        await driver.shows(second, "Excluded: broken item")
        records = driver.records("adjudication")
        assert [
            (r["item_id"], r["decision"], r.get("judgment"), r.get("reason")) for r in records
        ] == [("q18", "consensus", "okay", None), ("q04", "exclude", None, "broken item")]
        assert all(
            r["channel"] == driver.platform and r["reviewer"]["id"] == driver.user_id(ADMIN)
            for r in records
        )
        assert len(driver.records("rating")) == 54  # the panel's own ratings are untouched


async def test_only_admins_adjudicate(driver, panel):
    async with driver.bot(panel):
        [reply] = await driver.command(ALICE, "adjudicate", PANEL_RUN)
        assert "Only admins" in reply.text
        _, card = await driver.command(ADMIN, "adjudicate", PANEL_RUN, replies=2)
        answer = await driver.tap(
            ALICE, card, "okay"
        )  # a reviewer tapping a forwarded adjudication card
        assert answer.alert and driver.records("adjudication") == []
        forged = card.datas[0].replace("Ar0", "Ar9")
        answer = await driver.tap_data(ADMIN, card, forged)
        assert answer.alert and driver.records("adjudication") == []
        op, key, index, dim = card.datas[0].split("|")
        for bad in (f"{op}|{key}|-1|{dim}", f"{op}|{key}|{index}|-1", f"{op}|{key}|+{index}|{dim}"):
            answer = await driver.tap_data(
                ADMIN, card, bad
            )  # -1 is the last item to Python's indexing
            assert answer.alert and driver.records("adjudication") == [], bad
