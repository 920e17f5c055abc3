"""Hostile logs and options in ``analyze``, ``export``, ``digest`` and ``compare``.

Every failure a user can provoke is one line on stderr with exit code 2 (never the backstop's
"bug in hilbot"); a bad line of a log is a ``warning: file:line: reason`` and the rest is used;
no command changes a byte of the logs it reads; text from files reaches the terminal only
through :func:`evaluation.text.visible`.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from bot.demo import RAG_RUN, SEARCH_RUN, build_demo
from evaluation import Rating, Reviewer, Store
from tests.auxil.cli import BUG, invoke

READERS = [
    ("export", SEARCH_RUN),
    ("export", SEARCH_RUN, "--format", "csv"),
    ("digest",),
    ("analyze", "validate"),
    ("analyze", "agreement", "--bootstrap", "20"),
    ("analyze", "calibration"),
    ("analyze", "correlate", "--feature", "query_words"),
    ("analyze", "patterns"),
    ("analyze", "synthesize"),
]
"""Every command that reads ratings.jsonl (synthesize also appends one review_summary)."""
MARKDOWN = [
    ("digest",),
    ("review", "--list"),
    ("compare", SEARCH_RUN, RAG_RUN),
    ("analyze", "validate"),
    ("analyze", "agreement", "--bootstrap", "20"),
    ("analyze", "calibration", "--by", "dimension,category,source_type,judge,prompt_hash,run_id"),
    ("analyze", "correlate", "--feature", "query_words"),
    ("analyze", "patterns"),
    ("analyze", "synthesize"),
]
"""Every human-readable output of these commands."""
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\r")
"""Characters that must never reach a terminal raw (click strips only whole CSI sequences
itself)."""


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data directory with the demo runs, every search item rated by alice and bob."""
    store = Store(tmp_path / "results")
    build_demo(store)
    items = store.load_run(SEARCH_RUN).items
    store.ratings.append_many(
        Rating(
            run_id=SEARCH_RUN,
            item_id=item.id,
            reviewer=Reviewer(id=who),
            judgment=judgment,
            score=score,
            concerns=["bad_ranking"] if score < 0.5 else [],
            idempotency_key=f"{who}-{n}",
        )
        for who in ("alice", "bob")
        for n, item in enumerate(items)
        for judgment, score in [("okay", 0.7) if (n + len(who)) % 3 else ("poor", 0.4)]
    )
    return tmp_path / "results"


def run(data: Path, *args: str):
    return invoke(
        *args,
        env={"HILBOT_DATA_DIR": str(data), "USER": "tester", "HILBOT_CONFIG": None},
        cwd=data.parent,
    )


def append(data: Path, *lines: str | dict) -> int:
    """Append raw lines to ratings.jsonl; returns the number of the first one."""
    path = data / "ratings.jsonl"
    first = len(path.read_bytes().splitlines()) + 1
    with open(path, "a", encoding="utf-8", errors="surrogatepass") as handle:
        for line in lines:
            handle.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return first


def rating(**fields) -> dict:
    """A valid rating line of the search run by a third reviewer, with ``fields`` replaced."""
    base = {
        "type": "rating",
        "run_id": SEARCH_RUN,
        "item_id": "q01",
        "dimension": "overall",
        "reviewer": {"platform": "terminal", "id": "zed"},
        "channel": "terminal",
        "idempotency_key": f"zed-{sorted(fields.items())!r}",
        "timestamp": "2026-03-01T10:00:00Z",
        "judgment": "good",
        "score": 1.0,
    }
    return {**base, **fields}


def snapshot(data: Path) -> dict[str, bytes]:
    """Every file of the data directory but the log's columnar index (``cache/index``: derived from
    the log, kept up to date by every command that reads it)."""
    index = data / "cache" / "index"
    return {
        str(p): p.read_bytes()
        for p in sorted(data.rglob("*"))
        if p.is_file() and index not in p.parents
    }


