"""The dashboard's calibration page: the confusion heatmap and the scatter of each dimension hold
the items ``hilbot analyze calibration --format json`` counts (the scatter's points give the
report's ρ), the rank correlations by dimension, metric and prompt hash are the report's, no data
says why, a hostile judgment is escaped, and a larger synthetic log builds."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from typing import Any

import pytest
from scipy.stats import spearmanr

from analysis.synthetic import write_synthetic
from bot.dashboard.data import DashboardData, Report
from bot.dashboard.page import Link, Section, pages
from bot.demo import PANEL_RUN, build_demo
from evaluation import Store
from evaluation.records import Rating, Reviewer
from tests.bot.dashboard.reading import HOSTILE, SVG, built, cell, section, texts

# ------------------------------------------------------------------------------- helpers


def page(store: Store, config: Any) -> list[Section]:
    """The calibration page of ``store``, as the registry builds it."""
    return built("calibration", store, config)


def dots(svg: str) -> int:
    """The dots of a scatter: the markers of its one point collection."""
    root = ElementTree.fromstring(svg)
    (collection,) = [g for g in root.iter(f"{SVG}g") if g.get("id") == "PathCollection_1"]
    return len(list(collection.iter(f"{SVG}use")))


def reported(run_cli: Any, *by: str) -> dict[str, Any]:
    """``hilbot analyze calibration [--by BY] --format json``, run as a user runs it."""
    result = run_cli("analyze", "calibration", *by, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def correlations(groups: list[dict[str, Any]]) -> list[list[str]]:
    """A report's ρ and τ per group as the page's correlation table writes them."""
    rows = []
    for group in groups:
        name = ", ".join("none" if v is None else str(v) for v in group["key"].values())
        rho, tau = group["spearman"], group["kendall"]
        ci = f"[{rho['ci']['low']:.3f}, {rho['ci']['high']:.3f}]"
        rows.append(
            [name, "ρ", f"{rho['coefficient']:.3f}", ci, cell(rho["p_value"]), str(rho["n"])]
        )
        rows.append(
            [name, "τ", f"{tau['coefficient']:.3f}", "–", cell(tau["p_value"]), str(tau["n"])]
        )
    return rows


@pytest.fixture
def panel(store: Store) -> Store:
    """The demo data dir with its panel: 18 items the AI scored, rated by three reviewers."""
    build_demo(store, panel=True)
    return store


# ------------------------------------------------------------------------------- per dimension


def test_the_scatter_has_one_dot_per_item_the_report_counts(panel, config, run_cli):
    document = reported(run_cli)
    sections = page(panel, config)
    assert document["groups"]
    for group in document["groups"]:
        name = group["key"]["dimension"]
        scatter = section(sections, f"AI vs human scores: {name}")
        assert len(scatter.table.rows) == group["n"] == dots(scatter.chart.svg)
        # the points are the report's pairs: their ρ and mean gap are the report's
        ai = [row[2] for row in scatter.table.rows]
        human = [row[3] for row in scatter.table.rows]
        assert spearmanr(ai, human).statistic == pytest.approx(group["spearman"]["coefficient"])
        gaps = [row[4] for row in scatter.table.rows]
        assert sum(gaps) / len(gaps) == pytest.approx(group["mean_delta"])
        assert gaps == sorted(gaps, key=lambda gap: round(abs(gap), 9), reverse=True)
        worst = group["disagreements"][0]
        assert scatter.table.rows[0][:2] == [
            Link(worst["run_id"], f"run/{worst['run_id']}"),
            worst["item_id"],
        ]


def test_the_human_score_is_the_gold_label_not_the_mean(panel, config):
    # q18: ana good (1.0), ben okay (0.7), caro terrible (0.1): the median is okay, the mean 0.6
    scatter = section(page(panel, config), "AI vs human scores: overall")
    (q18,) = [row for row in scatter.table.rows if row[1] == "q18"]
    assert q18[3] == pytest.approx(0.7) and q18[6] == "okay"


def test_the_confusion_heatmap_is_the_reports_matrix(panel, config, run_cli):
    group = reported(run_cli)["groups"][0]
    matrix = group["categories"]["confusion"]
    confusion = section(page(panel, config), "Confusion: overall")
    assert list(confusion.table.columns) == ["AI \\ human", *matrix["labels"]]
    assert [list(row) for row in confusion.table.rows] == [
        [label, *counts] for label, counts in zip(matrix["labels"], matrix["counts"])
    ]
    drawn = texts(confusion.chart.svg)
    assert set(matrix["labels"]) <= set(drawn)
    cells = [text for text in texts(confusion.chart.svg, "font-size: 7px") if text.isdigit()]
    assert sorted(map(int, cells)) == sorted(n for row in matrix["counts"] for n in row)
    assert f"{group['categories']['kappa']:.3f}" in confusion.text[0]


def test_the_rank_correlations_are_the_reports_by_dimension_metric_and_prompt(
    panel, config, run_cli
):
    sections = page(panel, config)
    for heading, by in (
        ("Rank correlation by dimension", "dimension"),
        ("Rank correlation by AI metric", "metric"),
        ("Rank correlation by judge prompt", "prompt_hash"),
    ):
        found = section(sections, heading)
        expected = correlations(reported(run_cli, "--by", by)["groups"])
        assert [[cell(c) for c in row] for row in found.table.rows] == expected
        assert found.table.columns[0] == by
        labels = [f"{row[1]} {row[0]}" for row in expected]
        assert set(labels) <= set(texts(found.chart.svg))
    # the demo's runs record no judge prompt: one group, named none
    assert section(sections, "Rank correlation by judge prompt").table.rows[0][0] == "none"


def test_the_overview_holds_the_reports_agreement_and_means(panel, config, run_cli):
    document = reported(run_cli)
    overview = page(panel, config)[0]
    assert overview.anchor == "calibration"
    (group,) = document["groups"]
    assert [cell(c) for c in overview.table.rows[0]] == [
        "overall",
        str(group["n"]),
        *(f"{group['categories'][k]:.3f}" for k in ("kappa", "weighted_kappa", "observed")),
        f"{group['pass_fail']['kappa']:.3f}",
        *(f"{group[k]:.3f}" for k in ("mean_ai", "mean_human", "mean_delta")),
    ]
    assert "18 items, 0 adjudicated, 18 derived by rule" in overview.text[0]


# ------------------------------------------------------------------------------- edge cases


def test_an_empty_data_dir_says_why_there_is_nothing(store, config):
    sections = page(store, config)
    assert len(sections) == 1 and sections[0].chart is None
    assert sections[0].text[0].startswith("Nothing to show yet: no item has a human and an AI")


def test_a_report_error_is_a_section_not_an_exception(panel, config, monkeypatch):
    monkeypatch.setattr(
        DashboardData, "report", lambda self, name, **options: Report(name, error="it broke")
    )
    sections = page(panel, config)
    assert [s.text for s in sections] == [("Nothing to show yet: it broke",)]


def test_a_hostile_judgment_is_escaped_in_the_heatmap(panel, config):
    # a dimension the configuration lacks: its categories are the judgments in the log
    for n in range(1, 9):
        panel.ratings.append(
            Rating(
                run_id=PANEL_RUN,
                item_id=f"q{n:02d}",
                dimension="evil",
                reviewer=Reviewer(id="ann"),
                idempotency_key=f"evil{n}",
                judgment=HOSTILE if n % 2 else "fine",
                score=0.1 if n % 2 else 1.0,
            )
        )
    confusion = section(page(panel, config), "Confusion: evil")
    assert "<script" not in confusion.chart.svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in confusion.chart.svg
    assert confusion.table.columns[1] == HOSTILE == confusion.table.rows[0][0]  # plain text


# ------------------------------------------------------------------------------- a larger log


def test_a_larger_log_builds_with_every_prompt_hash(tmp_path, config):
    store = Store(tmp_path / "synthetic")
    write_synthetic(store, ratings=2000, runs=3, items_per_run=20, reviewers=40, config=config)
    data = DashboardData(store, config)
    sections = pages.get("calibration").build(data, {})
    by_dimension = data.report("calibration").document
    assert by_dimension is not None and len(by_dimension["groups"]) == 3
    for group in by_dimension["groups"]:
        scatter = section(sections, f"AI vs human scores: {group['key']['dimension']}")
        assert len(scatter.table.rows) == group["n"] == dots(scatter.chart.svg)
    by_prompt = data.report("calibration", by="prompt_hash").document
    assert by_prompt is not None
    hashes = [group["key"]["prompt_hash"] for group in by_prompt["groups"]]
    assert len(hashes) == 3 and None in hashes  # two judge prompts, and the search run's none
    found = section(sections, "Rank correlation by judge prompt")
    assert [row[0] for row in found.table.rows] == [
        "none" if h is None else h for h in hashes for _ in "ρτ"
    ]
    assert [cell(row[2]) for row in found.table.rows] == [
        f"{group[k]['coefficient']:.3f}"
        for group in by_prompt["groups"]
        for k in ("spearman", "kendall")
    ]


def test_a_long_runs_scatter_lists_its_largest_gaps_and_draws_its_dots_as_one_image(
    tmp_path, config
):
    from bot.dashboard.charts import RASTER_POINTS
    from bot.dashboard.pages.calibration import POINT_ROWS

    store = Store(tmp_path / "synthetic")
    write_synthetic(store, ratings=9000, runs=1, items_per_run=3000, reviewers=3, config=config)
    data = DashboardData(store, config)
    group = max(data.report("calibration").document["groups"], key=lambda g: g["n"])
    assert group["n"] > max(POINT_ROWS, RASTER_POINTS)
    scatter = section(pages.get("calibration").build(data, {}),
                      f"AI vs human scores: {group['key']['dimension']}")
    gaps = [round(abs(row[4]), 9) for row in scatter.table.rows]
    assert len(gaps) == POINT_ROWS and gaps == sorted(gaps, reverse=True)
    assert f"the {POINT_ROWS} largest of {group['n']}" in scatter.text[0]
    assert "<image" in scatter.chart.svg and len(scatter.chart.svg) < 300_000
