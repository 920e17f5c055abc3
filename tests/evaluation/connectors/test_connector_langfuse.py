"""The Langfuse connector, driven through the real SDK (langfuse 5) against a fake Langfuse."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from evaluation.connectors.base import ConnectorError, Label, Origin, remote_id, sinks, sources
from evaluation.connectors.commands import options_to_settings
from evaluation.connectors.langfuse import (
    BATCH,
    RATE_PER_S,
    LangfuseSink,
    LangfuseSource,
    ScoreBelow,
    _client,
    shapes,
)
from evaluation.connectors.langfuse.sink import MAX_COMMENT, ScoreSink
from evaluation.connectors.langfuse.source import pull
from tests.fakes.langfuse_api import FakeLangfuse

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=timezone.utc)
CHAT = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is hilbot?"},
    ]
}


@pytest.fixture
def lf():
    """A fake Langfuse project."""
    with FakeLangfuse() as server:
        yield server


def rag_trace(lf: FakeLangfuse, trace_id: str, **more: Any) -> str:
    """A RAG trace: a chat input, an assistant answer, a retriever with two documents."""
    return lf.add_trace(
        trace_id,
        name=more.pop("name", "qa"),
        input=more.pop("input", CHAT),
        output=more.pop("output", {"role": "assistant", "content": f"answer of {trace_id}"}),
        observations=[
            {
                "id": f"{trace_id}-ret",
                "type": "RETRIEVER",
                "name": "search",
                "output": {"documents": [{"page_content": "doc A"}, {"page_content": "doc B"}]},
            }
        ],
        **more,
    )


def pulled_item(lf: FakeLangfuse, trace_id: str) -> Origin:
    """The origin a queue pull gives the trace (what a label carries back)."""
    lf.add_queue("q-send", "send")
    lf.add_queue_item("q-send", trace_id)
    item = next(i for i in pull(LangfuseSource(queue="q-send"), lf.env()).items if i.id == trace_id)
    return Origin(**item.features["origin"])


def label(
    origin: Origin,
    *,
    dimension: str = "answer",
    judgment: str = "good",
    score: float | None = 1.0,
    options: tuple[str, ...] = ("good", "bad"),
    number: float | None = None,
    note: str | None = None,
    reviewer: str = "telegram:42",
    version: str = "v1",
    when: datetime = T0,
    complete: bool = False,
    gold: bool = False,
) -> Label:
    """A human label on the item of ``origin``."""
    return Label(
        run_id="run-1",
        item_id=origin.id,
        dimension=dimension,
        reviewer=reviewer,
        reviewer_name="Ada",
        judgment=judgment,
        score=score,
        number=number,
        options=list(options),
        note=note,
        gold=gold,
        origin=origin,
        remote_id=remote_id("run-1", origin.id, dimension, "gold" if gold else reviewer),
        version=version,
        timestamp=when,
        complete=complete,
    )


def trace_origin(trace_id: str, **extra: Any) -> Origin:
    return Origin(tool="langfuse", kind="trace", id=trace_id, extra={"trace_id": trace_id, **extra})


def sink_for(lf: FakeLangfuse, **settings: Any) -> ScoreSink:
    return ScoreSink(LangfuseSink(**settings), lf.env())


# ------------------------------------------------------------------------------------------ pulling


def test_queue_pending_traces_and_observations_become_items_keeping_their_origin(lf):
    rag_trace(lf, "t1", tags=["prod"])
    lf.add_trace(
        "t2",
        name="agent",
        input="plain question?",
        output="plain answer",
        observations=[
            {
                "id": "gen-1",
                "type": "GENERATION",
                "name": "llm",
                "input": {"question": "inner q"},
                "output": {"choices": [{"message": {"content": "inner a"}}]},
            }
        ],
    )
    lf.add_queue("q1", "Support QA")
    first = lf.add_queue_item("q1", "t1")
    second = lf.add_queue_item("q1", "gen-1", "OBSERVATION")
    lf.add_queue_item("q1", "t2", status="COMPLETED")
    lf.add_queue_item("q1", "session-9", "SESSION")

    pulled = pull(LangfuseSource(queue="q1"), lf.env())

    assert pulled.set_name == "Support QA" and "annotation queue 'Support QA' (q1)" in pulled.source
    assert "1 session items" in pulled.source
    by_id = {item.id: item for item in pulled.items}
    assert set(by_id) == {"t1", "gen-1"}
    trace, observation = by_id["t1"], by_id["gen-1"]
    assert (trace.query.query, trace.answer, trace.contexts) == (
        "What is hilbot?",
        "answer of t1",
        ["doc A", "doc B"],
    )
    assert trace.features["origin"] == {
        "tool": "langfuse",
        "kind": "trace",
        "id": "t1",
        "extra": {"trace_id": "t1", "queue_id": "q1", "queue_item_id": first},
    }
    assert trace.features["tags"] == ["prod"] and trace.features["trace_name"] == "qa"
    assert (observation.query.query, observation.answer) == ("inner q", "inner a")
    assert observation.features["origin"] == {
        "tool": "langfuse",
        "kind": "observation",
        "id": "gen-1",
        "extra": {"trace_id": "t2", "queue_id": "q1", "queue_item_id": second},
    }


def test_queue_listing_follows_every_page(lf):
    lf.add_queue("big")
    for n in range(230):
        lf.add_trace(f"t{n:03}", input=f"q{n}", output=f"a{n}")
        lf.add_queue_item("big", f"t{n:03}")

    pulled = pull(LangfuseSource(queue="big"), lf.env())

    assert len(pulled.items) == 230 and len({i.id for i in pulled.items}) == 230
    pages = [c.params["page"] for c in lf.requests("GET /api/public/annotation-queues/big/items")]
    assert pages == ["1", "2", "3"]
    assert all(
        c.params["status"] == "PENDING"
        for c in lf.requests("GET /api/public/annotation-queues/big/items")
    )
    assert len(pull(LangfuseSource(queue="big", limit=7), lf.env()).items) == 7


def test_a_trace_read_over_several_cursor_pages_keeps_its_root_and_every_retrieval(lf):
    rows = [{"id": f"ret-{n}", "type": "RETRIEVER", "output": [f"doc {n}"]} for n in range(1005)]
    lf.add_trace("long", input="q", output="a", observations=rows)
    lf.add_queue("q1")
    lf.add_queue_item("q1", "long")

    item = pull(LangfuseSource(queue="q1"), lf.env()).items[0]

    assert (item.query.query, item.answer) == ("q", "a")
    assert len(item.contexts) == 1005 and set(item.contexts) == {f"doc {n}" for n in range(1005)}
    assert len(lf.requests("GET /api/public/v2/observations")) == 2


def test_an_observation_item_takes_only_the_contexts_retrieved_under_it(lf):
    lf.add_trace(
        "t1",
        input="outer",
        output="outer answer",
        observations=[
            {"id": "step-a", "type": "CHAIN", "input": "question a", "output": "answer a"},
            {"id": "ret-a", "type": "RETRIEVER", "parent_id": "step-a", "output": ["under a"]},
            {"id": "ret-other", "type": "SPAN", "name": "retrieve-docs", "output": ["elsewhere"]},
        ],
    )
    lf.add_queue("q1")
    lf.add_queue_item("q1", "step-a", "OBSERVATION")
    lf.add_queue_item("q1", "t1")

    items = {i.id: i for i in pull(LangfuseSource(queue="q1"), lf.env()).items}

    assert items["step-a"].contexts == ["under a"]
    assert sorted(items["t1"].contexts) == ["elsewhere", "under a"]


def test_ai_judge_scores_go_into_the_evaluation_and_human_ones_do_not(lf):
    rag_trace(lf, "t1")
    lf.add_score(name="faithfulness", value=0.25, trace_id="t1", comment="claims B without support")
    lf.add_score(name="relevant", value=True, trace_id="t1", source="API")
    lf.add_score(name="verdict", value="FAIL", trace_id="t1", comment="wrong")
    lf.add_score(name="stars", value=4.0, trace_id="t1")  # outside 0–1: left out
    lf.add_score(name="human", value=0.9, trace_id="t1", source="ANNOTATION")
    lf.add_score(
        name="answer", value=1.0, trace_id="t1", source="API", metadata={"hilbot_version": "x"}
    )
    lf.add_score(name="on-retriever", value=0.1, trace_id="t1", observation_id="t1-ret")
    lf.add_queue("q1")
    lf.add_queue_item("q1", "t1")

    pulled = pull(LangfuseSource(queue="q1", overall="faithfulness"), lf.env())
    evaluation = pulled.items[0].evaluation

    assert evaluation.scores == {
        "faithfulness": 0.25,
        "relevant": 1.0,
        "verdict": 0.0,
        "overall": 0.25,
    }
    assert evaluation.verdict == "FAIL"
    assert evaluation.reasons == {"faithfulness": "claims B without support", "verdict": "wrong"}
    assert "faithfulness: claims B without support" in (evaluation.rationale or "")
    assert evaluation.judge == "langfuse" and pulled.judge == "langfuse"


def test_scores_across_several_pages_are_all_read(lf):
    rag_trace(lf, "t1")
    for n in range(150):
        lf.add_score(name=f"metric-{n}", value=0.5, trace_id="t1")
    lf.add_queue("q1")
    lf.add_queue_item("q1", "t1")

    evaluation = pull(LangfuseSource(queue="q1"), lf.env()).items[0].evaluation

    assert len(evaluation.scores) == 150
    assert len(lf.requests("GET /api/public/v3/scores")) == 2


def test_a_dataset_run_pulls_its_items_with_expected_outputs_scores_and_contexts(lf):
    lf.add_dataset("faq")
    rag_trace(
        lf, "run-t1", input={"question": "How do I reset?"}, output={"answer": "Press reset."}
    )
    lf.add_score(name="correctness", value=0.0, trace_id="run-t1", comment="misses step 2")
    lf.add_experiment(
        "faq",
        "baseline",
        [
            {
                "trace_id": "run-t1",
                "input": {"question": "How do I reset?"},
                "output": {"answer": "Press reset."},
                "expected_output": "Hold reset for 5 s.",
                "item_id": "dsi-1",
            },
            {"input": "second?", "output": "two", "expected_output": None},
        ],
    )
    lf.add_experiment("faq", "other-run", [{"input": "x", "output": "y"}])

    pulled = pull(LangfuseSource(dataset="faq", dataset_run="baseline"), lf.env())

    assert pulled.set_name == "faq" and len(pulled.items) == 2
    item = next(i for i in pulled.items if i.id == "run-t1")
    assert (item.query.query, item.answer, item.ground_truth) == (
        "How do I reset?",
        "Press reset.",
        ["Hold reset for 5 s."],
    )
    assert item.query.expected_answer == "Hold reset for 5 s." and item.contexts == [
        "doc A",
        "doc B",
    ]
    assert item.evaluation.scores == {"correctness": 0.0} and item.evaluation.reasons == {
        "correctness": "misses step 2"
    }
    origin = item.features["origin"]
    assert origin["kind"] == "trace" and origin["extra"]["dataset_run"] == "baseline"
    assert origin["extra"]["dataset_item_id"] == "dsi-1" and origin["extra"]["experiment_id"]


def test_a_missing_dataset_or_run_is_one_error_naming_it(lf):
    lf.add_dataset("faq")
    with pytest.raises(ConnectorError, match="no dataset 'nope'"):
        pull(LangfuseSource(dataset="nope", dataset_run="r"), lf.env())
    with pytest.raises(ConnectorError, match="has no run 'ghost'"):
        pull(LangfuseSource(dataset="faq", dataset_run="ghost"), lf.env())


def test_a_trace_filter_sends_its_conditions_and_takes_only_matching_roots(lf):
    rag_trace(lf, "old", name="qa", tags=["prod"], start=T0 - timedelta(days=3))
    rag_trace(lf, "hit", name="qa", tags=["prod", "eu"], start=T0 + timedelta(hours=1))
    rag_trace(lf, "other-name", name="chat", tags=["prod"], start=T0 + timedelta(hours=2))
    rag_trace(lf, "untagged", name="qa", start=T0 + timedelta(hours=3))

    pulled = pull(
        LangfuseSource(name="qa", tags=["prod"], from_time=T0, to_time=T0 + timedelta(days=1)),
        lf.env(),
    )

    assert [i.id for i in pulled.items] == ["hit"] and pulled.items[0].contexts == [
        "doc A",
        "doc B",
    ]
    listing = lf.requests("GET /api/public/v2/observations")[0].params
    conditions = {c["column"]: c for c in json.loads(listing["filter"])}
    assert (
        conditions["isRootObservation"]["value"] is True
        and conditions["traceName"]["value"] == "qa"
    )
    assert conditions["tags"] == {
        "type": "arrayOptions",
        "column": "tags",
        "operator": "all of",
        "value": ["prod"],
    }
    assert "trace_context" in listing["fields"] and "io" in listing["fields"]


def test_a_trace_filter_honours_its_limit(lf):
    for n in range(12):
        lf.add_trace(f"t{n}", name="qa", input="q", output="a")
    pulled = pull(LangfuseSource(name="qa", limit=5, contexts=False), lf.env())
    assert len(pulled.items) == 5
    assert len(lf.requests("GET /api/public/v2/observations")) == 1


def test_score_below_pulls_the_traces_whose_score_is_under_the_threshold(lf):
    for trace_id, value in (("low", 0.2), ("high", 0.9), ("edge", 0.5), ("bool-false", False)):
        rag_trace(lf, trace_id, name="qa")
        lf.add_score(name="helpfulness", value=value, trace_id=trace_id)
    rag_trace(lf, "low-but-chat", name="chat")
    lf.add_score(name="helpfulness", value=0.1, trace_id="low-but-chat")
    lf.add_score(name="other", value=0.0, trace_id="high")

    everything = pull(LangfuseSource(score_below="helpfulness<0.5"), lf.env())
    named = pull(
        LangfuseSource(score_below=ScoreBelow(name="helpfulness", threshold=0.5), name="qa"),
        lf.env(),
    )

    assert {i.id for i in everything.items} == {"low", "bool-false", "low-but-chat"}
    assert {i.id for i in named.items} == {"low", "bool-false"}
    assert named.items[0].evaluation.scores["helpfulness"] < 0.5


def test_settings_take_exactly_one_mode_and_parse_command_line_values():
    with pytest.raises(ValueError, match="say what to pull"):
        LangfuseSource()
    with pytest.raises(ValueError, match="queue takes no other"):
        LangfuseSource(queue="q", name="qa")
    with pytest.raises(ValueError, match="go together"):
        LangfuseSource(dataset="faq")
    with pytest.raises(ValueError, match="extra"):
        LangfuseSource(queue="q", project="p")
    settings = LangfuseSource(
        **options_to_settings(
            "langfuse",
            [
                "--score-below",
                "helpfulness < 0.4",
                "--tags",
                "a,b",
                "--from-time",
                "2026-01-01T00:00:00",
                "--limit",
                "9",
            ],
        )
    )
    assert settings.score_below == ScoreBelow(name="helpfulness", threshold=0.4)
    assert (
        settings.tags == ["a", "b"]
        and settings.limit == 9
        and settings.from_time.tzinfo is not None
    )
    sink_settings = LangfuseSink(
        **options_to_settings("langfuse", ["--names", "answer=correctness, tone=style"], sink=True)
    )
    assert sink_settings.names == {"answer": "correctness", "tone": "style"}
    with pytest.raises(ValueError):
        ScoreBelow.model_validate("no threshold here")


def test_the_connector_registers_its_source_and_sink():
    assert sources.get("langfuse").settings is LangfuseSource
    spec = sinks.get("langfuse")
    assert spec.settings is LangfuseSink and (spec.rate_per_s, spec.batch) == (RATE_PER_S, BATCH)


# ------------------------------------------------------------------------------------------- shapes


@pytest.mark.parametrize(
    "value, query",
    [
        ("plain", "plain"),
        ('{"query": "json text"}', "json text"),
        ({"question": "asked"}, "asked"),
        (
            {
                "input": {
                    "messages": [
                        {
                            "role": "user",
                            "content": [
                                {"type": "text", "text": "part 1"},
                                {"type": "image_url", "image_url": {}},
                            ],
                        }
                    ]
                }
            },
            "part 1",
        ),
        (
            [
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": "x"},
                {"role": "user", "content": "last"},
            ],
            "last",
        ),
        ({"unknown": 1}, '{"unknown":1}'),
        (None, ""),
    ],
)
def test_queries_are_found_in_the_usual_input_shapes(value, query):
    assert shapes.query_text(value) == query


@pytest.mark.parametrize(
    "value, answer",
    [
        ("text", "text"),
        ({"choices": [{"message": {"role": "assistant", "content": "chosen"}}]}, "chosen"),
        ({"output": {"content": "nested"}}, "nested"),
        (
            [{"role": "user", "content": "q"}, {"role": "assistant", "content": "last reply"}],
            "last reply",
        ),
        ('"quoted json string"', "quoted json string"),
        ({"tool_calls": [1, 2]}, '{"tool_calls":[1,2]}'),
        (None, None),
    ],
)
def test_answers_are_found_in_the_usual_output_shapes(value, answer):
    assert shapes.answer_text(value) == answer


def test_retrieved_documents_are_recognised_in_the_usual_shapes():
    assert shapes.documents(["a", "b"]) == ["a", "b"]
    assert shapes.documents({"documents": [{"pageContent": "js doc"}, {"text": "t"}]}) == [
        "js doc",
        "t",
    ]
    assert shapes.documents('[{"page_content": "as json text", "metadata": {"source": "x"}}]') == [
        "as json text"
    ]
    assert shapes.documents({"nodes": [{"content": "llamaindex"}]}) == ["llamaindex"]
    assert shapes.documents(None) == [] and shapes.documents({"nothing": "here"}) == []


def test_parents_that_loop_do_not_hang_the_context_search():
    rows = [
        shapes.Row(id="a", trace_id="t", parent_id="b"),
        shapes.Row(id="b", trace_id="t", parent_id="a"),
        shapes.Row(id="r", trace_id="t", type="RETRIEVER", parent_id="a", output=["doc"]),
    ]
    assert shapes.contexts(rows, under="b") == ["doc"] and shapes.contexts(rows, under="zzz") == []


# ------------------------------------------------------------------------------------------ sending


def test_a_label_becomes_one_score_with_its_id_target_value_and_comment(lf):
    rag_trace(lf, "t1")
    origin = pulled_item(lf, "t1")
    sink = sink_for(lf)

    sent = sink.send([label(origin, note="Cites doc A — ✓ gut", complete=False)])

    assert [s.remote_id for s in sent] == [remote_id("run-1", "t1", "answer", "telegram:42")]
    body = json.loads(lf.requests("POST /api/public/scores")[0].params["body"])
    assert isinstance(body, list) and len(body) == 1
    score = body[0]
    assert (
        score["id"] == sent[0].remote_id
        and score["traceId"] == "t1"
        and "observationId" not in score
    )
    assert (score["name"], score["value"], score["dataType"], score["source"]) == (
        "answer",
        1.0,
        "BOOLEAN",
        "API",
    )
    assert score["comment"] == "Cites doc A — ✓ gut" and score["queueId"] == "q-send"
    assert score["timestamp"].startswith("2026-03-10T12:00:00")
    assert (
        score["metadata"]["hilbot_reviewer"] == "telegram:42"
        and score["metadata"]["hilbot_version"] == "v1"
    )
    assert lf.score(sent[0].remote_id)["value"] == 1.0


def test_an_observation_label_names_the_observation_and_its_trace(lf):
    lf.add_trace("t9", input="q", output="a", observations=[{"id": "gen-9", "type": "GENERATION"}])
    sink = sink_for(lf)
    origin = Origin(tool="langfuse", kind="observation", id="gen-9", extra={"trace_id": "t9"})
    sink.send([label(origin)])
    stored = lf.scores("answer")[0]
    assert (stored["traceId"], stored["observationId"]) == ("t9", "gen-9")


def test_resending_and_correcting_a_label_updates_the_one_score(lf):
    rag_trace(lf, "t1")
    sink = sink_for(lf)
    origin = trace_origin("t1")
    first = label(origin, judgment="good", score=1.0)

    sink.send([first])
    sink.send([first])
    corrected = label(
        origin,
        judgment="bad",
        score=0.0,
        version="v2",
        when=T0 + timedelta(days=2),
        note="on reflection",
    )
    sink.send([corrected])

    held = lf.scores("answer")
    assert len(held) == 1, held
    assert held[0]["value"] == 0.0 and held[0]["comment"] == "on reflection"
    assert held[0]["timestamp"].startswith("2026-03-10"), (
        "the correction keeps the first timestamp (same day key)"
    )
    assert held[0]["metadata"]["hilbot_version"] == "v2"
    assert sink.confirm([s for s in sink.send([corrected])]) == [corrected.remote_id]


def test_the_scale_decides_the_score_type_when_no_config_does(lf):
    rag_trace(lf, "t1")
    sink = sink_for(lf, names={"quality": "answer-quality"}, gold_suffix="-gold")
    origin = trace_origin("t1")
    sink.send(
        [
            label(origin, dimension="correct", judgment="no", score=0.0, options=("yes", "no")),
            label(
                origin,
                dimension="quality",
                judgment="4",
                score=0.75,
                number=4,
                options=("1", "2", "3", "4", "5"),
            ),
            label(
                origin,
                dimension="tone",
                judgment="warm",
                score=None,
                options=("warm", "neutral", "cold"),
            ),
            label(
                origin,
                dimension="correct",
                judgment="yes",
                score=1.0,
                options=("yes", "no"),
                gold=True,
                reviewer="terminal:lead",
            ),
        ]
    )
    held = {s["name"]: s for s in lf.scores()}
    assert (held["correct"]["dataType"], held["correct"]["value"]) == ("BOOLEAN", 0.0)
    assert (held["answer-quality"]["dataType"], held["answer-quality"]["value"]) == ("NUMERIC", 4.0)
    assert (held["tone"]["dataType"], held["tone"]["value"]) == ("CATEGORICAL", "warm")
    assert (
        held["correct-gold"]["metadata"]["hilbot_gold"] == "true"
        and held["correct-gold"]["value"] == 1.0
    )


def test_a_score_config_sets_the_type_and_the_config_id(lf):
    rag_trace(lf, "t1")
    categorical = lf.add_score_config("answer", "CATEGORICAL", categories=[(1, "Good"), (0, "Bad")])
    ranged = lf.add_score_config("stars", "NUMERIC", min_value=1, max_value=5)
    unit = lf.add_score_config("unit", "NUMERIC", min_value=0, max_value=1)
    sink = sink_for(lf)
    origin = trace_origin("t1")

    sink.send(
        [
            label(origin, judgment="good"),
            label(origin, dimension="stars", judgment="4", score=0.75, number=4),
            label(origin, dimension="unit", judgment="4", score=0.75, number=4),
        ]
    )

    held = {s["name"]: s for s in lf.scores()}
    assert (held["answer"]["value"], held["answer"]["configId"], held["answer"]["source"]) == (
        "Good",
        categorical,
        "ANNOTATION",
    )
    assert (held["stars"]["value"], held["stars"]["configId"]) == (4.0, ranged)
    assert (held["unit"]["value"], held["unit"]["configId"]) == (0.75, unit)
    assert not lf.dropped


@pytest.mark.parametrize(
    "config, judgment, number, message",
    [
        (
            ("CATEGORICAL", {"categories": [(1, "Good"), (0, "Bad")]}),
            "meh",
            None,
            r"'meh' is not a category of score config "
            r"'answer'.*Good, Bad",
        ),
        (
            ("NUMERIC", {"min_value": 1, "max_value": 3}),
            "5",
            5,
            r"outside score config 'answer'.*1–3",
        ),
        (("NUMERIC", {"archived": True}), "good", None, r"score config 'answer' .* is archived"),
    ],
)
def test_a_label_its_config_refuses_is_not_sent(lf, config, judgment, number, message):
    rag_trace(lf, "t1")
    lf.add_score_config("answer", config[0], **config[1])
    sink = sink_for(lf)
    with pytest.raises(ConnectorError, match=message) as refused:
        sink.send([label(trace_origin("t1"), judgment=judgment, number=number, options=())])
    assert not refused.value.transient
    assert not lf.requests("POST /api/public/scores") and not lf.scores()


def test_in_a_batch_a_refused_label_is_left_out_and_the_others_go(lf):
    rag_trace(lf, "t1")
    lf.add_score_config("answer", "CATEGORICAL", categories=[(1, "good")])
    sink = sink_for(lf)
    good = label(trace_origin("t1"), reviewer="telegram:1")
    wrong = label(trace_origin("t1"), judgment="awful", reviewer="telegram:2")
    assert [s.remote_id for s in sink.send([good, wrong])] == [good.remote_id]


def test_a_score_the_server_refuses_is_a_permanent_error_and_the_rest_of_its_batch_still_goes(lf):
    rag_trace(lf, "t1")
    sink = sink_for(lf)
    fine = label(trace_origin("t1"))
    broken = label(Origin(tool="langfuse", kind="trace", id=""), reviewer="telegram:7")
    with pytest.raises(ConnectorError, match="refused score 'answer'.*traceId") as refused:
        sink.send([broken])
    assert not refused.value.transient
    assert [s.remote_id for s in sink.send([fine, broken])] == [fine.remote_id]
    assert len(lf.scores()) == 1


def test_a_complete_label_marks_its_queue_item_done(lf):
    rag_trace(lf, "t1")
    rag_trace(lf, "t2")
    lf.add_queue("q1")
    done, open_item = lf.add_queue_item("q1", "t1"), lf.add_queue_item("q1", "t2")
    sink = sink_for(lf)
    sink.send(
        [
            label(trace_origin("t1", queue_id="q1", queue_item_id=done), complete=True),
            label(trace_origin("t2", queue_id="q1", queue_item_id=open_item), complete=False),
        ]
    )
    assert lf.item(done)["status"] == "COMPLETED" and lf.item(done)["completedAt"]
    assert lf.item(open_item)["status"] == "PENDING"
    patch = lf.requests("PATCH /api/public/annotation-queues/q1/items/")
    assert len(patch) == 1 and json.loads(patch[0].params["body"]) == {"status": "COMPLETED"}


def test_a_deleted_queue_item_does_not_fail_the_label(lf):
    rag_trace(lf, "t1")
    lf.add_queue("q1")
    gone = lf.add_queue_item("q1", "t1")
    lf.delete_queue_item(gone)
    sent = sink_for(lf).send(
        [label(trace_origin("t1", queue_id="q1", queue_item_id=gone), complete=True)]
    )
    assert len(sent) == 1 and len(lf.scores()) == 1


def test_complete_items_off_leaves_the_queue_alone(lf):
    rag_trace(lf, "t1")
    lf.add_queue("q1")
    item = lf.add_queue_item("q1", "t1")
    sink_for(lf, complete_items=False).send(
        [label(trace_origin("t1", queue_id="q1", queue_item_id=item), complete=True)]
    )
    assert lf.item(item)["status"] == "PENDING"


def test_a_huge_note_is_cut_to_fit_and_unicode_survives(lf):
    rag_trace(lf, "t1")
    sink = sink_for(lf)
    note = "ünïcødé 🚀 " * 60_000
    sink.send(
        [
            label(
                trace_origin("t1"),
                note=note,
                judgment="gut ✓",
                options=("gut ✓", "schlecht", "naja"),
                score=None,
            )
        ]
    )
    held = lf.scores()[0]
    assert len(held["comment"]) <= MAX_COMMENT and held["comment"].startswith("ünïcødé 🚀")
    assert held["value"] == "gut ✓"


# --------------------------------------------------------------------------------------- confirming


def test_confirm_reads_back_what_was_sent(lf):
    rag_trace(lf, "t1")
    sink = sink_for(lf)
    sent = sink.send(
        [
            label(trace_origin("t1")),
            label(
                trace_origin("t1"),
                dimension="tone",
                judgment="x",
                options=("x", "y", "z"),
                score=None,
            ),
        ]
    )
    assert sorted(sink.confirm(sent)) == sorted(s.remote_id for s in sent)
    # a later process knows only the ids and versions: the version in the metadata decides
    fresh = sink_for(lf)
    assert sorted(fresh.confirm(sent)) == sorted(s.remote_id for s in sent)


def test_a_score_not_yet_readable_is_not_confirmed_yet(lf):
    rag_trace(lf, "t1")
    lf.read_lag = 30.0
    sink = sink_for(lf)
    sent = sink.send([label(trace_origin("t1"))])
    assert sink.confirm(sent) == []
    lf.hide_scores(0)
    assert sink.confirm(sent) == [sent[0].remote_id]


def test_a_score_the_platform_dropped_or_changed_is_not_confirmed(lf):
    rag_trace(lf, "t1")
    config = lf.add_score_config("answer", "CATEGORICAL", categories=[(1, "good"), (0, "bad")])
    sink = sink_for(lf)
    kept = sink.send([label(trace_origin("t1"), reviewer="telegram:1")])
    # archived after the sink read the configs: Langfuse accepts the score, then drops it
    lf.archive_config(config)
    dropped = sink.send([label(trace_origin("t1"), reviewer="telegram:2")])
    assert dropped and lf.dropped and sink.confirm(dropped) == []
    lf.add_score(
        name="answer",
        value="bad",
        trace_id="t1",
        score_id=kept[0].remote_id,
        source="API",
        timestamp=T0,
        metadata={"hilbot_version": "v1"},
    )
    assert sink.confirm(kept) == [], "someone else's value under our id is not ours"


def test_an_older_version_read_back_is_not_the_correction(lf):
    rag_trace(lf, "t1")
    sink = sink_for(lf)
    sent = sink.send([label(trace_origin("t1"))])
    newer = [sent[0].model_copy(update={"version": "v2"})]
    assert sink_for(lf).confirm(newer) == []


# ----------------------------------------------------------------------------------------- failures


def test_missing_keys_name_the_variable():
    with pytest.raises(ConnectorError, match="LANGFUSE_PUBLIC_KEY is not set"):
        pull(LangfuseSource(queue="q"), {"LANGFUSE_SECRET_KEY": "sk"})
    with pytest.raises(ConnectorError, match="LANGFUSE_SECRET_KEY is not set"):
        ScoreSink(LangfuseSink(), {"LANGFUSE_PUBLIC_KEY": "pk"})
    with pytest.raises(ConnectorError, match="LANGFUSE_BASE_URL is not an http"):
        pull(
            LangfuseSource(queue="q"),
            {
                "LANGFUSE_PUBLIC_KEY": "pk",
                "LANGFUSE_SECRET_KEY": "sk",
                "LANGFUSE_BASE_URL": "ftp://x",
            },
        )


def test_wrong_keys_are_an_auth_error_naming_the_host_and_the_fix(lf):
    env = {**lf.env(), "LANGFUSE_SECRET_KEY": "sk-lf-wrong"}
    with pytest.raises(ConnectorError) as refused:
        pull(LangfuseSource(queue="q1"), env)
    assert "refused the API keys (401)" in str(refused.value) and lf.base_url in str(refused.value)
    assert "LANGFUSE_SECRET_KEY" in (refused.value.fix or "") and not refused.value.transient
    assert "sk-lf-wrong" not in str(refused.value)


def test_an_unknown_queue_is_a_404_naming_it(lf):
    with pytest.raises(
        ConnectorError, match="no annotation queue 'nope' at Langfuse http://127.0.0.1"
    ) as missing:
        pull(LangfuseSource(queue="nope"), lf.env())
    assert "Annotation Queues" in (missing.value.fix or "")


def test_an_unreachable_host_is_transient():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        "LANGFUSE_PUBLIC_KEY": "pk",
        "LANGFUSE_SECRET_KEY": "sk",
        "LANGFUSE_BASE_URL": f"http://127.0.0.1:{port}",
    }
    with pytest.raises(
        ConnectorError, match=f"cannot reach Langfuse at http://127.0.0.1:{port}"
    ) as down:
        pull(LangfuseSource(queue="q"), env)
    assert down.value.transient and down.value.retry_after is None


def test_a_429_carries_its_retry_after_and_the_sdk_does_not_retry(lf):
    rag_trace(lf, "t1")
    lf.fail_next(429, path="/scores", method="POST", retry_after=7)
    sink = sink_for(lf)
    with pytest.raises(ConnectorError, match="rate limiting") as limited:
        sink.send([label(trace_origin("t1"))])
    assert limited.value.retry_after == 7 and limited.value.transient
    assert len(lf.requests("POST /api/public/scores")) == 1
    assert sink.send([label(trace_origin("t1"))])


def test_a_rate_limit_window_answers_429_with_a_default_wait(lf, monkeypatch):
    # a pull waits out a Retry-After up to MAX_RETRY_AFTER_S; a longer one (here ~60 s) is the error
    monkeypatch.setattr(_client, "MAX_RETRY_AFTER_S", 0.5)
    lf.rate_limit(1)
    lf.add_queue("q1")
    with pytest.raises(ConnectorError) as limited:
        pull(LangfuseSource(queue="q1"), lf.env())
    assert limited.value.retry_after is not None and limited.value.retry_after >= 1


def test_a_pull_waits_out_429s_and_tries_again(lf):
    for n in range(4):
        rag_trace(lf, f"t{n}", name="qa")
        lf.add_score(name="helpfulness", value=0.5, trace_id=f"t{n}")
    lf.rate_limit(per_minute=3, window_s=1.0)  # 3 requests in any second; Retry-After: 1

    pulled = pull(LangfuseSource(name="qa"), lf.env())

    assert {i.id for i in pulled.items} == {"t0", "t1", "t2", "t3"}
    assert all(i.evaluation.scores == {"helpfulness": 0.5} for i in pulled.items)
    assert any(c.status == 429 for c in lf.calls)
    assert len([c for c in lf.calls if c.status == 200]) == 6  # list, 4 traces, 1 score page


def test_a_paced_pull_stays_under_the_plan_rate_limit(lf):
    for n in range(4):
        rag_trace(lf, f"t{n}", name="qa")
    lf.rate_limit(per_minute=3, window_s=1.0)

    pulled = pull(LangfuseSource(name="qa"), {**lf.env(), "LANGFUSE_RATE_PER_S": "2.5"})

    assert len(pulled.items) == 4
    assert [c.status for c in lf.calls] == [200] * 6
    gaps = [b.at - a.at for a, b in zip(lf.calls, lf.calls[1:])]
    assert min(gaps) >= 0.3


def test_scores_of_many_traces_are_read_a_page_of_100_traces_at_a_time(lf):
    for n in range(250):
        lf.add_trace(f"t{n:03d}", name="qa", input="q", output="a")
        lf.add_score(name="helpfulness", value=0.5, trace_id=f"t{n:03d}")

    pulled = pull(LangfuseSource(name="qa", contexts=False, limit=1000), lf.env())

    assert len(pulled.items) == 250
    assert all(i.evaluation.scores == {"helpfulness": 0.5} for i in pulled.items)
    queries = lf.requests("GET /api/public/v3/scores")
    assert [len(q.params["traceId"].split(",")) for q in queries] == [100, 100, 50]


def test_a_failure_while_reading_ahead_is_the_pulls_error_and_leaves_no_thread(lf):
    for n in range(150):
        lf.add_trace(f"t{n:03d}", name="qa", input="q", output="a")
    lf.fail_next(503, path="/v3/scores")
    before = {t.name for t in threading.enumerate()}

    with pytest.raises(ConnectorError, match="503") as failed:
        pull(LangfuseSource(name="qa", contexts=False), lf.env())

    assert failed.value.transient
    assert {t.name for t in threading.enumerate()} <= before


def test_a_bad_rate_is_an_error_naming_the_variable(lf):
    with pytest.raises(ConnectorError, match="LANGFUSE_RATE_PER_S"):
        pull(LangfuseSource(name="qa"), {**lf.env(), "LANGFUSE_RATE_PER_S": "fast"})


def test_the_reads_send_exactly_what_the_sdk_sent(lf):
    """The plain-JSON reads send the requests the SDK's methods sent (recorded with SDK 5.x before
    the reads left its models): the same method, path and query parameters, in the same order."""
    for n in range(3):
        rag_trace(lf, f"t{n}", name="qa", tags=["prod"], start=T0 + timedelta(minutes=n))
        lf.add_score(
            name="helpfulness", value=0.1 * n, trace_id=f"t{n}", score_id=f"s{n}", timestamp=T0
        )
    lf.add_score(
        name="obs", value=1.0, trace_id="t1", observation_id="t1-ret", score_id="so", timestamp=T0
    )
    lf.add_queue("q1")
    lf.add_queue_item("q1", "t0", item_id="i0")
    lf.add_queue_item("q1", "t1-ret", "OBSERVATION", item_id="i1")
    pull(LangfuseSource(queue="q1"), lf.env())
    pull(
        LangfuseSource(name="qa", tags=["prod"], from_time=T0, to_time=T0 + timedelta(days=1)),
        lf.env(),
    )
    pull(
        LangfuseSource(score_below="helpfulness<0.15", from_time=T0 - timedelta(days=1)),
        lf.env(),
    )
    sink = sink_for(lf)
    sink.confirm(sink.send([label(trace_origin("t0"))]))
    sink.confirm(sink.send([label(trace_origin("t0"), version="v2")]))

    sent = [(c.method, {k: v for k, v in c.params.items() if k != "body"}) for c in lf.calls]
    assert sent == SDK_REQUESTS


SDK_REQUESTS = [
    (
        "GET /api/public/annotation-queues/q1",
        {},
    ),
    (
        "GET /api/public/annotation-queues/q1/items",
        {
            "status": "PENDING",
            "page": "1",
            "limit": "100",
        },
    ),
    (
        "GET /api/public/v2/observations",
        {
            "fields": "core,basic,io,trace_context",
            "limit": "1",
            "filter": json.dumps(
                [
                    {"type": "string", "column": "id", "operator": "=", "value": "t1-ret"},
                ]
            ),
        },
    ),
    (
        "GET /api/public/v2/observations",
        {
            "fields": "core,basic,io,trace_context",
            "limit": "1000",
            "traceId": "t1",
        },
    ),
    (
        "GET /api/public/v2/observations",
        {
            "fields": "core,basic,io,trace_context",
            "limit": "1000",
            "traceId": "t0",
        },
    ),
    (
        "GET /api/public/v3/scores",
        {
            "limit": "100",
            "fields": "details,subject",
            "traceId": "t1,t0",
        },
    ),
    (
        "GET /api/public/v2/observations",
        {
            "fields": "core,basic,io,trace_context",
            "limit": "1000",
            "fromStartTime": "2026-03-10T12:00:00Z",
            "toStartTime": "2026-03-11T12:00:00Z",
            "filter": json.dumps(
                [
                    {
                        "type": "boolean",
                        "column": "isRootObservation",
                        "operator": "=",
                        "value": True,
                    },
                    {"type": "string", "column": "traceName", "operator": "=", "value": "qa"},
                    {
                        "type": "arrayOptions",
                        "column": "tags",
                        "operator": "all of",
                        "value": ["prod"],
                    },
                    {
                        "type": "datetime",
                        "column": "startTime",
                        "operator": ">=",
                        "value": "2026-03-10T12:00:00+00:00",
                    },
                    {
                        "type": "datetime",
                        "column": "startTime",
                        "operator": "<",
                        "value": "2026-03-11T12:00:00+00:00",
                    },
                ]
            ),
        },
    ),
    (
        "GET /api/public/v2/observations",
        {
            "fields": "core,basic,io,trace_context",
            "limit": "1000",
            "traceId": "t2",
        },
    ),
    (
        "GET /api/public/v2/observations",
        {
            "fields": "core,basic,io,trace_context",
            "limit": "1000",
            "traceId": "t1",
        },
    ),
    (
        "GET /api/public/v2/observations",
        {
            "fields": "core,basic,io,trace_context",
            "limit": "1000",
            "traceId": "t0",
        },
    ),
    (
        "GET /api/public/v3/scores",
        {
            "limit": "100",
            "fields": "details,subject",
            "traceId": "t2,t1,t0",
        },
    ),
    (
        "GET /api/public/v3/scores",
        {
            "limit": "100",
            "fields": "subject",
            "name": "helpfulness",
            "fromTimestamp": "2026-03-09T12:00:00Z",
        },
    ),
    (
        "GET /api/public/v2/observations",
        {
            "fields": "core,basic,io,trace_context",
            "limit": "1000",
            "traceId": "t1",
        },
    ),
    (
        "GET /api/public/v2/observations",
        {
            "fields": "core,basic,io,trace_context",
            "limit": "1000",
            "traceId": "t0",
        },
    ),
    (
        "GET /api/public/v3/scores",
        {
            "limit": "100",
            "fields": "details,subject",
            "traceId": "t1,t0",
        },
    ),
    (
        "GET /api/public/score-configs",
        {
            "page": "1",
            "limit": "100",
        },
    ),
    (
        "GET /api/public/v3/scores",
        {
            "limit": "100",
            "id": "52c753b0-a4b6-5559-9f2d-3e8aeeab1000",
        },
    ),
    (
        "POST /api/public/scores",
        {},
    ),
    (
        "GET /api/public/v3/scores",
        {
            "limit": "100",
            "fields": "details",
            "id": "52c753b0-a4b6-5559-9f2d-3e8aeeab1000",
        },
    ),
    (
        "GET /api/public/v3/scores",
        {
            "limit": "100",
            "id": "52c753b0-a4b6-5559-9f2d-3e8aeeab1000",
        },
    ),
    (
        "POST /api/public/scores",
        {},
    ),
    (
        "GET /api/public/v3/scores",
        {
            "limit": "100",
            "fields": "details",
            "id": "52c753b0-a4b6-5559-9f2d-3e8aeeab1000",
        },
    ),
]
"""What the SDK (5.x) sent for the scenario of ``test_the_reads_send_exactly_what_the_sdk_sent``."""


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_server_error_is_transient_and_tried_once(lf, status):
    rag_trace(lf, "t1")
    lf.fail_next(status, path="/v3/scores")
    with pytest.raises(ConnectorError) as failed:
        sink_for(lf).send([label(trace_origin("t1"))])
    assert (
        failed.value.transient
        and failed.value.retry_after is None
        and f"({status})" in str(failed.value)
    )
    assert len(lf.requests("GET /api/public/v3/scores")) == 1 and not lf.requests(
        "POST /api/public/scores"
    )


def test_an_outage_and_its_end(lf):
    rag_trace(lf, "t1")
    lf.add_queue("q1")
    lf.add_queue_item("q1", "t1")
    lf.outage(60)
    with pytest.raises(ConnectorError) as failed:
        pull(LangfuseSource(queue="q1"), lf.env())
    assert failed.value.transient
    lf.clear_faults()
    assert len(pull(LangfuseSource(queue="q1"), lf.env()).items) == 1


def test_a_slow_server_is_a_transient_timeout(lf):
    lf.add_queue("q1")
    lf.page_latency = 2.0
    with pytest.raises(ConnectorError, match="did not answer within 0.3 s") as slow:
        pull(LangfuseSource(queue="q1"), {**lf.env(), "LANGFUSE_TIMEOUT": "0.3"})
    assert slow.value.transient


@pytest.mark.parametrize(
    "body",
    [
        {
            "data": [{"id": "x", "queueId": "q1", "objectId": None, "objectType": "TRACE"}],
            "meta": {},
        },
        {"unexpected": True},
        b"<html>captive portal</html>",
    ],
)
def test_a_bad_response_is_an_error_naming_the_host(lf, body):
    lf.add_queue("q1")
    lf.respond_next(200, body, path="/items")
    with pytest.raises(ConnectorError) as bad:
        pull(LangfuseSource(queue="q1"), lf.env())
    assert lf.base_url in str(bad.value)


def test_a_403_and_other_4xx_are_permanent(lf):
    rag_trace(lf, "t1")
    lf.fail_next(403, path="/scores", method="POST", message="project is read-only")
    with pytest.raises(ConnectorError, match="forbade.*read-only") as forbidden:
        sink_for(lf).send([label(trace_origin("t1"))])
    assert not forbidden.value.transient


def test_null_and_hostile_fields_in_responses_do_not_crash(lf):
    lf.add_trace(
        "odd/id ✓",
        name=None,
        input=None,
        output=None,
        observations=[
            {"id": "r", "type": "RETRIEVER", "output": None},
            {"id": "r2", "name": None, "output": [None, 3, {"x": None}]},
        ],
    )
    lf.add_score(name="n", value=0.5, trace_id="odd/id ✓", comment=None, metadata=None)
    lf.add_trace("huge", input="x" * 400_000, output={"answer": "y" * 10})
    lf.add_queue("q1")
    lf.add_queue_item("q1", "odd/id ✓")
    lf.add_queue_item("q1", "huge")
    lf.add_queue_item("q1", "never-ingested")

    pulled = pull(LangfuseSource(queue="q1"), lf.env())

    items = {i.id: i for i in pulled.items}
    assert items["odd/id ✓"].query.query == "" and items["odd/id ✓"].answer is None
    assert items["odd/id ✓"].evaluation.scores == {"n": 0.5}
    assert len(items["huge"].query.query) < 210_000 and "[cut:" in items["huge"].query.query
    assert "1 trace not found" in pulled.source


def test_a_label_from_another_tool_is_refused(lf):
    with pytest.raises(ConnectorError, match="came from langsmith"):
        sink_for(lf).send([label(Origin(tool="langsmith", kind="run", id="r1"))])


# ------------------------------------------------------------------------------------------ hygiene


def test_importing_the_connector_imports_no_sdk():
    code = (
        "import sys, evaluation.connectors.langfuse as c; "
        "assert 'langfuse' not in sys.modules and 'httpx' not in sys.modules, sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_background_threads_are_left_behind(lf):
    rag_trace(lf, "t1")
    lf.add_queue("q1")
    lf.add_queue_item("q1", "t1")
    before = {t.name for t in threading.enumerate()}
    pull(LangfuseSource(queue="q1"), lf.env())
    sink = sink_for(lf)
    sink.confirm(sink.send([label(trace_origin("t1"))]))
    assert {t.name for t in threading.enumerate()} <= before


def test_the_outbox_pushes_and_confirms_through_this_sink(lf, store, monkeypatch):
    from evaluation.connectors.outbox import push_labels

    monkeypatch.setattr(sinks.get("langfuse"), "rate_per_s", 100.0)  # pacing is the outbox's own
    rag_trace(lf, "t1")
    rag_trace(lf, "t2")
    labels = [label(trace_origin("t1")), label(trace_origin("t2"), judgment="bad", score=0.0)]

    report = push_labels(store, "langfuse", "langfuse", LangfuseSink(), lf.env(), labels)
    again = push_labels(store, "langfuse", "langfuse", LangfuseSink(), lf.env(), labels)

    assert (report.sent, report.confirmed, report.failed) == (2, 2, [])
    assert (again.sent, again.confirmed) == (0, 0)
    assert len(lf.requests("POST /api/public/scores")) == 1
    assert {s["value"] for s in lf.scores("answer")} == {1.0, 0.0}


def test_langfuse_host_is_read_when_base_url_is_not_set(lf):
    lf.add_queue("q1")
    env = {**lf.env(), "LANGFUSE_HOST": lf.base_url}
    del env["LANGFUSE_BASE_URL"]
    assert pull(LangfuseSource(queue="q1"), env).items == []
    assert lf.requests("GET /api/public/annotation-queues/q1")


def test_a_failed_read_of_existing_scores_still_sends_with_the_labels_own_time(lf):
    rag_trace(lf, "t1")
    lf.respond_next(200, {"data": [{"id": "no-required-fields"}], "meta": {}}, path="/v3/scores")
    sent = sink_for(lf).send([label(trace_origin("t1"))])
    assert len(sent) == 1 and lf.scores()[0]["timestamp"].startswith("2026-03-10T12:00:00")


def test_a_host_without_score_configs_sends_by_the_scale(lf):
    rag_trace(lf, "t1")
    lf.fail_next(404, path="/score-configs")
    sent = sink_for(lf).send([label(trace_origin("t1"))])
    assert len(sent) == 1 and lf.scores()[0]["dataType"] == "BOOLEAN"


def test_pull_review_push_from_the_command_line(lf, run_cli, tmp_path, monkeypatch):
    from evaluation import Store
    from evaluation.records import Rating, Reviewer

    monkeypatch.setattr(sinks.get("langfuse"), "rate_per_s", 100.0)
    rag_trace(lf, "t1")
    lf.add_queue("q1", "Support QA")
    item = lf.add_queue_item("q1", "t1")

    pulled = run_cli("pull", "langfuse", "--queue", "q1", "--run-id", "lf-run", env=lf.env())
    assert pulled.returncode == 0, pulled.stderr
    assert "pulled 1 of 1 items" in pulled.stdout
    store = Store(tmp_path / "results")
    store.ratings.append(
        Rating(
            run_id="lf-run",
            item_id="t1",
            dimension="answer",
            reviewer=Reviewer(platform="telegram", id="42", name="Ada"),
            idempotency_key="tap-1",
            judgment="good",
            score=0.7,
            note="ok",
        )
    )
    pushed = run_cli("push", "lf-run", "--to", "langfuse", "--wait", "20", env=lf.env())

    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    assert "1 label(s) sent, 1 confirmed" in pushed.stdout
    score = lf.scores("answer")[0]
    assert (score["value"], score["dataType"], score["comment"]) == ("good", "CATEGORICAL", "ok")
    assert score["metadata"]["hilbot_reviewer"] == "telegram:42"
    assert lf.item(item)["status"] == "COMPLETED"


@pytest.mark.parametrize("version, message", [(None, "not installed"), ("4.5.1", "older than 5")])
def test_a_missing_or_old_sdk_is_one_error_saying_what_to_install(
    lf, monkeypatch, version, message
):
    import langfuse

    if version is None:
        monkeypatch.setitem(sys.modules, "langfuse", None)
    else:
        monkeypatch.setattr(langfuse, "__version__", version)
    with pytest.raises(ConnectorError, match=message) as missing:
        pull(LangfuseSource(queue="q1"), lf.env())
    assert "hilbot[langfuse]" in (missing.value.fix or "")


def test_a_429_on_reading_the_score_configs_refuses_no_label_of_the_batch(lf):
    """The configs read is the whole call's: a 429 there is the call's to retry, never a refusal of
    the labels it happened to be read for."""
    rag_trace(lf, "t1")
    rag_trace(lf, "t2")
    sink = sink_for(lf)
    lf.fail_next(429, count=1, path="/score-configs", retry_after=0.1)
    batch = [label(trace_origin("t1")), label(trace_origin("t2"), judgment="bad", score=0.0)]
    with pytest.raises(ConnectorError) as caught:
        sink.send(batch)
    assert caught.value.retry_after is not None
    assert len(sink.send(batch)) == 2


def test_a_langfuse_that_takes_one_score_a_request_gets_each_score_alone():
    """The API reference's form of ``POST /scores`` is one ``CreateScoreRequest`` answered
    ``{"id"}``; SDK 5 sends a list. A server that refuses the list gets each score alone, and keeps
    getting them so (one refused list per sink, not per send)."""
    with FakeLangfuse(single_scores=True) as server:
        rag_trace(server, "t1")
        rag_trace(server, "t2")
        sink = sink_for(server)
        first = sink.send(
            [label(trace_origin("t1")), label(trace_origin("t2"), judgment="bad", score=0.0)]
        )
        second = sink.send([label(trace_origin("t1"), version="v2")])
        assert len(first) == 2 and len(second) == 1
        assert sorted(str(s["value"]) for s in server.scores()) == ["0.0", "1.0"]
        posts = server.requests("POST /api/public/scores")
        bodies = [
            json.loads(c.params["body"]) if isinstance(c.params["body"], str) else c.params["body"]
            for c in posts
        ]
        assert [type(b).__name__ for b in bodies] == ["list", "dict", "dict", "dict"]
        assert len(sink.confirm(first[1:] + second)) == 2  # t1 is at v2 now
