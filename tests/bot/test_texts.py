"""What the terminal and the command line say: each text a new user met that was wrong or
missing."""

from __future__ import annotations

import re

import pytest

from evaluation import Evaluation, ItemData, Query
from evaluation.output import quiet_item
from tests.conftest import SEARCH_RUN


def test_a_skip_says_skipped_not_recorded_none(demo_store, run_cli):
    result = run_cli(
        "review",
        SEARCH_RUN,
        "--reviewer",
        "bob",
        input="\rg",
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
    )
    assert result.returncode == 0, result.stderr
    assert "recorded: None" not in result.stdout
    assert "⏭ skipped" in result.stdout


def test_question_mark_shows_what_each_scale_option_means(demo_store, run_cli):
    result = run_cli(
        "review",
        SEARCH_RUN,
        "--reviewer",
        "bob",
        input="?q",
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
    )
    assert result.returncode == 0, result.stderr
    assert "[?] guide" in result.stdout  # the key is offered on the card
    assert re.search(r"g +good +— Results nail it", result.stdout), result.stdout[-1500:]
    assert "does nothing here" not in result.stdout


def test_the_quiet_line_names_every_judge_not_only_the_lexical_one():
    def line(judge: str) -> str:
        item = ItemData(
            id="q1",
            query=Query(query="zod"),
            answer="Use z.object.",  # an answer: it was judged
            evaluation=Evaluation(judge=judge, scores={"overall": 0.5}),
        )
        return quiet_item(item, 1, 1)

    assert line("lexical").endswith("overall: 0.50 (lexical)")
    assert line("anthropic/claude-sonnet-4").endswith("overall: 0.50 (AI)")
    assert line("recorded-judge").endswith("overall: 0.50 (AI [recorded-judge])")


def test_run_help_shows_each_example_on_its_own_line(run_cli):
    result = run_cli("run", "--help")
    lines = [line.strip() for line in result.stdout.splitlines()]
    assert "hilbot run --set core --target examples.docs_search:search" in lines, result.stdout
    assert any(line.startswith("hilbot run --cases tests/fixtures/cases") for line in lines), (
        result.stdout
    )


def test_the_delta_is_named_by_its_sign_everywhere(demo_store, run_cli):
    """One sign, human − AI, named so: "AI-vs-human delta" read as AI − human, the sign the source
    reports use."""
    from bot.chat import texts
    from evaluation import ReviewSummary

    result = run_cli(
        "review",
        SEARCH_RUN,
        "--reviewer",
        "bob",
        input="pq",
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
    )
    summary_text = result.stdout[result.stdout.index("Session summary") :]
    assert re.search(r"human − AI\s+[−+-]\d\.\d\d", summary_text), summary_text
    summary = ReviewSummary(
        run_id="r",
        queriesReviewed=1,
        queriesSkipped=0,
        queriesFlagged=1,
        humanAverageScore=0.25,
        aiVsHumanDelta=0.5,  # AI − human
    )
    assert "human − AI −0.50" in texts.done("r", "overall", summary)
    for text in (result.stdout, texts.done("r", "overall", summary)):
        assert "AI-vs-human" not in text


def test_human_minus_ai_keeps_its_sign_while_the_export_says_ai_minus_human(demo_store, run_cli):
    """The export's ``aiVsHumanDelta`` is AI − human, as the format defines it; the session summary
    (terminal and chat), which says "human − AI", shows the same difference with its own sign."""
    import json

    from bot.chat import texts
    from evaluation import ReviewSummary
    from evaluation.output import signed

    result = run_cli(
        "review",
        SEARCH_RUN,
        "--reviewer",
        "bob",
        input="pq",
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
    )
    assert result.returncode == 0, result.stderr
    [rating] = [e for e in demo_store.human_events() if getattr(e, "score", None) is not None]
    ai = demo_store.load_run(SEARCH_RUN).item(rating.item_id).evaluation.scores["overall"]
    summary_text = result.stdout[result.stdout.index("Session summary") :]
    assert f"human − AI {signed(0.4 - ai)}" in summary_text, summary_text
    exported = run_cli(
        "export",
        SEARCH_RUN,
        "--format",
        "json",
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
    )
    assert exported.returncode == 0, exported.stderr
    review = json.loads(exported.stdout)["hilReview"]
    assert review["aiVsHumanDelta"] == pytest.approx(ai - 0.4, abs=1e-4)
    summary = ReviewSummary(run_id="r", humanAverageScore=0.51, aiVsHumanDelta=-0.08)
    assert "human − AI +0.08" in texts.done("r", "overall", summary)


def test_the_summary_at_a_sessions_end_carries_the_synthesis_and_action_items(demo_store, run_cli):
    """The session summary written when a review ends had no synthesis and no action items."""
    import json

    result = run_cli(
        "review",
        SEARCH_RUN,
        "--reviewer",
        "bob",
        input="pq",
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in demo_store.ratings.path.read_text().splitlines()]
    summaries = [e for e in events if e["type"] == "review_summary"]
    session = [s for s in summaries if s.get("reviewer")][-1]
    assert (
        session["synthesis"]
        and session["synthesis_source"] == "statistical"
        and session["actionItems"]
    )
    export = json.loads(
        run_cli("export", SEARCH_RUN, env={"HILBOT_DATA_DIR": str(demo_store.root)}).stdout
    )
    assert export["hilReview"]["synthesis"] == session["synthesis"]


def test_no_synthesis_at_the_end_when_it_is_turned_off(demo_store, run_cli, tmp_path):
    import json

    (tmp_path / "hilbot.toml").write_text('[review]\nsynthesize_at_end = "off"\n')
    run_cli(
        "review",
        SEARCH_RUN,
        "--reviewer",
        "bob",
        input="pq",
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
    )
    events = [json.loads(line) for line in demo_store.ratings.path.read_text().splitlines()]
    assert [e.get("synthesis") for e in events if e["type"] == "review_summary"] == [None]


def test_the_end_shows_the_llm_synthesis_when_it_is_configured(demo_store, run_cli, tmp_path, fake):
    from tests.fakes.anthropic_api import tool

    fake.queue(tool(synthesis="Ranking buries the v2 pages.", actionItems=["Index the v2 docs"]))
    (tmp_path / "hilbot.toml").write_text('[review]\nsynthesize_at_end = "llm"\n')
    result = run_cli(
        "review",
        SEARCH_RUN,
        "--reviewer",
        "bob",
        input="pq",
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
    )
    assert result.returncode == 0, result.stderr
    end = result.stdout[result.stdout.index("Session summary") :]
    assert "Synthesis of every review of this run so far (by anthropic/" in end, end
    assert "  Ranking buries the v2 pages." in end and "  1. Index the v2 docs" in end, end


def test_the_end_shows_no_synthesis_when_it_is_turned_off(demo_store, run_cli, tmp_path):
    (tmp_path / "hilbot.toml").write_text('[review]\nsynthesize_at_end = "off"\n')
    result = run_cli(
        "review",
        SEARCH_RUN,
        "--reviewer",
        "bob",
        input="pq",
        env={"HILBOT_DATA_DIR": str(demo_store.root)},
    )
    end = result.stdout[result.stdout.index("Session summary") :]
    assert "reviewed 1" in end and "Synthesis" not in end and "Action items" not in end, end
