"""Pulling from LangSmith: an annotation queue's runs, a project's runs, or an experiment's runs
with their reference examples, each with the evaluators' feedback and its retrieved documents.

Endpoints (all under ``/api/v1``, the key in ``x-api-key``):

* ``GET /annotation-queues/{id}/runs?offset&limit`` (pages until one comes back short) and
  ``GET /annotation-queues/{id}`` for the queue's name;
* ``GET /sessions?name=…`` or ``GET /sessions/{id}`` to find a project or an experiment;
* ``POST /runs/query`` with ``session``, ``is_root``, ``run_type``, ``filter``, ``start_time``,
  ``select`` and ``limit`` (pages by ``cursors.next``), and per trace
  ``{"trace", "run_type": "retriever"}`` for the documents a run retrieved;
* ``GET /examples?id=…&dataset=…`` for an experiment's reference examples;
* ``GET /feedback?run=…&source=…&offset&limit`` for the evaluators' feedback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from ..base import ConnectorError, Env, Origin, Pulled
from . import _items
from ._api import Api, as_uuid, segment

if TYPE_CHECKING:
    from . import LangSmithSource

SELECT = [
    "id",
    "name",
    "run_type",
    "start_time",
    "end_time",
    "status",
    "error",
    "extra",
    "inputs",
    "outputs",
    "parent_run_id",
    "session_id",
    "reference_example_id",
    "reference_dataset_id",
    "trace_id",
    "dotted_order",
    "total_tokens",
    "prompt_tokens",
    "completion_tokens",
    "total_cost",
    "tags",
]
"""The run fields a query asks for (every one a documented ``RunSelect`` value)."""
PAGE_MAX = 100
"""The largest page the API serves."""
RUNS_PER_FEEDBACK_CALL = 50
"""Runs whose feedback one ``GET /feedback`` asks for."""


def pull(settings: "LangSmithSource", env: Env) -> Pulled:
    """The items of the queue, project or experiment ``settings`` name."""
    api = Api(env, settings.timeout_s)
    try:
        if settings.queue:
            return _queue(api, settings)
        if settings.experiment:
            return _experiment(api, settings)
        return _project(api, settings)
    except ConnectorError:
        raise
    except Exception as exc:  # nothing but a ConnectorError leaves a source
        raise ConnectorError(
            f"LangSmith at {api.host} sent something hilbot cannot read ({type(exc).__name__})",
            fix="report it with the command you ran",
        ) from None
    finally:
        api.close()


# ---------------------------------------------------------------------------------------------
# The three modes.


def _queue(api: Api, settings: "LangSmithSource") -> Pulled:
    queue_id = _id(
        settings.queue, "queue", "the annotation queue's id (a UUID, in its URL in LangSmith)"
    )
    what = f"annotation queue {queue_id}"
    fix = (
        "check the queue id (Annotation queues in LangSmith) and that the key's workspace holds it"
    )
    runs: list[dict[str, Any]] = []
    offset = 0
    while len(runs) < settings.limit:
        page = api.get(
            f"/annotation-queues/{segment(queue_id)}/runs",
            {"offset": offset, "limit": settings.page_size},
            what,
            fix,
        )
        if not isinstance(page, list):
            raise _bad(api, what)
        held = {r["id"] for r in runs}
        new = [r for r in _runs(page) if r["id"] not in held]
        runs += new
        if len(page) < settings.page_size or not new:  # the last page (or one seen already)
            break
        offset += len(page)
    name = _queue_name(api, queue_id)
    origin = {"queue_id": queue_id, "queue": name}
    return _pulled(
        api, settings, runs[: settings.limit], origin, f"langsmith annotation queue {name}", name
    )


def _project(api: Api, settings: "LangSmithSource") -> Pulled:
    assert settings.project is not None
    project = _session(api, settings.project, "project")
    roots = settings.roots if settings.roots is not None else settings.run_type is None
    body = _query(settings, project["id"], roots)
    runs = list(_query_runs(api, body, settings, f"the runs of project {project['name']}"))
    origin = {"project": project["name"]}
    return _pulled(
        api, settings, runs, origin, f"langsmith project {project['name']}", project["name"]
    )


def _experiment(api: Api, settings: "LangSmithSource") -> Pulled:
    assert settings.experiment is not None
    session = _session(api, settings.experiment, "experiment")
    dataset = as_uuid(session.get("reference_dataset_id"))
    if dataset is None:
        raise ConnectorError(
            f"{session['name']!r} at {api.host} is a tracing project, not an experiment "
            "(it has no reference dataset)",
            fix=f"pull it with --project {session['name']}",
        )
    body = _query(settings, session["id"], True)
    runs = list(_query_runs(api, body, settings, f"the runs of experiment {session['name']}"))
    examples = _examples(api, dataset, runs)
    origin = {"experiment": session["name"], "dataset_id": dataset}
    return _pulled(
        api,
        settings,
        runs,
        origin,
        f"langsmith experiment {session['name']}",
        session["name"],
        examples,
    )


# ---------------------------------------------------------------------------------------------
# Items.


def _pulled(
    api: Api,
    settings: "LangSmithSource",
    runs: list[dict[str, Any]],
    shared: dict[str, Any],
    source: str,
    set_name: str,
    examples: dict[str, dict[str, Any]] | None = None,
) -> Pulled:
    sources: set[str] = set(settings.judge_sources)
    feedback = _feedback(api, [r["id"] for r in runs], sorted(sources)) if sources else {}
    items = []
    for run in runs:
        example = (examples or {}).get(as_uuid(run.get("reference_example_id")) or "", {})
        judged = _items.evaluation(feedback.get(run["id"], []), sources)
        items.append(
            _items.item(
                run,
                _origin(run, shared),
                contexts=_contexts(api, settings, run),
                expected=_items.expected_text(example.get("outputs")),
                judged=judged,
                inputs=example.get("inputs"),
            )
        )
    judge = "langsmith evaluators" if any(i.evaluation.scores for i in items) else None
    return Pulled(
        kind="answer",
        source=f"{source} at {api.host}",
        set_name=set_name or "langsmith",
        items=items,
        judge=judge,
    )


def _origin(run: dict[str, Any], shared: dict[str, Any]) -> dict[str, Any]:
    """Where a run came from: what a label needs to find it again."""
    extra: dict[str, Any] = {k: v for k, v in shared.items() if v}
    for key in ("trace_id", "session_id", "queue_run_id", "parent_run_id"):
        value = as_uuid(run.get(key))
        if value:
            extra[key] = value
    example = as_uuid(run.get("reference_example_id"))
    if example:
        extra["example_id"] = example
    for key in ("start_time", "run_type", "name"):
        if isinstance(run.get(key), str) and run[key]:
            extra[key] = run[key]
    return Origin(tool="langsmith", kind="run", id=run["id"], extra=extra).model_dump()


def _runs(page: list[Any]) -> list[dict[str, Any]]:
    """The runs of a page that have an id (their id made canonical)."""
    runs = []
    for run in page:
        run_id = as_uuid(run.get("id")) if isinstance(run, dict) else None
        if run_id is not None:
            runs.append({**run, "id": run_id})
    return runs


def _contexts(api: Api, settings: "LangSmithSource", run: dict[str, Any]) -> list[str]:
    """The documents the run's trace retrieved (the run's own, for a retriever run)."""
    if run.get("run_type") == "retriever":
        return _items.documents(run.get("outputs"))
    trace = as_uuid(run.get("trace_id")) or run["id"]
    if not settings.contexts:
        return []
    body: dict[str, Any] = {
        "trace": trace,
        "run_type": "retriever",
        "limit": PAGE_MAX,
        "order": "asc",
        "select": ["id", "run_type", "outputs", "start_time", "trace_id", "dotted_order"],
    }
    session = as_uuid(run.get("session_id"))
    if session:
        body["session"] = [session]
    answer = api.post("/runs/query", body, f"the retriever runs of trace {trace}", "")
    found = answer.get("runs") if isinstance(answer, dict) else None
    retrievers = [
        r
        for r in (found if isinstance(found, list) else [])
        if isinstance(r, dict)
        and r.get("run_type") in (None, "retriever")
        and as_uuid(r.get("trace_id")) in (None, trace)
    ]
    retrievers.sort(key=lambda r: str(r.get("dotted_order") or r.get("start_time") or ""))
    return [text for r in retrievers for text in _items.documents(r.get("outputs"))]


# ---------------------------------------------------------------------------------------------
# Finding things.


def _id(value: str | None, setting: str, what: str) -> str:
    found = as_uuid(value)
    if found is None:
        raise ConnectorError(
            f"--{setting} {str(value)[:80]!r} is not a LangSmith id", fix=f"give {what}"
        )
    return found


def _queue_name(api: Api, queue_id: str) -> str:
    """The queue's name (its id when the queue cannot be read)."""
    try:
        queue = api.get(
            f"/annotation-queues/{segment(queue_id)}", None, f"annotation queue {queue_id}", ""
        )
    except ConnectorError:
        return queue_id
    name = queue.get("name") if isinstance(queue, dict) else None
    return name if isinstance(name, str) and name.strip() else queue_id


