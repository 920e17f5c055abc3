"""`analysis.calibration`: the AI judge against humans, on hand-built frames with exactly the
contract's columns.

Every expected value is worked by hand in the comments (and, where a library offers it,
cross-checked). The frame builders here are shared with test_correlate.py and test_patterns.py.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from analysis._fold import CONCERN_COLUMNS, NOTE_COLUMNS, RATING_COLUMNS
from analysis.calibration import ConfusionMatrix, calibration, confusion_matrix
from analysis.calibration import confusion_kappa as cohen_kappa
from analysis.load import ITEM_COLUMNS
from analysis.stats import Undefined, fisher_ci, kendall_tau, spearman, to_jsonable
from analysis.vocabulary import nearest_options
from evaluation import HilbotError, load_config

CONFIG = load_config(None)
T0 = pd.Timestamp("2025-03-03 09:00", tz="UTC")  # a Monday
RUN = "run-a"

# the loader's frames, in its own columns


# ---------------------------------------------------------------- frame builders (shared)


def rating(
    item: str,
    judgment: str,
    *,
    dimension: str = "overall",
    score: float | None = None,
    **extra: Any,
) -> dict:
    """One ratings row; the score defaults to the judgment's option score on the dimension's
    scale."""
    if score is None:
        score = CONFIG.scale_for(dimension).option(judgment).score
    return {"item_id": item, "judgment": judgment, "dimension": dimension, "score": score, **extra}


def make_ratings(rows: list[dict]) -> pd.DataFrame:
    defaults = {
        "run_id": RUN,
        "dimension": "overall",
        "reviewer": "terminal:alice",
        "n_concerns": 0,
        "note": None,
        "timestamp": T0,
        "channel": "terminal",
        "source_type": None,
        "session_date": None,
    }
    frame = pd.DataFrame(
        [{**defaults, **row, "line": i + 1} for i, row in enumerate(rows)], columns=RATING_COLUMNS
    )
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True).astype("datetime64[ns, UTC]")
    for column in ("note", "source_type", "session_date"):
        frame[column] = frame[column].astype(object)
    return frame.astype({"score": "float64", "n_concerns": "int64", "line": "int64"})


def make_items(
    rows: list[dict], *, ai: tuple[str, ...] = ("overall",), features: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Items rows; ``ai`` and ``features`` name the ``ai_*`` / ``feature_*`` columns (NaN when a row
    lacks one)."""
    defaults = {
        "run_id": RUN,
        "kind": "search",
        "set": "demo",
        "category": None,
        "verdict": "PASS",
        "confidence": 0.8,
        "judge": "lexical",
        "prompt_hash": None,
        "source_type": None,
    }
    columns = [
        *ITEM_COLUMNS,
        *(f"ai_{a}" for a in ai),
        *(f"feature_{f}" for f in features),
        "source_type",
    ]
    records = [{"query": f"query about {row['item_id']}", **defaults, **row} for row in rows]
    frame = pd.DataFrame(records, columns=columns)
    for column in columns:
        if column.startswith(("ai_", "feature_")) or column == "confidence":
            frame[column] = frame[column].astype("float64")
        elif column in ("category", "prompt_hash", "verdict", "source_type"):
            frame[column] = frame[column].astype(object)
    return frame


def make_concerns(rows: list[dict]) -> pd.DataFrame:
    defaults = {
        "run_id": RUN,
        "dimension": "overall",
        "reviewer": "terminal:alice",
        "timestamp": T0,
    }
    frame = pd.DataFrame([{**defaults, **row} for row in rows], columns=CONCERN_COLUMNS)
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True).astype("datetime64[ns, UTC]")
    return frame


def make_notes(rows: list[dict]) -> pd.DataFrame:
    defaults = {
        "run_id": RUN,
        "dimension": "overall",
        "reviewer": "terminal:alice",
        "timestamp": T0,
    }
    frame = pd.DataFrame([{**defaults, **row} for row in rows], columns=NOTE_COLUMNS)
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True).astype("datetime64[ns, UTC]")
    return frame


