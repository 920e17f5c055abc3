"""Analysis on ratings of a dimension hilbot.toml does not define: every ``hilbot analyze`` command
works on any log.

A dimension the configuration lacks is described from the log itself: its judgments ordered by their
mean score (the convention of :func:`analysis.agreement.judgment_means`), and the report says the
dimension is not configured. A ``--dimension`` that neither the configuration defines nor any rating
carries is a one-line error with the fix.

The log here: the two demo runs rated on ``tone`` by three reviewers. The judgments' mean scores are
cold 0.1 < aloof 0.45 (0.3 from alice, 0.5 from the others) < warm 0.9, an order that is neither
alphabetical nor the order the judgments first appear in.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.demo import RAG_RUN, SEARCH_RUN
from evaluation import Store
from evaluation.records import Rating, Reviewer

TONE = "tone"
ASCENDING = ["cold", "aloof", "warm"]
"""The tone judgments by mean score, lowest first."""
BEST_FIRST = ASCENDING[::-1]
NOT_CONFIGURED = "dimension 'tone' is not configured: judgments ordered by their mean score"
REVIEWERS = ("alice", "bob", "carol")
PATTERN = [
    ("warm", "warm", "aloof"),
    ("cold", "aloof", "cold"),
    ("warm", "warm", "warm"),
    ("cold", "cold", "cold"),
    ("aloof", "aloof", "warm"),
    ("warm", "cold", "warm"),
]
"""Each item's three judgments (alice, bob, carol), cycling over the items."""


def score(judgment: str, reviewer: str) -> float:
    return {"warm": 0.9, "cold": 0.1}.get(judgment, 0.3 if reviewer == "alice" else 0.5)


def rate_tone(store: Store) -> int:
    """Rate every item of both demo runs on ``tone``; returns the number of ratings."""
    ratings = []
    for run_id in (SEARCH_RUN, RAG_RUN):
        for k, item in enumerate(store.load_run(run_id).items):
            for who, judgment in zip(REVIEWERS, PATTERN[k % len(PATTERN)]):
                ratings.append(
                    Rating(
                        run_id=run_id,
                        item_id=item.id,
                        dimension=TONE,
                        reviewer=Reviewer(id=who),
                        idempotency_key=f"terminal:{who}:{run_id}:{item.id}",
                        judgment=judgment,
                        score=score(judgment, who),
                        concerns=["too_formal"] if judgment == "cold" else [],
                    )
                )
    store.ratings.append_many(ratings)
    return len(ratings)


@pytest.fixture
def toned(demo_store: Store) -> Store:
    """The demo runs rated on ``tone`` only, under the built-in configuration."""
    rate_tone(demo_store)
    return demo_store


@pytest.fixture(params=["built-in config", "own config, tone in the run headers"])
def setup(request, demo_store: Store, tmp_path: Path) -> Store:
    """The tone ratings under the built-in configuration, or under a hilbot.toml that defines
    another dimension (``clarity``, never rated) while the run headers list ``tone``, which the
    configuration lacks."""
    rate_tone(demo_store)
    if request.param != "built-in config":
        (tmp_path / "hilbot.toml").write_text('[dimensions.clarity]\nscale = "quality"\n')
        for run_id in (SEARCH_RUN, RAG_RUN):
            path = demo_store.root / "runs" / f"{run_id}.jsonl"
            lines = path.read_text().splitlines(keepends=True)
            header = json.loads(lines[0])
            header["dimensions"] = [TONE, "vibes"]
            path.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    return demo_store


def ok(run_cli, *args: str):
    result = run_cli("analyze", *args)
    assert result.returncode == 0, result.stderr
    assert "this is a bug" not in result.stderr and "Traceback" not in result.stderr
    return result


def judgments_line(markdown: str) -> list[str]:
    """The judgments of the tone section of a patterns report, in the order shown."""
    section = markdown.split(f"## {TONE} (", 1)[1]
    line = next(text for text in section.splitlines() if text.startswith("Judgments: "))
    return re.findall(r"(\w+) \d+ \(", line)


# ---------------------------------------------------------------- calibration


@pytest.mark.parametrize(
    "select", [[], ["--dimension", TONE], ["--by", "dimension,category"], ["--run", SEARCH_RUN]]
)
def test_calibration_describes_the_dimension_from_the_log(select, setup, run_cli):
    data = json.loads(ok(run_cli, "calibration", *select, "--format", "json").stdout)
    assert data["groups"] and all(group["key"]["dimension"] == TONE for group in data["groups"])
    for group in data["groups"]:
        confusion = group["categories"]["confusion"]
        assert confusion["labels"] == ASCENDING  # the judgments by their mean score, lowest first
        assert sum(map(sum, confusion["counts"])) == group["n"]
        assert isinstance(group["categories"]["observed"], float)  # defined: the categories exist
        assert any(note.startswith(NOT_CONFIGURED) for note in group["notes"]), group["notes"]
    markdown = ok(run_cli, "calibration", *select).stdout
    assert "| AI \\ human | cold | aloof | warm |" in markdown


