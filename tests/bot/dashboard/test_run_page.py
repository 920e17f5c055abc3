"""A run's page: its items sorted and filtered, each card as the reviewer saw it (never the AI's
verdict), its ratings and its adjudication."""

from __future__ import annotations

import pytest

from bot.dashboard.data import DashboardData
from bot.dashboard.page import pages
from bot.demo import PANEL_RUN, build_demo
from evaluation import Store
from evaluation.records import AdjudicatedLabel, Adjudication, Reviewer


@pytest.fixture
def panel(store: Store) -> Store:
    build_demo(store, panel=True)
    return store


def _page(store: Store, config, **query: str) -> dict:
    data = DashboardData(store, config)
    return {s.id or s.heading: s for s in pages.get("run").build(data, {"run": PANEL_RUN, **query})}


def _column(section, name: str) -> list:
    index = list(section.table.columns).index(name)
    return [row[index] for row in section.table.rows]


def test_items_sort_by_each_order(panel: Store, config) -> None:
    items = _page(panel, config)["items"]
    assert _column(items, "item") == sorted(_column(items, "item"))
    for sort, column, highest_first in (("ai", "AI score", True), ("human", "human score", True),
                                        ("disagreement", "disagreement", True),
                                        ("confidence", "confidence", False)):
        values = [v for v in _column(_page(panel, config, sort=sort)["items"], column)
                  if v == v and v is not None]
        assert values == sorted(values, reverse=highest_first), sort
        assert len(values) >= 10


def test_disagreement_is_the_spread_of_the_human_scores(panel: Store, config) -> None:
    ratings = DashboardData(panel, config).frames.ratings
    spread = ratings[ratings.run_id == PANEL_RUN].groupby("item_id")["score"].agg(
        lambda s: s.max() - s.min())
    items = _page(panel, config, sort="disagreement")["items"]
    for item, value in zip(_column(items, "item"), _column(items, "disagreement")):
        assert value == pytest.approx(spread[item])


def test_filters_by_category_and_concern(panel: Store, config) -> None:
    everything = _page(panel, config)["items"]
    category = _column(everything, "category")[0]
    chosen = _page(panel, config, category=category)["items"]
    assert set(_column(chosen, "category")) == {category}
    assert len(chosen.table.rows) == _column(everything, "category").count(category)
    tagged = _page(panel, config, concern="bad_ranking")["items"]
    assert tagged.table.rows and all("bad_ranking" in c for c in _column(tagged, "concerns"))
    assert any(link.path.endswith("concern=bad_ranking") for link in everything.links)


def test_a_card_is_what_the_reviewer_saw_and_never_the_verdict(panel: Store, config) -> None:
    cards = _page(panel, config)["cards"]
    item, card, ratings, state = cards.table.rows[0]
    run = panel.load_run(PANEL_RUN)
    assert card.startswith(f'QUERY: "{run.item(item).query.query}"')
    assert "PASS" not in card and "FAIL" not in card and "verdict" not in card.lower()
    assert ratings.count("\n") == 2 and "demo:ana: " in ratings and state == "not adjudicated"


def test_the_adjudication_state_follows_the_log(panel: Store, config) -> None:
    lead = Reviewer(platform="demo", id="lead")
    panel.ratings.append(Adjudication(
        run_id=PANEL_RUN, item_id="q03", dimension="overall", reviewer=lead,
        idempotency_key="adj-q03", decision="consensus", judgment="okay", score=0.7,
        labels=[AdjudicatedLabel(reviewer="demo:ana", judgment="okay", score=0.7)]))
    items = _page(panel, config)["items"]
    state = dict(zip(_column(items, "item"), _column(items, "adjudication")))
    assert state["q03"] == "consensus: okay" and state["q01"] == ""


def test_an_unknown_run_lists_the_runs(panel: Store, config) -> None:
    data = DashboardData(panel, config)
    [section] = pages.get("run").build(data, {"run": "nope"})
    assert section.heading == "Run not found"
    assert {link.text for link in section.links} >= {PANEL_RUN}


def test_rows_and_cards_can_be_fewer_never_more(panel: Store, config) -> None:
    fewer = _page(panel, config, rows="5", cards="2")
    assert len(fewer["items"].table.rows) == 5 and len(fewer["cards"].table.rows) == 2
    assert fewer["items"].text[0].startswith("18 of 18 items (the first 5 listed)")
    for asked in ("0", "-3", "x", "100000"):
        page = _page(panel, config, rows=asked, cards=asked)
        assert len(page["items"].table.rows) >= 1 and len(page["cards"].table.rows) >= 1
    assert len(_page(panel, config, rows="100000")["items"].table.rows) == 18
