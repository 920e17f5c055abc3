"""Records and their published schema."""

from __future__ import annotations

import json
import subprocess

import pytest
from pydantic import BaseModel, ValidationError

from evaluation import Rating, Reviewer, json_schemas, parse_record
from evaluation.config import HilbotConfig
from evaluation.records import RECORD_TYPES
from tests.conftest import HILBOT, ROOT


def _models(model: type[BaseModel], seen: set) -> list[type[BaseModel]]:
    if model in seen:
        return []
    seen.add(model)
    found = [model]
    for field in model.model_fields.values():
        for arg in getattr(field.annotation, "__args__", ()) + (field.annotation,):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                found += _models(arg, seen)
    return found


@pytest.mark.parametrize(
    "model",
    sorted(
        {m for t in [*RECORD_TYPES.values(), HilbotConfig] for m in _models(t, set())},
        key=lambda m: m.__name__,
    ),
)
def test_every_field_has_a_one_line_docstring(model):
    for name, field in model.model_fields.items():
        assert field.description, f"{model.__name__}.{name} has no docstring"
        assert "\n" not in field.description.strip(), (
            f"{model.__name__}.{name}: docstring is not one line"
        )


def test_schema_doc_is_current():
    printed = subprocess.run(
        [str(HILBOT), "schema"], capture_output=True, text=True, check=True
    ).stdout
    on_disk = (ROOT / "docs" / "schema.json").read_text()
    assert json.loads(printed) == json.loads(on_disk), (
        "docs/schema.json is stale: run `make schema`"
    )
    assert set(json.loads(on_disk)) == {
        "run_header",
        "query_evaluation",
        "run_summary",
        "rating",
        "skip",
        "note",
        "review_summary",
        "delivery",
        "triage_decision",
        "adjudication",
        "digest_posted",
        "push",
        "connector_call",
        "llm_call",
    }


def test_schema_matches_models():
    schemas = json_schemas()
    rating = schemas["rating"]["properties"]
    for field in (
        "run_id",
        "item_id",
        "dimension",
        "reviewer",
        "judgment",
        "score",
        "concerns",
        "note",
        "confidence",
        "ai_verdict_shown",
        "channel",
        "idempotency_key",
        "timestamp",
        "labels",
        "metadata",
    ):
        assert field in rating
    assert set(schemas["review_summary"]["properties"]) >= {
        "reviewedAt",
        "queriesReviewed",
        "queriesSkipped",
        "queriesFlagged",
        "humanAverageScore",
        "aiVsHumanDelta",
        "synthesis",
        "actionItems",
    }


def test_rating_round_trips_and_rejects_unknown_fields():
    rating = Rating(
        run_id="r",
        item_id="i",
        reviewer=Reviewer(id="u"),
        idempotency_key="k",
        judgment="good",
        score=1.0,
        confidence="high",
        concerns=["bad_ranking"],
    )
    back = parse_record(json.loads(rating.model_dump_json()))
    assert back == rating
    with pytest.raises(ValidationError):
        parse_record({**json.loads(rating.model_dump_json()), "scroe": 1})
    with pytest.raises(ValidationError):
        parse_record({**json.loads(rating.model_dump_json()), "confidence": "certain"})


def test_query_evaluation_keeps_the_data_query_evaluation_shape():
    record = parse_record(
        {
            "type": "query_evaluation",
            "run_id": "r",
            "data": {
                "id": "q1",
                "query": {"query": "zod schema validation", "intent": "x"},
                "evaluation": {"scores": {"overall": 0.76}},
            },
        }
    )
    dumped = json.loads(record.model_dump_json())
    assert dumped["data"]["query"]["query"] == "zod schema validation"
    assert dumped["data"]["evaluation"]["scores"]["overall"] == 0.76


# --------------------------------------------------------------------------- times


def _event(**fields) -> dict:
    return {
        "type": "rating",
        "run_id": "r",
        "item_id": "i",
        "reviewer": {"id": "u"},
        "idempotency_key": "k",
        "judgment": "good",
        "score": 1.0,
        **fields,
    }


@pytest.mark.parametrize(
    "written, utc",
    [
        ("2026-01-31", "2026-01-31T00:00:00+00:00"),
        ("2026-01-31T12:00:00", "2026-01-31T12:00:00+00:00"),
        ("2026-01-31T12:00:00+05:00", "2026-01-31T07:00:00+00:00"),
        ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00+00:00"),
        ("2200-12-31T23:59:59.999999Z", "2200-12-31T23:59:59.999999+00:00"),
    ],
)
def test_a_time_without_a_zone_is_utc(written, utc):
    from datetime import timezone

    stamp = parse_record(_event(timestamp=written)).timestamp
    assert stamp.tzinfo is not None and stamp.astimezone(timezone.utc).isoformat() == utc


@pytest.mark.parametrize(
    "record",
    [
        _event(timestamp="1969-12-31T23:59:59Z"),
        _event(timestamp="2201-01-01T00:00:00Z"),
        _event(timestamp="9999-12-31T23:59:59-05:00"),
        _event(timestamp="0001-01-01T00:00:00"),
        {"type": "run_header", "run_id": "r", "created_at": "2500-01-01T00:00:00Z"},
        {"type": "run_summary", "run_id": "r", "finished_at": "1900-01-01"},
        {"type": "review_summary", "run_id": "r", "reviewedAt": "3000-01-01T00:00:00Z"},
        {
            "type": "delivery",
            "run_id": "r",
            "item_id": "i",
            "reviewer": {"id": "u"},
            "channel": "telegram",
            "chat_id": "1",
            "message_id": "2",
            "timestamp": "1066-10-14T00:00:00Z",
        },
        {
            "type": "llm_call",
            "provider": "p",
            "model": "m",
            "purpose": "x",
            "cache_key": "k",
            "sent": "s",
            "at": "2999-01-01T00:00:00Z",
        },
    ],
)
def test_a_time_outside_1970_to_2200_is_an_error_saying_so(record):
    with pytest.raises(ValidationError, match="outside the years 1970–2200"):
        parse_record(record)
