"""The chat core on its own: a review driven through an in-memory port, no platform SDK at all.

The port here is a small fake that records what the core sends (and can refuse a card, as a
platform would); everything else — sessions, the engine, the log — is real. The platform
behaviour suite (tests/test_chat.py) runs the same flow through each real adapter.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field

import pytest

from bot.cards import Action, Card
from bot.chat import Access, Chat, ChatFlow, Command, Keyboard, PortError, Tap, Text, User
from bot.review import ReviewEngine
from evaluation import Rating, Reviewer, Store, load_config
from tests.bot.chat.conftest import BACKENDS
from tests.conftest import SEARCH_RUN


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each test on each store backend (tests/bot/chat/conftest.py)."""
    return str(request.param)


ALICE, BOB = User("a-1", "alice"), User("b-2", "bob")
DM = Chat("dm-a")


@dataclass
class Sent:
    chat: str
    id: str
    text: str
    card: Card | None = None
    keyboard: Keyboard = field(default_factory=list)


class MemoryPort:
    """A chat platform in memory: messages by chat, answers by tap; ``refuse`` item ids are refused
    as too long."""

    platform, title, prefix = "memory", "Memory", "/"

    def __init__(self) -> None:
        self.sent: list[Sent] = []
        self.edits: dict[str, Card] = {}
        self.answers: dict[str, tuple[str, bool]] = {}
        self.refuse: set[str] = set()
        self.asked: list[tuple[str, str]] = []
        """(message tapped, what the note is about) of every note prompt."""
        self._ids = itertools.count(1)

    async def send_card(self, chat: Chat, card: Card, keyboard: Keyboard) -> str:
        if card.item_id in self.refuse:
            raise PortError("Bad Request: message is too long", kind="content")
        self.sent.append(Sent(chat.id, str(next(self._ids)), card.title, card, keyboard))
        return self.sent[-1].id

    async def edit_card(
        self, chat: Chat, message_id: str, card: Card, keyboard: Keyboard, *, final: bool
    ) -> None:
        self.edits[message_id] = card

    async def send_text(
        self,
        chat: Chat,
        text: str,
        *,
        reply_to: str | None = None,
        ask: bool = False,
        code: bool = False,
    ) -> str:
        self.sent.append(Sent(chat.id, str(next(self._ids)), text))
        return self.sent[-1].id

    async def answer(self, tap: Tap, text: str, *, alert: bool) -> None:
        self.answers[tap.event_id] = (text, alert)

    async def send_file(self, chat: Chat, data: bytes, name: str, caption: str) -> None:
        self.sent.append(Sent(chat.id, str(next(self._ids)), f"[file {name}]"))

    async def private_chat(self, user_id: str) -> Chat:
        return Chat(f"dm-{user_id}")

    async def show_full(self, tap: Tap, text: str) -> None:
        await self.send_text(tap.chat, text, reply_to=tap.message_id)

    async def ask_note(self, tap: Tap, about: str) -> str:
        self.asked.append((tap.message_id, about))
        return await self.send_text(
            tap.chat, f"Note on {about}?", reply_to=tap.message_id, ask=True
        )

    def cards(self) -> list[Sent]:
        return [s for s in self.sent if s.card is not None]

    def token(self, sent: Sent, label: str) -> str:
        return next(c.data for row in sent.keyboard for c in row if c.label == label)


def _flow(store: Store, port: MemoryPort) -> ChatFlow:
    return ChatFlow(
        ReviewEngine(store, load_config(None), []),
        port,
        Access(frozenset({ALICE.id, BOB.id}), frozenset()),
    )


async def _tap(
    flow: ChatFlow, port: MemoryPort, sent: Sent, label: str, event: str, user: User = ALICE
) -> tuple[str, bool]:
    await flow.on_tap(Tap(user, Chat(sent.chat), sent.id, port.token(sent, label), event))
    await flow.close()
    return port.answers[event]


