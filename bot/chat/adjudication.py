"""``/adjudicate`` in a chat (admins only): the disputed items one card at a time, through the
adjudication engine (:mod:`bot.adjudication`).

The card shows every reviewer's label, tags and notes and the AI's verdict (it is not blind). A
tap on a label records the consensus; Exclude shows the reasons (one more tap; "other" asks for
the reason as a reply); Leave passes the item for now. Each decision is fsynced before the tap is
answered, then the card shows what was decided and the next one is sent.

Buttons carry ``A<op><n>|run|item|dimension`` (≤ 64 bytes), checked on the server: the run, the
item, the dimension and the value must exist, and only an admin's tap is taken. A reason asked
for as a reply is waited for in memory: if the bot restarts first, the item is simply not
excluded yet.

What this needs of the chat flow it runs in is :class:`Host`: the flow passes itself.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Protocol

from evaluation import HilbotError, Reviewer

from .. import render
from ..adjudication import AdjudicationSession, Phase, Turn
from ..cards import Action, Card
from ..review import ReviewEngine
from . import texts
from .port import ROW, Chat, ChatPort, Choice, Command, Keyboard, Tap, Text, User
from .sessions import Refused, Sessions, run_key, token_index

_log = logging.getLogger("hilbot.chat")

PREFIX = "A"
"""What every adjudication token starts with (review tokens start with a lower-case letter)."""
_OPS = {"rate": "r", "exclude": "x", "skip": "s", "guide": "h", "view_full": "v"}
_KINDS = {code: kind for kind, code in _OPS.items()}


class Admins(Protocol):
    """Who is an admin (:class:`~bot.chat.flow.Access`)."""

    def admin(self, user: User) -> bool: ...


class Host(Protocol):
    """What adjudication uses of the chat flow it runs in (:class:`~bot.chat.flow.ChatFlow`)."""

    @property
    def engine(self) -> ReviewEngine: ...

    @property
    def port(self) -> ChatPort: ...

    @property
    def sessions(self) -> Sessions: ...

    @property
    def access(self) -> Admins: ...

    @property
    def prefix(self) -> str: ...

    async def say(self, chat: Chat, text: str) -> str:
        """Send a plain text to a chat."""
        ...

    def spawn(self, work: Awaitable[Any], context: object = None) -> None:
        """Run ``work`` in the background; a failure goes to the flow's error hook."""
        ...


