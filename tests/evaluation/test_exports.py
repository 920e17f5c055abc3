"""`hilbot export`: a run's human review as labels (json/csv) or the run file with ``hil``.

Ratings, skips and notes are appended to ``store.ratings`` by hand, so every expected value
below is computed from the demo file's AI scores (q01 .87, q02 .91, q03 .69, q04 .66, q05 .23,
q06 .89 overall).
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from evaluation import HilbotError, RunNotFound, Store
from evaluation.exports import CSV_COLUMNS, export_run
from evaluation.imports import import_outputs
from evaluation.records import Labels, Note, Rating, RatingMetadata, Reviewer, Skip
from tests.auxil.review_logs import write_review_log
from tests.conftest import RAG_RUN, ROOT, SEARCH_RUN

DEMO_SEARCH = ROOT / "bot" / "demo" / "docs-search.outputs.jsonl"
DEMO_RAG = ROOT / "bot" / "demo" / "rag-answers.jsonl"
RUN = "demo-search"
ALICE = Reviewer(platform="terminal", id="alice", name="Alice")
BOB = Reviewer(platform="telegram", id="42", name="Bob")
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
AI_OVERALL = {"q01": 0.87, "q02": 0.91, "q03": 0.69, "q04": 0.66, "q05": 0.23, "q06": 0.89}

_keys = iter(range(10**6))


def _t(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def rate(
    store: Store,
    item: str,
    score: float,
    judgment: str,
    *,
    reviewer: Reviewer = ALICE,
    minutes: float = 0,
    dimension: str = "overall",
    key: str | None = None,
    run: str = RUN,
    **extra,
) -> Rating:
    rating = Rating(
        run_id=run,
        item_id=item,
        dimension=dimension,
        reviewer=reviewer,
        channel=reviewer.platform,
        idempotency_key=key or f"rating-{next(_keys)}",
        judgment=judgment,
        score=score,
        timestamp=_t(minutes),
        **extra,
    )
    store.ratings.append(rating)
    return rating


def skip(
    store: Store,
    item: str,
    reason: str | None,
    *,
    reviewer: Reviewer = ALICE,
    minutes: float = 0,
    dimension: str = "overall",
) -> Skip:
    event = Skip(
        run_id=RUN,
        item_id=item,
        dimension=dimension,
        reviewer=reviewer,
        channel=reviewer.platform,
        idempotency_key=f"skip-{next(_keys)}",
        skip_reason=reason,
        timestamp=_t(minutes),
    )
    store.ratings.append(event)
    return event


def note(
    store: Store,
    item: str,
    text: str,
    *,
    reviewer: Reviewer = ALICE,
    minutes: float = 0,
    dimension: str = "overall",
    run: str = RUN,
) -> Note:
    event = Note(
        run_id=run,
        item_id=item,
        dimension=dimension,
        reviewer=reviewer,
        channel=reviewer.platform,
        idempotency_key=f"note-{next(_keys)}",
        text=text,
        timestamp=_t(minutes),
    )
    store.ratings.append(event)
    return event


@pytest.fixture
def search(store: Store) -> Store:
    """The store with the demo search file imported as ``demo-search`` and no ratings."""
    import_outputs(store, DEMO_SEARCH, run_id=RUN)
    return store


@pytest.fixture
def reviewed(search: Store) -> Store:
    """Alice rates q01 (concerns) and q05 (plus a separate note), skips q02; Bob rates q03 (typed
    note) and q06."""
    rate(
        search,
        "q01",
        0.75,
        "good",
        minutes=1,
        concerns=["stale", "vague"],
        confidence="high",
        metadata=RatingMetadata(source_type="docs", session_date="2025-03-01"),
    )
    skip(search, "q02", "unclear", minutes=2)
    rate(search, "q05", 1.0, "excellent", minutes=3)
    note(search, "q05", "see ticket 12", minutes=4)
    rate(search, "q03", 0.25, "poor", reviewer=BOB, minutes=5, note="typo in snippet")
    rate(search, "q06", 0.5, "fair", reviewer=BOB, minutes=6)
    note(search, "q04", "a note without a rating", minutes=7)
    rate(
        search, "q01", 0.0, "bad", run="some-other-run", minutes=8
    )  # another run: never exported here
    return search


def _json(store: Store, **kw) -> dict:
    return json.loads(export_run(store, RUN, "json", **kw))


def _by_item(doc: dict) -> dict:
    return {q["data"]["id"]: q["data"] for q in doc["queries"]}


# --------------------------------------------------------------------------- json


def test_json_export_has_one_label_per_judgment(reviewed: Store):
    doc = _json(reviewed)

    assert doc["runId"] == RUN
    exported = datetime.fromisoformat(doc["exportedAt"])
    assert exported.tzinfo is not None
    assert abs((datetime.now(timezone.utc) - exported).total_seconds()) < 120
    assert "dimension" not in doc and "labelerId" not in doc  # no filter given

    labels = doc["labels"]
    assert [(label["scenarioId"], label["labelerId"]) for label in labels] == [
        ("q01", "terminal:alice"),
        ("q02", "terminal:alice"),
        ("q03", "telegram:42"),
        ("q05", "terminal:alice"),
        ("q06", "telegram:42"),
    ]
    q01, q02, q03, q05, q06 = labels
    assert q01["judgment"] == "good"
    assert q01["humanScore"] == 0.75
    assert q01["aiScore"] == 0.87
    assert q01["confidence"] == "high"
    assert q01["concerns"] == ["stale", "vague"]
    assert q01["dimension"] == "overall"
    assert q01["channel"] == "terminal"
    assert q01["aiVerdictShown"] is False
    assert q01["timestamp"] == _t(1).isoformat()
    assert q01["source_type"] == "docs" and q01["session_date"] == "2025-03-01"
    assert "notes" not in q01 and "skipped" not in q01

    assert q02["skipped"] is True
    assert q02["skipReason"] == "unclear"
    assert q02["timestamp"] == _t(2).isoformat()
    assert not {"judgment", "humanScore", "aiScore"} & set(q02)

    assert (q03["judgment"], q03["humanScore"], q03["notes"], q03["channel"]) == (
        "poor",
        0.25,
        "typo in snippet",
        "telegram",
    )
    assert q05["notes"] == "see ticket 12"
    assert "notes" not in q06

    for label in labels:
        # camelCase throughout, nothing of the internal record leaks
        assert not {
            "item_id",
            "run_id",
            "idempotency_key",
            "reviewer",
            "score",
            "skip_reason",
            "ai_verdict_shown",
            "type",
            "v",
            "labels",
            "metadata",
        } & set(label)


def test_json_export_queries_carry_the_hil_view(reviewed: Store):
    doc = _json(reviewed)
    queries = doc["queries"]
    run = reviewed.load_run(RUN)
    assert [q["data"]["id"] for q in queries] == [i.id for i in run.items]
    assert all(q["type"] == "query_evaluation" and q["run_id"] == RUN for q in queries)
    data = _by_item(doc)
    # the item itself is kept in the run file's shape
    assert data["q01"]["query"]["query"] == "ferret middleware error handling"
    assert data["q01"]["evaluation"]["scores"]["overall"] == 0.87
    assert data["q01"]["results"][0]["path"] == "/docs/ferret/middleware/errors.md"

    hil = data["q01"]["hil"]
    assert hil["reviewed"] is True
    assert (hil["judgment"], hil["humanScore"], hil["note"]) == ("good", 0.75, None)
    assert hil["reviewedAt"] == _t(1).isoformat()
    assert data["q05"]["hil"]["note"] == "see ticket 12"
    assert data["q03"]["hil"]["note"] == "typo in snippet"
    assert data["q06"]["hil"]["humanScore"] == 0.5
    assert data["q02"]["hil"]["reviewed"] is False
    assert data["q02"]["hil"]["skipped"] is True and data["q02"]["hil"]["skipReason"] == "unclear"
    assert data["q04"]["hil"] == {"reviewed": False}  # a note alone is not a review
    assert all(data[f"q{n:02d}"]["hil"] == {"reviewed": False} for n in range(7, 19))


def test_json_export_hil_review_summary(reviewed: Store):
    review = _json(reviewed)["hilReview"]
    assert review["dimension"] == "overall"
    assert review["queriesReviewed"] == 4  # q01, q03, q05, q06
    assert review["queriesSkipped"] == 1  # q02
    assert review["queriesFlagged"] == 3  # q01 concerns, q03 typed note, q05 separate note
    assert review["humanAverageScore"] == pytest.approx((0.75 + 0.25 + 1.0 + 0.5) / 4)  # 0.625
    # AI − human: (.87-0.75) + (.69-0.25) + (.23-1.0) + (.89-0.5) = 0.18 over 4 items
    assert review["aiVsHumanDelta"] == pytest.approx(0.045, abs=1e-9)
    datetime.fromisoformat(review["reviewedAt"].replace("Z", "+00:00"))
    assert not {"type", "v", "run_id", "reviewer"} & set(review)


def test_export_of_a_run_nobody_reviewed(search: Store):
    doc = _json(search)
    assert doc["labels"] == []
    assert all(q["data"]["hil"] == {"reviewed": False} for q in doc["queries"])
    review = doc["hilReview"]
    assert (review["queriesReviewed"], review["queriesSkipped"], review["queriesFlagged"]) == (
        0,
        0,
        0,
    )
    assert review["humanAverageScore"] is None and review["aiVsHumanDelta"] is None
    assert export_run(search, RUN, "csv") == ",".join(CSV_COLUMNS) + "\n"


def test_a_changed_rating_exports_only_the_latest_and_redeliveries_count_once(search: Store):
    first = rate(search, "q01", 0.25, "poor", minutes=1, key="tap-1")
    rate(search, "q01", 1.0, "excellent", minutes=5, key="tap-2")
    search.ratings.append(first)  # a redelivered old tap must not bring it back
    search.ratings.append(
        first.model_copy(update={"score": 0.0, "judgment": "bad"})
    )  # nor a reused key

    doc = _json(search)
    assert len(doc["labels"]) == 1
    label = doc["labels"][0]
    assert (label["judgment"], label["humanScore"], label["timestamp"]) == (
        "excellent",
        1.0,
        _t(5).isoformat(),
    )
    hil = _by_item(doc)["q01"]["hil"]
    assert (hil["judgment"], hil["humanScore"], hil["reviewedAt"]) == (
        "excellent",
        1.0,
        _t(5).isoformat(),
    )
    review = doc["hilReview"]
    assert review["queriesReviewed"] == 1
    assert review["humanAverageScore"] == 1.0
    assert review["aiVsHumanDelta"] == pytest.approx(0.87 - 1.0, abs=1e-9)


def test_the_same_event_delivered_twice_is_counted_once(search: Store):
    rating = rate(search, "q05", 0.5, "fair", minutes=1, concerns=["off-topic"])
    search.ratings.append(rating)
    search.ratings.append(rating)
    doc = _json(search)
    assert len(doc["labels"]) == 1
    assert doc["hilReview"]["queriesReviewed"] == 1
    assert doc["hilReview"]["queriesFlagged"] == 1
    assert doc["hilReview"]["aiVsHumanDelta"] == pytest.approx(0.23 - 0.5, abs=1e-9)
    assert len(list(csv.DictReader(io.StringIO(export_run(search, RUN, "csv"))))) == 1


def test_a_skip_after_a_rating_replaces_it(search: Store):
    rate(search, "q01", 0.75, "good", minutes=1)
    skip(search, "q01", "changed my mind", minutes=2)
    doc = _json(search)
    assert [label.get("skipped") for label in doc["labels"]] == [True]
    assert doc["hilReview"]["queriesReviewed"] == 0 and doc["hilReview"]["queriesSkipped"] == 1
    assert _by_item(doc)["q01"]["hil"]["reviewed"] is False


def test_dimension_label_fields_are_exported_in_camel_case(search: Store):
    rate(
        search,
        "q03",
        1.0,
        "correct",
        reviewer=BOB,
        dimension="trigger-accuracy",
        minutes=1,
        labels=Labels(trigger_correct=True),
    )
    rate(
        search,
        "q03",
        0.0,
        "broken",
        reviewer=BOB,
        dimension="code-validity",
        minutes=2,
        labels=Labels(code_parses=False, code_runs=False, code_issues=["missing import"]),
    )
    rate(
        search,
        "q03",
        0.0,
        "wrong",
        reviewer=BOB,
        dimension="technical-accuracy",
        minutes=3,
        labels=Labels(technically_correct=False, inaccuracies=["wrong default"]),
    )
    rate(
        search,
        "q03",
        0.75,
        "4",
        reviewer=BOB,
        dimension="completeness",
        minutes=4,
        labels=Labels(completeness_score=4, missing_elements=["example"]),
        metadata=RatingMetadata(blocked_by="missing docs", follow_up="q03b", user_notes="ok-ish"),
    )

    labels = {label["dimension"]: label for label in _json(search)["labels"]}
    assert labels["trigger-accuracy"]["triggerCorrect"] is True
    assert labels["code-validity"]["codeParses"] is False  # False is a value, not an empty field
    assert labels["code-validity"]["codeRuns"] is False
    assert labels["code-validity"]["codeIssues"] == ["missing import"]
    assert labels["technical-accuracy"]["technicallyCorrect"] is False
    assert labels["technical-accuracy"]["inaccuracies"] == ["wrong default"]
    assert labels["completeness"]["completenessScore"] == 4
    assert labels["completeness"]["missingElements"] == ["example"]
    assert (
        labels["completeness"]["blocked_by"],
        labels["completeness"]["follow_up"],
        labels["completeness"]["user_notes"],
    ) == ("missing docs", "q03b", "ok-ish")
    assert "triggerCorrect" not in labels["code-validity"]
    # a dimension the AI did not score falls back to the AI's overall score
    assert all(label["aiScore"] == AI_OVERALL["q03"] for label in labels.values())
    for label in labels.values():
        assert not any("_" in k for k in label if k not in CSV_COLUMNS)

    rows = {r["dimension"]: r for r in csv.DictReader(io.StringIO(export_run(search, RUN, "csv")))}
    assert rows["trigger-accuracy"]["triggerCorrect"] in ("True", "true")
    assert rows["code-validity"]["codeParses"] in ("False", "false")
    assert rows["completeness"]["completenessScore"] == "4"
    assert rows["completeness"]["blocked_by"] == "missing docs"


def test_a_note_only_item_keeps_its_note_in_every_format(search: Store):
    """ "Note only" stores a note and a skip with skip_reason "note only": every format carries the
    note."""
    note(
        search, "q04", "cannot judge without the v2 docs", minutes=1
    )  # Alice: note only (note, then skip)
    skip(search, "q04", "note only", minutes=1)
    rate(search, "q03", 0.25, "poor", reviewer=BOB, minutes=2)  # Bob: a rating with a separate note
    note(search, "q03", "typo in snippet", reviewer=BOB, minutes=3)

    doc = _json(search)
    labels = {label["scenarioId"]: label for label in doc["labels"]}
    assert (labels["q04"]["skipped"], labels["q04"]["skipReason"], labels["q04"]["notes"]) == (
        True,
        "note only",
        "cannot judge without the v2 docs",
    )
    assert labels["q03"]["notes"] == "typo in snippet"

    rows = {r["scenarioId"]: r for r in csv.DictReader(io.StringIO(export_run(search, RUN, "csv")))}
    assert (rows["q04"]["skipReason"], rows["q04"]["notes"]) == (
        "note only",
        "cannot judge without the v2 docs",
    )
    assert rows["q03"]["notes"] == "typo in snippet"

    lines = [json.loads(line) for line in export_run(search, RUN, "jsonl").splitlines()]
    for data in (_by_item(doc), {q["data"]["id"]: q["data"] for q in lines[1:-1]}):
        # the rated item's hil view, as before
        assert (data["q03"]["hil"]["reviewed"], data["q03"]["hil"]["note"]) == (
            True,
            "typo in snippet",
        )
        assert data["q03"]["hil"]["reviewer"] == "telegram:42"
        # the note-only item's hil view: skipped with a note, and the note carried as a rated item's
        # is
        assert data["q04"]["hil"] == {
            "reviewed": False,
            "skipped": True,
            "skipReason": "note only",
            "note": "cannot judge without the v2 docs",
            "reviewer": "terminal:alice",
            "reviewedAt": _t(1).isoformat(),
        }

    # filtered to the reviewer who wrote the note, the view still carries it; filtered to the other,
    # nothing shows
    assert (
        _by_item(_json(search, reviewer="terminal:alice"))["q04"]["hil"]["note"]
        == "cannot judge without the v2 docs"
    )
    assert _by_item(_json(search, reviewer="telegram:42"))["q04"]["hil"] == {"reviewed": False}
    review = doc["hilReview"]
    assert (review["queriesReviewed"], review["queriesSkipped"], review["queriesFlagged"]) == (
        1,
        1,
        1,
    )


def test_a_plain_skip_hil_view_has_no_note(reviewed: Store):
    hil = _by_item(_json(reviewed))["q02"]["hil"]
    assert (hil["reviewed"], hil["skipped"], hil["skipReason"], hil["note"]) == (
        False,
        True,
        "unclear",
        None,
    )
    assert hil["reviewer"] == "terminal:alice" and hil["reviewedAt"] == _t(2).isoformat()


def test_note_only_from_a_review_session_is_in_every_export(demo_store: Store, run_cli):
    """End to end: the review engine's "Note only" flow, then `hilbot export` in each format.

    Assignment may deal both reviewers the same item, so each reviewer's hil view is read
    with --reviewer.
    """
    from bot import Action, ReviewEngine
    from evaluation import load_config
    from tests.conftest import SEARCH_RUN

    engine = ReviewEngine(demo_store, load_config(None))
    alice = engine.session(SEARCH_RUN, ALICE, None)
    alice.start()
    noted = alice.item.id
    alice.act(Action("note"))
    alice.act(Action("text", "cannot judge without the v2 docs"))
    bob = engine.session(SEARCH_RUN, BOB, None)
    bob.start()
    rated = bob.item.id
    bob.act(Action("rate", "poor"))
    bob.act(Action("note"))
    bob.act(Action("text", "stale v1 page on top"))

    def export(fmt: str, *args: str) -> str:
        proc = run_cli("export", SEARCH_RUN, "--format", fmt, *args)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    for fmt in ("json", "jsonl", "csv"):
        assert "cannot judge without the v2 docs" in export(fmt, "--reviewer", ALICE.key)
        assert "stale v1 page on top" in export(fmt, "--reviewer", BOB.key)

    rows = list(csv.DictReader(io.StringIO(export("csv", "--reviewer", ALICE.key))))
    assert [(r["scenarioId"], r["skipReason"], r["notes"]) for r in rows] == [
        (noted, "note only", "cannot judge without the v2 docs")
    ]
    for who, item in ((ALICE, noted), (BOB, rated)):
        doc = json.loads(export("json", "--reviewer", who.key))
        queries = [
            json.loads(line) for line in export("jsonl", "--reviewer", who.key).splitlines()
        ][1:-1]
        for data in (_by_item(doc), {q["data"]["id"]: q["data"] for q in queries}):
            hil = data[item]["hil"]
            assert hil["reviewer"] == who.key
            if who is ALICE:
                assert (hil["reviewed"], hil["skipped"], hil["skipReason"], hil["note"]) == (
                    False,
                    True,
                    "note only",
                    "cannot judge without the v2 docs",
                )
            else:
                assert (hil["reviewed"], hil["judgment"], hil["note"]) == (
                    True,
                    "poor",
                    "stale v1 page on top",
                )


# --------------------------------------------------------------------------- filters


@pytest.fixture
def two_dimensions(reviewed: Store) -> Store:
    rate(
        reviewed,
        "q03",
        1.0,
        "correct",
        reviewer=BOB,
        dimension="trigger-accuracy",
        minutes=10,
        labels=Labels(trigger_correct=True),
    )
    rate(
        reviewed,
        "q04",
        0.0,
        "incorrect",
        reviewer=ALICE,
        dimension="trigger-accuracy",
        minutes=11,
        labels=Labels(trigger_correct=False, trigger_component_observed="relay"),
    )
    return reviewed


def test_without_filters_labels_span_every_dimension(two_dimensions: Store):
    labels = _json(two_dimensions)["labels"]
    assert len(labels) == 7
    assert {label["dimension"] for label in labels} == {"overall", "trigger-accuracy"}


def test_dimension_filter(two_dimensions: Store):
    doc = _json(two_dimensions, dimension="trigger-accuracy")
    assert doc["dimension"] == "trigger-accuracy"
    assert [(label["scenarioId"], label["triggerCorrect"]) for label in doc["labels"]] == [
        ("q03", True),
        ("q04", False),
    ]
    assert doc["labels"][1]["triggerComponentObserved"] == "relay"
    review = doc["hilReview"]
    assert review["dimension"] == "trigger-accuracy"
    assert (review["queriesReviewed"], review["queriesSkipped"]) == (2, 0)
    assert review["humanAverageScore"] == pytest.approx(0.5)
    assert review["aiVsHumanDelta"] == pytest.approx(((0.69 - 1.0) + (0.66 - 0.0)) / 2, abs=1e-9)
    data = _by_item(doc)
    assert data["q03"]["hil"]["judgment"] == "correct"
    assert data["q01"]["hil"] == {"reviewed": False}  # rated on overall only

    rows = list(
        csv.DictReader(
            io.StringIO(export_run(two_dimensions, RUN, "csv", dimension="trigger-accuracy"))
        )
    )
    assert [r["scenarioId"] for r in rows] == ["q03", "q04"]


def test_reviewer_filter_selects_labels(two_dimensions: Store):
    doc = _json(two_dimensions, reviewer="telegram:42")
    assert doc["labelerId"] == "telegram:42"
    assert [(label["scenarioId"], label["dimension"]) for label in doc["labels"]] == [
        ("q03", "overall"),
        ("q03", "trigger-accuracy"),
        ("q06", "overall"),
    ]
    assert all(label["labelerId"] == "telegram:42" for label in doc["labels"])
    assert _json(two_dimensions, reviewer="slack:nobody")["labels"] == []
    both = _json(two_dimensions, reviewer="terminal:alice", dimension="trigger-accuracy")
    assert [label["scenarioId"] for label in both["labels"]] == ["q04"]

    rows = list(
        csv.DictReader(
            io.StringIO(export_run(two_dimensions, RUN, "csv", reviewer="terminal:alice"))
        )
    )
    assert [r["scenarioId"] for r in rows] == ["q01", "q02", "q04", "q05"]  # item order
    assert {r["labelerId"] for r in rows} == {"terminal:alice"}


def test_reviewer_filter_also_applies_to_hil_review_and_the_hil_view(reviewed: Store):
    """A document that says labelerId=telegram:42 must not summarise or show Alice's ratings."""
    doc = _json(reviewed, reviewer="telegram:42")
    review = doc["hilReview"]
    assert (review["queriesReviewed"], review["queriesSkipped"], review["queriesFlagged"]) == (
        2,
        0,
        1,
    )
    assert review["humanAverageScore"] == pytest.approx((0.25 + 0.5) / 2)
    assert review["aiVsHumanDelta"] == pytest.approx(((0.69 - 0.25) + (0.89 - 0.5)) / 2, abs=1e-9)
    data = _by_item(doc)
    assert data["q01"]["hil"] == {"reviewed": False}  # only Alice rated q01
    assert data["q03"]["hil"]["humanScore"] == 0.25


