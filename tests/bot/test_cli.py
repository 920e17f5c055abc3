"""The `hilbot` command line as a user runs it: in-process through `main()`, and a few runs of the
installed console script."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import RAG_RUN, SEARCH_RUN

HEAVY = (
    "pandas",
    "scipy",
    "numpy",
    "anthropic",
    "telegram",
    "slack_bolt",
    "slack_sdk",
    "matplotlib",
    "duckdb",
)
COMMANDS = ["demo", "review", "import", "export", "schema"]


def test_help_imports_no_heavy_library():
    code = (
        "import sys; sys.argv = ['hilbot', '--help']\nfrom bot.cli import main\ntry:\n    main()\n"
        "except SystemExit:\n    pass\nprint('LOADED', sorted({m.split('.')[0] for m in "
        "sys.modules}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = out.split("LOADED", 1)[1]
    assert "Usage" in out
    for name in HEAVY:
        assert f"'{name}'" not in loaded, f"`hilbot --help` imported {name}"


EVERY_HELP = """
import sys
from itertools import chain
import typer
from bot.cli import main
from bot.cli._app import app


def paths(command, path):
    yield path
    if hasattr(command, "list_commands"):  # a group
        context = typer.Context(command)
        for name in command.list_commands(context):
            yield from paths(command.get_command(context, name), [*path, name])


heavy = sys.argv[1].split(",")
# lazily: the walk reaches a command once the help of its group has run
platforms = [["serve", "telegram"], ["serve", "slack"]]
for path in chain(paths(typer.main.get_command(app), []), platforms):
    try:
        main([*path, "--help"])
    except SystemExit:
        pass
    loaded = [name for name in heavy if name in sys.modules]
    print("\\nHELP", " ".join(path) or "(hilbot)", "imported", ",".join(loaded) or "nothing")
"""
"""``hilbot --help`` and the help of every command and subcommand under it, in turn in one
interpreter, each followed by what it imported."""


def test_every_help_imports_no_heavy_library_nor_the_models():
    """Every ``--help`` (every command, subcommand and analysis) answers as fast as ``hilbot
    --help``: none imports a heavy library, the configuration's or the records' models."""
    heavy = [*HEAVY, "evaluation.config", "evaluation.records"]
    out = subprocess.run(
        [sys.executable, "-c", EVERY_HELP, ",".join(heavy)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = re.findall(r"^HELP (.*) imported (.*)$", out, re.M)
    helped = {path for path, _ in lines}
    assert {"(hilbot)", "review", "sets list", "analyze", "analyze agreement"} <= helped, helped
    assert [(path, what) for path, what in lines if what != "nothing"] == []


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_help_has_an_example(run_cli, command):
    result = run_cli(*([command] if command else []), "--help")
    assert result.returncode == 0
    assert re.search(r"Example: hilbot\b", result.stdout), result.stdout


@pytest.mark.parametrize("bad", ["../../etc/passwd", "a/b", ".hidden"])
def test_unsafe_run_id_is_a_one_line_error(run_process, bad):
    result = run_process("review", bad)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith("error: invalid run id")
        and "Traceback" not in result.stderr
    )
    assert "letters, digits" in lines[0]


def test_unknown_run_is_a_one_line_error(run_cli):
    result = run_cli("review", "no-such-run")
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == "error: no run 'no-such-run' in " + result.stderr.split(" in ", 1)[1].strip()
    )
    assert "hilbot review --list" in result.stderr


def test_demo_without_a_terminal_prints_the_runs_and_how_to_review(run_process, tmp_path):
    result = run_process("demo")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert re.search(r'^\[1/18\] "', out, re.M) and re.search(r'^\[1/12\] "', out, re.M)
    assert re.search(r"^  → 1\. \[0\.\d\d\] /docs/", out, re.M)
    assert re.search(
        r"^  [✓✗] AI \[recorded\]: relevance=0\.\d\d ranking=0\.\d\d coverage=0\.\d\d "
        r"snippet=0\.\d\d overall=0\.\d\d$",
        out,
        re.M,
    )
    assert f"hilbot review {SEARCH_RUN}" in out
    run_file = tmp_path / "results" / "runs" / f"{SEARCH_RUN}.jsonl"
    before = run_file.read_bytes()
    again = run_process("demo")
    assert again.returncode == 0 and "already there" in again.stdout
    assert run_file.read_bytes() == before  # never rewritten


def test_review_list_shows_id_set_size_overall_and_review_state(run_cli):
    run_cli("demo")
    run_cli("review", SEARCH_RUN, "--reviewer", "zoe", input="g")
    out = run_cli("review", "--list").stdout.splitlines()
    assert out[0] == "Recent test runs:"
    rows = {line.split()[0]: line for line in out[1:]}
    assert re.fullmatch(
        rf"  {SEARCH_RUN}\s+docs-search\s+18 queries  overall=0\.\d\d  "
        r"rated 1/18 · complete 1/18 \(k=1\)",
        rows[SEARCH_RUN],
    )
    assert re.fullmatch(
        rf"  {RAG_RUN}\s+rag-answers\s+12 queries  overall=0\.\d\d  "
        r"rated 0/12 · complete 0/12 \(k=1\)",
        rows[RAG_RUN],
    )


def test_bad_log_lines_are_reported_with_file_and_line_and_left_in_place(run_cli, tmp_path):
    run_cli("demo")
    ratings = tmp_path / "results" / "ratings.jsonl"
    ratings.write_text('{"type": "note"}\nnot json\n')
    before = ratings.read_bytes()
    result = run_cli("review", "--list")
    assert result.returncode == 0
    assert (
        f"warning: {ratings}:1: " in result.stderr
        and f"warning: {ratings}:2: invalid JSON" in result.stderr
    )
    assert ratings.read_bytes() == before


def test_bad_config_is_exit_2_with_the_key_path(run_cli, tmp_path):
    (tmp_path / "hilbot.toml").write_text("[review]\nwindow = 1\nflavour = 'mint'\n")
    result = run_cli("review", "--list")
    assert result.returncode == 2
    assert result.stderr.strip().startswith("error: hilbot.toml:3: unknown key review.flavour")


def test_unknown_dimension_via_cli(run_cli):
    run_cli("demo")
    result = run_cli("review", SEARCH_RUN, "--dimension", "vibes")
    assert result.returncode == 2 and "unknown dimension 'vibes'" in result.stderr


def test_a_failing_command_says_one_line_even_when_the_log_has_bad_lines(run_cli, tmp_path):
    """Warnings about bad lines are shown when the command succeeds; a failure is its one error
    line."""
    run_cli("demo")
    (tmp_path / "results" / "ratings.jsonl").write_bytes(b"{oops\n[]\n\xff\n")
    (tmp_path / "adir").mkdir()
    failed = run_cli("export", SEARCH_RUN, "--out", str(tmp_path / "adir"))
    assert (
        failed.returncode == 2
        and failed.stderr.count("\n") == 1
        and failed.stderr.startswith("error: ")
    ), failed.stderr
    listed = run_cli("review", "--list")
    assert listed.returncode == 0 and listed.stderr.count("warning: ") == 3, listed.stderr
