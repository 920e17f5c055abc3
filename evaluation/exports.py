"""Exports of a run's human review: the label export and the inline ``hil`` view.

``json``: ``{exportedAt, runId, dimension, labelerId, labels: [...], queries: [...], hilReview}``;
``jsonl``: the run file as stored, each ``query_evaluation`` with its ``data.hil``
block and the ``run_summary`` with ``hilReview``; ``csv``: one row per label.

``hilReview`` counts the log as it is at export time; its ``synthesis``, ``synthesis_source`` and
``actionItems`` come from the latest ``review_summary`` carrying a synthesis for the run and
dimension (``hilbot analyze synthesize`` and ``analysis.synthesize.synthesize_and_store`` append
those), and stay ``None`` / ``[]`` when there is none. A synthesis speaks for all reviewers, so an
export filtered to one reviewer carries only a synthesis made for that reviewer (none, today).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Callable, Iterable, Iterator, Literal, Optional

from pydantic import BaseModel

from .log import LogIssue
from .records import Rating, Reviewer, ReviewSummary, Skip, utcnow
from .reviews import Ledger, hil_view, summarize
from .runs import Run, ai_score
from .store import Store

Format = Literal["json", "jsonl", "csv"]

CSV_COLUMNS = [
    "scenarioId",
    "dimension",
    "labelerId",
    "judgment",
    "humanScore",
    "aiScore",
    "concerns",
    "confidence",
    "notes",
    "skipped",
    "skipReason",
    "aiVerdictShown",
    "channel",
    "timestamp",
    "triggerCorrect",
    "codeParses",
    "codeRuns",
    "technicallyCorrect",
    "completenessScore",
    "triggerComponentObserved",
    "codeIssues",
    "inaccuracies",
    "missingElements",
    "source_type",
    "session_date",
    "user_notes",
    "blocked_by",
    "follow_up",
]
"""The csv export's columns; a list (concerns, codeIssues, inaccuracies, missingElements) is joined
with ``;``."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def label(judgment: Rating | Skip, ledger: Ledger, run: Run, config: Any = None) -> dict[str, Any]:
    """One human judgment as a label (camelCase, empty fields left out); ``aiScore`` is the
    dimension's configured metric when ``config`` gives one."""
    key = (judgment.run_id, judgment.item_id, judgment.dimension, judgment.reviewer.key)
    note = ledger.notes.get(key)
    item = run.item(judgment.item_id)
    out: dict[str, Any] = {
        "scenarioId": judgment.item_id,
        "dimension": judgment.dimension,
        "labelerId": judgment.reviewer.key,
        "timestamp": judgment.timestamp.isoformat(),
        "channel": judgment.channel,
    }
    if isinstance(judgment, Skip):
        out.update(skipped=True, skipReason=judgment.skip_reason)
    else:
        out.update(
            judgment=judgment.judgment,
            humanScore=judgment.score,
            concerns=judgment.concerns,
            confidence=judgment.confidence,
            aiVerdictShown=judgment.ai_verdict_shown,
            aiScore=ai_score(item, judgment.dimension, _metric(config, judgment.dimension))
            if item
            else None,
        )
        out.update({_camel(k): v for k, v in judgment.labels.model_dump(exclude_none=True).items()})
        out.update(judgment.metadata.model_dump(exclude_none=True))
    notes = "\n".join(
        t
        for t in (
            (judgment.note if isinstance(judgment, Rating) else None),
            note.text if note else None,
        )
        if t
    )
    if notes:
        out["notes"] = notes
    if user_notes := _user_notes(out.get("user_notes"), notes):
        out["user_notes"] = user_notes
    return {k: v for k, v in out.items() if v is not None}


def _user_notes(metadata: str | None, notes: str) -> str:
    """``user_notes``: the reviewer's free-form feedback, the rating's own ``user_notes`` first and
    then the notes they typed, each once."""
    parts = [t for t in (metadata, *notes.split("\n")) if t]
    return "\n".join(dict.fromkeys(parts))


def _metric(config: Any, dimension: str) -> str | None:
    """The judge's score the dimension is compared with (``[dimensions.X] metric``), if any."""
    return config.metric_for(dimension) if config is not None else None


def _labels(
    ledger: Ledger, run: Run, dimension: str | None, reviewer: str | None, config: Any = None
) -> list[dict[str, Any]]:
    order = {item.id: n for n, item in enumerate(run.items)}
    chosen = [
        j
        for k, j in ledger.judgments.items()
        if k[0] == run.run_id
        and (dimension is None or k[2] == dimension)
        and (reviewer is None or k[3] == reviewer)
    ]
    chosen.sort(key=lambda j: (order.get(j.item_id, len(order)), j.dimension, j.reviewer.key))
    return [label(j, ledger, run, config) for j in chosen]