def test_ai_vs_human_delta_is_ai_minus_human_as_the_format_defines_it(search: Store):
    """The format defines ``aiVsHumanDelta`` as AI − human (0.43 − 0.51 = −0.08): here the AI's
    0.23 on q05 against the reviewer's 0.31 is −0.08, and 0.89 on q06 against 0.5 is +0.39."""
    rate(search, "q05", 0.31, "poor", minutes=1)
    assert _json(search)["hilReview"]["aiVsHumanDelta"] == pytest.approx(-0.08, abs=1e-9)
    rate(search, "q06", 0.5, "fair", minutes=2)
    for review in (
        _json(search)["hilReview"],
        json.loads(export_run(search, RUN, "jsonl").splitlines()[-1])["hilReview"],
    ):
        assert review["aiVsHumanDelta"] == pytest.approx((-0.08 + 0.39) / 2, abs=1e-9)


def test_user_notes_carries_the_reviewers_notes(reviewed: Store):
    """``user_notes`` is the reviewer's free-form feedback: the note typed with a rating, a note
    added to it, a note-only review's note, and the metadata's own ``user_notes``, each once."""
    note(reviewed, "q02", "the query is ambiguous", minutes=9)  # on Alice's skip of q02
    rate(
        reviewed,
        "q04",
        0.5,
        "fair",
        reviewer=BOB,
        minutes=10,
        note="check the v2 page",
        metadata=RatingMetadata(user_notes="from the sheet"),
    )
    labels = {label["scenarioId"]: label for label in _json(reviewed)["labels"]}
    assert labels["q03"]["user_notes"] == labels["q03"]["notes"] == "typo in snippet"
    assert labels["q05"]["user_notes"] == "see ticket 12"
    assert labels["q02"]["user_notes"] == "the query is ambiguous"
    assert labels["q04"]["user_notes"] == "from the sheet\ncheck the v2 page"
    assert "user_notes" not in labels["q01"] and "user_notes" not in labels["q06"]
    rows = {
        r["scenarioId"]: r for r in csv.DictReader(io.StringIO(export_run(reviewed, RUN, "csv")))
    }
    assert rows["q03"]["user_notes"] == "typo in snippet"
    assert rows["q05"]["user_notes"] == "see ticket 12"
    assert rows["q06"]["user_notes"] == ""


