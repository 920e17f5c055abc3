"""The overview: every run's progress as the digest counts it, reviewers active, human vs AI, the
stored synthesis and the regression alerts."""

from __future__ import annotations

from bot.dashboard.data import DashboardData
from bot.dashboard.page import Link, pages
from bot.demo import PANEL_RUN, build_demo
from evaluation import Store


def _sections(store: Store, config) -> dict:
    data = DashboardData(store, config)
    return {s.heading: s for s in pages.get("overview").build(data, {})}


def test_every_run_is_listed_with_its_progress(store: Store, config) -> None:
    build_demo(store, panel=True)
    runs = _sections(store, config)["Runs"]
    assert runs.table is not None and runs.chart is not None
    listed = {row[0].text: row for row in runs.table.rows if isinstance(row[0], Link)}
    assert set(listed) == {"demo-docs-search", "demo-rag-answers", PANEL_RUN}
    panel = listed[PANEL_RUN]
    assert panel[0].path == f"run/{PANEL_RUN}"
    # 18 items, each rated by the panel's three reviewers: all rated, all complete at k = 1
    assert panel[2:9] == (18, 18, 18, 1.0, 54, 0, 3)
    assert listed["demo-docs-search"][3:5] == (0, 0) and listed["demo-docs-search"][6] == 0
    assert f"{PANEL_RUN} · overall" in runs.chart.svg


def test_rated_and_complete_differ_when_k_asks_for_more(store: Store) -> None:
    from evaluation import load_config

    build_demo(store, panel=True)
    config = load_config(None).model_copy(deep=True)
    config.review.k = 4  # the panel has three reviewers: every item rated, none complete
    row = next(r for r in _sections(store, config)["Runs"].table.rows if r[0].text == PANEL_RUN)
    assert row[3:6] == (18, 0, 0.0)


def test_the_human_and_ai_averages_are_the_digests(store: Store, config) -> None:
    from analysis.digest import build_digest

    build_demo(store, panel=True)
    [digest] = [p for p in build_digest(store, config, chart=False).runs if p.ratings]
    row = next(r for r in _sections(store, config)["Human vs AI"].table.rows)
    assert row == (digest.label, digest.human_average, digest.ai_average,
                   digest.ai_vs_human_delta)


def test_the_stored_synthesis_shows_with_its_action_items(store: Store, config, run_cli) -> None:
    build_demo(store, panel=True)
    assert "No synthesis" in _sections(store, config)["Latest synthesis"].text[0]
    assert run_cli("analyze", "synthesize", "--run", PANEL_RUN).exit_code == 0
    section = _sections(store, config)["Latest synthesis"]
    [(run, dimension, synthesis, actions, source, _)] = section.table.rows
    assert (run, dimension, source) == (PANEL_RUN, "overall", "statistical")
    assert synthesis.startswith("54 ratings of 18 items") and "• Address bad_ranking" in actions


def test_the_overview_never_appends_a_synthesis(store: Store, config) -> None:
    build_demo(store, panel=True)
    before = store.ratings.path.read_bytes()
    _sections(store, config)
    assert store.ratings.path.read_bytes() == before


def test_an_empty_data_dir_says_what_to_do(store: Store, config) -> None:
    sections = _sections(store, config)
    assert "hilbot import FILE" in sections["Runs"].text[0]
    assert sections["Reviewers active"].text == ("No ratings yet.",)
