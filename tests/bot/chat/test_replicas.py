"""Two bot replicas on one PostgreSQL store, one of them SIGKILLed in the middle of a burst.

Each platform runs two ``hilbot serve`` processes as a user deploys them for one bot: the same
``HILBOT_STORE_URL``, a data directory each (the store's read copy), one review run in the
database. Telegram: webhook mode, each replica listening on its own port behind a load balancer
(the fake Bot API POSTs each update to one of the two at random, and again while a POST fails or
goes unanswered, as Telegram redelivers). Slack: Socket Mode, each replica with a connection of
its own (the fake sends each envelope to one open connection at random, as Slack does).

Every reviewer starts a review; once each has a first card, they all rate the cards as they come,
and when a third of the ratings are in, one replica is SIGKILLed. The reviewers act as people do:
a tap left unanswered is tapped again after a while (the killed replica took it with it); with no
new card for a while after their last rating, or a card the bot calls not valid, they send
``/next``. That is what a stop or a crash asks of them: a card the killed replica had not sent,
or had sent but not yet logged, is not in the log as dealt, and is dealt again when its reviewer
next asks (``ChatFlow.close``). Afterwards the database itself is read: every acknowledged tap's
rating is in the log exactly once, every rating comes from a tap on a card of its item, no item
was dealt twice to one reviewer (but for ``/next``, which shows an open card again), no item has
more than k ratings, and every reviewer whose session was on the killed replica went on with the
survivor to the end, with no ``/next`` needed before the kill.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import psycopg
import pytest

from evaluation import ItemData, Query, QueryEvaluation, RunHeader, SearchResult, Store
from tests.conftest import HILBOT
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.pgserver import accepting, free_port

# four bots and a database at once: run apart from the timed soak (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("apart")

RUN = "replicas"
K = 2
"""Ratings each item needs (from different reviewers)."""
CARDS = 3
"""Cards each reviewer rates."""
RETAP_S = 6.0
"""How long a reviewer waits for a tap's answer before tapping the same button again."""
STALL_S = 10.0
"""How long a reviewer waits for the next card after a rating before sending ``/next``."""


# ---------------------------------------------------------------------------------------- set-up


def seed(pg_url: str, root: Path, reviewers: int) -> None:
    """The run, created in the database (through a data directory of its own). Each reviewer is
    dealt one card more than they rate: there are items enough for all of them."""
    store = Store(root / "seed", url=pg_url)
    items = reviewers * (CARDS + 1) // K + reviewers // 2
    rows = [
        QueryEvaluation(
            run_id=RUN,
            data=ItemData(
                id=f"q{n:04d}",
                query=Query(query=f"replica query {n}"),
                results=[SearchResult(rank=1, path=f"/docs/{n}.md", score=0.9)],
            ),
        )
        for n in range(items)
    ]
    store.create_run(RunHeader(run_id=RUN, kind="search", dimensions=["overall"]), rows)
    store.close()


