"""End to end: `hilbot review` in a real pseudo-terminal, driven key by key."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pexpect
import pytest

from bot.demo import build_demo
from evaluation import Store
from tests.conftest import HILBOT, SEARCH_RUN

QUESTION = "How did the search do"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    build_demo(Store(tmp_path / "results"))
    return tmp_path / "results"


def _spawn(data_dir: Path, *args: str) -> pexpect.spawn:
    env = {**os.environ, "HILBOT_DATA_DIR": str(data_dir), "TERM": "dumb", "NO_COLOR": "1"}
    child = pexpect.spawn(
        str(HILBOT),
        ["review", SEARCH_RUN, "--reviewer", "alice", *args],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(60, 140),
    )
    child.expect(QUESTION)
    return child


def _ratings(data_dir: Path) -> list[dict]:
    path = data_dir / "ratings.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_keystrokes_land_in_ratings_jsonl(data_dir):
    child = _spawn(data_dir)
    child.send("o")  # okay → follow-up: concern tags
    child.expect("Concerns")
    assert len(_ratings(data_dir)) == 1  # on disk before the follow-up is drawn
    child.send("1")  # toggle the first tag
    child.expect("✓ missing_key_result")
    child.send("n")
    child.expect("note>")
    child.sendline("misses the v2 migration guide")
    child.expect("Concerns")
    child.send("\r")  # next
    child.expect(QUESTION)
    child.send("v")  # view full response, then the card again
    child.expect("QUERY:")
    child.expect(QUESTION)
    child.send("g")
    child.expect("recorded: good")
    child.expect(QUESTION)
    child.send("s")  # skip (stored now), then why? (enter skips only a card up for 1.5 s)
    child.expect(r"Why\?")
    child.send("\r")  # no reason
    child.expect(QUESTION)
    child.send("q")
    child.expect("Session summary")
    child.expect(r"reviewed 2 · skipped 1 · flagged 1 · human average 0\.85")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    events = _ratings(data_dir)
    # at the end: the run's synthesis, then the session's summary carrying it
    assert [e["type"] for e in events] == [
        "rating",
        "rating",
        "note",
        "rating",
        "skip",
        "review_summary",
        "review_summary",
    ]
    assert events[-2].get("reviewer") is None and events[-1]["synthesis"] == events[-2]["synthesis"]
    assert events[1]["concerns"] == ["missing_key_result"] and events[1]["judgment"] == "okay"
    assert events[2]["text"] == "misses the v2 migration guide"
    assert (
        events[3]["judgment"] == "good"
        and events[3]["score"] == 1.0
        and events[3]["ai_verdict_shown"] is False
    )
    assert events[5]["queriesReviewed"] == 2 and events[5]["queriesSkipped"] == 1


def test_each_key_is_durable_before_the_next_card(data_dir):
    child = _spawn(data_dir)
    for count in range(1, 4):
        child.send("g")
        child.expect(QUESTION)  # the next card is drawn only after the append returned
        assert len(_ratings(data_dir)) == count
    child.kill(signal.SIGKILL)  # crash: nothing more is needed to keep the three ratings
    child.close()
    assert [e["judgment"] for e in _ratings(data_dir)] == ["good"] * 3


def test_ctrl_c_saves_and_prints_the_summary_and_resume_continues(data_dir):
    child = _spawn(data_dir)
    child.send("p")
    child.expect("Concerns")
    child.sendintr()
    child.expect("Session summary")
    child.expect("reviewed 1 · skipped 0")
    child.expect(pexpect.EOF)
    child.close()
    first = _ratings(data_dir)[0]["item_id"]
    child = _spawn(data_dir)  # a new session resumes at the next item
    assert "[2/18]" in child.before
    child.send("q")
    child.expect(pexpect.EOF)
    assert _ratings(data_dir)[0]["item_id"] == first


def test_review_reads_keys_from_a_pipe_too(data_dir, run_cli):
    result = run_cli(
        "review",
        SEARCH_RUN,
        "--reviewer",
        "bob",
        input="gt\r",
        env={"HILBOT_DATA_DIR": str(data_dir)},
    )
    assert result.returncode == 0, result.stderr
    events = _ratings(data_dir)
    assert [(e["type"], e.get("judgment")) for e in events[:2]] == [
        ("rating", "good"),
        ("rating", "terrible"),
    ]
    assert "Session summary" in result.stdout


def test_rag_answers_use_the_four_buttons_and_show_tool_captures(tmp_path):
    data_dir = tmp_path / "results"
    build_demo(Store(data_dir))
    env = {**os.environ, "HILBOT_DATA_DIR": str(data_dir), "TERM": "dumb"}
    child = pexpect.spawn(
        str(HILBOT),
        ["review", "demo-rag-answers", "--reviewer", "carol"],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(60, 140),
    )
    child.expect("How good is this")
    assert "Response:" in child.before
    child.expect(r"\[q\]uit & save")
    child.send("x")
    child.expect("TOOL CAPTURES:|No tool captures.")
    child.expect("How good is this")  # the card comes back after the view
    child.send("m")  # ✗ Miss → concern tags
    child.expect("hallucination")
    child.send("1")
    child.expect("✓ hallucination")
    child.send("q")
    child.expect("Session summary")
    child.expect(pexpect.EOF)
    events = [json.loads(line) for line in (data_dir / "ratings.jsonl").read_text().splitlines()]
    assert [(e["judgment"], e["concerns"]) for e in events if e["type"] == "rating"] == [
        ("miss", []),
        ("miss", ["hallucination"]),
    ]


def test_a_rating_changed_to_good_drops_its_concern_tags(data_dir):
    """Okay with a tag, then good: "recorded: good  concerns: …" on an option that takes none."""
    child = _spawn(data_dir)
    child.send("o")
    child.expect("Concerns")
    child.send("1")
    child.expect("✓ missing_key_result")
    child.send("g")  # the scale is on the follow-up card: change the rating
    child.expect(r"recorded: good([^\r\n]*)")
    shown = child.match.group(1)
    assert "concerns" not in shown and "missing_key_result" not in shown, shown
    child.expect(QUESTION)
    child.send("q")
    child.expect(r"reviewed 1 · skipped 0 · flagged 0")
    child.expect(pexpect.EOF)
    latest = [e for e in _ratings(data_dir) if e["type"] == "rating"][-1]
    assert (latest["judgment"], latest["concerns"], latest["concerns_dropped"]) == (
        "good",
        [],
        ["missing_key_result"],
    )


def test_the_sessions_end_shows_the_synthesis_and_its_action_items(data_dir):
    """The end said one line; the synthesis and its action items were only in the log."""
    child = _spawn(data_dir)
    child.send("p")
    child.expect("Concerns")
    child.send("2")
    child.expect("✓ bad_ranking")
    child.send("q")
    child.expect("Session summary")
    child.expect(r"reviewed 1 · skipped 0 · flagged 1")
    child.expect(r"Synthesis of every review of this run so far \(statistical, no LLM\):")
    child.expect(r"1 ratings of 1 items by 1 reviewer\(s\)")
    child.expect("Action items:")
    child.expect(r"1\. Address bad_ranking: flagged in 1 rating\(s\)")
    child.expect(pexpect.EOF)
    stored = [e for e in _ratings(data_dir) if e["type"] == "review_summary"][-1]
    assert stored["actionItems"][0] == "Address bad_ranking: flagged in 1 rating(s)"


def test_a_change_runs_summary_says_what_was_decided_and_how_to_write_it(data_dir, tmp_path):
    """A triage run's session ended with "reviewed 2 · … human − AI …" and no word of --apply."""
    import shlex
    import subprocess

    from evaluation import load_config
    from evaluation.triage_run import run_triage

    trees = {"books": "answer: Paris", "out": "answer: Lyon"}
    for side, answer in trees.items():
        (tmp_path / side / "t").mkdir(parents=True)
        for name in ("a", "b", "c"):
            (tmp_path / side / "t" / f"{name}.md").write_text(f"{answer} {name}\n")
    store = Store(data_dir)
    run_id = run_triage(
        store, load_config(None), [str(tmp_path / "books"), str(tmp_path / "out")]
    ).run_id
    env = {**os.environ, "HILBOT_DATA_DIR": str(data_dir), "TERM": "dumb", "NO_COLOR": "1"}
    child = pexpect.spawn(
        str(HILBOT),
        ["review", run_id, "--reviewer", "alice"],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(60, 140),
        cwd=str(tmp_path),
    )
    for key in ("a", "r"):
        child.expect(r"\[a\] ✓ Accept")
        child.send(key)
        if key == "r":
            child.expect("Concerns")
    child.send("q")
    child.expect("Session summary")
    child.expect(r"accepted 1 · rejected 1 · skipped 0 · left 1")
    child.expect("Write the accepted changes into the snapshots with:")
    child.expect(r"\n  ([^\r\n]*triage --apply [^\r\n]*)\r?\n")
    command = child.match.group(1).strip()
    child.expect(pexpect.EOF)
    assert "human − AI" not in child.before
    assert command.endswith(f"triage --apply {run_id}"), command
    bare = {k: v for k, v in env.items() if k != "HILBOT_DATA_DIR"}  # runs as printed
    applied = subprocess.run(
        shlex.split(command), cwd=tmp_path, capture_output=True, text=True, timeout=60, env=bare
    )
    assert applied.returncode == 0, applied.stderr
    assert "wrote 1 expected file(s)" in applied.stdout and "1 changes still wait" in applied.stdout
    books = (tmp_path / "books" / "t").iterdir()
    assert len([p for p in books if "Lyon" in p.read_text()]) == 1


