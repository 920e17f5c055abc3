"""``hilbot analyze …`` as a user runs it, on a generated log with several reviewers per item
and on the demo runs: Markdown, JSON, ``--out`` files and charts, exit codes, one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from analysis.registry import Analysis, analyses
from analysis.synthetic import write_synthetic
from evaluation import Store


@pytest.fixture
def generated(store: Store) -> Store:
    """A small generated log: 6,000 ratings over 4 runs, several reviewers per item."""
    write_synthetic(store, ratings=6000, runs=4, items_per_run=150, reviewers=8, seed=3)
    return store


@pytest.mark.parametrize(
    "command, heading",
    [
        (["validate"], "# Validation"),
        (["agreement", "--bootstrap", "200"], "# Inter-rater agreement (all runs)"),
        (
            ["calibration", "--by", "dimension,category"],
            "# Calibration: AI judge vs humans (by dimension, category)",
        ),
        (["correlate", "--feature", "leap_distance"], "# Ratings vs leap_distance"),
        (["patterns"], "# Patterns"),
    ],
)
def test_each_report_in_markdown_json_and_files(command, heading, generated, run_cli, tmp_path):
    result = run_cli("analyze", *command)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(heading) and not re.search(
        r"\bnan\b", result.stdout.lower()
    )  # "Brennan" is fine
    as_json = run_cli("analyze", *command, "--format", "json")
    assert as_json.returncode == 0 and isinstance(json.loads(as_json.stdout), dict)
    out = tmp_path / "reports"
    written = run_cli("analyze", *command, "--out", str(out))
    assert written.returncode == 0 and "wrote" in written.stderr
    for path in out.iterdir():
        assert path.stat().st_size > 0
    assert {p.suffix for p in out.iterdir()} >= {".md", ".json"}
    if command[0] != "validate":
        assert any(
            p.suffix == ".png" and p.read_bytes().startswith(b"\x89PNG") for p in out.iterdir()
        )


def test_correlate_on_the_generated_log_finds_the_planted_trend(generated, run_cli):
    data = json.loads(
        run_cli("analyze", "correlate", "--feature", "leap_distance", "--format", "json").stdout
    )
    rates = [b["success_rate"] for b in data["buckets"]]
    assert rates == sorted(rates, reverse=True) and data["monotonicity"]["monotonic"] is True
    assert data["spearman"]["coefficient"] < -0.2


def test_synthesize_appends_a_statistical_review_summary(generated, run_cli):
    result = run_cli("analyze", "synthesize")
    assert result.returncode == 0, result.stderr
    assert "(statistical synthesis (no LLM))" in result.stdout and "Action items:" in result.stdout
    assert "pass --llm" in result.stderr
    summaries = [
        json.loads(line)
        for line in generated.ratings.path.read_text().splitlines()
        if '"review_summary"' in line
    ]
    assert summaries[-1]["synthesis_source"] == "statistical" and summaries[-1]["actionItems"]


def test_agreement_prints_a_summary_and_every_table_with_detail(generated, run_cli):
    """One row per dimension by default (the coefficient its scale calls for, its CI, band and n);
    ``--detail`` adds every coefficient, the reviewer pairs and the items to resolve."""
    short = run_cli("analyze", "agreement", "--bootstrap", "0")
    assert short.returncode == 0, short.stderr
    report = json.loads(
        run_cli("analyze", "agreement", "--bootstrap", "0", "--format", "json").stdout
    )
    rows = [line for line in short.stdout.splitlines() if line.startswith("| ")][1:]
    assert [row.split(" | ")[0][2:] for row in rows] == list(report["dimensions"])
    assert all("Krippendorff's α (" in row for row in rows)
    assert "| Fleiss' κ |" not in short.stdout and "Per reviewer pair" not in short.stdout
    detail = run_cli("analyze", "agreement", "--bootstrap", "0", "--detail")
    assert detail.returncode == 0 and "| Fleiss' κ |" in detail.stdout
    assert "Per reviewer pair" in detail.stdout
    assert "--detail" in run_cli("analyze", "agreement", "--help").stdout


def test_validate_exits_1_only_on_schema_errors(generated, run_cli):
    assert run_cli("analyze", "validate").returncode == 0
    with generated.ratings.path.open("a") as log:
        log.write('{"type": "rating", "run_id": "x"}\n')
    lines = generated.ratings.path.read_text().splitlines()
    result = run_cli("analyze", "validate")
    assert result.returncode == 1 and f"ratings.jsonl:{len(lines)}:" in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["correlate", "--feature", "nope"], "nope"),
        (["agreement", "--run", "no-such-run"], "no run 'no-such-run'"),
        (["agreement", "--weights", "cubic"], "--weights 'cubic' is not known"),
        (["patterns", "--format", "xml"], "unknown format 'xml'"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(args, message, generated, run_cli):
    result = run_cli("analyze", *args)
    assert (
        result.returncode == 2
        and message in result.stderr
        and len(result.stderr.strip().splitlines()) == 1
    )


def test_demo_data_without_ratings_is_reported_not_crashed(demo_store, run_cli):
    for command in (["agreement"], ["calibration"], ["patterns"]):
        result = run_cli("analyze", *command)
        assert result.returncode == 0 and "Traceback" not in result.stderr


def test_the_digest_carries_agreement_and_calibration_figures(generated, run_cli):
    digest = run_cli("digest")
    assert digest.returncode == 0, digest.stderr
    report = json.loads(
        run_cli("analyze", "agreement", "--bootstrap", "0", "--format", "json").stdout
    )
    assert report["version"] == 2 and report["dimensions"]
    for name, dim in report["dimensions"].items():
        alpha = dim["alpha"]["ordinal"]
        assert name == dim["dimension"]
        assert f"Agreement on {name}: α {alpha['value']:.3f} ({alpha['band']}" in digest.stdout
    calibration = json.loads(run_cli("analyze", "calibration", "--format", "json").stdout)
    for group in calibration["groups"]:
        rho = group["spearman"]["coefficient"]
        assert (
            f"AI judge vs humans on {group['key']['dimension']}: Spearman ρ {rho:.2f}"
            in digest.stdout
        )


def test_every_command_on_the_demo_runs_reviewed_by_two_people(demo_store, run_cli, tmp_path):
    (tmp_path / "hilbot.toml").write_text("[review]\nk = 2\n")
    keys = {
        "alice": "g" * 6 + "o1\n" + "g" * 5 + "p\n" + "g" * 5 + "q",
        "bob": "o\n" * 4 + "g" * 8 + "t2\n" + "g" * 5 + "q",
    }
    for who, typed in keys.items():
        assert run_cli("review", "demo-docs-search", "--reviewer", who, input=typed).returncode == 0
    commands = [
        ["validate"],
        ["agreement", "--bootstrap", "100"],
        ["calibration"],
        ["correlate", "--feature", "result_count"],
        ["patterns"],
        ["synthesize"],
    ]
    for command in commands:
        result = run_cli("analyze", *command)
        assert result.returncode == 0 and "Traceback" not in result.stderr, (command, result.stderr)
    report = json.loads(run_cli("analyze", "agreement", "--format", "json").stdout)
    shown = run_cli(
        "analyze", "agreement", "--weights", "ordinal", "--bootstrap", "0", "--detail"
    ).stdout
    assert "| Gwet's AC2 (ordinal) |" in shown and "| κ (ordinal) |" in shown
    [overall] = report["dimensions"].values()
    assert list(report["dimensions"]) == ["overall"]
    assert overall["n_raters"] == 2 and overall["n_pairable"] == 18 and len(overall["pairs"]) == 1
    assert "Agreement on overall" in run_cli("digest").stdout


# ----------------------------------------------------- help and usage errors import no analysis yet

HEAVY = (
    "pandas",
    "numpy",
    "scipy",
    "matplotlib",
    "evaluation.config",
    "evaluation.records",
)
"""What ``--help`` and a usage error must not import: the libraries an analysis computes with, and
the pydantic models of the configuration and of the log's records (which load and run it)."""
BUILTINS = ("validate", "agreement", "calibration", "correlate", "patterns", "synthesize", "triage")
STEPS = """
import json, sys
from bot.cli import main
heavy, steps, found = json.loads(sys.argv[1]), json.loads(sys.argv[2]), []
for argv in steps:
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code
    found.append([argv, code, [name for name in heavy if name in sys.modules]])
print("\\nSTEPS " + json.dumps(found))
"""
"""Runs each command line of ``argv[2]`` in turn through ``main()`` (as the console script does)
and prints, after each, its exit code and which of ``argv[1]`` are imported by then."""


