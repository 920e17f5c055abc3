"""A local server that speaks the part of LangSmith's REST API (``/api/v1``) hilbot's connector
uses.

It runs an aiohttp app on 127.0.0.1 in a thread of its own
(:class:`~tests.fakes._server.ThreadedApp`), so the real ``langsmith`` SDK can talk to it from a
test, a benchmark or a subprocess (``env()``).

Modelled on the public OpenAPI description of LangSmith (``api.smith.langchain.com/openapi.json``):

* Auth: the ``x-api-key`` header (any letter case); none or a wrong one → 401
  ``{"detail": "Invalid token"}``; a key in ``forbidden_keys`` → 403.
* ``GET /sessions?name=…`` (a list), ``GET /sessions/{id}``; ``POST /runs/query`` (``session``,
  ``trace``, ``id``, ``run_type``, ``is_root``, ``start_time``, ``reference_example``, ``filter``
  in a small subset of the filter language: ``eq``/``neq``/``has``/``and``/``or``, ``select``,
  ``order``, ``limit`` ≤ 100, ``cursor``) answering ``{"runs", "cursors": {"next", "prev"}}``.
* ``GET /annotation-queues/{id}``, ``GET /annotation-queues/{id}/runs?offset&limit`` (runs with
  ``queue_run_id``, ``added_at``, ``last_reviewed_time``), ``DELETE
  /annotation-queues/{id}/runs/{queue_run_id}`` (the run id too with ``delete_by_run_id``).
* ``GET /examples?id=…&dataset=…&offset&limit``.
* ``POST /feedback`` (``FeedbackCreateSchema`` plus the fields the SDK adds),
  ``GET /feedback/{id}``, ``PATCH /feedback/{id}`` (``FeedbackUpdateSchema``),
  ``GET /feedback?run=…&key=…&source=…&offset&limit``.
  A POST with an id that exists answers as ``duplicate_post`` says: ``conflict`` (409, the default),
  ``ignore`` (200, nothing changes: what a queued write may do) or ``upsert`` (200, overwritten).

Requests are validated as the API validates them: a missing or mistyped field, an unknown field or a
``limit`` over 100 is a 422 with FastAPI's ``{"detail": [{"loc", "msg", "type"}]}``.

Faults: :meth:`fail_next` (a status, optionally only for a method and path), :meth:`outage` (every
call answers a status until :meth:`clear_faults`), :meth:`hang` (answers late, for timeouts),
``latency_s`` (added to every answer, for benchmarks), ``drop_fields`` (feedback fields silently
dropped on write, for confirmation tests). Every request is kept in :attr:`calls`.

Not modelled: the multipart ingestion endpoints, feedback configs, datasets' own endpoints, the
v2/platform APIs, sessions' stats, any rate limit but the injected 429s.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import itertools
import json
import re
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from aiohttp import web

from ._server import Call, ThreadedApp, Waits

Json = dict[str, Any]

API_KEY = "lsv2_pt_hilbotfake0000000000000000000000_0000000000"
PREFIX = "/api/v1"
PAGE_MAX = 100
RUN_TYPES = ("tool", "chain", "llm", "retriever", "embedding", "prompt", "parser")
SOURCE_TYPES = ("api", "model", "app", "auto_eval")
RUN_SELECT = frozenset(
    {
        "id",
        "name",
        "run_type",
        "start_time",
        "end_time",
        "status",
        "error",
        "extra",
        "events",
        "inputs",
        "inputs_preview",
        "inputs_s3_urls",
        "inputs_or_signed_url",
        "outputs",
        "outputs_preview",
        "outputs_s3_urls",
        "outputs_or_signed_url",
        "s3_urls",
        "error_or_signed_url",
        "events_or_signed_url",
        "extra_or_signed_url",
        "serialized_or_signed_url",
        "parent_run_id",
        "manifest_id",
        "manifest_s3_id",
        "manifest",
        "session_id",
        "serialized",
        "reference_example_id",
        "reference_dataset_id",
        "total_tokens",
        "prompt_tokens",
        "prompt_token_details",
        "completion_tokens",
        "completion_token_details",
        "total_cost",
        "prompt_cost",
        "prompt_cost_details",
        "completion_cost",
        "completion_cost_details",
        "price_model_id",
        "first_token_time",
        "trace_id",
        "dotted_order",
        "last_queued_at",
        "feedback_stats",
        "child_run_ids",
        "parent_run_ids",
        "tags",
        "in_dataset",
        "app_path",
        "share_token",
        "trace_tier",
        "trace_first_received_at",
        "ttl_seconds",
        "trace_upgrade",
        "thread_id",
        "trace_min_max_start_time",
        "messages",
        "inserted_at",
    }
)
"""``RunSelect``: the fields a runs query may select."""
QUERY_FIELDS = frozenset(
    {
        "id",
        "trace",
        "parent_run",
        "run_type",
        "session",
        "reference_example",
        "execution_order",
        "start_time",
        "end_time",
        "error",
        "query",
        "filter",
        "trace_filter",
        "tree_filter",
        "is_root",
        "data_source_type",
        "skip_pagination",
        "search_filter",
        "use_experimental_search",
        "cursor",
        "limit",
        "select",
        "order",
        "skip_prev_cursor",
    }
)
"""``BodyParamsForRunsQuerySchema``."""
FEEDBACK_CREATE = frozenset(
    {
        "created_at",
        "modified_at",
        "key",
        "score",
        "value",
        "comment",
        "correction",
        "feedback_group_id",
        "comparative_experiment_id",
        "run_id",
        "session_id",
        "trace_id",
        "start_time",
        "id",
        "feedback_source",
        "feedback_config",
        "error",
        # sent by the langsmith SDK beyond the published schema
        "extra",
        "extend_trace_retention",
        "address",
    }
)
FEEDBACK_UPDATE = frozenset({"score", "value", "comment", "correction", "feedback_config"})


class ApiError(Exception):
    """An error answer: a status and FastAPI's ``detail``."""

    def __init__(self, status: int, detail: Any, retry_after: int | None = None):
        super().__init__(f"{status}: {detail}")
        self.status, self.detail, self.retry_after = status, detail, retry_after

    def response(self) -> web.Response:
        headers = {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}
        return web.json_response({"detail": self.detail}, status=self.status, headers=headers)