# --------------------------------------------------------------------------- hostile item text

HOSTILE = "\x1b]0;T\x07\x1b[2J\x1b[31m\x1b[8m\x9b1m\u202e\u2066\rX[b]B[/b][link=http://x]L[/link]"
"""Set the title, clear, recolour, hide, a one-byte CSI, bidi overrides, an overwrite, rich
markup."""
SHOWN = "␛]0;T␇␛[2J␛[31m␛[8m<U+009B>1m<U+202E><U+2066>"
"""How the start of HOSTILE must reach the reviewer."""
FIELDS = [
    "query",
    "intent",
    "category",
    "expected",
    "path",
    "title",
    "snippet",
    "answer",
    "context",
    "truth",
    "tool",
    "tool_input",
    "tool_output",
    "rationale",
    "verdict",
    "judge",
    "score",
    "confidence",
]


def hostile_run(store: Store, run_id: str = "evil") -> None:
    from evaluation import Evaluation, ItemData, Query, QueryEvaluation, RunHeader, SearchResult

    h = {name: f"{name}:{HOSTILE}" for name in FIELDS}
    item = ItemData(
        id="i1",
        query=Query(
            query=h["query"], intent=h["intent"], category=h["category"], expected=[h["expected"]]
        ),
        results=[
            SearchResult(rank=1, path=h["path"], title=h["title"], snippet=h["snippet"], score=0.5)
        ],
        answer=h["answer"],
        contexts=[h["context"]],
        ground_truth=[h["truth"]],
        tool_captures=[{"tool": h["tool"], "input": h["tool_input"], "output": h["tool_output"]}],
        evaluation=Evaluation(
            scores={h["score"]: 0.5, "overall": 0.5},
            verdict=h["verdict"],
            confidence=h["confidence"],
            rationale=h["rationale"],
            judge=h["judge"].replace("/", ""),
        ),  # "a/b" would read as "AI"
    )
    plain = ItemData(id="i2", query=Query(query="plain"), answer="fine")
    store.create_run(
        RunHeader(run_id=run_id, kind="search"),
        [QueryEvaluation(run_id=run_id, data=d) for d in (item, plain)],
    )


