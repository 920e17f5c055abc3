"""The review synthesis: the reviewers' scores and notes turned into prose and action items.

The evidence is gathered from the loaded log (:mod:`analysis.load`: current ratings, notes,
concern tags, AI scores). With ``llm`` the LLM writes the synthesis from that evidence (through the
one LLM client: redaction, cache, cost, the sent log); without it a statistical synthesis is made
from the same evidence and labelled ``statistical`` wherever it appears. Either way the result
is appended to ratings.jsonl as a ``review_summary`` record with the ``hilReview`` fields (all
reviewers: ``reviewer`` is None); ``hilbot export`` carries the latest one of the run and
dimension in its ``hilReview``. :func:`synthesize_and_store` is the entry point for a review
session's end: statistical unless the LLM is asked for, and a no-op when nothing is rated yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from .errors import AnalysisError
from .registry import Inputs, Option, analysis

if TYPE_CHECKING:  # pandas and the store's models are imported when the analysis runs
    from evaluation import HilbotConfig, ReviewSummary, Store
    from evaluation.llm import LLM

    from .load import Frames

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
        scored = [(e, gap) for e in self.items if (gap := e.gap) is not None]
        return [e for e, _ in sorted(scored, key=lambda pair: (-abs(pair[1]), pair[0].item_id))][:n]


class Synthesis(BaseModel):
    """The LLM's answer."""

    # its schema is built when first used, not when the module is imported (by `--help` too)
    model_config = ConfigDict(defer_build=True)

    synthesis: str = Field(
        description="Two to four sentences: where the AI judge and the reviewers agree and differ, "
        "and why."
    )
    actionItems: list[str] = Field(
        min_length=1, max_length=6, description="Concrete next steps, most important first."
    )


def gather(frames: "Frames", run_id: str, dimension: str, metric: str | None = None) -> Evidence:
    """The evidence for one run and dimension from the loaded log (same figures as
    ``summarize``; the AI score is the dimension's ``metric`` when given)."""
    from .load import ai_score_column

    ratings = _slice(frames.ratings, run_id, dimension).sort_values(
        ["item_id", "reviewer"], kind="stable"
    )
    items = frames.items[frames.items["run_id"] == run_id]
    ai = dict(zip(items["item_id"], ai_score_column(items, dimension, metric)))
    queries = dict(zip(items["item_id"], items["query"]))
    evidence = _items(ratings, queries, ai)
    tags = _slice(frames.concerns, run_id, dimension)["tag"].value_counts()
    concerns = sorted(((str(t), int(n)) for t, n in tags.items()), key=lambda kv: (-kv[1], kv[0]))
    summary = _summary(ratings, len(_slice(frames.skips, run_id, dimension)), ai, run_id, dimension)
    return Evidence(
        run_id,
        dimension,
        evidence,
        concerns,
        int(ratings["reviewer"].nunique()),
        summary,
        [n for e in evidence for n in e.notes],
    )


def _slice(frame: Any, run_id: str, dimension: str) -> Any:
    return frame[(frame["run_id"] == run_id) & (frame["dimension"] == dimension)]


def _items(ratings: Any, queries: dict[str, Any], ai: dict[str, float]) -> list[ItemEvidence]:
    """One :class:`ItemEvidence` per item of ``ratings`` (sorted by item): each item's ratings are
    one run of rows, so no group is built."""
    import numpy as np

    ids = ratings["item_id"].to_numpy(dtype=object)
    rows = np.flatnonzero(~ratings["item_id"].isna().to_numpy())  # a rating of no item: none
    if not len(rows):
        return []
    ids = ids[rows]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    bounds = zip(starts.tolist(), [*starts[1:].tolist(), len(rows)])
    scores = ratings["score"].to_numpy(dtype=np.float64)[rows]
    judgments = ratings["judgment"].to_numpy(dtype=object)[rows].tolist()
    notes = ratings["note"].to_numpy(dtype=object)[rows].tolist()
    evidence = []
    for a, b in bounds:
        item_id = ids[a]
        score = ai.get(item_id)
        evidence.append(
            ItemEvidence(
                str(item_id),
                str(queries.get(item_id, item_id)),
                _mean_of(scores[a:b]),
                None if score is None or score != score else float(score),
                tuple(judgments[a:b]),
                tuple(str(n) for n in notes[a:b] if isinstance(n, str) and n),
            )
        )
    return evidence


