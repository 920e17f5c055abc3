"""Diff triage: the local and LLM triage judges, the policy, the records, the reports, applying
accepted changes."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from evaluation import load_config
from evaluation.changes import Change
from evaluation.triage import LLMTriage, LocalTriage, Triage, decide, glob_match, in_audit
from evaluation.triage_run import apply_accepted, report_lines, run_triage
from tests.fakes.anthropic_api import Reply, tool


def change(expected: str | None, actual: str | None, path: str = "test/a.md", **kw) -> Change:
    status = "added" if expected is None else "removed" if actual is None else "changed"
    return Change(
        id=path,
        name=path,
        path=path,
        status=status,
        expected=expected,
        actual=actual,
        source="file",
        **kw,
    )


def triaged(category: int, confidence: float, **kw) -> Triage:
    return Triage(category=category, confidence=confidence, summary="s", **kw)


SETTINGS = load_config(None).triage


# -------------------------------------------------------------------------- patterns and the policy


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        ("**/security_*", "security_login.md", True),
        ("**/security_*", "test/api/security_login.md", True),
        ("**/security_*", "test/security/login.md", False),
        ("**/payment_*.py", "a/payment_x.py", True),
        ("**/payment_*.py", "a/payment_x.pyc", False),
        ("test/*.md", "test/a.md", True),
        ("test/*.md", "test/sub/a.md", False),
        ("test/**", "test/sub/a.md", True),
        ("t?st/a.md", "test/a.md", True),
        ("a[b].md", "a[b].md", True),  # brackets are literal
    ],
)
def test_require_human_patterns_match_like_globs(pattern, path, expected):
    assert glob_match(pattern, path) is expected


def test_the_rules_in_order():
    policy = SETTINGS.model_copy(update={"require_human": ["**/payment_*"], "audit_share": 0.0})
    assert (
        decide(change("a", "b", "x/payment_1.md"), triaged(5, 1.0), policy, "t").outcome == "human"
    )
    assert (
        decide(change("a", "b", "x/payment_1.md"), triaged(5, 1.0), policy, "t").rule
        == "require_human: **/payment_*"
    )
    assert (
        decide(change("a", "b"), triaged(5, 1.0, error="boom"), policy, "t").rule
        == "the triage failed"
    )
    assert (
        decide(change("a", "b"), triaged(5, 1.0, flags_for_human=True), policy, "t").outcome
        == "human"
    )
    accepted = decide(change("a", "b"), triaged(5, 0.95), policy, "t")
    assert (accepted.outcome, accepted.rule) == (
        "accepted",
        "auto_accept: ACCEPT at confidence 0.95 ≥ 0.95",
    )
    assert decide(change("a", "b"), triaged(5, 0.9499), policy, "t").outcome == "human"
    assert decide(change("a", "b"), triaged(1, 0.99), policy, "t").outcome == "rejected"
    assert (
        decide(change("a", "b"), triaged(4, 1.0), policy, "t").outcome == "human"
    )  # only category 5 by default
    wider = policy.model_copy(update={"auto_accept_categories": [4, 5]})
    assert decide(change("a", "b"), triaged(4, 1.0), wider, "t").outcome == "accepted"


def test_the_audit_sample_is_stable_and_about_its_share():
    ids = [f"c{n}" for n in range(4000)]
    chosen = [i for i in ids if in_audit("triage-1", i, 0.05)]
    assert 140 <= len(chosen) <= 260  # 5% of 4,000 = 200, binomial sd ≈ 14
    assert chosen == [i for i in ids if in_audit("triage-1", i, 0.05)]
    assert not any(in_audit("t", i, 0.0) for i in ids) and all(in_audit("t", i, 1.0) for i in ids)
    policy = SETTINGS.model_copy(update={"audit_share": 1.0})
    decision = decide(change("a", "b"), triaged(5, 1.0), policy, "t")
    assert decision.outcome == "accepted" and decision.audit and decision.to_humans


def test_a_category_cannot_be_both_auto_accepted_and_rejected(tmp_path):
    from evaluation.errors import ConfigError

    (tmp_path / "h.toml").write_text("[triage]\nauto_accept_categories = [5, 1]\n")
    with pytest.raises(ConfigError, match="both auto-accepted and auto-rejected"):
        load_config(tmp_path / "h.toml")


# --------------------------------------------------------------------------- the local judge


@pytest.mark.parametrize(
    "expected, actual, category, confidence",
    [
        ("score: 0.85\nok", "score:  0.85 \n ok", 5, 1.0),
        ("score: 0.85\nok", "score: 0.86\nok", 4, 0.8),
        ("score: 0.85\nok", "score: 0.95\nok", 3, 0.0),
        ("verdict: pass", "verdict: fail", 3, 0.0),
        (None, "new", 3, 0.0),
    ],
)
def test_the_local_judge(expected, actual, category, confidence, store):
    config = load_config(None)
    config.triage.relative_tolerance = 0.02
    result = LocalTriage(config, store).decide(change(expected, actual))
    assert (result.category, result.confidence, result.judge, result.judge_kind) == (
        category,
        confidence,
        "local",
        "local",
    )
    assert result.summary.startswith("local: ")


TRACEBACK = 'Traceback (most recent call last):\n  File "t.py", line 3, in run\nKeyError: "q"\n'


@pytest.mark.parametrize(
    "expected, actual, rule, issues",
    [
        (
            "# Answer\nanswer: Paris\n",
            f"# Answer\n{TRACEBACK}",
            "adds a traceback (line 2)",
            ["line 2: Traceback (most recent call last):", 'line 4: KeyError: "q"'],
        ),
        (
            "loaded 3 rows\nscore: 0.85\n",
            "loaded 3 rows\nERROR: the index is missing\nscore: 0.85\n",
            "adds an error line (line 2)",
            ["line 2: ERROR: the index is missing"],
        ),
        (
            "answer: Paris\n",
            "answer: Paris\nrequests.exceptions.HTTPError: 503 Server Error\n",
            "adds an error line (line 2)",
            ["line 2: requests.exceptions.HTTPError: 503 Server Error"],
        ),
        (
            "# Report\nrows: 120\nmean: 4.2\nmax: 9\nmin: 1\nnotes: none\n",
            "# Report\n",
            "removes most of the output (1 of 6 lines left)",
            [],
        ),
        ("answer: Paris\n", "", "removes the whole output (1 line)", []),
        (None, TRACEBACK, "adds a traceback (line 1)", None),  # a new test that crashed
    ],
)
def test_the_local_judge_recommends_fail_with_its_rule(expected, actual, rule, issues, store):
    result = LocalTriage(load_config(None), store).decide(change(expected, actual))
    assert (result.category, result.label, result.confidence) == (2, "RECOMMEND FAIL", 0.8)
    assert result.summary == f"local: {rule}" and rule in result.rationale
    assert issues is None or result.issues == issues


def test_a_local_triage_reports_the_failure_rule_and_shows_it_on_the_card(run_cli, tmp_path):
    expected, actual = write_trees(tmp_path, {"t.md": ("# Answer\nanswer: Paris\n", TRACEBACK)})
    (tmp_path / "hilbot.toml").write_text("[triage]\naudit_share = 0.0\n")
    result = run_cli("triage", str(expected), str(actual), "-i", input="q")
    lines = result.stdout.splitlines()
    assert lines[0] == "t.md - RECOMMEND FAIL (local: adds a traceback (line 1)) → to a human"
    assert "  RECOMMEND FAIL (confidence 0.80): local: adds a traceback (line 1)" in lines
    assert '  - line 3: KeyError: "q"' in lines, result.stdout


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("errors: 0\nanswer: Paris\n", "errors: 0\nanswer: Lyon\n"),  # no error line added
        ("error_rate: 0.1\n", "the error rate is low\n"),
        (f"before\n{TRACEBACK}", f"after\n{TRACEBACK}"),  # the traceback was there already
        ("a\nb\n", "c\n"),  # too short an output to say most of it went
        ("answer: Paris, the capital\n", "answer: Lyon\n"),
    ],
)
def test_the_local_judge_stays_unsure_without_a_sign_of_failure(expected, actual, store):
    assert LocalTriage(load_config(None), store).decide(change(expected, actual)).category == 3


# --------------------------------------------------------------------------- the LLM judge


ANSWER = {
    "category": 1,
    "confidence": 0.97,
    "summary": "negative sentiment regressed",
    "rationale": "line 2 flips",
    "issues": ["line 2: negative 0.10 -> 0.45"],
    "suggestions": ["add ground truth labels"],
    "flags_for_human": False,
}


def _llm(store, tmp_path, monkeypatch) -> LLMTriage:
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    config.llm.model = "claude-test"
    return LLMTriage(config, store)


def test_the_llm_judge_sends_the_change_and_forces_the_schema(fake, store, tmp_path, monkeypatch):
    fake.queue(tool(**ANSWER))
    judge = _llm(store, tmp_path, monkeypatch)
    item = change(
        "positive: 0.85\nnegative: 0.10\n",
        "positive: 0.85\nnegative: 0.45\n",
        "test/sentiment.md",
        description="sentiment of short reviews",
    )
    result = asyncio.run(judge.triage(item))
    assert (result.category, result.label, result.confidence, result.judge_kind) == (
        1,
        "FAIL",
        0.97,
        "llm",
    )
    assert result.issues == ANSWER["issues"] and result.judge.endswith("claude-test")
    [body] = fake.requests
    prompt = (
        body["messages"][0]["content"]
        if isinstance(body["messages"][0]["content"], str)
        else body["messages"][0]["content"][0]["text"]
    )
    assert (
        "test/sentiment.md" in prompt
        and "sentiment of short reviews" in prompt
        and "+negative: 0.45" in prompt
    )
    [tool_spec] = body["tools"]
    assert tool_spec["name"] == "record_review" and set(
        tool_spec["input_schema"]["properties"]
    ) >= set(ANSWER)
    again = asyncio.run(judge.triage(item))  # the cache: no second call
    assert again.category == 1 and len(fake.requests) == 1


def test_a_malformed_answer_is_unsure_with_the_error_and_the_rest_go_on(
    fake, store, tmp_path, monkeypatch
):
    fake.queue(
        Reply(text="I think it is fine"), tool(**{**ANSWER, "category": 5, "confidence": 0.99})
    )
    judge = _llm(store, tmp_path, monkeypatch)
    judge.llm.settings.max_retries = 0
    from evaluation.triage import triage_all

    first, second = asyncio.run(
        triage_all(judge, [change("a", "b", "x/1.md"), change("a", "c", "x/2.md")])
    )
    results = {r.category for r in (first, second)}
    assert results == {3, 5}
    failed = first if first.category == 3 else second
    assert failed.error and failed.flags_for_human and failed.confidence == 0.0


# ----------------------------------------------------------------- a whole triage of snapshot trees


def write_trees(root: Path, files: dict[str, tuple[str, str]]) -> tuple[Path, Path]:
    """``root/books`` (expected) and ``root/out`` (actual) holding each path's (old, new) text."""
    expected, actual = root / "books", root / "out"
    for rel, (old, new) in files.items():
        for base, text in ((expected, old), (actual, new)):
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(text)
    return expected, actual


