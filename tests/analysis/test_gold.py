"""`analysis.gold`: the gold-label frame, vectorised over the items, equals
:func:`evaluation.gold.gold_label` applied item by item (the rules live there), and it is fast on
the scale of a million-line log's items."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.gold import GoldCounts, gold_frames, gold_ratings
from analysis.load import Frames
from analysis.vocabulary import KEY3
from evaluation import Adjudication, Reviewer, load_config
from evaluation.gold import DERIVED, gold_label
from tests.analysis.test_calibration import make_concerns, make_notes, make_ratings

CONFIG = load_config(None)
LEAD = Reviewer(platform="terminal", id="lead", name="Lead")
DIMENSIONS = ("overall", "trigger-accuracy", "from-the-log")
"""A scale of four options, one of two, and a dimension the configuration lacks."""
JUDGMENTS = ("good", "okay", "poor", "yes", "no", "odd")
SCORES = (0.0, -0.0, 0.4, 0.7, 1.0, 0.7, float("nan"))
"""-0.0 equals 0.0 (the label first in the log counts), NaN orders nothing: the rule decides."""


def per_item(
    ratings: pd.DataFrame, adjudications: list[Any], config: Any
) -> tuple[pd.DataFrame, GoldCounts]:
    """The gold-label frame item by item: every item's labels through ``gold_label`` (the frame the
    analyses had before the rule was vectorised)."""
    latest = {(a.run_id, a.item_id, a.dimension): a for a in adjudications}
    frame = ratings.sort_values("line", kind="stable")
    rows: list[dict[str, Any]] = []
    sources: dict[str, int] = {}
    multi = False
    for key, group in frame.groupby(KEY3, sort=False, observed=True):
        decided = latest.pop(key, None)
        labels = list(zip(group["judgment"].astype(str), group["score"].astype(float)))
        dim = config.dimensions.get(key[2])
        gold = gold_label(labels, config.scales.get(dim.scale) if dim else None, decided)
        sources[gold.source] = sources.get(gold.source, 0) + 1
        multi = multi or len(labels) > 1
        if not gold.usable:
            continue
        row = group.iloc[-1].to_dict()
        if len(labels) > 1 or decided is not None:
            notes = [str(n) for n in group["note"].dropna() if str(n)]
            row.update(
                judgment=gold.judgment,
                score=gold.score,
                reviewer="gold",
                channel="gold",
                note="; ".join(dict.fromkeys(notes)) or None,
            )
        rows.append({**row, "gold_source": gold.source, "n_labels": gold.n_labels})
    columns = [*ratings.columns, "gold_source", "n_labels"]
    out = (
        pd.DataFrame(rows, columns=columns)
        if rows
        else ratings.iloc[0:0].assign(
            gold_source=pd.Series(dtype=str), n_labels=pd.Series(dtype="int64")
        )
    )
    out = out.astype(
        {c: ratings[c].dtype for c in ratings.columns if c in out.columns and len(out)},
        errors="ignore",
    )
    counts = GoldCounts(
        sum(sources.values()),
        sources.get("consensus", 0),
        sources.get("excluded", 0),
        sum(sources.get(s, 0) for s in DERIVED),
        sources.get("unresolved", 0),
        multi,
    )
    return out.reset_index(drop=True), counts


def per_item_frames(frames: Frames, adjudications: list[Any], config: Any) -> tuple[Frames, Any]:
    """``gold_frames`` on :func:`per_item`'s frame: the concerns and notes of the items kept, an
    item with a gold row given every reviewer's tags once."""
    ratings, counts = per_item(frames.ratings, adjudications, config)
    kept = ratings[KEY3].drop_duplicates()

    def only_kept(table: pd.DataFrame) -> pd.DataFrame:
        if table.empty:
            return table
        return table.merge(kept, on=KEY3, how="inner")[table.columns]

    concerns = only_kept(frames.concerns)
    if not concerns.empty:
        gold = pd.MultiIndex.from_frame(ratings.loc[ratings["reviewer"] == "gold", KEY3])
        mine = pd.MultiIndex.from_frame(concerns[KEY3]).isin(gold)
        merged = concerns[mine].assign(reviewer="gold").drop_duplicates([*KEY3, "tag"])
        concerns = pd.concat([concerns[~mine], merged], ignore_index=True).astype(
            concerns.dtypes.to_dict()
        )
    if len(ratings) and len(concerns):
        tags = concerns.groupby(KEY3, observed=True)["tag"].nunique()
        gold = ratings["reviewer"] == "gold"
        index = pd.MultiIndex.from_frame(ratings.loc[gold, KEY3])
        ratings.loc[gold, "n_concerns"] = tags.reindex(index).fillna(0).astype("int64").to_numpy()
    notes = only_kept(frames.notes)
    return replace(frames, ratings=ratings, concerns=concerns, notes=notes), counts


