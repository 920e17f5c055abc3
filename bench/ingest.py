"""Durable append throughput and latency: hilbot's EventLog against a naive baseline.

What is measured, per concurrency level (1, 50 and 200 asyncio writer tasks, each appending
~400-byte rating records back to back, awaiting each append before the next):

* hilbot   -- ``await EventLog.aappend(record)``: resolves once the record is fsynced; appends
              that arrive together share one fsync (group commit).
* baseline -- the naive way, per event: ``aiofiles.open(path, "a")``, write one JSON line, flush,
              ``fsync`` in a thread (aiofiles and to_thread use the loop's default executor).

Both are durable: a record counts only once it is on disk. ``records/s`` is records / wall time
of the whole run. Latency is the time from calling append to its resolution; ``p50``/``p99`` are
the median over the repeats of each run's own percentile, and ``records/s`` and ``fsyncs`` are
the medians over the repeats. Every run writes a fresh file in a temp dir on the working dir's
filesystem, and is checked afterwards: one line per record, each a JSON object with a "type".

Read the last line: at 200 writers hilbot should be >= 5x the baseline's throughput with a p99
<= 50 ms. ``fsyncs`` far below the record count is group commit at work.

Run from the repo root: ``.venv/bin/python bench/ingest.py [--repeats N] [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import aiofiles  # noqa: E402

from evaluation.log import EventLog  # noqa: E402

FULL = {1: 4000, 50: 300, 200: 150}  # writers -> records per writer
QUICK = {1: 100, 50: 10, 200: 5}
NOTE = (
    "The top result answers a different question; the second one is right but buried. "
    "Ranking looks off for short queries."
)


def make_record(writer: int, i: int) -> dict:
    """A realistic rating event (~400 bytes as JSON)."""
    return {
        "type": "rating",
        "v": 1,
        "run_id": "bench",
        "item_id": f"q{i}",
        "dimension": "overall",
        "reviewer": {"platform": "telegram", "id": str(writer), "name": "Reviewer"},
        "channel": "telegram",
        "idempotency_key": f"telegram:{writer}:{i}",
        "timestamp": "2026-11-21T10:00:00+00:00",
        "judgment": "okay",
        "score": 0.7,
        "concerns": ["bad_ranking"],
        "note": NOTE,
    }


async def baseline_append(path: Path, record: dict) -> None:
    line = json.dumps(record) + "\n"
    async with aiofiles.open(path, "a") as f:
        await f.write(line)
        await f.flush()
        await asyncio.to_thread(os.fsync, f.fileno())


async def run_once(impl: str, path: Path, writers: int, per_writer: int) -> dict:
    """One timed run; returns throughput, per-append latencies (s) and fsync count."""
    log = EventLog(path) if impl == "hilbot" else None
    latencies: list[float] = []

    async def writer(w: int) -> None:
        for i in range(per_writer):
            record = make_record(w, i)
            t0 = time.perf_counter()
            if log is not None:
                await log.aappend(record)
            else:
                await baseline_append(path, record)
            latencies.append(time.perf_counter() - t0)

    start = time.perf_counter()
    await asyncio.gather(*(writer(w) for w in range(writers)))
    wall = time.perf_counter() - start
    total = writers * per_writer
    fsyncs = total
    if log is not None:
        fsyncs = log.fsyncs
        log.close()
    verify(path, total)
    return {"rps": total / wall, "lat": latencies, "fsyncs": fsyncs}


def verify(path: Path, expected: int) -> None:
    """Every appended record must be on disk as one JSON line; abort loudly otherwise."""
    lines = path.read_bytes().splitlines()
    problems = [] if len(lines) == expected else [f"{len(lines)} lines, expected {expected}"]
    for n, line in enumerate(lines, 1):
        try:
            obj = json.loads(line)
            assert isinstance(obj, dict) and "type" in obj
        except (ValueError, AssertionError):
            problems.append(f"line {n} is not a JSON record: {line[:60]!r}")
    if problems:
        sys.exit(f"VERIFY FAILED for {path}: " + "; ".join(problems[:5]))


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1)."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(q * len(s)) - 1))]


def summarize(runs: list[dict]) -> dict:
    return {
        "rps": statistics.median(r["rps"] for r in runs),
        "p50": statistics.median(pct(r["lat"], 0.50) for r in runs) * 1000,
        "p99": statistics.median(pct(r["lat"], 0.99) for r in runs) * 1000,
        "fsyncs": statistics.median(r["fsyncs"] for r in runs),
    }


def pick_tmp_root() -> Path:
    """The system temp dir if it is on the working dir's filesystem, else bench/.tmp."""
    system = Path(tempfile.gettempdir())
    if system.stat().st_dev == ROOT.stat().st_dev:
        return system
    local = ROOT / "bench" / ".tmp"
    local.mkdir(exist_ok=True)
    return local


