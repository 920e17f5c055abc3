"""The columnar index of the ratings log: whatever happens to the log, reading through the index
gives what reading the whole log gives (``HILBOT_NO_INDEX=1``)."""

from __future__ import annotations

import multiprocessing
import os
import random
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis._reader import scan_log
from analysis.index import index_dir, indexed_scan
from analysis.index import log as index_module
from analysis.load import load
from evaluation import Store

from .test_load import _frames_view, _random_log


@pytest.fixture(autouse=True)
def every_log_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Index these small logs too (by default a log under 1 MiB is read whole)."""
    monkeypatch.setenv("HILBOT_INDEX_MIN_BYTES", "0")


def _view(store: Store) -> tuple:
    issues: list = []
    frames = load(store, issues=issues)
    scan = indexed_scan(store.ratings.path)
    return frames, [str(i) for i in issues], scan.lines, scan.counts, scan.raw, scan.slow_lines


def _reference(store: Store, monkeypatch: pytest.MonkeyPatch) -> tuple:
    with monkeypatch.context() as patch:
        patch.setenv("HILBOT_NO_INDEX", "1")
        issues: list = []
        frames = load(store, issues=issues)
    scan = scan_log(store.ratings.path)
    return frames, [str(i) for i in issues], scan.lines, scan.counts, scan.raw, scan.slow_lines


def _same(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every frame ``load`` gives, column for column, and what the scan says of the log."""
    indexed, reference = _view(store), _reference(store, monkeypatch)
    for name in ("ratings", "skips", "concerns", "notes", "items", "runs"):
        pd.testing.assert_frame_equal(getattr(indexed[0], name), getattr(reference[0], name))
    assert indexed[1:] == reference[1:]
    assert _frames_view(indexed[0], []) == _frames_view(reference[0], [])


def _meta(store: Store) -> dict:
    return index_module._read_meta(index_dir(store.ratings.path)) or {}


class _Log(tuple):
    def __repr__(self) -> str:
        return f"<a random log of {len(self[1])} bytes>"


@pytest.fixture
def log(store: Store) -> tuple[Store, bytes]:
    """A random log (edits, redeliveries, bad and lax lines); its bytes, then the log emptied."""
    _random_log(store, 11, n=900)
    whole = store.ratings.path.read_bytes()
    store.ratings.path.write_bytes(b"")
    return _Log((store, whole))


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cuts=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=4))
def test_growing_in_any_steps_reads_as_the_whole_log(log, monkeypatch, cuts):
    """Appends cut anywhere, mid-line included (a torn last line that is completed later)."""
    store, whole = log
    path = store.ratings.path
    path.write_bytes(b"")
    for cut in [*sorted(cuts), 1.0]:
        size = int(len(whole) * cut)
        with open(path, "ab") as handle:
            handle.write(whole[path.stat().st_size : size])
        _same(store, monkeypatch)


