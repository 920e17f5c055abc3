"""Folding ratings.jsonl: the latest judgment per (run, item, dimension, reviewer).

A changed rating is a new event and the latest counts; a skip after a rating (or a rating
after a skip) replaces it. Events whose idempotency key was already seen are dropped, so a
redelivered tap is never counted twice. Notes are kept per item; the latest is the item's note.

Chat channels also log a ``delivery`` for every card and note prompt they send, and for every
session started in a chat. Folded, those say which cards each reviewer has open (dealt, not yet
judged), which message shows which item, which note prompt awaits an answer and which chat
each session deals into, so a restarted bot picks up every session where it was. Cards being
sent right now are *reserved* in memory until their delivery is logged.

An idempotency key seen before is a repeat only when it comes with the same action (reviewer,
item, dimension and what was done, :func:`fingerprint`); the engine stores a different action
that reuses a key under a key of its own.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from statistics import mean
from typing import Any, Iterable

from pydantic import BaseModel

from .records import Adjudication, Delivery, Note, Rating, Reviewer, ReviewSummary, Skip
from .runs import Run, ai_score

Key = tuple[str, str, str, str]
"""(run_id, item_id, dimension, reviewer key)."""
ItemKey = tuple[str, str, str]
"""(run_id, item_id, dimension)."""
MessageKey = tuple[str, str, str]
"""(channel, chat_id, message_id)."""


def event_key(event: Rating | Skip | Note) -> Key:
    """The fold key of a human event."""
    return (event.run_id, event.item_id, event.dimension, event.reviewer.key)


def fingerprint(reviewer_key: str, run_id: str, item_id: str, dimension: str, action: str) -> str:
    """Who did what to which item: what a repeated idempotency key must match to be a repeat."""
    return f"{reviewer_key}|{run_id}|{item_id}|{dimension}|{action}"


def _event_action(event: Rating | Skip | Note) -> str:
    """The action an event records (older records, written before ``action``, by their content)."""
    if event.action:
        return event.action
    if isinstance(event, Rating):
        return f"legacy-rating:{event.judgment}:{','.join(event.concerns)}"
    if isinstance(event, Skip):
        return f"legacy-skip:{event.skip_reason}"
    return f"legacy-note:{event.text}"


def record_fingerprint(event: Rating | Skip | Note | Adjudication) -> str:
    """The :func:`fingerprint` a record's idempotency key is stored with."""
    if isinstance(event, Adjudication):
        action = event.action or event.decision
        return fingerprint(event.reviewer.key, event.run_id, event.item_id, event.dimension, action)
    key = event_key(event)
    return fingerprint(key[3], key[0], key[1], key[2], _event_action(event))


