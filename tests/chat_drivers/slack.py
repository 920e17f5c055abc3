"""The Slack driver: the real slack-bolt app in Socket Mode against the local fake Slack (Web
API + Socket Mode).

Users act through the fake: ``/hilbot …`` slash commands, button clicks (block_actions), note
modal submissions, direct messages. What a user sees in a conversation is the bot's messages
there and, in their DM, the modals the bot opened for them, in the order they appeared (a
modal is where Slack asks for a note); a shared file is seen through ``uploads()``. A click's answer
is its acknowledgement; an alert is the ephemeral message the bot posts to the clicker before
acknowledging. Slack has no toasts: a click that is not an alert answers with an empty text.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from evaluation import Store
from tests.fakes.slack_api import FakeSlack

from . import ADMIN, ALICE, BOB, CAROL, EVE, GROUP, Answer, Button, Message
from ._base import BaseDriver

IDS = {
    ALICE: "U0ALICE",
    BOB: "U0BOB",
    ADMIN: "U0ADMIN",
    EVE: "U0EVE",
    CAROL: "U0CAROL",
    GROUP: "C0GROUP",
}
FAST = "[slack.limits]\nchannel_per_s = 100\noverall_per_s = 1000\n"
"""Posting limits high enough not to slow the tests."""


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def flatten(blocks: list[dict]) -> str:
    """The text a user reads in blocks: headers, sections, context and input labels, mrkdwn escapes
    undone."""
    lines = []
    for block in blocks:
        texts = (
            [block.get("text"), block.get("label"), *(block.get("elements") or [])]
            if block.get("type") != "actions"
            else []
        )
        lines.extend(
            t["text"] for t in texts if isinstance(t, dict) and isinstance(t.get("text"), str)
        )
    return unescape("\n".join(lines))


def unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def buttons_of(blocks: list[dict]) -> tuple[Button, ...]:
    return tuple(
        Button(e["text"]["text"], e.get("value", ""))
        for b in blocks
        if b.get("type") == "actions"
        for e in b.get("elements", [])
        if e.get("type") == "button"
    )


class SlackDriver(BaseDriver):
    """Plays Slack users against the bot (see :class:`tests.chat_drivers.Driver`)."""

    platform = "slack"
    data_limit = 2000
    toasts = False

    def __init__(self, tmp_path: Path, fake: FakeSlack | None = None, *, mode: str = "socket"):
        self.tmp_path = tmp_path
        self.fake = fake or FakeSlack(limits=None)
        self.mode = mode
        """``socket`` (Socket Mode) or ``http`` (signed requests to the bot's request URL)."""
        self.port = _free_port() if mode == "http" else 0
        self._last_click: Any = None

    # ------------------------------------------------------------------ the fake platform

    def __enter__(self) -> "SlackDriver":
        self.fake.__enter__()
        for name, shown in ((ALICE, "alice"), (BOB, "bob"), (ADMIN, "admin"), (EVE, "eve")):
            self.fake.user(IDS[name], shown)
        self.fake.user(IDS[CAROL], "carol", reachable=False)
        self.fake.channel(
            IDS[GROUP], "reviewers", members=[IDS[u] for u in (ALICE, BOB, ADMIN, EVE, CAROL)]
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self.fake.__exit__(*exc)

    def _conversation(self, chat: str) -> str:
        return IDS[chat] if chat == GROUP else self.fake.dm(IDS[chat])

    def _name(self, channel: str) -> str:
        return next(name for name in IDS if self._conversation(name) == channel)

    # ------------------------------------------------------------------ the bot

    def write_config(
        self,
        extra: str = "",
        reviewers: Sequence[str] = (ALICE, BOB),
        admins: Sequence[str] = (ADMIN,),
    ) -> Path:
        path = self.tmp_path / "hilbot.toml"
        mode = f'mode = "http"\nport = {self.port}\n' if self.mode == "http" else ""
        path.write_text(
            f"[slack]\nreviewers = {json.dumps([IDS[u] for u in reviewers])}\n"
            f"admins = {json.dumps([IDS[u] for u in admins])}\nrefresh_s = 0.2\n{mode}{extra}\n"
            f"{'' if '[slack.limits]' in extra else FAST}"
        )
        return path

    async def restart(self, *, fresh_ids: bool = False) -> None:
        """Slack's ids (action timestamps, envelope ids) never start again: ``fresh_ids`` changes
        nothing."""
        await self._stop()
        await self._start(self.reopened())

    async def _start(self, store: Store) -> None:
        from bot.channels.slack import SlackBot
        from bot.channels.slack.start import Secrets

        http = self.mode == "http"
        secrets = Secrets(
            self.fake.bot_token,
            app_token=None if http else self.fake.app_token,
            signing_secret=self.fake.signing_secret if http else None,
        )
        bot = SlackBot(store, self.config, secrets=secrets, api_url=self.fake.api_url)
        await bot.start()
        self.fake.http_target = f"http://127.0.0.1:{self.port}/slack/events" if http else None
        self.bot_object = bot

    # ------------------------------------------------------------------ users acting

    def user_id(self, user: str) -> str:
        return IDS[user]

    def command_text(self, name: str, *args: str) -> str:
        return " ".join(["/hilbot", name, *args])

    async def _replies(self, chat: str, before: int, replies: int, what: str) -> list[Message]:
        await self.until(lambda: len(self.messages(chat)) >= before + replies, what=what)
        return self.messages(chat)[before:]

    async def say(
        self,
        user: str,
        text: str,
        chat: str | None = None,
        replies: int = 1,
        reply_to: Message | None = None,
    ) -> list[Message]:
        chat = chat or user
        before = len(self.messages(chat))
        modal = self._modal_for(user, reply_to)
        if modal is not None:  # a note modal is open: what the user types goes into it
            self.fake.submit_view(IDS[user], modal, text=text)
        elif chat == GROUP:
            self.fake.message_channel(IDS[user], IDS[GROUP], text)
        else:
            self.fake.message_im(IDS[user], text, thread_ts=reply_to.id if reply_to else None)
        return await self._replies(chat, before, replies, f"reply to {text[:60]!r}")

    def _modal_for(self, user: str, reply_to: Message | None) -> str | None:
        if reply_to is not None and reply_to.id.startswith("V"):
            return reply_to.id
        open_ = [
            v for v in self.fake.open_views(IDS[user]) if v.get("callback_id") == "hilbot_note"
        ]
        return open_[-1]["id"] if open_ and reply_to is None else None

    async def command(
        self, user: str, name: str, *args: str, chat: str | None = None, replies: int = 1
    ) -> list[Message]:
        chat = chat or user
        before = len(self.messages(chat))
        delivery = self.fake.slash(
            IDS[user], " ".join([name, *args]), channel_id=self._conversation(chat)
        )
        await delivery.wait_acked()
        return await self._replies(
            chat, before, replies, f"reply to {self.command_text(name, *args)[:60]!r}"
        )

    async def tap_data(
        self, user: str, message: Message, data: str, chat: str | None = None
    ) -> Answer:
        channel = self._conversation(chat or message.chat)
        before = len(self.fake.ephemerals(channel, IDS[user]))
        dm_before = len(self._ephemerals_in_dm(user, 0))
        action = None if any(b.data == data for b in self.now(message).buttons) else "hilbot:0"
        self._last_click = self.fake.click(IDS[user], channel, message.id, data, action_id=action)
        await self._last_click.wait_acked()
        said = self.fake.ephemerals(channel, IDS[user])[before:] + self._ephemerals_in_dm(
            user, dm_before
        )
        return Answer(unescape(said[-1]["text"]), True) if said else Answer("", False)

    def _ephemerals_in_dm(self, user: str, before: int) -> list[dict]:
        """Ephemerals to the user in their own DM with the app (where an alert goes when the user is
        not in the conversation they clicked in, e.g. a forwarded card)."""
        return self.fake.ephemerals(self.fake.dm(IDS[user]), IDS[user])[before:]

    async def redeliver_last_tap(self) -> None:
        again = self.fake.redeliver(self._last_click)
        await again.wait_acked()
        await self.settle()

    async def tap_and_crash(self, user: str, message: Message, label: str) -> None:
        [button] = [b for b in self.now(message).buttons if b.label == label]

        def die(
            delivery: Any,
        ) -> None:  # in the server's thread, as the ack arrives: the click is stored by now
            self.fake.outage()

        self.fake.on_ack = die
        try:
            click = self.fake.click(
                IDS[user], self._conversation(message.chat), message.id, button.data
            )
            await click.wait_acked()
            await self._stop()
        finally:
            self.fake.on_ack = None
            self.fake.clear_faults()
        await self._start(self.reopened())

    # ------------------------------------------------------------------ what users see

    def _message(self, chat: str, raw: dict) -> Message:
        blocks = raw.get("blocks") or []
        text = flatten(blocks) if blocks else unescape(raw.get("text", ""))
        return Message(chat, raw["ts"], text, buttons_of(blocks), raw.get("edits", 0))

    def _modal(self, chat: str, view: dict) -> Message:
        return Message(
            chat,
            view["id"],
            flatten(view.get("blocks") or []),
            buttons_of(view.get("blocks") or []),
            view.get("updates", 0),
        )

    def messages(self, chat: str) -> list[Message]:
        channel = self._conversation(chat)
        shown = [
            (m["ts"], self._message(chat, m))
            for m in self.fake.messages(channel)
            if not m.get("files")
        ]
        if chat != GROUP:
            shown += [
                (v["opened_ts"], self._modal(chat, v))
                for v in self.fake.views
                if v["type"] == "modal" and v["user"] == IDS[chat]
            ]
        return [m for _, m in sorted(shown, key=lambda pair: float(pair[0]))]

    def now(self, message: Message) -> Message:
        if message.id.startswith("V"):
            return self._modal(message.chat, self.fake.view(message.id))
        return self._message(
            message.chat, self.fake.message(self._conversation(message.chat), message.id)
        )

    def preformatted(self, message: Message) -> list[str]:
        raw = self.fake.message(self._conversation(message.chat), message.id)
        texts = [(b.get("text") or {}).get("text", "") for b in raw.get("blocks") or []]
        fence = "```"
        return [
            unescape(t[len(fence) : -len(fence)])
            for t in texts
            if len(t) > 2 * len(fence) and t.startswith(fence) and t.endswith(fence)
        ]

    def asks_for_reply(self, message: Message) -> bool:
        """A modal with a text input (Slack's way to ask for a note)."""
        if not message.id.startswith("V"):
            return False
        view = self.fake.view(message.id)
        return view["status"] == "open" and any(
            b.get("type") == "input" for b in view.get("blocks", [])
        )

    def uploads(self) -> list[tuple[str, bytes]]:
        return [(self._name(u.channel), u.data) for u in self.fake.uploads]

    async def settle(self, quiet: float = 0.2, timeout: float = 5.0) -> None:
        """Wait until no Web API call has arrived for ``quiet`` seconds."""

        def last() -> float:
            return max((c.at for c in list(self.fake.calls)), default=0.0)

        await self.until(
            lambda: time.monotonic() - last() >= quiet, what="the bot to go quiet", timeout=timeout
        )

    # ------------------------------------------------------------------ the platform misbehaving

    def on_answer(self, check: Callable[[], None]) -> None:
        def acked(delivery: Any) -> None:
            if delivery.payload.get("type") == "block_actions":
                check()

        self.fake.on_ack = acked

    def refuse_next_card(self) -> None:
        self.fake.fail_next(
            "chat.postMessage",
            error="invalid_blocks",
            match=lambda params: "actions" in json.dumps(params.get("blocks") or ""),
        )

    # ------------------------------------------------------------------ the schedule

    def digest_config(self, chats: Sequence[str], **schedule: Any) -> str:
        lines = [f"chats = {json.dumps([self._conversation(c) for c in chats])}"]
        lines += [f"{key} = {json.dumps(value)}" for key, value in schedule.items()]
        return "[slack.digest]\n" + "\n".join(lines)
