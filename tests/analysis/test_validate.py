"""analysis.validate: schema errors fail, contradictions are flagged, nothing is rewritten.

The ``flagged`` store: runs alpha (quality; a1, a2) and beta (overall; b1). One line per flag:

     1  alice  alpha/a1 quality  excellent [lacks_catalyst]    -> excellent_with_concern (top of the scale)
     2  bob    alpha/a1 quality  good [thesis_unclear]         -> excellent_with_concern (asks no concerns)
     3  carol  alpha/zz quality  okay                          -> unknown_item (no such item)
     4  carol  ghost/g1 overall  good                          -> unknown_item (no such run)
     5  dave   alpha/a2 vibes    good                          -> unknown_dimension
     6  dave   alpha/a2 quality  superb                        -> unknown_judgment
     7  erin   alpha/a2 quality  good 0.9                      -> score_mismatch
     8  frank  alpha/a1 quality  okay, session 2026-11-20
     9  frank  alpha/a1 quality  miss, session 2026-11-20      -> rated_twice_in_session (a change)
    10  line 9 again (same idempotency key)                    -> duplicate_delivery (counted only)
    11  frank  alpha/a1 quality  miss, session 2026-11-21      (another session: fine)
    12  gina   note on alpha/a2, no rating                     (allowed: not flagged)
    13  hank   skip of beta/b1                                 (fine)
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone

import pytest

from analysis.validate import FLAGS, Flag, ValidationReport, validate
from evaluation import Store
from evaluation.records import (
    ItemData,
    Note,
    Query,
    QueryEvaluation,
    Rating,
    RatingMetadata,
    Reviewer,
    RunHeader,
    Skip,
)

T = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)


def _who(name: str) -> Reviewer:
    return Reviewer(platform="terminal", id=name)


def _rating(
    name: str,
    run: str,
    item: str,
    dimension: str,
    judgment: str,
    score: float,
    n: int,
    *,
    key: str | None = None,
    session: str | None = None,
    concerns: list[str] | None = None,
    note: str | None = None,
) -> Rating:
    return Rating(
        run_id=run,
        item_id=item,
        dimension=dimension,
        reviewer=_who(name),
        idempotency_key=key or f"k{n}",
        timestamp=T + timedelta(minutes=n),
        judgment=judgment,
        score=score,
        concerns=concerns or [],
        note=note,
        metadata=RatingMetadata(session_date=session),
    )


def _runs(store: Store) -> None:
    for run_id, dims, items in (
        ("alpha", ["quality"], ["a1", "a2"]),
        ("beta", ["overall"], ["b1"]),
    ):
        store.create_run(
            RunHeader(run_id=run_id, dimensions=dims),
            [
                QueryEvaluation(run_id=run_id, data=ItemData(id=i, query=Query(query=i)))
                for i in items
            ],
        )


@pytest.fixture
def flagged(store: Store) -> Store:
    _runs(store)
    log = store.ratings
    log.append(
        _rating("alice", "alpha", "a1", "quality", "excellent", 1.0, 1, concerns=["lacks_catalyst"])
    )
    log.append(
        _rating("bob", "alpha", "a1", "quality", "good", 0.7, 2, concerns=["thesis_unclear"])
    )
    log.append(_rating("carol", "alpha", "zz", "quality", "okay", 0.4, 3))
    log.append(_rating("carol", "ghost", "g1", "overall", "good", 1.0, 4))
    log.append(_rating("dave", "alpha", "a2", "vibes", "good", 0.7, 5))
    log.append(_rating("dave", "alpha", "a2", "quality", "superb", 0.9, 6))
    log.append(_rating("erin", "alpha", "a2", "quality", "good", 0.9, 7))
    log.append(_rating("frank", "alpha", "a1", "quality", "okay", 0.4, 8, session="2026-11-20"))
    log.append(
        _rating("frank", "alpha", "a1", "quality", "miss", 0.1, 9, key="f2", session="2026-11-20")
    )
    log.append(
        _rating("frank", "alpha", "a1", "quality", "miss", 0.1, 9, key="f2", session="2026-11-20")
    )
    log.append(_rating("frank", "alpha", "a1", "quality", "miss", 0.1, 11, session="2026-11-21"))
    log.append(
        Note(
            run_id="alpha",
            item_id="a2",
            dimension="quality",
            reviewer=_who("gina"),
            idempotency_key="k12",
            text="no rating, just this",
        )
    )
    log.append(Skip(run_id="beta", item_id="b1", reviewer=_who("hank"), idempotency_key="k13"))
    return store


def _digest(store: Store) -> str:
    return hashlib.sha256(store.ratings.path.read_bytes()).hexdigest()


def test_one_line_per_flag(flagged, config):
    before = _digest(flagged)
    report = validate(flagged, config)
    path = flagged.ratings.path
    assert report.lines() == [
        f"{path}:1: excellent_with_concern: 'excellent' (the top of the scale) carries concerns "
        "lacks_catalyst",
        f"{path}:2: excellent_with_concern: 'good' (an option that asks no concerns) carries "
        "concerns thesis_unclear",
        f"{path}:3: unknown_item: rating of item 'zz', which run 'alpha' does not have",
        f"{path}:4: unknown_item: rating of run 'ghost', which no run file holds",
        f"{path}:5: unknown_dimension: dimension 'vibes' is not in hilbot.toml's [dimensions]",
        f"{path}:6: unknown_judgment: 'superb' is not an option of 'quality' (excellent, good, "
        "okay, miss)",
        f"{path}:7: score_mismatch: 'good' scores 0.7 on 'quality', the rating says 0.9",
        f"{path}:9: rated_twice_in_session: terminal:frank rated alpha/a1 on 'quality' before in "
        "session 2026-11-20 (line 8): changed 'okay' to 'miss'",
    ]
    assert report.counts == {
        "excellent_with_concern": 2,
        "skip_with_score": 0,
        "unknown_item": 2,
        "unknown_dimension": 1,
        "unknown_judgment": 1,
        "score_mismatch": 1,
        "rated_twice_in_session": 1,
        "duplicate_delivery": 1,
        "duplicate_run_header": 0,
        "duplicate_item": 0,
    }
    assert set(report.counts) == set(FLAGS)
    assert report.schema_errors == [] and report.exit_code == 0  # flags never fail validation
    assert report.line_count == 13 and report.records == {"rating": 11, "note": 1, "skip": 1}
    assert all(isinstance(f, Flag) and str(f) in report.lines() for f in report.flags)
    json.dumps(report.to_dict())  # plain values
    assert report.to_dict()["exit_code"] == 0 and len(report.to_dict()["flags"]) == 8
    assert _digest(flagged) == before  # nothing rewritten


def test_a_session_falls_back_on_the_date_and_a_plain_repeat_is_not_flagged(store, config):
    _runs(store)
    store.ratings.append(_rating("ivy", "alpha", "a1", "quality", "good", 0.7, 1))
    store.ratings.append(
        _rating("ivy", "alpha", "a1", "quality", "good", 0.7, 2)
    )  # the same judgment again
    store.ratings.append(_rating("ivy", "alpha", "a1", "quality", "okay", 0.4, 3))  # a change
    store.ratings.append(
        _rating("ivy", "alpha", "a1", "quality", "good", 0.7, 60 * 24)
    )  # a change, the next day
    report = validate(store, config)
    assert report.lines() == [
        f"{store.ratings.path}:3: rated_twice_in_session: terminal:ivy rated alpha/a1 on "
        "'quality' before in session 2026-11-20 (line 2): changed 'good' to 'okay'"
    ]
    assert report.counts["rated_twice_in_session"] == 1


def _session(store: Store, *ratings: tuple) -> None:
    """frank's ratings of alpha/a1 on quality, all in session 2026-11-20: (judgment, score,
    concerns[, note])."""
    _runs(store)
    for n, (judgment, score, concerns, *note) in enumerate(ratings, start=1):
        store.ratings.append(
            _rating(
                "frank",
                "alpha",
                "a1",
                "quality",
                judgment,
                score,
                n,
                session="2026-11-20",
                concerns=concerns,
                note=note[0] if note else None,
            )
        )


def test_toggling_concern_tags_on_the_same_judgment_is_not_a_rerating(store, config):
    """The issue: each tag toggle stores a new rating event with the same judgment; none of them is
    a re-rating."""
    _session(
        store,
        ("okay", 0.4, []),
        ("okay", 0.4, ["lacks_catalyst"]),
        ("okay", 0.4, ["lacks_catalyst", "thesis_unclear"]),
    )
    report = validate(store, config)
    assert report.lines() == [] and report.counts["rated_twice_in_session"] == 0


def test_changing_only_the_note_on_the_same_judgment_is_not_a_rerating(store, config):
    _session(
        store,
        ("miss", 0.1, ["thesis_unclear"]),
        ("miss", 0.1, ["thesis_unclear"], "off topic"),
        ("miss", 0.1, [], "off topic, and wrong"),
    )
    report = validate(store, config)
    assert report.lines() == [] and report.counts["rated_twice_in_session"] == 0


def test_a_change_of_judgment_in_a_session_is_flagged_once(store, config):
    _session(store, ("good", 0.7, []), ("miss", 0.1, []))
    report = validate(store, config)
    assert report.lines() == [
        f"{store.ratings.path}:2: rated_twice_in_session: terminal:frank rated alpha/a1 on "
        "'quality' before in session 2026-11-20 (line 1): changed 'good' to 'miss'"
    ]
    assert report.counts["rated_twice_in_session"] == 1


def test_tag_toggles_then_a_change_are_flagged_once(store, config):
    """okay, okay + a tag, miss: one change of judgment, told against the event just before it."""
    _session(
        store,
        ("okay", 0.4, []),
        ("okay", 0.4, ["lacks_catalyst"]),
        ("miss", 0.1, ["lacks_catalyst"]),
    )
    log = store.ratings
    # others in the same session, interleaved after: another reviewer and another item, tag toggles
    # only
    log.append(_rating("gina", "alpha", "a1", "quality", "miss", 0.1, 4, session="2026-11-20"))
    log.append(_rating("frank", "alpha", "a2", "quality", "okay", 0.4, 5, session="2026-11-20"))
    log.append(
        _rating(
            "gina", "alpha", "a1", "quality", "miss", 0.1, 6, session="2026-11-20", concerns=["x"]
        )
    )
    log.append(
        _rating(
            "frank", "alpha", "a2", "quality", "okay", 0.4, 7, session="2026-11-20", concerns=["x"]
        )
    )
    report = validate(store, config)
    assert report.lines() == [
        f"{log.path}:3: rated_twice_in_session: terminal:frank rated alpha/a1 on 'quality' "
        "before in session 2026-11-20 (line 2): changed 'okay' to 'miss'"
    ]
    assert report.counts["rated_twice_in_session"] == 1
    assert [(f.line, f.flag) for f in report.flags] == [(3, "rated_twice_in_session")]


def test_each_change_back_and_forth_is_flagged(store, config):
    _session(
        store,
        ("okay", 0.4, []),
        ("miss", 0.1, []),
        ("miss", 0.1, ["lacks_catalyst"]),
        ("okay", 0.4, []),
    )
    report = validate(store, config)
    path = store.ratings.path
    assert report.lines() == [
        f"{path}:2: rated_twice_in_session: terminal:frank rated alpha/a1 on 'quality' before in "
        "session 2026-11-20 (line 1): changed 'okay' to 'miss'",
        f"{path}:4: rated_twice_in_session: terminal:frank rated alpha/a1 on 'quality' before in "
        "session 2026-11-20 (line 3): changed 'miss' to 'okay'",
    ]
    assert report.counts["rated_twice_in_session"] == 2


def test_schema_errors_fail_and_a_skip_with_a_score_is_both(store, config):
    _runs(store)
    store.ratings.append(_rating("alice", "alpha", "a1", "quality", "good", 0.7, 1))
    skip = json.loads(
        Skip(
            run_id="alpha",
            item_id="a1",
            dimension="quality",
            reviewer=_who("bob"),
            idempotency_key="k2",
            timestamp=T,
        ).model_dump_json(exclude_none=True)
    )
    with open(store.ratings.path, "ab") as handle:
        handle.write((json.dumps({**skip, "score": 0.4, "judgment": "okay"}) + "\n").encode())
        handle.write(b"{oops\n")
    before = _digest(store)
    report = validate(store, config)
    path = store.ratings.path
    assert [(i.line, i.reason.split(";")[0]) for i in report.schema_errors] == [
        (2, "score: Extra inputs are not permitted"),
        (3, "invalid JSON (Expecting property name enclosed in double quotes at column 2)"),
    ]
    assert report.lines() == [
        f"{path}:2: score: Extra inputs are not permitted; skipped and left in place (to delete it "
        f"while hilbot runs, edit under its lock: flock {path} sed -i '2d' {path})",
        f"{path}:2: skip_with_score: a skip carrying judgment, score; the line is not a valid skip "
        "and counts nowhere",
        f"{path}:3: invalid JSON (Expecting property name enclosed in double quotes at column 2); "
        "skipped and left in place (to delete it while hilbot runs, edit under its lock: flock "
        f"{path} sed -i '3d' {path})",
    ]
    assert report.counts["skip_with_score"] == 1 and sum(report.counts.values()) == 1
    assert report.exit_code == 1
    assert _digest(store) == before


def test_a_bad_run_file_line_is_a_schema_error_too(store, config):
    _runs(store)
    with open(store.run_path("beta"), "ab") as handle:
        handle.write(b"[]\n")
    report = validate(store, config)
    beta = store.run_path("beta")
    assert [str(i) for i in report.schema_errors] == [
        f"{beta}:3: a record must be a JSON object; skipped and left in place (to delete it while "
        f"hilbot runs, edit under its lock: flock {beta} sed -i '3d' {beta})"
    ]
    assert report.exit_code == 1 and report.line_count == 0


def test_empty_store(store, config):
    report = validate(store, config)
    assert isinstance(report, ValidationReport)
    assert report.lines() == [] and report.exit_code == 0 and set(report.counts.values()) == {0}


def test_two_runs_in_one_file_are_flagged(store, config):
    """What two runs started in the same second used to make: two headers, the items of both."""
    _runs(store)
    store.ratings.append(_rating("alice", "alpha", "a1", "quality", "good", 0.7, 1))
    path = store.run_path("beta")
    with open(path, "ab") as handle:
        handle.write(RunHeader(run_id="beta").model_dump_json().encode() + b"\n")
        handle.write(
            QueryEvaluation(run_id="beta", data=ItemData(id="b1", query=Query(query="again")))
            .model_dump_json()
            .encode()
            + b"\n"
        )
    before = _digest(store)
    report = validate(store, config)
    assert [str(f) for f in report.flags] == [
        f"{path}:3: duplicate_run_header: a second run_header (the first is on line 1): two runs "
        "share this file",
        f"{path}:4: duplicate_item: item 'b1' again (first on line 2); reviewers see the last one",
    ]
    assert report.counts["duplicate_run_header"] == 1 and report.counts["duplicate_item"] == 1
    assert report.exit_code == 0 and _digest(store) == before


@pytest.fixture
def many_flags(store: Store) -> Store:
    """30 ratings of alpha/a1 that carry a concern on the top option, then 2 of unknown items."""
    _runs(store)
    for n in range(30):
        store.ratings.append(
            _rating(f"r{n}", "alpha", "a1", "quality", "excellent", 1.0, n, concerns=["flaky"])
        )
    store.ratings.append(_rating("x", "alpha", "zz", "quality", "okay", 0.4, 30))
    store.ratings.append(_rating("y", "ghost", "g1", "overall", "good", 1.0, 31))
    return store


def _listed(text: str) -> list[str]:
    return text.split("```text\n")[1].split("\n```")[0].splitlines()


def test_the_listing_is_limited_per_flag_after_the_counts(many_flags, run_cli):
    """A flood of one flag does not bury the others: the counts come first, then at most --limit
    lines of each flag (default 20), saying how many more there are and how to see them."""
    env = {"HILBOT_DATA_DIR": str(many_flags.root)}
    result = run_cli("analyze", "validate", env=env)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.index("| excellent_with_concern | 30 |") < text.index("```text")
    listed = _listed(text)
    assert sum(": excellent_with_concern: " in line for line in listed) == 20
    assert sum(": unknown_item: " in line for line in listed) == 2
    assert (
        "… and 10 more excellent_with_concern lines (--limit 0 lists every line; --format json "
        "has them all)" in text
    )
    five = run_cli("analyze", "validate", "--limit", "5", env=env).stdout
    assert sum(": excellent_with_concern: " in line for line in _listed(five)) == 5
    assert "… and 25 more excellent_with_concern lines" in five
    every = run_cli("analyze", "validate", "--limit", "0", env=env).stdout
    assert len(_listed(every)) == 32 and "more excellent_with_concern" not in every
    data = json.loads(
        run_cli("analyze", "validate", "--limit", "1", "--format", "json", env=env).stdout
    )
    assert len(data["flags"]) == 32  # the JSON holds every flagged line
    bad = run_cli("analyze", "validate", "--limit", "-1", env=env)
    assert bad.returncode == 2 and "--limit" in bad.stderr and len(bad.stderr.splitlines()) == 1
