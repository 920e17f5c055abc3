"""Targets: ``module:function`` (sync and async), ``--target-cmd`` (``{query}`` one argument, or
stdin), timeouts, failures recorded on the item while the run goes on, and ``--outputs``."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import pytest

from evaluation.cases import Case
from evaluation.judges import get_judge
from evaluation.records import Query
from evaluation.runner import RunPlan, evaluate, execute
from evaluation.targets import CommandTarget, OutputsTarget, PythonTarget, TargetError, make_target

ROOT = Path(__file__).resolve().parents[2]
PY = shlex.quote(sys.executable)


def case(query: str, id: str = "c1", **kw) -> Case:
    return Case(id, Query(query=query), **kw)


def call(target, c: Case):
    return asyncio.run(target(c))


@pytest.fixture
def targets_module(tmp_path, monkeypatch):
    """A tiny module of targets, importable as ``tmp_targets``."""
    (tmp_path / "tmp_targets.py").write_text(
        textwrap.dedent("""
        import asyncio, threading, time

        RELEASE = threading.Event()

        def answer(query):
            time.sleep(0.05)
            return {"answer": "A: " + query, "quotes": ["q1"], "contexts": ["c1"], "cost_usd": 0.0125,
                    "usage": {"input_tokens": 10, "output_tokens": 5}, "model": "tiny-1"}

        async def ranked(query):
            await asyncio.sleep(0.01)
            return ["/docs/a.md", "/docs/b.md", {"path": "/docs/c.md", "title": "C", "snippet": query}]

        def text(query):
            return "just text"

        def boom(query):
            raise RuntimeError("boom on " + query)

        def nothing(query):
            return None

        async def forever(query):
            await asyncio.sleep(30)

        def hangs(query):
            if "hang" in query:
                RELEASE.wait(10)  # a sync target that never returns in time
            return "done " + query
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    sys.modules.pop("tmp_targets", None)
    yield tmp_path
    import tmp_targets  # noqa: F401  (release any thread still waiting)

    sys.modules["tmp_targets"].RELEASE.set()
    sys.modules.pop("tmp_targets", None)


# --------------------------------------------------------------------------- module:function


def test_sync_function_dict_output_with_latency_and_cost(targets_module):
    out = call(PythonTarget("tmp_targets:answer", 5), case("How far?"))
    assert out.error is None
    assert out.answer == "A: How far?" and out.quotes == ["q1"] and out.contexts == ["c1"]
    assert (
        out.cost_usd == 0.0125
        and out.model == "tiny-1"
        and out.usage == {"input_tokens": 10, "output_tokens": 5}
    )
    assert 50 <= out.latency_ms < 2000  # the function sleeps 50 ms


def test_async_function_returning_paths_and_dicts(targets_module):
    out = call(PythonTarget("tmp_targets:ranked", 5), case("ranked query"))
    assert [(r.rank, r.path) for r in out.results] == [
        (1, "/docs/a.md"),
        (2, "/docs/b.md"),
        (3, "/docs/c.md"),
    ]
    assert out.results[2].snippet == "ranked query" and out.answer is None
    assert out.latency_ms is not None and out.latency_ms >= 10


def test_plain_string_is_an_answer(targets_module):
    assert call(PythonTarget("tmp_targets:text", 5), case("x")).answer == "just text"


def test_example_docs_search_target():
    out = call(
        PythonTarget("examples.docs_search:search", 5), case("burrow connection pool timeout")
    )
    assert out.error is None and out.results
    assert [r.rank for r in out.results] == list(range(1, len(out.results) + 1))
    assert all(r.path.startswith("/") and r.path.endswith(".md") for r in out.results)
    assert "/docs/burrow/connections/pooling.md" in [r.path for r in out.results]


def test_exception_and_bad_return_are_recorded_not_raised(targets_module):
    failed = call(PythonTarget("tmp_targets:boom", 5), case("q"))
    assert failed.error == "RuntimeError: boom on q" and failed.latency_ms is not None
    bad = call(PythonTarget("tmp_targets:nothing", 5), case("q"))
    assert bad.error.startswith("bad return value") and "NoneType" in bad.error


def test_async_timeout(targets_module):
    started = time.perf_counter()
    out = call(PythonTarget("tmp_targets:forever", 0.2), case("q"))
    assert out.error == "timed out after 0.2s"
    assert time.perf_counter() - started < 2
    assert 150 <= out.latency_ms < 2000


