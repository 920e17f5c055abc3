"""Two bot replicas in one process: two chat flows, each with its own review engine and store (a
data directory each, the read copy of one PostgreSQL database), over one chat platform in memory
(the chat core's :class:`~tests.bot.chat.test_chat_core.MemoryPort`): a tap, a command or a deal
may reach either replica, as behind a load balancer.

What is checked is what users see (cards, edits, answers to taps) and what the database holds.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pytest

from bot.chat import Access, Chat, ChatFlow, Command, Tap, User, texts
from bot.demo import RAG_RUN, SEARCH_RUN, build_demo
from bot.review import ReviewEngine
from evaluation import (
    Delivery,
    ItemData,
    Query,
    QueryEvaluation,
    Rating,
    Reviewer,
    RunHeader,
    RunSummary,
    Store,
    load_config,
)
from tests.bot.chat.test_chat_core import ALICE, BOB, DM, MemoryPort, Sent

BOB_DM = Chat("dm-b")


@dataclass
class Replica:
    """One bot process: its store (a data directory of its own) and its chat flow."""

    store: Store
    flow: ChatFlow

    async def command(self, user: User, chat: Chat, name: str, *args: str) -> None:
        await self.flow.on_command(Command(user, chat, name, args))
        await self.flow.close()

    async def tap(self, port: MemoryPort, sent: Sent, data: str, event: str, user: User) -> None:
        await self.flow.on_tap(Tap(user, Chat(sent.chat), sent.id, data, event))


Replicas = Callable[..., tuple[MemoryPort, Replica, Replica]]


@pytest.fixture
def replicas(tmp_path: Path, pg_url: str) -> Iterator[Replicas]:
    """``replicas(toml, seed)``: the platform and two replicas on one database, configured with
    ``toml`` (hilbot.toml), after ``seed(store)`` (default: the demo runs) stored the runs."""
    opened: list[Store] = []

    def make(
        toml: str = "", seed: Callable[[Store], object] = build_demo
    ) -> tuple[MemoryPort, Replica, Replica]:
        path = tmp_path / "hilbot.toml"
        path.write_text(toml)
        config = load_config(path)
        port = MemoryPort()
        made: list[Replica] = []
        for name in ("a", "b"):
            store = Store(tmp_path / name, url=pg_url)
            opened.append(store)
            if not made:
                seed(store)
            access = Access(frozenset({ALICE.id, BOB.id}), frozenset())
            made.append(Replica(store, ChatFlow(ReviewEngine(store, config, []), port, access)))
        return port, made[0], made[1]

    yield make
    for store in opened:
        store.close()


def first_label(sent: Sent) -> str:
    """The token of a card's first button (a rating on its scale)."""
    return sent.keyboard[0][0].data


def ratings(store: Store) -> list[Rating]:
    return [r for r in store.human_events() if isinstance(r, Rating)]


def cards_to(port: MemoryPort, chat: Chat, run_id: str) -> list[Sent]:
    return [s for s in port.cards() if s.chat == chat.id and s.card and s.card.run_id == run_id]


async def test_a_card_dealt_by_one_replica_is_handled_by_the_other(replicas: Replicas) -> None:
    port, a, b = replicas()
    await a.command(ALICE, DM, "review", SEARCH_RUN)
    [card] = port.cards()
    await b.tap(port, card, port.token(card, "good"), "e1", ALICE)  # B has not seen the card
    await b.flow.close()
    assert port.answers["e1"] == ("Recorded: good", False)
    edited = port.edits[card.id]
    assert edited.recorded == "good" and edited.reveal is not None and edited.title == card.text
    first, second = port.cards()  # B dealt the next card into Alice's chat
    assert second.chat == DM.id and second.card is not None and first.card is not None
    assert second.card.item_id != first.card.item_id and second.text.startswith("[2/18]")
    [rating] = ratings(b.store)
    assert (rating.item_id, rating.judgment) == (first.card.item_id, "good")

    # the platform delivers the same tap to A as well: still one rating, nothing dealt again
    await a.tap(port, card, port.token(card, "good"), "e1", ALICE)
    await a.flow.close()
    assert port.answers["e1"][1] is False
    assert len(ratings(a.store)) == 1 and len(port.cards()) == 2
    session = a.flow.sessions.get(Reviewer(platform="memory", id=ALICE.id), SEARCH_RUN)
    assert a.flow.sessions.open_cards(session) == [second.card.item_id]  # A has caught up


