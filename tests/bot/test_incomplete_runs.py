"""Runs without a summary record (cut short, or still being evaluated) are marked incomplete:
in the run listing (``hilbot review --list``, the chat bots' ``/runs``), in ``hilbot compare``
(markdown and JSON), and in the regression check of ``hilbot run``, where an incomplete previous
run is passed over for the latest complete one."""

from __future__ import annotations

import json
import re
from statistics import mean

from bot.listing import run_listing
from evaluation import QueryEvaluation, RunHeader, Store
from evaluation.config import RegressionSettings
from evaluation.records import utcnow
from evaluation.regressions import detect, previous_run
from tests.bot.test_run_cli import CLAUDE, GPT, GROK, cli_run, run_file

INCOMPLETE_ROW = r"  \(incomplete: no summary, {n} of {total} queries\)"


def cut_short(
    store: Store, source_id: str, run_id: str, keep: int, *, overall: float | None = None
) -> str:
    """Write ``run_id`` as ``hilbot run`` leaves a run it was killed in: the header of ``source_id``
    and its first ``keep`` items, no summary (``overall`` replaces every item's scores when
    given)."""
    source = store.load_run(source_id)
    header = source.header.model_copy(
        update={"run_id": run_id, "created_at": utcnow(), "baseline": None}
    )
    log, run_id = store.start_run(header)
    for item in source.items[:keep]:
        if overall is not None:
            item = item.model_copy(deep=True)
            item.evaluation.scores = {"overall": overall}
        log.append(QueryEvaluation(run_id=run_id, data=item))
    assert store.load_run(run_id).summary is None
    return run_id


def rows_of(listing: str) -> dict[str, str]:
    lines = listing.splitlines()
    assert lines[0] == "Recent test runs:"
    return {line.split()[0]: line for line in lines[1:]}


# --------------------------------------------------------------------------- the run listing


def test_review_list_marks_a_run_without_a_summary_incomplete(run_cli, store):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    cut_short(store, "claude", "claude-cut", 5)
    result = run_cli("review", "--list")
    assert result.returncode == 0, result.stderr
    rows = rows_of(result.stdout)
    # the complete run's row is as it always was; the cut one keeps the columns and gains the marker
    assert re.fullmatch(
        r"  claude      cases    8 queries  overall=0\.\d\d  rated 0/8 · complete 0/8 \(k=1\)",
        rows["claude"],
    )
    assert re.fullmatch(
        r"  claude-cut  cases    5 queries  overall=0\.\d\d  rated 0/5 · complete 0/5 \(k=1\)"
        + INCOMPLETE_ROW.format(n=5, total=8),
        rows["claude-cut"],
    )
    assert rows["claude"].index("queries") == rows["claude-cut"].index("queries")
    assert rows["claude"].index("overall=") == rows["claude-cut"].index("overall=")


def test_run_listing_marks_a_run_without_an_expected_size(store):
    """A run whose header does not say how many items to expect is marked incomplete without the
    count."""
    store.create_run(RunHeader(run_id="bare", set="core"), [])
    log, _ = store.start_run(RunHeader(run_id="started", set="core"))
    rows = rows_of(run_listing(store, []))  # what the chat bots' /runs shows too
    assert rows["bare"].endswith("  (incomplete: no summary)")
    assert rows["started"].endswith("  (incomplete: no summary)")
    assert "incomplete" not in run_listing(Store(store.root.parent / "none"), [])


# --------------------------------------------------------------------------- compare


def test_compare_names_the_incomplete_side_in_markdown(run_cli, store):
    for run_id, outputs in (("claude", CLAUDE), ("gpt", GPT)):
        assert cli_run(run_cli, outputs, "--run-id", run_id, "--quiet").returncode == 0
    cut_short(store, "gpt", "gpt-cut", 3)
    whole = run_cli("compare", "claude", "gpt").stdout
    assert "incomplete" not in whole.lower()

    result = run_cli("compare", "claude", "gpt-cut")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    warnings = [line for line in lines if "incomplete" in line.lower() and not line.startswith("|")]
    assert any("gpt-cut" in w and "no summary" in w and "3 of 8" in w for w in warnings), (
        result.stdout
    )
    assert not any("claude" in w for w in warnings)
    header = lines.index(
        "| Model | Overall | Quote Quality | Reasoning | Correctness | Speed | Cost |"
    )
    assert lines.index(warnings[0]) < header  # read before the table
    labels = [line.strip("|").split("|")[0].strip() for line in lines[header + 2 : header + 4]]
    assert labels == ["claude-sonnet-4-5", "gpt-4.1 (incomplete)"]
    # the coverage matrices keep the run labels as column names
    assert "| Ground Truth | Priority | claude-sonnet-4-5 | gpt-4.1 |" in lines


