"""The LangSmith connector: the real ``langsmith`` SDK against the local LangSmith API
(``tests/fakes/langsmith_api.py``).

Pulling turns an annotation queue's, a project's or an experiment's runs into items that keep
their origin, with the evaluators' feedback as the hidden AI view; pushing writes each label as
feedback with the label's own id, updates it on a re-send, reads it back, and takes a complete
item's run out of its queue. Every failure is one ConnectorError, never an SDK exception.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from datetime import datetime, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from evaluation import Rating, Reviewer, Store, load_config
from evaluation.connectors.base import (
    ConnectorError,
    Label,
    Origin,
    Sent,
    remote_id,
    sinks,
    sources,
)
from evaluation.connectors.commands import options_to_settings, push_command
from evaluation.connectors.langsmith import (
    RATE_PER_S,
    LangSmithSink,
    LangSmithSource,
    _items,
    make,
    pull,
)
from evaluation.connectors.pulling import pull_run
from tests.fakes.langsmith_api import FakeLangSmith

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
THREE = ["good", "ok", "bad"]


@pytest.fixture
def ls():
    """A running fake LangSmith."""
    server = FakeLangSmith().start()
    yield server
    server.stop()


def _workspace(ls: FakeLangSmith, n: int = 3) -> dict[str, Any]:
    """A project of ``n`` traces (each with a retriever child) and a queue holding them all."""
    project = ls.add_project("support-bot")
    runs = []
    for i in range(n):
        run = ls.add_run(
            project,
            {
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": f"question {i} ü"},
                ]
            },
            {"messages": [{"role": "assistant", "content": f"answer {i}"}]},
        )
        ls.add_run(
            project,
            {"query": f"question {i}"},
            {"documents": [{"page_content": f"doc {i}", "metadata": {"source": "kb"}}]},
            run_type="retriever",
            parent=run,
            name="search",
        )
        runs.append(run)
    queue = ls.add_queue("needs review", runs)
    return {"project": project, "runs": runs, "queue": queue}


def _label(item_id: str, origin: dict[str, Any], **changes: Any) -> Label:
    fields: dict[str, Any] = {
        "run_id": "run-1",
        "item_id": item_id,
        "dimension": "answer",
        "reviewer": "telegram:42",
        "reviewer_name": "Ana",
        "judgment": "good",
        "score": 1.0,
        "options": THREE,
        "note": "Clear. ✓",
        "origin": Origin(**origin),
        "version": "v1",
        "timestamp": WHEN,
    }
    fields.update(changes)
    fields.setdefault(
        "remote_id", remote_id(fields["run_id"], item_id, fields["dimension"], fields["reviewer"])
    )
    return Label(**fields)


def _pulled_label(ls: FakeLangSmith, **changes: Any) -> Label:
    """A label on the first item of the workspace's queue."""
    queue = _workspace(ls)["queue"]
    item = pull(LangSmithSource(queue=queue, contexts=False), ls.env()).items[0]
    return _label(item.id, item.features["origin"], **changes)


# ---------------------------------------------------------------------------------------------
# Registration and settings.


