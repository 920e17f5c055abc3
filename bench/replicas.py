"""Replicas on PostgreSQL: what the shared store costs a tap, and the events it stores a second.

Starts a temporary PostgreSQL server of its own (``tests/pgserver.py``: the machine's binaries,
fsync on, 127.0.0.1) and prints, in one run:

(a) Taps: 200 reviewers each start a review (``/review``) and, once every one of them has a first
    card, all tap through their cards at once, each tapping every card as soon as it comes
    (3 cards each: 600 taps, the first 200 in the same instant). ``hilbot serve telegram`` runs in
    webhook mode against the local fake Bot API, which POSTs each update to the bot (to one of
    the two replicas at random, when there are two: a load balancer). Three setups, the same
    load:
      - ``JSONL``: one replica, the data directory's JSONL files (the default store);
      - ``PG ×1``: one replica, ``HILBOT_STORE_URL`` set (its data directory is the read copy);
      - ``PG ×2``: two replicas on the same database, each with a data directory of its own.
    A tap's time is from the moment the fake makes the update to its answerCallbackQuery. The
    bot keeps to Telegram's flood limits, 30 messages/s in all (each of two replicas 15/s, as
    two replicas of one bot must be set) and 1/s per chat, as in ``bench/push.py``: each tap
    costs an edit and the next card, so after the opening burst the taps come at the pace the
    limits allow. Each setup runs ``--repeat`` rounds (a fresh bot, fresh data, a fresh
    database), the setups taking turns so that drift hits them alike; the figures are the
    medians of the rounds' own p50 and p99.
(b) Durable events/s at 200 concurrent writers: 200 asyncio tasks each append rating records one
    after another, awaiting each append (resolved once the record is durable): the JSONL log
    (``EventLog.aappend``: appends that arrive together share one fsync) against the PostgreSQL
    backend (``Store(url=...).ratings.aappend``: appends that arrive together share one
    transaction, committed before they resolve). Medians of ``--repeat`` runs.

Usage: .venv/bin/python bench/replicas.py [--reviewers 200] [--cards 3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _chatbench import HILBOT, harness_without_gc, pct, stop_bot

from evaluation import ItemData, Query, QueryEvaluation, RunHeader, SearchResult, Store
from evaluation.log import EventLog
from tests.fakes.telegram_api import FakeTelegram
from tests.pgserver import PostgresServer, accepting, free_port

RUN = "bench-replicas"
FIRST_REVIEWER = 20001
SETUPS = ("JSONL", "PG ×1", "PG ×2")
WRITERS, PER_WRITER = 200, 25


# ------------------------------------------------------------------------------------ the data


def seed(store: Store, items: int) -> None:
    """A search run with an item for every card (k = 1: each item once)."""
    header = RunHeader(run_id=RUN, kind="search", dimensions=["overall"])
    rows = (
        QueryEvaluation(
            run_id=RUN,
            data=ItemData(
                id=f"q{n:05d}",
                query=Query(query=f"replica benchmark query {n}"),
                results=[
                    SearchResult(rank=r, path=f"/docs/{n}-{r}.md", score=1 - r / 10)
                    for r in range(1, 4)
                ],
            ),
        )
        for n in range(items)
    )
    store.create_run(header, rows)
    store.close()


# ------------------------------------------------------------------------------------ (a) taps


def start_replica(
    root: Path, name: str, reviewers: list[int], env: dict[str, str], overall: float
) -> Any:
    """``hilbot serve telegram`` in webhook mode with a data directory of its own, sending at most
    ``overall`` messages a second; its process and port."""
    home = root / name
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    (home / "hilbot.toml").write_text(
        f'[telegram]\nreviewers = {reviewers}\nadmins = [900]\nmode = "webhook"\n'
        f'webhook_url = "https://hilbot-lb.invalid/hook"\nport = {port}\n'
        f"[telegram.limits]\noverall_per_s = {overall:g}\nchat_per_s = 1\n"
    )
    full = {
        **os.environ,
        **env,
        "HILBOT_DATA_DIR": str(home / "results"),
        "HILBOT_CONFIG": str(home / "hilbot.toml"),
    }
    with open(home / "bot.log", "w") as log:
        proc = subprocess.Popen(
            [sys.executable, str(HILBOT), "serve", "telegram"],
            env=full,
            cwd=home,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    return proc, port


def tap_round(setup: str, server: PostgresServer, reviewers: int, cards: int) -> dict:
    """One round of a setup: its replicas started, every reviewer's first card, then the taps."""
    ids = list(range(FIRST_REVIEWER, FIRST_REVIEWER + reviewers))
    items = reviewers * (cards + 2)
    with tempfile.TemporaryDirectory(prefix="hilbot-replicas-") as tmp:
        root = Path(tmp)
        env: dict[str, str] = {"TELEGRAM_WEBHOOK_SECRET": "bench-secret"}
        database = None
        if setup == "JSONL":
            seed(Store(root / "a" / "results"), items)
        else:
            database = f"bench_{uuid.uuid4().hex[:10]}"
            env["HILBOT_STORE_URL"] = server.create_database(database)
            seed(Store(root / "seed", url=env["HILBOT_STORE_URL"]), items)
        names = ["a", "b"] if setup == "PG ×2" else ["a"]
        with FakeTelegram(limits=None) as fake:
            for uid in ids:
                fake.user(uid, first_name=f"R{uid}")
            env |= fake.env()
            overall = 30 / len(names)
            procs = [start_replica(root, name, ids, env, overall) for name in names]
            fake.webhook_targets.extend(f"http://127.0.0.1:{port}/hook" for _, port in procs)
            try:
                fake.wait(
                    lambda: (
                        len(fake.calls_to("setWebhook")) == len(procs)
                        and all(accepting(port) for _, port in procs)
                    ),
                    timeout=60,
                    what="the replicas to listen",
                )
                for uid in ids:
                    fake.send_text(uid, f"/review {RUN}")
                fake.wait(
                    lambda: all(fake.card_ids(uid) for uid in ids),
                    timeout=120,
                    what="every first card",
                )
                with harness_without_gc():
                    result = taps(fake, ids, cards)
            finally:
                codes = [stop_bot(proc)[0] for proc, _ in procs]
        if database is not None:
            server.drop_database(database)
    return result | {"exits": codes}


