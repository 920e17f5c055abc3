"""The fast reader's record plans stay in step with the pydantic models (analysis/_plans.py vs
evaluation/records.py).

A plan accepts a record only when every key is a field it checks; anything else goes to the
models (the "slow path", counted in ``Scan.slow_lines``). So:

* each plan checks exactly the fields of its model, and each nested key set (reviewer, metadata,
  labels) exactly the fields of the nested model; a field added to a model is named here;
* what hilbot itself writes (``evaluation.log.encode``, as the store appends) never takes the slow
  path;
* the fast path never accepts a line the model rejects, field by field and value by value.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pytest
from pydantic import BaseModel, Field, ValidationError

import analysis._reader as reader
from analysis._plans import LABEL_KINDS, METADATA_KEYS, PLANS, REVIEWER_KEYS
from analysis.load import scan_log
from evaluation.log import encode, parse_line
from evaluation.records import Delivery, Labels, Note, Rating, RatingMetadata, Reviewer, Skip

MODELS: dict[str, type[BaseModel]] = {
    "rating": Rating,
    "skip": Skip,
    "note": Note,
    "delivery": Delivery,
}
NESTED: dict[str, frozenset[str]] = {
    "reviewer": REVIEWER_KEYS,
    "metadata": METADATA_KEYS,
    "labels": frozenset(LABEL_KINDS),
}
"""The key set the plans check per nested field (the same for every record type)."""
WHEN = datetime(2026, 3, 1, 12, 30, 15, 250000, tzinfo=timezone.utc)
ADA = Reviewer(platform="telegram", id="42", name="Ada")


def _nested_models(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """The fields of ``model`` that hold a model (``Reviewer``, ``Labels`` …), optional or not."""
    found = {}
    for name, info in model.model_fields.items():
        for kind in (info.annotation, *get_args(info.annotation)):
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                found[name] = kind
    return found


def _gaps(type_name: str, model: type[BaseModel]) -> list[str]:
    """Where the ``type_name`` plan and ``model`` disagree on field names, one sentence each (none:
    in step)."""
    plan = PLANS[type_name]
    fields = set(model.model_fields)
    gaps = [
        f"{model.__name__}.{name} is a field the {type_name!r} plan does not check: every record "
        "carrying it goes to the slow path; check it in analysis/_plans.py"
        for name in sorted(fields - plan.allowed)
    ]
    gaps += [
        f"the {type_name!r} plan checks {name!r}, which {model.__name__} does not have"
        for name in sorted(plan.allowed - fields)
    ]
    for name, nested in _nested_models(model).items():
        keys = NESTED.get(name)
        if keys is None:
            gaps.append(
                f"{model.__name__}.{name} holds a {nested.__name__}, for which the plans have no "
                "key set"
            )
            continue
        gaps += [
            f"{nested.__name__}.{key} ({model.__name__}.{name}.{key}) is a field the plans do not "
            "check"
            for key in sorted(set(nested.model_fields) - keys)
        ]
        gaps += [
            f"the plans check {name}.{key}, which {nested.__name__} does not have"
            for key in sorted(keys - set(nested.model_fields))
        ]
    return gaps


def _write(tmp_path: Path, lines: list[str | bytes]) -> Path:
    path = tmp_path / "ratings.jsonl"
    path.write_bytes(
        b"".join(line if isinstance(line, bytes) else line.encode() + b"\n" for line in lines)
    )
    return path


def _full_records() -> dict[str, BaseModel]:
    """One record per type with every field set (as a chat channel writes them)."""
    event: dict[str, Any] = dict(
        run_id="r1",
        item_id="i1",
        dimension="quality",
        reviewer=ADA,
        channel="telegram",
        action="rate:good",
        timestamp=WHEN,
    )
    labels = Labels(
        trigger_correct=True,
        trigger_component_observed="router",
        code_parses=True,
        code_runs=False,
        code_issues=["import"],
        technically_correct=False,
        inaccuracies=["date"],
        completeness_score=4,
        missing_elements=["example"],
    )
    metadata = RatingMetadata(
        source_type="chat",
        session_date="2026-03-01",
        user_notes="long",
        blocked_by="data",
        follow_up="r2/i1",
    )
    return {
        "rating": Rating(
            **event,
            idempotency_key="k1",
            judgment="good",
            score=0.75,
            concerns=["stale", "vague"],
            concerns_dropped=["off_topic"],
            note="fine otherwise",
            confidence="high",
            ai_verdict_shown=True,
            labels=labels,
            metadata=metadata,
        ),
        "skip": Skip(**event, idempotency_key="k2", skip_reason="unclear"),
        "note": Note(**event, idempotency_key="k3", text="a note"),
        "delivery": Delivery(
            run_id="r1",
            item_id="i1",
            dimension="quality",
            reviewer=ADA,
            channel="telegram",
            kind="note_prompt",
            chat_id="-100",
            message_id="7",
            group=True,
            timestamp=WHEN,
        ),
    }


def _minimal_records() -> dict[str, BaseModel]:
    """One record per type with only the required fields (defaults and "now" filled in, as on the
    terminal)."""
    who = Reviewer(id="ada")
    return {
        "rating": Rating(
            run_id="r1", item_id="i2", reviewer=who, idempotency_key="m1", judgment="okay", score=1
        ),
        "skip": Skip(run_id="r1", item_id="i2", reviewer=who, idempotency_key="m2"),
        "note": Note(run_id="r1", item_id="i2", reviewer=who, idempotency_key="m3", text="x"),
        "delivery": Delivery(
            run_id="r1", item_id="i2", reviewer=who, channel="slack", chat_id="C1", message_id="1.2"
        ),
    }


# --------------------------------------------------------------------------- field names


@pytest.mark.parametrize("type_name", sorted(MODELS))
def test_each_plan_checks_exactly_the_fields_of_its_model(type_name):
    plan = PLANS[type_name]
    gaps = _gaps(type_name, MODELS[type_name])
    assert not gaps, "\n".join(gaps)
    assert set(plan.core) | set(plan.optional) == plan.allowed - {"type"}, (
        "a checked field is never read"
    )


def test_nested_key_sets_are_the_nested_models_fields():
    assert set(Reviewer.model_fields) == REVIEWER_KEYS
    assert set(RatingMetadata.model_fields) == METADATA_KEYS
    assert set(Labels.model_fields) == set(LABEL_KINDS)
    assert {name: m.__name__ for name, m in _nested_models(Rating).items()} == {
        "reviewer": "Reviewer",
        "labels": "Labels",
        "metadata": "RatingMetadata",
    }
    for model in (Skip, Note, Delivery):
        assert {name: m.__name__ for name, m in _nested_models(model).items()} == {
            "reviewer": "Reviewer"
        }


def test_the_records_have_no_aliases():
    """hilbot writes field names (``encode`` dumps without ``by_alias``) and the models read names
    and aliases (``populate_by_name``): an alias would be a second key for one field, which the
    plans do not know."""
    for model in (*MODELS.values(), Reviewer, RatingMetadata, Labels):
        aliased = [
            name
            for name, info in model.model_fields.items()
            if info.alias or info.validation_alias or info.serialization_alias
        ]
        assert not aliased, (
            f"{model.__name__}: {aliased} have aliases; the plans must accept both names"
        )


def test_a_field_a_model_gains_is_named_and_its_lines_take_the_slow_path(tmp_path):
    class MoodMetadata(RatingMetadata):
        mood: str | None = None

    class TimedRating(Rating):
        duration_s: float | None = None
        metadata: MoodMetadata = Field(default_factory=MoodMetadata)

    class TimedDelivery(Delivery):
        edited: bool = False

    gaps = "\n".join(_gaps("rating", TimedRating) + _gaps("delivery", TimedDelivery))
    assert "TimedRating.duration_s is a field the 'rating' plan does not check" in gaps
    assert "MoodMetadata.mood (TimedRating.metadata.mood) is a field the plans do not check" in gaps
    assert "TimedDelivery.edited is a field the 'delivery' plan does not check" in gaps

    # until a plan checks it, a line carrying the new field goes to the model (here the real one,
    # which forbids it)
    rating = json.loads(encode(_full_records()["rating"]))
    lines = [
        json.dumps({**rating, "duration_s": 1.5}),
        json.dumps(
            {**rating, "idempotency_key": "k9", "metadata": {**rating["metadata"], "mood": "calm"}}
        ),
    ]
    scan = scan_log(_write(tmp_path, lines))
    assert scan.slow_lines == 2
    assert scan.counts.get("rating", 0) == 0 and len(scan.issues) == 2


# --------------------------------------------------------------------------- hilbot's own lines


@pytest.mark.parametrize("records", [_full_records, _minimal_records])
def test_lines_hilbot_writes_take_the_fast_path(tmp_path, records):
    written = records()
    path = _write(tmp_path, [encode(record) for record in written.values()])
    scan = scan_log(path)
    assert scan.slow_lines == 0 and not scan.issues
    assert scan.counts == {name: 1 for name in written}
    assert list(scan.column("kind")) == [0, 1, 2]


def test_the_full_records_set_every_field():
    """So that the fast-path test above covers every field a model has (a new one must be set there
    too)."""
    for type_name, record in _full_records().items():
        line = json.loads(encode(record))
        missing = sorted(set(MODELS[type_name].model_fields) - set(line))
        assert not missing, f"{type_name}: set {missing} in _full_records"
        for name, nested in _nested_models(MODELS[type_name]).items():
            missing = sorted(set(nested.model_fields) - set(line[name]))
            assert not missing, f"{type_name}.{name}: set {missing} in _full_records"


def test_the_fast_path_keeps_the_values_hilbot_wrote(tmp_path):
    rating = _full_records()["rating"]
    scan = scan_log(_write(tmp_path, [encode(rating)]))
    assert scan.slow_lines == 0
    row = {
        name: scan.column(name)[0]
        for name in (
            "run_id",
            "item_id",
            "dimension",
            "reviewer",
            "channel",
            "judgment",
            "score",
            "note",
            "source_type",
            "session_date",
        )
    }
    assert row == {
        "run_id": "r1",
        "item_id": "i1",
        "dimension": "quality",
        "reviewer": "telegram:42",
        "channel": "telegram",
        "judgment": "good",
        "score": 0.75,
        "note": "fine otherwise",
        "source_type": "chat",
        "session_date": "2026-03-01",
    }
    assert scan.column("ts")[0] == np.datetime64(WHEN.replace(tzinfo=None), "ns").astype(np.int64)
    assert list(scan.row_tags(np.array([0]))[1]) == ["stale", "vague"]


def test_a_lax_line_takes_the_slow_path_and_still_counts(tmp_path):
    rating = json.loads(encode(_full_records()["rating"]))
    lines = [
        json.dumps(rating),
        json.dumps({**rating, "idempotency_key": "k2", "score": "0.5"}),
        "",
    ]
    scan = scan_log(_write(tmp_path, lines))
    assert scan.slow_lines == 1  # the blank line is skipped, not read by the models
    assert scan.counts == {"rating": 2} and not scan.issues
    assert sorted(scan.column("score")) == [0.5, 0.75]


def test_slow_lines_add_up_over_several_reader_processes(tmp_path):
    rating = json.loads(encode(_full_records()["rating"]))
    lines = [
        json.dumps(
            {**rating, "idempotency_key": f"k{n}", **({"score": "1"} if n % 10 == 0 else {})}
        )
        for n in range(60)
    ]
    path = _write(tmp_path, lines)
    assert scan_log(path, jobs=1).slow_lines == scan_log(path, jobs=2).slow_lines == 6


# ---------------------------------------------------------------------- never laxer than the models

MISSING = object()
PROBES: list[Any] = [
    MISSING,
    None,
    True,
    False,
    0,
    1,
    3,
    9,
    0.5,
    1.5,
    -1,
    "",
    "x",
    "0.5",
    "high",
    "card",
    "2026-01-02T03:04:05Z",
    "2026-01-02",
    [],
    ["a"],
    [1],
    {},
    {"id": "x"},
    {"platform": "slack", "id": "u", "name": None},
]
"""Values tried in every field: each JSON type, edge numbers, literals and shapes some field
accepts."""


def _variants() -> list[tuple[str, dict]]:
    """(what was changed, record) per probe of every field and nested field of every record type."""
    out = []
    for type_name, record in _full_records().items():
        base = json.loads(encode(record))
        nested = _nested_models(MODELS[type_name])
        out.append((f"{type_name} + unknown key", {**base, "zzz": 1}))
        for name in base:
            for probe in PROBES:
                out.append((f"{type_name}.{name} = {probe!r}", _with(base, name, probe)))
            if name in nested:
                out.append(
                    (f"{type_name}.{name} + unknown key", {**base, name: {**base[name], "zzz": 1}})
                )
                for key in base[name]:
                    for probe in PROBES:
                        out.append(
                            (
                                f"{type_name}.{name}.{key} = {probe!r}",
                                {**base, name: _with(base[name], key, probe)},
                            )
                        )
    return out


def _with(record: dict, name: str, value: Any) -> dict:
    changed = {**record, name: value}
    if value is MISSING:
        del changed[name]
    return changed


def _model_accepts(raw: bytes) -> bool:
    try:
        parse_line(raw, False)
    except (ValueError, RecursionError, ValidationError):
        return False
    return True


def test_the_fast_path_never_accepts_what_a_model_rejects(tmp_path, monkeypatch):
    variants = _variants()
    lines = [json.dumps(record).encode() + b"\n" for _, record in variants]
    slow: list[bytes] = []
    parse = reader._parse

    def spy(raw: bytes) -> Any:
        slow.append(raw)
        return parse(raw)

    monkeypatch.setattr(reader, "_parse", spy)
    scan = scan_log(_write(tmp_path, lines))
    assert scan.slow_lines == len(slow)
    fast = [(what, raw) for (what, _), raw in zip(variants, lines) if raw not in slow]
    laxer = [what for what, raw in fast if not _model_accepts(raw)]
    assert not laxer, "the fast path accepts lines the model rejects:\n" + "\n".join(laxer)
    assert len(fast) > len(variants) // 10  # the valid probes stay fast (a sanity check of the spy)


# -------------------------------------------------------------------------- the view validate reads


def test_the_scan_view(tmp_path):
    ada, bob = Reviewer(id="ada"), Reviewer(platform="slack", id="bob")
    records = [
        Rating(
            run_id="r1", item_id="i1", reviewer=ada, idempotency_key="a", judgment="good", score=0.7
        ),
        Rating(
            run_id="r1", item_id="i1", reviewer=bob, idempotency_key="b", judgment="okay", score=0.4
        ),
        Rating(
            run_id="r1", item_id="i1", reviewer=ada, idempotency_key="a", judgment="miss", score=0.1
        ),  # redelivery
        Skip(run_id="r1", item_id="i2", reviewer=ada, idempotency_key="c"),
        Rating(
            run_id="r1", item_id="i1", reviewer=ada, idempotency_key="d", judgment="miss", score=0.1
        ),
    ]
    scan = scan_log(_write(tmp_path, [encode(r) for r in records]))
    line = scan.column("line")
    assert list(line[scan.counted()]) == [1, 2, 4, 5]  # log order, the redelivery left out
    order = np.argsort(line)  # events are stored by block and type: line tells their order
    assert list(scan.column("reviewer")[order]) == [
        "terminal:ada",
        "slack:bob",
        "terminal:ada",
        "terminal:ada",
        "terminal:ada",
    ]
    assert list(scan.column("judgment")[order]) == ["good", "okay", "miss", None, "miss"]
    key = scan.codes()[order]
    assert key[0] == key[2] == key[4] and len({key[0], key[1], key[3]}) == 3
    pair = scan.codes(("run_id", "item_id"))[order]
    assert pair[0] == pair[1] == pair[2] == pair[4] != pair[3]
