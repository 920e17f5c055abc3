"""Pushing cards to 300 reviewers and taking their taps, within Telegram's flood limits.

``hilbot serve telegram`` runs as a subprocess against the local fake Bot API server, which
enforces 30 messages/s overall and 1/s per chat (sliding windows, 429 with retry_after).

(a) An admin sends ``/push``: every reviewer's first card must arrive within 1.05× of the time
    those limits allow (300 cards at 30/s: 10 s), none lost or sent twice, no 429 left unhandled.
    Repeated (fresh bot, fresh data) and reported as the median.
(b) The 300 reviewers then tap through 5 cards each, all at once: the time from a tap to its
    answered callback (p50, p99; target p99 ≤ 200 ms), and all 1,500 ratings in the log. Every
    round has its taps; the figures are the medians over the rounds.

While it measures, this process (the fake platform and the users) runs without garbage collection,
so that a collection here is not counted as the bot's time.

Usage: .venv/bin/python bench/push.py [--reviewers 300] [--cards 5] [--repeat 3]
"""

from __future__ import annotations

import statistics
import tempfile
import time
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

from tests.fakes.telegram_api import FakeTelegram, Limits

ADMIN = 9000
FIRST_REVIEWER = 10001


def write_config(root: Path, reviewers: list[int]) -> Path:
    path = root / "hilbot.toml"
    path.write_text(
        f"[telegram]\nreviewers = {reviewers}\nadmins = [{ADMIN}]\npoll_timeout_s = 1\n"
    )
    return path


def cards(fake: FakeTelegram, chat: int) -> list[int]:
    """Message ids of the bot's rating cards in a chat (messages with a keyboard)."""
    return fake.card_ids(chat)


def push_phase(fake: FakeTelegram, reviewers: list[int]) -> dict:
    """Admin /push; the time until every reviewer has a first card."""
    start = time.monotonic()
    fake.send_text(ADMIN, f"/push {RUN}")
    fake.wait(lambda: all(cards(fake, r) for r in reviewers), timeout=120, what="every first card")
    firsts = [
        c.at
        for c in fake.calls_to("sendMessage")
        if c.status == 200 and c.params.get("chat_id") in set(reviewers)
    ]
    counts = [len(cards(fake, r)) for r in reviewers]
    return {
        "seconds": max(firsts) - start,
        "lost": counts.count(0),
        "duplicated": sum(n > 1 for n in counts),
        "flood_429": len(fake.rejected),
    }


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
    return {
        "taps": len(queries),
        "seconds": time.monotonic() - start,
        **latencies(latency, rounds),
        "ratings": count_ratings(ratings_path),
        "unique": unique_ratings(ratings_path),
    }


def one_round(n_reviewers: int, per: int, taps: bool) -> tuple[dict, dict | None]:
    reviewers = list(range(FIRST_REVIEWER, FIRST_REVIEWER + n_reviewers))
    with tempfile.TemporaryDirectory() as tmp, FakeTelegram(limits=Limits()) as fake:
        root = Path(tmp)
        make_data(root, n_reviewers * (per + 2))
        write_config(root, reviewers)
        fake.user(ADMIN, first_name="Admin")
        for r in reviewers:
            fake.user(r, first_name=f"R{r}")
        proc = start_bot("telegram", fake.env(), root, lambda: fake.commands, fake.wait)
        try:
            pushed = push_phase(fake, reviewers)
            with harness_without_gc():
                tapped = (
                    tap_phase(fake, reviewers, per, root / "results" / "ratings.jsonl")
                    if taps
                    else None
                )
            pushed["flood_429_total"] = len(fake.rejected)
        finally:
            stop_bot(proc)
        return pushed, tapped


def main() -> None:
    args = arguments(__doc__)
    ideal = (args.reviewers - 1) / 30 if args.reviewers > 30 else 0.0
    pushes, rounds = [], []
    for n in range(args.repeat):
        pushed, taps = one_round(args.reviewers, args.cards, taps=True)
        pushes.append(pushed)
        rounds.append(taps)
        print(
            f"  round {n + 1}: push {pushed['seconds']:.2f} s, lost {pushed['lost']}, duplicated "
            f"{pushed['duplicated']}, flood 429s {pushed['flood_429']}; taps p50 "
            f"{taps['p50'] * 1000:.0f} ms, p99 {taps['p99'] * 1000:.0f} ms, last after "
            f"{taps['seconds']:.1f} s, ratings {taps['ratings']}",
            flush=True,
        )
    median = statistics.median(p["seconds"] for p in pushes)
    print(
        f"\n(a) /push to {args.reviewers} reviewers (30 msg/s overall, 1/s per chat), median of "
        f"{args.repeat}"
    )
    print(
        f"    last first card after {median:.2f} s · limits allow {ideal:.2f} s · ratio "
        f"{median / ideal if ideal else float('nan'):.3f}× (target ≤ 1.05×)"
    )
    print(
        f"    lost {sum(p['lost'] for p in pushes)} · duplicated "
        f"{sum(p['duplicated'] for p in pushes)} · 429s from the server "
        f"{sum(p['flood_429_total'] for p in pushes)} (each retried; none lost)"
    )
    t = median_round(rounds)
    ideal_taps = (
        2 * (args.cards - 1) * args.reviewers / 30
    )  # before the last round: an edit and a next card per tap
    report_taps(
        t,
        rounds,
        reviewers=args.reviewers,
        cards=args.cards,
        repeat=args.repeat,
        what="tap",
        answered="answered callback",
    )
    print(
        f"    last tap after {t['seconds']:.1f} s · limits allow {ideal_taps:.1f} s (each earlier "
        "tap costs an edit and the next card, 30 messages/s) · ratio "
        f"{t['seconds'] / ideal_taps:.2f}×"
    )
    print(
        f"    ratings in the log: {', '.join(str(r['ratings']) for r in rounds)} "
        f"({', '.join(str(r['unique']) for r in rounds)} distinct item × reviewer)"
    )


if __name__ == "__main__":
    main()