class ChatAdjudication:
    """Every admin's adjudication sessions on one chat bot."""

    def __init__(self, flow: Host):
        self.flow = flow
        self._sessions: dict[tuple[str, str, str], AdjudicationSession] = {}
        self._reasons: dict[tuple[str, str], AdjudicationSession] = {}
        """(admin key, chat id) → the session waiting for an exclusion reason typed as a reply."""

    @property
    def engine(self) -> ReviewEngine:
        return self.flow.engine

    def session(self, admin: Reviewer, run_id: str, dimension: str | None) -> AdjudicationSession:
        """The admin's session on a run and dimension (made once); HilbotError with the fix when
        they do not exist."""
        run_id, dimension = self.flow.sessions.target(run_id, dimension)
        key = (admin.key, run_id, dimension)
        if key not in self._sessions:
            self._sessions[key] = AdjudicationSession(
                self.engine, run_id, dimension, admin, channel=self.flow.port.platform
            )
        return self._sessions[key]

    # ------------------------------------------------------------------ the command

    async def command(self, command: Command, admin: Reviewer) -> None:
        """``/adjudicate <run-id> [dimension]``: say how many items are disputed and send the
        first."""
        if not command.args:
            await self.flow.say(command.chat, texts.usage(self.flow.prefix, "adjudicate"))
            return
        try:
            dimension = command.args[1] if len(command.args) > 1 else None
            session = self.session(admin, command.args[0], dimension)
        except HilbotError as exc:
            await self.flow.say(command.chat, texts.error(exc, self.flow.prefix))
            return
        async with self.flow.sessions.lock(admin):
            turn = session.start()
        await self.flow.say(
            command.chat,
            f"Adjudicating {session.run_id} · {session.dimension}: "
            f"{len(session.queue())} disputed items, largest "
            f"disagreement first.",
        )
        await self._next(session, turn, command.chat)

    async def _next(self, session: AdjudicationSession, turn: Turn, chat: Chat) -> None:
        if turn.card is None:
            await self.flow.say(
                chat, f"No disputed items left in {session.run_id} · {session.dimension}."
            )
            return
        await self.flow.port.send_card(chat, turn.card, self.keyboard(session, turn.card))

    # ------------------------------------------------------------------ buttons

    def keyboard(self, session: AdjudicationSession, card: Card) -> Keyboard:
        """The card's buttons (no Quit in a chat), phone-sized rows."""
        rows: Keyboard = []
        for row in card.buttons:
            choices = [
                Choice(b.label, self.token(session, card, b.action))
                for b in row
                if b.action.kind in _OPS
            ]
            rows.extend(choices[i : i + ROW] for i in range(0, len(choices), ROW))
        return [row for row in rows if row]

    def token(self, session: AdjudicationSession, card: Card, action: Action) -> str:
        run = self.engine.run(card.run_id)
        value = ""
        if action.kind == "rate":
            value = str([o.value for o in session.scale.options].index(action.value or ""))
        elif action.kind == "exclude" and action.value is not None:
            value = str(session.reasons.index(action.value))
        return (
            f"{PREFIX}{_OPS[action.kind]}{value}|{run_key(card.run_id)}|"
            f"{run.index(card.item_id)}|{run.header.dimensions.index(card.dimension)}"
        )

    def resolve(
        self, token: str, admin: Reviewer, delivery_id: str
    ) -> tuple[AdjudicationSession, Action]:
        """A token checked against the runs and the configuration; :class:`Refused` when it does
        not hold."""
        try:
            op, key, index, dim = token[len(PREFIX) :].split("|")
            kind = _KINDS[op[0]]
            run = self.engine.run(self.flow.sessions.run_for(key))
            item, dimension = run.items[token_index(index)], run.header.dimensions[token_index(dim)]
            session = self.session(admin, run.run_id, dimension)
            value = self._value(session, kind, op[1:])
        except (ValueError, KeyError, IndexError, HilbotError):
            raise Refused(f"unreadable adjudication button {token!r}") from None
        return session, Action(kind, value, item.id, delivery_id)  # type: ignore[arg-type]

    @staticmethod
    def _value(session: AdjudicationSession, kind: str, digits: str) -> str | None:
        if kind == "rate":
            return session.scale.options[token_index(digits)].value
        if kind == "exclude" and digits:
            return session.reasons[token_index(digits)]
        if digits:
            raise ValueError(digits)
        return None

    # ------------------------------------------------------------------ taps and replies

    async def on_tap(self, tap: Tap, user: Reviewer) -> None:
        """An adjudication button: admins only; the decision is on disk before the tap is
        answered."""
        if not self.flow.access.admin(tap.user):
            _log.warning("refused an adjudication tap from %s (not an admin)", user.key)
            return await self.flow.port.answer(tap, "Only admins can adjudicate.", alert=True)
        try:
            session, action = self.resolve(tap.data, user, f"cq:{tap.event_id}")
        except Refused as exc:
            _log.warning("refused tap from %s: %s", user.key, exc)
            return await self.flow.port.answer(tap, texts.STALE_BUTTON, alert=True)
        session.reviewer = user
        async with self.flow.sessions.lock(user):
            session.item_id = action.item_id  # the card tapped is the item acted on
            turn = await session.aact(action)
        await self.flow.port.answer(tap, _answer(turn, action), alert=bool(turn.alert))
        self.flow.spawn(self._after(session, turn, action, tap), tap)

    async def _after(
        self, session: AdjudicationSession, turn: Turn, action: Action, tap: Tap
    ) -> None:
        port = self.flow.port
        if turn.detail:
            return await port.show_full(tap, turn.detail)
        if turn.phase == Phase.REASON_TEXT:
            self._reasons[(session.reviewer.key, tap.chat.id)] = session
            await port.ask_note(tap, "Why exclude it? Reply with the reason.")
        elif turn.decided is not None:
            await port.edit_card(
                tap.chat, tap.message_id, session.final_card(turn.decided), [], final=True
            )
            await self._next(session, turn, tap.chat)
        elif turn.card is not None and turn.card.item_id == action.item_id:
            await port.edit_card(
                tap.chat, tap.message_id, turn.card, self.keyboard(session, turn.card), final=False
            )
        elif action.kind == "skip":
            await port.edit_card(tap.chat, tap.message_id, _left(session, action), [], final=True)
            await self._next(session, turn, tap.chat)

    async def on_text(self, text: Text, user: Reviewer) -> bool:
        """A reply giving an exclusion reason; False when no reason was asked for in this chat."""
        session = self._reasons.pop((user.key, text.chat.id), None)
        if session is None:
            return False
        async with self.flow.sessions.lock(user):
            delivery = f"msg:{text.chat.id}:{text.message_id}"
            turn = await session.aact(Action("text", text.text, session.item_id, delivery))
        if turn.decided is None:
            await self.flow.say(text.chat, turn.alert or "Not excluded.")
            return True
        await self.flow.say(text.chat, f"Excluded: {turn.decided.reason}")
        await self._next(session, turn, text.chat)
        return True


def _answer(turn: Turn, action: Action) -> str:
    if turn.alert:
        return turn.alert
    if turn.decided is not None:
        d = turn.decided
        said = f"Consensus: {d.judgment}" if d.decision == "consensus" else f"Excluded: {d.reason}"
        return ("Already recorded — " if turn.repeated else "") + said
    return {
        "skip": "Left for later",
        "guide": "Guide",
        "view_full": "Full item",
        "exclude": "Why exclude it?",
    }.get(action.kind, "OK")


def _left(session: AdjudicationSession, action: Action) -> Card:
    item = session.run.item(action.item_id or "")
    query = render.one_line(item.query.query) if item else action.item_id
    title = f'{session.run_id} · {session.dimension} · "{query}"'
    return Card(
        session.run_id, action.item_id or "", session.dimension, title, (), "Left for later.", ()
    )


__all__ = ["PREFIX", "Admins", "ChatAdjudication", "Host"]