# --------------------------------------------------------------------------- csv


def test_csv_export_one_row_per_label(reviewed: Store):
    note(reviewed, "q03", "and a later note", reviewer=BOB, minutes=20)
    text = export_run(reviewed, RUN, "csv")
    reader = csv.reader(io.StringIO(text))
    assert next(reader) == CSV_COLUMNS
    rows = list(csv.DictReader(io.StringIO(text)))
    labels = _json(reviewed)["labels"]
    assert len(rows) == len(labels) == 5
    assert [r["scenarioId"] for r in rows] == [label["scenarioId"] for label in labels]
    q01, q02, q03, q05, q06 = rows
    assert q01["concerns"] == "stale;vague"
    assert (q01["judgment"], float(q01["humanScore"]), float(q01["aiScore"])) == (
        "good",
        0.75,
        0.87,
    )
    assert (q01["labelerId"], q01["confidence"], q01["source_type"]) == (
        "terminal:alice",
        "high",
        "docs",
    )
    assert q01["timestamp"] == _t(1).isoformat()
    assert q02["skipped"] in ("True", "true") and q02["skipReason"] == "unclear"
    assert q02["judgment"] == q02["humanScore"] == q02["concerns"] == ""
    assert q03["notes"] == "typo in snippet\nand a later note"  # a multi-line cell survives quoting
    assert q05["notes"] == "see ticket 12"
    assert q06["concerns"] == "" and q06["notes"] == ""
    assert all(len(r) == len(CSV_COLUMNS) for r in csv.reader(io.StringIO(text)))


