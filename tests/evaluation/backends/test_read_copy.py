"""A database store's read copy opened without the database: readable, never written.

A line appended to the copy would not be in the store, and the next sync would cut it off; so the
JSONL backend refuses every write there, with the fix, and leaves the copy as it was.
"""

from __future__ import annotations

import pytest

from bot.demo import build_demo
from evaluation import HilbotError, Rating, Reviewer, RunHeader, Store


def rating(run_id: str, item_id: str, key: str) -> Rating:
    return Rating(
        run_id=run_id,
        item_id=item_id,
        dimension="overall",
        reviewer=Reviewer(id="ann"),
        judgment="good",
        score=1.0,
        idempotency_key=key,
        action="rate:good",
    )


@pytest.fixture
def copy(pg_url, tmp_path) -> Store:
    shared = Store(tmp_path / "copy", url=pg_url)
    build_demo(shared)
    run = shared.load_run("demo-docs-search")
    shared.ratings.append(rating(run.run_id, run.items[0].id, "k-shared"))
    shared.sync()
    shared.close()
    return Store(tmp_path / "copy")


def snapshot(store: Store) -> dict[str, bytes]:
    return {
        str(p.relative_to(store.root)): p.read_bytes()
        for p in sorted(store.root.rglob("*.jsonl"))
    }


def test_a_read_copy_is_read_without_the_database(copy: Store) -> None:
    assert copy.copy and not copy.shared
    assert set(copy.run_ids()) == {"demo-docs-search", "demo-rag-answers"}
    assert len(copy.load_run("demo-docs-search").items) == 18
    assert [r.idempotency_key for r in copy.human_events()] == ["k-shared"]


def test_every_write_to_a_read_copy_is_refused_and_nothing_changes(copy: Store) -> None:
    before = snapshot(copy)
    run = copy.load_run("demo-docs-search")
    with pytest.raises(HilbotError, match="read copy of a database store") as caught:
        copy.ratings.append(rating(run.run_id, run.items[0].id, "k-copy-1"))
    assert "HILBOT_STORE_URL" in caught.value.one_line()
    with pytest.raises(HilbotError, match="read copy"):
        copy.run_log(run.run_id).append(rating(run.run_id, run.items[0].id, "k-copy-2"))
    with pytest.raises(HilbotError, match="read copy"):
        copy.create_run(RunHeader(run_id="fresh", kind="search", dimensions=["overall"]), [])
    assert snapshot(copy) == before
    assert not copy.run_exists("fresh")


def test_the_cli_refuses_to_write_a_read_copy_in_one_line(copy: Store, run_cli) -> None:
    before = snapshot(copy)
    result = run_cli("--data-dir", str(copy.root), "demo")
    assert result.returncode == 2, result.stderr
    assert "read copy" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert snapshot(copy) == before
