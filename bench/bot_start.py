"""The Telegram bot's start on a long log: how soon it answers its first tap, and its memory.

A log of ``--ratings`` ratings is written, each after the card delivery a chat bot logs for it
(``--ratings 500000``: 1,000,000 events, 20 runs of 500 items, 100 Telegram reviewers), plus one
card still open: the last reviewer's, on the last run. The first 19 runs are finished (they have
their summary); the last one is still being evaluated, so the restarted bot also deals its next
items into every reviewer's chat, as it does after every restart. ``hilbot serve telegram`` then
starts as a subprocess against the local fake Bot API server, and as soon as it has registered its
commands that reviewer taps "good" on the open card, sent before the restart. Measured per
start, from the process's start:

* ``ready``: the bot polls for updates (its commands registered);
* ``first tap``: the tap on the old card answered (the rating is in the log before);
* ``RSS``: the bot's peak resident memory (``VmHWM``) after the tap.

Each start is a fresh process over the same data: the first builds the columnar index (``cold``),
the next ``--repeat`` find it (``warm``, their median reported), and the reference path
(``HILBOT_NO_INDEX=1``: the whole log folded at start) once, beside them, unless
``--skip-reference``. Goal: the first tap within 2 s of starting, and memory that does not grow
with finished runs. Then ``hilbot review RUN`` in the terminal with its input closed (it shows the
first card, saves and exits), warm and on the reference path: its wall time. Then ``hilbot serve
slack`` in Socket Mode against the local fake Slack: a reviewer new to the run sends ``/hilbot
review RUN`` and clicks "good" on the first card; connected, card posted and click acknowledged,
from the process's start.

Usage: .venv/bin/python bench/bot_start.py [--ratings 500000] [--repeat 3] [--skip-reference]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Iterator

from _chatbench import start_bot, stop_bot

from bot.chat.sessions import run_key
from evaluation import ItemData, Query, QueryEvaluation, RunHeader, RunSummary, Store
from tests.fakes.telegram_api import FakeTelegram, Limits

RUNS, ITEMS, REVIEWERS = 20, 500, 100
FIRST = 10001
"""The first reviewer's Telegram id."""
SLACK_USER = "U0SLACKREV"
"""The Slack reviewer (new to the run: ``/hilbot review RUN``, then "good" on the first card)."""
_CARD = (
    '{"type":"delivery","v":1,"run_id":"RUN","item_id":"ITEM","dimension":"overall",'
    '"reviewer":{"platform":"telegram","id":"WHO","name":"RWHO"},"channel":"telegram",'
    '"kind":"card","chat_id":"WHO","message_id":"MSG","group":false,'
    '"timestamp":"2026-06-01T10:00:00Z"}\n'
)
_RATING = (
    '{"type":"rating","v":1,"run_id":"RUN","item_id":"ITEM","dimension":"overall",'
    '"reviewer":{"platform":"telegram","id":"WHO","name":"RWHO"},"channel":"telegram",'
    '"idempotency_key":"KEY","judgment":"good","score":1.0,"concerns":[],"action":"r:good",'
    '"timestamp":"2026-06-01T10:00:05Z"}\n'
)


MESSAGE = 1
"""The open card's message id: the first message of its chat (see :func:`one_start`)."""


