"""``hilbot sample``: stratified samples of a run, their allocation, their draw, and the sample-size
advice."""

from __future__ import annotations

import hashlib
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation import Store
from evaluation.errors import HilbotError
from evaluation.records import Evaluation, ItemData, Query, QueryEvaluation, RunHeader, RunSummary
from evaluation.runs import Run
from evaluation.samples import (
    allocate,
    default_sample_id,
    draw_order,
    draw_sample,
    interval_width,
    known_fields,
    sample_run,
    sample_size,
)


def _item(
    item_id: str, category: str | None = None, verdict: str | None = None, **features
) -> ItemData:
    return ItemData(
        id=item_id,
        query=Query(query=f"question {item_id}", category=category),
        evaluation=Evaluation(scores={"overall": 0.5}, verdict=verdict),
        features=features,
    )


def _run(
    items: list[ItemData],
    run_id: str = "base",
    kind: str = "answer",
    set_name: str = "core",
    dimensions: list[str] | None = None,
) -> Run:
    header = RunHeader(
        run_id=run_id, kind=kind, set=set_name, dimensions=dimensions or ["overall", "accuracy"]
    )  # type: ignore[arg-type]
    return Run(run_id, header, items)


def _save(store: Store, run: Run) -> None:
    store.create_run(
        run.header,
        [QueryEvaluation(run_id=run.run_id, data=i) for i in run.items],
        RunSummary(run_id=run.run_id, item_count=len(run.items)),
    )


def _three(a: int = 50, b: int = 30, c: int = 20) -> Run:
    """Strata a/b/c of the given sizes, interleaved in run order."""
    items = []
    for name, size in (("a", a), ("b", b), ("c", c)):
        items += [_item(f"{name}{k:03d}", category=name) for k in range(size)]
    items.sort(
        key=lambda i: int(i.id[1:])
    )  # interleave the strata so run order differs from stratum order
    return _run(items)


def _counts(sample) -> dict[str, int]:
    return {s.label: s.sampled for s in sample.strata}


# --------------------------------------------------------------------------- allocation


def test_proportional_counts_by_hand():
    assert allocate([50, 30, 20], 10) == [5, 3, 2]
    # n=7: quotas 3.5, 2.1, 1.4 → floors 3, 2, 1 (6); the one left goes to the largest remainder,
    # 0.5 (a)
    assert allocate([50, 30, 20], 7) == [4, 2, 1]
    # n=4: quotas 2.0, 1.2, 0.8 → floors 2, 1, 0; the one left goes to c (0.8)
    assert allocate([50, 30, 20], 4) == [2, 1, 1]
    assert _counts(draw_sample(_three(), 7, "category")) == {"a": 4, "b": 2, "c": 1}


def test_proportional_ties_go_to_the_earlier_stratum():
    assert allocate([1, 1, 1, 1], 2) == [1, 1, 0, 0]  # n < strata: some strata get none


def test_at_least_one_per_stratum_taken_from_the_largest():
    # quotas 9.6, 0.2, 0.2 → largest remainder 10, 0, 0; n=10 ≥ 3 strata, so b and c get 1 each,
    # from a
    assert allocate([96, 2, 2], 10) == [8, 1, 1]
    # quotas 1.86, 2.09, 0.05 → largest remainder 2, 2, 0; a and b tie on 2, so the larger stratum
    # (b) gives c its 1
    assert allocate([40, 45, 1], 4) == [2, 1, 1]
    # n < number of strata: no such rule
    assert allocate([96, 2, 2], 2) == [2, 0, 0]


def test_equal_allocation_caps_a_small_stratum_and_redistributes():
    assert allocate([50, 30, 20], 9, "equal") == [3, 3, 3]
    assert allocate([50, 30, 20], 10, "equal") == [
        4,
        3,
        3,
    ]  # the one left goes to the first stratum
    # c has 2: it gives both, and its surplus of 2 is shared between a and b
    assert allocate([50, 30, 2], 12, "equal") == [5, 5, 2]
    assert allocate([50, 3, 2], 12, "equal") == [7, 3, 2]
    assert _counts(draw_sample(_three(50, 30, 2), 13, "category", "equal")) == {
        "a": 6,
        "b": 5,
        "c": 2,
    }


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=60), min_size=1, max_size=8), st.data())
def test_allocation_property(sizes, data):
    total = sum(sizes)
    n = data.draw(st.integers(min_value=1, max_value=total))
    for allocation in ("proportional", "equal"):
        counts = allocate(sizes, n, allocation)
        assert sum(counts) == n
        assert all(0 <= c <= size for c, size in zip(counts, sizes))
    counts = allocate(sizes, n, "proportional")
    quotas = [n * size / total for size in sizes]
    if n >= len(sizes):
        assert all(c >= 1 for c in counts)
        # the at-least-one rule only ever lowers the largest counts, so no stratum gets more than
        # its rounded-up quota
        assert all(c <= max(1, math.ceil(q)) for c, q in zip(counts, quotas))
        if all(
            q >= 1 for q in quotas
        ):  # no stratum needed the rule: plain largest remainder, within 1 of the quota
            assert all(abs(c - q) < 1 for c, q in zip(counts, quotas))
    else:
        assert all(abs(c - q) < 1 for c, q in zip(counts, quotas))


