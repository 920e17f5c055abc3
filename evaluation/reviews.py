"""Folding ratings.jsonl: the latest judgment per (run, item, dimension, reviewer).

A changed rating is a new event and the latest counts; a skip after a rating (or a rating
after a skip) replaces it. Events whose idempotency key was already seen are dropped, so a
redelivered tap is never counted twice. Notes are kept per item; the latest is the item's note.

Chat channels also log a ``delivery`` for every card and note prompt they send. Folded, those
say which cards each reviewer has open (dealt, not yet judged), which message shows which item,
and which note prompt awaits an answer, so a restarted bot picks up every session where it was.
Cards being sent right now are *reserved* in memory until their delivery is logged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import mean
from typing import Iterable

from pydantic import BaseModel

from .records import Delivery, Note, Rating, ReviewSummary, Reviewer, Skip
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


@dataclass
class Ledger:
    """ratings.jsonl folded into the current state of every review."""

    judgments: dict[Key, Rating | Skip] = field(default_factory=dict)
    """Latest rating or skip per key."""
    notes: dict[Key, Note] = field(default_factory=dict)
    """Latest note per key."""
    seen_keys: set[str] = field(default_factory=set)
    """Idempotency keys already counted."""
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
    _reviewers: dict[ItemKey, set[str]] = field(default_factory=dict, repr=False)
    """Index: reviewer keys with a judgment, per (run, item, dimension)."""
    _dealt: dict[ItemKey, set[str]] = field(default_factory=dict, repr=False)
    """Index: reviewer keys a card of the item was dealt (or is being sent) to."""
    full: dict[tuple[str, str, int], set[str]] = field(default_factory=dict, repr=False)
    """Cache for assignment: per (run, dimension, k), items with k ratings or open cards between them.
    Ratings and deals only ever fill items; a skip or a released card may reopen one, and clears it."""
    _mine: dict[tuple[str, str, str], set[str]] = field(default_factory=dict, repr=False)
    """Index: item ids each reviewer has judged, per (reviewer key, run, dimension)."""
    hands: dict[tuple[str, str, str], dict[str, None]] = field(default_factory=dict, repr=False)
    """Item ids dealt per (reviewer key, run, dimension), in dealing order."""

    @classmethod
    def from_events(cls, events: Iterable[BaseModel]) -> "Ledger":
        """Fold a stream of records (non-human records are ignored)."""
        ledger = cls()
        for event in events:
            ledger.add(event)
        return ledger

    def add(self, event: BaseModel) -> bool:
        """Fold one event; False if it was a duplicate delivery or not a human event."""
        if isinstance(event, Delivery):
            self._deliver(event)
            return True
        if not isinstance(event, (Rating, Skip, Note)):
            return False
        if event.idempotency_key in self.seen_keys:
            self.duplicates += 1
            return False
        self.seen_keys.add(event.idempotency_key)
        key = event_key(event)
        prompt = self.prompts.get(key[3])
        if isinstance(event, (Note, Skip)) and prompt is not None and (prompt.run_id, prompt.item_id, prompt.dimension) == key[:3]:
            del self.prompts[key[3]]  # the note (or a skip) answers the prompt
        if isinstance(event, Skip):
            self._reopen(key[0], key[2])
        if isinstance(event, Note):
            self.notes[key] = event
        else:
            self.judgments[key] = event
            self._reviewers.setdefault(key[:3], set()).add(key[3])
            self._mine.setdefault((key[3], key[0], key[2]), set()).add(key[1])
        return True

    def _deliver(self, event: Delivery) -> None:
        item, who = (event.run_id, event.item_id, event.dimension), event.reviewer.key
        self.messages[(event.channel, event.chat_id, event.message_id)] = event
        if event.kind == "note_prompt":
            self.prompts[who] = event
            return
        self.reserve(item, who)
        self.cards[(*item, who)] = event
        self.sessions[who] = event

    def reserve(self, item: ItemKey, reviewer_key: str) -> None:
        """Count a card being dealt to a reviewer as open (before its delivery is logged)."""
        self._dealt.setdefault(item, set()).add(reviewer_key)
        self.hands.setdefault((reviewer_key, item[0], item[2]), {})[item[1]] = None

    def _reopen(self, run_id: str, dimension: str) -> None:
        for key in [k for k in self.full if k[:2] == (run_id, dimension)]:
            del self.full[key]

    def release(self, item: ItemKey, reviewer_key: str) -> None:
        """Undo :meth:`reserve` for a card that could not be delivered."""
        self._reopen(item[0], item[2])
        self._dealt.get(item, set()).discard(reviewer_key)
        self.hands.get((reviewer_key, item[0], item[2]), {}).pop(item[1], None)

    def open_reviewers(self, run_id: str, item_id: str, dimension: str) -> set[str]:
        """Reviewer keys holding an open (dealt, not yet judged) card of the item."""
        item = (run_id, item_id, dimension)
        return {r for r in self._dealt.get(item, ()) if (*item, r) not in self.judgments}

    def open_cards(self, run_id: str, dimension: str, reviewer: Reviewer) -> list[str]:
        """Item ids dealt to a reviewer on a run and dimension and not yet judged, oldest first."""
        hand = self.hands.get((reviewer.key, run_id, dimension), {})
        return [i for i in hand if (run_id, i, dimension, reviewer.key) not in self.judgments]

    def holders(self, run_id: str, item_id: str, dimension: str) -> set[str]:
        """Reviewer keys a card of the item was dealt to (open or since judged)."""
        return set(self._dealt.get((run_id, item_id, dimension), ()))

    def dealt(self, run_id: str, item_id: str, dimension: str, reviewer: Reviewer) -> bool:
        """Whether a card of the item was dealt to the reviewer (open or since judged)."""
        return reviewer.key in self._dealt.get((run_id, item_id, dimension), ())

    def counts(self, run_id: str, dimension: str, reviewer: Reviewer) -> tuple[int, int]:
        """(rated, skipped): how many of a run's items a reviewer has judged, by kind."""
        mine = self._mine.get((reviewer.key, run_id, dimension), ())
        rated = sum(1 for i in mine if isinstance(self.judgments[(run_id, i, dimension, reviewer.key)], Rating))
        return rated, len(mine) - rated

    def ratings(self, run_id: str | None = None, dimension: str | None = None) -> list[Rating]:
        """Current ratings, optionally of one run and dimension."""
        return [j for k, j in self.judgments.items() if isinstance(j, Rating)
                and (run_id is None or k[0] == run_id) and (dimension is None or k[2] == dimension)]

    def raters(self, run_id: str, item_id: str, dimension: str) -> set[str]:
        """Reviewer keys whose current judgment of the item is a rating."""
        return {r for r, j in self.item_judgments(run_id, item_id, dimension) if isinstance(j, Rating)}

    def item_judgments(self, run_id: str, item_id: str, dimension: str) -> list[tuple[str, Rating | Skip]]:
        """(reviewer key, current rating or skip) for every reviewer of an item."""
        item = (run_id, item_id, dimension)
        return [(r, self.judgments[(*item, r)]) for r in self._reviewers.get(item, ())]

    def judgment(self, run_id: str, item_id: str, dimension: str, reviewer: Reviewer) -> Rating | Skip | None:
        """A reviewer's current rating or skip of an item."""
        return self.judgments.get((run_id, item_id, dimension, reviewer.key))

    def note(self, run_id: str, item_id: str, dimension: str, reviewer: Reviewer) -> Note | None:
        """A reviewer's latest note on an item."""
        return self.notes.get((run_id, item_id, dimension, reviewer.key))

    def reviewed_runs(self) -> set[str]:
        """Runs with at least one rating."""
        return {k[0] for k, j in self.judgments.items() if isinstance(j, Rating)}


