"""The dashboard's agreement page: every coefficient of ``hilbot analyze agreement --format json``
in its forest plot's table and drawing, the pairwise κ heatmap against κ computed here from the
ratings, the items in dispute, no data, hostile reviewer names and a larger synthetic log (the
heatmap capped at the 30 most active reviewers)."""

from __future__ import annotations

import json
from itertools import combinations
from typing import Any

import pytest

from analysis.stats.bands import ALPHA_BANDS, KAPPA_BANDS
from analysis.stats.kappa import cohen_kappa
from analysis.synthetic import write_synthetic
from bot.dashboard import charts
from bot.dashboard.data import DashboardData
from bot.dashboard.page import Link, Section
from bot.dashboard.pages.agreement import HEATMAP_REVIEWERS
from bot.demo import PANEL_RUN, build_demo
from evaluation import Store
from evaluation.records import Rating, Reviewer
from tests.bot.dashboard.reading import HOSTILE, built, cell, section, texts

# ------------------------------------------------------------------------------- helpers


def page(store: Store, config: Any) -> list[Section]:
    """The agreement page of ``store``, as the registry builds it."""
    return built("agreement", store, config)


def column(table: Any, name: str) -> list[str]:
    index = list(table.columns).index(name)
    return [cell(row[index]) for row in table.rows]


