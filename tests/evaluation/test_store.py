"""The store's promises against what users and other programs do to its files.

- A log whose file is replaced (an editor's save-by-rename, ``sed -i``) or deleted is reopened
  before the next write: an acknowledged record never lands in a file nobody can see.
- No command writes over the store's logs.
- A run file is created exclusively and never through a symbolic link; an import is all or
  nothing; generated run ids never collide.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import subprocess
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bot import Action, ReviewEngine
from evaluation import HilbotError, Store, load_config
from evaluation.errors import LogError
from evaluation.imports import import_outputs
from evaluation.log import EventLog, read_log
from evaluation.records import (
    ItemData,
    Note,
    Query,
    QueryEvaluation,
    Reviewer,
    RunHeader,
    RunSummary,
)
from tests.auxil.cli import BUG, invoke
from tests.conftest import HILBOT, SEARCH_RUN

TS = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def note(n: int) -> Note:
    return Note(
        run_id="r1",
        item_id=f"q{n}",
        reviewer=Reviewer(id="alice"),
        idempotency_key=f"k{n}",
        text="hi",
        timestamp=TS,
    )


def keys(path: Path) -> list[str]:
    """The idempotency keys of the notes in a log, in file order."""
    return [r.idempotency_key for r in read_log(path, [])]


def save_by_rename(path: Path, content: bytes | None = None) -> None:
    """What ``sed -i`` and most editors do: write a new file beside the old one, rename it over."""
    data = path.read_bytes() if content is None else content
    fresh = path.with_name(f".{path.name}.edit")
    fresh.write_bytes(data)
    os.replace(fresh, path)


# --------------------------------------------------------------------------- 1. replaced logs


def test_an_append_after_save_by_rename_lands_in_the_new_file(tmp_path: Path) -> None:
    path = tmp_path / "ratings.jsonl"
    log = EventLog(path)
    log.append(note(1))
    save_by_rename(path)
    log.append(note(2))
    log.append_many([note(3), note(4)])
    assert keys(path) == ["k1", "k2", "k3", "k4"]


async def test_an_async_append_after_save_by_rename_lands_in_the_new_file(tmp_path: Path) -> None:
    path = tmp_path / "ratings.jsonl"
    log = EventLog(path)
    await log.aappend(note(1))
    save_by_rename(path)
    await asyncio.gather(*(log.aappend(note(n)) for n in range(2, 12)))  # one group commit
    assert sorted(keys(path), key=lambda k: int(k[1:])) == [f"k{n}" for n in range(1, 12)]


def test_group_commit_from_threads_after_save_by_rename(tmp_path: Path) -> None:
    path = tmp_path / "ratings.jsonl"
    log = EventLog(path)
    log.append(note(0))
    save_by_rename(path)
    threads = [threading.Thread(target=log.append, args=(note(n),)) for n in range(1, 21)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(int(k[1:]) for k in keys(path)) == list(range(21))


def test_an_append_after_the_log_is_deleted_creates_it_again(tmp_path: Path) -> None:
    path = tmp_path / "ratings.jsonl"
    log = EventLog(path)
    log.append(note(1))
    path.unlink()
    log.append(note(2))
    assert keys(path) == ["k2"]


def _k2_acknowledged_after_the_editor_read(path: Path) -> EventLog:
    """k1 written; the editor reads the file; k2 written and acknowledged; the editor renames its
    copy over."""
    log = EventLog(path)
    log.append(note(1))
    read_by_editor = path.read_bytes()
    log.append(note(2))
    save_by_rename(path, read_by_editor)
    return log


def test_a_record_acknowledged_after_the_editor_read_the_file_is_put_back(tmp_path: Path) -> None:
    """k2 is not in the new file: the next write puts it back, before its own record."""
    path = tmp_path / "ratings.jsonl"
    _k2_acknowledged_after_the_editor_read(path).append(note(3))
    assert keys(path) == ["k1", "k2", "k3"]


def test_closing_the_log_puts_back_what_a_replacement_dropped(tmp_path: Path) -> None:
    path = tmp_path / "ratings.jsonl"
    _k2_acknowledged_after_the_editor_read(path).close()
    assert keys(path) == ["k1", "k2"]


def test_a_line_another_writer_wrote_and_the_user_deleted_stays_deleted(tmp_path: Path) -> None:
    path = tmp_path / "ratings.jsonl"
    ours, theirs = EventLog(path), EventLog(path)
    theirs.append(note(1))
    theirs.close()
    ours.append(note(2))
    save_by_rename(
        path,
        b"".join(
            line for line in path.read_bytes().splitlines(keepends=True) if b'"k1"' not in line
        ),
    )
    ours.append(note(3))
    assert keys(path) == ["k2", "k3"]


def copy_in_place(path: Path, content: bytes) -> None:
    """What ``cp older.jsonl ratings.jsonl`` does: the same file (inode), truncated and written
    again."""
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.write(content)


def test_a_lockless_copy_in_place_then_another_writers_appends_loses_nothing(
    tmp_path: Path,
) -> None:
    """k2 is dropped by an in-place copy of an older file; the other writer's appends then grow the
    file past k2's end, so size and inode look fine: the record at k2's offset tells it is gone."""
    path = tmp_path / "ratings.jsonl"
    first, second = EventLog(path), EventLog(path)
    first.append(note(1))
    older = path.read_bytes()
    first.append(note(2))
    copy_in_place(path, older)
    second.append(note(3).model_copy(update={"text": "x" * 500}))
    first.append(note(4))
    assert sorted(keys(path)) == ["k1", "k2", "k3", "k4"]
    assert first.restored == 1


def test_closing_after_a_lockless_copy_in_place_puts_back_what_it_dropped(tmp_path: Path) -> None:
    path = tmp_path / "ratings.jsonl"
    first, second = EventLog(path), EventLog(path)
    first.append(note(1))
    older = path.read_bytes()
    first.append(note(2))
    copy_in_place(path, older)
    second.append(note(3).model_copy(update={"text": "x" * 500}))
    first.close()
    assert sorted(keys(path)) == ["k1", "k2", "k3"]


def test_a_lockless_copy_of_the_same_bytes_restores_nothing(tmp_path: Path) -> None:
    """Copying the file over itself changes nothing: nothing is appended twice."""
    path = tmp_path / "ratings.jsonl"
    log = EventLog(path)
    log.append(note(1))
    copy_in_place(path, path.read_bytes())
    log.append(note(2))
    assert keys(path) == ["k1", "k2"] and log.restored == 0


def test_a_run_file_replaced_mid_run_still_gets_its_items(store: Store) -> None:
    log = store.run_log("r1")
    log.append(RunHeader(run_id="r1"))
    save_by_rename(store.run_path("r1"))
    log.append(QueryEvaluation(run_id="r1", data=ItemData(id="a", query=Query(query="q"))))
    assert [i.id for i in store.load_run("r1").items] == ["a"]


def test_a_rating_made_after_sed_i_on_the_ratings_log_is_in_the_file(demo_store: Store) -> None:
    """The reported bug end to end: the engine stored a tap after `sed -i` into a deleted file."""
    session = ReviewEngine(demo_store, load_config(None)).session(SEARCH_RUN, Reviewer(id="alice"))
    session.start()
    session.act(Action("rate", "good"))
    save_by_rename(demo_store.ratings.path)
    session.act(Action("rate", "poor"))
    ratings = [r for r in read_log(demo_store.ratings.path, []) if r.type == "rating"]
    assert [r.judgment for r in ratings] == ["good", "poor"]


# ------------------------------------------------------------------ 2. no command writes over a log


@pytest.mark.parametrize(
    "target",
    [
        "ratings.jsonl",
        f"runs/{SEARCH_RUN}.jsonl",
        "llm-calls.jsonl",
        "runs/new.jsonl",
        "runs",
        "./runs/../ratings.jsonl",
    ],
)
def test_export_refuses_to_write_over_a_store_log(
    demo_store: Store, tmp_path: Path, target: str
) -> None:
    demo_store.ratings.append(note(1))
    demo_store.llm_calls.path.write_bytes(b"")
    before = _files_but_the_index(demo_store.root)
    result = invoke(
        "export",
        SEARCH_RUN,
        "--format",
        "csv",
        "--out",
        str(demo_store.root / target),
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
        cwd=tmp_path,
    )
    assert result.exit_code == 2, result.stderr
    assert (
        result.stderr.startswith("error: ")
        and len(result.stderr.strip().splitlines()) == 1
        and BUG not in result.stderr
    )
    assert "hilbot's own" in result.stderr and "--out" in result.stderr
    assert _files_but_the_index(demo_store.root) == before


def _files_but_the_index(root: Path) -> dict[Path, bytes]:
    """Every file under ``root`` but the log's columnar index (``cache/index``: derived from the
    log, kept current by every command that reads it)."""
    index = root / "cache" / "index"
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and index not in p.parents}


def test_export_refuses_a_link_to_a_store_log(demo_store: Store, tmp_path: Path) -> None:
    demo_store.ratings.append(note(1))
    link = tmp_path / "labels.csv"
    link.symlink_to(demo_store.ratings.path)
    before = demo_store.ratings.path.read_bytes()
    result = invoke(
        "export",
        SEARCH_RUN,
        "--format",
        "csv",
        "--out",
        str(link),
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
    )
    assert result.exit_code == 2 and "hilbot's own" in result.stderr
    assert demo_store.ratings.path.read_bytes() == before and link.is_symlink()


def test_export_next_to_the_logs_is_fine(demo_store: Store, tmp_path: Path) -> None:
    result = invoke(
        "export",
        SEARCH_RUN,
        "--format",
        "csv",
        "--out",
        str(demo_store.root / "labels.csv"),
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
    )
    assert result.exit_code == 0, result.stderr
    assert (demo_store.root / "labels.csv").read_text().startswith("scenarioId,")


@pytest.mark.parametrize(
    "where, says",
    [
        ("/proc/hilbot-test.csv", "cannot write"),
        ("blocker/x.csv", "not a directory"),
        ("adir", "is a directory"),
    ],
)
def test_out_paths_that_cannot_be_written_are_one_line(
    demo_store: Store, tmp_path: Path, where: str, says: str
) -> None:
    (tmp_path / "blocker").write_text("a file")
    (tmp_path / "adir").mkdir()
    result = invoke(
        "export",
        SEARCH_RUN,
        "--out",
        where,
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
        cwd=tmp_path,
    )
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith("error: ")
        and BUG not in lines[0]
        and says in lines[0]
    ), lines
    assert (tmp_path / "blocker").read_text() == "a file" and list(
        (tmp_path / "adir").iterdir()
    ) == []


# -------------------------------------------------------- 3. exclusive runs, ids that never collide


def _rows(tmp_path: Path, count: int = 3, name: str = "rows.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(
        "".join(
            json.dumps({"id": f"i{n}", "query": f"query {n}", "answer": "x" * 50}) + "\n"
            for n in range(count)
        )
    )
    return path


def _headers(path: Path) -> int:
    return sum(1 for r in read_log(path, []) if r.type == "run_header")


def _at_once(work, count: int = 6) -> None:
    """Run ``work`` in ``count`` threads released together."""
    barrier = threading.Barrier(count)

    def start() -> None:
        barrier.wait()
        work()

    threads = [threading.Thread(target=start) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_parallel_imports_with_one_run_id_make_one_run(store: Store, tmp_path: Path) -> None:
    rows = _rows(tmp_path, 30)
    outcomes: list[str] = []

    def one() -> None:
        try:
            import_outputs(store, rows, run_id="same")
            outcomes.append("ok")
        except HilbotError as exc:
            outcomes.append(str(exc))

    _at_once(one)
    assert outcomes.count("ok") == 1, outcomes
    assert all("already exists" in o for o in outcomes if o != "ok")
    assert _headers(store.run_path("same")) == 1 and len(store.load_run("same").items) == 30


def test_parallel_imports_without_a_run_id_get_distinct_runs(store: Store, tmp_path: Path) -> None:
    rows = _rows(tmp_path, 10)
    ids: list[str] = []
    _at_once(lambda: ids.append(import_outputs(store, rows).run_id))
    assert len(set(ids)) == 6 and sorted(store.run_ids()) == sorted(ids)
    for run_id in ids:
        assert _headers(store.run_path(run_id)) == 1 and len(store.load_run(run_id).items) == 10


def test_four_import_processes_with_one_run_id_make_one_run(tmp_path: Path) -> None:
    rows = _rows(tmp_path, 200)
    env = {**os.environ, "HILBOT_DATA_DIR": str(tmp_path / "results")}
    procs = [
        subprocess.Popen(
            [str(HILBOT), "import", str(rows), "--run-id", "same"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = [(p.wait(timeout=60), p.stderr.read()) for p in procs]
    assert sorted(code for code, _ in results) == [0, 2, 2, 2], results
    assert all("already exists" in err for code, err in results if code == 2)
    store = Store(tmp_path / "results")
    assert _headers(store.run_path("same")) == 1 and len(store.load_run("same").items) == 200


def test_a_second_run_with_a_taken_id_is_refused_by_the_runner(
    demo_store: Store, tmp_path: Path
) -> None:
    outputs = tmp_path / "out.jsonl"
    outputs.write_text("")
    before = demo_store.run_path(SEARCH_RUN).read_bytes()
    with pytest.raises(HilbotError, match="already exists"):
        demo_store.start_run(RunHeader(run_id=SEARCH_RUN))
    assert demo_store.run_path(SEARCH_RUN).read_bytes() == before


def test_start_run_with_a_generated_id_moves_past_a_taken_one(store: Store) -> None:
    first, first_id = store.start_run(RunHeader(run_id="2026-01-01T00-00-00"), generated=True)
    second, second_id = store.start_run(RunHeader(run_id="2026-01-01T00-00-00"), generated=True)
    assert first_id == "2026-01-01T00-00-00" and second_id == "2026-01-01T00-00-00-2"
    assert (
        store.run_header(second_id).run_id == second_id and _headers(store.run_path(first_id)) == 1
    )


# --------------------------------------------------------------------------- 4. all or nothing


def test_an_import_cut_short_by_the_file_size_limit_leaves_no_run(tmp_path: Path) -> None:
    rows = _rows(tmp_path, 2000)  # a run file of several hundred KB
    env = {**os.environ, "HILBOT_DATA_DIR": str(tmp_path / "results")}

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))

    cut = subprocess.run(
        [str(HILBOT), "import", str(rows), "--run-id", "big"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=60,
    )
    assert cut.returncode == 2, cut.stderr
    assert (
        len(cut.stderr.strip().splitlines()) == 1
        and "Traceback" not in cut.stderr
        and BUG not in cut.stderr
    )
    store = Store(tmp_path / "results")
    assert store.run_ids() == [] and not store.run_exists("big")
    assert [
        p.name for p in (tmp_path / "results" / "runs").iterdir()
    ] == []  # nothing left aside either
    again = subprocess.run(
        [str(HILBOT), "import", str(rows), "--run-id", "big"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0, again.stderr
    assert len(store.load_run("big").items) == 2000


def _on_a_small_file_system(
    tmp_path: Path, data: Path, how: str, *command: str
) -> subprocess.CompletedProcess:
    """``hilbot COMMAND`` with ``data`` on a file system of its own (tmpfs, in a private mount
    namespace): ``read-only``, or ``no-inodes`` (every inode in use). Its files are copied in
    first."""
    fill = "i=0; while touch data/.fill$i 2>/dev/null; do i=$((i+1)); done"
    script = (
        f"set -e; cp -a data {tmp_path}/.copy; mount -t tmpfs -o size=8m,nr_inodes=256 tmpfs data; "
        f"cp -a {tmp_path}/.copy/. data/; "
        + ("mount -o remount,ro data; " if how == "read-only" else f"{fill}; ")
        + '"$@"'
    )
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", str(HILBOT), "--data-dir", "data", *command],
        cwd=data.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("how", ["read-only", "no-inodes"])
@pytest.mark.parametrize(
    "command",
    [
        ("import", "rows.jsonl"),
        ("sample", SEARCH_RUN, "--n", "3", "--by", "category"),
        ("triage", "expected", "actual"),
    ],
)
def test_a_data_dir_that_takes_no_new_file_is_one_line(
    demo_store: Store, tmp_path: Path, how: str, command: tuple[str, ...]
) -> None:
    _rows(tmp_path)
    for side, text in (("expected", "old\n"), ("actual", "new\n")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "a.md").write_text(text)
    data = tmp_path / "data"
    os.rename(demo_store.root, data)
    before = sorted(p.name for p in (data / "runs").iterdir())
    outcome = _on_a_small_file_system(tmp_path, data, how, *command)
    assert outcome.returncode == 2, outcome.stderr
    assert len(outcome.stderr.strip().splitlines()) == 1 and "Traceback" not in outcome.stderr, (
        outcome.stderr
    )
    assert BUG not in outcome.stderr and ".partial" not in outcome.stderr, outcome.stderr
    says = "read-only" if how == "read-only" else "no space left"
    assert says in outcome.stderr, outcome.stderr
    assert (
        sorted(p.name for p in (data / "runs").iterdir()) == before
    )  # the mount went with its namespace


def test_create_run_is_written_aside_and_moved_into_place(store: Store) -> None:
    items = (
        QueryEvaluation(run_id="r", data=ItemData(id=f"i{n}", query=Query(query="q")))
        for n in range(3)
    )
    store.create_run(RunHeader(run_id="r"), items, RunSummary(run_id="r", item_count=3))
    assert [p.name for p in store.run_path("r").parent.iterdir()] == ["r.jsonl"]
    assert len(store.load_run("r").items) == 3


def test_a_failing_item_stream_leaves_no_run(store: Store) -> None:
    def items():
        yield QueryEvaluation(run_id="r", data=ItemData(id="a", query=Query(query="q")))
        raise OSError(28, "No space left on device")

    with pytest.raises((HilbotError, OSError)):
        store.create_run(RunHeader(run_id="r"), items())
    assert not store.run_exists("r") and store.run_ids() == []
    folder = store.run_path("r").parent
    assert not folder.exists() or list(folder.iterdir()) == []


# -------------------------------------------------------------------------- 5. never through a link


def test_a_dangling_link_at_a_run_path_is_not_followed(store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    store.run_path("r").parent.mkdir(parents=True)
    store.run_path("r").symlink_to(outside)
    with pytest.raises(HilbotError) as info:
        store.create_run(RunHeader(run_id="r"), [])
    assert "link" in str(info.value)
    with pytest.raises(HilbotError):
        store.start_run(RunHeader(run_id="r"))
    assert not outside.exists()


def test_import_onto_a_dangling_link_is_one_line_and_writes_nothing_outside(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "owned.jsonl"
    outside.parent.mkdir()
    runs = tmp_path / "results" / "runs"
    runs.mkdir(parents=True)
    (runs / "r.jsonl").symlink_to(outside)
    result = invoke(
        "import",
        str(_rows(tmp_path)),
        "--run-id",
        "r",
        env={"HILBOT_DATA_DIR": str(tmp_path / "results")},
    )
    assert (
        result.exit_code == 2
        and BUG not in result.stderr
        and len(result.stderr.strip().splitlines()) == 1
    )
    assert not outside.exists() and list(outside.parent.iterdir()) == []


def test_the_ratings_log_is_never_appended_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"")
    root = tmp_path / "results"
    root.mkdir()
    (root / "ratings.jsonl").symlink_to(outside)
    with pytest.raises(LogError) as info:
        Store(root).ratings.append(note(1))
    assert "link" in str(info.value)
    assert outside.read_bytes() == b""


def test_a_linked_runs_directory_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "results"
    root.mkdir()
    (root / "runs").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(HilbotError) as info:
        Store(root).create_run(RunHeader(run_id="r"), [])
    assert "link" in str(info.value)
    assert list(elsewhere.iterdir()) == []


def test_runs_listing_shows_what_is_not_a_run_file_and_the_rest(
    demo_store: Store, tmp_path: Path
) -> None:
    runs = demo_store.root / "runs"
    (runs / "dangling.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    (runs / "folder.jsonl").mkdir()
    os.mkfifo(runs / "pipe.jsonl")
    assert sorted(demo_store.run_ids()) == sorted(
        [SEARCH_RUN, "demo-rag-answers", "folder", "pipe"]
    )
    result = invoke("review", "--list", env={"HILBOT_DATA_DIR": str(demo_store.root)})
    assert result.exit_code == 0 and BUG not in result.stderr, result.stderr
    assert SEARCH_RUN in result.stdout and "demo-rag-answers" in result.stdout
    assert re.search(r"^  folder +\(cannot read: it is a directory\)$", result.stdout, re.M)
    assert re.search(r"^  pipe +\(cannot read: it is not a regular file\)$", result.stdout, re.M)


def test_a_log_moved_away_under_its_lock_and_back_keeps_a_new_writers_records(
    tmp_path: Path,
) -> None:
    """An editor holds the log's lock, moves it aside and back (``flock FILE mv …``). A writer
    that starts meanwhile finds no log and creates one; the editor's move back then replaces it.
    The writer must not acknowledge into a file that is about to vanish: its record is in the log
    when the append returns, though it never writes again (a writer killed right after)."""
    import fcntl

    path = tmp_path / "ratings.jsonl"
    EventLog(path).append({"type": "probe", "seq": 0})
    aside = path.with_name("ratings.jsonl.aside")
    held = open(path, "rb")
    fcntl.flock(held, fcntl.LOCK_EX)
    os.rename(path, aside)

    def move_back() -> None:  # as soon as the writer's new file has its record, then unlock
        deadline = time.monotonic() + 10
        while not (path.exists() and path.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.0005)
        time.sleep(0.002)  # the writer has acknowledged by now
        os.rename(aside, path)
        held.close()

    mover = threading.Thread(target=move_back)
    mover.start()
    EventLog(path).append({"type": "probe", "seq": 1})  # a new writer: no memory to restore
    mover.join(timeout=10)
    assert [json.loads(line)["seq"] for line in path.read_text().splitlines()] == [0, 1]


def test_a_cached_llm_answer_stays_private_and_a_report_readable_as_the_file_it_replaces(
    tmp_path,
):
    store = Store(tmp_path / "results")
    key = "ab" * 32
    store.cache_put(key, {"answer": "kept"})
    cached = store.root / "cache" / "llm" / "ab" / f"{key}.json"
    assert cached.stat().st_mode & 0o777 == 0o600
    report = tmp_path / "out.md"
    report.write_text("old")
    report.chmod(0o640)
    store.write_file(report, "new")
    assert report.read_text() == "new" and report.stat().st_mode & 0o777 == 0o640