def imported_by(steps: list[list[str]], cwd) -> list[tuple[list[str], int, list[str]]]:
    """Each command line with its exit code and the HEAVY modules imported once it has run, in a
    fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", STEPS, json.dumps(HEAVY), json.dumps(steps)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"HILBOT_DATA_DIR": str(cwd / "results"), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert "STEPS " in result.stdout, result.stderr
    return [tuple(step) for step in json.loads(result.stdout.rsplit("STEPS ", 1)[1])]


def usage_errors(spec: Analysis) -> list[list[str]]:
    """Command lines of ``spec`` that are usage errors: an unknown option, a bad ``--format``, a
    value out of an option's range or choices, a required option left out."""
    name = ["analyze", spec.name]
    given = [
        arg
        for option in spec.options
        if option.required and option.default is None
        for arg in (option.option, option.choices[0] if option.choices else "x")
    ]
    lines = [[*name, "--bogus"], [*name, *given, "--format", "xml"]]
    for option in spec.options:
        if option.high is not None:
            lines.append([*name, *given, option.option, str(int(option.high) + 1)])
        elif option.choices is not None:
            lines.append([*name, *given, option.option, "no-such-choice"])
    if given:
        lines.append([*name])
    return lines


def test_the_builtins_are_the_ones_checked_below():
    builtin = {n for n in analyses.names() if analyses.get(n).__module__.startswith("analysis.")}
    assert builtin == set(BUILTINS)


@pytest.mark.parametrize("name", BUILTINS)
def test_help_and_usage_errors_import_no_analysis_library(name, tmp_path):
    """``hilbot analyze NAME --help`` and every kind of usage error answer before pandas, numpy,
    scipy, matplotlib or the configuration and record models are imported: the analysis is
    imported when it runs, so each answers as fast as ``hilbot --help``."""
    steps = [["analyze", name, "--help"], *usage_errors(analyses.get(name))]
    found = imported_by(steps, tmp_path)
    assert [code for _, code, _ in found] == [0] + [2] * (len(steps) - 1), found
    assert all(not heavy for _, _, heavy in found), [
        (" ".join(argv), heavy) for argv, _, heavy in found if heavy
    ]


def test_the_listing_of_analyses_imports_no_analysis_library(tmp_path):
    steps = [["analyze", "--help"], ["analyze"], ["analyze", "no-such-analysis"]]
    found = imported_by(steps, tmp_path)
    assert [code for _, code, _ in found][2] == 2
    assert all(not heavy for _, _, heavy in found), found