def fs_type(path: Path) -> str:
    """Filesystem type of ``path`` from /proc/mounts (longest matching mount point)."""
    best, kind = "", "?"
    try:
        for entry in Path("/proc/mounts").read_text().splitlines():
            _, mount, fstype, *_ = entry.split()
            if str(path.resolve()).startswith(mount) and len(mount) > len(best):
                best, kind = mount, fstype
    except OSError:
        pass
    return kind


async def bench(levels: dict[int, int], repeats: int, tmp: Path) -> dict[tuple[int, str], dict]:
    counter = iter(range(10**9))
    fresh = lambda: tmp / f"log-{next(counter)}.jsonl"  # noqa: E731
    for impl in ("hilbot", "baseline"):  # warm-up: executor threads, imports, page cache
        await run_once(impl, fresh(), 4, 5)
    results: dict[tuple[int, str], list[dict]] = {}
    for writers, per_writer in levels.items():
        for _ in range(repeats):  # alternate implementations so drift hits both alike
            for impl in ("hilbot", "baseline"):
                results.setdefault((writers, impl), []).append(
                    await run_once(impl, fresh(), writers, per_writer)
                )
    return {key: summarize(runs) for key, runs in results.items()}


def report(summary: dict[tuple[int, str], dict], levels: dict[int, int], repeats: int) -> None:
    print(
        f"{'writers':<8} {'impl':<9} {'records':>7} {'records/s':>10} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'fsyncs':>7}"
    )
    for (writers, impl), s in summary.items():
        total = writers * levels[writers]
        print(
            f"{writers:<8} {impl:<9} {total:>7} {s['rps']:>10.0f} {s['p50']:>8.2f} "
            f"{s['p99']:>8.2f} {s['fsyncs']:>7.0f}"
        )
    print(f"(median of {repeats} runs; p50/p99 = median of the runs' own percentiles)")
    top = max(levels)
    ours, base = summary[(top, "hilbot")], summary[(top, "baseline")]
    ratio = ours["rps"] / base["rps"]
    verdict = "PASS" if ratio >= 5 and ours["p99"] <= 50 else "FAIL"
    print(
        f"ratio at {top} writers: hilbot/baseline throughput = {ratio:.1f}x (target >= 5x); "
        f"hilbot p99 = {ours['p99']:.1f} ms (target <= 50 ms) -> {verdict}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs per (level, implementation); median reported"
    )
    parser.add_argument("--quick", action="store_true", help="small totals, for a smoke run")
    args = parser.parse_args()
    levels = QUICK if args.quick else FULL
    root = pick_tmp_root()
    tmp = Path(tempfile.mkdtemp(prefix="hilbot-bench-", dir=root))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"# nproc={cpus} python={sys.version.split()[0]} dir={tmp} fs={fs_type(tmp)} "
        f"record={len(json.dumps(make_record(0, 0))) + 1}B "
        f"repeats={args.repeats}{' (quick)' if args.quick else ''}"
    )
    try:
        summary = asyncio.run(bench(levels, max(1, args.repeats), tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if root.name == ".tmp" and not any(root.iterdir()):
            root.rmdir()
    report(summary, levels, max(1, args.repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