def assert_nothing_raw(output: str, fields: list[str] = FIELDS) -> None:
    for raw in ("\x1b", "\x07", "\x9b", "\u202e", "\u2066"):
        assert raw not in output, f"{raw!r} reached the terminal"
    missing = [name for name in fields if f"{name}:{SHOWN}" not in output]
    assert not missing, f"not shown (visibly): {missing}"
    assert (
        "X[b]B[/b][link=http://x]L[/link]" in output
    )  # markup in item text is text, never interpreted


def test_control_sequences_in_item_text_never_reach_the_terminal_raw(tmp_path):
    from tests.auxil.cli import invoke

    hostile_run(Store(tmp_path / "results"))
    keys = (
        "vxo1\rq"  # view full, view tools, rate okay (the AI is revealed), toggle a tag, next, quit
    )
    result = invoke(
        "review",
        "evil",
        "--reviewer",
        "mallory\x1b[2J\u202e",
        input=keys,
        env={"HILBOT_DATA_DIR": str(tmp_path / "results"), "COLUMNS": "1000"},
        cwd=tmp_path,
    )
    assert result.exit_code == 0, result.stderr
    assert_nothing_raw(result.stdout + result.stderr)
    assert (
        "\r" not in result.stdout
    )  # the overwrite is shown as ␍, or folded into a space on a clipped card line
    assert "X␍X" not in result.stdout and "␍X[b]" in result.stdout
    assert "reviewer: mallory␛[2J<U+202E>" in result.stdout