# --------------------------------------------------------------------------- jsonl


def test_jsonl_export_is_the_run_file_with_hil(reviewed: Store):
    text = export_run(reviewed, RUN, "jsonl")
    assert text.endswith("\n")
    lines = [json.loads(line) for line in text.splitlines()]  # every line is valid JSON
    assert len(lines) == 1 + 18 + 1
    header, *queries, summary = lines
    assert header["type"] == "run_header" and header["run_id"] == RUN and header["kind"] == "search"
    assert header["dimensions"] == ["overall"]
    assert [q["type"] for q in queries] == ["query_evaluation"] * 18
    assert [q["data"]["id"] for q in queries] == [f"q{n:02d}" for n in range(1, 19)]
    assert all("hil" in q["data"] for q in queries)
    data = {q["data"]["id"]: q["data"] for q in queries}
    assert (
        data["q01"]["hil"]["humanScore"] == 0.75
        and data["q01"]["evaluation"]["scores"]["overall"] == 0.87
    )
    assert data["q02"]["hil"]["skipped"] is True
    assert data["q18"]["hil"] == {"reviewed": False}
    assert summary["type"] == "run_summary" and summary["run_id"] == RUN
    assert summary["item_count"] == 18
    assert (
        summary["averageScores"]["overall"]
        == reviewed.load_run(RUN).summary.averageScores["overall"]
    )
    assert summary["hilReview"]["queriesReviewed"] == 4
    assert summary["hilReview"]["aiVsHumanDelta"] == pytest.approx(0.045, abs=1e-9)


