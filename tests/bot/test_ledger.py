"""The ledger folded run by run from the columnar index answers as the fold of the whole log.

Generated chat logs (ratings, skips, notes, typed answers, re-ratings, redeliveries across runs,
adjudications sharing keys, cards, note prompts, session starts, bad lines) are read both ways:
first what crosses runs (sessions, open prompts, chats, the runs each reviewer took part in,
every idempotency key, every chat message), before any run is folded; then every run's state.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.review_state import review_state
from bot import ReviewEngine
from bot.demo import RAG_RUN, SEARCH_RUN, build_demo
from bot.ledger import LazyLedger
from evaluation import Ledger, Store, load_config
from evaluation.log import read_log
from evaluation.records import Rating, Reviewer
from tests.auxil.review_logs import write_review_log

RUNS = [SEARCH_RUN, RAG_RUN]
DIMENSIONS = ["overall", "completeness"]


def _both(root: Path, seed: int, monkeypatch) -> tuple[Store, Ledger, LazyLedger]:
    monkeypatch.setenv("HILBOT_INDEX_MIN_BYTES", "0")  # index this small log too
    store = Store(root / "results")
    build_demo(store)
    write_review_log(store, seed, RUNS, chat=True, events=400)
    whole = Ledger.from_events(read_log(store.ratings.path))
    state = review_state(store.ratings.path)
    assert state is not None, "the index was not used"
    return store, whole, LazyLedger.of(state)


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ledger")


def _reviewers(whole: Ledger) -> list[str]:
    found = {k[3] for k in whole.judgments} | {k[3] for k in whole.notes}
    return sorted(found | set(whole.sessions) | {k[0] for k in whole.streams})


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_what_crosses_runs_is_the_whole_folds_before_any_run_is_read(root, seed):
    with pytest.MonkeyPatch.context() as patch:
        store, whole, lazy = _both(root / str(seed), seed, patch)
    assert lazy.loaded == set()
    assert lazy.sessions == whole.sessions
    assert lazy.prompts == whole.prompts
    assert lazy.streams == whole.streams
    for who in _reviewers(whole):
        assert lazy.reviewed_runs(who) == whole.reviewed_runs(who), who
    for key in [*whole.seen_keys, "never-used"]:
        assert lazy.repeat(key) == whole.repeat(key), key
    for message in whole.messages:
        assert lazy.message(*message) == whole.message(*message), message
    assert lazy.message("telegram", "nobody", "1") is None
    assert lazy.loaded == set(), "a run was folded to answer what crosses runs"


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_every_run_folded_from_the_index_is_the_whole_folds(root, seed):
    with pytest.MonkeyPatch.context() as patch:
        store, whole, lazy = _both(root / f"runs-{seed}", seed, patch)
    for run_id in RUNS:
        items = [i.id for i in store.load_run(run_id).items]
        for ledger in (whole, lazy):
            ledger.register_run(run_id, items)
        reviewers = [Reviewer(platform="telegram", id=f"r{n}") for n in range(5)]
        for dimension in DIMENSIONS:
            for reviewer in reviewers:
                for k in (1, 2, 3):
                    assert lazy.left(run_id, dimension, reviewer, k) == whole.left(
                        run_id, dimension, reviewer, k
                    )
                assert lazy.open_cards(run_id, dimension, reviewer) == whole.open_cards(
                    run_id, dimension, reviewer
                )
                assert lazy.counts(run_id, dimension, reviewer) == whole.counts(
                    run_id, dimension, reviewer
                )
            for item in items:
                assert lazy.holders(run_id, item, dimension) == whole.holders(
                    run_id, item, dimension
                )
                assert lazy.rating_count(run_id, item, dimension) == whole.rating_count(
                    run_id, item, dimension
                )
    assert lazy.loaded == set(RUNS)
    for table in ("judgments", "notes", "adjudications", "cards", "messages", "streams"):
        assert dict(getattr(lazy, table)) == dict(getattr(whole, table)), table
    assert {k: list(v) for k, v in lazy.hands.items()} == {
        k: list(v) for k, v in whole.hands.items()
    }
    assert lazy.sessions == whole.sessions and lazy.prompts == whole.prompts


def test_an_event_whose_key_a_run_not_read_yet_holds_is_a_redelivery(tmp_path, monkeypatch):
    store, whole, lazy = _both(tmp_path, 7, monkeypatch)
    old = next(r for r in read_log(store.ratings.path) if isinstance(r, Rating))
    other = RAG_RUN if old.run_id == SEARCH_RUN else SEARCH_RUN
    item = store.load_run(other).items[0].id
    again = old.model_copy(update={"run_id": other, "item_id": item})
    assert whole.add(again) is False
    assert lazy.add(again) is False
    assert lazy.judgment(other, item, again.dimension, again.reviewer) == whole.judgment(
        other, item, again.dimension, again.reviewer
    )
    fresh = again.model_copy(update={"idempotency_key": "a-new-key"})
    assert lazy.add(fresh) is True and whole.add(fresh) is True
    assert lazy.repeat("a-new-key") == whole.repeat("a-new-key") is not None


def test_a_looked_up_table_folds_the_run_first(tmp_path, monkeypatch):
    """A run's tables read directly (an adjudication, a card, a judgment) fold the run first."""
    store, whole, lazy = _both(tmp_path, 11, monkeypatch)
    for key, adjudication in whole.adjudications.items():
        fresh = LazyLedger.of(lazy.state)
        assert fresh.adjudications[key] == adjudication
        assert key[0] in fresh.loaded
    for key in list(whole.judgments)[:20]:
        fresh = LazyLedger.of(lazy.state)
        assert key in fresh.judgments and fresh.judgments.get(key) == whole.judgments[key]
    with pytest.raises(KeyError):
        LazyLedger.of(lazy.state).cards[(SEARCH_RUN, "no-such-item", "overall", "telegram:r1")]


