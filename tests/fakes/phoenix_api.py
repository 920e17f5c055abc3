"""A local server that speaks Arize Phoenix's REST API for spans and their annotations.

It runs an aiohttp app on 127.0.0.1 in a thread of its own
(:class:`~tests.fakes._server.ThreadedApp`), so the real ``phoenix.client.Client`` can run
against it from a test, a benchmark or a subprocess (``env()``).

Modelled on Phoenix's own routers (``src/phoenix/server/api/routers/v1``) and its OpenAPI schema:

* ``GET /arize_phoenix_version`` (plain text; the SDK asks it before a kind or name filter);
* ``GET /v1/projects`` and ``GET /v1/projects/{project_identifier}/spans``: a project by name or
  by id (a GlobalID); spans newest first in cursor pages (``limit`` 1–1000, ``next_cursor`` the
  GlobalID of the next page's first span); filters ``start_time``, ``end_time``, ``trace_id``,
  ``span_id``, ``parent_id`` (``null``: roots), ``name``, ``span_kind``, ``status_code``;
  attributes flattened to dotted keys, as Phoenix answers them;
* ``GET /v1/projects/{project_identifier}/span_annotations``: by ``span_ids`` and/or
  ``identifier``, names included or excluded, cursor pages (``limit`` 1–10000, default 10), 404
  when none of the spans exist;
* ``POST /v1/span_annotations`` and ``POST /v1/document_annotations`` (``?sync=true``):
  ``{"data": [...]}`` checked field by field (FastAPI's 422 with ``detail``), the name ``note``
  refused (400), a missing span 404 in sync mode, upserts by (name, span, identifier), and by
  (name, span, identifier, position) for documents, whose identifier must be empty (422) and
  whose position must exist (422). Without ``sync`` the write is queued (applied at once when the
  span exists, kept pending otherwise) and the answer's ``data`` is empty.

Auth: with ``api_key`` set, every ``/v1`` call needs ``Authorization: Bearer <key>`` (else 401).
Errors are ``{"detail": …}``. ``strict`` (default) also refuses fields Phoenix does not know
(the real server ignores them), so a typo in what the connector sends cannot pass unseen.

Faults: ``fail_next(status, count, retry_after=…)`` answers the next calls with an error
(``Retry-After`` on a 429), ``outage(seconds)`` drops every connection, ``stall_next(seconds)``
delays an answer; ``drop_fields`` makes the server silently not store some of an annotation's
fields; ``page_latency`` slows every listing page.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import itertools
import json
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from aiohttp import web

from ._server import Call, ThreadedApp

Json = dict[str, Any]

API_KEY = "phx-test-key-not-a-real-one"
SPAN_KINDS = frozenset(
    {
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
    }
)
STATUS_CODES = frozenset({"OK", "ERROR", "UNSET"})
ANNOTATOR_KINDS = frozenset({"LLM", "CODE", "HUMAN"})
_TRUE, _FALSE = {"true", "1", "yes", "on", "t", "y"}, {"false", "0", "no", "off", "f", "n"}
EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def global_id(kind: str, rowid: int) -> str:
    """A GlobalID as Phoenix (strawberry) writes it: base64 of ``Kind:rowid``."""
    return base64.b64encode(f"{kind}:{rowid}".encode()).decode()


def row_of(value: str, kind: str) -> int | None:
    """The row id a GlobalID of ``kind`` names, or None."""
    try:
        decoded = base64.b64decode(value.encode(), validate=True).decode()
    except (binascii.Error, UnicodeError, ValueError):
        return None
    name, _, number = decoded.partition(":")
    return int(number) if name == kind and number.isdigit() else None


def flattened(value: Any, prefix: str = "") -> Json:
    """Attributes as Phoenix answers them: nested objects and lists of objects unrolled into dotted
    keys."""
    out: Json = {}
    if isinstance(value, dict):
        for key, inner in value.items():
            out.update(flattened(inner, f"{prefix}{key}."))
    elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
        for index, inner in enumerate(value):
            out.update(flattened(inner, f"{prefix}{index}."))
    else:
        out[prefix[:-1]] = value
    return out


class HTTPError(Exception):
    """An error answer: ``{"detail": …}`` with a status."""

    def __init__(self, status: int, detail: Any, headers: dict[str, str] | None = None):
        super().__init__(str(detail))
        self.status, self.detail, self.headers = status, detail, headers or {}


def invalid(location: str, name: str, message: str, given: Any = None) -> HTTPError:
    """FastAPI's 422 for one bad parameter or field."""
    return HTTPError(
        422,
        [
            {
                "type": "value_error",
                "loc": [location, *name.split(".")],
                "msg": message,
                "input": given,
            }
        ],
    )