def make_data(root: Path, ratings: int) -> tuple[str, int, str]:
    """Runs, a log and a config; returns the open card's (run, reviewer, item)."""
    store = Store(root / "results")
    for r in range(RUNS):
        header = RunHeader(run_id=f"run-{r:02d}", kind="search", dimensions=["overall"])
        rows = (
            QueryEvaluation(
                run_id=header.run_id,
                data=ItemData(id=f"q{n:04d}", query=Query(query=f"query {n} of run {r}")),
            )
            for n in range(ITEMS)
        )
        finished = RunSummary(run_id=header.run_id, item_count=ITEMS) if r < RUNS - 1 else None
        store.create_run(header, rows, finished)
    per_run = ratings // RUNS
    per_reviewer = max(1, per_run // REVIEWERS)
    message = 0
    with open(store.ratings.path, "w") as log:
        for r in range(RUNS):
            for who in range(FIRST, FIRST + REVIEWERS):
                for n in range(per_reviewer):
                    item = f"q{(n + who) % ITEMS:04d}"
                    message += 1
                    fill = {"RUN": f"run-{r:02d}", "ITEM": item, "WHO": str(who)}
                    log.write(_filled(_CARD, fill | {"MSG": str(message)}))
                    log.write(_filled(_RATING, fill | {"KEY": f"tg:{r}:{who}:{n}"}))
        last, who = f"run-{RUNS - 1:02d}", FIRST + REVIEWERS - 1
        open_item = f"q{(per_reviewer + who) % ITEMS:04d}"
        log.write(
            _filled(
                _CARD, {"RUN": last, "ITEM": open_item, "WHO": str(who)} | {"MSG": str(MESSAGE)}
            )
        )
    reviewers = list(range(FIRST, FIRST + REVIEWERS))
    (root / "hilbot.toml").write_text(
        f"[telegram]\nreviewers = {reviewers}\npoll_timeout_s = 1\n"
        f'[slack]\nreviewers = ["{SLACK_USER}"]\n'
    )
    return last, who, open_item


def _filled(template: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        template = template.replace(name, value)
    return template


def one_start(root: Path, run: str, who: int, item: str, env: dict[str, str]) -> dict:
    """Start the bot, tap the open card; the times from the process's start and its peak RSS. The
    log is put back as it was afterwards (its size and modification time), so each start finds
    the same log and the same index."""
    with _log_kept(root):
        return _start_and_tap(root, run, who, item, env)


@contextlib.contextmanager
def _log_kept(root: Path) -> Iterator[None]:
    """Put the log back as it was (its size and modification time) after a start."""
    log = root / "results" / "ratings.jsonl"
    before = log.stat()
    try:
        yield
    finally:
        os.truncate(log, before.st_size)
        os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))


def slack_start(root: Path, run: str, env: dict[str, str]) -> dict:
    """``hilbot serve slack`` (Socket Mode): a reviewer new to the run runs ``/hilbot review RUN``
    and clicks "good" on the first card; from the process's start: connected, card posted, click
    acknowledged (the rating is in the log before)."""
    from push_slack import cards as slack_cards

    from tests.fakes.slack_api import FakeSlack

    with _log_kept(root), FakeSlack() as fake:
        fake.user(SLACK_USER, name="Reviewer")
        started = time.monotonic()
        proc = start_bot(
            "slack", {**fake.env(), **env}, root, lambda: fake.connections >= 1, _wait(fake)
        )
        ready = time.monotonic() - started
        fake.slash(SLACK_USER, f"review {run}")
        fake.wait(lambda: slack_cards(fake, SLACK_USER), timeout=900, what="the first card")
        card = time.monotonic() - started
        click = fake.click_button(SLACK_USER, SLACK_USER, slack_cards(fake, SLACK_USER)[-1], "good")
        click.wait_acked_sync(timeout=60)
        rss = _peak_mb(proc.pid)
        stop_bot(proc)
        assert click.acked_at is not None
        return {"ready": ready, "card": card, "first": click.acked_at - started, "rss": rss}


def _start_and_tap(root: Path, run: str, who: int, item: str, env: dict[str, str]) -> dict:
    with FakeTelegram(limits=Limits()) as fake:
        for user in range(FIRST, FIRST + REVIEWERS):
            fake.user(user, first_name=f"R{user}")
        assert fake.sent_before(who, "the open card, sent before the restart") == MESSAGE
        started = time.monotonic()
        proc = start_bot(
            "telegram", {**fake.env(), **env}, root, lambda: fake.commands, _wait(fake)
        )
        ready = time.monotonic() - started
        store = Store(root / "results")
        index = store.load_run(run).index(item)
        query = fake.tap(who, who, MESSAGE, f"r0|{run_key(run)}|{index}|0")
        fake.wait(lambda: query in fake.answers, timeout=900, what="the tap's answer")
        first = fake.answers[query]["at"] - started
        rss = _peak_mb(proc.pid)
        stop_bot(proc)
        return {"ready": ready, "first": first, "rss": rss, "answer": fake.answers[query]}


