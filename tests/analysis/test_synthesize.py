"""Synthesis: the statistical one worked out by hand, the LLM one through the real SDK and the
local Messages API server; both appended as ``review_summary`` records."""

from __future__ import annotations

import json

import pytest

from analysis.synthesize import gather, synthesize
from evaluation import (
    Evaluation,
    HilbotError,
    ItemData,
    Ledger,
    Note,
    Query,
    QueryEvaluation,
    Rating,
    Reviewer,
    RunHeader,
    Store,
    summarize,
)
from tests.fakes.anthropic_api import tool

ALICE, BOB = Reviewer(id="alice"), Reviewer(id="bob")


def _rating(
    item: str, who: Reviewer, judgment: str, score: float, concerns=(), key: str = ""
) -> Rating:
    return Rating(
        run_id="r1",
        item_id=item,
        dimension="overall",
        reviewer=who,
        judgment=judgment,
        score=score,
        concerns=list(concerns),
        idempotency_key=key or f"{who.id}:{item}:{judgment}",
    )


@pytest.fixture
def reviewed(store: Store) -> Store:
    """Four items; AI overall 0.9, 0.8, 0.3, 0.7 (q4 never rated)."""
    items = [
        ItemData(
            id=f"q{n}",
            query=Query(query=f"query {n}"),
            evaluation=Evaluation(scores={"overall": ai}),
        )
        for n, ai in ((1, 0.9), (2, 0.8), (3, 0.3), (4, 0.7))
    ]
    store.create_run(RunHeader(run_id="r1"), [QueryEvaluation(run_id="r1", data=i) for i in items])
    store.ratings.append_many(
        [
            _rating("q1", ALICE, "terrible", 0.1, ["bad_ranking"]),
            _rating("q1", BOB, "poor", 0.4, ["bad_ranking", "weak_snippet"]),
            _rating("q2", ALICE, "good", 1.0),
            _rating("q2", BOB, "okay", 0.7, ["bad_ranking"]),
            _rating("q3", ALICE, "good", 1.0),
            _rating("q3", ALICE, "okay", 0.7, key="alice:q3:changed"),  # changed: latest counts
            Note(
                run_id="r1",
                item_id="q1",
                dimension="overall",
                reviewer=ALICE,
                text="Top hit is the wrong product",
                idempotency_key="n1",
            ),
        ]
    )
    return store


def test_evidence_follows_the_log(reviewed):
    from analysis.load import load

    evidence = gather(load(reviewed), "r1", "overall")
    by_id = {e.item_id: e for e in evidence.items}
    assert set(by_id) == {"q1", "q2", "q3"} and evidence.reviewers == 2
    assert by_id["q1"].human == pytest.approx(0.25) and by_id["q1"].gap == pytest.approx(0.25 - 0.9)
    assert by_id["q3"].human == pytest.approx(0.7) and by_id["q3"].gap == pytest.approx(0.4)
    assert evidence.concerns == [("bad_ranking", 3), ("weak_snippet", 1)]
    assert [e.item_id for e in evidence.gaps()] == ["q1", "q3", "q2"]  # |−0.65|, |0.4|, |0.05|
    assert evidence.notes == ["Top hit is the wrong product"]
    ledger = Ledger.from_events(
        reviewed.human_events()
    )  # the same counts as the terminal's session summary
    expected = summarize(ledger, reviewed.load_run("r1"), "overall")
    assert evidence.summary.model_dump(exclude={"reviewedAt"}) == expected.model_dump(
        exclude={"reviewedAt"}
    )


def test_statistical_synthesis_is_labelled_and_appended(reviewed):
    record = synthesize(reviewed, _config(), run_id="r1")
    assert record.synthesis_source == "statistical"
    # 5 ratings: q1 0.1, 0.4; q2 1.0, 0.7; q3 0.7 → mean 0.58; human − AI −0.8 −0.5 +0.2 −0.1 +0.4
    # → mean −0.16, so AI − human (aiVsHumanDelta, as the hil format defines it) 0.16
    assert record.queriesReviewed == 5 and record.humanAverageScore == pytest.approx(0.58)
    assert record.aiVsHumanDelta == pytest.approx(0.16)
    assert "the AI scores 0.16 higher than the reviewers" in record.synthesis
    assert "Most frequent concerns: bad_ranking (3), weak_snippet (1)" in record.synthesis
    assert record.actionItems[:2] == [
        "Address bad_ranking: flagged in 3 rating(s)",
        "Address weak_snippet: flagged in 1 rating(s)",
    ]
    assert "Re-check the judge on “query 1”: AI 0.90 vs reviewers 0.25" in record.actionItems
    assert "Fix or drop “query 1”: rated terrible, poor" in record.actionItems
    [stored] = [
        json.loads(line)
        for line in reviewed.ratings.path.read_text().splitlines()
        if '"review_summary"' in line
    ]
    assert stored["synthesis"] == record.synthesis and stored["actionItems"] == record.actionItems