def test_control_sequences_in_a_real_terminal(tmp_path):
    import io

    data_dir = tmp_path / "results"
    hostile_run(Store(data_dir))
    env = {**os.environ, "HILBOT_DATA_DIR": str(data_dir), "TERM": "dumb", "NO_COLOR": "1"}
    child = pexpect.spawn(
        str(HILBOT),
        ["review", "evil", "--reviewer", "alice"],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(60, 1000),
    )
    child.logfile_read = transcript = io.StringIO()
    child.expect(QUESTION)
    child.send("o")  # okay: the AI verdict and rationale are revealed
    child.expect("Concerns")
    child.send("v")  # the full view
    child.expect("REFERENCE:")
    child.expect("Concerns")
    child.send("x")  # the tool captures
    child.expect("TOOL CAPTURES:")
    child.expect("Concerns")
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert_nothing_raw(transcript.getvalue())


def test_confidence_follow_ups_and_skip_reasons_by_key(data_dir):
    env = {**os.environ, "HILBOT_DATA_DIR": str(data_dir), "TERM": "dumb", "NO_COLOR": "1"}
    child = pexpect.spawn(
        str(HILBOT),
        ["review", "demo-rag-answers", "--dimension", "code-validity", "--reviewer", "alice"],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(60, 140),
    )
    child.expect("Does the code parse and run")
    child.send("b")  # doesn't parse: how sure?
    child.expect(r"How sure are you\?")
    child.expect(r"\[h\]igh")
    assert len(_ratings(data_dir)) == 1  # the rating is on disk before the question is drawn
    child.send("l")  # low: then the issues
    child.expect(r"Which issues\?")
    child.send("1")  # toggle the first issue
    child.expect("✓ syntax error")
    child.send("o")  # another one, typed
    child.expect("answer>")
    child.sendline("calls a removed API")
    child.expect(r"Which issues\?")
    child.send("\r")  # done: the concern tags of a broken answer
    child.expect("Concerns")
    child.send("\r")  # next item
    child.expect("Does the code parse and run")
    child.send("s")  # skip: why?
    child.expect("⏭ skipped")
    child.expect(r"Why\?")
    child.send("3")  # broken item
    child.expect("Does the code parse and run")
    child.send("q")
    child.expect("Session summary")
    child.expect("reviewed 1 · skipped 1")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    events = _ratings(data_dir)
    ratings = [e for e in events if e["type"] == "rating"]
    assert [(r.get("confidence"), r["labels"].get("code_issues")) for r in ratings] == [
        (None, None),
        ("low", None),
        ("low", ["syntax error"]),
        ("low", ["syntax error", "calls a removed API"]),
    ]
    assert [e.get("skip_reason") for e in events if e["type"] == "skip"] == [None, "broken item"]


# ------------------------------------------------------------------------- what a card shows (§2)


def _review(data_dir: Path, run_id: str, dimension: str, columns: int = 100) -> pexpect.spawn:
    """``hilbot review RUN --dimension D`` in a terminal ``columns`` wide, at its first card."""
    from evaluation import load_config

    env = {**os.environ, "HILBOT_DATA_DIR": str(data_dir), "TERM": "dumb", "NO_COLOR": "1"}
    child = pexpect.spawn(
        str(HILBOT),
        ["review", run_id, "--dimension", dimension, "--reviewer", "alice"],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(60, columns),
    )
    child.expect(str(load_config(None).scale_for(dimension).question))
    return child


def _quit(child: pexpect.spawn) -> None:
    child.send("q")
    child.expect("Session summary")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_code_answer_keeps_its_lines_and_its_code_is_indented_and_never_wrapped(data_dir):
    """Issue 26 §2.4: the answer was folded into one line, its code with it."""
    from tests.auxil.items import CODE, code_run

    code_run(Store(data_dir))
    child = _review(data_dir, "code-answers", "code-validity", columns=100)
    card = child.before.replace("\r\n", "\n")
    assert '"Make this retry on errors: …"' in card  # the title: a query's first line
    assert "  Query:\n  Make this retry on errors:\n      return call()\n" in card, card
    assert "  Add a retry:\n  wrap the call in a loop.\n" in card, card
    indent = " " * 6
    for line in CODE.splitlines()[:3] + CODE.splitlines()[4:]:
        assert f"\n{indent}{line}\n" in card, (line, card)  # as written, indented
    long_line = next(line for line in card.splitlines() if "return call()  # z" in line)
    assert len(long_line) <= 100 and long_line.endswith("…")  # cut, not wrapped
    assert "END-OF-LINE" not in card and "v shows them whole" in card
    assert "  Then run it." in card and "```" not in card
    child.send("v")  # the full view: every line whole
    child.expect("END-OF-LINE")
    _quit(child)


