"""Targets: ``module:function`` (sync and async), ``--target-cmd`` (``{query}`` shell-quoted, or
stdin), timeouts, failures recorded on the item while the run goes on, and ``--outputs``."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import textwrap
import threading
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

ROOT = Path(__file__).resolve().parents[1]
PY = shlex.quote(sys.executable)


def case(query: str, id: str = "c1", **kw) -> Case:
    return Case(id, Query(query=query), **kw)


def call(target, c: Case):
    return asyncio.run(target(c))


@pytest.fixture
def targets_module(tmp_path, monkeypatch):
    """A tiny module of targets, importable as ``tmp_targets``."""
    (tmp_path / "tmp_targets.py").write_text(textwrap.dedent('''
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
    '''))
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
    assert out.cost_usd == 0.0125 and out.model == "tiny-1" and out.usage == {"input_tokens": 10, "output_tokens": 5}
    assert 50 <= out.latency_ms < 2000  # the function sleeps 50 ms


def test_async_function_returning_paths_and_dicts(targets_module):
    out = call(PythonTarget("tmp_targets:ranked", 5), case("ranked query"))
    assert [(r.rank, r.path) for r in out.results] == [(1, "/docs/a.md"), (2, "/docs/b.md"), (3, "/docs/c.md")]
    assert out.results[2].snippet == "ranked query" and out.answer is None
    assert out.latency_ms is not None and out.latency_ms >= 10


def test_plain_string_is_an_answer(targets_module):
    assert call(PythonTarget("tmp_targets:text", 5), case("x")).answer == "just text"


def test_example_docs_search_target():
    out = call(PythonTarget("examples.docs_search:search", 5), case("burrow connection pool timeout"))
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
    plan = RunPlan("sync-timeout", "t", "answer", [case("please hang", "a"), case("fast", "b")],
                   PythonTarget("tmp_targets:hangs", 0.3), get_judge("lexical", config, store))
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

ECHO_ARGV = f"{PY} -c 'import sys, json; print(json.dumps({{\"answer\": sys.argv[1], \"cost_usd\": 0.5, \"model\": \"cmd\"}}))' {{query}}"
ECHO_STDIN = f"{PY} -c 'import sys, json; print(json.dumps({{\"answer\": sys.stdin.read()}}))'"
NASTY = 'It\'s 8" away; "$(touch PWNED)" `touch PWNED2` $HOME \\ && touch PWNED3 \'quoted\''


def test_query_placeholder_is_shell_quoted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = call(CommandTarget(ECHO_ARGV, 10), case(NASTY))
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
    out = call(CommandTarget(f"{PY} {shlex.quote(str(ROOT / 'examples' / 'docs_search.py'))} {{query}}", 20),
               case("ferret middleware ordering"))
    assert out.error is None and out.results and out.results[0].path.startswith("/docs/")
    assert call(CommandTarget("echo '{not json'", 10), case("q")).error.startswith("stdout is not the expected JSON")
    assert call(CommandTarget("true", 10), case("q")).error == "no output on stdout"


def test_nonzero_exit_is_recorded_with_stderr(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = call(CommandTarget("echo 'index missing' >&2; exit 3", 10), case("q"))
    assert out.error == "exit 3: index missing" and out.answer is None and out.latency_ms is not None


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
    command = (f"{PY} -c 'import sys, json; q = sys.argv[1]\n"
               "if \"fail\" in q: sys.stderr.write(\"no luck\\n\"); sys.exit(4)\n"
               "print(json.dumps({\"answer\": q, \"quotes\": [\"rule one text here\"], \"cost_usd\": 0.01}))' {query}")
    cases = [case(q, f"c{n}", ground_truth_contexts=[], ground_truth_answers=["rule one"]) for n, q in
             enumerate(["first", "please fail", "third"])]
    plan = RunPlan("cmd-run", "t", "answer", cases, CommandTarget(command, 10), get_judge("lexical", config, store))
    run = asyncio.run(execute(store, plan))
    assert [i.id for i in run.items] == ["c0", "c1", "c2"]
    failed = run.items[1]
    assert failed.error == "exit 4: no luck"
    assert failed.evaluation.error == "target failed: exit 4: no luck" and failed.evaluation.scores == {}
    for item in (run.items[0], run.items[2]):
        assert item.error is None and item.evaluation.scores and item.evaluation.judge == "lexical"
        assert item.cost_usd == 0.01 and item.latency_ms > 0
    reread = store.load_run("cmd-run")
    assert reread.summary is not None and reread.summary.item_count == 3
    # the file is appended in completion order; compare by id
    assert {i.id: i.latency_ms for i in reread.items} == {i.id: i.latency_ms for i in run.items}


# --------------------------------------------------------------------------- --outputs


def test_outputs_jsonl_by_id_and_missing_id(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps({"id": "c1", "answer": "yes", "quotes": ["q"], "latency_ms": 1234, "cost_usd": 0.02,
                                "model": "m1"}) + "\n\n")
    target = OutputsTarget(path)
    out = call(target, case("whatever", "c1"))
    assert out.answer == "yes" and out.latency_ms == 1234 and out.cost_usd == 0.02 and out.model == "m1"
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