def test_a_hung_sync_target_does_not_hold_the_run_past_its_timeout(targets_module, store, config):
    # [targets] timeout_s is the promise that one stuck call cannot stall a run. The sync target
    # blocks (for up to 10 s) on the "hang" query; the run must finish soon after the 0.3 s timeout.
    plan = RunPlan(
        "sync-timeout",
        "t",
        "answer",
        [case("please hang", "a"), case("fast", "b")],
        PythonTarget("tmp_targets:hangs", 0.3),
        get_judge("lexical", config, store),
    )
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(evaluate, store, config, plan)
        try:
            outcome = future.result(timeout=2.5)
        except FutureTimeout:
            outcome = None
        finally:
            sys.modules["tmp_targets"].RELEASE.set()  # let the stuck thread go either way
    assert outcome is not None, "the run waited for the timed-out sync target to return"
    items = {i.id: i for i in outcome.run.items}
    assert items["a"].error == "timed out after 0.3s"
    assert items["b"].answer == "done fast"


def test_bad_specs_are_one_line_errors(targets_module):
    with pytest.raises(TargetError, match="is not module:function"):
        PythonTarget("no_colon_here", 5)
    with pytest.raises(TargetError, match="cannot import 'no_such_module_xyz'"):
        PythonTarget("no_such_module_xyz:f", 5)
    with pytest.raises(TargetError, match="no callable 'missing'"):
        PythonTarget("tmp_targets:missing", 5)
    with pytest.raises(TargetError, match="exactly one of"):
        make_target()
    with pytest.raises(TargetError, match="exactly one of"):
        make_target(target="tmp_targets:text", command="echo hi")


# --------------------------------------------------------------------------- --target-cmd

ECHO_ARGV = (
    'import sys, json; print(json.dumps({"answer": sys.argv[1], "cost_usd": 0.5, "model": "cmd"}))'
)
"""A script printing its first argument as the answer, with a cost and a model."""
ECHO_STDIN = f"{PY} -c 'import sys, json; print(json.dumps({{\"answer\": sys.stdin.read()}}))'"
NASTY = "It's 8\" away; \"$(touch PWNED)\" `touch PWNED2` $HOME \\ && touch PWNED3 'quoted'"


def script(directory: Path, name: str, body: str) -> str:
    """A Python script written to ``directory``, as the command running it ({query} may follow)."""
    path = directory / f"{name}.py"
    path.write_text(body + "\n")
    return f"{PY} {shlex.quote(str(path))}"


def test_query_placeholder_is_one_argument_of_data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = call(CommandTarget(f"{script(tmp_path, 'echo', ECHO_ARGV)} {{query}}", 10), case(NASTY))
    assert out.error is None, out.error
    assert out.answer == NASTY  # one argument, byte for byte: nothing expanded, nothing run
    assert out.cost_usd == 0.5 and out.model == "cmd" and out.latency_ms > 0
    assert not list(tmp_path.glob("PWNED*"))


