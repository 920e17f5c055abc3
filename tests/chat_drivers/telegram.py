"""The Telegram driver: the real python-telegram-bot bot long-polling the local fake Bot API server.

This module holds the only code in the tests that builds, starts and stops the bot
(:meth:`TelegramDriver._start`, :meth:`TelegramDriver._stop`, and the digest trigger): with
``bot.channels.telegram.TelegramBot`` (the chat core's adapter) when there is one, else today's
``ReviewBot`` and its PTB ``Application``.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Sequence

from evaluation import Store, load_config
from tests.fakes.telegram_api import FakeTelegram, parse_text

from . import ADMIN, ALICE, BOB, CAROL, EVE, GROUP, Answer, Button, Message

IDS = {ALICE: 101, BOB: 102, ADMIN: 900, EVE: 666, CAROL: 103, GROUP: -1001}
NAMES = {chat_id: name for name, chat_id in IDS.items()}
FAST = "[telegram.limits]\noverall_per_s = 1000\nchat_per_s = 100\ngroup_per_min = 6000\n"
"""Flood limits high enough not to slow the tests."""


class TelegramDriver:
    """Plays Telegram users against the bot (see :class:`tests.chat_drivers.Driver`)."""

    platform = "telegram"
    data_limit = 64

    def __init__(self, tmp_path: Path, fake: FakeTelegram | None = None):
        self.tmp_path = tmp_path
        self.fake = fake or FakeTelegram(limits=None)
        self.store: Store | None = None
        self.config: Any = None
        self.bot_object: Any = None
        """The running bot (Telegram-only tests may look at its Application; the suite never does)."""
        self._stop_bot: Callable[[], Any] | None = None

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

    def write_config(self, extra: str = "", reviewers: Sequence[str] = (ALICE, BOB), admins: Sequence[str] = (ADMIN,)) -> Path:
        """hilbot.toml: the users on the lists, fast flood limits, a short refresh and long poll, then ``extra``."""
        path = self.tmp_path / "hilbot.toml"
        poll = "" if "poll_timeout_s" in extra else "poll_timeout_s = 1\n"
        path.write_text(f"[telegram]\nreviewers = {[IDS[u] for u in reviewers]}\nadmins = {[IDS[u] for u in admins]}\n"
                        f"refresh_s = 0.2\n{poll}{extra}\n{FAST}")
        return path

    @contextlib.asynccontextmanager
    async def bot(self, store: Store, extra: str = "", *, reviewers: Sequence[str] = (ALICE, BOB),
                  admins: Sequence[str] = (ADMIN,)) -> AsyncIterator["TelegramDriver"]:
        self.store, self.config = store, load_config(self.write_config(extra, reviewers, admins))
        await self._start(store)
        try:
            yield self
        finally:
            await self._stop()

    async def restart(self, *, fresh_ids: bool = False) -> None:
        await self._stop()
        if fresh_ids:
            self.fake.restart_ids()
        await self._start(Store(self.store.root))

    # -- the coupling point: the only code that knows how the bot is built, started and stopped

    async def _start(self, store: Store) -> None:
        telegram = importlib.import_module("bot.channels.telegram")
        if hasattr(telegram, "TelegramBot"):  # the chat core's adapter
            bot = telegram.TelegramBot(store, self.config, token=self.fake.token, api_url=self.fake.api_url)
            await bot.start()  # initialise, register commands, long polling ([telegram] poll settings), the scheduler
            self.bot_object, self._stop_bot = bot, bot.stop
            return
        bot = telegram.ReviewBot(store, self.config)  # before the chat core
        app = bot.application(self.fake.token, self.fake.api_url)
        await app.initialize()
        await app.start()
        await bot.setup(app)
        await app.updater.start_polling(poll_interval=0, timeout=1)

        async def stop() -> None:
            await app.updater.stop()
            await app.stop()
            await app.shutdown()

        self.bot_object, self._stop_bot = bot, stop

    async def _stop(self) -> None:
        if self._stop_bot is not None:
            stop, self._stop_bot = self._stop_bot, None
            await stop()

    def next_digest(self, after: datetime) -> datetime | None:
        bot = self.bot_object
        if hasattr(bot, "scheduler"):
            return bot.scheduler.next_digest(after)
        jobs = [job for job in bot.app.job_queue.jobs() if job.callback == bot._scheduled_digest]
        if not jobs:
            return None
        [job] = jobs
        return job.next_t

    async def digest_now(self) -> None:
        bot = self.bot_object
        if hasattr(bot, "scheduler"):
            return await bot.scheduler.digest()
        [job] = [job for job in bot.app.job_queue.jobs() if job.callback == bot._scheduled_digest]
        await job.run(bot.app)

    # ------------------------------------------------------------------ users acting

    def user_id(self, user: str) -> str:
        return str(IDS[user])

    def command_text(self, name: str, *args: str) -> str:
        return " ".join([f"/{name}", *args])

    async def say(self, user: str, text: str, chat: str | None = None, replies: int = 1,
                  reply_to: Message | None = None) -> list[Message]:
        chat = chat or user
        before = len(self.fake.messages(IDS[chat]))
        self.fake.send_text(IDS[user], text, chat_id=IDS[chat], reply_to=int(reply_to.id) if reply_to else None)
        await self.until(lambda: len(self.fake.messages(IDS[chat])) >= before + replies, what=f"reply to {text[:60]!r}")
        return self.messages(chat)[before:]

    async def command(self, user: str, name: str, *args: str, chat: str | None = None, replies: int = 1) -> list[Message]:
        return await self.say(user, self.command_text(name, *args), chat=chat, replies=replies)

    async def tap(self, user: str, message: Message, label: str, chat: str | None = None) -> Answer:
        shown = self.now(message)
        exact = [b for b in shown.buttons if b.label == label]
        near = exact or [b for b in shown.buttons if b.label.startswith(label)]
        assert len(near) == 1, f"no single button {label!r}; buttons: {shown.labels}"
        return await self.tap_data(user, message, near[0].data, chat=chat)

    async def tap_data(self, user: str, message: Message, data: str, chat: str | None = None) -> Answer:
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
        await self.until(lambda: len(self.fake.calls_to("getUpdates")) >= polls + 2, what="the redelivery to be fetched")
        await self.settle()

    async def tap_and_crash(self, user: str, message: Message, label: str) -> None:
        answering = threading.Event()

        def die(call: Any) -> None:  # in the server's thread, as the answer arrives: the tap is stored by now
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
        await self._start(Store(self.store.root))

    # ------------------------------------------------------------------ what users see

    def _message(self, raw: dict) -> Message:
        rows = (raw.get("reply_markup") or {}).get("inline_keyboard", [])
        buttons = tuple(Button(b["text"], b.get("callback_data", "")) for row in rows for b in row)
        return Message(NAMES[raw["chat"]["id"]], str(raw["message_id"]), raw.get("text", raw.get("caption", "")),
                       buttons, raw.get("edits", 0))

    def messages(self, chat: str) -> list[Message]:
        return [self._message(m) for m in self.fake.messages(IDS[chat])]

    def cards(self, chat: str) -> list[Message]:
        return [m for m in self.messages(chat) if m.buttons]

    def now(self, message: Message) -> Message:
        return self._message(self.fake.message(IDS[message.chat], int(message.id)))

    def labels(self, message: Message) -> list[str]:
        return self.now(message).labels

    async def shows(self, message: Message, text: str) -> Message:
        await self.until(lambda: text in self.now(message).text, what=f"{text!r} in the message")
        return self.now(message)

    async def labelled(self, message: Message, label: str) -> Message:
        await self.until(lambda: label in self.labels(message), what=f"a {label!r} button")
        return self.now(message)

    def asks_for_reply(self, message: Message) -> bool:
        sent = [c for c in self.fake.calls_to("sendMessage") if c.status == 200 and c.params.get("chat_id") == IDS[message.chat]
                and _shown(c.params) == message.text]
        return bool(sent) and (sent[-1].params.get("reply_markup") or {}).get("force_reply") is True

    def uploads(self) -> list[tuple[str, bytes]]:
        return [(NAMES[chat], data) for chat, data, _ in self.fake.photos]

    async def until(self, predicate: Callable[[], Any], what: str = "condition", timeout: float = 5.0) -> None:
        await self.fake.until(predicate, timeout=timeout, what=what)

    async def settle(self, quiet: float = 0.2, timeout: float = 5.0) -> None:
        """Wait until no call but getUpdates has arrived for ``quiet`` seconds."""
        def last() -> float:
            busy = [c.at for c in list(self.fake.calls) if c.method.lower() != "getupdates"]
            return max(busy, default=0.0)

        await self.until(lambda: time.monotonic() - last() >= quiet, what="the bot to go quiet", timeout=timeout)

    # ------------------------------------------------------------------ the log

    def records(self, kind: str | None = None) -> list[dict]:
        path = self.store.ratings.path
        rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        return [r for r in rows if kind is None or r["type"] == kind]

    # ------------------------------------------------------------------ the platform misbehaving

    def on_answer(self, check: Callable[[], None]) -> None:
        def call(c: Any) -> None:
            if c.method.lower() == "answercallbackquery":
                check()

        self.fake.on_call = call

    def refuse_next_card(self) -> None:
        self.fake.fail_next("sendMessage", status=400, description="Bad Request: message is too long",
                            match=lambda params: bool((params.get("reply_markup") or {}).get("inline_keyboard")))

    # ------------------------------------------------------------------ the schedule

    def digest_config(self, chats: Sequence[str], **schedule: Any) -> str:
        lines = [f"chats = {[IDS[c] for c in chats]}"] + [f"{key} = {json.dumps(value)}" for key, value in schedule.items()]
        return "[telegram.digest]\n" + "\n".join(lines)


def _shown(params: dict) -> str:
    """The text a sendMessage call shows (its HTML parsed)."""
    try:
        return parse_text(params.get("text", ""), params.get("parse_mode"), 10**9, "message")[0]
    except Exception:
        return params.get("text", "")