def invalid(loc: list[Any], msg: str, kind: str = "value_error") -> ApiError:
    """A 422 as FastAPI answers it."""
    return ApiError(422, [{"loc": loc, "msg": msg, "type": kind}])


@dataclass
class Fault:
    """An injected failure: the next matching calls get ``status`` (or answer after ``delay_s``)."""

    status: int | None
    method: str | None
    path: str | None
    retry_after: int | None = None
    delay_s: float = 0.0
    body: str | None = None

    def matches(self, method: str, path: str) -> bool:
        return (self.method is None or self.method == method) and (
            self.path is None or re.search(self.path, path) is not None
        )


@dataclass
class _Queue:
    id: str
    name: str
    entries: list[Json] = field(default_factory=list)
    """``{"queue_run_id", "run_id", "added_at", "last_reviewed_time"}`` in order."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _uuid(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


class FakeLangSmith(Waits):
    """LangSmith's REST API for one workspace; the test adds projects, runs, queues and examples."""

    def __init__(
        self,
        api_key: str = API_KEY,
        *,
        latency_s: float = 0.0,
        duplicate_post: str = "conflict",
        delete_by_run_id: bool = False,
    ):
        self.api_key = api_key
        self.latency_s = latency_s
        """Seconds added to every answer (a benchmark's per-page latency)."""
        self.duplicate_post = duplicate_post
        self.delete_by_run_id = delete_by_run_id
        """Also find a queue's run by its run id in ``DELETE …/runs/{id}`` (the classic SDK's)."""
        self.sloppy = False
        """Answer as a careless stand-in would: ignore ``offset`` and a runs query's ``is_root``,
        ``trace`` and ``run_type`` (the connector must still end and keep the right runs)."""
        self.forbidden_keys: set[str] = set()
        self.drop_fields: set[str] = set()
        """Feedback fields a write silently drops (``score``, ``comment``…)."""
        self.tenant_id = str(uuid.uuid4())
        self.sessions: dict[str, Json] = {}
        self.runs: dict[str, Json] = {}
        self.queues: dict[str, _Queue] = {}
        self.examples: dict[str, Json] = {}
        self.feedback: dict[str, Json] = {}
        self.calls: list[Call] = []
        self._faults: deque[Fault] = deque()
        self._outage: ApiError | None = None
        self._lock = threading.RLock()
        self._clock = itertools.count()
        self._server = ThreadedApp(self._build, "fake-langsmith")
        self.port = 0

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> "FakeLangSmith":
        self.port = self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    @property
    def base_url(self) -> str:
        """The host (what ``LANGSMITH_ENDPOINT`` may be; the API is under ``/api/v1``)."""
        return f"http://127.0.0.1:{self.port}"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a process that should talk to this server."""
        return {"LANGSMITH_API_KEY": self.api_key, "LANGSMITH_ENDPOINT": self.base_url, **extra}

    # -- the workspace -------------------------------------------------------------------------

    def add_project(
        self, name: str, *, dataset_id: str | None = None, session_id: str | None = None
    ) -> str:
        """A tracing project (an experiment when it has a reference dataset); its id."""
        with self._lock:
            sid = session_id or str(uuid.uuid4())
            self.sessions[sid] = {
                "id": sid,
                "name": name,
                "tenant_id": self.tenant_id,
                "start_time": _now(),
                "end_time": None,
                "description": None,
                "extra": {},
                "reference_dataset_id": dataset_id,
                "default_dataset_id": None,
            }
            return sid

    def add_run(
        self,
        project: str,
        inputs: Any = None,
        outputs: Any = None,
        *,
        run_type: str = "chain",
        name: str = "agent",
        parent: str | None = None,
        example: str | None = None,
        error: str | None = None,
        started: datetime | None = None,
        run_id: str | None = None,
        **fields: Any,
    ) -> str:
        """A run in a project (a child when ``parent`` is given); its id. Runs start 1 s apart."""
        with self._lock:
            rid = run_id or str(uuid.uuid4())
            start = started or datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(
                seconds=next(self._clock)
            )
            up = self.runs[parent] if parent else None
            stamp = start.strftime("%Y%m%dT%H%M%S%fZ") + rid
            self.runs[rid] = {
                "id": rid,
                "name": name,
                "run_type": run_type,
                "start_time": start.isoformat(),
                "end_time": (start + timedelta(milliseconds=250)).isoformat(),
                "status": "error" if error else "success",
                "error": error,
                "extra": {"metadata": {}},
                "inputs": inputs,
                "outputs": outputs,
                "parent_run_id": parent,
                "session_id": project,
                "reference_example_id": example,
                "reference_dataset_id": self.sessions[project].get("reference_dataset_id"),
                "trace_id": up["trace_id"] if up else rid,
                "dotted_order": f"{up['dotted_order']}.{stamp}" if up else stamp,
                "parent_run_ids": ([*up["parent_run_ids"], parent] if up else []),
                "tags": [],
                "total_tokens": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "total_cost": None,
                "app_path": f"/o/{self.tenant_id}/projects/p/{project}/r/{rid}",
                "in_dataset": False,
                **fields,
            }
            return rid

    def add_queue(self, name: str, run_ids: list[str], *, queue_id: str | None = None) -> str:
        """An annotation queue holding these runs (in this order); its id."""
        with self._lock:
            qid = queue_id or str(uuid.uuid4())
            queue = self.queues[qid] = _Queue(qid, name)
            for rid in run_ids:
                queue.entries.append(
                    {
                        "queue_run_id": str(uuid.uuid4()),
                        "run_id": rid,
                        "added_at": _now(),
                        "last_reviewed_time": None,
                    }
                )
            return qid

    def add_dataset(self) -> str:
        """A dataset's id (examples are added to it with :meth:`add_example`)."""
        return str(uuid.uuid4())

    def add_example(self, dataset_id: str, inputs: Any, outputs: Any) -> str:
        """An example of a dataset; its id."""
        with self._lock:
            eid = str(uuid.uuid4())
            self.examples[eid] = {
                "id": eid,
                "dataset_id": dataset_id,
                "name": f"#{len(self.examples) + 1}",
                "inputs": inputs,
                "outputs": outputs,
                "metadata": {},
                "created_at": _now(),
                "modified_at": _now(),
                "source_run_id": None,
                "attachment_urls": None,
            }
            return eid

    def add_feedback(
        self,
        run_id: str,
        key: str,
        *,
        score: Any = None,
        value: Any = None,
        comment: str | None = None,
        source: str = "model",
        metadata: Json | None = None,
    ) -> str:
        """Feedback on a run, from an evaluator (``model``) or a person in the app (``app``)."""
        with self._lock:
            fid = str(uuid.uuid4())
            self.feedback[fid] = self._stored(
                {
                    "id": fid,
                    "run_id": run_id,
                    "key": key,
                    "score": score,
                    "value": value,
                    "comment": comment,
                    "feedback_source": {"type": source, "metadata": metadata or {}},
                }
            )
            return fid

    def queue_run_ids(self, queue_id: str) -> list[str]:
        """The run ids still in a queue."""
        with self._lock:
            return [e["run_id"] for e in self.queues[queue_id].entries]

    def requests(self, method: str | None = None, path: str | None = None) -> list[Call]:
        """The calls received (with this method, and a path matching the regex ``path``)."""
        with self._lock:
            return [
                c
                for c in self.calls
                if (method is None or c.method == method)
                and (path is None or re.search(path, c.params["path"]))
            ]

    # -- faults --------------------------------------------------------------------------------

    def fail_next(
        self,
        status: int,
        count: int = 1,
        *,
        method: str | None = None,
        path: str | None = None,
        retry_after: int | None = None,
        body: str | None = None,
    ) -> None:
        """The next ``count`` calls (with ``method``, on a path matching ``path``) answer
        ``status``, undone.

        ``retry_after`` is sent as ``Retry-After`` (none when None); ``body`` replaces the error
        body (a 200 with a broken body, say)."""
        with self._lock:
            self._faults.extend(
                Fault(status, method, path, retry_after, body=body) for _ in range(count)
            )

    def hang(
        self, seconds: float, count: int = 1, *, method: str | None = None, path: str | None = None
    ) -> None:
        """The next ``count`` matching calls answer after ``seconds`` (a client times out first)."""
        with self._lock:
            self._faults.extend(Fault(None, method, path, delay_s=seconds) for _ in range(count))

    def outage(self, status: int = 503) -> None:
        """Every call answers ``status`` until :meth:`clear_faults`."""
        with self._lock:
            self._outage = ApiError(
                status,
                "Service Unavailable" if status == 503 else "Internal Server Error",
                retry_after=1 if status == 429 else None,
            )

    def clear_faults(self) -> None:
        with self._lock:
            self._outage = None
            self._faults.clear()

    # -- serving -------------------------------------------------------------------------------

    def _build(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._serve)
        return app

    _ROUTES: list[tuple[str, str, str]] = [
        ("GET", r"/info", "_info"),
        ("GET", r"/sessions", "_sessions"),
        ("GET", r"/sessions/(?P<sid>[^/]+)", "_session"),
        ("POST", r"/runs/query", "_query"),
        ("GET", r"/annotation-queues/(?P<qid>[^/]+)", "_queue"),
        ("GET", r"/annotation-queues/(?P<qid>[^/]+)/runs", "_queue_runs"),
        ("DELETE", r"/annotation-queues/(?P<qid>[^/]+)/runs/(?P<entry>[^/]+)", "_queue_delete"),
        ("GET", r"/examples", "_examples"),
        ("GET", r"/feedback", "_feedback_list"),
        ("POST", r"/feedback", "_feedback_create"),
        ("GET", r"/feedback/(?P<fid>[^/]+)", "_feedback_read"),
        ("PATCH", r"/feedback/(?P<fid>[^/]+)", "_feedback_update"),
    ]

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        path = request.path
        query = {k: request.query.getall(k) for k in request.query}
        call = Call(
            request.method,
            {"path": path, "query": query, "body": raw.decode("utf-8", "replace")},
            time.monotonic(),
        )
        with self._lock:
            self.calls.append(call)
            fault = next((f for f in self._faults if f.matches(request.method, path)), None)
            if fault is not None:
                self._faults.remove(fault)
            outage = self._outage
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if fault is not None and fault.delay_s:
            await asyncio.sleep(fault.delay_s)
        response = self._answer(request, path, raw, outage, fault)
        call.status = response.status
        return response

    def _answer(
        self,
        request: web.Request,
        path: str,
        raw: bytes,
        outage: ApiError | None,
        fault: Fault | None,
    ) -> web.Response:
        try:
            self._auth(request)
            if outage is not None:
                raise outage
            if fault is not None and fault.status is not None:
                if fault.body is not None:
                    return web.Response(
                        text=fault.body, status=fault.status, content_type="application/json"
                    )
                raise ApiError(
                    fault.status,
                    "Too Many Requests" if fault.status == 429 else "injected",
                    fault.retry_after,
                )
            handler, params = self._route(request.method, path)
            body = self._body(raw) if request.method in ("POST", "PATCH") else None
            with self._lock:
                result = handler(request, body, **params)
            return web.json_response(result, dumps=lambda o: json.dumps(o, ensure_ascii=False))
        except ApiError as exc:
            return exc.response()

    def _auth(self, request: web.Request) -> None:
        key = request.headers.get("x-api-key")
        if key != self.api_key and key not in self.forbidden_keys:
            raise ApiError(401, "Invalid token")
        if key in self.forbidden_keys:
            raise ApiError(403, "Forbidden")

    def _route(self, method: str, path: str) -> tuple[Callable[..., Any], dict[str, str]]:
        if not path.startswith(PREFIX + "/"):
            raise ApiError(404, "Not Found")
        rest = path[len(PREFIX) :]
        allowed = False
        for verb, pattern, name in self._ROUTES:
            match = re.fullmatch(pattern, rest)
            if match:
                if verb == method:
                    return getattr(self, name), match.groupdict()
                allowed = True
        raise ApiError(405 if allowed else 404, "Method Not Allowed" if allowed else "Not Found")

    @staticmethod
    def _body(raw: bytes) -> Any:
        try:
            return json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, ValueError):
            raise invalid(["body"], "JSON decode error", "json_invalid") from None

    # -- validation helpers --------------------------------------------------------------------

    @staticmethod
    def _object(body: Any, allowed: frozenset[str]) -> Json:
        if not isinstance(body, dict):
            raise invalid(["body"], "Input should be a valid dictionary", "dict_type")
        unknown = sorted(set(body) - allowed)
        if unknown:
            raise invalid(["body", unknown[0]], "Extra inputs are not permitted", "extra_forbidden")
        return body

    @staticmethod
    def _id_param(value: str, name: str, where: str = "path") -> str:
        found = _uuid(value)
        if found is None:
            raise invalid([where, name], "Input should be a valid UUID", "uuid_parsing")
        return found

    @staticmethod
    def _page(request: web.Request) -> tuple[int, int]:
        try:
            offset = int(request.query.get("offset", "0"))
            limit = int(request.query.get("limit", str(PAGE_MAX)))
        except ValueError:
            raise invalid(
                ["query", "limit"], "Input should be a valid integer", "int_parsing"
            ) from None
        if offset < 0:
            raise invalid(
                ["query", "offset"],
                "Input should be greater than or equal to 0",
                "greater_than_equal",
            )
        if not 1 <= limit <= PAGE_MAX:
            raise invalid(
                ["query", "limit"], "Input should be less than or equal to 100", "less_than_equal"
            )
        return offset, limit

    def _ids(self, request: web.Request, name: str) -> list[str]:
        return [self._id_param(v, name, "query") for v in request.query.getall(name, [])]

    # -- sessions, runs ------------------------------------------------------------------------

    def _info(self, request: web.Request, body: Any) -> Json:
        return {"version": "0.10.0", "batch_ingest_config": None, "instance_flags": {}}

    def _sessions(self, request: web.Request, body: Any) -> list[Json]:
        offset, limit = self._page(request)
        name = request.query.get("name")
        found = [s for s in self.sessions.values() if name is None or s["name"] == name]
        return copy.deepcopy(found[offset : offset + limit])

    def _session(self, request: web.Request, body: Any, sid: str) -> Json:
        sid = self._id_param(sid, "session_id")
        if sid not in self.sessions:
            raise ApiError(404, "Session not found")
        return copy.deepcopy(self.sessions[sid])

    def _query(self, request: web.Request, body: Any) -> Json:
        body = self._object(body, QUERY_FIELDS)
        limit = body.get("limit", PAGE_MAX)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= PAGE_MAX:
            raise invalid(
                ["body", "limit"], "Input should be less than or equal to 100", "less_than_equal"
            )
        select = body.get("select")
        if select is not None and (
            not isinstance(select, list) or any(s not in RUN_SELECT for s in select)
        ):
            raise invalid(["body", "select"], "Input should be a valid RunSelect", "enum")
        if body.get("run_type") is not None and body["run_type"] not in RUN_TYPES:
            raise invalid(["body", "run_type"], "Input should be a valid run type", "enum")
        runs = [r for r in self.runs.values() if self._selected(r, body)]
        runs.sort(
            key=lambda r: r.get("start_time") or "", reverse=body.get("order", "desc") == "desc"
        )
        offset = self._cursor(body.get("cursor"))
        page = runs[offset : offset + limit]
        more = offset + limit < len(runs)
        fields = (set(select) | {"id"}) if select is not None else None
        return {
            "runs": [
                {k: copy.deepcopy(v) for k, v in r.items() if fields is None or k in fields}
                for r in page
            ],
            "cursors": {
                "next": self._token(offset + limit) if more else None,
                "prev": self._token(max(0, offset - limit)) if offset else None,
            },
        }

    def _selected(self, run: Json, body: Json) -> bool:
        checks = [
            ("session", lambda v: run["session_id"] in v),
            ("trace", lambda v: run["trace_id"] == v),
            ("id", lambda v: run["id"] in v),
            ("run_type", lambda v: run["run_type"] == v),
            ("parent_run", lambda v: run["parent_run_id"] == v),
            ("reference_example", lambda v: run["reference_example_id"] in v),
            ("is_root", lambda v: (run["parent_run_id"] is None) == v),
            (
                "start_time",
                lambda v: (
                    _moment(run["start_time"]) is not None
                    and _moment(run["start_time"]) >= (_moment(v) or "")
                ),
            ),
            ("error", lambda v: (run["error"] is not None) == v),
            ("filter", lambda v: Filter(v).matches(run)),
        ]
        ignored = {"is_root", "trace", "run_type"} if self.sloppy else set()
        return all(
            check(body[name])
            for name, check in checks
            if body.get(name) is not None and name not in ignored
        )

    @staticmethod
    def _token(offset: int) -> str:
        return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()

    @staticmethod
    def _cursor(cursor: Any) -> int:
        if cursor is None:
            return 0
        try:
            return int(base64.urlsafe_b64decode(str(cursor).encode()).decode().split(":", 1)[1])
        except (ValueError, IndexError):
            raise invalid(["body", "cursor"], "Invalid cursor") from None

    # -- annotation queues ---------------------------------------------------------------------

    def _known_queue(self, qid: str) -> _Queue:
        qid = self._id_param(qid, "queue_id")
        if qid not in self.queues:
            raise ApiError(404, "Annotation queue not found")
        return self.queues[qid]

    def _queue(self, request: web.Request, body: Any, qid: str) -> Json:
        queue = self._known_queue(qid)
        return {
            "id": queue.id,
            "name": queue.name,
            "tenant_id": self.tenant_id,
            "queue_type": "single",
            "description": None,
            "created_at": _now(),
            "updated_at": _now(),
            "num_reviewers_per_item": 1,
            "rubric_items": [],
            "rubric_instructions": None,
        }

    def _queue_runs(self, request: web.Request, body: Any, qid: str) -> list[Json]:
        queue = self._known_queue(qid)
        offset, limit = self._page(request)
        offset = 0 if self.sloppy else offset
        page = queue.entries[offset : offset + limit]
        return [
            {
                **copy.deepcopy(self.runs[e["run_id"]]),
                "queue_run_id": e["queue_run_id"],
                "added_at": e["added_at"],
                "last_reviewed_time": e["last_reviewed_time"],
                "effective_added_at": e["added_at"],
            }
            for e in page
        ]

    def _queue_delete(self, request: web.Request, body: Any, qid: str, entry: str) -> Json:
        queue = self._known_queue(qid)
        entry = self._id_param(entry, "queue_run_id")
        for index, held in enumerate(queue.entries):
            if held["queue_run_id"] == entry or (self.delete_by_run_id and held["run_id"] == entry):
                del queue.entries[index]
                return {}
        raise ApiError(404, "Run not found in annotation queue")

    # -- examples ------------------------------------------------------------------------------

    def _examples(self, request: web.Request, body: Any) -> list[Json]:
        offset, limit = self._page(request)
        ids = set(self._ids(request, "id"))
        dataset = request.query.get("dataset")
        found = [
            e
            for e in self.examples.values()
            if (not ids or e["id"] in ids) and (dataset is None or e["dataset_id"] == dataset)
        ]
        return copy.deepcopy(found[offset : offset + limit])

    # -- feedback ------------------------------------------------------------------------------

    def _feedback_list(self, request: web.Request, body: Any) -> list[Json]:
        offset, limit = self._page(request)
        runs = set(self._ids(request, "run"))
        keys = set(request.query.getall("key", []))
        sources = request.query.getall("source", [])
        if any(s not in SOURCE_TYPES for s in sources):
            raise invalid(
                ["query", "source"], "Input should be 'api', 'model', 'app' or 'auto_eval'", "enum"
            )
        found = [
            f
            for f in self.feedback.values()
            if (not runs or f["run_id"] in runs)
            and (not keys or f["key"] in keys)
            and (not sources or (f["feedback_source"] or {}).get("type") in sources)
        ]
        return copy.deepcopy(found[offset : offset + limit])

    def _feedback_read(self, request: web.Request, body: Any, fid: str) -> Json:
        fid = self._id_param(fid, "feedback_id")
        if fid not in self.feedback:
            raise ApiError(404, "Feedback not found")
        return copy.deepcopy(self.feedback[fid])

    def _feedback_create(self, request: web.Request, body: Any) -> Json:
        body = self._object(body, FEEDBACK_CREATE)
        self._check_feedback(body, create=True)
        fid = body.get("id") or str(uuid.uuid4())
        run = self.runs.get(body["run_id"]) if body.get("run_id") else None
        if body.get("run_id") and (
            run is None or (body.get("session_id") not in (None, run["session_id"]))
        ):
            raise ApiError(404, "Run not found")
        if fid in self.feedback and self.duplicate_post == "conflict":
            raise ApiError(409, "Feedback already exists")
        if fid in self.feedback and self.duplicate_post == "ignore":
            return copy.deepcopy(self.feedback[fid])
        record = {
            k: v
            for k, v in body.items()
            if k in FEEDBACK_CREATE - {"extend_trace_retention", "address"}
        }
        record = self._stored(
            {
                **record,
                "id": fid,
                "trace_id": run["trace_id"] if run else None,
                "session_id": run["session_id"] if run else body.get("session_id"),
            }
        )
        self.feedback[fid] = record
        return copy.deepcopy(record)

    def _feedback_update(self, request: web.Request, body: Any, fid: str) -> Json:
        fid = self._id_param(fid, "feedback_id")
        body = self._object(body, FEEDBACK_UPDATE)
        self._check_feedback(body, create=False)
        if fid not in self.feedback:
            raise ApiError(404, "Feedback not found")
        record = self.feedback[fid]
        record.update({k: v for k, v in body.items() if k not in self.drop_fields})
        record["modified_at"] = _now()
        return copy.deepcopy(record)

    def _stored(self, record: Json) -> Json:
        """A feedback as the API answers it (every documented field present)."""
        now = _now()
        base = {
            "created_at": now,
            "modified_at": now,
            "score": None,
            "value": None,
            "comment": None,
            "correction": None,
            "feedback_group_id": None,
            "comparative_experiment_id": None,
            "run_id": None,
            "session_id": None,
            "trace_id": None,
            "start_time": None,
            "is_root": False,
            "feedback_source": None,
            "extra": None,
            "feedback_thread_id": None,
        }
        stored = {**base, **record}
        for name in self.drop_fields:
            stored[name] = None
        run = self.runs.get(stored["run_id"] or "")
        if run is not None:
            stored["trace_id"], stored["is_root"] = run["trace_id"], run["parent_run_id"] is None
        return stored

    @staticmethod
    def _check_feedback(body: Json, create: bool) -> None:
        if create:
            key = body.get("key")
            if not isinstance(key, str):
                raise invalid(["body", "key"], "Field required", "missing")
            if len(key) > 180:
                raise invalid(
                    ["body", "key"], "String should have at most 180 characters", "string_too_long"
                )
            for name in ("id", "run_id", "session_id", "trace_id"):
                if body.get(name) is not None and _uuid(body[name]) is None:
                    raise invalid(["body", name], "Input should be a valid UUID", "uuid_parsing")
            source = body.get("feedback_source")
            if source is not None and (
                not isinstance(source, dict)
                or source.get("type") not in SOURCE_TYPES
                or not isinstance(source.get("metadata") or {}, dict)
            ):
                raise invalid(
                    ["body", "feedback_source"],
                    "Input tag does not match any of 'app', 'api', 'model', 'auto_eval'",
                    "union_tag_invalid",
                )
            for name in ("created_at", "modified_at", "start_time"):
                if body.get(name) is not None and _moment(body[name]) is None:
                    raise invalid(
                        ["body", name], "Input should be a valid datetime", "datetime_parsing"
                    )
        score = body.get("score")
        if score is not None and not isinstance(score, (int, float, bool)):
            raise invalid(["body", "score"], "Input should be a valid number", "float_type")
        value = body.get("value")
        if value is not None and not isinstance(value, (int, float, bool, str, dict)):
            raise invalid(
                ["body", "value"], "Input should be a valid number, string or dictionary", "union"
            )
        if body.get("comment") is not None and not isinstance(body["comment"], str):
            raise invalid(["body", "comment"], "Input should be a valid string", "string_type")
        correction = body.get("correction")
        if correction is not None and not isinstance(correction, (dict, str)):
            raise invalid(
                ["body", "correction"], "Input should be a valid dictionary or string", "union"
            )