def test_export_of_an_answer_run_uses_its_first_dimension(store: Store):
    import_outputs(store, DEMO_RAG, run_id="rag")
    store.ratings.append(
        Rating(
            run_id="rag",
            item_id="rag06",
            dimension="answer",
            reviewer=ALICE,
            idempotency_key="rag-1",
            judgment="bad",
            score=0.0,
            timestamp=T0,
        )
    )
    doc = json.loads(export_run(store, "rag", "json"))
    assert doc["hilReview"]["dimension"] == "answer"
    assert doc["hilReview"]["queriesReviewed"] == 1
    assert doc["hilReview"]["aiVsHumanDelta"] == pytest.approx(
        0.22 - 0.0, abs=1e-9
    )  # rag06 overall .22
    assert doc["labels"][0]["aiScore"] == 0.22
    assert {q["data"]["id"]: q["data"]["hil"]["reviewed"] for q in doc["queries"]}["rag06"] is True


def test_export_reads_but_never_writes(reviewed: Store):
    run_bytes = reviewed.run_path(RUN).read_bytes()
    ratings_bytes = reviewed.ratings.path.read_bytes()
    for fmt in ("json", "jsonl", "csv"):
        export_run(reviewed, RUN, fmt)
    assert reviewed.run_path(RUN).read_bytes() == run_bytes
    assert reviewed.ratings.path.read_bytes() == ratings_bytes


