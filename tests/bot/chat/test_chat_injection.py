"""Chat text cannot ping or link: user content reaches Slack and Telegram escaped, in every field.

An item's query, answer and AI rationale, a reviewer's display name and their note all hold
Slack's mentions and links (``<!channel>``, ``<@U…>``, ``<https://…|…>``) and Telegram's HTML
(``<a href>``, ``<b>``). The bot runs its whole flow over them — the card, View full, a rating
and its edited card, a note, a group's private reveal, a stranger's tap, adjudication, the
digest, the App Home — and then every request the fake platform received is read: no text
field may carry any of it unescaped (Slack: no ``<`` at all, since hilbot sends no links or
mentions of its own; Telegram: no raw ``<`` of user content where the text is parsed as HTML).
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

from evaluation import ItemData, Query, QueryEvaluation, Rating, Reviewer, RunHeader, Store
from evaluation.records import Evaluation
from tests.chat_drivers import ADMIN, ALICE, BOB, EVE, GROUP, drivers

HOSTILE = (
    "<!channel> <!here> <!everyone> <@U0BOSS> <!subteam^S0TEAM|@team> <#C0GENERAL> "
    '<https://evil.example|click me> <a href="https://evil.example">link</a> <b>bold</b> '
    "& > quoted"
)
INJECTIONS = (
    "<!channel",
    "<!here",
    "<!everyone",
    "<@U0BOSS",
    "<!subteam",
    "<#C0GENERAL",
    "<https://evil",
    "<a href",
    "<b>bold",
)
"""The pieces of :data:`HOSTILE` that would ping or link if they reached a platform as written."""
NOT_TEXT = frozenset(
    {
        "value",
        "private_metadata",
        "action_id",
        "block_id",
        "callback_id",
        "channel",
        "channel_id",
        "ts",
        "thread_ts",
        "user",
        "users",
        "user_id",
        "trigger_id",
        "view_id",
        "hash",
        "url",
        "callback_data",
        "callback_query_id",
        "chat_id",
        "message_id",
        "reply_parameters",
        "parse_mode",
        "link_preview_options",
        "type",
        "style",
        "filename",
        "length",
        "file_id",
        "id",
    }
)
"""Fields that are ids, tokens and options, not text anyone reads."""


@pytest.fixture(params=["telegram", "slack", "slack-http"])
def driver(request, tmp_path):
    with drivers()[request.param](tmp_path) as platform:
        yield platform


def hostile_runs(store: Store) -> None:
    """Two search runs whose items are hostile everywhere, the first's first item already rated
    (terrible, with a note) by a reviewer with a hostile name."""
    verdict = Evaluation(verdict="okay", scores={"overall": 0.7}, rationale=HOSTILE)
    for run_id in ("inj", "inj-group"):
        items = [
            ItemData(id=f"q{n}", query=Query(query=HOSTILE), answer=HOSTILE, evaluation=verdict)
            for n in (1, 2)
        ]
        evaluations = [QueryEvaluation(run_id=run_id, data=item) for item in items]
        store.create_run(RunHeader(run_id=run_id, kind="search"), evaluations)
    ben = Reviewer(platform="demo", id="ben", name=HOSTILE)
    store.ratings.append(
        Rating(
            run_id="inj",
            item_id="q1",
            reviewer=ben,
            channel="demo",
            idempotency_key="inj:q1:ben",
            judgment="terrible",
            score=0.0,
            note=HOSTILE,
            concerns=["bad_ranking"],
        )
    )


def rename(driver: Any, user: str, name: str) -> None:
    """Give a user a hostile display name on the platform."""
    from tests.chat_drivers import slack, telegram

    if driver.platform == "telegram":
        driver.fake.user(telegram.IDS[user], first_name=name)
    else:
        driver.fake.user(slack.IDS[user], name)


async def run_the_whole_flow(driver: Any) -> None:
    """Review, View full, rate, note, a group reveal, a stranger, adjudication, digest, App Home."""
    _, card = await driver.command(ALICE, "review", "inj", replies=2)
    await driver.tap(ALICE, card, "View full")
    await driver.settle()
    await driver.tap(ALICE, driver.now(card), "okay")
    await driver.tap(ALICE, await driver.labelled(card, "Add note"), "Add note")
    await driver.until(lambda: _prompt(driver), what="the note prompt")
    await driver.say(ALICE, HOSTILE, reply_to=_prompt(driver))
    await driver.tap(EVE, driver.now(card), "good")
    _, shared = await driver.command(ALICE, "review", "inj-group", chat=GROUP, replies=2)
    await driver.tap(BOB, shared, "poor", chat=GROUP)
    _, disputed = await driver.command(ADMIN, "adjudicate", "inj", replies=2)
    assert "bold" in disputed.text and "quoted" in disputed.text
    await driver.tap(ADMIN, disputed, "Exclude")
    await driver.command(ADMIN, "digest", chat=GROUP)
    if driver.platform == "slack":
        from tests.chat_drivers.slack import IDS

        await driver.fake.open_home(IDS[ALICE]).wait_acked()
        await driver.until(lambda: driver.fake.home(IDS[ALICE]), what="the App Home")
    await driver.settle()


def _prompt(driver: Any) -> Any:
    """The note prompt in Alice's chat, if one is there."""
    return next((m for m in reversed(driver.messages(ALICE)) if driver.asks_for_reply(m)), None)


