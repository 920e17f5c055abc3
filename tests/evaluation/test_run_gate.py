"""What ``hilbot run`` tells CI: the exit status, the verdict lines and the baseline they rest on.

- An empty run is not a pass: a query with no results (an answer that is empty) scores 0, and a
  run where every query came back empty fails the gate whatever the baseline.
- The exit status does not depend on the output mode: verbose, ``--quiet`` and ``--silent`` all
  exit 1 when the gate fails, and the regression count counts queries.
- A run is compared only with a run like it: same set, same target (for ``--outputs``, the model
  the outputs report) and same judge. An unlike baseline named with ``--baseline`` is used, and
  said to be unlike.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

from tests.bot.test_run_cli import CLAUDE, GROK, IDS, OFFLINE, cli_run, items_of, overall, run_file
from tests.conftest import ROOT
from tests.fakes.anthropic_api import FakeAnthropic

QUERIES = ROOT / "tests" / "fixtures" / "queries"
CORE = len(json.loads((QUERIES / "core.json").read_text())["queries"])
FIRST = (
    "no earlier complete run of set cases with target {target} and judge {judge} to compare "
    "with; this run is the baseline"
)


@pytest.fixture
def module(tmp_path):
    """Writes a target module into tmp_path, under a name no other test uses; forgets it after."""
    written: list[str] = []

    def write(name: str, source: str) -> str:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def search_run(run_cli, target: str, *extra: str):
    return run_cli(
        "run", "--set", "core", "--dir", str(QUERIES), "--target", target, *extra, env=OFFLINE
    )


def rewritten(tmp_path: Path, source: str, name: str, change) -> str:
    """A copy of an outputs file with ``change(row)`` applied to each row."""
    rows = [json.loads(line) for line in Path(source).read_text().splitlines() if line.strip()]
    path = tmp_path / name
    path.write_text("".join(json.dumps(change(dict(row))) + "\n" for row in rows))
    return str(path)


# ------------------------------------------------------------------- 19: an empty run is not a pass


@pytest.mark.parametrize("mode", ["--silent", "--quiet", "--verbose"])
def test_a_search_that_finds_nothing_fails_the_gate(run_cli, tmp_path, module, mode):
    name = module(f"nothing_{mode.strip('-')}", "def search(query):\n    return []\n")
    modes = [mode] if mode != "--verbose" else []
    result = search_run(run_cli, f"{name}:search", "--run-id", "empty", *modes)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert f"❌ {CORE} of {CORE} queries returned no results" in result.stdout.splitlines()
    assert "✅" not in result.stdout
    items = items_of(run_file(tmp_path, "empty"))
    assert all(overall(i) == 0.0 and i["evaluation"]["verdict"] == "FAIL" for i in items.values())
    if mode == "--silent":
        assert result.stdout.splitlines() == [
            "📈 Average overall score: 0.00",
            f"❌ {CORE} of {CORE} queries returned no results",
        ]


def test_an_empty_answer_scores_0_and_an_all_empty_run_fails(run_cli, tmp_path):
    blank = rewritten(tmp_path, CLAUDE, "blank.jsonl", lambda row: {**row, "answer": " \n"})
    result = cli_run(run_cli, blank, "--run-id", "blank", "--silent")
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stdout.splitlines() == [
        "📈 Average overall score: 0.00",
        "❌ 8 of 8 queries returned an empty answer",
    ]
    assert all(overall(item) == 0.0 for item in items_of(run_file(tmp_path, "blank")).values())


def test_some_empty_queries_score_0_and_are_named(run_cli, tmp_path, module):
    name = module(
        "half_empty",
        """
        from examples.docs_search import search as real

        def search(query):
            return [] if "ferret" in query else real(query)
    """,
    )
    result = search_run(run_cli, f"{name}:search", "--run-id", "half", "--silent")
    items = items_of(run_file(tmp_path, "half"))
    empty = [i for i in items.values() if not i["results"]]
    assert 0 < len(empty) < CORE and all(overall(i) == 0.0 for i in empty)
    said = f"⚠ {len(empty)} of {CORE} queries returned no results (each scored 0)"
    assert result.stdout.splitlines()[1] == said
    assert result.returncode == 0  # nothing to fall from yet: the zeros weigh on the average


def test_an_empty_run_regresses_from_its_baseline_query_by_query(run_cli, tmp_path):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    blank = rewritten(tmp_path, CLAUDE, "blank.jsonl", lambda row: {**row, "answer": ""})
    result = cli_run(run_cli, blank, "--run-id", "blank", "--quiet")
    assert result.returncode == 1
    assert run_file(tmp_path, "blank")[0]["baseline"] == "claude"
    verdict = r"^❌ 8 regression\(s\) detected; the average overall dropped 0\.\d\d → 0\.00$"
    assert re.search(verdict, result.stdout, re.M)


def test_a_run_where_nothing_could_be_measured_is_not_a_pass(run_cli, tmp_path):
    # answers to a query set without ground truth: the lexical judge has nothing to score them on
    ids = [q["id"] for q in json.loads((QUERIES / "core.json").read_text())["queries"]]
    outputs = tmp_path / "answers.jsonl"
    outputs.write_text("".join(json.dumps({"id": i, "answer": "Some words."}) + "\n" for i in ids))
    result = run_cli(
        "run",
        "--set",
        "core",
        "--dir",
        str(QUERIES),
        "--outputs",
        str(outputs),
        "--silent",
        env=OFFLINE,
    )
    assert result.returncode == 1
    nothing = f"❌ none of the {CORE} judged items has an overall score: nothing was measured"
    assert result.stdout.splitlines() == ["📈 Average overall score: n/a", nothing]


# ------------------------------------------------------------------- 20: exit status and count


def _worse(row: dict) -> dict:
    return {**row, "answer": "No idea.", "quotes": []}


@pytest.mark.parametrize("mode", [[], ["--quiet"], ["--silent"]])
def test_every_output_mode_exits_1_on_a_regression(run_cli, tmp_path, mode):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    worse = rewritten(tmp_path, CLAUDE, "worse.jsonl", _worse)  # the same model, answering worse
    result = cli_run(run_cli, worse, "--run-id", "worse", *mode)
    assert run_file(tmp_path, "worse")[0]["baseline"] == "claude"
    assert result.returncode == 1, (mode, result.stdout[-500:])
    assert re.search(r"^❌ \d+ regression\(s\) detected", result.stdout, re.M)


def test_the_regression_count_counts_queries_not_the_average_line(run_cli, tmp_path):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    worse = rewritten(tmp_path, CLAUDE, "worse.jsonl", _worse)
    result = cli_run(run_cli, worse, "--run-id", "worse", "--quiet")
    before = items_of(run_file(tmp_path, "claude"))
    after = items_of(run_file(tmp_path, "worse"))
    dropped = sum(1 for k in IDS if overall(before[k]) - overall(after[k]) > 0.10 + 1e-9)
    assert dropped == 8
    (verdict,) = [line for line in result.stdout.splitlines() if line.startswith("❌")]
    assert verdict.startswith(f"❌ {dropped} regression(s) detected; the average overall dropped")
    assert len(re.findall(r'^  ↓ "', result.stdout, re.M)) == dropped


def test_unjudged_items_fail_every_mode_alike(run_cli, tmp_path):
    partial = tmp_path / "partial.jsonl"
    rows = [line for line in Path(CLAUDE).read_text().splitlines() if line.strip()]
    partial.write_text("".join(r + "\n" for r in rows if json.loads(r)["id"] != "charge-range"))
    for mode in ([], ["--quiet"], ["--silent"]):
        result = cli_run(run_cli, str(partial), *mode)
        assert result.returncode == 1, mode
        assert "❌ 1 of 8 items could not be judged" in result.stdout


# ------------------------------------------------------------------- 21: like with like


def test_the_default_baseline_is_a_run_of_the_same_model(run_cli, tmp_path):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    grok = cli_run(run_cli, GROK, "--run-id", "grok", "--quiet")
    assert grok.returncode == 0, grok.stdout  # grok-3 is worse than claude, but it is not claude
    assert run_file(tmp_path, "grok")[0].get("baseline") is None
    assert FIRST.format(target="grok-3", judge="lexical") in grok.stdout
    # the same model from another file is the same target; the newer grok run is passed over
    moved = rewritten(tmp_path, CLAUDE, "claude-again.jsonl", lambda row: row)
    again = cli_run(run_cli, moved, "--run-id", "claude-2", "--silent")
    assert again.returncode == 0 and run_file(tmp_path, "claude-2")[0]["baseline"] == "claude"


def test_silent_says_on_stderr_when_there_is_nothing_to_compare_with(run_cli, tmp_path):
    result = cli_run(run_cli, GROK, "--run-id", "grok", "--silent")
    assert result.returncode == 0 and len(result.stdout.splitlines()) == 2
    assert "note: " + FIRST.format(target="grok-3", judge="lexical") in result.stderr


def test_the_default_baseline_is_a_run_of_the_same_judge(run_cli, tmp_path):
    assert cli_run(run_cli, GROK, "--run-id", "lexical", "--silent").returncode == 0
    with FakeAnthropic() as fake:
        llm = ("--judge", "llm", "--quiet")
        first = cli_run(run_cli, GROK, "--run-id", "llm-1", *llm, env=fake.env())
        second = cli_run(run_cli, GROK, "--run-id", "llm-2", *llm, env=fake.env())
    assert first.returncode == 0, first.stdout
    assert run_file(tmp_path, "llm-1")[0].get("baseline") is None
    assert FIRST.format(target="grok-3", judge="anthropic/claude-sonnet-5") in first.stdout
    assert second.returncode == 0 and run_file(tmp_path, "llm-2")[0]["baseline"] == "llm-1"


def test_the_default_baseline_is_a_run_of_the_same_target(run_cli, tmp_path, module):
    name = module(
        "two_targets",
        """
        from examples.docs_search import search as good

        def worse(query):
            return good(query)[::-1][:1]
    """,
    )
    assert search_run(run_cli, f"{name}:good", "--run-id", "good", "--silent").returncode == 0
    worse = search_run(run_cli, f"{name}:worse", "--run-id", "worse", "--quiet")
    assert worse.returncode == 0 and run_file(tmp_path, "worse")[0].get("baseline") is None
    assert f"with target {name}:worse and judge lexical" in worse.stdout
    again = search_run(run_cli, f"{name}:good", "--run-id", "good-2", "--silent")
    assert run_file(tmp_path, "good-2")[0]["baseline"] == "good" and again.returncode == 0


def test_an_unlike_baseline_named_on_the_command_line_is_used_and_said_unlike(run_cli, tmp_path):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    result = cli_run(run_cli, GROK, "--run-id", "grok", "--silent", "--baseline", "claude")
    assert run_file(tmp_path, "grok")[0]["baseline"] == "claude"
    assert result.returncode == 1  # compared, as asked: grok-3 regresses from claude
    (warning,) = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert "claude is unlike this run" in warning
    assert "target claude-sonnet-4-5, this run grok-3" in warning
    like = cli_run(run_cli, CLAUDE, "--run-id", "claude-2", "--silent", "--baseline", "claude")
    assert "warning:" not in like.stderr
