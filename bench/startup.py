"""Startup time of the ``hilbot`` CLI: how long ``hilbot --help``, every analysis's ``--help`` and
its usage errors take, wall clock.

What is measured:

* ``hilbot --help`` -- the console script next to this interpreter (``.venv/bin/hilbot``), or
  ``python -m bot.cli`` if it is missing -- and, side by side with it, ``hilbot review --help``
  (any subcommand's help, for comparison), ``hilbot analyze --help``,
  ``hilbot analyze NAME --help`` for every analysis, and its usage errors: an unknown option
  (``--bogus``), a bad ``--format``, a required option left out (``correlate`` without
  ``--feature``), an option out of its range (``agreement --bootstrap -1``) and an unknown
  analysis. Each is run ``--runs`` times (default 15) after 2 uncounted warm-up runs, the commands
  taking turns within each round (so a busy moment of the shared machine slows them all alike);
  the median wall time is reported with its ratio to ``hilbot --help``'s.
* ``python -c pass`` -- the interpreter's own floor, measured the same way in the same run, so
  ``hilbot`` minus floor is what the CLI's imports and setup cost.
* ``python -X importtime`` on each command: which heavy modules (pandas, numpy, scipy,
  matplotlib, anthropic, the chat SDKs, the configuration's and the records' pydantic models) got
  imported -- none, for any of them -- and the five slowest imports of the slowest command by
  cumulative time.

Read the last line: every median must be <= 0.300 s. Run from the repo root:
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
    "evaluation.config",
    "evaluation.records",
)
"""What no ``--help`` and no usage error imports (a module here is a package's top level or, with a
dot, that module)."""
ANALYSES = ("validate", "agreement", "calibration", "correlate", "patterns", "synthesize", "triage")


def commands() -> list[tuple[str, ...]]:
    """The command lines timed (after ``hilbot``): help first, another command's help (what any
    subcommand costs: typer builds its options), then each analysis's help and usage errors."""
    lines: list[tuple[str, ...]] = [("--help",), ("review", "--help"), ("analyze", "--help")]
    for name in ANALYSES:
        lines += [("analyze", name, "--help"), ("analyze", name, "--bogus")]
        lines.append(("analyze", name, "--format", "xml"))
    lines += [
        ("analyze", "correlate"),
        ("analyze", "agreement", "--bootstrap", "-1"),
        ("analyze", "no-such-analysis"),
    ]
    return lines


LOADED = "modules loaded:"
"""How :func:`code_for`'s last line starts: every module loaded by the end (``-X importtime`` misses
a module loaded by ``importlib.import_module``, as the registries load the analyses)."""


def code_for(args: tuple[str, ...]) -> str:
    """Python running ``hilbot ARGS`` in-process, as the console script does."""
    return (
        f"import sys; sys.argv = ['hilbot', *{list(args)!r}]\n"
        "from bot.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(LOADED, *sys.modules, file=sys.__stderr__)\n".replace("LOADED", repr(LOADED))
    )


def hilbot_command(args: tuple[str, ...] = ("--help",)) -> list[str]:
    """``hilbot ARGS`` via the console script next to sys.executable, else ``-m bot.cli``."""
    script = Path(sys.executable).parent / "hilbot"
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-m", "bot.cli", *args]


def run_timed(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start, proc


def median_times(cmds: list[list[str]], runs: int) -> tuple[list[float], list[int]]:
    """Median wall time of each of ``cmds`` over ``runs`` rounds, after WARMUP uncounted ones (each
    round runs every command once, in turn), and each command's exit code."""
    times: list[list[float]] = [[] for _ in cmds]
    codes = [0] * len(cmds)
    for i in range(WARMUP + runs):
        for n, cmd in enumerate(cmds):
            elapsed, proc = run_timed(cmd)
            codes[n] = proc.returncode
            if i >= WARMUP:
                times[n].append(elapsed)
    return [statistics.median(t) for t in times], codes


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


def heavy_imports(loaded: set[str]) -> list[str]:
    """The HEAVY packages and modules among the modules loaded."""
    seen = loaded | {name.split(".")[0] for name in loaded}
    return [pkg for pkg in HEAVY if pkg in seen]


def importtime_rows(code: str) -> tuple[list[tuple[str, int, int]], set[str]]:
    """``code`` under ``-X importtime``: its import rows, and the modules loaded by its end (when it
    prints them as :func:`code_for` does)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    stderr = proc.stderr.decode(errors="replace")
    last = [line for line in stderr.splitlines() if line.startswith(LOADED)]
    loaded = set(last[-1][len(LOADED) :].split()) if last else set()
    return parse_importtime(stderr), loaded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=15, help="timed runs per command (after 2 warm-ups)"
    )
    args = parser.parse_args()
    runs = max(1, args.runs)
    lines = commands()
    print(
        f"# python={sys.version.split()[0]} runs={runs} (+{WARMUP} warm-up) command: "
        f"{' '.join(hilbot_command())}"
    )

    cmds = [hilbot_command(line) for line in lines] + [[sys.executable, "-c", "pass"]]
    medians, codes = median_times(cmds, runs)
    ours, floor = medians[0], medians[-1]
    width = max(len(" ".join(line)) for line in lines) + len("hilbot ")
    print(f"{'command':<{width}}  exit  median   × hilbot --help  heavy imports")
    slowest, worst = 0.0, lines[0]
    for line, median, code in zip(lines, medians, codes):
        _, loaded = importtime_rows(code_for(line))
        heavy = ", ".join(heavy_imports(loaded)) or ("none" if loaded else "(not measured)")
        print(
            f"{'hilbot ' + ' '.join(line):<{width}}  {code:>4}  {median:.3f} s  "
            f"{median / ours:>14.2f}×  {heavy}"
        )
        if median > slowest:
            slowest, worst = median, line
    print(f"{'python -c pass':<{width}}  {codes[-1]:>4}  {floor:.3f} s  (interpreter floor)")
    print(f"hilbot --help: {ours / floor:.1f}x the floor; CLI overhead {ours - floor:.3f} s")

    rows, _ = importtime_rows(code_for(worst))
    if rows:
        print(f"slowest imports (cumulative) of hilbot {' '.join(worst)}:")
        for name, _, cumulative in sorted(rows, key=lambda r: r[2], reverse=True)[:5]:
            print(f"  {cumulative / 1000:8.1f} ms  {name}")

    verdict = "PASS" if slowest <= TARGET_S else "FAIL"
    print(
        f"target: every median <= {TARGET_S:.3f} s (slowest {slowest:.3f} s: hilbot "
        f"{' '.join(worst)}) → {verdict}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
