"""`hilbot sets list|generate|review` as a user runs them: a subprocess, piped input, a real pty."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pexpect
import pytest

from tests.conftest import HILBOT
from tests.evaluation.test_queries import query, write_set
from tests.fakes.anthropic_api import FakeAnthropic, tool

NO_KEY = {"ANTHROPIC_API_KEY": ""}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory with sets in the default place, tests/fixtures/queries."""
    root = tmp_path / "proj"
    qdir = root / "tests" / "fixtures" / "queries"
    write_set(
        qdir,
        "core",
        [query(n, note=f"n{n}") for n in range(1, 6)],
        name="core",
        version="1.0.0",
        owner="docs",
    )
    write_set(
        qdir,
        "relay-focus",
        [query(n, "relay") for n in range(1, 4)],
        name="relay-focus",
        version="2.0.0",
    )
    write_set(
        qdir,
        "generated/2026-12-17",
        [query(n, "gen-2026-12-17") for n in range(1, 13)],
        name="generated/2026-12-17",
        source="ai-generated",
    )
    return root


def qdir(project: Path) -> Path:
    return project / "tests" / "fixtures" / "queries"


def load(project: Path, name: str) -> dict:
    return json.loads((qdir(project) / f"{name}.json").read_text("utf-8"))


def snapshot(project: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(project)): p.read_bytes() for p in sorted(qdir(project).rglob("*.json"))
    }


def batch(*texts: str):
    return tool(queries=[{"text": t, "category": "tasks", "intent": f"find {t}"} for t in texts])


def one_line_error(result) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.fixture
def fake():
    with FakeAnthropic() as server:
        yield server


# --------------------------------------------------------------------------- list


def test_list_in_the_project_directory(run_cli, project):
    result = run_cli("sets", "list", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Available query sets:",
        "  core          5 queries  (curated, v1.0.0)",
        "  relay-focus   3 queries  (curated, v2.0.0)",
        "  generated/2026-12-17  12 queries  (ai-generated)",
    ]


def test_list_with_dir_and_config(run_cli, project, tmp_path):
    assert "core" in run_cli("sets", "list", "--dir", str(qdir(project))).stdout
    (project / "hilbot.toml").write_text('[queries]\ndir = "elsewhere"\n')
    assert "(none in elsewhere)" in run_cli("sets", "list", cwd=project).stdout


@pytest.mark.parametrize("command", ["list", "generate", "review"])
def test_every_sets_help_has_an_example(run_cli, command):
    result = run_cli("sets", command, "--help")
    assert result.returncode == 0 and f"Example: hilbot sets {command}" in result.stdout


# --------------------------------------------------------------------------- generate


def _generated(project: Path) -> list[Path]:
    return sorted(
        (p for p in (qdir(project) / "generated").glob("*.json") if p.name != "2026-12-17.json"),
        key=lambda p: len(p.name),
    )


def test_generate_edit_and_accept(run_cli, project, fake):
    (project / "hilbot.toml").write_text('[llm]\nmodel = "claude-test-model"\n')
    fake.queue(batch(*(f"proposed {n}" for n in range(1, 13))))
    lines = (
        "e\ndrop 2,3\nadd\nmy own query\nmy-category\nwhat I want\nedit 1\nfirst, "
        "reworded\n\n\ndone\na\n"
    )
    result = run_cli("sets", "generate", input=lines, cwd=project, env=fake.env())
    assert result.returncode == 0, result.stderr
    assert "Proposed queries, seeded from core (12 queries):" in result.stdout
    assert "  1. [tasks] proposed 1\n       intent: find proposed 1" in result.stdout
    assert "  12. [tasks] proposed 12\n       intent: find proposed 12" in result.stdout
    assert "Actions: [a]ccept all, [e]dit list, [r]egenerate, [q]uit" in result.stdout
    [path] = _generated(project)
    data = json.loads(path.read_text())
    day = path.stem
    assert (data["name"], data["source"], data["seeded_from"], data["model"]) == (
        f"generated/{day}",
        "ai-generated",
        "core",
        "claude-test-model",
    )
    texts = [q["text"] for q in data["queries"]]
    assert texts == ["first, reworded", *(f"proposed {n}" for n in range(4, 13)), "my own query"]
    assert [q["id"] for q in data["queries"]] == [f"gen-{day}-{n:02d}" for n in range(1, 12)]
    assert data["queries"][-1] == {
        "id": f"gen-{day}-11",
        "text": "my own query",
        "category": "my-category",
        "intent": "what I want",
    }
    assert fake.requests[0]["model"] == "claude-test-model"
    prompt = fake.requests[0]["messages"][0]["content"]
    assert "exactly 12" in prompt and "core query 1" in prompt and "core query 5" in prompt
    assert f"Saved 11 queries to tests/fixtures/queries/generated/{day}.json" in result.stdout