def one_line_error(outcome, *words: str) -> str:
    assert outcome.exit_code == 2, (outcome.exit_code, outcome.stderr)
    assert BUG not in outcome.stderr and "Traceback" not in outcome.stderr, outcome.stderr
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), outcome.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def succeeded(outcome, command: tuple = ()) -> None:
    """Exit 0 (``analyze validate`` exits 1 when its report lists schema errors), and no bug."""
    assert outcome.exit_code in ((0, 1) if command[-1:] == ("validate",) else (0,)), outcome.stderr
    assert BUG not in outcome.stderr and "Traceback" not in outcome.stderr, outcome.stderr
    assert "Warning:" not in outcome.stderr, outcome.stderr  # no Python warning reaches the user


def warnings_about(outcome, path: Path) -> list[str]:
    """The ``warning: file:line: …`` lines about ``path``."""
    return [line for line in outcome.stderr.splitlines() if line.startswith(f"warning: {path}:")]


# --------------------------------------------------------------------------- timestamps


@pytest.mark.parametrize("stamp", ["2026-03-01", "2026-03-01T10:00:00", "2026-03-01 10:00:00.5"])
def test_a_naive_timestamp_is_utc_everywhere(data, stamp):
    append(data, rating(timestamp=stamp))
    for command in READERS[:3] + [("analyze", "patterns")]:
        outcome = run(data, *command)
        succeeded(outcome)
        assert not warnings_about(outcome, data / "ratings.jsonl"), outcome.stderr
    labels = json.loads(run(data, "export", SEARCH_RUN, "--reviewer", "terminal:zed").stdout)[
        "labels"
    ]
    assert [label["timestamp"][:10] for label in labels] == ["2026-03-01"]
    assert labels[0]["timestamp"].endswith("+00:00")


@pytest.mark.parametrize(
    "stamp",
    [
        "9999-01-01T00:00:00Z",
        "0001-01-01T00:00:00Z",
        "1969-12-31T23:59:59Z",
        "2201-01-01T00:00:00Z",
        "2262-06-01T00:00:00Z",
        "1600-01-01T00:00:00Z",
        "2250-01-01T00:00:00+05:00",
        10**12 * 1000,
    ],
)
@pytest.mark.parametrize(
    "command",
    [
        ("export", SEARCH_RUN),
        ("analyze", "patterns"),
        ("digest",),
        ("analyze", "agreement", "--bootstrap", "0"),
    ],
)
def test_a_timestamp_out_of_range_is_a_bad_line(data, stamp, command):
    line = append(data, rating(timestamp=stamp))
    before = snapshot(data)
    outcome = run(data, *command)
    succeeded(outcome)
    assert [w.split(": ", 3)[1:3] for w in warnings_about(outcome, data / "ratings.jsonl")] == [
        [f"{data / 'ratings.jsonl'}:{line}", "timestamp"]
    ], outcome.stderr
    assert snapshot(data) == before


# --------------------------------------------------------------------------- bad lines are reported


BAD_LINES = [
    '{"type": "note", "run_id": "%s", "item_id": "q01", "reviewer": {"id": "alice"}, '
    '"idempotency_key": "n1", "text": "\\ud800"}' % SEARCH_RUN,
    '{"type": "note", "run_id": "%s", "item_id": "q01", "reviewer": {"id": "alice"}, '
    '"idempotency_key": "n2", "text": NaN}' % SEARCH_RUN,
    json.dumps(rating(score="x")),
    json.dumps(rating(reviewer=5)),
    json.dumps(rating(concerns={})),
    json.dumps({"type": "who-knows"}),
    json.dumps(rating(score=10.0**300)),
    "[1, 2]",
    "{not json",
]


@pytest.mark.parametrize("command", READERS + [("review", "--list")])
def test_every_reader_warns_about_each_bad_line_and_uses_the_rest(data, command):
    first = append(data, *BAD_LINES)
    before = snapshot(data)
    outcome = run(data, *command)
    expected = list(range(first, first + len(BAD_LINES)))
    if command[-1] == "validate":  # its report lists them, and it exits 1 on schema errors
        assert outcome.exit_code == 1 and not outcome.stderr
        assert all(f"{data / 'ratings.jsonl'}:{n}: " in outcome.stdout for n in expected)
    else:
        succeeded(outcome)
        warned = warnings_about(outcome, data / "ratings.jsonl")
        assert [int(w.split(":")[2]) for w in warned] == expected, outcome.stderr
    assert outcome.stdout.strip()
    if command[-1] != "synthesize":
        assert snapshot(data) == before


