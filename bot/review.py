"""The channel-agnostic review engine's state machine: named states, one handler per action.

A channel feeds :class:`Action` s to :meth:`ReviewSession.act` (or ``aact``) and renders the
:class:`Step` it gets back. Each handler returns a :class:`Transition`: the next state and the
records to store. The session stores them (fsynced) *before* it changes any state or returns,
so whatever a channel acknowledges is already on disk. All state is derived from the log: a
new session on any channel resumes where the last one stopped.

An action names its item (chat channels act on any card a reviewer holds); that item's state
is derived from the log — rated means follow-up (concern tags, a note, a changed rating),
otherwise rating. An action without an item acts on the session's current item, which the
terminal walks through one by one. Building a card is a pure read.

After a rating the dimension may ask more, in order (``[dimensions.X]``): how sure the
reviewer is (:attr:`State.CONFIDENCE`), then each follow-up whose ``when`` names the option
chosen (:attr:`State.QUESTION`, :attr:`State.ANSWER` for a typed answer); then the concern
tags. Each answer is a new ``rating`` record under its own key (the rating with that field
set), and passing a question writes nothing: what comes next follows from the action itself,
so a button on any card works without remembering where the reviewer was. A skip is stored at
once; its reason, when ``[review] skip_reasons`` offers some, is asked next
(:attr:`State.SKIP_REASON`) and stored as a second skip carrying it; ``undo`` takes a skip
back (its card returns to be rated, nothing is written: a rating replaces the skip). The card
stays blind until the questions are answered or passed.

A platform event that comes again (the same idempotency key with the same action) is a
repeat: nothing is written, and the step carries the action's after-effects again (the
reveal, the follow-ups, moving on), so a crash between storing and answering loses nothing.
A key that comes back with a *different* action is stored under a key of its own.

Around the state machine: what every session shares is :mod:`bot.engine`'s, the transition and
the step are :mod:`bot.steps`'s, the follow-ups' order and values :mod:`bot.follow_ups`'s, the
keys :mod:`bot.idempotency`'s and the summary at the end :mod:`bot.ending`'s.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from datetime import date
from functools import partial
from typing import Any, Callable

from pydantic import BaseModel

from evaluation import (
    ItemData,
    Labels,
    Ledger,
    Note,
    Rating,
    RatingMetadata,
    Reviewer,
    ReviewSummary,
    Run,
    Skip,
    summarize,
    utcnow,
)
from evaluation.config import FOLLOW_UP_FIELDS, FollowUp
from evaluation.reviews import fingerprint

from . import assignment, follow_ups, render
from .cards import (
    CONFIDENCE_LEVELS,
    OTHER_REASON,
    Action,
    Card,
    CardLayout,
    Progress,
    State,
    answer_of,
)
from .ending import Closing, closing, ending, with_synthesis
from .engine import ReviewEngine
from .idempotency import action_text, resolve_key
from .invocation import prefix
from .progress import run_progress
from .steps import Step, Transition


@dataclass(frozen=True)
class _Act:
    """An action on its item, with the idempotency key its records get."""

    action: Action
    item: ItemData
    key: str


class ReviewSession:
    """One reviewer reviewing one run on one dimension."""

    def __init__(
        self, engine: ReviewEngine, run: Run, dimension: str, reviewer: Reviewer, channel: str
    ):
        self.engine = engine
        self.run_id = run.run_id
        self.dimension = dimension
        self.reviewer = reviewer
        self.channel = channel
        self.scale = engine.config.scale_for(dimension)
        self.tags = engine.config.concerns_for(dimension)
        config = engine.config.dimension(dimension)
        self.question = config.question or self.scale.question
        self.confidence = config.confidence
        """Whether a rating is followed by "how sure are you?"."""
        self.follow_ups: dict[str, FollowUp] = {f.field: f for f in config.follow_ups}
        """The dimension's follow-up questions by field, in the order they are asked."""
        self.skip_reasons = list(engine.config.review.skip_reasons)
        self.state = State.RATING
        """The terminal's state (chat channels act on items and get each item's state from the
        log)."""
        self.item: ItemData | None = None
        """The terminal's current item (None on chat channels)."""
        self.asking: str | None = None
        """The terminal's current follow-up (its field) in QUESTION and ANSWER."""
        self._typing: dict[str, str] = {}
        """Per item id: the follow-up whose typed answer the next text is (a text without one is a
        note)."""
        self._session_id = uuid.uuid4().hex[:12]
        self._seq = 0
        self._handlers: dict[str, Callable[[_Act, Rating | None], Transition]] = {
            "rate": self._on_rate,
            "toggle": self._on_toggle,
            "note": self._on_note,
            "text": self._on_text,
            "skip": self._on_skip,
            "next": self._on_next,
            "confidence": self._on_confidence,
            "answer": self._on_answer,
            "type": self._on_type,
            "undo": self._on_undo,
        }
        self.layout = CardLayout(
            self.scale,
            self.tags,
            self.follow_ups,
            self.skip_reasons,
            change=run.header.kind == "change",
        )
        """The dimension's card buttons and their terminal keys (:mod:`bot.cards`)."""
        self.undoable: str | None = None
        """The terminal's item skipped just before the current one: its skip can be taken back."""

    # ------------------------------------------------------------------ public

    @property
    def ledger(self) -> Ledger:
        return self.engine.ledger

    @property
    def run(self) -> Run:
        """The run, as last read (a run still being evaluated grows)."""
        return self.engine.run(self.run_id)

    def progress(self) -> Progress:
        """Done / skipped / remaining for this reviewer."""
        return assignment.progress(
            self.run,
            self.ledger,
            self.dimension,
            self.reviewer,
            self.engine.config.review.k,
            self.engine.order(self.run_id),
        )

    def pending(self, limit: int | None = None) -> list[ItemData]:
        """Items still to deal this reviewer, in assignment order (open cards excluded), the first
        ``limit``."""
        return assignment.queue(
            self.run,
            self.ledger,
            self.dimension,
            self.reviewer,
            self.engine.config.review.k,
            ordered=self.engine.order(self.run_id),
            limit=limit,
        )

    def card(self, item_id: str, *, final: bool = False) -> Card:
        """An item's card as this reviewer should see it now (blind until they have rated it); a
        pure read."""
        item = self.run.item(item_id)
        assert item is not None, item_id  # the ids dealt come from this run
        return self._card(item, final=final)

    def start(self) -> Step:
        """Show the first card (or report that nothing is left)."""
        self._advance()
        return self._step(Transition(self.state, self.item), linear=True)

    def act(self, action: Action) -> Step:
        """Handle an action; the records it makes are on disk before this returns."""
        review = asyncio.run(self._ai_review(action)) if action.kind == "ai_review" else None
        transition = self._decide(action, review)
        if (summary := ending(transition)) is not None:
            transition.records = [self._with_synthesis(summary)]
        if transition.records:
            self.engine.store.ratings.append_many(transition.records)
        return self._apply(transition)

    async def aact(self, action: Action) -> Step:
        """Async :meth:`act` for the chat channels (appends share fsyncs across reviewers; a
        synthesis runs in a thread)."""
        review = await self._ai_review(action) if action.kind == "ai_review" else None
        transition = self._decide(action, review)
        if (summary := ending(transition)) is not None:
            transition.records = [await asyncio.to_thread(self._with_synthesis, summary)]
        if transition.records:
            await self.engine.store.ratings.aappend_many(transition.records)
        return self._apply(transition)

    def _with_synthesis(self, summary: ReviewSummary) -> ReviewSummary:
        """The summary with the run's synthesis, when ``[review] synthesize_at_end`` asks for one
        (:func:`bot.ending.with_synthesis`)."""
        return with_synthesis(
            self.engine.store,
            self.engine.config,
            summary,
            run_id=self.run_id,
            dimension=self.dimension,
            reviewer=self.reviewer,
        )

    def summary(self) -> ReviewSummary:
        """The hilReview for this reviewer's work on the run so far."""
        metric = self.engine.config.metric_for(self.dimension)
        return summarize(self.ledger, self.run, self.dimension, self.reviewer, metric)

    def closing(self, summary: ReviewSummary) -> Closing:
        """What the session's end says after the summary's counts: the synthesis, or a change
        run's decisions and how to write them (:func:`bot.ending.closing`)."""
        hilbot = prefix(str(self.engine.store.root), self.engine.config.data_dir)
        return closing(summary, self.run, self.ledger, self.reviewer, hilbot)

    # ------------------------------------------------------------------ deciding

    async def _ai_review(self, action: Action) -> str | None:
        """The triage judge's review of the action's change, made now (the "AI review" button), as
        text; None for other items."""
        item = self.item if action.item_id is None else self.run.item(action.item_id)
        if item is None or not render.is_change(item):
            return None
        return await self.engine.review_change(item)

    def guide(self) -> str:
        """The guidelines: what the dimension asks and what each option of its scale means (``?``,
        the Guide button)."""
        return render.guide_text(
            self.dimension,
            self.question,
            self.scale,
            keys=self.layout.option_keys,
            skip=True,
            confidence=self.confidence,
        )

    def _decide(self, action: Action, review_text: str | None = None) -> Transition:
        if self.state == State.QUIT and action.item_id is None:  # a chat's card still takes taps
            return Transition(self.state, alert="This review is finished.")
        if action.kind == "quit":
            return Transition(State.QUIT, records=[self.summary()])
        item = self.item if action.item_id is None else self.run.item(action.item_id)
        if item is None:
            return Transition(
                self.state,
                alert="This review is finished."
                if action.item_id is None
                else "That item is not in this run any more.",
            )
        if action.kind in ("view_full", "view_tools"):
            detail = (
                render.full_text(item, self._context())
                if action.kind == "view_full"
                else render.tools_text(item)
            )
            return self._stay(item, detail=detail)
        if action.kind == "guide":
            return self._stay(item, detail=self.guide())
        if action.kind == "ai_review":
            return self._stay(
                item, detail=review_text or "No AI review: this item is not a change."
            )
        rated = self._rating(item)
        key, repeated = self._keyed(action, item)
        if repeated:
            return self._repeat(action, item, rated)
        handler = self._handlers.get(action.kind)
        if handler is None:
            return self._stay(item, alert=f"Pick a rating ({self.scale.question})")
        return handler(_Act(action, item, key), rated)

    def _state_of(self, item: ItemData) -> State:
        """An item's state for this reviewer, from the log."""
        if self._rating(item) is not None:
            return State.FOLLOW_UP
        return State.SKIP_REASON if self.skip_reasons and self._skipped(item) else State.RATING

    def _stay(self, item: ItemData, **kw: Any) -> Transition:
        """An item stays where it is (a view, a refused action): on the terminal's current item,
        where the terminal is (unless it was waiting for text); otherwise its state from the log."""
        if (
            self.item is not None
            and item.id == self.item.id
            and self.state not in (State.NOTE, State.ANSWER)
        ):
            return Transition(self.state, item, asking=self.asking, **kw)
        return Transition(self._state_of(item), item, **kw)

    def _asked(self, judgment: str) -> list[str]:
        """What a rating of ``judgment`` is followed by (:func:`bot.follow_ups.asked`)."""
        return follow_ups.asked(judgment, self.follow_ups, confidence=self.confidence)

    def _onwards(
        self,
        item: ItemData,
        rating: Rating,
        after: str | None,
        records: list[BaseModel] | None = None,
        **kw: Any,
    ) -> Transition:
        """Where a rated item goes once ``after`` is answered or passed (None: the rating itself):
        the next question, else the concern tags (when the option asks for them), else on to the
        next item."""
        asked = self._asked(rating.judgment)
        rest = asked if after is None else asked[asked.index(after) + 1 :] if after in asked else []
        if rest:
            state = State.CONFIDENCE if rest[0] == "confidence" else State.QUESTION
            return Transition(
                state,
                item,
                records or [],
                asking=None if rest[0] == "confidence" else rest[0],
                **kw,
            )
        option = self.scale.option(rating.judgment)
        if option is not None and option.ask_concerns and self.tags:
            return Transition(State.FOLLOW_UP, item, records or [], **kw)
        return Transition(State.RATING, item, records or [], advance=True, **kw)

    def _answered(self, act: _Act, rated: Rating, **update: Any) -> Rating:
        """The rating again with an answer: a new record under this action's key (the log is never
        rewritten).

        ``ai_verdict_shown`` stays the rating's: the card is blind while its questions are asked."""
        return rated.model_copy(update={**self._event_fields(act), **update, "timestamp": utcnow()})

    def _on_rate(self, act: _Act, rated: Rating | None) -> Transition:
        option = self.scale.option(act.action.value or "")
        if option is None:
            return self._stay(act.item, alert=f"Unknown rating {act.action.value!r}")
        if (
            rated is not None and rated.judgment == option.value
        ):  # a second tap: counted once, its effects again
            return self._onwards(act.item, rated, None, repeated=True)
        labels, metadata = (
            dict(option.labels),
            {
                "source_type": act.item.features.get("source_type"),
                "session_date": date.today().isoformat(),
            },
        )
        if rated is not None:  # a changed rating keeps the answers still asked after the new option
            for name in self._asked(option.value):
                if name != "confidence" and (value := answer_of(rated, name)) is not None:
                    (labels if FOLLOW_UP_FIELDS[name] == "labels" else metadata)[name] = value
        kept = list(rated.concerns) if rated else []
        dropped = [] if option.ask_concerns else kept  # the option takes no tags: they go
        rating = Rating(
            **self._event_fields(act),
            judgment=option.value,
            score=option.score,
            concerns=[] if dropped else kept,
            concerns_dropped=dropped or None,
            confidence=rated.confidence if rated else None,
            ai_verdict_shown=rated is not None and self.engine.config.review.reveal_after_rating,
            labels=Labels(**labels),
            metadata=RatingMetadata(**metadata),
        )
        return self._onwards(act.item, rating, None, [rating])

    def _on_confidence(self, act: _Act, rated: Rating | None) -> Transition:
        level = act.action.value
        if rated is None:
            return Transition(
                self._state_of(act.item),
                act.item,
                alert="Rate the item first; then say how sure you are.",
            )
        if not self.confidence or level not in CONFIDENCE_LEVELS:
            return self._stay(act.item, alert=f"Unknown confidence {level!r}")
        if rated.confidence == level:  # nothing new: on to what follows
            return self._onwards(act.item, rated, "confidence", repeated=True)
        answered = self._answered(act, rated, confidence=level)
        return self._onwards(act.item, answered, "confidence", [answered])

    def _unasked(self, follow_up: FollowUp, act: _Act, rated: Rating | None) -> Transition | None:
        """Why a follow-up cannot be answered now (the item is not rated, or not with an option that
        asks it), or None."""
        if rated is None:
            return Transition(
                self._state_of(act.item),
                act.item,
                alert="Rate the item first; then answer its questions.",
            )
        if follow_up.when and rated.judgment not in follow_up.when:
            return self._stay(act.item, alert=f"That is not asked after {rated.judgment!r}.")
        return None

    def _on_answer(self, act: _Act, rated: Rating | None) -> Transition:
        name, _, choice = (act.action.value or "").partition(":")
        follow_up = self.follow_ups.get(name)
        if follow_up is None or choice not in follow_up.choices:
            return self._stay(act.item, alert=f"Unknown answer {act.action.value!r}")
        refused = self._unasked(follow_up, act, rated)
        if refused is not None or rated is None:
            return refused or Transition(State.RATING, act.item)
        current = answer_of(rated, name)
        value = follow_ups.picked(follow_up, current, choice)
        if value == current:  # the same single answer again: nothing new
            return self._onwards(act.item, rated, name, repeated=True)
        answered = self._answered(act, rated, **follow_ups.with_answer(rated, name, value))
        if follow_up.multiple:  # several may be picked: the question stays until Done
            return Transition(State.QUESTION, act.item, [answered], asking=name)
        return self._onwards(act.item, answered, name, [answered])

    def _on_type(self, act: _Act, rated: Rating | None) -> Transition:
        follow_up = self.follow_ups.get(act.action.value or "")
        if follow_up is None or not follow_up.text:
            return self._stay(act.item, alert=f"{act.action.value!r} takes no typed answer here.")
        refused = self._unasked(follow_up, act, rated)
        if refused is not None:
            return refused
        self._typing[act.item.id] = follow_up.field
        return Transition(
            State.ANSWER,
            act.item,
            asking=follow_up.field,
            prompt=f"{follow_up.question} ({render.one_line(act.item.query.query)})",
        )

    def _typed(self, act: _Act, rated: Rating, name: str, text: str) -> Transition:
        """A follow-up's typed answer: stored in its field (a list field gains it; a question of one
        answer moves on)."""
        follow_up = self.follow_ups[name]
        if not text:
            return Transition(State.QUESTION, act.item, alert="No answer added.", asking=name)
        current = answer_of(rated, name)
        value = follow_ups.typed(follow_up, current, text)
        said = f"📝 Saved as {name.replace('_', ' ')}."
        if value == current:
            return Transition(State.QUESTION, act.item, asking=name, alert="Already saved.")
        answered = self._answered(act, rated, **follow_ups.with_answer(rated, name, value))
        if follow_up.multiple:
            return Transition(State.QUESTION, act.item, [answered], asking=name, said=said)
        return self._onwards(act.item, answered, name, [answered], said=said)

    def _skipped(self, item: ItemData) -> bool:
        return isinstance(
            self.ledger.judgment(self.run_id, item.id, self.dimension, self.reviewer), Skip
        )

    def _on_toggle(self, act: _Act, rated: Rating | None) -> Transition:
        if rated is None:
            return Transition(
                State.RATING, act.item, alert="Rate the item first; then add concern tags."
            )
        if act.action.value not in self.tags:
            return Transition(
                State.FOLLOW_UP, act.item, alert=f"Unknown concern tag {act.action.value!r}"
            )
        option = self.scale.option(rated.judgment)
        if option is None or not option.ask_concerns:
            return self._stay(
                act.item, alert=f"A rating of {rated.judgment!r} takes no concern tags."
            )
        tags = set(rated.concerns) ^ {act.action.value}
        toggled = rated.model_copy(
            update={
                **self._event_fields(act),
                "concerns": [t for t in self.tags if t in tags],
                "ai_verdict_shown": self.engine.config.review.reveal_after_rating,
                "timestamp": utcnow(),
            }
        )
        return Transition(State.FOLLOW_UP, act.item, [toggled])

    def _on_note(self, act: _Act, rated: Rating | None) -> Transition:
        return Transition(State.NOTE, act.item)

    def _on_undo(self, act: _Act, rated: Rating | None) -> Transition:
        """A skip taken back: the skipped item's card again, to be rated (nothing is written; the
        skip counts until a rating replaces it)."""
        if rated is not None or not self._skipped(act.item):
            return self._stay(act.item, alert="Nothing to undo: that item is not skipped.")
        self._typing.pop(act.item.id, None)
        return Transition(State.RATING, act.item, focus=True)

    def _on_text(self, act: _Act, rated: Rating | None) -> Transition:
        text = (act.action.value or "").strip()
        typing = self._typing.pop(act.item.id, None)
        if typing is not None and rated is not None and typing in self.follow_ups:
            return self._typed(act, rated, typing, text)
        if not text:
            return self._stay(act.item, alert="No note added.")
        note = Note(**self._event_fields(act), text=text)
        if rated is not None:
            return Transition(State.FOLLOW_UP, act.item, [note])
        if self._skipped(act.item):  # the note a skip's reason ("other") asked for
            return Transition(State.RATING, act.item, [note], advance=True)
        skip = Skip(
            **self._event_fields(act, ":skip"), skip_reason="note only"
        )  # a note instead of a score
        return Transition(State.RATING, act.item, [note, skip], advance=True)

    def _on_skip(self, act: _Act, rated: Rating | None) -> Transition:
        if rated is not None:  # rated already: skipping the follow-ups moves on
            return Transition(State.RATING, act.item, advance=True)
        reason = act.action.value
        if reason is not None and reason not in self.skip_reasons:
            return self._stay(act.item, alert=f"Unknown skip reason {reason!r}")
        judged = self.ledger.judgment(self.run_id, act.item.id, self.dimension, self.reviewer)
        again = (
            isinstance(judged, Skip) and judged.skip_reason == reason
        )  # skipped so already: nothing new
        records: list[BaseModel] = (
            [] if again else [Skip(**self._event_fields(act), skip_reason=reason)]
        )
        if (
            reason is None and self.skip_reasons
        ):  # stored now; why is asked next (one more key, or none)
            return Transition(State.SKIP_REASON, act.item, records, repeated=again)
        if reason == OTHER_REASON:
            return Transition(State.NOTE, act.item, records)
        return Transition(State.RATING, act.item, records, advance=True, repeated=again)

    def _on_next(self, act: _Act, rated: Rating | None) -> Transition:
        passed = act.action.value
        if rated is None:
            if passed is None and self._skipped(act.item):  # no reason for the skip
                return Transition(State.RATING, act.item, advance=True)
            return Transition(
                State.RATING, act.item, alert=f"Pick a rating ({self.scale.question})"
            )
        if passed is None:
            return Transition(State.RATING, act.item, advance=True)
        if passed != "confidence" and passed not in self.follow_ups:
            return self._stay(act.item, alert=f"Nothing is asked as {passed!r}.")
        self._typing.pop(act.item.id, None)
        return self._onwards(act.item, rated, passed)  # passed: nothing written

    def _repeat(self, action: Action, item: ItemData, rated: Rating | None) -> Transition:
        """A stored action again: what it led to, from the log, with nothing written."""
        judged = self.ledger.judgment(self.run_id, item.id, self.dimension, self.reviewer)
        if rated is None:
            if (
                isinstance(judged, Skip)
                and judged.skip_reason is None
                and action.kind == "skip"
                and action.value is None
                and self.skip_reasons
            ):
                return Transition(State.SKIP_REASON, item, repeated=True)
            return Transition(State.RATING, item, advance=judged is not None, repeated=True)
        if action.kind in ("rate", "confidence"):
            return self._onwards(
                item, rated, None if action.kind == "rate" else "confidence", repeated=True
            )
        follow_up = (
            self.follow_ups.get((action.value or "").partition(":")[0])
            if action.kind == "answer"
            else None
        )
        if follow_up is not None and follow_up.multiple:
            return Transition(State.QUESTION, item, asking=follow_up.field, repeated=True)
        if follow_up is not None:
            return self._onwards(item, rated, follow_up.field, repeated=True)
        return Transition(State.FOLLOW_UP, item, repeated=True)

    # ------------------------------------------------------------------ keys and records

    def _key(self, action: Action) -> str:
        if action.delivery_id:
            return f"{self.channel}:{action.delivery_id}"
        return f"{self.channel}:{self._session_id}:{self._seq}"

    def _keyed(self, action: Action, item: ItemData) -> tuple[str, bool]:
        """The idempotency key for this action, and whether it was stored before (a repeat)."""
        key = self._key(action)
        if not action.delivery_id:
            return key, False
        mine = fingerprint(
            self.reviewer.key, self.run_id, item.id, self.dimension, action_text(action)
        )
        return resolve_key(self.ledger, key, mine)

    def _event_fields(self, act: _Act, suffix: str = "") -> dict:
        return dict(
            run_id=self.run_id,
            item_id=act.item.id,
            dimension=self.dimension,
            reviewer=self.reviewer,
            channel=self.channel,
            idempotency_key=act.key + suffix,
            action=action_text(act.action),
        )

    def _rating(self, item: ItemData) -> Rating | None:
        judgment = self.ledger.judgment(self.run_id, item.id, self.dimension, self.reviewer)
        return judgment if isinstance(judgment, Rating) else None

    # ------------------------------------------------------------------ applying

    def _apply(self, transition: Transition) -> Step:
        self._seq += 1
        for record in transition.records:
            self.ledger.add(record)
        if transition.focus and self.item is not None:  # the terminal goes back to a skipped item
            self.item, self.undoable = transition.item, None
        linear = transition.item is None or (
            self.item is not None and transition.item.id == self.item.id
        )
        if linear:
            self.state, self.asking = transition.state, transition.asking
            if transition.advance:
                done = self.item
                self.undoable = done.id if done is not None and self._skipped(done) else None
                self._advance()
        return self._step(transition, linear=linear)

    def _advance(self) -> None:
        pending = self.pending(limit=1)
        self.asking = None
        if pending:
            self.item, self.state = pending[0], State.RATING
        else:
            self.item, self.state = None, State.DONE

    def _step(self, transition: Transition, *, linear: bool) -> Step:
        item = transition.item
        finished = (
            partial(self._card, item, final=True)
            if transition.advance and item is not None
            else None
        )
        if linear:  # the terminal: the card of the session's current item, as it is now
            state = self.state
            ended = state in (State.DONE, State.QUIT)
            shown = (
                None
                if ended or self.item is None
                else self._card(self.item, state=state, asking=self.asking)
            )
            card = (lambda: shown) if shown is not None else None
        else:  # a chat: the acted-on item's card, built when the chat shows it
            state = transition.state
            card = (
                None
                if transition.advance or item is None
                else partial(self._card, item, state=transition.state, asking=transition.asking)
            )
        summary = next((r for r in transition.records if isinstance(r, ReviewSummary)), None)
        if state == State.DONE and summary is None:
            summary = self.summary()
        return Step(
            state,
            card,
            finished,
            transition.detail,
            transition.alert,
            summary,
            len(transition.records),
            transition.repeated,
            item.id if item is not None else None,
            self.progress,
            prompt=transition.prompt,
            said=transition.said,
        )

    # ------------------------------------------------------------------ cards

    def _card(
        self,
        item: ItemData,
        *,
        final: bool = False,
        state: State | None = None,
        asking: str | None = None,
    ) -> Card:
        """The item's card (laid out by :func:`bot.render.review_card`) as this reviewer sees it."""
        number = self.engine.number(self.run_id, item.id)
        config = self.engine.config
        ai_first = (
            self.run.header.kind == "change"
            and config.triage.show_ai
            and not item.features.get("audit")
        )
        return render.review_card(
            item,
            self._rating(item),
            self.layout,
            run_id=self.run_id,
            dimension=self.dimension,
            question=self.question,
            number=number,
            of=max(len(self.run.items), number),
            progress=str(run_progress(self.ledger, self.run, self.dimension, config.review.k)),
            judge=self.run.header.judge,
            ai_first=ai_first,
            reveal_ai=config.review.reveal_after_rating,
            final=final,
            state=state,
            asking=asking,
            context=self._context(),
            undo=self.undoable if self.item is not None and item.id == self.item.id else None,
        )

    def _context(self) -> list[str]:
        """The item features this run's cards show as an item's context (``[review.context]``)."""
        return self.engine.config.review.context.fields(self.run.header.kind)


__all__ = [
    "CONFIDENCE_LEVELS",
    "OTHER_REASON",
    "ReviewEngine",
    "ReviewSession",
    "State",
    "Step",
    "Transition",
]