def taps(fake: FakeTelegram, ids: list[int], per: int) -> dict:
    """Every reviewer taps each card as soon as it comes, ``per`` times (two replicas may deal
    a reviewer two cards at once: both are tapped, as a person would)."""
    tapped: dict[int, set[int]] = {uid: set() for uid in ids}
    queries: list[str] = []
    start = time.monotonic()
    while len(queries) < len(ids) * per:
        for uid in ids:
            for card in fake.card_ids(uid):
                if len(tapped[uid]) < per and card not in tapped[uid]:
                    tapped[uid].add(card)
                    queries.append(fake.tap_button(uid, uid, card, "good"))
        time.sleep(0.01)
        if time.monotonic() - start > 300:
            raise SystemExit(f"only {len(queries)} taps in 5 minutes")
    fake.wait(lambda: all(q in fake.answers for q in queries), timeout=60, what="every answer")
    waits = sorted(fake.answers[q]["at"] - fake.tapped_at[q] for q in queries)
    return {
        "taps": len(queries),
        "p50": pct(waits, 50),
        "p99": pct(waits, 99),
        "seconds": time.monotonic() - start,
    }


# ------------------------------------------------------------------------------------ (b) writers


def record(writer: int, n: int, run: str) -> dict:
    """A rating as the bot stores it (about 400 bytes), with a key of its own."""
    return {
        "type": "rating",
        "v": 1,
        "run_id": run,
        "item_id": f"q{n}",
        "dimension": "overall",
        "reviewer": {"platform": "telegram", "id": str(writer), "name": "Reviewer"},
        "channel": "telegram",
        "idempotency_key": f"telegram:{run}:{writer}:{n}",
        "timestamp": "2026-11-26T10:00:00+00:00",
        "judgment": "okay",
        "score": 0.7,
        "concerns": ["bad_ranking"],
        "note": "The top result answers a different question; the second one is right but buried.",
    }


async def write_all(log: EventLog, run: str) -> float:
    """WRITERS tasks appending PER_WRITER records each; records per second."""

    async def writer(w: int) -> None:
        for n in range(PER_WRITER):
            await log.aappend(record(w, n, run))

    started = time.perf_counter()
    await asyncio.gather(*(writer(w) for w in range(WRITERS)))
    return WRITERS * PER_WRITER / (time.perf_counter() - started)