def test_export_still_exports_the_good_lines(data):
    append(data, *BAD_LINES)
    outcome = run(data, "export", SEARCH_RUN, "--format", "csv")
    assert len(outcome.stdout.strip().splitlines()) == 1 + 2 * 18


@pytest.mark.parametrize(
    "command",
    [
        ("compare", SEARCH_RUN, RAG_RUN),
        ("export", SEARCH_RUN),
        ("digest",),
        ("analyze", "patterns"),
    ],
)
def test_bad_lines_of_run_files_are_reported(data, command):
    path = data / "runs" / f"{SEARCH_RUN}.jsonl"
    with open(path, "a") as handle:
        handle.write('{"type": "query_evaluation", "run_id": "x", "data": {"id": 5}}\n')
    line = len(path.read_bytes().splitlines())
    outcome = run(data, *command)
    succeeded(outcome)
    assert [w.split(": ")[1] for w in warnings_about(outcome, path)] == [f"{path}:{line}"], (
        outcome.stderr
    )


# --------------------------------------------------------------------------- hostile but parseable


HOSTILE = [
    rating(run_id="ghost", item_id="nope"),
    rating(item_id="nope"),
    rating(dimension="made-up"),
    rating(judgment="x" * 10_000),
    rating(note="n" * 1_000_000),
    {**rating(), "timestamp": None} | {"idempotency_key": "no-time"},
    {k: v for k, v in rating(idempotency_key="absent-time").items() if k != "timestamp"},
    {
        "type": "note",
        "run_id": SEARCH_RUN,
        "item_id": "q02",
        "reviewer": {"id": "alice"},
        "idempotency_key": "big",
        "text": "y" * 1_000_000,
    },
    {
        "type": "skip",
        "run_id": "ghost",
        "item_id": "g",
        "reviewer": {"id": "alice"},
        "idempotency_key": "gs",
    },
    {"type": "review_summary", "run_id": "ghost", "queriesReviewed": 10**30},
    {
        "type": "delivery",
        "run_id": SEARCH_RUN,
        "item_id": "q01",
        "reviewer": {"id": "alice"},
        "channel": "telegram",
        "chat_id": "1",
        "message_id": "2",
        "timestamp": "3000-01-01T00:00:00Z",
    },
]


@pytest.mark.parametrize("command", READERS + [("review", "--list")])
def test_hostile_but_parseable_lines_never_crash(data, command):
    append(data, *HOSTILE)
    succeeded(run(data, *command), command)


def _rewrite_run(data: Path, run_id: str, edit) -> None:
    path = data / "runs" / f"{run_id}.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in edit(records)))


RUN_EDITS = {
    "no header": lambda records: records[1:],
    "header only": lambda records: records[:1],
    "empty file": lambda records: [],
    "no items": lambda records: [records[0], records[-1]],
    "naive and odd times": lambda records: [
        {**r, "created_at": "2026-01-01T00:00:00"}
        if r["type"] == "run_header"
        else {**r, "finished_at": "2026-01-01"}
        if r["type"] == "run_summary"
        else r
        for r in records
    ],
    "scores out of range": lambda records: [
        {
            **r,
            "data": {
                **r["data"],
                "evaluation": {
                    **r["data"]["evaluation"],
                    "scores": {"overall": 1e308, "relevance": -5},
                },
            },
        }
        if r["type"] == "query_evaluation"
        else r
        for r in records
    ],
    "odd features": lambda records: [
        {
            **r,
            "data": {
                **r["data"],
                "features": {"query_words": 10**30, "source_type": 5, "x": [1]},
                "evaluation": {**r["data"]["evaluation"], "confidence": "sure"},
            },
        }
        if r["type"] == "query_evaluation"
        else r
        for r in records
    ],
}


