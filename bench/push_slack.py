"""Pushing cards to 300 reviewers on Slack and taking their clicks, within Slack's posting limits.

``hilbot serve slack`` runs as a subprocess in Socket Mode against the local fake Slack, which
enforces 10 new messages/s across the workspace and 1/s per channel (sliding windows, 429 with
Retry-After); the bot keeps to the same limits on its side (``[slack.limits]``).

(a) An admin sends ``/hilbot push``: every reviewer's first card must arrive within 1.1× of the time
    those limits allow (300 cards at 10/s: 30 s), none lost or sent twice, no 429 left unhandled.
    Repeated (fresh bot, fresh data) and reported as the median.
(b) The 300 reviewers then click through 5 cards each, all at once: the time from a click's envelope
    to its ack (p50, p99; Slack wants the ack within 3 s, the target is p99 ≤ 200 ms), and all 1,500
    ratings in the log. Every round has its clicks; the figures are the medians over the rounds.

While it measures, this process (the fake platform and the users) runs without garbage collection,
so that a collection here is not counted as the bot's time.

Usage: .venv/bin/python bench/push_slack.py [--reviewers 300] [--cards 5] [--repeat 3]
"""

from __future__ import annotations

import contextlib
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from _chatbench import (
    RUN,
    arguments,
    count_ratings,
    harness_without_gc,
    latencies,
    make_data,
    median_round,
    report_taps,
    start_bot,
    stop_bot,
    unique_ratings,
)

from tests.fakes.slack_api import FakeSlack, SlackLimits

ADMIN = "U0ADMIN"
FIRST_REVIEWER = 10001
OVERALL_PER_S = 10
STOP_GRACE_S = 5


def write_config(root: Path, reviewers: list[str]) -> Path:
    path = root / "hilbot.toml"
    path.write_text(
        f"[slack]\nreviewers = {json.dumps(reviewers)}\nadmins = {json.dumps([ADMIN])}\n"
        f"[slack.limits]\nchannel_per_s = 1\noverall_per_s = {OVERALL_PER_S}\n"
    )
    return path


def has_buttons(blocks: object) -> bool:
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    return any(block.get("type") == "actions" for block in blocks or ())


def cards(fake: FakeSlack, reviewer: str) -> list[str]:
    """Timestamps of the bot's rating cards in a reviewer's DM (messages with an actions block)."""
    return [m["ts"] for m in fake.messages(reviewer) if has_buttons(m.get("blocks"))]


class Posts:
    """The bot's cards as its chat.postMessage calls land, per reviewer (cheap: no message is
    copied, so that watching 300 DMs does not hold up the fake's server thread)."""

    def __init__(self, fake: FakeSlack, reviewers: list[str]):
        self.fake, self.done = fake, 0
        self.reviewer = {fake.dm(r): r for r in reviewers} | {r: r for r in reviewers}
        self.count: Counter[str] = Counter()
        self.first: dict[str, float] = {}

    def update(self) -> Counter[str]:
        """Cards posted so far per reviewer (calls still being answered are taken up next time)."""
        calls = self.fake.calls_to("chat.postMessage")
        while self.done < len(calls) and calls[self.done].status is not None:
            call, self.done = calls[self.done], self.done + 1
            reviewer = self.reviewer.get(str(call.params.get("channel")))
            if reviewer and call.status == 200 and has_buttons(call.params.get("blocks")):
                self.count[reviewer] += 1
                self.first.setdefault(reviewer, call.at)
        return self.count


def push_phase(fake: FakeSlack, reviewers: list[str]) -> dict:
    """Admin /hilbot push; the time until every reviewer has a first card."""
    posts = Posts(fake, reviewers)
    start = time.monotonic()
    fake.slash(ADMIN, f"push {RUN}")
    fake.wait(lambda: len(posts.update()) == len(reviewers), timeout=120, what="every first card")
    counts = [len(cards(fake, r)) for r in reviewers]
    return {
        "seconds": max(posts.first.values()) - start,
        "lost": counts.count(0),
        "duplicated": sum(n > 1 for n in counts),
        "flood_429": len(fake.ratelimited),
    }


def click_phase(fake: FakeSlack, reviewers: list[str], per: int, ratings_path: Path) -> dict:
    """Every reviewer clicks "good" on their newest card as soon as it arrives, ``per`` times."""
    posts = Posts(fake, reviewers)
    seen: Counter[str] = Counter()
    clicked: dict[str, set[str]] = {r: set() for r in reviewers}
    clicks: list = []
    rounds: dict = {}
    start = time.monotonic()
    while len(clicks) < len(reviewers) * per:
        posted = posts.update()
        for reviewer in reviewers:
            if len(clicked[reviewer]) >= per or posted[reviewer] <= seen[reviewer]:
                continue
            seen[reviewer] = posted[reviewer]
            shown = cards(fake, reviewer)
            if shown and shown[-1] not in clicked[reviewer]:
                clicked[reviewer].add(shown[-1])
                clicks.append(fake.click_button(reviewer, reviewer, shown[-1], "good"))
                rounds[clicks[-1]] = len(clicked[reviewer])
        time.sleep(0.02)
        if time.monotonic() - start > 600:
            raise SystemExit("clicks did not finish in 10 minutes")
    seconds = time.monotonic() - start
    with contextlib.suppress(AssertionError):
        fake.wait(lambda: all(c.acked.is_set() for c in clicks), timeout=60, what="every ack")
    with contextlib.suppress(AssertionError):
        fake.wait(
            lambda: count_ratings(ratings_path) >= len(clicks), timeout=60, what="every rating"
        )
    latency = {
        c: c.acked_at - c.sent_at
        for c in clicks
        if c.acked_at is not None and c.sent_at is not None
    }
    return {
        "taps": len(clicks),
        "seconds": seconds,
        **latencies(latency, rounds),
        "unacked": len(clicks) - len(latency),
        "ratings": count_ratings(ratings_path),
        "unique": unique_ratings(ratings_path),
    }