def test_import_does_not_import_the_sdk() -> None:
    code = (
        "import sys, evaluation.connectors.langsmith\n"
        "from evaluation.connectors.base import sources, sinks\n"
        "sources.get('langsmith'); sinks.get('langsmith')\n"
        "assert 'langsmith' not in sys.modules, 'the SDK was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_registered_with_the_documented_rate() -> None:
    assert sources.get("langsmith").settings is LangSmithSource
    spec = sinks.get("langsmith")
    assert spec.settings is LangSmithSink and spec.batch == 1
    assert spec.rate_per_s == RATE_PER_S == pytest.approx(2000 / 60 / 2)


@pytest.mark.parametrize(
    "given",
    [
        {},
        {"queue": "q", "project": "p"},
        {"queue": "q", "filter": 'eq(name, "x")'},
        {"project": "p", "bogus": 1},
        {"project": "p", "page_size": 500},
    ],
)
def test_settings_need_exactly_one_mode(given: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        LangSmithSource(**given)


def test_a_missing_key_is_named() -> None:
    with pytest.raises(ConnectorError, match="LANGSMITH_API_KEY is not set"):
        pull(LangSmithSource(project="p"), {})
    with pytest.raises(ConnectorError, match="LANGSMITH_API_KEY is not set"):
        make(LangSmithSink(), {"LANGSMITH_ENDPOINT": "http://127.0.0.1:9"})


def test_a_bad_endpoint_is_named() -> None:
    with pytest.raises(ConnectorError, match="LANGSMITH_ENDPOINT"):
        make(LangSmithSink(), {"LANGSMITH_API_KEY": "k" * 20, "LANGSMITH_ENDPOINT": "ftp://x"})


@pytest.mark.parametrize("suffix", ["", "/", "/api/v1", "/api"])
def test_the_older_names_and_any_endpoint_form_work(ls: FakeLangSmith, suffix: str) -> None:
    ls.add_project("p")
    env = {"LANGCHAIN_API_KEY": ls.api_key, "LANGCHAIN_ENDPOINT": ls.base_url + suffix}
    with pytest.raises(ConnectorError, match="nothing|not found") as caught:
        pull(LangSmithSource(project="missing"), env)
    assert "at http://127.0.0.1" in str(caught.value)
    assert all(c.params["path"].startswith("/api/v1/") for c in ls.calls)


# ---------------------------------------------------------------------------------------------
# Pulling.


def test_queue_pages_and_keeps_each_origin(ls: FakeLangSmith) -> None:
    made = _workspace(ls, 7)
    pulled = pull(LangSmithSource(queue=made["queue"], page_size=3), ls.env())
    assert [i.id for i in pulled.items] == made["runs"]
    offsets = [c.params["query"]["offset"] for c in ls.requests("GET", r"/runs$")]
    assert offsets == [["0"], ["3"], ["6"]]
    assert pulled.set_name == "needs review" and pulled.kind == "answer"
    first = pulled.items[0]
    assert first.query.query == "question 0 ü" and first.answer == "answer 0"
    assert first.contexts == ["doc 0"]
    origin = Origin(**first.features["origin"])
    assert (origin.tool, origin.kind, origin.id) == ("langsmith", "run", made["runs"][0])
    entry = ls.queues[made["queue"]].entries[0]
    assert origin.extra["queue_id"] == made["queue"]
    assert origin.extra["queue_run_id"] == entry["queue_run_id"]
    assert origin.extra["session_id"] == made["project"]
    assert origin.extra["trace_id"] == made["runs"][0]


def test_project_follows_cursors_and_passes_the_filters(ls: FakeLangSmith) -> None:
    made = _workspace(ls, 5)
    settings = LangSmithSource(
        project="support-bot",
        page_size=2,
        filter='eq(name, "agent")',
        start_time=datetime(2025, 1, 1, tzinfo=timezone.utc),
        contexts=False,
    )
    pulled = pull(settings, ls.env())
    assert sorted(i.id for i in pulled.items) == sorted(made["runs"])  # roots only
    queries = ls.requests("POST", "/runs/query")
    assert len(queries) == 3
    bodies = [json.loads(c.params["body"]) for c in queries]
    assert bodies[0]["session"] == [made["project"]] and bodies[0]["is_root"] is True
    assert bodies[0]["filter"] == 'eq(name, "agent")' and bodies[0]["start_time"].startswith(
        "2025-01-01"
    )
    assert (
        "cursor" not in bodies[0]
        and bodies[1]["cursor"]
        and bodies[2]["cursor"] != bodies[1]["cursor"]
    )
    assert all(b["limit"] <= 2 for b in bodies)


def test_run_type_pulls_child_runs_and_limit_caps(ls: FakeLangSmith) -> None:
    _workspace(ls, 4)
    pulled = pull(LangSmithSource(project="support-bot", run_type="retriever", limit=3), ls.env())
    assert len(pulled.items) == 3
    assert all(i.features["run_type"] == "retriever" for i in pulled.items)
    assert all(i.contexts and i.answer and i.answer.startswith("{") for i in pulled.items)


def test_experiment_reads_examples_and_evaluator_feedback(ls: FakeLangSmith) -> None:
    dataset = ls.add_dataset()
    experiment = ls.add_project("exp-1", dataset_id=dataset)
    example = ls.add_example(dataset, {"question": "2+2?"}, {"answer": "4"})
    run = ls.add_run(experiment, {"question": "2+2?"}, {"output": "four"}, example=example)
    ls.add_feedback(run, "correctness", score=True, comment="Right.", source="model")
    ls.add_feedback(run, "helpfulness", score=0.5, value="PARTIAL", source="model")
    ls.add_feedback(run, "latency", score=3.2, source="model")  # no known range: left out
    ls.add_feedback(run, "human", score=0.0, comment="a person's", source="app")
    ls.add_feedback(run, "answer", score=1.0, source="api", metadata={"hilbot": True})
    pulled = pull(LangSmithSource(experiment="exp-1"), ls.env())
    item = pulled.items[0]
    assert (
        item.query.expected_answer == "4" and item.ground_truth == ["4"] and item.answer == "four"
    )
    assert item.evaluation.scores == {"correctness": 1.0, "helpfulness": 0.5}
    assert item.evaluation.reasons == {"correctness": "Right."}
    assert (
        item.evaluation.verdict == "PARTIAL" and "correctness: Right." in item.evaluation.rationale
    )
    assert item.features["origin"]["extra"]["example_id"] == example
    assert pulled.judge == "langsmith evaluators"


def test_feedback_pages_and_can_be_left_out(ls: FakeLangSmith) -> None:
    made = _workspace(ls, 1)
    for n in range(120):
        ls.add_feedback(made["runs"][0], "judge", score=1.0 if n < 60 else 0.0, source="auto_eval")
    pulled = pull(LangSmithSource(queue=made["queue"], contexts=False), ls.env())
    assert pulled.items[0].evaluation.scores == {"judge": 0.5}
    offsets = [c.params["query"]["offset"] for c in ls.requests("GET", "/feedback$")]
    assert offsets == [["0"], ["100"]]
    calls = len(ls.calls)
    pulled = pull(LangSmithSource(queue=made["queue"], contexts=False, judge_sources=[]), ls.env())
    assert pulled.items[0].evaluation.scores == {} and pulled.judge is None
    assert not ls.requests("GET", "/feedback$")[len(offsets) :] and len(ls.calls) == calls + 2


def test_a_project_is_not_an_experiment(ls: FakeLangSmith) -> None:
    ls.add_project("plain")
    with pytest.raises(ConnectorError, match="not an experiment") as caught:
        pull(LangSmithSource(experiment="plain"), ls.env())
    assert "--project plain" in str(caught.value)


def test_a_project_by_id(ls: FakeLangSmith) -> None:
    made = _workspace(ls, 1)
    pulled = pull(LangSmithSource(project=made["project"], contexts=False), ls.env())
    assert [i.id for i in pulled.items] == made["runs"]


@pytest.mark.parametrize(
    "settings, message",
    [
        (
            {"queue": "00000000-0000-0000-0000-000000000001"},
            "annotation queue .* not found at http",
        ),
        ({"project": "nope"}, "project 'nope' not found at http"),
        ({"experiment": "nope"}, "experiment 'nope' not found at http"),
    ],
)
def test_what_is_not_there_is_named_with_a_fix(
    ls: FakeLangSmith, settings: dict, message: str
) -> None:
    with pytest.raises(ConnectorError, match=message) as caught:
        pull(LangSmithSource(**settings), ls.env())
    assert caught.value.fix and not caught.value.transient


@pytest.mark.parametrize("queue", ["not-a-uuid", "../../feedback?x=1", "q/ü/%2F", "x" * 5000])
def test_an_odd_queue_id_is_refused_before_any_request(ls: FakeLangSmith, queue: str) -> None:
    with pytest.raises(ConnectorError, match="is not a LangSmith id"):
        pull(LangSmithSource(queue=queue), ls.env())
    assert ls.calls == []


def test_null_and_odd_fields_in_answers_do_not_crash(ls: FakeLangSmith) -> None:
    project = ls.add_project("odd")
    runs = [
        ls.add_run(project, None, None, name=None, extra=None, tags=None, total_cost="x"),
        ls.add_run(project, {"input": {"nested": [1, 2]}}, {"output": None}, start_time=None),
        ls.add_run(project, "plain string", ["a", "b"], error="boom", total_cost="0.25"),
        ls.add_run(project, {"q": "ü" * 100_000}, {"answer": "\u0000\ud7ff"}),
    ]
    ls.runs[runs[0]]["start_time"] = None
    ls.add_feedback(runs[1], "k", score=None, value=None, comment=None)
    ls.add_feedback(runs[2], "inf", score=float("inf"), value={"x": [1]}, comment="")
    pulled = pull(LangSmithSource(project="odd"), ls.env())
    by_id = {i.id: i for i in pulled.items}
    assert set(by_id) == set(runs)
    assert by_id[runs[0]].query.query == "" and by_id[runs[0]].answer is None
    assert by_id[runs[2]].query.query == "plain string" and by_id[runs[2]].error == "boom"
    assert by_id[runs[2]].cost_usd == 0.25 and by_id[runs[0]].cost_usd is None
    assert len(by_id[runs[3]].query.query) == 100_000
    assert by_id[runs[1]].evaluation.scores == {} and by_id[runs[2]].evaluation.scores == {}


def test_a_server_ignoring_paging_and_conditions_still_ends_right(ls: FakeLangSmith) -> None:
    made = _workspace(ls, 4)
    ls.sloppy = True
    queued = pull(LangSmithSource(queue=made["queue"], page_size=2), ls.env())
    assert [i.id for i in queued.items] == made["runs"][:2]  # the same page again: stop
    assert [i.contexts for i in queued.items] == [["doc 0"], ["doc 1"]]
    project = pull(LangSmithSource(project="support-bot", contexts=False), ls.env())
    assert sorted(i.id for i in project.items) == sorted(made["runs"])  # no child runs


def test_a_broken_answer_is_a_connector_error(ls: FakeLangSmith) -> None:
    _workspace(ls, 1)
    ls.fail_next(200, path="/runs/query", body="{not json")
    with pytest.raises(ConnectorError, match="bad response"):
        pull(LangSmithSource(project="support-bot"), ls.env())
    ls.fail_next(200, path="/runs/query", body='{"runs": "nope"}')
    with pytest.raises(ConnectorError, match="bad response"):
        pull(LangSmithSource(project="support-bot"), ls.env())


@pytest.mark.parametrize(
    "inputs, text",
    [
        ("just text", "just text"),
        ({"question": "Q?", "context": "c"}, "Q?"),
        (
            {
                "input": {
                    "messages": [
                        {"type": "human", "content": "hi"},
                        {"type": "ai", "content": "yo"},
                    ]
                }
            },
            "hi",
        ),
        (
            {
                "messages": [
                    [
                        {
                            "lc": 1,
                            "type": "constructor",
                            "id": ["langchain", "schema", "messages", "HumanMessage"],
                            "kwargs": {"content": [{"type": "text", "text": "blocks"}]},
                        }
                    ]
                ]
            },
            "blocks",
        ),
        ({"only": 7}, "7"),
        ({"a": 1, "b": 2}, '{"a": 1, "b": 2}'),
    ],
)
def test_query_shapes(inputs: Any, text: str) -> None:
    assert _items.query_text(inputs) == text


@pytest.mark.parametrize(
    "outputs, text",
    [
        ({"output": "o"}, "o"),
        (
            {
                "generations": [
                    [
                        {
                            "text": "gen",
                            "message": {
                                "lc": 1,
                                "id": ["x", "AIMessage"],
                                "kwargs": {"content": "from message"},
                            },
                        }
                    ]
                ]
            },
            "from message",
        ),
        (
            {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]},
            "a",
        ),
        (None, None),
        ({}, None),
    ],
)
def test_answer_shapes(outputs: Any, text: str | None) -> None:
    assert _items.answer_text(outputs) == text


# ---------------------------------------------------------------------------------------------
# Sending.


def test_a_label_becomes_feedback_with_its_own_id(ls: FakeLangSmith) -> None:
    label = _pulled_label(ls, correction="Better answer")
    sink = make(LangSmithSink(), ls.env())
    assert sink.send([label]) == [Sent(remote_id=label.remote_id, version="v1")]
    stored = ls.feedback[label.remote_id]
    assert stored["run_id"] == label.origin.id and stored["key"] == "answer"
    assert (stored["score"], stored["value"], stored["comment"]) == (1.0, "good", "Clear. ✓")
    assert stored["correction"] == {"output": "Better answer"}
    assert stored["session_id"] == label.origin.extra["session_id"]
    source = stored["feedback_source"]
    assert source["type"] == "api"
    assert source["metadata"]["hilbot"] is True and source["metadata"]["reviewer"] == "telegram:42"
    assert source["metadata"]["reviewer_name"] == "Ana" and source["metadata"]["gold"] is False
    post = ls.requests("POST", "/feedback$")
    assert len(post) == 1 and "trace_id" not in post[0].params["body"]


def test_names_scales_and_gold(ls: FakeLangSmith) -> None:
    label = _pulled_label(
        ls, dimension="correct", judgment="no", score=0.0, options=["yes", "no"], gold=True
    )
    five = label.model_copy(
        update={
            "dimension": "quality",
            "judgment": "4",
            "score": 0.75,
            "number": 4.0,
            "options": ["1", "2", "3", "4", "5"],
            "remote_id": remote_id("five"),
        }
    )
    sink = make(LangSmithSink(names={"correct": "is_correct"}, score="number"), ls.env())
    sink.send([label, five])
    boolean = ls.feedback[label.remote_id]
    assert boolean["key"] == "is_correct" and boolean["score"] is False and boolean["value"] == "no"
    assert boolean["feedback_source"]["metadata"]["gold"] is True
    assert ls.feedback[five.remote_id]["score"] == 4.0


def test_a_resend_writes_nothing_and_a_correction_updates(ls: FakeLangSmith) -> None:
    label = _pulled_label(ls)
    sink = make(LangSmithSink(), ls.env())
    sink.send([label])
    writes = len(ls.requests("POST", "/feedback$")) + len(ls.requests("PATCH"))
    sink.send([label])
    assert len(ls.requests("POST", "/feedback$")) + len(ls.requests("PATCH")) == writes
    corrected = label.model_copy(
        update={"judgment": "bad", "score": 0.0, "note": None, "version": "v2"}
    )
    assert sink.send([corrected]) == [Sent(remote_id=label.remote_id, version="v2")]
    assert [f for f in ls.feedback.values() if f["feedback_source"]["type"] == "api"] == [
        ls.feedback[label.remote_id]
    ]
    stored = ls.feedback[label.remote_id]
    assert (stored["score"], stored["value"], stored["comment"]) == (0.0, "bad", None)
    assert sink.confirm([Sent(remote_id=label.remote_id, version="v2")]) == [label.remote_id]


@pytest.mark.parametrize("duplicate_post", ["conflict", "ignore", "upsert"])
def test_a_write_racing_another_still_leaves_one_feedback(duplicate_post: str) -> None:
    server = FakeLangSmith(duplicate_post=duplicate_post).start()
    try:
        label = _pulled_label(server)
        sink = make(LangSmithSink(), server.env())
        sink.send([label])
        corrected = label.model_copy(update={"judgment": "ok", "score": 0.5, "version": "v2"})
        server.fail_next(404, method="GET", path="/feedback/")  # the read misses the first write
        sink.send([corrected])
        stored = server.feedback[label.remote_id]
        assert len(server.feedback) == 1
        confirmed = sink.confirm([Sent(remote_id=label.remote_id, version="v2")])
        if duplicate_post == "ignore":  # the platform kept the old value: not confirmed
            assert stored["value"] == "good" and confirmed == []
        else:
            assert stored["value"] == "ok" and confirmed == [label.remote_id]
    finally:
        server.stop()


def test_confirm_reads_back_and_catches_a_dropped_value(ls: FakeLangSmith) -> None:
    label = _pulled_label(ls)
    sink = make(LangSmithSink(), ls.env())
    sent = sink.send([label])
    assert sink.confirm(sent) == [label.remote_id]
    assert make(LangSmithSink(), ls.env()).confirm(sent) == [label.remote_id]  # from the metadata
    assert sink.confirm([Sent(remote_id=remote_id("never sent"), version="v1")]) == []
    assert (
        make(LangSmithSink(), ls.env()).confirm([Sent(remote_id=label.remote_id, version="v9")])
        == []
    )
    ls.drop_fields = {"comment"}
    other = label.model_copy(update={"remote_id": remote_id("other"), "version": "v3"})
    dropped = sink.send([other])
    assert ls.feedback[other.remote_id]["comment"] is None
    assert sink.confirm(dropped) == []
    assert make(LangSmithSink(), ls.env()).confirm(dropped) == []


def test_a_complete_item_leaves_its_queue(ls: FakeLangSmith) -> None:
    label = _pulled_label(ls, complete=True)
    queue = label.origin.extra["queue_id"]
    sink = make(LangSmithSink(), ls.env())
    sink.send([label])
    assert label.origin.id not in ls.queue_run_ids(queue)
    deleted = ls.requests("DELETE")
    assert deleted[0].params["path"].endswith(label.origin.extra["queue_run_id"])
    sink.send([label])  # gone already: no error
    assert len(ls.queue_run_ids(queue)) == 2


def test_queue_removal_by_run_id_and_keep(ls: FakeLangSmith) -> None:
    ls.delete_by_run_id = True
    label = _pulled_label(ls, complete=True)
    label.origin.extra.pop("queue_run_id")
    queue = label.origin.extra["queue_id"]
    make(LangSmithSink(on_complete="keep"), ls.env()).send([label])
    assert label.origin.id in ls.queue_run_ids(queue)
    make(LangSmithSink(), ls.env()).send([label])
    assert label.origin.id not in ls.queue_run_ids(queue)


def test_hostile_labels(ls: FakeLangSmith) -> None:
    label = _pulled_label(
        ls, note="ü" * 200_000 + "\u202e", reviewer="slack:U1/../x", judgment="göod"
    )
    odd = label.model_copy(update={"remote_id": "not a uuid / ü", "version": "v2"})
    sink = make(LangSmithSink(), ls.env())
    sink.send([label])
    assert ls.feedback[label.remote_id]["comment"] == label.note
    assert sink.confirm(sink.send([odd])) == ["not a uuid / ü"]
    foreign = label.model_copy(update={"origin": Origin(tool="langfuse", kind="trace", id="t-1")})
    with pytest.raises(ConnectorError, match="did not come from a LangSmith run"):
        sink.send([foreign])
    bad_run = label.model_copy(update={"origin": Origin(tool="langsmith", kind="run", id="../x")})
    with pytest.raises(ConnectorError, match="did not come from a LangSmith run"):
        sink.send([bad_run])
    with pytest.raises(ConnectorError, match="180"):
        make(LangSmithSink(names={"answer": "k" * 181}), ls.env()).send([label])


def test_feedback_on_a_run_that_is_gone_is_refused_for_good(ls: FakeLangSmith) -> None:
    label = _pulled_label(ls)
    del ls.runs[label.origin.id]
    with pytest.raises(ConnectorError, match="not found") as caught:
        make(LangSmithSink(), ls.env()).send([label])
    assert not caught.value.transient
    assert len(ls.requests("POST", "/feedback$")) == 1  # the SDK's retries on 404 are off


# ---------------------------------------------------------------------------------------------
# Failures.


def _send_one(
    ls: FakeLangSmith, env: dict[str, str] | None = None, timeout_s: float = 30.0
) -> None:
    label = _label("i", {"tool": "langsmith", "kind": "run", "id": next(iter(ls.runs))})
    make(LangSmithSink(timeout_s=timeout_s), env or ls.env()).send([label])


@pytest.mark.parametrize("status, retry_after, expected", [(429, 7, 7.0), (429, None, 1.0)])
def test_rate_limits_carry_the_wait(
    ls: FakeLangSmith, status: int, retry_after: int | None, expected: float
) -> None:
    _workspace(ls, 1)
    ls.fail_next(status, retry_after=retry_after)
    with pytest.raises(ConnectorError) as caught:
        _send_one(ls)
    assert caught.value.retry_after == expected and caught.value.transient
    assert len(ls.calls) == 1  # no hidden retry


@pytest.mark.parametrize("status", [500, 502, 503, 504, 408])
def test_server_errors_are_transient_and_not_retried_inside(ls: FakeLangSmith, status: int) -> None:
    _workspace(ls, 1)
    ls.fail_next(status, method="POST")
    with pytest.raises(ConnectorError) as caught:
        _send_one(ls)
    assert caught.value.transient and caught.value.retry_after is None
    assert len(ls.requests("POST")) == 1
    assert "http://127.0.0.1" in str(caught.value)


def test_an_outage_fails_a_pull_transiently(ls: FakeLangSmith) -> None:
    made = _workspace(ls, 1)
    ls.outage(503)
    with pytest.raises(ConnectorError) as caught:
        pull(LangSmithSource(queue=made["queue"]), ls.env())
    assert caught.value.transient and len(ls.calls) == 1
    ls.clear_faults()
    assert len(pull(LangSmithSource(queue=made["queue"]), ls.env()).items) == 1


def test_a_wrong_key_and_a_forbidden_one(ls: FakeLangSmith) -> None:
    made = _workspace(ls, 1)
    with pytest.raises(ConnectorError, match="refused the API key") as caught:
        pull(
            LangSmithSource(queue=made["queue"]), ls.env(LANGSMITH_API_KEY="lsv2_wrong_key_123456")
        )
    assert "LANGSMITH_API_KEY" in caught.value.fix and not caught.value.transient
    assert "lsv2_wrong_key_123456" not in str(caught.value)
    ls.forbidden_keys.add("lsv2_readonly_key_123456")
    with pytest.raises(ConnectorError, match="403") as caught:
        _send_one(ls, ls.env(LANGSMITH_API_KEY="lsv2_readonly_key_123456"))
    assert "LANGSMITH_WORKSPACE_ID" in caught.value.fix


def test_a_refused_connection_is_transient() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        "LANGSMITH_API_KEY": "lsv2_some_key_123456",
        "LANGSMITH_ENDPOINT": f"http://127.0.0.1:{port}",
    }
    with pytest.raises(ConnectorError, match="cannot reach LangSmith") as caught:
        pull(LangSmithSource(project="p"), env)
    assert caught.value.transient and "LANGSMITH_ENDPOINT" in caught.value.fix