@pytest.mark.parametrize("edit", sorted(RUN_EDITS))
@pytest.mark.parametrize(
    "command", READERS + [("compare", SEARCH_RUN, RAG_RUN), ("review", "--list")]
)
def test_odd_run_files_never_crash(data, edit, command):
    _rewrite_run(data, SEARCH_RUN, RUN_EDITS[edit])
    outcome = run(data, *command)
    if (
        outcome.exit_code == 2
    ):  # only a precise reason: e.g. no ratings to synthesize, no such feature
        one_line_error(outcome)
    else:
        succeeded(outcome, command)


def test_synthesize_a_run_file_without_a_header(data):
    _rewrite_run(data, SEARCH_RUN, RUN_EDITS["no header"])
    outcome = run(data, "analyze", "synthesize", "--run", SEARCH_RUN)
    succeeded(outcome)
    assert outcome.stdout.startswith(f"# Review summary: {SEARCH_RUN} · overall")


def test_patterns_over_centuries_of_daily_windows_is_one_line(data):
    append(
        data,
        rating(timestamp="1970-01-01T00:00:00Z"),
        rating(item_id="q02", timestamp="2200-12-31T00:00:00Z"),
    )
    one_line_error(
        run(data, "analyze", "patterns", "--window-days", "1"), "drift windows", "--window-days 85"
    )
    succeeded(run(data, "analyze", "patterns", "--window-days", "85"))


def test_patterns_leaves_ratings_without_a_time_out_of_the_drift_only(data):
    append(data, {k: v for k, v in rating().items() if k != "timestamp"})
    outcome = run(data, "analyze", "patterns", "--format", "json")
    succeeded(outcome)
    [dimension] = json.loads(outcome.stdout)["dimensions"]
    # patterns counts gold labels, one per item (18); q01's latest label is the one without a time,
    # so its gold label has none: it counts in the item total and is left out of the drift windows
    # only
    assert dimension["n"] == 18 and sum(w["n"] for w in dimension["drift"]) == 17


# ------------------------------------------------------------------------ files that cannot be read


def _fifo(path: Path) -> None:
    """A FIFO at ``path``; a thread opens its write end for a while, so a blocked reader sees EOF
    instead of hanging."""
    os.mkfifo(path)

    def unblock() -> None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                time.sleep(0.05)

    threading.Thread(target=unblock, daemon=True).start()


def _ratings_directory(data: Path) -> str:
    (data / "ratings.jsonl").unlink()
    (data / "ratings.jsonl").mkdir()
    return "directory"


def _ratings_fifo(data: Path) -> str:
    (data / "ratings.jsonl").unlink()
    _fifo(data / "ratings.jsonl")
    return "not a regular file"


def _data_dir_is_a_file(data: Path) -> str:
    import shutil

    shutil.rmtree(data)
    data.write_text("not a directory")
    return str(data)


def _run_directory(data: Path) -> str:
    path = data / "runs" / f"{SEARCH_RUN}.jsonl"
    path.unlink()
    path.mkdir()
    return "directory"


def _run_fifo(data: Path) -> str:
    path = data / "runs" / f"{SEARCH_RUN}.jsonl"
    path.unlink()
    _fifo(path)
    return "not a regular file"


UNREADABLE = {
    "ratings.jsonl is a directory": _ratings_directory,
    "ratings.jsonl is a FIFO": _ratings_fifo,
    "the data dir is a file": _data_dir_is_a_file,
    "a run file is a directory": _run_directory,
    "a run file is a FIFO": _run_fifo,
}


@pytest.mark.parametrize("case", sorted(UNREADABLE))
@pytest.mark.parametrize("command", READERS + [("compare", SEARCH_RUN, RAG_RUN)])
def test_a_log_that_cannot_be_read_is_one_line(data, case, command):
    word = UNREADABLE[case](data)
    outcome = run(data, *command)
    if case.startswith("ratings.jsonl") and command[0] == "compare":
        succeeded(outcome)  # compares runs only
    elif case == "the data dir is a file" and command[0] in ("export", "compare"):
        one_line_error(outcome, "no run")  # there are no runs at all
    else:
        one_line_error(outcome, word)


