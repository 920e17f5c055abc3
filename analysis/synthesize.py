"""Seed 000 §4's synthesis: the reviewers' scores and notes turned into prose and action items.

The evidence is gathered from the log and the run (current ratings, notes, concern tags, AI
scores). With ``llm`` the LLM writes the synthesis from that evidence (through the one LLM
client: redaction, cache, cost, the sent log); without it a statistical synthesis is made
from the same evidence and labelled ``statistical`` wherever it appears. Either way the result
is appended to ratings.jsonl as a ``review_summary`` record with the ``hilReview`` fields.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from statistics import mean
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from evaluation import HilbotConfig, HilbotError, Ledger, Rating, ReviewSummary, Run, Store, ai_score, summarize

if TYPE_CHECKING:
    from evaluation.llm import LLM

STATISTICAL = "statistical"
TOP = 3


@dataclass(frozen=True)
class ItemEvidence:
    """One reviewed item: what the humans and the AI made of it."""

    item_id: str
    query: str
    human: float
    """Mean human score of its current ratings."""
    ai: float | None
    judgments: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def gap(self) -> float | None:
        """human − AI (negative: the AI scored it higher than the reviewers)."""
        return None if self.ai is None else self.human - self.ai


@dataclass(frozen=True)
class Evidence:
    """Everything a synthesis may draw on, for one run and dimension."""

    run_id: str
    dimension: str
    items: list[ItemEvidence]
    concerns: list[tuple[str, int]]
    reviewers: int
    summary: ReviewSummary
    notes: list[str] = field(default_factory=list)

    def worst(self, n: int = TOP) -> list[ItemEvidence]:
        """Lowest human scores first."""
        return sorted(self.items, key=lambda e: (e.human, e.item_id))[:n]

    def gaps(self, n: int = TOP) -> list[ItemEvidence]:
        """Largest |human − AI| first."""
        scored = [e for e in self.items if e.gap is not None]
        return sorted(scored, key=lambda e: (-abs(e.gap), e.item_id))[:n]


class Synthesis(BaseModel):
    """The LLM's answer."""

    synthesis: str = Field(description="Two to four sentences: where the AI judge and the reviewers agree and differ, and why.")
    actionItems: list[str] = Field(min_length=1, max_length=6, description="Concrete next steps, most important first.")


def gather(ledger: Ledger, run: Run, dimension: str) -> Evidence:
    """The evidence for one run and dimension from the folded log."""
    items, tags, raters = [], Counter(), set()
    for item in run.items:
        ratings = sorted((who, j) for who, j in ledger.item_judgments(run.run_id, item.id, dimension) if isinstance(j, Rating))
        if not ratings:
            continue
        raters |= {who for who, _ in ratings}
        tags.update(tag for _, r in ratings for tag in r.concerns)
        notes = tuple(n for n in (_note(ledger, run.run_id, item.id, dimension, who, r) for who, r in ratings) if n)
        items.append(ItemEvidence(item.id, item.query.query, mean(r.score for _, r in ratings), ai_score(item, dimension),
                                  tuple(r.judgment for _, r in ratings), notes))
    concerns = sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))
    return Evidence(run.run_id, dimension, items, concerns, len(raters), summarize(ledger, run, dimension),
                    [n for e in items for n in e.notes])


def _note(ledger: Ledger, run_id: str, item_id: str, dimension: str, who: str, rating: Rating) -> str | None:
    note = ledger.notes.get((run_id, item_id, dimension, who))
    return rating.note or (note.text if note else None)


def statistical(evidence: Evidence) -> Synthesis:
    """A synthesis from counts alone: top concerns, worst items, largest AI–human gaps."""
    s = evidence.summary
    parts = [f"{s.queriesReviewed} ratings of {len(evidence.items)} items by {evidence.reviewers} reviewer(s); "
             f"human average {_fmt(s.humanAverageScore)}"]
    if s.aiVsHumanDelta is not None:
        side = "higher" if s.aiVsHumanDelta < 0 else "lower"
        parts[0] += f", the AI scores {abs(s.aiVsHumanDelta):.2f} {side} than the reviewers on average"
    if evidence.concerns:
        parts.append("Most frequent concerns: " + ", ".join(f"{t} ({n})" for t, n in evidence.concerns[:TOP]))
    if evidence.gaps():
        e = evidence.gaps(1)[0]
        parts.append(f"Largest disagreement: “{e.query}” (AI {_fmt(e.ai)}, reviewers {_fmt(e.human)})")
    return Synthesis(synthesis=". ".join(parts) + ".", actionItems=_actions(evidence))


