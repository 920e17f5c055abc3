"""A local server that speaks the parts of Langfuse's public REST API (v4, as SDK 5 calls it) that
hilbot's connector uses, for one project.

It runs an aiohttp app on 127.0.0.1 in a thread of its own
(:class:`~tests.fakes._server.ThreadedApp`), so the real SDK (``langfuse.api.LangfuseAPI``) can
talk to it from a test, a subprocess (``env()``) or the benchmark. Every path is under
``/api/public``; auth is HTTP Basic with the public key as user and the secret key as password
(401 otherwise). Errors are ``{"message": …}``.

* ``GET /annotation-queues/{queueId}``, ``GET /annotation-queues/{queueId}/items`` (``status``,
  ``page``, ``limit`` ≤ 100; ``meta.page/limit/totalItems/totalPages``; newest first),
  ``PATCH /annotation-queues/{queueId}/items/{itemId}`` (``{"status"}`` only).
* ``GET /v2/observations``: field groups (``core``, ``basic``, ``time``, ``io``, ``metadata``,
  ``trace_context``; default ``core,basic``), query filters or a JSON ``filter`` (which then takes
  precedence), ``startTime`` descending, ``limit`` ≤ 1000, an opaque ``meta.cursor``; input and
  output are raw strings (a value seeded as JSON comes back as JSON text); ``parseIoAsJson=true``
  is a 400.
* ``POST /scores``: a list of scores (or one, the older form answered ``{"id"}``), each checked as
  ``CreateScoreRequest``; 202 ``{"message": "Accepted"}`` when all pass, 207 ``{"accepted",
  "rejected", "errors"}`` otherwise; bodies over 1 MB are a 413. A score is kept per (id, day of
  its timestamp, name), as Langfuse's ClickHouse table replaces rows — so the same id on another
  day is a second score. A score that breaks its config (unknown category, out of range,
  archived or unknown config, wrong type) is accepted and then silently dropped (``dropped``).
* ``GET /v3/scores``: comma-separated filters, field groups ``details``, ``subject``,
  ``annotation``, typed ``value``, cursor paging, ``limit`` ≤ 100; written scores become readable
  after ``read_lag`` seconds.
* ``GET /score-configs`` (page/limit), ``GET /v2/datasets/{name}``, ``GET /experiments`` and
  ``GET /experiment-items`` (``fromStartTime`` required, cursor paging, ``fields``).

Unknown query parameters are a 400 where Langfuse's schemas are strict (queues, v3 scores); the
observations, experiments and score-config listings ignore them, as Langfuse's do. Faults:
``fail_next`` (the next calls to a path get a status, 429 with ``Retry-After``), ``respond_next``
(a scripted status and body), ``outage`` (every call fails for some seconds), ``rate_limit`` (a
per-minute window, 429 with ``Retry-After``); ``page_latency`` delays every GET (for the
benchmark), ``read_lag`` / ``hide_scores`` keep written scores unreadable for a while.

Not modelled: sessions, comments, prompts, ingestion, score deletion, environments beyond a
name, the v1/v2 read endpoints (Langfuse v4 answers them with 404), ``expandMetadata``.
"""

from __future__ import annotations

import asyncio
import base64
import copy
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

from ._server import Call, ThreadedApp, Window, take_fault

Json = dict[str, Any]

PUBLIC_KEY = "pk-lf-00000000-hilbot-fake-public"
SECRET_KEY = "sk-lf-00000000-hilbot-fake-secret"
PROJECT_ID = "cl-hilbot-fake-project"
BODY_LIMIT = 1_000_000
"""``POST /scores`` takes bodies up to 1 MB (Next.js' default)."""
SCORE_FIELDS = {
    "id",
    "traceId",
    "sessionId",
    "observationId",
    "datasetRunId",
    "name",
    "value",
    "comment",
    "metadata",
    "environment",
    "queueId",
    "dataType",
    "configId",
    "source",
    "timestamp",
}
"""What a CreateScoreRequest may hold."""
DATA_TYPES = ("NUMERIC", "BOOLEAN", "CATEGORICAL", "TEXT", "CORRECTION")
OBSERVATION_GROUPS = {
    "core",
    "basic",
    "time",
    "io",
    "metadata",
    "model",
    "usage",
    "prompt",
    "metrics",
    "trace_context",
}
SCORE_PARAMS = {
    "limit",
    "cursor",
    "fields",
    "id",
    "name",
    "source",
    "dataType",
    "environment",
    "configId",
    "queueId",
    "authorUserId",
    "value",
    "valueMin",
    "valueMax",
    "traceId",
    "sessionId",
    "observationId",
    "experimentId",
    "fromTimestamp",
    "toTimestamp",
    "userId",
    "traceTags",
}


class ApiError(Exception):
    """An error answer: a status and ``{"message": …}`` (or a scripted body)."""

    def __init__(
        self, status: int, message: str, retry_after: float | None = None, body: Any = None
    ):
        super().__init__(message)
        self.status, self.message, self.retry_after, self.body = status, message, retry_after, body

    def response(self) -> web.Response:
        headers = {"Retry-After": f"{self.retry_after:g}"} if self.retry_after is not None else {}
        if isinstance(self.body, bytes):
            return web.Response(
                body=self.body, status=self.status, headers=headers, content_type="text/html"
            )
        body = self.body if self.body is not None else {"message": self.message}
        return web.json_response(body, status=self.status, headers=headers)


def bad(message: str) -> ApiError:
    """A 400."""
    return ApiError(400, message)