def assert_frames_equal(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    for column in got.columns:  # None stays None, a str a str: what the reports print
        assert list(map(type, got[column])) == list(map(type, expected[column])), column
        if got[column].dtype == "float64":  # -0.0 prints as -0.0
            assert (np.signbit(got[column]) == np.signbit(expected[column])).all(), column


def assert_same(
    ratings: pd.DataFrame,
    adjudications: list[Any],
    concerns: pd.DataFrame | None = None,
    notes: pd.DataFrame | None = None,
) -> None:
    expected, expected_counts = per_item(ratings, adjudications, CONFIG)
    got, counts = gold_ratings(ratings, adjudications, CONFIG)
    assert counts == expected_counts
    assert_frames_equal(got, expected)
    frames = Frames(
        ratings,
        pd.DataFrame(),
        make_concerns([]) if concerns is None else concerns,
        make_notes([]) if notes is None else notes,
        pd.DataFrame(),
        pd.DataFrame(),
    )
    want, want_counts = per_item_frames(frames, adjudications, CONFIG)
    have, have_counts = gold_frames(frames, adjudications, CONFIG)
    assert have_counts == want_counts
    for name in ("ratings", "concerns", "notes"):
        assert_frames_equal(getattr(have, name), getattr(want, name))


_rows = st.lists(
    st.fixed_dictionaries(
        {
            "run_id": st.sampled_from(("r1", "r2")),
            "item_id": st.sampled_from(("a", "b", "c", "d")),
            "dimension": st.sampled_from(DIMENSIONS),
            "reviewer": st.sampled_from(("t:1", "t:2", "t:3", "s:1", "s:2")),
            "judgment": st.sampled_from(JUDGMENTS),
            "score": st.sampled_from(SCORES),
            "note": st.sampled_from((None, "", "slow", "wrong", "slow")),
            "n_concerns": st.integers(0, 2),
            "source_type": st.sampled_from((None, "docs")),
        }
    ),
    max_size=40,
)


_tags = st.sampled_from(("stale", "vague", "wrong"))


@st.composite
def _adjudications(draw: Any, rows: list[dict]) -> list[Adjudication]:
    keys = sorted({(r["run_id"], r["item_id"], r["dimension"]) for r in rows}) + [("r9", "z", "x")]
    chosen = draw(st.lists(st.sampled_from(keys), max_size=5))
    made = []
    for n, (run, item, dimension) in enumerate(chosen):
        exclude = draw(st.booleans())
        made.append(
            Adjudication(
                run_id=run,
                item_id=item,
                dimension=dimension,
                reviewer=LEAD,
                idempotency_key=f"k{n}",
                decision="exclude" if exclude else "consensus",
                judgment=None if exclude else draw(st.sampled_from(JUDGMENTS)),
                score=None if exclude else draw(st.sampled_from((0.0, 0.4, 1.0))),
                reason="broken item" if exclude else None,
            )
        )
    return made


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_vectorised_gold_frame_equals_the_rule_item_by_item(data):
    """Any mix of single labels, majorities, medians (ties included), two-option ties, adjudicated
    and excluded items, NaN scores, empty and repeated notes, in any log order: the same rows,
    values, dtypes and counts as ``gold_label`` item by item."""
    rows = data.draw(_rows)
    ratings = make_ratings(rows)
    ratings["line"] = data.draw(st.permutations(range(1, len(rows) + 1))) if rows else []
    ratings["line"] = ratings["line"].astype("int64")
    keys = [{k: r[k] for k in (*KEY3, "reviewer")} for r in rows]
    keys.append({"run_id": "r9", "item_id": "z", "dimension": "overall", "reviewer": "t:1"})
    concerns = data.draw(st.lists(st.tuples(st.sampled_from(keys), _tags), max_size=30))
    notes = data.draw(st.lists(st.tuples(st.sampled_from(keys), _tags), max_size=10))
    assert_same(
        ratings,
        data.draw(_adjudications(rows)),
        make_concerns([{**key, "tag": tag} for key, tag in concerns]),
        make_notes([{**key, "text": text} for key, text in notes]),
    )


def test_ties_and_adjudications_by_hand():
    """The cases the rules name, each once: a single label, a majority, the lower median of an even
    count, a two-option tie (unresolved), a consensus and an exclusion."""
    rows = [
        {"item_id": "single", "judgment": "good", "score": 0.7},
        *({"item_id": "major", "judgment": j, "score": s} for j, s in [("good", 0.7)] * 2),
        {"item_id": "major", "judgment": "poor", "score": 0.4},
        *(
            {"item_id": "median", "judgment": j, "score": s}
            for j, s in [("excellent", 1.0), ("good", 0.7), ("poor", 0.4), ("bad", 0.0)]
        ),
        *(
            {"item_id": "tie", "dimension": "trigger-accuracy", "judgment": j, "score": s}
            for j, s in [("yes", 1.0), ("no", 0.0)]
        ),
        *({"item_id": "decided", "judgment": j, "score": s} for j, s in [("good", 0.7)] * 2),
        {"item_id": "gone", "judgment": "good", "score": 0.7},
    ]
    ratings = make_ratings(
        [{**r, "reviewer": f"t:{n}", "note": f"n{n % 2}"} for n, r in enumerate(rows)]
    )
    decided = [
        Adjudication(
            run_id="run-a",
            item_id=item,
            reviewer=LEAD,
            idempotency_key=item,
            decision=decision,
            judgment="poor" if decision == "consensus" else None,
            score=0.4 if decision == "consensus" else None,
            reason="broken" if decision == "exclude" else None,
        )
        for item, decision in [("decided", "consensus"), ("gone", "exclude")]
    ]
    assert_same(ratings, decided)
    got, counts = gold_ratings(ratings, decided, CONFIG)
    table = got.set_index("item_id")[["judgment", "score", "gold_source", "n_labels", "note"]]
    assert table.loc["major"].tolist() == ["good", 0.7, "majority", 3, "n1; n0"]
    assert table.loc["median"].tolist()[:3] == ["poor", 0.4, "median"]
    assert table.loc["decided"].tolist()[:3] == ["poor", 0.4, "consensus"]
    assert "tie" not in table.index and "gone" not in table.index
    assert (counts.adjudicated, counts.excluded, counts.unresolved, counts.derived) == (1, 1, 1, 3)


def test_no_ratings_give_an_empty_frame_with_the_gold_columns():
    assert_same(make_ratings([]), [])


def test_the_gold_labels_of_twenty_thousand_items_are_fast():
    """20,000 items of three to five labels each (a million-line log has about 17,000): well under
    a second here, where the rule item by item took about 7 s (generous bound)."""
    rng = np.random.default_rng(5)
    items = np.repeat(np.arange(20_000), rng.integers(3, 6, 20_000))
    options = CONFIG.scale_for("overall").options
    pick = rng.integers(0, len(options), len(items))
    ratings = make_ratings(
        [
            {
                "item_id": f"q{item}",
                "judgment": options[p].value,
                "score": options[p].score,
                "reviewer": f"t:{n % 7}",
            }
            for n, (item, p) in enumerate(zip(items.tolist(), pick.tolist()))
        ]
    )
    started = time.perf_counter()
    got, counts = gold_ratings(ratings, [], CONFIG)
    assert time.perf_counter() - started < 2.0
    assert counts.items == 20_000 and len(got) == 20_000


def test_adjudications_are_read_again_once_the_log_changes(store):
    """An unchanged log is read for its adjudications once (the digest asks for them twice): its
    bad lines are reported on every call all the same, and an adjudication appended is seen."""
    from analysis.gold import read_adjudications

    def adjudicate(item: str) -> None:
        store.ratings.append(
            Adjudication(
                run_id="r",
                item_id=item,
                reviewer=LEAD,
                idempotency_key=item,
                decision="exclude",
                reason="broken",
            )
        )

    adjudicate("a")
    with open(store.ratings.path, "ab") as log:
        log.write(b'{"type": "adjudication", "run_id": \n')
    for _ in range(2):
        issues: list = []
        assert [a.item_id for a in read_adjudications(store.ratings.path, issues)] == ["a"]
        assert [issue.line for issue in issues] == [2]
    adjudicate("b")
    assert [a.item_id for a in read_adjudications(store.ratings.path)] == ["a", "b"]
