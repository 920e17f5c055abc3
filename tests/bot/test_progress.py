"""Progress that means one thing (issue 26 §11): the run listing (``hilbot review --list``), a
session's start and every card say ``rated R/N · complete C/N (k=K)`` (items with a rating, items
with ``k`` of them, of the run's N); a card's number is its item's place in the run's review order,
the same in every session, for every reviewer; a change run counts "changes", a scenario run
"scenarios". The chats (``/runs``, the App Home, chat cards) are in
tests/bot/chat/test_chat_progress.py."""

from __future__ import annotations

import os
from pathlib import Path

import pexpect
import pytest

from bot import Action, ReviewEngine
from bot.demo import build_demo
from evaluation import (
    ItemData,
    Query,
    QueryEvaluation,
    Reviewer,
    RunHeader,
    Store,
    load_config,
)
from tests.conftest import HILBOT, RAG_RUN, SEARCH_RUN

ALICE = Reviewer(platform="terminal", id="alice")
BOB = Reviewer(platform="terminal", id="bob")
QUESTION = "How did the search do"


def _config(tmp_path: Path, k: int):
    path = tmp_path / "hilbot.toml"
    path.write_text(f"[review]\nk = {k}\n")
    return load_config(path)


def _rate(store: Store, config, reviewer: Reviewer, item_ids: list[str]) -> None:
    """``reviewer`` rates the items "good", as any channel would (through the engine)."""
    session = ReviewEngine(store, config).session(SEARCH_RUN, reviewer)
    for item_id in item_ids:
        session.act(Action("rate", "good", item_id=item_id))


def _order(store: Store, config) -> list[str]:
    return [item.id for item in ReviewEngine(store, config).order(SEARCH_RUN)]


def _rows(listing: str) -> dict[str, str]:
    return {line.split()[0]: line for line in listing.splitlines()[1:]}


# ----------------------------------------------------------------------------- the run listing


def test_review_list_says_rated_and_complete_of_the_run_not_reviewed(run_cli, tmp_path):
    """One rating made a run "(reviewed)"; now: how many items are rated, how many have k."""
    store = Store(tmp_path / "results")
    build_demo(store)
    config = _config(tmp_path, 2)
    first = _order(store, config)
    _rate(store, config, ALICE, first[:3])
    _rate(store, config, BOB, first[:1])
    result = run_cli("--config", str(tmp_path / "hilbot.toml"), "review", "--list")
    assert result.returncode == 0, result.stderr
    rows = _rows(result.stdout)
    assert rows[SEARCH_RUN].endswith("18 queries  overall=0.62  rated 3/18 · complete 1/18 (k=2)")
    assert rows[RAG_RUN].endswith("rated 0/12 · complete 0/12 (k=2)")
    assert "reviewed" not in result.stdout and "HIL review" not in result.stdout


def test_review_list_counts_each_rated_dimension(run_cli, tmp_path):
    """Ratings in another dimension of the run than its first are counted apart, each named."""
    store = Store(tmp_path / "results")
    build_demo(store)
    config = load_config(None)
    engine = ReviewEngine(store, config)
    engine.session(RAG_RUN, ALICE).act(Action("rate", "good", item_id="rag01"))
    session = engine.session(RAG_RUN, ALICE, "completeness")
    for item_id in ("rag01", "rag02"):
        session.act(Action("rate", "4", item_id=item_id))
    rows = _rows(run_cli("review", "--list").stdout)
    dimension = store.load_run(RAG_RUN).header.dimensions[0]
    assert rows[RAG_RUN].endswith(
        f"{dimension}: rated 1/12 · complete 1/12 (k=1); "
        "completeness: rated 2/12 · complete 2/12 (k=1)"
    )


def _kind_run(store: Store, run_id: str, kind: str, n: int, *, expected: int | None = None):
    header = RunHeader(run_id=run_id, kind=kind, dimensions=["overall"], item_count=expected)
    log, _ = store.start_run(header)
    for i in range(n):
        item = ItemData(id=f"{kind}{i}", query=Query(query=f"{kind} {i}"), answer="done")
        log.append(QueryEvaluation(run_id=run_id, data=item))