def _mean_of(scores: Any) -> float:
    """``Series.mean()`` of the scores (NaN skipped): the same numpy sum, divided by the count."""
    import numpy as np

    missing = np.isnan(scores)
    if missing.any():
        scores = np.where(missing, 0.0, scores)
    count = np.float64(len(scores) - missing.sum())
    return float(scores.sum() / count) if count > 0 else float("nan")


def _summary(
    ratings: Any, skips: int, ai: dict[str, float], run_id: str, dimension: str
) -> ReviewSummary:
    import numpy as np

    from evaluation import ReviewSummary

    from .vocabulary import exact_means

    scored = ratings["item_id"].map(ai).to_numpy(dtype=np.float64)  # NaN: no AI score
    known = ~np.isnan(scored)
    # AI − human, as the hil format defines it
    deltas = scored[known] - ratings["score"].to_numpy(dtype=np.float64)[known]
    delta = exact_means(np.zeros(len(deltas), dtype=np.int64), deltas, 1)[0]
    flagged = int(
        (
            (ratings["n_concerns"] > 0)
            | ratings["note"].map(lambda n: isinstance(n, str) and bool(n))
        ).sum()
    )
    return ReviewSummary(
        run_id=run_id,
        dimension=dimension,
        queriesReviewed=len(ratings),
        queriesSkipped=skips,
        queriesFlagged=flagged,
        humanAverageScore=round(float(ratings["score"].mean()), 4) if len(ratings) else None,
        aiVsHumanDelta=round(delta, 4) if delta is not None else None,
    )


def statistical(evidence: Evidence) -> Synthesis:
    """A synthesis from counts alone: top concerns, worst items, largest AI–human gaps."""
    s = evidence.summary
    parts = [
        f"{s.queriesReviewed} ratings of {len(evidence.items)} items by {evidence.reviewers} "
        f"reviewer(s); human average {_fmt(s.humanAverageScore)}"
    ]
    if s.aiVsHumanDelta is not None:
        side = "higher" if s.aiVsHumanDelta > 0 else "lower"
        parts[0] += (
            f", the AI scores {abs(s.aiVsHumanDelta):.2f} {side} than the reviewers on average"
        )
    if evidence.concerns:
        parts.append(
            "Most frequent concerns: " + ", ".join(f"{t} ({n})" for t, n in evidence.concerns[:TOP])
        )
    if evidence.gaps():
        e = evidence.gaps(1)[0]
        parts.append(
            f"Largest disagreement: “{e.query}” (AI {_fmt(e.ai)}, reviewers {_fmt(e.human)})"
        )
    return Synthesis(synthesis=". ".join(parts) + ".", actionItems=_actions(evidence))


