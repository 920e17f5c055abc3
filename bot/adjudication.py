"""Adjudication: an adjudicator resolves the items whose labels disagree, one card at a time.

The same engine serves the terminal (``hilbot adjudicate``) and the chats (``/adjudicate``, admins
only). The items come from :func:`evaluation.gold.disputes`, largest disagreement first. The card is
deliberately *not* blind: it shows every reviewer's label, concern tags and notes, and the AI's
verdict. The adjudicator records a **consensus label**, **excludes** the item with a reason, or
**leaves** it for later (nothing is written; it comes back in the next session).

The flow has named states (:class:`Phase`); each handler returns the next one with the records to
store, and the session stores them (fsynced) before it changes state or returns — what a channel
acknowledges is on disk. A platform event that comes again (the same idempotency key) writes
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable

from evaluation import Adjudication, ItemData, Rating, Reviewer
from evaluation.gold import Dispute, disputes
from evaluation.records import AdjudicatedLabel

from . import render
from .cards import Action, Button, Card, Section
from .review import ReviewEngine


class Phase(str, Enum):
    """Where an adjudication session is."""

    DECIDING = "deciding"
    """A disputed item is shown with every label: consensus, exclude or leave."""
    REASON = "reason"
    """Exclude was chosen: waiting for the reason (a choice)."""
    REASON_TEXT = "reason_text"
    """The reason "other" was chosen: waiting for its text."""
    DONE = "done"
    """No disputed items left."""
    QUIT = "quit"
    """The adjudicator stopped."""


@dataclass
class Outcome:
    """What a handler decided: the next phase, the item it concerns and the records to store."""

    phase: Phase
    item_id: str | None = None
    records: list[Adjudication] = field(default_factory=list)
    advance: bool = False
    """The item is resolved (or left): the next one is shown."""
    detail: str | None = None
    alert: str | None = None
    repeated: bool = False


@dataclass
class Turn:
    """What a channel shows after an action."""

    phase: Phase
    card: Card | None
    """The card to show now (the next item, or the same item in its new phase); None when done."""
    item_id: str | None = None
    """The item acted on."""
    decided: Adjudication | None = None
    """The adjudication this action stored (or had stored, on a repeat)."""
    detail: str | None = None
    alert: str | None = None
    stored: int = 0
    repeated: bool = False


class AdjudicationSession:
    """One adjudicator resolving one run's disputed items on one dimension."""

    def __init__(
        self,
        engine: ReviewEngine,
        run_id: str,
        dimension: str | None,
        adjudicator: Reviewer,
        channel: str = "terminal",
    ):
        run = engine.run(run_id)
        engine.ledger.load(run.run_id)
        self.engine = engine
        self.run_id = run.run_id
        self.dimension = run.header.dimensions[0] if dimension is None else dimension
        engine.config.dimension(self.dimension)  # an unknown dimension: ConfigError with the fix
        self.reviewer = adjudicator
        self.channel = channel
        self.scale = engine.config.scale_for(self.dimension)
        self.reasons = list(engine.config.adjudication.exclude_reasons)
        self.phase = Phase.DECIDING
        self.item_id: str | None = None
        """The item shown now."""
        self._left: set[str] = set()
        self._resolved = 0
        self._seq = 0
        self._handlers: dict[str, Callable[[Action, str], Outcome]] = {
            "rate": self._on_consensus,
            "exclude": self._on_exclude,
            "skip": self._on_leave,
            "text": self._on_text,
        }

    # ------------------------------------------------------------------ reading

    @property
    def run(self):
        return self.engine.run(self.run_id)

    def queue(self) -> list[Dispute]:
        """The disputed items still to resolve, largest disagreement first (items left this session
        last out)."""
        return [
            d
            for d in disputes(
                self.run,
                self.engine.ledger,
                self.dimension,
                self.scale,
                self.engine.config.adjudication,
            )
            if d.item_id not in self._left
        ]

    def unresolved(self) -> int:
        """Disputed items not yet adjudicated on the dimension (those left this session
        included)."""
        return len(
            disputes(
                self.run,
                self.engine.ledger,
                self.dimension,
                self.scale,
                self.engine.config.adjudication,
            )
        )

    def guide(self) -> str:
        """What the dimension asks and what each option means, and what each decision does."""
        lines = [render.guide_text(self.dimension, self.question, self.scale)]
        lines.append(
            "Consensus: the label the reviewers would agree on. Exclude: the item is genuinely "
            "ambiguous or broken and leaves every gold-label analysis. Leave: decide later."
        )
        return "\n".join(lines)

    @property
    def question(self) -> str:
        return self.engine.config.dimension(self.dimension).question or self.scale.question

    def card(self, item_id: str) -> Card:
        """The item's card in the session's phase (the reason choices while excluding it)."""
        item = self.run.item(item_id)
        assert item is not None, item_id
        dispute = next(
            (
                d
                for d in disputes(
                    self.run,
                    self.engine.ledger,
                    self.dimension,
                    self.scale,
                    self.engine.config.adjudication,
                    adjudicated=True,
                )
                if d.item_id == item_id
            ),
            None,
        )
        if self.phase in (Phase.REASON, Phase.REASON_TEXT) and item_id == self.item_id:
            return self._reason_card(item)
        return self._dispute_card(item, dispute)

    def final_card(self, decision: Adjudication) -> Card:
        """An adjudicated item's card: what was decided, no buttons."""
        item = self.run.item(decision.item_id)
        assert item is not None, decision.item_id
        text = (
            f"Consensus: {decision.judgment}"
            if decision.decision == "consensus"
            else f"Excluded: {decision.reason}"
        )
        return Card(
            self.run_id,
            item.id,
            self.dimension,
            self._title(item),
            (Section("Decided", (text,)),),
            None,
            (),
            recorded=decision.judgment or "excluded",
        )

    # ------------------------------------------------------------------ acting

    def start(self) -> Turn:
        """Show the first disputed item (or report that none is left)."""
        self._advance()
        return self._turn(Outcome(self.phase, self.item_id))

    def act(self, action: Action) -> Turn:
        """Handle an action; its records are on disk before this returns."""
        outcome = self._decide(action)
        if outcome.records:
            self.engine.store.ratings.append_many(outcome.records)
        return self._apply(outcome)

    async def aact(self, action: Action) -> Turn:
        """:meth:`act` for the chats (the append shares fsyncs with other writers)."""
        outcome = self._decide(action)
        if outcome.records:
            await self.engine.store.ratings.aappend_many(outcome.records)
        return self._apply(outcome)

    def _decide(self, action: Action) -> Outcome:
        if action.kind == "quit":
            return Outcome(Phase.QUIT)
        item_id = action.item_id or self.item_id
        item = self.run.item(item_id) if item_id else None
        if item is None:
            return Outcome(
                self.phase,
                alert="Nothing left to adjudicate here."
                if item_id is None
                else "That item is not in this run.",
            )
        if action.kind == "guide":
            return Outcome(self.phase, item.id, detail=self.guide())
        if action.kind == "view_full":
            return Outcome(self.phase, item.id, detail=render.full_text(item))
        key = self._key(action)
        if self.engine.ledger.repeat(key) is not None:
            return Outcome(Phase.DECIDING, item.id, advance=True, repeated=True)
        handler = self._handlers.get(action.kind)
        if handler is None:
            return Outcome(self.phase, item.id, alert="Pick a consensus label, Exclude or Leave.")
        return handler(action, key)

    def _on_consensus(self, action: Action, key: str) -> Outcome:
        option = self.scale.option(action.value or "")
        if option is None:
            return Outcome(self.phase, action.item_id, alert=f"Unknown label {action.value!r}")
        record = self._record(
            action, key, decision="consensus", judgment=option.value, score=option.score
        )
        return Outcome(Phase.DECIDING, record.item_id, [record], advance=True)

    def _on_exclude(self, action: Action, key: str) -> Outcome:
        item_id = action.item_id or self.item_id
        if action.value is None:
            return Outcome(Phase.REASON, item_id)
        if action.value not in self.reasons:
            return Outcome(Phase.REASON, item_id, alert=f"Unknown reason {action.value!r}")
        if action.value == "other":
            return Outcome(Phase.REASON_TEXT, item_id)
        record = self._record(action, key, decision="exclude", reason=action.value)
        return Outcome(Phase.DECIDING, record.item_id, [record], advance=True)

    def _on_text(self, action: Action, key: str) -> Outcome:
        item_id = action.item_id or self.item_id
        text = " ".join((action.value or "").split())
        if self.phase != Phase.REASON_TEXT or not text:
            return Outcome(
                Phase.DECIDING if not text else self.phase,
                item_id,
                alert="No reason given: the item is not excluded."
                if not text
                else "Nothing asked for a text.",
            )
        record = self._record(action, key, decision="exclude", reason=f"other: {text[:500]}")
        return Outcome(Phase.DECIDING, record.item_id, [record], advance=True)

    def _on_leave(self, action: Action, key: str) -> Outcome:
        if self.phase in (Phase.REASON, Phase.REASON_TEXT):
            return Outcome(Phase.DECIDING, action.item_id or self.item_id)  # back to the item
        item_id = action.item_id or self.item_id
        if item_id is not None:
            self._left.add(item_id)
        return Outcome(Phase.DECIDING, item_id, advance=True)

    # ------------------------------------------------------------------ records

    def _key(self, action: Action) -> str:
        if action.delivery_id:
            return f"{self.channel}:{action.delivery_id}:adjudication"
        return f"{self.channel}:adjudication:{id(self):x}:{self._seq}"

    def _record(self, action: Action, key: str, **decision) -> Adjudication:
        item_id = action.item_id or self.item_id
        assert item_id is not None
        labels = [
            AdjudicatedLabel(reviewer=r.reviewer.key, judgment=r.judgment, score=r.score)
            for r in self._labels(item_id)
        ]
        what = decision.get("judgment") or decision.get("reason")
        return Adjudication(
            run_id=self.run_id,
            item_id=item_id,
            dimension=self.dimension,
            reviewer=self.reviewer,
            channel=self.channel,
            idempotency_key=key,
            action=f"{decision['decision']}:{what}",
            labels=labels,
            **decision,
        )

    def _labels(self, item_id: str) -> list[Rating]:
        found = self.engine.ledger.item_judgments(self.run_id, item_id, self.dimension)
        return sorted((j for _, j in found if isinstance(j, Rating)), key=lambda r: r.reviewer.key)

    # ------------------------------------------------------------------ applying

    def _apply(self, outcome: Outcome) -> Turn:
        self._seq += 1
        for record in outcome.records:
            self.engine.ledger.add(record)
        self._resolved += len(outcome.records)
        linear = outcome.item_id is None or outcome.item_id == self.item_id
        if outcome.phase == Phase.QUIT:
            self.phase = Phase.QUIT
        elif linear:
            self.phase = outcome.phase
            if outcome.advance:
                self._advance()
        return self._turn(outcome)

    def _advance(self) -> None:
        queue = self.queue()
        self.item_id = queue[0].item_id if queue else None
        self.phase = Phase.DECIDING if queue else Phase.DONE

    def _turn(self, outcome: Outcome) -> Turn:
        decided = outcome.records[0] if outcome.records else None
        if outcome.repeated and outcome.item_id is not None:
            decided = self.engine.ledger.adjudications.get(
                (self.run_id, outcome.item_id, self.dimension)
            )
        card = (
            self.card(self.item_id)
            if self.item_id is not None and self.phase not in (Phase.DONE, Phase.QUIT)
            else None
        )
        return Turn(
            self.phase,
            card,
            outcome.item_id,
            decided,
            outcome.detail,
            outcome.alert,
            len(outcome.records),
            outcome.repeated,
        )

    # ------------------------------------------------------------------ cards

    def _title(self, item: ItemData) -> str:
        return f'{self.run_id} · {self.dimension} · "{render.one_line(item.query.query)}"'

    def _dispute_card(self, item: ItemData, dispute: Dispute | None) -> Card:
        labels = self._labels(item.id)
        lines = [self._label_line(r) for r in labels] or ["(no labels)"]
        sections = render.card_sections(item)
        head = f"Why here: {dispute.why}" if dispute is not None else "Not disputed now"
        sections.append(Section(f"Labels ({len(labels)}) — {head}", tuple(lines)))
        iid = item.id
        scale = tuple(
            Button(o.label, Action("rate", o.value, iid), o.key) for o in self.scale.options
        )
        taken = {o.key for o in self.scale.options}
        exclude_key = next(k for k in "xe" if k not in taken)
        rows = (
            scale,
            (
                Button("Exclude", Action("exclude", None, iid), exclude_key),
                Button("Leave", Action("skip", None, iid), "s" if "s" not in taken else None),
            ),
            (
                Button(
                    "View full", Action("view_full", item_id=iid), "v" if "v" not in taken else None
                ),
                Button("Guide", Action("guide", item_id=iid), None),
                Button("Quit", Action("quit"), "q"),
            ),
        )
        return Card(
            self.run_id,
            iid,
            self.dimension,
            self._title(item),
            tuple(sections),
            f"Consensus label? ({self.question})",
            rows,
            reveal=render.reveal(item, self.run.header.judge),
            has_more=render.has_more(item),
        )

    def _label_line(self, rating: Rating) -> str:
        who = rating.reviewer.name or rating.reviewer.key
        tags = f" [{', '.join(rating.concerns)}]" if rating.concerns else ""
        notes = [t for t in (rating.note, self._note(rating)) if t]
        said = f' — "{render.one_line(" / ".join(notes))}"' if notes else ""
        return f"{who}: {rating.judgment}{tags}{said}"

    def _note(self, rating: Rating) -> str | None:
        note = self.engine.ledger.note(self.run_id, rating.item_id, self.dimension, rating.reviewer)
        return note.text if note is not None else None

    def _reason_card(self, item: ItemData) -> Card:
        iid = item.id
        if self.phase == Phase.REASON_TEXT:
            return Card(
                self.run_id,
                iid,
                self.dimension,
                self._title(item),
                (),
                "Why exclude it? Type the reason.",
                ((Button("Back", Action("skip", None, iid), "b"),),),
            )
        reasons = tuple(
            Button(r, Action("exclude", r, iid), str(n)) for n, r in enumerate(self.reasons, 1)
        )
        return Card(
            self.run_id,
            iid,
            self.dimension,
            self._title(item),
            (),
            "Why exclude it?",
            (reasons, (Button("Back", Action("skip", None, iid), "b"),)),
        )


__all__ = ["AdjudicationSession", "Phase", "Turn"]
