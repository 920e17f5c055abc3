"""Loading a big ratings log: analysis.load.load() and analysis.validate.validate() vs the Ledger
fold.

What is measured, on one synthetic store (``analysis.synthetic.write_synthetic``: 1M lines of
ratings.jsonl by default, 20 runs x 500 items, 40 reviewers; written once into a temp dir and
timed):

* load      -- ``load(store)``: every frame built (ratings, skips, concerns, notes, items, runs).
               Median of 3 runs, each in a fresh subprocess (so each has its own peak RSS and no
               warm caches of Python objects). ``lines/s`` = lines of the log / median seconds.
               Target: <= 5 s for 1M lines on this 2-CPU machine.
* load -j1  -- the same with one process (``jobs=1``), once: what a single core does.
* validate  -- ``validate(store, config)`` with the built-in config, once (target: <= 15 s).
* baseline  -- the pydantic path: ``Ledger.from_events(store.human_events())`` on a store
               holding the first 100k lines of the same log (timed once, extrapolated x N/100k:
               folding 1M lines this way takes minutes), next to ``load()`` on those same lines.

Peak RSS is the subprocess's own maximum resident set plus its largest reader process (the
readers run at the same time as the parent). Seconds exclude interpreter start-up and imports.

Run from the repo root: ``.venv/bin/python bench/load.py [--ratings N] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BASELINE_LINES = 100_000


def _peak_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (own + children) / 1024


def phase(name: str, data: str) -> dict:
    """One measured phase, run inside a subprocess (``--phase``)."""
    from evaluation import Store, load_config

    store = Store(data)
    if name in ("load", "load1"):
        from analysis.load import load

        started = time.perf_counter()
        issues: list = []
        frames = load(store, issues=issues, jobs=1 if name == "load1" else None)
        seconds = time.perf_counter() - started
        sizes = {
            k: len(getattr(frames, k))
            for k in ("ratings", "skips", "concerns", "notes", "items", "runs")
        }
        return {"seconds": seconds, "rss_mb": _peak_mb(), "sizes": sizes, "issues": len(issues)}
    if name == "validate":
        from analysis.validate import validate

        started = time.perf_counter()
        report = validate(store, load_config(None))
        seconds = time.perf_counter() - started
        return {
            "seconds": seconds,
            "rss_mb": _peak_mb(),
            "counts": report.counts,
            "schema_errors": len(report.schema_errors),
            "exit_code": report.exit_code,
        }
    if name == "ledger":
        from evaluation.reviews import Ledger

        started = time.perf_counter()
        ledger = Ledger.from_events(store.human_events([]))
        seconds = time.perf_counter() - started
        return {"seconds": seconds, "rss_mb": _peak_mb(), "judgments": len(ledger.judgments)}
    raise SystemExit(f"unknown phase {name!r}")


def run_phase(name: str, data: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--phase", name, str(data)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--ratings", type=int, default=1_000_000, help="lines of ratings.jsonl (default 1000000)"
    )
    parser.add_argument(
        "--keep", help="write the store here and keep it (default: a temp dir, removed)"
    )
    parser.add_argument("--phase", nargs=2, metavar=("NAME", "DATA"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(phase(*args.phase)))
        return 0

    from analysis.synthetic import write_synthetic
    from evaluation import Store

    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="hilbot-load-bench-"))
    try:
        data, small = base / "big", base / "small"
        started = time.perf_counter()
        log = write_synthetic(Store(data), ratings=args.ratings)
        generate = time.perf_counter() - started
        size_mb = log.path.stat().st_size / 1e6
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        print(
            f"hilbot analysis.load bench: {log.lines:,} lines of ratings.jsonl ({size_mb:.0f} MB; "
            f"{log.ratings:,} ratings, {log.skips:,} skips, {log.notes:,} notes, "
            f"{log.redeliveries:,} redelivered, {log.deliveries:,} deliveries), {len(log.runs)} "
            f"runs x {log.items // len(log.runs)} items; {cpus} CPUs; python "
            f"{sys.version.split()[0]}"
        )
        print(
            f"generate   {generate:6.2f} s   write_synthetic, once ({log.lines / generate:,.0f} "
            "lines/s)"
        )

        loads = [run_phase("load", data) for _ in range(3)]
        seconds = [r["seconds"] for r in loads]
        median = statistics.median(seconds)
        verdict = "PASS" if median <= 5.0 * args.ratings / 1_000_000 else "FAIL"
        print(
            f"load       {median:6.2f} s   median of 3 [{', '.join(f'{s:.2f}' for s in seconds)}]  "
            f"{log.lines / median:,.0f} lines/s  target <= {5.0 * args.ratings / 1_000_000:.1f} s: "
            f"{verdict}  peak RSS {max(r['rss_mb'] for r in loads):,.0f} MB"
        )
        print(
            f"           frames: {', '.join(f'{k} {v:,}' for k, v in loads[0]['sizes'].items())}; "
            f"issues {loads[0]['issues']}"
        )
        one = run_phase("load1", data)
        print(
            f"load -j1   {one['seconds']:6.2f} s   one process, once "
            f"({log.lines / one['seconds']:,.0f} lines/s)  peak RSS {one['rss_mb']:,.0f} MB"
        )
        checked = run_phase("validate", data)
        flagged = {k: v for k, v in checked["counts"].items() if v}
        print(
            f"validate   {checked['seconds']:6.2f} s   once, target <= 15 s: "
            f"{'PASS' if checked['seconds'] <= 15 else 'FAIL'}  peak RSS {checked['rss_mb']:,.0f} "
            f"MB  exit {checked['exit_code']}, schema errors {checked['schema_errors']}, flags "
            f"{flagged}"
        )

        baseline_lines = min(BASELINE_LINES, log.lines)
        small.mkdir(parents=True)
        shutil.copytree(data / "runs", small / "runs")
        with open(log.path, "rb") as source, open(small / "ratings.jsonl", "wb") as target:
            for _ in range(baseline_lines):
                target.write(source.readline())
        ledger = run_phase("ledger", small)
        quick = run_phase("load", small)
        factor = log.lines / baseline_lines
        print(
            f"baseline   {ledger['seconds']:6.2f} s   Ledger.from_events(store.human_events()) on "
            f"the first {baseline_lines:,} lines ({baseline_lines / ledger['seconds']:,.0f} "
            f"lines/s); extrapolated x{factor:g}: ~{ledger['seconds'] * factor:,.0f} s for "
            f"{log.lines:,} lines  peak RSS {ledger['rss_mb']:,.0f} MB"
        )
        print(
            f"           load() on the same {baseline_lines:,} lines: {quick['seconds']:.2f} s "
            f"({ledger['seconds'] / quick['seconds']:.0f}x faster); on {log.lines:,}: "
            f"{ledger['seconds'] * factor / median:.0f}x faster than the extrapolated baseline"
        )
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
