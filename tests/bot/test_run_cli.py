"""``hilbot run`` and ``hilbot compare`` as a user runs them (the console script in a subprocess):
the output modes, the run file, regressions and baselines, Ctrl-C, the LLM judge through
the fake Messages API, and the comparison table and coverage matrix."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from statistics import mean

import pytest

from evaluation import Store
from evaluation.cases import load_cases
from tests.conftest import HILBOT, ROOT
from tests.fakes.anthropic_api import FakeAnthropic, Reply, schema_responder

CASES = ROOT / "tests" / "fixtures" / "cases"
OUTPUTS = ROOT / "tests" / "fixtures" / "outputs"
CLAUDE, GPT, GROK = (
    str(OUTPUTS / f"rules-{m}.jsonl") for m in ("claude-sonnet", "gpt-4.1", "grok-3")
)
OFFLINE = {"ANTHROPIC_API_KEY": ""}
LOCAL = {"quote_precision", "quote_recall", "ndcg@5", "recall@5"}
"""The local metrics, kept on an item the judge failed on (it is not judged: no overall)."""
QUERIES = [c.query.query for c in load_cases(CASES)]
IDS = [c.id for c in load_cases(CASES)]


def run_file(tmp_path: Path, run_id: str, data: str = "results") -> list[dict]:
    text = (tmp_path / data / "runs" / f"{run_id}.jsonl").read_text("utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def items_of(records: list[dict]) -> dict[str, dict]:
    return {r["data"]["id"]: r["data"] for r in records if r["type"] == "query_evaluation"}


def overall(item: dict) -> float | None:
    return item["evaluation"]["scores"].get("overall")


def outputs_rows(path: str) -> dict[str, dict]:
    return {row["id"]: row for row in map(json.loads, Path(path).read_text().splitlines()) if row}


def expected_regressions(
    base: list[dict], new: list[dict], threshold: float = 0.10, average: float = 0.05
) -> int:
    """Queries whose overall drops beyond the threshold, computed from the run files."""
    before, after = items_of(base), items_of(new)

    def dropped(k: str, item: dict) -> bool:
        a, b = overall(before[k]), overall(item)
        return a is not None and b is not None and a - b > threshold + 1e-9

    return sum(1 for k, item in after.items() if k in before and dropped(k, item))


def expected_verdict(
    base: list[dict], new: list[dict], threshold: float = 0.10, average: float = 0.05
) -> str:
    """The ``❌`` line for these run files: the queries that regressed, and the average if it
    dropped too."""
    before, after = items_of(base), items_of(new)
    avg_before = round(mean(v for i in before.values() if (v := overall(i)) is not None), 4)
    avg_after = round(mean(v for i in after.values() if (v := overall(i)) is not None), 4)
    drop = f"the average overall dropped {avg_before:.2f} → {avg_after:.2f}"
    drop = drop if avg_before - avg_after > average + 1e-9 else ""
    n = expected_regressions(base, new, threshold, average)
    if not n:
        return f"❌ No query regressed, but {drop}"
    return f"❌ {n} regression(s) detected" + (f"; {drop}" if drop else "")


def cli_run(run_cli, outputs: str, *extra: str, env: dict | None = None, **kw):
    return run_cli(
        "run",
        "--cases",
        str(CASES),
        "--outputs",
        outputs,
        *extra,
        env={**OFFLINE, **(env or {})},
        **kw,
    )


# -------------------------------------------------------------------- output modes and the run file

ITEM_LINE = re.compile(r"^  ([✓✗]) lexical: (?:[a-z_@0-9]+=\d\.\d\d )+overall=(\d\.\d\d)$")


def test_verbose_run_prints_one_block_per_case_and_writes_the_run_file(run_cli, tmp_path):
    result = cli_run(run_cli, CLAUDE, "--run-id", "claude")
    assert result.returncode == 0, result.stderr
    records = run_file(tmp_path, "claude")
    # run file: header first, one query_evaluation per case, summary last
    assert [r["type"] for r in records] == ["run_header"] + ["query_evaluation"] * 8 + [
        "run_summary"
    ]
    header, summary = records[0], records[-1]
    assert header["run_id"] == "claude" and header["kind"] == "answer" and header["set"] == "cases"
    assert header["judge"]["name"] == "lexical" and header["item_count"] == 8
    assert header["target"].endswith("rules-claude-sonnet.jsonl")
    items = items_of(records)
    assert set(items) == set(IDS) and summary["item_count"] == 8
    rows = outputs_rows(CLAUDE)
    for item_id, item in items.items():
        assert item["evaluation"]["judge"] == "lexical"
        assert (
            item["latency_ms"] == rows[item_id]["latency_ms"]
            and item["cost_usd"] == rows[item_id]["cost_usd"]
        )
        assert item["model"] == "claude-sonnet-4-5"
    assert summary["averageScores"]["overall"] == pytest.approx(
        mean(overall(i) for i in items.values()), abs=1e-4
    )

    # stdout: one block per case, in case order, in the verbose format
    blocks = result.stdout.split("\n\n")
    for n, (item_id, query) in enumerate(zip(IDS, QUERIES), 1):
        lines = blocks[n - 1].strip("\n").splitlines()
        assert lines[0] == f'[{n}/8] "{query}"'
        assert lines[1].startswith('  → "')  # the answer
        match = ITEM_LINE.match(lines[-1])
        assert match, lines[-1]
        value = overall(items[item_id])
        assert match.group(2) == f"{value:.2f}" and match.group(1) == ("✓" if value >= 0.6 else "✗")
    assert not re.search(r"\bAI\b", result.stdout)  # lexical scores are never presented as AI
    assert (
        f"📈 Average overall score: {mean(overall(i) for i in items.values()):.2f}" in result.stdout
    )
    assert "✅ No regressions detected" in result.stdout
    assert "lexical judge" in result.stderr  # the note says how it is judged
    assert Store(tmp_path / "results").load_run("claude").summary is not None


def test_quiet_is_one_line_per_query(run_cli, tmp_path):
    result = cli_run(run_cli, GPT, "--run-id", "gpt", "--quiet")
    assert result.returncode == 0, result.stderr
    items = items_of(run_file(tmp_path, "gpt"))
    lines = result.stdout.splitlines()
    item_lines = [line for line in lines if re.match(r"^\[\d+/8\] ", line)]
    assert len(item_lines) == 8
    for n, (line, item_id, query) in enumerate(zip(item_lines, IDS, QUERIES), 1):
        assert line == f'[{n}/8] "{query}" - overall: {overall(items[item_id]):.2f} (lexical)'
    assert not any(line.startswith(("  →", "  ❝", "  ✓", "  ✗")) for line in lines)
    assert not re.search(r"\bAI\b", result.stdout)


def test_silent_is_two_lines_and_exit_1_on_a_regression(run_cli, tmp_path):
    first = cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent")
    assert first.returncode == 0, first.stderr
    claude = run_file(tmp_path, "claude")
    average = mean(overall(i) for i in items_of(claude).values())
    assert first.stdout.splitlines() == [
        f"📈 Average overall score: {average:.2f}",
        "✅ No regressions detected",
    ]

    second = cli_run(run_cli, GROK, "--run-id", "grok", "--silent", "--baseline", "claude")
    grok = run_file(tmp_path, "grok")
    n = expected_regressions(claude, grok)
    assert n >= 2  # grok-3 misses critical rules and gets two answers wrong
    assert second.returncode == 1
    grok_avg = mean(overall(i) for i in items_of(grok).values())
    verdict = expected_verdict(claude, grok)
    assert verdict.startswith(f"❌ {n} regression(s) detected; the average overall dropped ")
    assert second.stdout.splitlines() == [f"📈 Average overall score: {grok_avg:.2f}", verdict]
    assert grok[0]["baseline"] == "claude"

    # the same comparison outside --silent lists the regressions, and exits 1 too
    third = cli_run(run_cli, GROK, "--run-id", "grok-again", "--quiet", "--baseline", "claude")
    assert third.returncode == 1
    assert verdict in third.stdout.splitlines()
    assert len(re.findall(r'^  ↓ "', third.stdout, re.M)) == n  # one line per query
    assert len(re.findall(r"^  ↓ average overall ", third.stdout, re.M)) == 1  # and the average


def test_default_baseline_is_the_previous_run_of_the_same_set(run_cli, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "banner.yaml").write_text((CASES / "banner-carrier-dies.yaml").read_text())
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    # a later run of a different set is not a baseline for the cases set
    assert (
        run_cli(
            "run",
            "--cases",
            str(other),
            "--outputs",
            CLAUDE,
            "--run-id",
            "other-set",
            "--silent",
            env=OFFLINE,
        ).returncode
        == 0
    )
    second = cli_run(run_cli, CLAUDE, "--run-id", "claude-2", "--silent")
    assert second.returncode == 0 and second.stdout.splitlines()[1] == "✅ No regressions detected"
    assert run_file(tmp_path, "claude-2")[0]["baseline"] == "claude"
    # the next run compares with the newest run of the set
    again = cli_run(run_cli, CLAUDE, "--run-id", "claude-3", "--silent")
    assert again.returncode == 0 and run_file(tmp_path, "claude-3")[0]["baseline"] == "claude-2"


def test_regression_threshold_comes_from_hilbot_toml(run_cli, tmp_path):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    (tmp_path / "hilbot.toml").write_text(
        "[regression]\nthreshold = 0.5\naverage_threshold = 0.5\n"
    )
    lenient = cli_run(run_cli, GROK, "--run-id", "grok-lenient", "--silent", "--baseline", "claude")
    assert (
        lenient.returncode == 0 and lenient.stdout.splitlines()[1] == "✅ No regressions detected"
    )
    strict = tmp_path / "strict.toml"
    strict.write_text("[regression]\nthreshold = 0.0\naverage_threshold = 0.0\n")
    result = run_cli(
        "--config",
        str(strict),
        "run",
        "--cases",
        str(CASES),
        "--outputs",
        GROK,
        "--run-id",
        "grok-strict",
        "--silent",
        "--baseline",
        "claude",
        env=OFFLINE,
    )
    n = expected_regressions(
        run_file(tmp_path, "claude"), run_file(tmp_path, "grok-strict"), 0.0, 0.0
    )
    assert n > expected_regressions(run_file(tmp_path, "claude"), run_file(tmp_path, "grok-strict"))
    verdict = expected_verdict(
        run_file(tmp_path, "claude"), run_file(tmp_path, "grok-strict"), 0.0, 0.0
    )
    assert verdict.startswith(f"❌ {n} regression(s) detected")
    assert result.returncode == 1 and result.stdout.splitlines()[1] == verdict


def test_an_average_drop_alone_is_a_regression(run_cli, tmp_path):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    (tmp_path / "hilbot.toml").write_text(
        "[regression]\nthreshold = 0.9\naverage_threshold = 0.01\n"
    )
    claude_avg = round(mean(overall(i) for i in items_of(run_file(tmp_path, "claude")).values()), 4)
    result = cli_run(run_cli, GROK, "--run-id", "grok", "--quiet", "--baseline", "claude")
    grok_avg = round(mean(overall(i) for i in items_of(run_file(tmp_path, "grok")).values()), 4)
    assert claude_avg - grok_avg > 0.01  # no query drops by 0.9, but the average drops
    assert result.returncode == 1
    dropped = f"the average overall dropped {claude_avg:.2f} → {grok_avg:.2f}"
    assert f"❌ No query regressed, but {dropped}" in result.stdout
    assert f"  ↓ average overall {claude_avg:.2f} → {grok_avg:.2f}" in result.stdout
    assert not re.search(r'^  ↓ "', result.stdout, re.M)


def test_llm_judge_without_a_key_is_a_one_line_error(run_cli, tmp_path):
    result = cli_run(run_cli, CLAUDE, "--judge", "llm", "--run-id", "nokey")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith("error: no ANTHROPIC_API_KEY")
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "results" / "runs" / "nokey.jsonl").exists()


def test_a_missing_output_is_recorded_on_its_item_and_the_run_goes_on(run_cli, tmp_path):
    partial = tmp_path / "partial.jsonl"
    partial.write_text(
        "".join(
            line + "\n"
            for line in Path(CLAUDE).read_text().splitlines()
            if line.strip() and json.loads(line)["id"] != "charge-range"
        )
    )
    result = cli_run(run_cli, str(partial), "--run-id", "partial")
    assert result.returncode == 1, result.stderr  # an unjudged item fails the gate, in every mode
    assert "  ✗ target failed: no output for 'charge-range' in partial.jsonl" in result.stdout
    records = run_file(tmp_path, "partial")
    assert records[-1]["type"] == "run_summary" and records[-1]["item_count"] == 8
    items = items_of(records)
    assert items["charge-range"]["error"] == "no output for 'charge-range' in partial.jsonl"
    assert items["charge-range"]["evaluation"]["scores"] == {}
    assert all(overall(i) is not None for k, i in items.items() if k != "charge-range")


def test_search_run_with_a_python_target(run_cli, tmp_path):
    result = run_cli(
        "run",
        "--set",
        "core",
        "--dir",
        str(ROOT / "tests" / "fixtures" / "queries"),
        "--target",
        "examples.docs_search:search",
        "--run-id",
        "search",
        env=OFFLINE,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert re.search(
        r'^\[1/15\] "custom 404 page for unknown urls in ferret"$', result.stdout, re.M
    )
    assert re.search(r"^  → 1\. \[1\.00\] /docs/\S+\.md$", result.stdout, re.M)
    assert re.search(r'^       ".+"$', result.stdout, re.M)  # a snippet
    assert re.search(
        r"^  [✓✗] lexical: relevance=\d\.\d\d ranking=\d\.\d\d coverage=\d\.\d\d snippet=\d\.\d\d "
        r"ndcg@5=\d\.\d\d recall@5=\d\.\d\d overall=\d\.\d\d$",
        result.stdout,
        re.M,
    )
    records = run_file(tmp_path, "search")
    assert records[0]["kind"] == "search" and records[0]["target"] == "examples.docs_search:search"
    items = items_of(records)
    assert len(items) == 15
    for item_id, item in items.items():
        scores = item["evaluation"]["scores"]
        assert item["latency_ms"] is not None and item["results"]
        has_expected = bool(item["query"]["expected"])
        assert ("ndcg@5" in scores) == has_expected and ("recall@5" in scores) == has_expected, (
            item_id
        )
    assert "ndcg@5" not in items["core-13"]["evaluation"]["scores"]


# --------------------------------------------------------------------------- Ctrl-C


def test_an_interrupted_run_keeps_what_it_judged(tmp_path):
    (tmp_path / "hilbot.toml").write_text("[targets]\nconcurrency = 1\n")
    command = (
        f"sleep 0.3; {shlex.quote(sys.executable)} "
        f'{shlex.quote(str(ROOT / "examples" / "rules_bot.py"))} "$HILBOT_QUERY"'
    )
    env = {**os.environ, "HILBOT_DATA_DIR": str(tmp_path / "results"), "ANTHROPIC_API_KEY": ""}
    # Ctrl-C as in a terminal: the run starts with SIGINT at its default even when the tests
    # themselves run as a shell's background job (which ignores SIGINT and passes that on: the run
    # then finished and exited 0)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [
                str(HILBOT),
                "run",
                "--cases",
                str(CASES),
                "--target-cmd",
                command,
                "--run-id",
                "intr",
                "--quiet",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    path = tmp_path / "results" / "runs" / "intr.jsonl"
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline:  # wait until the header and one judged item are on disk
            if path.exists() and path.read_text("utf-8").count("\n") >= 2:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err and str(path) in err
    text = path.read_text("utf-8")
    assert text.endswith("\n")
    records = [json.loads(line) for line in text.splitlines()]  # every line complete
    types = [r["type"] for r in records]
    assert types[0] == "run_header" and "run_summary" not in types
    judged = [r for r in records if r["type"] == "query_evaluation"]
    assert 1 <= len(judged) < 8
    run = Store(tmp_path / "results").load_run("intr")
    assert run.summary is None and len(run.items) == len(judged)
    assert all(i.model == "rules-bot-bm25" and i.evaluation.judge == "lexical" for i in run.items)
    printed = [line for line in out.splitlines() if re.match(r"^\[\d+/8\] ", line)]
    assert len(printed) <= len(judged)


# -------------------------------------------------------------------- the LLM judge through the CLI


def test_llm_judge_run_header_output_and_cache(run_cli, tmp_path):
    with FakeAnthropic() as fake:
        first = run_cli(
            "run",
            "--cases",
            str(CASES),
            "--outputs",
            CLAUDE,
            "--run-id",
            "llm-1",
            "--judge",
            "llm",
            env=fake.env(),
        )
        assert first.returncode == 0, first.stderr
        sent = len(fake.requests)
        again = run_cli(
            "run",
            "--cases",
            str(CASES),
            "--outputs",
            CLAUDE,
            "--run-id",
            "llm-2",
            "--quiet",
            "--judge",
            "llm",
            env=fake.env(),
        )
        assert again.returncode == 0, again.stderr
        assert len(fake.requests) == sent  # the rerun is answered from the cache
    assert sent == 8 * 3  # every fixture answer has quotes, contexts and ground-truth answers
    assert all(b["model"] == "claude-sonnet-5" and "temperature" not in b for b in fake.requests)
    header = run_file(tmp_path, "llm-1")[0]
    assert header["judge"]["name"] == "anthropic/claude-sonnet-5"
    assert set(header["judge"]["prompt_hashes"]) == {
        "search",
        "quote_faithfulness",
        "explanation_faithfulness",
        "answer_correctness",
    }
    assert header["judge"]["params"]["model"] == "claude-sonnet-5"
    lines = re.findall(r"^  ✓ AI: .*$", first.stdout, re.M)
    assert len(lines) == 8
    assert all(
        line.startswith(
            "  ✓ AI: quote_faithfulness=1.00 explanation_faithfulness=1.00 answer_correctness=1.00"
        )
        for line in lines
    )
    assert "lexical" not in first.stdout
    a, b = items_of(run_file(tmp_path, "llm-1")), items_of(run_file(tmp_path, "llm-2"))
    assert {k: v["evaluation"]["scores"] for k, v in a.items()} == {
        k: v["evaluation"]["scores"] for k, v in b.items()
    }
    assert all(v["evaluation"]["reasons"]["answer_correctness"] for v in a.values())
    call_cost = (
        120 * 2.0 + 30 * 10.0
    ) / 1_000_000  # the fake's usage at claude-sonnet-5's $2/$10 per Mtok
    assert all(v["evaluation"]["cost_usd"] == pytest.approx(3 * call_cost) for v in a.values())
    assert all(
        v["evaluation"]["cost_usd"] == 0.0 for v in b.values()
    )  # cached: judging cost nothing
    calls = (tmp_path / "results" / "llm-calls.jsonl").read_text().splitlines()
    assert len(calls) == 24


def test_llm_judging_failure_is_shown_on_its_item_and_the_run_finishes(run_cli, tmp_path):
    def responder(body):
        if "Eliminator" in body["messages"][0]["content"]:
            return Reply(text="I refuse to use the tool.")
        return schema_responder(body)

    with FakeAnthropic(responder=responder) as fake:
        (tmp_path / "hilbot.toml").write_text("[llm]\nmax_retries = 0\n")
        result = run_cli(
            "run",
            "--cases",
            str(CASES),
            "--outputs",
            CLAUDE,
            "--run-id",
            "llm-fail",
            "--judge",
            "llm",
            env=fake.env(),
        )
    assert result.returncode == 1, result.stderr  # finished, and not a pass: an item went unjudged
    assert "❌ 1 of 8 items could not be judged" in result.stdout
    assert re.search(
        r"^  ✗ AI: judging failed: model answered without the record_answer tool",
        result.stdout,
        re.M,
    )
    assert len(re.findall(r"^  ✓ AI: ", result.stdout, re.M)) == 7
    records = run_file(tmp_path, "llm-fail")
    assert records[-1]["type"] == "run_summary"
    failed = items_of(records)["eliminator-concealed-counteract"]["evaluation"]
    assert failed["error"] and "overall" not in failed["scores"] and set(failed["scores"]) <= LOCAL


# --------------------------------------------------------------------------- compare


@pytest.fixture
def three_runs(run_cli, tmp_path):
    for run_id, outputs in (("claude", CLAUDE), ("gpt", GPT), ("grok", GROK)):
        result = cli_run(run_cli, outputs, "--run-id", run_id, "--quiet")
        assert result.returncode == 0, result.stderr
    return {run_id: run_file(tmp_path, run_id) for run_id in ("claude", "gpt", "grok")}


def _quote_quality(scores: dict) -> float:
    parts = [
        (w, scores[k])
        for k, w in (("quote_recall", 0.5), ("quote_faithfulness", 0.3), ("quote_precision", 0.2))
        if k in scores
    ]
    return 100 * sum(w * v for w, v in parts) / sum(w for w, _ in parts)


def test_compare_markdown_table_and_coverage_matrix(run_cli, three_runs):
    result = run_cli("compare", "claude", "gpt", "grok")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = lines.index(
        "| Model | Overall | Quote Quality | Reasoning | Correctness | Speed | Cost |"
    )
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in lines[header + 2 : header + 5]
    ]
    assert [r[0] for r in rows] == [
        "claude-sonnet-4-5",
        "gpt-4.1",
        "grok-3",
    ]  # labels from the outputs' model
    for row, run_id, outputs in zip(rows, ("claude", "gpt", "grok"), (CLAUDE, GPT, GROK)):
        items = items_of(three_runs[run_id]).values()
        assert row[1] == f"{mean(100 * overall(i) for i in items):.0f}%"
        assert row[2] == f"{mean(_quote_quality(i['evaluation']['scores']) for i in items):.0f}%"
        assert (
            row[3]
            == f"{mean(100 * i['evaluation']['scores']['explanation_faithfulness'] for i in items):.0f}%"
        )
        assert (
            row[4]
            == f"{mean(100 * i['evaluation']['scores']['answer_correctness'] for i in items):.0f}%"
        )
        source = outputs_rows(outputs).values()
        assert row[5] == f"{mean(r['latency_ms'] for r in source) / 1000:.1f}s"
        assert row[6] == f"${mean(r['cost_usd'] for r in source):.2f}"
    # claude has the best overall and quote quality; grok-3 the worst (fixtures README)
    overall_pct = [int(r[1].rstrip("%")) for r in rows]
    assert overall_pct[0] > overall_pct[2] and overall_pct[1] > overall_pct[2]

    section = lines.index("### Quote Coverage: eliminator-concealed-counteract")
    assert (
        lines[section + 2] == "| Ground Truth | Priority | claude-sonnet-4-5 | gpt-4.1 | grok-3 |"
    )
    matrix = [
        [c.strip() for c in line.strip("|").split("|")] for line in lines[section + 4 : section + 7]
    ]
    astartes, silent, conceal = matrix
    assert astartes[0].startswith("Each friendly ANGEL OF DEATH") and astartes[1:] == [
        "⭐ Critical",
        "✅",
        "✅",
        "✅",
    ]
    assert silent[0].startswith("An operative can perform the Shoot action") and silent[1:] == [
        "⭐ Critical",
        "✅",
        "❌",
        "❌",
    ]
    assert conceal[0].startswith("The operative cannot perform Shoot") and conceal[1:] == [
        "Supporting",
        "✅",
        "✅",
        "✅",
    ]
    assert "Judged by: lexical" in result.stdout


def test_compare_json_has_the_same_numbers(run_cli, three_runs):
    markdown = run_cli("compare", "claude", "gpt", "grok").stdout
    result = run_cli("compare", "claude", "gpt", "grok", "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    profiles = data["profiles"]
    assert [p["label"] for p in profiles] == ["claude-sonnet-4-5", "gpt-4.1", "grok-3"]
    assert [p["run_id"] for p in profiles] == ["claude", "gpt", "grok"]
    for p in profiles:
        row = (
            f"| {p['label']} | {p['overall']:.0f}% | {p['quote_quality']:.0f}% | "
            f"{p['reasoning']:.0f}% | {p['correctness']:.0f}% | {p['speed_s']:.1f}s | "
            f"${p['cost_usd']:.2f} |"
        )
        assert row in markdown.splitlines()
        assert p["items"] == 8 and p["failed"] == 0 and p["judge"] == "lexical"
        items = items_of(three_runs[p["run_id"]]).values()
        assert p["overall"] == pytest.approx(mean(100 * overall(i) for i in items))
    silent = data["coverage"]["eliminator-concealed-counteract"][1]
    assert silent["priority"] == "critical"
    assert silent["found"] == {"claude-sonnet-4-5": True, "gpt-4.1": False, "grok-3": False}
    assert set(data["coverage"]) == set(IDS)


def test_compare_unknown_run_is_exit_2(run_cli):
    result = run_cli("compare", "nope")
    assert result.returncode == 2 and result.stderr.startswith("error: no run 'nope'")


# -------------------------------------------------------------- hostile item text in the run output

HOSTILE = "\x1b]0;T\x07\x1b[2J\x1b[31m\x1b[8m\x9b1m\u202e\rX"
SHOWN = "␛]0;T␇␛[2J␛[31m␛[8m<U+009B>1m<U+202E>"


def _no_raw_controls(text: str) -> None:
    for raw in ("\x1b", "\x07", "\x9b", "\u202e", "\r"):
        assert raw not in text, f"{raw!r} reached the terminal"


def test_run_output_shows_hostile_item_text_visibly(tmp_path):
    from tests.auxil.cli import invoke
    from tests.evaluation.test_queries import write_set

    write_set(
        tmp_path / "q",
        "evil",
        [
            {"id": "e1", "text": f"q1:{HOSTILE}", "expected": ["/a.md"]},
            {"id": "e2", "text": f"q2:{HOSTILE}"},
        ],
        name="evil",
    )
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text(
        json.dumps(
            {"id": "e1", "results": [{"path": f"/a.md{HOSTILE}", "snippet": f"snip:{HOSTILE}"}]}
        )
        + "\n"
        + json.dumps({"id": "e2", "answer": f"ans:{HOSTILE}", "quotes": [f"quote:{HOSTILE}"]})
        + "\n"
    )
    bad.write_text(
        json.dumps({"id": "e1", "results": [{"path": "/elsewhere.md"}]})
        + "\n"
        + json.dumps({"id": "e2", "results": 5})
        + "\n"
    )
    env = {"HILBOT_DATA_DIR": str(tmp_path / "results"), "ANTHROPIC_API_KEY": ""}
    base = ("run", "--set", "evil", "--dir", str(tmp_path / "q"))
    verbose = invoke(*base, "--outputs", str(good), "--run-id", "good", env=env, cwd=tmp_path)
    assert verbose.exit_code == 0, verbose.stderr
    _no_raw_controls(verbose.stdout + verbose.stderr)
    for shown in (
        f'"q1:{SHOWN}',
        f"/a.md{SHOWN}",
        f'"snip:{SHOWN}',
        f'"q2:{SHOWN}',
        f'"ans:{SHOWN}',
        f'"quote:{SHOWN}',
    ):
        assert shown in verbose.stdout, shown
    quiet = invoke(
        *base,
        "--outputs",
        str(bad),
        "--run-id",
        "bad",
        "--quiet",
        "--baseline",
        "good",
        env=env,
        cwd=tmp_path,
    )
    _no_raw_controls(quiet.stdout + quiet.stderr)
    assert (
        f'[1/2] "q1:{SHOWN}' in quiet.stdout and f'  ↓ "q1:{SHOWN}' in quiet.stdout
    )  # the regression line too


def test_a_failing_command_target_shows_its_stderr_visibly(tmp_path):
    from tests.auxil.cli import invoke
    from tests.evaluation.test_queries import write_set

    write_set(tmp_path / "q", "one", [{"id": "o1", "text": "plain"}], name="one")
    command = "printf 'broke \\033]0;T\\007\\033[2J\\342\\200\\256 here\\n' >&2; exit 3"
    result = invoke(
        "run",
        "--set",
        "one",
        "--dir",
        str(tmp_path / "q"),
        "--target-cmd",
        command,
        "--run-id",
        "f",
        env={"HILBOT_DATA_DIR": str(tmp_path / "results"), "ANTHROPIC_API_KEY": ""},
        cwd=tmp_path,
    )
    assert result.exit_code == 1, result.stderr  # the one item went unjudged
    _no_raw_controls(result.stdout + result.stderr)
    assert "  ✗ target failed: exit 3: broke ␛]0;T␇␛[2J<U+202E> here" in result.stdout
