"""The PostgreSQL store against a real server: several replicas, one log.

- Two stores on one database (two bot replicas, each with its data directory) hold the same files,
  byte for byte, in the same order; a record sent twice (two replicas at once) is stored once.
- The event table is append-only; a run id is taken once across replicas.
- A line committed late by an older transaction is pulled, never skipped.
- The data directory is a disposable copy: cut short it is pulled again, longer than its state it
  is cut back; a directory of JSONL logs, or another database's copy, is refused untouched.
- Claims: never more than ``k`` per item, never the same item twice to a reviewer, expiry once.
- A database that stops and comes back: the append in between fails (unacknowledged), the next
  ones work, soon after the database is back.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from bot.demo import RAG_RUN, SEARCH_RUN, build_demo
from evaluation import HilbotError, Store
from evaluation.backends import Claim, StoreError
from evaluation.backends.postgres import PostgresBackend
from evaluation.log import encode, read_log
from evaluation.records import (
    Delivery,
    ItemData,
    Query,
    QueryEvaluation,
    Rating,
    Reviewer,
    RunHeader,
    Skip,
)
from evaluation.reviews import Ledger
from tests.pgserver import PostgresServer

RUN = "claims"
DIM = "overall"


# ---------------------------------------------------------------------------- helpers


def rating(
    key: str,
    *,
    reviewer: str = "ana",
    item: str = "q01",
    run_id: str = SEARCH_RUN,
    judgment: str = "good",
) -> Rating:
    return Rating(
        run_id=run_id,
        item_id=item,
        reviewer=Reviewer(platform="telegram", id=reviewer),
        channel="telegram",
        idempotency_key=key,
        judgment=judgment,
        score=1.0 if judgment == "good" else 0.1,
    )


def keys_in(path: Path) -> list[str]:
    """The idempotency keys of a log's records, in file order."""
    return [r.idempotency_key for r in read_log(path, []) if hasattr(r, "idempotency_key")]


def logs(root: Path) -> dict[str, bytes]:
    """Every log of a data directory (ratings.jsonl, runs/*.jsonl) and its bytes."""
    found = sorted([root / "ratings.jsonl", *(root / "runs").glob("*.jsonl")])
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in found if p.exists()}


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root``, with a file's bytes (None: a directory)."""
    return {
        p.relative_to(root).as_posix(): (None if p.is_dir() else p.read_bytes())
        for p in sorted(root.rglob("*"))
    }


def make_run(store: Store, run_id: str = RUN, items: int = 10) -> list[str]:
    """A run of ``items`` items (``i0``…), created through ``store``; their ids."""
    ids = [f"i{n}" for n in range(items)]
    store.create_run(
        RunHeader(run_id=run_id, item_count=items),
        [QueryEvaluation(run_id=run_id, data=ItemData(id=i, query=Query(query=i))) for i in ids],
    )
    return ids


def claim(
    store: Store,
    reviewer: str,
    items: list[str],
    *,
    k: int = 1,
    room: int = 1,
    expiry_s: float = 3600.0,
) -> list[str]:
    return store.claim(Claim(RUN, DIM, f"telegram:{reviewer}", tuple(items), k, room, expiry_s))


