"""Local metrics (no LLM): quote recall/precision, nDCG@k, recall@k, the weighted aggregate and
the dimension profile. Every expected value is worked out by hand in the test."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evaluation import metrics
from evaluation.cases import load_cases
from evaluation.records import GroundTruthContext

ROOT = Path(__file__).resolve().parents[2]
ELIMINATOR = ROOT / "tests" / "fixtures" / "cases" / "eliminator-concealed-counteract.yaml"

# The default weights, written out here so a changed default shows up as a failure.
DOCUMENTED_WEIGHTS = {
    "answer_correctness": 0.30,
    "quote_recall": 0.30,
    "explanation_faithfulness": 0.20,
    "quote_faithfulness": 0.15,
    "quote_precision": 0.05,
}
EQUAL_WEIGHTS = {name: 1.0 for name in DOCUMENTED_WEIGHTS}

# The three contexts of the worked eliminator example, quoted with markdown and odd whitespace:
# bold, italics, code ticks, a line break inside the sentence, doubled spaces, a link and a
# list marker. Matching must ignore all of it.
ASTARTES = (
    "Astartes: Each friendly **ANGEL OF DEATH** operative can counteract   regardless of its order."
)
SILENT = (
    "*Silent*: An operative can perform the `Shoot` action with this weapon\n   while it has "
    "a _Conceal_ order."
)
CONCEAL = (
    "- [Conceal](rules/orders.md#conceal): The operative cannot perform Shoot and Charge "
    "actions,\tand it cannot counteract."
)


@pytest.fixture
def eliminator():
    (case,) = load_cases(ELIMINATOR)
    return case.ground_truth_contexts


def test_the_fixture_is_the_eliminator_example(eliminator, config):
    assert [c.priority for c in eliminator] == ["critical", "critical", "supporting"]
    assert config.judge.priority_weights == {"critical": 10, "supporting": 3}


@pytest.mark.parametrize(
    "quotes, expected",
    [
        ([ASTARTES, SILENT, CONCEAL], (23, 23)),  # scenario 1: all three found → 23/23
        ([ASTARTES, SILENT], (20, 23)),  # scenario 2: only the critical ones → 20/23
        ([ASTARTES, CONCEAL], (13, 23)),  # scenario 3: Silent (critical) missing → 13/23
    ],
    ids=["all", "critical-only", "missing-silent"],
)
def test_the_worked_recall_example_exactly(eliminator, config, quotes, expected):
    weights = config.judge.priority_weights
    assert metrics.recall_weights(eliminator, quotes, weights) == expected
    assert metrics.quote_recall(eliminator, quotes, weights) == expected[0] / expected[1]


def test_the_equal_weight_recall_would_be_100_67_67(eliminator):
    # "Old system: All scenarios would be 100%, 67%, 67% respectively"
    equal = {"critical": 1, "supporting": 1}
    assert metrics.recall_weights(eliminator, [ASTARTES, SILENT, CONCEAL], equal) == (3, 3)
    assert metrics.recall_weights(eliminator, [ASTARTES, SILENT], equal) == (2, 3)
    assert metrics.recall_weights(eliminator, [ASTARTES, CONCEAL], equal) == (2, 3)


def test_priority_weights_are_configurable(eliminator):
    weights = {"critical": 5, "supporting": 1}
    assert metrics.recall_weights(eliminator, [ASTARTES, CONCEAL], weights) == (6, 11)
    assert metrics.quote_recall(eliminator, [CONCEAL], weights) == 1 / 11


def test_matching_is_a_substring_match_not_a_fuzzy_one(eliminator, config):
    weights = config.judge.priority_weights
    # A word missing ("with this weapon") is not the rule; neither is a fragment of it.
    near_misses = [
        "An operative can perform the Shoot action while it has a Conceal order.",
        "Each friendly ANGEL OF DEATH operative can counteract",
    ]
    assert metrics.coverage(eliminator, near_misses) == [False, False, False]
    assert metrics.recall_weights(eliminator, near_misses, weights) == (0, 23)
    # One quote holding two contexts finds both.
    both = ASTARTES + " " + SILENT
    assert metrics.coverage(eliminator, [both]) == [True, True, False]


def test_markdown_and_whitespace_are_ignored_on_the_context_side_too():
    contexts = [
        GroundTruthContext(
            text="**Place Marker (1AP)**: If an operative carrying a marker is incapacitated,\n"
            "it must perform this action"
        )
    ]
    assert metrics.found(
        contexts[0].text,
        [
            "Place Marker (1AP): If an operative carrying a marker is "
            "incapacitated, it must perform this action before being removed."
        ],
    )
    assert (
        metrics.normalize("## Heading\n> **bold**  and _it_ `code`\n\n[link](x.md)")
        == "Heading bold and it code link"
    )


def test_no_contexts_or_no_quotes():
    assert metrics.quote_recall([], ["anything"], {"critical": 10}) is None
    ctx = [
        GroundTruthContext(
            text="A player cannot use the same type of grenade more than once per turning point"
        )
    ]
    assert metrics.quote_recall(ctx, [], {"critical": 10}) == 0.0
    assert metrics.quote_precision(ctx, []) is None
    assert metrics.quote_precision([], ["a quote"]) is None


def test_quote_precision_counts_relevant_quotes_unweighted(eliminator):
    quotes = [
        SILENT,  # contains a context: relevant
        "The operative cannot perform Shoot and Charge actions",  # a ≥20-char part of a context: relevant
        "Camo Cloak: While this operative has a Conceal order and is in cover, it can retain one "
        "dice.",  # off-topic
        "Each friendly",  # part of a context but too short (<20)
    ]
    assert metrics.quote_precision(eliminator, quotes) == 2 / 4
    assert metrics.quote_precision(eliminator, [ASTARTES, SILENT, CONCEAL]) == 1.0


# --------------------------------------------------------------------------- nDCG@k, recall@k

RANKED = ["/a", "/x", "/b", "/y", "/c", "/d"]
EXPECTED = ["/a", "/b", "/c", "/d"]


def test_ndcg_at_5_hand_worked():
    # Binary relevance. Relevant results sit at ranks 1, 3 and 5 (/d is at rank 6, past the
    # cut-off):
    #   DCG@5  = 1/log2(1+1) + 1/log2(3+1) + 1/log2(5+1)              = 1 + 0.5 + 0.38685
    # Four expected pages, so the ideal list has relevant results at ranks 1..4:
    #   IDCG@5 = 1/log2(2) + 1/log2(3) + 1/log2(4) + 1/log2(5)         = 1 + 0.63093 + 0.5 + 0.43068
    dcg = 1 / math.log2(2) + 1 / math.log2(4) + 1 / math.log2(6)
    idcg = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5)
    assert metrics.ndcg_at_k(RANKED, EXPECTED, 5) == pytest.approx(dcg / idcg)
    assert metrics.ndcg_at_k(RANKED, EXPECTED, 5) == pytest.approx(
        1.88685 / 2.56161, abs=1e-5
    )  # = 0.73659


def test_ndcg_at_3_hand_worked():
    # Top 3 = /a, /x, /b: DCG = 1/log2(2) + 1/log2(4) = 1.5; the ideal top 3 is all relevant:
    # IDCG = 1/log2(2) + 1/log2(3) + 1/log2(4) = 2.13093 → nDCG@3 = 0.70392.
    assert metrics.ndcg_at_k(RANKED, EXPECTED, 3) == pytest.approx(
        1.5 / (1 + 1 / math.log2(3) + 0.5)
    )


def test_ndcg_ideal_is_capped_by_the_number_of_expected_pages():
    # One expected page found first: DCG = IDCG = 1 whatever k is → 1.0.
    assert metrics.ndcg_at_k(["/a", "/x", "/y"], ["/a"], 5) == 1.0
    # Found second: 1/log2(3) over an ideal of 1 → 0.63093.
    assert metrics.ndcg_at_k(["/x", "/a"], ["/a"], 5) == pytest.approx(1 / math.log2(3))
    assert metrics.ndcg_at_k(["/x", "/y"], ["/a"], 5) == 0.0
    assert metrics.ndcg_at_k(["/a"], [], 5) is None


def test_ndcg_counts_a_page_returned_twice_once():
    # A chunked search can return the same page twice. Binary-relevance nDCG is at most 1; the
    # second hit of /a is not a new relevant result: DCG = 1/log2(2) = 1 = IDCG → 1.0.
    value = metrics.ndcg_at_k(["/a", "/a", "/b"], ["/a"], 5)
    assert value is not None and value <= 1.0
    assert value == pytest.approx(1.0)


def test_recall_at_k_hand_worked():
    # Of the four expected pages, /a, /b and /c are in the top 5 (/d is 6th) → 3/4.
    assert metrics.recall_at_k(RANKED, EXPECTED, 5) == 3 / 4
    assert metrics.recall_at_k(RANKED, EXPECTED, 6) == 1.0
    assert metrics.recall_at_k(RANKED, EXPECTED, 1) == 1 / 4
    assert (
        metrics.recall_at_k(["/a", "/a", None], ["/a", "/b"], 5) == 1 / 2
    )  # duplicates and missing paths
    assert metrics.recall_at_k(RANKED, [], 5) is None


# ------------------------------------------------------------------------- aggregate and dimensions

MODEL_A = {
    "answer_correctness": 1.0,
    "quote_recall": 0.4,
    "explanation_faithfulness": 1.0,
    "quote_faithfulness": 1.0,
    "quote_precision": 1.0,
}


def test_worked_model_a_is_82_weighted_and_88_equal():
    # Weighted: .30·1 + .30·.4 + .20·1 + .15·1 + .05·1 = .82 → 82. Equal: (1+.4+1+1+1)/5 = .88 → 88.
    assert metrics.aggregate(MODEL_A, DOCUMENTED_WEIGHTS) == pytest.approx(82.0)
    assert metrics.aggregate(MODEL_A, EQUAL_WEIGHTS) == pytest.approx(88.0)


def test_default_config_weights_are_the_documented_ones(config):
    assert config.judge.metric_weights == DOCUMENTED_WEIGHTS
    assert metrics.aggregate(MODEL_A, config.judge.metric_weights) == pytest.approx(82.0)


def test_aggregate_renormalises_over_the_metrics_present():
    # Without the two quote-faithfulness/precision metrics: (.3·1 + .3·.4 + .2·1) / (.3+.3+.2) =
    # .62/.8 = 77.5
    scores = {**MODEL_A, "quote_faithfulness": None, "quote_precision": float("nan")}
    assert metrics.aggregate(scores, DOCUMENTED_WEIGHTS) == pytest.approx(77.5)
    # Names without a weight (overall, ndcg@5) are ignored, not averaged in.
    assert metrics.aggregate(
        {**MODEL_A, "overall": 0.0, "ndcg@5": 0.0}, DOCUMENTED_WEIGHTS
    ) == pytest.approx(82.0)
    assert metrics.aggregate({"answer_correctness": None}, DOCUMENTED_WEIGHTS) is None
    assert metrics.aggregate({"answer_correctness": 0.5}, DOCUMENTED_WEIGHTS) == pytest.approx(50.0)


def test_quote_quality_is_half_recall_three_tenths_faithfulness_one_fifth_precision():
    scores = {
        "quote_recall": 0.4,
        "quote_faithfulness": 1.0,
        "quote_precision": 0.5,
        "explanation_faithfulness": 0.75,
        "answer_correctness": 0.0,
    }
    dims = metrics.profile(scores)
    # .5·.4 + .3·1 + .2·.5 = .2 + .3 + .1 = .6 → 60
    assert dims["quote_quality"] == pytest.approx(60.0)
    assert dims["reasoning"] == pytest.approx(75.0)
    assert dims["correctness"] == pytest.approx(0.0)
    # Faithfulness not judged: (.5·.4 + .2·.5) / (.5+.2) = .3/.7
    partial = metrics.profile({"quote_recall": 0.4, "quote_precision": 0.5})
    assert partial["quote_quality"] == pytest.approx(100 * 0.3 / 0.7)
    assert partial["reasoning"] is None and partial["correctness"] is None


def test_token_f1_and_term_overlap_hand_worked():
    # pred = [the, cat, sat], ref = [the, cat, ran, away]: common 2 → P = 2/3, R = 2/4 → F1 = 4/7
    assert metrics.token_f1("The cat sat", "the cat ran away") == pytest.approx(4 / 7)
    assert metrics.token_f1("", "x") == 0.0
    # query terms minus stopwords: {ferret, middleware, order}; text has ferret and order → 2/3
    assert metrics.term_overlap(
        "the ferret middleware order", "Ferret applies in reverse order"
    ) == pytest.approx(2 / 3)
