"""Review sessions in a chat: many reviewers, cards dealt into chats, taps on any of them.

The engine (:mod:`bot.review`) decides everything about a review; this module adds what a chat
needs around it, for Telegram and Slack alike:

- **Dealing** within a window: a reviewer holds at most ``[review] window`` open cards (dealt,
  not yet judged); each judgment frees a place and the next card is dealt.
- **Deliveries** are logged (a ``delivery`` record per card and note prompt), so after a
  restart the bot knows every open card, which message shows which item and which note prompt
  awaits its text. Nothing here is kept that the log does not have.
- **Buttons** carry a compact token (≤ 64 bytes) that is checked on the server: the run, the
  item and the dimension exist, the value is on the scale (a confidence level the dimension
  asks, a choice of one of its follow-ups, a configured skip reason), and the card was dealt
  to this reviewer (or shown in a group they tap in). Anything else is :class:`Refused`;
  nothing is written.
- **One reviewer at a time**: a lock per reviewer serialises their taps, so the session's
  state is never shared between two handlers.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import Literal

from evaluation import Delivery, HilbotError, Reviewer, RunNotFound, validate_run_id
from evaluation.backends import Claim

from ..cards import CONFIDENCE_LEVELS, Action, ActionKind, Card
from ..review import ReviewEngine, ReviewSession, Step

_OPS: dict[ActionKind, str] = {
    "rate": "r",
    "toggle": "t",
    "note": "n",
    "skip": "s",
    "view_full": "v",
    "view_tools": "x",
    "ai_review": "i",
    "guide": "h",
    "next": "d",
    "confidence": "c",
    "answer": "a",
    "type": "y",
    "undo": "u",
}
"""Each action's op letter; the value follows it as indexes into the config: ``r2`` (the third
option), ``c0`` (high), ``a1.3`` (follow-up 1, choice 3), ``y1`` (type follow-up 1's answer),
``s2`` (skip reason 2), ``d`` (next), ``dc`` (pass the confidence), ``d1`` (pass follow-up 1),
``u`` (undo the skip)."""
_KINDS = {code: kind for kind, code in _OPS.items()}
CANDIDATES = 16
"""With a shared store: items a deal offers the store's claim beyond its room (another replica
may have claimed the first ones a moment ago)."""


class Refused(HilbotError):
    """A tap or a message that does not fit: forged, stale, or from someone not allowed."""


class Expired(Refused):
    """A tap on a card whose claim expired unanswered (a shared store dealt its item to others)."""


class Unreadable(Refused):
    """A button token no log could make valid (its shape, an index's digits, a value off the
    scale): refused at once, also with a shared store, where a tap on a card not yet seen waits."""


@dataclass(frozen=True)
class Tap:
    """A button press, resolved and checked."""

    session: ReviewSession
    item_id: str
    action: Action


def run_key(run_id: str) -> str:
    """Eight hex digits naming a run inside a button token."""
    return hashlib.sha256(run_id.encode()).hexdigest()[:8]


class Sessions:
    """Every reviewer's sessions on one chat channel, over one engine."""

    def __init__(self, engine: ReviewEngine, channel: str):
        self.engine = engine
        self.channel = channel
        self.window = engine.config.review.window
        self._sessions: dict[tuple[str, str, str], ReviewSession] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._run_keys: dict[str, str] = {}
        self._refused: set[tuple[str, str, str]] = set()

    @property
    def ledger(self):
        return self.engine.ledger

    def lock(self, reviewer: Reviewer) -> asyncio.Lock:
        """The lock that serialises one reviewer's actions."""
        return self._locks.setdefault(reviewer.key, asyncio.Lock())

    # ------------------------------------------------------------------ sessions

    def target(self, run_id: str, dimension: str | None = None) -> tuple[str, str]:
        """A run id and dimension checked (default: the run's first dimension); HilbotError with the
        fix."""
        run_id = validate_run_id(run_id)
        if not self.engine.store.run_exists(run_id):
            raise RunNotFound(f"no run {run_id!r}", fix="pick one from /runs")
        dimension = dimension or self.engine.run(run_id).header.dimensions[0]
        self.engine.config.dimension(dimension)
        return run_id, dimension

    def get(self, reviewer: Reviewer, run_id: str, dimension: str | None = None) -> ReviewSession:
        """The reviewer's session on a run and dimension (default: the run's first), made once."""
        key = (reviewer.key, run_id, dimension)
        # checked once: a tap's session is found without touching the disk
        if key not in self._sessions:
            run_id, dimension = self.target(run_id, dimension)
            key = (reviewer.key, run_id, dimension)
        if key not in self._sessions:
            self._sessions[key] = self.engine.session(
                run_id, reviewer, dimension, channel=self.channel
            )
        session = self._sessions[key]
        session.reviewer = reviewer  # the latest display name
        return session

    def active(self, reviewer: Reviewer) -> ReviewSession | None:
        """The session of the latest card dealt to the reviewer (found in the log after a
        restart)."""
        latest = self.ledger.sessions.get(reviewer.key)
        return self.get(reviewer, latest.run_id, latest.dimension) if latest else None

    def reviewed(self, reviewer: Reviewer) -> list[ReviewSession]:
        """Every session the reviewer has judged or been dealt anything in."""
        keys = self.ledger.reviewed_runs(reviewer.key)
        return [
            self.get(reviewer, run, dim)
            for run, dim in sorted(keys)
            if self.engine.store.run_exists(run)
        ]

    # ------------------------------------------------------------------ dealing

    def open_cards(self, session: ReviewSession, *, group: bool = False) -> list[str]:
        """Items dealt and not yet judged (in a group: by anyone)."""
        items = self.ledger.open_cards(session.run_id, session.dimension, session.reviewer)
        if group:
            items = [
                i
                for i in items
                if not self.ledger.item_judgments(session.run_id, i, session.dimension)
            ]
        return items

    def deal(self, session: ReviewSession, *, group: bool = False) -> list[Card]:
        """Blind cards for the next items, up to the window; each is reserved until delivered.

        Items the platform refused to show (:meth:`unsendable`) are passed over in this process.
        """
        room = self.window - len(self.open_cards(session, group=group))
        if room <= 0:
            return []
        refused = self._unsendable(session)
        pending = session.pending(limit=room + len(refused))
        items = [i for i in pending if i.id not in refused][:room]
        cards = []
        for item in items:
            self.ledger.reserve((session.run_id, item.id, session.dimension), session.reviewer.key)
            cards.append(session.card(item.id))
        return cards

    def _unsendable(self, session: ReviewSession) -> set[str]:
        return {i for r, i, d in self._refused if (r, d) == (session.run_id, session.dimension)}

    async def adeal(self, session: ReviewSession, *, group: bool = False) -> list[Card]:
        """:meth:`deal`, the items claimed in the store first (with a shared store).

        Another replica may have claimed the next items a moment ago, before this one has seen
        their cards: the claim is offered ``CANDIDATES`` items more than the room, in assignment
        order, and takes the first free ones; when none of them is free, the next ones are
        offered, until the reviewer's items run out.
        """
        if not self.engine.store.shared:
            return self.deal(session, group=group)
        room = self.window - len(self.open_cards(session, group=group))
        if room <= 0:
            return []
        config = self.engine.config
        passed = self._unsendable(session)
        while True:
            pending = session.pending(limit=room + CANDIDATES + len(passed))
            offered = [i.id for i in pending if i.id not in passed][: room + CANDIDATES]
            if not offered:
                return []
            claim = Claim(
                run_id=session.run_id,
                dimension=session.dimension,
                reviewer_key=session.reviewer.key,
                item_ids=tuple(offered),
                k=config.review.k,
                room=room,
                expiry_s=config.store.claim_expiry_s,
            )
            granted = set(await asyncio.to_thread(self.engine.store.claim, claim))
            if granted:
                break
            passed.update(offered)
        cards = []
        for item_id in (i for i in offered if i in granted):
            self.ledger.reserve((session.run_id, item_id, session.dimension), session.reviewer.key)
            cards.append(session.card(item_id))
        return cards

    def unsendable(self, session: ReviewSession, item_id: str) -> None:
        """The platform refused an item's card (too long, say): free it, and deal it to nobody in
        this process."""
        self.undelivered(session, item_id)
        self._refused.add((session.run_id, item_id, session.dimension))

    def undelivered(self, session: ReviewSession, item_id: str) -> None:
        """A dealt card could not be sent: free it for dealing again (and its claim)."""
        self.ledger.release((session.run_id, item_id, session.dimension), session.reviewer.key)
        self.engine.store.release(
            session.run_id, session.dimension, session.reviewer.key, item_id
        )

    async def delivered(
        self,
        session: ReviewSession,
        item_id: str,
        chat_id: object,
        message_id: object,
        *,
        kind: Literal["card", "note_prompt", "session", "expired"] = "card",
        group: bool = False,
    ) -> None:
        """Log that a card (or a note prompt) is now in a chat."""
        record = Delivery(
            run_id=session.run_id,
            item_id=item_id,
            dimension=session.dimension,
            reviewer=session.reviewer,
            channel=self.channel,
            kind=kind,
            chat_id=str(chat_id),
            message_id=str(message_id),
            group=group,
        )
        await self.engine.store.ratings.aappend(record)
        self.ledger.add(record)

    async def started(
        self, session: ReviewSession, chat_id: object, *, group: bool = False
    ) -> None:
        """Log that a session deals into a chat (once per change), so a restarted bot deals there
        too."""
        stream = self.ledger.streams.get((session.reviewer.key, session.run_id, session.dimension))
        if stream is not None and (stream.chat_id, stream.group) == (str(chat_id), group):
            return
        await self.delivered(session, "", chat_id, "", kind="session", group=group)

    def stream(self, session: ReviewSession) -> tuple[str, bool] | None:
        """The chat (id, group) a session deals into, from the log."""
        stream = self.ledger.streams.get((session.reviewer.key, session.run_id, session.dimension))
        return (stream.chat_id, stream.group) if stream is not None else None

    def streams(self) -> list[tuple[Reviewer, str, str, str, bool]]:
        """Every session with a chat to deal into: (reviewer, run, dimension, chat id, group)."""
        return [
            (d.reviewer, run_id, dimension, d.chat_id, d.group)
            for (_, run_id, dimension), d in self.ledger.streams.items()
            if d.channel == self.channel
        ]

    def card_at(self, session: ReviewSession, item_id: str) -> Delivery | None:
        """The message that shows a reviewer's card of an item (the latest one sent)."""
        return self.ledger.cards.get(
            (session.run_id, item_id, session.dimension, session.reviewer.key)
        )

    def owner(self, message: tuple[object, object]) -> Delivery | None:
        """The delivery a chat message was logged with, if any."""
        return self.ledger.message(self.channel, str(message[0]), str(message[1]))

    def finished(self, session: ReviewSession) -> bool:
        """Nothing open and nothing left to deal."""
        return not self.open_cards(session) and not session.pending(limit=1)

    # ------------------------------------------------------------------ buttons

    def token(self, card: Card, action: Action) -> str:
        """The compact, checkable token a button carries: ``op|run|item|dimension``."""
        run = self.engine.run(card.run_id)
        index = run.index(card.item_id)
        op = _OPS[action.kind] + self._value_index(card.dimension, action)
        return f"{op}|{run_key(card.run_id)}|{index}|{run.header.dimensions.index(card.dimension)}"

    def _value_index(self, dimension: str, action: Action) -> str:
        config = self.engine.config
        fields: list[str] = [f.field for f in config.dimension(dimension).follow_ups]
        if action.kind == "next" and action.value is not None:  # pass a question
            return "c" if action.value == "confidence" else str(fields.index(action.value))
        if action.kind == "answer":
            name, _, choice = (action.value or "").partition(":")
            n = fields.index(name)
            return f"{n}.{config.dimension(dimension).follow_ups[n].choices.index(choice)}"
        values: list[str]
        if action.kind == "rate":
            values = [o.value for o in config.scale_for(dimension).options]
        elif action.kind == "toggle":
            values = config.concerns_for(dimension)
        elif action.kind == "confidence":
            values = list(CONFIDENCE_LEVELS)
        elif action.kind == "type":
            values = fields
        elif action.kind == "skip" and action.value is not None:
            values = config.review.skip_reasons
        else:
            return ""
        assert action.value is not None  # these buttons carry their value
        return str(values.index(action.value))

    def resolve(
        self,
        token: str,
        reviewer: Reviewer,
        message: tuple[object, object],
        delivery_id: str,
        *,
        group: bool = False,
    ) -> Tap:
        """Check a button's token against the log; :class:`Refused` when it does not hold."""
        unreadable = f"unreadable button data {token!r}"
        try:
            op, key, index, dim = token.split("|")
            kind, at, dim_at = _KINDS[op[0]], token_index(index), token_index(dim)
        except (ValueError, KeyError, IndexError):
            raise Unreadable(unreadable) from None
        try:  # a run or an item another replica stored may not be in this one's copy yet
            run_id = self.run_for(key)
            run = self.engine.run(run_id)
            if at >= len(run.items) and self.engine.refresh(run_id):  # it grew, here or elsewhere
                run = self.engine.run(run_id)
            item, dimension = run.items[at], run.header.dimensions[dim_at]
        except (ValueError, KeyError, IndexError, HilbotError):
            raise Refused(unreadable) from None
        try:
            value = self._value(dimension, kind, op[1:])
        except (ValueError, KeyError, IndexError, HilbotError):
            raise Unreadable(unreadable) from None
        self._check_dealt(reviewer, run_id, item.id, dimension, message, group)
        session = self.get(reviewer, run_id, dimension)
        return Tap(session, item.id, Action(kind, value, item.id, delivery_id))

    def run_for(self, key: str) -> str:
        """The run a button token's run key names (:func:`run_key`); :class:`KeyError` when none
        does."""
        if key not in self._run_keys:
            self._run_keys = {run_key(r): r for r in self.engine.store.run_ids()}
        return self._run_keys[key]

    def _value(self, dimension: str, kind: str, digits: str) -> str | None:
        if kind == "rate":
            return self.engine.config.scale_for(dimension).options[token_index(digits)].value
        if kind == "toggle":
            return self.engine.config.concerns_for(dimension)[token_index(digits)]
        config = self.engine.config.dimension(dimension)
        if kind == "confidence" and config.confidence:
            return CONFIDENCE_LEVELS[token_index(digits)]
        if kind == "answer":
            question, choice = digits.split(".")
            follow_up = config.follow_ups[token_index(question)]
            return f"{follow_up.field}:{follow_up.choices[token_index(choice)]}"
        if kind == "type" and config.follow_ups[token_index(digits)].text:
            return config.follow_ups[token_index(digits)].field
        if kind == "next" and digits:
            if digits == "c" and config.confidence:
                return "confidence"
            return config.follow_ups[token_index(digits)].field
        if kind == "skip" and digits:
            return self.engine.config.review.skip_reasons[token_index(digits)]
        if digits or kind in ("confidence", "type"):
            raise ValueError(digits)
        return None

    def _check_dealt(
        self,
        reviewer: Reviewer,
        run_id: str,
        item_id: str,
        dimension: str,
        message: tuple[object, object],
        group: bool,
    ) -> None:
        shown = self.owner(message)
        if shown is not None and (shown.run_id, shown.item_id, shown.dimension) != (
            run_id,
            item_id,
            dimension,
        ):
            raise Refused(
                f"button for {run_id}/{item_id} on a message about {shown.run_id}/{shown.item_id}"
            )
        if (run_id, item_id, dimension, reviewer.key) in self.ledger.expired:
            raise Expired(f"{run_id}/{item_id}: the card's claim by {reviewer.key} expired")
        if self.ledger.dealt(run_id, item_id, dimension, reviewer):
            return
        if group and (shown is not None or self.ledger.holders(run_id, item_id, dimension)):
            # a card in a group (its delivery may still be being logged): any member rates it as
            # themselves
            return
        if self.ledger.judgment(run_id, item_id, dimension, reviewer) is None:
            raise Refused(f"{run_id}/{item_id} was not dealt to {reviewer.key}")

    # ------------------------------------------------------------------ notes

    def note_target(
        self, reviewer: Reviewer, chat_id: object, reply_to: object | None
    ) -> Delivery | None:
        """The note prompt a text answers: the one replied to, else the reviewer's open prompt in
        this chat."""
        if reply_to is not None:
            prompt = self.ledger.message(self.channel, str(chat_id), str(reply_to))
            if (
                prompt is not None
                and prompt.kind == "note_prompt"
                and prompt.reviewer.key == reviewer.key
            ):
                return prompt
        prompt = self.ledger.prompts.get(reviewer.key)
        return prompt if prompt is not None and prompt.chat_id == str(chat_id) else None

    # ------------------------------------------------------------------ acting

    async def act(self, session: ReviewSession, action: Action) -> Step:
        """Act on the action's item; the records are fsynced before this returns."""
        return await session.aact(action)


def token_index(digits: str) -> int:
    """An index a button token carries, written one way only: ASCII digits, no sign, no leading
    zero.

    ``int`` would also take ``-1`` (the last item, to Python's indexing), `` 5``, ``+5``, ``05`` and
    ``٥``; a :class:`ValueError` for each of them.
    """
    if not (digits.isascii() and digits.isdigit()) or (digits[0] == "0" and digits != "0"):
        raise ValueError(digits)
    return int(digits)


__all__ = ["Expired", "Refused", "Sessions", "Tap", "Unreadable", "run_key", "token_index"]