def _actions(evidence: Evidence) -> list[str]:
    actions = [f"Address {tag}: flagged in {n} rating(s)" for tag, n in evidence.concerns[:TOP]]
    actions += [
        f"Re-check the judge on “{e.query}”: AI {_fmt(e.ai)} vs reviewers {_fmt(e.human)}"
        for e in evidence.gaps(2)
        if e.gap is not None and abs(e.gap) >= 0.3
    ]
    actions += [
        f"Fix or drop “{e.query}”: rated {', '.join(e.judgments)}"
        for e in evidence.worst(2)
        if e.human < 0.5
    ]
    return actions[:6] or [
        "No action needed from these ratings: no concerns, no large disagreements."
    ]


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def prompt(evidence: Evidence) -> str:
    """The user prompt for the LLM: the run's figures, the worst items, the gaps, the notes."""
    s = evidence.summary
    lines = [
        f"Run {evidence.run_id}, dimension {evidence.dimension}: {s.queriesReviewed} human "
        f"ratings, {s.queriesSkipped} skips; human average {_fmt(s.humanAverageScore)}; mean "
        f"(human − AI) {_fmt(s.human_minus_ai)}.",
        "Concern tags: " + (", ".join(f"{t} ×{n}" for t, n in evidence.concerns) or "none"),
        "",
        "Lowest-rated items:",
    ]
    lines += [
        f"- “{e.query}”: human {_fmt(e.human)} ({', '.join(e.judgments)}), AI {_fmt(e.ai)}"
        for e in evidence.worst(5)
    ]
    lines += ["", "Largest AI–human gaps:"]
    lines += [f"- “{e.query}”: human {_fmt(e.human)}, AI {_fmt(e.ai)}" for e in evidence.gaps(5)]
    lines += ["", "Reviewer notes:"] + [f"- {n}" for n in evidence.notes[:30]]
    lines += [
        "",
        "Write a short synthesis of what the reviewers found and where the AI judge disagrees with "
        "them, and concrete action items for the team building the system.",
    ]
    return "\n".join(lines)


async def with_llm(llm: "LLM", evidence: Evidence) -> Synthesis:
    """One structured LLM call over the evidence."""
    from evaluation.llm import LLMRequest

    request = LLMRequest(
        prompt=prompt(evidence),
        output=Synthesis,
        purpose=f"synthesize:{evidence.run_id}",
        system="You summarise human reviews of an AI system's outputs for its engineers.",
        tool_name="record_synthesis",
        tool_description="Record the synthesis and action items.",
        max_tokens=800,
    )
    output = (await llm.complete(request)).output
    if not isinstance(output, Synthesis):  # the LLM parses into ``request.output``: one already
        output = Synthesis.model_validate(output.model_dump())
    return output


def synthesize(
    store: Store,
    config: HilbotConfig,
    *,
    run_id: str | None = None,
    dimension: str | None = None,
    use_llm: bool = False,
    issues: list | None = None,
) -> ReviewSummary:
    """Synthesize a run's reviews (default: the latest reviewed run) and append the
    ``review_summary``.

    Unreadable lines of the logs go to ``issues``.
    """
    frames = _load(store, issues)
    evidence = _evidence(frames, run_id or _latest_reviewed(frames), dimension, config)
    if not evidence.items:
        raise AnalysisError(
            f"run {evidence.run_id!r} has no ratings on {evidence.dimension!r}",
            fix="review it first (hilbot review)",
        )
    return _store(store, config, evidence, use_llm)


def synthesize_and_store(
    store: Store,
    config: HilbotConfig,
    run_id: str,
    dimension: str | None = None,
    llm: bool = False,
    *,
    issues: list | None = None,
) -> ReviewSummary | None:
    """Synthesize a run's reviews on ``dimension`` and append the ``review_summary``: for a review
    session's end.

    Statistical unless ``llm`` is True (then the LLM writes it, through the one LLM client). The
    synthesis covers every reviewer's current ratings and notes of the run (``reviewer`` None), as
    ``hilbot analyze synthesize --run RUN`` does; ``dimension`` None is the run's first dimension.
    Returns the stored record, which exports then carry, or None when the run has no ratings on
    the dimension yet (nothing is written). An unknown run is a :class:`AnalysisError`; so is a
    failed LLM call with ``llm`` (nothing is written then either). Unreadable log lines go to
    ``issues``.
    """
    evidence = _evidence(_load(store, issues), run_id, dimension, config)
    return _store(store, config, evidence, llm) if evidence.items else None


def _load(store: Store, issues: list | None) -> "Frames":
    """The log as frames, without the items an adjudicator excluded (:mod:`analysis.gold`)."""
    from .load import load

    return _without_excluded(load(store, issues=issues), store, issues)


