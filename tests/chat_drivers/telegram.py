"""The Telegram driver: the real python-telegram-bot bot long-polling the local fake Bot API server.

This module holds the only code in the tests that builds and starts the Telegram bot
(:meth:`TelegramDriver._start`: ``bot.channels.telegram.TelegramBot``, the chat core's adapter).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from evaluation import Store
from tests.fakes.telegram_api import FakeTelegram, parse_text

from . import ADMIN, ALICE, BOB, CAROL, EVE, GROUP, Answer, Button, Message
from ._base import BaseDriver

IDS = {ALICE: 101, BOB: 102, ADMIN: 900, EVE: 666, CAROL: 103, GROUP: -1001}
NAMES = {chat_id: name for name, chat_id in IDS.items()}
FAST = "[telegram.limits]\noverall_per_s = 1000\nchat_per_s = 100\ngroup_per_min = 6000\n"
"""Flood limits high enough not to slow the tests."""


class TelegramDriver(BaseDriver):
    """Plays Telegram users against the bot (see :class:`tests.chat_drivers.Driver`)."""

    platform = "telegram"
    data_limit = 64
    toasts = True

    def __init__(self, tmp_path: Path, fake: FakeTelegram | None = None):
        self.tmp_path = tmp_path
        self.fake = fake or FakeTelegram(limits=None)

    # ------------------------------------------------------------------ the fake platform

    def __enter__(self) -> "TelegramDriver":
        self.fake.__enter__()
        for name, first_name in ((ALICE, "Alice"), (BOB, "Bob"), (ADMIN, "Admin"), (EVE, "Eve")):
            self.fake.user(IDS[name], first_name=first_name, username=name)
        self.fake.user(IDS[CAROL], first_name="Carol", blocked=True)
        self.fake.group(IDS[GROUP], "Reviewers")
        return self

    def __exit__(self, *exc: object) -> None:
        self.fake.__exit__(*exc)

    # ------------------------------------------------------------------ the bot

    def write_config(
        self,
        extra: str = "",
        reviewers: Sequence[str] = (ALICE, BOB),
        admins: Sequence[str] = (ADMIN,),
    ) -> Path:
        """hilbot.toml: the users on the lists, fast flood limits, a short refresh and long poll,
        then ``extra``."""
        path = self.tmp_path / "hilbot.toml"
        poll = "" if "poll_timeout_s" in extra else "poll_timeout_s = 1\n"
        path.write_text(
            f"[telegram]\nreviewers = {[IDS[u] for u in reviewers]}\nadmins = "
            f"{[IDS[u] for u in admins]}\nrefresh_s = 0.2\n{poll}{extra}\n{FAST}"
        )
        return path

    async def restart(self, *, fresh_ids: bool = False) -> None:
        await self._stop()
        if fresh_ids:
            self.fake.restart_ids()
        await self._start(self.reopened())

    # -- the coupling point: the only code that knows how the bot is built and started

    async def _start(self, store: Store) -> None:
        from bot.channels.telegram import TelegramBot

        bot = TelegramBot(store, self.config, token=self.fake.token, api_url=self.fake.api_url)
        await (
            bot.start()
        )  # initialise, register commands, long polling ([telegram] poll settings), the scheduler
        self.bot_object = bot

    # ------------------------------------------------------------------ users acting

    def user_id(self, user: str) -> str:
        return str(IDS[user])

    def command_text(self, name: str, *args: str) -> str:
        return " ".join([f"/{name}", *args])

    async def say(
        self,
        user: str,
        text: str,
        chat: str | None = None,
        replies: int = 1,
        reply_to: Message | None = None,
    ) -> list[Message]:
        chat = chat or user
        before = len(self.fake.messages(IDS[chat]))
        self.fake.send_text(
            IDS[user], text, chat_id=IDS[chat], reply_to=int(reply_to.id) if reply_to else None
        )
        await self.until(
            lambda: len(self.fake.messages(IDS[chat])) >= before + replies,
            what=f"reply to {text[:60]!r}",
        )
        return self.messages(chat)[before:]

    async def command(
        self, user: str, name: str, *args: str, chat: str | None = None, replies: int = 1
    ) -> list[Message]:
        return await self.say(user, self.command_text(name, *args), chat=chat, replies=replies)

    async def tap_data(
        self, user: str, message: Message, data: str, chat: str | None = None
    ) -> Answer:
        query = self.fake.tap(IDS[user], IDS[chat or message.chat], int(message.id), data)
        return await self._answered(query)

    async def _answered(self, query: str) -> Answer:
        await self.until(lambda: query in self.fake.answers, what="the answer to the tap")
        answer = self.fake.answers[query]
        return Answer(answer.get("text", ""), bool(answer.get("show_alert")))

    async def redeliver_last_tap(self) -> None:
        polls = len(self.fake.calls_to("getUpdates"))
        self.fake.redeliver(self.fake.last_update_id("callback_query"))
        # one getUpdates returns it, the next confirms it: by then the bot has it
        await self.until(
            lambda: len(self.fake.calls_to("getUpdates")) >= polls + 2,
            what="the redelivery to be fetched",
        )
        await self.settle()

    async def tap_and_crash(self, user: str, message: Message, label: str) -> None:
        answering = threading.Event()

        def die(
            call: Any,
        ) -> None:  # in the server's thread, as the answer arrives: the tap is stored by now
            if call.method.lower() == "answercallbackquery" and not answering.is_set():
                answering.set()
                self.fake.outage()  # this answer and everything after it is lost

        self.fake.on_call = die
        try:
            shown = self.now(message)
            [button] = [b for b in shown.buttons if b.label == label]
            self.fake.tap(IDS[user], IDS[message.chat], int(message.id), button.data)
            await self.until(answering.is_set, what="the bot to answer the tap")
            await self._stop()
        finally:
            self.fake.on_call = None
            self.fake.clear_faults()
        await self._start(self.reopened())

    # ------------------------------------------------------------------ what users see

    def _message(self, raw: dict) -> Message:
        rows = (raw.get("reply_markup") or {}).get("inline_keyboard", [])
        buttons = tuple(Button(b["text"], b.get("callback_data", "")) for row in rows for b in row)
        return Message(
            NAMES[raw["chat"]["id"]],
            str(raw["message_id"]),
            raw.get("text", raw.get("caption", "")),
            buttons,
            raw.get("edits", 0),
        )

    def messages(self, chat: str) -> list[Message]:
        return [self._message(m) for m in self.fake.messages(IDS[chat])]

    def now(self, message: Message) -> Message:
        return self._message(self.fake.message(IDS[message.chat], int(message.id)))

    def preformatted(self, message: Message) -> list[str]:
        raw = self.fake.message(IDS[message.chat], int(message.id))
        text = raw.get("text", "").encode("utf-16-le")  # offsets count UTF-16 units
        return [
            text[2 * e["offset"] : 2 * (e["offset"] + e["length"])].decode("utf-16-le")
            for e in raw.get("entities", [])
            if e["type"] == "pre"
        ]

    def asks_for_reply(self, message: Message) -> bool:
        sent = [
            c
            for c in self.fake.calls_to("sendMessage")
            if c.status == 200
            and c.params.get("chat_id") == IDS[message.chat]
            and _shown(c.params) == message.text
        ]
        forced = (
            bool(sent) and (sent[-1].params.get("reply_markup") or {}).get("force_reply") is True
        )
        return forced and "reply to this message" in message.text

    def uploads(self) -> list[tuple[str, bytes]]:
        return [(NAMES[chat], data) for chat, data, _ in self.fake.photos]

    async def settle(self, quiet: float = 0.2, timeout: float = 5.0) -> None:
        """Wait until no call but getUpdates has arrived for ``quiet`` seconds."""

        def last() -> float:
            busy = [c.at for c in list(self.fake.calls) if c.method.lower() != "getupdates"]
            return max(busy, default=0.0)

        await self.until(
            lambda: time.monotonic() - last() >= quiet, what="the bot to go quiet", timeout=timeout
        )

    # ------------------------------------------------------------------ the platform misbehaving

    def on_answer(self, check: Callable[[], None]) -> None:
        def call(c: Any) -> None:
            if c.method.lower() == "answercallbackquery":
                check()

        self.fake.on_call = call

    def refuse_next_card(self) -> None:
        self.fake.fail_next(
            "sendMessage",
            status=400,
            description="Bad Request: message is too long",
            match=lambda params: bool((params.get("reply_markup") or {}).get("inline_keyboard")),
        )

    # ------------------------------------------------------------------ the schedule

    def digest_config(self, chats: Sequence[str], **schedule: Any) -> str:
        lines = [f"chats = {[IDS[c] for c in chats]}"] + [
            f"{key} = {json.dumps(value)}" for key, value in schedule.items()
        ]
        return "[telegram.digest]\n" + "\n".join(lines)


def _shown(params: dict) -> str:
    """The text a sendMessage call shows (its HTML parsed)."""
    try:
        return parse_text(params.get("text", ""), params.get("parse_mode"), 10**9, "message")[0]
    except Exception:
        return params.get("text", "")