def test_compare_json_says_which_run_is_incomplete(run_cli, store):
    for run_id, outputs in (("claude", CLAUDE), ("gpt", GPT)):
        assert cli_run(run_cli, outputs, "--run-id", run_id, "--quiet").returncode == 0
    cut_short(store, "gpt", "gpt-cut", 3)
    before = json.loads(run_cli("compare", "claude", "gpt", "--format", "json").stdout)
    result = run_cli("compare", "claude", "gpt-cut", "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    claude, cut = data["profiles"]
    # fields are added, none renamed or removed
    assert set(before["profiles"][0]) <= set(claude) and set(data) >= {"profiles", "coverage"}
    assert (
        claude["run_id"] == "claude"
        and claude["complete"] is True
        and claude["expected_items"] == 8
    )
    assert cut["run_id"] == "gpt-cut" and cut["complete"] is False
    assert cut["items"] == 3 and cut["expected_items"] == 8
    assert cut["label"] == "gpt-4.1"  # the label stays the run's label: JSON consumers key on it


# --------------------------------------------------------------------------- regressions


def test_default_baseline_skips_an_incomplete_run_and_says_so(run_cli, store, tmp_path):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    # a newer run of the set, killed after 3 items whose (perfect) scores any real run would regress
    # from
    cut_short(store, "claude", "aborted", 3, overall=1.0)
    result = cli_run(run_cli, CLAUDE, "--run-id", "claude-2", "--quiet")
    assert result.returncode == 0, result.stderr
    assert run_file(tmp_path, "claude-2")[0]["baseline"] == "claude"
    assert "✅ No regressions detected" in result.stdout
    notes = [line for line in result.stdout.splitlines() if "aborted" in line]
    assert (
        len(notes) == 1 and "incomplete" in notes[0] and "claude" in notes[0].replace("aborted", "")
    ), result.stdout

    # CI's --silent stays two lines and does not fail on the aborted run
    silent = cli_run(run_cli, CLAUDE, "--run-id", "claude-3", "--silent")
    assert silent.returncode == 0 and silent.stdout.splitlines()[1] == "✅ No regressions detected"
    assert len(silent.stdout.splitlines()) == 2
    assert run_file(tmp_path, "claude-3")[0]["baseline"] == "claude-2"


def test_previous_run_is_the_latest_complete_one(run_cli, store):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    assert previous_run(store, "cases", "answer") == ("claude", [])
    cut_short(store, "claude", "aborted", 3)
    cut_short(store, "claude", "running", 1)
    assert previous_run(store, "cases", "answer") == (
        "claude",
        ["running", "aborted"],
    )  # passed over, newest first
    assert previous_run(store, "cases", "search") == (None, [])


def test_only_incomplete_runs_of_the_set_mean_no_baseline(run_cli, store, tmp_path):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    cut_short(store, "claude", "aborted", 3, overall=1.0)
    store.run_path("claude").unlink()
    result = cli_run(run_cli, CLAUDE, "--run-id", "claude-2", "--quiet")  # only "aborted" is alike
    assert result.returncode == 0, result.stderr
    assert run_file(tmp_path, "claude-2")[0].get("baseline") is None
    assert "✅ No regressions detected" in result.stdout
    assert (
        "(no earlier complete run of set cases with target claude-sonnet-4-5 and judge lexical "
        "to compare with; this run is the baseline)"
    ) in result.stdout


def test_an_explicit_incomplete_baseline_is_named_and_compared_on_its_items(
    run_cli, store, tmp_path
):
    assert cli_run(run_cli, CLAUDE, "--run-id", "claude", "--silent").returncode == 0
    cut_short(store, "claude", "aborted", 3)
    result = cli_run(run_cli, GROK, "--run-id", "grok", "--quiet", "--baseline", "aborted")
    assert run_file(tmp_path, "grok")[0]["baseline"] == "aborted"  # asked for: honoured, and said
    notes = [line for line in result.stdout.splitlines() if "aborted" in line]
    assert len(notes) == 1 and "incomplete" in notes[0] and "3 of 8" in notes[0], result.stdout

    # the averages compare the same items: the 3 the baseline has, not its 3 against the new run's 8
    report = detect(store.load_run("grok"), store.load_run("aborted"), RegressionSettings())
    assert report.baseline_complete is False
    ids = [i.id for i in store.load_run("aborted").items]
    grok = {i.id: i.evaluation.scores["overall"] for i in store.load_run("grok").items}
    assert report.average_after == round(mean(grok[i] for i in ids), 4)
    whole = detect(store.load_run("grok"), store.load_run("claude"), RegressionSettings())
    assert whole.baseline_complete is True and whole.average_after == round(mean(grok.values()), 4)
