"""``--target-cmd`` with ``{query}``: the query is never run as code, by a rule that can be kept.

A table of programs cannot be complete (``node -pe``, ``flock -c``, ``git -c alias.x=!…``,
``make --eval``, ``gdb -ex``, ``vim -c``, ``zip -TT``, ``tar --checkpoint-action=exec=`` all got
through one). So the rule is mostly about *where* ``{query}`` stands, which needs no knowledge of
the program: a whole argument, never inside another one, never after an option that a ``--``
has not ended (it could be that option's value), never where a program is named. The table is
the second line: programs known to run their arguments (shells, interpreters, ``ssh``,
``xargs``, ``sudo``…) are looked up through wrappers (``env``, ``timeout``, ``nice``…).

Besides the tables, a property test builds command lines from wrappers, programs, options, words
and ``{query}`` placements whose meaning the test knows, and checks that whatever the checker
accepts keeps the query a plain argument of a program that does not run it.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.targets import CommandTarget, TargetError, query_refusal
from tests.auxil.cli import BUG, invoke

PY = shlex.quote(sys.executable)
ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------- the tables

BYPASSES = [
    # the reported ones: each ran the query as code through the old table
    "node -pe {query}",
    "flock LOCK -c {query}",
    "git -c alias.x=!{query} x",
    "tmux new-session -d {query}",
    "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec={query} .",
    "zip out.zip in.txt -T -TT {query}",
    "make --eval {query}",
    "make --eval={query}",
    "gdb -batch -ex {query}",
    "vim -es -c {query}",
    "sqlite3 :memory: {query}",
    "timeout -s KILL 5 sh {query}",
    "timeout -k 1 5 bash {query}",
    "docker exec box bash {query}",
    "mytool sh {query}",
    "python3 -W ignore -- {query}",
    "sh -c -- {query}",
    # shells and interpreters run their first argument (a script) or an option's value
    "bash {query}",
    "sh -- {query}",
    "bash - {query}",
    "bash +x {query}",
    "python3 {query}",
    "python3.11 -- {query}",
    "/usr/bin/python3.12 -u {query}",
    "python3 -m {query}",
    "python3 -c 'import sys' {query}",
    "perl {query}",
    "ruby -- {query}",
    "php {query}",
    "lua {query}",
    "Rscript {query}",
    "osascript {query}",
    "node -- {query}",
    "deno eval {query}",
    "deno run {query}",
    "bun {query}",
    "bun x {query}",
    "awk {query} file",
    "gawk -- {query}",
    "sed {query} file",
    "jq {query}",
    "git {query}",
    "pwsh {query}",
    "powershell mytool {query}",
    "cmd /c {query}",
    # programs that run their arguments as a command
    "ssh host mytool {query}",
    "xargs -0 {query}",
    "xargs mytool {query}",
    "watch -n1 {query}",
    "watch mytool {query}",
    "su -c {query}",
    "sudo -u x mytool {query}",
    "doas mytool {query}",
    "env -S {query}",
    "env -S mytool {query}",
    "env --split-string={query}",
    "eval {query}",
    "exec {query}",
    "nsenter -t 1 mytool {query}",
    "chroot / mytool {query}",
    "systemd-run mytool {query}",
    "parallel mytool ::: {query}",
    "find . -exec {query} +",
    "find . {query}",
    "screen -dm mytool {query}",
    "tmux {query}",
    "npx {query}",
    "uv run {query}",
    "go run {query}",
    "docker run {query}",
    "docker exec box {query}",
    "kubectl exec pod -- {query}",
    # wrappers are looked through, by basename, with version suffixes and paths
    "env timeout 5 nice -n 1 stdbuf -oL bash {query}",
    "nohup sh {query}",
    "flock LOCK sh {query}",
    "flock -w 3 LOCK python3 {query}",
    "ionice -c 3 python3 {query}",
    "setsid -w node {query}",
    "time -p perl {query}",
    "chrt -o 0 ruby {query}",
    "taskset 0x1 sh {query}",
    "unbuffer sh {query}",
    "command sh {query}",
    "builtin eval {query}",
    "/usr/bin/env /usr/local/bin/python3.12 {query}",
    "env FOO=1 -- sh {query}",
    "env -u HOME sh {query}",
    "nice -10 sh {query}",
    "strace -o t.txt sh {query}",
    "busybox sh {query}",
    "timeout --signal KILL 5 sh {query}",
    "uv run python {query}",
    # the program itself, or after a wrapper's unknown option (where its command starts is unknown)
    "{query}",
    "env {query}",
    "timeout 5 {query} arg",
    "nice -n 5 {query}",
    "timeout --bogus 5 mytool {query}",
    # {query} inside another argument, or after an option
    "mytool --q={query}",
    "mytool a{query}b",
    "mytool '{query}'x",
    "mytool -c {query}",
    "mytool -x {query}",
    "./bin/search --json {query}",
    "grep -e {query} /dev/null",
    "grep -i pattern {query}",
    "mytool -x file {query}",
    "awk -v q={query} '{ print q }'",
    "jq -n --arg q {query} '$q'",
    "curl -s --data-urlencode q={query} http://localhost:9",
    "sh -c 'grep \"$1\"' sh {query}",
    "python3 -c 'import sys; print(sys.argv[1])' {query}",
    "sed -n p {query}",
    # the old table's refusals
    "sh -c 'echo {query}'",
    'bash -c "mytool {query}"',
    "bash -lc 'mytool {query}'",
    "zsh -c {query}",
    "dash -c x{query}",
    "fish --command='echo {query}'",
    "/bin/sh -c 'echo {query}'",
    "env sh -c 'echo {query}'",
    "python3 -c{query}",
    "perl -ne 'print if /{query}/'",
    "node --eval='{query}'",
    "pwsh -Command 'echo {query}'",
    "php -r 'echo \"{query}\";'",
    "awk '/{query}/'",
    "sed 's/x/{query}/'",
    "docker exec box sh -c 'mytool {query}'",
    "xargs {query}",
    "sudo {query}",
]


@pytest.mark.parametrize("template", BYPASSES)
def test_every_known_way_to_run_the_query_as_code_is_refused(template):
    with pytest.raises(TargetError) as info:
        CommandTarget(template, 10)
    message = info.value.one_line()
    assert message.startswith("--target-cmd: {query} ") and "as code" in message, message
    assert "stdin" in message and '"$HILBOT_QUERY"' in message and "\n" not in message


ACCEPTED = [
    f"{PY} {shlex.quote(str(ROOT / 'examples' / 'docs_search.py'))} {{query}}",
    "python3 examples/search.py {query}",
    "echo {query}",
    "echo '{query}'",
    "grep -- {query} /dev/null",
    "grep -i -- {query} /dev/null",
    "grep time {query}",
    "./bin/search --json -- {query}",
    "sh script.sh {query}",
    "bash -e -- script.sh {query}",
    "nice -n 5 grep {query} /dev/null",
    "env FOO=1 grep -- {query} /dev/null",
    "timeout 5 grep {query} /dev/null",
    "timeout -s KILL 5 grep {query} /dev/null",
    "flock -w 3 LOCK grep {query} /dev/null",
    "awk '{ print }' {query}",
    "sed s/a/b/ {query}",
    "node app.js {query}",
    "perl script.pl {query}",
    "python3 -u -- script.py {query}",
    "git grep {query}",
    "git grep -- {query}",
    "cat {query}",
    "echo {query} {query}",
    "echo {query} --x",
]


@pytest.mark.parametrize("template", ACCEPTED)
def test_the_query_as_a_plain_argument_is_accepted(template, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("script.sh", "script.py", "script.pl", "app.js", "LOCK"):
        (tmp_path / name).write_text("")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "search").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "search").chmod(0o755)
    assert CommandTarget(template, 10).argv


@pytest.mark.parametrize(
    "template, where",
    [
        ("flock LOCK -c {query}", "the value of the option -c of flock"),
        ("node -pe {query}", "the value of the option -pe of node"),
        ("./bin/search --json {query}", "the value of the option --json of ./bin/search"),
        ("grep -e x {query}", "after the option -e of grep"),
        ("git -c alias.x=!{query} x", "inside the argument 'alias.x=!{query}'"),
        ("bash {query}", "the script bash would run"),
        ("ssh host mytool {query}", "an argument of ssh"),
        ("timeout 5 {query} arg", "the program timeout runs"),
        ("timeout --bogus 5 mytool {query}", "--bogus"),
    ],
)
def test_the_refusal_says_where_and_what_to_do_instead(template, where):
    with pytest.raises(TargetError) as info:
        CommandTarget(template, 10)
    message = info.value.one_line()
    assert where in message, message
    assert 'pass it on stdin (leave {query} out) or as "$HILBOT_QUERY"' in message


def test_an_option_before_the_query_gets_the_double_dash_hint():
    with pytest.raises(TargetError) as info:
        CommandTarget("./bin/search --json {query}", 10)
    assert "./bin/search --json -- {query}" in info.value.one_line()


def test_the_cli_refuses_a_bypass_in_one_line_and_runs_nothing(tmp_path):
    from tests.evaluation.test_queries import write_set

    code = "require('fs').writeFileSync('PWNED', '')"
    write_set(tmp_path / "q", "one", [{"id": "o1", "text": code}], name="one")
    env = {"HILBOT_DATA_DIR": str(tmp_path / "results"), "ANTHROPIC_API_KEY": ""}
    result = invoke(
        "run",
        "--set",
        "one",
        "--dir",
        str(tmp_path / "q"),
        "--target-cmd",
        "node -pe {query}",
        "--run-id",
        "bad",
        env=env,
        cwd=tmp_path,
    )
    assert result.exit_code == 2, (result.stdout, result.stderr)
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: --target-cmd: {query} is the value of the option -pe of node")
    assert BUG not in line and not (tmp_path / "PWNED").exists()
    assert not (tmp_path / "results" / "runs" / "bad.jsonl").exists()


def _echo_args(tmp_path: Path) -> str:
    (tmp_path / "args.py").write_text(
        'import sys, json\nprint(json.dumps({"answer": json.dumps(sys.argv[1:])}))\n'
    )
    return f"{PY} {shlex.quote(str(tmp_path / 'args.py'))}"


def test_a_query_that_looks_like_an_option_needs_a_double_dash(tmp_path, monkeypatch):
    # `rg {query} docs` with the query `--pre=sh` runs a program: an option is code enough
    import asyncio
    import json

    from evaluation.cases import Case
    from evaluation.records import Query

    monkeypatch.chdir(tmp_path)
    script = _echo_args(tmp_path)
    option = Case("c", Query(query="--pre=touch PWNED"))
    exposed = asyncio.run(CommandTarget(f"{script} {{query}}", 10)(option))
    assert exposed.answer is None and exposed.error.startswith("the query starts with '-'")
    assert "-- {query}" in exposed.error and "$HILBOT_QUERY" in exposed.error
    ended = asyncio.run(CommandTarget(f"{script} -- {{query}}", 10)(option))
    assert json.loads(ended.answer) == ["--", "--pre=touch PWNED"]
    plain = asyncio.run(CommandTarget(f"{script} {{query}}", 10)(Case("c", Query(query="a -b"))))
    assert json.loads(plain.answer) == ["a -b"]


# ------------------------------------------------------------------- the property

_LONG = os.environ.get("HILBOT_FUZZ_EXAMPLES")
PROPERTY = settings(
    max_examples=int(_LONG) if _LONG else 100,
    deadline=None,
    derandomize=not _LONG,
    suppress_health_check=list(HealthCheck),
    database=None,
)

Q = "{query}"
WRAPPERS: list[tuple[str, list[str], bool]] = [
    # (program, its options and operands before the command it runs, whether it runs code itself)
    ("timeout", ["5"], False),
    ("timeout", ["-s", "KILL", "5"], False),
    ("timeout", ["--kill-after=1", "5"], False),
    ("nice", [], False),
    ("nice", ["-n", "5"], False),
    ("nice", ["-n5"], False),
    ("env", ["FOO=1"], False),
    ("env", ["-i", "A=b"], False),
    ("env", ["-u", "HOME"], False),
    ("/usr/bin/env", [], False),
    ("nohup", [], False),
    ("stdbuf", ["-oL"], False),
    ("stdbuf", ["-o", "L"], False),
    ("flock", ["LOCK"], False),
    ("flock", ["-w", "3", "LOCK"], False),
    ("ionice", ["-c", "3"], False),
    ("setsid", ["-w"], False),
    ("time", ["-p"], False),
    ("chrt", ["-o", "0"], False),
    ("taskset", ["0x1"], False),
    ("taskset", ["-c", "0"], False),
    ("unbuffer", [], False),
    ("command", [], False),
    ("strace", ["-f"], False),
    ("env", ["-S"], True),
    ("flock", ["LOCK", "-c"], True),
]
BENIGN = ["mytool", "./bin/search", "/usr/local/bin/search-cli", "grep", "rg", "cat", "echo"]
SCRIPT_RUNNERS = [
    "sh",
    "bash",
    "/bin/bash",
    "python3",
    "python3.11",
    "/usr/bin/python3.12",
    "node",
    "perl",
    "ruby",
    "awk",
    "sed",
    "jq",
    "git",
]
WHOLE_RUNNERS = ["ssh", "xargs", "sudo", "tmux", "sqlite3", "watch", "make", "find", "eval", "doas"]
WORDS = ["docs", "a.md", "x", "5", "search", "index"]
OPTIONS = ["-c", "-e", "-pe", "--json", "--eval", "-x", "-n", "--flag=1", "+x"]
EMBEDDED = ["--x={query}", "a{query}b", "alias.x=!{query}", "{query}{query}"]


@st.composite
def command_lines(draw) -> tuple[list[str], dict]:
    """An argv and its meaning: where each wrapper's part ends, the program and its kind."""
    argv: list[str] = []
    wrapper_spans, code_wrapper_at = [], None
    for name, operands, runs_code in draw(st.lists(st.sampled_from(WRAPPERS), max_size=2)):
        start = len(argv)
        argv += [name, *operands]
        wrapper_spans.append((start, len(argv)))
        if runs_code and code_wrapper_at is None:
            code_wrapper_at = start
    kind = draw(st.sampled_from(["benign", "benign", "script", "whole"]))
    programs = {"benign": BENIGN, "script": SCRIPT_RUNNERS, "whole": WHOLE_RUNNERS}[kind]
    program = draw(st.sampled_from(programs))
    program_at = len(argv)
    argv.append(program)
    argv += draw(st.lists(st.sampled_from(WORDS * 3 + OPTIONS + ["--", "--", "-"]), max_size=5))
    for _ in range(draw(st.sampled_from([1, 1, 1, 2]))):
        form = draw(st.sampled_from([Q] * 8 + EMBEDDED))
        after_program = draw(st.booleans())  # often among the program's arguments: may be data
        argv.insert(draw(st.integers(program_at + 1 if after_program else 0, len(argv))), form)
    return argv, {"spans": wrapper_spans, "code_wrapper_at": code_wrapper_at, "kind": kind}