async def test_a_review_runs_through_the_port_alone(demo_store: Store) -> None:
    port = MemoryPort()
    flow = _flow(demo_store, port)
    await flow.on_command(Command(ALICE, DM, "review", (SEARCH_RUN,)))
    [card] = port.cards()
    assert card.text.startswith("[1/18]") and card.card.reveal is None
    assert await _tap(flow, port, card, "good", "e1") == ("Recorded: good", False)
    assert port.edits[card.id].recorded == "good" and port.edits[card.id].reveal is not None
    assert port.edits[card.id].title == card.card.title  # the card keeps its number
    assert [c.text[:6] for c in port.cards()] == ["[1/18]", "[2/18]"]
    [rating] = [r for r in demo_store.human_events() if isinstance(r, Rating)]
    assert rating.idempotency_key == "memory:cq:e1" and rating.action == "rate:good"


async def test_a_card_the_platform_refuses_is_reported_and_the_next_one_dealt(
    demo_store: Store,
) -> None:
    port = MemoryPort()
    flow = _flow(demo_store, port)
    first = ReviewEngine(demo_store, load_config(None)).session(
        SEARCH_RUN, Reviewer(platform="memory", id=ALICE.id)
    )
    port.refuse.add(first.pending(limit=1)[0].id)
    await flow.on_command(Command(ALICE, DM, "review", (SEARCH_RUN,)))
    texts = [s.text for s in port.sent]
    assert any("Memory refused the card" in t and "message is too long" in t for t in texts), texts
    [card] = port.cards()
    assert card.card.item_id not in port.refuse


async def test_a_reused_event_id_with_another_action_is_stored_not_swallowed(
    demo_store: Store, caplog
) -> None:
    """A platform that starts its event ids again (a fresh server) must not make a new tap "already
    recorded"."""
    port = MemoryPort()
    flow = _flow(demo_store, port)
    await flow.on_command(Command(ALICE, DM, "review", (SEARCH_RUN,)))
    first = port.cards()[0]
    await _tap(flow, port, first, "good", "1")
    second = port.cards()[1]
    with caplog.at_level(logging.WARNING, logger="hilbot.review"):
        answer = await _tap(
            flow, port, second, "poor", "1"
        )  # the same event id, another item and value
    assert answer == ("Recorded: poor", False)
    ratings = [r for r in demo_store.human_events() if isinstance(r, Rating)]
    assert [(r.item_id, r.judgment) for r in ratings] == [
        (first.card.item_id, "good"),
        (second.card.item_id, "poor"),
    ]
    assert ratings[1].idempotency_key.startswith("memory:cq:1~")
    assert any("came again with a different action" in r.message for r in caplog.records)
    await _tap(flow, port, second, "poor", "1")  # and that tap, redelivered, still counts once
    assert len([r for r in demo_store.human_events() if isinstance(r, Rating)]) == 2


async def test_a_note_answers_its_prompt_and_a_stranger_is_told_their_id(demo_store: Store) -> None:
    port = MemoryPort()
    flow = _flow(demo_store, port)
    await flow.on_command(Command(ALICE, DM, "review", (SEARCH_RUN,)))
    card = port.cards()[0]
    await _tap(flow, port, card, "Note only", "n1")
    prompt = port.sent[-1]
    item = demo_store.load_run(SEARCH_RUN).item(card.card.item_id)
    assert (
        port.asked == [(card.id, item.query.query)]
        and prompt.text == f"Note on {item.query.query}?"
    )
    await flow.on_text(Text(ALICE, DM, "m9", "the page is stale", reply_to=prompt.id))
    await flow.close()
    assert "📝 Note saved." in [s.text for s in port.sent]
    kinds = [type(r).__name__ for r in demo_store.human_events()]
    assert kinds.count("Note") == 1 and kinds.count("Skip") == 1
    await flow.on_command(Command(User("x-9"), Chat("dm-x"), "help"))
    assert port.sent[-1].text.startswith(
        "You are not on this bot's reviewer list. Your Memory user id is x-9"
    )


async def test_engine_repeat_of_a_stored_rating_moves_on_without_writing(demo_store: Store) -> None:
    """After a crash between storing and answering, the repeat redoes the effects (reveal, next) and
    writes nothing."""
    engine = ReviewEngine(demo_store, load_config(None))
    session = engine.session(SEARCH_RUN, Reviewer(platform="memory", id="z"), channel="memory")
    item = session.pending(limit=1)[0].id
    session.act(Action("rate", "good", item, "cq:7"))
    reopened = Store(demo_store.root, url=demo_store.url)  # a new process, on the same backend
    try:
        again = (
            ReviewEngine(reopened, load_config(None))
            .session(SEARCH_RUN, Reviewer(platform="memory", id="z"), channel="memory")
            .act(Action("rate", "good", item, "cq:7"))
        )
    finally:
        reopened.close()
    assert (
        again.repeated
        and again.stored == 0
        and again.finished is not None
        and again.finished.reveal is not None
    )
    assert len([r for r in demo_store.human_events() if isinstance(r, Rating)]) == 1


