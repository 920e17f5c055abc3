"""What the chat benchmarks share: the data, the bot as a subprocess, percentiles and medians over
rounds."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation import ItemData, Query, QueryEvaluation, RunHeader, SearchResult, Store  # noqa: E402

HILBOT = Path(sys.executable).parent / "hilbot"
RUN = "bench-push"


def make_data(root: Path, items: int) -> None:
    """A search run with enough items for every reviewer's cards (k = 1: each item once)."""
    store = Store(root / "results")
    header = RunHeader(run_id=RUN, kind="search", dimensions=["overall"])
    rows = (
        QueryEvaluation(
            run_id=RUN,
            data=ItemData(
                id=f"q{n:05d}",
                query=Query(query=f"benchmark query {n}", category=f"c{n % 7}"),
                results=[
                    SearchResult(
                        rank=r,
                        path=f"/docs/page-{n}-{r}.md",
                        score=1 - r / 10,
                        snippet=f"snippet {r} of {n}",
                    )
                    for r in range(1, 4)
                ],
            ),
        )
        for n in range(items)
    )
    store.create_run(header, rows)


def start_bot(
    platform: str,
    env: dict[str, str],
    root: Path,
    ready: Callable[[], Any],
    wait: Callable[..., None],
) -> subprocess.Popen:
    """``hilbot serve <platform>`` over ``root``; returns once ``ready()`` (``wait`` is the fake's
    blocking wait)."""
    env = {
        **os.environ,
        **env,
        "HILBOT_DATA_DIR": str(root / "results"),
        "HILBOT_CONFIG": str(root / "hilbot.toml"),
    }
    log = open(root / "bot.log", "w")
    profile = (
        ["-m", "cProfile", "-o", os.environ["PUSH_PROFILE"]]
        if os.environ.get("PUSH_PROFILE")
        else []
    )
    proc = subprocess.Popen(
        [sys.executable, *profile, str(HILBOT), "serve", platform],
        env=env,
        cwd=root,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    wait(lambda: ready() or proc.poll() is not None, timeout=30, what="the bot to start")
    if proc.poll() is not None:
        raise SystemExit(f"the bot exited: {(root / 'bot.log').read_text()}")
    return proc


def stop_bot(proc: subprocess.Popen, timeout: float = 20) -> tuple[int, float]:
    """SIGINT, as Ctrl-C: the exit status (-9: it had to be killed) and the seconds it took."""
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout=timeout), time.monotonic() - start
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return -9, time.monotonic() - start


def pct(values: list[float], pct: int) -> float:
    """The ``pct`` percentile (nearest rank); NaN for no values."""
    return (
        values[min(len(values) - 1, round(pct / 100 * (len(values) - 1)))]
        if values
        else float("nan")
    )


def count_ratings(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(1 for line in path.read_text().splitlines() if '"type":"rating"' in line)


def unique_ratings(path: Path) -> int:
    if not path.exists():
        return 0
    rows = [json.loads(line) for line in path.read_text().splitlines() if '"type":"rating"' in line]
    return len({(r["item_id"], r["reviewer"]["id"]) for r in rows})


def latencies(waits: dict[Any, float], rounds: dict[Any, int]) -> dict[str, Any]:
    """p50 and p99 of every wait, of the first round's and of the later ones'."""
    every = sorted(waits.values())
    first = sorted(v for key, v in waits.items() if rounds[key] == 1)
    later = sorted(v for key, v in waits.items() if rounds[key] > 1)
    return {
        "p50": pct(every, 50),
        "p99": pct(every, 99),
        "first": (pct(first, 50), pct(first, 99)),
        "later": (pct(later, 50), pct(later, 99)),
    }


def median_round(rounds: list[dict]) -> dict:
    """Each figure's median over the rounds (counts from the first round)."""

    def median(key: str) -> float:
        return statistics.median(r[key] for r in rounds)

    def pair(key: str) -> tuple[float, float]:
        return statistics.median(r[key][0] for r in rounds), statistics.median(
            r[key][1] for r in rounds
        )

    return {
        **rounds[0],
        "p50": median("p50"),
        "p99": median("p99"),
        "seconds": median("seconds"),
        "first": pair("first"),
        "later": pair("later"),
    }


def report_taps(
    t: dict,
    rounds: list[dict],
    *,
    reviewers: int,
    cards: int,
    repeat: int,
    what: str,
    answered: str,
) -> None:
    """Part (b) of a chat benchmark's report: waits, the first burst and the later taps, per-round
    p99s."""
    print(
        f"\n(b) {reviewers} reviewers × {cards} {what}s at once: {t['taps']} {what}s, median of "
        f"{repeat} rounds"
    )
    print(
        f"    {what} → {answered}: p50 {t['p50'] * 1000:.0f} ms · p99 {t['p99'] * 1000:.0f} ms "
        f"(target ≤ 200 ms; rounds: {', '.join(str(round(r['p99'] * 1000)) for r in rounds)} ms)"
    )
    print(
        f"      first {what}s (all {reviewers} at the same moment): p50 {t['first'][0] * 1000:.0f} "
        f"ms · p99 {t['first'][1] * 1000:.0f} ms; later {what}s: p50 {t['later'][0] * 1000:.0f} ms "
        f"· p99 {t['later'][1] * 1000:.0f} ms"
    )


def arguments(doc: str) -> Any:
    """``--reviewers 300 --cards 5 --repeat 3``."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=300)
    parser.add_argument("--cards", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    return parser.parse_args()


@contextlib.contextmanager
def harness_without_gc() -> Iterator[None]:
    """No garbage collection in this process (the fake platform and the clicking users) while it
    measures.

    The fake timestamps each answer as it reads it; a collection walking its thousands of stored
    messages (25 ms measured) would be counted as the bot's time. The bot's own process is
    untouched.
    """
    import gc

    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()