def _moment(value: Any) -> Any:
    """An ISO time as a comparable string (UTC), or None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat()


class Filter:
    """A small part of LangSmith's filter language: ``eq``, ``neq``, ``has``, ``and``, ``or``."""

    _TOKEN = re.compile(
        r'\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_.]*)|"(?P<text>(?:[^"\\]|\\.)*)"|(?P<punct>[(),]))'
    )

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise invalid(["body", "filter"], "Input should be a valid string", "string_type")
        self.tokens = self._tokens(text)
        self.position = 0
        self.tree = self._expression()
        if self.position != len(self.tokens):
            raise ApiError(400, f"Invalid filter: {text}")

    def _tokens(self, text: str) -> list[tuple[str, str]]:
        tokens, at = [], 0
        while at < len(text.rstrip()):
            match = self._TOKEN.match(text, at)
            if match is None or match.end() == at:
                raise ApiError(400, f"Invalid filter: {text}")
            kind = match.lastgroup or "punct"
            value = match.group(kind)
            tokens.append((kind, json.loads(f'"{value}"') if kind == "text" else value))
            at = match.end()
        return tokens

    def _next(self) -> tuple[str, str]:
        if self.position >= len(self.tokens):
            raise ApiError(400, "Invalid filter")
        token = self.tokens[self.position]
        self.position += 1
        return token

    def _expect(self, punct: str) -> None:
        if self._next() != ("punct", punct):
            raise ApiError(400, "Invalid filter")

    def _expression(self) -> Any:
        kind, name = self._next()
        if kind != "name" or name not in ("eq", "neq", "has", "and", "or"):
            raise ApiError(400, f"Invalid filter operator {name!r}")
        self._expect("(")
        args = [self._argument()]
        while self.tokens[self.position : self.position + 1] == [("punct", ",")]:
            self.position += 1
            args.append(self._argument())
        self._expect(")")
        return (name, args)

    def _argument(self) -> Any:
        kind, value = self.tokens[self.position] if self.position < len(self.tokens) else ("", "")
        if kind == "name" and self.tokens[self.position + 1 : self.position + 2] == [
            ("punct", "(")
        ]:
            return self._expression()
        self.position += 1
        return value

    def matches(self, run: Json) -> bool:
        return self._eval(self.tree, run)

    def _eval(self, node: Any, run: Json) -> bool:
        operator, args = node
        if operator in ("and", "or"):
            results = [self._eval(a, run) for a in args]
            return all(results) if operator == "and" else any(results)
        field_name, wanted = args[0], args[1]
        held = run.get(field_name)
        if operator == "has":
            return isinstance(held, list) and wanted in held
        equal = str(held) == wanted
        return equal if operator == "eq" else not equal
