"""The chat review flow, once for every platform: commands, taps, notes, dealing, push, status.

A tap is resolved and checked (:class:`~bot.chat.sessions.Sessions`), the reviewer's lock is taken,
the engine acts on the item — its records are fsynced — and only then is the tap answered.
Editing the card and dealing the next one run in the background, so the handler is free for
the next event at once. Everything the flow needs after a restart is in the log: open cards,
which message shows which item, open note prompts, and the chat each session deals into.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Awaitable, Callable

from evaluation import HilbotError, Reviewer

from .. import render
from ..cards import Action, Card
from ..progress import run_progress
from ..review import ReviewEngine, ReviewSession, State, Step
from . import texts
from .adjudication import PREFIX as ADJUDICATION
from .adjudication import ChatAdjudication
from .digest import post_digest, send_digest
from .port import ROW, TAG_ROW, Chat, ChatPort, Choice, Command, Keyboard, PortError, Tap, Text
from .sessions import Expired, Refused, Sessions, Unreadable
from .sessions import Tap as Resolved

_log = logging.getLogger("hilbot.chat")

STOP_GRACE_S = 5.0
"""How long a stopping bot lets cards and edits under way go out before it drops the rest."""
HOME_RUNS = 20
"""Runs a reviewer's overview lists (the newest)."""
ANSWERS_FIRST_S = 0.5
"""The longest a tap's card work waits for other taps to be answered first."""
SHARED_WAIT_S = 2.0
"""With a shared store: how long a tap on a card this replica has not seen logged waits for the
replica that dealt it to log its delivery."""
CHAT_LABELS = {"next": "✓ Done"}
"""Engine labels that read differently in a chat (the next card is already there)."""

ErrorHook = Callable[[BaseException, object], None]


@dataclass(frozen=True)
class Access:
    """Who may use the bot: reviewer and admin ids of one platform (admins may review too)."""

    reviewers: frozenset[str]
    admins: frozenset[str]

    def reviewer(self, platform: str, user: Any) -> Reviewer | None:
        """The user as a reviewer, if allow-listed."""
        if user.id not in self.reviewers | self.admins:
            return None
        return Reviewer(platform=platform, id=user.id, name=user.name)

    def admin(self, user: Any) -> bool:
        return user.id in self.admins