def texts(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(field, text) of every string in a request's parameters that someone reads (JSON strings
    opened)."""
    if isinstance(value, dict):
        for name, entry in value.items():
            if name not in NOT_TEXT:
                yield from texts(entry, name)
    elif isinstance(value, list):
        for entry in value:
            yield from texts(entry, key)
    elif isinstance(value, str):
        opened = _json(value)
        yield from texts(opened, key) if opened is not None else [(key, value)]


def _json(text: str) -> Any:
    if not text.startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def slack_sent(fake: Any) -> list[Any]:
    """Everything the bot sent Slack: Web API calls, response_url posts, acks (socket and HTTP)."""
    sent: list[Any] = [call.params for call in fake.calls]
    sent += [response["params"] for response in fake.responses]
    sent += [message for message in fake.socket_messages if isinstance(message, dict)]
    sent += [_json(d.body or "") or d.body or "" for d in fake.deliveries]
    return sent


def telegram_html(fake: Any) -> list[tuple[str, str]]:
    """(method, text) of every text and caption the bot sent for Telegram to parse as HTML."""
    html = [call for call in fake.calls if (call.params.get("parse_mode") or "").upper() == "HTML"]
    return [
        (call.method, call.params[field])
        for call in html
        for field in ("text", "caption")
        if isinstance(call.params.get(field), str)
    ]


async def test_no_user_text_reaches_the_platform_unescaped(driver, store):
    hostile_runs(store)
    rename(driver, ALICE, HOSTILE)
    async with driver.bot(store, "[review]\nk = 2\n"):  # Ben's rating leaves the item to Alice
        await run_the_whole_flow(driver)
    if driver.platform == "telegram":
        sent = telegram_html(driver.fake)
        assert len(sent) > 10 and any("&lt;!channel&gt;" in text for _, text in sent)
        assert [(method, text) for method, text in sent if any(i in text for i in INJECTIONS)] == []
        texts_sent = [
            call
            for call in driver.fake.calls
            if call.params.get("text") and call.method.lower() != "answercallbackquery"
        ]
        assert all(call.params.get("parse_mode") for call in texts_sent)  # none left to defaults
    else:
        fields = [pair for request in slack_sent(driver.fake) for pair in texts(request)]
        assert len(fields) > 20 and any("&lt;!channel&gt;" in text for _, text in fields)
        bad = [(key, text[:70]) for key, text in fields if "<" in text]
        assert bad == [], "\n".join(map(str, bad))
