"""Startup time of the ``hilbot`` CLI: how long ``hilbot --help`` takes, wall clock.

What is measured:

* ``hilbot --help`` -- the console script next to this interpreter (``.venv/bin/hilbot``), or
  ``python -m bot.cli --help`` if it is missing; run ``--runs`` times (default 15) after 2
  uncounted warm-up runs; the median wall time is reported.
* ``python -c pass`` -- the interpreter's own floor, measured the same way in the same run, so
  ``hilbot`` minus floor is what the CLI's imports and setup cost.
* ``python -X importtime`` on the same ``--help`` path: which heavy modules (pandas, numpy,
  anthropic, the chat SDKs, ...) got imported -- ideally none for ``--help`` -- and the five
  slowest imports by cumulative time.

Read the last line: the median must be <= 0.300 s. Run from the repo root:
``.venv/bin/python bench/startup.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.300
WARMUP = 2
HEAVY = (
    "pandas",
    "scipy",
    "anthropic",
    "telegram",
    "slack_bolt",
    "slack_sdk",
    "matplotlib",
    "numpy",
)
HELP_CODE = (
    "import sys; sys.argv = ['hilbot', '--help']\n"
    "from bot.cli import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
)


def hilbot_command() -> list[str]:
    """``hilbot --help`` via the console script next to sys.executable, else ``-m bot.cli``."""
    script = Path(sys.executable).parent / "hilbot"
    if script.exists():
        return [str(script), "--help"]
    return [sys.executable, "-m", "bot.cli", "--help"]


def run_timed(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start, proc


def median_time(cmd: list[str], runs: int) -> float:
    """Median wall time of ``cmd`` over ``runs`` runs, after WARMUP uncounted runs."""
    times = []
    for i in range(WARMUP + runs):
        elapsed, proc = run_timed(cmd)
        if proc.returncode != 0 and i == 0:
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-3:]
            print(f"warning: {' '.join(cmd)} exited {proc.returncode}: " + " | ".join(tail))
        if i >= WARMUP:
            times.append(elapsed)
    return statistics.median(times)


def parse_importtime(stderr: str) -> list[tuple[str, int, int]]:
    """(module, self us, cumulative us) for each ``import time:`` line of ``-X importtime``."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue  # the header line
        rows.append((parts[2].strip(), int(parts[0]), int(parts[1])))
    return rows


def heavy_imports(rows: list[tuple[str, int, int]]) -> list[str]:
    """The HEAVY top-level packages that appear among the imported modules."""
    seen = {name.split(".")[0] for name, _, _ in rows}
    return [pkg for pkg in HEAVY if pkg in seen]


def importtime_rows(code: str) -> list[tuple[str, int, int]]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return parse_importtime(proc.stderr.decode(errors="replace"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=15, help="timed runs per command (after 2 warm-ups)"
    )
    args = parser.parse_args()
    runs = max(1, args.runs)
    cmd = hilbot_command()
    print(
        f"# python={sys.version.split()[0]} runs={runs} (+{WARMUP} warm-up) command: "
        f"{' '.join(cmd)}"
    )

    ours = median_time(cmd, runs)
    floor = median_time([sys.executable, "-c", "pass"], runs)
    print(f"hilbot --help    median {ours:.3f} s")
    print(f"python -c pass   median {floor:.3f} s  (interpreter floor)")
    print(f"ratio {ours / floor:.1f}x the floor; CLI overhead {ours - floor:.3f} s")

    rows = importtime_rows(HELP_CODE)
    if not rows:
        print("importtime: no output (could not import bot.cli?)")
    else:
        heavy = heavy_imports(rows)
        print("heavy imports: " + (", ".join(heavy) if heavy else "none"))
        print("slowest imports (cumulative):")
        for name, _, cumulative in sorted(rows, key=lambda r: r[2], reverse=True)[:5]:
            print(f"  {cumulative / 1000:8.1f} ms  {name}")

    verdict = "PASS" if ours <= TARGET_S else "FAIL"
    print(f"target: median <= {TARGET_S:.3f} s → {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