def _without_excluded(frames: "Frames", store: Store, issues: list | None) -> "Frames":
    """``frames`` without the items an adjudicator excluded."""
    import pandas as pd

    from .gold import read_adjudications
    from .vocabulary import KEY3

    latest = {
        (a.run_id, a.item_id, a.dimension): a
        for a in read_adjudications(store.ratings.path, issues)
    }
    excluded = [key for key, a in latest.items() if a.decision == "exclude"]
    if not excluded:
        return frames
    gone = pd.MultiIndex.from_tuples(excluded, names=KEY3)

    def kept(table: pd.DataFrame) -> pd.DataFrame:
        return table[~pd.MultiIndex.from_frame(table[KEY3]).isin(gone)] if len(table) else table

    return _each_event_table(frames, kept)


def _evidence(
    frames: "Frames", run_id: str, dimension: str | None, config: HilbotConfig | None = None
) -> Evidence:
    if run_id not in set(frames.runs["run_id"]):
        raise AnalysisError(f"no run {run_id!r}", fix="see `hilbot review --list`")
    dimension = dimension or _first_dimension(frames, run_id)
    metric = config.metric_for(dimension) if config is not None else None
    return gather(frames, run_id, dimension, metric)


def _store(store: Store, config: HilbotConfig, evidence: Evidence, use_llm: bool) -> ReviewSummary:
    """Write the synthesis (statistically or with the LLM) and append it as a ``review_summary``."""
    answer, source = _write(store, config, evidence, use_llm)
    record = evidence.summary.model_copy(
        update={
            "synthesis": answer.synthesis,
            "synthesis_source": source,
            "actionItems": answer.actionItems,
        }
    )
    store.ratings.append(record)
    return record


def _write(
    store: Store, config: HilbotConfig, evidence: Evidence, use_llm: bool
) -> tuple[Synthesis, str]:
    if not use_llm:
        return statistical(evidence), STATISTICAL
    import asyncio

    from evaluation.llm import LLM

    llm = LLM(config.llm, store)
    return asyncio.run(with_llm(llm, evidence)), llm.label


def _first_dimension(frames: "Frames", run_id: str) -> str:
    """The first dimension the run's header lists (``overall`` when it has no header, or lists
    none)."""
    listed = frames.runs.loc[frames.runs["run_id"] == run_id, "dimensions"].iloc[0]
    return listed.split(",")[0] or "overall"


def _latest_reviewed(frames: "Frames") -> str:
    reviewed = frames.runs[frames.runs["run_id"].isin(set(frames.ratings["run_id"].unique()))]
    if reviewed.empty:
        raise AnalysisError("no run has ratings yet", fix="review a run first (hilbot review RUN)")
    return str(reviewed.sort_values(["created_at", "run_id"]).iloc[-1]["run_id"])


# ------------------------------------------------------------------------------------ the digest

ACTION_ITEMS_SHOWN = 3
"""Action items the digest shows per run and dimension (the most important first)."""


def _digest(inputs: Inputs, runs: Sequence[str] | None) -> list[str]:
    """Per run the digest lists (None: every rated run) and dimension with ratings: the synthesis
    and its first action items. The latest stored synthesis (an LLM's, or a session end's) when no
    rating came after it, else a statistical one made now; nothing is written."""
    frames = _without_excluded(_of_runs(inputs.frames, runs), inputs.store, None)
    ratings = frames.ratings
    stored = latest_summaries(inputs.store)
    lines: list[str] = []
    for run_id in runs if runs is not None else sorted(set(ratings["run_id"].unique())):
        rated = ratings[ratings["run_id"] == run_id]
        for dimension in sorted(set(rated["dimension"].unique())):
            latest = rated.loc[rated["dimension"] == dimension, "timestamp"].max()
            record = stored.get((run_id, dimension))
            if record is not None and not latest > record.reviewedAt:  # NaT: no time, not later
                text, source, actions = (
                    record.synthesis,
                    record.synthesis_source,
                    record.actionItems,
                )
            else:
                metric = inputs.config.metric_for(dimension)
                made = statistical(gather(frames, run_id, dimension, metric))
                text, source, actions = made.synthesis, STATISTICAL, made.actionItems
            lines.append(f"Synthesis of {run_id} · {dimension} ({_label(source)}): {text}")
            lines += [f"  → {item}" for item in actions[:ACTION_ITEMS_SHOWN]]
    return lines