@dataclass
class Ledger:
    """ratings.jsonl folded into the current state of every review."""

    judgments: dict[Key, Rating | Skip] = field(default_factory=dict)
    """Latest rating or skip per key."""
    notes: dict[Key, Note] = field(default_factory=dict)
    """Latest note per key."""
    adjudications: dict[ItemKey, Adjudication] = field(default_factory=dict)
    """Latest adjudication per (run, item, dimension): a consensus label or an exclusion."""
    seen_keys: dict[str, str] = field(default_factory=dict)
    """Idempotency keys already counted, each with the :func:`fingerprint` of the action it came
    with."""
    duplicates: int = 0
    """Events dropped because their idempotency key had been seen."""
    messages: dict[MessageKey, Delivery] = field(default_factory=dict)
    """Which item (and reviewer) each delivered chat message is about."""
    cards: dict[Key, Delivery] = field(default_factory=dict)
    """The latest card of each item dealt to each reviewer (where to edit it)."""
    prompts: dict[str, Delivery] = field(default_factory=dict)
    """Per reviewer key: the note prompt still waiting for its text."""
    sessions: dict[str, Delivery] = field(default_factory=dict)
    """Per reviewer key: the latest card dealt to them (its run, dimension and chat)."""
    streams: dict[tuple[str, str, str], Delivery] = field(default_factory=dict)
    """Per (reviewer key, run, dimension): the chat its cards are dealt into (session started there,
    or latest card)."""
    _reviewers: dict[ItemKey, set[str]] = field(default_factory=dict, repr=False)
    """Index: reviewer keys with a judgment, per (run, item, dimension)."""
    _dealt: dict[ItemKey, set[str]] = field(default_factory=dict, repr=False)
    """Index: reviewer keys a card of the item was dealt (or is being sent) to."""
    full: dict[tuple[str, str, int], set[str]] = field(default_factory=dict, repr=False)
    """Cache for assignment: per (run, dimension, k), items with k ratings or open cards between
    them. Ratings and deals only ever fill items; a skip or a released card may reopen one, and
    clears it."""
    full_prefix: dict[tuple[str, str, int], tuple[object, int]] = field(
        default_factory=dict, repr=False
    )
    """With :attr:`full`: per (run, dimension, k), an assignment order and how many of its first
    items are full. Dealing starts its walk there, so a tap costs the same late in a long run as
    early."""
    _mine: dict[tuple[str, str, str], set[str]] = field(default_factory=dict, repr=False)
    """Index: item ids each reviewer has judged, per (reviewer key, run, dimension)."""
    hands: dict[tuple[str, str, str], dict[str, None]] = field(default_factory=dict, repr=False)
    """Item ids dealt per (reviewer key, run, dimension), in dealing order."""
    _load: dict[ItemKey, int] = field(default_factory=dict, repr=False)
    """Per item: its ratings plus its open cards (what counts towards ``k``)."""
    _runs: dict[str, set[str]] = field(default_factory=dict, repr=False)
    """Item ids of each run the engine has read (:meth:`register_run`)."""
    _levels: dict[tuple[str, str], dict[int, int]] = field(default_factory=dict, repr=False)
    """Per (run, dimension): how many of the run's items have each load ≥ 1 (counts items taken, for
    any k)."""
    _shown: dict[tuple[str, str, str], dict[str, None]] = field(default_factory=dict, repr=False)
    """Item ids per (reviewer key, run, dimension) the reviewer met (dealt or judged)."""
    _rated: dict[ItemKey, int] = field(default_factory=dict, repr=False)
    """Index: how many current ratings (not skips) each (run, item, dimension) has."""

    expired: set[Key] = field(default_factory=set, repr=False)
    """Cards whose claim expired unanswered (a shared store): not open, never dealt again."""
    _unsettled: set[ItemKey] | None = field(default=None, repr=False)
    """While a stream is folded: the items whose load is recounted once it is all in (an item's
    load counts its open cards, which walks its dealt reviewers: once per event, that was quadratic
    in the reviewers of an item)."""

    @classmethod
    def from_events(cls, events: Iterable[BaseModel]) -> "Ledger":
        """Fold a stream of records (non-human records are ignored)."""
        ledger = cls()
        ledger._unsettled = set()
        enabled = gc.isenabled()
        gc.disable()  # a fold makes no cycles; collections would walk every record again
        try:
            for event in events:
                ledger.add(event)
        finally:
            if enabled:
                gc.enable()
        unsettled, ledger._unsettled = ledger._unsettled, None
        for item in unsettled:
            ledger._relevel(item)
        return ledger

    def absorb(self, part: "Ledger") -> None:
        """Take in a fold of the records of runs this ledger has folded nothing of (a ledger that
        folds runs as they are asked about). Each reviewer's latest card and open note prompt stay
        this ledger's: they are about every run, and ``part`` saw only its own."""
        tables: list[tuple[dict[Any, Any], dict[Any, Any]]] = [
            (self.judgments, part.judgments),
            (self.notes, part.notes),
            (self.adjudications, part.adjudications),
            (self.seen_keys, part.seen_keys),
            (self.messages, part.messages),
            (self.cards, part.cards),
            (self.streams, part.streams),
            (self._reviewers, part._reviewers),
            (self._dealt, part._dealt),
            (self._mine, part._mine),
            (self.hands, part.hands),
            (self._load, part._load),
            (self._shown, part._shown),
            (self._rated, part._rated),
        ]
        self.expired |= part.expired
        for mine, theirs in tables:
            mine.update(theirs)
        self.duplicates += part.duplicates
        for run_id, items in part._runs.items():
            self.register_run(run_id, items)

    def add(self, event: BaseModel) -> bool:
        """Fold one event; False if it was a duplicate delivery or not a human event."""
        if isinstance(event, Delivery):
            self._deliver(event)
            return True
        if not isinstance(event, (Rating, Skip, Note, Adjudication)):
            return False
        if event.idempotency_key in self.seen_keys:
            self.duplicates += 1
            return False
        self.seen_keys[event.idempotency_key] = record_fingerprint(event)
        if isinstance(event, Adjudication):
            self.adjudications[(event.run_id, event.item_id, event.dimension)] = event
            return True
        key = event_key(event)
        prompt = self.prompts.get(key[3])
        answers = isinstance(event, (Note, Skip)) or (event.action or "").startswith(
            "text:"
        )  # a typed follow-up answer
        if (
            answers
            and prompt is not None
            and (prompt.run_id, prompt.item_id, prompt.dimension) == key[:3]
        ):
            del self.prompts[key[3]]  # the note (a skip, a typed answer) answers the prompt
        if isinstance(event, Skip):
            self._reopen(key[0], key[2])
        if isinstance(event, Note):
            self.notes[key] = event
        else:
            was = self.judgments.get(key)
            self.judgments[key] = event
            if isinstance(event, Rating) != isinstance(was, Rating):
                change = 1 if isinstance(event, Rating) else -1
                self._rated[key[:3]] = self._rated.get(key[:3], 0) + change
            self._reviewers.setdefault(key[:3], set()).add(key[3])
            self._mine.setdefault((key[3], key[0], key[2]), set()).add(key[1])
            self._shown.setdefault((key[3], key[0], key[2]), {})[key[1]] = None
            self._relevel(key[:3])
        return True

    def _deliver(self, event: Delivery) -> None:
        item, who = (event.run_id, event.item_id, event.dimension), event.reviewer.key
        if event.kind == "session":
            self.streams[(who, event.run_id, event.dimension)] = event
            return
        if event.kind == "expired":
            self.expire(item, who)
            return
        self.messages[(event.channel, event.chat_id, event.message_id)] = event
        if event.kind == "note_prompt":
            self.prompts[who] = event
            return
        self.reserve(item, who)
        self.cards[(*item, who)] = event
        self.sessions[who] = event
        self.streams[(who, event.run_id, event.dimension)] = event

    def reserve(self, item: ItemKey, reviewer_key: str) -> None:
        """Count a card being dealt to a reviewer as open (before its delivery is logged)."""
        self._dealt.setdefault(item, set()).add(reviewer_key)
        self.hands.setdefault((reviewer_key, item[0], item[2]), {})[item[1]] = None
        self._shown.setdefault((reviewer_key, item[0], item[2]), {})[item[1]] = None
        self._relevel(item)

    def expire(self, item: ItemKey, reviewer_key: str) -> None:
        """A card's claim expired unanswered: it no longer counts towards ``k`` (the item may go to
        someone else), and it is never dealt to this reviewer again."""
        if (*item, reviewer_key) in self.judgments:
            return
        self.expired.add((*item, reviewer_key))
        self._reopen(item[0], item[2])
        self._relevel(item)

    def _reopen(self, run_id: str, dimension: str) -> None:
        for key in [k for k in self.full if k[:2] == (run_id, dimension)]:
            del self.full[key]
            self.full_prefix.pop(key, None)

    def release(self, item: ItemKey, reviewer_key: str) -> None:
        """Undo :meth:`reserve` for a card that could not be delivered."""
        self._reopen(item[0], item[2])
        self._dealt.get(item, set()).discard(reviewer_key)
        self.hands.get((reviewer_key, item[0], item[2]), {}).pop(item[1], None)
        if (*item, reviewer_key) not in self.judgments:  # never shown: its number is free again
            self._shown.get((reviewer_key, item[0], item[2]), {}).pop(item[1], None)
        self._relevel(item)

    # ------------------------------------------------------------------ how much is left

    def register_run(self, run_id: str, item_ids: Iterable[str]) -> None:
        """Tell the ledger which items a run has (the engine does, whenever it reads the run)."""
        known = self._runs.setdefault(run_id, set())
        new = set(item_ids) - known
        known |= new
        for (run, item, dimension), load in self._load.items():
            if run == run_id and item in new and load:
                levels = self._levels.setdefault((run, dimension), {})
                levels[load] = levels.get(load, 0) + 1

    def registered(self, run_id: str) -> int:
        """How many items of a run the ledger knows of."""
        return len(self._runs.get(run_id, ()))

    def _relevel(self, item: ItemKey) -> None:
        """Recount an item's load (ratings + open cards) and keep the run's levels in step."""
        if self._unsettled is not None:
            self._unsettled.add(item)
            return
        # the raters' count is kept as events fold (len(self.raters(...)) walked every reviewer of
        # the item on every event: quadratic in the raters of an item)
        load = self._rated.get(item, 0) + len(self.open_reviewers(*item))
        old = self._load.get(item, 0)
        if load == old:
            return
        self._load[item] = load
        if item[1] not in self._runs.get(item[0], ()):
            return
        levels = self._levels.setdefault((item[0], item[2]), {})
        if old:
            levels[old] -= 1
        if load:
            levels[load] = levels.get(load, 0) + 1

    def left(self, run_id: str, dimension: str, reviewer: Reviewer, k: int) -> int:
        """How many of a registered run's items a reviewer may still be dealt, plus their open
        cards.

        An item may be dealt to a reviewer unless it has ``k`` ratings and open cards between
        them, or the reviewer has judged it or holds its card; computed from running counts, not
        by walking the run.
        """
        known = self._runs.get(run_id, set())
        taken = sum(n for load, n in self._levels.get((run_id, dimension), {}).items() if load >= k)
        mine = self._shown.get((reviewer.key, run_id, dimension), {})
        mine_free = sum(
            1 for i in mine if i in known and self._load.get((run_id, i, dimension), 0) < k
        )
        return len(known) - taken - mine_free + len(self.open_cards(run_id, dimension, reviewer))

    def rating_count(self, run_id: str, item_id: str, dimension: str) -> int:
        """How many reviewers' current judgment of the item is a rating (kept as events are
        folded)."""
        return self._rated.get((run_id, item_id, dimension), 0)

    def load(self, run_id: str) -> None:
        """Make sure the run's part of the log is folded (this ledger folds all of it at once: a
        ledger that folds runs as they are asked about overrides this)."""

    def message(self, channel: str, chat_id: str, message_id: str) -> Delivery | None:
        """The card or note prompt a chat message was logged with, if any."""
        return self.messages.get((channel, chat_id, message_id))

    def reviewed_runs(self, reviewer_key: str) -> set[tuple[str, str]]:
        """The (run, dimension) pairs a reviewer has judged or been dealt a card in."""
        pairs = {(k[0], k[2]) for k in self.judgments if k[3] == reviewer_key}
        return pairs | {(k[1], k[2]) for k in self.hands if k[0] == reviewer_key}

    def repeat(self, idempotency_key: str) -> str | None:
        """The fingerprint of the action a key was first stored with, or None for a new key."""
        return self.seen_keys.get(idempotency_key)

    def open_reviewers(self, run_id: str, item_id: str, dimension: str) -> set[str]:
        """Reviewer keys holding an open (dealt, not yet judged) card of the item."""
        item = (run_id, item_id, dimension)
        return {
            r
            for r in self._dealt.get(item, ())
            if (*item, r) not in self.judgments and (*item, r) not in self.expired
        }

    def open_cards(self, run_id: str, dimension: str, reviewer: Reviewer) -> list[str]:
        """Item ids dealt to a reviewer on a run and dimension and not yet judged, oldest first."""
        hand = self.hands.get((reviewer.key, run_id, dimension), {})
        return [
            i
            for i in hand
            if (run_id, i, dimension, reviewer.key) not in self.judgments
            and (run_id, i, dimension, reviewer.key) not in self.expired
        ]

    def holders(self, run_id: str, item_id: str, dimension: str) -> set[str]:
        """Reviewer keys a card of the item was dealt to (open or since judged)."""
        return set(self._dealt.get((run_id, item_id, dimension), ()))

    def dealt(self, run_id: str, item_id: str, dimension: str, reviewer: Reviewer) -> bool:
        """Whether a card of the item was dealt to the reviewer (open or since judged)."""
        return reviewer.key in self._dealt.get((run_id, item_id, dimension), ())

    def counts(self, run_id: str, dimension: str, reviewer: Reviewer) -> tuple[int, int]:
        """(rated, skipped): how many of a run's items a reviewer has judged, by kind."""
        mine = self._mine.get((reviewer.key, run_id, dimension), ())
        rated = sum(
            1
            for i in mine
            if isinstance(self.judgments[(run_id, i, dimension, reviewer.key)], Rating)
        )
        return rated, len(mine) - rated

    def ratings(self, run_id: str | None = None, dimension: str | None = None) -> list[Rating]:
        """Current ratings, optionally of one run and dimension."""
        return [
            j
            for k, j in self.judgments.items()
            if isinstance(j, Rating)
            and (run_id is None or k[0] == run_id)
            and (dimension is None or k[2] == dimension)
        ]

    def raters(self, run_id: str, item_id: str, dimension: str) -> set[str]:
        """Reviewer keys whose current judgment of the item is a rating."""
        return {
            r for r, j in self.item_judgments(run_id, item_id, dimension) if isinstance(j, Rating)
        }

    def item_judgments(
        self, run_id: str, item_id: str, dimension: str
    ) -> list[tuple[str, Rating | Skip]]:
        """(reviewer key, current rating or skip) for every reviewer of an item."""
        item = (run_id, item_id, dimension)
        return [(r, self.judgments[(*item, r)]) for r in self._reviewers.get(item, ())]

    def judgment(
        self, run_id: str, item_id: str, dimension: str, reviewer: Reviewer
    ) -> Rating | Skip | None:
        """A reviewer's current rating or skip of an item."""
        return self.judgments.get((run_id, item_id, dimension, reviewer.key))

    def note(self, run_id: str, item_id: str, dimension: str, reviewer: Reviewer) -> Note | None:
        """A reviewer's latest note on an item."""
        return self.notes.get((run_id, item_id, dimension, reviewer.key))