def test_the_index_covers_whole_lines_and_reads_only_the_tail(log, monkeypatch):
    store, whole = log
    path = store.ratings.path
    half = whole.index(b"\n", len(whole) // 2) + 1
    path.write_bytes(whole[: half + 10])  # ten bytes of a line still being written
    _same(store, monkeypatch)
    meta = _meta(store)
    assert meta["end"] == half and len(meta["chunks"]) == 1
    calls: list[tuple[int, int]] = []
    import analysis._reader as reader

    real = reader.scan_range

    def spy(p, start, end):
        calls.append((start, end))
        return real(p, start, end)

    monkeypatch.setattr(reader, "scan_range", spy)
    with open(path, "ab") as handle:
        handle.write(whole[half + 10 :])
    _same(store, monkeypatch)
    assert calls and calls[0] == (half, len(whole))  # the new lines only, not the whole log
    assert len(_meta(store)["chunks"]) == 2


@pytest.mark.parametrize("how", ["same size in place", "replaced", "shrunk", "first line"])
def test_an_index_that_no_longer_matches_its_log_is_rebuilt(log, monkeypatch, how):
    store, whole = log
    path = store.ratings.path
    path.write_bytes(whole)
    _same(store, monkeypatch)
    data = bytearray(whole)
    if how == "same size in place":  # a score changed: same length, same inode
        at = data.index(b'"score":0.7')
        data[at : at + 11] = b'"score":0.1'
        with open(path, "r+b") as handle:
            handle.write(bytes(data))
        os.utime(path, ns=(1, 1))
    elif how == "replaced":  # an editor's save: a new file renamed over the log
        at = data.index(b'"judgment":"good"')
        data[at : at + 17] = b'"judgment":"okay"'
        aside = path.with_suffix(".tmp")
        aside.write_bytes(bytes(data))
        os.replace(aside, path)
    elif how == "shrunk":
        data = data[: len(data) // 3]
        path.write_bytes(bytes(data[: data.rindex(b"\n") + 1]))
    else:  # the first line rewritten in place, then an append
        end = data.index(b"\n")
        with open(path, "r+b") as handle:
            handle.write(b" " * end)
            handle.seek(0, 2)
            handle.write(b"\n")
    _same(store, monkeypatch)


def test_deleting_the_cache_changes_no_result(log, monkeypatch):
    store, whole = log
    store.ratings.path.write_bytes(whole)
    _same(store, monkeypatch)
    import shutil

    shutil.rmtree(store.root / "cache")
    _same(store, monkeypatch)


def test_many_small_appends_are_merged_into_one_chunk(log, monkeypatch):
    store, whole = log
    path = store.ratings.path
    lines = whole.splitlines(keepends=True)
    step = len(lines) // (index_module.MAX_CHUNKS + 3)
    for start in range(0, len(lines), step):
        with open(path, "ab") as handle:
            handle.write(b"".join(lines[start : start + step]))
        indexed_scan(path)
    meta = _meta(store)
    assert len(meta["chunks"]) <= index_module.MAX_CHUNKS
    listed = {c["name"] for c in meta["chunks"]}
    files = {p.name.split(".", 1)[0] for p in index_dir(path).glob("*.parquet")}
    assert files == listed  # merged chunks' files removed
    _same(store, monkeypatch)


def test_no_index_is_written_with_the_reference_path(log, monkeypatch):
    store, whole = log
    store.ratings.path.write_bytes(whole)
    monkeypatch.setenv("HILBOT_NO_INDEX", "1")
    load(store)
    assert not (store.root / "cache").exists()


def test_a_symbolic_link_in_the_way_is_never_written_through(log, monkeypatch, tmp_path):
    store, whole = log
    store.ratings.path.write_bytes(whole)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (store.root / "cache").mkdir()
    (store.root / "cache" / "index").symlink_to(elsewhere)
    _same(store, monkeypatch)
    assert list(elsewhere.iterdir()) == []


def test_a_read_only_data_directory_reads_without_the_index(log, monkeypatch):
    store, whole = log
    store.ratings.path.write_bytes(whole)
    monkeypatch.setattr(index_module, "_safe_folder", _refuse)
    _same(store, monkeypatch)
    assert not (store.root / "cache").exists()


def _refuse(folder: Path) -> Path:
    raise PermissionError(13, "Permission denied", str(folder))


def test_a_damaged_index_is_rebuilt(log, monkeypatch):
    store, whole = log
    store.ratings.path.write_bytes(whole)
    _same(store, monkeypatch)
    folder = index_dir(store.ratings.path)
    (folder / "meta.json").write_text('{"version": 1, "chunks": [')
    _same(store, monkeypatch)
    for parquet in folder.glob("*.events.parquet"):
        parquet.write_bytes(b"PAR1 not really")  # the log unchanged, a chunk damaged
    _same(store, monkeypatch)
    _same(store, monkeypatch)  # and rewritten whole


def _reader_loop(path: str, stop: str, out: multiprocessing.Queue) -> None:
    try:
        out.put("ready")
        parent, deadline = os.getppid(), time.monotonic() + 180  # never outlive the test
        while not os.path.exists(stop) and os.getppid() == parent and time.monotonic() < deadline:
            scan = indexed_scan(path)
            out.put((scan.lines, len(scan.events["line"])))
    except BaseException as exc:  # noqa: BLE001 - reported to the test
        import traceback

        out.put(repr(exc) + "\n" + traceback.format_exc())
    out.put("done")


def _grow_while_read(path: Path, lines: list, stop: str, out: Any, readers: int) -> list:
    """Append the log in steps, each size read by some reader before the next; then stop them and
    return what they read."""
    results: list = []
    ready = done = 0
    while ready < readers:  # a reader may read before the last one is ready
        got = out.get(timeout=60)
        ready += got == "ready"
        if got != "ready":
            assert isinstance(got, tuple), got
            results.append(got)

    def take() -> object:
        nonlocal done
        got = out.get(timeout=60)
        done += got == "done"
        if got != "done":
            results.append(got)
        return got

    rng = random.Random(3)
    at = 100
    while at < len(lines):
        step = rng.randint(len(lines) // 8, len(lines) // 4)
        with open(path, "ab") as handle:
            handle.write(b"".join(lines[at : at + step]))
        at = min(at + step, len(lines))
        while not (isinstance(got := take(), tuple) and got[0] == at) and got != "done":
            assert isinstance(got, tuple), got
    Path(stop).touch()
    while done < readers:
        take()
    return results


def test_concurrent_readers_and_a_writer_never_see_a_half_written_index(log, monkeypatch):
    store, whole = log
    path = store.ratings.path
    lines = whole.splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:100]))
    stop = str(path.parent / "stop")
    context = multiprocessing.get_context("spawn")  # DuckDB is not fork-safe once used
    out = context.Queue()
    readers = [context.Process(target=_reader_loop, args=(str(path), stop, out)) for _ in range(3)]
    for reader in readers:
        reader.start()
    try:
        results = _grow_while_read(path, lines, stop, out, len(readers))
    finally:
        Path(stop).touch()  # whatever happened, the readers stop
        for reader in readers:
            reader.join(20)
            if reader.is_alive():
                reader.kill()
    assert all(isinstance(r, tuple) for r in results), results
    counts: dict = {}  # lines read -> events found: every read agrees with every other
    for lines_read, events in results:
        assert counts.setdefault(lines_read, events) == events
    assert len(counts) >= 4  # the readers read while the log grew
    _same(store, monkeypatch)