def walk(value: Any) -> list[Any]:
    """Every leaf of a to_dict() result."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in walk(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in walk(v)]
    return [value]


def rounded(value: Any) -> Any:
    """A to_dict() result with floats rounded to 9 decimals."""
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return round(value, 9) if isinstance(value, float) else value


def assert_json_safe(report: Any) -> dict:
    """to_dict() survives strict JSON and holds no NaN or infinity anywhere."""
    data = report.to_dict()
    json.dumps(data, allow_nan=False)
    assert not any(isinstance(v, float) and not math.isfinite(v) for v in walk(data))
    assert "not a finite number" not in json.dumps(data)
    return data


# ----------------------------------------------------------- rank correlation on a textbook example

# The classic 10-pair example (Wikipedia, "Spearman's rank correlation coefficient"): IQ against
# hours of TV
# per week. Ranks of IQ: 3 1 4 5 2 6 ... ; Σd² = 194, so ρ = 1 − 6·194 / (10·(10² − 1)) = 1 −
# 1164/990 = −29/165.
IQ = [106, 86, 100, 101, 99, 103, 97, 113, 112, 110]
TV = [7, 0, 27, 50, 28, 29, 20, 12, 6, 17]
RHO = -29 / 165  # −0.175757…
# Kendall: of the 45 pairs 20 are concordant and 25 discordant (no ties), τ = (20 − 25)/45 = −1/9.
TAU = -1 / 9


def test_spearman_on_the_textbook_example():
    result = spearman(IQ, TV)
    assert result.coefficient == pytest.approx(RHO, abs=1e-12)
    assert result.p_value == pytest.approx(0.627188, abs=1e-6)  # t = ρ√(8/(1−ρ²)) = −0.5056, 8 df
    assert result.n == 10
    # Fisher z = atanh(−0.175758) = −0.177602; Bonett–Wright SE = √((1 + ρ²/2)/7) = √(1.015446/7) =
    # 0.380872;
    # z ± 1.959964·SE = −0.177602 ± 0.746496 = [−0.924097, 0.568894]; tanh → [−0.727830, 0.514547].
    assert result.ci.low == pytest.approx(-0.727830, abs=1e-6)
    assert result.ci.high == pytest.approx(0.514547, abs=1e-6)
    assert result.ci.method == "fisher-z bonett-wright"


def test_kendall_on_the_textbook_example():
    result = kendall_tau(IQ, TV)
    assert result.coefficient == pytest.approx(TAU, abs=1e-12)
    reference = stats.kendalltau(IQ, TV)
    assert result.p_value == pytest.approx(reference.pvalue)  # exact test (n = 10, no ties): 0.7275
    assert result.p_value == pytest.approx(0.7275, abs=1e-4)


@pytest.mark.parametrize(
    "x, y, reason",
    [
        ([0.1, 0.5, 0.9], [0.2, 0.4, 0.8], "fewer than 4 pairs (n=3)"),
        ([], [], "fewer than 4 pairs (n=0)"),
        ([0.5, 0.5, 0.5, 0.5], [0.1, 0.4, 0.7, 1.0], "x is constant (0.5 throughout)"),
        ([0.1, 0.4, 0.7, 1.0], [0.7, 0.7, 0.7, 0.7], "y is constant (0.7 throughout)"),
    ],
)
def test_rank_correlations_are_undefined_on_too_little_or_constant_data(x, y, reason):
    for result in (spearman(x, y), kendall_tau(x, y)):
        assert result.coefficient == Undefined(reason)
        assert result.p_value == Undefined(reason)


def test_fisher_ci_is_undefined_for_perfect_agreement():
    result = spearman([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    assert result.coefficient == pytest.approx(1.0)
    assert isinstance(result.ci, Undefined) and "infinite" in result.ci.reason
    assert isinstance(fisher_ci(0.5, 3), Undefined)


# ---------------------------------------------------------------- categories and κ worked by hand

# The search scale: terrible .1, poor .4, okay .7, good 1.0; category boundaries at the midpoints
# .25, .55, .85, a score on a boundary going up (q09 at .85 → good, q10 at .25 → poor).
#   item  AI    → AI category   human      PASS? AI (≥ .6) / human (success = score ≥ .5)   human − AI
#   q01  .95     good          good 1.0    PASS / PASS                                       +.05
#   q02  .90     good          good 1.0    PASS / PASS                                       +.10
#   q03  .86     good          okay  .7    PASS / PASS                                       −.16
#   q04  .70     okay          okay  .7    PASS / PASS                                        0
#   q05  .60     okay          poor  .4    PASS / FAIL                                       −.20
#   q06  .50     poor          poor  .4    FAIL / FAIL                                       −.10
#   q07  .30     poor          terrible .1 FAIL / FAIL                                       −.20
#   q08  .10     terrible      terrible .1 FAIL / FAIL                                        0
#   q09  .85     good          good 1.0    PASS / PASS                                       +.15
#   q10  .25     poor          poor  .4    FAIL / FAIL                                       +.15
HAND = [
    ("q01", 0.95, "good"),
    ("q02", 0.90, "good"),
    ("q03", 0.86, "okay"),
    ("q04", 0.70, "okay"),
    ("q05", 0.60, "poor"),
    ("q06", 0.50, "poor"),
    ("q07", 0.30, "terrible"),
    ("q08", 0.10, "terrible"),
    ("q09", 0.85, "good"),
    ("q10", 0.25, "poor"),
]
# Confusion (rows AI, columns human; terrible, poor, okay, good):
#   terrible [1 0 0 0]   (q08)
#   poor     [1 2 0 0]   (q07; q06 q10)
#   okay     [0 1 1 0]   (q05; q04)
#   good     [0 0 1 3]   (q03; q01 q02 q09)
HAND_MATRIX = ((1, 0, 0, 0), (1, 2, 0, 0), (0, 1, 1, 0), (0, 0, 1, 3))
# p_o = 7/10; rows 1 3 2 4, columns 2 3 2 3: p_e = (1·2 + 3·3 + 2·2 + 4·3)/100 = 27/100;
# κ = (0.70 − 0.27)/(1 − 0.27) = 43/73 = 0.589041.
HAND_KAPPA = 43 / 73
# Quadratic weights ((i − j)/3)²: Σ w·O = 3 · 1/9 = 30/90; Σ w·E = Σ r_i c_j
# (i − j)² / (9·10) = 242/90
# (row terms 38 + 3·16 + 2·14 + 4·32 = 242); κ_w = 1 − 30/242 = 212/242 = 0.876033.
HAND_WEIGHTED = 212 / 242
# PASS/FAIL (rows AI FAIL, PASS): FAIL → [4 0] (q06 q07 q08 q10), PASS → [1 5] (q05; q01–q04 q09).
# p_o = 9/10, p_e = (4·5 + 6·5)/100 = 1/2, κ = (0.9 − 0.5)/0.5 = 0.8.
# Δ = (.05 + .10 − .16 + 0 − .20 − .10 − .20 + 0 + .15 + .15)/10 = −.21/10 = −0.021.


def hand_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    ratings = make_ratings([rating(item, judgment) for item, _, judgment in HAND])
    items = make_items([{"item_id": item, "ai_overall": ai} for item, ai, _ in HAND])
    return ratings, items


def test_nearest_option_rounds_half_up():
    scale = CONFIG.scale_for("overall")
    picked = [
        o.value for o in nearest_options([0.0, 0.25, 0.2499, 0.55, 0.56, 0.85, 0.8499, 1.0], scale)
    ]
    assert picked == ["terrible", "poor", "terrible", "okay", "okay", "good", "okay", "good"]


def test_category_agreement_worked_by_hand():
    report = calibration(hand_frames(), CONFIG)
    (group,) = report.groups
    assert group.key == {"dimension": "overall"} and group.n == 10
    assert group.categories.confusion.labels == ("terrible", "poor", "okay", "good")
    assert group.categories.confusion.counts == HAND_MATRIX
    assert group.categories.observed == pytest.approx(0.7)
    assert group.categories.kappa == pytest.approx(HAND_KAPPA)
    assert group.categories.weighted_kappa == pytest.approx(HAND_WEIGHTED)


def test_kappa_matches_statsmodels():
    from statsmodels.stats.inter_rater import cohens_kappa

    matrix = ConfusionMatrix(("terrible", "poor", "okay", "good"), HAND_MATRIX)
    assert cohen_kappa(matrix) == pytest.approx(cohens_kappa(np.array(HAND_MATRIX)).kappa)
    assert cohen_kappa(matrix, "quadratic") == pytest.approx(
        cohens_kappa(np.array(HAND_MATRIX), wt="quadratic").kappa
    )
    # The textbook 2×2 (Wikipedia, "Cohen's kappa"): 20 5 / 10 15 → p_o = .7, p_e = .5, κ = .4.
    assert cohen_kappa(ConfusionMatrix(("no", "yes"), ((20, 5), (10, 15)))) == pytest.approx(0.4)


def test_pass_fail_and_delta_worked_by_hand():
    (group,) = calibration(hand_frames(), CONFIG).groups
    assert group.pass_fail.confusion.labels == ("FAIL", "PASS")
    assert group.pass_fail.confusion.counts == ((4, 0), (1, 5))
    assert group.pass_fail.kappa == pytest.approx(0.8)
    assert group.mean_delta == pytest.approx(-0.021)
    assert group.mean_ai == pytest.approx(6.01 / 10) and group.mean_human == pytest.approx(5.8 / 10)


def test_pass_mark_comes_from_the_config_and_can_be_overridden():
    # At a pass mark of .9 only q01 (.95) and q02 (.90) pass: FAIL → [5 3] (q03 q09 fail though
    # humans pass).
    report = calibration(hand_frames(), CONFIG, pass_mark=0.9)
    assert report.pass_mark == 0.9
    assert report.groups[0].pass_fail.confusion.counts == ((5, 3), (0, 2))
    assert calibration(hand_frames(), CONFIG).pass_mark == CONFIG.judge.pass_mark == 0.6


def test_disagreements_largest_gap_first_with_notes_and_query():
    ratings, items = hand_frames()
    ratings.loc[ratings["item_id"] == "q05", "note"] = "judge too generous"
    notes = make_notes(
        [
            {"item_id": "q05", "text": "missing the key result"},
            {"item_id": "q05", "text": "judge too generous"},  # the same text once
            {"item_id": "q05", "reviewer": "terminal:bob", "text": "not a current rating"},
        ]
    )
    (group,) = calibration((ratings, items, notes), CONFIG, top=3).groups
    # |Δ|: q05 .20, q07 .20 (tie → by item id), then q03 .16.
    assert [d.item_id for d in group.disagreements] == ["q05", "q07", "q03"]
    first = group.disagreements[0]
    assert (first.ai_score, first.human_score) == (0.60, 0.4) and first.delta == pytest.approx(-0.2)
    assert first.notes == ("judge too generous", "missing the key result")
    assert first.query == "query about q05" and first.judgments == ("poor",)
    assert len(calibration(hand_frames(), CONFIG).groups[0].disagreements) == 10


def test_the_textbook_example_through_calibration():
    # AI = IQ/200 and human = hours/100 keep the ranks, so ρ and τ are the textbook ones.
    ratings = make_ratings([rating(f"i{k}", "okay", score=tv / 100) for k, tv in enumerate(TV)])
    items = make_items([{"item_id": f"i{k}", "ai_overall": iq / 200} for k, iq in enumerate(IQ)])
    (group,) = calibration((ratings, items), CONFIG).groups
    assert group.spearman.coefficient == pytest.approx(RHO)
    assert group.kendall.coefficient == pytest.approx(TAU)
    assert group.spearman.ci.low == pytest.approx(-0.727830, abs=1e-6)


# ---------------------------------------------------------------- the unit of analysis


def test_human_score_is_the_mean_of_the_items_current_ratings():
    # q1: good 1.0 and poor .4 → mean .7 → okay; q2: one rating; q3 unscored by the AI; q4 not in
    # items.
    ratings = make_ratings(
        [
            rating("q1", "good"),
            rating("q1", "poor", reviewer="telegram:7"),
            rating("q2", "terrible"),
            rating("q3", "good"),
            rating("q4", "good"),
        ]
    )
    items = make_items(
        [
            {"item_id": "q1", "ai_overall": 0.7},
            {"item_id": "q2", "ai_overall": 0.2},
            {"item_id": "q3", "ai_overall": None},
        ]
    )
    report = calibration((ratings, items), CONFIG)
    (group,) = report.groups
    assert report.unscored == 2
    assert (group.n, group.n_ratings) == (2, 3)
    assert group.categories.confusion.counts[2][2] == 1  # q1: AI okay, humans okay
    # |Δ|: q2 |.1 − .2| = .1 comes before q1 |.7 − .7| = 0.
    assert [d.item_id for d in group.disagreements] == ["q2", "q1"]
    q1 = group.disagreements[1]
    assert q1.human_score == pytest.approx(0.7) and q1.judgments == ("good", "poor")


def test_ai_score_follows_the_dimension_column_then_overall():
    # trigger-accuracy reads ai_trigger_accuracy ("-" → "_") when present, else ai_overall.
    ratings = make_ratings(
        [rating(f"q{k}", "yes" if k % 2 else "no", dimension="trigger-accuracy") for k in range(4)]
    )
    items = make_items(
        [
            {"item_id": "q0", "ai_trigger_accuracy": 0.0, "ai_overall": 0.9},
            {"item_id": "q1", "ai_trigger_accuracy": 1.0, "ai_overall": 0.1},
            {"item_id": "q2", "ai_overall": 0.2},
            {"item_id": "q3", "ai_overall": 0.8},
        ],
        ai=("overall", "trigger_accuracy"),
    )
    report = calibration((ratings, items), CONFIG, by=("dimension", "metric"))
    keys = {g.key["metric"]: g for g in report.groups}
    assert set(keys) == {"trigger_accuracy", "overall"}
    assert keys["trigger_accuracy"].mean_ai == pytest.approx(0.5)  # q0 0.0, q1 1.0 (not .9/.1)
    assert keys["overall"].mean_ai == pytest.approx(0.5)  # q2 .2, q3 .8


def test_the_built_in_answer_dimensions_are_checked_against_the_judges_metrics():
    """No hand-made dimension: answer-correctness and technical-accuracy read the judge's
    answer_correctness, quote-faithfulness its quote_faithfulness, explanation-faithfulness its
    explanation_faithfulness (each before overall, which the first item's 0.5 would give)."""
    judged = {
        "ai_overall": 0.5,
        "ai_answer_correctness": 0.9,
        "ai_quote_faithfulness": 0.2,
        "ai_explanation_faithfulness": 0.7,
    }
    items = make_items(
        [{"item_id": f"q{k}", **judged} for k in range(2)],
        ai=("overall", "answer_correctness", "quote_faithfulness", "explanation_faithfulness"),
    )
    rows = [
        rating("q0", "correct", dimension="answer-correctness"),
        rating("q1", "incorrect", dimension="technical-accuracy"),
        rating("q0", "unfaithful", dimension="quote-faithfulness"),
        rating("q1", "faithful", dimension="explanation-faithfulness"),
    ]
    report = calibration((make_ratings(rows), items), CONFIG, by=("metric",))
    groups = {g.key["metric"]: g for g in report.groups}
    assert set(groups) == {"answer_correctness", "quote_faithfulness", "explanation_faithfulness"}
    assert groups["answer_correctness"].n == 2 and groups["answer_correctness"].mean_ai == 0.9
    assert groups["quote_faithfulness"].mean_ai == pytest.approx(0.2)
    assert groups["explanation_faithfulness"].mean_ai == pytest.approx(0.7)
    # the same items: humans 1.0 and 0.0 against the judge's 0.9 → categories correct, incorrect
    matrix = groups["answer_correctness"].categories.confusion
    assert matrix.labels == ("incorrect", "correct") and matrix.counts == ((0, 0), (1, 1))
    assert CONFIG.dimensions["technical-accuracy"].metric == "answer_correctness"


def test_calibration_by_metric_on_a_judged_answer_run(store, run_cli):
    """``hilbot analyze calibration --by metric`` shows one group per judge metric the reviewers
    rated on the built-in dimensions."""
    from evaluation.records import (
        Evaluation,
        ItemData,
        Query,
        QueryEvaluation,
        Rating,
        Reviewer,
        RunHeader,
    )

    scores = [
        {"overall": 0.6, "answer_correctness": 0.9 - k / 10, "quote_faithfulness": k / 10}
        for k in range(6)
    ]
    store.create_run(
        RunHeader(run_id="rag", kind="answer", dimensions=["answer"]),
        [
            QueryEvaluation(
                run_id="rag",
                data=ItemData(
                    id=f"a{k}",
                    query=Query(query=f"q{k}"),
                    answer="…",
                    evaluation=Evaluation(scores=s),
                ),
            )
            for k, s in enumerate(scores)
        ],
    )
    for k in range(6):
        for dimension, judgment, score in (
            ("answer-correctness", "correct" if k < 3 else "incorrect", 1.0 if k < 3 else 0.0),
            ("quote-faithfulness", "faithful" if k >= 3 else "unfaithful", 1.0 if k >= 3 else 0.0),
        ):
            if (dimension, k) == ("quote-faithfulness", 5):
                continue  # left to bob, below
            store.ratings.append(
                Rating(
                    run_id="rag",
                    item_id=f"a{k}",
                    dimension=dimension,
                    reviewer=Reviewer(id="alice"),
                    idempotency_key=f"{dimension}{k}",
                    judgment=judgment,
                    score=score,
                )
            )
    env = {"HILBOT_DATA_DIR": str(store.root)}
    # a reviewer rates on them as on any built-in dimension (bob: a5 faithful, and one item
    # correct on technical accuracy, which counts as answer correctness too)
    for dimension, key in (("quote-faithfulness", "f"), ("technical-accuracy", "c")):
        typed = key + "\r" * 3 + "q"  # the rating, past any follow-up question, then quit
        reviewed = run_cli(
            "review", "rag", "--dimension", dimension, "--reviewer", "bob", input=typed, env=env
        )
        assert reviewed.returncode == 0, reviewed.stderr
    result = run_cli("analyze", "calibration", "--by", "metric", env=env)
    assert result.returncode == 0, result.stderr
    assert "## metric=answer_correctness" in result.stdout
    assert "## metric=quote_faithfulness" in result.stdout
    data = json.loads(
        run_cli("analyze", "calibration", "--by", "metric", "--format", "json", env=env).stdout
    )
    groups = {g["key"]["metric"]: g for g in data["groups"]}
    assert set(groups) == {"answer_correctness", "quote_faithfulness"}
    assert all(not g["notes"] for g in groups.values())  # configured, built-in dimensions
    rated = {
        e.dimension
        for e in store.human_events()
        if getattr(e, "score", None) is not None and e.reviewer.id == "bob"
    }
    assert rated >= {"quote-faithfulness", "technical-accuracy"}
    assert groups["quote_faithfulness"]["n"] == 6
    assert groups["answer_correctness"]["n"] == 7  # six items, and a0 again on technical accuracy
    [bobs] = [
        e.item_id
        for e in store.human_events()
        if getattr(e, "dimension", None) == "technical-accuracy" and getattr(e, "score", None)
    ]
    again = scores[int(bobs[1:])]["answer_correctness"]
    assert groups["answer_correctness"]["mean_ai"] == pytest.approx((0.65 * 6 + again) / 7)
    assert groups["quote_faithfulness"]["spearman"]["coefficient"] > 0.8


def test_groups_by_category_and_prompt_hash_with_missing_values_as_none():
    ratings, items = hand_frames()
    items["category"] = ["a"] * 5 + [None] * 5
    items["prompt_hash"] = ["p1", "p2"] * 5
    report = calibration((ratings, items), CONFIG, by=("category", "prompt_hash"))
    assert [g.key for g in report.groups] == [
        {"category": "a", "prompt_hash": "p1"},
        {"category": "a", "prompt_hash": "p2"},
        {"category": None, "prompt_hash": "p1"},
        {"category": None, "prompt_hash": "p2"},
    ]
    assert [g.n for g in report.groups] == [3, 2, 2, 3]
    assert isinstance(report.groups[1].spearman.coefficient, Undefined)  # n = 2
    assert_json_safe(report)


def test_filters_by_run_and_dimension():
    ratings, items = hand_frames()
    other = make_ratings([rating("q01", "terrible", run_id="run-b")])
    both = pd.concat([ratings, other], ignore_index=True)
    assert (
        calibration((both, items), CONFIG, run="run-b").unscored == 1
    )  # run-b's item is not in items
    assert calibration((both, items), CONFIG, run=RUN).groups[0].n == 10
    assert calibration((both, items), CONFIG, dimension="quality").groups == ()


def test_frames_object_is_accepted():
    ratings, items = hand_frames()

    class Frames:  # duck-typed stand-in for analysis.load.Frames
        def __init__(self):
            self.ratings, self.items, self.notes = ratings, items, make_notes([])

    assert calibration(Frames(), CONFIG).groups[0].n == 10


def test_unknown_group_key_is_a_clear_error():
    with pytest.raises(HilbotError, match="cannot group calibration by") as caught:
        calibration(hand_frames(), CONFIG, by=("colour",))
    assert "prompt_hash" in caught.value.fix


# ---------------------------------------------------------------- edge cases: Undefined, never NaN


def test_three_items_give_undefined_correlations_but_a_defined_kappa():
    ratings, items = hand_frames()
    (group,) = calibration((ratings.head(3), items), CONFIG).groups
    assert group.spearman.coefficient == Undefined("fewer than 4 pairs (n=3)")
    assert group.spearman.ci == Undefined("fewer than 4 pairs (n=3)")
    assert group.kendall.p_value == Undefined("fewer than 4 pairs (n=3)")
    assert group.categories.kappa == pytest.approx(
        0.0
    )  # q01 q02 good/good, q03 good/okay: p_o = p_e = 2/3
    data = assert_json_safe(calibration((ratings.head(3), items), CONFIG))
    assert data["groups"][0]["spearman"]["coefficient"] == {"undefined": "fewer than 4 pairs (n=3)"}


def test_constant_scores_and_a_single_category():
    ratings = make_ratings([rating(f"q{k}", "good") for k in range(5)])
    items = make_items([{"item_id": f"q{k}", "ai_overall": 0.95} for k in range(5)])
    (group,) = calibration((ratings, items), CONFIG).groups
    assert group.spearman.coefficient == Undefined("AI score is constant (0.95 throughout)")
    assert group.categories.kappa == Undefined(
        "AI and humans put every item in one category (good)"
    )
    assert group.pass_fail.kappa == Undefined("AI and humans put every item in one category (PASS)")
    assert group.categories.observed == 1.0
    assert group.mean_delta == pytest.approx(0.05)
    assert_json_safe(calibration((ratings, items), CONFIG))


def test_no_ratings_and_unknown_dimension():
    _, items = hand_frames()
    empty = calibration((make_ratings([]), items), CONFIG)
    assert empty.groups == () and empty.unscored == 0
    ratings = make_ratings(
        [rating(f"q0{k}", "x", dimension="vibes", score=k / 4) for k in range(1, 5)]
    )
    (group,) = calibration((ratings, items), CONFIG).groups
    # the log's only judgment on vibes, x (mean .625), is the only category
    assert group.categories.confusion.labels == ("x",)
    assert group.categories.kappa == Undefined("AI and humans put every item in one category (x)")
    assert group.notes == (
        (
            "dimension 'vibes' is not configured: judgments ordered by their mean score (x "
            "(0.62)); AI and human scores go to the nearest one"
        ),
    )
    assert group.pass_fail.confusion.labels == ("FAIL", "PASS")
    assert group.pass_fail.confusion.counts == (
        (0, 0),
        (1, 3),
    )  # the AI passes all four; humans at score ≥ .5
    assert_json_safe(calibration((ratings, items), CONFIG))


# An unconfigured dimension "tone", worked by hand. Judgments and their mean scores: cold .1, aloof
# (.3, .4, .5) → .4, warm .9; categories cold < aloof < warm (neither alphabetical nor the log's
# order), midpoints .25 and .65.
#   item  ratings              human mean → category   AI score → category
#   t1    warm, warm           .9   warm               .95  warm
#   t2    aloof(.3), cold      .2   cold               .30  aloof
#   t3    aloof(.4)            .4   aloof              .65  warm (on the midpoint: the higher)
#   t4    cold, cold           .1   cold               .10  cold
#   t5    warm, aloof(.5)      .7   warm               .70  warm
TONE = [
    ("t1", "warm", 0.9),
    ("t1", "warm", 0.9),
    ("t2", "aloof", 0.3),
    ("t2", "cold", 0.1),
    ("t3", "aloof", 0.4),
    ("t4", "cold", 0.1),
    ("t4", "cold", 0.1),
    ("t5", "warm", 0.9),
    ("t5", "aloof", 0.5),
]
TONE_AI = {"t1": 0.95, "t2": 0.30, "t3": 0.65, "t4": 0.10, "t5": 0.70}


def tone_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    reviewers = iter(["terminal:alice", "terminal:bob"] * 5)
    ratings = make_ratings(
        [
            rating(item, j, dimension="tone", score=sc, reviewer=next(reviewers))
            for item, j, sc in TONE
        ]
    )
    items = make_items([{"item_id": item, "ai_overall": ai} for item, ai in TONE_AI.items()])
    return ratings, items


def test_an_unconfigured_dimension_gets_its_categories_from_the_log_worked_by_hand():
    (group,) = calibration(tone_frames(), CONFIG).groups
    assert group.key == {"dimension": "tone"} and group.n == 5
    assert group.categories.confusion.labels == ("cold", "aloof", "warm")
    # rows AI, columns humans: AI cold ← t4 (cold); AI aloof ← t2 (cold); AI warm ← t1 (warm), t3
    # (aloof), t5 (warm)
    assert group.categories.confusion.counts == ((1, 0, 0), (1, 0, 0), (0, 1, 2))
    assert group.categories.observed == pytest.approx(3 / 5)
    # κ: p_o = .6, p_e = (1·2 + 1·1 + 3·2)/25 = 9/25 → κ = (.6 − .36)/(1 − .36) = .375
    assert group.categories.kappa == pytest.approx(0.375)
    assert group.notes == (
        (
            "dimension 'tone' is not configured: judgments ordered by their mean score "
            "(cold (0.10) < aloof (0.40) < warm (0.90)); AI and human scores go to the nearest one"
        ),
    )
    # humans pass at mean ≥ .5 (t1 t5), the AI at ≥ .6 (t1 t3 t5): rows AI FAIL (t2 t4), AI PASS
    # (t3 | t1 t5)
    assert group.pass_fail.confusion.counts == ((2, 0), (1, 2))
    assert_json_safe(calibration(tone_frames(), CONFIG))


def test_groups_mixing_an_unconfigured_dimension_have_no_category_agreement():
    tone, items = tone_frames()
    overall = make_ratings([rating(item, "good") for item in TONE_AI])
    both = pd.concat([tone, overall], ignore_index=True)
    (group,) = calibration((both, items), CONFIG, by=("run_id",)).groups
    assert group.n == 10
    assert group.categories.kappa == Undefined(
        "the group mixes scales ('tone' from the log, search)"
    )
    assert [n.split(":")[0] for n in group.notes] == ["dimension 'tone' is not configured"]
    by_dimension = calibration((both, items), CONFIG).groups
    assert [g.key["dimension"] for g in by_dimension] == ["overall", "tone"]
    assert by_dimension[0].notes == () and by_dimension[0].categories.confusion.labels == (
        "terrible",
        "poor",
        "okay",
        "good",
    )


def test_a_dimension_neither_configured_nor_rated_is_a_clear_error():
    ratings, items = tone_frames()
    with pytest.raises(
        HilbotError, match="no ratings on dimension 'tonne', and hilbot.toml does not define it"
    ) as caught:
        calibration((ratings, items), CONFIG, dimension="tonne")
    assert "use one of" in caught.value.fix and "tone" in caught.value.fix
    with pytest.raises(HilbotError, match="'tone' in run 'run-b'"):  # rated, but not in that run
        calibration((ratings, items), CONFIG, run="run-b", dimension="tone")
    assert (
        calibration((ratings, items), CONFIG, dimension="completeness").groups == ()
    )  # configured, not rated
    assert len(calibration((ratings, items), CONFIG, dimension=["tone", "overall"]).groups) == 1


def test_to_jsonable_converts_undefined_numpy_and_times():
    value = {
        "a": Undefined("why"),
        "b": np.float64(0.5),
        "c": (np.int64(2), True),
        "d": T0,
        "e": float("nan"),
    }
    assert to_jsonable(value) == {
        "a": {"undefined": "why"},
        "b": 0.5,
        "c": [2, True],
        "d": "2025-03-03T09:00:00+00:00",
        "e": {"undefined": "not a finite number"},
    }


def test_confusion_matrix_counts_every_pair():
    matrix = confusion_matrix(["a", "b", "b"], ["b", "b", "a"], ("a", "b"))
    assert matrix.counts == ((0, 1), (1, 1))


# ---------------------------------------------------------------- properties

scores = st.lists(
    st.tuples(st.floats(0, 1), st.sampled_from(["good", "okay", "poor", "terrible"])),
    min_size=0,
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=scores, seed=st.integers(0, 2**16))
def test_relabelling_and_reordering_items_changes_nothing(pairs, seed):
    rng = np.random.default_rng(seed)
    ratings = make_ratings([rating(f"q{k}", j) for k, (_, j) in enumerate(pairs)])
    items = make_items([{"item_id": f"q{k}", "ai_overall": ai} for k, (ai, _) in enumerate(pairs)])
    names = {f"q{k}": f"x{v}" for k, v in enumerate(rng.permutation(len(pairs)))}
    renamed = ratings.assign(item_id=ratings["item_id"].map(names)).sample(
        frac=1, random_state=seed
    )
    renamed_items = items.assign(item_id=items["item_id"].map(names)).sample(
        frac=1, random_state=seed
    )

    def figures(report):  # item ids differ, and float sums may differ in the last bit
        data = report.to_dict()
        for group in data["groups"]:
            group.pop("disagreements")
        return rounded(data)

    assert figures(calibration((renamed, renamed_items), CONFIG)) == figures(
        calibration((ratings, items), CONFIG)
    )


@settings(max_examples=60, deadline=None)
@given(xy=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=0, max_size=30))
def test_rho_and_tau_are_in_range_and_the_ci_holds_rho(xy):
    x, y = [a for a, _ in xy], [b for _, b in xy]
    rho, tau = spearman(x, y), kendall_tau(x, y)
    for result in (rho, tau):
        assert (
            isinstance(result.coefficient, Undefined)
            or -1 - 1e-12 <= result.coefficient <= 1 + 1e-12
        )
        assert isinstance(result.p_value, Undefined) or 0 <= result.p_value <= 1
    if not isinstance(rho.ci, Undefined):
        assert -1 <= rho.ci.low <= rho.coefficient <= rho.ci.high <= 1
    assert_json_safe(rho)


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(0, 20), min_size=9, max_size=9))
def test_kappa_is_at_most_one(counts):
    matrix = ConfusionMatrix(
        ("a", "b", "c"), tuple(tuple(counts[i * 3 : i * 3 + 3]) for i in range(3))
    )
    for weights in ("none", "linear", "quadratic"):
        kappa = cohen_kappa(matrix, weights)
        assert isinstance(kappa, Undefined) or (math.isfinite(kappa) and kappa <= 1 + 1e-12)


@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_calibrations_kappa_is_the_agreement_kappa_on_the_same_table(weights):
    """Cohen's κ and its weights exist once: calibration's κ on a confusion matrix is agreement's on
    the pairs."""
    import numpy as np

    from analysis.calibration import ConfusionMatrix
    from analysis.calibration import confusion_kappa as cohen_kappa
    from analysis.stats import cohen_kappa as pairs_kappa

    rng = np.random.default_rng(7)
    labels = ("bad", "meh", "good", "great")
    for _ in range(20):
        ai = rng.integers(0, 4, 40)
        human = np.where(rng.random(40) < 0.6, ai, rng.integers(0, 4, 40))
        counts = np.zeros((4, 4), int)
        np.add.at(counts, (ai, human), 1)
        matrix = ConfusionMatrix(labels, tuple(tuple(int(c) for c in row) for row in counts))
        expected = pairs_kappa(
            [labels[i] for i in ai],
            [labels[i] for i in human],
            categories=labels,
            weights=None if weights == "none" else weights,
        )
        assert cohen_kappa(matrix, weights) == pytest.approx(expected, abs=1e-12)