def test_generate_regenerate_then_accept(run_cli, project, fake):
    fake.queue(batch("first batch a", "first batch b"), batch("second batch a", "second batch b"))
    result = run_cli(
        "sets",
        "generate",
        "--set",
        "relay-focus",
        "--count",
        "2",
        input="r\na\n",
        cwd=project,
        env=fake.env(),
    )
    assert result.returncode == 0, result.stderr
    [path] = _generated(project)
    data = json.loads(path.read_text())
    assert [q["text"] for q in data["queries"]] == ["second batch a", "second batch b"]
    assert data["seeded_from"] == "relay-focus"
    second = fake.requests[1]["messages"][0]["content"]
    assert "first batch a" in second and "relay query 1" in second and "core query" not in second


def test_generate_twice_asks_again_and_never_overwrites(run_cli, project, fake):
    fake.queue(batch("a", "b"), batch("c", "d"))
    for _ in range(2):
        assert (
            run_cli(
                "sets", "generate", "--count", "2", input="a\n", cwd=project, env=fake.env()
            ).returncode
            == 0
        )
    first, second = _generated(project)
    assert second.name == f"{first.stem}-2.json" and len(fake.requests) == 2
    assert [q["text"] for q in json.loads(second.read_text())["queries"]] == ["c", "d"]
    assert [q["id"] for q in json.loads(second.read_text())["queries"]] == [
        f"gen-{second.stem}-01",
        f"gen-{second.stem}-02",
    ]


