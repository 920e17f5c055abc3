"""How a review session ends: quitting stores one record, the reviewer's
:class:`evaluation.ReviewSummary` (the hilReview), which :func:`ending` finds in a transition;
with ``[review] synthesize_at_end`` it also carries the run's synthesis and action items
(:func:`with_synthesis`), made over every reviewer's ratings and notes and stored on its own
too, and a synthesis that fails is logged while the session ends all the same.

What the end shows after its counts (:class:`Closing`, :func:`closing`): the synthesis and its
action items; on a change run (``hilbot triage``), what this reviewer accepted and rejected, what
no human has decided yet, and the command that writes the accepted snapshot changes.
"""

from __future__ import annotations

import logging
import shlex
from dataclasses import dataclass, field

from evaluation import HilbotConfig, HilbotError, Ledger, Reviewer, ReviewSummary, Run, Store

from .cards import State
from .steps import Transition

_log = logging.getLogger("hilbot.review")


def ending(transition: Transition) -> ReviewSummary | None:
    """The session's summary when a transition ends the session (it is its one record), else
    None."""
    if (
        transition.state == State.QUIT
        and len(transition.records) == 1
        and isinstance(transition.records[0], ReviewSummary)
    ):
        return transition.records[0]
    return None


def with_synthesis(
    store: Store,
    config: HilbotConfig,
    summary: ReviewSummary,
    *,
    run_id: str,
    dimension: str,
    reviewer: Reviewer,
) -> ReviewSummary:
    """The session's summary with the run's synthesis and action items (``[review]
    synthesize_at_end``).

    The synthesis covers every reviewer's ratings and notes of the run and is stored on its own
    too (exports carry the latest); a failure to synthesize is logged and ends nothing.
    """
    mode = config.review.synthesize_at_end
    if mode == "off" or not summary.queriesReviewed:
        return summary
    from analysis.synthesize import synthesize_and_store

    try:
        made = synthesize_and_store(store, config, run_id, dimension, llm=mode == "llm")
    except HilbotError as exc:
        _log.warning(
            "no synthesis at the end of %s's review of %s: %s",
            reviewer.key,
            run_id,
            exc,
        )
        return summary
    if made is None:
        return summary
    return summary.model_copy(
        update={
            "synthesis": made.synthesis,
            "synthesis_source": made.synthesis_source,
            "actionItems": made.actionItems,
        }
    )


@dataclass(frozen=True)
class Decisions:
    """Where a change run stands when a reviewer's session on it ends."""

    accepted: int
    """Changes this reviewer accepted."""
    rejected: int
    """Changes this reviewer rejected."""
    skipped: int
    """Changes this reviewer skipped."""
    left: int
    """Changes no human has decided yet (any reviewer)."""

    def line(self) -> str:
        """``accepted 2 · rejected 1 · skipped 0 · left 3``."""
        return (
            f"accepted {self.accepted} · rejected {self.rejected} · skipped {self.skipped} · "
            f"left {self.left}"
        )


@dataclass(frozen=True)
class Section:
    """Plain-text lines under a heading (None: no heading)."""

    heading: str | None
    lines: list[str]
    command: bool = False
    """The lines are command lines: shown whole, never wrapped."""


@dataclass(frozen=True)
class Closing:
    """What a session's end says after its summary's counts."""

    decisions: Decisions | None = None
    """On a change run: the decisions, said instead of the counts of a rated run."""
    sections: list[Section] = field(default_factory=list)
    """The synthesis and its action items, or a change run's next step."""


def decisions(ledger: Ledger, run: Run, summary: ReviewSummary, reviewer: Reviewer) -> Decisions:
    """A change run's decisions: this reviewer's accepts, rejects and skips (the summary's), and
    the changes no human has decided."""
    current = ledger.ratings(run.run_id, summary.dimension)
    mine = [r.judgment for r in current if r.reviewer.key == reviewer.key]
    decided = {r.item_id for r in current}
    return Decisions(
        accepted=mine.count("accept"),
        rejected=mine.count("reject"),
        skipped=summary.queriesSkipped,
        left=sum(1 for item in run.items if item.id not in decided),
    )


def closing(
    summary: ReviewSummary, run: Run, ledger: Ledger, reviewer: Reviewer, hilbot: str
) -> Closing:
    """What the end says after the counts: on a change run its decisions and, when it holds
    snapshot changes, the ``--apply`` command that writes the accepted ones (``hilbot`` starts
    it); else the synthesis and its action items."""
    if run.header.kind != "change":
        return Closing(None, synthesis_sections(summary))
    found = decisions(ledger, run, summary, reviewer)
    if not any(item.features.get("source") == "snapshots" for item in run.items):
        return Closing(found)
    command = f"{hilbot} triage --apply {shlex.quote(run.run_id)}"
    heading = "Write the accepted changes into the snapshots with:"
    return Closing(found, [Section(heading, [command], command=True)])


def synthesis_sections(summary: ReviewSummary) -> list[Section]:
    """The synthesis headed by what wrote it, then the numbered action items; none without a
    synthesis."""
    if not summary.synthesis:
        return []
    by = (
        "statistical, no LLM"
        if summary.synthesis_source in (None, "statistical")
        else f"by {summary.synthesis_source}"
    )
    items = [f"{n}. {item}" for n, item in enumerate(summary.actionItems, 1)]
    heading = f"Synthesis of every review of this run so far ({by}):"
    synthesis = Section(heading, summary.synthesis.splitlines())
    return [synthesis] + ([Section("Action items:", items)] if items else [])


__all__ = [
    "Closing",
    "Decisions",
    "Section",
    "closing",
    "decisions",
    "ending",
    "synthesis_sections",
    "with_synthesis",
]