def _trees(root: Path) -> tuple[Path, Path]:
    return write_trees(
        root,
        {
            "test/format.md": (
                "total: 10\n",
                "total:  10\n",
            ),  # whitespace only: ACCEPT 1.0 → accepted
            "test/numbers.md": (
                "f1: 0.850\n",
                "f1: 0.851\n",
            ),  # within tolerance: RECOMMEND ACCEPT → human
            "test/words.md": ("answer: Paris\n", "answer: Lyon\n"),  # text: UNSURE → human
            "test/security_login.md": ("ok\n", " ok\n"),  # whitespace, but a security test → human
        },
    )


@pytest.fixture
def triage_config(tmp_path):
    (tmp_path / "hilbot.toml").write_text(
        '[triage]\nrelative_tolerance = 0.01\nrequire_human = ["**/security_*"]\n'
        "audit_share = 0.0\n"
    )
    return load_config(tmp_path / "hilbot.toml")


def test_a_triage_records_every_decision_and_deals_only_the_rest(store, triage_config, tmp_path):
    expected, actual = _trees(tmp_path)
    outcome = run_triage(store, triage_config, [str(expected), str(actual)])
    decided = {t.change.path: (t.triage.label, t.decision.outcome) for t in outcome.changes}
    assert decided == {
        "test/format.md": ("ACCEPT", "accepted"),
        "test/numbers.md": ("RECOMMEND ACCEPT", "human"),
        "test/words.md": ("UNSURE", "human"),
        "test/security_login.md": ("ACCEPT", "human"),
    }
    records = [json.loads(line) for line in store.ratings.path.read_text().splitlines()]
    assert [(r["change_id"], r["outcome"]) for r in records if r["type"] == "triage_decision"] == [
        ("test/format.md", "accepted"),
        ("test/numbers.md", "human"),
        ("test/security_login.md", "human"),
        ("test/words.md", "human"),
    ]
    run = store.load_run(outcome.run_id)
    assert (
        run.header.kind == "change"
        and run.header.dimensions == ["change"]
        and run.header.judge.kind == "local"
    )
    assert sorted(i.id for i in run.items) == [
        "test/numbers.md",
        "test/security_login.md",
        "test/words.md",
    ]
    ai = json.loads((actual / "test" / "words.md.ai.json").read_text())
    assert ai["category"] == 3 and ai["category_name"] == "UNSURE" and ai["decision"] == "human"
    assert not (expected / "test" / "words.md.ai.json").exists()
    again = run_triage(
        store, triage_config, [str(expected), str(actual)]
    )  # its own .ai.json files are never changes
    assert [t.change.path for t in again.changes] == [t.change.path for t in outcome.changes]
    assert (
        expected / "test" / "format.md"
    ).read_text() == "total: 10\n"  # nothing written without -u or a human