def start(platform: str, root: Path, name: str, config: str, env: dict[str, str]) -> Any:
    """``hilbot serve <platform>`` with a data directory and a hilbot.toml of its own."""
    home = root / name
    home.mkdir()
    (home / "hilbot.toml").write_text(config)
    full = {
        **os.environ,
        **env,
        "HILBOT_DATA_DIR": str(home / "results"),
        "HILBOT_CONFIG": str(home / "hilbot.toml"),
    }
    with open(home / "bot.log", "w") as log:
        return subprocess.Popen(
            [str(HILBOT), "serve", platform],
            env=full,
            cwd=home,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def stop(proc: Any) -> int:
    """SIGINT (a killed replica is only waited for); the exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        return int(proc.wait(timeout=20))
    except subprocess.TimeoutExpired:
        proc.kill()
        return int(proc.wait())


def records(pg_url: str) -> list[dict]:
    """Every line of the ratings stream, as the database holds it."""
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            "SELECT line FROM hilbot_events WHERE stream = 'ratings' ORDER BY tx, seq"
        ).fetchall()
    return [json.loads(bytes(line)) for (line,) in rows]


# ---------------------------------------------------------------------------------------- users


@dataclass
class Answer:
    at: float
    alert: bool
    """The bot refused the tap (Telegram: an alert; Slack: an ephemeral message to the tapper)."""


@dataclass
class Platform:
    """One chat platform as the reviewers and the checks see it."""

    name: str
    reviewers: list[str]
    cards: Callable[[str], list[str]]
    """The message ids of a reviewer's cards, oldest first."""
    tap: Callable[[str, str], Any]
    """Tap "good" on a card; the platform's event."""
    answer: Callable[[Any], Answer | None]
    key: Callable[[Any], str]
    """The idempotency key a tap's records get."""
    command: Callable[[str, str], Any]
    """The reviewer sends a command (``review RUN``, ``next``); the platform's event."""
    replica: Callable[[Any], str | None]
    """Which replica took an event (``a``, ``b``; None: neither, yet)."""
    text: Callable[[str, str], str]
    """What a card says (its item's query among it)."""

    def item(self, reviewer: str, card: str) -> str:
        """The item a card shows, read off the card."""
        found = re.search(r"replica query (\d+)", self.text(reviewer, card))
        assert found is not None, (reviewer, card)
        return f"q{int(found[1]):04d}"


@dataclass
class Tap:
    reviewer: str
    card: str
    event: Any
    at: float
    after_kill: bool


@dataclass
class Crowd:
    """Every reviewer rating each card in their chat as soon as it comes, until ``CARDS`` ratings
    are answered."""

    platform: Platform
    taps: list[Tap] = field(default_factory=list)
    sent: list[tuple[str, float, Any]] = field(default_factory=list)
    """(reviewer, when, event) of every tap and command, in order."""
    nexts: list[tuple[str, float]] = field(default_factory=list)
    killed_at: float | None = None
    finished: dict[str, float] = field(default_factory=dict)
    _answers: dict[int, Answer] = field(default_factory=dict)

    def answer(self, tap: Tap) -> Answer | None:
        if id(tap) not in self._answers:
            found = self.platform.answer(tap.event)
            if found is None:
                return None
            self._answers[id(tap)] = found
        return self._answers[id(tap)]

    def begin(self) -> None:
        for reviewer in self.platform.reviewers:
            self._send(reviewer, self.platform.command(reviewer, f"review {RUN}"))

    def _send(self, reviewer: str, event: Any) -> None:
        self.sent.append((reviewer, time.monotonic(), event))

    def rated(self, reviewer: str) -> dict[str, float]:
        """The reviewer's cards with a tap the bot took, and when it answered."""
        return {
            t.card: answer.at
            for t in self.taps
            if t.reviewer == reviewer and (answer := self.answer(t)) and not answer.alert
        }

    def step(self, started: float) -> int:
        """One look at every chat; returns how many reviewers are not finished."""
        mine: dict[str, list[Tap]] = defaultdict(list)
        for t in self.taps:
            mine[t.reviewer].append(t)
        asked: dict[str, float] = {}
        for reviewer, at in self.nexts:
            asked[reviewer] = at
        left = 0
        for reviewer in self.platform.reviewers:
            if reviewer in self.finished:
                continue
            now = time.monotonic()
            answers = [(t, self.answer(t)) for t in mine[reviewer]]
            rated = {t.card: a.at for t, a in answers if a is not None and not a.alert}
            if len(rated) >= CARDS:
                self.finished[reviewer] = now
                continue
            left += 1
            latest: dict[str, tuple[Tap, Answer | None]] = {}
            for t, a in answers:
                latest[t.card] = (t, a)
            shown = self.platform.cards(reviewer)
            fresh = [card for card in shown if card not in latest]
            waiting = [t for t, a in latest.values() if a is None and t.card not in rated]
            if fresh:  # every card shown is rated, as a person does
                for card in fresh:
                    self._tap(reviewer, card)
            elif waiting:  # unanswered: tapped again after a while
                for t in waiting:
                    if now - t.at > RETAP_S:
                        self._tap(reviewer, t.card)
            else:  # every card answered: waiting for the next one
                refused = any(a is not None and a.alert for _, a in latest.values())
                since = max([started, asked.get(reviewer, 0.0), *rated.values()])
                if now - since > STALL_S or (refused and now - asked.get(reviewer, 0) > STALL_S):
                    self.nexts.append((reviewer, now))
                    self._send(reviewer, self.platform.command(reviewer, "next"))
        return left

    def _tap(self, reviewer: str, card: str) -> None:
        event = self.platform.tap(reviewer, card)
        now = time.monotonic()
        self.taps.append(Tap(reviewer, card, event, now, self.killed_at is not None))
        self._send(reviewer, event)

    def ratings(self) -> int:
        return sum(1 for t in self.taps if (a := self.answer(t)) and not a.alert)


def burst(crowd: Crowd, kill: Callable[[], None], timeout: float) -> float:
    """Every reviewer starts a review; once each has a first card, they all rate, and ``kill``
    comes when a third of the ratings are in. The seconds from the first tap to the last."""
    crowd.begin()
    deadline = time.monotonic() + timeout
    while not all(crowd.platform.cards(r) for r in crowd.platform.reviewers):
        assert time.monotonic() < deadline, "not every reviewer got a first card"
        time.sleep(0.05)
    started = time.monotonic()
    at = len(crowd.platform.reviewers) * CARDS // 3
    while left := crowd.step(started):
        if crowd.killed_at is None and crowd.ratings() >= at:
            kill()
            crowd.killed_at = time.monotonic()
        assert time.monotonic() - started < timeout, (
            f"{left} reviewers not finished after {timeout:.0f} s; {crowd.ratings()} ratings "
            f"answered, {len(crowd.taps)} taps, {len(crowd.nexts)} /next"
        )
        time.sleep(0.02)
    return time.monotonic() - started


# ---------------------------------------------------------------------------------------- checks


def check(crowd: Crowd, pg_url: str, log: str) -> dict[str, Any]:
    """What the database holds after the burst, and how the killed replica's reviewers fared."""
    platform, killed = crowd.platform, crowd.killed_at
    assert killed is not None
    assert "Traceback" not in log, log[-4000:]
    lines = records(pg_url)
    ratings = [r for r in lines if r["type"] == "rating"]
    cards = [r for r in lines if r["type"] == "delivery" and r.get("kind", "card") == "card"]
    logged = {(r["reviewer"]["id"], r["message_id"]) for r in cards}
    by_card: dict[tuple[str, str], list[Tap]] = defaultdict(list)
    for t in crowd.taps:
        by_card[(t.reviewer, t.card)].append(t)
    item = {card: platform.item(*card) for card in by_card}

    # every rating comes from a tap on a card of its item, and one reviewer rates an item once
    keys = {platform.key(t.event): (t.reviewer, t.card) for t in crowd.taps}
    judged = Counter((r["reviewer"]["id"], r["item_id"], r["dimension"]) for r in ratings)
    assert max(judged.values()) == 1, judged.most_common(3)
    for r in ratings:
        assert r["idempotency_key"] in keys, r
        reviewer, card = keys[r["idempotency_key"]]
        assert (reviewer, item[(reviewer, card)]) == (r["reviewer"]["id"], r["item_id"]), r
    # every tap acknowledged as taken has its item's rating in the log; a tap was refused only on
    # a card whose delivery is not in the log (the killed replica sent it, and died before it
    # logged it)
    rated = {(r["reviewer"]["id"], r["item_id"]) for r in ratings}
    orphans = [card for card in by_card if card not in logged]
    for (reviewer, card), taps in by_card.items():
        answered = [a for t in taps if (a := crowd.answer(t)) is not None]
        if any(not a.alert for a in answered):
            assert (reviewer, item[(reviewer, card)]) in rated, (reviewer, card)
        elif answered:
            assert (reviewer, card) in orphans, (reviewer, card, answered)
    # no item dealt twice to one reviewer, nor rated by more than k
    dealt = Counter((r["reviewer"]["id"], r["item_id"], r["dimension"]) for r in cards)
    asked = Counter(r for r, _ in crowd.nexts)
    again = [(key, n) for key, n in dealt.items() if n > 1 + asked[key[0]]]
    assert not again, again[:5]  # only /next sends a reviewer's open card again
    per_item = Counter((r["item_id"], r["dimension"]) for r in ratings)
    assert max(per_item.values()) <= K, per_item.most_common(3)
    assert all(r["channel"] == platform.name for r in ratings)

    # every reviewer whose latest word before the kill went to the killed replica went on with
    # the survivor to the end: their taps after the kill were answered, their next cards came
    latest: dict[str, Any] = {}
    for reviewer, at, event in crowd.sent:
        if at < killed:
            latest[reviewer] = event
    on_a = [r for r, event in latest.items() if platform.replica(event) == "a"]
    after = [t for t in crowd.taps if t.after_kill]
    assert all(crowd.answer(t) is not None for t in after)
    assert all(len(crowd.rated(r)) >= CARDS for r in on_a)
    moved = {t.reviewer for t in after} & set(on_a)
    assert len(moved) > len(platform.reviewers) // 10, len(moved)
    # a reviewer waited for a card in vain (and sent /next) only after the kill
    assert all(at > killed for _, at in crowd.nexts), [at - killed for _, at in crowd.nexts]
    unanswered = sum(1 for t in crowd.taps if crowd.answer(t) is None)
    return {
        "reviewers": len(platform.reviewers),
        "ratings": len(ratings),
        "taps": len(crowd.taps),
        "taps lost with the killed replica": unanswered,
        "sessions moved to the survivor": len(moved),
        "/next sent": len(crowd.nexts),
        "cards the killed replica sent but never logged": len(orphans),
    }


# ---------------------------------------------------------------------------------------- dealing


async def test_a_deal_passes_over_an_item_another_replica_has_just_claimed(
    pg_url: str, tmp_path: Path
) -> None:
    """Replica A has claimed an item (its card is on its way, its delivery not logged yet), so
    replica B's copy of the log still shows it free: B's deal is refused that item, and deals the
    next one instead of nothing (before, B's reviewer got "nothing new" while items were left)."""
    from bot.chat.sessions import Sessions
    from bot.review import ReviewEngine
    from evaluation import Reviewer, load_config
    from evaluation.backends import Claim

    seed(pg_url, tmp_path, 4)
    config = load_config(None)  # k = 1, a window of one card
    other, mine = Store(tmp_path / "a", url=pg_url), Store(tmp_path / "b", url=pg_url)
    try:
        sessions = Sessions(ReviewEngine(mine, config), "telegram")
        session = sessions.get(Reviewer(platform="telegram", id="2"), RUN)
        [first] = session.pending(limit=1)
        claim = Claim(RUN, "overall", "telegram:1", (first.id,), k=1, room=1, expiry_s=60)
        assert other.claim(claim) == [first.id]
        cards = await sessions.adeal(session)
        assert len(cards) == 1 and cards[0].item_id != first.id
        assert sessions.open_cards(session) == [cards[0].item_id]
        again = Claim(RUN, "overall", "telegram:3", (cards[0].item_id,), k=1, room=1, expiry_s=60)
        assert other.claim(again) == []  # B holds it now
    finally:
        other.close()
        mine.close()


# ---------------------------------------------------------------------------------------- Telegram

TELEGRAM_REVIEWERS = 300
SECRET = "replica-webhook-secret"


def telegram_config(reviewers: list[int], port: int) -> str:
    return (
        f"[review]\nk = {K}\n"
        f'[telegram]\nreviewers = {reviewers}\nadmins = [900]\nmode = "webhook"\n'
        f'webhook_url = "https://hilbot-lb.invalid/hook"\nlisten = "127.0.0.1"\nport = {port}\n'
        "[telegram.limits]\noverall_per_s = 10000\nchat_per_s = 100\n"
    )


def test_telegram_replicas_behind_a_load_balancer_go_on_when_one_is_killed(
    pg_url: str, tmp_path: Path
) -> None:
    ids = list(range(10001, 10001 + TELEGRAM_REVIEWERS))
    seed(pg_url, tmp_path, len(ids))
    ports = {"a": free_port(), "b": free_port()}
    targets = {f"http://127.0.0.1:{port}/hook": name for name, port in ports.items()}
    with FakeTelegram(limits=None, webhook_targets=list(targets)) as fake:
        for uid in ids:
            fake.user(uid, first_name=f"R{uid}")
        env = {**fake.env(), "HILBOT_STORE_URL": pg_url, "TELEGRAM_WEBHOOK_SECRET": SECRET}
        procs = {
            name: start("telegram", tmp_path, name, telegram_config(ids, port), env)
            for name, port in ports.items()
        }
        updates: dict[str, int] = {}
        """callback query id → its update's id."""

        def tap(reviewer: str, card: str) -> str:
            query = fake.tap_button(int(reviewer), int(reviewer), int(card), "good")
            updates[query] = fake.last_update_id("callback_query")
            return query

        def answer(query: str) -> Answer | None:
            found = fake.answers.get(query)
            return None if found is None else Answer(found["at"], bool(found.get("show_alert")))

        def replica(event: Any) -> str | None:
            update = updates.get(event, event)
            taken = [t for uid, t, status in list(fake.webhook_posts) if uid == update and status]
            return targets[taken[-1]] if taken else None

        platform = Platform(
            "telegram",
            [str(uid) for uid in ids],
            lambda r: [str(i) for i in fake.card_ids(int(r))],
            tap,
            answer,
            lambda query: f"telegram:cq:{query}",
            lambda r, text: fake.send_text(int(r), f"/{text}"),
            replica,
            lambda r, card: str(fake.message(int(r), int(card)).get("text")),
        )
        crowd = Crowd(platform)
        try:
            fake.wait(
                lambda: (
                    len(fake.calls_to("setWebhook")) == 2
                    and all(accepting(p) for p in ports.values())
                ),
                timeout=40,
                what="both replicas to listen",
            )
            seconds = burst(crowd, lambda: _kill(procs["a"]), timeout=90)
        finally:
            codes = {name: stop(proc) for name, proc in procs.items()}
    log = (tmp_path / "b" / "bot.log").read_text(errors="replace")
    assert codes == {"a": -signal.SIGKILL, "b": 0}, (codes, log[-3000:])
    figures = check(crowd, pg_url, log)
    # the load balancer spread the updates over both replicas; after the kill a POST to the killed
    # one failed, and the update went again, to the survivor
    posts = list(fake.webhook_posts)
    taken = Counter(targets[t] for _, t, status in posts if status == 200)
    failed = [targets[t] for _, t, status in posts if status != 200]
    assert taken["a"] > len(ids) // 2 and taken["b"] > len(ids) // 2, taken
    assert failed and set(failed) == {"a"}, Counter(failed)
    print(f"\ntelegram: {figures}, {len(failed)} webhook POSTs failed; burst {seconds:.1f} s")


def _kill(proc: Any) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


# ---------------------------------------------------------------------------------------- Slack

SLACK_REVIEWERS = 300


def slack_config(reviewers: list[str]) -> str:
    return (
        f"[review]\nk = {K}\n[slack]\nreviewers = {json.dumps(reviewers)}\n"
        'admins = ["U0ADMIN"]\n[slack.limits]\nchannel_per_s = 100\noverall_per_s = 10000\n'
    )


class SlackCards:
    """The card messages in each reviewer's DM, read again only when the bot has posted there
    since (watching 300 DMs must not hold up the fake's server thread)."""

    def __init__(self, fake: FakeSlack, reviewers: list[str]):
        self.fake, self.done = fake, 0
        self.owner = {fake.dm(r): r for r in reviewers}
        self.posts: Counter[str] = Counter()
        self.seen: dict[str, tuple[int, list[str]]] = {}

    def __call__(self, reviewer: str) -> list[str]:
        calls = self.fake.calls
        while self.done < len(calls) and calls[self.done].status is not None:
            call, self.done = calls[self.done], self.done + 1
            owner = self.owner.get(str(call.params.get("channel")))
            if owner is not None and call.method == "chat.postMessage":
                self.posts[owner] += 1
        count, cards = self.seen.get(reviewer, (-1, []))
        if count != self.posts[reviewer]:
            cards = [
                m["ts"]
                for m in self.fake.messages(reviewer)
                if any(b.get("type") == "actions" for b in m.get("blocks") or ())
            ]
            self.seen[reviewer] = (self.posts[reviewer], cards)
        return cards


def test_slack_replicas_in_socket_mode_go_on_when_one_is_killed(
    pg_url: str, tmp_path: Path
) -> None:
    ids = [f"U{n}" for n in range(10001, 10001 + SLACK_REVIEWERS)]
    seed(pg_url, tmp_path, len(ids))
    with FakeSlack(limits=None) as fake:
        for uid in ids:
            fake.user(uid, f"r{uid[1:]}")
        env = {**fake.env(), "HILBOT_STORE_URL": pg_url}
        procs = {name: start("slack", tmp_path, name, slack_config(ids), env) for name in "ab"}
        connections: dict[int, str] = {}

        def answer(delivery: Any) -> Answer | None:
            if not delivery.acked.is_set():
                return None
            clicked = delivery.payload["actions"][0]["action_ts"]
            said = fake.ephemerals(
                delivery.payload["channel"]["id"], delivery.payload["user"]["id"]
            )
            return Answer(delivery.acked_at, any(e["message_ts"] > clicked for e in said))

        def key(delivery: Any) -> str:
            user, clicked = delivery.payload["user"]["id"], delivery.payload["actions"][0]
            return f"slack:cq:{user}:{clicked['action_ts']}"

        platform = Platform(
            "slack",
            ids,
            SlackCards(fake, ids),
            lambda r, card: fake.click_button(r, r, card, "good"),
            answer,
            key,
            lambda r, text: fake.slash(r, text),
            lambda delivery: connections.get(delivery.connection),
            lambda r, card: json.dumps(fake.message(r, card).get("blocks")),
        )
        crowd = Crowd(platform)

        def kill() -> None:
            both = fake.live_connections()
            _kill(procs["a"])
            fake.wait(lambda: fake.connections == 1, timeout=10, what="the killed one to close")
            connections.update({n: "b" if n in fake.live_connections() else "a" for n in both})

        try:
            fake.wait(lambda: fake.connections == 2, timeout=40, what="both replicas to connect")
            seconds = burst(crowd, kill, timeout=90)
        finally:
            codes = {name: stop(proc) for name, proc in procs.items()}
    log = (tmp_path / "b" / "bot.log").read_text(errors="replace")
    assert codes == {"a": -signal.SIGKILL, "b": 0}, (codes, log[-3000:])
    figures = check(crowd, pg_url, log)
    carried = Counter(connections.get(d.connection) for d in fake.deliveries)
    assert carried["a"] > len(ids) // 2 and carried["b"] > len(ids) // 2, carried
    print(f"\nslack: {figures}; burst {seconds:.1f} s")
