"""The ledger a review engine starts from on a long log: each run folded when it is first asked
about.

:class:`evaluation.reviews.Ledger` folds the whole ratings log; on a year of ratings that is
minutes and gigabytes, most of it about finished runs. :class:`LazyLedger` starts from what the
columnar index says of every run at once (:func:`analysis.review_state.review_state`: each
reviewer's session and open prompt, each session's chat, the runs each reviewer took part in, every
idempotency key) and folds a run's own records the first time anything about that run is asked,
read or written. A repeated idempotency key is looked up in the index; so is a chat message of a
run not folded yet. What it answers is what the whole fold answers (``tests/bot/test_ledger.py``
compares them on generated logs), and its memory grows with the runs reviewed since it started,
not with the log. One assumption: a chat message id is logged for one run only (platforms never
reuse one in a chat).
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from pydantic import BaseModel

from evaluation.records import Delivery, Note, Rating, Reviewer, Skip
from evaluation.reviews import ItemKey, Ledger, record_fingerprint

if TYPE_CHECKING:
    from analysis.review_state import ReviewState
    from evaluation.log import LogIssue
    from evaluation.store import Store


@dataclass
class LazyLedger(Ledger):
    """A ledger whose runs are folded from the index when first asked about."""

    state: "ReviewState | None" = field(default=None, repr=False)
    """What the index says of every run at once."""
    loaded: set[str] = field(default_factory=set)
    """The runs folded so far."""
    absent: set[str] = field(default_factory=set, repr=False)
    """Idempotency keys looked up in the index and not found there."""

    @classmethod
    def of(cls, state: "ReviewState") -> "LazyLedger":
        """A ledger that starts from ``state``."""
        ledger = cls(state=state)
        for name in ("judgments", "notes", "adjudications", "cards"):
            setattr(ledger, name, _ByRun(ledger))
        ledger.sessions = dict(state.sessions)
        ledger.prompts = dict(state.prompts)
        ledger.streams = dict(state.streams)
        return ledger

    def load(self, run_id: str) -> None:
        """Fold the run's records, once. Each reviewer's latest card and open prompt are the
        state's (and what happened since): an older card of this run does not replace them."""
        if run_id in self.loaded or self.state is None:
            return
        self.loaded.add(run_id)
        self.absorb(Ledger.from_events(self.state.run_records(run_id)))  # both without the GC
        gc.freeze()  # the run's records live as long as the ledger (see ``bot.engine``)

    # ------------------------------------------------------------------ what crosses runs

    def add(self, event: BaseModel) -> bool:
        run_id = getattr(event, "run_id", None)
        if isinstance(run_id, str):
            self.load(run_id)
        key = getattr(event, "idempotency_key", None)
        if isinstance(key, str) and key not in self.seen_keys and self.repeat(key) is not None:
            self.duplicates += 1  # its first record is in a run not folded yet
            return False
        return super().add(event)

    def repeat(self, idempotency_key: str) -> str | None:
        seen = self.seen_keys.get(idempotency_key)
        if seen is not None or self.state is None or idempotency_key in self.absent:
            return seen
        first = self.state.first_with_key(idempotency_key)
        if first is None:
            self.absent.add(idempotency_key)  # the state's lines never change: not there for good
            return None
        self.seen_keys[idempotency_key] = record_fingerprint(first)
        return self.seen_keys[idempotency_key]

    def message(self, channel: str, chat_id: str, message_id: str) -> Delivery | None:
        found = super().message(channel, chat_id, message_id)
        if found is not None or self.state is None:
            return found
        return self.state.message(channel, chat_id, message_id)  # of a run not folded yet

    def reviewed_runs(self, reviewer_key: str) -> set[tuple[str, str]]:
        known = self.state.reviewed(reviewer_key) if self.state else set()
        return super().reviewed_runs(reviewer_key) | known

    # ------------------------------------------------------------------ one run's state

    def reserve(self, item: ItemKey, reviewer_key: str) -> None:
        self.load(item[0])
        super().reserve(item, reviewer_key)

    def release(self, item: ItemKey, reviewer_key: str) -> None:
        self.load(item[0])
        super().release(item, reviewer_key)

    def register_run(self, run_id: str, item_ids: Iterable[str]) -> None:
        self.load(run_id)
        super().register_run(run_id, item_ids)

    def left(self, run_id: str, dimension: str, reviewer: Reviewer, k: int) -> int:
        self.load(run_id)
        return super().left(run_id, dimension, reviewer, k)

    def rating_count(self, run_id: str, item_id: str, dimension: str) -> int:
        self.load(run_id)
        return super().rating_count(run_id, item_id, dimension)

    def open_reviewers(self, run_id: str, item_id: str, dimension: str) -> set[str]:
        self.load(run_id)
        return super().open_reviewers(run_id, item_id, dimension)

    def open_cards(self, run_id: str, dimension: str, reviewer: Reviewer) -> list[str]:
        self.load(run_id)
        return super().open_cards(run_id, dimension, reviewer)

    def holders(self, run_id: str, item_id: str, dimension: str) -> set[str]:
        self.load(run_id)
        return super().holders(run_id, item_id, dimension)

    def dealt(self, run_id: str, item_id: str, dimension: str, reviewer: Reviewer) -> bool:
        self.load(run_id)
        return super().dealt(run_id, item_id, dimension, reviewer)

    def counts(self, run_id: str, dimension: str, reviewer: Reviewer) -> tuple[int, int]:
        self.load(run_id)
        return super().counts(run_id, dimension, reviewer)

    def ratings(self, run_id: str | None = None, dimension: str | None = None) -> list[Rating]:
        if run_id is None:
            raise ValueError("a ledger folded run by run lists the ratings of one run")
        self.load(run_id)
        return super().ratings(run_id, dimension)

    def item_judgments(
        self, run_id: str, item_id: str, dimension: str
    ) -> list[tuple[str, Rating | Skip]]:
        self.load(run_id)
        return super().item_judgments(run_id, item_id, dimension)

    def judgment(
        self, run_id: str, item_id: str, dimension: str, reviewer: Reviewer
    ) -> Rating | Skip | None:
        self.load(run_id)
        return super().judgment(run_id, item_id, dimension, reviewer)

    def note(self, run_id: str, item_id: str, dimension: str, reviewer: Reviewer) -> Note | None:
        self.load(run_id)
        return super().note(run_id, item_id, dimension, reviewer)


class _ByRun(dict):
    """A ledger's table keyed by (run, ...): looking up a key of a run not folded yet folds it
    first (iterating it sees the runs folded so far)."""

    def __init__(self, ledger: LazyLedger):
        super().__init__()
        self.ledger = ledger

    def _fold(self, key: object) -> None:
        if isinstance(key, tuple) and key and key[0] not in self.ledger.loaded:
            self.ledger.load(key[0])

    def __missing__(self, key: object) -> object:
        self._fold(key)
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        self._fold(key)
        return dict.__contains__(self, key)

    def get(self, key: object, default: object = None) -> object:
        self._fold(key)
        return dict.get(self, key, default)


def start_ledger(store: "Store", issues: list["LogIssue"] | None = None) -> Ledger:
    """The ledger an engine starts from: folded run by run from the index when the log is long
    enough to have one (:func:`analysis.index.enabled`), else the whole log folded now."""
    from analysis.review_state import review_state

    state = review_state(store.ratings.path, issues)
    if state is None:
        return Ledger.from_events(store.human_events(issues))
    return LazyLedger.of(state)


__all__ = ["LazyLedger", "start_ledger"]
