"""Agreement at scale: ``hilbot analyze agreement`` on a generated 1M-line log, and Krippendorff's α
against the ``krippendorff`` package.

**The report** (``--parts report``): ``analysis.synthetic.write_synthetic`` writes a 1M-line
``ratings.jsonl`` (20 runs × 500 items, 40 reviewers: 3 dimensions with 780 reviewer pairs each)
into a temp dir (or ``--data DIR`` uses one already written by ``python -m analysis.synthetic
DIR --ratings 1000000``). ``hilbot --data-dir DIR analyze agreement`` then runs as a user runs it,
in a fresh interpreter, with every interval (1,000 bootstrap replicates), in Markdown and with
``--format json``, ``--runs`` times each (default 3): the median wall time and its CPU time
(user + sys of the process and its loader workers). Side by side, the previous implementation: the
tree of commit ``--baseline`` (default: the last commit before the analytic coefficients, whose
report took 18.5 s) extracted with ``git archive`` and run the same way on the same log. Target:
Markdown ≤ 10 s.

**α** (``--parts alpha``; α only: one level, no bootstrap):

1. 1,000,000 units × 5 raters, 5 categories (1–5), 20% of the values missing, at the nominal and
   ordinal levels (raters agree with a unit's true category 70% of the time, else pick one at
   random).
2. 100,000 units × 3 raters, 101 distinct values (scores on a 0.01 grid, 0–1), no missing values,
   interval. (2b) the same at 10,000 units, where the package fits in memory comfortably, so there
   is always a ratio.

Each (case, level, implementation) runs in **its own subprocess** (so memory peaks don't mix) that
loads the data from a ``.npy`` file written once by this script, then calls α up to 3 times (fewer
when one call takes more than a third of ``--budget`` seconds) and reports the median wall time and
its peak memory: ``peak RSS`` is the process's maximum resident set size (``getrusage``:
interpreter + numpy + the input data + the call), ``Δ RSS`` that peak minus the resident size just
before the first call (≈ what the call needed).
Each subprocess runs under an address-space limit (``--mem-limit-gb``, default 16; 0 = none) and a
timeout (``--timeout``, default 600 s); a run that hits either is reported as such, not hidden. The
two α values must agree to 1e-6. Targets: hilbot faster than the package on (1) and (2); hilbot's
peak RSS ≤ 1 GB on (2).

Run from the repo root: ``.venv/bin/python bench/agreement.py [--parts report,alpha] [--data DIR]
[--runs N] [--baseline COMMIT|none] [--mem-limit-gb N] [--timeout S] [--budget S]``.
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

GB = 1024**3
AGREE = 1e-6
CASES = {
    "1": ("(1) 1M units × 5 raters, 5 categories, 20% missing", ("nominal", "ordinal")),
    "2": ("(2) 100k units × 3 raters, 101 values (0.01 grid)", ("interval",)),
    "2b": ("(2b) 10k units × 3 raters, 101 values (0.01 grid)", ("interval",)),
}
IMPLS = ("hilbot", "krippendorff")
BASELINE = "feeed2803ca2dadf98005ff55608aa4e606386b1"
"""The last commit before the analytic coefficients (its agreement report: 18.5 s on this
machine)."""
TARGET_S = 10.0
"""Markdown report on the 1M-line log, every interval."""
RUN_CLI = "import sys; sys.argv[0] = 'hilbot'; from bot.cli import main; main()"


def make_data(case: str):
    """The raters × units matrix of ``case`` (seeded)."""
    import numpy as np

    rng = np.random.default_rng(2026)
    if case == "1":
        units, raters = 1_000_000, 5
        truth = rng.integers(1, 6, units).astype(float)
        data = np.where(
            rng.random((raters, units)) < 0.7,
            truth,
            rng.integers(1, 6, (raters, units)).astype(float),
        )
        data[rng.random(data.shape) < 0.2] = np.nan
        return data
    units = 100_000 if case == "2" else 10_000
    truth = rng.integers(0, 101, units)
    return np.clip(truth + rng.integers(-15, 16, (3, units)), 0, 100) / 100.0


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(impl: str, path: str, level: str, repeats: int, budget: float) -> None:
    """Runs in the subprocess: load, call α up to ``repeats`` times, print one JSON line."""
    import numpy as np

    data = np.load(path)
    if impl == "hilbot":
        from analysis.stats import krippendorff_alpha

        def call() -> float:
            return float(krippendorff_alpha(data, level))
    else:
        import krippendorff

        def call() -> float:
            return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))

    before = _rss_bytes()
    times, value = [], None
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            value = call()
            times.append(time.perf_counter() - start)
            if times[-1] > budget / repeats:
                break
        error = None
    except MemoryError:
        error = "MemoryError"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        json.dumps({"alpha": value, "times": times, "peak": peak, "before": before, "error": error})
    )


def measure(impl: str, path: str, level: str, args: argparse.Namespace) -> dict:
    """One implementation on one case, in its own subprocess under the memory limit and timeout."""
    limit = int(args.mem_limit_gb * GB)

    def cap() -> None:
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    cmd = [
        sys.executable,
        __file__,
        "--child",
        impl,
        path,
        level,
        "--repeats",
        str(args.repeats),
        "--budget",
        str(args.budget),
    ]
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=args.timeout, preexec_fn=cap, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout:g} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or [""])[-1]
        how = (
            f"killed by signal {-proc.returncode}"
            if proc.returncode < 0
            else f"exit {proc.returncode}"
        )
        return {"error": f"{how} after {time.perf_counter() - start:.0f} s {tail}".strip()}
    result = json.loads(lines[-1])
    if result["error"] == "MemoryError":
        limit_text = (
            f"the {args.mem_limit_gb:g} GB address-space limit" if limit else "the machine's memory"
        )
        result["error"] = f"MemoryError at {limit_text} (after {time.perf_counter() - start:.0f} s)"
    return result


def _gb(n: float) -> str:
    return f"{n / GB:.3f} GB"


def report(name: str, level: str, results: dict[str, dict]) -> dict:
    """Print the side-by-side rows of one case and level; return the verdict."""
    print(f"\n{name} — {level}")
    print(
        f"  {'implementation':<14} {'alpha':>20} {'median s':>10} {'runs':>5} {'peak RSS':>11} "
        f"{'Δ RSS':>11}"
    )
    for impl in IMPLS:
        r = results[impl]
        if r.get("error"):
            print(f"  {impl:<14} {'—':>20}  {r['error']}")
            continue
        print(
            f"  {impl:<14} {r['alpha']:>20.15f} {statistics.median(r['times']):>10.3f} "
            f"{len(r['times']):>5} {_gb(r['peak']):>11} {_gb(r['peak'] - r['before']):>11}"
        )
    ours, theirs = results["hilbot"], results["krippendorff"]
    verdict = {"faster": None, "agree": None, "peak": ours.get("peak")}
    if ours.get("error"):
        print("  hilbot failed")
        return verdict
    if theirs.get("error"):
        print(
            f"  ratio: the package did not finish ({theirs['error']}); hilbot took "
            f"{statistics.median(ours['times']):.3f} s, peak RSS {_gb(ours['peak'])}"
        )
        verdict["faster"] = None
        verdict["package_failed"] = theirs["error"]
        return verdict
    t_ours, t_theirs = statistics.median(ours["times"]), statistics.median(theirs["times"])
    d_ours = max(ours["peak"] - ours["before"], 1)
    d_theirs = max(theirs["peak"] - theirs["before"], 1)
    diff = abs(ours["alpha"] - theirs["alpha"])
    verdict.update(faster=t_ours < t_theirs, agree=diff <= AGREE)
    print(
        f"  ratio: hilbot {t_theirs / t_ours:.1f}× faster, peak RSS "
        f"{theirs['peak'] / ours['peak']:.1f}× lower (Δ RSS {d_theirs / d_ours:.1f}× lower); |Δα| "
        f"= {diff:.1e} ({'agree' if diff <= AGREE else 'DISAGREE'} to {AGREE:g})"
    )
    return verdict


# --------------------------------------------------------------------------------------- the report


def run_report(tree: Path, data: Path, fmt: str, timeout: float) -> dict:
    """``hilbot --data-dir DATA analyze agreement --format FMT`` with the code of ``tree``, in a
    fresh interpreter: wall seconds, CPU seconds (the process and its loader workers), output
    size."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [
        sys.executable,
        "-c",
        RUN_CLI,
        "--data-dir",
        str(data),
        "analyze",
        "agreement",
        "--format",
        fmt,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, cwd=tree, env=env, timeout=timeout)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        tail = (proc.stderr.decode(errors="replace").strip().splitlines() or [""])[-1]
        return {"error": f"exit {proc.returncode}: {tail}"}
    return {"wall": wall, "cpu": cpu, "bytes": len(proc.stdout)}