@pytest.mark.parametrize("command", READERS)
def test_a_ratings_log_without_permission_is_one_line(data, command, monkeypatch):
    """Permission denied (simulated at the OS call: the tests may run as root, which chmod 000 does
    not stop)."""
    import builtins

    denied = str(data / "ratings.jsonl")
    real_open, real_os_open = builtins.open, os.open

    def os_open(path, *args, **kwargs):
        if os.fspath(path) == denied:
            raise PermissionError(13, "Permission denied", denied)
        return real_os_open(path, *args, **kwargs)

    def open_(path, *args, **kwargs):
        if isinstance(path, (str, os.PathLike)) and os.fspath(path) == denied:
            raise PermissionError(13, "Permission denied", denied)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", open_)
    one_line_error(run(data, *command), "permission denied", denied)


# --------------------------------------------------------------------------- no ratings


@pytest.mark.parametrize(
    "command",
    [
        ("agreement",),
        ("calibration",),
        ("correlate", "--feature", "query_words"),
        ("patterns",),
        ("validate",),
    ],
)
def test_reports_and_charts_of_no_ratings(data, command):
    (data / "ratings.jsonl").unlink()
    outcome = run(data, "analyze", *command, "--out", str(data.parent / "reports"))
    succeeded(outcome)
    assert "wrote" in outcome.stderr
    assert all(p.stat().st_size for p in (data.parent / "reports").iterdir())


# --------------------------------------------------------------------------- numeric options


@pytest.mark.parametrize(
    "args, option",
    [
        (("analyze", "agreement", "--bootstrap", "-1"), "--bootstrap"),
        (("analyze", "agreement", "--bootstrap", "100000000000"), "--bootstrap"),
        (("analyze", "agreement", "--seed", "-1"), "--seed"),
        (("analyze", "agreement", "--seed", str(2**70)), "--seed"),
        (("analyze", "correlate", "--feature", "query_words", "--buckets", "0"), "--buckets"),
        (
            ("analyze", "correlate", "--feature", "query_words", "--buckets", "1000000000"),
            "--buckets",
        ),
        (("analyze", "patterns", "--window-days", "0"), "--window-days"),
        (("analyze", "patterns", "--window-days", "-3"), "--window-days"),
        (("analyze", "patterns", "--window-days", "100000000"), "--window-days"),
        (("digest", "--since-hours", "nan"), "--since-hours"),
        (("digest", "--since-hours", "inf"), "--since-hours"),
        (("digest", "--since-hours", "-inf"), "--since-hours"),
        (("digest", "--since-hours", "-1"), "--since-hours"),
        (("digest", "--since-hours", "1e308"), "--since-hours"),
    ],
)
def test_a_numeric_option_out_of_range_is_one_line(data, args, option):
    before = snapshot(data)
    line = one_line_error(run(data, *args), option, " to ")
    assert snapshot(data) == before
    assert "range" in line or "from" in line


@pytest.mark.parametrize(
    "args",
    [
        ("analyze", "agreement", "--bootstrap", "0", "--seed", str(2**32 - 1)),
        ("analyze", "correlate", "--feature", "query_words", "--buckets", "100"),
        ("analyze", "patterns", "--window-days", "3650"),
        ("digest", "--since-hours", "0"),
        ("digest", "--since-hours", "876000"),
    ],
)
def test_numeric_options_at_their_limits_work(data, args):
    succeeded(run(data, *args))


# ------------------------------------------------------------------ text from files is shown safely


HOSTILE_TEXT = "\x1b]0;pwned\x07\x9b2J\u202eevil\r $\\frac{$"
"""Escape sequences, a bidi override, a carriage return, and mathtext a chart would try to
typeset."""