def summarize(
    ledger: Ledger,
    run: Run,
    dimension: str,
    reviewer: Reviewer | None = None,
    metric: str | None = None,
) -> ReviewSummary:
    """The ``hilReview`` for one reviewer (or everyone, with ``reviewer=None``).

    ``queriesFlagged`` counts rated items that carry a concern tag or a note.
    ``aiVsHumanDelta`` is mean(AI score − human score) over rated items the AI scored, as the hil
    format defines it; None when there are none. The AI score is the dimension's ``metric`` when
    given (``[dimensions.X] metric``), as :func:`evaluation.runs.ai_score` reads it.
    """
    reviewed = skipped = flagged = 0
    human: list[float] = []
    deltas: list[float] = []
    for item in run.items:
        for who, judgment in ledger.item_judgments(run.run_id, item.id, dimension):
            if reviewer and who != reviewer.key:
                continue
            if isinstance(judgment, Skip):
                skipped += 1
                continue
            reviewed += 1
            human.append(judgment.score)
            if (
                judgment.concerns
                or judgment.note
                or (run.run_id, item.id, dimension, who) in ledger.notes
            ):
                flagged += 1
            ai = ai_score(item, dimension, metric)
            if ai is not None:
                deltas.append(ai - judgment.score)
    return ReviewSummary(
        run_id=run.run_id,
        dimension=dimension,
        reviewer=reviewer,
        queriesReviewed=reviewed,
        queriesSkipped=skipped,
        queriesFlagged=flagged,
        humanAverageScore=round(mean(human), 4) if human else None,
        aiVsHumanDelta=round(mean(deltas), 4) if deltas else None,
    )