def one_round(n_reviewers: int, per: int) -> tuple[dict, dict]:
    reviewers = [f"U{n}" for n in range(FIRST_REVIEWER, FIRST_REVIEWER + n_reviewers)]
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeSlack(limits=SlackLimits(channel_per_s=1.0, workspace_per_s=OVERALL_PER_S)) as fake,
    ):
        root = Path(tmp)
        make_data(root, n_reviewers * (per + 2))
        write_config(root, reviewers)
        fake.user(ADMIN, "admin")
        for r in reviewers:
            fake.user(r, f"r{r[1:]}")
        proc = start_bot("slack", fake.env(), root, lambda: fake.connections >= 1, fake.wait)
        try:
            pushed = push_phase(fake, reviewers)
            with harness_without_gc():
                clicked = click_phase(fake, reviewers, per, root / "results" / "ratings.jsonl")
            pushed["flood_429_total"] = len(fake.ratelimited)
        finally:
            status, stopped = stop_bot(proc)
        log = (root / "bot.log").read_text().splitlines()
        errors = [line for line in log if "Traceback" in line or "ERROR" in line]
        pushed |= {
            "exit": status,
            "stop": stopped,
            "log": errors if errors or status == 0 else log[-10:],
        }
        return pushed, clicked


def main() -> None:
    args = arguments(__doc__)
    ideal = (args.reviewers - 1) / OVERALL_PER_S
    pushes, rounds = [], []
    for n in range(args.repeat):
        pushed, clicks = one_round(args.reviewers, args.cards)
        pushes.append(pushed)
        rounds.append(clicks)
        print(
            f"  round {n + 1}: push {pushed['seconds']:.2f} s, lost {pushed['lost']}, sent twice "
            f"{pushed['duplicated']}, 429s {pushed['flood_429']}; clicks p50 "
            f"{clicks['p50'] * 1000:.0f} ms, p99 {clicks['p99'] * 1000:.0f} ms, last after "
            f"{clicks['seconds']:.1f} s, ratings {clicks['ratings']}, unacked "
            f"{clicks['unacked']}",
            flush=True,
        )
        if pushed["exit"] != 0 or pushed["log"]:
            print(
                f"    the bot exited with {pushed['exit']} after {pushed['stop']:.1f} s; its log:",
                *pushed["log"][:20],
                sep="\n      ",
            )
    median = statistics.median(p["seconds"] for p in pushes)
    print(
        f"\n(a) /hilbot push to {args.reviewers} reviewers ({OVERALL_PER_S} new msg/s overall, 1/s "
        f"per channel), median of {args.repeat}"
    )
    print(
        f"    last first card after {median:.2f} s · limits allow {ideal:.2f} s · "
        f"ratio {median / ideal if ideal else float('nan'):.3f}× (target ≤ 1.1×)"
    )
    print(
        f"    lost {sum(p['lost'] for p in pushes)} · sent twice "
        f"{sum(p['duplicated'] for p in pushes)} · 429s from the server "
        f"{sum(p['flood_429_total'] for p in pushes)} (during the pushes: "
        f"{sum(p['flood_429'] for p in pushes)})"
    )
    t = median_round(rounds)
    # before the last round each click costs the next card (10 new messages/s) and, in its DM, an
    # edit and that card (1/s)
    ideal_clicks = max((args.cards - 1) * args.reviewers / OVERALL_PER_S, 2 * (args.cards - 1))
    report_taps(
        t,
        rounds,
        reviewers=args.reviewers,
        cards=args.cards,
        repeat=args.repeat,
        what="click",
        answered="ack",
    )
    print(
        f"    last click after {t['seconds']:.1f} s · limits allow {ideal_clicks:.1f} s (each "
        f"earlier click costs the next card, {OVERALL_PER_S} new messages/s) · ratio "
        f"{t['seconds'] / ideal_clicks:.2f}×"
    )
    print(
        f"    ratings in the log: {', '.join(str(r['ratings']) for r in rounds)} "
        f"({', '.join(str(r['unique']) for r in rounds)} distinct item × reviewer) · "
        f"clicks never acked: {', '.join(str(r['unacked']) for r in rounds)}"
    )
    exits = ", ".join(f"{p['exit']} after {p['stop']:.1f} s" for p in pushes)
    print(
        f"    SIGINT → exit {exits} (0 expected; cards still queued get {STOP_GRACE_S:g} s, then "
        "are dealt again later)"
    )


if __name__ == "__main__":
    main()
