"""The promptfoo source: a ``promptfoo eval --output results.json`` file becomes an answer run.

Covers the v3 fixture row by row (query, expected answer, answer, model, latency, cost, usage, the
grading as the hidden AI evaluation with one score per assertion, errors, JSON output), stable
ids, the v2 shape, the choice of the query var, a hostile-but-valid file, and every way a file
can be broken: each is one ConnectorError naming ``file:line`` or the JSON pointer.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from evaluation.connectors.base import ConnectorError, sinks, sources
from evaluation.connectors.promptfoo import PromptfooSettings, pull
from evaluation.registry import UnknownName

FIXTURES = Path(__file__).parents[2] / "fixtures" / "promptfoo"
V3, V2, HOSTILE = (
    FIXTURES / "results-v3.json",
    FIXTURES / "results-v2.json",
    FIXTURES / "results-hostile.json",
)


def items_of(path: Path, **settings: Any) -> dict:
    return {item.id: item for item in pull(PromptfooSettings(file=path, **settings), {}).items}


def broken(tmp_path: Path, content: str | bytes, name: str = "results.json") -> ConnectorError:
    """The error pulling a file holding ``content`` raises (it must be one line)."""
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(ConnectorError) as caught:
        pull(PromptfooSettings(file=path), {})
    assert "\n" not in str(caught.value) and not caught.value.transient
    return caught.value


def v3_with(tmp_path: Path, change: Any) -> ConnectorError:
    """The error for the v3 fixture after ``change(document)``."""
    document = json.loads(V3.read_text("utf-8"))
    change(document)
    return broken(tmp_path, json.dumps(document))


# ----------------------------------------------------------------------------------------- wiring


def test_promptfoo_is_a_source_only():
    assert sources.get("promptfoo").settings is PromptfooSettings
    with pytest.raises(UnknownName):
        sinks.get("promptfoo")


def test_settings_refuse_unknown_keys():
    with pytest.raises(ValidationError):
        PromptfooSettings(file=V3, queue="q")


# ------------------------------------------------------------------------------------ the v3 file


def test_the_v3_file_is_an_answer_run_named_after_its_description():
    pulled = pull(PromptfooSettings(file=V3), {})
    assert (pulled.kind, pulled.set_name, pulled.judge) == (
        "answer",
        "Acme support answers",
        "promptfoo",
    )
    assert [i.id for i in pulled.items] == ["t0-p0", "t0-p1", "t1-p0", "t1-p1", "t2-p0", "t2-p1"]
    assert "results-v3.json" in pulled.source


def test_a_row_keeps_its_query_answer_measures_and_origin():
    item = items_of(V3)["t0-p0"]
    assert (
        item.query.query == "How do I reset my password?" and item.query.intent == "Password reset"
    )
    assert item.query.expected_answer == "Use the 'Forgot password' link on the sign-in page."
    assert item.answer.startswith("Click 'Forgot password'") and item.model == "gpt-4o-mini"
    assert (item.latency_ms, item.cost_usd) == (937.0, pytest.approx(0.00013))
    assert item.usage == {"input_tokens": 111, "output_tokens": 40}
    assert {k: v for k, v in item.features.items() if k != "origin"} == {
        "tier": "free",
        "locale": "en",
        "prompt_label": "support-v1",
    }
    assert item.features["origin"] == {
        "tool": "promptfoo",
        "kind": "row",
        "id": "t0-p0",
        "extra": {
            "eval_id": "eval-Q7v-2025-06-02T14:31:07",
            "file": str(V3),
            "test_idx": 0,
            "prompt_idx": 0,
            "result_id": "0b9f6a3e-5c1d-4e7a-9d2b-000000000001",
        },
    }


def test_the_grading_is_the_ai_evaluation_with_a_score_per_assertion():
    items = items_of(V3)
    passed, failed = items["t0-p1"].evaluation, items["t1-p0"].evaluation
    assert passed.scores == {"helpfulness": 0.8, "icontains": 1.0, "overall": 0.9}
    assert (passed.verdict, passed.rationale, passed.judge) == (
        "PASS",
        "All assertions passed",
        "promptfoo",
    )
    assert passed.reasons["helpfulness"] == "Mentions the link but not the email step."
    assert failed.scores == {"helpfulness": 0.0, "not-icontains": 0.0, "overall": 0.0}
    assert failed.verdict == "FAIL" and "30 days" in failed.rationale
    assert failed.reasons["not-icontains"] == 'Expected output to not contain "yes"'


def test_json_output_is_compact_json_text_and_object_vars_are_json_features():
    item = items_of(V3)["t2-p0"]
    assert json.loads(item.answer) == {
        "region": "eu-west-1",
        "status": "operational",
        "see": "https://status.acme.example",
    }
    assert json.loads(item.features["context"]) == {"regions": ["eu-west-1", "eu-central-1"]}
    assert item.query.expected_answer is None


def test_a_provider_error_is_the_items_error_and_nothing_was_graded():
    item = items_of(V3)["t2-p1"]
    assert item.error == "API error: 529 Overloaded" and item.answer is None
    assert item.evaluation.scores == {} and item.evaluation.verdict is None


def test_pulling_the_same_file_again_gives_the_same_items(tmp_path):
    copy = tmp_path / "again.json"
    shutil.copy(V3, copy)
    first, second = pull(PromptfooSettings(file=copy), {}), pull(PromptfooSettings(file=copy), {})
    assert [i.model_dump() for i in first.items] == [i.model_dump() for i in second.items]


def test_the_query_var_can_be_chosen_and_falls_back_to_the_prompt():
    item = items_of(V3, query_var="tier")["t0-p0"]
    assert item.query.query == "free" and item.features["question"] == "How do I reset my password?"
    missing = items_of(V3, query_var="nope")["t0-p0"]
    assert missing.query.query.startswith("You are a support agent for Acme Cloud.")


def test_a_file_with_a_bom_is_read(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + V3.read_bytes())
    assert len(items_of(path)) == 6


def test_huge_outputs_are_kept_whole(tmp_path):
    document = json.loads(V3.read_text("utf-8"))
    document["results"]["results"][0]["response"]["output"] = "ä" * 5_000_000
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(document), "utf-8")
    assert len(items_of(path)["t0-p0"].answer) == 5_000_000


# ------------------------------------------------------------------------------- v2 and odd files


def test_the_v2_file_is_read_with_ids_by_position():
    items = items_of(V2)
    assert list(items) == ["row1", "row2", "row3", "row4"]
    assert items["row2"].model == "anthropic:messages:claude-3-5-haiku-20241022"
    assert items["row3"].evaluation.verdict == "FAIL" and items["row3"].query.query.startswith(
        "Can I get"
    )


def test_a_bare_summary_is_read(tmp_path):
    document = json.loads(V3.read_text("utf-8"))["results"]
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(document), "utf-8")
    pulled = pull(PromptfooSettings(file=path), {})
    assert len(pulled.items) == 6 and pulled.set_name == "summary"


def test_a_hostile_but_valid_file_is_read_without_guessing():
    items = items_of(HOSTILE)
    assert list(items) == ["t0-p0", "t0-p0~", "row3"]
    odd, repeat, last = items["t0-p0"], items["t0-p0~"], items["row3"]
    assert odd.query.query == "Wh\u202eat is \x00 this?\u200b 🧪" and odd.model == "echo"
    assert (
        odd.evaluation.verdict == "FAIL" and "overall" not in odd.evaluation.scores
    )  # 7.5 is no 0–1 score
    assert odd.evaluation.scores == {
        "similar": 0.5,
        "similar #2": 1.0,
        "overall #2": 1.0,
        "y": 0.25,
    }
    assert "a person said no" not in json.dumps(
        odd.evaluation.model_dump()
    )  # promptfoo's human grade
    assert odd.latency_ms is None and odd.cost_usd is None
    assert (
        odd.features["n"] == "12345678901234567890"
        and json.loads(odd.features["nested"])["a"][0] == 1
    )
    assert repeat.query.query == "from the test case" and repeat.query.intent == "repeat 2"
    assert repeat.evaluation.verdict is None and repeat.model is None
    assert last.query.query == "the first text var is not this one"
    assert json.loads(last.answer) == {"json": ["answer", 1, None]} and last.error is None


# ----------------------------------------------------------------------------------- broken files


@pytest.mark.parametrize(
    "content, line, reason",
    [
        ('{"results": {"version": 3, "results": [\n{"vars": {}}', 2, "invalid JSON"),
        (
            '{"results": {"version": 3,\n "results": [{"score": NaN}]}}',
            2,
            "NaN is not a JSON number",
        ),
        ('{"results": {"version": 3,\n\n "results": [{"cost": 1e400}]}}', 3, "not a finite number"),
        (
            '{"results": {"version": 3,\n "results": [{"testIdx": ' + "9" * 5000 + "}]}}",
            2,
            "4,300 digits",
        ),
        ('{"results": {"version": 3, "version": 2, "results": []}}', 1, "duplicate key"),
        (
            '{"results": {"version": 3,\n "results": [{"vars": {"q": "\\ud800"}}]}}',
            2,
            "lone surrogate",
        ),
        ("", 1, "invalid JSON"),
    ],
)
def test_unreadable_json_names_the_line(tmp_path, content, line, reason):
    error = broken(tmp_path, content)
    assert f"results.json:{line}" in str(error) and reason in str(error)


def test_bytes_that_are_not_utf8_name_the_line(tmp_path):
    error = broken(tmp_path, b'{"results":\n {"version": 3, "results": ["\xff"]}}')
    assert "results.json:2" in str(error) and "not UTF-8" in str(error)


def test_nesting_too_deep_is_refused(tmp_path):
    deep = (
        '{"results": {"version": 3, "results": [{"vars": {"x": ' + "[" * 300 + "]" * 300 + "}}]}}"
    )
    assert "nested more than 200 levels" in str(broken(tmp_path, deep))


@pytest.mark.parametrize(
    "content, pointer",
    [
        ("[]", "/: expected an object"),
        ('{"results": {"version": 4, "results": []}}', "/results/version: summary version 4"),
        ('{"results": {"version": true, "results": []}}', "/results/version"),
        ('{"results": {"results": []}}', "/results/version: summary version missing"),
        (
            '{"results": {"version": 3, "results": {"0": {}}}}',
            "/results/results: expected the list",
        ),
        (
            '{"results": {"version": 3, "results": [{}, 7]}}',
            "/results/results/1: a result must be an object",
        ),
    ],
)
def test_a_file_of_the_wrong_shape_names_the_pointer(tmp_path, content, pointer):
    assert pointer in str(broken(tmp_path, content))


@pytest.mark.parametrize(
    "path, value, pointer",
    [
        (("gradingResult", "score"), "high", "/results/results/0/gradingResult/score"),
        (
            ("gradingResult", "componentResults", 1, "pass"),
            "yes",
            "/results/results/0/gradingResult/componentResults/1/pass",
        ),
        (("vars",), ["a", "b"], "/results/results/0/vars"),
        (("latencyMs",), "fast", "/results/results/0/latencyMs"),
        (("testIdx",), True, "/results/results/0/testIdx"),
        (("response",), "just text", "/results/results/0/response"),
        (("namedScores",), {"a/b~c": "x"}, "/results/results/0/namedScores/a~1b~0c"),
    ],
)
def test_a_value_of_the_wrong_type_names_its_pointer(tmp_path, path, value, pointer):
    def change(document: dict) -> None:
        target = document["results"]["results"][0]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    error = v3_with(tmp_path, change)
    assert f"{pointer}:" in str(error) and "results.json" in str(error)


def test_a_missing_file_or_a_directory_is_one_line(tmp_path):
    for target in (tmp_path / "nope.json", tmp_path):
        with pytest.raises(ConnectorError) as caught:
            pull(PromptfooSettings(file=target), {})
        assert "\n" not in str(caught.value) and "promptfoo eval --output" in str(caught.value)