def test_the_compact_verbose_and_silent_reports(store, triage_config, tmp_path):
    outcome = run_triage(store, triage_config, [str(p) for p in _trees(tmp_path)])
    compact = report_lines(outcome)
    assert (
        compact[0]
        == "test/format.md - ACCEPT (local: identical once whitespace is normalised) → accepted by "
        "rule"
    )
    assert compact[-1].startswith(
        "4 changes: 1 accepted and 0 rejected by rules, 3 for humans; triaged by local"
    )
    assert f"hilbot review {outcome.run_id}" in compact[-1]
    assert not any(
        line.startswith("test/format.md") for line in report_lines(outcome, only_failed=True)
    )
    verbose = "\n".join(report_lines(outcome, mode="verbose"))
    assert "AI review (confidence: 0.00, by local):" in verbose and "+answer: Lyon" in verbose
    silent = report_lines(outcome, mode="silent")
    assert silent[:5] == [
        "FAIL: 0",
        "RECOMMEND FAIL: 0",
        "UNSURE: 1",
        "RECOMMEND ACCEPT: 1",
        "ACCEPT: 2",
    ]


def test_the_cli_exits_1_while_changes_wait_and_0_when_rules_decide_all(run_cli, tmp_path):
    expected, actual = _trees(tmp_path)
    (tmp_path / "hilbot.toml").write_text("[triage]\naudit_share = 0.0\n")
    waiting = run_cli("triage", str(expected), str(actual), "--silent")
    assert waiting.returncode == 1, waiting.stderr
    assert waiting.stdout.splitlines()[:5] == [
        "FAIL: 0",
        "RECOMMEND FAIL: 0",
        "UNSURE: 2",
        "RECOMMEND ACCEPT: 0",
        "ACCEPT: 2",
    ]
    only_format = tmp_path / "fmt"
    for side in ("e", "a"):
        (only_format / side).mkdir(parents=True)
    (only_format / "e" / "x.md").write_text("a  b\n")
    (only_format / "a" / "x.md").write_text("a b\n")
    clean = run_cli("triage", str(only_format / "e"), str(only_format / "a"), "-u")
    assert clean.returncode == 0, clean.stderr
    assert (
        "wrote 1 expected file(s): x.md" in clean.stdout
        and (only_format / "e" / "x.md").read_text() == "a b\n"
    )