def extract(commit: str, into: Path) -> Path | None:
    """The tree of ``commit`` (``git archive``), or None when git or the commit is not there."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit],
            capture_output=True,
            check=True,
            timeout=120,
        )
        into.mkdir(parents=True)
        subprocess.run(
            ["tar", "-x", "-C", str(into)], input=archive.stdout, check=True, timeout=120
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return into


def _figure(results: list[dict]) -> str:
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        return f"failed ({errors[0]})"
    walls = [r["wall"] for r in results]
    return (
        f"{statistics.median(walls):6.2f} s ({statistics.median(r['cpu'] for r in results):5.1f} s "
        f"CPU) [{', '.join(f'{w:.2f}' for w in walls)}]"
    )


def report_bench(args: argparse.Namespace, tmp: Path) -> bool:
    """The report on the 1M-line log, this tree and the baseline side by side; True when the target
    is met."""
    from analysis.synthetic import write_synthetic
    from evaluation import Store

    data = Path(args.data) if args.data else tmp / "data"
    if not args.data:
        started = time.perf_counter()
        log = write_synthetic(Store(data), ratings=args.ratings)
        print(
            f"generated {log.lines:,} lines ({log.path.stat().st_size / 1e6:.0f} MB) in "
            f"{time.perf_counter() - started:.1f} s"
        )
    baseline = None if args.baseline == "none" else extract(args.baseline, tmp / "baseline")
    trees = {"this tree": ROOT, **({f"baseline {args.baseline[:7]}": baseline} if baseline else {})}
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"\nhilbot analyze agreement on {data} (every interval, 1000 bootstrap replicates); median "
        f"of {args.runs} runs each, wall (CPU) [each run]; {cpus} CPUs"
    )
    if args.baseline != "none" and baseline is None:
        print(
            f"  baseline {args.baseline[:7]}: not available here (git archive failed); its "
            "recorded figure: 18.5 s"
        )
    medians: dict[tuple[str, str], float] = {}
    for fmt in ("markdown", "json"):
        results: dict[str, list[dict]] = {name: [] for name in trees}
        for _ in range(
            args.runs
        ):  # the trees' runs alternate, so a busy moment on a shared machine hits both
            for name, tree in trees.items():
                results[name].append(run_report(tree, data, fmt, args.timeout))
        for name, runs in results.items():
            print(f"  {fmt:<9} {name:<17} {_figure(runs)}")
            if all("wall" in r for r in runs):
                medians[(fmt, name)] = statistics.median(r["wall"] for r in runs)
    for fmt in ("markdown", "json"):
        ours = medians.get((fmt, "this tree"))
        theirs = next((v for (f, n), v in medians.items() if f == fmt and n != "this tree"), None)
        if ours and theirs:
            print(f"  {fmt}: {theirs / ours:.1f}× faster than the baseline")
    ours = medians.get(("markdown", "this tree"))
    met = ours is not None and ours <= TARGET_S
    print(
        f"target: Markdown ≤ {TARGET_S:g} s: {'PASS' if met else 'FAIL'} "
        f"({ours if ours is not None else float('nan'):.2f} s)"
    )
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--parts", default="report,alpha", help="comma-separated subset of report,alpha"
    )
    parser.add_argument(
        "--data", help="a data directory already holding the generated log (default: write one)"
    )
    parser.add_argument(
        "--ratings",
        type=int,
        default=1_000_000,
        help="lines of the generated log (default 1000000)",
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="runs of the report per format and tree (median)"
    )
    parser.add_argument(
        "--baseline", default=BASELINE, help="the commit run side by side ('none': skip)"
    )
    parser.add_argument(
        "--mem-limit-gb",
        type=float,
        default=16.0,
        help="address-space limit per subprocess (0 = none)",
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds before a subprocess is killed"
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=120.0,
        help="stop repeating once one call takes budget/repeats",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of 1,2,2b")
    parser.add_argument(
        "--child", nargs=3, metavar=("IMPL", "NPY", "LEVEL"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.child[2], args.repeats, args.budget)
        return
    parts = args.parts.split(",")
    if "report" in parts:
        tmp = Path(tempfile.mkdtemp(prefix="hilbot-agreement-bench-"))
        try:
            report_bench(args, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if "alpha" in parts:
        alpha_bench(args)


def alpha_bench(args: argparse.Namespace) -> None:
    """Krippendorff's α, hilbot vs the ``krippendorff`` package (the module doc's cases)."""
    import numpy as np

    print(
        f"\nKrippendorff's α, hilbot vs the krippendorff package; median of ≤{args.repeats} calls, "
        f"one subprocess each, limit {args.mem_limit_gb:g} GB address space / {args.timeout:g} s"
    )
    verdicts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case, (name, levels) in CASES.items():
            if case not in args.cases.split(","):
                continue
            path = str(Path(tmp) / f"case{case}.npy")
            np.save(path, make_data(case))
            for level in levels:
                results = {impl: measure(impl, path, level, args) for impl in IMPLS}
                verdicts[(case, level)] = report(name, level, results)

    if not {("1", "nominal"), ("1", "ordinal"), ("2", "interval")} <= set(verdicts):
        return
    one = [verdicts[("1", lvl)] for lvl in CASES["1"][1]]
    two = verdicts[("2", "interval")]
    agree = all(v["agree"] is not False for v in verdicts.values())
    small = two["peak"] is not None and two["peak"] <= GB

    def faster(v: dict) -> str:
        if v.get("package_failed"):
            return f"package did not finish ({v['package_failed']})"
        return "yes" if v["faster"] else "NO"

    print(
        f"\ntargets: faster than the package on (1): {', '.join(faster(v) for v in one)}; on (2): "
        f"{faster(two)}; hilbot peak RSS on (2) ≤ 1 GB: {'yes' if small else 'NO'} "
        f"({_gb(two['peak'] or 0)}); α agree to {AGREE:g} wherever both finished: "
        f"{'yes' if agree else 'NO'}"
    )


if __name__ == "__main__":
    main()