def test_change_and_scenario_runs_count_changes_and_scenarios(run_cli, tmp_path):
    store = Store(tmp_path / "results")
    _kind_run(store, "agent", "scenario", 3)
    _kind_run(store, "agent-cut", "scenario", 1, expected=3)
    _kind_run(store, "snapshots", "change", 2)
    _kind_run(store, "answers", "answer", 4)
    rows = _rows(run_cli("review", "--list").stdout)
    assert " 3 scenarios  " in rows["agent"]
    assert (
        " 1 scenarios  " in rows["agent-cut"]
        and "(incomplete: no summary, 1 of 3 scenarios)" in (rows["agent-cut"])
    )
    assert " 2 changes  " in rows["snapshots"]
    assert " 4 queries  " in rows["answers"]


# ----------------------------------------------------------------------------- cards (engine)


def test_a_cards_number_is_its_items_place_for_every_reviewer_and_session(tmp_path, demo_store):
    """Card numbers counted each reviewer's cards against their shrinking share of the run: the
    same item was [3/18] in one session and [3/16] in the next, and another reviewer's [1/16]."""
    config = _config(tmp_path, 1)
    first = _order(demo_store, config)
    alice = ReviewEngine(demo_store, config).session(SEARCH_RUN, ALICE)
    alice.act(Action("rate", "good", item_id=first[0]))
    assert alice.card(first[2]).title.startswith("[3/18] ")
    _rate(demo_store, config, BOB, first[1:2])  # Bob takes the second item meanwhile (k = 1)
    bob = ReviewEngine(demo_store, config).session(SEARCH_RUN, BOB)
    again = ReviewEngine(demo_store, config).session(SEARCH_RUN, ALICE)  # a new session
    assert again.card(first[2]).title.startswith("[3/18] ")
    assert bob.card(first[2]).title.startswith("[3/18] ")
    assert again.card(first[0]).title.startswith("[1/18] ")  # rated earlier: still its number
    assert bob.start().card.title.startswith("[3/18] ")  # Bob's next item is the third


def test_a_card_carries_the_runs_progress(tmp_path, demo_store):
    config = _config(tmp_path, 2)
    first = _order(demo_store, config)
    _rate(demo_store, config, BOB, first[:2])
    alice = ReviewEngine(demo_store, config).session(SEARCH_RUN, ALICE)
    assert alice.start().card.progress == "rated 2/18 · complete 0/18 (k=2)"
    step = alice.act(Action("rate", "good", item_id=first[0]))
    assert alice.card(first[0]).progress == "rated 2/18 · complete 1/18 (k=2)", step


def test_a_skip_is_not_a_rating_until_a_rating_replaces_it(tmp_path, demo_store):
    config = _config(tmp_path, 1)
    first = _order(demo_store, config)
    alice = ReviewEngine(demo_store, config).session(SEARCH_RUN, ALICE)
    alice.act(Action("skip", item_id=first[0]))
    assert alice.card(first[1]).progress == "rated 0/18 · complete 0/18 (k=1)"
    alice.act(Action("undo", item_id=first[0]))
    alice.act(Action("rate", "poor", item_id=first[0]))
    assert alice.card(first[1]).progress == "rated 1/18 · complete 1/18 (k=1)"
    again = ReviewEngine(Store(demo_store.root), config).session(SEARCH_RUN, ALICE)  # from the log
    assert again.card(first[1]).progress == "rated 1/18 · complete 1/18 (k=1)"


# ----------------------------------------------------------------------------- the terminal


def _spawn(data_dir: Path, who: str, *args: str) -> pexpect.spawn:
    env = {**os.environ, "HILBOT_DATA_DIR": str(data_dir), "TERM": "dumb", "NO_COLOR": "1"}
    child = pexpect.spawn(
        str(HILBOT),
        [*args, "review", SEARCH_RUN, "--reviewer", who],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(60, 140),
    )
    return child