def reported(run_cli: Any) -> dict[str, Any]:
    """``hilbot analyze agreement --format json`` on the test's data dir, run as a user runs it."""
    result = run_cli("analyze", "agreement", "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def panel(store: Store) -> Store:
    """The demo data dir with its panel: 18 items rated by three reviewers on ``overall``."""
    build_demo(store, panel=True)
    return store


# ------------------------------------------------------------------------------- coefficients


def test_every_coefficient_of_the_report_is_in_a_forest_plot_and_its_table(panel, config, run_cli):
    document = reported(run_cli)
    sections = page(panel, config)
    weights = document["weights"]
    for name, dimension in document["dimensions"].items():
        kappa = section(sections, f"κ-type coefficients: {name}")
        alpha = section(sections, f"Krippendorff's α: {name}")
        expected = {
            f"{w}.{key}": e
            for w in ("identity", weights)
            for key, e in dimension["coefficients"][w].items()
            if key != "krippendorff_alpha"
        }
        expected_alpha = {f"alpha.{level}": e for level, e in dimension["alpha"].items()}
        for found, wanted in ((kappa, expected), (alpha, expected_alpha)):
            assert column(found.table, "coefficient") == list(wanted)
            assert column(found.table, "value") == [f"{e['value']:.3f}" for e in wanted.values()]
            assert column(found.table, "95% CI") == [
                f"[{e['bootstrap_ci'][0]:.3f}, {e['bootstrap_ci'][1]:.3f}]" for e in wanted.values()
            ]
            assert column(found.table, "band") == [e["band"] for e in wanted.values()]
            assert column(found.table, "n") == [str(e["n_items"]) for e in wanted.values()]
            drawn = texts(found.chart.svg)
            assert all(path in drawn for path in wanted), (drawn, list(wanted))
    # the κ-type thresholds on the κ chart, α's on the α chart
    assert {n for _, n in KAPPA_BANDS} <= set(texts(kappa.chart.svg))
    assert {n for _, n in ALPHA_BANDS} <= set(texts(alpha.chart.svg))
    assert dict(zip(column(alpha.table, "coefficient"), column(alpha.table, "interval"))) == {
        path: "bootstrap" for path in expected_alpha
    }


def test_the_overview_gives_the_coefficient_the_scale_calls_for(panel, config, run_cli):
    alpha = reported(run_cli)["dimensions"]["overall"]["alpha"]["ordinal"]  # four options
    overview = page(panel, config)[0]
    assert overview.anchor == "agreement"
    row = overview.table.rows[0]
    assert row[:3] == ["overall", "alpha.ordinal", alpha["value"]]
    assert row[5] == alpha["band"]


# ------------------------------------------------------------------------------- pairs


def independent_kappas(store: Store, config: Any, dimension: str) -> dict[tuple[str, str], float]:
    """Cohen's κ (unweighted) of every reviewer pair, from the ratings frame: each reviewer's
    latest judgment per item, paired over the items both rated."""
    ratings = DashboardData(store, config).frames.ratings
    ratings = ratings[ratings["dimension"] == dimension]
    latest = ratings.drop_duplicates(["run_id", "item_id", "reviewer"], keep="last")
    table = latest.pivot(index=["run_id", "item_id"], columns="reviewer", values="judgment")
    categories = sorted(set(latest["judgment"]))
    found = {}
    for a, b in combinations(sorted(table.columns), 2):
        both = table[[a, b]].dropna()
        if len(both) >= 5:
            found[(a, b)] = cohen_kappa(list(both[a]), list(both[b]), categories=categories)
    return found


def test_the_heatmap_cells_are_the_pairwise_kappas(panel, config):
    pairs = section(page(panel, config), "Reviewer pairs: overall")
    expected = independent_kappas(panel, config, "overall")
    assert len(expected) == 3
    rows = {(row[0], row[1]): row for row in pairs.table.rows}
    assert set(rows) == set(expected)
    for pair, kappa in expected.items():
        assert rows[pair][3] == pytest.approx(kappa, abs=1e-12)
        assert rows[pair][2] == 18  # shared items
    drawn = texts(pairs.chart.svg)
    for kappa in expected.values():  # each pair's cell, written twice (the grid is symmetric)
        assert drawn.count(f"{kappa:.2f}") >= 2
    assert {"demo:ana", "demo:ben", "demo:caro"} <= set(drawn)
    assert "All 3 reviewers" in pairs.text[0]


def test_the_items_in_dispute_are_the_reports(panel, config, run_cli):
    disputed = reported(run_cli)["dimensions"]["overall"]["disagreements"]
    found = section(page(panel, config), "Items in dispute: overall")
    assert [(row[0].text, row[1], row[2]) for row in found.table.rows] == [
        (d["run_id"], d["item_id"], d["spread"]) for d in disputed
    ]
    assert found.table.rows[0][0] == Link(PANEL_RUN, f"run/{PANEL_RUN}")
    assert found.commands == [f"hilbot adjudicate {PANEL_RUN} --dimension overall"]


# ------------------------------------------------------------------------------- edge cases


def test_an_empty_data_dir_says_why_there_is_nothing(store, config):
    sections = page(store, config)
    assert len(sections) == 1
    assert sections[0].chart is None
    assert sections[0].text[0].startswith("Nothing to show yet: ")


def test_one_reviewer_has_no_coefficient_and_no_pair(store, config):
    build_demo(store, panel=True)
    for n in range(6):  # a second dimension, rated by ana alone
        store.ratings.append(
            Rating(
                run_id=PANEL_RUN,
                item_id=f"q0{n + 1}",
                dimension="solo",
                reviewer=Reviewer(platform="demo", id="ana"),
                idempotency_key=f"solo{n}",
                judgment="good" if n % 2 else "poor",
                score=1.0 if n % 2 else 0.4,
            )
        )
    sections = page(store, config)
    assert section(sections, "κ-type coefficients: solo").chart is None
    assert "one rater" in section(sections, "Krippendorff's α: solo").text[0]
    assert section(sections, "Reviewer pairs: solo").chart is None
    assert section(sections, "κ-type coefficients: overall").chart is not None


def test_a_hostile_reviewer_name_is_escaped_in_the_chart_and_plain_in_the_table(panel, config):
    ana = DashboardData(panel, config).frames.ratings
    ana = ana[ana["reviewer"] == "demo:ana"]
    for row in ana.itertuples():  # the hostile reviewer agrees with ana on every item
        panel.ratings.append(
            Rating(
                run_id=row.run_id,
                item_id=row.item_id,
                dimension=row.dimension,
                reviewer=Reviewer(id=HOSTILE),
                idempotency_key=f"evil-{row.item_id}",
                judgment=row.judgment,
                score=row.score,
            )
        )
    pairs = section(page(panel, config), "Reviewer pairs: overall")
    who = f"terminal:{HOSTILE}"
    assert "<script" not in pairs.chart.svg
    assert "&lt;script&gt;alert(1)" in pairs.chart.svg
    assert charts.label(who) in texts(pairs.chart.svg)  # cut to the axis' width
    row = next(row for row in pairs.table.rows if who in row[:2])
    assert {row[0], row[1]} == {who, "demo:ana"} and row[3] == pytest.approx(1.0)


# ------------------------------------------------------------------------------- a larger log


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """2,000 synthetic log lines: 40 reviewers over 3 runs of 20 items (3 dimensions)."""
    from evaluation import load_config

    store = Store(tmp_path_factory.mktemp("synthetic") / "results")
    write_synthetic(
        store, ratings=2000, runs=3, items_per_run=20, reviewers=40, config=load_config(None)
    )
    return store


def test_a_larger_log_caps_the_heatmap_at_the_most_active_reviewers(synthetic, config):
    sections = page(synthetic, config)
    ratings = DashboardData(synthetic, config).frames.ratings
    dimensions = sorted(set(ratings["dimension"]))
    assert len(dimensions) == 3 and section(sections, "Across dimensions (pooled)").chart
    for dimension in dimensions:
        pairs = section(sections, f"Reviewer pairs: {dimension}")
        counts = ratings.loc[ratings["dimension"] == dimension, "reviewer"].value_counts()
        assert len(counts) == 40
        ranked = sorted(counts.index, key=lambda who: (-counts[who], who))
        shown, left = set(ranked[:HEATMAP_REVIEWERS]), set(ranked[HEATMAP_REVIEWERS:])
        drawn = set(texts(pairs.chart.svg))
        assert shown <= drawn and not left & drawn
        assert {who for row in pairs.table.rows for who in row[:2]} <= shown
        assert "30 most active of the 40 reviewers" in pairs.text[0]
        expected = {
            frozenset(pair): kappa
            for pair, kappa in independent_kappas(synthetic, config, dimension).items()
            if set(pair) <= shown
        }
        in_table = {frozenset(row[:2]): row[3] for row in pairs.table.rows}
        assert in_table and set(in_table) == set(expected)
        for pair, kappa in expected.items():
            if isinstance(kappa, float):
                assert in_table[pair] == pytest.approx(kappa, abs=1e-12)
            else:  # undefined, and why
                assert in_table[pair] == str(kappa)
        assert section(sections, f"κ-type coefficients: {dimension}").chart is not None
