"""The next command a hint prints runs as printed: ``hilbot`` only when that name on PATH is this
installation, else the script's path; a data directory the next command would not find is carried."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from bot.demo import SEARCH_RUN
from bot.invocation import prefix, program
from tests.conftest import HILBOT

BIN = Path(sys.executable).parent


def _without_venv(path: str) -> str:
    return os.pathsep.join(p for p in path.split(os.pathsep) if Path(p) != BIN)


def test_the_bare_name_only_when_path_finds_this_installation(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", os.pathsep.join([str(BIN), os.environ["PATH"]]))
    assert program() == "hilbot"
    monkeypatch.setenv("PATH", _without_venv(os.environ["PATH"]))
    monkeypatch.chdir(tmp_path)
    assert program() == str(BIN / "hilbot")  # not below the working directory: absolute
    monkeypatch.chdir(BIN.parent)
    assert program() == os.path.join(BIN.name, "hilbot")  # below it: as short as it gets
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "hilbot").write_text("#!/bin/sh\nexit 0\n")
    (other / "hilbot").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(other), os.environ["PATH"]]))
    assert program() == os.path.join(BIN.name, "hilbot")  # another hilbot on PATH is not this one


def test_the_data_dir_is_carried_only_when_the_next_command_would_miss_it(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    start = shlex.split(prefix(None))
    assert start == [program()]
    assert shlex.split(prefix("results")) == [program()]
    assert shlex.split(prefix("my data")) == [program(), "--data-dir", "my data"]
    assert shlex.split(prefix("elsewhere", "elsewhere")) == [program()]


def test_after_make_demo_the_printed_review_command_runs_without_an_activated_venv(tmp_path):
    """The demo's closing hint, run as printed from where the user is (nothing on PATH)."""
    env = {**os.environ, "PATH": _without_venv(os.environ["PATH"]), "USER": "tester"}
    env.pop("HILBOT_DATA_DIR", None)
    demo = subprocess.run(
        [str(HILBOT), "--data-dir", "demo data", "demo"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert demo.returncode == 0, demo.stderr
    [hint] = [line.strip() for line in demo.stdout.splitlines() if line.endswith(SEARCH_RUN)]
    words = shlex.split(hint)
    assert words == [str(HILBOT), "--data-dir", "demo data", "review", SEARCH_RUN]
    listed = subprocess.run(
        [*words[:-2], "review", "--list"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert listed.returncode == 0 and SEARCH_RUN in listed.stdout, listed.stderr
    assert "adjudicate demo-panel" in demo.stdout and f"{words[0]} --data-dir" in demo.stdout
    [pages] = [line for line in demo.stdout.splitlines() if "report --html" in line]
    printed = shlex.split(pages.split(": ", 1)[1].split(" (or live")[0])
    assert printed == [str(HILBOT), "--data-dir", "demo data", "report", "--html", "report.html"]
    report = subprocess.run(printed, capture_output=True, text=True, cwd=tmp_path, env=env,
                            timeout=120)
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "report.html").read_text().startswith("<!doctype html>")
    assert f"{words[0]} --data-dir 'demo data' dashboard)" in pages
