"""What the review engine hands a channel: cards made of sections and buttons, and actions back.

Channels render these within their platform's limits; they add no review logic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ActionKind = Literal["rate", "toggle", "note", "text", "skip", "view_full", "view_tools", "ai_review", "guide", "next",
                     "quit", "exclude", "confidence", "answer", "type"]


@dataclass(frozen=True)
class Action:
    """Something a reviewer did: pressed a button, typed a key or sent a note."""

    kind: ActionKind
    value: str | None = None
    """The scale value for ``rate``, the tag for ``toggle``, the text for ``text``; ``high``/``medium``/``low`` for
    ``confidence``; ``field:choice`` for ``answer``; the field to type for ``type``; the reason for ``skip``; the
    question passed (``confidence`` or a field) for ``next``."""
    item_id: str | None = None
    """The item the button belonged to; stale buttons are checked against the current item."""
    delivery_id: str | None = None
    """Platform delivery id (update id, action ts, keypress number) → the idempotency key."""


@dataclass(frozen=True)
class Button:
    """One button: its label, the action it sends and its terminal key."""

    label: str
    action: Action
    key: str | None = None


@dataclass(frozen=True)
class Section:
    """A titled block of lines."""

    title: str | None
    lines: tuple[str, ...]
    mono: bool = False
    """Lines shown in a monospaced font, as they are (a diff)."""


@dataclass(frozen=True)
class Reveal:
    """The AI's view of the item: shown only after the reviewer's rating is stored."""

    judge: str | None
    verdict: str | None
    confidence: float | str | None
    scores: dict[str, float]
    rationale: str | None
    label: str = "AI"
    """Who scored it, as shown (``AI``, ``lexical``, ``AI [recorded]``): from the kind the run header records."""


@dataclass(frozen=True)
class Card:
    """One item as a reviewer sees it at one moment."""

    run_id: str
    item_id: str
    dimension: str
    title: str
    """E.g. ``[3/15] "zod schema validation"``."""
    sections: tuple[Section, ...]
    question: str | None
    buttons: tuple[tuple[Button, ...], ...]
    """Rows of buttons."""
    recorded: str | None = None
    """The reviewer's stored judgment, once there is one."""
    concerns: tuple[str, ...] = ()
    """Concern tags currently toggled on."""
    reveal: Reveal | None = None
    """The AI verdict; None while the card is blind."""
    has_more: bool = False
    """Whether ``view_full`` would show more than the card."""
    has_tools: bool = False
    """Whether the item has tool captures to view."""
    prompt: str | None = None
    """What the card asks now that the item is judged: how sure, a follow-up's question, why skip."""
    answers: tuple[str, ...] = ()
    """The answers given after the rating, as shown (``confidence: high``, ``code issues: syntax error``)."""
    enter: Button | None = None
    """What the enter key presses in the terminal (skip, next, pass a question)."""

    def button_for_key(self, key: str) -> Button | None:
        """The button a terminal key presses."""
        return next((b for row in self.buttons for b in row if b.key == key), None)


@dataclass(frozen=True)
class Progress:
    """Where a reviewer is in a run."""

    done: int
    skipped: int
    remaining: int

    @property
    def total(self) -> int:
        return self.done + self.skipped + self.remaining