async def test_replicas_dealing_at_once_never_deal_an_item_twice(replicas: Replicas) -> None:
    port, a, b = replicas("[review]\nwindow = 3\nk = 1\n")
    # one reviewer on both replicas at once (her command delivered twice, to each of them)
    await asyncio.gather(
        a.command(ALICE, DM, "review", SEARCH_RUN), b.command(ALICE, DM, "review", SEARCH_RUN)
    )
    dealt = [s.card.item_id for s in cards_to(port, DM, SEARCH_RUN) if s.card]
    assert len(dealt) >= 3 and len(set(dealt)) == len(dealt), dealt

    # k = 1: Alice on A and Bob on B review one run at once, to its end; no item goes to both
    await asyncio.gather(
        a.command(ALICE, DM, "review", RAG_RUN), b.command(BOB, BOB_DM, "review", RAG_RUN)
    )
    tapped: set[str] = set()
    for _ in range(30):
        due = [
            (replica, sent, user)
            for replica, chat, user in ((a, DM, ALICE), (b, BOB_DM, BOB))
            for sent in cards_to(port, chat, RAG_RUN)
            if sent.id not in tapped
        ]
        if not due:
            break
        tapped |= {sent.id for _, sent, _ in due}
        await asyncio.gather(*(r.tap(port, s, first_label(s), f"t{s.id}", u) for r, s, u in due))
        await asyncio.gather(a.flow.close(), b.flow.close())
    alice = [s.card.item_id for s in cards_to(port, DM, RAG_RUN) if s.card]
    bob = [s.card.item_id for s in cards_to(port, BOB_DM, RAG_RUN) if s.card]
    assert alice and bob and not set(alice) & set(bob), (alice, bob)
    assert len(set(alice)) == len(alice) and len(set(bob)) == len(bob)
    items = {item.id for item in a.store.load_run(RAG_RUN).items}
    assert set(alice) | set(bob) == items  # every item dealt, each to one reviewer
    rated = Counter(r.item_id for r in ratings(a.store) if r.run_id == RAG_RUN)
    assert set(rated) == items and set(rated.values()) == {1}
    delivered = Counter(
        (d.item_id, d.reviewer.id)
        for d in a.store.human_events()
        if isinstance(d, Delivery) and d.kind == "card" and d.run_id == SEARCH_RUN
    )
    assert set(delivered.values()) == {1}  # nor twice to one reviewer in the log


def one_item(store: Store) -> None:
    """A finished run of one item."""
    item = ItemData(id="only", query=Query(query="the only query"), answer="42")
    store.create_run(
        RunHeader(run_id="one", kind="answer", dimensions=["answer"]),
        [QueryEvaluation(run_id="one", data=item)],
        RunSummary(run_id="one", item_count=1),
    )


async def test_an_unanswered_card_expires_goes_to_another_reviewer_and_a_late_tap_stores_nothing(
    replicas: Replicas,
) -> None:
    port, a, b = replicas("[review]\nk = 1\n[store]\nclaim_expiry_s = 0.5\n", seed=one_item)
    await a.command(ALICE, DM, "review", "one")
    [card] = port.cards()
    await b.command(BOB, BOB_DM, "review", "one")
    assert len(port.cards()) == 1  # Alice holds the only item (k = 1)
    await asyncio.sleep(0.6)
    await b.flow.refresh()  # B's periodic refresh: the claim has run out, the item is dealt anew
    await b.flow.close()
    [_, bobs] = port.cards()
    assert bobs.chat == BOB_DM.id and bobs.card is not None and bobs.card.item_id == "only"
    expired = [d for d in b.store.human_events() if isinstance(d, Delivery) and d.kind == "expired"]
    assert [(d.item_id, d.reviewer.id) for d in expired] == [("only", ALICE.id)]

    for n, replica in enumerate((a, b)):  # Alice taps late, on the replica that dealt it or not
        await replica.tap(port, card, first_label(card), f"late{n}", ALICE)
        await replica.flow.close()
        assert port.answers[f"late{n}"] == (texts.EXPIRED_CARD, True)
    assert ratings(a.store) == [] and len(port.cards()) == 2 and card.id not in port.edits