def _plant_hostile_text(data: Path) -> None:
    def edit(records):
        for record in records:
            if record["type"] == "run_header":
                record.update(set="set" + HOSTILE_TEXT, label="label" + HOSTILE_TEXT)
            elif record["type"] == "query_evaluation":
                record["data"]["query"].update(
                    query="query" + HOSTILE_TEXT, category="cat" + HOSTILE_TEXT
                )
                record["data"]["features"]["source_type"] = "src" + HOSTILE_TEXT
                record["data"]["evaluation"]["verdict"] = "FAIL" + HOSTILE_TEXT
            yield record

    _rewrite_run(data, SEARCH_RUN, edit)
    _rewrite_run(
        data,
        RAG_RUN,
        lambda records: [
            {
                **r,
                "data": {
                    **r["data"],
                    "ground_truth_contexts": [{"text": "ctx" + HOSTILE_TEXT}],
                    "id": "id" + HOSTILE_TEXT,
                },
            }
            if r["type"] == "query_evaluation"
            else r
            for r in records
        ],
    )
    evil = {"platform": "terminal", "id": "eve" + HOSTILE_TEXT, "name": HOSTILE_TEXT}
    append(
        data,
        *[
            rating(
                item_id=f"q{n:02d}",
                reviewer=evil,
                score=0.0,
                judgment="terrible" + HOSTILE_TEXT,
                concerns=["tag" + HOSTILE_TEXT],
                note="note" + HOSTILE_TEXT,
                dimension="overall" if n % 2 else "dim" + HOSTILE_TEXT,
                metadata={"source_type": "src" + HOSTILE_TEXT},
            )
            for n in range(1, 19)
        ],
    )
    append(
        data,
        rating(run_id="run" + HOSTILE_TEXT, idempotency_key="evil-run"),
        {
            "type": "note",
            "run_id": SEARCH_RUN,
            "item_id": "q01",
            "reviewer": evil,
            "idempotency_key": "evil-note",
            "text": "note" + HOSTILE_TEXT,
        },
        '{"type": "rating\\u001b]0;x\\u0007\\u202e", "run_id": 1}',
    )


@pytest.mark.parametrize("command", MARKDOWN)
def test_text_from_files_never_reaches_the_terminal_raw(data, command):
    _plant_hostile_text(data)
    outcome = run(data, *command)
    succeeded(outcome, command)
    for char in RAW:
        assert char not in outcome.stdout, (char, outcome.stdout)
        if command[0] != "review":  # its warnings are printed by bot/cli/_common.py:warn_issues
            assert char not in outcome.stderr, (char, outcome.stderr)


@pytest.mark.parametrize(
    "command",
    [
        ("digest",),
        ("analyze", "agreement", "--bootstrap", "0"),
        ("analyze", "calibration"),
        ("analyze", "patterns"),
    ],
)
def test_charts_draw_text_from_files_as_text(data, command):
    _plant_hostile_text(data)
    outcome = run(data, *command, "--out", str(data.parent / "charts"))
    succeeded(outcome, command)
    assert all(
        p.read_bytes().startswith(b"\x89PNG") for p in (data.parent / "charts").glob("*.png")
    )


def test_data_outputs_stay_exact(data):
    _plant_hostile_text(data)
    exported = json.loads(
        run(data, "export", SEARCH_RUN, "--reviewer", "terminal:eve" + HOSTILE_TEXT).stdout
    )
    assert {line for label in exported["labels"] for line in label["notes"].split("\n")} == {
        "note" + HOSTILE_TEXT
    }
    compared = json.loads(run(data, "compare", SEARCH_RUN, RAG_RUN, "--format", "json").stdout)
    assert compared["profiles"][0]["label"] == "label" + HOSTILE_TEXT


def test_regression_lines_show_queries_safely():
    from evaluation.regressions import QueryRegression, RegressionReport

    report = RegressionReport(
        "new", "old", [QueryRegression("q1", "query" + HOSTILE_TEXT, 0.9, 0.2)]
    )
    [line] = report.lines()
    assert "query" in line and not any(char in line for char in RAW)