def test_humans_accept_in_a_review_and_the_expected_files_follow(run_cli, tmp_path):
    expected, actual = _trees(tmp_path)
    (tmp_path / "hilbot.toml").write_text(
        '[triage]\naudit_share = 0.0\nrequire_human = ["**/security_*"]\n'
        "relative_tolerance = 0.01\n"
    )
    # three changes reach the human: accept, accept, reject (r, then enter past the concerns)
    result = run_cli("triage", str(expected), str(actual), "-i", "--reviewer", "ann", input="aar\n")
    assert result.returncode == 1, result.stderr  # one change was rejected
    written = [line for line in result.stdout.splitlines() if line.startswith("wrote")]
    assert written and "test/format.md" in written[0]
    changed = {
        p: (expected / p).read_text() == (actual / p).read_text()
        for p in ("test/format.md", "test/numbers.md", "test/security_login.md", "test/words.md")
    }
    assert changed["test/format.md"] and sum(changed.values()) == 3, (
        result.stdout
    )  # the rule's accept and two humans'


def test_apply_refuses_a_change_whose_files_moved_on(store, triage_config, tmp_path):
    from bot import Action, ReviewEngine
    from evaluation import Reviewer

    expected, actual = _trees(tmp_path)
    outcome = run_triage(store, triage_config, [str(expected), str(actual)])
    session = ReviewEngine(store, triage_config).session(
        outcome.run_id, Reviewer(platform="terminal", id="ann"), "change"
    )
    step = session.start()
    while step.card is not None:
        step = session.act(Action("rate", "accept"))
        if step.card is not None and step.card.recorded is not None:
            step = session.act(Action("next"))
    (expected / "test" / "words.md").write_text("someone edited it\n")
    applied = apply_accepted(store, outcome.run_id)
    assert sorted(applied.written) == ["test/numbers.md", "test/security_login.md"]
    [refused] = applied.refused
    assert refused.startswith("test/words.md — the expected file changed since the triage — ")
    assert (expected / "test" / "words.md").read_text() == "someone edited it\n"
    again = apply_accepted(store, outcome.run_id)  # the rest in place; the edited one still refused
    assert again.written == []
    assert sorted(again.unchanged) == ["test/numbers.md", "test/security_login.md"]
    assert again.refused == applied.refused


def test_a_change_card_shows_the_recommendation_and_the_diff_but_not_on_audit_cards(
    store, tmp_path
):
    from bot import ReviewEngine
    from evaluation import Reviewer

    # no skip reasons: each skip moves straight on to the next card
    (tmp_path / "hilbot.toml").write_text(
        "[triage]\naudit_share = 1.0\n[review]\nskip_reasons = []\n"
    )
    config = load_config(tmp_path / "hilbot.toml")
    expected, actual = _trees(tmp_path)
    outcome = run_triage(store, config, [str(expected), str(actual)])
    session = ReviewEngine(store, config).session(
        outcome.run_id, Reviewer(platform="terminal", id="ann"), "change"
    )
    cards = {}
    step = session.start()
    while step.card is not None and step.card.item_id not in cards:
        cards[step.card.item_id] = step.card
        step = session.act(Action_skip())
    audit, human = cards["test/format.md"], cards["test/words.md"]
    titles = lambda card: [s.title for s in card.sections]  # noqa: E731
    assert titles(human) == [None, "AI recommends", "Diff"] and titles(audit) == [None, "Diff"]
    assert any(line.startswith("+answer: Lyon") for line in human.sections[-1].lines)


