"""What the review engine hands a channel: cards made of sections and buttons, and actions back.

Channels render these within their platform's limits; they add no review logic. A review card's
buttons in each :class:`State` (which rows, which terminal keys, what the enter key does) are
:class:`CardLayout`'s; its text is :func:`bot.render.review_card`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, get_args

from evaluation.config import FOLLOW_UP_FIELDS
from evaluation.records import Confidence

if TYPE_CHECKING:
    from evaluation import Rating
    from evaluation.config import FollowUp, Scale

ActionKind = Literal[
    "rate",
    "toggle",
    "note",
    "text",
    "skip",
    "view_full",
    "view_tools",
    "ai_review",
    "guide",
    "next",
    "quit",
    "exclude",
    "confidence",
    "answer",
    "type",
    "undo",
]
ACTION_KEYS: dict[str, str] = {
    "quit": "q",
    "note": "n",
    "skip": "s",
    "view_full": "v",
    "view_tools": "x",
    "ai_review": "i",
    "undo": "u",
    "guide": "?",
}
"""Each action's terminal key, the same on every scale (enter skips as well, once a card has been
read). A scale option configured with one of them is given another key, and the card shows it;
``ai_review``'s is kept only where changes are reviewed (the only cards with that button)."""
_SPARE_KEYS = "abcdefghijklmnopqrstuvwxyz123456789"
"""Where an option whose key an action has finds another, after the letters of its label."""
CONFIDENCE_LEVELS: tuple[str, ...] = get_args(Confidence)
"""How sure a reviewer is, as a rating stores it: ``high``, ``medium``, ``low``."""
OTHER_REASON = "other"
"""The skip reason that also asks for a note."""


class State(str, Enum):
    """Where a review session (or one item of it) is."""

    RATING = "rating"
    """An item is shown, blind; waiting for a judgment."""
    FOLLOW_UP = "follow_up"
    """The item is rated and revealed; concern tags, a note, a changed rating or next."""
    NOTE = "note"
    """Waiting for the note's text."""
    CONFIDENCE = "confidence"
    """The item is rated (still blind); how sure is the reviewer? High, medium, low, or passed."""
    QUESTION = "question"
    """The item is rated (still blind); a follow-up of the dimension is asked (choices, or a typed
    answer)."""
    ANSWER = "answer"
    """Waiting for a follow-up's typed answer."""
    SKIP_REASON = "skip_reason"
    """The item is skipped; why? One of ``[review] skip_reasons``, or none."""
    DONE = "done"
    """No items left for this reviewer."""
    QUIT = "quit"
    """The reviewer stopped; the summary has been stored."""


@dataclass(frozen=True)
class Action:
    """Something a reviewer did: pressed a button, typed a key or sent a note."""

    kind: ActionKind
    value: str | None = None
    """The scale value for ``rate``, the tag for ``toggle``, the text for ``text``;
    ``high``/``medium``/``low`` for ``confidence``; ``field:choice`` for ``answer``; the field to
    type for ``type``; the reason for ``skip``; the question passed (``confidence`` or a field) for
    ``next``."""
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
    code: bool = False
    """Lines of code: one preformatted block, line breaks and indentation kept."""
    language: str | None = None
    """A code block's language, when its fence names one (``python``)."""


@dataclass(frozen=True)
class Reveal:
    """The AI's view of the item: shown only after the reviewer's rating is stored."""

    judge: str | None
    verdict: str | None
    confidence: float | str | None
    scores: dict[str, float]
    rationale: str | None
    label: str = "AI"
    """Who scored it, as shown (``AI``, ``lexical``, ``AI [recorded]``): from the kind the run
    header records."""


@dataclass(frozen=True)
class Card:
    """One item as a reviewer sees it at one moment."""

    run_id: str
    item_id: str
    dimension: str
    title: str
    """E.g. ``[3/15] "zod schema validation"``: the item's place in the run's review order, of
    the run's items."""
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
    """What the card asks now that the item is judged: how sure, a follow-up's question, why
    skip."""
    answers: tuple[str, ...] = ()
    """The answers given after the rating, as shown (``confidence: high``, ``code issues: syntax
    error``)."""
    enter: Button | None = None
    """What the enter key presses in the terminal (skip, next, pass a question)."""
    progress: str | None = None
    """The run's review progress in the card's dimension, shown under the title (``rated 12/18 ·
    complete 6/18 (k=2)``)."""

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


