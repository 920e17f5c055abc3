"""The fake Telegram Bot API speaks the protocol python-telegram-bot expects, and enforces the real
rules."""

from __future__ import annotations

import asyncio
import datetime as dtm
import struct
import time

import httpx
import pytest
from telegram import (
    Bot,
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    MessageEntity,
    Update,
)
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, RetryAfter, TimedOut
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes
from telegram.request import HTTPXRequest

from tests.fakes.telegram_api import NOT_MODIFIED, TOO_OLD, FakeTelegram, Limits

USER, OTHER, GROUP = 5, 6, -1001234567890
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    + struct.pack(">II", 3, 2)
    + b"\x08\x02\x00\x00\x00fake-rest"
)


def keyboard(*buttons: tuple[str, str]) -> InlineKeyboardMarkup:
    """One row of callback buttons."""
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(label, callback_data=data) for label, data in buttons]]
    )


@pytest.fixture(autouse=True)
def timedeltas(monkeypatch: pytest.MonkeyPatch) -> None:
    """PTB 22 returns durations as timedelta when asked (and warns otherwise)."""
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


@pytest.fixture
def tg():
    """The fake without flood control, with two users and a group."""
    with FakeTelegram(limits=None) as fake:
        fake.user(USER, "Ada", username="ada")
        fake.user(OTHER, "Bob")
        fake.group(GROUP, "Reviewers")
        yield fake


@pytest.fixture
def limited():
    """The fake with the default (real) flood limits."""
    with FakeTelegram() as fake:
        fake.user(USER, "Ada")
        fake.user(OTHER, "Bob")
        yield fake


async def connect(fake: FakeTelegram, **request: float) -> Bot:
    """An initialised real Bot talking to the fake (timeouts in ``request``)."""
    bot = Bot(
        fake.token, base_url=fake.base_url, request=HTTPXRequest(**request) if request else None
    )
    await bot.initialize()
    return bot


@pytest.fixture
async def bot(tg: FakeTelegram):
    async with Bot(tg.token, base_url=tg.base_url) as client:
        yield client


async def test_get_me_is_the_bot(tg: FakeTelegram, bot: Bot) -> None:
    me = await bot.get_me()
    assert (me.id, me.is_bot, me.username, me.can_join_groups) == (
        123456,
        True,
        "hilbot_test_bot",
        True,
    )
    assert [call.status for call in tg.calls_to("getMe")] == [200, 200]  # initialize() asked first
    assert tg.env() == {"TELEGRAM_BOT_TOKEN": "123456:TEST-TOKEN", "TELEGRAM_API_URL": tg.api_url}


async def test_send_message_parses_html_and_keeps_the_keyboard(tg: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(
        USER,
        '<b>Query</b> 1 &amp; <a href="https://x.org/?a=1&amp;b=2">2</a>',
        parse_mode="HTML",
        reply_markup=keyboard(("Yes ✅", "v:1"), ("No", "v:0")),
        disable_notification=True,
    )
    assert (sent.message_id, sent.chat.id, sent.chat.type, sent.from_user.is_bot) == (
        1,
        USER,
        "private",
        True,
    )
    assert sent.text == "Query 1 & 2"
    assert [(e.type, e.offset, e.length, e.url) for e in sent.entities] == [
        (MessageEntity.BOLD, 0, 5, None),
        (MessageEntity.TEXT_LINK, 10, 1, "https://x.org/?a=1&b=2"),
    ]
    assert sent.reply_markup.inline_keyboard[0][0].callback_data == "v:1"
    params = tg.calls_to("sendMessage")[0].params
    assert (
        params["chat_id"],
        params["disable_notification"],
        params["reply_markup"]["inline_keyboard"][0][1]["text"],
    ) == (USER, True, "No")
    assert (await bot.send_message(USER, "second")).message_id == 2
    assert [m["text"] for m in tg.messages(USER)] == ["Query 1 & 2", "second"]


async def test_strings_stay_strings_and_json_bodies_work(tg: FakeTelegram, bot: Bot) -> None:
    assert (
        await bot.send_message(USER, "42")
    ).text == "42"  # PTB sends strings raw, numbers as text: decode by field
    async with httpx.AsyncClient() as client:
        answer = await client.post(
            f"{tg.base_url}{tg.token}/sendMessage",
            json={
                "chat_id": USER,
                "text": "true",
                "reply_markup": {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]},
            },
        )
        unknown = await client.post(f"{tg.base_url}{tg.token}/sendTelepathy")
    assert (
        answer.json()["result"]["text"] == "true"
        and answer.json()["result"]["reply_markup"]["inline_keyboard"][0][0]["text"] == "A"
    )
    assert (unknown.status_code, unknown.json()) == (
        404,
        {"ok": False, "error_code": 404, "description": "Not Found"},
    )