async def test_a_stop_waits_for_cards_under_way_only_as_long_as_its_grace(
    demo_store: Store,
) -> None:
    """A push still queued behind the platform's rate must not hold a stopping bot for minutes."""
    import asyncio
    import time

    class StuckPort(MemoryPort):
        async def send_card(self, chat: Chat, card: Card, keyboard: Keyboard) -> str:
            if chat.id == "dm-b-2":
                await asyncio.Event().wait()  # this platform never answers
            return await super().send_card(chat, card, keyboard)

    port = StuckPort()
    flow = ChatFlow(
        ReviewEngine(demo_store, load_config(None), []),
        port,
        Access(frozenset({ALICE.id, BOB.id}), frozenset({ALICE.id})),
    )

    def dealt() -> list[str]:
        return [
            d.reviewer.id
            for d in demo_store.human_events()
            if type(d).__name__ == "Delivery" and d.kind == "card"
        ]

    await flow.on_command(Command(ALICE, DM, "push", (SEARCH_RUN,)))
    for _ in range(500):  # Alice's card goes out (with a database: once claimed and logged there)
        if dealt():
            break
        await asyncio.sleep(0.01)
    started = time.monotonic()
    await flow.close(grace=0.3)
    assert 0.25 <= time.monotonic() - started < 2 and not flow._tasks
    assert dealt() == [ALICE.id]  # Bob's card never went out, and is not logged as dealt


def _scenarios(store: Store) -> str:
    """A run rated on code validity (which asks how sure, then the issues after parses or broken)
    and on answer quality (which asks no confidence)."""
    from evaluation import ItemData, Query, QueryEvaluation, RunHeader

    items = [
        QueryEvaluation(
            run_id="scenarios",
            data=ItemData(id=f"s{n}", query=Query(query=f"scenario {n}"), answer="x = 1"),
        )
        for n in range(3)
    ]
    store.create_run(
        RunHeader(run_id="scenarios", kind="scenario", dimensions=["code-validity", "answer"]),
        items,
    )
    return "scenarios"


def _tokens(flow: ChatFlow, card: Card) -> dict[str, str]:
    return {c.label: c.data for row in flow.keyboard(card, group=False) for c in row}


async def test_confidence_answers_and_skip_reasons_travel_in_checked_tokens(
    demo_store: Store,
) -> None:
    from bot.chat import texts

    port = MemoryPort()
    flow = _flow(demo_store, port)
    await flow.on_command(Command(ALICE, DM, "review", (_scenarios(demo_store),)))
    card = port.cards()[0]
    await _tap(flow, port, card, "Doesn't parse", "e1")
    tokens = _tokens(flow, port.edits[card.id])
    assert list(tokens)[:4] == ["High", "Medium", "Low", "Skip"] and all(
        len(t.encode()) <= 64 for t in tokens.values()
    )
    rest = tokens["Low"].split("|", 1)[1]
    forged = [
        f"c9|{rest}",
        f"c|{rest}",
        f"c-1|{rest}",
        f"a9.0|{rest}",
        f"a0.99|{rest}",
        f"a0.-1|{rest}",
        f"a0|{rest}",
        f"s9|{rest}",
        f"y5|{rest}",
        f"dx|{rest}",
        f"r-1|{rest}",
    ]
    await flow.on_command(Command(ALICE, DM, "review", ("scenarios", "answer")))
    trigger = port.cards()[-1]  # its item dealt on answer quality, which asks no confidence
    trigger_rest = port.token(trigger, "Skip").split("|", 1)[1]
    messages = [card.id] * len(forged) + [trigger.id] * 2
    forged += [f"c0|{trigger_rest}", f"dc|{trigger_rest}"]
    for n, (data, message) in enumerate(zip(forged, messages)):
        await flow.on_tap(Tap(ALICE, DM, message, data, f"f{n}"))
        await flow.close()
        assert port.answers[f"f{n}"] == (texts.STALE_BUTTON, True), data
    assert (
        len([r for r in demo_store.human_events() if isinstance(r, Rating)]) == 1
    )  # nothing forged was written
    await flow.on_tap(Tap(ALICE, DM, card.id, tokens["Low"], "e2"))
    await flow.close()
    tokens = _tokens(flow, port.edits[card.id])
    assert port.edits[card.id].prompt.startswith("Which issues?") and "syntax error" in tokens
    await flow.on_tap(Tap(ALICE, DM, card.id, tokens["syntax error"], "e3"))
    await flow.on_tap(
        Tap(ALICE, DM, card.id, tokens["syntax error"], "e3")
    )  # redelivered: counted once
    await flow.close()
    [latest] = [r for r in demo_store.human_events() if isinstance(r, Rating)][-1:]
    assert (latest.confidence, latest.labels.code_issues) == ("low", ["syntax error"])
    assert len([r for r in demo_store.human_events() if isinstance(r, Rating)]) == 3
    second = port.cards()[1]
    assert second.card.dimension == "code-validity"
    await _tap(flow, port, second, "Skip", "e4")
    reasons = _tokens(flow, port.edits[second.id])
    assert list(reasons)[:4] == [
        "Unclear item",
        "Needs expertise I don't have",
        "Broken item",
        "Other…",
    ]
    assert await _tap(
        flow,
        port,
        Sent(
            second.chat,
            second.id,
            "",
            port.edits[second.id],
            flow.keyboard(port.edits[second.id], group=False),
        ),
        "Broken item",
        "e5",
    ) == ("Skipped: broken item", False)
    skips = [r.skip_reason for r in demo_store.human_events() if type(r).__name__ == "Skip"]
    assert skips == [None, "broken item"]


