"""Pushing cards to 300 reviewers and taking their taps, within Telegram's flood limits.

``hilbot serve telegram`` runs as a subprocess against the local fake Bot API server, which
enforces 30 messages/s overall and 1/s per chat (sliding windows, 429 with retry_after).

(a) An admin sends ``/push``: every reviewer's first card must arrive within 1.05× of the time
    those limits allow (300 cards at 30/s: 10 s), none lost or sent twice, no 429 left unhandled.
    Repeated (fresh bot, fresh data) and reported as the median.
(b) The 300 reviewers then tap through 5 cards each, all at once: the time from a tap to its
    answered callback (p50, p99; target p99 ≤ 200 ms), and all 1,500 ratings in the log. Every
    round has its taps; the figures are the medians over the rounds.

Usage: .venv/bin/python bench/push.py [--reviewers 300] [--cards 5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation import ItemData, Query, QueryEvaluation, RunHeader, SearchResult, Store  # noqa: E402
from tests.fakes.telegram_api import FakeTelegram, Limits  # noqa: E402

HILBOT = Path(sys.executable).parent / "hilbot"
RUN = "bench-push"
ADMIN = 9000
FIRST_REVIEWER = 10001


def make_data(root: Path, items: int) -> None:
    """A search run with enough items for every reviewer's cards (k = 1: each item once)."""
    store = Store(root / "results")
    header = RunHeader(run_id=RUN, kind="search", dimensions=["overall"])
    rows = (QueryEvaluation(run_id=RUN, data=ItemData(
        id=f"q{n:05d}", query=Query(query=f"benchmark query {n}", category=f"c{n % 7}"),
        results=[SearchResult(rank=r, path=f"/docs/page-{n}-{r}.md", score=1 - r / 10, snippet=f"snippet {r} of {n}")
                 for r in range(1, 4)])) for n in range(items))
    store.create_run(header, rows)


def write_config(root: Path, reviewers: list[int]) -> Path:
    path = root / "hilbot.toml"
    path.write_text(f"[telegram]\nreviewers = {reviewers}\nadmins = [{ADMIN}]\npoll_timeout_s = 1\n")
    return path


def start_bot(fake: FakeTelegram, root: Path) -> subprocess.Popen:
    env = {**os.environ, **fake.env(), "HILBOT_DATA_DIR": str(root / "results"), "HILBOT_CONFIG": str(root / "hilbot.toml")}
    log = open(root / "bot.log", "w")
    profile = ["-m", "cProfile", "-o", os.environ["PUSH_PROFILE"]] if os.environ.get("PUSH_PROFILE") else []
    proc = subprocess.Popen([sys.executable, *profile, str(HILBOT), "serve", "telegram"], env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT)
    fake.wait(lambda: fake.commands or proc.poll() is not None, timeout=30, what="the bot to start")
    if proc.poll() is not None:
        raise SystemExit(f"the bot exited: {(root / 'bot.log').read_text()}")
    return proc


