"""Moving a store between the JSONL files and PostgreSQL (``hilbot store import|export``).

- An import then an export gives back every log byte for byte; a second import stores nothing.
- A torn last line (a crash mid-write) is reported and left out; a line repeating another's
  idempotency key is counted, not stored.
- An export never writes over a file.
- The analyses read either backend and say the same.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from bot.demo import PANEL_RUN, RAG_RUN, SEARCH_RUN, build_demo
from evaluation import HilbotError, Store
from evaluation.backends import Claim, StoreError
from evaluation.backends.moving import export_from, import_into
from evaluation.log import read_log
from evaluation.records import (
    Delivery,
    ItemData,
    Query,
    QueryEvaluation,
    Rating,
    Reviewer,
    RunHeader,
)
from tests.auxil.cli import invoke

RUNS = {f"runs/{r}.jsonl" for r in (SEARCH_RUN, RAG_RUN, PANEL_RUN)}


def rating(key: str, reviewer: str, item: str, judgment: str) -> Rating:
    return Rating(
        run_id=SEARCH_RUN,
        item_id=item,
        reviewer=Reviewer(platform="telegram", id=reviewer),
        channel="telegram",
        idempotency_key=key,
        judgment=judgment,
        score={"good": 1.0, "okay": 0.7, "poor": 0.4}[judgment],
    )


def logs(root: Path) -> dict[str, bytes]:
    """Every log of a data directory (ratings.jsonl, runs/*.jsonl) and its bytes."""
    found = sorted([root / "ratings.jsonl", *(root / "runs").glob("*.jsonl")])
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in found if p.exists()}


def lines_of(files: dict[str, bytes]) -> int:
    return sum(data.count(b"\n") for data in files.values())


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A JSONL data directory: the demo runs, the panel's ratings and a few more."""
    store = Store(tmp_path / "source")
    build_demo(store, panel=True)
    store.ratings.append_many(
        [
            rating("m1", "ana", "q01", "good"),
            rating("m2", "ben", "q01", "poor"),
            rating("m3", "ana", "q02", "okay"),
        ]
    )
    return store.root


def test_an_import_then_an_export_gives_back_every_log_byte_for_byte(source, pg_url, tmp_path):
    files = logs(source)
    assert set(files) == {"ratings.jsonl", *RUNS}
    total = lines_of(files)

    moved = import_into(pg_url, source)
    assert (moved.runs, moved.lines, moved.stored, moved.torn) == (3, total, total, [])
    assert moved.summary("imported") == (
        f"imported {total:,} line(s) of 3 run(s) and the ratings log; 0 already there"
    )

    out = tmp_path / "out"
    exported = export_from(pg_url, out)
    assert (exported.runs, exported.lines, exported.stored) == (3, total, total)
    assert logs(out) == files
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == sorted(
        ["ratings.jsonl", "runs", *RUNS]
    )  # nothing else (no file left aside)


def test_a_second_import_stores_nothing(source, pg_url, tmp_path):
    total = lines_of(logs(source))
    import_into(pg_url, source)
    again = import_into(pg_url, source)
    assert (again.lines, again.stored, again.repeated) == (total, 0, total)
    assert again.summary("imported") == (
        f"imported 0 line(s) of 3 run(s) and the ratings log; {total:,} already there"
    )
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM hilbot_events").fetchone() == (total,)
    export_from(pg_url, tmp_path / "out")
    assert logs(tmp_path / "out") == logs(source)


def test_a_torn_last_line_is_reported_and_left_out(source, pg_url, tmp_path):
    whole = logs(source)
    ratings, run_file = source / "ratings.jsonl", source / "runs" / f"{RAG_RUN}.jsonl"
    with open(ratings, "ab") as handle:
        handle.write(b'{"type": "rating", "run_id": "demo-docs-search", "item_id": "q0')
    with open(run_file, "ab") as handle:
        handle.write(b'{"type": "query_evaluation", "run_id"')

    moved = import_into(pg_url, source)
    run_lines = lines_of({"run": whole[f"runs/{RAG_RUN}.jsonl"]})
    rating_lines = lines_of({"ratings": whole["ratings.jsonl"]})
    torn = [f"{run_file}:{run_lines + 1}", f"{ratings}:{rating_lines + 1}"]
    assert moved.torn == torn
    assert moved.stored == moved.lines == lines_of(whole)
    assert moved.summary("imported").endswith(f"; torn last line left out: {', '.join(torn)}")

    export_from(pg_url, tmp_path / "out")
    assert logs(tmp_path / "out") == whole  # every whole line, and nothing of the torn ones


def test_a_line_repeating_an_idempotency_key_is_counted_not_stored(pg_url, tmp_path):
    store = Store(tmp_path / "source")
    first = rating("same", "ana", "q01", "good")
    again = rating("same", "ana", "q01", "poor")  # a retried event, written twice
    store.ratings.append_many([first, rating("other", "ben", "q01", "good"), again])

    moved = import_into(pg_url, store.root)
    assert (moved.runs, moved.lines, moved.stored, moved.repeated) == (0, 3, 2, 1)
    export_from(pg_url, tmp_path / "out")
    exported = list(read_log(tmp_path / "out" / "ratings.jsonl", []))
    assert [(r.idempotency_key, r.judgment) for r in exported] == [
        ("same", "good"),
        ("other", "good"),
    ]  # the first is what counts, as every reader counts it


def test_an_export_never_writes_over_a_file(source, pg_url, tmp_path):
    import_into(pg_url, source)
    out = tmp_path / "out"
    out.mkdir()
    (out / "ratings.jsonl").write_bytes(b"mine\n")

    with pytest.raises(HilbotError) as caught:
        export_from(pg_url, out)
    message = str(caught.value)
    assert "\n" not in message and "ratings.jsonl already exists" in message
    assert (out / "ratings.jsonl").read_bytes() == b"mine\n"
    assert [p for p in out.rglob("*") if p.is_file()] == [out / "ratings.jsonl"]


def test_imported_runs_can_be_dealt_and_imported_ratings_count_towards_k(source, pg_url, tmp_path):
    import_into(pg_url, source)
    store = Store(tmp_path / "replica", url=pg_url)
    try:

        def claim(run_id: str, reviewer: str, k: int) -> list[str]:
            asked = Claim(run_id, "overall", reviewer, ("q01", "q02"), k, 2, 3600.0)
            return store.claim(asked)

        assert claim(PANEL_RUN, "telegram:dan", 3) == []  # the panel's three rated both
        assert claim(PANEL_RUN, "demo:ana", 4) == []  # and never to one of them again
        assert claim(PANEL_RUN, "telegram:dan", 4) == ["q01", "q02"]
        # ours: ana and ben rated q01 of the search run, ana q02
        assert claim(SEARCH_RUN, "telegram:eve", 2) == ["q02"]
    finally:
        store.close()


def test_a_claim_that_expired_stays_expired_in_the_database_it_moves_to(pg_url, postgres, tmp_path):
    old = Store(tmp_path / "old", url=pg_url)
    try:
        items = [QueryEvaluation(run_id="r", data=ItemData(id="i0", query=Query(query="x")))]
        old.create_run(RunHeader(run_id="r"), items)
        ana = Reviewer(platform="telegram", id="ana")
        asked = Claim("r", "overall", ana.key, ("i0",), 1, 1, 0.2)
        assert old.claim(asked) == ["i0"]
        card = Delivery(
            run_id="r", item_id="i0", reviewer=ana, channel="telegram", chat_id="1", message_id="2"
        )
        old.ratings.append(card)  # the card the bot sent, never answered
        time.sleep(0.5)
        assert len(old.expire()) == 1
    finally:
        old.close()
    export_from(pg_url, tmp_path / "moved")

    database = f"{urlsplit(pg_url).path.lstrip('/')}_new"
    new_url = postgres.create_database(database)
    new = None
    try:
        import_into(new_url, tmp_path / "moved")
        new = Store(tmp_path / "new", url=new_url)
        ben = Claim("r", "overall", "telegram:ben", ("i0",), 1, 1, 3600.0)
        assert new.claim(ben) == ["i0"]  # free for another reviewer, as before the move
        assert new.claim(asked) == []  # never to ana again
        assert new.expire() == []
    finally:
        if new is not None:
            new.close()
        postgres.drop_database(database)


def test_moving_needs_a_database(source, tmp_path):
    with pytest.raises(StoreError, match="hilbot store import needs a database store"):
        import_into(None, source)
    with pytest.raises(StoreError, match="hilbot store export needs a database store"):
        export_from(None, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_analyses_read_either_backend_and_say_the_same(source, pg_url, tmp_path):
    agreement = ("analyze", "agreement", "--format", "json", "--bootstrap", "200")
    env = {"USER": "tester", "HILBOT_STORE_URL": None}
    on_files = invoke("--data-dir", str(source), *agreement, env=env, cwd=tmp_path)
    assert on_files.exit_code == 0, on_files.stderr

    import_into(pg_url, source)
    env["HILBOT_STORE_URL"] = pg_url
    copy = tmp_path / "replica"
    on_database = invoke("--data-dir", str(copy), *agreement, env=env, cwd=tmp_path)
    assert on_database.exit_code == 0, on_database.stderr
    assert logs(copy) == logs(source)  # the store's read copy, made by the command

    assert on_database.stdout == on_files.stdout
    report = json.loads(on_files.stdout)
    overall = report["dimensions"]["overall"]
    assert overall["n_raters"] == 5 and overall["n_ratings"] == 57  # the panel's and ours