async def test_reply_to_a_message(tg: FakeTelegram, bot: Bot) -> None:
    tg.send_text(USER, "my note")
    sent = await bot.send_message(USER, "noted", reply_to_message_id=1)
    assert (sent.reply_to_message.message_id, sent.reply_to_message.text, sent.message_id) == (
        1,
        "my note",
        2,
    )
    with pytest.raises(BadRequest, match="Message to be replied not found"):
        await bot.send_message(USER, "x", reply_to_message_id=99)


async def test_edit_text_and_not_modified(tg: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(
        USER, "<b>card</b>", parse_mode="HTML", reply_markup=keyboard(("Yes", "y"))
    )
    edited = await bot.edit_message_text(
        "<b>card</b> ✓",
        chat_id=USER,
        message_id=sent.message_id,
        parse_mode="HTML",
        reply_markup=keyboard(("Yes", "y")),
    )
    assert (edited.text, edited.edit_date is not None) == ("card ✓", True)
    with pytest.raises(BadRequest) as error:
        await bot.edit_message_text(
            "<b>card</b> ✓",
            chat_id=USER,
            message_id=sent.message_id,
            parse_mode="HTML",
            reply_markup=keyboard(("Yes", "y")),
        )
    assert (
        error.value.message == NOT_MODIFIED.capitalize()
    )  # PTB drops "Bad Request: " and capitalizes
    await bot.edit_message_reply_markup(
        chat_id=USER, message_id=sent.message_id
    )  # removing the keyboard is a change
    state = tg.message(USER, sent.message_id)
    assert (state["edits"], state["history"], "reply_markup" in state) == (
        2,
        ["card", "card ✓", "card ✓"],
        False,
    )
    with pytest.raises(BadRequest, match="Message to edit not found"):
        await bot.edit_message_text("x", chat_id=USER, message_id=77)


async def test_text_length_is_counted_after_html_parsing_in_utf16(
    tg: FakeTelegram, bot: Bot
) -> None:
    assert (
        len(
            (
                await bot.send_message(
                    USER, "<b>" + "a" * 4090 + "</b><i>bcdefg</i>", parse_mode="HTML"
                )
            ).text
        )
        == 4096
    )
    assert len((await bot.send_message(USER, "&amp;" * 4096, parse_mode="HTML")).text) == 4096
    await bot.send_message(USER, "😀" * 2048)  # 4096 UTF-16 units
    for too_long, mode in [
        ("<b>" + "a" * 4097 + "</b>", "HTML"),
        ("&amp;" * 4097, "HTML"),
        ("😀" * 2049, None),
        ("a" * 4097, None),
    ]:
        with pytest.raises(BadRequest, match="Message is too long"):
            await bot.send_message(USER, too_long, parse_mode=mode)
    with pytest.raises(BadRequest, match="Message text is empty"):
        await bot.send_message(USER, "<b></b>", parse_mode="HTML")
    assert len(tg.messages(USER)) == 3


@pytest.mark.parametrize(
    "html",
    ["<b>open", "<foo>x</foo>", "a < b", "AT&T", "<b>x</i>", "x</b>", "<span>x</span>", "&nbsp;"],
)
async def test_malformed_html_is_rejected(tg: FakeTelegram, bot: Bot, html: str) -> None:
    with pytest.raises(BadRequest, match="Can't parse entities"):
        await bot.send_message(USER, html, parse_mode="HTML")
    assert tg.messages(USER) == []


async def test_supported_html(bot: Bot) -> None:
    source = (
        "<strong>b</strong><em>i</em><ins>u</ins><del>s</del><code>c</code><pre><code "
        'class="language-py">p</code></pre><tg-spoiler>x</tg-spoiler><span '
        'class="tg-spoiler">y</span><blockquote '
        "expandable>q</blockquote>&lt;&gt;&quot;&#65;&#x42;"
    )
    sent = await bot.send_message(USER, source, parse_mode="HTML")
    assert sent.text == 'biuscpxyq<>"AB'
    assert [e.type for e in sent.entities] == [
        "bold",
        "italic",
        "underline",
        "strikethrough",
        "code",
        "pre",
        "spoiler",
        "spoiler",
        "expandable_blockquote",
    ]
    assert sent.entities[5].language == "py"


async def test_callback_data_is_at_most_64_bytes(tg: FakeTelegram, bot: Bot) -> None:
    await bot.send_message(USER, "ok", reply_markup=keyboard(("A", "x" * 64)))
    for data in ["x" * 65, "é" * 33]:
        with pytest.raises(BadRequest, match="(?i)button_data_invalid"):
            await bot.send_message(USER, "too much", reply_markup=keyboard(("A", data)))
    assert len(tg.messages(USER)) == 1


async def test_flood_overall_limit_is_retry_after() -> None:
    with FakeTelegram(limits=Limits(overall=2, overall_period=0.5, chat=10)) as fake:
        for user_id in (USER, OTHER, 7):
            fake.user(user_id)
        async with Bot(fake.token, base_url=fake.base_url) as bot:
            await bot.send_message(USER, "a")
            await bot.send_message(OTHER, "b")
            with pytest.raises(RetryAfter) as error:
                await bot.send_message(7, "c")
            assert error.value.retry_after == dtm.timedelta(seconds=1)
            assert fake.rejected == [("sendMessage", 7, "overall")] and fake.messages(7) == []
            await asyncio.sleep(0.5)
            await bot.send_message(7, "c")
            assert [chat for _, _, chat in fake.accepted] == [USER, OTHER, 7]


async def test_flood_per_chat_window(limited: FakeTelegram) -> None:
    async with Bot(limited.token, base_url=limited.base_url) as bot:
        first = await bot.send_message(USER, "one")
        await bot.send_message(OTHER, "other chat passes")
        with pytest.raises(RetryAfter) as error:
            await bot.send_message(USER, "two")
        assert error.value.retry_after == dtm.timedelta(seconds=1)
        with pytest.raises(RetryAfter):  # edits count too
            await bot.edit_message_text("one!", chat_id=USER, message_id=first.message_id)
        assert limited.rejected == [
            ("sendMessage", USER, "chat"),
            ("editMessageText", USER, "chat"),
        ]
        await limited.until(
            lambda: time.monotonic() - limited.accepted[0][0] > 1.0, what="the window to slide"
        )
        await bot.send_message(USER, "two")
    times = [at for at, _, chat in limited.accepted if chat == USER]
    assert len(times) == 2 and times[1] - times[0] > 1.0


async def test_flood_group_window() -> None:
    with FakeTelegram(limits=Limits(group=2, group_period=60.0)) as fake:
        fake.group(GROUP, "Reviewers")
        async with Bot(fake.token, base_url=fake.base_url) as bot:
            await bot.send_message(GROUP, "a")
            await bot.send_message(GROUP, "b")
            with pytest.raises(RetryAfter) as error:
                await bot.send_message(GROUP, "c")
    assert dtm.timedelta(seconds=59) <= error.value.retry_after <= dtm.timedelta(seconds=60)
    assert fake.rejected == [("sendMessage", GROUP, "group")]


async def test_fail_next(tg: FakeTelegram, bot: Bot) -> None:
    tg.fail_next("sendMessage", retry_after=7)
    tg.fail_next("sendMessage", status=500)
    with pytest.raises(RetryAfter) as error:
        await bot.send_message(USER, "a")
    assert error.value.retry_after == dtm.timedelta(seconds=7)
    with pytest.raises(NetworkError, match="Internal Server Error"):
        await bot.send_message(USER, "a")
    assert (await bot.send_message(USER, "a")).message_id == 1
    assert [call.status for call in tg.calls_to("sendMessage")] == [429, 500, 200]


async def test_long_poll_returns_a_command_and_offset_confirms_it(
    tg: FakeTelegram, bot: Bot
) -> None:
    started = time.monotonic()
    assert await bot.get_updates(timeout=dtm.timedelta(milliseconds=300)) == ()
    assert time.monotonic() - started >= 0.3
    poll = asyncio.create_task(bot.get_updates(timeout=5))
    await asyncio.sleep(0.2)
    assert not poll.done()
    started = time.monotonic()
    update_id = tg.send_text(USER, "/start@hilbot_test_bot please")
    (update,) = await poll
    assert time.monotonic() - started < 0.5
    assert (update.update_id, update.message.text, update.message.from_user.username) == (
        update_id,
        "/start@hilbot_test_bot please",
        "ada",
    )
    assert update.message.parse_entities([MessageEntity.BOT_COMMAND]) == {
        update.message.entities[0]: "/start@hilbot_test_bot"
    }
    assert [u.update_id for u in await bot.get_updates()] == [update_id]  # not confirmed yet
    assert await bot.get_updates(offset=update_id + 1) == ()


async def test_get_updates_limit_and_allowed_updates(tg: FakeTelegram, bot: Bot) -> None:
    ids = [tg.send_text(USER, f"m{i}") for i in range(3)]
    sent = await bot.send_message(USER, "card", reply_markup=keyboard(("Yes", "y")))
    tg.tap(USER, USER, sent.message_id, "y")
    assert [u.update_id for u in await bot.get_updates(limit=2)] == ids[:2]
    assert [
        u.callback_query is not None
        for u in await bot.get_updates(allowed_updates=["callback_query"])
    ] == [True]


async def test_redeliver(tg: FakeTelegram, bot: Bot) -> None:
    first = tg.send_text(USER, "hello")
    (update,) = await bot.get_updates()
    second = tg.send_text(USER, "again")
    tg.redeliver(first)
    assert [(u.update_id, u.message.text) for u in await bot.get_updates(offset=first + 1)] == [
        (first, "hello"),
        (second, "again"),
    ]
    assert [u.update_id for u in await bot.get_updates(offset=second + 1)] == []


async def test_tap_and_answer(tg: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(
        USER, "Is it right?", reply_markup=keyboard(("Yes ✅", "v:1"), ("No", "v:0"))
    )
    with pytest.raises(AssertionError, match="Yes ✅"):
        tg.tap_button(USER, USER, sent.message_id, "Maybe")
    query_id = tg.tap_button(USER, USER, sent.message_id, "No")
    (update,) = await bot.get_updates()
    query = update.callback_query
    assert (
        query.id,
        query.data,
        query.from_user.id,
        query.message.message_id,
        query.message.text,
    ) == (query_id, "v:0", USER, sent.message_id, "Is it right?")
    assert query.message.reply_markup.inline_keyboard[0][1].text == "No"
    assert await bot.answer_callback_query(query_id, text="Saved") is True
    assert (
        tg.answers[query_id]["text"] == "Saved"
        and tg.answers[query_id]["at"] >= tg.tapped_at[query_id]
    )
    for again in [query_id, "404"]:
        with pytest.raises(BadRequest, match=TOO_OLD.capitalize()):
            await bot.answer_callback_query(again)


async def test_answer_too_late_or_too_long() -> None:
    with FakeTelegram(callback_ttl=0.1) as fake:
        fake.user(USER)
        async with Bot(fake.token, base_url=fake.base_url) as bot:
            sent = await bot.send_message(USER, "card", reply_markup=keyboard(("Yes", "y")))
            late, long = (
                fake.tap(USER, USER, sent.message_id, "y"),
                fake.tap(USER, USER, sent.message_id, "y"),
            )
            with pytest.raises(BadRequest, match="(?i)message_too_long"):
                await bot.answer_callback_query(long, text="x" * 201)
            await asyncio.sleep(0.15)
            with pytest.raises(BadRequest, match="Query is too old"):
                await bot.answer_callback_query(late)
    assert fake.answers == {}


async def test_send_photo_multipart(tg: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_photo(USER, PNG, caption="<b>Agreement</b> chart", parse_mode="HTML")
    assert (
        sent.caption,
        sent.caption_entities[0].type,
        sent.photo[-1].width,
        sent.photo[-1].height,
    ) == ("Agreement chart", "bold", 3, 2)
    assert tg.photos == [(USER, PNG, "<b>Agreement</b> chart")]
    again = await bot.send_photo(OTHER, sent.photo[-1].file_id)
    assert tg.photos[1] == (OTHER, PNG, None) and again.caption is None
    with pytest.raises(BadRequest, match="Message caption is too long"):
        await bot.send_photo(USER, PNG, caption="c" * 1025)


async def test_set_my_commands(tg: FakeTelegram, bot: Bot) -> None:
    assert (
        await bot.set_my_commands(
            [BotCommand("start", "Begin reviewing"), BotCommand("stats", "Progress")]
        )
        is True
    )
    assert tg.commands == [
        {"command": "start", "description": "Begin reviewing"},
        {"command": "stats", "description": "Progress"},
    ]
    assert [c.command for c in await bot.get_my_commands()] == ["start", "stats"]


async def test_wrong_token_is_invalid_token(tg: FakeTelegram) -> None:
    with pytest.raises(InvalidToken):
        async with Bot("999:WRONG", base_url=tg.base_url):
            pass
    assert tg.calls[-1].status == 401


async def test_stall_past_the_read_timeout(tg: FakeTelegram) -> None:
    bot = await connect(tg, read_timeout=0.1)
    try:
        tg.stall_next("sendMessage", 0.4)
        with pytest.raises(TimedOut):
            await bot.send_message(USER, "stuck before Telegram")
        tg.stall_next("sendMessage", 0.4, process=True)
        with pytest.raises(TimedOut):
            await bot.send_message(OTHER, "carried out, answered late")
        await tg.until(
            lambda: all(call.status for call in tg.calls_to("sendMessage")),
            what="stalled calls to finish",
        )
    finally:
        await bot.shutdown()
    assert [call.status for call in tg.calls_to("sendMessage")] == [502, 200]
    assert (
        tg.messages(USER) == [] and tg.last_message(OTHER)["text"] == "carried out, answered late"
    )


async def test_blocked_user_and_unknown_chat(tg: FakeTelegram, bot: Bot) -> None:
    tg.user(9, "Carol", blocked=True)
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_message(9, "hi")
    with pytest.raises(BadRequest, match="Chat not found"):
        await bot.send_message(12345, "hi")
    tg.user(9, "Carol")
    assert (await bot.send_message(9, "hi")).chat.first_name == "Carol"


async def test_application_polls_and_handles_a_review(tg: FakeTelegram) -> None:
    async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await update.message.reply_html(
            "<b>Case 1</b>", reply_markup=keyboard(("Correct", "v:1"), ("Wrong", "v:0"))
        )

    async def verdict(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await update.callback_query.answer("Saved")
        await update.callback_query.edit_message_text(f"Case 1: {update.callback_query.data}")

    app = Application.builder().token(tg.token).base_url(tg.base_url).build()
    app.add_handlers([CommandHandler("start", start), CallbackQueryHandler(verdict)])
    async with app:
        await app.start()
        await app.updater.start_polling(poll_interval=0.0, timeout=dtm.timedelta(seconds=2))
        tg.send_text(USER, "/start")
        await tg.until(lambda: tg.last_message(USER) is not None, what="the card")
        query_id = tg.tap_button(USER, USER, tg.last_message(USER)["message_id"], "Wrong")
        await tg.until(lambda: tg.last_message(USER)["edits"] == 1, what="the verdict")
        await app.updater.stop()
        await app.stop()
    assert (
        tg.answers[query_id]["text"] == "Saved" and tg.last_message(USER)["text"] == "Case 1: v:0"
    )
    assert tg.last_message(USER)["history"] == ["Case 1", "Case 1: v:0"]


async def test_fail_next_can_pick_the_call_it_fails(tg: FakeTelegram, bot: Bot) -> None:
    tg.fail_next(
        "sendMessage",
        400,
        description="Bad Request: message is too long",
        match=lambda params: bool((params.get("reply_markup") or {}).get("inline_keyboard")),
    )
    await bot.send_message(USER, "plain")  # no keyboard: not this fault's call
    with pytest.raises(BadRequest, match="too long"):
        await bot.send_message(USER, "card", reply_markup=keyboard(("Yes", "y")))
    await bot.send_message(USER, "card", reply_markup=keyboard(("Yes", "y")))
    assert [m["text"] for m in tg.messages(USER)] == ["plain", "card"]


async def test_an_outage_fails_every_call_but_get_updates_until_cleared(
    tg: FakeTelegram, bot: Bot
) -> None:
    tg.outage()
    with pytest.raises(NetworkError):
        await bot.send_message(USER, "lost")
    assert await bot.get_updates(timeout=0) == ()
    tg.clear_faults()
    await bot.send_message(USER, "arrives")
    assert [m["text"] for m in tg.messages(USER)] == ["arrives"]


async def test_restart_ids_starts_update_and_callback_ids_again(tg: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(USER, "card", reply_markup=keyboard(("Yes", "y")))
    first, query = tg.send_text(USER, "/start"), tg.tap(USER, USER, sent.message_id, "y")
    assert (
        tg.last_update_id("callback_query") == first + 1 and tg.last_update_id("message") == first
    )
    [*_, last] = await bot.get_updates(timeout=0)
    await bot.get_updates(offset=last.update_id + 1, timeout=0)  # confirmed
    stale = asyncio.ensure_future(
        bot.get_updates(offset=last.update_id + 1, timeout=2)
    )  # a poll made before the restart
    await asyncio.sleep(0.1)
    tg.restart_ids()
    assert tg.send_text(USER, "/again") == 1 and tg.tap(USER, USER, sent.message_id, "y") == query
    assert await stale == ()  # it says nothing, and confirms nothing
    again = await bot.get_updates(timeout=0)
    assert [u.update_id for u in again] == [1, 2] and again[1].callback_query.id == query
    assert tg.last_update_id() == 2