def Action_skip():
    from bot import Action

    return Action("skip")


def test_ai_review_on_request_in_the_terminal_reuses_the_cached_call(run_cli, fake, tmp_path):
    expected, actual = tmp_path / "e", tmp_path / "a"
    for side, text in ((expected, "negative: 0.10\n"), (actual, "negative: 0.45\n")):
        side.mkdir()
        (side / "sentiment.md").write_text(text)
    (tmp_path / "hilbot.toml").write_text(
        '[triage]\njudge = "llm"\naudit_share = 0.0\n[llm]\nmodel = "claude-test"\n'
    )
    fake.queue(tool(**{**ANSWER, "category": 2, "confidence": 0.9}))
    result = run_cli("triage", str(expected), str(actual), "-i", input="iq")
    assert result.returncode == 1, result.stderr  # still waiting for a human
    assert (
        "RECOMMEND FAIL (confidence 0.90): negative sentiment regressed" in result.stdout
    )  # on the card, before deciding
    assert "AI review (confidence: 0.90, by anthropic/claude-test):" in result.stdout  # the i key
    assert "line 2: negative 0.10 -> 0.45" in result.stdout and len(fake.requests) == 1
    assert result.stdout.index("sentiment.md - RECOMMEND FAIL") < result.stdout.index(
        "Accept this change?"
    )  # the report first
    assert (
        "1 change was sent to anthropic/claude-test" in result.stderr
        and "llm-calls.jsonl" in result.stderr
    )


def _answer_run(store, run_id: str, answers: dict[str, str]) -> None:
    from evaluation import ItemData, Query, QueryEvaluation, RunHeader, RunSummary

    items = [
        QueryEvaluation(
            run_id=run_id, data=ItemData(id=i, query=Query(query=f"question {i}"), answer=a)
        )
        for i, a in answers.items()
    ]
    store.create_run(
        RunHeader(run_id=run_id, kind="answer", dimensions=["answer"]),
        items,
        RunSummary(run_id=run_id, item_count=len(items)),
    )


def test_a_human_accept_between_runs_makes_the_output_the_items_new_baseline(store, tmp_path):
    from bot import Action, ReviewEngine
    from evaluation import Reviewer

    config = load_config(None)
    config.triage.audit_share = 0.0
    _answer_run(store, "r1", {"q1": "Paris", "q2": "blue"})
    _answer_run(store, "r2", {"q1": "Lyon", "q2": "blue"})
    first = run_triage(store, config, ["r1", "r2"])
    assert [(t.change.path, t.change.expected, t.change.actual) for t in first.changes] == [
        ("core/q1", "Paris", "Lyon")
    ]
    session = ReviewEngine(store, config).session(
        first.run_id, Reviewer(platform="terminal", id="ann"), "change"
    )
    session.start()
    session.act(Action("rate", "accept"))
    _answer_run(store, "r3", {"q1": "Lyon", "q2": "green"})
    again = run_triage(
        store, config, ["r1", "r3"]
    )  # q1 is Lyon as accepted: no longer a change against r1's Paris
    assert [(t.change.path, t.change.expected, t.change.actual) for t in again.changes] == [
        ("core/q2", "blue", "green")
    ]
    _answer_run(store, "r4", {"q1": "Marseille", "q2": "blue"})
    moved = run_triage(store, config, ["r1", "r4"])
    assert [(t.change.path, t.change.expected) for t in moved.changes] == [
        ("core/q1", "Lyon")
    ]  # against the accepted output


def test_after_a_review_each_change_says_who_decided_it(run_cli, tmp_path):
    expected, actual = _trees(tmp_path)
    (tmp_path / "hilbot.toml").write_text(
        '[triage]\naudit_share = 0.0\nrequire_human = ["**/security_*"]\n'
        "relative_tolerance = 0.01\n"
    )
    result = run_cli("triage", str(expected), str(actual), "-i", "--reviewer", "ann", input="ar\nq")
    lines = result.stdout.splitlines()
    assert (
        "test/format.md - ACCEPTED by rule (AI: ACCEPT: local: identical once whitespace is "
        "normalised)" in lines
    )
    decided = [line for line in lines if " by a human (AI: " in line]
    assert sorted(line.split(" - ")[1].split(" (")[0] for line in decided) == [
        "ACCEPTED by a human",
        "REJECTED by a human",
    ]
    assert sum("waiting for a human" in line for line in lines) == 1