def _wait(fake: FakeTelegram):
    def wait(check, timeout: float, what: str) -> None:
        fake.wait(check, timeout=900, what=what)  # the reference path takes minutes

    return wait


def _peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratings", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-reference", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        began = time.monotonic()
        run, who, item = make_data(root, args.ratings)
        log = root / "results" / "ratings.jsonl"
        lines = sum(1 for _ in open(log, "rb"))
        print(
            f"log: {lines:,} events ({log.stat().st_size / 1e6:.0f} MB), {RUNS} runs × {ITEMS} "
            f"items, {REVIEWERS} reviewers; written in {time.monotonic() - began:.1f} s"
        )
        rows = [("cold (builds the index)", one_start(root, run, who, item, {}))]
        warm = [one_start(root, run, who, item, {}) for _ in range(args.repeat)]
        rows.append((f"warm (median of {args.repeat})", _median(warm)))
        if not args.skip_reference:
            rows.append(
                ("reference (HILBOT_NO_INDEX=1)", one_start(root, run, who, item, _NO_INDEX))
            )
        print(f"\n{'start':<32} {'ready':>8} {'first tap':>10} {'peak RSS':>9}  the tap's answer")
        for name, row in rows:
            print(
                f"{name:<32} {row['ready']:>7.2f}s {row['first']:>9.2f}s {row['rss']:>7.0f}MB  "
                f"{row['answer'].get('text')!r}"
            )
        if not args.skip_reference:
            ref, fast = rows[-1][1], rows[1][1]
            print(
                f"\nfirst tap: reference / warm = {ref['first'] / fast['first']:.0f}×; peak RSS "
                f"{ref['rss'] / fast['rss']:.1f}× (goal: first tap ≤ 2 s: "
                f"{'met' if fast['first'] <= 2 else 'missed'})"
            )
        _terminal(root, run, args)
        _slack(root, run, args)


_NO_INDEX = {"HILBOT_NO_INDEX": "1"}


def _slack(root: Path, run: str, args: argparse.Namespace) -> None:
    rows = [("warm", [slack_start(root, run, {}) for _ in range(args.repeat)])]
    if not args.skip_reference:
        rows.append(("reference (HILBOT_NO_INDEX=1)", [slack_start(root, run, _NO_INDEX)]))
    print(f"\nhilbot serve slack (Socket Mode): /hilbot review {run}, then a click on the card")
    print(f"  {'start':<30} {'connected':>9} {'card':>7} {'click acked':>11} {'peak RSS':>9}")
    for name, runs in rows:
        median = {k: statistics.median(r[k] for r in runs) for k in ("ready", "card", "first")}
        print(
            f"  {name:<30} {median['ready']:>8.2f}s {median['card']:>6.2f}s "
            f"{median['first']:>10.2f}s {statistics.median(r['rss'] for r in runs):>7.0f}MB"
        )


def _terminal(root: Path, run: str, args: argparse.Namespace) -> None:
    """``hilbot review RUN`` in the terminal, input closed: its start to the first card, and its
    exit (the session saved), warm and on the reference path."""
    import subprocess
    import sys

    from _chatbench import HILBOT

    def once(env: dict[str, str]) -> tuple[float, float, str]:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, str(HILBOT), "review", run],
            env={**os.environ, **env, "HILBOT_DATA_DIR": str(root / "results")},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            cwd=root,
        )
        seconds = time.monotonic() - started
        first = next((line for line in done.stdout.splitlines() if "[1/" in line), "no card")
        return seconds, done.returncode, first.strip()

    rows = [("warm", [once({}) for _ in range(args.repeat)])]
    if not args.skip_reference:
        rows.append(("reference (HILBOT_NO_INDEX=1)", [once(_NO_INDEX)]))
    print(f"\nhilbot review {run} (terminal, input closed: start, first card, exit)")
    for name, runs in rows:
        seconds = statistics.median(r[0] for r in runs)
        print(f"  {name:<30} {seconds:>6.2f}s  exit {runs[0][1]}  {runs[0][2][:60]!r}")


def _median(rows: list[dict]) -> dict:
    return {key: statistics.median(r[key] for r in rows) for key in ("ready", "first", "rss")} | {
        "answer": rows[-1]["answer"]
    }


if __name__ == "__main__":
    main()
