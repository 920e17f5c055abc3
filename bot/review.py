"""The channel-agnostic review engine: named states, one handler per state.

A channel feeds :class:`Action` s to :meth:`ReviewSession.act` (or ``aact``) and renders the
:class:`Step` it gets back. Each handler returns a :class:`Transition`: the next state and the
records to store. The session stores them (fsynced) *before* it changes any state or returns,
so whatever a channel acknowledges is already on disk. All state is derived from the log: a
new session on any channel resumes where the last one stopped.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import date
from enum import Enum
from typing import Callable

from pydantic import BaseModel

from evaluation import (
    HilbotConfig,
    ItemData,
    Labels,
    Ledger,
    LogIssue,
    Note,
    Rating,
    RatingMetadata,
    Reviewer,
    ReviewSummary,
    Run,
    Skip,
    Store,
    summarize,
    utcnow,
)

from . import assignment, render
from .cards import Action, Button, Card, Progress, Reveal, Section


class State(str, Enum):
    """Where a review session is."""

    RATING = "rating"
    """An item is shown, blind; waiting for a judgment."""
    FOLLOW_UP = "follow_up"
    """The item is rated and revealed; concern tags, a note, a changed rating or next."""
    NOTE = "note"
    """Waiting for the note's text."""
    DONE = "done"
    """No items left for this reviewer."""
    QUIT = "quit"
    """The reviewer stopped; the summary has been stored."""


@dataclass
class Transition:
    """What a state handler decided."""

    state: State
    records: list[BaseModel] = field(default_factory=list)
    advance: bool = False
    """Move on to the next item after storing."""
    detail: str | None = None
    alert: str | None = None


@dataclass
class Step:
    """What a channel shows after an action."""

    state: State
    card: Card | None = None
    """The card to show now: the current item, or the next one after advancing."""
    finished: Card | None = None
    """When the action finished an item: its final card (recorded judgment, AI revealed)."""
    detail: str | None = None
    """Full response or tool captures to show."""
    alert: str | None = None
    """A short message (stale button, empty note…)."""
    summary: ReviewSummary | None = None
    """The session summary on quit or when done."""
    stored: int = 0
    """Records stored by this action."""
    _progress: Callable[[], Progress] | None = field(default=None, repr=False)

    @property
    def progress(self) -> Progress | None:
        """Where the reviewer is now (worked out when asked)."""
        return self._progress() if self._progress else None


class ReviewEngine:
    """Shared state for every session in one process: the store, the config and the folded log."""

    def __init__(self, store: Store, config: HilbotConfig, issues: list[LogIssue] | None = None):
        self.store = store
        self.config = config
        self.issues = issues
        """Unreadable lines of the ratings log and of every run read, each reported once (None: not collected)."""
        self.ledger = Ledger.from_events(store.human_events(issues))
        self._runs: dict[str, Run] = {}
        self._sizes: dict[str, int] = {}
        self._orders: dict[str, tuple[Run, list[ItemData]]] = {}

    def order(self, run_id: str) -> list[ItemData]:
        """The run's items in assignment order, worked out once per reading of the run."""
        run = self.run(run_id)
        if self._orders.get(run_id, (None,))[0] is not run:
            self._orders[run_id] = (run, assignment.order(run))
        return self._orders[run_id][1]

    def run(self, run_id: str) -> Run:
        """A run, read once and cached (see :meth:`refresh`)."""
        if run_id not in self._runs:
            self._sizes[run_id] = self.store.run_path(run_id).stat().st_size if self.store.run_exists(run_id) else 0
            found: list[LogIssue] | None = None if self.issues is None else []
            self._runs[run_id] = self.store.load_run(run_id, found)
            if self.issues is not None:
                self.issues.extend(i for i in found if i not in self.issues)
        return self._runs[run_id]

    def refresh(self, run_id: str) -> int:
        """Re-read a run whose file has grown (it is still being evaluated); returns the new item count."""
        before = len(self.run(run_id).items)
        size = self.store.run_path(run_id).stat().st_size
        if size == self._sizes.get(run_id):
            return 0
        del self._runs[run_id]
        return len(self.run(run_id).items) - before

    def session(self, run_id: str, reviewer: Reviewer, dimension: str | None = None, channel: str = "terminal") -> "ReviewSession":
        """Start or resume a reviewer's session on a run and dimension (default: the run's first)."""
        run = self.run(run_id)
        dimension = run.header.dimensions[0] if dimension is None else dimension  # '' is an unknown dimension
        self.config.dimension(dimension)  # unknown dimension → ConfigError with the fix
        return ReviewSession(self, run, dimension, reviewer, channel)