def test_a_slow_answer_times_out_transiently(ls: FakeLangSmith) -> None:
    _workspace(ls, 1)
    ls.hang(3.0, method="GET")
    with pytest.raises(ConnectorError, match="did not answer") as caught:
        _send_one(ls, timeout_s=0.5)
    assert caught.value.transient


def test_an_invalid_request_is_permanent(ls: FakeLangSmith) -> None:
    _workspace(ls, 1)
    ls.fail_next(422, method="POST")
    with pytest.raises(ConnectorError, match="422") as caught:
        _send_one(ls)
    assert not caught.value.transient


def test_no_background_threads_are_left(ls: FakeLangSmith) -> None:
    before = {t.ident for t in threading.enumerate()}
    label = _pulled_label(ls)
    sink = make(LangSmithSink(), ls.env())
    sink.confirm(sink.send([label]))
    extra = [t.name for t in threading.enumerate() if t.ident not in before]
    assert extra == []


# ---------------------------------------------------------------------------------------------
# Through hilbot: pull into a run, rate, push, push again.


def test_pull_rate_push_round_trip(ls: FakeLangSmith, store: Store) -> None:
    made = _workspace(ls, 2)
    config = load_config(None)
    settings = options_to_settings("langsmith", ["--queue", made["queue"], "--page-size", "1"])
    report = pull_run(store, config, "langsmith", settings, ls.env())
    run = store.load_run(report.run_id)
    assert [i.id for i in run.items] == made["runs"]
    who = Reviewer(platform="telegram", id="7", name="Ana")
    option = config.scale_for("answer").options[0]
    for n, item in enumerate(run.items):
        store.ratings.append(
            Rating(
                run_id=report.run_id,
                item_id=item.id,
                dimension="answer",
                reviewer=who,
                channel="telegram",
                idempotency_key=f"k{n}",
                judgment=option.value,
                score=option.score,
                note="Fine ü",
                timestamp=WHEN,
            )
        )
    pushed = push_command(store, config, report.run_id, "langsmith", [], ls.env(), seconds=10)
    assert (pushed.sent, pushed.confirmed, pushed.failed) == (2, 2, [])
    written = {f["run_id"]: f for f in ls.feedback.values()}
    assert set(written) == set(made["runs"])
    assert all(f["value"] == option.value and f["comment"] == "Fine ü" for f in written.values())
    assert (
        ls.queue_run_ids(made["queue"]) == []
    )  # k = 1: each item is complete, so it left the queue
    posts = len(ls.requests("POST", "/feedback$"))
    again = push_command(store, config, report.run_id, "langsmith", [], ls.env(), seconds=10)
    assert again.sent == 0 and len(ls.requests("POST", "/feedback$")) == posts