def writers_round(server: PostgresServer, tmp: Path) -> dict[str, float]:
    run = uuid.uuid4().hex[:8]
    jsonl = EventLog(tmp / f"{run}.jsonl")
    files = asyncio.run(write_all(jsonl, run))
    jsonl.close()
    assert sum(1 for _ in open(tmp / f"{run}.jsonl", "rb")) == WRITERS * PER_WRITER
    database = f"bench_{run}"
    store = Store(tmp / f"copy-{run}", url=server.create_database(database))
    try:
        shared = asyncio.run(write_all(store.ratings, run))
        stored = sum(1 for _ in store.human_events())
        assert stored == WRITERS * PER_WRITER, stored
    finally:
        store.close()
        server.drop_database(database)
    return {"JSONL": files, "PG": shared}


# ------------------------------------------------------------------------------------ the report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=200)
    parser.add_argument("--cards", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with PostgresServer() as server:
        os.environ["PGPASSWORD"] = server.password  # for the replicas and this process alike
        version = subprocess.run(
            [str(server.bindir / "postgres"), "--version"], capture_output=True, text=True
        ).stdout.strip()
        print(
            f"# {cpus} CPUs, python {sys.version.split()[0]}, {version} (fsync on), "
            f"{time.strftime('%Y-%m-%d')}"
        )
        rounds: dict[str, list[dict]] = {setup: [] for setup in SETUPS}
        for n in range(args.repeat):
            for setup in SETUPS:
                result = tap_round(setup, server, args.reviewers, args.cards)
                rounds[setup].append(result)
                print(
                    f"  round {n + 1} {setup:<6} {result['taps']} taps: p50 "
                    f"{result['p50'] * 1000:.0f} ms, p99 {result['p99'] * 1000:.0f} ms, last "
                    f"after {result['seconds']:.1f} s; exit {result['exits']}",
                    flush=True,
                )
        tmp = Path(tempfile.mkdtemp(prefix="hilbot-replicas-writers-"))
        try:
            writes = []
            for _ in range(args.repeat):
                writes.append(writers_round(server, tmp))
                print(
                    f"  writers: JSONL {writes[-1]['JSONL']:,.0f}/s, PG {writes[-1]['PG']:,.0f}/s",
                    flush=True,
                )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    median = {
        setup: {key: statistics.median(r[key] for r in rs) for key in ("p50", "p99", "seconds")}
        for setup, rs in rounds.items()
    }
    base = median["JSONL"]["p99"]
    print(
        f"\n(a) {args.reviewers} reviewers × {args.cards} taps at once (webhook mode, 30 "
        f"messages/s in all, 1/s per chat), tap → answered callback, median of {args.repeat} "
        "rounds"
    )
    print(
        f"    {'setup':<8} {'p50 ms':>7} {'p99 ms':>7} {'× JSONL p99':>12}  last tap  rounds' p99"
    )
    for setup in SETUPS:
        m = median[setup]
        each = ", ".join(f"{r['p99'] * 1000:.0f}" for r in rounds[setup])
        print(
            f"    {setup:<8} {m['p50'] * 1000:>7.0f} {m['p99'] * 1000:>7.0f} "
            f"{m['p99'] / base:>11.2f}×  {m['seconds']:>6.1f} s  {each} ms"
        )
    files = statistics.median(w["JSONL"] for w in writes)
    shared = statistics.median(w["PG"] for w in writes)
    print(
        f"\n(b) durable events/s, {WRITERS} writers × {PER_WRITER} appends, "
        f"median of {args.repeat}"
    )
    print(f"    JSONL group commit  {files:>9,.0f}/s")
    print(f"    PostgreSQL          {shared:>9,.0f}/s   PG/JSONL {shared / files:.2f}×")
    print(
        "\n"
        + json.dumps(
            {
                "p99_ms": {s: round(m["p99"] * 1000) for s, m in median.items()},
                "pg1_over_jsonl": round(median["PG ×1"]["p99"] / base, 2),
                "pg2_over_jsonl": round(median["PG ×2"]["p99"] / base, 2),
                "events_per_s": {"JSONL": round(files), "PG": round(shared)},
            },
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