def _title(child: pexpect.spawn) -> str:
    child.expect(r"\[(\d+)/(\d+)\] \"([^\"]*)\"")
    return child.match.group(0)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    build_demo(Store(tmp_path / "results"))
    return tmp_path / "results"


def test_terminal_session_start_and_cards_show_the_runs_progress(data_dir, tmp_path):
    (tmp_path / "k2.toml").write_text("[review]\nk = 2\n")
    config = ("--config", str(tmp_path / "k2.toml"))
    child = _spawn(data_dir, "alice", *config)
    child.expect(r"Reviewing run: demo-docs-search \(18 queries, overall=0\.62\)")
    child.expect(r"progress: rated 0/18 · complete 0/18 \(k=2\)")
    first = _title(child)
    assert first.startswith("[1/18]")
    child.expect(r"rated 0/18 · complete 0/18 \(k=2\)")
    child.expect(QUESTION)
    child.send("g")
    child.expect("recorded: good")  # the top rating moves on by itself
    second = _title(child)
    assert second.startswith("[2/18]")
    child.expect(r"rated 1/18 · complete 0/18 \(k=2\)")
    child.expect(QUESTION)
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    # Bob, a second session: the item Alice rated first is his [1/18] too (k = 2)
    bob = _spawn(data_dir, "bob", *config)
    bob.expect(r"progress: rated 1/18 · complete 0/18 \(k=2\)")
    assert _title(bob) == first
    bob.expect(QUESTION)
    bob.send("g")
    bob.expect("recorded: good")
    bob.send("q")
    bob.expect(pexpect.EOF)
    bob.close()
    # Alice again: the card she left open keeps its number
    again = _spawn(data_dir, "alice", *config)
    again.expect(r"progress: rated 1/18 · complete 1/18 \(k=2\)")
    assert _title(again) == second
    again.expect(QUESTION)
    again.send("q")
    again.expect(pexpect.EOF)
    again.close()


def test_terminal_session_start_names_changes_and_scenarios(tmp_path):
    data_dir = tmp_path / "results"
    _kind_run(Store(data_dir), "agent", "scenario", 3)
    env = {**os.environ, "HILBOT_DATA_DIR": str(data_dir), "TERM": "dumb", "NO_COLOR": "1"}
    child = pexpect.spawn(
        str(HILBOT),
        ["review", "agent", "--reviewer", "alice"],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(60, 140),
    )
    child.expect(r"Reviewing run: agent \(3 scenarios\)")
    child.expect(r"\[1/3\]")
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()


@pytest.mark.parametrize("seed", [1, 2])
def test_the_listing_from_the_index_is_the_listing_from_the_ledger(tmp_path, monkeypatch, seed):
    """Ratings, skips, notes, redeliveries, adjudications and bad lines on both demo runs, in two
    dimensions: the listing
    counted from the log's columnar index equals the one the ledger folds (``HILBOT_NO_INDEX``)."""
    from bot.listing import run_listing
    from tests.auxil.review_logs import write_review_log

    monkeypatch.setenv("HILBOT_INDEX_MIN_BYTES", "0")  # index this small log too
    store = Store(tmp_path / "results")
    build_demo(store)
    write_review_log(store, seed, [SEARCH_RUN, RAG_RUN])

    def listing() -> tuple[str, list[str]]:
        issues: list = []
        return run_listing(store, issues, k=2), [str(i) for i in issues]

    indexed = listing()
    assert (store.root / "cache" / "index" / "ratings" / "meta.json").is_file()
    assert listing() == indexed  # from the index it just wrote
    monkeypatch.setenv("HILBOT_NO_INDEX", "1")
    assert listing() == indexed
    rows = indexed[0].splitlines()[1:]
    assert len(rows) == 2 and all("completeness: rated 1" in row for row in rows), rows