def _session(api: Api, ref: str, kind: str) -> dict[str, Any]:
    """A project (tracing session) by id or by name: its ``id``, ``name`` and the rest."""
    fix = (
        f"check the {kind}'s name "
        f"({'Projects' if kind == 'project' else 'Datasets & Experiments'} in "
        "LangSmith) or give its id, and that LANGSMITH_API_KEY's workspace holds it"
    )
    session_id = as_uuid(ref)
    found: Any = None
    if session_id is not None:
        found = api.find(f"/sessions/{segment(session_id)}", None, f"{kind} {ref}")
    if found is None:
        page = api.get("/sessions", {"name": ref, "limit": 1}, f"{kind} {ref!r}", fix)
        if not isinstance(page, list):
            raise _bad(api, f"{kind} {ref!r}")
        found = next((s for s in page if isinstance(s, dict)), None)
    if not isinstance(found, dict) or as_uuid(found.get("id")) is None:
        raise ConnectorError(f"{kind} {ref!r} not found at {api.host}", fix=fix)
    name = found.get("name") if isinstance(found.get("name"), str) and found.get("name") else ref
    return {**found, "id": as_uuid(found["id"]), "name": name}


def _query(settings: "LangSmithSource", session: str, roots: bool) -> dict[str, Any]:
    """The ``POST /runs/query`` body of a project or an experiment."""
    body: dict[str, Any] = {"session": [session], "select": SELECT, "order": "desc"}
    if roots:
        body["is_root"] = True
    if settings.run_type is not None:
        body["run_type"] = settings.run_type
    if settings.filter:
        body["filter"] = settings.filter
    if settings.start_time is not None:
        body["start_time"] = settings.start_time.isoformat()
    return body