BOOKTEST = Path(__file__).parents[1] / "fixtures" / "changes" / "booktest"


def test_a_booktest_project_is_triaged_reviewed_and_its_books_updated(run_cli, tmp_path):
    import shutil

    project = tmp_path / "project"
    shutil.copytree(BOOKTEST, project)
    books = project / "books"
    (tmp_path / "hilbot.toml").write_text(
        "[triage]\naudit_share = 0.0\nrelative_tolerance = 0.001\n"
    )
    report = run_cli("triage", str(books), str(books / ".out"), cwd=tmp_path)
    assert report.returncode == 1, report.stderr
    lines = report.stdout.splitlines()
    assert (
        "test/examples/example_book.py/ExampleTestBook/test_float.md - RECOMMEND ACCEPT" in lines[0]
    )
    assert lines[1].startswith("test/examples/new_book.py/test_new.md - UNSURE (local: added")
    assert lines[2].startswith("test/examples/simple_book.py/test_simple.md - UNSURE")
    assert lines[4].startswith(
        "3 changes: 0 accepted and 0 rejected by rules, 3 for humans"
    )  # the unrun book is no change
    assert (books / ".out" / "test/examples/simple_book.py/test_simple.md.ai.json").is_file()
    assert not list(books.glob("test/**/*.ai.json"))  # never among the snapshots
    assert re.search(r"triage\s+3 changes", run_cli("review", "--list", cwd=tmp_path).stdout)
    reviewed = run_cli("triage", str(books), str(books / ".out"), "-i", input="aar\n", cwd=tmp_path)
    assert reviewed.returncode == 1, reviewed.stderr  # one rejected
    out = books / ".out"
    same = {
        p.relative_to(out).as_posix()
        for p in out.glob("test/**/*.md")
        if (books / p.relative_to(out)).is_file()
        and (books / p.relative_to(out)).read_text() == p.read_text()
    }
    assert (
        len(
            same
            & {
                "test/examples/example_book.py/ExampleTestBook/test_float.md",
                "test/examples/new_book.py/test_new.md",
                "test/examples/simple_book.py/test_simple.md",
            }
        )
        == 2
    )
    assert (
        books / "test/examples/old_book.py/test_not_run.md"
    ).is_file()  # a book that did not run stays


def test_identical_trees_are_no_changes_and_leave_nothing_behind(run_cli, store, tmp_path):
    for side in ("e", "a"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "x.md").write_text("same\n")
    result = run_cli("triage", str(tmp_path / "e"), str(tmp_path / "a"))
    assert result.returncode == 0 and result.stdout.startswith("0 changes")
    assert store.run_ids() == [] and not store.ratings.path.exists()


REAL_BOOKTEST = Path(__file__).parents[1] / "fixtures" / "booktest_project"


def test_a_real_booktest_projects_diffs_are_triaged_and_accepted_into_its_books(run_cli, tmp_path):
    """The books and their .out were written by booktest 1.1.6 itself (see the fixture's README)."""
    import shutil

    project = tmp_path / "project"
    shutil.copytree(REAL_BOOKTEST, project)
    books, out = project / "books", project / "books" / ".out"
    (tmp_path / "hilbot.toml").write_text(
        "[triage]\naudit_share = 0.0\nrelative_tolerance = 0.01\n"
    )
    report = run_cli("triage", str(books), str(out), "-u", cwd=tmp_path)
    assert report.returncode == 1, report.stderr
    lines = report.stdout.splitlines()
    prefix = "test/report_test.py/"
    assert lines[:4] == [
        f"{prefix}test_answer.md - UNSURE (local: the text changed (local rules cannot judge it)) "
        "→ to a human",
        f"{prefix}test_format.md - ACCEPT (local: identical once whitespace is normalised) → "
        "accepted by rule",
        f"{prefix}test_latency.md - UNSURE (local: added (local rules do not judge added or "
        "removed outputs)) → to a human",
        f"{prefix}test_metrics.md - RECOMMEND ACCEPT (local: only numbers changed, all 1 within "
        "tolerance) → to a human",
    ]
    assert f"wrote 1 expected file(s): {prefix}test_format.md" in lines
    assert (books / prefix / "test_format.md").read_text() == (
        out / prefix / "test_format.md"
    ).read_text()
    assert (
        "precision: 0.851  ≈ within tolerance"
        in run_cli("triage", str(books), str(out), "-v", cwd=tmp_path).stdout
    )
    reviewed = run_cli("triage", str(books), str(out), "-i", input="aaa", cwd=tmp_path)
    assert reviewed.returncode == 0, (
        reviewed.stdout
    )  # every change accepted: nothing rejected or waiting
    for name in ("test_answer.md", "test_format.md", "test_latency.md", "test_metrics.md"):
        assert (books / prefix / name).read_text() == (out / prefix / name).read_text(), name
    assert run_cli("triage", str(books), str(out), cwd=tmp_path).stdout.startswith("0 changes")