def test_the_engine_starts_from_the_index_only_for_a_long_log(tmp_path, monkeypatch):
    store = Store(tmp_path / "results")
    build_demo(store)
    write_review_log(store, 3, RUNS, chat=True, events=300)
    monkeypatch.delenv("HILBOT_INDEX_MIN_BYTES", raising=False)
    assert not isinstance(ReviewEngine(store, load_config(None)).ledger, LazyLedger)  # < 1 MiB
    monkeypatch.setenv("HILBOT_INDEX_MIN_BYTES", "0")
    engine = ReviewEngine(store, load_config(None))
    assert isinstance(engine.ledger, LazyLedger) and engine.ledger.loaded == set()
    engine.session(SEARCH_RUN, Reviewer(platform="telegram", id="r1"))
    assert engine.ledger.loaded == {SEARCH_RUN}
    monkeypatch.setenv("HILBOT_NO_INDEX", "1")
    assert not isinstance(ReviewEngine(store, load_config(None)).ledger, LazyLedger)


def test_folding_a_stream_at_once_is_folding_it_event_by_event(tmp_path, monkeypatch):
    """``from_events`` recounts each item's load once, after the stream: the same counts as
    recounting on every event."""
    store, whole, _ = _both(tmp_path, 5, monkeypatch)
    stepwise = Ledger()
    for record in read_log(store.ratings.path):
        stepwise.add(record)
    reviewers = [Reviewer(platform="telegram", id=f"r{n}") for n in range(5)]
    for run_id in RUNS:
        items = [i.id for i in store.load_run(run_id).items]
        for ledger in (whole, stepwise):
            ledger.register_run(run_id, items)
        for dimension in DIMENSIONS:
            for reviewer in reviewers:
                for k in (1, 2, 3):
                    assert stepwise.left(run_id, dimension, reviewer, k) == whole.left(
                        run_id, dimension, reviewer, k
                    )
            for item in items:
                key = (run_id, item, dimension)
                assert stepwise.open_reviewers(*key) == whole.open_reviewers(*key)


def test_a_run_is_read_after_another_process_merged_the_chunks_the_bot_started_from(
    tmp_path, monkeypatch
):
    """A digest or an analysis (in this process or another) brings the index up to date; after
    more appends than it keeps chunks, it merges them and removes the files the bot's state was
    read from. The bot reads its runs from the new files, up to the line it started at."""
    from analysis.index import index_dir, indexed
    from analysis.index.log import MAX_CHUNKS

    store, whole, lazy = _both(tmp_path, 13, monkeypatch)
    before = {p.name for p in index_dir(store.ratings.path).glob("*.parquet")}
    lines = store.ratings.path.read_bytes().splitlines(keepends=True)
    for n in range(MAX_CHUNKS + 1):  # appends, each indexed: the chunks are merged
        with open(store.ratings.path, "ab") as log:
            log.write(lines[n % len(lines)])
        assert indexed(store.ratings.path) is not None
    after = {p.name for p in index_dir(store.ratings.path).glob("*.parquet")}
    assert not before & after, "the chunks the state was read from are still there"
    for run_id in RUNS:
        lazy.load(run_id)
    assert dict(lazy.judgments) == dict(whole.judgments)
    assert dict(lazy.cards) == dict(whole.cards)
    assert lazy.message(*next(iter(whole.messages))) == whole.message(*next(iter(whole.messages)))
    who = _reviewers(whole)[0]
    assert lazy.reviewed_runs(who) == whole.reviewed_runs(who)


def test_a_log_an_editor_replaced_while_the_bot_runs_is_read_at_its_new_offsets(
    tmp_path, monkeypatch
):
    """An editor saves the log by rename with its first line one byte longer (the same records):
    every later line moved. The runs, keys and messages the bot reads afterwards come from the new
    file's index, not from offsets into the old one."""
    import os

    store, whole, lazy = _both(tmp_path, 17, monkeypatch)
    data = store.ratings.path.read_bytes()
    fresh = store.ratings.path.with_name(".ratings.jsonl.edit")
    fresh.write_bytes(b"{ " + data[1:])  # the same JSON, one byte longer
    os.replace(fresh, store.ratings.path)
    for key in list(whole.seen_keys)[:60]:
        assert lazy.repeat(key) == whole.repeat(key), key
    for run_id in RUNS:
        lazy.load(run_id)
    assert dict(lazy.judgments) == dict(whole.judgments)
    assert dict(lazy.cards) == dict(whole.cards)
    message = next(iter(whole.messages))
    assert LazyLedger.of(lazy.state).message(*message) == whole.message(*message)