def stamp(value: datetime) -> str:
    """A time as Langfuse writes it: ISO 8601, milliseconds, ``Z``."""
    return value.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: Any, name: str) -> datetime:
    """An ISO 8601 time from a request (a 400 otherwise); without a zone it is UTC."""
    if not isinstance(text, str):
        raise bad(f"{name}: expected an ISO 8601 datetime")
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise bad(f"{name}: invalid datetime {text!r}") from None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def raw(value: Any) -> str | None:
    """An input or output as v4 stores it: a string as is, anything else as JSON text."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def cursor_of(offset: int) -> str:
    """An opaque cursor (base64url) for the next page."""
    return base64.urlsafe_b64encode(json.dumps({"o": offset}).encode()).decode().rstrip("=")


def offset_of(cursor: str | None) -> int:
    """Where a cursor points (a 400 for one this server did not make)."""
    if not cursor:
        return 0
    try:
        return int(json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))["o"])
    except (ValueError, KeyError, TypeError):
        raise bad("Invalid cursor") from None


def limit_of(query: Any, largest: int, default: int = 50) -> int:
    """The ``limit`` parameter (1 … ``largest``; a 400 otherwise)."""
    text = query.get("limit", "")
    if text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise bad("limit: expected an integer") from None
    if not 1 <= value <= largest:
        raise bad(f"limit: must be between 1 and {largest}")
    return value


def page_of(query: Any) -> int:
    text = query.get("page", "")
    try:
        value = int(text) if text != "" else 1
    except ValueError:
        raise bad("page: expected an integer") from None
    if value < 1:
        raise bad("page: must be greater than 0")
    return value


def listed(query: Any, name: str) -> list[str]:
    """A comma-separated (or repeated) query parameter as a list."""
    values = query.getall(name, [])
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def groups(query: Any, allowed: set[str], default: set[str]) -> set[str]:
    """The ``fields`` groups asked for (a 400 for an unknown one)."""
    asked = set(listed(query, "fields"))
    unknown = asked - allowed
    if unknown:
        raise bad(f"fields: unknown field group(s) {', '.join(sorted(unknown))}")
    return asked or set(default)


@dataclass
class Fault:
    """One injected failure."""

    status: int
    retry_after: float | None = None
    message: str | None = None
    match: Callable[[Json], bool] | None = None
    body: Any = None
    """A body to answer with instead of ``{"message"}`` (JSON unless it is ``bytes``)."""


@dataclass
class FakeLangfuse:
    """The server and the project's data: traces, queues, scores, configs, datasets and runs."""

    public_key: str = PUBLIC_KEY
    secret_key: str = SECRET_KEY
    page_latency: float = 0.0
    """Seconds every GET waits before answering (what a real page costs, for the benchmark)."""
    read_lag: float = 0.0
    """Seconds before a written score can be read back (Langfuse Cloud's reads lag its writes)."""
    single_scores: bool = False
    """A Langfuse that takes ``POST /scores`` only in the single-score form of its API reference
    (``CreateScoreRequest`` → ``{"id"}``): a list is a 400."""
    calls: list[Call] = field(default_factory=list)
    """Every request received (``method`` is ``"GET /api/public/…"``; ``params`` holds the query
    and the ``body``)."""
    dropped: list[Json] = field(default_factory=list)
    """Scores accepted and then dropped because they break their config, each with ``reason``."""

    def __post_init__(self) -> None:
        self._lock = threading.RLock()
        self._server = ThreadedApp(self._app, "fake-langfuse", shutdown_timeout=1.0)
        self.port = 0
        self._traces: dict[str, Json] = {}
        self._observations: dict[str, Json] = {}
        self._queues: dict[str, Json] = {}
        self._items: dict[str, Json] = {}
        self._scores: dict[tuple[str, str, str], Json] = {}
        self._configs: dict[str, Json] = {}
        self._datasets: dict[str, Json] = {}
        self._experiments: dict[str, Json] = {}
        self._faults: deque[Fault] = deque()
        self._outage_until = 0.0
        self._outage_status = 503
        self._window: Window | None = None
        # indexes (the answers are those of a scan of every row; these only choose the candidates)
        self._observations_of: dict[str, dict[str, None]] = {}
        """Observation ids by trace id."""
        self._scores_by_id: dict[str, dict[tuple[str, str, str], None]] = {}
        self._scores_by_trace: dict[str | None, dict[tuple[str, str, str], None]] = {}
        self._score_order: dict[tuple[str, str, str], int] = {}
        """When each score key was first held (the order a scan of ``_scores`` meets them)."""
        self._version = 0
        """Bumped by every change to traces or observations (the listing cache's key)."""
        self._listing_cache: dict[Any, list[Json]] = {}
        self._clock = itertools.count(1)
        self._base_time = datetime.now(timezone.utc) - timedelta(days=1)

    # -- the server --------------------------------------------------------------------------------

    def __enter__(self) -> "FakeLangfuse":
        self.port = self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def base_url(self) -> str:
        """The host (``LANGFUSE_BASE_URL``)."""
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The environment of a client that should talk to this server."""
        return {
            "LANGFUSE_PUBLIC_KEY": self.public_key,
            "LANGFUSE_SECRET_KEY": self.secret_key,
            "LANGFUSE_BASE_URL": self.base_url,
        }

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware], client_max_size=BODY_LIMIT * 4)
        base = "/api/public"
        app.router.add_get(base + "/annotation-queues/{queue}", self._route(self._get_queue))
        app.router.add_get(base + "/annotation-queues/{queue}/items", self._route(self._list_items))
        app.router.add_patch(
            base + "/annotation-queues/{queue}/items/{item}", self._route(self._update_item)
        )
        app.router.add_get(base + "/v2/observations", self._route(self._observations_v2))
        app.router.add_post(base + "/scores", self._route(self._create_scores))
        app.router.add_get(base + "/v3/scores", self._route(self._scores_v3))
        app.router.add_get(base + "/score-configs", self._route(self._list_configs))
        app.router.add_get(base + "/v2/datasets/{name}", self._route(self._get_dataset))
        app.router.add_get(base + "/experiments", self._route(self._list_experiments))
        app.router.add_get(base + "/experiment-items", self._route(self._list_experiment_items))
        return app

    @web.middleware
    async def _middleware(
        self, request: web.Request, handler: Callable[[web.Request], Any]
    ) -> web.StreamResponse:
        body_text = await request.text() if request.can_read_body else ""
        params: Json = {
            key: request.query.getall(key) if len(request.query.getall(key)) > 1 else value
            for key, value in request.query.items()
        }
        params["body"] = body_text
        call = Call(f"{request.method} {request.path}", params, time.monotonic())
        with self._lock:
            self.calls.append(call)
        try:
            self._authorise(request)
            self._check_faults(request.method, request.path, params)
            if request.method == "GET" and self.page_latency:
                await asyncio.sleep(self.page_latency)
            response = await handler(request)
        except ApiError as exc:
            response = exc.response()
        except web.HTTPException as exc:
            response = web.json_response({"message": exc.reason}, status=exc.status)
        call.status = response.status
        return response

    def _route(self, handler: Callable[..., Any]) -> Callable[[web.Request], Any]:
        async def route(request: web.Request) -> web.StreamResponse:
            body: Any = None
            if request.method in ("POST", "PATCH"):
                text = await request.text()
                if len(text.encode()) > BODY_LIMIT:
                    raise ApiError(413, "Body exceeded 1mb limit")
                try:
                    body = json.loads(text) if text else None
                except ValueError:
                    raise bad("Invalid JSON body") from None
            with self._lock:
                result = handler(request, body)
            status = 200
            if isinstance(result, tuple):
                status, result = result
            return web.json_response(
                result, status=status, dumps=lambda v: json.dumps(v, ensure_ascii=False)
            )

        return route

    def _authorise(self, request: web.Request) -> None:
        header = request.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            raise ApiError(
                401,
                "Unauthorized: no Basic auth header (public key as user, secret key as password)",
            )
        try:
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            raise ApiError(401, "Unauthorized: malformed Basic auth header") from None
        if user != self.public_key or password != self.secret_key:
            raise ApiError(
                401, "Invalid credentials. Confirm that you've configured the correct host."
            )

    def _check_faults(self, method: str, path: str, params: Json) -> None:
        with self._lock:
            if time.monotonic() < self._outage_until:
                raise ApiError(
                    self._outage_status,
                    "Service Unavailable",
                    retry_after=1 if self._outage_status == 429 else None,
                )
            fault = take_fault(self._faults, {"method": method, "path": path, **params})
            if fault is None and self._window is not None:
                wait = self._window.wait(time.monotonic())
                if wait > 0:
                    raise ApiError(429, "Rate limit exceeded", retry_after=max(1, round(wait)))
                self._window.times.append(time.monotonic())
        if fault is not None:
            retry = (
                fault.retry_after
                if fault.retry_after is not None
                else (1 if fault.status == 429 else None)
            )
            raise ApiError(
                fault.status,
                fault.message or f"fake failure {fault.status}",
                retry_after=retry,
                body=fault.body,
            )

    # -- faults ------------------------------------------------------------------------------------

    def fail_next(
        self,
        status: int,
        count: int = 1,
        path: str | None = None,
        method: str | None = None,
        retry_after: float | None = None,
        message: str | None = None,
    ) -> None:
        """The next ``count`` calls (to a path containing ``path``, with ``method``) get
        ``status`` and are not carried out.

        A 429 carries ``Retry-After`` (``retry_after``, default 1).
        """

        def match(call: Json) -> bool:
            return (path is None or path in call["path"]) and (
                method is None or call["method"] == method
            )

        with self._lock:
            self._faults.extend(Fault(status, retry_after, message, match) for _ in range(count))

    def respond_next(
        self,
        status: int,
        body: Any,
        path: str | None = None,
        method: str | None = None,
        count: int = 1,
    ) -> None:
        """The next ``count`` calls (to a path containing ``path``) get this status and body
        (JSON, or raw ``bytes``)."""

        def match(call: Json) -> bool:
            return (path is None or path in call["path"]) and (
                method is None or call["method"] == method
            )

        with self._lock:
            self._faults.extend(Fault(status, None, None, match, body) for _ in range(count))

    def outage(self, seconds: float, status: int = 503) -> None:
        """Every call fails with ``status`` for the next ``seconds``."""
        with self._lock:
            self._outage_until, self._outage_status = time.monotonic() + seconds, status

    def rate_limit(self, per_minute: int | None, window_s: float = 60.0) -> None:
        """At most ``per_minute`` calls a minute (then 429 with ``Retry-After``); None lifts it.
        ``window_s`` shortens the window (``per_minute`` calls in any ``window_s`` seconds), for
        quick tests; the ``Retry-After`` is then still at least 1 s."""
        with self._lock:
            self._window = Window(per_minute, window_s) if per_minute else None

    def clear_faults(self) -> None:
        """End an outage and a rate limit; drop the faults not yet taken."""
        with self._lock:
            self._faults.clear()
            self._outage_until, self._window = 0.0, None

    # -- seeding -----------------------------------------------------------------------------------

    def _next_time(self) -> datetime:
        return self._base_time + timedelta(seconds=next(self._clock))

    def add_trace(
        self,
        trace_id: str | None = None,
        *,
        name: str | None = None,
        input: Any = None,
        output: Any = None,
        tags: list[str] | tuple[str, ...] = (),
        start: datetime | None = None,
        root_type: str = "SPAN",
        root_id: str | None = None,
        observations: list[Json] | tuple[Json, ...] = (),
    ) -> str:
        """A trace: its root observation (input/output) and more observations (each a dict of
        ``add_observation``'s keywords; their parent is the root unless they say)."""
        trace_id = trace_id or uuid.uuid4().hex
        with self._lock:
            start = start or self._next_time()
            self._traces[trace_id] = {"name": name, "tags": list(tags), "start": start}
            self._version += 1
            root = self.add_observation(
                trace_id,
                root_id or f"{trace_id}-root",
                type=root_type,
                name=name,
                input=input,
                output=output,
                start=start,
            )
            for extra in observations:
                self.add_observation(trace_id, **{"parent_id": root, **extra})
        return trace_id

    def add_observation(
        self,
        trace_id: str,
        id: str | None = None,
        *,
        type: str = "SPAN",
        name: str | None = None,
        parent_id: str | None = None,
        input: Any = None,
        output: Any = None,
        start: datetime | None = None,
        metadata: Json | None = None,
    ) -> str:
        """An observation of a trace (the trace must exist)."""
        with self._lock:
            assert trace_id in self._traces, f"add_trace({trace_id!r}) first"
            observation_id = id or uuid.uuid4().hex[:16]
            held = self._observations.get(observation_id)
            if held is not None:
                self._observations_of.get(held["traceId"], {}).pop(observation_id, None)
            self._observations_of.setdefault(trace_id, {})[observation_id] = None
            self._version += 1
            self._observations[observation_id] = {
                "id": observation_id,
                "traceId": trace_id,
                "type": type,
                "name": name,
                "parentObservationId": parent_id,
                "startTime": start or self._next_time(),
                "input": raw(input),
                "output": raw(output),
                "metadata": metadata or {},
            }
            return observation_id

    def add_queue(
        self,
        queue_id: str,
        name: str = "review",
        score_config_ids: list[str] | tuple[str, ...] = (),
    ) -> str:
        """An annotation queue."""
        now = stamp(self._next_time())
        with self._lock:
            self._queues[queue_id] = {
                "id": queue_id,
                "name": name,
                "description": None,
                "scoreConfigIds": list(score_config_ids),
                "createdAt": now,
                "updatedAt": now,
            }
        return queue_id

    def add_queue_item(
        self,
        queue_id: str,
        object_id: str,
        object_type: str = "TRACE",
        *,
        status: str = "PENDING",
        item_id: str | None = None,
    ) -> str:
        """An item of a queue (a trace, an observation or a session)."""
        with self._lock:
            assert queue_id in self._queues, f"add_queue({queue_id!r}) first"
            item_id = item_id or f"qi-{uuid.uuid4().hex[:12]}"
            created = self._next_time()
            self._items[item_id] = {
                "id": item_id,
                "queueId": queue_id,
                "objectId": object_id,
                "objectType": object_type,
                "status": status,
                "completedAt": None,
                "createdAt": created,
                "updatedAt": created,
            }
        return item_id

    def add_score_config(
        self,
        name: str,
        data_type: str = "NUMERIC",
        *,
        categories: list[tuple[float, str]] | None = None,
        min_value: float | None = None,
        max_value: float | None = None,
        archived: bool = False,
        config_id: str | None = None,
    ) -> str:
        """A score config (categories as (value, label) pairs)."""
        config_id = config_id or f"cfg-{uuid.uuid4().hex[:10]}"
        now = stamp(self._next_time())
        with self._lock:
            self._configs[config_id] = {
                "id": config_id,
                "name": name,
                "createdAt": now,
                "updatedAt": now,
                "projectId": PROJECT_ID,
                "dataType": data_type,
                "isArchived": archived,
                "minValue": min_value,
                "maxValue": max_value,
                "categories": [{"value": v, "label": label} for v, label in categories]
                if categories is not None
                else None,
                "description": None,
            }
        return config_id

    def archive_config(self, config_id: str) -> None:
        """Archive a score config (scores sent with it from now on are dropped)."""
        with self._lock:
            self._configs[config_id]["isArchived"] = True

    def delete_queue_item(self, item_id: str) -> None:
        """Remove a queue item (completing it is then a 404)."""
        with self._lock:
            del self._items[item_id]

    def add_score(
        self,
        *,
        name: str,
        value: Any,
        trace_id: str | None = None,
        observation_id: str | None = None,
        data_type: str | None = None,
        source: str = "EVAL",
        comment: str | None = None,
        metadata: Json | None = None,
        score_id: str | None = None,
        timestamp: datetime | None = None,
    ) -> str:
        """A score already on a trace or an observation (an evaluator's, by default)."""
        data_type = data_type or (
            "CATEGORICAL"
            if isinstance(value, str)
            else "BOOLEAN"
            if isinstance(value, bool)
            else "NUMERIC"
        )
        body = {
            "id": score_id or uuid.uuid4().hex,
            "name": name,
            "traceId": trace_id,
            "observationId": observation_id,
            "value": value,
            "dataType": data_type,
            "comment": comment,
            "metadata": metadata or {},
        }
        with self._lock:
            row = self._row(body, source, timestamp or self._next_time(), None)
            row["visibleAt"] = 0.0
            self._hold(row)
        return row["id"]

    def add_dataset(self, name: str, dataset_id: str | None = None) -> str:
        """A dataset."""
        now = self._next_time() - timedelta(hours=1)
        with self._lock:
            self._datasets[name] = {
                "id": dataset_id or f"ds-{uuid.uuid4().hex[:10]}",
                "name": name,
                "description": None,
                "metadata": None,
                "projectId": PROJECT_ID,
                "createdAt": stamp(now),
                "updatedAt": stamp(now),
                "inputSchema": None,
                "expectedOutputSchema": None,
            }
            return self._datasets[name]["id"]

    def add_experiment(
        self, dataset: str, name: str, items: list[Json], experiment_id: str | None = None
    ) -> str:
        """A run (experiment) of a dataset: each item ``{trace_id, input, output,
        expected_output, item_id}``;
        a trace is made for an item whose trace does not exist yet."""
        with self._lock:
            ds = self._datasets[dataset]
            experiment_id = experiment_id or f"exp-{uuid.uuid4().hex[:10]}"
            rows = []
            for item in items:
                trace_id = item.get("trace_id") or uuid.uuid4().hex
                if trace_id not in self._traces:
                    self.add_trace(
                        trace_id,
                        name=f"experiment {name}",
                        input=item.get("input"),
                        output=item.get("output"),
                    )
                rows.append(
                    {
                        "id": f"{trace_id}-root",
                        "traceId": trace_id,
                        "startTime": self._traces[trace_id]["start"],
                        "experimentItemId": item.get("item_id") or f"dsi-{uuid.uuid4().hex[:8]}",
                        "input": item.get("input"),
                        "output": item.get("output"),
                        "expectedOutput": item.get("expected_output"),
                    }
                )
            self._experiments[experiment_id] = {
                "id": experiment_id,
                "name": name,
                "datasetId": ds["id"],
                "items": rows,
            }
        return experiment_id

    # -- inspection --------------------------------------------------------------------------------

    def scores(self, name: str | None = None) -> list[Json]:
        """Every score held (copies), of one name if given; one id on two days is two scores."""
        with self._lock:
            return [
                copy.deepcopy(s) for s in self._scores.values() if name is None or s["name"] == name
            ]

    def score(self, score_id: str) -> Json | None:
        """The score with this id (the one written last, when Langfuse would hold several)."""
        found = [s for s in self.scores() if s["id"] == score_id]
        return max(found, key=lambda s: s["updatedAt"]) if found else None

    def item(self, item_id: str) -> Json:
        """A queue item (a copy)."""
        with self._lock:
            return copy.deepcopy(self._items[item_id])

    def hide_scores(self, seconds: float) -> None:
        """Make every written score unreadable for ``seconds`` more (a read lag after the fact)."""
        with self._lock:
            for row in self._scores.values():
                row["visibleAt"] = time.monotonic() + seconds

    def requests(self, method_path: str) -> list[Call]:
        """The requests received to ``"METHOD /api/public/…"`` (a prefix)."""
        with self._lock:
            return [c for c in self.calls if c.method.startswith(method_path)]

    # -- annotation queues -------------------------------------------------------------------------

    def _queue(self, request: web.Request) -> Json:
        queue = self._queues.get(request.match_info["queue"])
        if queue is None:
            raise ApiError(404, "Annotation queue not found")
        return queue

    def _get_queue(self, request: web.Request, body: Any) -> Json:
        self._strict(request, set())
        return dict(self._queue(request))

    def _list_items(self, request: web.Request, body: Any) -> Json:
        self._strict(request, {"status", "page", "limit"})
        queue = self._queue(request)
        status = request.query.get("status")
        if status is not None and status not in ("PENDING", "COMPLETED"):
            raise bad("status: expected PENDING or COMPLETED")
        page, limit = page_of(request.query), limit_of(request.query, 100)
        chosen = [
            i
            for i in self._items.values()
            if i["queueId"] == queue["id"] and (status is None or i["status"] == status)
        ]
        chosen.sort(key=lambda i: (i["createdAt"], i["id"]), reverse=True)
        shown = chosen[(page - 1) * limit : page * limit]
        return {
            "data": [self._item_json(i) for i in shown],
            "meta": {
                "page": page,
                "limit": limit,
                "totalItems": len(chosen),
                "totalPages": -(-len(chosen) // limit),
            },
        }

    def _update_item(self, request: web.Request, body: Any) -> Json:
        self._strict(request, set())
        queue = self._queue(request)
        item = self._items.get(request.match_info["item"])
        if item is None or item["queueId"] != queue["id"]:
            raise ApiError(404, "Annotation queue item not found")
        if not isinstance(body, dict) or set(body) - {"status"}:
            raise bad("Invalid request data: only status may be updated")
        if "status" in body:
            if body["status"] not in ("PENDING", "COMPLETED"):
                raise bad("status: expected PENDING or COMPLETED")
            item["status"] = body["status"]
            item["completedAt"] = (
                datetime.now(timezone.utc) if body["status"] == "COMPLETED" else None
            )
            item["updatedAt"] = datetime.now(timezone.utc)
        return self._item_json(item)

    @staticmethod
    def _item_json(item: Json) -> Json:
        return {
            **item,
            "createdAt": stamp(item["createdAt"]),
            "updatedAt": stamp(item["updatedAt"]),
            "completedAt": stamp(item["completedAt"]) if item["completedAt"] else None,
        }

    # -- observations ------------------------------------------------------------------------------

    def _observations_v2(self, request: web.Request, body: Any) -> Json:
        query = request.query
        # GET /v2/observations ignores parameters it does not know (its schema is not strict)
        if query.get("parseIoAsJson", "false").lower() == "true":
            raise bad(
                "parseIoAsJson is deprecated: input and output are always returned as raw strings"
            )
        asked = (set(listed(query, "fields")) & OBSERVATION_GROUPS or {"core", "basic"}) | {"core"}
        limit, start = limit_of(query, 1000), offset_of(query.get("cursor"))
        rows = self._observation_rows(query)
        page = rows[start : start + limit]
        meta = {"cursor": cursor_of(start + limit)} if start + limit < len(rows) else {}
        return {"data": [self._groups(r, asked) for r in page], "meta": meta}

    def _observation_rows(self, query: Any) -> list[Json]:
        """Every observation the query's filters match, newest first (kept while nothing changes:
        the pages of one listing are cut from one list)."""
        cache_key = (
            self._version,
            tuple(sorted((k, v) for k, v in query.items() if k not in ("cursor", "limit"))),
        )
        cached = self._listing_cache.get(cache_key)
        if cached is not None:
            return cached
        if query.get("filter"):
            conditions = self._conditions(query["filter"])
            by_id = [
                c.get("value")
                for c in conditions
                if c.get("column") == "id"
                and c.get("operator") == "="
                and c.get("type") == "string"
            ]
            candidates = (
                ([self._observations[by_id[0]]] if by_id[0] in self._observations else [])
                if by_id and isinstance(by_id[0], str)
                else list(self._observations.values())
            )
            rows = [self._observation_json(o) for o in candidates]
            rows = [r for r in rows if all(self._condition(r, c) for c in conditions)]
        else:
            if "traceId" in query:
                ids = self._observations_of.get(query["traceId"], {})
                candidates = [self._observations[i] for i in ids]
            else:
                candidates = list(self._observations.values())
            rows = [self._observation_json(o) for o in candidates]
            rows = [r for r in rows if self._query_filters(r, query)]
        rows.sort(key=lambda r: (r["startTime"], r["id"]), reverse=True)
        if len(self._listing_cache) > 16:
            self._listing_cache.clear()
        self._listing_cache[cache_key] = rows
        return rows

    def _observation_json(self, observation: Json) -> Json:
        trace = self._traces[observation["traceId"]]
        return {
            **observation,
            "startTime": stamp(observation["startTime"]),
            "endTime": None,
            "projectId": PROJECT_ID,
            "isRootObservation": observation["parentObservationId"] is None,
            "level": "DEFAULT",
            "statusMessage": None,
            "version": None,
            "environment": "default",
            "bookmarked": False,
            "public": False,
            "userId": None,
            "sessionId": None,
            "traceName": trace["name"],
            "tags": list(trace["tags"]),
            "release": None,
            "createdAt": stamp(observation["startTime"]),
            "updatedAt": stamp(observation["startTime"]),
            "completionStartTime": None,
        }

    @staticmethod
    def _groups(row: Json, asked: set[str]) -> Json:
        keys = {
            "core": (
                "id",
                "traceId",
                "startTime",
                "endTime",
                "projectId",
                "parentObservationId",
                "type",
            ),
            "basic": (
                "name",
                "level",
                "statusMessage",
                "version",
                "environment",
                "bookmarked",
                "public",
                "userId",
                "sessionId",
                "isRootObservation",
            ),
            "time": ("completionStartTime", "createdAt", "updatedAt"),
            "io": ("input", "output"),
            "metadata": ("metadata",),
            "trace_context": ("tags", "release", "traceName"),
        }
        shown = {key: row[key] for group in asked for key in keys.get(group, ()) if key in row}
        shown.update({"modelId": None, "inputPrice": None, "outputPrice": None, "totalPrice": None})
        return shown

    @staticmethod
    def _query_filters(row: Json, query: Any) -> bool:
        for param, key in (
            ("traceId", "traceId"),
            ("name", "name"),
            ("type", "type"),
            ("userId", "userId"),
            ("sessionId", "sessionId"),
            ("level", "level"),
            ("version", "version"),
        ):
            if param in query and row[key] != query[param]:
                return False
        if (
            "parentObservationId" in query
            and (row["parentObservationId"] or "") != query["parentObservationId"]
        ):
            return False
        if "isRootObservation" in query and row["isRootObservation"] != (
            query["isRootObservation"].lower() == "true"
        ):
            return False
        if "fromStartTime" in query and parse_time(row["startTime"], "x") < parse_time(
            query["fromStartTime"], "fromStartTime"
        ):
            return False
        if "toStartTime" in query and parse_time(row["startTime"], "x") >= parse_time(
            query["toStartTime"], "toStartTime"
        ):
            return False
        environments = listed(query, "environment")
        return not environments or row["environment"] in environments

    @staticmethod
    def _conditions(text: str) -> list[Json]:
        try:
            conditions = json.loads(text)
        except ValueError:
            raise bad("filter: invalid JSON") from None
        if not isinstance(conditions, list) or not all(isinstance(c, dict) for c in conditions):
            raise bad("filter: expected a JSON array of filter conditions")
        for condition in conditions:
            if not {"type", "column", "operator"} <= set(condition) or (
                "value" not in condition and condition["type"] != "null"
            ):
                raise bad("filter: each condition needs type, column, operator and value")
        return conditions

    def _condition(self, row: Json, condition: Json) -> bool:
        columns = {
            "id": "id",
            "traceId": "traceId",
            "type": "type",
            "name": "name",
            "traceName": "traceName",
            "tags": "tags",
            "traceTags": "tags",
            "startTime": "startTime",
            "isRootObservation": "isRootObservation",
            "environment": "environment",
            "level": "level",
            "userId": "userId",
            "sessionId": "sessionId",
            "parentObservationId": "parentObservationId",
            "version": "version",
        }
        column = columns.get(condition["column"])
        if column is None:
            raise bad(f"filter: unknown column {condition['column']!r}")
        kind, operator, value, held = (
            condition["type"],
            condition["operator"],
            condition.get("value"),
            row.get(column),
        )
        if kind == "string":
            held = held or ""
            tests = {
                "=": held == value,
                "contains": str(value) in held,
                "does not contain": str(value) not in held,
                "starts with": held.startswith(str(value)),
                "ends with": held.endswith(str(value)),
            }
        elif kind in ("stringOptions", "categoryOptions"):
            tests = {"any of": held in (value or []), "none of": held not in (value or [])}
        elif kind == "arrayOptions":
            held_set, wanted = set(held or []), set(value or [])
            tests = {
                "any of": bool(held_set & wanted),
                "none of": not held_set & wanted,
                "all of": wanted <= held_set,
            }
        elif kind == "boolean":
            tests = {"=": held == value, "<>": held != value}
        elif kind == "datetime":
            left, right = parse_time(held, column), parse_time(value, "filter value")
            tests = {">": left > right, "<": left < right, ">=": left >= right, "<=": left <= right}
        elif kind == "null":
            tests = {"is null": held is None, "is not null": held is not None}
        else:
            raise bad(f"filter: unsupported type {kind!r}")
        if operator not in tests:
            raise bad(f"filter: operator {operator!r} does not apply to type {kind!r}")
        return tests[operator]

    # -- scores ------------------------------------------------------------------------------------

    @staticmethod
    def _key(row: Json) -> tuple[str, str, str]:
        return row["id"], parse_time(row["timestamp"], "timestamp").date().isoformat(), row["name"]

    def _row(self, body: Json, source: str, timestamp: datetime, config: Json | None) -> Json:
        now = stamp(datetime.now(timezone.utc))
        value = body["value"]
        data_type = body["dataType"]
        if data_type in ("NUMERIC", "BOOLEAN"):
            value = float(value)
        metadata = {
            k: v if isinstance(v, str) else json.dumps(v)
            for k, v in (body.get("metadata") or {}).items()
        }
        return {
            "id": body["id"],
            "projectId": PROJECT_ID,
            "name": body["name"],
            "value": value,
            "dataType": data_type,
            "source": source,
            "timestamp": stamp(timestamp),
            "environment": body.get("environment") or "default",
            "createdAt": now,
            "updatedAt": now,
            "comment": body.get("comment"),
            "configId": config["id"] if config else None,
            "metadata": metadata,
            "authorUserId": None,
            "queueId": body.get("queueId"),
            "traceId": body.get("traceId"),
            "observationId": body.get("observationId"),
            "sessionId": body.get("sessionId"),
            "datasetRunId": body.get("datasetRunId"),
            "visibleAt": time.monotonic() + self.read_lag,
        }

    def _hold(self, row: Json) -> None:
        """Keep a score row under its key (replacing the one there), indexed by id and trace."""
        key = self._key(row)
        held = self._scores.get(key)
        if held is not None:
            self._scores_by_trace.get(held["traceId"], {}).pop(key, None)
        else:
            self._score_order[key] = len(self._score_order)
        self._scores[key] = row
        self._scores_by_id.setdefault(row["id"], {})[key] = None
        self._scores_by_trace.setdefault(row["traceId"], {})[key] = None

    def _score_candidates(self, query: Any) -> list[Json]:
        """The score rows a query can match, in the order a scan of every row meets them: those
        of its ids or trace ids when it names some (the index), else all."""
        ids, traces = listed(query, "id"), listed(query, "traceId")
        if not ids and not traces:
            return list(self._scores.values())
        if ids:
            keys = {k for i in ids for k in self._scores_by_id.get(i, ())}
        else:
            keys = {k for t in traces for k in self._scores_by_trace.get(t, ())}
        return [self._scores[k] for k in sorted(keys, key=self._score_order.__getitem__)]

    def _score_keys_of_trace(self, trace_id: Any) -> list[tuple[str, str, str]]:
        """The keys of a trace's scores, in the order a scan of every row meets them."""
        keys = self._scores_by_trace.get(trace_id, {})
        return sorted(keys, key=self._score_order.__getitem__)

    def _create_scores(self, request: web.Request, body: Any) -> Any:
        self._strict(request, set())
        if isinstance(body, dict):  # the single-score form: an error is the answer's status
            problem = self._problem(body)
            if problem:
                raise bad(problem)
            return {"id": self._store(body)}
        if self.single_scores:
            raise bad("Invalid request data: expected object, received array")
        if not isinstance(body, list) or not body:
            raise bad("Invalid request data: expected a non-empty array of scores")
        errors = []
        for index, score in enumerate(body):
            problem = self._problem(score)
            if problem:
                errors.append({"message": f"[{index}] {problem}"})
            else:
                self._store(score)
        if errors:
            return 207, {
                "accepted": len(body) - len(errors),
                "rejected": len(errors),
                "errors": errors,
            }
        return 202, {"message": "Accepted"}

    def _problem(self, score: Any) -> str | None:
        """Why a CreateScoreRequest is refused at once (None when it is accepted)."""
        if not isinstance(score, dict):
            return "expected an object"
        unknown = set(score) - SCORE_FIELDS
        if unknown:
            return f"Unrecognized key(s) in object: {', '.join(sorted(unknown))}"
        if not isinstance(score.get("name"), str) or not score["name"]:
            return "name: Required"
        value = score.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return "value: Expected number or string"
        for key in (
            "id",
            "traceId",
            "observationId",
            "sessionId",
            "datasetRunId",
            "queueId",
            "configId",
            "environment",
        ):
            if (
                key in score
                and score[key] is not None
                and (not isinstance(score[key], str) or not score[key])
            ):
                return f"{key}: Expected a non-empty string"
        if not (score.get("traceId") or score.get("sessionId") or score.get("datasetRunId")):
            return "One of traceId, sessionId or datasetRunId is required"
        if score.get("observationId") and not score.get("traceId"):
            return "observationId requires traceId"
        data_type = score.get("dataType")
        if data_type is not None and data_type not in DATA_TYPES:
            return f"dataType: Invalid enum value {data_type!r}"
        kind = data_type or ("CATEGORICAL" if isinstance(value, str) else "NUMERIC")
        if kind in ("NUMERIC", "BOOLEAN") and isinstance(value, str):
            return f"value: {kind} scores take a number"
        if kind == "BOOLEAN" and value not in (0, 1):
            return "value: Boolean score values must equal either 1 or 0"
        if kind in ("CATEGORICAL", "TEXT", "CORRECTION") and not isinstance(value, str):
            return f"value: {kind} scores take a string"
        if kind == "TEXT" and not 1 <= len(value) <= 500:
            return "value: Text score values must be between 1 and 500 characters"
        source = score.get("source", "API")
        if source not in ("API", "ANNOTATION"):
            return f"source: Invalid enum value {source!r} (EVAL is reserved)"
        if source == "ANNOTATION" and not score.get("configId") and kind != "CORRECTION":
            return "configId is required when source is ANNOTATION"
        if (
            "comment" in score
            and score["comment"] is not None
            and not isinstance(score["comment"], str)
        ):
            return "comment: Expected string"
        if (
            "metadata" in score
            and score["metadata"] is not None
            and not isinstance(score["metadata"], dict)
        ):
            return "metadata: Expected object"
        if "timestamp" in score and score["timestamp"] is not None:
            try:
                parse_time(score["timestamp"], "timestamp")
            except ApiError as exc:
                return exc.message
        return None

    def _store(self, score: Json) -> str:
        """Keep an accepted score (or drop it, as Langfuse does later, if it breaks its config)."""
        score = {**score, "id": score.get("id") or uuid.uuid4().hex}
        config = self._configs.get(score["configId"]) if score.get("configId") else None
        score["dataType"] = score.get("dataType") or (
            config["dataType"]
            if config
            else "CATEGORICAL"
            if isinstance(score["value"], str)
            else "NUMERIC"
        )
        reason = self._breaks_config(score, config) if score.get("configId") else None
        if reason:
            self.dropped.append({**score, "reason": reason})
            return score["id"]
        timestamp = (
            parse_time(score["timestamp"], "timestamp")
            if score.get("timestamp")
            else datetime.now(timezone.utc)
        )
        row = self._row(score, score.get("source", "API"), timestamp, config)
        held = self._scores.get(self._key(row))
        if held is not None:
            row["createdAt"] = held["createdAt"]
        self._hold(row)
        return row["id"]

    @staticmethod
    def _breaks_config(score: Json, config: Json | None) -> str | None:
        if config is None:
            return "unknown configId"
        if config["isArchived"]:
            return "archived config"
        if score["dataType"] != config["dataType"]:
            return f"dataType {score['dataType']} does not match the config's {config['dataType']}"
        if config["dataType"] == "CATEGORICAL" and score["value"] not in [
            c["label"] for c in config["categories"] or []
        ]:
            return f"{score['value']!r} is not a category of the config"
        if config["dataType"] == "NUMERIC":
            low = config["minValue"] if config["minValue"] is not None else float("-inf")
            high = config["maxValue"] if config["maxValue"] is not None else float("inf")
            if not low <= float(score["value"]) <= high:
                return f"{score['value']} is outside the config's range"
        return None

    def _scores_v3(self, request: web.Request, body: Any) -> Json:
        query = request.query
        self._strict(request, SCORE_PARAMS)
        if query.get("userId") or query.get("traceTags"):
            raise bad(
                "userId and traceTags filters require a trace JOIN and are not supported in v3"
            )
        asked = groups(query, {"details", "subject", "annotation"}, set())
        limit, start = limit_of(query, 100), offset_of(query.get("cursor"))
        data_types = [t.upper() for t in listed(query, "dataType")]
        if ("valueMin" in query or "valueMax" in query) and data_types != ["NUMERIC"]:
            raise bad("valueMin and valueMax require dataType=NUMERIC as a single value")
        if listed(query, "observationId") and not listed(query, "traceId"):
            raise bad(
                "observationId filter requires traceId — observation IDs are scoped to a trace"
            )
        now = time.monotonic()
        rows = [
            r
            for r in self._score_candidates(query)
            if r["visibleAt"] <= now and self._score_matches(r, query, data_types)
        ]
        rows.sort(key=lambda r: (r["timestamp"], r["id"]), reverse=True)
        page = rows[start : start + limit]
        meta: Json = {"limit": limit}
        if start + limit < len(rows):
            meta["cursor"] = cursor_of(start + limit)
        return {"data": [self._score_json(r, asked) for r in page], "meta": meta}

    @staticmethod
    def _score_matches(row: Json, query: Any, data_types: list[str]) -> bool:
        for param, key in (
            ("id", "id"),
            ("name", "name"),
            ("configId", "configId"),
            ("queueId", "queueId"),
            ("environment", "environment"),
            ("traceId", "traceId"),
            ("observationId", "observationId"),
            ("sessionId", "sessionId"),
            ("experimentId", "datasetRunId"),
        ):
            wanted = listed(query, param)
            if wanted and row[key] not in wanted:
                return False
        sources = [s.upper() for s in listed(query, "source")]
        if (
            sources
            and row["source"] not in sources
            or data_types
            and row["dataType"] not in data_types
        ):
            return False
        if "valueMin" in query and row["value"] < float(query["valueMin"]):
            return False
        if "valueMax" in query and row["value"] > float(query["valueMax"]):
            return False
        stamp_ = parse_time(row["timestamp"], "timestamp")
        if "fromTimestamp" in query and stamp_ < parse_time(
            query["fromTimestamp"], "fromTimestamp"
        ):
            return False
        return not (
            "toTimestamp" in query and stamp_ >= parse_time(query["toTimestamp"], "toTimestamp")
        )

    @staticmethod
    def _score_json(row: Json, asked: set[str]) -> Json:
        value: Any = row["value"]
        if row["dataType"] == "BOOLEAN":
            value = bool(value)
        shown = {
            key: row[key]
            for key in (
                "id",
                "projectId",
                "name",
                "source",
                "timestamp",
                "environment",
                "createdAt",
                "updatedAt",
                "dataType",
            )
        }
        shown["value"] = value
        if "details" in asked:
            shown.update(
                comment=row["comment"], configId=row["configId"], metadata=dict(row["metadata"])
            )
        if "annotation" in asked:
            shown.update(authorUserId=row["authorUserId"], queueId=row["queueId"])
        if "subject" in asked:
            if row["observationId"]:
                shown["subject"] = {
                    "kind": "observation",
                    "id": row["observationId"],
                    "traceId": row["traceId"],
                }
            elif row["traceId"]:
                shown["subject"] = {"kind": "trace", "id": row["traceId"]}
            elif row["sessionId"]:
                shown["subject"] = {"kind": "session", "id": row["sessionId"]}
            else:
                shown["subject"] = {"kind": "experiment", "id": row["datasetRunId"]}
        return shown

    def _list_configs(self, request: web.Request, body: Any) -> Json:
        page, limit = page_of(request.query), limit_of(request.query, 100)
        configs = sorted(self._configs.values(), key=lambda c: (c["createdAt"], c["id"]))
        return {
            "data": [dict(c) for c in configs[(page - 1) * limit : page * limit]],
            "meta": {
                "page": page,
                "limit": limit,
                "totalItems": len(configs),
                "totalPages": -(-len(configs) // limit),
            },
        }

    # -- datasets and experiments ------------------------------------------------------------------

    def _get_dataset(self, request: web.Request, body: Any) -> Json:
        self._strict(request, set())
        found = self._datasets.get(request.match_info["name"])
        if found is None:
            raise ApiError(404, "Dataset not found")
        return dict(found)

    @staticmethod
    def _since(request: web.Request) -> datetime:
        """``fromStartTime``: required, with a zone offset (the experiments APIs ignore unknown
        parameters)."""
        text = request.query.get("fromStartTime", "")
        if not text:
            raise bad("fromStartTime: Required")
        if not (text.endswith("Z") or text[-6:-5] in ("+", "-")):
            raise bad("fromStartTime: Invalid ISO datetime (an offset is required)")
        return parse_time(text, "fromStartTime")

    def _list_experiments(self, request: web.Request, body: Any) -> Json:
        since = self._since(request)
        query = request.query
        limit, start = limit_of(query, 100), offset_of(query.get("cursor"))
        chosen = []
        for experiment in self._experiments.values():
            items = [i for i in experiment["items"] if i["startTime"] >= since]
            if not items:
                continue
            if any(
                listed(query, p) and experiment[k] not in listed(query, p)
                for p, k in (("id", "id"), ("name", "name"), ("datasetId", "datasetId"))
            ):
                continue
            chosen.append(
                {
                    "id": experiment["id"],
                    "name": experiment["name"],
                    "description": None,
                    "startTime": stamp(min(i["startTime"] for i in items)),
                    "endTime": stamp(max(i["startTime"] for i in items)),
                    "itemCount": len(items),
                    "datasetId": experiment["datasetId"],
                }
            )
        page = chosen[start : start + limit]
        return {
            "data": page,
            "meta": {"cursor": cursor_of(start + limit)} if start + limit < len(chosen) else {},
        }

    def _list_experiment_items(self, request: web.Request, body: Any) -> Json:
        since = self._since(request)
        query = request.query
        asked = groups(
            query,
            {"core", "dataset", "io", "metadata", "itemMetadata", "experimentMetadata", "scores"},
            {"core", "dataset"},
        )
        limit, start = limit_of(query, 100), offset_of(query.get("cursor"))
        rows = []
        for experiment in self._experiments.values():
            if listed(query, "experimentId") and experiment["id"] not in listed(
                query, "experimentId"
            ):
                continue
            if listed(query, "experimentName") and experiment["name"] not in listed(
                query, "experimentName"
            ):
                continue
            for item in experiment["items"]:
                if item["startTime"] >= since:
                    rows.append(self._experiment_item(experiment, item, asked))
        rows.sort(key=lambda r: (r["startTime"], r["id"]), reverse=True)
        page = rows[start : start + limit]
        return {
            "data": page,
            "meta": {"cursor": cursor_of(start + limit)} if start + limit < len(rows) else {},
        }

    def _experiment_item(self, experiment: Json, item: Json, asked: set[str]) -> Json:
        row: Json = {
            "id": item["id"],
            "traceId": item["traceId"],
            "startTime": stamp(item["startTime"]),
            "endTime": None,
            "level": "DEFAULT",
            "environment": "default",
            "experimentId": experiment["id"],
            "experimentName": experiment["name"],
            "experimentItemId": item["experimentItemId"],
        }
        if "dataset" in asked:
            row.update(experimentDatasetId=experiment["datasetId"], experimentItemVersion=None)
        if "io" in asked:
            row.update(
                input=item["input"], output=item["output"], expectedOutput=item["expectedOutput"]
            )
        if "scores" in asked:
            now = time.monotonic()
            row["scores"] = [
                self._score_json(s, {"details"})
                for s in [self._scores[k] for k in self._score_keys_of_trace(item["traceId"])]
                if s["traceId"] == item["traceId"] and s["visibleAt"] <= now
            ]
        return row

    # -- checks ------------------------------------------------------------------------------------

    @staticmethod
    def _strict(request: web.Request, allowed: set[str]) -> None:
        unknown = set(request.query) - allowed
        if unknown:
            raise bad(
                "Invalid request data: unrecognized query parameter(s) "
                + ", ".join(sorted(unknown))
            )


__all__ = ["PROJECT_ID", "PUBLIC_KEY", "SECRET_KEY", "ApiError", "FakeLangfuse", "stamp"]