def test_export_of_an_unknown_or_unsafe_run_is_an_error(search: Store):
    with pytest.raises(RunNotFound) as info:
        export_run(search, "nope", "json")
    assert "no run 'nope'" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(HilbotError):
        export_run(search, "../demo-search", "json")


# --------------------------------------------------------------------------- the CLI


def test_cli_export_csv_to_a_file(reviewed: Store, run_cli, tmp_path: Path):
    proc = run_cli("export", RUN, "--format", "csv", "--out", "exports/labels.csv")
    assert proc.returncode == 0, proc.stderr
    written = tmp_path / "exports" / "labels.csv"
    assert written.is_file()
    assert proc.stdout.strip() == "wrote exports/labels.csv"
    assert written.read_text("utf-8") == export_run(reviewed, RUN, "csv")
    assert list(csv.reader(io.StringIO(written.read_text("utf-8"))))[0] == CSV_COLUMNS


def test_cli_export_json_and_jsonl_to_stdout_with_filters(two_dimensions: Store, run_cli):
    proc = run_cli(
        "export",
        RUN,
        "--format",
        "json",
        "--dimension",
        "trigger-accuracy",
        "--reviewer",
        "telegram:42",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [label["scenarioId"] for label in doc["labels"]] == ["q03"]
    assert doc["dimension"] == "trigger-accuracy" and doc["labelerId"] == "telegram:42"

    proc = run_cli("export", RUN, "--format", "jsonl")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["type"] == "run_header" and lines[-1]["type"] == "run_summary"


def test_cli_export_of_an_unknown_run_is_one_error_line(search: Store, run_cli):
    proc = run_cli("export", "nope", "--format", "csv")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no run 'nope'" in lines[0]


# --------------------------------------------------------------------------- the synthesis


@pytest.fixture
def demo_reviewed(demo_store: Store) -> Store:
    """The demo search run with two reviewers' ratings, concern tags and notes (AI overall: q01 .87,
    q05 .23, q06 .89)."""
    from tests.conftest import SEARCH_RUN

    rate(demo_store, "q01", 0.0, "terrible", run=SEARCH_RUN, minutes=1, concerns=["stale"])
    rate(
        demo_store,
        "q01",
        0.25,
        "poor",
        run=SEARCH_RUN,
        reviewer=BOB,
        minutes=2,
        concerns=["stale", "vague"],
    )
    rate(demo_store, "q05", 1.0, "excellent", run=SEARCH_RUN, minutes=3)
    rate(demo_store, "q06", 0.5, "fair", run=SEARCH_RUN, reviewer=BOB, minutes=4)
    note(demo_store, "q01", "the v1 page outranks the current one", run=SEARCH_RUN, minutes=5)
    return demo_store


def _synthesize(run_cli, *args: str) -> dict:
    proc = run_cli("analyze", "synthesize", "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _export(run_cli, run: str, fmt: str, *args: str) -> str:
    proc = run_cli("export", run, "--format", fmt, *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _hil_reviews(run_cli, run: str, *args: str) -> list[dict]:
    """The run-level hilReview of the json export and of the jsonl export's run_summary line."""
    doc = json.loads(_export(run_cli, run, "json", *args))
    summary = json.loads(_export(run_cli, run, "jsonl", *args).splitlines()[-1])
    assert summary["type"] == "run_summary"
    return [doc["hilReview"], summary["hilReview"]]


def test_export_carries_the_synthesis_of_analyze_synthesize(demo_reviewed: Store, run_cli):
    from tests.conftest import SEARCH_RUN

    for review in _hil_reviews(run_cli, SEARCH_RUN):  # before: nothing synthesized yet
        assert review["synthesis"] is None and review["actionItems"] == []
    made = _synthesize(run_cli, "--run", SEARCH_RUN)
    assert (
        made["synthesis_source"] == "statistical"
        and "Most frequent concerns: stale (2), vague (1)" in made["synthesis"]
    )
    assert made["actionItems"][0] == "Address stale: flagged in 2 rating(s)"
    for review in _hil_reviews(run_cli, SEARCH_RUN):
        assert review["synthesis"] == made["synthesis"]
        assert review["actionItems"] == made["actionItems"]
        assert review["synthesis_source"] == "statistical"
        assert (
            review["queriesReviewed"] == 4
        )  # the counts are still the export's own, of the log as it is
    assert export_run(demo_reviewed, SEARCH_RUN, "csv").splitlines()[0] == ",".join(
        CSV_COLUMNS
    )  # csv: labels only


def test_export_carries_the_latest_synthesis(demo_reviewed: Store, run_cli):
    from tests.conftest import SEARCH_RUN

    first = _synthesize(run_cli, "--run", SEARCH_RUN)
    rate(
        demo_reviewed,
        "q06",
        0.0,
        "terrible",
        run=SEARCH_RUN,
        reviewer=ALICE,
        minutes=10,
        concerns=["broken_link"],
    )
    rate(
        demo_reviewed,
        "q05",
        0.0,
        "terrible",
        run=SEARCH_RUN,
        reviewer=BOB,
        minutes=11,
        concerns=["broken_link"],
    )
    rate(
        demo_reviewed,
        "q03",
        0.0,
        "terrible",
        run=SEARCH_RUN,
        reviewer=BOB,
        minutes=12,
        concerns=["broken_link"],
    )
    second = _synthesize(run_cli, "--run", SEARCH_RUN)
    assert (
        second["synthesis"] != first["synthesis"] and second["actionItems"] != first["actionItems"]
    )
    assert second["actionItems"][0] == "Address broken_link: flagged in 3 rating(s)"
    for review in _hil_reviews(run_cli, SEARCH_RUN):
        assert (review["synthesis"], review["actionItems"]) == (
            second["synthesis"],
            second["actionItems"],
        )
    # a session summary written later (no synthesis in it) does not hide the synthesis
    from evaluation.records import ReviewSummary

    demo_reviewed.ratings.append(
        ReviewSummary(run_id=SEARCH_RUN, reviewer=ALICE, queriesReviewed=3)
    )
    for review in _hil_reviews(run_cli, SEARCH_RUN):
        assert review["synthesis"] == second["synthesis"]


def test_a_synthesis_belongs_to_its_run_and_dimension(demo_reviewed: Store, run_cli):
    from evaluation.records import ReviewSummary
    from tests.conftest import RAG_RUN, SEARCH_RUN

    made = _synthesize(run_cli, "--run", SEARCH_RUN)
    demo_reviewed.ratings.append(
        ReviewSummary(
            run_id=SEARCH_RUN,
            dimension="trigger-accuracy",
            synthesis="other dimension",
            synthesis_source="statistical",
            actionItems=["not this one"],
        )
    )
    for review in _hil_reviews(run_cli, SEARCH_RUN):
        assert review["synthesis"] == made["synthesis"]
    for review in _hil_reviews(run_cli, SEARCH_RUN, "--dimension", "trigger-accuracy"):
        assert (review["synthesis"], review["actionItems"]) == ("other dimension", ["not this one"])
    for review in _hil_reviews(run_cli, RAG_RUN):  # never synthesized: as before
        assert (
            review["synthesis"] is None
            and review["synthesis_source"] is None
            and review["actionItems"] == []
        )


def test_a_reviewer_filtered_export_leaves_out_the_all_reviewer_synthesis(
    demo_reviewed: Store, run_cli
):
    """The synthesis speaks for every reviewer; a document that says labelerId=X summarises X's work
    only."""
    from tests.conftest import SEARCH_RUN

    _synthesize(run_cli, "--run", SEARCH_RUN)
    for review in _hil_reviews(run_cli, SEARCH_RUN, "--reviewer", BOB.key):
        assert review["synthesis"] is None and review["actionItems"] == []
        assert review["queriesReviewed"] == 2


def test_export_of_a_run_never_synthesized_is_unchanged(reviewed: Store):
    from evaluation.records import ReviewSummary

    reviewed.ratings.append(
        ReviewSummary(run_id=RUN, reviewer=ALICE, queriesReviewed=2)
    )  # a session's end, no synthesis
    reviewed.ratings.append(
        ReviewSummary(run_id="some-other-run", synthesis="elsewhere", actionItems=["no"])
    )
    for review in (
        _json(reviewed)["hilReview"],
        json.loads(export_run(reviewed, RUN, "jsonl").splitlines()[-1])["hilReview"],
    ):
        assert (
            review["synthesis"] is None
            and review["synthesis_source"] is None
            and review["actionItems"] == []
        )
        assert review["queriesReviewed"] == 4


def test_the_full_label_from_a_review_session_is_exported(demo_store: Store):
    """Confidence, the follow-up fields and the skip reason, from the engine to every format."""
    from bot import Action, ReviewEngine
    from evaluation import load_config
    from tests.conftest import SEARCH_RUN

    engine = ReviewEngine(demo_store, load_config(None))
    acts = {
        "code-validity": [
            ("rate", "broken"),
            ("confidence", "low"),
            ("answer", "code_issues:syntax error"),
            ("answer", "code_issues:missing import"),
        ],
        "trigger-accuracy": [
            ("rate", "no"),
            ("type", "trigger_component_observed"),
            ("text", "search-widget"),
        ],
        "technical-accuracy": [
            ("rate", "incorrect"),
            ("next", "confidence"),
            ("answer", "inaccuracies:wrong fact"),
        ],
        "completeness": [("rate", "2"), ("answer", "missing_elements:edge cases")],
        "overall": [("skip", None), ("skip", "unclear item")],
    }
    for dimension, steps in acts.items():
        session = engine.session(SEARCH_RUN, ALICE, dimension)
        session.start()
        for kind, value in steps:
            assert not session.act(Action(kind, value)).alert, (dimension, kind, value)
    labels = {
        label["dimension"]: label
        for label in json.loads(export_run(demo_store, SEARCH_RUN, "json"))["labels"]
    }
    assert (labels["code-validity"]["confidence"], labels["code-validity"]["codeIssues"]) == (
        "low",
        ["syntax error", "missing import"],
    )
    assert labels["trigger-accuracy"]["triggerComponentObserved"] == "search-widget"
    assert (
        labels["technical-accuracy"]["inaccuracies"] == ["wrong fact"]
        and "confidence" not in labels["technical-accuracy"]
    )
    assert labels["completeness"]["missingElements"] == ["edge cases"]
    assert labels["overall"]["skipReason"] == "unclear item"
    rows = {
        r["dimension"]: r
        for r in csv.DictReader(io.StringIO(export_run(demo_store, SEARCH_RUN, "csv")))
    }
    assert (rows["code-validity"]["confidence"], rows["code-validity"]["codeIssues"]) == (
        "low",
        "syntax error;missing import",
    )
    assert rows["trigger-accuracy"]["triggerComponentObserved"] == "search-widget"
    assert (
        rows["technical-accuracy"]["inaccuracies"],
        rows["completeness"]["missingElements"],
    ) == ("wrong fact", "edge cases")
    assert rows["overall"]["skipReason"] == "unclear item"


# --------------------------------------------------------------------------- to a terminal

HOSTILE_NOTE = "copy \x1b]52;c;cm0gLXJmIH4=\x07 me\u202eevil\x00 \x9b31m\u200b end"
UNSAFE_OUT = ("\x1b", "\x07", "\x00", "\u202e", "\x9b", "\u200b")


def _export_to(search: Store, fmt: str, *, tty: bool) -> bytes:
    """``hilbot export`` of the reviewed run to a pseudo-terminal (or a pipe): the bytes it
    wrote."""
    import os
    import subprocess

    import pexpect

    from tests.conftest import HILBOT

    note(search, "q01", HOSTILE_NOTE)
    args = ["--data-dir", str(search.root), "export", RUN, "--format", fmt]
    if not tty:
        return subprocess.run(
            [str(HILBOT), *args], capture_output=True, check=True, timeout=60
        ).stdout
    child = pexpect.spawn(str(HILBOT), args, env={**os.environ, "TERM": "dumb"}, timeout=60)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    return child.before


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl"])
def test_an_export_to_a_terminal_shows_control_characters_visibly(
    reviewed: Store, fmt: str
) -> None:
    shown = _export_to(reviewed, fmt, tty=True).decode("utf-8")
    assert not [c for c in UNSAFE_OUT if c in shown], shown
    assert "cm0gLXJmIH4=" in shown  # the note is there, made visible


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl"])
def test_an_export_to_a_pipe_keeps_the_data_exact(reviewed: Store, fmt: str) -> None:
    text = _export_to(reviewed, fmt, tty=False).decode("utf-8")
    if fmt == "csv":
        assert HOSTILE_NOTE in text
    else:
        rows = (
            [json.loads(text)]
            if fmt == "json"
            else [json.loads(line) for line in text.splitlines()]
        )
        assert any(HOSTILE_NOTE in s for s in _strings(rows))


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_a_json_export_to_a_terminal_is_still_the_same_json(reviewed: Store, fmt: str) -> None:
    """On a terminal the unsafe characters of a JSON export are written as JSON escapes: the same
    data."""
    shown = _export_to(reviewed, fmt, tty=True).decode("utf-8").replace("\r\n", "\n")
    rows = (
        [json.loads(shown)]
        if fmt == "json"
        else [json.loads(line) for line in shown.splitlines() if line]
    )
    assert any(HOSTILE_NOTE in s for s in _strings(rows))


def _strings(value):
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


# ----------------------------------------------------------------- the export from the index


@pytest.mark.parametrize("seed", [1, 2])
def test_the_export_from_the_index_is_the_export_of_the_whole_log(tmp_path, monkeypatch, seed):
    from bot.demo import build_demo
    from tests.auxil.cli import invoke

    monkeypatch.setenv("HILBOT_INDEX_MIN_BYTES", "0")  # index this small log too
    store = Store(tmp_path / "results")
    build_demo(store)
    write_review_log(store, seed, [SEARCH_RUN, RAG_RUN])
    today = datetime.now(timezone.utc).date().isoformat()  # when the export summarises
    runs = [SEARCH_RUN, RAG_RUN]
    variants = [
        (run, *extra)
        for run in runs
        for extra in (
            ("--format", "csv"),
            ("--format", "jsonl"),
            ("--format", "json", "--dimension", "completeness"),
            ("--format", "csv", "--reviewer", "terminal:r1"),
        )
    ]

    def exports() -> list[tuple[int, str, str]]:
        found = []
        for args in variants:
            out = invoke("--data-dir", str(store.root), "export", *args)
            stdout = re.sub(rf'"(exportedAt|reviewedAt)": "{today}T[^"]*"', "", out.stdout)
            found.append((out.exit_code, stdout, out.stderr))
        return found

    indexed = exports()
    assert (store.root / "cache" / "index" / "ratings" / "meta.json").is_file()
    assert exports() == indexed  # from the index just written
    monkeypatch.setenv("HILBOT_NO_INDEX", "1")
    reference = exports()
    for args, got, want in zip(variants, indexed, reference):
        assert got == want, args
    assert all(code == 0 for code, _, _ in indexed)
    assert any("synthesis" in out for _, out, _ in indexed)