# --------------------------------------------------------------------------- strata


def test_two_fields_combine_and_missing_values_are_their_own_stratum():
    items = [
        _item(f"i{k}", category="x" if k % 2 else "y", verdict=None if k % 3 == 0 else "PASS")
        for k in range(12)
    ]
    items[0].query.category = None
    sample = draw_sample(_run(items), 12, "category,verdict")
    assert {s.key: s.population for s in sample.strata} == {
        ("x", "PASS"): 4,
        ("x", "(none)"): 2,
        ("y", "PASS"): 4,
        ("y", "(none)"): 1,
        ("(none)", "(none)"): 1,
    }
    assert [s.key for s in sample.strata][-1] == ("(none)", "(none)")  # (none) sorts last


def test_features_and_header_fields_are_strata():
    items = [_item(f"i{k}", maturity="beta" if k < 3 else "ga", complexity=k % 2) for k in range(8)]
    items[7].features.pop("maturity")
    run = _run(items, kind="scenario", set_name="agents")
    assert known_fields(run) == ["kind", "set", "complexity", "maturity"]
    sample = draw_sample(run, 4, ["maturity", "kind"])
    assert {s.key: s.population for s in sample.strata} == {
        ("beta", "scenario"): 3,
        ("ga", "scenario"): 4,
        ("(none)", "scenario"): 1,
    }
    assert {s.key for s in draw_sample(run, 2, "complexity").strata} == {("0",), ("1",)}


# --------------------------------------------------------------------------- the draw


def test_same_seed_same_sample_and_another_seed_differs():
    run = _three()
    first = [i.id for i in draw_sample(run, 10, "category", seed=3).items]
    assert first == [i.id for i in draw_sample(run, 10, "category", seed=3).items]
    assert first != [i.id for i in draw_sample(run, 10, "category", seed=4).items]
    assert first != [i.id for i in draw_sample(run, 10, "category").items]


def test_draw_is_pinned_across_machines():
    # sha256("0:[\"a\"]") seeds the stratum's Random; this pins the documented recipe
    assert draw_order(0, ("a",), 10) == draw_order("0", ("a",), 10)
    positions = list(range(10))
    random.Random(int.from_bytes(hashlib.sha256(b'0:["a"]').digest()[:8], "big")).shuffle(positions)
    assert draw_order(0, ("a",), 10) == positions


def test_removing_another_stratum_leaves_a_stratum_draw_unchanged():
    run = _three()
    a_ids = lambda sample: [i.id for i in sample.items if i.id.startswith("a")]  # noqa: E731
    before = draw_sample(run, 9, "category", "equal", seed=11)
    without_c = _run([i for i in run.items if i.query.category != "c"])
    after = draw_sample(without_c, 6, "category", "equal", seed=11)
    assert _counts(after)["a"] == _counts(before)["a"] == 3
    assert a_ids(after) == a_ids(before)
    # and a larger allocation only adds to a stratum's draw
    assert set(a_ids(before)) <= set(
        a_ids(draw_sample(without_c, 12, "category", "equal", seed=11))
    )


def test_items_are_copies_in_run_order():
    run = _three()
    sample = draw_sample(run, 10, "category", seed=5)
    positions = [next(k for k, i in enumerate(run.items) if i.id == s.id) for s in sample.items]
    assert positions == sorted(positions)
    assert not any(s is i for s in sample.items for i in run.items)
    sample.items[0].features["touched"] = True
    assert all("touched" not in i.features for i in run.items)


# --------------------------------------------------------------------------- the new run


def test_new_run_header_and_items(store):
    run = _three()
    _save(
        store,
        _run(run.items, kind="scenario", set_name="agents", dimensions=["overall", "quality"]),
    )
    sample, new_id = sample_run(store, "base", 10, "category", seed=2)
    assert new_id == "base-sample-10"
    saved = store.load_run(new_id)
    assert saved.header.kind == "scenario" and saved.header.set == "agents"
    assert saved.header.dimensions == ["overall", "quality"]
    assert saved.header.source == "sample of base"
    assert saved.header.label == "10-item sample of base by category (proportional, seed 2)"
    record = saved.header.sample
    assert record is not None and not saved.header.model_extra  # a typed field, not an extra key
    assert (
        record["by"] == ["category"]
        and record["n"] == 10
        and record["seed"] == 2
        and record["allocation"] == "proportional"
    )
    assert record["strata"] == [
        {"stratum": ["a"], "population": 50, "sampled": 5},
        {"stratum": ["b"], "population": 30, "sampled": 3},
        {"stratum": ["c"], "population": 20, "sampled": 2},
    ]
    original = {i.id: i for i in store.load_run("base").items}
    assert [i.id for i in saved.items] == [i.id for i in sample.items]
    assert [i.id for i in saved.items] == [
        i.id for i in store.load_run("base").items if i.id in {s.id for s in saved.items}
    ]
    assert all(i == original[i.id] for i in saved.items)
    assert saved.summary is not None and saved.summary.item_count == 10
    # a second sample of the same size gets the next free id
    assert sample_run(store, "base", 10, "category")[1] == "base-sample-10-2"


