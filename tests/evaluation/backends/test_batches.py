"""Appends that arrive together share one transaction: whatever a batch holds, it is stored whole.

A batch may hold several records about one claim (a rating and its change, a follow-up answer, a
card delivered twice); the claims table is kept in step with one row per claim and statement.
"""

from __future__ import annotations

import asyncio

import psycopg

from bot.demo import build_demo
from evaluation import Delivery, Rating, Reviewer, Skip, Store

ANN = Reviewer(platform="telegram", id="7")


def rating(run_id: str, item_id: str, key: str, judgment: str = "good") -> Rating:
    scores = {"good": 1.0, "okay": 0.7, "poor": 0.4}
    return Rating(
        run_id=run_id,
        item_id=item_id,
        dimension="overall",
        reviewer=ANN,
        judgment=judgment,
        score=scores[judgment],
        idempotency_key=key,
        action=f"rate:{judgment}",
    )


def claims(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT item_id, state FROM hilbot_claims ORDER BY item_id").fetchall()
    return [(item, state) for item, state in rows]


def test_a_batch_holding_a_claim_twice_is_stored_whole(pg_url, tmp_path) -> None:
    store = Store(tmp_path / "results", url=pg_url)
    build_demo(store)
    run = store.load_run("demo-docs-search")
    first, second = run.items[0].id, run.items[1].id
    about = {"run_id": run.run_id, "item_id": second, "dimension": "overall", "reviewer": ANN}
    card = Delivery(**about, channel="telegram", chat_id="7", message_id="1")
    batch = [
        rating(run.run_id, first, "k1", "good"),
        rating(run.run_id, first, "k2", "poor"),
        card,
        card.model_copy(update={"message_id": "2"}),
        Skip(**about, idempotency_key="k3", action="skip"),
    ]
    store.ratings.append_many(batch)
    store.sync()
    keys = [getattr(r, "idempotency_key", None) for r in store.ratings.read()]
    assert keys == ["k1", "k2", None, None, "k3"]
    assert claims(pg_url) == [(first, "done"), (second, "skipped")]


async def test_concurrent_async_appends_share_transactions_and_all_are_stored(
    pg_url, tmp_path
) -> None:
    store = Store(tmp_path / "results", url=pg_url)
    build_demo(store)
    run = store.load_run("demo-docs-search")
    items = [item.id for item in run.items]
    await asyncio.gather(
        *(
            store.ratings.aappend(rating(run.run_id, items[n % len(items)], f"a{n}"))
            for n in range(200)
        )
    )
    assert store.ratings.fsyncs < 200  # appends that came together shared a transaction
    store.sync()
    keys = sorted(r.idempotency_key for r in store.ratings.read())
    assert keys == sorted(f"a{n}" for n in range(200))