def _query_runs(
    api: Api, body: dict[str, Any], settings: "LangSmithSource", what: str
) -> Iterator[dict[str, Any]]:
    """The runs a query finds, page by page along ``cursors.next``, at most ``settings.limit``."""
    fix = "check --filter (LangSmith's filter language) and the other settings"
    cursors_seen: set[str] = set()
    held: set[str] = set()
    while len(held) < settings.limit:
        page = min(settings.page_size, settings.limit - len(held))
        answer = api.post("/runs/query", {**body, "limit": page}, what, fix)
        if not isinstance(answer, dict) or not isinstance(answer.get("runs"), list):
            raise _bad(api, what)
        found = _runs(answer["runs"])
        for run in found:
            if run["id"] not in held and _wanted(run, body) and len(held) < settings.limit:
                held.add(run["id"])
                yield run
        cursors = answer.get("cursors")
        cursor = cursors.get("next") if isinstance(cursors, dict) else None
        if not found or not isinstance(cursor, str) or not cursor or cursor in cursors_seen:
            return
        cursors_seen.add(cursor)
        body = {**body, "cursor": cursor}


def _wanted(run: dict[str, Any], body: dict[str, Any]) -> bool:
    """Whether a run answers the query (checked again here: a server may ignore a condition)."""
    if body.get("is_root") and as_uuid(run.get("parent_run_id")) is not None:
        return False
    kind = run.get("run_type")
    if body.get("run_type") and isinstance(kind, str) and kind != body["run_type"]:
        return False
    session = as_uuid(run.get("session_id"))
    return not (body.get("session") and session is not None and session not in body["session"])


def _examples(api: Api, dataset: str, runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The reference examples of the runs, by id."""
    ids = list(
        dict.fromkeys(e for e in (as_uuid(r.get("reference_example_id")) for r in runs) if e)
    )
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), PAGE_MAX):
        chunk = ids[start : start + PAGE_MAX]
        page = api.get(
            "/examples",
            {"id": chunk, "dataset": dataset, "limit": PAGE_MAX},
            f"the examples of dataset {dataset}",
            "check that the dataset still exists",
        )
        if not isinstance(page, list):
            raise _bad(api, f"the examples of dataset {dataset}")
        for example in page:
            example_id = as_uuid(example.get("id")) if isinstance(example, dict) else None
            if example_id:
                found[example_id] = example
    return found


def _feedback(api: Api, run_ids: list[str], sources: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The feedback of the runs from these source types, by run id."""
    found: dict[str, list[dict[str, Any]]] = {}
    held: set[str] = set()
    for start in range(0, len(run_ids), RUNS_PER_FEEDBACK_CALL):
        chunk = run_ids[start : start + RUNS_PER_FEEDBACK_CALL]
        offset = 0
        while True:
            page = api.get(
                "/feedback",
                {"run": chunk, "source": sources, "limit": PAGE_MAX, "offset": offset},
                "the runs' feedback",
                "",
            )
            if not isinstance(page, list):
                raise _bad(api, "the runs' feedback")
            new = 0
            for feedback in page:
                run_id = as_uuid(feedback.get("run_id")) if isinstance(feedback, dict) else None
                feedback_id = as_uuid(feedback.get("id")) if isinstance(feedback, dict) else None
                if run_id and (feedback_id is None or feedback_id not in held):
                    held.add(feedback_id or "")
                    found.setdefault(run_id, []).append(feedback)
                    new += 1
            if len(page) < PAGE_MAX or not new:  # the last page (or one seen already)
                break
            offset += len(page)
    return found


def _bad(api: Api, what: str) -> ConnectorError:
    return ConnectorError(
        f"LangSmith at {api.host} answered {what} with a bad response",
        fix="check that LANGSMITH_ENDPOINT points at a LangSmith API",
    )