def test_default_id_stays_valid():
    assert len(default_sample_id("x" * 128, 100)) <= 128


# --------------------------------------------------------------------------- the CLI


def test_cli_writes_the_sample(store, run_cli):
    _save(store, _three())
    out = run_cli(
        "sample", "base", "--n", "10", "--by", "category", "--seed", "1", "--run-id", "team-a"
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].split() == ["a", "50", "5"] and lines[3].split() == ["c", "20", "2"]
    assert "hilbot review team-a" in out.stdout
    assert "width 0.10 (±0.050) needs 80 items (385 from an unlimited pool)" in out.stdout
    # 2·1.959964·sqrt(0.25/10 · 90/99) = 0.59098, half 0.29549
    assert "this sample's 10 items give width 0.591 (±0.295)" in out.stdout
    assert len(store.load_run("team-a").items) == 10


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["base", "--n", "5", "--by", "maturity"],
            "has the field 'maturity' — use one of the fields the items have: kind, set, category, "
            "verdict, tier",
        ),
        (["base", "--n", "101", "--by", "category"], "run 'base' has 100 — use --n 100 or fewer"),
        (["base", "--n", "0", "--by", "category"], "use --n 1 or more"),
        (["nope", "--n", "5", "--by", "category"], "no run 'nope'"),
        (["base", "--n", "5", "--by", "category,category"], "listed twice"),
        (
            ["base", "--n", "5", "--by", "category", "--seed", "-1"],
            "--seed -1 is out of range — use a whole number from 0 to 4294967295",
        ),
        (
            ["base", "--n", "5", "--by", "category", "--seed", str(2**32)],
            "--seed 4294967296 is out of range",
        ),
    ],
)
def test_cli_errors_are_one_line(store, run_cli, args, expected):
    run = _three()
    run.items[0].evaluation.verdict = "PASS"
    run.items[1].features["tier"] = 1
    _save(store, run)
    out = run_cli("sample", *args)
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and expected in out.stderr, out.stderr
    assert store.run_ids() == ["base"]


def test_cli_refuses_a_taken_run_id(store, run_cli):
    _save(store, _three())
    out = run_cli("sample", "base", "--n", "5", "--by", "category", "--run-id", "base")
    assert out.returncode == 2 and "already exists" in out.stderr


def test_library_error_for_unknown_field_names_known_fields():
    with pytest.raises(
        HilbotError, match="use one of the fields the items have: kind, set, category"
    ):
        draw_sample(_three(), 5, "maturity")


# --------------------------------------------------------------------------- sample-size advice


def test_sample_size_by_hand():
    # z = 1.959964, z² = 3.841459; z²·0.25 = 0.960365
    assert sample_size(0.10) == 385  # 0.960365 / 0.05² = 384.15 → up
    assert sample_size(0.20) == 97  # 0.960365 / 0.1² = 96.04 → up
    assert sample_size(0.05) == 1537  # 0.960365 / 0.025² = 1536.58 → up
    # finite population: 384.15 / (1 + 383.15/1000) = 277.74 → 278; N = 100:
    # 384.15 / 4.8315 = 79.51 → 80
    assert sample_size(0.10, population=1000) == 278
    assert sample_size(0.10, population=100) == 80
    assert sample_size(0.10, population=18) == 18  # never more than the run
    assert sample_size(0.10, p=0.1) == 139  # 3.841459·0.09/0.0025 = 138.29 → up


def test_interval_width_by_hand():
    assert interval_width(385) == pytest.approx(2 * 1.959964 * math.sqrt(0.25 / 385), rel=1e-6)
    assert interval_width(385) == pytest.approx(0.09988, abs=1e-5)
    # n=100 of N=1000: 2·1.959964·sqrt(0.0025·900/999) = 0.18603
    assert interval_width(100, population=1000) == pytest.approx(0.18603, abs=1e-5)
    assert interval_width(50, population=50) == 0.0
    assert interval_width(1, population=1) == 0.0
    # the advice's sizes reach their widths
    for width in (0.20, 0.10, 0.05):
        assert interval_width(sample_size(width)) <= width < interval_width(sample_size(width) - 1)