def summarize(ledger: Ledger, run: Run, dimension: str, reviewer: Reviewer | None = None) -> ReviewSummary:
    """The ``hilReview`` for one reviewer (or everyone, with ``reviewer=None``).

    ``queriesFlagged`` counts rated items that carry a concern tag or a note.
    ``aiVsHumanDelta`` is mean(human score − AI score) over rated items the AI scored;
    None when there are none.
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
            if judgment.concerns or judgment.note or (run.run_id, item.id, dimension, who) in ledger.notes:
                flagged += 1
            ai = ai_score(item, dimension)
            if ai is not None:
                deltas.append(judgment.score - ai)
    return ReviewSummary(
        run_id=run.run_id, dimension=dimension, reviewer=reviewer,
        queriesReviewed=reviewed, queriesSkipped=skipped, queriesFlagged=flagged,
        humanAverageScore=round(mean(human), 4) if human else None,
        aiVsHumanDelta=round(mean(deltas), 4) if deltas else None,
    )


def hil_view(ledger: Ledger, run_id: str, item_id: str, dimension: str, reviewer: Reviewer | None = None) -> dict | None:
    """The per-query ``hil`` block: the latest rating of the item (by anyone, or one reviewer)."""
    latest: Rating | Skip | None = None
    for who, judgment in ledger.item_judgments(run_id, item_id, dimension):
        if (reviewer is None or who == reviewer.key) and (latest is None or judgment.timestamp >= latest.timestamp):
            latest = judgment
    if latest is None:
        return None
    note = ledger.notes.get(event_key(latest))
    if isinstance(latest, Skip):
        return {"reviewed": False, "skipped": True, "skipReason": latest.skip_reason,
                "reviewedAt": latest.timestamp.isoformat()}
    return {"reviewed": True, "judgment": latest.judgment, "humanScore": latest.score,
            "note": latest.note or (note.text if note else None), "concerns": latest.concerns,
            "reviewer": latest.reviewer.key, "reviewedAt": latest.timestamp.isoformat()}
