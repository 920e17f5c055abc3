"""The database store going away under a running bot: nothing is acknowledged that is not stored,
and once the database is back the same bot records again, each tap once.
"""

from __future__ import annotations

import pytest

from bot.chat import Chat, Command, Tap
from bot.demo import build_demo
from evaluation import HilbotError, Rating, Store
from tests.bot.chat.test_chat_core import ALICE, DM, MemoryPort, _flow
from tests.conftest import SEARCH_RUN


async def test_a_tap_during_a_database_outage_is_not_answered_and_counts_once_after(
    postgres, pg_url, tmp_path
) -> None:
    store = Store(tmp_path / "results", url=pg_url)
    build_demo(store)
    port = MemoryPort()
    flow = _flow(store, port)
    await flow.on_command(Command(ALICE, DM, "review", (SEARCH_RUN,)))
    [card] = port.cards()
    tap = Tap(ALICE, Chat(card.chat), card.id, port.token(card, "good"), "e1")
    postgres.stop()
    try:
        with pytest.raises(HilbotError) as caught:
            await flow.on_tap(tap)
        assert "check that PostgreSQL is running" in caught.value.one_line()
        assert postgres.password not in caught.value.one_line()
        assert "e1" not in port.answers  # not acknowledged: the platform will deliver it again
    finally:
        postgres.start()
    await flow.on_tap(tap)  # redelivered once the database is back
    await flow.close()
    assert port.answers["e1"] == ("Recorded: good", False)
    await flow.on_tap(tap)  # and again: still one rating
    await flow.close()
    store.sync()
    ratings = [r for r in store.human_events() if isinstance(r, Rating)]
    assert [(r.item_id, r.idempotency_key) for r in ratings] == [
        (card.card.item_id, "memory:cq:e1")
    ]