def stop_bot(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def cards(fake: FakeTelegram, chat: int) -> list[int]:
    """Message ids of the bot's rating cards in a chat (messages with a keyboard)."""
    return fake.card_ids(chat)


def push_phase(fake: FakeTelegram, reviewers: list[int]) -> dict:
    """Admin /push; the time until every reviewer has a first card."""
    start = time.monotonic()
    fake.send_text(ADMIN, f"/push {RUN}")
    fake.wait(lambda: all(cards(fake, r) for r in reviewers), timeout=120, what="every first card")
    firsts = [c.at for c in fake.calls_to("sendMessage") if c.status == 200 and c.params.get("chat_id") in set(reviewers)]
    counts = [len(cards(fake, r)) for r in reviewers]
    return {"seconds": max(firsts) - start, "lost": counts.count(0), "duplicated": sum(n > 1 for n in counts),
            "flood_429": len(fake.rejected)}


def tap_phase(fake: FakeTelegram, reviewers: list[int], per: int, ratings_path: Path) -> dict:
    """Every reviewer taps their newest card as soon as it arrives, ``per`` times."""
    tapped: dict[int, set[int]] = {r: set() for r in reviewers}
    queries: list[str] = []
    rounds: dict[str, int] = {}
    start = time.monotonic()
    while len(queries) < len(reviewers) * per:
        for reviewer in reviewers:
            shown = cards(fake, reviewer)
            if len(tapped[reviewer]) < per and shown and shown[-1] not in tapped[reviewer]:
                tapped[reviewer].add(shown[-1])
                queries.append(fake.tap_button(reviewer, reviewer, shown[-1], "good"))
                rounds[queries[-1]] = len(tapped[reviewer])
        time.sleep(0.02)
        if time.monotonic() - start > 600:
            raise SystemExit("taps did not finish in 10 minutes")
    fake.wait(lambda: all(q in fake.answers for q in queries), timeout=60, what="every answer")
    fake.wait(lambda: count_ratings(ratings_path) >= len(queries), timeout=60, what="every rating")
    latency = {q: fake.answers[q]["at"] - fake.tapped_at[q] for q in queries}
    latencies = sorted(latency.values())
    first = sorted(v for q, v in latency.items() if rounds[q] == 1)
    later = sorted(v for q, v in latency.items() if rounds[q] > 1)
    return {"taps": len(queries), "seconds": time.monotonic() - start, "p50": _pct(latencies, 50), "p99": _pct(latencies, 99),
            "first": (_pct(first, 50), _pct(first, 99)), "later": (_pct(later, 50), _pct(later, 99)),
            "ratings": count_ratings(ratings_path), "unique": unique_ratings(ratings_path)}


def _pct(values: list[float], pct: int) -> float:
    return values[min(len(values) - 1, round(pct / 100 * (len(values) - 1)))]


def count_ratings(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(1 for line in path.read_text().splitlines() if '"type":"rating"' in line)


def unique_ratings(path: Path) -> int:
    rows = [json.loads(line) for line in path.read_text().splitlines() if '"type":"rating"' in line]
    return len({(r["item_id"], r["reviewer"]["id"]) for r in rows})


def one_round(n_reviewers: int, per: int, taps: bool) -> tuple[dict, dict | None]:
    reviewers = list(range(FIRST_REVIEWER, FIRST_REVIEWER + n_reviewers))
    with tempfile.TemporaryDirectory() as tmp, FakeTelegram(limits=Limits()) as fake:
        root = Path(tmp)
        make_data(root, n_reviewers * (per + 2))
        write_config(root, reviewers)
        fake.user(ADMIN, first_name="Admin")
        for r in reviewers:
            fake.user(r, first_name=f"R{r}")
        proc = start_bot(fake, root)
        try:
            pushed = push_phase(fake, reviewers)
            tapped = tap_phase(fake, reviewers, per, root / "results" / "ratings.jsonl") if taps else None
            pushed["flood_429_total"] = len(fake.rejected)
        finally:
            stop_bot(proc)
        return pushed, tapped


def _median_round(rounds: list[dict]) -> dict:
    """Each figure's median over the rounds (counts from the first round)."""
    def median(key: str) -> float:
        return statistics.median(r[key] for r in rounds)

    def pair(key: str) -> tuple[float, float]:
        return statistics.median(r[key][0] for r in rounds), statistics.median(r[key][1] for r in rounds)

    return {**rounds[0], "p50": median("p50"), "p99": median("p99"), "seconds": median("seconds"),
            "first": pair("first"), "later": pair("later")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=300)
    parser.add_argument("--cards", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ideal = (args.reviewers - 1) / 30 if args.reviewers > 30 else 0.0
    pushes, rounds = [], []
    for n in range(args.repeat):
        pushed, taps = one_round(args.reviewers, args.cards, taps=True)
        pushes.append(pushed)
        rounds.append(taps)
        print(f"  round {n + 1}: push {pushed['seconds']:.2f} s, lost {pushed['lost']}, duplicated {pushed['duplicated']}, "
              f"flood 429s {pushed['flood_429']}; taps p50 {taps['p50'] * 1000:.0f} ms, p99 {taps['p99'] * 1000:.0f} ms, "
              f"last after {taps['seconds']:.1f} s, ratings {taps['ratings']}", flush=True)
    median = statistics.median(p["seconds"] for p in pushes)
    print(f"\n(a) /push to {args.reviewers} reviewers (30 msg/s overall, 1/s per chat), median of {args.repeat}")
    print(f"    last first card after {median:.2f} s · limits allow {ideal:.2f} s · ratio {median / ideal:.3f}× (target ≤ 1.05×)")
    print(f"    lost {sum(p['lost'] for p in pushes)} · duplicated {sum(p['duplicated'] for p in pushes)} · "
          f"429s from the server {sum(p['flood_429_total'] for p in pushes)} (each retried; none lost)")
    t = _median_round(rounds)
    ideal_taps = 2 * (args.cards - 1) * args.reviewers / 30  # before the last round: an edit and a next card per tap
    print(f"\n(b) {args.reviewers} reviewers × {args.cards} taps at once: {t['taps']} taps, median of {args.repeat} rounds")
    print(f"    tap → answered callback: p50 {t['p50'] * 1000:.0f} ms · p99 {t['p99'] * 1000:.0f} ms (target ≤ 200 ms; "
          f"rounds: {', '.join(str(round(r['p99'] * 1000)) for r in rounds)} ms)")
    print(f"      first taps (all {args.reviewers} at the same moment): p50 {t['first'][0] * 1000:.0f} ms · "
          f"p99 {t['first'][1] * 1000:.0f} ms; later taps: p50 {t['later'][0] * 1000:.0f} ms · p99 {t['later'][1] * 1000:.0f} ms")
    print(f"    last tap after {t['seconds']:.1f} s · limits allow {ideal_taps:.1f} s (each earlier tap costs an edit and "
          f"the next card, 30 messages/s) · ratio {t['seconds'] / ideal_taps:.2f}×")
    print(f"    ratings in the log: {', '.join(str(r['ratings']) for r in rounds)} "
          f"({', '.join(str(r['unique']) for r in rounds)} distinct item × reviewer)")


if __name__ == "__main__":
    main()