def test_llm_synthesis_goes_through_the_client(reviewed, fake):
    fake.queue(
        tool(
            synthesis="Reviewers find ranking problems the judge misses.",
            actionItems=["Boost exact product matches"],
        )
    )
    record = synthesize(reviewed, _config(), run_id="r1", use_llm=True)
    assert record.synthesis == "Reviewers find ranking problems the judge misses."
    assert (
        record.actionItems == ["Boost exact product matches"]
        and record.synthesis_source == "anthropic/claude-sonnet-5"
    )
    sent = json.dumps(fake.requests[0])
    assert "Top hit is the wrong product" in sent and "Largest AI" in sent and "bad_ranking" in sent
    [call] = [json.loads(line) for line in reviewed.llm_calls.path.read_text().splitlines()]
    assert call["purpose"] == "synthesize:r1"


def test_nothing_to_synthesize_is_a_clear_error(store):
    store.create_run(RunHeader(run_id="r0"), [])
    with pytest.raises(HilbotError, match="no run has ratings yet"):
        synthesize(store, _config())


# ------------------------------------------------------------------ at a review session's end


def test_synthesize_and_store_is_statistical_by_default_and_reaches_the_export(reviewed, fake):
    from analysis.synthesize import synthesize_and_store
    from evaluation.exports import export_run

    record = synthesize_and_store(reviewed, _config(), "r1", "overall")
    assert (
        record is not None and record.synthesis_source == "statistical" and record.reviewer is None
    )
    assert "Most frequent concerns: bad_ranking (3), weak_snippet (1)" in record.synthesis
    assert fake.requests == [] and not reviewed.llm_calls.path.exists()  # no LLM unless asked for
    [stored] = [
        json.loads(line)
        for line in reviewed.ratings.path.read_text().splitlines()
        if '"review_summary"' in line
    ]
    assert (stored["synthesis"], stored["actionItems"]) == (record.synthesis, record.actionItems)
    review = json.loads(export_run(reviewed, "r1", "json"))["hilReview"]
    assert (review["synthesis"], review["actionItems"], review["synthesis_source"]) == (
        record.synthesis,
        record.actionItems,
        "statistical",
    )


def test_synthesize_and_store_with_the_llm_when_opted_in(reviewed, fake):
    from analysis.synthesize import synthesize_and_store
    from evaluation.exports import export_run

    fake.queue(
        tool(
            synthesis="Ranking problems the judge misses.",
            actionItems=["Boost exact product matches"],
        )
    )
    record = synthesize_and_store(reviewed, _config(), "r1", "overall", llm=True)
    assert (record.synthesis, record.synthesis_source) == (
        "Ranking problems the judge misses.",
        "anthropic/claude-sonnet-5",
    )
    assert len(fake.requests) == 1
    review = json.loads(export_run(reviewed, "r1", "json"))["hilReview"]
    assert (review["synthesis"], review["actionItems"]) == (
        "Ranking problems the judge misses.",
        ["Boost exact product matches"],
    )


def test_synthesize_and_store_with_nothing_rated_stores_nothing(reviewed):
    """A session ended before any rating (or on another dimension) has nothing to synthesize: None,
    nothing written."""
    from analysis.synthesize import synthesize_and_store

    before = reviewed.ratings.path.read_bytes()
    assert synthesize_and_store(reviewed, _config(), "r1", "relevance") is None
    reviewed.create_run(RunHeader(run_id="r2"), [])
    assert synthesize_and_store(reviewed, _config(), "r2", None) is None
    assert reviewed.ratings.path.read_bytes() == before
    with pytest.raises(HilbotError, match="no run 'nope'"):
        synthesize_and_store(reviewed, _config(), "nope", None)


def _config():
    from evaluation import load_config

    return load_config(None)
