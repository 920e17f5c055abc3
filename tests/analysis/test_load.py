"""analysis.load: the store as DataFrames, folded exactly as evaluation.reviews.Ledger folds it.

The ``reviewed`` store (lines of ratings.jsonl, T = 2026-11-20 09:00 UTC + minutes):

     1  rating  alice  alpha/a1 quality  good 0.7                      @0   session 2026-11-20, source chat
     2  rating  alice  alpha/a1 quality  okay 0.4 [leap, leap, lacks]  @5   (changed: latest; a tag twice)
     3  rating  bob    alpha/a1 quality  excellent 1.0                 @6
     4  skip    bob    alpha/a1 quality  "unclear"                     @7   (replaces bob's rating)
     5  rating  carol  alpha/a2 quality  miss 0.1  key k-carol         @8
     6  rating  carol  alpha/a2 quality  excellent 1.0  key k-carol    @9   (redelivered key: ignored)
     7  note    carol  alpha/a2 quality  "too long"                    @10
     8  delivery (ignored)
     9  review_summary (ignored)
    10  {not json                                                           (bad line: reported, skipped)
    11  rating  dave   beta/b1 overall   terrible 0.1, no metadata      @12  (source from the item: docs)
    12  skip    erin   alpha/a3 quality                                  @13
    13  rating  erin   alpha/a3 quality  good 0.7 "own note"            @14  (replaces the skip)
    14  rating  frank  ghost/g1 overall  okay 0.7                       @15  (a run no file holds: kept)
    15  rating  alice  alpha/a2 quality  score "0.4" (a string)          @16  (pydantic coerces it: counted)
    16  rating  bob    alpha/a2 quality  score 1.5                       @17  (invalid: reported)
    17  {"type":"rating","run_id":                                           (torn last line)
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.load import Frames, ai_score_column, load, scan_log
from evaluation import Ledger, Store
from evaluation.records import (
    Delivery,
    Evaluation,
    ItemData,
    JudgeInfo,
    Note,
    Query,
    QueryEvaluation,
    Rating,
    RatingMetadata,
    Reviewer,
    ReviewSummary,
    RunHeader,
    Skip,
    parse_record,
)

T = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)
ALICE = Reviewer(platform="terminal", id="alice")
BOB = Reviewer(platform="telegram", id="42", name="Bob")
CAROL = Reviewer(platform="slack", id="U3")
DAVE = Reviewer(platform="telegram", id="77")
ERIN = Reviewer(platform="terminal", id="erin")
FRANK = Reviewer(platform="telegram", id="99")
SESSION = RatingMetadata(session_date="2026-11-20", source_type="chat")

STR = "str"
OBJ = "object"
F64 = "float64"
I64 = "int64"
TS = "datetime64[ns, UTC]"
DTYPES = {
    "ratings": {
        "run_id": STR,
        "item_id": STR,
        "dimension": STR,
        "reviewer": STR,
        "judgment": STR,
        "score": F64,
        "n_concerns": I64,
        "note": OBJ,
        "timestamp": TS,
        "channel": STR,
        "source_type": OBJ,
        "session_date": OBJ,
        "line": I64,
    },
    "skips": {
        "run_id": STR,
        "item_id": STR,
        "dimension": STR,
        "reviewer": STR,
        "skip_reason": OBJ,
        "timestamp": TS,
        "line": I64,
    },
    "concerns": {
        "run_id": STR,
        "item_id": STR,
        "dimension": STR,
        "reviewer": STR,
        "tag": STR,
        "timestamp": TS,
    },
    "notes": {
        "run_id": STR,
        "item_id": STR,
        "dimension": STR,
        "reviewer": STR,
        "text": STR,
        "timestamp": TS,
    },
    "runs": {
        "run_id": STR,
        "set": STR,
        "kind": STR,
        "created_at": TS,
        "judge": STR,
        "item_count": I64,
        "dimensions": STR,
    },
}
ITEM_DTYPES = {
    "run_id": STR,
    "item_id": STR,
    "kind": STR,
    "set": STR,
    "category": OBJ,
    "query": STR,
    "verdict": OBJ,
    "confidence": F64,
    "judge": STR,
    "prompt_hash": OBJ,
    "ai_overall": F64,
    "ai_quality": F64,
    "ai_relevance": F64,
    "feature_flag": OBJ,
    "feature_label": OBJ,
    "feature_leap_distance": F64,
    "feature_source_type": OBJ,
    "source_type": OBJ,
}


def _t(minutes: float) -> datetime:
    return T + timedelta(minutes=minutes)


def _item(item_id: str, scores: dict, features: dict, **evaluation) -> ItemData:
    return ItemData(
        id=item_id,
        query=Query(query=f"query {item_id}", category=features.pop("category", None)),
        evaluation=Evaluation(scores=scores, **evaluation),
        features=features,
    )


def make_runs(store: Store) -> None:
    alpha = [
        _item(
            "a1",
            {"overall": 0.8, "quality": 0.9},
            {"leap_distance": 2, "source_type": "chat", "category": "how-to"},
            verdict="PASS",
            confidence="high",
            judge="llm",
        ),
        _item(
            "a2",
            {"overall": 0.4},
            {"leap_distance": 0.5, "source_type": "article", "flag": True},
            verdict="FAIL",
            confidence=0.7,
        ),
        _item("a3", {}, {"leap_distance": None, "label": "x"}, verdict="UNSURE", confidence=0.9),
    ]
    store.create_run(
        RunHeader(
            run_id="alpha",
            kind="answer",
            set="core",
            dimensions=["quality"],
            created_at=_t(-120),
            judge=JudgeInfo(name="lexical"),
        ),
        [QueryEvaluation(run_id="alpha", data=d) for d in alpha],
    )
    beta = [
        _item("b1", {"overall": 0.3, "relevance": 0.6}, {"source_type": "docs", "leap_distance": 4})
    ]
    store.create_run(
        RunHeader(
            run_id="beta",
            kind="search",
            set="web",
            dimensions=["overall", "relevance"],
            created_at=_t(-60),
            judge=JudgeInfo(name="llm", prompt_hashes={"overall": "ab" * 32}),
        ),
        [QueryEvaluation(run_id="beta", data=d) for d in beta],
    )


def _raw(store: Store, text: str) -> None:
    with open(store.ratings.path, "ab") as handle:
        handle.write(text.encode("utf-8"))


def _rating(
    who: Reviewer,
    run: str,
    item: str,
    judgment: str,
    score: float,
    minutes: float,
    key: str,
    *,
    dimension: str = "quality",
    **extra,
) -> Rating:
    return Rating(
        run_id=run,
        item_id=item,
        dimension=dimension,
        reviewer=who,
        channel=who.platform,
        idempotency_key=key,
        timestamp=_t(minutes),
        judgment=judgment,
        score=score,
        **extra,
    )


def build_reviewed(store: Store) -> None:
    make_runs(store)
    log = store.ratings
    log.append(_rating(ALICE, "alpha", "a1", "good", 0.7, 0, "k1", metadata=SESSION))
    log.append(
        _rating(
            ALICE,
            "alpha",
            "a1",
            "okay",
            0.4,
            5,
            "k2",
            metadata=SESSION,
            concerns=["leap_unjustified", "leap_unjustified", "lacks_catalyst"],
        )
    )
    log.append(_rating(BOB, "alpha", "a1", "excellent", 1.0, 6, "k3"))
    log.append(
        Skip(
            run_id="alpha",
            item_id="a1",
            dimension="quality",
            reviewer=BOB,
            channel="telegram",
            idempotency_key="k4",
            timestamp=_t(7),
            skip_reason="unclear",
        )
    )
    log.append(_rating(CAROL, "alpha", "a2", "miss", 0.1, 8, "k-carol"))
    log.append(_rating(CAROL, "alpha", "a2", "excellent", 1.0, 9, "k-carol"))
    log.append(
        Note(
            run_id="alpha",
            item_id="a2",
            dimension="quality",
            reviewer=CAROL,
            channel="slack",
            idempotency_key="k7",
            timestamp=_t(10),
            text="too long",
        )
    )
    log.append(
        Delivery(
            run_id="alpha",
            item_id="a3",
            dimension="quality",
            reviewer=BOB,
            channel="telegram",
            chat_id="42",
            message_id="m1",
            timestamp=_t(11),
        )
    )
    log.append(ReviewSummary(run_id="alpha", dimension="quality", queriesReviewed=3))
    _raw(store, "{not json\n")
    log.append(_rating(DAVE, "beta", "b1", "terrible", 0.1, 12, "k11", dimension="overall"))
    log.append(
        Skip(
            run_id="alpha",
            item_id="a3",
            dimension="quality",
            reviewer=ERIN,
            idempotency_key="k12",
            timestamp=_t(13),
        )
    )
    log.append(_rating(ERIN, "alpha", "a3", "good", 0.7, 14, "k13", note="own note"))
    log.append(_rating(FRANK, "ghost", "g1", "okay", 0.7, 15, "k14", dimension="overall"))
    base = {
        "type": "rating",
        "run_id": "alpha",
        "item_id": "a2",
        "dimension": "quality",
        "judgment": "okay",
    }
    _raw(
        store,
        json.dumps(
            {
                **base,
                "reviewer": {"id": "alice"},
                "idempotency_key": "k15",
                "score": "0.4",
                "timestamp": _t(16).isoformat(),
            }
        )
        + "\n",
    )
    _raw(
        store,
        json.dumps(
            {
                **base,
                "reviewer": {"platform": "telegram", "id": "42"},
                "idempotency_key": "k16",
                "score": 1.5,
                "timestamp": _t(17).isoformat(),
            }
        )
        + "\n",
    )
    _raw(store, '{"type":"rating","run_id":')


@pytest.fixture
def reviewed(store: Store) -> Store:
    build_reviewed(store)
    return store


def _assert_dtypes(frame: pd.DataFrame, expected: dict[str, str]) -> None:
    assert list(frame.columns) == list(expected)
    for name, dtype in expected.items():
        assert str(frame[name].dtype) == dtype, (name, frame[name].dtype)


# --------------------------------------------------------------------------- the frames


def test_every_frame_has_its_columns_and_dtypes(reviewed):
    frames = load(reviewed)
    assert isinstance(frames, Frames)
    for name, expected in DTYPES.items():
        _assert_dtypes(getattr(frames, name), expected)
    _assert_dtypes(frames.items, ITEM_DTYPES)


def test_an_empty_store_gives_empty_frames_with_the_same_columns(store):
    frames = load(store)
    for name, expected in DTYPES.items():
        frame = getattr(frames, name)
        assert len(frame) == 0
        _assert_dtypes(frame, expected)
    assert list(frames.items.columns) == [
        "run_id",
        "item_id",
        "kind",
        "set",
        "category",
        "query",
        "verdict",
        "confidence",
        "judge",
        "prompt_hash",
        "source_type",
    ]


def test_ratings_latest_per_key_skips_replace_redeliveries_ignored(reviewed):
    ratings = load(reviewed).ratings
    rows = ratings[["run_id", "item_id", "reviewer", "judgment", "score", "line"]].values.tolist()
    assert rows == [
        ["alpha", "a1", "terminal:alice", "okay", 0.4, 2],  # changed: the latest counts
        ["alpha", "a2", "slack:U3", "miss", 0.1, 5],  # the redelivered key (line 6) is ignored
        ["beta", "b1", "telegram:77", "terrible", 0.1, 11],
        ["alpha", "a3", "terminal:erin", "good", 0.7, 13],  # a rating after a skip replaces it
        [
            "ghost",
            "g1",
            "telegram:99",
            "okay",
            0.7,
            14,
        ],  # a run no file holds: kept, as the Ledger does
        [
            "alpha",
            "a2",
            "terminal:alice",
            "okay",
            0.4,
            15,
        ],  # "0.4" coerced by the model, as read_log does
    ]
    first = ratings.iloc[0]
    assert first["n_concerns"] == 2  # leap_unjustified twice counts once
    assert first["timestamp"] == pd.Timestamp(_t(5))
    assert first["channel"] == "terminal" and first["session_date"] == "2026-11-20"
    assert first["source_type"] == "chat" and first["note"] is None
    assert ratings.iloc[1]["note"] == "too long"  # the latest note record of the key
    assert ratings.iloc[3]["note"] == "own note"  # the rating's own note first
    assert ratings.iloc[2]["source_type"] == "docs"  # no metadata: the item's feature
    assert ratings.iloc[4]["source_type"] is None and ratings.iloc[4]["session_date"] is None
    assert list(ratings["dimension"]) == [
        "quality",
        "quality",
        "overall",
        "quality",
        "overall",
        "quality",
    ]


def test_skips_concerns_notes(reviewed):
    frames = load(reviewed)
    assert frames.skips[["item_id", "reviewer", "skip_reason", "line"]].values.tolist() == [
        ["a1", "telegram:42", "unclear", 4]
    ]
    assert frames.skips.iloc[0]["timestamp"] == pd.Timestamp(_t(7))
    assert frames.concerns[["item_id", "reviewer", "tag"]].values.tolist() == [
        ["a1", "terminal:alice", "leap_unjustified"],
        ["a1", "terminal:alice", "lacks_catalyst"],
    ]
    assert (frames.concerns["timestamp"] == pd.Timestamp(_t(5))).all()
    assert frames.notes[["item_id", "reviewer", "text"]].values.tolist() == [
        ["a2", "slack:U3", "too long"]
    ]
    assert frames.notes.iloc[0]["timestamp"] == pd.Timestamp(_t(10))


def test_bad_lines_are_reported_like_read_log_and_the_rest_loads(reviewed):
    issues: list = []
    frames = load(reviewed, issues=issues)
    expected: list = []
    list(reviewed.human_events(expected))
    assert [str(i) for i in issues] == [str(i) for i in expected]
    path = reviewed.ratings.path
    assert [(i.path, i.line, i.torn) for i in issues] == [
        (path, 10, False),
        (path, 16, False),
        (path, 17, True),
    ]
    assert str(issues[0]).startswith(f"{path}:10: invalid JSON")
    assert "score" in issues[1].reason
    assert (
        str(issues[2])
        == f"{path}:17: torn last line (a crash mid-write?), skipped; the next append starts on a "
        "fresh line"
    )
    assert len(frames.ratings) == 6


def test_items_frame(reviewed):
    items = load(reviewed).items.set_index("item_id")
    a1, a2, a3, b1 = (items.loc[i] for i in ("a1", "a2", "a3", "b1"))
    assert (a1["run_id"], a1["kind"], a1["set"], a1["category"], a1["query"]) == (
        "alpha",
        "answer",
        "core",
        "how-to",
        "query a1",
    )
    assert (a1["verdict"], a1["confidence"], a1["judge"]) == (
        "PASS",
        0.9,
        "llm",
    )  # evaluation.judge first
    assert (a2["confidence"], a2["judge"], a3["confidence"]) == (
        0.7,
        "lexical",
        0.0,
    )  # UNSURE counts as 0
    assert a1["prompt_hash"] is None and len(b1["prompt_hash"]) == 12
    assert (a1["ai_overall"], a1["ai_quality"]) == (0.8, 0.9)
    assert np.isnan(a2["ai_quality"]) and np.isnan(a3["ai_overall"])
    assert (
        a1["feature_leap_distance"],
        a2["feature_leap_distance"],
        b1["feature_leap_distance"],
    ) == (2.0, 0.5, 4.0)
    assert np.isnan(a3["feature_leap_distance"])  # a feature of None
    # a feature that is not always a number keeps the values as written (for correlate to judge),
    # None where absent
    assert (
        a2["feature_flag"],
        a3["feature_label"],
        a1["feature_label"],
        b1["feature_source_type"],
    ) == (True, "x", None, "docs")
    assert (a1["source_type"], a3["source_type"], b1["source_type"]) == ("chat", None, "docs")


def test_runs_frame_and_runs_filter(reviewed):
    frames = load(reviewed)
    assert frames.runs[
        ["run_id", "set", "kind", "judge", "item_count", "dimensions"]
    ].values.tolist() == [
        ["alpha", "core", "answer", "lexical", 3, "quality"],
        ["beta", "web", "search", "llm", 1, "overall,relevance"],
    ]
    assert frames.runs.iloc[0]["created_at"] == pd.Timestamp(_t(-120))
    only = load(reviewed, runs=["beta"])
    assert list(only.ratings["run_id"]) == ["beta"] and only.skips.empty and only.notes.empty
    assert list(only.items["item_id"]) == ["b1"] and list(only.runs["run_id"]) == ["beta"]


def test_ai_score_column_falls_back_to_overall(reviewed):
    items = load(reviewed).items
    assert ai_score_column(items, "quality").tolist()[:2] == [
        0.9,
        0.4,
    ]  # a2 has no quality score: overall
    assert np.isnan(ai_score_column(items, "quality").iloc[2])  # a3 has none at all
    assert ai_score_column(items, "relevance").tolist()[3] == 0.6
    frame = pd.DataFrame({"ai_overall": [0.5, 0.2], "ai_code_validity": [np.nan, 0.9]})
    assert ai_score_column(frame, "code-validity").tolist() == [0.5, 0.9]  # '-' read as '_'
    assert ai_score_column(pd.DataFrame({"x": [1]}), "overall").isna().all()


# ------------------------------------------------------------------------- equality with the Ledger


def _ledger_view(store: Store):
    issues: list = []
    ledger = Ledger.from_events(store.human_events(issues))
    judgments = {
        k: (type(j).__name__, getattr(j, "judgment", None), getattr(j, "score", None))
        for k, j in ledger.judgments.items()
    }
    notes = {k: n.text for k, n in ledger.notes.items()}
    concerns = {
        k: list(dict.fromkeys(j.concerns))
        for k, j in ledger.judgments.items()
        if isinstance(j, Rating) and j.concerns
    }
    return judgments, notes, concerns, [str(i) for i in issues]


def _frames_view(frames: Frames, issues: list):
    def key(r):
        return (r.run_id, r.item_id, r.dimension, r.reviewer)

    judgments = {key(r): ("Rating", r.judgment, r.score) for r in frames.ratings.itertuples()}
    judgments.update({key(r): ("Skip", None, None) for r in frames.skips.itertuples()})
    notes = {key(r): r.text for r in frames.notes.itertuples()}
    concerns: dict = {}
    for r in frames.concerns.itertuples():
        concerns.setdefault(key(r), []).append(r.tag)
    return judgments, notes, concerns, [str(i) for i in issues]


def _random_log(store: Store, seed: int, n: int = 1500) -> None:
    rng = random.Random(seed)
    make_runs(store)
    reviewers = [ALICE, BOB, CAROL, Reviewer(platform="terminal", id="x", name=None)]
    items = [("alpha", "a1"), ("alpha", "a2"), ("beta", "b1"), ("ghost", "g")]
    options = [("excellent", 1.0), ("good", 0.7), ("okay", 0.4), ("miss", 0.1)]
    keys: list[str] = []
    lines: list[str] = []
    for i in range(n):
        run, item = rng.choice(items)
        who = rng.choice(reviewers)
        dimension = rng.choice(["quality", "overall"])
        key = rng.choice(keys) if keys and rng.random() < 0.05 else f"k{i}"
        keys.append(key)
        common = {
            "run_id": run,
            "item_id": item,
            "dimension": dimension,
            "reviewer": who,
            "idempotency_key": key,
            "timestamp": _t(i),
            "channel": who.platform,
        }
        roll = rng.random()
        if roll < 0.6:
            judgment, score = rng.choice(options)
            record = Rating(
                **common,
                judgment=judgment,
                score=score,
                concerns=rng.sample(["a", "b", "c"], rng.randint(0, 2)),
                note=rng.choice([None, None, "", "n"]),
                confidence=rng.choice([None, "high"]),
                metadata=RatingMetadata(session_date=rng.choice([None, "2026-11-20"])),
            )
        elif roll < 0.75:
            record = Skip(**common, skip_reason=rng.choice([None, "unclear"]))
        elif roll < 0.85:
            record = Note(**common, text=f"note {i}")
        elif roll < 0.9:
            record = Delivery(
                **{k: v for k, v in common.items() if k != "idempotency_key"},
                chat_id="1",
                message_id=str(i),
            )
        else:  # hand-written lines: lax values the models coerce, invalid ones, odd shapes
            raw = {
                "type": "rating",
                **common,
                "reviewer": who.model_dump(exclude_none=True),
                "timestamp": _t(i).isoformat(),
                "judgment": "good",
                "score": 0.7,
            }
            variant = rng.randrange(9)
            if variant == 0:
                raw["score"] = "0.7"  # coerced
            elif variant == 1:
                raw["score"] = 2  # out of range: invalid
            elif variant == 2:
                raw["extra"] = 1  # unknown field: invalid
            elif variant == 3:
                raw["timestamp"] = 1700000000  # a unix time: accepted by the model
            elif variant == 4:
                raw["timestamp"] = (
                    "2026-11-20T10:00:00+05"  # pandas would take it, pydantic does not
                )
            elif variant == 5:
                del raw["timestamp"]  # absent: the model invents one; counted
            elif variant == 6:
                raw["reviewer"] = {"id": 5}  # not a string: invalid
            elif variant == 7:
                raw["confidence"] = "very"  # not a literal: invalid
            else:
                raw["labels"] = {"completeness_score": rng.choice([3, 9])}  # 9 is invalid
            lines.append(json.dumps(raw))
            continue
        lines.append(record.model_dump_json(exclude_none=True))
        if rng.random() < 0.02:
            lines.append(rng.choice(["", "[1, 2]", '{"v": 1}', "not json", '{"type": "nope"}']))
    _raw(store, "\n".join(lines) + "\n")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fold_equals_the_ledger_on_a_random_log(store, seed):
    _random_log(store, seed)
    issues: list = []
    assert _frames_view(load(store, issues=issues), issues) == _ledger_view(store)


def test_without_orjson_the_fold_is_the_same(store, monkeypatch):
    import analysis._reader as module

    _random_log(store, 4)
    monkeypatch.setattr(module, "json_loads", json.loads)  # what runs where orjson is not installed
    issues: list = []
    assert _frames_view(load(store, issues=issues), issues) == _ledger_view(store)


HOSTILE_LINES = [
    {"timestamp": "2026-11-20"},  # no time: midnight UTC
    {"timestamp": "2026-11-20T10:00:00"},  # no zone: UTC
    {"timestamp": "2026-11-20 10:00:00.5"},
    {"timestamp": "1970-01-01T00:00:00Z"},  # the first time a record may carry
    {"timestamp": "2200-12-31T23:59:59.999999Z"},  # the last
    {"timestamp": "2201-01-01T04:00:00+05:00"},  # 2200-12-31 23:00 UTC: still in range
    {"timestamp": "1969-12-31T23:59:59Z"},  # out of range: bad lines, in both readers
    {"timestamp": "1970-01-01T00:30:00+01:00"},
    {"timestamp": "2201-01-01T00:00:00Z"},
    {"timestamp": "2250-06-01T00:00:00+05:00"},
    {"timestamp": "9999-01-01T00:00:00Z"},
    {"timestamp": "0001-01-01T00:00:00Z"},
    {"timestamp": "1600-01-01T00:00:00"},
    {"timestamp": 1e15},
    {"timestamp": -1},
]
RAW_HOSTILE = [
    '{"type": "note", "run_id": "alpha", "item_id": "a1", "reviewer": {"id": "x"}, '
    '"idempotency_key": "s", "text": "\\ud800"}',
    '{"type": "note", "run_id": "alpha", "item_id": "a1", "reviewer": {"id": "x"}, '
    '"idempotency_key": "n", "text": NaN}',
    '{"type": "rating", "run_id": "alpha", "item_id": "a1", "reviewer": {"id": "x"}, '
    '"idempotency_key": "i", "judgment": "good", "score": Infinity}',
    '{"type": "delivery", "run_id": "alpha", "item_id": "a1", "reviewer": {"id": "x"}, "channel": '
    '"telegram", "chat_id": "1", "message_id": "2", "timestamp": "3000-01-01T00:00:00Z"}',
    '{"type": "note", "run_id": "alpha", "item_id": "a1", "reviewer": {"id": "x"}, '
    '"idempotency_key": "d", "text": "a", "text": "b"}',
    '{"type": "rating", "run_id": "alpha", "item_id": "a1", "reviewer": {"id": "x"}, '
    '"idempotency_key": "big", "judgment": "good", "score": 1, "v": 100000000000000000000000000000}',
]


def test_both_readers_agree_on_times_and_hostile_json(store):
    make_runs(store)
    base = {
        "type": "rating",
        "run_id": "alpha",
        "item_id": "a1",
        "dimension": "quality",
        "judgment": "good",
        "score": 0.7,
    }
    lines = [
        json.dumps({**base, "reviewer": {"id": f"r{n}"}, "idempotency_key": f"t{n}", **fields})
        for n, fields in enumerate(HOSTILE_LINES)
    ]
    _raw(store, "\n".join(lines + RAW_HOSTILE) + "\n")
    issues: list = []
    frames = load(store, issues=issues)
    assert _frames_view(frames, issues) == _ledger_view(store)
    bad = [i.line for i in issues]
    assert bad == [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19], [str(i) for i in issues]
    assert all("timestamp" in i.reason for i in issues[:7])
    stamps = frames.ratings.set_index("reviewer")["timestamp"]
    assert stamps["terminal:r1"] == pd.Timestamp("2026-11-20T10:00:00Z")
    assert stamps["terminal:r5"] == pd.Timestamp("2200-12-31T23:00:00Z")
    ledger = Ledger.from_events(store.human_events())
    assert all(r.timestamp.tzinfo is not None for r in ledger.ratings())


def test_reading_in_several_processes_gives_the_same_scan(store):
    _random_log(store, 7, n=3000)
    one, two = scan_log(store.ratings.path, jobs=1), scan_log(store.ratings.path, jobs=2)
    assert [str(i) for i in one.issues] == [str(i) for i in two.issues] and one.lines == two.lines
    assert one.counts == two.counts
    order1, order2 = np.argsort(one.events["line"]), np.argsort(two.events["line"])
    for name in ("line", "kind", "ts", "idem_hash", "n_tags"):
        assert one.events[name][order1].tolist() == two.events[name][order2].tolist()
    for name in ("run_id", "item_id", "reviewer", "judgment", "session_date"):
        assert list(one.events[name][order1]) == list(two.events[name][order2])
    assert one.row_tags(order1)[1].tolist() == two.row_tags(order2)[1].tolist()


# --------------------------------------------------------------------------- the synthetic log


def test_write_synthetic_small(tmp_path: Path):
    from analysis.synthetic import write_synthetic

    first, second = Store(tmp_path / "a"), Store(tmp_path / "b")
    log = write_synthetic(first, ratings=4000, runs=3, items_per_run=30, reviewers=8, seed=3)
    write_synthetic(second, ratings=4000, runs=3, items_per_run=30, reviewers=8, seed=3)
    data = first.ratings.path.read_bytes()
    assert data == second.ratings.path.read_bytes()  # deterministic
    assert [first.run_path(r).read_bytes() for r in log.runs] == [
        second.run_path(r).read_bytes() for r in log.runs
    ]
    lines = data.splitlines()
    assert len(lines) == log.lines == 4000
    assert log.ratings + log.skips + log.notes + log.redeliveries + log.deliveries == 4000
    for line in random.Random(0).sample(lines, 300):
        parse_record(json.loads(line))  # every line is a valid record
    issues: list = []
    frames = load(first, issues=issues)
    assert issues == [] and len(frames.items) == 90
    assert (
        frames.ratings.groupby(["run_id", "item_id", "dimension"]).size().min() >= 2
    )  # several reviewers
    assert (
        frames.concerns["tag"].nunique() > 3 and not frames.skips.empty and not frames.notes.empty
    )
    merged = frames.ratings.merge(frames.items, on=["run_id", "item_id"])
    by_leap = merged.groupby("feature_leap_distance")["score"].mean()
    assert by_leap.loc[4.0] < by_leap.loc[0.0]  # worse ratings at larger leaps
    ai = ai_score_column(merged, "quality")
    assert (
        np.corrcoef(ai.fillna(ai.mean()), merged["score"])[0, 1] > 0.2
    )  # the AI agrees, imperfectly
    span = frames.ratings["timestamp"].max() - frames.ratings["timestamp"].min()
    assert span > pd.Timedelta(days=20)


def test_synthetic_cli(tmp_path: Path):
    import subprocess
    import sys

    from tests.conftest import ROOT

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis.synthetic",
            str(tmp_path / "d"),
            "--ratings",
            "500",
            "--runs",
            "2",
            "--items-per-run",
            "10",
            "--reviewers",
            "4",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(out.stdout)["lines"] == 500
    assert len(Store(tmp_path / "d").run_ids()) == 2
