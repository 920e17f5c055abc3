"""The dashboard's speed: how soon the overview renders, on the demo data and on a long log.

``hilbot dashboard --port 0`` starts as a subprocess over a data dir; then, over HTTP on
127.0.0.1, each page is fetched:

* ``first``: the first request after the start (the logs read, through the columnar index, and the
  analyses the page shows computed);
* ``again``: the median of ``--repeat`` more requests while no log changes (the page built is
  kept until a log changes: the goal, ≤ 1 s on the demo and ≤ 2 s on the 1M-rating log);
* ``after a rating``: one rating appended, then the page fetched (the log's new tail read; the
  analyses computed again).

Beside them, as the bound a page cannot beat, ``/api/version`` (one request that reads nothing but
the files' sizes). Then ``hilbot report --html`` on the demo: its time and size (goal ≤ 2 MB).

Data: the demo (three runs, 54 ratings) and a generated log of ``--ratings`` ratings
(``analysis.synthetic``), or the data dir given with ``--data`` (such as ``bench/scale.py
--keep``'s 1M log).

Usage: .venv/bin/python bench/dashboard.py [--ratings 100000] [--data DIR] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
HILBOT = Path(sys.executable).parent / "hilbot"
PAGES = ("/", "/agreement", "/calibration", "/patterns", "/triage", "/reviewers")
GOALS = {"demo": 1.0, "log": 2.0}
"""Seconds the overview may take once loaded: on the demo, on a long log."""
RATING = {
    "v": 1, "type": "rating", "item_id": "q01", "dimension": "overall",
    "reviewer": {"platform": "bench", "id": "late"}, "channel": "bench",
    "action": "rate:good", "judgment": "good", "score": 1.0, "ai_verdict_shown": False,
}


def fetch(url: str) -> float:
    """Seconds to fetch ``url`` whole (an error status raises)."""
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as answer:
        answer.read()
    return time.perf_counter() - start


def start(data: Path) -> tuple[subprocess.Popen, str]:
    """``hilbot dashboard --port 0`` over ``data``, and its URL once it listens."""
    env = {**os.environ, "HILBOT_DATA_DIR": str(data)}
    proc = subprocess.Popen([str(HILBOT), "dashboard", "--port", "0"], env=env,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    url = next(word for word in line.split() if word.startswith("http://"))
    return proc, url


def append_rating(data: Path, run: str) -> None:
    """One more rating, as a reviewer's tap appends it."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    record = {**RATING, "run_id": run, "timestamp": stamp,
              "idempotency_key": f"bench-{time.time_ns()}"}
    with open(data / "ratings.jsonl", "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")


def measure(data: Path, run: str, repeat: int) -> dict[str, dict[str, float]]:
    """Each page's first, repeated and after-a-rating times over ``data``."""
    proc, url = start(data)
    try:
        figures = {}
        for page in PAGES:
            first = fetch(url + page.lstrip("/"))
            again = statistics.median(fetch(url + page.lstrip("/")) for _ in range(repeat))
            figures[page] = {"first": first, "again": again}
        version = statistics.median(fetch(url + "api/version") for _ in range(repeat))
        append_rating(data, run)
        figures["/"]["after a rating"] = fetch(url)
        figures["/api/version"] = {"again": version}
        return figures
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def show(name: str, figures: dict[str, dict[str, float]], goal: float) -> None:
    """One table: each page's times, the overview against its goal."""
    print(f"\n{name}: seconds (median of the repeats for 'again')")
    print(f"  {'page':<16}{'first':>10}{'again':>10}{'after a rating':>16}")
    for page, row in figures.items():
        cells = [row.get(k) for k in ("first", "again", "after a rating")]
        text = "".join(f"{c:>10.3f}" if c is not None else f"{'':>10}" for c in cells[:2])
        text += f"{cells[2]:>16.3f}" if cells[2] is not None else ""
        print(f"  {page:<16}{text}")
    again = figures["/"]["again"]
    verdict = "met" if again <= goal else "MISSED"
    print(f"  overview again {again:.3f} s against the goal of {goal:.1f} s: {verdict}; "
          f"{again / figures['/api/version']['again']:.1f}× a request that reads nothing")


def demo_dir(root: Path) -> Path:
    """The demo's data dir (with its panel of ratings) under ``root``."""
    from bot.demo import build_demo
    from evaluation import Store

    store = Store(root / "demo")
    build_demo(store, panel=True)
    return store.root


def log_dir(root: Path, ratings: int) -> tuple[Path, str]:
    """A generated log of ``ratings`` ratings under ``root``, and one of its runs."""
    from analysis.synthetic import write_synthetic
    from evaluation import Store

    store = Store(root / "log")
    made = write_synthetic(store, ratings=ratings)
    return store.root, made.runs[0]


def report(data: Path) -> None:
    """``hilbot report --html`` over ``data``: time and size."""
    target = data / "report.html"
    env = {**os.environ, "HILBOT_DATA_DIR": str(data)}
    begun = time.perf_counter()
    subprocess.run([str(HILBOT), "report", "--html", str(target)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    took = time.perf_counter() - begun
    size = target.stat().st_size
    verdict = "met" if size <= 2 * 1024 * 1024 else "MISSED"
    print(f"\nhilbot report --html on the demo: {took:.2f} s, {size / 1024:.0f} KB "
          f"(goal ≤ 2048 KB: {verdict})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratings", type=int, default=100_000)
    parser.add_argument("--data", type=Path, help="measure this data dir instead of a new log")
    parser.add_argument("--run", help="the run a rating is appended to (with --data)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"bench/dashboard.py · {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC · "
          f"{os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as scratch:
        demo = demo_dir(Path(scratch))
        show("demo (54 ratings)", measure(demo, "demo-panel", args.repeat), GOALS["demo"])
        report(demo)
        if args.data:
            data, run = args.data, args.run or "syn-000-answer"
            name = f"{args.data}"
        else:
            data, run = log_dir(Path(scratch), args.ratings)
            name = f"generated log ({args.ratings:,} ratings)"
        show(name, measure(data, run, args.repeat), GOALS["log"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
