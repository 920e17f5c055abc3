"""`hilbot import`: any evaluation tool's JSONL / JSON / CSV output becomes a run.

Covers the two demo files field by field, the same rows as a JSON array / object, a CSV with
``score_*`` columns, loose field aliases, bad rows named as ``file:line`` (nothing written),
``skip_bad``, run-id safety, and the CLI's one-line errors.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from statistics import mean

import pytest

from evaluation import HilbotError, ImportFailed, Store
from evaluation.imports import ImportReport, import_outputs
from evaluation.records import RunHeader, RunSummary
from tests.conftest import ROOT

DEMO_SEARCH = ROOT / "bot" / "demo" / "docs-search.outputs.jsonl"
DEMO_RAG = ROOT / "bot" / "demo" / "rag-answers.jsonl"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports"
QUERY_HINT = "no query (one of query, question, prompt, scenario, input, user_input)"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _jsonl(path: Path, rows: list) -> Path:
    return _write(path, "".join(json.dumps(r) + "\n" for r in rows))


def _csv(path: Path, header: list[str], rows: list[list]) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return _write(path, buffer.getvalue())


def _run_files(store: Store) -> list[Path]:
    folder = store.root / "runs"
    return sorted(folder.iterdir()) if folder.exists() else []


def _items_by_id(store: Store, run_id: str) -> dict:
    return {item.id: item for item in store.load_run(run_id).items}


# --------------------------------------------------------------------------- the demo files


def test_demo_search_file_imports_every_field(store: Store):
    rows = _rows(DEMO_SEARCH)
    assert len(rows) == 18

    report = import_outputs(store, DEMO_SEARCH, run_id="search", set_name="docs")

    assert isinstance(report, ImportReport)
    assert (report.run_id, report.imported, report.skipped, report.errors) == ("search", 18, 0, [])
    run = store.load_run("search")
    assert run.header.kind == "search"
    assert run.header.dimensions == ["overall"]
    assert run.header.set == "docs"
    assert run.header.source == DEMO_SEARCH.name
    assert run.header.judge.name == "recorded"
    assert run.header.item_count == 18
    assert (
        [i.id for i in run.items] == [r["id"] for r in rows] == [f"q{n:02d}" for n in range(1, 19)]
    )

    for row, item in zip(rows, run.items):
        assert item.query.query == row["query"]
        assert item.query.category == row["category"]
        assert item.query.intent == row["intent"]
        assert item.query.expected == row["expected"]
        assert len(item.results) == len(row["results"]) >= 3
        for given, result in zip(row["results"], item.results):
            assert (result.rank, result.path, result.title, result.score, result.snippet) == (
                given["rank"],
                given["path"],
                given["title"],
                given["score"],
                given["snippet"],
            )
        assert item.answer is None and item.contexts == [] and item.ground_truth == []
        assert item.evaluation.scores == row["scores"]
        assert item.evaluation.verdict == row["verdict"]
        assert item.evaluation.confidence == row["confidence"]
        assert item.evaluation.rationale == row["rationale"]
        assert item.evaluation.judge == "recorded"
        assert item.features == row["features"]
        assert item.features["result_count"] == len(row["results"])

    assert run.summary is not None
    assert run.summary.item_count == 18
    overall = mean(r["scores"]["overall"] for r in rows)
    assert run.summary.averageScores["overall"] == pytest.approx(overall, abs=1e-4)
    assert run.overall == pytest.approx(overall, abs=1e-4)
    for metric in ("relevance", "ranking", "coverage", "snippet"):
        assert run.summary.averageScores[metric] == pytest.approx(
            mean(r["scores"][metric] for r in rows), abs=1e-4
        )


def test_demo_rag_file_imports_answers_contexts_ground_truth_and_tools(store: Store):
    rows = _rows(DEMO_RAG)
    assert len(rows) == 12

    report = import_outputs(store, DEMO_RAG, run_id="rag")

    assert (report.imported, report.skipped) == (12, 0)
    run = store.load_run("rag")
    assert run.header.kind == "answer"
    assert run.header.dimensions == ["answer"]
    assert run.header.set == "core"
    assert [i.id for i in run.items] == [f"rag{n:02d}" for n in range(1, 13)]
    captured = 0
    for row, item in zip(rows, run.items):
        assert item.query.query == row["query"]
        assert item.query.category == row["category"]
        assert item.answer == row["answer"]
        assert item.results == []
        assert item.contexts == row["contexts"]
        expected_truth = list(row["ground_truth_answers"]) + [
            c["text"] if isinstance(c, dict) else c for c in row["ground_truth_contexts"]
        ]
        assert item.ground_truth == expected_truth
        # both kinds of ground truth are there, and a context's text is kept, not its JSON
        assert row["ground_truth_answers"][0] in item.ground_truth
        assert not any(g.startswith("{") for g in item.ground_truth)
        assert item.tool_captures == row["tool_captures"]
        captured += bool(item.tool_captures)
        assert item.evaluation.scores == row["scores"]
        assert (item.evaluation.verdict, item.evaluation.confidence, item.evaluation.rationale) == (
            row["verdict"],
            row["confidence"],
            row["rationale"],
        )
        assert item.features == row["features"]
        assert item.features["source_type"] == "docs"
        assert isinstance(item.features["answer_words"], int)
    assert captured >= 1
    assert run.summary.averageScores["overall"] == pytest.approx(
        mean(r["scores"]["overall"] for r in rows), abs=1e-4
    )


def test_run_file_is_header_items_summary_and_options_are_recorded(store: Store):
    import_outputs(
        store,
        DEMO_SEARCH,
        run_id="opts",
        set_name="nightly",
        dimensions=["quality", "overall"],
        judge="ragas",
    )
    lines = [json.loads(line) for line in store.run_path("opts").read_text("utf-8").splitlines()]
    assert [line["type"] for line in lines] == ["run_header"] + ["query_evaluation"] * 18 + [
        "run_summary"
    ]
    assert all(line["run_id"] == "opts" for line in lines)
    header = store.load_run("opts").header
    assert isinstance(header, RunHeader)
    assert header.dimensions == ["quality", "overall"]
    assert header.set == "nightly"
    assert header.judge.name == "ragas"
    assert all(i.evaluation.judge == "ragas" for i in store.load_run("opts").items)
    assert isinstance(store.load_run("opts").summary, RunSummary)


def test_a_judge_named_in_the_row_is_kept(store: Store, tmp_path: Path):
    path = _jsonl(
        tmp_path / "judged.jsonl",
        [{"query": "a", "judge": "gpt-judge", "score": 0.5}, {"query": "b"}],
    )
    import_outputs(store, path, run_id="j")
    items = store.load_run("j").items
    assert [i.evaluation.judge for i in items] == ["gpt-judge", "recorded"]
    assert items[0].evaluation.scores == {"overall": 0.5}
    assert items[1].evaluation.scores == {}


def test_default_run_id_is_a_timestamp_and_never_collides(store: Store):
    first = import_outputs(store, DEMO_RAG)
    second = import_outputs(store, DEMO_RAG)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d(-\d+)?", first.run_id)
    assert first.run_id != second.run_id
    assert store.run_exists(first.run_id) and store.run_exists(second.run_id)


# --------------------------------------------------------------------------- JSON files


@pytest.mark.parametrize("demo", [DEMO_SEARCH, DEMO_RAG], ids=["search", "rag"])
@pytest.mark.parametrize("shape", ["array", "object"])
def test_json_array_and_object_files_map_like_jsonl(
    store: Store, tmp_path: Path, demo: Path, shape: str
):
    rows = _rows(demo)
    document = rows if shape == "array" else {"name": "export", "version": 2, "items": rows}
    path = _write(tmp_path / f"{demo.stem}.json", json.dumps(document, indent=2))

    report = import_outputs(store, path, run_id="from-json")
    import_outputs(store, demo, run_id="from-jsonl")

    assert (report.imported, report.skipped) == (len(rows), 0)
    from_json, from_jsonl = store.load_run("from-json"), store.load_run("from-jsonl")
    assert from_json.header.kind == from_jsonl.header.kind
    assert from_json.header.dimensions == from_jsonl.header.dimensions
    assert [i.model_dump() for i in from_json.items] == [i.model_dump() for i in from_jsonl.items]
    assert from_json.summary.averageScores == from_jsonl.summary.averageScores


def test_json_object_uses_its_top_level_list_not_a_nested_one_with_the_same_key(
    store: Store, tmp_path: Path
):
    document = {
        "meta": {"items": ["not", "rows"]},
        "items": [{"id": "a", "query": "first"}, {"id": "b", "query": "second"}],
    }
    path = _write(tmp_path / "nested.json", json.dumps(document, indent=2))
    report = import_outputs(store, path, run_id="nested")
    assert report.imported == 2
    assert [i.query.query for i in store.load_run("nested").items] == ["first", "second"]


# --------------------------------------------------------------------------- CSV files


def test_csv_columns_map_to_query_answer_scores_and_features(store: Store):
    path = FIXTURES / "eval-outputs.csv"
    report = import_outputs(store, path, run_id="csv")

    assert (report.imported, report.skipped, report.errors) == (3, 0, [])
    run = store.load_run("csv")
    assert run.header.kind == "search"  # a results column makes it a search run
    first, second, third = run.items
    assert [i.id for i in run.items] == ["item-0001", "item-0002", "item-0003"]

    assert first.query.query == "How do I cap Burrow's connection pool?"
    assert first.answer == "Set `pool_size` on `create_engine()`.\nThe default is 10."
    assert first.evaluation.scores == {"correctness": 0.9, "overall": 0.85}
    assert all(isinstance(v, float) for v in first.evaluation.scores.values())
    assert first.evaluation.verdict == "PASS"
    assert first.evaluation.confidence == 0.8
    assert first.evaluation.rationale == "Names the setting and its default."
    assert first.query.category == "orm"
    assert [(r.rank, r.path, r.score, r.snippet) for r in first.results] == [
        (1, "/docs/burrow/connections/pooling.md", 0.91, "Set pool_size"),
        (2, "/docs/burrow/connections/engine.md", 0.72, None),
    ]

    assert second.evaluation.confidence == "high"
    assert [(r.rank, r.path) for r in second.results] == [(1, "/docs/relay/errors.md")]
    assert third.results == [] and third.evaluation.verdict == "FAIL"

    for item, source in zip(run.items, ["docs", "chat", "transcript"]):
        assert item.features["source_type"] == source
        assert "leap_distance" in item.features
        # recognised columns are not duplicated as features
        assert not {
            "question",
            "response",
            "score_overall",
            "score_correctness",
            "reason",
            "verdict",
            "confidence",
            "category",
            "results",
        } & set(item.features)
    assert run.summary.averageScores == {
        "correctness": pytest.approx(0.7, abs=1e-4),
        "overall": pytest.approx((0.85 + 0.95 + 0.3) / 3, abs=1e-4),
    }


def test_csv_numeric_feature_cells_become_numbers(store: Store):
    """CSV cells are strings; a numeric feature kept as "3" cannot be correlated with scores
    later."""
    import_outputs(store, FIXTURES / "eval-outputs.csv", run_id="csv")
    items = store.load_run("csv").items
    assert [i.features["leap_distance"] for i in items] == [3, 1, 5]
    assert [i.features["source_type"] for i in items] == ["docs", "chat", "transcript"]


def test_csv_with_a_byte_order_mark_and_a_scores_json_cell(store: Store, tmp_path: Path):
    path = tmp_path / "bom.csv"
    path.write_bytes(
        "\ufeffprompt,scores,expected_output\n"
        'hello,"{""faithfulness"": 0.5, ""overall"": 0.25}",hi there\n'.encode("utf-8")
    )
    import_outputs(store, path, run_id="bom")
    (item,) = store.load_run("bom").items
    assert item.query.query == "hello"
    assert item.evaluation.scores == {"faithfulness": 0.5, "overall": 0.25}
    assert item.ground_truth == ["hi there"]


# --------------------------------------------------------------------------- loose aliases


def test_loose_aliases_for_query_results_contexts_and_tool_calls(store: Store, tmp_path: Path):
    rows = [
        {
            "test_id": "p1",
            "prompt": "via prompt",
            "hits": [{"url": "https://a.example/x", "text": "hit text", "score": 0.4}],
            "metrics": {"ndcg": 0.5},
        },
        {
            "scenario_id": "s1",
            "scenario": "via scenario",
            "documents": [{"path": "/d/1.md", "content": "doc body"}, "/d/2.md"],
            "tool_calls": ["search_docs", {"tool": "run_code", "input": "print(1)"}],
            "label": "FAIL",
            "explanation": "why",
        },
        {
            "uid": "i1",
            "input": "via input",
            "output": "the answer",
            "retrieved_contexts": ["c1", {"text": "c2"}],
            "reference": "the truth",
            "judge_confidence": "Medium",
            "reasoning": "because",
            "score": 0.75,
        },
        {
            "query_id": "u1",
            "user_input": "via user_input",
            "actual_output": "ans",
            "retrieval_context": "single ctx",
            "expected_output": "exp",
            "metadata": {"lang": "en"},
            "latency_ms": 120,
            "cost_usd": 0.002,
        },
        {"id": "d1", "question": {"text": "via a query object"}, "ranked_results": ["/r.md"]},
    ]
    path = _jsonl(tmp_path / "aliases.jsonl", rows)

    report = import_outputs(store, path, run_id="aliases")

    assert report.imported == 5
    items = _items_by_id(store, "aliases")
    assert list(items) == ["p1", "s1", "i1", "u1", "d1"]
    p1, s1, i1, u1, d1 = items.values()
    assert [i.query.query for i in items.values()] == [
        "via prompt",
        "via scenario",
        "via input",
        "via user_input",
        "via a query object",
    ]

    assert [(r.rank, r.path, r.snippet, r.score) for r in p1.results] == [
        (1, "https://a.example/x", "hit text", 0.4)
    ]
    assert p1.evaluation.scores == {"ndcg": 0.5}
    assert [(r.rank, r.path, r.snippet) for r in s1.results] == [
        (1, "/d/1.md", "doc body"),
        (2, "/d/2.md", None),
    ]
    assert s1.tool_captures == [{"tool": "search_docs"}, {"tool": "run_code", "input": "print(1)"}]
    assert (s1.evaluation.verdict, s1.evaluation.rationale) == ("FAIL", "why")

    assert i1.answer == "the answer"
    assert i1.contexts == ["c1", "c2"]
    assert i1.ground_truth == ["the truth"]
    assert i1.evaluation.confidence == "medium"
    assert i1.evaluation.rationale == "because"
    assert i1.evaluation.scores == {"overall": 0.75}

    assert u1.answer == "ans" and u1.contexts == ["single ctx"] and u1.ground_truth == ["exp"]
    assert u1.features == {"lang": "en"}
    assert (u1.latency_ms, u1.cost_usd) == (120, 0.002)
    assert [r.path for r in d1.results] == ["/r.md"]


def test_unrecognised_plain_fields_become_features_and_nested_ones_are_dropped(
    store: Store, tmp_path: Path
):
    path = _jsonl(
        tmp_path / "extra.jsonl",
        [
            {
                "query": "q",
                "features": {"a": 1},
                "model": "m-1",
                "temperature": 0.2,
                "cached": False,
                "blob": {"nested": True},
                "tags": ["x"],
                "empty": "",
            }
        ],
    )
    import_outputs(store, path, run_id="extra")
    (item,) = store.load_run("extra").items
    assert item.features == {"a": 1, "model": "m-1", "temperature": 0.2, "cached": False}


def test_a_scenario_file_with_tools_and_expected_components_is_a_scenario_run(
    store: Store, tmp_path: Path
):
    path = _jsonl(
        tmp_path / "agent.jsonl",
        [
            {
                "id": "sc1",
                "scenario": "add a retry",
                "expected_component": "relay-skill",
                "response": "done",
                "tool_calls": [{"tool": "edit", "input": "x"}],
            }
        ],
    )
    import_outputs(store, path, run_id="agent")
    run = store.load_run("agent")
    assert run.header.kind == "scenario"
    assert run.header.dimensions == [
        "trigger-accuracy",
        "code-validity",
        "technical-accuracy",
        "completeness",
    ]
    assert run.items[0].query.expected == ["relay-skill"]


def test_a_scenarios_context_is_recognised_under_one_name_whatever_the_tool_calls_it(
    store: Store, tmp_path: Path
):
    """Issue 26 §2.5: the plugin or system context and the component tested, which a card shows,
    are recognised as context fields (aliases, camelCase, objects with their parts)."""
    from evaluation.imports import CONTEXT_FIELDS

    plugin = {"name": "commit-commands", "description": "Git commit helpers", "version": "1"}
    path = _jsonl(
        tmp_path / "plugins.jsonl",
        [
            {
                "scenario": "commit my changes",
                "expected_component": "/commit",
                "plugin": plugin,
                "component": {"name": "/commit", "type": "command"},
                "response": "done",
            },
            {
                "scenario": "review this PR",
                "expected": "code-reviewer",
                "pluginName": "pr-tools",
                "componentName": "code-reviewer",
                "componentType": "agent",
                "system_context": "Claude Code 2.1",
                "maturity": "rough",
                "response": "done",
            },
        ],
    )
    import_outputs(store, path, run_id="plugins")
    run = store.load_run("plugins")
    assert run.header.kind == "scenario"  # an expected component and the plugin it tests
    first, second = (item.features for item in run.items)
    assert first == {
        "plugin": "commit-commands",
        "plugin_description": "Git commit helpers",
        "component": "/commit",
        "component_type": "command",
    }
    assert second == {
        "plugin": "pr-tools",
        "component": "code-reviewer",
        "component_type": "agent",
        "system": "Claude Code 2.1",
        "maturity": "rough",
    }
    assert set(first) | {"system"} == set(CONTEXT_FIELDS)


def test_numeric_ids_are_kept_including_zero(store: Store, tmp_path: Path):
    path = _jsonl(tmp_path / "ids.jsonl", [{"id": n, "query": f"q{n}"} for n in range(3)])
    import_outputs(store, path, run_id="ids")
    assert [i.id for i in store.load_run("ids").items] == ["0", "1", "2"]


# --------------------------------------------------------------------------- bad rows


def _assert_nothing_written(store: Store):
    assert _run_files(store) == []


def test_invalid_json_line_names_file_and_line_and_writes_nothing(store: Store, tmp_path: Path):
    path = _write(
        tmp_path / "bad.jsonl", '{"query": "a"}\n{"query": "b"}\n{"query": "c",\n{"query": "d"}\n'
    )
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="bad")
    message = str(info.value)
    assert f"{path}:3:" in message
    assert "invalid JSON" in message
    assert "\n" not in message
    assert info.value.fix and "--skip-bad" in info.value.fix
    assert not store.run_exists("bad")
    _assert_nothing_written(store)


def test_row_without_a_query_names_its_line_and_how_to_fix_it(store: Store, tmp_path: Path):
    path = _jsonl(
        tmp_path / "noquery.jsonl",
        [
            {"query": "a"},
            {"question": "b"},
            {"prompt": "c"},
            {"id": "x", "answer": "no query here", "score": 0.5},
        ],
    )
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="noquery")
    message = str(info.value)
    assert f"{path}:4:" in message
    assert QUERY_HINT in message
    assert "add the column or field" in message
    assert "\n" not in message
    _assert_nothing_written(store)


@pytest.mark.parametrize(
    "row, field",
    [
        ({"query": "a", "score": 7.5}, "scores.overall"),
        ({"query": "a", "scores": {"overall": 0.5, "faithfulness": 7.5}}, "scores.faithfulness"),
        ({"query": "a", "score_correctness": "7.5"}, "scores.correctness"),
        ({"query": "a", "scores": {"relevance": -0.1}}, "scores.relevance"),
    ],
)
def test_score_outside_0_1_names_the_field_and_the_range(
    store: Store, tmp_path: Path, row: dict, field: str
):
    path = _jsonl(tmp_path / "scores.jsonl", [{"query": "ok", "score": 1.0}, row])
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="scores")
    message = str(info.value)
    assert f"{path}:2:" in message
    assert field in message
    assert "0–1" in message
    _assert_nothing_written(store)


def test_non_numeric_score_is_a_bad_row(store: Store, tmp_path: Path):
    path = _jsonl(tmp_path / "words.jsonl", [{"query": "a", "scores": {"overall": "great"}}])
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="words")
    assert f"{path}:1:" in str(info.value)
    assert "scores.overall" in str(info.value) and "not a number" in str(info.value)
    _assert_nothing_written(store)


def test_duplicate_id_is_a_bad_row(store: Store, tmp_path: Path):
    path = _jsonl(
        tmp_path / "dup.jsonl",
        [{"id": "a", "query": "one"}, {"id": "b", "query": "two"}, {"id": "a", "query": "three"}],
    )
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="dup")
    message = str(info.value)
    assert f"{path}:3:" in message
    assert "duplicate id 'a'" in message
    _assert_nothing_written(store)


def test_bad_result_entry_and_bad_json_cell_are_bad_rows(store: Store, tmp_path: Path):
    path = _jsonl(tmp_path / "results.jsonl", [{"query": "a", "results": [42]}])
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="r")
    assert f"{path}:1:" in str(info.value) and "results[0]" in str(info.value)

    path = _csv(tmp_path / "cell.csv", ["query", "results"], [["a", "[{broken"]])
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="r")
    assert f"{path}:2:" in str(info.value) and "results: not valid JSON" in str(info.value)
    _assert_nothing_written(store)


def test_json_array_error_names_the_line_where_the_bad_element_starts(store: Store, tmp_path: Path):
    text = (
        "[\n"
        '  {"id": "a", "query": "first"},\n'
        "  {\n"
        '    "id": "b",\n'
        '    "query": "second"\n'
        "  },\n"
        "  {\n"  # line 7: the bad element starts here
        '    "id": "c",\n'
        '    "answer": "no query"\n'
        "  }\n"
        "]\n"
    )
    path = _write(tmp_path / "rows.json", text)
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="arr")
    assert f"{path}:7:" in str(info.value)
    assert QUERY_HINT in str(info.value)
    _assert_nothing_written(store)


def test_json_object_error_names_the_line_where_the_bad_element_starts(
    store: Store, tmp_path: Path
):
    rows = [{"id": "a", "query": "first"}, {"id": "b", "query": "second", "score": 3}]
    text = json.dumps({"tool": "ragas", "results_version": 1, "items": rows}, indent=2)
    path = _write(tmp_path / "rows.json", text)
    bad_line = text.splitlines().index("    {", text.splitlines().index("    {") + 1) + 1
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="obj")
    assert f"{path}:{bad_line}:" in str(info.value)
    assert "scores.overall" in str(info.value)
    _assert_nothing_written(store)


def test_json_syntax_error_in_an_array_names_file_and_line(store: Store, tmp_path: Path):
    path = _write(tmp_path / "broken.json", '[\n  {"query": "a"},\n  {"query": "b",,}\n]\n')
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="broken")
    assert f"{path}:3" in str(info.value)
    assert "invalid JSON" in str(info.value)
    _assert_nothing_written(store)


def test_json_syntax_error_in_an_object_file_is_an_import_error(store: Store, tmp_path: Path):
    path = _write(
        tmp_path / "broken.json", '{"items": [\n  {"query": "a"},\n  {"query": "b",,}\n]}\n'
    )
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="broken")
    assert str(path) in str(info.value)
    assert "invalid JSON" in str(info.value)
    _assert_nothing_written(store)


def test_json_object_without_a_list_is_an_import_error(store: Store, tmp_path: Path):
    path = _write(tmp_path / "single.json", '{"query": "just one row"}\n')
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="single")
    assert str(path) in str(info.value) and "array of rows" in str(info.value)
    _assert_nothing_written(store)


def test_csv_error_names_the_file_line_of_the_row_header_being_line_1(store: Store, tmp_path: Path):
    # row 1 spans lines 2-3 (a quoted newline); the bad row is on line 5
    path = _write(
        tmp_path / "rows.csv",
        'question,response,score\nq1,"two\nlines",0.5\nq2,fine,0.5\nq3,too high,7.5\n',
    )
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="csv")
    assert f"{path}:5:" in str(info.value)
    assert "scores.overall" in str(info.value) and "0–1" in str(info.value)
    _assert_nothing_written(store)


def test_csv_error_line_counts_blank_lines(store: Store, tmp_path: Path):
    path = _write(tmp_path / "blank.csv", "question,score\nq1,0.5\n\n,0.5\n")
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="blank")
    assert f"{path}:4:" in str(info.value)


def test_csv_row_with_more_cells_than_the_header_is_not_a_crash(store: Store, tmp_path: Path):
    path = _write(tmp_path / "wide.csv", "question,score\nq1,0.5,surplus\nq2,0.25\n")
    try:
        import_outputs(store, path, run_id="wide")
    except ImportFailed as exc:
        assert f"{path}:2:" in str(exc)
    else:
        assert [i.query.query for i in store.load_run("wide").items] == ["q1", "q2"]


@pytest.mark.parametrize(
    "name, text",
    [
        ("scores-cell.jsonl", '{"query": "ok"}\n{"query": "a", "scores": "{not json"}\n'),
        ("features-cell.jsonl", '{"query": "ok"}\n{"query": "a", "features": "{not json"}\n'),
        ("features-list.jsonl", '{"query": "ok"}\n{"query": "a", "features": [1, 2]}\n'),
        ("scores-list.jsonl", '{"query": "ok"}\n{"query": "a", "scores": [0.5]}\n'),
        ("confidence.jsonl", '{"query": "ok"}\n{"query": "a", "confidence": "0.9.1"}\n'),
    ],
    ids=["scores-cell", "features-cell", "features-list", "scores-list", "confidence"],
)
def test_malformed_cells_are_bad_rows_not_crashes(
    store: Store, tmp_path: Path, name: str, text: str
):
    path = _write(tmp_path / name, text)
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="cells")
    assert f"{path}:2:" in str(info.value)
    _assert_nothing_written(store)
    report = import_outputs(store, path, run_id="cells", skip_bad=True)
    assert (report.imported, report.skipped) == (1, 1)
    assert report.errors[0].startswith(f"{path}:2: ")


def test_csv_metadata_column_holding_json_becomes_features(store: Store, tmp_path: Path):
    path = _write(
        tmp_path / "metadata.csv", 'query,metadata,source_type\na,"{""lang"": ""en""}",docs\n'
    )
    import_outputs(store, path, run_id="meta")
    (item,) = store.load_run("meta").items
    assert item.features == {"lang": "en", "source_type": "docs"}


def test_confidence_outside_0_1_is_a_bad_row(store: Store, tmp_path: Path):
    path = _jsonl(tmp_path / "pct.jsonl", [{"query": "a", "score": 0.5, "confidence": 93}])
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="pct")
    assert f"{path}:1:" in str(info.value) and "confidence" in str(info.value)


def test_a_field_of_the_wrong_type_is_a_bad_row(store: Store, tmp_path: Path):
    path = _jsonl(tmp_path / "latency.jsonl", [{"query": "a", "latency_ms": "slow"}])
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="lat")
    assert f"{path}:1:" in str(info.value) and "latency_ms" in str(info.value)
    _assert_nothing_written(store)


# --------------------------------------------------------------------------- skip_bad


def test_skip_bad_imports_the_rest_and_lists_file_line_errors(store: Store, tmp_path: Path):
    path = _write(
        tmp_path / "mixed.jsonl",
        '{"id": "a", "query": "one", "score": 0.5}\n'
        "\n"
        '{"id": "b", "query": "two",\n'
        '{"id": "c", "answer": "no query"}\n'
        '{"id": "d", "query": "four", "score": 7.5}\n'
        '{"id": "a", "query": "dup"}\n'
        '{"id": "e", "query": "five", "score": 1.0}\n',
    )
    report = import_outputs(store, path, run_id="mixed", skip_bad=True)

    assert (report.imported, report.skipped) == (2, 4)
    assert [e.split(": ", 1)[0] for e in report.errors] == [f"{path}:{n}" for n in (3, 4, 5, 6)]
    assert "invalid JSON" in report.errors[0]
    assert QUERY_HINT in report.errors[1]
    assert "scores.overall" in report.errors[2]
    assert "duplicate id 'a'" in report.errors[3]
    run = store.load_run("mixed")
    assert [i.id for i in run.items] == ["a", "e"]
    assert run.header.item_count == 2 and run.summary.item_count == 2
    assert run.summary.averageScores == {"overall": 0.75}


def test_skip_bad_with_only_bad_rows_still_fails_and_writes_nothing(store: Store, tmp_path: Path):
    path = _write(tmp_path / "allbad.jsonl", 'nope\n{"answer": "x"}\n{"query": "a", "score": 9}\n')
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="allbad", skip_bad=True)
    assert "no rows could be imported" in str(info.value)
    assert str(path) in str(info.value)
    _assert_nothing_written(store)


def test_empty_file_is_an_import_error(store: Store, tmp_path: Path):
    path = _write(tmp_path / "empty.jsonl", "\n\n")
    with pytest.raises(ImportFailed):
        import_outputs(store, path, run_id="empty")
    _assert_nothing_written(store)


# --------------------------------------------------------------------------- run ids and files


def test_an_existing_run_is_never_overwritten(store: Store, tmp_path: Path):
    import_outputs(store, DEMO_SEARCH, run_id="taken")
    before = store.run_path("taken").read_bytes()
    other = _jsonl(tmp_path / "other.jsonl", [{"query": "replacement"}])

    for source in (other, DEMO_SEARCH):
        with pytest.raises(HilbotError) as info:
            import_outputs(store, source, run_id="taken")
        assert "already exists" in str(info.value)
        assert "\n" not in str(info.value)
    assert store.run_path("taken").read_bytes() == before
    assert len(store.load_run("taken").items) == 18


@pytest.mark.parametrize("run_id", ["../x", "a/b", ".hidden", "x y", "/abs"])
def test_an_unsafe_run_id_is_refused(store: Store, tmp_path: Path, run_id: str):
    with pytest.raises(HilbotError) as info:
        import_outputs(store, DEMO_RAG, run_id=run_id)
    assert "invalid run id" in str(info.value)
    assert not (store.root / "x.jsonl").exists() and not (tmp_path / "x.jsonl").exists()
    _assert_nothing_written(store)


def test_a_missing_file_is_an_import_error(store: Store, tmp_path: Path):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, missing, run_id="nope")
    assert str(missing) in str(info.value) and "file not found" in str(info.value)
    with pytest.raises(ImportFailed):
        import_outputs(store, tmp_path, run_id="nope")  # a directory is not a file either
    _assert_nothing_written(store)


def test_a_file_that_is_not_utf8_is_an_import_error(store: Store, tmp_path: Path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("question,score\ncaf\xe9,0.5\n".encode("latin-1"))
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="latin1")
    assert "UTF-8" in str(info.value)
    _assert_nothing_written(store)


# --------------------------------------------------------------------------- the CLI


def _one_error_line(proc) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_cli_import_of_a_good_file(run_cli, tmp_path: Path):
    proc = run_cli("import", str(DEMO_SEARCH), "--run-id", "cli-search", "--set", "docs")
    assert proc.returncode == 0, proc.stderr
    assert "imported 18 items into run cli-search (0 bad rows skipped)" in proc.stdout
    run = Store(tmp_path / "results").load_run("cli-search")
    assert run.header.set == "docs" and len(run.items) == 18


def test_cli_import_of_a_bad_file_prints_one_error_line(run_cli, tmp_path: Path):
    path = _write(tmp_path / "bad.jsonl", '{"query": "a"}\n{"query": "b"}\n{oops\n')
    line = _one_error_line(run_cli("import", str(path), "--run-id", "bad"))
    assert f"{path}:3:" in line
    assert "--skip-bad" in line
    assert proc_wrote_nothing(tmp_path)


def proc_wrote_nothing(tmp_path: Path) -> bool:
    runs = tmp_path / "results" / "runs"
    return not runs.exists() or not any(runs.iterdir())


@pytest.mark.parametrize(
    "name, text, where",
    [
        ("bad.csv", "question,score\nq1,0.5\nq2,7.5\n", ":3:"),
        ("bad-element.json", '[\n  {"query": "a"},\n  {"answer": "b"}\n]\n', ":3:"),
        ("bad-syntax.json", '[\n  {"query": "a"},\n  {"query": "b",,}\n]\n', ":3"),
        ("bad-object.json", '{"items": [\n  {"query": "a"},\n  {"query": "b",,}\n]}\n', ""),
        ("wide.csv", "question,score\nq1,0.5,extra\nq2,9\n", ":"),
    ],
    ids=["csv", "json-element", "json-array-syntax", "json-object-syntax", "csv-extra-cells"],
)
def test_cli_import_errors_are_one_line_naming_the_file(
    run_cli, tmp_path: Path, name: str, text: str, where: str
):
    path = _write(tmp_path / name, text)
    line = _one_error_line(run_cli("import", str(path), "--run-id", "x"))
    assert f"{path}{where}" in line
    assert proc_wrote_nothing(tmp_path)


def test_cli_skip_bad_reports_counts_and_skipped_lines(run_cli, tmp_path: Path):
    path = _write(
        tmp_path / "mixed.jsonl",
        '{"query": "a"}\n{"query": "b"}\n{oops\n{"answer": "x"}\n{"query": "c"}\n',
    )
    proc = run_cli("import", str(path), "--run-id", "mixed", "--skip-bad")
    assert proc.returncode == 0, proc.stderr
    assert "imported 3 items into run mixed (2 bad rows skipped)" in proc.stdout
    assert f"skipped: {path}:3:" in proc.stderr
    assert f"skipped: {path}:4:" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(Store(tmp_path / "results").load_run("mixed").items) == 3


def test_cli_refuses_an_existing_run_and_a_bad_run_id(run_cli, tmp_path: Path):
    assert run_cli("import", str(DEMO_RAG), "--run-id", "rag").returncode == 0
    run_file = tmp_path / "results" / "runs" / "rag.jsonl"
    before = run_file.read_bytes()
    line = _one_error_line(run_cli("import", str(DEMO_SEARCH), "--run-id", "rag"))
    assert "already exists" in line
    assert run_file.read_bytes() == before
    line = _one_error_line(run_cli("import", str(DEMO_RAG), "--run-id", "../x"))
    assert "invalid run id" in line
    line = _one_error_line(run_cli("import", str(tmp_path / "missing.jsonl")))
    assert "file not found" in line