def claim_rows(url: str) -> list[tuple[str, str, str]]:
    """(item, reviewer key, state) of every row of hilbot_claims."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT item_id, reviewer_key, state FROM hilbot_claims ORDER BY 1, 2"
        ).fetchall()
    return [(str(a), str(b), str(c)) for a, b, c in rows]


@pytest.fixture
def stores(pg_url: str, tmp_path: Path) -> Iterator[Callable[..., Store]]:
    """``stores(name)``: a store on the test's database with the data directory ``tmp/name``
    (another name: another replica); all are closed at the end."""
    opened: list[Store] = []

    def open_store(name: str = "a", url: str = pg_url) -> Store:
        store = Store(tmp_path / name, url=url)
        opened.append(store)
        return store

    yield open_store
    for store in opened:
        store.close()


# ---------------------------------------------------------------------------- two replicas


def test_a_demo_built_through_one_replica_is_byte_identical_in_the_other(stores):
    one, two = stores("a"), stores("b")
    assert one.shared and two.shared
    build_demo(one)

    two.sync()
    copied = logs(two.root)
    assert set(copied) == {f"runs/{SEARCH_RUN}.jsonl", f"runs/{RAG_RUN}.jsonl"}
    assert copied == logs(one.root)
    assert two.load_run(SEARCH_RUN).items == one.load_run(SEARCH_RUN).items
    assert len(two.load_run(RAG_RUN).items) == 12

    again = stores("c")  # a replica started later copies it all at its start
    assert logs(again.root) == copied


def test_ratings_of_both_replicas_reach_both_copies_in_one_order(stores):
    one, two = stores("a"), stores("b")
    build_demo(one)
    sent = []
    for n in range(12):
        writer = (one, two)[n % 3 == 1]  # interleaved: a b a a b a a b…
        writer.ratings.append(rating(f"k{n}", reviewer=f"r{n % 4}", item=f"q{n + 1:02d}"))
        sent.append(f"k{n}")
        if n % 5 == 0:
            one.sync()
    two.ratings.append_many([rating("m1"), rating("m2", reviewer="ben")])
    sent += ["m1", "m2"]

    one.sync()
    two.sync()
    assert keys_in(one.root / "ratings.jsonl") == sent
    assert logs(one.root) == logs(two.root)
    assert [r.idempotency_key for r in two.human_events()] == sent  # what the readers read


def test_one_rating_sent_by_two_replicas_at_once_is_stored_once(stores):
    one, two = stores("a"), stores("b")
    errors: list[BaseException] = []

    def send(store: Store, record: Rating, start: threading.Barrier) -> None:
        start.wait()
        try:
            store.ratings.append(record)
        except BaseException as exc:  # noqa: BLE001  (reported by the assertion below)
            errors.append(exc)

    for n in range(15):
        start = threading.Barrier(2)
        # the same event (one idempotency key), sent twice: as two replicas would send it
        threads = [
            threading.Thread(target=send, args=(one, rating(f"k{n}", judgment="good"), start)),
            threading.Thread(target=send, args=(two, rating(f"k{n}", judgment="poor"), start)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert errors == []

    one.sync()
    two.sync()
    assert keys_in(one.root / "ratings.jsonl") == [f"k{n}" for n in range(15)]
    assert logs(one.root) == logs(two.root)
    with psycopg.connect(one.url) as conn:
        stored = conn.execute("SELECT count(*) FROM hilbot_events").fetchone()
    assert stored == (15,)


def test_one_batch_holding_a_key_twice_and_a_changed_mind_is_stored(stores, pg_url):
    store = stores()
    make_run(store, RUN, items=1)
    store.ratings.append_many(
        [
            rating("k1", item="i0", run_id=RUN),
            rating("k1", item="i0", run_id=RUN, judgment="poor"),  # the same event again
            rating("k2", item="i0", run_id=RUN, judgment="poor"),  # her second thought
        ]
    )
    store.sync()
    assert [(r.idempotency_key, r.judgment) for r in store.human_events()] == [
        ("k1", "good"),
        ("k2", "poor"),
    ]
    assert claim_rows(pg_url) == [("i0", "telegram:ana", "done")]


def test_the_event_table_refuses_update_delete_and_truncate(stores, pg_url):
    store = stores()
    store.ratings.append_many([rating("k1"), rating("k2", reviewer="ben")])
    store.sync()
    before = logs(store.root)
    for statement in (
        "UPDATE hilbot_events SET line = convert_to('{}' || chr(10), 'UTF8')",
        "DELETE FROM hilbot_events WHERE idempotency_key = 'k1'",
        "TRUNCATE hilbot_events",
    ):
        with psycopg.connect(pg_url, autocommit=True) as conn:
            with pytest.raises(psycopg.Error, match="append-only"):
                conn.execute(statement)
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT idempotency_key FROM hilbot_events ORDER BY seq").fetchall()
    assert rows == [("k1",), ("k2",)]
    assert set(before) == {"ratings.jsonl"}
    assert logs(stores("b").root) == before


# ---------------------------------------------------------------------------- runs


def test_a_run_id_taken_by_another_replica_is_refused_in_one_line(stores):
    one, two = stores("a"), stores("b")
    make_run(one, "r1", items=2)
    copy = (one.root / "runs" / "r1.jsonl").read_bytes()

    header = RunHeader(run_id="r1", label="the second")
    with pytest.raises(HilbotError) as caught:
        two.create_run(header, [])
    message = str(caught.value)
    assert "\n" not in message and "'r1' already exists" in message
    with pytest.raises(HilbotError, match="already exists"):
        two.start_run(header)

    two.sync()
    one.sync()
    assert (two.root / "runs" / "r1.jsonl").read_bytes() == copy  # the first run, unchanged
    assert (one.root / "runs" / "r1.jsonl").read_bytes() == copy

    placed = two.create_run(header, [], generated=True)
    assert placed == two.root / "runs" / "r1-2.jsonl"
    head = two.run_header("r1-2")
    assert head is not None and (head.run_id, head.label) == ("r1-2", "the second")
    one.sync()
    assert logs(one.root) == logs(two.root)
    assert sorted(one.run_ids()) == ["r1", "r1-2"]


# ---------------------------------------------------------------------------- ordering


def test_a_line_an_older_transaction_commits_late_is_never_skipped(stores, pg_url):
    one = stores("a")
    one.ratings.append(rating("first"))
    late = encode(rating("late", reviewer="ben"))
    with psycopg.connect(pg_url) as slow:
        # its transaction id is taken now, before the store's append below
        slow.execute("SELECT pg_current_xact_id()")
        slow.execute(
            "INSERT INTO hilbot_events (stream, idempotency_key, digest, line) "
            "VALUES ('ratings', 'late', %s, %s)",
            (hashlib.sha256(late).digest(), late),
        )
        one.ratings.append(rating("early", reviewer="caro"))
        one.sync()
        assert "late" not in keys_in(one.root / "ratings.jsonl")
        slow.commit()

    one.sync()
    stored = keys_in(one.root / "ratings.jsonl")
    assert sorted(stored) == ["early", "first", "late"]  # each once: nothing skipped
    assert stored.index("late") < stored.index("early")  # the log's order: by transaction
    assert logs(stores("b").root) == logs(one.root)  # a replica starting now: the same order
    assert one.sync() == []


# ---------------------------------------------------------------------------- the copy


def test_a_copy_cut_short_or_deleted_is_pulled_again_whole(stores):
    one = stores("a")
    build_demo(one)
    one.ratings.append_many([rating("k1"), rating("k2", reviewer="ben")])
    one.sync()
    whole = logs(one.root)
    assert set(whole) == {"ratings.jsonl", f"runs/{SEARCH_RUN}.jsonl", f"runs/{RAG_RUN}.jsonl"}

    run_file = one.root / "runs" / f"{SEARCH_RUN}.jsonl"
    run_file.write_bytes(run_file.read_bytes()[:1000])
    one.sync()
    assert logs(one.root) == whole

    (one.root / "ratings.jsonl").unlink()
    assert [r.idempotency_key for r in one.human_events()] == ["k1", "k2"]
    assert logs(one.root) == whole

    (one.root / "ratings.jsonl").write_bytes(whole["ratings.jsonl"][:-5])
    restarted = stores("a")  # a replica restarting on its damaged copy
    assert logs(restarted.root) == whole


def test_a_copy_longer_than_its_state_is_cut_back(stores):
    one, two = stores("a"), stores("b")
    build_demo(one)
    one.ratings.append(rating("k1"))
    one.sync()
    state_file = one.root / "cache" / "store" / "mirror.json"
    state = state_file.read_bytes()

    two.ratings.append_many([rating("k2", reviewer="ben"), rating("k3", reviewer="caro")])
    make_run(two, "new", items=2)  # a file the copy had not begun yet
    one.sync()
    assert keys_in(one.root / "ratings.jsonl") == ["k1", "k2", "k3"]
    assert (one.root / "runs" / "new.jsonl").exists()
    state_file.write_bytes(state)  # a crash after the lines were written, before the state was

    one.sync()
    assert keys_in(one.root / "ratings.jsonl") == ["k1", "k2", "k3"]  # once each
    assert len(list(read_log(one.root / "runs" / "new.jsonl", []))) == 3  # header, 2 items
    two.sync()
    assert logs(one.root) == logs(two.root)

    with open(one.root / "ratings.jsonl", "ab") as handle:  # a torn write past the state
        handle.write(b'{"type": "rating", "run_id": "x", "ite')
    one.sync()
    assert logs(one.root) == logs(two.root)


@pytest.mark.parametrize("damage", [b"", b'{"identity": "postgresql:', b"\xff\xfe"])
def test_a_damaged_copy_state_pulls_the_copy_again_whole(stores, damage):
    one, two = stores("a"), stores("b")
    build_demo(one)
    two.ratings.append_many([rating("k1"), rating("k2", reviewer="ben")])
    one.sync()
    two.sync()
    (one.root / "cache" / "store" / "mirror.json").write_bytes(damage)  # a crash, a full disk

    one.sync()
    assert keys_in(one.root / "ratings.jsonl") == ["k1", "k2"]  # once each
    assert logs(one.root) == logs(two.root)
    assert len(one.load_run(SEARCH_RUN).items) == 18


def test_a_data_dir_holding_jsonl_logs_is_refused_and_left_untouched(postgres, pg_url, tmp_path):
    local = Store(tmp_path / "results")
    build_demo(local)
    local.ratings.append(rating("k1"))
    before = tree(local.root)
    url = postgres.create_database("t_refused")  # a database of its own: its connections counted
    try:
        with pytest.raises(StoreError) as caught:
            Store(local.root, url=url)
        message = str(caught.value)
        assert "\n" not in message
        assert f"hilbot store import {local.root}" in message
        assert tree(local.root) == before  # not even a lock file
        with psycopg.connect(url) as conn:  # nothing was stored, and no connection is left open
            assert conn.execute("SELECT count(*) FROM hilbot_events").fetchone() == (0,)
            _no_other_connection(conn)
    finally:
        postgres.drop_database("t_refused")


def test_a_data_dir_mirroring_another_database_is_refused(stores, postgres, pg_url):
    one = stores("a")
    one.ratings.append(rating("k1"))
    copy = tree(one.root)
    database = f"{urlsplit(pg_url).path.lstrip('/')}_other"
    other = postgres.create_database(database)
    try:
        with pytest.raises(StoreError, match="read copy of another store") as caught:
            Store(one.root, url=other)
        assert "\n" not in str(caught.value)
        assert tree(one.root) == copy
        with psycopg.connect(other) as conn:
            _no_other_connection(conn)
    finally:
        postgres.drop_database(database)
    assert keys_in(stores("a").root / "ratings.jsonl") == ["k1"]  # its own database: still fine


def _no_other_connection(conn: psycopg.Connection) -> None:
    """No hilbot connection is left open to ``conn``'s database (a store that failed to open
    closed its pool); waits a moment for the server to see them go."""
    query = (
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid() AND application_name = 'hilbot'"
    )
    deadline = time.monotonic() + 5
    while (row := conn.execute(query).fetchone()) != (0,) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert row == (0,)


# ---------------------------------------------------------------------------- claims


def test_with_k_1_one_reviewer_gets_an_item_and_never_twice(stores):
    one, two = stores("a"), stores("b")
    items = make_run(one, items=3)
    assert claim(one, "ana", items[:1]) == ["i0"]
    assert claim(two, "ben", items[:1]) == []  # another replica: already claimed
    assert claim(two, "ana", items[:1], k=2) == []  # the same reviewer: never twice
    assert claim(two, "ben", items, room=2) == ["i1", "i2"]
    assert claim(one, "ana", items, room=3) == []  # i1 and i2 are ben's; i0 was hers
    assert claim_rows(one.url) == [
        ("i0", "telegram:ana", "open"),
        ("i1", "telegram:ben", "open"),
        ("i2", "telegram:ben", "open"),
    ]


def test_with_k_2_two_reviewers_get_an_item_a_third_not_until_one_releases(stores):
    one, two = stores("a"), stores("b")
    items = make_run(one, items=1)
    assert claim(one, "ana", items, k=2) == ["i0"]
    assert claim(two, "ben", items, k=2) == ["i0"]
    assert claim(one, "caro", items, k=2) == []
    assert claim(two, "ana", items, k=2) == []

    one.release(RUN, DIM, "telegram:ben", "i0")
    assert claim(two, "caro", items, k=2) == ["i0"]
    assert claim(one, "dan", items, k=2) == []
    assert claim(one, "x", ["unknown-item"], k=2) == []  # not an item of the run


def test_an_expired_claim_frees_the_item_for_others_never_for_its_reviewer(stores):
    one, two = stores("a"), stores("b")
    items = make_run(one, items=3)
    assert claim(one, "ana", items, room=2, expiry_s=0.2) == ["i0", "i1"]
    assert claim(two, "ben", items, expiry_s=3600) == ["i2"]
    time.sleep(0.5)

    lines = two.expire()
    assert len(lines) == 2
    assert two.expire() == [] and one.expire() == []  # a claim expires once
    one.sync()
    expired = [r for r in one.human_events() if isinstance(r, Delivery)]
    assert sorted((d.item_id, d.reviewer.key, d.kind) for d in expired) == [
        ("i0", "telegram:ana", "expired"),
        ("i1", "telegram:ana", "expired"),
    ]
    assert sorted(encode(d) for d in expired) == sorted(lines)
    ledger = Ledger.from_events(one.human_events())
    assert ledger.expired == {(RUN, "i0", DIM, "telegram:ana"), (RUN, "i1", DIM, "telegram:ana")}

    assert claim(two, "caro", items, room=3) == ["i0", "i1"]  # i2 is still ben's
    assert claim(one, "ana", items, room=3, k=3) == ["i2"]  # never i0 or i1 again to her


def test_a_rating_marks_its_claim_done_and_a_skip_frees_it(stores):
    one, two = stores("a"), stores("b")
    items = make_run(one, items=2)
    assert claim(one, "ana", items[:1], expiry_s=0.2) == ["i0"]
    assert claim(one, "ben", items[1:], expiry_s=0.2) == ["i1"]
    two.ratings.append(rating("r1", reviewer="ana", item="i0", run_id=RUN))
    skip = Skip(
        run_id=RUN,
        item_id="i1",
        reviewer=Reviewer(platform="telegram", id="ben"),
        channel="telegram",
        idempotency_key="s1",
    )
    two.ratings.append(skip)
    time.sleep(0.5)

    assert one.expire() == []  # answered: nothing to expire
    assert claim_rows(one.url) == [
        ("i0", "telegram:ana", "done"),
        ("i1", "telegram:ben", "skipped"),
    ]
    assert claim(two, "caro", items, room=2) == ["i1"]  # i0 is rated (k=1): only the skipped one
    assert claim(two, "ben", items, room=2, k=2) == ["i0"]  # never i1 again


def test_twenty_replicas_threads_never_claim_an_item_more_than_k_times(stores):
    replicas = [stores("a"), stores("b")]
    items = make_run(replicas[0], items=10)
    start = threading.Barrier(20)
    got: dict[str, list[str]] = {}
    errors: list[BaseException] = []

    def deal(n: int) -> None:
        store, reviewer = replicas[n % 2], f"r{n:02d}"
        order = items[n % 10 :] + items[: n % 10]
        start.wait()
        try:
            mine: list[str] = []
            deadline = time.monotonic() + 30
            while not mine and time.monotonic() < deadline:  # another dealer may lock them all
                mine = claim(store, reviewer, order, k=2)
            got[reviewer] = mine
        except BaseException as exc:  # noqa: BLE001  (reported by the assertion below)
            errors.append(exc)

    threads = [threading.Thread(target=deal, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []

    rows = claim_rows(replicas[0].url)
    per_item = {i: sum(1 for item, _, _ in rows if item == i) for i in items}
    assert per_item == {i: 2 for i in items}  # 20 claims fill the 10 items twice, never more
    assert sorted((item, f"telegram:{r}") for r, mine in got.items() for item in mine) == sorted(
        (item, who) for item, who, _ in rows
    )
    assert all(len(mine) == 1 for mine in got.values()) and len(got) == 20


# ---------------------------------------------------------------------------- restarts


def test_an_append_while_the_database_is_down_fails_and_works_once_it_is_back(
    stores, postgres: PostgresServer
):
    one = stores("a")
    one.ratings.append(rating("k1"))
    try:
        postgres.stop()
        with pytest.raises(HilbotError) as caught:
            one.ratings.append(rating("k2", reviewer="ben"))
        message = str(caught.value)
        assert "\n" not in message and f"127.0.0.1:{postgres.port}" in message
        assert "check that PostgreSQL is running" in message
        assert postgres.password not in message
    finally:
        postgres.start()

    one.sync()
    assert keys_in(one.root / "ratings.jsonl") == ["k1"]  # the failed one was not stored
    one.ratings.append(rating("k2", reviewer="ben"))
    postgres.restart()
    one.ratings.append(rating("k3", reviewer="caro"))
    one.sync()
    assert keys_in(one.root / "ratings.jsonl") == ["k1", "k2", "k3"]
    assert logs(stores("b").root) == logs(one.root)


def test_the_store_answers_soon_after_a_long_outage(pg_url, postgres: PostgresServer):
    first, second = encode(rating("k1")), encode(rating("k2"))
    backend = PostgresBackend(pg_url, timeout_s=1.0)
    try:
        backend.append("ratings", [first])
        try:
            postgres.stop()
            down = time.monotonic()
            with pytest.raises(StoreError):
                backend.append("ratings", [second])
            time.sleep(max(0.0, 8.0 - (time.monotonic() - down)))
        finally:
            postgres.start()
        back = time.monotonic()
        while True:  # a bot retries; how long until the database is used again
            try:
                assert backend.append("ratings", [second]) == 1
                break
            except StoreError:
                assert time.monotonic() - back < 20
        assert time.monotonic() - back < 3.0
        lines, _ = backend.pull("")
        assert [line.data for line in lines] == [first, second]
    finally:
        backend.close()