def hil_view(
    ledger: Ledger, run_id: str, item_id: str, dimension: str, reviewer: Reviewer | None = None
) -> dict | None:
    """The per-query ``hil`` block: the latest rating or skip of the item (by anyone, or one
    reviewer).

    The reviewer's note on the item rides along either way, as the label export's ``notes`` does: a
    "Note only" review is a skip (``skipReason`` "note only") whose only content is that note.
    """
    latest: Rating | Skip | None = None
    for who, judgment in ledger.item_judgments(run_id, item_id, dimension):
        if (reviewer is None or who == reviewer.key) and (
            latest is None or judgment.timestamp >= latest.timestamp
        ):
            latest = judgment
    if latest is None:
        return None
    note = ledger.notes.get(event_key(latest))
    if isinstance(latest, Skip):
        return {
            "reviewed": False,
            "skipped": True,
            "skipReason": latest.skip_reason,
            "note": note.text if note else None,
            "reviewer": latest.reviewer.key,
            "reviewedAt": latest.timestamp.isoformat(),
        }
    return {
        "reviewed": True,
        "judgment": latest.judgment,
        "humanScore": latest.score,
        "note": latest.note or (note.text if note else None),
        "concerns": latest.concerns,
        "reviewer": latest.reviewer.key,
        "reviewedAt": latest.timestamp.isoformat(),
    }