class ReviewSession:
    """One reviewer reviewing one run on one dimension."""

    def __init__(self, engine: ReviewEngine, run: Run, dimension: str, reviewer: Reviewer, channel: str):
        self.engine = engine
        self.run_id = run.run_id
        self.dimension = dimension
        self.reviewer = reviewer
        self.channel = channel
        self.scale = engine.config.scale_for(dimension)
        self.tags = engine.config.concerns_for(dimension)
        self.question = engine.config.dimension(dimension).question or self.scale.question
        self.state = State.RATING
        self.item: ItemData | None = None
        self._note_from = State.RATING
        self._session_id = uuid.uuid4().hex[:12]
        self._seq = 0
        self._handlers: dict[State, Callable[[Action], Transition]] = {
            State.RATING: self._on_rating,
            State.FOLLOW_UP: self._on_follow_up,
            State.NOTE: self._on_note,
        }
        self._keys = self._allocate_keys()

    # ------------------------------------------------------------------ public

    @property
    def ledger(self) -> Ledger:
        return self.engine.ledger

    @property
    def run(self) -> Run:
        """The run, as last read (a run still being evaluated grows)."""
        return self.engine.run(self.run_id)

    def focus(self, item_id: str, *, note: bool = False) -> None:
        """Make an item current: a chat channel's tap on any card the reviewer holds.

        The state follows from the log: rated → follow-up (tags, note, change the rating),
        otherwise rating. ``note`` puts the session in the note state, for a prompt's answer.
        """
        self.item = self.run.item(item_id)
        self.state = State.FOLLOW_UP if self._current() is not None else State.RATING
        if note:
            self._note_from, self.state = self.state, State.NOTE

    def progress(self) -> Progress:
        """Done / skipped / remaining for this reviewer."""
        return assignment.progress(self.run, self.ledger, self.dimension, self.reviewer, self.engine.config.review.k,
                                   self.engine.order(self.run_id))

    def pending(self, limit: int | None = None) -> list[ItemData]:
        """Items still to deal this reviewer, in assignment order (open cards excluded), the first ``limit``."""
        return assignment.queue(self.run, self.ledger, self.dimension, self.reviewer, self.engine.config.review.k,
                                ordered=self.engine.order(self.run_id), limit=limit)

    def card_for(self, item_id: str) -> Card:
        """An item's card as this reviewer should see it now (blind until they have rated it)."""
        self.focus(item_id)
        return self._card(revealed=self.state != State.RATING)

    def start(self) -> Step:
        """Show the first card (or report that nothing is left)."""
        self._advance()
        return self._step(Transition(self.state))

    def act(self, action: Action) -> Step:
        """Handle an action; the records it makes are on disk before this returns."""
        transition = self._decide(action)
        if transition.records:
            self.engine.store.ratings.append_many(transition.records)
        return self._apply(transition)

    async def aact(self, action: Action) -> Step:
        """Async :meth:`act` for the chat channels (appends share fsyncs across reviewers)."""
        transition = self._decide(action)
        if transition.records:
            await self.engine.store.ratings.aappend_many(transition.records)
        return self._apply(transition)

    def summary(self) -> ReviewSummary:
        """The hilReview for this reviewer's work on the run so far."""
        return summarize(self.ledger, self.run, self.dimension, self.reviewer)

    # ------------------------------------------------------------------ handlers

    def _decide(self, action: Action) -> Transition:
        if self.state == State.QUIT:
            return Transition(self.state, alert="This review is finished.")
        if action.delivery_id and self._key(action) in self.ledger.seen_keys:
            return Transition(self.state)  # a redelivered update: already counted
        if action.kind == "quit":
            return Transition(State.QUIT, records=[self.summary()])
        if self.state == State.DONE:
            return Transition(self.state, alert="This review is finished.")
        if action.item_id is not None and self.item is not None and action.item_id != self.item.id:
            return Transition(self.state, alert="That card is no longer current.")
        if action.kind == "view_full":
            return Transition(self.state, detail=render.full_text(self.item))
        if action.kind == "view_tools":
            return Transition(self.state, detail=render.tools_text(self.item))
        return self._handlers[self.state](action)

    def _on_rating(self, action: Action) -> Transition:
        if action.kind == "rate":
            return self._rate(action)
        if action.kind == "skip":
            return Transition(State.RATING, [self._skip(action, action.value or None)], advance=True)
        if action.kind == "note":
            self._note_from = State.RATING
            return Transition(State.NOTE)
        return Transition(State.RATING, alert=f"Pick a rating ({self.scale.question})")

    def _on_follow_up(self, action: Action) -> Transition:
        if action.kind == "rate":
            return self._rate(action)
        if action.kind == "toggle":
            if action.value not in self.tags:
                return Transition(State.FOLLOW_UP, alert=f"Unknown concern tag {action.value!r}")
            return Transition(State.FOLLOW_UP, [self._toggled(action)])
        if action.kind == "note":
            self._note_from = State.FOLLOW_UP
            return Transition(State.NOTE)
        if action.kind in ("next", "skip"):
            return Transition(State.RATING, advance=True)
        return Transition(State.FOLLOW_UP)

    def _on_note(self, action: Action) -> Transition:
        text = (action.value or "").strip() if action.kind == "text" else ""
        if not text:
            return Transition(self._note_from, alert="No note added.")
        note = Note(**self._event_fields(action), text=text)
        if self._note_from == State.RATING:  # "note only": a note instead of a score
            return Transition(State.RATING, [note, self._skip(action, "note only", suffix=":skip")], advance=True)
        return Transition(State.FOLLOW_UP, [note])

    # ------------------------------------------------------------------ records

    def _key(self, action: Action, suffix: str = "") -> str:
        if action.delivery_id:
            return f"{self.channel}:{action.delivery_id}{suffix}"
        return f"{self.channel}:{self._session_id}:{self._seq}{suffix}"

    def _event_fields(self, action: Action, suffix: str = "") -> dict:
        return dict(run_id=self.run.run_id, item_id=self.item.id, dimension=self.dimension,
                    reviewer=self.reviewer, channel=self.channel, idempotency_key=self._key(action, suffix))

    def _current(self) -> Rating | None:
        judgment = self.ledger.judgment(self.run.run_id, self.item.id, self.dimension, self.reviewer)
        return judgment if isinstance(judgment, Rating) else None

    def _rate(self, action: Action) -> Transition:
        option = self.scale.option(action.value or "")
        if option is None:
            return Transition(self.state, alert=f"Unknown rating {action.value!r}")
        previous = self._current()
        follow_up = option.ask_concerns and bool(self.tags)
        if previous is not None and previous.judgment == option.value:  # a double tap: counted once
            return Transition(State.FOLLOW_UP if follow_up else self.state)
        rating = Rating(
            **self._event_fields(action), judgment=option.value, score=option.score,
            concerns=list(previous.concerns) if previous else [],
            ai_verdict_shown=previous is not None and self.engine.config.review.reveal_after_rating,
            labels=Labels(**option.labels),
            metadata=RatingMetadata(source_type=self.item.features.get("source_type"), session_date=date.today().isoformat()),
        )
        return Transition(State.FOLLOW_UP if follow_up else State.RATING, [rating], advance=not follow_up)

    def _toggled(self, action: Action) -> Rating:
        previous = self._current()
        tags = set(previous.concerns) ^ {action.value}
        return previous.model_copy(update={
            **self._event_fields(action), "concerns": [t for t in self.tags if t in tags],
            "ai_verdict_shown": self.engine.config.review.reveal_after_rating, "timestamp": utcnow(),
        })

    def _skip(self, action: Action, reason: str | None, suffix: str = "") -> Skip:
        return Skip(**self._event_fields(action, suffix), skip_reason=reason)

    # ------------------------------------------------------------------ applying

    def _apply(self, transition: Transition) -> Step:
        self._seq += 1
        for record in transition.records:
            self.ledger.add(record)
        finished = None
        if transition.advance:
            finished = self._card(revealed=True, final=True)
        self.state = transition.state
        if transition.advance:
            self._advance()
        return self._step(transition, finished)

    def _advance(self) -> None:
        pending = self.pending(limit=1)
        if pending:
            self.item, self.state = pending[0], State.RATING
        else:
            self.item, self.state = None, State.DONE

    def _step(self, transition: Transition, finished: Card | None = None) -> Step:
        ended = self.state in (State.DONE, State.QUIT)
        card = None if ended or self.item is None else self._card(revealed=self.state != State.RATING)
        summary = next((r for r in transition.records if isinstance(r, ReviewSummary)), None)
        if self.state == State.DONE and summary is None:
            summary = self.summary()
        return Step(self.state, card, finished, transition.detail, transition.alert, summary,
                    len(transition.records), self.progress)

    # ------------------------------------------------------------------ cards

    def _allocate_keys(self) -> dict[str, str | None]:
        taken = {o.key for o in self.scale.options} | {"q"}
        keys: dict[str, str | None] = {"quit": "q"}
        for name, candidates in (("note", "nm"), ("skip", "s"), ("view_full", "vf"), ("view_tools", "tx")):
            keys[name] = next((c for c in candidates if c not in taken), None)
            taken.add(keys[name])
        pool = [c for c in "123456789abcdfhijklruwyz" if c not in taken]
        for tag, key in zip(self.tags, pool):
            keys[f"tag:{tag}"] = key
        return keys

    def _card(self, *, revealed: bool, final: bool = False) -> Card:
        item = self.item
        current = self._current()
        position = sum(self.ledger.counts(self.run_id, self.dimension, self.reviewer)) + (0 if final else 1)
        title = f'[{position}/{len(self.run.items)}] "{render.one_line(item.query.query)}"'
        sections = tuple(Section(t, tuple(lines)) for t, lines in render.item_sections(item))
        show_ai = revealed and current is not None and self.engine.config.review.reveal_after_rating
        return Card(
            run_id=self.run.run_id, item_id=item.id, dimension=self.dimension, title=title, sections=sections,
            question=self.question, buttons=self._buttons(item, current, final),
            recorded=current.judgment if current else None,
            concerns=tuple(current.concerns) if current else (),
            reveal=_reveal(item) if show_ai else None,
            has_more=render.has_more(item), has_tools=bool(item.tool_captures),
        )

    def _buttons(self, item: ItemData, current: Rating | None, final: bool) -> tuple[tuple[Button, ...], ...]:
        keys, iid = self._keys, item.id
        scale = tuple(Button(o.label, Action("rate", o.value, iid), o.key) for o in self.scale.options)
        views = [Button("View full", Action("view_full", item_id=iid), keys["view_full"])]
        if item.tool_captures:
            views.append(Button("Tool captures", Action("view_tools", item_id=iid), keys["view_tools"]))
        quit_ = Button("Quit & save", Action("quit"), "q")
        if final:
            return (scale,)
        if self.state == State.RATING or current is None:
            return (scale, (Button("Note only", Action("note", item_id=iid), keys["note"]),
                            Button("Skip", Action("skip", item_id=iid), keys["skip"])), (*views, quit_))
        tags = tuple(Button(("✓ " if t in current.concerns else "") + t, Action("toggle", t, iid), keys.get(f"tag:{t}"))
                     for t in self.tags)
        return (tags, (Button("Add note", Action("note", item_id=iid), keys["note"]),
                       Button("Next", Action("next", item_id=iid), None)), scale, (*views, quit_))


def _reveal(item: ItemData) -> Reveal:
    evaluation = item.evaluation
    return Reveal(evaluation.judge, evaluation.verdict, evaluation.confidence, dict(evaluation.scores), evaluation.rationale)


__all__ = ["ReviewEngine", "ReviewSession", "State", "Step", "Transition"]