@dataclass
class Fault:
    """An error the next matching call gets instead of its answer."""

    status: int
    retry_after: int | None = None
    body: Any = None
    path: str | None = None
    """Only calls whose path starts with this (any call when None)."""
    raw: Any = None
    """The whole JSON answer (instead of ``{"detail": body}``), when given."""


@dataclass
class FakePhoenix:
    """The server. Use as a context manager; ``env()`` points the connector at it."""

    api_key: str | None = None
    """When set, every ``/v1`` call needs ``Authorization: Bearer <api_key>``."""
    page_latency: float = 0.0
    """Seconds every listing page (spans, annotations) waits (the benchmark sets it)."""
    version: str | None = "15.2.0"
    """What ``/arize_phoenix_version`` says; None: that route answers 404 (a server that hides it).
    """
    strict: bool = True
    """Refuse request fields Phoenix does not know (Phoenix itself ignores them)."""
    drop_fields: set[str] = field(default_factory=set)
    """Annotation result fields (``label``, ``score``, ``explanation``) or ``metadata`` the server
    silently drops."""
    calls: list[Call] = field(default_factory=list)
    """Every request: ``"GET /v1/…"``, its ``query``, ``body`` and ``headers``, arrival and status.
    """

    def __post_init__(self) -> None:
        self.projects: dict[int, Json] = {}
        self.spans: dict[int, Json] = {}
        """Row id → the span as Phoenix answers it, plus ``_project`` (its project's row)."""
        self.span_annotations: dict[int, Json] = {}
        self.document_annotations: dict[int, Json] = {}
        self.pending: list[Json] = []
        """Queued (not sync) annotations whose span is not there (yet)."""
        self._rows = itertools.count(1)
        self._lock = threading.Lock()
        self._faults: deque[Fault] = deque()
        self._stalls: deque[float] = deque()
        self._outage_until = 0.0
        self._server = ThreadedApp(self._app, "fake-phoenix")
        self.port = 0

    # ------------------------------------------------------------------ setting up

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """Environment for the connector (or a subprocess) that should talk to this server."""
        env = {"PHOENIX_COLLECTOR_ENDPOINT": self.base_url}
        if self.api_key:
            env["PHOENIX_API_KEY"] = self.api_key
        return env

    def add_project(self, name: str, description: str | None = None) -> str:
        """A project; returns its id (a GlobalID)."""
        with self._lock:
            row = next(self._rows)
            self.projects[row] = {
                "id": global_id("Project", row),
                "name": name,
                "description": description,
            }
            return self.projects[row]["id"]

    def add_span(
        self,
        project: str,
        *,
        span_id: str | None = None,
        trace_id: str | None = None,
        name: str = "span",
        kind: str = "LLM",
        parent_id: str | None = None,
        attributes: Json | None = None,
        start_time: datetime | None = None,
        latency_ms: float = 1200.0,
        status_code: str = "OK",
        status_message: str = "",
        events: list[Json] | None = None,
        raw: Json | None = None,
    ) -> str:
        """A span in ``project`` (by name); returns its span id. ``raw``: the span exactly as the
        server answers it."""
        with self._lock:
            row = next(self._rows)
            span_id = span_id if span_id is not None else uuid.uuid4().hex[:16]
            start = start_time or EPOCH + timedelta(minutes=row)
            span = (
                raw
                if raw is not None
                else {
                    "id": global_id("Span", row),
                    "name": name,
                    "context": {"trace_id": trace_id or uuid.uuid4().hex, "span_id": span_id},
                    "span_kind": kind,
                    "parent_id": parent_id,
                    "start_time": start.isoformat(),
                    "end_time": (start + timedelta(milliseconds=latency_ms)).isoformat(),
                    "status_code": status_code,
                    "status_message": status_message,
                    "attributes": flattened(attributes or {}),
                    "events": events or [],
                }
            )
            self.spans[row] = {**span, "_project": self._project_row(project), "_start": start}
            return span_id

    def annotate(
        self,
        span_id: str,
        name: str,
        *,
        kind: str = "LLM",
        label: str | None = None,
        score: float | None = None,
        explanation: str | None = None,
        identifier: str = "",
        metadata: Json | None = None,
    ) -> None:
        """An annotation already on a span (an LLM judge's, by default)."""
        with self._lock:
            row = self._span_row(span_id)
            assert row is not None, f"no span {span_id}"
            self._upsert(
                self.span_annotations,
                (name, row, identifier),
                {
                    "name": name,
                    "annotator_kind": kind,
                    "span_id": span_id,
                    "identifier": identifier,
                    "result": {"label": label, "score": score, "explanation": explanation},
                    "metadata": metadata or {},
                },
            )

    def annotations_on(self, span_id: str, *, documents: bool = False) -> list[Json]:
        """The span (or document) annotations held on ``span_id``, oldest first."""
        with self._lock:
            table = self.document_annotations if documents else self.span_annotations
            return [dict(a) for a in table.values() if a["span_id"] == span_id]

    def fail_next(
        self,
        status: int = 500,
        count: int = 1,
        *,
        retry_after: int | None = None,
        body: Any = None,
        path: str | None = None,
        raw: Any = None,
    ) -> None:
        """The next ``count`` calls (to paths starting ``path``) get this answer and are not carried
        out: ``{"detail": body}`` with ``status``, or the JSON ``raw`` when given."""
        with self._lock:
            self._faults.extend(Fault(status, retry_after, body, path, raw) for _ in range(count))

    def stall_next(self, seconds: float, count: int = 1) -> None:
        """The next ``count`` calls wait ``seconds`` before they are answered."""
        with self._lock:
            self._stalls.extend([seconds] * count)

    def outage(self, seconds: float) -> None:
        """For ``seconds`` every connection is dropped without an answer (as a crashed server)."""
        with self._lock:
            self._outage_until = time.monotonic() + seconds

    def clear_faults(self) -> None:
        """End an outage and drop the faults not yet taken."""
        with self._lock:
            self._outage_until = 0.0
            self._faults.clear()
            self._stalls.clear()

    def requests(self, prefix: str) -> list[Call]:
        """The calls whose ``"METHOD /path"`` starts with ``prefix``."""
        return [c for c in self.calls if c.method.startswith(prefix)]

    # ------------------------------------------------------------------ lookups (under the lock)

    def _project_row(self, identifier: str) -> int:
        row = row_of(identifier, "Project")
        if row is not None:
            if row not in self.projects:
                raise HTTPError(404, f"Project with ID {identifier} not found")
            return row
        found = next((r for r, p in self.projects.items() if p["name"] == identifier), None)
        if found is None:
            raise HTTPError(404, f"Project with name {identifier} not found")
        return found

    def _span_row(self, span_id: str) -> int | None:
        return next((r for r, s in self.spans.items() if _span_id(s) == span_id), None)

    def _upsert(self, table: dict[int, Json], key: tuple, values: Json) -> int:
        """Insert or update the annotation ``key`` names (Phoenix's ``insert_on_conflict``); returns
        its row."""
        now = datetime.now(timezone.utc).isoformat()
        for row, held in table.items():
            if held["_key"] == key:
                held.update(values, updated_at=now)
                return row
        row = next(self._rows)
        table[row] = {
            **values,
            "_key": key,
            "id": global_id(
                "SpanAnnotation" if table is self.span_annotations else "DocumentAnnotation", row
            ),
            "created_at": now,
            "updated_at": now,
            "source": "API",
            "user_id": None,
        }
        return row

    # ------------------------------------------------------------------ serving

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware])
        app.router.add_get("/arize_phoenix_version", self._version)
        app.router.add_get("/v1/projects", self._list_projects)
        app.router.add_get("/v1/projects/{project}/spans", self._list_spans)
        app.router.add_get("/v1/projects/{project}/span_annotations", self._list_annotations)
        app.router.add_post("/v1/span_annotations", self._annotate_spans)
        app.router.add_post("/v1/document_annotations", self._annotate_documents)
        return app

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Callable) -> web.StreamResponse:
        body = await request.text() if request.can_read_body else ""
        call = Call(
            f"{request.method} {request.path}",
            {"query": _query(request), "body": body, "headers": dict(request.headers)},
            time.monotonic(),
        )
        with self._lock:
            self.calls.append(call)
            dropped = time.monotonic() < self._outage_until
            fault = self._take_fault(request.path)
            stall = self._stalls.popleft() if self._stalls else 0.0
        if dropped:
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError
        if stall:
            await asyncio.sleep(stall)
        try:
            if fault is not None and fault.raw is not None:
                response = web.json_response(fault.raw, status=fault.status)
                call.status = response.status
                return response
            if fault is not None:
                headers = (
                    {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
                )
                raise HTTPError(
                    fault.status, fault.body if fault.body is not None else "fake fault", headers
                )
            if request.path.startswith("/v1/"):
                self._check_auth(request)
            response = await handler(request)
        except HTTPError as exc:
            response = web.json_response(
                {"detail": exc.detail}, status=exc.status, headers=exc.headers
            )
        call.status = response.status
        return response

    def _take_fault(self, path: str) -> Fault | None:
        for index, fault in enumerate(self._faults):
            if fault.path is None or path.startswith(fault.path):
                del self._faults[index]
                return fault
        return None

    def _check_auth(self, request: web.Request) -> None:
        if self.api_key and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            raise HTTPError(401, "Invalid token")

    async def _version(self, request: web.Request) -> web.Response:
        if self.version is None:
            raise HTTPError(404, "Not Found")
        return web.Response(text=self.version)

    async def _list_projects(self, request: web.Request) -> web.Response:
        with self._lock:
            data = [dict(p) for p in self.projects.values()]
        return web.json_response({"data": data, "next_cursor": None})

    async def _list_spans(self, request: web.Request) -> web.Response:
        query = request.query
        limit = _int(query, "limit", 100, 1, 1000)
        start, end = _time(query, "start_time"), _time(query, "end_time")
        kinds, codes = query.getall("span_kind", []), query.getall("status_code", [])
        for name, values, valid in (
            ("span_kind", kinds, SPAN_KINDS),
            ("status_code", codes, STATUS_CODES),
        ):
            bad = [v for v in values if v.upper() not in valid]
            if bad:
                raise HTTPError(422, f"Invalid {name} value(s): {', '.join(bad)}")
        cursor = query.get("cursor")
        cursor_row = row_of(cursor, "Span") if cursor else None
        if cursor and cursor_row is None:
            raise HTTPError(422, "Invalid cursor")
        await asyncio.sleep(self.page_latency)
        with self._lock:
            project = self._project_row(request.match_info["project"])
            rows = sorted(
                (r for r, s in self.spans.items() if s["_project"] == project), reverse=True
            )
            chosen = [
                r
                for r in rows
                if _span_matches(self.spans[r], query, start, end, kinds, codes)
                and (cursor_row is None or r <= cursor_row)
            ][: limit + 1]
            data = [
                {k: v for k, v in self.spans[r].items() if not k.startswith("_")}
                for r in chosen[:limit]
            ]
        more = len(chosen) > limit
        return web.json_response(
            {"data": data, "next_cursor": global_id("Span", chosen[-1]) if more else None},
            dumps=_dumps,
        )

    async def _list_annotations(self, request: web.Request) -> web.Response:
        query = request.query
        limit = _int(query, "limit", 10, 1, 10000)
        span_ids, identifiers = (
            set(query.getall("span_ids", [])),
            set(query.getall("identifier", [])),
        )
        if any(not i for i in identifiers):
            raise invalid("query", "identifier", "String should have at least 1 character", "")
        if not span_ids and not identifiers:
            raise HTTPError(422, "At least one of span_ids or identifier must be supplied")
        include, exclude = (
            query.getall("include_annotation_names", []),
            query.getall("exclude_annotation_names", []),
        )
        cursor = query.get("cursor")
        cursor_row = row_of(cursor, "SpanAnnotation") if cursor else None
        if cursor and cursor_row is None:
            raise HTTPError(422, "Invalid cursor value")
        await asyncio.sleep(self.page_latency)
        with self._lock:
            project = self._project_row(request.match_info["project"])
            in_project = {_span_id(s) for s in self.spans.values() if s["_project"] == project}
            rows = [
                (r, a)
                for r, a in sorted(self.span_annotations.items(), reverse=True)
                if a["span_id"] in in_project
                and (not span_ids or a["span_id"] in span_ids)
                and (not identifiers or a["identifier"] in identifiers)
                and (not include or a["name"] in include)
                and a["name"] not in exclude
                and (cursor_row is None or r <= cursor_row)
            ][: limit + 1]
            if not rows and span_ids and not identifiers and not span_ids & in_project:
                raise HTTPError(404, "None of the supplied span_ids exist in this project")
            data = [{k: v for k, v in a.items() if not k.startswith("_")} for _, a in rows[:limit]]
        more = len(rows) > limit
        return web.json_response(
            {
                "data": data,
                "next_cursor": global_id("SpanAnnotation", rows[-1][0]) if more else None,
            },
            dumps=_dumps,
        )

    async def _annotate_spans(self, request: web.Request) -> web.Response:
        entries, sync = await self._entries(request, documents=False)
        if any(e["name"] == "note" for e in entries):
            raise HTTPError(
                400,
                "The name 'note' is reserved for trace and span notes. "
                "Use POST /v1/span_notes instead.",
            )
        return self._write(entries, sync, documents=False)

    async def _annotate_documents(self, request: web.Request) -> web.Response:
        entries, sync = await self._entries(request, documents=True)
        for entry in entries:
            if entry["identifier"].strip():
                raise HTTPError(
                    422, f"Non-empty identifier '{entry['identifier']}' is not supported"
                )
        return self._write(entries, sync, documents=True)

    async def _entries(self, request: web.Request, documents: bool) -> tuple[list[Json], bool]:
        """The request's annotations, each checked as Phoenix's pydantic models check them (422
        otherwise)."""
        sync = _bool(request.query, "sync")
        try:
            body = json.loads(await request.text())
        except ValueError:
            raise HTTPError(
                422, [{"type": "json_invalid", "loc": ["body"], "msg": "JSON decode error"}]
            ) from None
        if not isinstance(body, dict) or not isinstance(body.get("data"), list):
            raise invalid("body", "data", "Input should be a valid list", body)
        if self.strict and set(body) - {"data"}:
            raise invalid("body", sorted(set(body) - {"data"})[0], "Extra inputs are not permitted")
        return [
            _entry(e, f"data.{i}", documents, self.strict) for i, e in enumerate(body["data"])
        ], sync

    def _write(self, entries: list[Json], sync: bool, documents: bool) -> web.Response:
        with self._lock:
            rows = {e["span_id"]: self._span_row(e["span_id"]) for e in entries}
            if not sync:
                for entry in entries:
                    if rows[entry["span_id"]] is None:
                        self.pending.append(entry)
                    else:
                        self._store(entry, rows[entry["span_id"]], documents)
                return web.json_response({"data": []})
            missing = sorted(s for s, r in rows.items() if r is None)
            if missing:
                raise HTTPError(404, f"Spans with IDs {', '.join(missing)} do not exist.")
            if documents:
                for entry in entries:
                    count = _documents(self.spans[rows[entry["span_id"]]])
                    if entry["document_position"] not in range(count):
                        raise HTTPError(
                            422,
                            f"Document position {entry['document_position']} is out of bounds for "
                            f"span {entry['span_id']} (max: {count - 1})",
                        )
            ids = [self._store(e, rows[e["span_id"]], documents) for e in entries]
        kind = "DocumentAnnotation" if documents else "SpanAnnotation"
        return web.json_response({"data": [{"id": global_id(kind, row)} for row in ids]})

    def _store(self, entry: Json, span_row: int | None, documents: bool) -> int:
        result = dict(entry.get("result") or {})
        values = {
            "name": entry["name"],
            "annotator_kind": entry["annotator_kind"],
            "span_id": entry["span_id"],
            "identifier": entry["identifier"],
            "metadata": entry.get("metadata") or {},
            "result": {k: result.get(k) for k in ("label", "score", "explanation")},
        }
        for dropped in self.drop_fields:
            if dropped == "metadata":
                values["metadata"] = {}
            else:
                values["result"][dropped] = None
        if documents:
            values["document_position"] = entry["document_position"]
            key: tuple = (entry["name"], span_row, entry["identifier"], entry["document_position"])
            return self._upsert(self.document_annotations, key, values)
        return self._upsert(
            self.span_annotations, (entry["name"], span_row, entry["identifier"]), values
        )

    def __enter__(self) -> "FakePhoenix":
        self.port = self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()


# ----------------------------------------------------------------------------------------- checks


def _entry(entry: Any, where: str, documents: bool, strict: bool) -> Json:
    """One annotation of a write, checked (422 naming the field otherwise); ``identifier`` defaults
    to ``""``."""
    if not isinstance(entry, dict):
        raise invalid("body", where, "Input should be a valid dictionary", entry)
    known = {"name", "annotator_kind", "span_id", "result", "metadata", "identifier"}
    known |= {"document_position"} if documents else set()
    for name in ("name", "span_id"):
        if not isinstance(entry.get(name), str):
            raise invalid(
                "body",
                f"{where}.{name}",
                "Field required" if name not in entry else "Input should be a valid string",
                entry.get(name),
            )
    if entry.get("annotator_kind") not in ANNOTATOR_KINDS:
        raise invalid(
            "body",
            f"{where}.annotator_kind",
            "Input should be 'LLM', 'CODE' or 'HUMAN'",
            entry.get("annotator_kind"),
        )
    if not isinstance(entry.get("identifier", ""), str):
        raise invalid(
            "body", f"{where}.identifier", "Input should be a valid string", entry.get("identifier")
        )
    if entry.get("metadata") is not None and not isinstance(entry["metadata"], dict):
        raise invalid(
            "body", f"{where}.metadata", "Input should be a valid dictionary", entry["metadata"]
        )
    if documents:
        position = entry.get("document_position")
        if isinstance(position, bool) or not isinstance(position, int):
            raise invalid(
                "body", f"{where}.document_position", "Input should be a valid integer", position
            )
    _result(entry.get("result"), f"{where}.result", strict)
    if strict and set(entry) - known:
        raise invalid(
            "body", f"{where}.{sorted(set(entry) - known)[0]}", "Extra inputs are not permitted"
        )
    return {**entry, "identifier": entry.get("identifier", "")}


def _result(result: Any, where: str, strict: bool) -> None:
    if result is None:
        return
    if not isinstance(result, dict):
        raise invalid("body", where, "Input should be a valid dictionary", result)
    for name in ("label", "explanation"):
        if result.get(name) is not None and not isinstance(result[name], str):
            raise invalid("body", f"{where}.{name}", "Input should be a valid string", result[name])
    score = result.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
        raise invalid("body", f"{where}.score", "Input should be a valid number", score)
    if strict and set(result) - {"label", "score", "explanation"}:
        raise invalid(
            "body",
            f"{where}.{sorted(set(result) - {'label', 'score', 'explanation'})[0]}",
            "Extra inputs are not permitted",
        )


def _query(request: web.Request) -> Json:
    """A request's query: each name to its value, or its values when repeated."""
    out: Json = {}
    for key in request.query:
        values = request.query.getall(key)
        out[key] = values if len(values) > 1 else values[0]
    return out


def _int(query: Any, name: str, default: int, low: int, high: int) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise invalid("query", name, "Input should be a valid integer", raw) from None
    if not low <= value <= high:
        raise invalid("query", name, f"Input should be between {low} and {high}", raw)
    return value


def _bool(query: Any, name: str) -> bool:
    raw = query.get(name)
    if raw is None:
        return False
    if raw.lower() in _TRUE | _FALSE:
        return raw.lower() in _TRUE
    raise invalid("query", name, "Input should be a valid boolean", raw)


def _time(query: Any, name: str) -> datetime | None:
    raw = query.get(name)
    if raw is None:
        return None
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise invalid("query", name, "Input should be a valid datetime", raw) from None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _span_matches(
    span: Json,
    query: Any,
    start: datetime | None,
    end: datetime | None,
    kinds: list[str],
    codes: list[str],
) -> bool:
    """Whether a span passes the listing's filters (as Phoenix's SQL filters it)."""
    context = span.get("context") if isinstance(span.get("context"), dict) else {}
    checks = [
        start is None or span["_start"] >= start,
        end is None or span["_start"] < end,
        not query.getall("trace_id", []) or context.get("trace_id") in query.getall("trace_id"),
        not query.getall("span_id", []) or context.get("span_id") in query.getall("span_id"),
        not query.getall("name", []) or span.get("name") in query.getall("name"),
        not kinds or str(span.get("span_kind")).upper() in {k.upper() for k in kinds},
        not codes or str(span.get("status_code")).upper() in {c.upper() for c in codes},
    ]
    parent = query.get("parent_id")
    if parent is not None:
        checks.append(
            span.get("parent_id") is None if parent == "null" else span.get("parent_id") == parent
        )
    return all(checks)


def _span_id(span: Json) -> Any:
    context = span.get("context")
    return context.get("span_id") if isinstance(context, dict) else None


def _documents(span: Json) -> int:
    """How many retrieval documents a span holds (Phoenix's ``num_documents``)."""
    positions = set()
    for key in span.get("attributes") or {}:
        parts = key.split(".")
        if key.startswith("retrieval.documents.") and len(parts) > 2 and parts[2].isdigit():
            positions.add(int(parts[2]))
    return max(positions) + 1 if positions else 0


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=True, default=str)


__all__ = ["API_KEY", "FakePhoenix", "flattened", "global_id", "row_of"]
