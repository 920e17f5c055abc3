"""The Langfuse connector at scale: pulling 10,000 items and pushing 10,000 labels, beside the
physical bound.

Run from the repo root: ``.venv/bin/python bench/connectors.py`` (defaults: ``--items 10000
--latency 0.05
--repeat 3 --queue-items 1000 --ai-scores 1 --modes traces,queue,push``); a quick check:
``.venv/bin/python bench/connectors.py --items 1000 --repeat 1`` (under a minute).

Everything runs against ``tests/fakes/langfuse_api.FakeLangfuse`` (a local aiohttp Langfuse in a
thread of
this process, as the other benches run their fakes), through the connector as hilbot runs it: the
bulk reads
as plain JSON (``Connection.get_json``: the requests the Langfuse SDK 5 sends, without its models),
the
writes and one-off reads through the SDK's client.
The stand-in answers every GET after ``--latency`` seconds (``page_latency``). The SDK's conversion
time
below is now only that of the writes (``POST /scores``) and the one-off reads.

* ``traces`` -- ``pull_run(store, config, "langfuse", {"name": "qa", "contexts": False, "limit":
N})``:
  the trace-filter mode over ``--items`` N traces named ``qa``, each carrying ``--ai-scores`` k
  evaluator
  scores (source EVAL). (``limit`` must be given: the source's default is 1,000 items.) The
  connector
  lists root observations (``GET /v2/observations``, ``limit`` = 1,000, cursor paging) and then
  reads the
  scores of 100 traces at a time (``GET /v3/scores?traceId=…``, ``TRACES_A_QUERY`` = 100, ``limit``
  = 100).
  Bound = the fewest requests the documented API needs, run one after another as the connector does,
  × latency: ``(ceil(N / 1000) + ceil(N·k / 100)) × latency`` -- 1,000 is the largest page of
  ``GET /v2/observations`` and 100 the largest page of ``GET /v3/scores`` (the SDK's documentation
  of
  both ``limit`` parameters; a longer page is a 400), and the ids of a score query are a
  comma-separated list with no documented cap, so a page of scores is the unit.
* ``queue`` -- ``pull_run(…, {"queue": "q-bench", "limit": Q})`` over an annotation queue of
  ``--queue-items`` Q traces (a stand-in of its own holding only them). A queue item names only its
  trace, and ``GET /v2/observations`` documents ``traceId`` as one id, so the API's design needs one
  request per item: bound = ``(1 + ceil(Q / 100) + Q + ceil(Q·k / 100)) × latency`` (the queue, its
  item pages of 100, one trace read per item, the score pages). At 10,000 items that is over 500 s a
  round, hence Q = N / 10 by default.
* ``push`` -- N ``Rating`` records (one reviewer, dimension ``answer``) appended to a fresh copy of
the
  pulled run's store, their labels made with ``run_labels``, then
  ``push_labels(store, "langfuse", "langfuse", LangfuseSink(), env, labels, seconds=3600,
  rate_per_s=1000/60)`` timed until every label is sent and read back (confirmed), while the
  stand-in
  enforces ``rate_limit(per_minute=1000)`` (Langfuse Cloud's Pro/Team limit for "all other APIs",
  https://langfuse.com/faq/all/api-limits; the connector's default is the Hobby plan's 30/min, which
  would take an hour for 10,000 labels). Bound = ``(ceil(N / BATCH) writes + ceil(N / READ_IDS)
  confirm reads) / rate`` = ``(ceil(N/100) + ceil(N/100)) / (1000/60)`` (``BATCH`` = ``READ_IDS`` =
  100):
  "confirmed" means read back, so the reads count.

Each figure is the median of ``--repeat`` rounds (a fresh data directory each). Beside each wall
time:
the requests by kind (from the stand-in's call log), the CPU time of the stand-in's server thread
(it
shares this process; its scores are indexed by id and trace and its observations by trace, and the
pages of one observation listing are cut from one sorted list, but a trace filter's first page still
builds every observation it holds, which a real server's ``latency`` already covers), the client's
CPU time
(this thread) and the part of it spent inside the SDK's
response/request conversion, CPU time (``parse_obj_as`` and
``convert_and_respect_annotation_metadata`` of
``langfuse.api.*.raw_client``, timed by wrapping them), and the peak RSS of the phase (``VmHWM``,
reset
before each phase through ``/proc/self/clear_refs``; ``ru_maxrss`` where that is not possible). A
pull is
also replayed once with plain ``httpx`` + ``json.loads`` (the same GETs, in the same order): what
the
requests cost here without the SDK's conversion and hilbot's own work.

Read the table: ``ratio`` = wall / bound (target ≤ 1.2×); ``own`` leaves out the stand-in's CPU time
(the time the connector waited on the stand-in beyond ``latency``), and is what the target is
checked on. For the push
``own`` is a lower estimate: a call shorter than its pacing slot would have waited out the slot
anyway,
so compare each call's time with the slot on the line below. The push must send and confirm every
label
with 0 429s; the peak requests in any 1 s and any 60 s show the pacing (16.7/s, plus the one unpaced
``GET /score-configs``; 1,000 a minute -- a window 10,000 labels' 401 requests never fill, so 0 429s
alone
proves little). The exit status is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation import Rating, Reviewer, Store, load_config  # noqa: E402
from evaluation.connectors.langfuse import BATCH, LangfuseSink  # noqa: E402
from evaluation.connectors.langfuse.sink import READ_IDS  # noqa: E402
from evaluation.connectors.langfuse.source import OBSERVATION_PAGE, PAGE, TRACES_A_QUERY  # noqa: E402
from evaluation.connectors.outbox import outbox, push_labels, run_labels  # noqa: E402
from evaluation.connectors.pulling import pull_run  # noqa: E402
from tests.fakes.langfuse_api import FakeLangfuse  # noqa: E402

TARGET_RATIO = 1.2
PRO_PER_MINUTE = 1000
"""Langfuse Cloud's Pro/Team limit for "all other APIs" (``POST /scores``, ``GET /v3/scores``, …), a
minute."""
MAX_OBSERVATIONS = 1000
"""The largest ``limit`` of ``GET /v2/observations`` (the SDK's documentation: "Maximum 1000")."""
MAX_SCORES = 100
"""The largest ``limit`` of ``GET /v3/scores`` and of the annotation queue items (a larger one is a
400)."""
QUEUE = "q-bench"
T0 = datetime.now(timezone.utc).replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(
    days=1
)
ALICE = Reviewer(platform="telegram", id="1", name="Alice")
JUDGE_NAMES = ("helpfulness", "correctness", "faithfulness", "relevance", "toxicity")


# ---------------------------------------------------------------------------------------------- the
# stand-in


def seed(fake: FakeLangfuse, n: int, ai_scores: int, queue: bool) -> float:
    """``n`` traces named ``qa`` (a root span with a chat input and an answer), ``ai_scores``
    evaluator scores each; with ``queue``, an annotation queue holding them all. Returns the seconds
    it took.

    ``add_trace``/``add_score``/``add_queue_item`` are fast (about 20 µs a trace), so the fake's own
    methods are used.
    """
    started = time.perf_counter()
    if queue:
        fake.add_queue(QUEUE, "bench")
    for i in range(n):
        trace_id = f"tr-{i:06d}-{'q' if queue else 't'}"
        fake.add_trace(
            trace_id,
            name="qa",
            input={"messages": [{"role": "user", "content": f"How do I change setting {i}?"}]},
            output={
                "role": "assistant",
                "content": f"Open Settings, choose option {i % 17} and save. ({i})",
            },
        )
        for j in range(ai_scores):
            fake.add_score(
                name=JUDGE_NAMES[j % len(JUDGE_NAMES)] + ("" if j < len(JUDGE_NAMES) else f"-{j}"),
                value=round(0.05 + 0.9 * ((i * 7 + j) % 10) / 10, 2),
                trace_id=trace_id,
                comment="judged by the bench evaluator",
            )
        if queue:
            fake.add_queue_item(QUEUE, trace_id, item_id=f"qi-{i:06d}")
    return time.perf_counter() - started


def server_cpu(fake: FakeLangfuse) -> Callable[[], float]:
    """The CPU time of the stand-in's server thread (its handlers, aiohttp, JSON), as a clock."""
    thread = getattr(getattr(fake, "_server", None), "_thread", None)
    try:
        clock = time.pthread_getcpuclockid(thread.ident)  # type: ignore[union-attr]
        return lambda: time.clock_gettime(clock)
    except (AttributeError, OSError, TypeError):
        return lambda: float("nan")


# ----------------------------------------------------------------------------------------------
# measuring


class SdkClock:
    """CPU seconds spent in the SDK's (de)serialisation helpers, summed (wrapped in the generated
    clients' modules)."""

    NAMES = ("parse_obj_as", "convert_and_respect_annotation_metadata")
    MODULES = (
        "langfuse.api.scores.raw_client",
        "langfuse.api.observations.raw_client",
        "langfuse.api.annotation_queues.raw_client",
        "langfuse.api.score_configs.raw_client",
    )

    def __init__(self) -> None:
        self.seconds = 0.0
        self.by: dict[str, float] = {}
        """Seconds by ``module: helper`` (``scores: parse_obj_as``, …)."""

    @contextlib.contextmanager
    def installed(self) -> Iterator["SdkClock"]:
        import importlib

        saved: list[tuple[Any, str, Any]] = []
        for name in self.MODULES:
            module = importlib.import_module(name)
            for attr in self.NAMES:
                original = getattr(module, attr, None)
                if original is not None:
                    saved.append((module, attr, original))
                    setattr(module, attr, self._timed(original, f"{name.split('.')[2]}: {attr}"))
        try:
            yield self
        finally:
            for module, attr, original in saved:
                setattr(module, attr, original)

    def _timed(self, function: Callable[..., Any], key: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = (
                time.thread_time()
            )  # CPU of this thread: a wait for the GIL (the stand-in's thread) is not counted
            try:
                return function(*args, **kwargs)
            finally:
                spent = time.thread_time() - started
                self.seconds += spent
                self.by[key] = self.by.get(key, 0.0) + spent

        return timed


def _status_kb(key: str) -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return float(line.split()[1])
    except OSError:
        pass
    return None


class Memory:
    """The RSS high-water mark of one phase: VmHWM reset at its start (``/proc/self/clear_refs``),
    else ru_maxrss."""

    def __init__(self) -> None:
        self.before = (_status_kb("VmRSS") or 0) / 1024
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self.reset = True
        except OSError:
            self.reset = False
        self.maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def peak(self) -> tuple[float, float]:
        """(peak MB, growth over the phase's start MB)."""
        hwm = _status_kb("VmHWM") if self.reset else None
        peak = (
            hwm / 1024
            if hwm is not None
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        )
        start = self.before if self.reset else self.maxrss_before
        return peak, peak - start


@contextlib.contextmanager
def measured(fake: FakeLangfuse, sdk: SdkClock) -> Iterator[dict]:
    """Wall time, this thread's CPU, the stand-in's CPU, the SDK's conversion time, the calls and
    the peak RSS of a block."""
    figures: dict[str, Any] = {}
    fake_cpu = server_cpu(fake)
    memory = Memory()
    first_call, sdk_before, sdk_by = len(fake.calls), sdk.seconds, dict(sdk.by)
    cpu0, fake0, wall0 = time.thread_time(), fake_cpu(), time.perf_counter()
    try:
        yield figures
    finally:
        figures["wall"] = time.perf_counter() - wall0
        figures["client_cpu"] = time.thread_time() - cpu0
        figures["fake_cpu"] = fake_cpu() - fake0
        figures["sdk"] = sdk.seconds - sdk_before
        figures["sdk_by"] = {key: sdk.by[key] - sdk_by.get(key, 0.0) for key in sdk.by}
        figures["calls"] = list(fake.calls[first_call:])
        figures["peak_mb"], figures["grew_mb"] = memory.peak()


def kinds(calls: list[Any]) -> Counter[str]:
    """Requests by ``METHOD /path`` (the path's ids folded)."""
    folded: Counter[str] = Counter()
    for call in calls:
        method, _, path = call.method.partition(" ")
        path = path.removeprefix("/api/public")
        if path.startswith("/annotation-queues/"):
            path = "/annotation-queues/{id}" + ("/items" if path.endswith("/items") else "")
        folded[f"{method} {path}"] += 1
    return folded


def peak_in(calls: list[Any], window: float) -> int:
    """The most requests that arrived within any ``window`` seconds."""
    times = sorted(c.at for c in calls)
    best, start = 0, 0
    for end, at in enumerate(times):
        while at - times[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best


def replay(fake: FakeLangfuse, calls: list[Any]) -> tuple[float, float, float]:
    """The same GETs again with plain httpx + json.loads, one after another: (wall, this thread's
    CPU, the stand-in's CPU) in seconds."""
    import httpx

    gets = [c for c in calls if c.method.startswith("GET ")]
    with httpx.Client(
        base_url=fake.base_url, auth=(fake.public_key, fake.secret_key), timeout=60
    ) as client:
        fake_cpu = server_cpu(fake)
        started, cpu0, fake0 = time.perf_counter(), time.thread_time(), fake_cpu()
        for call in gets:
            params = {k: v for k, v in call.params.items() if k != "body"}
            response = client.get(call.method.partition(" ")[2], params=params)
            response.raise_for_status()
            response.json()
        return time.perf_counter() - started, time.thread_time() - cpu0, fake_cpu() - fake0


def show_kinds(counter: Counter[str]) -> str:
    return ", ".join(f"{n} {k}" for k, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


# ---------------------------------------------------------------------------------------------- the
# phases


def pull_round(
    fake: FakeLangfuse, sdk: SdkClock, root: Path, settings: dict, expected: int, ai_scores: int
) -> dict:
    """One timed pull into a fresh data directory, then checked (every item, with its AI scores)."""
    store = Store(root / "results")
    config = load_config(None)
    with measured(fake, sdk) as figures:
        report = pull_run(store, config, "langfuse", settings, fake.env())
    problems = []
    if report.added != expected:
        problems.append(f"{report.added} items pulled, expected {expected}")
    run = store.load_run(report.run_id)
    short = sum(1 for item in run.items if len(item.evaluation.scores) != ai_scores)
    if short:
        problems.append(f"{short} items without their {ai_scores} AI score(s)")
    if any(not item.answer or not item.query.query for item in run.items):
        problems.append("an item without its query or answer")
    figures.update(
        store=store,
        run_id=report.run_id,
        problems=problems,
        errors=sum(1 for c in figures["calls"] if (c.status or 0) >= 400),
    )
    return figures


def push_round(
    fake: FakeLangfuse,
    sdk: SdkClock,
    base: Path,
    root: Path,
    run_id: str,
    rate: float,
    round_no: int,
) -> dict:
    """A fresh copy of the pulled run's store, a rating on every item, the labels pushed under the
    Pro rate limit."""
    shutil.copytree(base, root / "results")
    store = Store(root / "results")
    config = load_config(None)
    run = store.load_run(run_id)
    options = config.scale_for("answer").options
    store.ratings.append_many(
        Rating(
            run_id=run_id,
            item_id=item.id,
            dimension="answer",
            reviewer=ALICE,
            channel="telegram",
            idempotency_key=f"bench-{round_no}-{n}",
            judgment=options[n % len(options)].value,
            score=options[n % len(options)].score,
            timestamp=T0 + timedelta(milliseconds=n),
            note="checked against the docs" if n % 5 == 0 else None,
        )
        for n, item in enumerate(run.items)
    )
    from evaluation.reviews import Ledger

    made = time.perf_counter()
    labels = run_labels(Ledger.from_events(store.human_events()), run, config, "langfuse")
    made = time.perf_counter() - made
    fake.rate_limit(per_minute=PRO_PER_MINUTE)  # a fresh window: the pulls' requests do not count
    try:
        with measured(fake, sdk) as figures:
            report = push_labels(
                store,
                "langfuse",
                "langfuse",
                LangfuseSink(),
                fake.env(),
                labels,
                seconds=3600,
                rate_per_s=rate,
            )
    finally:
        fake.rate_limit(None)
    states = Counter(s.state for s in outbox(store, "langfuse").values())
    problems = []
    if (report.sent, report.confirmed, report.waiting, report.failed) != (
        len(labels),
        len(labels),
        0,
        [],
    ):
        problems.append(
            f"sent {report.sent}, confirmed {report.confirmed}, waiting {report.waiting}, "
            f"failed {len(report.failed)} of {len(labels)} labels ({report.error or 'no error'})"
        )
    if states.get("confirmed", 0) != len(labels):
        problems.append(f"outbox states {dict(states)}, expected {len(labels)} confirmed")
    calls = figures["calls"]
    posts = [c for c in calls if c.method == "POST /api/public/scores"]
    logged = [
        json.loads(line)
        for line in store.connector_calls.path.read_text("utf-8").splitlines()
        if line.strip()
    ]
    figures.update(
        send_s=sum(c.get("seconds") or 0 for c in logged if c.get("operation") == "send"),
        confirm_s=sum(c.get("seconds") or 0 for c in logged if c.get("operation") == "confirm"),
    )
    figures.update(
        labels=len(labels),
        made=made,
        problems=problems,
        rejected=sum(1 for c in calls if c.status == 429),
        errors=sum(1 for c in calls if (c.status or 0) >= 400 and c.status != 429),
        peak_1s=peak_in(calls, 1.0),
        peak_60s=peak_in(calls, 60.0),
        body_bytes=sum(len(c.params.get("body", "").encode()) for c in posts) / max(1, len(labels)),
    )
    return figures


# ----------------------------------------------------------------------------------------------
# bounds


def traces_bound(n: int, k: int) -> tuple[int, int]:
    """(fewest requests by the API's page sizes, requests the connector's chunking makes)."""
    listing = math.ceil(n / MAX_OBSERVATIONS)
    fewest = listing + math.ceil(n * k / MAX_SCORES)
    connector = math.ceil(n / min(n, OBSERVATION_PAGE)) + math.ceil(n / TRACES_A_QUERY) * max(
        1, math.ceil(TRACES_A_QUERY * k / PAGE)
    )
    return fewest, connector


def queue_bound(q: int, k: int) -> tuple[int, int]:
    fewest = 1 + math.ceil(q / MAX_SCORES) + q + math.ceil(q * k / MAX_SCORES)
    connector = (
        1
        + math.ceil(q / PAGE)
        + q
        + math.ceil(q / TRACES_A_QUERY) * max(1, math.ceil(TRACES_A_QUERY * k / PAGE))
    )
    return fewest, connector


# ----------------------------------------------------------------------------------------------
# report


def median(rounds: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rounds)


def sdk_split(rounds: list[dict]) -> str:
    """The SDK's (de)serialisation time by helper (medians), largest first."""
    keys = {key for r in rounds for key in r["sdk_by"]}
    spent = {key: statistics.median(r["sdk_by"].get(key, 0.0) for r in rounds) for key in keys}
    return ", ".join(
        f"{key} {value:.2f} s"
        for key, value in sorted(spent.items(), key=lambda kv: -kv[1])
        if value >= 0.005
    )


def memory(rounds: list[dict]) -> str:
    start = median(rounds, "peak_mb") - median(rounds, "grew_mb")
    return f"{start:>5.0f} → {median(rounds, 'peak_mb'):.0f} MB"


def row(name: str, wall: float, bound: float, own: float, ok: bool, rounds: list[dict]) -> str:
    return (
        f"{name:<34} {wall:>8.2f} {bound:>8.2f} {wall / bound:>6.2f}× {own / bound:>6.2f}×  "
        f"{'PASS' if ok else 'FAIL'}  {memory(rounds)}"
    )


def report_pull(
    name: str,
    rounds: list[dict],
    items: int,
    fewest: int,
    made: int,
    latency: float,
    replayed: tuple[float, float, float] | None,
    formula: str,
) -> tuple[bool, list[str]]:
    bound = fewest * latency
    wall, fake_cpu = median(rounds, "wall"), median(rounds, "fake_cpu")
    own = wall - fake_cpu
    counts = {show_kinds(kinds(r["calls"])) for r in rounds}
    requests = statistics.median(len(r["calls"]) for r in rounds)
    problems = [p for r in rounds for p in r["problems"]] + [
        f"{r['errors']} error answers" for r in rounds if r["errors"]
    ]
    ok = own / bound <= TARGET_RATIO and not problems
    sdk = median(rounds, "sdk")
    lines = [
        row(name, wall, bound, own, ok, rounds),
        f"    requests: {' | '.join(sorted(counts))} (= {requests:.0f}; the fewest the API needs: "
        f"{fewest}; the connector's chunking makes {made})",
        f"    bound = {formula}",
        f"    where the time went (medians): {requests:.0f} × {latency:g} s latency = "
        f"{requests * latency:.2f} s · stand-in CPU {fake_cpu:.2f} s · client CPU "
        f"{median(rounds, 'client_cpu'):.2f} s, of which the SDK's (de)serialisation {sdk:.2f} s "
        f"({sdk / items * 1000:.2f} ms an item: {sdk_split(rounds)})",
    ]
    if replayed is not None:
        lines.append(
            f"    the same GETs replayed with httpx + json.loads: {replayed[0]:.2f} s (client CPU "
            f"{replayed[1]:.2f} s, stand-in CPU {replayed[2]:.2f} s): what these requests cost "
            "here without the SDK's conversion"
        )
    lines.append(f"    each round: {', '.join(format(r['wall'], '.2f') for r in rounds)} s")
    lines += [f"    VERIFY FAILED: {p}" for p in dict.fromkeys(problems)]
    return ok, lines


def report_push(
    rounds: list[dict], items: int, rate: float, latency: float
) -> tuple[bool, list[str]]:
    writes, reads = math.ceil(items / BATCH), math.ceil(items / READ_IDS)
    bound = (writes + reads) / rate
    wall, fake_cpu = median(rounds, "wall"), median(rounds, "fake_cpu")
    own = wall - fake_cpu
    counts = {show_kinds(kinds(r["calls"])) for r in rounds}
    rejected = max(r["rejected"] for r in rounds)
    problems = [p for r in rounds for p in r["problems"]] + [
        f"{r['errors']} error answers" for r in rounds if r["errors"]
    ]
    ok = own / bound <= TARGET_RATIO and rejected == 0 and not problems
    body = statistics.median(r["body_bytes"] for r in rounds)
    floor_writes = math.ceil(items * body / 1_000_000)
    floor = (floor_writes + math.ceil(items / MAX_SCORES)) / rate
    slot = 1 / rate
    sends, confirms = median(rounds, "send_s"), median(rounds, "confirm_s")
    lines = [
        row(f"push {items} labels @ {rate:.1f}/s", wall, bound, own, ok, rounds),
        f"    requests: {' | '.join(sorted(counts))}; 429s: {rejected}; peak "
        f"{max(r['peak_1s'] for r in rounds)} requests in any 1 s (rate {rate:.1f}/s), "
        f"{max(r['peak_60s'] for r in rounds)} in any 60 s (limit {PRO_PER_MINUTE})",
        f"    bound = (ceil({items}/{BATCH}) POST /scores + ceil({items}/{READ_IDS}) GET "
        f"/v3/scores read-backs) / ({PRO_PER_MINUTE}/60 per s) = ({writes} + {reads}) / {rate:.2f} "
        f"= {bound:.2f} s",
        f"    where the time went (medians): a slot is {slot * 1000:.0f} ms; a send call took "
        f"{sends / writes * 1000:.0f} ms ({sends:.2f} s in all), a confirm call "
        f"{confirms / reads * 1000:.0f} ms ({confirms:.2f} s in all) · stand-in CPU {fake_cpu:.2f} "
        f"s · client CPU {median(rounds, 'client_cpu'):.2f} s, of which the SDK's "
        f"(de)serialisation {median(rounds, 'sdk'):.2f} s ({sdk_split(rounds)}) · labels made "
        f"(run_labels, not timed) in {median(rounds, 'made'):.2f} s",
        f"    (the API alone would allow fewer: a score's body is ~{body:.0f} bytes, so a 1 MB "
        f"POST holds ~{int(1_000_000 // max(body, 1))}, and a read page 100 ids: ({floor_writes} + "
        f"{math.ceil(items / MAX_SCORES)}) / {rate:.2f} = {floor:.2f} s)",
        f"    each round: {', '.join(format(r['wall'], '.2f') for r in rounds)} s",
    ]
    lines += [f"    VERIFY FAILED: {p}" for p in dict.fromkeys(problems)]
    return ok, lines


# ----------------------------------------------------------------------------------------------
# main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--items", type=int, default=10000, help="traces pulled and labels pushed (default 10000)"
    )
    parser.add_argument(
        "--latency",
        type=float,
        default=0.05,
        help="seconds the stand-in takes to answer a GET (default 0.05)",
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="rounds; medians reported (default 3)"
    )
    parser.add_argument(
        "--queue-items",
        type=int,
        default=None,
        help="items of the annotation queue pulled (default items / 10: one request an item)",
    )
    parser.add_argument(
        "--ai-scores", type=int, default=1, help="evaluator scores on each trace (default 1)"
    )
    parser.add_argument(
        "--modes",
        default="traces,queue,push",
        help="comma-separated: traces, queue, push (default all)",
    )
    args = parser.parse_args()
    n, repeat, k, latency = (
        max(1, args.items),
        max(1, args.repeat),
        max(0, args.ai_scores),
        args.latency,
    )
    q = max(1, args.queue_items if args.queue_items is not None else n // 10)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    rate = PRO_PER_MINUTE / 60
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    from langfuse import __version__ as sdk_version

    sdk = SdkClock()
    results: dict[str, Any] = {}
    with (
        tempfile.TemporaryDirectory(prefix="hilbot-bench-connectors-") as tmp,
        sdk.installed(),
        FakeLangfuse(page_latency=latency) as fake,
    ):
        tmp_path = Path(tmp)
        print(
            f"# nproc={cpus} python={sys.version.split()[0]} langfuse-sdk={sdk_version} items={n} "
            f"queue-items={q} ai-scores={k} latency={latency:g}s repeat={repeat} "
            f"modes={','.join(modes)} dir={tmp}",
            flush=True,
        )
        seeded = seed(fake, n, k, queue=False) if {"traces", "push"} & set(modes) else 0.0
        print(f"  seeded {n} traces with {k} AI score(s) each in {seeded:.2f} s", flush=True)
        base: tuple[Path, str] | None = None

        if "traces" in modes or "push" in modes:
            settings = {"name": "qa", "contexts": False, "limit": n}
            rounds = []
            for r in range(repeat if "traces" in modes else 1):
                figures = pull_round(fake, sdk, tmp_path / f"traces-{r}", settings, n, k)
                rounds.append(figures)
                if base is None:
                    base = (tmp_path / f"traces-{r}" / "results", figures["run_id"])
                print(
                    f"  round {r + 1}/{repeat} traces: {figures['wall']:.2f} s, "
                    f"{len(figures['calls'])} requests ({show_kinds(kinds(figures['calls']))}), "
                    f"stand-in CPU {figures['fake_cpu']:.2f} s, client CPU "
                    f"{figures['client_cpu']:.2f} s (SDK {figures['sdk']:.2f} s), peak "
                    f"{figures['peak_mb']:.0f} MB",
                    flush=True,
                )
            if "traces" in modes:
                replayed = replay(fake, rounds[0]["calls"])
                results["traces"] = (rounds, replayed)

        if "queue" in modes:
            with FakeLangfuse(page_latency=latency) as queue_fake:
                seeded_q = seed(queue_fake, q, k, queue=True)
                print(
                    f"  seeded a queue of {q} traces with {k} AI score(s) each in {seeded_q:.2f} s "
                    "(a stand-in of its own)",
                    flush=True,
                )
                settings = {"queue": QUEUE, "limit": q}
                rounds = []
                for r in range(repeat):
                    figures = pull_round(queue_fake, sdk, tmp_path / f"queue-{r}", settings, q, k)
                    rounds.append(figures)
                    print(
                        f"  round {r + 1}/{repeat} queue: {figures['wall']:.2f} s, "
                        f"{len(figures['calls'])} requests, stand-in CPU {figures['fake_cpu']:.2f} "
                        f"s, client CPU {figures['client_cpu']:.2f} s (SDK {figures['sdk']:.2f} "
                        f"s), peak {figures['peak_mb']:.0f} MB",
                        flush=True,
                    )
                results["queue"] = (rounds, replay(queue_fake, rounds[0]["calls"]))

        if "push" in modes:
            assert base is not None
            rounds = []
            for r in range(repeat):
                figures = push_round(fake, sdk, base[0], tmp_path / f"push-{r}", base[1], rate, r)
                rounds.append(figures)
                print(
                    f"  round {r + 1}/{repeat} push: {figures['wall']:.2f} s, "
                    f"{len(figures['calls'])} requests ({show_kinds(kinds(figures['calls']))}), "
                    f"429s {figures['rejected']}, stand-in CPU {figures['fake_cpu']:.2f} s, client "
                    f"CPU {figures['client_cpu']:.2f} s (SDK {figures['sdk']:.2f} s), peak "
                    f"{figures['peak_mb']:.0f} MB",
                    flush=True,
                )
            results["push"] = rounds

    print()
    print(
        "Langfuse connector against a local stand-in answering every GET after "
        f"{latency * 1000:.0f} ms; {k} AI score(s) a trace; medians of {repeat}"
    )
    print(
        f"{'':<34} {'wall s':>8} {'bound s':>8} {'ratio':>7} {'own':>7}  "
        f"{'≤' + format(TARGET_RATIO, 'g') + '×':<4}  RSS at start → peak"
    )
    ok = True
    if "traces" in results:
        rounds, replayed = results["traces"]
        fewest, made = traces_bound(n, k)
        formula = (
            f"(ceil({n}/{MAX_OBSERVATIONS}) GET /v2/observations pages + "
            f"ceil({n}×{k}/{MAX_SCORES}) GET /v3/scores pages) × {latency:g} s = {fewest} × "
            f"{latency:g} = {fewest * latency:.2f} s"
        )
        passed, lines = report_pull(
            f"pull {n} traces (trace filter)", rounds, n, fewest, made, latency, replayed, formula
        )
        ok &= passed
        print("\n".join(lines))
    if "queue" in results:
        rounds, replayed = results["queue"]
        fewest, made = queue_bound(q, k)
        formula = (
            f"(1 GET queue + ceil({q}/{MAX_SCORES}) item pages + {q} GET /v2/observations?traceId= "
            f"(one an item) + ceil({q}×{k}/{MAX_SCORES}) score pages) × {latency:g} s = {fewest} × "
            f"{latency:g} = {fewest * latency:.2f} s"
        )
        passed, lines = report_pull(
            f"pull {q} queue items", rounds, q, fewest, made, latency, replayed, formula
        )
        ok &= passed
        print("\n".join(lines))
    if "push" in results:
        passed, lines = report_push(results["push"], n, rate, latency)
        ok &= passed
        print("\n".join(lines))
    print("own = (wall − the stand-in's CPU time) / bound; the target is checked on it.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