def gold_labels(ledger: Ledger, run: Run, dimension: str, scale: Any) -> list[dict[str, Any]]:
    """Each labelled item's gold label (:mod:`evaluation.gold`): ``scenarioId``, ``dimension``,
    ``judgment``, ``humanScore``, ``source`` (consensus, majority, median, single, excluded,
    unresolved), ``labelCount``, and ``adjudicatedBy`` / ``reason`` where an adjudicator decided."""
    from .gold import gold_of

    rows = []
    for item in run.items:
        gold = gold_of(ledger, run.run_id, item.id, dimension, scale)
        if gold.n_labels == 0 and gold.adjudicator is None:
            continue
        row = {
            "scenarioId": item.id,
            "dimension": dimension,
            "judgment": gold.judgment,
            "humanScore": gold.score,
            "source": gold.source,
            "labelCount": gold.n_labels,
            "adjudicatedBy": gold.adjudicator,
            "reason": gold.reason,
        }
        rows.append({k: v for k, v in row.items() if v is not None})
    return rows


def _queries(
    ledger: Ledger, run: Run, dimension: str, reviewer: Reviewer | None
) -> list[dict[str, Any]]:
    rows = []
    for item in run.items:
        data = item.model_dump(mode="json", exclude_none=True)
        hil = hil_view(ledger, run.run_id, item.id, dimension, reviewer)
        data["hil"] = hil or {"reviewed": False}
        rows.append({"type": "query_evaluation", "run_id": run.run_id, "data": data})
    return rows


def _reviewer(key: str | None) -> Reviewer | None:
    if key is None:
        return None
    platform, _, user = key.partition(":")
    return Reviewer(platform=platform, id=user) if user else Reviewer(id=platform)


def _synthesis_of(event: ReviewSummary, run_id: str, dimension: str, reviewer: str | None) -> bool:
    """Whether ``event`` is a synthesis of this run and dimension that an export for ``reviewer``
    may carry."""
    return (
        event.run_id == run_id
        and event.dimension == dimension
        and (event.synthesis is not None or bool(event.actionItems))
        and (event.reviewer.key if event.reviewer else None) == reviewer
    )


Events = Callable[[Optional[list[LogIssue]]], Iterable[BaseModel]]
"""Gives the events an export folds (bad lines into the list): the whole log by default."""


def _read(
    events: Iterable[BaseModel], run_id: str, dimension: str, reviewer: str | None
) -> tuple[Ledger, ReviewSummary | None]:
    """ratings.jsonl folded (one pass), with the latest synthesis for the run and dimension (last
    appended wins)."""
    latest: ReviewSummary | None = None

    def human(stream: Iterable[BaseModel]) -> Iterator[BaseModel]:
        nonlocal latest
        for event in stream:
            if not isinstance(event, ReviewSummary):
                yield event
            elif _synthesis_of(event, run_id, dimension, reviewer):
                latest = event

    ledger = Ledger.from_events(human(events))  # each item's load counted once, after the stream
    return ledger, latest


def _scale(config: Any, dimension: str) -> Any:
    """The dimension's scale, or None (gold labels then go by the scores alone)."""
    return (
        config.scale_for(dimension)
        if config is not None and dimension in config.dimensions
        else None
    )


def export_run(
    store: Store,
    run_id: str,
    fmt: Format = "json",
    *,
    dimension: str | None = None,
    reviewer: str | None = None,
    issues: list[LogIssue] | None = None,
    config: Any = None,
    events: Events | None = None,
) -> str:
    """The review of a run in ``fmt``; ``reviewer`` is a ``platform:id`` key; ``config`` gives the
    scales gold labels use; ``events`` the events to fold (the whole ratings log by default; the
    columnar index gives only those of the run, :func:`analysis.run_events.export_events`).

    Unreadable lines of the run file and of ratings.jsonl go to ``issues`` (the rest is exported).
    """
    run = store.load_run(run_id, issues)
    dim = dimension or run.header.dimensions[0]
    folded = events(issues) if events is not None else store.human_events(issues)
    ledger, synthesis = _read(folded, run_id, dim, reviewer)
    labels = _labels(ledger, run, dimension, reviewer, config)
    who = _reviewer(reviewer)
    hil = summarize(ledger, run, dim, who, _metric(config, dim))
    if synthesis is not None:
        hil = hil.model_copy(
            update={
                "synthesis": synthesis.synthesis,
                "synthesis_source": synthesis.synthesis_source,
                "actionItems": list(synthesis.actionItems),
            }
        )
    review = hil.model_dump(mode="json", exclude={"type", "v", "run_id", "reviewer"})
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(
            buffer, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n"
        )
        writer.writeheader()
        for row in labels:
            writer.writerow({k: ";".join(v) if isinstance(v, list) else v for k, v in row.items()})
        return buffer.getvalue()
    if fmt == "jsonl":
        lines = [
            run.header.model_dump(mode="json", exclude_none=True),
            *_queries(ledger, run, dim, who),
        ]
        summary = (
            run.summary.model_dump(mode="json", exclude_none=True)
            if run.summary
            else {"type": "run_summary", "run_id": run_id}
        )
        lines.append({**summary, "hilReview": review})
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    document = {
        "exportedAt": utcnow().isoformat(),
        "runId": run_id,
        "dimension": dimension,
        "labelerId": reviewer,
        "labels": labels,
        "goldLabels": gold_labels(ledger, run, dim, _scale(config, dim))
        if reviewer is None
        else None,
        "queries": _queries(ledger, run, dim, who),
        "hilReview": review,
    }
    return (
        json.dumps(
            {k: v for k, v in document.items() if v is not None}, ensure_ascii=False, indent=2
        )
        + "\n"
    )