def _actions(evidence: Evidence) -> list[str]:
    actions = [f"Address {tag}: flagged in {n} rating(s)" for tag, n in evidence.concerns[:TOP]]
    actions += [f"Re-check the judge on “{e.query}”: AI {_fmt(e.ai)} vs reviewers {_fmt(e.human)}"
                for e in evidence.gaps(2) if abs(e.gap) >= 0.3]
    actions += [f"Fix or drop “{e.query}”: rated {', '.join(e.judgments)}" for e in evidence.worst(2) if e.human < 0.5]
    return actions[:6] or ["No action needed from these ratings: no concerns, no large disagreements."]


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def prompt(evidence: Evidence) -> str:
    """The user prompt for the LLM: the run's figures, the worst items, the gaps, the notes."""
    s = evidence.summary
    lines = [f"Run {evidence.run_id}, dimension {evidence.dimension}: {s.queriesReviewed} human ratings, "
             f"{s.queriesSkipped} skips; human average {_fmt(s.humanAverageScore)}; mean (human − AI) {_fmt(s.aiVsHumanDelta)}.",
             "Concern tags: " + (", ".join(f"{t} ×{n}" for t, n in evidence.concerns) or "none"), "",
             "Lowest-rated items:"]
    lines += [f"- “{e.query}”: human {_fmt(e.human)} ({', '.join(e.judgments)}), AI {_fmt(e.ai)}" for e in evidence.worst(5)]
    lines += ["", "Largest AI–human gaps:"]
    lines += [f"- “{e.query}”: human {_fmt(e.human)}, AI {_fmt(e.ai)}" for e in evidence.gaps(5)]
    lines += ["", "Reviewer notes:"] + [f"- {n}" for n in evidence.notes[:30]]
    lines += ["", "Write a short synthesis of what the reviewers found and where the AI judge disagrees with them, "
              "and concrete action items for the team building the system."]
    return "\n".join(lines)


async def with_llm(llm: "LLM", evidence: Evidence) -> Synthesis:
    """One structured LLM call over the evidence."""
    from evaluation.llm import LLMRequest

    request = LLMRequest(prompt=prompt(evidence), output=Synthesis, purpose=f"synthesize:{evidence.run_id}",
                         system="You summarise human reviews of an AI system's outputs for its engineers.",
                         tool_name="record_synthesis", tool_description="Record the synthesis and action items.",
                         max_tokens=800)
    return (await llm.complete(request)).output


def synthesize(store: Store, config: HilbotConfig, *, run_id: str | None = None, dimension: str | None = None,
               use_llm: bool = False) -> ReviewSummary:
    """Synthesize a run's reviews (default: the latest reviewed run) and append the ``review_summary``."""
    ledger = Ledger.from_events(store.human_events())
    run = store.load_run(run_id or _latest_reviewed(store, ledger))
    evidence = gather(ledger, run, dimension or run.header.dimensions[0])
    if not evidence.items:
        raise HilbotError(f"run {run.run_id!r} has no ratings on {evidence.dimension!r}", fix="review it first (hilbot review)")
    answer, source = _write(store, config, evidence, use_llm)
    record = evidence.summary.model_copy(update={"synthesis": answer.synthesis, "synthesis_source": source,
                                                 "actionItems": answer.actionItems})
    store.ratings.append(record)
    return record


def _write(store: Store, config: HilbotConfig, evidence: Evidence, use_llm: bool) -> tuple[Synthesis, str]:
    if not use_llm:
        return statistical(evidence), STATISTICAL
    import asyncio

    from evaluation.llm import LLM

    llm = LLM(config.llm, store)
    return asyncio.run(with_llm(llm, evidence)), llm.label


def _latest_reviewed(store: Store, ledger: Ledger) -> str:
    reviewed = ledger.reviewed_runs()
    runs = [r for r in store.run_ids() if r in reviewed]
    if not runs:
        raise HilbotError("no run has ratings yet", fix="review a run first (hilbot review RUN)")
    return max(runs, key=lambda r: (store.run_header(r).created_at, r))


__all__ = ["Evidence", "ItemEvidence", "STATISTICAL", "Synthesis", "gather", "statistical", "synthesize", "with_llm"]