def test_generate_quit_and_eof_write_nothing(run_cli, project, fake):
    before = snapshot(project)
    for lines in ("q\n", "e\ndrop 1\n", ""):
        fake.queue(batch("a", "b"))
        result = run_cli(
            "sets", "generate", "--count", "2", input=lines, cwd=project, env=fake.env()
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.rstrip().endswith("Quit: nothing written.")
    assert snapshot(project) == before


def test_generate_without_a_key_is_one_line(run_cli, project):
    line = one_line_error(run_cli("sets", "generate", cwd=project, env=NO_KEY, input="a\n"))
    assert line.startswith(
        "error: no ANTHROPIC_API_KEY in the environment — export ANTHROPIC_API_KEY="
    )
    assert _generated(project) == []


# --------------------------------------------------------------------------- review


def test_review_all_edits_and_saves_back_to_both_files(run_cli, project):
    untouched = (qdir(project) / "generated" / "2026-12-17.json").read_bytes()
    lines = (
        "e\ndrop 2,7\nedit 1\nrenamed core query\n\nnew intent\nadd\nadded to core\norm\n\n"
        "add relay-focus\nadded to relay\nretries\nfind it\ndone\na\n"
    )
    result = run_cli("sets", "review", "--set", "all", input=lines, cwd=project, env=NO_KEY)
    assert result.returncode == 0, result.stderr
    assert (
        "  1. [routing] core query 1  (core)" in result.stdout and "(relay-focus)" in result.stdout
    )
    assert "Actions: [a]ccept all, [e]dit list, [q]uit" in result.stdout
    core, relay = load(project, "core"), load(project, "relay-focus")
    assert list(core) == ["name", "version", "owner", "queries"] and core["owner"] == "docs"
    assert [q["id"] for q in core["queries"]] == [
        "core-01",
        "core-03",
        "core-04",
        "core-05",
        "core-06",
    ]
    assert core["queries"][0] == {
        **query(1, note="n1"),
        "text": "renamed core query",
        "intent": "new intent",
    }
    assert core["queries"][1] == query(3, note="n3")
    assert core["queries"][-1] == {"id": "core-06", "text": "added to core", "category": "orm"}
    assert [q["id"] for q in relay["queries"]] == ["relay-01", "relay-03", "relay-04"]
    assert relay["queries"][-1] == {
        "id": "relay-04",
        "text": "added to relay",
        "category": "retries",
        "intent": "find it",
    }
    assert (qdir(project) / "generated" / "2026-12-17.json").read_bytes() == untouched
    assert "Saved core: 5 queries to tests/fixtures/queries/core.json" in result.stdout
    assert (
        "Saved relay-focus: 3 queries to tests/fixtures/queries/relay-focus.json" in result.stdout
    )


def test_review_fill_with_the_llm(run_cli, project, fake):
    fake.queue(batch("core query 4", "fresh one", "fresh two"))
    result = run_cli(
        "sets", "review", input="e\ndrop 1,2\nfill\ndone\na\n", cwd=project, env=fake.env()
    )
    assert result.returncode == 0, result.stderr
    assert "[f]ill gaps with the LLM" in result.stdout
    queries = load(project, "core")["queries"]
    assert [(q["id"], q["text"]) for q in queries][-2:] == [
        ("core-06", "fresh one"),
        ("core-07", "fresh two"),
    ]
    assert len(queries) == 5


def test_review_quit_writes_nothing(run_cli, project):
    before = snapshot(project)
    result = run_cli(
        "sets", "review", "--set", "all", input="e\ndrop 1\ndone\nq\n", cwd=project, env=NO_KEY
    )
    assert result.returncode == 0 and "Quit: nothing written." in result.stdout
    assert snapshot(project) == before


def test_review_unknown_set_is_one_line(run_cli, project):
    line = one_line_error(run_cli("sets", "review", "--set", "nope", cwd=project, env=NO_KEY))
    assert (
        "unknown query set 'nope'" in line
        and "core, relay-focus, generated/2026-12-17, all, generated/*" in line
    )


@pytest.mark.parametrize("command", [("sets", "list"), ("sets", "review", "--set", "all")])
def test_bad_json_is_file_line_and_exit_2(run_cli, project, command):
    path = qdir(project) / "relay-focus.json"
    path.write_text(
        '{\n  "name": "relay-focus",\n  "queries": [\n    {"id": "r1" "text": "x"}\n  ]\n}\n'
    )
    before = snapshot(project)
    line = one_line_error(run_cli(*command, cwd=project, env=NO_KEY, input="a\n"))
    assert line.startswith(
        "error: tests/fixtures/queries/relay-focus.json:4: not valid JSON (Expecting ',' delimiter)"
    )
    assert snapshot(project) == before


def test_invalid_field_is_file_line_and_field_path(run_cli, project):
    queries = [query(1), {"id": "core-02", "category": "x"}]
    write_set(qdir(project), "core", queries, name="core")
    line = one_line_error(run_cli("sets", "review", cwd=project, env=NO_KEY, input="a\n"))
    assert line.startswith(
        "error: tests/fixtures/queries/core.json:5: queries[1].text: Field required"
    )


# --------------------------------------------------------------------------- a real terminal


def _spawn(project: Path, *args: str) -> pexpect.spawn:
    env = {
        **os.environ,
        **NO_KEY,
        "HILBOT_DATA_DIR": str(project / "results"),
        "TERM": "dumb",
        "NO_COLOR": "1",
    }
    return pexpect.spawn(
        str(HILBOT),
        ["sets", "review", *args],
        env=env,
        cwd=str(project),
        encoding="utf-8",
        timeout=20,
        dimensions=(60, 140),
    )


def test_review_in_a_pty(project):
    child = _spawn(project, "--set", "core")
    child.expect(r"Actions: \[a\]ccept all, \[e\]dit list, \[q\]uit")
    child.sendline("e")
    child.expect("edit> ")
    child.sendline("drop 9")
    child.expect("No query 9: the list has 5")
    child.sendline("drop 2")
    child.expect('Dropped 1: 2. "core query 2"')
    child.expect("edit> ")
    child.sendline("edit 1")
    child.expect(r"text \[core query 1\]: ")
    child.sendline("typed in a terminal")
    child.expect(r"category \[routing\]: ")
    child.sendline("")
    child.expect(r"intent \[find 1\]: ")
    child.sendline("")
    child.expect("Updated 1: text.")
    child.sendline("done")
    child.expect("Actions:")
    child.sendline("a")
    child.expect("Saved core: 4 queries")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    queries = load(project, "core")["queries"]
    assert [q["text"] for q in queries] == [
        "typed in a terminal",
        "core query 3",
        "core query 4",
        "core query 5",
    ]


def test_ctrl_d_in_a_pty_quits_without_writing(project):
    before = snapshot(project)
    child = _spawn(project, "--set", "all")
    child.expect("Actions:")
    child.sendline("e")
    child.expect("edit> ")
    child.sendline("drop 1")
    child.expect("edit> ")
    child.sendeof()
    child.expect("Quit: nothing written.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert snapshot(project) == before


def test_hostile_set_text_and_piped_input_reach_the_terminal_visibly(tmp_path):
    from tests.auxil.cli import BUG, invoke

    hostile = "\x1b]0;T\x07\x1b[2J\u202e"
    qd = tmp_path / "q"
    write_set(
        qd, "evil", [query(1, "evil", text=f"t:{hostile}")], name="evil", version=f"1.0{hostile}"
    )
    env = {"HILBOT_DATA_DIR": str(tmp_path / "results"), **NO_KEY}
    listing = invoke("sets", "list", "--dir", str(qd), env=env, cwd=tmp_path)
    review = invoke(
        "sets",
        "review",
        "--set",
        "evil",
        "--dir",
        str(qd),
        input=f"e\nfrob{hostile}\ndone\nq\n",
        env=env,
        cwd=tmp_path,
    )
    for result in (listing, review):
        assert result.exit_code == 0 and BUG not in result.stderr, result.stderr
        for raw in ("\x1b", "\x07", "\u202e"):
            assert raw not in result.stdout + result.stderr, f"{raw!r} reached the terminal"
    assert "(curated, v1.0␛]0;T␇␛[2J<U+202E>)" in listing.stdout
    assert "  1. [routing] t:␛]0;T␇␛[2J<U+202E>" in review.stdout
    assert "frob␛]0;T␇␛[2J<U+202E>" in review.stdout  # the echoed input line
