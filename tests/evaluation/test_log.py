"""Tests of evaluation/log.py: the append-only JSONL event log (and run id validation)."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from evaluation.errors import HilbotError, LogError
from evaluation.log import EventLog, LogIssue, read_log
from evaluation.records import (
    Evaluation,
    ItemData,
    JudgeInfo,
    Labels,
    Note,
    Query,
    QueryEvaluation,
    Rating,
    RatingMetadata,
    Reviewer,
    ReviewSummary,
    RunHeader,
    RunSummary,
    SearchResult,
    Skip,
)
from evaluation.store import validate_run_id

WRITER = Path(__file__).parents[1] / "auxil" / "log_writer.py"
TS = datetime(2025, 12, 17, 22, 32, 30, tzinfo=timezone.utc)


def note(n: int | str, text: str = "hi", **kw) -> Note:
    return Note(
        run_id="r1",
        item_id=f"q{n}",
        reviewer=Reviewer(id="alice"),
        idempotency_key=f"k{n}",
        text=text,
        timestamp=TS,
        **kw,
    )


def note_line(n: int | str, text: str = "hi") -> bytes:
    return note(n, text).model_dump_json(exclude_none=True).encode() + b"\n"


def lines_of(path: Path) -> list[bytes]:
    """The file's lines without their newlines (a missing final newline leaves a last partial
    line)."""
    data = path.read_bytes()
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def all_model_records() -> list:
    alice = Reviewer(platform="telegram", id="42", name="Alice")
    return [
        RunHeader(
            run_id="r1",
            set="core",
            kind="answer",
            created_at=TS,
            source="in.json",
            judge=JudgeInfo(name="lexical", params={"w": 0.5}, prompt_hashes={"p": "abc"}),
            dimensions=["overall", "accuracy"],
            item_count=2,
        ),
        QueryEvaluation(
            run_id="r1",
            data=ItemData(
                id="q1",
                query=Query(
                    query="how do I sort?", intent="learn", category="howto", expected=["a.md"]
                ),
                results=[SearchResult(rank=1, path="a.md", title="A", score=0.9, snippet="sort …")],
                answer="use sorted()",
                contexts=["ctx"],
                ground_truth=["sorted"],
                tool_captures=[{"tool": "grep", "in": "x", "out": ["y"]}],
                evaluation=Evaluation(
                    scores={"overall": 0.75},
                    verdict="PASS",
                    confidence="high",
                    rationale="ok",
                    judge="lexical",
                ),
                features={"leap_distance": 2},
                latency_ms=12.5,
                cost_usd=0.001,
            ),
        ),
        RunSummary(run_id="r1", finished_at=TS, item_count=1, averageScores={"overall": 0.75}),
        Rating(
            run_id="r1",
            item_id="q1",
            reviewer=alice,
            channel="telegram",
            idempotency_key="u1",
            timestamp=TS,
            judgment="good",
            score=0.75,
            concerns=["vague"],
            note="fine, 日本語 ✓",
            confidence="medium",
            ai_verdict_shown=True,
            labels=Labels(trigger_correct=True, completeness_score=4, code_issues=["x"]),
            metadata=RatingMetadata(source_type="chat", session_date="2025-12-17"),
        ),
        Skip(
            run_id="r1",
            item_id="q2",
            reviewer=alice,
            idempotency_key="u2",
            timestamp=TS,
            skip_reason="unclear",
        ),
        note(1, text='multi\nline \u2028 text with "quotes" and \\ backslash'),
        ReviewSummary(
            run_id="r1",
            reviewer=alice,
            reviewedAt=TS,
            queriesReviewed=1,
            humanAverageScore=0.75,
            aiVsHumanDelta=0.0,
            synthesis="ok",
            actionItems=["ship"],
        ),
    ]


# --------------------------------------------------------------------------- 1. round trip


def test_round_trip_of_model_records(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    records = all_model_records()
    log = EventLog(path)
    for record in records[:3]:
        log.append(record)
    log.append_many(records[3:])
    log.close()

    issues: list[LogIssue] = []
    back = list(EventLog(path).read(issues))
    assert issues == []
    assert [type(r) for r in back] == [type(r) for r in records]
    assert back == records  # order preserved, every field survives

    data = path.read_bytes()
    assert data.endswith(b"\n")
    assert data.count(b"\n") == len(records)  # one line per record, even with "\n" inside a text
    for line, record in zip(lines_of(path), records):
        obj = json.loads(line)
        assert obj["type"] == record.type
        assert "\n" not in line.decode()


def test_round_trip_of_dict_records(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "dir" / "log.jsonl"  # parent directories are created
    records = [
        {
            "type": "custom",
            "n": 1,
            "text": "héllo\nworld \u2028 ✓",
            "nested": {"a": [1, 2.5, None, True]},
        },
        {"type": "other", "n": 2},
        {"type": "custom", "n": 3, "empty": {}, "list": []},
    ]
    log = EventLog(path)
    log.append(records[0])
    log.append_many(records[1:])

    issues: list[LogIssue] = []
    assert list(log.read(issues, raw=True)) == records
    assert issues == []
    assert list(read_log(path, raw=True)) == records
    data = path.read_bytes()
    assert data.endswith(b"\n")
    assert len(lines_of(path)) == 3
    assert data.count(b"\n") == 3


def test_dict_record_of_a_known_type_reads_as_model(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    original = note(7)
    EventLog(path).append(json.loads(original.model_dump_json()))
    issues: list[LogIssue] = []
    assert list(read_log(path, issues)) == [original]
    assert issues == []


def test_unknown_type_reads_raw_but_is_reported_parsed(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    log.append_many([note(1), {"type": "mystery", "x": 1}, note(2)])

    raw_issues: list[LogIssue] = []
    assert list(log.read(raw_issues, raw=True))[1] == {"type": "mystery", "x": 1}
    assert raw_issues == []

    issues: list[LogIssue] = []
    assert list(log.read(issues)) == [note(1), note(2)]
    assert len(issues) == 1
    assert issues[0].line == 2 and not issues[0].torn
    assert "mystery" in issues[0].reason


def test_sequential_appends_keep_order_and_are_visible_on_return(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    for i in range(30):
        log.append({"type": "t", "seq": i})
        # append returns only once the record is stored: it is readable right away
        assert list(read_log(path, raw=True))[-1] == {"type": "t", "seq": i}
    assert [r["seq"] for r in log.read(raw=True)] == list(range(30))
    assert log.fsyncs == 30


def test_append_many_is_one_fsync_and_keeps_order(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    log.append_many({"type": "t", "seq": i} for i in range(100))  # any iterable
    assert log.fsyncs == 1
    assert [r["seq"] for r in log.read(raw=True)] == list(range(100))


def test_empty_append_many_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    log.append_many([])
    assert not path.exists()
    assert log.fsyncs == 0
    log.append(note(1))
    log.append_many([])
    assert log.fsyncs == 1
    assert path.read_bytes() == note_line(1)


async def test_empty_aappend_many_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    await log.aappend_many([])
    assert not path.exists()
    assert log.fsyncs == 0


def test_close_then_append_reopens(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    log.append(note(1))
    log.close()
    log.close()  # idempotent
    log.append(note(2))
    log.close()
    assert path.read_bytes() == note_line(1) + note_line(2)
    assert log.fsyncs == 2


def test_append_to_existing_file_keeps_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    before = b'{"type":"x","hand":"written"}\n'
    path.write_bytes(before)
    EventLog(path).append(note(1))
    assert path.read_bytes() == before + note_line(1)


async def test_async_round_trip_sequential_order(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    for i in range(10):
        await log.aappend({"type": "t", "seq": i})
        assert list(read_log(path, raw=True))[-1] == {
            "type": "t",
            "seq": i,
        }  # stored when it resolves
    await log.aappend_many([{"type": "t", "seq": i} for i in range(10, 20)])
    await log.aappend(note(1))
    back = list(log.read(raw=True))
    assert [r["seq"] for r in back[:-1]] == list(range(20))
    assert back[-1]["type"] == "note"
    assert path.read_bytes().count(b"\n") == 21


_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",)))
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
            _json_values,
            max_size=5,
        ),
        min_size=1,
        max_size=8,
    )
)
def test_property_dict_records_round_trip(records: list[dict]) -> None:
    records = [{**r, "type": "p"} for r in records]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.jsonl"
        log = EventLog(path)
        log.append_many(records[::2])
        for record in records[1::2]:
            log.append(record)
        log.close()
        expected = records[::2] + records[1::2]
        issues: list[LogIssue] = []
        assert list(read_log(path, issues, raw=True)) == expected
        assert issues == []
        assert path.read_bytes().count(b"\n") == len(records)


# --------------------------------------------------------------------------- 2. group commit


async def test_group_commit_async_tasks(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    await asyncio.gather(*(log.aappend({"type": "t", "seq": i}) for i in range(200)))
    lines = lines_of(path)
    assert len(lines) == 200
    assert sorted(json.loads(line)["seq"] for line in lines) == list(range(200))
    assert 1 <= log.fsyncs <= 10, log.fsyncs


async def test_group_commit_async_batches_keep_their_order(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    await asyncio.gather(
        *(
            log.aappend_many([{"type": "t", "task": t, "seq": i} for i in range(5)])
            for t in range(40)
        )
    )
    records = list(log.read(raw=True))
    assert len(records) == 200
    for t in range(40):
        assert [r["seq"] for r in records if r["task"] == t] == list(range(5))
    assert log.fsyncs <= 10


def test_group_commit_threads(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            barrier.wait()
            for i in range(50):
                log.append({"type": "t", "thread": t, "seq": i})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    assert not any(th.is_alive() for th in threads)
    assert errors == []

    records = [json.loads(line) for line in lines_of(path)]
    assert len(records) == 400
    for t in range(8):
        assert [r["seq"] for r in records if r["thread"] == t] == list(
            range(50)
        )  # per thread, in order
    assert log.fsyncs < 400, log.fsyncs


def test_two_log_instances_in_threads_do_not_mix_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    logs = [EventLog(path), EventLog(path)]
    barrier = threading.Barrier(4)

    def work(t: int) -> None:
        barrier.wait()
        log = logs[t % 2]
        for i in range(0, 60, 3):
            log.append_many(
                [{"type": "t", "thread": t, "seq": i + k, "pad": "y" * 5000} for k in range(3)]
            )

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    records = [json.loads(line) for line in lines_of(path)]
    assert len(records) == 240
    for t in range(4):
        assert [r["seq"] for r in records if r["thread"] == t] == list(range(60))


async def test_threads_and_async_tasks_together(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)

    def sync_side() -> None:
        for i in range(50):
            log.append({"type": "t", "who": "thread", "seq": i})

    thread_done = asyncio.get_running_loop().run_in_executor(None, sync_side)
    for i in range(0, 50, 5):
        await asyncio.gather(
            *(log.aappend({"type": "t", "who": "task", "seq": i + k}) for k in range(5))
        )
    await thread_done
    records = [json.loads(line) for line in lines_of(path)]
    assert len(records) == 100
    assert [r["seq"] for r in records if r["who"] == "thread"] == list(range(50))
    assert sorted(r["seq"] for r in records if r["who"] == "task") == list(range(50))


# --------------------------------------------------------------------------- 3. torn last line


def test_torn_last_line_is_reported_then_isolated_by_next_append(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    EventLog(path).append(note(1))
    fragment = note_line(2)[:37]  # a crash mid-write: part of a line, no newline
    with open(path, "ab") as handle:
        handle.write(fragment)
    before = path.read_bytes()

    issues: list[LogIssue] = []
    assert list(read_log(path, issues)) == [note(1)]
    assert len(issues) == 1
    assert issues[0].torn is True
    assert issues[0].line == 2
    assert issues[0].path == path
    assert str(issues[0]) == f"{path}:2: {issues[0].reason}"
    assert path.read_bytes() == before  # reading never rewrites

    log = EventLog(path)
    log.append(note(3))
    data = path.read_bytes()
    assert data == before + b"\n" + note_line(3)
    assert lines_of(path) == [note_line(1)[:-1], fragment, note_line(3)[:-1]]  # never merged
    assert data.endswith(b"\n")

    issues = []
    assert list(log.read(issues)) == [note(1), note(3)]
    assert len(issues) == 1
    assert issues[0].line == 2
    assert issues[0].torn is False
    assert issues[0].reason.startswith("invalid JSON")
    assert (
        str(issues[0])
        == f"{path}:2: {issues[0].reason} (to delete it while hilbot runs, edit under its lock: "
        f"flock {path} sed -i '2d' {path})"
    )

    # the fresh-line repair happens once: a further append adds no blank line
    log.append(note(4))
    assert path.read_bytes() == data + note_line(4)


def test_torn_line_repair_with_a_log_opened_before_the_tear(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    log.append(note(1))  # the descriptor is now open
    with open(path, "ab") as handle:  # another process crashed mid-write meanwhile
        handle.write(b'{"type":"note","run')
    log.append(note(2))
    assert lines_of(path) == [note_line(1)[:-1], b'{"type":"note","run', note_line(2)[:-1]]


async def test_torn_line_repair_async(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(note_line(1) + b'{"ty')
    log = EventLog(path)
    await asyncio.gather(*(log.aappend(note(i)) for i in range(2, 6)))
    lines = lines_of(path)
    assert lines[:2] == [note_line(1)[:-1], b'{"ty']
    assert sorted(lines[2:]) == sorted(note_line(i)[:-1] for i in range(2, 6))


def test_torn_only_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"type":')
    issues: list[LogIssue] = []
    assert list(read_log(path, issues, raw=True)) == []
    assert [(i.line, i.torn) for i in issues] == [(1, True)]
    EventLog(path).append(note(1))
    assert path.read_bytes() == b'{"type":\n' + note_line(1)


def test_valid_last_line_without_newline_is_read_and_not_merged(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(note_line(1)[:-1])  # hand-edited: complete record, no final newline
    issues: list[LogIssue] = []
    assert list(read_log(path, issues)) == [note(1)]
    assert issues == []
    EventLog(path).append(note(2))
    assert path.read_bytes() == note_line(1) + note_line(2)
    assert list(read_log(path, issues)) == [note(1), note(2)]
    assert issues == []


def test_torn_line_without_issue_list_does_not_raise(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(note_line(1) + b"[1, 2, 3]\n" + b'{"x')
    assert list(read_log(path)) == [note(1)]
    assert list(EventLog(path).read()) == [note(1)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fragment=st.binary(min_size=1, max_size=200).filter(lambda b: b"\n" not in b),
    count=st.integers(0, 3),
)
def test_property_appends_after_any_torn_tail_start_a_fresh_line(
    fragment: bytes, count: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.jsonl"
        prefix = b"".join(note_line(i) for i in range(count))
        path.write_bytes(prefix + fragment)
        read_issues: list[LogIssue] = []
        list(read_log(path, read_issues))
        assert all(i.line == count + 1 and i.torn for i in read_issues)
        log = EventLog(path)
        log.append(note("new"))
        log.close()
        assert path.read_bytes() == prefix + fragment + b"\n" + note_line("new")
        issues: list[LogIssue] = []
        back = list(read_log(path, issues))
        assert back[:count] == [note(i) for i in range(count)]
        assert back[-1] == note("new")
        assert not any(i.torn for i in issues)
        assert all(i.line == count + 1 for i in issues)


# --------------------------------------------------------------------------- 4. other bad lines


BAD_FILE_LINES = [
    note_line(1),  # 1 ok
    b'{"type": "note", "run_id": \n',  # 2 invalid JSON
    b"[1, 2, 3]\n",  # 3 JSON array
    b"\n",  # 4 blank (ignored, but counted)
    b'{"run_id": "r1", "text": "no type"}\n',  # 5 missing type
    note_line(2),  # 6 ok
    b'{"type":"note","run_id":"r1","item_id":"q9","reviewer":{"id":"a"},"idempotency_key":"k9"}\n',  # 7 no text
    b"   \t \n",  # 8 blank
    b'{"type": "mystery", "x": 1}\n',  # 9 unknown type
    b'"just a string"\n',  # 10 JSON string
    b'{"type":"note","run_id":"r1","item_id":"q8","reviewer":"alice","idempotency_key":"k8","text":"t"}\n',  # 11
    note_line(3),  # 12 ok
]


def _check_issue(issue: LogIssue, path: Path, line: int) -> None:
    assert issue.path == path
    assert issue.line == line
    assert issue.torn is False
    assert (
        str(issue)
        == f"{path}:{line}: {issue.reason} (to delete it while hilbot runs, edit under its lock: "
        f"flock {path} sed -i '{line}d' {path})"
    )
    assert "\n" not in str(issue)
    assert issue.reason.endswith("; skipped and left in place")


def test_bad_lines_are_reported_with_line_numbers_and_left_in_place(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    original = b"".join(BAD_FILE_LINES)
    path.write_bytes(original)

    issues: list[LogIssue] = []
    records = list(read_log(path, issues))
    assert records == [note(1), note(2), note(3)]
    assert [i.line for i in issues] == [2, 3, 5, 7, 9, 10, 11]
    for issue in issues:
        _check_issue(issue, path, issue.line)
    by_line = {i.line: i.reason for i in issues}
    assert by_line[2].startswith("invalid JSON (")
    assert "column" in by_line[2]
    assert by_line[3].startswith("a record must be a JSON object")
    assert by_line[5].startswith("missing field 'type'")
    assert by_line[7].startswith("text: ")
    assert "mystery" in by_line[9]
    assert by_line[10].startswith("a record must be a JSON object")
    assert by_line[11].startswith("reviewer: ")
    assert path.read_bytes() == original  # reading never rewrites

    raw_issues: list[LogIssue] = []
    raw = list(read_log(path, raw_issues, raw=True))
    assert [i.line for i in raw_issues] == [2, 3, 5, 10]  # raw mode does not validate known types
    assert [r.get("type") for r in raw] == ["note", "note", "note", "mystery", "note", "note"]
    assert path.read_bytes() == original

    log = EventLog(path)
    log.append(note(4))
    after = path.read_bytes()
    assert after == original + note_line(4)  # only the appended suffix is new
    issues2: list[LogIssue] = []
    assert list(log.read(issues2)) == [note(1), note(2), note(3), note(4)]
    assert [(i.line, i.reason) for i in issues2] == [(i.line, i.reason) for i in issues]
    assert path.read_bytes() == after


def test_invalid_utf8_line_is_reported_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(
        note_line(1) + b'{"type":"t","x":"\xff\xfe\xc3"}\n' + b"\xff\xfe\xfd\n" + note_line(2)
    )
    issues: list[LogIssue] = []
    assert list(read_log(path, issues)) == [note(1), note(2)]
    assert [i.line for i in issues] == [2, 3]
    assert not any(i.torn for i in issues)


def test_deeply_nested_json_line_is_reported_not_fatal(tmp_path: Path) -> None:
    """ "Bad lines are reported, never fatal" (read_log's docstring) must hold for any line's
    content.

    A line of deeply nested JSON makes json.loads raise RecursionError, which read_log does not
    catch.
    """
    path = tmp_path / "log.jsonl"
    path.write_bytes(note_line(1) + b"[" * 100_000 + b"\n" + note_line(2))
    issues: list[LogIssue] = []
    assert list(read_log(path, issues)) == [note(1), note(2)]
    assert [i.line for i in issues] == [2]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), min_size=1, max_size=6),
    st.booleans(),
)
def test_property_garbage_never_breaks_reading(lines: list[bytes], final_newline: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.jsonl"
        data = b"\n".join(lines) + (b"\n" if final_newline else b"")
        path.write_bytes(data)
        for raw in (False, True):
            issues: list[LogIssue] = []
            records = list(read_log(path, issues, raw=raw))
            non_blank = [n for n, line in enumerate(lines, 1) if line.strip()]
            assert len(records) + len(issues) == len(non_blank)
            assert {i.line for i in issues} <= set(non_blank)
            assert [i.line for i in issues] == sorted(i.line for i in issues)
            for issue in issues:
                assert issue.torn == (issue.line == len(lines) and not final_newline)
            assert path.read_bytes() == data


# --------------------------------------------------------------------------- 5. two processes


def test_two_processes_append_concurrently(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    count = 2000
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER), "concurrent", str(path), name, str(count), str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name, seed in (("A", 1), ("B", 2))
    ]
    try:
        for proc in procs:
            assert proc.stdout.readline() == b"ready\n", proc.stderr.read().decode()
        for proc in procs:  # start together
            proc.stdin.write(b"go\n")
            proc.stdin.flush()
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err.decode()
            assert out.startswith(b"done ")
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    data = path.read_bytes()
    assert data.endswith(b"\n")
    lines = lines_of(path)
    assert len(lines) == 2 * count
    records = []
    for line in lines:
        obj = json.loads(line)  # each line a complete JSON object
        assert isinstance(obj, dict) and obj["type"] == "probe"
        records.append(obj)
    pairs = [(r["writer"], r["seq"]) for r in records]
    assert len(set(pairs)) == 2 * count
    assert set(pairs) == {(w, s) for w in "AB" for s in range(count)}
    for w in "AB":
        seqs = [r["seq"] for r in records if r["writer"] == w]
        assert seqs == list(range(count))  # one writer's appends never reorder
    # a batch is written under one lock: its lines are contiguous in the file
    positions: dict[tuple[str, int], list[int]] = {}
    for index, r in enumerate(records):
        positions.setdefault((r["writer"], r["batch"]), []).append(index)
    for where in positions.values():
        assert where == list(range(where[0], where[0] + len(where)))
    # the writers really ran at the same time (their lines interleave)
    switches = sum(1 for a, b in zip(records, records[1:]) if a["writer"] != b["writer"])
    assert switches >= 2

    issues: list[LogIssue] = []
    assert len(list(read_log(path, issues, raw=True))) == 2 * count
    assert issues == []


# --------------------------------------------------------------------------- 6. crash


def _crash_once(path: Path, acks_wanted: int) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), "crash", str(path), str(64 * 1024)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    watchdog = threading.Timer(25, proc.kill)
    watchdog.start()
    acked: list[int] = []
    try:
        while len(acked) < acks_wanted:
            line = proc.stdout.readline()
            assert line.endswith(b"\n"), f"writer stopped early: {proc.stderr.read().decode()}"
            acked.append(int(line))
        os.kill(proc.pid, signal.SIGKILL)  # mid-burst: the writer is busy appending
        rest = proc.stdout.read()
        proc.wait()
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    acked += [int(x) for x in rest.split(b"\n")[:-1]]  # acks printed before the kill landed
    assert acked == list(range(len(acked)))

    # every acknowledged record is in the file, in order; the log still reads
    issues: list[LogIssue] = []
    notes = list(read_log(path, issues))
    seqs = [int(n.idempotency_key[1:]) for n in notes]
    assert seqs == list(range(len(seqs)))  # a single writer: no gaps, no repeats
    assert set(acked) <= set(seqs)
    assert all(len(n.text) == 64 * 1024 for n in notes)
    lines = lines_of(path)
    assert len(issues) <= 1
    if issues:  # only a torn last line is possible
        assert issues[0].torn is True
        assert issues[0].line == len(lines)
        assert not path.read_bytes().endswith(b"\n")

    # a new append after the crash starts on a fresh line and reads back
    before = path.read_bytes()
    after_note = note("after-crash")
    EventLog(path).append(after_note)
    data = path.read_bytes()
    assert data.startswith(before)
    assert data.endswith(note_line("after-crash"))
    assert data.count(b"\n") == len(lines) + 1
    issues2: list[LogIssue] = []
    back = list(read_log(path, issues2))
    assert back == notes + [after_note]
    assert not any(i.torn for i in issues2)
    assert [i.line for i in issues2] == [i.line for i in issues]


@pytest.mark.parametrize("attempt", range(3))
def test_crash_mid_append_loses_no_acknowledged_record(tmp_path: Path, attempt: int) -> None:
    _crash_once(tmp_path / f"crash-{attempt}.jsonl", acks_wanted=300 + 37 * attempt)


# --------------------------------------------------------------------------- 7. run ids


@pytest.mark.parametrize(
    "run_id", ["2025-12-17T22-32-30", "demo-docs-search", "a.b_c", "A1", "x" * 128]
)
def test_good_run_ids(run_id: str) -> None:
    assert validate_run_id(run_id) == run_id


@pytest.mark.parametrize(
    "run_id",
    [
        "../../etc/passwd",
        "a/b",
        ".hidden",
        "",
        "a b",
        "x\\y",
        "..",
        ".",
        "/abs",
        "a\x00b",
        "run\u00e9",
        "run1\n",  # a trailing newline: outside letters/digits/._-
    ],
)
def test_bad_run_ids(run_id: str) -> None:
    with pytest.raises(HilbotError) as info:
        validate_run_id(run_id)
    message = str(info.value)
    assert "\n" not in message
    assert message.strip() == message
    assert "use letters, digits" in message  # says how to fix it
    assert repr(run_id) in message


def test_none_run_id_is_rejected() -> None:
    with pytest.raises(HilbotError):
        validate_run_id(None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- 8. missing file


def test_missing_file_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "nope" / "log.jsonl"
    issues: list[LogIssue] = []
    assert list(read_log(path, issues)) == []
    assert list(read_log(path, issues, raw=True)) == []
    assert list(EventLog(path).read(issues)) == []
    assert issues == []
    assert not path.exists() and not path.parent.exists()  # reading creates nothing


def test_empty_and_blank_files_read_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"")
    issues: list[LogIssue] = []
    assert list(read_log(path, issues)) == []
    path.write_bytes(b"\n\n  \n")
    assert list(read_log(path, issues)) == []
    assert issues == []


# --------------------------------------------------------------------------- 9. OS errors


def _assert_log_error(exc: BaseException, path: Path) -> None:
    assert isinstance(exc, LogError)
    assert isinstance(exc, HilbotError)
    assert str(path) in str(exc)
    assert "\n" not in str(exc)
    assert isinstance(exc.__cause__, OSError)


def test_append_under_a_regular_file_raises_log_error(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"not a directory")
    path = blocker / "log.jsonl"
    log = EventLog(path)
    with pytest.raises(LogError) as info:
        log.append(note(1))
    _assert_log_error(info.value, path)
    with pytest.raises(LogError):
        log.append_many([note(1), note(2)])
    assert log.fsyncs == 0
    assert blocker.read_bytes() == b"not a directory"

    deeper = EventLog(blocker / "sub" / "log.jsonl")
    with pytest.raises(LogError) as info:
        deeper.append(note(1))
    _assert_log_error(info.value, blocker / "sub" / "log.jsonl")


async def test_async_append_under_a_regular_file_raises_log_error_for_every_waiter(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"x")
    path = blocker / "log.jsonl"
    log = EventLog(path)
    with pytest.raises(LogError) as info:
        await log.aappend(note(1))
    _assert_log_error(info.value, path)
    results = await asyncio.gather(
        *(log.aappend(note(i)) for i in range(10)), return_exceptions=True
    )
    assert len(results) == 10
    for result in results:
        _assert_log_error(result, path)


def test_thread_appends_under_a_regular_file_all_raise(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"x")
    log = EventLog(blocker / "log.jsonl")
    barrier = threading.Barrier(4)
    outcomes: list[BaseException | None] = []
    lock = threading.Lock()

    def work() -> None:
        barrier.wait()
        for _ in range(5):
            try:
                log.append(note(1))
                result: BaseException | None = None
            except BaseException as exc:
                result = exc
            with lock:
                outcomes.append(result)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    assert len(outcomes) == 20
    assert all(isinstance(o, LogError) for o in outcomes)


def test_reading_a_directory_raises_log_error(tmp_path: Path) -> None:
    path = tmp_path / "adir"
    path.mkdir()
    with pytest.raises(LogError) as info:
        list(read_log(path))
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_error_recovers_once_the_path_is_usable(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"x")
    path = blocker / "log.jsonl"
    log = EventLog(path)
    with pytest.raises(LogError):
        log.append(note(1))
    blocker.unlink()  # the obstacle goes away: the same instance can append again
    log.append(note(2))
    assert path.read_bytes() == note_line(2)
    assert log.fsyncs == 1


# --------------------------------------------------------------------------- stored = readable


def test_a_record_that_cannot_be_read_back_is_refused_before_it_is_stored(tmp_path: Path) -> None:
    """NaN would be written as ``null`` and then be unreadable: the model refuses it up front."""
    with pytest.raises(ValidationError):
        Rating(
            run_id="r1",
            item_id="q1",
            reviewer=Reviewer(id="a"),
            idempotency_key="k1",
            timestamp=TS,
            judgment="good",
            score=math.nan,
        )
    rating = Rating(
        run_id="r1",
        item_id="q1",
        reviewer=Reviewer(id="a"),
        idempotency_key="k1",
        timestamp=TS,
        judgment="good",
        score=0.7,
    )
    log = EventLog(tmp_path / "log.jsonl")
    log.append(rating)
    issues: list[LogIssue] = []
    assert list(log.read(issues)) == [rating] and issues == []
