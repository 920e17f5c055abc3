"""Arize Phoenix: spans in (as answer or search items), human labels out as HUMAN annotations.

Source: ``GET /v1/projects/{project}/spans`` (the SDK's ``spans.get_spans``, cursor pages of up
to 100) filtered by span kind, name, time and root spans; each span's LLM and CODE annotations
(``GET /v1/projects/{project}/span_annotations``, ``spans.get_span_annotations``) become the
item's AI evaluation, hidden from reviewers until they have rated. With ``documents`` each
RETRIEVER span is a search item whose ranked results are its retrieved documents; with
``per_document`` each document is an item of its own, labelled (and written back) alone.

Sink: see :mod:`._sink` (``POST /v1/span_annotations`` and ``/v1/document_annotations``).

Built for ``arize-phoenix-client>=2.1`` (``get_spans`` with ``span_kind``/``name``/``parent_id``,
``log_document_annotations``, annotation ``identifier``). The SDK is imported only in the
functions that talk to Phoenix.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from ...records import Evaluation, ItemData
from ..base import ConnectorError, Env, Pulled, SinkSpec, SourceSpec, settings_model, sink, source
from . import _client, _spans
from ._client import Phoenix, connect, path_part
from ._sink import ID_CHUNK, PhoenixSink, PhoenixSinkSettings

SPAN_KINDS = (
    "LLM",
    "CHAIN",
    "TOOL",
    "RETRIEVER",
    "EMBEDDING",
    "AGENT",
    "RERANKER",
    "GUARDRAIL",
    "EVALUATOR",
    "PROMPT",
    "UNKNOWN",
)
"""The span kinds Phoenix filters by (OpenInference's)."""
RATE_PER_S = 20.0
"""Label writes a second: Phoenix documents no limit (it is usually self-hosted); 20 keeps a small
server responsive."""
BATCH = 100
"""Labels per write: ``POST /v1/span_annotations`` takes a list (the SDK writes 100 at a time)."""
FALLBACK_SCAN = 10
"""Without server-side filters (an old server), spans scanned per span wanted."""


class PhoenixSourceSettings(BaseModel):
    """What ``hilbot pull phoenix`` and a ``[sources.X]`` of type ``phoenix`` take."""

    model_config = settings_model()

    project: str = Field(min_length=1)
    """The project: its name or its id."""
    span_kind: Literal[SPAN_KINDS] | None = None  # type: ignore[valid-type]
    """Only spans of this kind (LLM, RETRIEVER, CHAIN, TOOL, AGENT…); ``documents``: RETRIEVER."""
    name: str | None = None
    """Only spans with this name."""
    start_time: datetime | None = None
    """Only spans started at or after this time (UTC when no zone is given)."""
    end_time: datetime | None = None
    """Only spans started before this time."""
    root_spans_only: bool = False
    """Only root spans (a trace's first span: the whole request and its final answer)."""
    limit: int = Field(default=100, ge=1, le=100_000)
    """At most this many spans (the newest first)."""
    documents: bool = False
    """RETRIEVER spans as search items whose ranked results are the retrieved documents."""
    per_document: bool = False
    """With ``documents``: one item per retrieved document, rated and written back on its own."""
    annotations: bool = True
    """Read the spans' LLM and CODE annotations as the items' AI evaluation."""
    overall: str | None = None
    """The annotation whose score is the item's ``overall`` (default: the only one, when there is
    one)."""

    @field_validator("span_kind", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("project")
    @classmethod
    def _path_safe(cls, value: str) -> str:
        if any(c in value for c in "/?#"):
            raise ValueError(
                "a project name with / ? or # cannot be used in Phoenix's URLs; "
                "give the project's id"
            )
        return value

    @field_validator("start_time", "end_time")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return (
            value.replace(tzinfo=timezone.utc)
            if value is not None and value.tzinfo is None
            else value
        )

    @model_validator(mode="after")
    def _consistent(self) -> "PhoenixSourceSettings":
        if self.per_document and not self.documents:
            raise ValueError("per_document needs documents = true")
        if self.documents and self.span_kind not in (None, "RETRIEVER"):
            raise ValueError("documents are read from RETRIEVER spans; leave span_kind out")
        if self.start_time and self.end_time and self.start_time >= self.end_time:
            raise ValueError("start_time must be before end_time")
        return self


def pull(settings: PhoenixSourceSettings, env: Env) -> Pulled:
    """The project's spans as a run (answer items, or search items with ``documents``)."""
    phoenix = connect(env)
    try:
        spans = _spans_of(phoenix, settings)
        reads = settings.annotations and not settings.per_document
        judged = _judged(phoenix, settings, spans) if reads else {}
    finally:
        phoenix.http.close()
    items = _items(spans, settings, judged)
    judge = (
        _spans.JUDGE if any(i.evaluation.scores or i.evaluation.verdict for i in items) else None
    )
    return Pulled(
        kind="search" if settings.documents else "answer",
        set_name=settings.project,
        items=items,
        judge=judge,
        source=f"phoenix project {settings.project} at {phoenix.host}",
    )


def _kind(settings: PhoenixSourceSettings) -> str | None:
    return "RETRIEVER" if settings.documents else settings.span_kind


def _spans_of(phoenix: Phoenix, settings: PhoenixSourceSettings) -> list[dict[str, Any]]:
    """The spans the settings select, newest first: filtered by the server, checked again here."""
    found = phoenix.call(
        f"listing spans of project {settings.project!r}",
        partial(_fetch, phoenix, settings),
        not_found=f"no project {settings.project!r}",
    )
    return [s for s in found if isinstance(s, dict) and _wanted(s, settings)][: settings.limit]


def _fetch(phoenix: Phoenix, settings: PhoenixSourceSettings) -> list[Any]:
    """Pages of ``GET /v1/projects/{project}/spans`` through the SDK (it follows ``next_cursor``).

    The SDK asks the server's version before it sends a kind or name filter; a server too old for
    them (or not telling its version) is read unfiltered, up to :data:`FALLBACK_SCAN` spans a span.
    """
    from phoenix.client.exceptions import PhoenixException

    common: dict[str, Any] = {
        "project_identifier": path_part(settings.project),
        "start_time": settings.start_time,
        "end_time": settings.end_time,
        "timeout": _client.read_timeout(),
        "parent_id": "null" if settings.root_spans_only else None,
    }
    filters: dict[str, Any] = {
        k: v for k, v in (("name", settings.name), ("span_kind", _kind(settings))) if v
    }
    try:
        return list(phoenix.client.spans.get_spans(limit=settings.limit, **common, **filters))
    except PhoenixException:
        if not filters:
            raise
    return list(phoenix.client.spans.get_spans(limit=settings.limit * FALLBACK_SCAN, **common))


def _wanted(span: dict[str, Any], settings: PhoenixSourceSettings) -> bool:
    """Whether ``span`` passes the settings' filters (a server may ignore a filter it does not
    know)."""
    kind = _kind(settings)
    if _spans.span_id_of(span) is None or (kind and _spans.kind_of(span) != kind):
        return False
    if settings.name and span.get("name") != settings.name:
        return False
    return not (settings.root_spans_only and span.get("parent_id"))


def _judged(
    phoenix: Phoenix, settings: PhoenixSourceSettings, spans: list[dict[str, Any]]
) -> dict[str, Evaluation]:
    """Each span's AI evaluation from its LLM and CODE annotations, by span id."""
    ids = list(dict.fromkeys(i for s in spans if (i := _spans.span_id_of(s))))
    found: dict[str, list[dict[str, Any]]] = {}
    for start in range(0, len(ids), ID_CHUNK):
        chunk = ids[start : start + ID_CHUNK]
        rows = phoenix.call(
            f"reading annotations of project {settings.project!r}",
            partial(_annotations, phoenix, settings.project, chunk),
        )
        for row in rows:
            if isinstance(row, dict) and isinstance(row.get("span_id"), str):
                found.setdefault(row["span_id"], []).append(row)
    return {span_id: _spans.evaluation(rows, settings.overall) for span_id, rows in found.items()}


def _annotations(phoenix: Phoenix, project: str, span_ids: list[str]) -> list[Any]:
    """Annotations on ``span_ids`` (none when Phoenix says it holds none of them: a 404)."""
    import httpx

    try:
        return list(
            phoenix.client.spans.get_span_annotations(
                span_ids=span_ids,
                project_identifier=path_part(project),
                limit=1000,
                timeout=_client.read_timeout(),
            )
        )
    except httpx.HTTPStatusError as exc:
        if exc.response.status_code == 404:
            return []
        raise


def _items(
    spans: list[dict[str, Any]], settings: PhoenixSourceSettings, judged: dict[str, Evaluation]
) -> list[ItemData]:
    """The items, one per span (or per document); a span id seen twice is taken once."""
    items: list[ItemData] = []
    seen: set[str] = set()
    for span in spans:
        span_id = _spans.span_id_of(span) or ""
        if span_id in seen:
            continue
        seen.add(span_id)
        evaluation = judged.get(span_id, Evaluation())
        try:
            if settings.per_document:
                items += _spans.document_items(span, settings.project)
            elif settings.documents:
                item = _spans.search_item(span, settings.project, evaluation)
                items += [item] if item is not None else []
            else:
                items.append(_spans.answer_item(span, settings.project, evaluation))
        except ValueError as exc:  # pydantic's: a span whose values no item can hold
            raise ConnectorError(
                f"span {span_id[:64]!r} of project {settings.project!r} cannot be read: "
                f"{str(exc).splitlines()[0][:200]}",
                fix="report the span to hilbot",
            ) from None
    return items


def make(settings: PhoenixSinkSettings, env: Env) -> PhoenixSink:
    """A sink writing to the Phoenix ``env`` names (its host and key are checked on the first
    write)."""
    return PhoenixSink(settings, connect(env))


class _SourceSpec(SourceSpec):
    """A source spec made here: the registry takes a built-in only from its home module, which it
    reads from the spec's ``__module__`` (a plain SourceSpec's is ``base``)."""


class _SinkSpec(SinkSpec):
    """A sink spec made here (see :class:`_SourceSpec`)."""


source(_SourceSpec(name="phoenix", extra="phoenix", settings=PhoenixSourceSettings, pull=pull))
sink(
    _SinkSpec(
        name="phoenix",
        extra="phoenix",
        settings=PhoenixSinkSettings,
        make=make,
        rate_per_s=RATE_PER_S,
        batch=BATCH,
    )
)

__all__ = ["PhoenixSink", "PhoenixSinkSettings", "PhoenixSourceSettings", "make", "pull"]