def _shifted(argv: list[str], meaning: dict) -> dict:
    """The meaning's indexes once {query} forms were inserted, found from the other words."""
    plain = [i for i, a in enumerate(argv) if Q not in a]  # the words placed first, in order
    spans = [(plain[a], plain[b] if b < len(plain) else len(argv)) for a, b in meaning["spans"]]
    program_at = plain[meaning["spans"][-1][1]] if meaning["spans"] else plain[0]
    code_at = plain[meaning["code_wrapper_at"]] if meaning["code_wrapper_at"] is not None else None
    return {"spans": spans, "program_at": program_at, "code_at": code_at, "kind": meaning["kind"]}


def _safe(argv: list[str], meaning: dict) -> bool:
    """Whether every {query} is a plain argument the program reads as data (by the meaning)."""
    m = _shifted(argv, meaning)
    program, at = argv[m["program_at"]], m["program_at"]
    shell = Path(program).name in ("sh", "bash")
    for q, arg in enumerate(argv):
        if Q not in arg:
            continue
        after_code = m["code_at"] is not None and q > m["code_at"]
        if arg != Q or q <= at or after_code or m["kind"] == "whole":
            return False  # inside a word, a wrapper's argument, a program's place, or run
        before = argv[at + 1 : q]
        ends = [i for i, word in enumerate(before) if word == "--" or (shell and word == "-")]
        head = before[: ends[0]] if ends else before
        options = [w for w in head if len(w) > 1 and (w[0] == "-" or (shell and w[0] == "+"))]
        if options and not ends:
            return False  # an option not ended by --: {query} could be its value
        # positional arguments before it: after --, and before it when no option could take one
        positional = len(before) - ends[0] - 1 if ends else len(before)
        if ends and not options:
            positional += ends[0]
        if m["kind"] == "script" and positional == 0:
            return False  # the script or program the interpreter runs
    return True


@PROPERTY
@given(command_lines())
def test_whatever_the_checker_accepts_keeps_the_query_a_plain_argument(generated):
    argv, meaning = generated
    if query_refusal(argv) is None:
        assert _safe(argv, meaning), argv


def test_the_property_oracle_knows_a_safe_line_from_an_unsafe_one():
    # the oracle itself, on lines whose meaning is written out by hand
    no_wrappers = {"spans": [], "code_wrapper_at": None}
    assert _safe(["mytool", Q], {**no_wrappers, "kind": "benign"})
    assert not _safe(["mytool", "-c", Q], {**no_wrappers, "kind": "benign"})
    assert _safe(["mytool", "-c", "--", Q], {**no_wrappers, "kind": "benign"})
    assert not _safe(["python3", Q], {**no_wrappers, "kind": "script"})
    assert _safe(["python3", "x.py", Q], {**no_wrappers, "kind": "script"})
    timeout = {"spans": [(0, 1)], "code_wrapper_at": None, "kind": "benign"}
    assert not _safe(["timeout", Q, "mytool"], timeout)
    flock_c = {"spans": [(0, 3)], "code_wrapper_at": 0, "kind": "benign"}
    assert not _safe(["flock", "LOCK", "-c", "mytool", Q], flock_c)
