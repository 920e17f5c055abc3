"""The Langfuse source: annotation queue items, a dataset run's items or filtered traces as a run.

Calls (SDK 5 method → HTTP, every path under ``/api/public``):

* ``annotation_queues.get_queue`` → ``GET /annotation-queues/{queueId}`` (its name);
* ``annotation_queues.list_queue_items`` → ``GET /annotation-queues/{queueId}/items`` with
  ``status=PENDING``, ``page``/``limit``, following ``meta.totalPages``;
* ``observations.get_many`` → ``GET /v2/observations``: a trace is its observations
  (``traceId``), an observation is found by a ``filter`` on ``id``, traces by a ``filter`` on
  ``isRootObservation``, ``traceName``, ``tags`` and ``startTime``; ``fields=core,basic,io,
  trace_context``; cursor paging; input and output come as raw (JSON) text;
* ``scores.get_many`` → ``GET /v3/scores`` (up to 100 comma-separated ``traceId``s,
  ``fields=details,subject``; by ``name`` for ``score_below``), cursor paging;
* ``datasets.get`` → ``GET /v2/datasets/{name}``, ``experiments.list`` → ``GET /experiments``,
  ``experiments.list_items`` → ``GET /experiment-items`` (``fields=core,io,scores``), for a
  dataset run (Langfuse v4 calls a dataset run an experiment).

The bulk reads (the queue's items, observations, scores) go through
:meth:`~._client.Connection.get_json`: the same requests, read as plain JSON rather than the SDK's
models. ``LANGFUSE_RATE_PER_S`` spaces them (e.g. ``0.5`` under the Hobby plan's 30 requests a
minute); a 429 waits its ``Retry-After`` and is tried again (see :mod:`._client`).

A trace's query and answer are its root observation's input and output (Langfuse v4 keeps no
trace-level input/output); its contexts are the documents its retrieval observations returned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from ...records import ItemData, Query
from ..base import ConnectorError, Env, Origin, Pulled
from . import shapes
from ._client import Connection, chunks, connect, iso, parse_time
from .shapes import JudgeScore, Row

if TYPE_CHECKING:
    from . import LangfuseSource

FIELDS = "core,basic,io,trace_context"
"""The observation field groups read: ids and type, name, input/output, trace name and tags."""
SCORE_FIELDS = "details,subject"
"""The score field groups read: comment and metadata, and what the score is on."""
PAGE = 100
"""Items asked for a page (the largest page queues, scores and experiments allow)."""
OBSERVATION_PAGE = 1000
"""Observations asked for a page (the v2 observations API's largest)."""
TRACES_A_QUERY = 100
"""Trace ids in one scores query (a comma-separated ``traceId``): a page of scores holds 100, so
with one score a trace a query is one page."""
QUEUE_FIX = (
    "give the queue's id (Langfuse → Annotation Queues → the queue; the id is in its "
    "URL), and keys of the project that holds it"
)


@dataclass
class Found:
    """What a pull found, before it becomes an item: the subject, its trace, where it came from."""

    subject: Row
    """The observation whose input and output the item shows (a trace's root, or itself)."""
    kind: str
    """``trace`` or ``observation``."""
    rows: list[Row]
    """The trace's observations (for contexts); may be empty."""
    extra: dict[str, Any]
    """The origin's extra: the trace id, the queue item, the dataset run …"""
    scores: list[JudgeScore] = field(default_factory=list)
    """Scores on it already."""
    expected: Any = None
    """The expected output (a dataset item's), if any."""

    @property
    def id(self) -> str:
        """The id a label attaches to: the trace's, or the observation's."""
        return self.subject.trace_id if self.kind == "trace" else self.subject.id


def pull(settings: "LangfuseSource", env: Env) -> Pulled:
    """The items ``settings`` name (one mode: a queue, a dataset run, or a trace filter)."""
    with connect(env) as conn:
        conn.retry_429 = True
        reader = Reader(conn, settings)
        if settings.queue is not None:
            return reader.queue(settings.queue)
        if settings.dataset is not None and settings.dataset_run is not None:
            return reader.dataset_run(settings.dataset, settings.dataset_run)
        return reader.traces()


@dataclass
class Reader:
    """Reads one pull's items from Langfuse."""

    conn: Connection
    settings: "LangfuseSource"
    skipped: dict[str, int] = field(default_factory=dict)
    """Why items were left out, with how many."""

    # -- modes -------------------------------------------------------------------------------------

    def queue(self, queue_id: str) -> Pulled:
        """An annotation queue's pending items."""
        api = self.conn.api.annotation_queues
        missing = f"no annotation queue {queue_id!r} at Langfuse {self.conn.host}"
        queue = self.conn.fetch(
            f"reading annotation queue {queue_id!r}",
            api.get_queue,
            queue_id,
            missing=missing,
            missing_fix=QUEUE_FIX,
        )
        what = f"listing the items of annotation queue {queue_id!r}"
        listing = self.conn.pages_json(
            what,
            f"annotation-queues/{queue_id}/items",
            {"status": "PENDING", "limit": PAGE},
            missing=missing,
            missing_fix=QUEUE_FIX,
        )
        found: list[Found] = []
        seen: set[str] = set()
        for entry in listing:
            if len(found) >= self.settings.limit:
                break
            entry_id, object_id, object_type = _queue_item(entry, self.conn, what)
            if entry_id in seen:
                continue
            seen.add(entry_id)
            extra = {"queue_id": queue_id, "queue_item_id": entry_id}
            item = self._queue_entry(object_type, object_id, extra)
            if item is not None:
                found.append(item)
        items = self._add_scores(found)
        where = f"langfuse annotation queue {queue.name!r} ({queue_id}) at {self.conn.host}"
        return self._pulled(items, where, queue.name or queue_id)

    def dataset_run(self, dataset: str, run: str) -> Pulled:
        """The items of one run (experiment) of a dataset, with their scores."""
        ds = self.conn.fetch(
            f"reading dataset {dataset!r}",
            self.conn.api.datasets.get,
            dataset,
            missing=f"no dataset {dataset!r} at Langfuse {self.conn.host}",
            missing_fix="check the dataset's name (Langfuse → Datasets)",
        )
        since = self.settings.from_time or ds.created_at
        experiment = self._experiment(ds.id, dataset, run, since)
        listing = self.conn.walk(
            f"listing the items of run {run!r} of dataset {dataset!r}",
            self.conn.api.experiments.list_items,
            from_start_time=since,
            experiment_id=experiment.id,
            fields="core,io,scores",
            limit=PAGE,
        )
        found = [
            self._run_item(entry, dataset, run, experiment.id)
            for entry in _first(listing, self.settings.limit)
        ]
        where = f"langfuse dataset {dataset!r} run {run!r} at {self.conn.host}"
        return self._pulled([self._item(entry) for entry in found], where, dataset)

    def traces(self) -> Pulled:
        """Traces matching the filter (name, tags, time, a score below a threshold)."""
        chosen = self._below() if self.settings.score_below is not None else self._roots()
        found: list[Found] = []
        for trace_id, root in chosen:
            rows = self._rows(trace_id) if self.settings.contexts or root is None else []
            subject = root or shapes.root(rows)
            if subject is None:
                self._skip("trace not found")
                continue
            if root is None and not self._matches(subject):
                continue
            found.append(Found(subject, "trace", rows, {"trace_id": trace_id}))
            if len(found) >= self.settings.limit:
                break
        items = self._add_scores(found)
        where = f"langfuse traces {self._described()} at {self.conn.host}"
        return self._pulled(items, where, self.settings.name or "langfuse")

    # -- reading -----------------------------------------------------------------------------------

    def _queue_entry(self, object_type: str, object_id: str, extra: dict[str, Any]) -> Found | None:
        """A queue item's trace or observation (None, and noted, when it cannot be shown)."""
        kind = object_type.rsplit(".", 1)[-1].upper()
        if kind == "TRACE":
            rows = self._rows(object_id)
            subject = shapes.root(rows)
            if subject is None:
                self._skip("trace not found")
                return None
            return Found(subject, "trace", rows, {"trace_id": object_id, **extra})
        if kind == "OBSERVATION":
            subject = self._observation(object_id)
            if subject is None:
                self._skip("observation not found")
                return None
            rows = (self._rows(subject.trace_id) if subject.trace_id else []) or [subject]
            return Found(subject, "observation", rows, {"trace_id": subject.trace_id, **extra})
        self._skip(f"{kind.lower()} items")
        return None

    def _run_item(self, entry: Any, dataset: str, run: str, experiment_id: str) -> Found:
        """A dataset run's item (an ExperimentItem) as what was found."""
        rows = self._rows(entry.trace_id) if self.settings.contexts else []
        subject = Row(
            id=entry.id,
            trace_id=entry.trace_id,
            input=entry.input,
            output=entry.output,
            start=iso(entry.start_time),
        )
        extra = {
            "trace_id": entry.trace_id,
            "dataset": dataset,
            "dataset_run": run,
            "experiment_id": experiment_id,
            "dataset_item_id": entry.experiment_item_id,
        }
        scores = [_sdk_judge_score(s) for s in entry.scores or []]
        return Found(subject, "trace", rows, extra, scores, expected=entry.expected_output)

    def _rows(self, trace_id: str) -> list[Row]:
        """A trace's observations."""
        listing = self.conn.walk_json(
            f"reading trace {trace_id!r}",
            "v2/observations",
            {"fields": FIELDS, "limit": OBSERVATION_PAGE, "traceId": trace_id},
        )
        return [row for row in map(_row, listing) if row is not None]

    def _observation(self, observation_id: str) -> Row | None:
        """One observation, by id."""
        condition = [{"type": "string", "column": "id", "operator": "=", "value": observation_id}]
        what = f"reading observation {observation_id!r}"
        answer = self.conn.get_json(
            what, "v2/observations", {"fields": FIELDS, "limit": 1, "filter": json.dumps(condition)}
        )
        data = answer.get("data")
        if not isinstance(data, list):
            raise self.conn.shape(what, "data: Field required")
        rows = [row for row in map(_row, data) if row is not None and row.id == observation_id]
        return rows[0] if rows else None

    def _roots(self) -> Iterator[tuple[str, Row | None]]:
        """The root observations of the traces the filter matches, newest first (one a trace)."""
        settings = self.settings
        # without contexts nothing else is read meanwhile: the next page is asked for at once
        pages = self.conn.walk_pages_json(
            "listing traces",
            "v2/observations",
            {
                "fields": FIELDS,
                "limit": min(settings.limit, OBSERVATION_PAGE),
                "fromStartTime": settings.from_time,
                "toStartTime": settings.to_time,
                "filter": json.dumps(_conditions(settings)),
            },
            ahead=not settings.contexts,
            upto=settings.limit,
        )
        seen: set[str] = set()
        for page in pages:
            for observation in page:
                row = _row(observation)
                if row is not None and row.trace_id and row.trace_id not in seen:
                    seen.add(row.trace_id)
                    yield row.trace_id, row

    def _below(self) -> Iterator[tuple[str, Row | None]]:
        """Traces with a score of the name below the threshold (newest scores first)."""
        below = self.settings.score_below
        assert below is not None
        listing = self.conn.walk_json(
            f"listing scores named {below.name!r}",
            "v3/scores",
            {
                "limit": PAGE,
                "fields": "subject",
                "name": below.name,
                "fromTimestamp": self.settings.from_time,
            },
        )
        seen: set[str] = set()
        for score in listing:
            if not isinstance(score, dict):
                continue
            value, trace_id = _number(score.get("value")), _subject_trace(score.get("subject"))
            if value is not None and value < below.threshold and trace_id and trace_id not in seen:
                seen.add(trace_id)
                yield trace_id, None

    def _experiment(self, dataset_id: str, dataset: str, run: str, since: datetime) -> Any:
        """The run (experiment) of the dataset with this name."""
        listing = self.conn.walk(
            f"finding run {run!r} of dataset {dataset!r}",
            self.conn.api.experiments.list,
            from_start_time=since,
            dataset_id=dataset_id,
            name=run,
            limit=PAGE,
        )
        for experiment in listing:
            if experiment.name == run:
                return experiment
        raise ConnectorError(
            f"dataset {dataset!r} has no run {run!r} since {since.isoformat()} at Langfuse "
            f"{self.conn.host}",
            fix="check the run's name (Langfuse → Datasets → the dataset → Runs); for an older "
            "run give --from-time before it started",
        )

    def _add_scores(self, found: list[Found]) -> list[ItemData]:
        """Each item's scores already in Langfuse (on its trace, or on its observation); the
        items, each built as soon as the scores of its trace are read (while the next query is
        under way)."""
        by_subject: dict[tuple[str, str], list[JudgeScore]] = {}
        of_trace: dict[str, list[int]] = {}
        for index, entry in enumerate(found):
            if entry.subject.trace_id:
                of_trace.setdefault(entry.subject.trace_id, []).append(index)
        trace_ids = list(of_trace)
        built: dict[int, ItemData] = {}

        def pages() -> Iterator[tuple[list[str], list[Any] | None]]:
            for chunk in chunks(trace_ids, TRACES_A_QUERY):
                for data in self.conn.walk_pages_json(
                    "reading the traces' scores",
                    "v3/scores",
                    {"limit": PAGE, "fields": SCORE_FIELDS, "traceId": ",".join(chunk)},
                ):
                    yield chunk, data
                yield chunk, None  # the chunk's scores are all read

        # nothing else is read meanwhile: each query goes as soon as the one before was answered
        listing = self.conn.ahead(pages()) if len(trace_ids) > TRACES_A_QUERY else pages()
        for chunk, data in listing:
            if data is None:
                for trace_id in chunk:
                    for index in of_trace[trace_id]:
                        entry = found[index]
                        entry.scores = by_subject.get((entry.kind, entry.id), [])
                        built[index] = self._item(entry)
                continue
            for score in data:
                if not isinstance(score, dict):
                    continue
                key = _subject_key(score.get("subject"), chunk)
                if key is not None:
                    by_subject.setdefault(key, []).append(_judge_score(score))
        items = []
        for index, entry in enumerate(found):
            if index not in built:
                entry.scores = by_subject.get((entry.kind, entry.id), [])
                built[index] = self._item(entry)
            items.append(built[index])
        return items

    # -- the result --------------------------------------------------------------------------------

    def _pulled(self, built: list[ItemData], where: str, set_name: str) -> Pulled:
        items: list[ItemData] = []
        ids: set[str] = set()
        for item in built:
            while item.id in ids:
                item = item.model_copy(update={"id": f"{item.id}~"})
            ids.add(item.id)
            items.append(item)
        if self.skipped:
            left = ", ".join(f"{n} {why}" for why, n in self.skipped.items())
            where += f" (left out: {left})"
        judged = any(item.evaluation.judge for item in items)
        return Pulled(
            kind="answer",
            source=where,
            set_name=set_name,
            items=items,
            judge="langfuse" if judged else None,
        )

    def _item(self, entry: Found) -> ItemData:
        subject = entry.subject
        origin = Origin(tool="langfuse", kind=entry.kind, id=entry.id, extra=entry.extra)
        features: dict[str, Any] = {"origin": origin.model_dump()}
        if subject.trace_name:
            features["trace_name"] = subject.trace_name
        if subject.tags:
            features["tags"] = subject.tags
        query = shapes.query_text(subject.input) or subject.trace_name or subject.name or ""
        expected = shapes.answer_text(entry.expected) if entry.expected is not None else None
        under = None if entry.kind == "trace" else subject.id
        return ItemData(
            id=entry.id,
            query=Query(query=query, expected_answer=expected),
            answer=shapes.answer_text(subject.output),
            contexts=shapes.contexts(entry.rows, under),
            ground_truth=[expected] if expected else [],
            evaluation=shapes.evaluation(entry.scores, self.settings.overall),
            features=features,
        )

    def _matches(self, row: Row) -> bool:
        """Whether a trace's root passes the filter (what the score_below mode checks itself)."""
        settings = self.settings
        if settings.name and row.trace_name != settings.name:
            return False
        if settings.tags and not set(settings.tags) <= set(row.tags):
            return False
        start = _time(row.start)
        if start is not None and settings.from_time and start < settings.from_time:
            return False
        return not (start is not None and settings.to_time and start >= settings.to_time)

    def _described(self) -> str:
        s = self.settings
        parts = [
            f"named {s.name!r}" if s.name else "",
            f"tagged {','.join(s.tags)}" if s.tags else "",
            f"from {s.from_time.isoformat()}" if s.from_time else "",
            f"to {s.to_time.isoformat()}" if s.to_time else "",
            f"with {s.score_below.name} < {s.score_below.threshold:g}" if s.score_below else "",
        ]
        return " ".join(p for p in parts if p) or "(all)"

    def _skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1


# -------------------------------------------------------------------------------------- conversions


def _conditions(settings: "LangfuseSource") -> list[dict[str, Any]]:
    """The v2 ``filter`` of the trace filter (it takes precedence over the query's own filters)."""
    conditions: list[dict[str, Any]] = [
        {"type": "boolean", "column": "isRootObservation", "operator": "=", "value": True}
    ]
    if settings.name:
        conditions.append(
            {"type": "string", "column": "traceName", "operator": "=", "value": settings.name}
        )
    if settings.tags:
        conditions.append(
            {"type": "arrayOptions", "column": "tags", "operator": "all of", "value": settings.tags}
        )
    if settings.from_time:
        conditions.append(
            {
                "type": "datetime",
                "column": "startTime",
                "operator": ">=",
                "value": settings.from_time.isoformat(),
            }
        )
    if settings.to_time:
        conditions.append(
            {
                "type": "datetime",
                "column": "startTime",
                "operator": "<",
                "value": settings.to_time.isoformat(),
            }
        )
    return conditions


def _text(value: Any) -> str | None:
    """A string field of an answer (None when it is absent or not a string)."""
    return value if isinstance(value, str) else None


def _row(observation: Any) -> Row | None:
    """An ObservationV2 (its JSON) as a :class:`~.shapes.Row`; None when it is no object with an
    id."""
    if not isinstance(observation, dict):
        return None
    get = observation.get
    observation_id = get("id")
    if not isinstance(observation_id, str):
        return None
    start = get("startTime")
    parsed = parse_time(start)
    root = get("isRootObservation")
    return Row(
        id=observation_id,
        trace_id=_text(get("traceId")) or "",
        type=str(get("type") or ""),
        name=_text(get("name")),
        parent_id=_text(get("parentObservationId")),
        is_root=root if isinstance(root, bool) else None,
        start=parsed.isoformat() if parsed is not None else iso(start),
        input=get("input"),
        output=get("output"),
        trace_name=_text(get("traceName")),
        tags=[t for t in get("tags") or [] if isinstance(t, str)]
        if isinstance(get("tags") or [], list)
        else [],
    )


def _judge_score(score: dict[str, Any]) -> JudgeScore:
    """A ScoreV3 (its JSON) as a :class:`~.shapes.JudgeScore`."""
    metadata = score.get("metadata")
    return JudgeScore(
        name=str(score.get("name") or ""),
        value=score.get("value"),
        data_type=str(score.get("dataType") or ""),
        source=str(score.get("source") or ""),
        comment=_text(score.get("comment")),
        metadata=metadata if isinstance(metadata, dict) else None,
    )


def _sdk_judge_score(score: Any) -> JudgeScore:
    """A score of the SDK's models (a dataset run's item's) as a :class:`~.shapes.JudgeScore`."""
    source = score.source.value if hasattr(score.source, "value") else score.source
    return JudgeScore(
        name=score.name,
        value=score.value,
        data_type=str(getattr(score, "data_type", "") or ""),
        source=str(source),
        comment=score.comment,
        metadata=score.metadata,
    )


def _queue_item(entry: Any, conn: Connection, what: str) -> tuple[str, str, str]:
    """A queue item's (id, objectId, objectType); one without them is an answer of an unexpected
    shape."""
    fields: list[str] = []
    for key in ("id", "objectId", "objectType"):
        value = entry.get(key) if isinstance(entry, dict) else None
        if not isinstance(value, str):
            raise conn.shape(what, f"data.{key}: Input should be a valid string")
        fields.append(value)
    return fields[0], fields[1], fields[2]


def _subject_trace(subject: Any) -> str | None:
    """The trace a score's subject (its JSON) belongs to."""
    if not isinstance(subject, dict):
        return None
    kind = subject.get("kind")
    if kind == "trace":
        return _text(subject.get("id"))
    return _text(subject.get("traceId")) if kind == "observation" else None


def _subject_key(subject: Any, trace_ids: list[str]) -> tuple[str, str] | None:
    """(kind, id) of what a score is on; one without a subject is its trace's when the query
    asked for one trace."""
    if subject is None:
        return ("trace", trace_ids[0]) if len(trace_ids) == 1 else None
    if not isinstance(subject, dict):
        return None
    kind, subject_id = subject.get("kind"), subject.get("id")
    return (
        (kind, subject_id)
        if kind in ("trace", "observation") and isinstance(subject_id, str)
        else None
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return float(value) if isinstance(value, (int, float)) else None


def _first(items: Iterable[Any], n: int) -> Iterator[Any]:
    for index, item in enumerate(items):
        if index >= n:
            return
        yield item


def _time(text: str) -> datetime | None:
    """An ISO 8601 time (UTC when it has no zone), or None."""
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
