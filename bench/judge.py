"""The judge path at scale: 1,000 search items through the LLM judge against a Messages API server.

What is measured:

* run 1 (cold cache) -- ``execute()`` (evaluation/runner.py) over ``--items`` distinct search
  cases (default 1,000) with the real ``LLMJudge`` and the real ``anthropic`` provider, against
  ``tests/fakes/anthropic_api.FakeAnthropic`` (a local aiohttp Messages API server in a thread
  of this process) answering every call after ``--latency`` seconds (default 0.3). The LLM
  client runs ``--concurrency`` calls at once (default 16). The target returns three fixed
  results per case instantly, so the time is the judge path's: one ``search`` prompt per item,
  the cache write, the ``llm-calls.jsonl`` append and the run file's append, as in production.
  Compared with the ideal ``items x latency / concurrency`` (1000 x 0.3 / 16 = 18.75 s).
* run 2 (warm cache) -- a new run id over the same cases in the same data directory, with a
  fresh Store and judge (as a second ``hilbot`` process would): every answer must come from the
  on-disk cache, so the server must receive 0 requests.

Each repeat uses a fresh data directory (cold). One uncounted warm-up run of ``--concurrency``
items in a directory of its own pays for imports and connection set-up first. Every run is
checked afterwards: the run file read back holds every item with scores and no error, and
``llm-calls.jsonl`` gained one line per call the LLM client made. The figures are the medians
over ``--repeat`` repeats; each repeat's figure is listed too.

Read the table: run 1's ratio must be <= 1.15x with exactly one request per item and at most
``--concurrency`` requests in flight at once; run 2 must make 0 calls.

Run from the repo root: ``.venv/bin/python bench/judge.py [--items N] [--concurrency N]
[--latency S] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation import load_config  # noqa: E402
from evaluation.cases import Case  # noqa: E402
from evaluation.judges import LLMJudge  # noqa: E402
from evaluation.records import Query, SearchResult  # noqa: E402
from evaluation.runner import RunPlan, execute  # noqa: E402
from evaluation.store import Store  # noqa: E402
from evaluation.targets import TargetOutput  # noqa: E402
from tests.fakes.anthropic_api import FakeAnthropic  # noqa: E402

TARGET_RATIO = 1.15
RUNNER_CONCURRENCY = 64
"""RunPlan's target gate: well above the LLM's, so the target is never the bottleneck."""

RESULTS = [
    SearchResult(
        rank=1,
        path="docs/install.md",
        title="Installing",
        snippet="pip install the package, then run init.",
    ),
    SearchResult(
        rank=2,
        path="docs/config.md",
        title="Configuration",
        snippet="Every key of the config file, with defaults.",
    ),
    SearchResult(
        rank=3,
        path="docs/faq.md",
        title="FAQ",
        snippet="Common questions about setup and upgrades.",
    ),
]


class FixedResults:
    """A target that answers every case at once with the same three results."""

    name = "bench:fixed-results"

    async def __call__(self, case: Case) -> TargetOutput:
        return TargetOutput(results=RESULTS, latency_ms=0.0)


def make_cases(n: int) -> list[Case]:
    """``n`` distinct search cases (distinct prompts, so distinct cache keys)."""
    return [
        Case(
            id=f"q{i:04d}",
            query=Query(
                query=f"how do I configure the search index, variant {i}",
                intent="set up the index for a new project",
            ),
        )
        for i in range(n)
    ]


async def one_run(
    config, data_dir: Path, run_id: str, cases: list[Case], fake: FakeAnthropic
) -> dict:
    """One timed ``execute()`` with a fresh Store and judge; returns the figures and checks."""
    store = Store(data_dir)
    judge = LLMJudge(config, store)
    plan = RunPlan(
        run_id=run_id,
        set_name="bench-judge",
        kind="search",
        cases=cases,
        target=FixedResults(),
        judge=judge,
        concurrency=RUNNER_CONCURRENCY,
    )
    logged_before = count_lines(store.llm_calls.path)
    requests_before = len(fake.requests)
    fake.in_flight_max = 0  # per-run peak (nothing is in flight between runs)
    start = time.perf_counter()
    await execute(store, plan)
    wall = time.perf_counter() - start
    figures = {
        "wall": wall,
        "requests": len(fake.requests) - requests_before,
        "in_flight": fake.in_flight_max,
        "calls": judge.llm.calls,
        "hits": judge.llm.cache_hits,
    }
    client = getattr(judge.llm.provider, "_client", None)  # the provider has no public close()
    if client is not None:
        await client.close()
    for log in (store.llm_calls, store.run_log(run_id)):
        log.close()
    figures["problems"] = verify(store, run_id, len(cases))
    logged = count_lines(store.llm_calls.path) - logged_before
    if logged != figures["calls"]:
        figures["problems"].append(
            f"{logged} lines added to llm-calls.jsonl for {figures['calls']} calls"
        )
    return figures


def count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def verify(store: Store, run_id: str, expected: int) -> list[str]:
    """What is wrong with the run file read back (empty when every item was judged)."""
    run = store.load_run(run_id)
    problems = (
        []
        if len(run.items) == expected
        else [f"{len(run.items)} items in the run file, expected {expected}"]
    )
    failed = [i for i in run.items if i.evaluation.error or "overall" not in i.evaluation.scores]
    if failed:
        first = failed[0]
        problems.append(
            f"{len(failed)} items without a judgment (first: {first.id}: "
            f"{first.evaluation.error or 'no overall'})"
        )
    if run.summary is None:
        problems.append("no run_summary line")
    return problems


async def bench(
    config, cases: list[Case], repeat: int, fake: FakeAnthropic, tmp_root: Path
) -> list[tuple[dict, dict]]:
    concurrency = config.llm.concurrency
    with tempfile.TemporaryDirectory(prefix="warmup-", dir=tmp_root) as warm_dir:
        warm_cases = [
            Case(id=f"w{i:03d}", query=Query(query=f"warm-up query {i}"))
            for i in range(concurrency)
        ]
        await one_run(config, Path(warm_dir), "warmup", warm_cases, fake)
    pairs = []
    for r in range(repeat):
        with tempfile.TemporaryDirectory(prefix=f"repeat{r}-", dir=tmp_root) as data_dir:
            cold = await one_run(config, Path(data_dir), f"bench-cold-{r}", cases, fake)
            warm = await one_run(config, Path(data_dir), f"bench-warm-{r}", cases, fake)
        pairs.append((cold, warm))
        print(
            f"  repeat {r + 1}/{repeat}: cold {cold['wall']:.2f} s ({cold['requests']} requests, "
            f"peak {cold['in_flight']} in flight), warm {warm['wall']:.2f} s ({warm['requests']} "
            "requests)",
            flush=True,
        )
    return pairs


def report(pairs: list[tuple[dict, dict]], items: int, concurrency: int, latency: float) -> bool:
    ideal = items * latency / concurrency
    colds, warms = [c for c, _ in pairs], [w for _, w in pairs]
    cold_wall = statistics.median(c["wall"] for c in colds)
    warm_wall = statistics.median(w["wall"] for w in warms)
    ratio = cold_wall / ideal
    cold_requests = {c["requests"] for c in colds}
    peak = max(c["in_flight"] for c in colds)
    warm_requests = max(w["requests"] + w["calls"] for w in warms)
    warm_hits = min(w["hits"] for w in warms)
    problems = [p for c, w in pairs for p in c["problems"] + w["problems"]]

    cold_ok = (
        ratio <= TARGET_RATIO and cold_requests == {items} and peak <= concurrency and not problems
    )
    warm_ok = warm_requests == 0 and warm_hits == items and not problems
    cold_note = (
        f"{'/'.join(map(str, sorted(cold_requests)))} requests, peak {peak} in flight"
        + ("" if cold_requests == {items} else f" (expected {items})")
        + ("" if peak <= concurrency else f" (limit {concurrency})")
    )
    warm_note = f"{warm_requests} calls, {warm_hits} cache hits"

    print()
    print(
        f"judge path: {items} search items, concurrency {concurrency}, fake Messages API at "
        f"{latency * 1000:.0f} ms"
    )
    print(f"{'':<20} {'wall s':>7} {'ideal s':>8} {'ratio':>7}   target")
    print(
        f"{'run 1 (cold cache)':<20} {cold_wall:>7.2f} {ideal:>8.2f} {ratio:>6.2f}×   "
        f"{'≤ ' + format(TARGET_RATIO, '.2f') + '×':<9} {'PASS' if cold_ok else 'FAIL'} "
        f"({cold_note})"
    )
    print(
        f"{'run 2 (warm cache)':<20} {warm_wall:>7.2f} {'—':>8} {'—':>7}   {'0 calls':<9} "
        f"{'PASS' if warm_ok else 'FAIL'} ({warm_note})"
    )
    each_cold = ", ".join(f"{c['wall']:.2f}" for c in colds)
    each_warm = ", ".join(f"{w['wall']:.2f}" for w in warms)
    print(f"(median of {len(pairs)} repeats; cold: {each_cold} s; warm: {each_warm} s)")
    for problem in dict.fromkeys(problems):
        print(f"VERIFY FAILED: {problem}")
    return cold_ok and warm_ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--items", type=int, default=1000, help="search items per run (default 1000)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=16, help="[llm] concurrency (default 16)"
    )
    parser.add_argument(
        "--latency",
        type=float,
        default=0.3,
        help="seconds the fake server takes per answer (default 0.3)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="cold+warm run pairs, fresh data dir each; median reported (default 3)",
    )
    args = parser.parse_args()
    items, concurrency, repeat = max(1, args.items), max(1, args.concurrency), max(1, args.repeat)

    config = load_config(None)
    config.llm = config.llm.model_copy(update={"concurrency": concurrency})
    cases = make_cases(items)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with (
        FakeAnthropic(latency=args.latency) as fake,
        tempfile.TemporaryDirectory(prefix="hilbot-bench-judge-") as tmp,
    ):
        os.environ.update(fake.env())
        print(
            f"# nproc={cpus} python={sys.version.split()[0]} model={config.llm.model} "
            f"server={fake.base_url} dir={tmp} repeat={repeat} (+1 warm-up of {concurrency} items)",
            flush=True,
        )
        pairs = asyncio.run(bench(config, cases, repeat, fake, Path(tmp)))
    ok = report(pairs, items, concurrency, args.latency)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