def test_a_local_model_triages_through_the_openai_compatible_provider(
    openai_api, store, tmp_path, monkeypatch
):
    from tests.fakes.openai_api import answer

    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    config.llm.provider, config.llm.model = "openai-compatible", "qwen2.5:7b-instruct"
    config.triage.audit_share = 0.0
    openai_api.queue(
        answer(
            **{**ANSWER, "category": 5, "confidence": 0.99, "summary": "only the timestamp moved"}
        )
    )
    rows = tmp_path / "changes.jsonl"
    rows.write_text(
        json.dumps(
            {"id": "t1", "name": "report", "expected": "at 10:00\nok\n", "actual": "at 10:05\nok\n"}
        )
        + "\n"
    )
    outcome = run_triage(store, config, [str(rows)], judge="llm")
    [t] = outcome.changes
    assert (t.triage.label, t.triage.judge, t.decision.outcome) == (
        "ACCEPT",
        "openai-compatible/qwen2.5:7b-instruct",
        "accepted",
    )
    [body] = openai_api.requests
    assert (
        body["model"] == "qwen2.5:7b-instruct" and body["response_format"]["type"] == "json_schema"
    )
    assert "+at 10:05" in body["messages"][-1]["content"]


REPORT_TEST = '''"""Reports of the retrieval pipeline, checked on the golden queries."""
import booktest as bt


def test_answer(t: bt.TestCaseRun):
    """The capital of France is answered from the retrieved page."""
    t.tln("answer: Lyon")
'''


def _prompt_text(body: dict) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_a_booktest_tests_docstrings_are_its_purpose_in_the_prompt_and_on_the_card(
    run_cli, fake, tmp_path
):
    import shutil

    project = tmp_path / "project"
    shutil.copytree(REAL_BOOKTEST, project)
    (project / "test" / "report_test.py").write_text(REPORT_TEST)
    books, out = project / "books", project / "books" / ".out"
    (tmp_path / "hilbot.toml").write_text(
        '[triage]\naudit_share = 0.0\n[llm]\nmodel = "claude-test"\n'
    )
    judged = run_cli("triage", str(books), str(out), "--judge", "llm", cwd=tmp_path)
    assert judged.returncode == 1, judged.stderr
    [prompt] = [p for p in map(_prompt_text, fake.requests) if "test_answer.md" in p]
    assert (
        "Purpose: The capital of France is answered from the retrieved page.\n\n"
        "Reports of the retrieval pipeline, checked on the golden queries." in prompt
    )
    shown = run_cli("triage", str(books), str(out), "-i", input="q", cwd=tmp_path)
    assert (
        "  purpose: The capital of France is answered from the retrieved page. Reports of the "
        "retrieval pipeline, checked on the golden queries." in shown.stdout
    ), shown.stdout


def _decisions(store) -> list[dict]:
    return [
        r
        for r in map(json.loads, store.ratings.path.read_text().splitlines())
        if r["type"] == "triage_decision"
    ]


def test_a_change_a_human_decided_is_decided_again_by_precedent_not_asked(run_cli, store, tmp_path):
    from datetime import datetime, timezone

    expected, actual = write_trees(
        tmp_path, {"test/words.md": ("answer: Paris\n", "answer: Lyon\n")}
    )
    (tmp_path / "hilbot.toml").write_text("[triage]\naudit_share = 0.0\n")
    decided = run_cli(
        "triage", str(expected), str(actual), "-i", "--reviewer", "alice", input="r\n"
    )
    assert decided.returncode == 1 and "REJECTED by a human" in decided.stdout, decided.stderr
    write_trees(tmp_path, {"test/other.md": ("x: 1\n", "x: one\n")})  # another change comes
    again = run_cli("triage", str(expected), str(actual))
    today = datetime.now(timezone.utc).date().isoformat()
    lines = again.stdout.splitlines()
    assert again.returncode == 1 and lines[0].endswith("→ to a human")
    assert lines[1] == (
        "test/words.md - UNSURE (local: the text changed (local rules cannot judge it)) → "
        f"rejected by alice on {today} — same change"
    )
    assert "(1 as a human decided before)" in lines[-1]
    second = _decisions(store)[-2:]
    assert [(d["change_id"], d["outcome"]) for d in second] == [
        ("test/other.md", "human"),
        ("test/words.md", "rejected"),
    ]
    assert second[1]["rule"] == f"precedent: rejected by alice on {today} — same change"
    assert [i.id for i in store.load_run(second[1]["run_id"]).items] == ["test/other.md"]
    (actual / "test" / "words.md").write_text("answer: Marseille\n")  # a different change
    third = run_cli("triage", str(expected), str(actual)).stdout.splitlines()
    assert third[1].startswith("test/words.md - UNSURE") and third[1].endswith("→ to a human")


