"""The CI gate: a run where the judge could not judge is not a pass.

With the LLM judge unreachable, `hilbot run … --judge llm --silent` printed "Average overall
score: n/a" and "✅ No regressions detected" and exited 0, and the local quote metrics were
dropped with the judge's scores.
"""

from __future__ import annotations

import json

from tests.conftest import ROOT

CASES = ROOT / "tests" / "fixtures" / "cases"
GPT = ROOT / "tests" / "fixtures" / "outputs" / "rules-gpt-4.1.jsonl"
DEAD = {"ANTHROPIC_API_KEY": "sk-ant-test-0000000000", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}


def _run(run_cli, tmp_path, toml: str = "", *extra: str):
    (tmp_path / "hilbot.toml").write_text("[llm]\nmax_retries = 0\n" + toml)
    return run_cli(
        "run",
        "--cases",
        str(CASES),
        "--outputs",
        str(GPT),
        "--judge",
        "llm",
        "--run-id",
        "r1",
        *extra,
        env=DEAD,
    )


def _items(tmp_path) -> list[dict]:
    lines = [
        json.loads(line)
        for line in (tmp_path / "results" / "runs" / "r1.jsonl").read_text().splitlines()
    ]
    return [line["data"] for line in lines if line["type"] == "query_evaluation"]


def test_a_run_the_judge_could_not_judge_fails_the_gate_and_says_why(run_cli, tmp_path):
    result = _run(run_cli, tmp_path, "", "--silent")
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stdout.splitlines()
    assert lines[0] == "📈 Average overall score: n/a"
    assert (
        lines[1].startswith("❌ 8 of 8 items could not be judged")
        and "cannot reach the Anthropic API" in lines[1]
    )
    assert "✅" not in result.stdout


def test_the_local_metrics_are_kept_when_the_judge_fails(run_cli, tmp_path):
    _run(run_cli, tmp_path, "", "--silent")
    items = _items(tmp_path)
    assert all(item["evaluation"]["error"] for item in items)
    quoted = [item for item in items if item.get("quotes") and item.get("contexts")]
    assert quoted and all(
        {"quote_precision", "quote_recall"} <= set(item["evaluation"]["scores"]) for item in quoted
    )
    assert all(
        "overall" not in item["evaluation"]["scores"] for item in items
    )  # not judged: no overall


def test_a_tolerance_lets_some_unjudged_items_pass_and_still_says_so(run_cli, tmp_path):
    result = _run(run_cli, tmp_path, "[judge]\nmax_unjudged = 1.0\n", "--silent")
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert (
        "8 of 8 items could not be judged" in result.stdout
        and "(tolerated: up to 100%)" in result.stdout
    )