async def test_an_item_or_dimension_index_is_plain_digits_never_negative_or_signed(
    demo_store: Store,
) -> None:
    """``-13`` is item 5 of 18 to Python's indexing, `` 5``, ``+5`` and ``٥`` are 5 to ``int``: all
    refused."""
    from bot.chat import texts

    port = MemoryPort()
    flow = _flow(demo_store, port)
    await flow.on_command(Command(ALICE, DM, "review", (SEARCH_RUN,)))
    card = port.cards()[0]
    op, key, index, dim = port.token(card, "good").split("|")
    count = len(flow.engine.run(SEARCH_RUN).items)
    negative = str(int(index) - count)
    forged = [
        f"{op}|{key}|{negative}|{dim}",
        f"{op}|{key}|{index}|-1",
        f"{op}|{key}|+{index}|{dim}",
        f"{op}|{key}| {index}|{dim}",
        f"{op}|{key}|{index}|\u0660",
        f"{op}|{key}|0{index}|{dim}",
        f"{op}|{key}|{index}|{dim} ",
    ]
    for n, data in enumerate(forged):
        await flow.on_tap(Tap(ALICE, DM, card.id, data, f"f{n}"))
        await flow.close()
        assert port.answers[f"f{n}"] == (texts.STALE_BUTTON, True), data
    assert [r for r in demo_store.human_events() if isinstance(r, Rating)] == []
    await flow.on_tap(Tap(ALICE, DM, card.id, f"{op}|{key}|{index}|{dim}", "ok"))
    await flow.close()
    assert len([r for r in demo_store.human_events() if isinstance(r, Rating)]) == 1


async def test_a_concern_tag_on_a_rating_that_asks_for_none_is_refused(demo_store: Store) -> None:
    """A top rating asks no concern tags, so its card offers none: a forged (or old) tag button
    changes nothing."""
    port = MemoryPort()
    flow = _flow(demo_store, port)
    await flow.on_command(Command(ALICE, DM, "review", (SEARCH_RUN,)))
    card = port.cards()[0]
    await _tap(flow, port, card, "poor", "e1")
    tag = next(
        c.data
        for row in flow.keyboard(port.edits[card.id], group=False)
        for c in row
        if c.data.startswith("t")
    )
    await _tap(flow, port, card, "good", "e2")
    await flow.on_tap(Tap(ALICE, DM, card.id, tag, "e3"))
    await flow.close()
    assert port.answers["e3"][1] is True
    ratings = [r for r in demo_store.human_events() if isinstance(r, Rating)]
    assert ratings[-1].judgment == "good" and ratings[-1].concerns == []