class ChatFlow:
    """Every reviewer of one bot on one platform, over one review engine."""

    def __init__(
        self,
        engine: ReviewEngine,
        port: ChatPort,
        access: Access,
        *,
        on_error: ErrorHook | None = None,
    ):
        self.engine = engine
        self.port = port
        self.access = access
        self.sessions = Sessions(engine, port.platform)
        self.on_error = on_error or _log_error
        self._out: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._primed: set[str] = set()
        self._asking: set[tuple[str, str, str, str]] = set()
        """Items judged for the first time whose cards still ask (reviewer, run, dimension, item):
        completing one may end its session (:meth:`_ends`)."""
        self._answering = 0
        """Taps received and not yet answered."""
        self._all_answered = asyncio.Event()
        self._all_answered.set()
        """Growing runs already dealt into their sessions since start (see :meth:`refresh`)."""
        self._commands: dict[str, Callable[[Command, Reviewer], Awaitable[None]]] = {
            "start": self._start,
            "help": self._help,
            "runs": self._runs,
            "review": self._review,
            "next": self._next,
            "status": self._status,
            "push": self._push,
            "digest": self._digest,
        }
        self.adjudication = ChatAdjudication(self)
        self._commands["adjudicate"] = self.adjudication.command

    @property
    def prefix(self) -> str:
        return self.port.prefix

    # ------------------------------------------------------------------ background work

    def spawn(self, work: Awaitable[Any], context: object = None) -> None:
        """Run ``work`` in the background; a failure goes to the error hook."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(lambda t: self._finished(t, context))

    def _finished(self, task: asyncio.Task[Any], context: object) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.on_error(exc, context)

    async def close(self, grace: float | None = None) -> None:
        """Let background work finish (edits and cards already under way), for at most ``grace``
        seconds.

        What is left then is cancelled: a card not sent is not in the log as delivered, so it is
        dealt again when its reviewer next asks (or the run next grows). A stop never waits for a
        whole push to drain at the platform's rate.
        """
        deadline = None if grace is None else asyncio.get_running_loop().time() + grace
        while self._tasks:
            left = None if deadline is None else deadline - asyncio.get_running_loop().time()
            if left is not None and left <= 0:
                return await self._cancel()
            await asyncio.wait(list(self._tasks), timeout=left)

    async def _cancel(self) -> None:
        tasks = list(self._tasks)
        _log.info(
            "stopping: %d card(s) or edit(s) not sent yet are dropped; they are dealt again later",
            len(tasks),
        )
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------------ commands

    async def on_command(self, command: Command) -> None:
        """A command from a user (strangers are told their id and how to be added; nothing else)."""
        reviewer = self.access.reviewer(self.port.platform, command.user)
        if reviewer is None:
            _log.warning(
                "refused %s%s from user %s (not allow-listed)",
                self.prefix,
                command.name,
                command.user.id,
            )
            refusal = texts.refusal(self.port.title, self.port.platform, command.user.id)
            await self.say(command.chat, refusal)
            return
        handler = self._commands.get(command.name)
        if handler is None:
            await self.say(command.chat, f"Unknown command — see {self.prefix}help")
            return
        await self.engine.catch_up()
        if dict((n, a) for n, _, a in texts.COMMANDS).get(command.name) and not self.access.admin(
            command.user
        ):
            await self.say(command.chat, f"Only admins can {self.prefix}{command.name}.")
            return
        await handler(command, reviewer)

    async def say(self, chat: Chat, text: str, **kw: Any) -> str:
        """Send a plain text to a chat (``kw``: the port's ``send_text`` options); its message
        id."""
        return await self.port.send_text(chat, text, **kw)

    async def _start(self, command: Command, reviewer: Reviewer) -> None:
        await self.say(command.chat, texts.welcome(self.prefix, self.port.title, command.user.id))

    async def _help(self, command: Command, reviewer: Reviewer) -> None:
        await self.say(command.chat, texts.help_text(self.prefix))

    async def _runs(self, command: Command, reviewer: Reviewer) -> None:
        from ..listing import run_listing

        listing = run_listing(self.engine.store, [], self.engine.config.review.k)
        await self.say(command.chat, listing, code=True)

    async def _review(self, command: Command, reviewer: Reviewer) -> None:
        if not command.args:
            await self.say(command.chat, texts.usage(self.prefix, "review"))
            return
        try:
            session = self.sessions.get(
                reviewer, command.args[0], command.args[1] if len(command.args) > 1 else None
            )
        except HilbotError as exc:
            await self.say(command.chat, texts.error(exc, self.prefix))
            return
        await self.sessions.started(session, command.chat.id, group=command.chat.group)
        await self.say(command.chat, self._progress_line(session, "Reviewing"))
        if not await self.fill(session, command.chat):
            await self._nothing_new(session, command.chat)

    async def _next(self, command: Command, reviewer: Reviewer) -> None:
        session = self.sessions.active(reviewer)
        if session is None:
            await self.say(
                command.chat, f"Start with {self.prefix}review <run-id> — see {self.prefix}runs"
            )
            return
        async with self.sessions.lock(reviewer):
            held = self.sessions.open_cards(session, group=command.chat.group)
            card = session.card(held[0]) if held else None
        if card is not None:
            await self._send_card(session, card, command.chat)
        elif not await self.fill(session, command.chat):
            await self._nothing_new(session, command.chat)

    async def _status(self, command: Command, reviewer: Reviewer) -> None:
        lines = [self._progress_line(s) for s in self.sessions.reviewed(reviewer)]
        await self.say(
            command.chat, "\n".join(lines) or f"Nothing reviewed yet — see {self.prefix}runs"
        )

    @staticmethod
    def _progress_line(session: ReviewSession, lead: str | None = None) -> str:
        k = session.engine.config.review.k
        run = run_progress(session.ledger, session.run, session.dimension, k)
        return texts.progress_line(
            session.run_id, session.dimension, session.progress(), lead, str(run)
        )

    async def _push(self, command: Command, reviewer: Reviewer) -> None:
        if not command.args:
            await self.say(command.chat, texts.usage(self.prefix, "push"))
            return
        run_id, dimension = command.args[0], (command.args[1] if len(command.args) > 1 else None)
        try:
            run_id, dimension = self.sessions.target(run_id, dimension)
        except HilbotError as exc:
            await self.say(command.chat, texts.error(exc, self.prefix))
            return
        reviewers = sorted(self.access.reviewers)
        await self.say(command.chat, f"Pushing {run_id} to {len(reviewers)} reviewers…")
        self.spawn(self.push(run_id, dimension, reviewers, command.chat), command)

    async def push(
        self, run_id: str, dimension: str, reviewers: list[str], report_to: Chat
    ) -> None:
        """Deal first cards to every listed reviewer, in their private chats, and report."""
        sent = await asyncio.gather(*(self._push_one(r, run_id, dimension) for r in reviewers))
        failed = [r for r, n in zip(reviewers, sent) if n is None]
        text = (
            f"Pushed {run_id}: {sum(n or 0 for n in sent)} cards to "
            f"{sum(1 for n in sent if n)} reviewers."
        )
        if failed:
            text += f" Could not reach {', '.join(failed)} (they must start the bot first)."
        await self.say(report_to, text)

    async def _push_one(self, user_id: str, run_id: str, dimension: str) -> int | None:
        reviewer = Reviewer(platform=self.port.platform, id=user_id)
        session = self.sessions.get(reviewer, run_id, dimension)
        try:
            chat = await self.port.private_chat(user_id)
            await self.sessions.started(session, chat.id, group=False)
            return await self.fill(session, chat, strict=True)
        except PortError as exc:
            _log.warning("could not push %s to %s: %s", run_id, user_id, exc)
            return None

    async def _digest(self, command: Command, reviewer: Reviewer) -> None:
        await self.post_digest([command.chat])

    def home(self, user: Any) -> tuple[str, list[tuple[str, str, str]]]:
        """A reviewer's overview: a line of introduction, then for each recent run its progress
        line, "Start" or "Resume", and ``run|dimension`` to start it with. A stranger gets the
        refusal and no runs."""
        reviewer = self.access.reviewer(self.port.platform, user)
        if reviewer is None:
            return texts.refusal(self.port.title, self.port.platform, user.id), []
        rows = []
        for run_id in self.engine.store.run_ids()[:HOME_RUNS]:
            try:
                session = self.sessions.get(reviewer, run_id)
            except HilbotError:
                continue  # a run that cannot be read is listed by `runs`, with its problem
            progress = session.progress()
            started = progress.done or progress.skipped or self.sessions.open_cards(session)
            rows.append(
                (
                    self._progress_line(session),
                    "Resume" if started else "Start",
                    f"{run_id}|{session.dimension}",
                )
            )
        intro = (
            "Runs to review, newest first. Cards arrive in your private chat with the bot; "
            f"see {self.prefix}help."
        )
        return intro if rows else f"No runs yet — see {self.prefix}runs", rows

    # ------------------------------------------------------------------ taps

    async def on_tap(self, tap: Tap) -> None:
        """A button: check it, store what it does, answer; then, in the background, edit the card
        and deal."""
        self._answering += 1
        self._all_answered.clear()
        try:
            await self._on_tap(tap)
        finally:
            self._answering -= 1
            if not self._answering:
                self._all_answered.set()

    async def _on_tap(self, tap: Tap) -> None:
        reviewer = self.access.reviewer(self.port.platform, tap.user)
        if reviewer is None:
            _log.warning("refused a tap from user %s (not allow-listed)", tap.user.id)
            return await self.port.answer(tap, texts.REFUSED_TAP, alert=True)
        await self.engine.catch_up()
        if tap.data.startswith(ADJUDICATION):
            return await self.adjudication.on_tap(tap, reviewer)
        try:
            resolved = await self._resolve(tap, reviewer)
        except Refused as exc:
            _log.warning("refused tap from %s: %s", reviewer.key, exc)
            text = texts.EXPIRED_CARD if isinstance(exc, Expired) else texts.STALE_BUTTON
            return await self.port.answer(tap, text, alert=True)
        async with self.sessions.lock(reviewer):
            was_open = resolved.item_id in self.sessions.open_cards(resolved.session)
            step = await self.sessions.act(resolved.session, resolved.action)
            ends = self._ends(resolved.session, resolved.item_id, step, was_open)
        text, alert = self._answer(step, resolved, tap.chat.group)
        await self.port.answer(tap, text, alert=alert)  # the records are on disk by now
        self.spawn(self._after_tap(step, resolved, tap, ends), tap)

    async def _resolve(self, tap: Tap, reviewer: Reviewer) -> Resolved:
        """The tap's button checked against the log. With a shared store, a card dealt by another
        replica may be tapped before its delivery is in this replica's copy: it looks again, for
        up to ``SHARED_WAIT_S``, before refusing."""
        clock = asyncio.get_running_loop().time
        deadline = clock() + SHARED_WAIT_S  # the time catching up takes counts (Slack: 3 s)
        while True:
            try:
                return self.sessions.resolve(
                    tap.data,
                    reviewer,
                    (tap.chat.id, tap.message_id),
                    f"cq:{tap.event_id}",
                    group=tap.chat.group,
                )
            except (Expired, Unreadable):
                raise
            except Refused:
                if not self.engine.store.shared or clock() >= deadline:
                    raise
            await asyncio.sleep(0.05)
            await self.engine.catch_up()

    async def _answers_first(self) -> None:
        """Wait (at most ``ANSWERS_FIRST_S``) until every tap received has been answered.

        Answering is what a reviewer waits for; editing the card and dealing the next one can
        wait a moment (they queue behind the platform's flood limits anyway). When hundreds of
        taps arrive at once, their card work would otherwise take the CPU the answers need.
        """
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._all_answered.wait(), ANSWERS_FIRST_S)

    def _answer(self, step: Step, tap: Resolved, group: bool) -> tuple[str, bool]:
        if step.alert:
            return step.alert, True
        if tap.action.kind == "rate" and step.repeated:
            text = f"Already recorded: {tap.action.value}"
        else:
            text = texts.action_label(tap.action)
        if tap.action.kind == "toggle" and step.card is not None:
            text = (
                f"{tap.action.value}: {'on' if tap.action.value in step.card.concerns else 'off'}"
            )
        if not (group and step.effective):
            return text, False  # no card is built here: answering waits for nothing
        shown = step.finished or step.card
        if shown is not None and shown.item_id == tap.item_id:
            return " · ".join([text, *render.reveal_lines(shown)]), True  # only the tapper sees it
        return text, False

    async def _after_tap(self, step: Step, tap: Resolved, event: Tap, ends: bool) -> None:
        if step.detail:  # at once: a modal must open within seconds of the tap
            await self.port.show_full(event, step.detail)
        if step.state in (
            State.NOTE,
            State.ANSWER,
        ):  # a note, or a follow-up's typed answer: the same reply prompt
            return await self._ask_note(tap.session, tap.item_id, event, step.prompt)
        await self._answers_first()
        async with self._output(tap.session.reviewer):
            await self._show(step, tap, event)
        if step.effective or ends:
            session, chat = self._dealer(tap, event)
            if not await self.fill(session, chat) and ends and self._complete(session):
                await self._done(session, chat)

    def _complete(self, session: ReviewSession) -> bool:
        """Whether the session is finished and none of its cards still asks something (tags, a
        question, why it was skipped): a tap's work that runs late must not end a session whose
        last card is still being answered."""
        mine = (session.reviewer.key, session.run_id, session.dimension)
        asking = any(key[:3] == mine for key in self._asking)
        return not asking and self.sessions.finished(session)

    def _ends(self, session: ReviewSession, item_id: str, step: Step, was_open: bool) -> bool:
        """Whether the action completed an item's first judgment (so that the session may end
        here): it judged an open item and asks nothing more, or it closed what a card asked after
        that judgment (the concern tags, a question, why it was skipped)."""
        key = (session.reviewer.key, session.run_id, session.dimension, item_id)
        if step.make_finished is None:
            if was_open and step.effective:  # judged; the card asks more before it is complete
                self._asking.add(key)
            return False
        asked = key in self._asking
        self._asking.discard(key)
        return was_open or asked

    async def _show(self, step: Step, tap: Resolved, event: Tap) -> None:
        if event.chat.group or not (step.effective or tap.action.kind in ("next", "undo")):
            return  # a group's card stays blind for everyone else
        card = step.finished if step.finished is not None else step.card
        if card is not None and card.item_id == tap.item_id:
            await self.port.edit_card(
                event.chat,
                event.message_id,
                card,
                self.keyboard(card, group=False),
                final=step.finished is not None,
            )

    def _dealer(self, tap: Resolved, event: Tap) -> tuple[ReviewSession, Chat]:
        """Whose window a judgment frees, and where the next card goes (in a group: the group's
        stream)."""
        session = tap.session
        if event.chat.group:
            shown = self.sessions.owner((event.chat.id, event.message_id))
            owner = shown.reviewer if shown is not None else session.reviewer
            return self.sessions.get(owner, session.run_id, session.dimension), event.chat
        stream = self.sessions.stream(session)
        return session, Chat(*stream) if stream else event.chat

    async def _ask_note(
        self, session: ReviewSession, item_id: str, event: Tap, about: str | None = None
    ) -> None:
        """Ask for the note's text (or ``about``: a follow-up's answer); the prompt is logged before
        the reviewer's answer is looked at."""
        item = session.run.item(item_id)
        assert item is not None, item_id  # a tap's item is in its run
        async with self.sessions.lock(session.reviewer):
            prompt_id = await self.port.ask_note(event, texts.clip(about or item.query.query, 200))
            await self.sessions.delivered(
                session,
                item_id,
                event.chat.id,
                prompt_id,
                kind="note_prompt",
                group=event.chat.group,
            )

    # ------------------------------------------------------------------ notes

    async def on_text(self, text: Text) -> None:
        """A text: the answer to a note prompt, stored as that item's note."""
        reviewer = self.access.reviewer(self.port.platform, text.user)
        if reviewer is None:
            if not text.chat.group:
                refusal = texts.refusal(self.port.title, self.port.platform, text.user.id)
                await self.say(text.chat, refusal)
            return
        await self.engine.catch_up()
        if await self.adjudication.on_text(text, reviewer):
            return
        async with self.sessions.lock(reviewer):
            prompt = self.sessions.note_target(reviewer, text.chat.id, text.reply_to)
            if prompt is not None:
                session = self.sessions.get(reviewer, prompt.run_id, prompt.dimension)
                was_open = prompt.item_id in self.sessions.open_cards(session)
                action = Action(
                    "text", text.text, prompt.item_id, f"msg:{text.chat.id}:{text.message_id}"
                )
                step = await self.sessions.act(session, action)
                ends = self._ends(session, prompt.item_id, step, was_open)
        if prompt is None:
            if not text.chat.group:
                await self.say(
                    text.chat, "Tap a card's buttons to rate; for a note tap “Add note” first."
                )
            return
        self.spawn(self._after_note(session, prompt, step, ends, text.chat), text)

    async def _after_note(
        self, session: ReviewSession, prompt: Any, step: Step, ends: bool, said_in: Chat
    ) -> None:
        """Say the note is saved, show it on the card, deal (the note is on disk: the platform may
        be acknowledged)."""
        saved = (step.said or "📝 Note saved.") if step.stored else step.alert or "Already saved."
        await self.say(said_in, saved)
        card_at = self.sessions.card_at(session, prompt.item_id)
        card = step.finished if step.finished is not None else step.card
        if card_at is not None and card is not None and not card_at.group and step.effective:
            async with self._output(session.reviewer):
                await self.port.edit_card(
                    Chat(card_at.chat_id),
                    card_at.message_id,
                    card,
                    self.keyboard(card, group=False),
                    final=step.finished is not None,
                )
        chat = Chat(prompt.chat_id, prompt.group)
        if (
            step.effective
            and not await self.fill(session, chat)
            and ends
            and self.sessions.finished(session)
        ):
            await self._done(session, chat)

    # ------------------------------------------------------------------ dealing

    def keyboard(self, card: Card, *, group: bool) -> Keyboard:
        """The card's buttons in phone-sized rows, each carrying its checked token (no Quit in a
        chat)."""
        rows: Keyboard = []
        for row in card.buttons:
            buttons = [b for b in row if b.action.kind != "quit"]
            if group:
                buttons = [b for b in buttons if b.action.kind not in ("toggle", "next")]
            size = (
                TAG_ROW
                if buttons and buttons[0].action.kind in ("toggle", "answer", "skip")
                else ROW
            )  # long labels
            choices = [
                Choice(
                    b.label if b.action.value else CHAT_LABELS.get(b.action.kind, b.label),
                    self.sessions.token(card, b.action),
                )
                for b in buttons
            ]
            rows.extend(choices[i : i + size] for i in range(0, len(choices), size))
        return [row for row in rows if row]

    async def fill(self, session: ReviewSession, chat: Chat, *, strict: bool = False) -> int:
        """Deal and send cards up to the window; returns how many were sent.

        A card the platform refuses is reported to the reviewer in one line and left out; the
        next item is dealt in its place. A card that cannot go out now (the network, the chat)
        is freed to be dealt again later; ``strict`` raises its :class:`PortError` (push reports
        it).
        """
        sent = 0
        while True:
            await self.engine.catch_up()
            async with self.sessions.lock(session.reviewer):
                cards = await self.sessions.adeal(session, group=chat.group)
            if not cards:
                return sent
            for n, card in enumerate(cards):
                try:
                    sent += await self._deliver(session, card, chat)
                except PortError as exc:
                    for left in cards[n:]:
                        self.sessions.undelivered(session, left.item_id)
                    _log.warning(
                        "could not deliver %s/%s to chat %s: %s",
                        session.run_id,
                        card.item_id,
                        chat.id,
                        exc,
                    )
                    if strict:
                        raise
                    return sent

    async def _deliver(self, session: ReviewSession, card: Card, chat: Chat) -> int:
        """Send one card: 1 when sent, 0 when the platform refused it for good (and the reviewer is
        told)."""
        try:
            await self._send_card(session, card, chat)
            return 1
        except PortError as exc:
            if exc.kind != "content":
                raise
            self.sessions.unsendable(session, card.item_id)
            _log.warning(
                "%s refused the card of %s/%s: %s",
                self.port.title,
                session.run_id,
                card.item_id,
                exc,
            )
            await self.say(chat, texts.unsendable(self.port.title, card.title, str(exc)))
            return 0

    async def _send_card(self, session: ReviewSession, card: Card, chat: Chat) -> None:
        async with self._output(session.reviewer):
            message_id = await self.port.send_card(
                chat, card, self.keyboard(card, group=chat.group)
            )
        await self.sessions.delivered(session, card.item_id, chat.id, message_id, group=chat.group)

    async def _nothing_new(self, session: ReviewSession, chat: Chat) -> None:
        held = self.sessions.open_cards(session, group=chat.group)
        await self.say(chat, texts.nothing_new(len(held), self.prefix))

    async def _done(self, session: ReviewSession, chat: Chat) -> None:
        async with self.sessions.lock(session.reviewer):
            step = await session.aact(Action("quit"))  # stores the session's hilReview summary
        assert step.summary is not None  # a quit ending an open session carries it
        closing = session.closing(step.summary)
        await self.say(chat, texts.done(session.run_id, session.dimension, step.summary, closing))

    def _output(self, reviewer: Reviewer) -> asyncio.Lock:
        """Keeps one reviewer's sends and edits in order."""
        return self._out.setdefault(reviewer.key, asyncio.Lock())

    # ------------------------------------------------------------------ background

    async def refresh(self) -> None:
        """Deal the new items of runs still being evaluated into each session's chat (from the log).

        The first refresh deals into every such session, so items that arrived while the bot was
        down are dealt without a command too; later ones only where the run grew.
        """
        freed = await self._expire()
        streams = self.sessions.streams()
        growing = {
            run_id
            for _, run_id, _, _, _ in streams
            if self.engine.store.run_exists(run_id) and self.engine.growing(run_id)
        }
        due = {
            run_id
            for run_id in growing
            if self.engine.refresh(run_id) or run_id not in self._primed
        }
        self._primed |= growing
        for reviewer, run_id, dimension, chat_id, group in streams:
            if run_id in due or run_id in freed:
                await self.fill(
                    self.sessions.get(reviewer, run_id, dimension), Chat(chat_id, group)
                )

    async def _expire(self) -> set[str]:
        """With a shared store: expire the claims past their time and fold what the others stored;
        the runs whose items were freed (their sessions are dealt to again)."""
        if not self.engine.store.shared:
            return set()
        freed = await asyncio.to_thread(self.engine.expire_claims)
        await self.engine.catch_up()
        return freed

    async def post_digest(self, chats: list[Chat], since: datetime | None = None) -> None:
        """Build the digest (off the event loop) and post its text and chart to each chat."""
        await post_digest(self.engine, self.port, chats, since)


def _log_error(exc: BaseException, context: object) -> None:
    import traceback

    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    _log.error("%s\nwhile handling %s", trace, context)


__all__ = ["ROW", "STOP_GRACE_S", "TAG_ROW", "Access", "ChatFlow", "send_digest"]