def test_a_scenario_card_shows_the_plugin_the_component_and_what_was_expected(data_dir):
    """Issue 26 §2.5: the blind protocol's "shown" list, and nothing of the judge's view."""
    from tests.auxil.items import RATIONALE, plugin_scenarios

    plugin_scenarios(Store(data_dir))
    child = _review(data_dir, "plugin-scenarios", "trigger-accuracy")
    card = child.before.replace("\r\n", "\n")
    assert "plugin: commit-commands  ·  component: /commit  ·  component type: command" in card
    assert "plugin description: Git commit helpers: stage, write the message, commit" in card
    order = [
        "Can you commit my changes",
        "plugin: commit-commands",
        "Expected:",
        "Command /commit should trigger",
        "Tool captures:",
        "- Bash: git add -A",
        "Response:",
        "I'll commit your changes with that message.\n  [main 1a2b3c] fix login bug",
    ]
    places = [card.find(text) for text in order]
    assert -1 not in places and places == sorted(places), (places, card)
    assert "maturity" not in card and RATIONALE not in card and "PASS" not in card
    _quit(child)


# --------------------------------------------------------------------------- keys that never shift


def test_a_stray_enter_after_a_rating_that_moved_on_skips_nothing_and_u_takes_a_skip_back(
    data_dir,
):
    import time

    child = _spawn(data_dir)
    child.send("g\r")  # good moves on at once; the enter typed after it lands on the next card
    child.expect("enter skips a card after 1.5 s on screen; s skips now")
    assert [e["type"] for e in _ratings(data_dir)] == ["rating"]  # nothing skipped
    time.sleep(1.6)  # read: now enter skips
    child.send("\r")
    child.expect(r"Why\?")
    skipped = _ratings(data_dir)[-1]
    assert skipped["type"] == "skip"
    child.send("\r")  # no reason: the next card offers to take the skip back
    child.expect(r"\[u\]ndo skip")
    child.expect(QUESTION)
    child.send("u")
    child.expect(r"\[2/18\]")  # the skipped card again
    child.expect(QUESTION)
    child.send("o")
    child.expect("Concerns")
    child.send("q")
    child.expect(r"reviewed 2 · skipped 0")
    child.expect(pexpect.EOF)
    events = _ratings(data_dir)
    judged = [(e["type"], e["item_id"]) for e in events if e["type"] in ("rating", "skip")]
    assert judged[1:] == [("skip", skipped["item_id"]), ("rating", skipped["item_id"])]


def _spawn_on(data_dir: Path, dimension: str, question: str) -> pexpect.spawn:
    env = {**os.environ, "HILBOT_DATA_DIR": str(data_dir), "TERM": "dumb", "NO_COLOR": "1"}
    child = pexpect.spawn(
        str(HILBOT),
        ["review", "demo-rag-answers", "--dimension", dimension, "--reviewer", "alice"],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(60, 140),
    )
    child.expect(question)
    child.expect(r"\[q\]uit & save")
    return child


def test_n_is_the_note_on_the_trigger_scale_too_and_no_shows_its_own_key(data_dir):
    child = _spawn_on(data_dir, "trigger-accuracy", "Did the correct component trigger")
    assert "[y]es, correct  [o] No, wrong component" in child.before
    assert "[n]ote only  [s]kip" in child.before and "[x] Tool captures" in child.before
    child.send("n")
    child.expect("note>")
    child.sendline("no captures to go by")
    child.expect("Did the correct component trigger")
    child.send("o")  # No: how sure, then what triggered instead
    child.expect(r"How sure are you\?")
    child.send("h")
    child.expect(r"What triggered instead\?")
    child.send("1")  # nothing triggered
    child.expect("Concerns")
    child.send("q")
    child.expect(pexpect.EOF)
    events = _ratings(data_dir)
    assert [(e["type"], e.get("skip_reason")) for e in events[:2]] == [
        ("note", None),
        ("skip", "note only"),
    ]
    latest = [e for e in events if e["type"] == "rating"][-1]
    assert (latest["judgment"], latest["confidence"]) == ("no", "high")
    assert latest["labels"]["trigger_component_observed"] == "nothing triggered"


def test_the_guide_key_shows_what_each_label_means_and_when_to_skip(data_dir):
    child = _spawn_on(data_dir, "code-validity", "Does the code parse and run")
    child.send("?")
    child.expect(r"r  Parses and runs — PARSES and RUNS")
    child.expect(r"b  Doesn't parse — Does not PARSE")
    child.expect(r"s  Skip — The response holds no code")
    child.expect(r"how sure are you\? High, medium or low")
    child.send("q")
    child.expect(pexpect.EOF)
    assert _ratings(data_dir)[-1]["type"] == "review_summary"
