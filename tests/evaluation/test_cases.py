"""YAML test cases: formats, priorities, per-test weights, and bad input reported as
``file:line: field.path`` (exit 2 from the CLI, the file left untouched, nothing run)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from evaluation.cases import CaseError, load_cases
from evaluation.judges import finish
from evaluation.records import ItemData

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "fixtures" / "cases"


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip("\n"), "utf-8")
    return path


# --------------------------------------------------------------------------- good input


def test_fixture_directory_loads_all_eight_cases_in_file_order():
    cases = load_cases(CASES)
    assert [c.id for c in cases] == sorted(p.stem for p in CASES.glob("*.yaml"))
    assert len(cases) == 8
    eliminator = next(c for c in cases if c.id == "eliminator-concealed-counteract")
    assert (
        eliminator.query.query
        == "Can the Eliminator Sniper shoot during counteract while having Conceal order?"
    )
    assert [c.priority for c in eliminator.ground_truth_contexts] == [
        "critical",
        "critical",
        "supporting",
    ]
    assert len(eliminator.ground_truth_answers) == 4
    assert eliminator.source.endswith("eliminator-concealed-counteract.yaml")


def test_plain_string_contexts_default_to_critical():
    (banner,) = load_cases(CASES / "banner-carrier-dies.yaml")
    assert [c.priority for c in banner.ground_truth_contexts] == ["critical"]
    assert banner.ground_truth_contexts[0].text.startswith(
        "If an operative carrying a marker is incapacitated"
    )


def test_mixed_forms_lists_and_documents(tmp_path):
    path = write(
        tmp_path / "mixed.yaml",
        """
        - test_id: one
          query: First?
          ground_truth_contexts:
            - "plain rule"
            - text: "supporting rule"
              priority: supporting
            - text: "explicitly critical"
        - test_id: two
          query: Second?
        ---
        test_id: three
        query: Third?
        requirements: [{legacy: true}]
        category: shooting
        """,
    )
    cases = load_cases(path)
    assert [c.id for c in cases] == ["one", "two", "three"]
    assert [(c.text, c.priority) for c in cases[0].ground_truth_contexts] == [
        ("plain rule", "critical"),
        ("supporting rule", "supporting"),
        ("explicitly critical", "critical"),
    ]
    assert cases[2].query.category == "shooting"


def test_configured_priorities_are_accepted(tmp_path):
    path = write(
        tmp_path / "c.yaml",
        """
        test_id: t
        query: q
        ground_truth_contexts:
          - {text: "x", priority: optional}
        """,
    )
    with pytest.raises(CaseError):
        load_cases(path)  # not a default priority
    (case,) = load_cases(path, {"critical": 10, "supporting": 3, "optional": 1})
    assert case.ground_truth_contexts[0].priority == "optional"


# -------------------------------------------------------------------------- per-test metric weights


def _answer_item(case) -> ItemData:
    return ItemData(
        id=case.id,
        query=case.query,
        answer="an answer",
        quotes=["the rule text exactly here"],
        ground_truth_contexts=case.ground_truth_contexts,
    )


SCORES = {"answer_correctness": 0.2, "explanation_faithfulness": 1.0, "quote_faithfulness": 1.0}
# With the quote "the rule text exactly here" and one critical context "the rule text exactly here",
# quote_recall = 1 and quote_precision = 1 (computed locally by finish()).


def test_per_test_metric_weights_override_the_global_ones(tmp_path, config):
    path = write(
        tmp_path / "w.yaml",
        """
        - test_id: global
          query: q
          ground_truth_contexts: ["the rule text exactly here"]
        - test_id: only-correctness
          query: q
          ground_truth_contexts: ["the rule text exactly here"]
          metric_weights: {answer_correctness: 1, quote_recall: 0, explanation_faithfulness: 0,
                           quote_faithfulness: 0, quote_precision: 0}
        """,
    )
    plain, custom = load_cases(path)
    assert custom.metric_weights == {
        "answer_correctness": 1,
        "quote_recall": 0,
        "explanation_faithfulness": 0,
        "quote_faithfulness": 0,
        "quote_precision": 0,
    }
    a = finish(plain, _answer_item(plain), config, dict(SCORES), label="lexical", reasons={})
    b = finish(custom, _answer_item(custom), config, dict(SCORES), label="lexical", reasons={})
    # Global: .3·.2 + .3·1 + .2·1 + .15·1 + .05·1 = .76
    assert a.scores["overall"] == pytest.approx(0.76)
    # Only answer correctness weighs: overall = .2
    assert b.scores["overall"] == pytest.approx(0.2)
    assert b.scores["quote_recall"] == 1.0 and b.scores["quote_precision"] == 1.0


def test_a_partial_override_keeps_the_other_global_weights(tmp_path, config):
    path = write(
        tmp_path / "w.yaml",
        """
        test_id: heavier-correctness
        query: q
        ground_truth_contexts: ["the rule text exactly here"]
        metric_weights: {answer_correctness: 0.9}
        """,
    )
    (case,) = load_cases(path)
    ev = finish(case, _answer_item(case), config, dict(SCORES), label="lexical", reasons={})
    # (.9·.2 + .3·1 + .2·1 + .15·1 + .05·1) / (.9+.3+.2+.15+.05) = .88 / 1.6 = .55
    assert ev.scores["overall"] == pytest.approx(0.55)


def test_configured_priority_weights_reach_quote_recall_through_the_cli(run_cli, tmp_path):
    write(
        tmp_path / "hilbot.toml",
        """
        [judge.priority_weights]
        critical = 10
        optional = 1
        """,
    )
    cases = write(
        tmp_path / "cases.yaml",
        """
        test_id: weighted
        query: Who controls the marker?
        ground_truth_answers: [The player with the greater total APL.]
        ground_truth_contexts:
          - text: "A marker is controlled by the player whose operatives have the greater total APL"
          - text: "An operative counts towards controlling a marker regardless of its order"
            priority: optional
        """,
    )
    outputs = tmp_path / "out.jsonl"
    outputs.write_text(
        json.dumps(
            {
                "id": "weighted",
                "answer": "The player with more APL.",
                "quotes": [
                    "An operative counts towards controlling a marker regardless of its order."
                ],
            }
        )
        + "\n"
    )
    result = run_cli(
        "run",
        "--cases",
        str(cases),
        "--outputs",
        str(outputs),
        "--judge",
        "lexical",
        "--run-id",
        "w",
    )
    assert result.returncode == 0, result.stderr
    lines = [
        json.loads(x) for x in (tmp_path / "results" / "runs" / "w.jsonl").read_text().splitlines()
    ]
    item = lines[1]["data"]
    # found weight 1 (optional) of 10 + 1 → 1/11
    assert item["evaluation"]["scores"]["quote_recall"] == round(1 / 11, 4)
    assert item["evaluation"]["coverage"] == [False, True]


# --------------------------------------------------------------------------- bad input

BAD = {
    "invalid-yaml": (
        """
        test_id: t
        query: q
        ground_truth_answers: [a, b
        ground_truth_contexts: []
        """,
        4,
        "not valid YAML",
    ),
    "missing-field": (
        """
        test_id: t
        ground_truth_answers: [a]
        """,
        1,
        "query: Field required",
    ),
    "unknown-key": (
        """
        test_id: t
        query: q
        colour: red
        """,
        3,
        "colour: Extra inputs are not permitted",
    ),
    "unknown-priority": (
        """
        test_id: t
        query: q
        ground_truth_contexts:
          - "plain"
          - text: x
            priority: suporting
        """,
        6,
        "ground_truth_contexts.1.priority: unknown priority 'suporting'",
    ),
    "bad-weight": (
        """
        - test_id: a
          query: q
        - test_id: b
          query: q2
          metric_weights: {answer_correctness: high}
        """,
        5,
        "metric_weights.answer_correctness",
    ),
    "unknown-key-in-context": (
        """
        test_id: t
        query: q
        ground_truth_contexts:
          - text: "abc"
            priority: critical
            weight: 3
        """,
        6,
        "ground_truth_contexts.0.weight",
    ),
    "context-missing-text": (
        """
        test_id: t
        query: q
        ground_truth_contexts:
          - "plain"
          - priority: critical
        """,
        5,
        "ground_truth_contexts.1.text",
    ),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_case_file_names_file_line_and_field(tmp_path, name):
    text, line, message = BAD[name]
    path = write(tmp_path / f"{name}.yaml", text)
    with pytest.raises(CaseError) as info:
        load_cases(path)
    assert info.value.where == f"{path}:{line}"
    assert message in info.value.what
    assert info.value.fix


@pytest.mark.parametrize(
    "name", ["invalid-yaml", "missing-field", "unknown-key", "unknown-priority"]
)
def test_bad_case_file_via_cli_is_exit_2_one_line_and_file_untouched(run_cli, tmp_path, name):
    text, line, message = BAD[name]
    folder = tmp_path / "cases"
    folder.mkdir()
    write(folder / "a-good.yaml", "test_id: good\nquery: fine?\n")
    path = write(folder / f"{name}.yaml", text)
    before = path.read_bytes()
    outputs = tmp_path / "out.jsonl"
    outputs.write_text('{"id": "good", "answer": "x"}\n')
    result = run_cli("run", "--cases", str(folder), "--outputs", str(outputs), "--judge", "lexical")
    assert result.returncode == 2
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in result.stderr
    assert err[0].startswith(f"error: {path}:{line}: ") and message in err[0]
    assert path.read_bytes() == before
    runs = tmp_path / "results" / "runs"
    assert not runs.exists() or not any(runs.iterdir())  # nothing was run


def test_duplicate_test_ids_across_files(tmp_path):
    write(tmp_path / "a.yaml", "test_id: same\nquery: one\n")
    write(tmp_path / "b.yaml", "test_id: other\nquery: two\n---\ntest_id: same\nquery: three\n")
    with pytest.raises(CaseError) as info:
        load_cases(tmp_path)
    assert "duplicate test_id 'same'" in info.value.what
    assert info.value.where == f"{tmp_path / 'b.yaml'}:4"


def test_missing_path_and_empty_directory(tmp_path):
    with pytest.raises(CaseError, match="no such file"):
        load_cases(tmp_path / "nope.yaml")
    with pytest.raises(CaseError, match="no .yaml test cases"):
        load_cases(tmp_path)


def test_a_case_that_is_not_a_mapping(tmp_path):
    path = write(tmp_path / "s.yaml", "- just a string\n")
    with pytest.raises(CaseError) as info:
        load_cases(path)
    assert info.value.where == f"{path}:1" and "mapping" in info.value.what


@pytest.mark.parametrize("weight", ["1.0e+308", "-1", "1e7"])
def test_a_metric_weight_outside_0_to_a_million_is_a_case_error(tmp_path: Path, weight: str):
    """A weight of 1e308 made the weighted aggregate overflow to infinity and crash the run."""
    path = tmp_path / "w.yaml"
    path.write_text(f"test_id: w\nquery: q\nmetric_weights:\n  answer_correctness: {weight}\n")
    with pytest.raises(CaseError, match="between 0 and 1,000,000"):
        load_cases(path)
