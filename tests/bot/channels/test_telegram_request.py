"""The Bot API networking under python-telegram-bot: aiohttp calls, and a tap's update cut to what
the bot reads."""

from __future__ import annotations

import json

import pytest
from telegram import Bot, Update

from bot.channels.telegram import tapped_on
from bot.channels.telegram.request import TAPPED_ON, slim_updates

CARD = {
    "message_id": 7,
    "date": 1700000000,
    "chat": {"id": -1001, "type": "supergroup", "title": "reviewers"},
    "from": {"id": 1, "is_bot": True, "first_name": "hilbot"},
    "text": "[1/9] a card " + "x" * 500,
    "entities": [{"type": "bold", "offset": 0, "length": 5}],
    "reply_markup": {"inline_keyboard": [[{"text": "good", "callback_data": "r0|k|0|0"}]]},
}


def _answer(*updates: dict) -> bytes:
    return json.dumps({"ok": True, "result": list(updates)}).encode()


def _tap(update_id: int = 1, message: dict | None = CARD) -> dict:
    query = {
        "id": "99",
        "from": {"id": 5, "is_bot": False, "first_name": "Ann"},
        "chat_instance": "1",
        "data": "r0|k|0|0",
    }
    return {
        "update_id": update_id,
        "callback_query": query | ({"message": message} if message is not None else {}),
    }


def test_a_taps_message_becomes_its_chat_and_id_and_the_bot_reads_the_same_place():
    body = slim_updates(_answer(_tap(), {"update_id": 2, "message": CARD | {"text": "/start"}}))
    updates = json.loads(body)["result"]
    assert "message" not in updates[0]["callback_query"]
    assert updates[0]["callback_query"][TAPPED_ON] == {
        "message_id": 7,
        "chat_id": -1001,
        "chat_type": "supergroup",
    }
    assert updates[1] == {
        "update_id": 2,
        "message": CARD | {"text": "/start"},
    }  # other updates untouched
    bot = Bot("1:A")
    chat, message_id = tapped_on(Update.de_json(updates[0], bot).callback_query)
    whole = tapped_on(
        Update.de_json(_tap(), bot).callback_query
    )  # a webhook's update keeps the whole message
    assert (
        (chat.id, chat.group, message_id)
        == ("-1001", True, "7")
        == (whole[0].id, whole[0].group, whole[1])
    )


def test_a_tap_under_an_inline_message_has_no_chat():
    assert tapped_on(Update.de_json(_tap(message=None) | {}, Bot("1:A")).callback_query) is None


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b'{"ok": true}',
        b'{"ok": true, "result": 5}',
        b'{"ok": true, "result": [5]}',
        _answer({"update_id": 1, "callback_query": "text"}),
        _answer(_tap(message={"message_id": "7", "chat": {"id": 1}})),
        _answer(_tap(message={"message_id": 7, "chat": {"id": "x", "type": "private"}})),
        _answer(_tap(message=None)),
        b'{"ok": false, "error_code": 409, "description": "Conflict"}',
    ],
)
def test_anything_unexpected_reaches_python_telegram_bot_as_it_came(body):
    assert slim_updates(body) == body
