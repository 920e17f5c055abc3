"""What an action comes to: the :class:`Transition` a handler of
:class:`bot.review.ReviewSession` decides (the next state, the records to store, what to say),
and the :class:`Step` the session hands the channel once those are stored (the state, the cards
to show, built when first asked for, the alert or detail, and whether anything was written);
neither holds review logic, they carry the engine's decision to the channel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from pydantic import BaseModel

from evaluation import ItemData, ReviewSummary

from .cards import Card, Progress, State


@dataclass
class Transition:
    """What a handler decided."""

    state: State
    item: ItemData | None = None
    """The item acted on."""
    records: list[BaseModel] = field(default_factory=list)
    advance: bool = False
    """The item is finished: move on after storing."""
    detail: str | None = None
    alert: str | None = None
    repeated: bool = False
    """The action was stored before: its after-effects again, nothing written."""
    asking: str | None = None
    """In QUESTION or ANSWER: the follow-up's field."""
    prompt: str | None = None
    """In ANSWER: what the typed text answers (a chat's reply prompt shows it)."""
    said: str | None = None
    """What a chat says once a typed text is stored, when it is not a note."""
    focus: bool = False
    """The terminal moves to :attr:`item` (a skip taken back: the skipped item's card returns)."""


@dataclass
class Step:
    """What a channel shows after an action."""

    state: State
    make_card: Callable[[], Card | None] | None = field(default=None, repr=False)
    """Builds :attr:`card` when it is first asked for."""
    make_finished: Callable[[], Card | None] | None = field(default=None, repr=False)
    """Builds :attr:`finished` when it is first asked for."""
    detail: str | None = None
    """Full response or tool captures to show."""
    alert: str | None = None
    """A short message (stale button, empty note…)."""
    summary: ReviewSummary | None = None
    """The session summary on quit or when done."""
    stored: int = 0
    """Records stored by this action."""
    repeated: bool = False
    """The action had been stored before (a redelivered event, a second tap): nothing was
    written."""
    item_id: str | None = None
    """The item the action was about."""
    _progress: Callable[[], Progress] | None = field(default=None, repr=False)
    prompt: str | None = None
    """In ANSWER: what the typed text answers (a follow-up's question and the item)."""
    said: str | None = None
    """What a chat says once a typed text is stored, when it is not a note ("📝 Saved as code
    issues.")."""

    @cached_property
    def card(self) -> Card | None:
        """The card to show now: the item acted on (chat), or the current item (terminal).

        A chat builds it when it shows it, after the tap is answered (the latest state of the item
        then)."""
        return self.make_card() if self.make_card else None

    @cached_property
    def finished(self) -> Card | None:
        """When the action finished an item: its final card (recorded judgment, AI revealed)."""
        return self.make_finished() if self.make_finished else None

    @property
    def progress(self) -> Progress | None:
        """Where the reviewer is now (worked out when asked)."""
        return self._progress() if self._progress else None

    @property
    def effective(self) -> bool:
        """Whether the action took effect, now or when it was first stored (a repeat)."""
        return bool(self.stored) or self.repeated


__all__ = ["Step", "Transition"]