def test_between_runs_an_output_a_human_rejected_that_comes_back_is_rejected_by_precedent(
    store, tmp_path
):
    from bot import Action, ReviewEngine
    from evaluation import Reviewer

    config = load_config(None)
    config.triage.audit_share = 0.0
    _answer_run(store, "r1", {"q1": "Paris", "q2": "blue"})
    _answer_run(store, "r2", {"q1": "Lyon", "q2": "red"})
    first = run_triage(store, config, ["r1", "r2"])
    session = ReviewEngine(store, config).session(
        first.run_id, Reviewer(platform="telegram", id="42", name="Bob"), "change"
    )
    session.start()
    session.act(Action("rate", "reject", item_id="q1"))
    _answer_run(store, "r3", {"q1": "Lyon", "q2": "green"})
    again = run_triage(store, config, ["r1", "r3"])
    decided = {t.change.path: (t.decision.outcome, t.decision.rule) for t in again.changes}
    assert decided["core/q1"][0] == "rejected"
    assert decided["core/q1"][1].startswith("precedent: rejected by Bob on ")
    assert decided["core/q2"][0] == "human"


def test_triaging_unchanged_trees_again_reuses_the_open_run(run_cli, store, tmp_path):
    expected, actual = _trees(tmp_path)
    (tmp_path / "hilbot.toml").write_text("[triage]\naudit_share = 0.0\n")
    first = run_cli("triage", str(expected), str(actual))
    [run_id] = store.run_ids()
    again = run_cli("triage", str(expected), str(actual))
    assert again.returncode == 1 and store.run_ids() == [run_id]
    assert f"unchanged since triage run {run_id} (reused" in again.stdout.splitlines()[-1]
    assert again.stdout.splitlines()[:-1] == first.stdout.splitlines()[:-1]
    assert len(_decisions(store)) == 4  # each change recorded once
    listed = run_cli("review", "--list").stdout
    assert listed.count("triage") == 1, listed
    reviewed = run_cli("triage", str(expected), str(actual), "-i", "--reviewer", "ann", input="aa")
    assert store.run_ids() == [run_id] and "ACCEPTED by a human" in reviewed.stdout
    (actual / "test" / "words.md").write_text("answer: Nice\n")
    run_cli("triage", str(expected), str(actual))
    assert len(store.run_ids()) == 2  # the trees changed: a new triage


def test_r_asks_the_llm_to_review_a_locally_triaged_change_on_demand(
    run_cli, fake, store, tmp_path
):
    expected, actual = write_trees(
        tmp_path, {"sentiment.md": ("negative: 0.10\n", "negative: 0.45\n")}
    )
    (tmp_path / "hilbot.toml").write_text(
        '[triage]\naudit_share = 0.0\n[llm]\nmodel = "claude-test"\n'
    )
    fake.queue(tool(**{**ANSWER, "category": 2, "confidence": 0.9}))
    asked = run_cli("triage", str(expected), str(actual), "-i", input="Rq")
    assert asked.returncode == 1, asked.stderr  # still waiting: R decides nothing
    assert "UNSURE (local: only numbers changed, 1 of 1 beyond tolerance)" in asked.stdout
    assert "[R] AI review" in asked.stdout  # the card names the key
    assert "AI review (confidence: 0.90, by anthropic/claude-test):" in asked.stdout
    assert (
        "Category: RECOMMEND FAIL" in asked.stdout
        and "line 2: negative 0.10 -> 0.45" in asked.stdout
    )
    assert len(fake.requests) == 1 and "rating" not in store.ratings.path.read_text()
    again = run_cli("triage", str(expected), str(actual), "-i", input="iq")  # i: the same review
    assert "AI review (confidence: 0.90, by anthropic/claude-test):" in again.stdout
    assert len(fake.requests) == 1  # from the cache


def test_the_ai_review_stays_local_when_no_model_can_be_asked(run_cli, fake, tmp_path):
    expected, actual = write_trees(tmp_path, {"a.md": ("answer: Paris\n", "answer: Lyon\n")})
    (tmp_path / "hilbot.toml").write_text("[triage]\naudit_share = 0.0\n")
    no_key = run_cli(
        "triage", str(expected), str(actual), "-i", input="Rq", env={"ANTHROPIC_API_KEY": None}
    )
    assert "AI review (confidence: 0.00, by local):" in no_key.stdout
    assert "local rules only: no model's review — no ANTHROPIC_API_KEY" in no_key.stdout
    (tmp_path / "hilbot.toml").write_text("[triage]\naudit_share = 0.0\nllm_on_request = false\n")
    off = run_cli("triage", str(expected), str(actual), "-i", input="Rq")
    assert "AI review (confidence: 0.00, by local):" in off.stdout
    assert "llm_on_request" in off.stdout and fake.requests == []