def test_the_documented_query_reads_the_index_as_the_ledger_folds(log, monkeypatch):
    """docs/scale.md's DuckDB query, on an index of several chunks, gives the ledger's current
    ratings per run and dimension and their mean score (the log has no adjudications)."""
    import re
    from statistics import mean

    import duckdb

    from evaluation import Ledger
    from evaluation.records import Rating

    store, whole = log
    path = store.ratings.path
    lines = whole.splitlines(keepends=True)
    for start in range(0, len(lines), len(lines) // 4):
        with open(path, "ab") as handle:
            handle.write(b"".join(lines[start : start + len(lines) // 4]))
        indexed_scan(path)
    assert len(_meta(store)["chunks"]) > 2
    doc = (Path(__file__).parents[2] / "docs" / "scale.md").read_text()
    query = re.search(r"```sql\n(.*?)```", doc, re.S).group(1)
    got = duckdb.sql(query.replace("results/", f"{store.root}/")).fetchall()
    ledger = Ledger.from_events(store.human_events())
    scores: dict = {}
    for (run, _, dimension, _), judgment in ledger.judgments.items():
        if isinstance(judgment, Rating):
            scores.setdefault((run, dimension), []).append(judgment.score)
    want = sorted((r, d, len(s), round(mean(s), 3)) for (r, d), s in scores.items())
    assert sorted(got) == want


def _typed_lines() -> list[bytes]:
    """Lines that name a type the index lists: valid records of each, bad ones, and other records
    and non-JSON that merely mention them."""
    from evaluation.records import ReviewSummary

    from .test_tallies import _adjudication

    summary = ReviewSummary(run_id="alpha", dimension="quality", synthesis="s", actionItems=["a"])
    return [
        _adjudication("adj-1", "a1", 1).encode(),
        summary.model_dump_json().encode(),
        b'{"type":"adjudication","run_id":"alpha"}',  # a bad one: reported
        b'{"type":"rating","note":"see the adjudication"}',  # another type, bad: not reported
        b'not json, "adjudication" all the same',  # reported, by the log's own parser
        b'{"type":"triage_decision","bogus":true}',
        b'{"type":"digest_posted","chat":"c","at":"2026-01-01T00:00:00Z","bad":1}',
        _adjudication("adj-2", "a1", 2).encode(),
    ]


@pytest.mark.parametrize("cut", [0.3, 0.7, 1.0])
def test_the_typed_records_read_through_the_index_are_the_logs(log, monkeypatch, cut):
    """``read_typed`` of every type the index lists: the same records, lines and bad lines as the
    search of the whole log, with some typed lines in chunks, some appended since, and a torn
    last line."""
    from analysis._records import read_typed
    from analysis.index import TYPED

    store, whole = log
    lines = whole.splitlines(keepends=True)
    typed = _typed_lines()
    mixed = [*lines[:300], *[t + b"\n" for t in typed[:4]], *lines[300:]]
    at = int(len(mixed) * cut)
    path = store.ratings.path
    path.write_bytes(b"".join(mixed[:at]))
    indexed_scan(path)  # the index holds these
    torn = b'{"type":"adjudication","run_id":"al'  # a line still being written
    tail = b"".join(mixed[at:]) + b"".join(t + b"\n" for t in typed[4:]) + torn
    with open(path, "ab") as handle:
        handle.write(tail)  # unwritten yet, ending with a torn line
    for kind in TYPED:
        found: list = []
        records = read_typed(path, kind, found)
        with monkeypatch.context() as patch:
            patch.setenv("HILBOT_NO_INDEX", "1")
            expected: list = []
            assert records == read_typed(path, kind, expected), kind
        assert found == expected, kind  # lines, reasons, and which is torn
    assert any(r for kind in TYPED for r in read_typed(path, kind)), "no typed record read"