def test_without_placeholder_the_query_goes_to_stdin(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = call(CommandTarget(ECHO_STDIN, 10), case(NASTY))
    assert out.answer == NASTY and not list(tmp_path.glob("PWNED*"))


def test_plain_text_stdout_and_results_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert call(CommandTarget("echo '  plain answer  '", 10), case("q")).answer == "plain answer"
    out = call(
        CommandTarget(
            f"{PY} {shlex.quote(str(ROOT / 'examples' / 'docs_search.py'))} {{query}}", 20
        ),
        case("ferret middleware ordering"),
    )
    assert out.error is None and out.results and out.results[0].path.startswith("/docs/")
    assert call(CommandTarget("echo '{not json'", 10), case("q")).error.startswith(
        "stdout is not the expected JSON"
    )
    assert call(CommandTarget("true", 10), case("q")).error == "no output on stdout"


def test_nonzero_exit_is_recorded_with_stderr(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = call(CommandTarget("echo 'index missing' >&2; exit 3", 10), case("q"))
    assert (
        out.error == "exit 3: index missing" and out.answer is None and out.latency_ms is not None
    )


def test_command_timeout_kills_the_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    started = time.perf_counter()
    out = call(CommandTarget("sleep 0.8; touch LATE", 0.2), case("q"))
    assert out.error == "timed out after 0.2s"
    assert time.perf_counter() - started < 0.7
    time.sleep(0.9)
    assert not (tmp_path / "LATE").exists()  # the whole process group was killed


def test_a_failing_item_is_recorded_and_the_run_goes_on(tmp_path, monkeypatch, store, config):
    monkeypatch.chdir(tmp_path)
    command = (
        script(
            tmp_path,
            "flaky",
            "import sys, json; q = sys.argv[1]\n"
            'if "fail" in q: sys.stderr.write("no luck\\n"); sys.exit(4)\n'
            'out = {"answer": q, "quotes": ["rule one text here"], "cost_usd": 0.01}\n'
            "print(json.dumps(out))",
        )
        + " {query}"
    )
    cases = [
        case(q, f"c{n}", ground_truth_contexts=[], ground_truth_answers=["rule one"])
        for n, q in enumerate(["first", "please fail", "third"])
    ]
    plan = RunPlan(
        "cmd-run",
        "t",
        "answer",
        cases,
        CommandTarget(command, 10),
        get_judge("lexical", config, store),
    )
    run = asyncio.run(execute(store, plan))
    assert [i.id for i in run.items] == ["c0", "c1", "c2"]
    failed = run.items[1]
    assert failed.error == "exit 4: no luck"
    assert (
        failed.evaluation.error == "target failed: exit 4: no luck"
        and failed.evaluation.scores == {}
    )
    for item in (run.items[0], run.items[2]):
        assert item.error is None and item.evaluation.scores and item.evaluation.judge == "lexical"
        assert item.cost_usd == 0.01 and item.latency_ms > 0
    reread = store.load_run("cmd-run")
    assert reread.summary is not None and reread.summary.item_count == 3
    # the file is appended in completion order; compare by id
    assert {i.id: i.latency_ms for i in reread.items} == {i.id: i.latency_ms for i in run.items}


# -------------------------------------------------------------------- --target-cmd: hostile queries

ARGS = 'import sys, json; print(json.dumps({"answer": json.dumps(sys.argv[1:])}))'
"""A script printing the arguments it got as the answer (a JSON list)."""
ENV_STDIN_SCRIPT = (
    'import os, sys, json; print(json.dumps({"answer": json.dumps('
    '[os.environ.get("HILBOT_QUERY"), sys.stdin.read()])}))'
)
"""A script printing $HILBOT_QUERY (null when unset) and stdin as the answer (a JSON list)."""
ENV_STDIN = f"{PY} -c {shlex.quote(ENV_STDIN_SCRIPT)}"
"""That script as a shell command (no ``{query}``)."""


@pytest.fixture
def ARGV(tmp_path) -> str:
    """The command running :data:`ARGS` (``{query}`` may follow it)."""
    return script(tmp_path, "args", ARGS)


HOSTILE = [
    "$(touch PWNED)",
    "`touch PWNED`",
    "; touch PWNED",
    "x | touch PWNED",
    "x && touch PWNED",
    "x\ntouch PWNED",
    "'",
    '"',
    "\\",
    "' ; touch PWNED ; '",
    '" ; touch PWNED ; "',
    "$HOME",
    "*",
    "--foo",
    "-c",
    "--version",
    "{query}",
    "  two  spaces  ",
    "ünï ✓ 🦀",
]


def args_of(out) -> list:
    assert out.error is None, out.error
    return json.loads(out.answer)


def test_the_reported_repro_prints_the_query_and_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = call(CommandTarget("echo '{query}'", 10), case("$(touch PWNED)"))
    assert out.error is None and out.answer == "$(touch PWNED)"
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize(
    "template", ["{query}", "'{query}'", '"{query}"', "-- {query}", "'--' '{query}'"]
)
def test_the_query_is_data_whatever_quotes_the_template_puts_around_it(
    tmp_path, monkeypatch, ARGV, template
):
    monkeypatch.chdir(tmp_path)
    target = CommandTarget(f"{ARGV} {template}", 10)
    ended = "--" in template
    for query in HOSTILE:
        out = call(target, case(query))
        if query.startswith("-") and not ended:  # could be an option: not passed, said on the item
            assert out.answer is None, (template, query)
            assert out.error.startswith("the query starts with '-'"), (template, query)
        else:
            assert args_of(out) == ["--", query] if ended else [query], (template, query)
    assert not list(tmp_path.glob("PWNED*"))


def test_the_placeholder_twice_but_never_inside_a_word(tmp_path, monkeypatch, ARGV):
    monkeypatch.chdir(tmp_path)
    query = "a'b\"c $(touch PWNED)"
    assert args_of(call(CommandTarget(f"{ARGV} {{query}} {{query}}", 10), case(query))) == [
        query,
        query,
    ]
    for template in ("x{query}-{query}y", "--q={query}", "'--q={query}'", '"--q="{query}'):
        with pytest.raises(TargetError, match="is inside the argument"):
            CommandTarget(f"{ARGV} {template}", 10)
    assert not list(tmp_path.glob("PWNED*"))


def test_quoted_shell_syntax_in_the_template_is_passed_literally(tmp_path, monkeypatch, ARGV):
    monkeypatch.chdir(tmp_path)
    out = call(CommandTarget(f"{ARGV} 'a; b | c && $(touch PWNED)' {{query}}", 10), case("q"))
    assert args_of(out) == ["a; b | c && $(touch PWNED)", "q"]
    assert not list(tmp_path.glob("PWNED*"))


def test_a_placeholder_command_gets_the_query_in_hilbot_query_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = f"{script(tmp_path, 'env_stdin', ENV_STDIN_SCRIPT)} {{query}}"
    out = call(CommandTarget(command, 10), case("it's $(x)"))
    assert args_of(out) == ["it's $(x)", ""]  # stdin is empty in this mode


@pytest.mark.parametrize(
    "template",
    [
        "sleep 0.3; CMD {query}",
        "CMD {query} | jq .",
        "CMD {query} && true",
        "CMD {query} || true",
        "CMD {query} > out.txt",
        "CMD {query} >> out.txt",
        "CMD {query} < in.txt",
        "CMD {query} &",
        "CMD {query}\nrm x",
        "CMD $(cat token) {query}",
        "CMD `cat token` {query}",
        'CMD "$(cat token)" {query}',
        'CMD "`id`" {query}',
        "CMD $HOME {query}",
        'CMD "${HOME}" {query}',
        "CMD {query} 2>/dev/null",
        "(CMD {query})",
        "FOO=1 CMD {query}",
        "CMD {query} # a comment",
    ],
)
def test_shell_syntax_with_the_placeholder_is_refused_up_front(template):
    with pytest.raises(TargetError) as info:
        CommandTarget(template.replace("CMD", PY), 10)
    message = info.value.one_line()
    assert "without a shell" in message and "$HILBOT_QUERY" in message and "\n" not in message


@pytest.mark.parametrize(
    "template",
    [
        "sh -c 'echo {query}'",
        'bash -c "mytool {query}"',
        "bash -lc 'mytool {query}'",
        "bash -ec 'mytool {query}'",
        "bash -o pipefail -c 'mytool {query}'",
        "zsh -c {query}",
        "dash -c x{query}",
        "ksh -c '{query}'",
        "fish -c 'echo {query}'",
        "fish --command='echo {query}'",
        "/bin/sh -c 'echo {query}'",
        "env sh -c 'echo {query}'",
        "env FOO=1 /usr/bin/bash -c 'echo {query}'",
        "timeout 5 sh -c 'echo {query}'",
        "busybox sh -c 'echo {query}'",
        "python -c 'print(\"{query}\")'",
        "python3 -c '{query}'",
        "python3.11 -I -c '{query}'",
        "python3 -Ic '{query}'",
        "python3 -c{query}",
        "perl -e 'print \"{query}\"'",
        "perl -ne 'print if /{query}/'",
        "perl -E '{query}'",
        "ruby -e 'puts \"{query}\"'",
        "node -e 'console.log(\"{query}\")'",
        "node --eval '{query}'",
        "node -p '{query}'",
        "node --eval='{query}'",
        "pwsh -c 'echo {query}'",
        "pwsh -Command 'echo {query}'",
        "powershell -command '{query}'",
        "php -r 'echo \"{query}\";'",
        "awk '/{query}/'",
        "gawk -F, '{{print \"{query}\"}}'",
        "sed 's/x/{query}/'",
        "sed -n -e 's/x/{query}/p'",
        "ssh host mytool {query}",
        "docker exec box sh -c 'mytool {query}'",
        "su -c 'mytool {query}'",
        "watch mytool {query}",
        "{query}",
        "env {query}",
        "timeout 5 {query} arg",
        "nice -n 5 {query}",
        "xargs {query}",
        "sudo {query}",
    ],
)
def test_the_placeholder_where_a_program_would_run_it_as_code_is_refused(template):
    with pytest.raises(TargetError) as info:
        CommandTarget(template, 10)
    message = info.value.one_line()
    assert "as code" in message and "$HILBOT_QUERY" in message and "\n" not in message


@pytest.mark.parametrize(
    "template",
    [
        "sh script.sh {query}",
        "bash -e -- script.sh {query}",
        "env FOO=1 grep -e x -- {query} /dev/null",
        "timeout 5 grep -e x -- {query} /dev/null",
        "nice -n 5 grep {query} /dev/null",
        "awk '{ print }' {query}",
        "sed s/a/b/ {query}",
        "python3 script.py {query}",
        "python3 -I -- script.py {query}",
        "perl script.pl {query}",
        "node app.js {query}",
        "curl -s -- {query}",
        "grep -- {query} /dev/null",
        "grep time {query}",
    ],
)
def test_the_placeholder_as_data_is_accepted(template):
    assert CommandTarget(
        template, 10
    ).argv  # no refusal: {query} is an argument a program reads as data


def test_the_safe_forms_the_refusals_suggest_do_work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    query = 'it\'s `touch PWNED` $(touch PWNED2); "q"'
    (tmp_path / "args.py").write_text(
        'import sys, json\nprint(json.dumps({"answer": json.dumps(sys.argv[1:])}))\n'
    )
    from_env = CommandTarget(f"sh -c '{PY} args.py \"$HILBOT_QUERY\"'", 10)
    assert args_of(call(from_env, case(query))) == [query]
    assert args_of(call(CommandTarget(f'{PY} args.py "$HILBOT_QUERY" | cat', 10), case(query))) == [
        query
    ]
    piped = CommandTarget(
        f"printf '%s' \"$HILBOT_QUERY\" | {PY} -c 'import sys; print(sys.stdin.read())'", 10
    )
    assert call(piped, case(query)).answer == query
    ended = CommandTarget(f"{PY} args.py -- {{query}} --x", 10)  # options ended: "-c" is data
    assert args_of(call(ended, case("-c"))) == ["--", "-c", "--x"]
    assert not list(tmp_path.glob("PWNED*"))


def test_without_placeholder_the_query_is_on_stdin_and_in_hilbot_query(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert args_of(call(CommandTarget(ENV_STDIN, 10), case(NASTY))) == [NASTY, NASTY]
    assert not list(tmp_path.glob("PWNED*"))


def test_a_nul_in_the_query_is_an_item_error_and_the_run_goes_on(
    tmp_path, monkeypatch, store, config, ARGV
):
    monkeypatch.chdir(tmp_path)
    cases = [case("a\x00b", "nul"), case("plain", "ok")]
    plan = RunPlan(
        "nul-run",
        "t",
        "answer",
        cases,
        CommandTarget(f"{ARGV} {{query}}", 10),
        get_judge("lexical", config, store),
    )
    items = {i.id: i for i in asyncio.run(execute(store, plan)).items}
    assert items["nul"].error.startswith(
        "the query holds a NUL byte, which cannot be passed as an argument"
    )
    assert items["nul"].answer is None and items["nul"].latency_ms is not None
    assert json.loads(items["ok"].answer) == ["plain"]
    # without {query} it still goes on stdin; HILBOT_QUERY cannot hold it and is left out
    assert args_of(call(CommandTarget(ENV_STDIN, 10), case("a\x00b"))) == [None, "a\x00b"]


def test_a_query_too_long_for_one_argument_is_an_item_error(tmp_path, monkeypatch, ARGV):
    monkeypatch.chdir(tmp_path)
    long = "x" * (200 * 1024)
    out = call(CommandTarget(f"{ARGV} {{query}}", 10), case(long))
    assert out.answer is None and "too long" in out.error and "stdin" in out.error
    assert args_of(call(CommandTarget(f"{ARGV} {{query}}", 10), case("x" * 1000))) == ["x" * 1000]
    # on stdin it fits; the environment cannot hold it either, so HILBOT_QUERY is left out
    assert args_of(call(CommandTarget(ENV_STDIN, 10), case(long))) == [None, long]


def test_a_query_that_is_not_valid_unicode_is_an_item_error(tmp_path, monkeypatch, ARGV):
    monkeypatch.chdir(tmp_path)
    for command in (f"{ARGV} {{query}}", ENV_STDIN):
        out = call(CommandTarget(command, 10), case("bad \ud800 surrogate"))
        assert out.answer is None and "not valid Unicode" in out.error


def test_a_template_that_cannot_be_split_or_run_is_refused_up_front(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TargetError, match="quotation"):
        CommandTarget("mytool '{query}", 10)
    with pytest.raises(TargetError, match="no-such-program-xyz.*not found"):
        CommandTarget("no-such-program-xyz {query}", 10)
    (tmp_path / "notexec").write_text("#!/bin/sh\n")
    with pytest.raises(TargetError, match="not an executable"):
        CommandTarget("./notexec {query}", 10)


def test_hostile_stdout_is_an_item_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for text, reason in (
        ("[" * 100_000, "nested"),
        ('{"answer": NaN}', "NaN"),
        ('{"answer": "a", "answer": "b"}', "duplicate"),
        ('{"results": 5}', "results"),
        ('{"results": [{"path": "/a", "score": 1' + "0" * 5000 + "}]}", "digits"),
    ):
        (tmp_path / "out.txt").write_text(text)
        out = call(CommandTarget("cat out.txt", 10), case("q"))
        assert (
            out.answer is None
            and out.error.startswith("stdout is not the expected JSON")
            and reason in out.error
        ), out.error


def test_the_cli_never_runs_the_query_and_refuses_shell_syntax_in_one_line(tmp_path):
    from tests.auxil.cli import BUG, invoke
    from tests.evaluation.test_queries import write_set

    write_set(
        tmp_path / "q",
        "evil",
        [{"id": "e1", "text": "$(touch PWNED)"}, {"id": "e2", "text": "`touch PWNED2`; x"}],
        name="evil",
    )
    env = {"HILBOT_DATA_DIR": str(tmp_path / "results"), "ANTHROPIC_API_KEY": ""}
    ok = invoke(
        "run",
        "--set",
        "evil",
        "--dir",
        str(tmp_path / "q"),
        "--target-cmd",
        "echo '{query}'",
        "--run-id",
        "ok",
        env=env,
        cwd=tmp_path,
    )
    assert ok.exit_code == 1, ok.stderr  # answers to a set without ground truth: nothing measured
    assert "❌ none of the 2 judged items has an overall score: nothing was measured" in ok.stdout
    assert '  → "$(touch PWNED)"' in ok.stdout and '  → "`touch PWNED2`; x"' in ok.stdout
    assert not list(tmp_path.glob("PWNED*"))
    bad = invoke(
        "run",
        "--set",
        "evil",
        "--dir",
        str(tmp_path / "q"),
        "--target-cmd",
        "sleep 0; echo {query}",
        "--run-id",
        "bad",
        env=env,
        cwd=tmp_path,
    )
    assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert (
        bad.stderr.startswith("error: ") and "Traceback" not in bad.stderr and BUG not in bad.stderr
    )
    assert "$HILBOT_QUERY" in bad.stderr
    assert not (tmp_path / "results" / "runs" / "bad.jsonl").exists()


# --------------------------------------------------------------------------- --outputs


def test_outputs_jsonl_by_id_and_missing_id(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "c1",
                "answer": "yes",
                "quotes": ["q"],
                "latency_ms": 1234,
                "cost_usd": 0.02,
                "model": "m1",
            }
        )
        + "\n\n"
    )
    target = OutputsTarget(path)
    out = call(target, case("whatever", "c1"))
    assert (
        out.answer == "yes"
        and out.latency_ms == 1234
        and out.cost_usd == 0.02
        and out.model == "m1"
    )
    missing = call(target, case("whatever", "c9"))
    assert missing.error == "no output for 'c9' in out.jsonl"


def test_outputs_json_list_matched_by_query_text(tmp_path):
    path = tmp_path / "out.json"
    path.write_text(json.dumps([{"query": "How far can it charge?", "answer": "8 inches"}]))
    assert call(OutputsTarget(path), case("How far can it charge?", "x")).answer == "8 inches"


def test_bad_outputs_files(tmp_path):
    with pytest.raises(TargetError, match="cannot read outputs"):
        OutputsTarget(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "answer": "x"}\n{oops\n')
    with pytest.raises(TargetError) as info:
        OutputsTarget(bad)
    assert info.value.where == f"{bad}:2"
    noid = tmp_path / "noid.jsonl"
    noid.write_text('{"answer": "x"}\n')
    with pytest.raises(TargetError, match="needs an id"):
        OutputsTarget(noid)


def test_fixture_outputs_carry_latency_cost_and_model():
    target = OutputsTarget(ROOT / "tests" / "fixtures" / "outputs" / "rules-grok-3.jsonl")
    out = call(target, case("ignored", "banner-carrier-dies"))
    assert out.model == "grok-3" and out.latency_ms == 7922 and out.cost_usd == 0.0238
    assert out.usage == {"input_tokens": 5355, "output_tokens": 513} and len(out.quotes) == 3


@pytest.mark.parametrize(
    "content, line, reason",
    [
        (b'{"id": "a", "answer": "x"}\n{"id": "b", "answer": "\xff\xfe"}\n', 2, "not UTF-8"),
        (b'{"id": "a", "answer": "x"}\n' + b"[" * 5000 + b"\n", 2, "nested more than"),
        (b'{"id": "a", "answer": "x", "answer": "y"}\n', 1, "duplicate key 'answer'"),
        (b'{"id": "a", "cost_usd": 1' + b"0" * 5000 + b"}\n", 1, "4,300 digits"),
        (b'{"id": "a", "cost_usd": NaN}\n', 1, "NaN is not a JSON number"),
        (b'{"id": "a"}\n[1, 2]\n', 2, "must be a JSON object, not an array"),
        (b'{"id": "a"}\n\n"text"\n', 3, "must be a JSON object, not a string"),
        (b'{"id": {"nested": 1}, "answer": "x"}\n', 1, "id must be a string"),
        (
            b'{"id": "a", "answer": "x"}\n{"id": "a", "answer": "y"}\n',
            2,
            "a second output row for 'a' (the first is on line 1)",
        ),
        (b'[{"id": "a"},\n 5]\n', 2, "must be a JSON object, not a number"),
        (b'[{"id": "a"},\n\n  {"answer": "no id"}]\n', 3, "needs an id"),
        (
            b'[{"id": "a"}, {"id": "b", "x": Infinity}]',
            None,
            "Infinity is not a JSON number",
        ),  # no position known
        (b'[{"id": "a"},\n{"id": "b"', 2, "invalid JSON"),
    ],
)
def test_hostile_outputs_files_are_one_line_errors_with_file_and_line(
    tmp_path, content, line, reason
):
    path = tmp_path / "out.jsonl"
    path.write_bytes(content)
    with pytest.raises(TargetError) as info:
        OutputsTarget(path)
    assert (
        info.value.where == (f"{path}:{line}" if line else str(path)) and reason in info.value.what
    ), info.value.one_line()
    assert "\n" not in info.value.one_line() and info.value.one_line().count(" — ") == 1


def test_an_outputs_path_that_is_not_a_readable_file(tmp_path):
    for path in (tmp_path, tmp_path / "missing.jsonl", tmp_path / "file.txt" / "below"):
        (tmp_path / "file.txt").write_text("x")
        with pytest.raises(TargetError) as info:
            OutputsTarget(path)
        assert info.value.where == str(path) and "cannot read outputs" in info.value.what


def test_outputs_with_a_bom_and_crlf_read_fine(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "answer": "x"}\r\n{"id": "b", "answer": "y"}\r\n')
    target = OutputsTarget(path)
    assert call(target, case("q", "a")).answer == "x" and call(target, case("q", "b")).answer == "y"


def test_a_bad_row_value_is_an_item_error_not_a_crash(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(
        '{"id": "a", "results": 5}\n{"id": "b", "results": [{"rank": "first"}]}\n{"id": "c", '
        '"answer": "ok"}\n'
    )
    target = OutputsTarget(path)
    assert call(target, case("q", "a")).error.startswith("bad output row: results must be a list")
    assert call(target, case("q", "b")).error.startswith("bad output row")
    assert call(target, case("q", "c")).answer == "ok"