def _of_runs(frames: "Frames", runs: Sequence[str] | None) -> "Frames":
    """``frames`` with the ratings, skips, concerns and notes of ``runs`` only (None: all)."""
    if runs is None:
        return frames

    def of_runs(table: Any) -> Any:
        return table[table["run_id"].isin(list(runs)).to_numpy()] if len(table) else table

    return _each_event_table(frames, of_runs)


def _each_event_table(frames: "Frames", keep: Callable[[Any], Any]) -> "Frames":
    """``frames`` with ``keep`` applied to its ratings, skips, concerns and notes."""
    return replace(
        frames,
        ratings=keep(frames.ratings),
        skips=keep(frames.skips),
        concerns=keep(frames.concerns),
        notes=keep(frames.notes),
    )


def _label(source: str | None) -> str:
    return "statistical" if source in (STATISTICAL, None) else f"by {source}"


def latest_summaries(store: Store) -> dict[tuple[str, str], "ReviewSummary"]:
    """The latest stored synthesis for all reviewers per (run, dimension): what the digest and
    the dashboard show."""
    from ._records import read_typed

    latest = {}
    for _, record in read_typed(store.ratings.path, "review_summary"):
        if record.reviewer is None and record.synthesis:
            latest[(record.run_id, record.dimension)] = record
    return latest


# -------------------------------------------------------------------------------------- the command


@dataclass(frozen=True)
class Stored:
    """The ``review_summary`` ``hilbot analyze synthesize`` appended, and where."""

    record: ReviewSummary
    """The record as appended."""
    log: str
    """The log it was appended to."""

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON (its set fields)."""
        return self.record.model_dump(mode="json", exclude_none=True)


def _markdown(stored: Stored) -> list[str]:
    record = stored.record
    label = (
        "statistical synthesis (no LLM)"
        if record.synthesis_source == STATISTICAL
        else f"synthesis by {record.synthesis_source}"
    )
    return [
        f"# Review summary: {record.run_id} · {record.dimension} ({label})",
        "",
        record.synthesis or "",
        "",
        "Action items:",
        *[f"{n}. {item}" for n, item in enumerate(record.actionItems, 1)],
        "",
        f"Appended to {stored.log} as a review_summary record.",
    ]


@analysis(
    "synthesize",
    markdown=_markdown,
    writes_files=False,
    digest=_digest,
    options=[Option("llm", bool, False, "Have the LLM write it (sends notes and scores to [llm])")],
)
def synthesize_command(inputs: Inputs, *, llm: bool) -> Stored:
    """Synthesis and action items from the notes and scores, appended as a review_summary record.

    Without --llm the synthesis is statistical (top concerns, worst items, largest AI-human gaps).

    Example: hilbot analyze synthesize --run demo-docs-search --llm
    """
    found: list = []
    record = synthesize(
        inputs.store,
        inputs.config,
        run_id=inputs.run,
        dimension=inputs.dimension,
        use_llm=llm,
        issues=found,
    )
    inputs.warnings += [str(issue) for issue in found]
    if not llm:
        inputs.warnings.append(
            "synthesis is statistical; pass --llm to have the LLM write it from the notes and "
            "scores"
        )
    return Stored(record, str(inputs.store.ratings.path))


__all__ = [
    "Evidence",
    "ItemEvidence",
    "STATISTICAL",
    "Synthesis",
    "gather",
    "latest_summaries",
    "statistical",
    "synthesize",
    "synthesize_and_store",
    "with_llm",
]