def test_calibration_puts_each_item_in_the_judgment_of_its_gold_label(toned, run_cli):
    data = json.loads(ok(run_cli, "calibration", "--format", "json").stdout)
    (group,) = data["groups"]
    # Each item's human label is its gold label, here the majority of its three ratings (not the
    # mean of them, which put warm,cold,warm in aloof). Per cycle of six items:
    # warm,warm,aloof → warm; cold,aloof,cold → cold; all warm → warm; all cold → cold;
    # aloof,aloof,warm → aloof; warm,cold,warm → warm. 30 items: 5 cycles.
    human = [sum(column) for column in zip(*group["categories"]["confusion"]["counts"])]
    assert human == [10, 5, 15]  # cold, aloof, warm
    assert data["gold"]["derived"] == 30 and data["gold"]["adjudicated"] == 0
    note = next(n for n in group["notes"] if n.startswith(NOT_CONFIGURED))
    assert (
        "cold (0.10) < aloof (0.30) < warm (0.90)" in note
    )  # the means of the gold labels: aloof's are all 0.3


def test_calibration_with_charts(toned, run_cli, tmp_path):
    out = tmp_path / "reports"
    result = ok(run_cli, "calibration", "--out", str(out))
    assert {p.name for p in out.iterdir()} >= {
        "calibration.md",
        "calibration.json",
        "calibration.png",
        "distribution.png",
    }
    assert "wrote" in result.stderr


# ---------------------------------------------------------------- patterns


@pytest.mark.parametrize("select", [[], ["--dimension", TONE], ["--run", RAG_RUN]])
def test_patterns_describe_the_dimension_from_the_log(select, setup, run_cli):
    data = json.loads(ok(run_cli, "patterns", *select, "--format", "json").stdout)
    (dim,) = data["dimensions"]
    assert dim["dimension"] == TONE and dim["scale"] is None
    assert [
        j["value"] for j in dim["distribution"]
    ] == BEST_FIRST  # by mean score, best first like a scale
    assert any(note.startswith(NOT_CONFIGURED) for note in dim["notes"]), dim["notes"]
    assert [c["tag"] for c in dim["by_concern"]] == ["too_formal"]  # tags in use, none offered
    assert judgments_line(ok(run_cli, "patterns", *select).stdout) == BEST_FIRST


def test_patterns_with_charts(toned, run_cli, tmp_path):
    out = tmp_path / "reports"
    ok(run_cli, "patterns", "--out", str(out))
    assert {p.name for p in out.iterdir()} >= {"patterns.md", "patterns.json", "distribution.png"}


# --------------------------------------------------------- agreement (already describes it: pinned)


@pytest.mark.parametrize("select", [[], ["--dimension", TONE]])
def test_agreement_describes_the_dimension_from_the_log(select, setup, run_cli):
    data = json.loads(
        ok(run_cli, "agreement", "--bootstrap", "0", *select, "--format", "json").stdout
    )
    (dim,) = data["dimensions"].values()
    assert list(data["dimensions"]) == [TONE]
    assert dim["scale"] is None and dim["categories"] == ASCENDING
    assert dim["values"] == pytest.approx([0.1, 0.45, 0.9])  # the judgments' mean scores
    assert NOT_CONFIGURED in dim["notes"]
    markdown = ok(run_cli, "agreement", "--bootstrap", "0", "--detail", *select).stdout
    assert (
        "Scale: cold < aloof < warm (values 0.1, 0.45, 0.9)." in markdown
        and f"- note: {NOT_CONFIGURED}" in markdown
    )


def test_agreement_with_charts(toned, run_cli, tmp_path):
    out = tmp_path / "reports"
    ok(run_cli, "agreement", "--bootstrap", "20", "--out", str(out))
    assert {p.name for p in out.iterdir()} >= {"agreement.md", "agreement.json", "agreement.png"}


# ---------------------------------------------------------------- the other commands (pinned)


def test_validate_correlate_synthesize_and_the_digest_run(toned, run_cli):
    report = json.loads(ok(run_cli, "validate", "--format", "json").stdout)
    assert report["counts"].get("unknown_dimension", 0) == 90  # flagged for a human, not rejected
    ok(run_cli, "correlate", "--feature", "result_count", "--dimension", TONE)
    assert (
        f"· {TONE} (statistical synthesis"
        in ok(run_cli, "synthesize", "--run", SEARCH_RUN, "--dimension", TONE).stdout
    )
    digest = run_cli("digest")
    assert digest.returncode == 0 and f"Agreement on {TONE}" in digest.stdout


# ---------------------------------------------------------------- a --dimension nothing knows


@pytest.mark.parametrize(
    "command", [["calibration"], ["patterns"], ["agreement", "--bootstrap", "0"]]
)
def test_a_dimension_neither_configured_nor_rated_is_one_line_with_the_fix(command, setup, run_cli):
    result = run_cli("analyze", *command, "--dimension", "tonne")
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert (
        "'tonne'" in line
        and "hilbot.toml" in line
        and " — use one of " in line
        and TONE in line.split(" — ")[1]
    )


@pytest.mark.parametrize(
    "command", [["calibration"], ["patterns"], ["agreement", "--bootstrap", "0"]]
)
def test_a_configured_dimension_without_ratings_is_an_empty_report_not_an_error(
    command, toned, run_cli
):
    ok(run_cli, *command, "--dimension", "completeness")


def test_the_markdown_reports_say_the_dimension_is_not_configured(toned, run_cli):
    for command in (
        ("analyze", "calibration", "--dimension", "tone"),
        ("analyze", "patterns", "--dimension", "tone"),
    ):
        out = run_cli(*command)
        assert out.returncode == 0, out.stderr
        assert "dimension 'tone' is not configured" in out.stdout, out.stdout[:800]
