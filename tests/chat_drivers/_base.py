"""What every platform's driver does the same way: the bot's lifetime, tapping by label, waiting,
the log."""

from __future__ import annotations

import contextlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Sequence

from evaluation import Store, load_config

from . import ADMIN, ALICE, BOB, Answer, Message


class BaseDriver:
    """The platform-neutral half of a driver (see :class:`tests.chat_drivers.Driver`); a platform
    adds the rest."""

    fake: Any
    tmp_path: Path
    store: Store | None = None
    reopened_stores: list[Store] | None = None
    """The stores :meth:`reopened` made for restarts (closed when the bot stops for good)."""
    config: Any = None
    bot_object: Any = None
    """The running bot (platform tests may look inside it; the suite never does)."""

    # -- what a platform provides
    def write_config(self, extra: str, reviewers: Sequence[str], admins: Sequence[str]) -> Path:
        raise NotImplementedError

    async def _start(self, store: Store) -> None:
        raise NotImplementedError

    def now(self, message: Message) -> Message:
        raise NotImplementedError

    async def tap_data(
        self, user: str, message: Message, data: str, chat: str | None = None
    ) -> Answer:
        raise NotImplementedError

    def messages(self, chat: str) -> list[Message]:
        raise NotImplementedError

    # -- the bot
    @contextlib.asynccontextmanager
    async def bot(
        self,
        store: Store,
        extra: str = "",
        *,
        reviewers: Sequence[str] = (ALICE, BOB),
        admins: Sequence[str] = (ADMIN,),
    ) -> AsyncIterator[Any]:
        self.store, self.config = store, load_config(self.write_config(extra, reviewers, admins))
        await self._start(store)
        try:
            yield self
        finally:
            await self._stop()
            for reopened in self.reopened_stores or []:
                reopened.close()
            self.reopened_stores = None

    def reopened(self) -> Store:
        """The data directory opened again, as a new process would, on the same backend (the
        JSONL files, or the shared database whose read copy it is)."""
        assert self.store is not None
        store = Store(self.store.root, url=self.store.url)
        self.reopened_stores = [*(self.reopened_stores or []), store]
        return store

    async def _stop(self) -> None:
        if self.bot_object is not None:
            bot, self.bot_object = self.bot_object, None
            await bot.stop()

    def next_digest(self, after: datetime) -> datetime | None:
        return self.bot_object.scheduler.next_digest(after)

    async def digest_now(self) -> None:
        await self.bot_object.scheduler.digest()

    # -- users acting and seeing
    async def tap(self, user: str, message: Message, label: str, chat: str | None = None) -> Answer:
        shown = self.now(message)
        exact = [b for b in shown.buttons if b.label == label]
        near = exact or [b for b in shown.buttons if b.label.startswith(label)]
        assert len(near) == 1, f"no single button {label!r}; buttons: {shown.labels}"
        return await self.tap_data(user, message, near[0].data, chat=chat)

    def cards(self, chat: str) -> list[Message]:
        return [m for m in self.messages(chat) if m.buttons]

    def labels(self, message: Message) -> list[str]:
        return self.now(message).labels

    async def shows(self, message: Message, text: str) -> Message:
        await self.until(lambda: text in self.now(message).text, what=f"{text!r} in the message")
        return self.now(message)

    async def labelled(self, message: Message, label: str) -> Message:
        await self.until(lambda: label in self.labels(message), what=f"a {label!r} button")
        return self.now(message)

    async def until(
        self, predicate: Callable[[], Any], what: str = "condition", timeout: float = 5.0
    ) -> None:
        await self.fake.until(predicate, timeout=timeout, what=what)

    # -- the log
    def records(self, kind: str | None = None) -> list[dict]:
        """ratings.jsonl's lines; with a shared store, its read copy brought up to date first
        (the bot commits a tap to the database before answering it)."""
        assert self.store is not None, "start the bot first"
        self.store.sync()
        path = self.store.ratings.path
        rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        return [r for r in rows if kind is None or r["type"] == kind]