def answer_of(rating: "Rating", name: str) -> Any:
    """A follow-up field's value on a rating (a ``labels`` or a ``metadata`` field)."""
    return getattr(rating.labels if FOLLOW_UP_FIELDS[name] == "labels" else rating.metadata, name)


class CardLayout:
    """A review card's buttons for one dimension, in each :class:`State`: which rows, with which
    terminal keys; what the card asks after the judgment and what the enter key does.

    A pure function of the dimension's configuration and of the reviewer's rating of the item.
    """

    def __init__(
        self,
        scale: "Scale",
        tags: list[str],
        follow_ups: "dict[str, FollowUp]",
        skip_reasons: list[str],
        *,
        change: bool = False,
    ):
        self.scale = scale
        self.tags = tags
        self.follow_ups = follow_ups
        """The dimension's follow-up questions by field, in the order they are asked."""
        self.skip_reasons = skip_reasons
        self.actions = {a: k for a, k in ACTION_KEYS.items() if change or a != "ai_review"}
        """The actions' keys on these cards (:data:`ACTION_KEYS`; AI review only on changes)."""
        self.option_keys = self._option_keys()
        """Each scale option's key, by its value: its own, unless an action has it."""
        self.keys = self._allocate_keys()
        """Each button's terminal key, by what it does (``note``, ``tag:<tag>``,
        ``choice:<n>``…)."""

    def _option_keys(self) -> dict[str, str | None]:
        """The options' keys: the configured one, or (when an action has it) the first free letter
        of the option's label, else a spare letter or digit."""
        actions = set(self.actions.values())
        keys: dict[str, str | None] = {
            o.value: o.key for o in self.scale.options if o.key not in actions
        }
        taken = actions | set(keys.values())
        for option in self.scale.options:
            if option.value not in keys:
                label = [c for c in option.label.lower() if c.isascii() and c.isalnum()]
                key = next((c for c in [*label, *_SPARE_KEYS] if c not in taken), None)
                keys[option.value] = key
                taken.add(key)
        return {o.value: keys[o.value] for o in self.scale.options}

    def _allocate_keys(self) -> dict[str, str | None]:
        taken: set[str | None] = {*ACTION_KEYS.values(), *self.option_keys.values()}
        keys: dict[str, str | None] = dict(self.actions)
        pool = [c for c in "123456789abcdfhijklruwyz" if c not in taken]
        for tag, key in zip(self.tags, pool):
            keys[f"tag:{tag}"] = key
        # once an item is judged only its question's keys, the views and q are live (the scale is
        # not shown)
        views = {keys["view_full"], keys["view_tools"], keys.get("ai_review"), "q"}
        for level, digit in zip(CONFIDENCE_LEVELS, "123"):
            keys[f"confidence:{level}"] = level[0] if level[0] not in views else digit
        keys["type"] = next((c for c in "ow" if c not in views), None)
        choices = [c for c in "123456789abcdgjknprsuyz" if c not in views and c != keys["type"]]
        for n, key in enumerate(choices):
            keys[f"choice:{n}"] = key
        return keys

    def prompt(self, state: State, asking: str | None) -> str | None:
        """What a card asks after the judgment, in its state."""
        if state == State.CONFIDENCE:
            return "How sure are you?"
        if state in (State.QUESTION, State.ANSWER) and asking in self.follow_ups:
            follow_up = self.follow_ups[asking]
            return follow_up.question + (" (pick any, then Done)" if follow_up.multiple else "")
        if state == State.SKIP_REASON:
            return "⏭ Skipped — why? (optional)"
        return None

    def answers(self, current: "Rating | None") -> tuple[str, ...]:
        """A rating's answers after the judgment, as a card shows them."""
        if current is None:
            return ()
        shown = [f"confidence: {current.confidence}"] if current.confidence else []
        for name in self.follow_ups:
            value = answer_of(current, name)
            if value:
                given = ", ".join(value) if isinstance(value, list) else value
                shown.append(f"{name.replace('_', ' ')}: {given}")
        return tuple(shown)

    def enter(self, iid: str, state: State, asking: str | None) -> Button | None:
        """What the enter key does on a card (the terminal): skip before a judgment, pass a
        question, move on."""
        if state == State.RATING:
            return Button("skip", Action("skip", item_id=iid))
        if state == State.CONFIDENCE:
            return Button("skip", Action("next", "confidence", iid))
        if state == State.QUESTION and asking in self.follow_ups:
            label = "done" if self.follow_ups[asking].multiple else "skip"
            return Button(label, Action("next", asking, iid))
        if state == State.SKIP_REASON:
            return Button("no reason", Action("next", item_id=iid))
        if state == State.FOLLOW_UP:
            return Button("next", Action("next", item_id=iid))
        return None

    def rows(
        self,
        iid: str,
        current: "Rating | None",
        state: State,
        asking: str | None = None,
        *,
        final: bool = False,
        tools: bool = False,
        change: bool = False,
        undo: str | None = None,
    ) -> tuple[tuple[Button, ...], ...]:
        """The card's rows of buttons: ``tools`` when the item has tool captures to view, ``change``
        when it is a change (an "AI review" button), ``undo`` the item skipped just before (an
        "Undo skip" button; a skip's reasons always offer one)."""
        keys = self.keys
        scale = tuple(
            Button(o.label, Action("rate", o.value, iid), self.option_keys[o.value])
            for o in self.scale.options
        )
        views = [Button("View full", Action("view_full", item_id=iid), keys["view_full"])]
        if tools:
            views.append(
                Button("Tool captures", Action("view_tools", item_id=iid), keys["view_tools"])
            )
        if change:
            views.append(
                Button("AI review", Action("ai_review", item_id=iid), keys.get("ai_review"))
            )
        views.append(Button("Guide", Action("guide", item_id=iid), None))  # the terminal's key: ?
        quit_ = Button("Quit & save", Action("quit"), "q")
        if final:
            return (scale,)
        if state == State.SKIP_REASON:
            reasons = tuple(
                Button(_reason_label(r), Action("skip", r, iid), keys.get(f"choice:{n}"))
                for n, r in enumerate(self.skip_reasons)
            )
            return (
                reasons,
                (Button("No reason", Action("next", item_id=iid), None), self._undo(iid)),
                (*views, quit_),
            )
        if current is not None and state == State.CONFIDENCE:
            levels = tuple(
                Button(
                    ("✓ " if current.confidence == c else "") + c.title(),
                    Action("confidence", c, iid),
                    keys[f"confidence:{c}"],
                )
                for c in CONFIDENCE_LEVELS
            )
            return (
                levels,
                (Button("Skip", Action("next", "confidence", iid), None),),
                (*views, quit_),
            )
        if (
            current is not None
            and state in (State.QUESTION, State.ANSWER)
            and asking in self.follow_ups
        ):
            return self._question(iid, current, self.follow_ups[asking], (*views, quit_))
        if state == State.RATING or current is None:
            return (
                scale,
                (
                    Button("Note only", Action("note", item_id=iid), keys["note"]),
                    Button("Skip", Action("skip", item_id=iid), keys["skip"]),
                    *([self._undo(undo)] if undo is not None else []),
                ),
                (*views, quit_),
            )
        tags = tuple(
            Button(
                ("✓ " if t in current.concerns else "") + t,
                Action("toggle", t, iid),
                keys.get(f"tag:{t}"),
            )
            for t in self.tags
        )
        return (
            tags,
            (
                Button("Add note", Action("note", item_id=iid), keys["note"]),
                Button("Next", Action("next", item_id=iid), None),
            ),
            scale,
            (*views, quit_),
        )

    def _undo(self, skipped: str) -> Button:
        """The button that takes a skip back: the skipped item's card returns, to be rated."""
        return Button("Undo skip", Action("undo", item_id=skipped), self.keys["undo"])

    def _question(
        self, iid: str, current: "Rating", follow_up: "FollowUp", tail: tuple[Button, ...]
    ) -> tuple[tuple[Button, ...], ...]:
        """A follow-up's buttons: its choices (✓ on those given), "Other…" to type one, and Done or
        Skip."""
        given = answer_of(current, follow_up.field)
        given = set(given) if isinstance(given, list) else {given}
        choices = tuple(
            Button(
                ("✓ " if c in given else "") + c,
                Action("answer", f"{follow_up.field}:{c}", iid),
                self.keys.get(f"choice:{n}"),
            )
            for n, c in enumerate(follow_up.choices)
        )
        typing = "Other…" if follow_up.choices else "Type it…"
        more = [Button(typing, Action("type", follow_up.field, iid), self.keys["type"])]
        more = more if follow_up.text else []
        done = Button(
            "✓ Done" if follow_up.multiple else "Skip", Action("next", follow_up.field, iid), None
        )
        return (choices, (*more, done), tail)


def _reason_label(reason: str) -> str:
    """A skip reason as its button reads: capitalised; ``other`` says a note follows."""
    return "Other…" if reason == OTHER_REASON else reason[:1].upper() + reason[1:]
