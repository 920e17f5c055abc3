"""The outbox: every label on its way to another tool is recorded, retried within the platform's
limits, confirmed by reading it back, and resumed after a restart — against a platform in memory.

The platform here is a small fake registered as a plugin would register a tool (``memory``): its
answers are queued (``accept``, ``429`` with a wait, ``503``, ``400``), and it holds what it
accepted by remote id, as an upserting API does. Everything else — the log, the ledger, the
outbox, the pull into a run — is real.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import BaseModel

from evaluation import Rating, Reviewer, Store, load_config
from evaluation.connectors import (
    ConnectorError,
    Label,
    Origin,
    Pulled,
    Sent,
    SinkSpec,
    SourceSpec,
    sink,
    sinks,
    source,
)
from evaluation.connectors.commands import push_command, status_lines, sync_round
from evaluation.connectors.outbox import outbox
from evaluation.connectors.pulling import pull_run
from evaluation.records import ItemData, Query

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
ALICE, BOB = (
    Reviewer(platform="telegram", id="1", name="Alice"),
    Reviewer(platform="slack", id="U2", name="Bob"),
)
SECRET = "sk-memory-platform-secret-0123456789"


class Platform:
    """The remote side: labels by remote id (an upsert), and the answers queued for the next
    calls."""

    def __init__(self) -> None:
        self.held: dict[str, dict[str, Any]] = {}
        self.answers: list[Any] = []
        self.calls = 0
        self.writes = 0
        self.hide: set[str] = set()
        """Remote ids accepted but not (yet) readable: reads lag writes."""
        self.lock = threading.Lock()

    def next_answer(self) -> Any:
        with self.lock:
            self.calls += 1
            return self.answers.pop(0) if self.answers else "accept"


PLATFORM = Platform()


class MemorySinkSettings(BaseModel):
    model_config = {"extra": "forbid"}

    prefix: str = ""
    """A name prefix."""


class MemorySink:
    where = "memory://platform"

    def __init__(self, settings: MemorySinkSettings, env: Any):
        self.prefix = settings.prefix

    def send(self, labels: list[Label]) -> list[Sent]:
        answer = PLATFORM.next_answer()
        if answer == 429:
            raise ConnectorError("memory: 429 Too Many Requests", retry_after=0.05)
        if answer == 503:
            raise ConnectorError("memory: 503 Service Unavailable", transient=True)
        if answer == 400:
            raise ConnectorError(f"memory: 400 value not allowed (key {SECRET})")
        with PLATFORM.lock:
            for label in labels:
                PLATFORM.writes += 1
                PLATFORM.held[label.remote_id] = {
                    "name": self.prefix + label.dimension,
                    "value": label.judgment,
                    "comment": label.note,
                    "author": label.reviewer,
                    "trace": label.origin.id,
                    "gold": label.gold,
                }
        return [Sent(remote_id=x.remote_id, version=x.version) for x in labels]

    def confirm(self, sent: list[Sent]) -> list[str]:
        return [
            s.remote_id
            for s in sent
            if s.remote_id in PLATFORM.held and s.remote_id not in PLATFORM.hide
        ]


class MemorySourceSettings(BaseModel):
    model_config = {"extra": "forbid"}

    queue: str
    """The queue."""
    count: int = 3
    """How many items it holds."""


def memory_pull(settings: MemorySourceSettings, env: Any) -> Pulled:
    items = [
        ItemData(
            id=f"t{n}",
            query=Query(query=f"question {n}"),
            answer=f"answer {n}",
            features={"origin": Origin(tool="memory", kind="trace", id=f"trace-{n}").model_dump()},
        )
        for n in range(settings.count)
    ]
    return Pulled(
        kind="answer", source=f"memory queue {settings.queue}", set_name=settings.queue, items=items
    )


if "memory" not in sinks.names():
    sink(
        SinkSpec(
            name="memory",
            extra="",
            settings=MemorySinkSettings,
            make=MemorySink,
            rate_per_s=200,
            batch=2,
        )
    )
    source(SourceSpec(name="memory", extra="", settings=MemorySourceSettings, pull=memory_pull))


@pytest.fixture(autouse=True)
def platform():
    global PLATFORM
    PLATFORM = Platform()
    yield PLATFORM


@pytest.fixture
def pulled(store: Store) -> tuple[Store, str]:
    report = pull_run(
        store, load_config(None), "memory", {"queue": "q1"}, {}, run_id="mem", follow=True
    )
    return store, report.run_id


_keys = iter(range(10**6))


def rate(
    store: Store,
    item: str,
    judgment: str,
    who: Reviewer = ALICE,
    minutes: float = 0,
    note: str | None = None,
) -> Rating:
    score = {"correct": 1.0, "partial": 0.5, "incorrect": 0.0}.get(judgment, 0.5)
    rating = Rating(
        run_id="mem",
        item_id=item,
        dimension="answer",
        reviewer=who,
        channel=who.platform,
        idempotency_key=f"k{next(_keys)}",
        judgment=judgment,
        score=score,
        note=note,
        timestamp=T0 + timedelta(minutes=minutes),
    )
    store.ratings.append(rating)
    return rating


def push(store: Store, seconds: float = 5.0, **kw: Any):
    return push_command(store, load_config(None), "mem", "memory", [], {}, seconds=seconds, **kw)


def states(store: Store) -> list[str]:
    return [s.state for s in outbox(store, "memory").values()]


def _judgments() -> list[str]:
    return [o.value for o in load_config(None).scale_for("answer").options]


# ----------------------------------------------------------------------------------------------
# pulling


def test_a_pull_makes_a_run_whose_items_keep_their_origin(pulled) -> None:
    store, run_id = pulled
    run = store.load_run(run_id)
    assert run.header.source == "memory queue q1" and run.header.kind == "answer"
    assert [i.features["origin"]["id"] for i in run.items] == ["trace-0", "trace-1", "trace-2"]
    calls = [json.loads(line) for line in store.connector_calls.path.read_text().splitlines()]
    assert calls[0]["operation"] == "pull" and calls[0]["count"] == 3


def test_a_source_that_grows_adds_only_new_items(pulled) -> None:
    store, run_id = pulled
    run_file = store.run_path(run_id)
    before = run_file.read_bytes()
    report = pull_run(
        store,
        load_config(None),
        "memory",
        {"queue": "q1", "count": 5},
        {},
        run_id=run_id,
        follow=True,
    )
    assert (report.added, report.found) == (2, 5)
    assert run_file.read_bytes().startswith(before)  # appended, never rewritten
    assert [i.id for i in store.load_run(run_id).items] == ["t0", "t1", "t2", "t3", "t4"]


def test_a_one_off_pull_makes_a_whole_run_and_never_adds_to_an_existing_one(pulled) -> None:
    store, run_id = pulled
    report = pull_run(store, load_config(None), "memory", {"queue": "q2"}, {})
    assert store.load_run(report.run_id).summary is not None
    with pytest.raises(Exception, match="already exists"):
        pull_run(store, load_config(None), "memory", {"queue": "q2"}, {}, run_id=run_id)
    assert len(store.load_run(run_id).items) == 3


def test_a_bad_source_setting_is_one_line_naming_it(store: Store) -> None:
    with pytest.raises(ConnectorError, match="bogus"):
        pull_run(store, load_config(None), "memory", {"queue": "q", "bogus": 1}, {})
    assert store.run_ids() == []


# ----------------------------------------------------------------------------------------------
# pushing


def test_each_label_is_sent_once_and_confirmed(pulled) -> None:
    store, _ = pulled
    good, bad = _judgments()[0], _judgments()[-1]
    rate(store, "t0", good, note="spot on")
    rate(store, "t1", bad, who=BOB)
    report = push(store)
    assert (report.sent, report.confirmed, report.waiting, report.failed) == (2, 2, 0, [])
    assert sorted(v["value"] for v in PLATFORM.held.values()) == sorted([good, bad])
    assert {v["comment"] for v in PLATFORM.held.values()} == {"spot on", None}
    again = push(store)
    assert (again.sent, again.confirmed) == (0, 0) and PLATFORM.writes == 2  # nothing sent twice
    assert sorted(states(store)) == ["confirmed", "confirmed"]


def test_a_corrected_rating_updates_the_same_label(pulled) -> None:
    store, _ = pulled
    first, second = _judgments()[0], _judgments()[1]
    rate(store, "t0", first)
    push(store)
    rate(store, "t0", second, minutes=5)
    report = push(store)
    assert report.sent == 1 and len(PLATFORM.held) == 1
    assert next(iter(PLATFORM.held.values()))["value"] == second


def test_a_429_waits_its_retry_after_and_a_503_backs_off(pulled) -> None:
    store, _ = pulled
    rate(store, "t0", _judgments()[0])
    PLATFORM.answers = [429, 429, 503, "accept"]
    report = push(store)
    assert (report.sent, report.confirmed, report.failed) == (1, 1, [])
    assert PLATFORM.calls == 4 and len(PLATFORM.held) == 1
    pushes = [p for _, p in _push_records(store)]
    assert [p.state for p in pushes] == ["pending", "sent", "confirmed"] and pushes[1].attempt == 4


def test_a_refused_label_is_recorded_as_failed_with_why_and_sent_again_only_when_asked(
    pulled,
) -> None:
    store, _ = pulled
    rate(store, "t0", _judgments()[0])
    PLATFORM.answers = [400]
    report = push(store)
    assert report.failed and "400 value not allowed" in report.failed[0]
    assert states(store) == ["failed"] and "400" in " ".join(status_lines(store))
    assert push(store).sent == 0  # not retried on its own
    assert push(store, retry_failed=True).sent == 1


def test_an_outage_longer_than_the_budget_leaves_labels_pending_and_the_next_push_sends_them(
    pulled,
) -> None:
    store, _ = pulled
    rate(store, "t0", _judgments()[0])
    rate(store, "t1", _judgments()[1])
    PLATFORM.answers = [503] * 50
    report = push(store, seconds=0.6)
    assert report.sent == 0 and report.waiting == 2 and "503" in (report.error or "")
    assert sorted(states(store)) == ["pending", "pending"]
    PLATFORM.answers = []
    report = push(store)
    assert (report.sent, report.confirmed) == (2, 2) and PLATFORM.writes == 2


def test_a_label_not_yet_readable_is_confirmed_by_a_later_push(pulled) -> None:
    """Reads lag writes on the real services: sent is not confirmed until it is read back."""
    store, _ = pulled
    rate(store, "t0", _judgments()[0])
    PLATFORM.hide = set()
    report = push(store)
    assert report.confirmed == 1
    rate(store, "t1", _judgments()[0])
    from evaluation.connectors import remote_id

    PLATFORM.hide = {remote_id("mem", "t1", "answer", ALICE.key)}
    report = push(store)
    assert (report.sent, report.confirmed, report.waiting) == (1, 0, 1)
    PLATFORM.hide = set()
    report = push(store)
    assert (report.sent, report.confirmed) == (0, 1) and PLATFORM.writes == 2


def test_secrets_in_a_platforms_error_never_reach_the_files(pulled, monkeypatch) -> None:
    monkeypatch.setenv("MEMORY_API_KEY", SECRET)
    store, _ = pulled
    rate(store, "t0", _judgments()[0])
    PLATFORM.answers = [400]
    push(store)
    for path in (store.ratings.path, store.connector_calls.path):
        assert SECRET not in path.read_text() and "[secret]" in path.read_text()


def test_the_serve_round_pushes_configured_sinks(pulled, tmp_path) -> None:
    store, _ = pulled
    toml = tmp_path / "hilbot.toml"
    toml.write_text('[sinks.team]\ntype = "memory"\nprefix = "human-"\nruns = ["mem*"]\n')
    config = load_config(toml)
    rate(store, "t0", _judgments()[0])
    assert sync_round(store, config, {}) == []
    assert [v["name"] for v in PLATFORM.held.values()] == ["human-answer"]
    assert sync_round(store, config, {}) == [] and PLATFORM.writes == 1


def _push_records(store: Store) -> list[tuple[int, Any]]:
    from analysis import read_typed

    return read_typed(store.ratings.path, "push")
