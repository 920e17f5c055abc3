"""The Phoenix connector, driven through the real ``phoenix.client`` SDK against a fake Phoenix.

Pulling: spans as answer items (chat turns, answer, model, usage, latency, the LLM judges'
annotations as the hidden AI evaluation), cursor pages, every filter, RETRIEVER spans as search
items (per span and per document), an old server without filters. Sending: HUMAN span and
document annotations, upserts by remote id, reviewers kept apart, gold marked, batches, confirm
reading back (a dropped value is not confirmed, a later process confirms by identifier), the
outbox end to end. Errors: no host, bad host, 401, 404, 429 with Retry-After, 5xx, outages,
refused connections, timeouts, junk answers, hostile spans.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from evaluation.connectors import phoenix as connector
from evaluation.connectors.base import (
    ConnectorError,
    Label,
    Origin,
    Sent,
    remote_id,
    sinks,
    sources,
)
from evaluation.connectors.phoenix import PhoenixSinkSettings, PhoenixSourceSettings, make, pull
from evaluation.connectors.phoenix import _client as client_module
from tests.conftest import ROOT
from tests.fakes.phoenix_api import API_KEY, EPOCH, FakePhoenix, global_id

PROJECT = "support bot"


@pytest.fixture
def phx():
    with FakePhoenix(api_key=API_KEY) as server:
        server.add_project(PROJECT)
        yield server


def chat_span(
    server: FakePhoenix,
    question: str = "How do I reset my password?",
    answer: str = "Use the link.",
    **kwargs: Any,
) -> str:
    """An LLM span as OpenInference instrumentation writes it."""
    attributes = {
        "llm": {
            "model_name": "gpt-4o-mini",
            "token_count": {"prompt": 41, "completion": 9},
            "cost": {"total": 0.00021},
            "input_messages": [
                {"message": {"role": "system", "content": "Be brief."}},
                {"message": {"role": "user", "content": question}},
            ],
            "output_messages": [{"message": {"role": "assistant", "content": answer}}],
        },
        "input": {"value": json.dumps({"messages": [question]}), "mime_type": "application/json"},
        "output": {"value": answer},
        "session": {"id": "s-1"},
    }
    return server.add_span(
        PROJECT, kind="LLM", name="ChatCompletion", attributes=attributes, **kwargs
    )


def retriever_span(
    server: FakePhoenix, query: str = "reset password", docs: int = 3, **kwargs: Any
) -> str:
    documents = [
        {
            "document": {
                "id": f"kb-{n}",
                "content": f"Passage {n}",
                "score": 0.9 - n / 10,
                "metadata": json.dumps({"source": f"https://kb.example/{n}"}),
            }
        }
        for n in range(docs)
    ]
    return server.add_span(
        PROJECT,
        kind="RETRIEVER",
        name="retrieve",
        attributes={"input": {"value": query}, "retrieval": {"documents": documents}},
        **kwargs,
    )


def settings(**kwargs: Any) -> PhoenixSourceSettings:
    return PhoenixSourceSettings(project=PROJECT, **kwargs)


def label(
    item_id: str,
    origin: dict,
    *,
    judgment: str = "good",
    score: float = 1.0,
    version: str = "v1",
    reviewer: str = "telegram:7",
    note: str | None = None,
    dimension: str = "answer",
    gold: bool = False,
    number: float | None = None,
) -> Label:
    return Label(
        run_id="run-1",
        item_id=item_id,
        dimension=dimension,
        reviewer=reviewer,
        reviewer_name="Ana",
        judgment=judgment,
        score=score,
        number=number,
        note=note,
        gold=gold,
        origin=Origin(**origin),
        remote_id=remote_id("run-1", item_id, dimension, "gold" if gold else reviewer),
        version=version,
        timestamp=datetime(2026, 1, 6, tzinfo=timezone.utc),
    )


def pulled_label(server: FakePhoenix, span_id: str, **kwargs: Any) -> Label:
    """A label on the pulled item of ``span_id``."""
    item = next(i for i in pull(settings(), server.env()).items if i.id == span_id)
    return label(item.id, item.features["origin"], **kwargs)


# ----------------------------------------------------------------------------------------- wiring


def test_importing_the_connector_imports_no_sdk():
    code = (
        "import sys, evaluation.connectors.phoenix; "
        "assert not [m for m in sys.modules if m.split('.')[0] == 'phoenix'], sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_registered_as_source_and_sink_with_batches():
    assert sources.get("phoenix").settings is PhoenixSourceSettings
    spec = sinks.get("phoenix")
    assert (spec.settings, spec.batch, spec.rate_per_s) == (PhoenixSinkSettings, 100, 20.0)


@pytest.mark.parametrize(
    "bad",
    [
        {"project": PROJECT, "queue": "x"},
        {"project": "a/b"},
        {"project": ""},
        {"project": PROJECT, "per_document": True},
        {"project": PROJECT, "documents": True, "span_kind": "LLM"},
        {"project": PROJECT, "span_kind": "BOGUS"},
        {"project": PROJECT, "start_time": "2026-01-02", "end_time": "2026-01-01"},
    ],
)
def test_bad_source_settings_are_refused(bad):
    with pytest.raises(ValueError):
        PhoenixSourceSettings(**bad)


def test_span_kind_is_case_insensitive_and_naive_times_are_utc():
    chosen = PhoenixSourceSettings(
        project=PROJECT, span_kind="retriever", start_time="2026-01-01T00:00"
    )
    assert chosen.span_kind == "RETRIEVER" and chosen.start_time.tzinfo is timezone.utc


# ---------------------------------------------------------------------------------------- pulling


def test_an_llm_span_becomes_an_answer_item_with_its_origin(phx):
    span_id = chat_span(phx, trace_id="t" * 32)
    pulled = pull(settings(), phx.env())
    assert (pulled.kind, pulled.set_name, pulled.judge) == ("answer", PROJECT, None)
    assert phx.base_url in pulled.source
    item = pulled.items[0]
    assert item.id == span_id and item.query.query == "How do I reset my password?"
    assert (item.answer, item.model, item.usage) == (
        "Use the link.",
        "gpt-4o-mini",
        {"input_tokens": 41, "output_tokens": 9},
    )
    assert item.latency_ms == pytest.approx(1200.0) and item.cost_usd == pytest.approx(0.00021)
    assert item.features["origin"] == {
        "tool": "phoenix",
        "kind": "span",
        "id": span_id,
        "extra": {"trace_id": "t" * 32, "project": PROJECT},
    }
    assert item.features["span_kind"] == "LLM" and item.features["session_id"] == "s-1"


def test_a_multi_turn_chat_shows_the_turns_up_to_the_last_question(phx):
    turns = [
        {"message": {"role": r, "content": c}}
        for r, c in [
            ("system", "secret system prompt"),
            ("user", "Hi"),
            ("assistant", "Hello!"),
            ("user", "Refunds?"),
        ]
    ]
    phx.add_span(
        PROJECT,
        attributes={"llm": {"input_messages": turns}, "output": {"value": "Within 30 days."}},
    )
    item = pull(settings(), phx.env()).items[0]
    assert item.query.query == "user: Hi\n\nassistant: Hello!\n\nuser: Refunds?"
    assert "secret" not in item.query.query and item.answer == "Within 30 days."


def test_json_input_values_give_their_text_field(phx):
    phx.add_span(
        PROJECT,
        kind="CHAIN",
        attributes={
            "input": {"value": '{"question": "Why?", "k": 3}', "mime_type": "application/json"},
            "output": {"value": '{"answer": "Because."}'},
        },
    )
    item = pull(settings(), phx.env()).items[0]
    assert (item.query.query, item.answer) == ("Why?", "Because.")


def test_llm_judge_annotations_become_the_hidden_ai_evaluation(phx):
    span_id = chat_span(phx)
    phx.annotate(span_id, "correctness", label="correct", score=1.0, explanation="Matches the KB.")
    phx.annotate(
        span_id, "hallucination", kind="CODE", label="factual", score=0.0, explanation="No claims."
    )
    phx.annotate(span_id, "stars", label="4", score=4.0)  # not 0–1: not a hilbot score
    phx.annotate(
        span_id,
        "mine",
        kind="HUMAN",
        label="bad",
        score=0.0,
        explanation="a person's, not the AI's",
    )
    pulled = pull(settings(overall="correctness"), phx.env())
    evaluation = pulled.items[0].evaluation
    assert pulled.judge == "phoenix" and evaluation.judge == "phoenix"
    assert evaluation.scores == {"correctness": 1.0, "hallucination": 0.0, "overall": 1.0}
    assert (evaluation.verdict, evaluation.rationale) == ("correct", "Matches the KB.")
    assert evaluation.reasons == {"correctness": "Matches the KB.", "hallucination": "No claims."}


def test_a_single_judge_is_the_headline_and_none_gives_no_evaluation(phx):
    judged, plain = chat_span(phx), chat_span(phx)
    phx.annotate(judged, "qa", label="incorrect", score=0.0, explanation="Wrong link.")
    items = {i.id: i for i in pull(settings(), phx.env()).items}
    assert items[judged].evaluation.scores == {"qa": 0.0, "overall": 0.0}
    assert items[judged].evaluation.verdict == "incorrect"
    assert items[plain].evaluation.scores == {} and items[plain].evaluation.verdict is None


def test_spans_come_in_cursor_pages_newest_first(phx):
    ids = [chat_span(phx, question=f"q{n}") for n in range(250)]
    pulled = pull(settings(limit=230, annotations=False), phx.env())
    assert [i.id for i in pulled.items] == ids[::-1][:230]
    pages = phx.requests("GET /v1/projects/support bot/spans")
    assert [p.params["query"].get("limit") for p in pages] == ["100", "100", "30"]
    assert "cursor" not in pages[0].params["query"] and pages[1].params["query"]["cursor"]


def test_annotations_are_read_for_at_most_100_spans_a_call(phx):
    for n in range(150):
        chat_span(phx, question=f"q{n}")
    pull(settings(limit=150), phx.env())
    reads = phx.requests("GET /v1/projects/support bot/span_annotations")
    assert sorted(len(r.params["query"]["span_ids"]) for r in reads) == [50, 100]


def test_filters_go_to_the_server_and_are_checked_again(phx):
    root = chat_span(phx, start_time=EPOCH + timedelta(hours=2))
    chat_span(phx, parent_id=root, start_time=EPOCH + timedelta(hours=2))
    chat_span(phx, start_time=EPOCH - timedelta(days=1))
    retriever_span(phx, start_time=EPOCH + timedelta(hours=2))
    pulled = pull(
        settings(
            span_kind="LLM",
            name="ChatCompletion",
            root_spans_only=True,
            start_time=EPOCH,
            end_time=EPOCH + timedelta(days=1),
        ),
        phx.env(),
    )
    assert [i.id for i in pulled.items] == [root]
    query = phx.requests("GET /v1/projects/support bot/spans")[0].params["query"]
    assert (
        query["span_kind"] == "LLM"
        and query["name"] == "ChatCompletion"
        and query["parent_id"] == "null"
    )
    assert query["start_time"].startswith("2026-01-05T09:00:00") and query["end_time"].startswith(
        "2026-01-06"
    )


def test_a_server_that_hides_its_version_is_read_unfiltered_and_filtered_here(phx):
    phx.version = None
    llm = chat_span(phx)
    retriever_span(phx)
    pulled = pull(settings(span_kind="LLM"), phx.env())
    assert [i.id for i in pulled.items] == [llm]
    query = phx.requests("GET /v1/projects/support bot/spans")[-1].params["query"]
    assert "span_kind" not in query and query["limit"] == "100"


def test_retriever_spans_become_search_items_ranked_by_position(phx):
    span_id = retriever_span(phx)
    chat_span(phx)
    phx.add_span(PROJECT, kind="RETRIEVER", attributes={"input": {"value": "nothing found"}})
    pulled = pull(settings(documents=True), phx.env())
    assert pulled.kind == "search" and [i.id for i in pulled.items] == [span_id]
    results = pulled.items[0].results
    assert [(r.rank, r.path, r.snippet) for r in results] == [
        (n + 1, f"https://kb.example/{n}", f"Passage {n}") for n in range(3)
    ]
    assert (
        results[0].score == pytest.approx(0.9) and pulled.items[0].query.query == "reset password"
    )
    assert (
        phx.requests("GET /v1/projects/support bot/spans")[0].params["query"]["span_kind"]
        == "RETRIEVER"
    )


def test_per_document_items_each_carry_their_document_position(phx):
    span_id = retriever_span(phx, docs=2, trace_id="a" * 32)
    items = pull(settings(documents=True, per_document=True), phx.env()).items
    assert [i.id for i in items] == [f"{span_id}:0", f"{span_id}:1"]
    assert items[1].results[0].snippet == "Passage 1" and items[1].query.query == "reset password"
    assert items[1].features["origin"] == {
        "tool": "phoenix",
        "kind": "document",
        "id": f"{span_id}:1",
        "extra": {
            "trace_id": "a" * 32,
            "project": PROJECT,
            "span_id": span_id,
            "document_position": 1,
        },
    }


def test_a_project_is_found_by_its_id_and_by_an_odd_name(phx):
    odd = "ünïcode % proj+ect"
    project_id = phx.add_project(odd)
    phx.add_span(odd, attributes={"input": {"value": "q"}})
    assert len(pull(PhoenixSourceSettings(project=project_id), phx.env()).items) == 1
    assert len(pull(PhoenixSourceSettings(project=odd), phx.env()).items) == 1


def test_hostile_spans_never_crash_the_pull(phx):
    huge = "x" * 1_000_000
    phx.add_span(
        PROJECT,
        raw={
            "name": None,
            "context": {"span_id": "ok-1", "trace_id": None},
            "span_kind": None,
            "attributes": None,
            "start_time": "yesterday",
            "end_time": None,
            "status_code": None,
        },
    )
    phx.add_span(PROJECT, raw={"name": "no context", "context": "junk", "attributes": {}})
    phx.add_span(
        PROJECT,
        raw={
            "context": {"span_id": "odd/\u202e\u0000id"},
            "span_kind": "LLM",
            "status_code": "ERROR",
            "status_message": "",
            "events": [{"name": "exception", "attributes": {"exception.message": "boom"}}],
            "attributes": {
                "input.value": 42,
                "output.value": [huge, None],
                "llm.token_count.prompt": True,
                "llm.cost.total": -1,
                "llm.input_messages.0.message.contents.0.message_content.text": "hi",
                "retrieval.documents.99999999.document.content": "skipped",
                "deep": {"a": {"b": {"c": [[[{"d": None}]]]}}},
            },
        },
    )
    phx.add_span(
        PROJECT, raw={"context": {"span_id": "ok-1"}, "attributes": {"input.value": "duplicate id"}}
    )
    items = {i.id: i for i in pull(settings(), phx.env()).items}
    assert set(items) == {"ok-1", "odd/\u202e\u0000id"}
    odd = items["odd/\u202e\u0000id"]
    assert odd.query.query == "hi" and odd.error == "boom" and len(odd.answer) > 1_000_000
    assert odd.usage == {} and odd.cost_usd is None and odd.contexts == []
    assert (
        items["ok-1"].query.query == "duplicate id" and items["ok-1"].latency_ms is None
    )  # the newest of the two


def test_junk_annotation_values_are_left_out(phx):
    span_id = chat_span(phx)
    phx.annotate(span_id, "nan", score=float("nan"), label="x")
    phx.annotate(span_id, "text-score", label=None, explanation=None)
    phx.span_annotations[max(phx.span_annotations)]["result"] = {"score": "0.5", "label": 3}
    evaluation = pull(settings(), phx.env()).items[0].evaluation
    assert evaluation.scores == {} and evaluation.verdict is None


# ------------------------------------------------------------------------------- reaching Phoenix


def test_no_host_is_a_one_line_error_naming_the_variable():
    with pytest.raises(ConnectorError, match="PHOENIX_COLLECTOR_ENDPOINT is not set") as caught:
        pull(settings(), {})
    assert not caught.value.transient


def test_a_host_that_is_no_url_is_named():
    with pytest.raises(ConnectorError, match="PHOENIX_BASE_URL is not an http"):
        pull(settings(), {"PHOENIX_BASE_URL": "localhost:6006"})


def test_the_collector_endpoint_may_carry_the_traces_path_and_base_url_works_too(phx):
    chat_span(phx)
    for env in (
        {"PHOENIX_COLLECTOR_ENDPOINT": phx.base_url + "/v1/traces"},
        {"PHOENIX_BASE_URL": phx.base_url},
    ):
        assert len(pull(settings(), {**env, "PHOENIX_API_KEY": API_KEY}).items) == 1


def test_the_key_is_sent_as_a_bearer_token_and_only_from_env(phx, monkeypatch):
    chat_span(phx)
    monkeypatch.setenv("PHOENIX_API_KEY", "from-the-process-not-the-env-mapping")
    monkeypatch.setenv("PHOENIX_CLIENT_HEADERS", "x-leak=1")
    pull(settings(), {**phx.env(), "PHOENIX_CLIENT_HEADERS": "x-team=qa"})
    headers = phx.requests("GET /v1/projects")[0].params["headers"]
    assert (
        headers["Authorization"] == f"Bearer {API_KEY}"
        and headers["x-team"] == "qa"
        and "x-leak" not in headers
    )
    with pytest.raises(ConnectorError, match="HTTP 401") as caught:
        pull(settings(), {"PHOENIX_COLLECTOR_ENDPOINT": phx.base_url})
    assert "PHOENIX_API_KEY" in str(caught.value) and not caught.value.transient


def test_a_refused_key_says_so(phx):
    with pytest.raises(ConnectorError, match="was refused"):
        pull(settings(), {**phx.env(), "PHOENIX_API_KEY": "wrong"})


def test_an_unknown_project_is_a_permanent_error_naming_it_and_the_host(phx):
    with pytest.raises(ConnectorError) as caught:
        pull(PhoenixSourceSettings(project="nope"), phx.env())
    assert "no project 'nope'" in str(caught.value) and phx.base_url in str(caught.value)
    assert not caught.value.transient


def test_429_waits_the_retry_after_it_names(phx):
    phx.fail_next(429, retry_after=7, path="/v1/projects")
    with pytest.raises(ConnectorError) as caught:
        pull(settings(), phx.env())
    assert caught.value.retry_after == 7 and caught.value.transient


@pytest.mark.parametrize(
    "header, wait",
    [
        (None, 1.0),
        ("1.5", 1.5),
        ("junk", 1.0),
        ("-3", 0.0),
        ("99999", 3600.0),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
    ],
)
def test_retry_after_headers_are_read_sanely(header, wait):
    assert client_module.retry_after(header) == wait


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_transient(phx, status):
    phx.fail_next(status, path="/v1/projects")
    with pytest.raises(ConnectorError, match=f"HTTP {status}") as caught:
        pull(settings(), phx.env())
    assert caught.value.transient and caught.value.retry_after is None


def test_an_outage_and_a_closed_port_are_transient(phx):
    phx.outage(30)
    with pytest.raises(ConnectorError, match="cannot reach") as caught:
        pull(settings(), phx.env())
    assert caught.value.transient
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConnectorError, match="cannot reach") as caught:
        pull(settings(), {"PHOENIX_COLLECTOR_ENDPOINT": f"http://127.0.0.1:{port}"})
    assert caught.value.transient


def test_a_slow_answer_is_a_transient_timeout(phx, monkeypatch):
    monkeypatch.setattr(client_module, "TIMEOUT_S", 0.2)
    phx.stall_next(1.0)
    with pytest.raises(ConnectorError, match="no answer") as caught:
        make(PhoenixSinkSettings(), phx.env()).send(
            [label("x", {"tool": "phoenix", "kind": "span", "id": "x"})]
        )
    assert caught.value.transient


def test_an_answer_that_is_not_phoenix_is_one_line(phx):
    phx.fail_next(200, body="<html>proxy login</html>", path="/v1/projects")
    with pytest.raises(ConnectorError, match="not what Phoenix sends") as caught:
        pull(settings(), phx.env())
    assert "\n" not in str(caught.value)


# ---------------------------------------------------------------------------------------- sending


def test_a_label_becomes_a_human_span_annotation(phx):
    span_id = chat_span(phx)
    sent_label = pulled_label(phx, span_id, note="Link is right; tone is curt.")
    sink = make(PhoenixSinkSettings(), phx.env())
    assert sink.send([sent_label]) == [Sent(remote_id=sent_label.remote_id, version="v1")]
    [held] = phx.annotations_on(span_id)
    assert (held["name"], held["annotator_kind"], held["identifier"]) == (
        "answer",
        "HUMAN",
        sent_label.remote_id,
    )
    assert held["result"] == {
        "label": "good",
        "score": 1.0,
        "explanation": "Link is right; tone is curt.",
    }
    assert held["metadata"] == {
        "reviewer": "telegram:7",
        "reviewer_name": "Ana",
        "gold": False,
        "version": "v1",
        "run_id": "run-1",
        "item_id": span_id,
        "source": "hilbot",
    }
    post = phx.requests("POST /v1/span_annotations")[0]
    assert post.params["query"] == {"sync": "true"}


def test_names_map_dimensions_and_scores_can_be_the_scales_numbers(phx):
    span_id = chat_span(phx)
    item = pull(settings(), phx.env()).items[0]
    rated = label(
        item.id,
        item.features["origin"],
        judgment="4",
        score=0.75,
        number=4,
        dimension="completeness",
    )
    make(
        PhoenixSinkSettings(names={"completeness": "Completeness (human)"}, score="number"),
        phx.env(),
    ).send([rated])
    [held] = phx.annotations_on(span_id)
    assert held["name"] == "Completeness (human)" and held["result"]["score"] == 4
    assert held["result"]["label"] == "4" and held["metadata"]["number"] == 4


def test_sending_twice_and_correcting_keep_one_annotation_with_the_latest_value(phx):
    span_id = chat_span(phx)
    first = pulled_label(phx, span_id)
    sink = make(PhoenixSinkSettings(), phx.env())
    sink.send([first])
    sink.send([first])
    corrected = first.model_copy(
        update={"judgment": "bad", "score": 0.0, "version": "v2", "note": "Wrong link."}
    )
    sink.send([corrected])
    [held] = phx.annotations_on(span_id)
    assert held["result"] == {"label": "bad", "score": 0.0, "explanation": "Wrong link."}
    assert held["metadata"]["version"] == "v2"


def test_two_reviewers_and_a_gold_label_are_three_annotations(phx):
    span_id = chat_span(phx)
    ana, bo = (
        pulled_label(phx, span_id),
        pulled_label(phx, span_id, reviewer="slack:U2", judgment="bad", score=0),
    )
    gold = pulled_label(phx, span_id, reviewer="terminal:lead", gold=True)
    make(PhoenixSinkSettings(), phx.env()).send([ana, bo, gold])
    held = phx.annotations_on(span_id)
    assert len(phx.requests("POST /v1/span_annotations")) == 1  # one batch
    assert {(h["name"], h["identifier"], h["metadata"]["gold"]) for h in held} == {
        ("answer", ana.remote_id, False),
        ("answer", bo.remote_id, False),
        ("answer", gold.remote_id, True),
    }


def test_document_labels_are_document_annotations_named_per_reviewer(phx):
    span_id = retriever_span(phx)
    item = pull(settings(documents=True, per_document=True), phx.env()).items[1]
    ana = label(item.id, item.features["origin"], dimension="relevance")
    bo = label(
        item.id,
        item.features["origin"],
        dimension="relevance",
        reviewer="slack:U2",
        judgment="bad",
        score=0,
    )
    gold = label(item.id, item.features["origin"], dimension="relevance", gold=True)
    sink = make(PhoenixSinkSettings(), phx.env())
    assert len(sink.send([ana, bo, gold])) == 3
    sink.send([ana.model_copy(update={"judgment": "bad", "score": 0.0, "version": "v2"})])
    held = {h["name"]: h for h in phx.annotations_on(span_id, documents=True)}
    assert set(held) == {"relevance [telegram:7]", "relevance [slack:U2]", "relevance [gold]"}
    assert held["relevance [telegram:7]"]["result"]["label"] == "bad"
    assert {h["document_position"] for h in held.values()} == {1} and {
        h["identifier"] for h in held.values()
    } == {""}


def test_shared_document_names_keep_the_last_label(phx):
    span_id = retriever_span(phx)
    item = pull(settings(documents=True, per_document=True), phx.env()).items[0]
    sink = make(PhoenixSinkSettings(shared_document_names=True), phx.env())
    sink.send([label(item.id, item.features["origin"])])
    sink.send(
        [label(item.id, item.features["origin"], reviewer="slack:U2", judgment="bad", score=0.0)]
    )
    [held] = phx.annotations_on(span_id, documents=True)
    assert (held["name"], held["result"]["label"], held["metadata"]["reviewer"]) == (
        "answer",
        "bad",
        "slack:U2",
    )


def test_a_batch_with_a_missing_span_keeps_the_others(phx):
    good = pulled_label(phx, chat_span(phx))
    gone = label(
        "gone",
        {"tool": "phoenix", "kind": "span", "id": "deleted-span", "extra": {"project": PROJECT}},
    )
    sent = make(PhoenixSinkSettings(), phx.env()).send([good, gone])
    assert [s.remote_id for s in sent] == [good.remote_id]
    with pytest.raises(ConnectorError, match="404") as caught:
        make(PhoenixSinkSettings(), phx.env()).send([gone])
    assert not caught.value.transient


def test_labels_phoenix_cannot_take_are_permanent_errors(phx):
    other = label("x", {"tool": "langfuse", "kind": "trace", "id": "t1"})
    with pytest.raises(ConnectorError, match="langfuse trace") as caught:
        make(PhoenixSinkSettings(), phx.env()).send([other])
    assert not caught.value.transient
    noted = label("x", {"tool": "phoenix", "kind": "span", "id": chat_span(phx)})
    with pytest.raises(ConnectorError, match="note"):
        make(PhoenixSinkSettings(names={"answer": "note"}), phx.env()).send([noted])
    assert phx.requests("POST") == []


def test_write_errors_carry_their_retry_advice(phx):
    rated = pulled_label(phx, chat_span(phx))
    sink = make(PhoenixSinkSettings(), phx.env())
    phx.fail_next(429, retry_after=3, path="/v1/span_annotations")
    with pytest.raises(ConnectorError) as caught:
        sink.send([rated])
    assert caught.value.retry_after == 3
    phx.fail_next(503, path="/v1/span_annotations")
    with pytest.raises(ConnectorError) as caught:
        sink.send([rated])
    assert caught.value.transient and phx.annotations_on(rated.origin.id) == []
    assert sink.send([rated]) and len(phx.annotations_on(rated.origin.id)) == 1


# ------------------------------------------------------------------------------------- confirming


def test_confirm_reads_back_what_was_sent(phx):
    rated = pulled_label(phx, chat_span(phx), note="fine")
    sink = make(PhoenixSinkSettings(), phx.env())
    sent = sink.send([rated])
    assert sink.confirm(sent) == [rated.remote_id]
    read = phx.requests("GET /v1/projects/support bot/span_annotations")[-1].params["query"]
    assert read["span_ids"] == rated.origin.id and read["include_annotation_names"] == "answer"


def test_a_value_the_server_dropped_is_not_confirmed(phx):
    phx.drop_fields = {"explanation"}
    rated = pulled_label(phx, chat_span(phx), note="this note is lost")
    sink = make(PhoenixSinkSettings(), phx.env())
    assert sink.confirm(sink.send([rated])) == []


def test_an_older_version_is_not_confirmed(phx):
    first = pulled_label(phx, chat_span(phx))
    sink = make(PhoenixSinkSettings(), phx.env())
    old = sink.send([first])
    sink.send([first.model_copy(update={"version": "v2", "judgment": "bad"})])
    assert sink.confirm(old) == []
    assert sink.confirm([Sent(remote_id=first.remote_id, version="v2")]) == [first.remote_id]


def test_a_later_process_confirms_by_identifier(phx):
    rated = pulled_label(phx, chat_span(phx))
    sent = make(PhoenixSinkSettings(), phx.env()).send([rated])
    later = make(PhoenixSinkSettings(), phx.env())
    assert later.confirm(sent) == [rated.remote_id]
    assert later.confirm([Sent(remote_id=rated.remote_id, version="v0")]) == []
    read = phx.requests("GET /v1/projects/support bot/span_annotations")[-1].params["query"]
    assert read["identifier"] == rated.remote_id


def test_document_labels_are_confirmed_by_the_synchronous_write(phx):
    retriever_span(phx)
    item = pull(settings(documents=True, per_document=True), phx.env()).items[0]
    rated = label(item.id, item.features["origin"])
    sink = make(PhoenixSinkSettings(), phx.env())
    assert sink.confirm(sink.send([rated])) == [rated.remote_id]


def test_the_outbox_sends_and_confirms_through_the_sink(phx, store):
    from evaluation.connectors.outbox import outbox, push_labels

    labels = [pulled_label(phx, chat_span(phx), reviewer=f"telegram:{n}") for n in range(3)]
    report = push_labels(
        store, "phoenix", "phoenix", PhoenixSinkSettings(), phx.env(), labels, seconds=10
    )
    assert (report.sent, report.confirmed, report.failed) == (3, 3, [])
    assert {s.state for s in outbox(store, "phoenix").values()} == {"confirmed"}
    assert len(phx.span_annotations) == 3


def test_global_ids_round_trip():
    assert global_id("Span", 12) == "U3BhbjoxMg=="
    assert connector.BATCH == 100


def test_a_write_answered_without_ids_is_accepted_and_confirmed_by_reading(phx):
    rated = pulled_label(phx, chat_span(phx))
    sink = make(PhoenixSinkSettings(), phx.env())
    phx.fail_next(200, raw={"data": []}, path="/v1/span_annotations")  # an async write's answer
    assert sink.send([rated]) == [Sent(remote_id=rated.remote_id, version="v1")]
    assert sink.confirm([Sent(remote_id=rated.remote_id, version="v1")]) == []  # none written
    sink.send([rated])
    assert sink.confirm([Sent(remote_id=rated.remote_id, version="v1")]) == [rated.remote_id]


def test_a_slow_page_of_spans_is_a_transient_timeout(phx, monkeypatch):
    monkeypatch.setattr(client_module, "TIMEOUT_S", 0.2)
    phx.stall_next(1.0)
    with pytest.raises(ConnectorError, match="no answer") as caught:
        pull(settings(), phx.env())
    assert caught.value.transient
