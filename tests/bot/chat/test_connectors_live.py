"""Round trips and faults: items in from a tool's stand-in, ratings tapped in a chat, labels out.

Each stand-in speaks its tool's public API (inspect_ai: real log files written by inspect_ai). The
bot is the real chat core over the Telegram fake, with a ``[sinks.out]`` in hilbot.toml, so the
labels go out from the bot's own rounds; what arrives is checked on the stand-in's side: the values,
one label per rating however often it is sent, and the queue items completed.

The faults run ``hilbot serve telegram`` as a process against the Telegram fake and the Langfuse
stand-in: the stand-in down for a while and back (4 s; ``HILBOT_OUTAGE_S=60`` for a minute), the
bot SIGKILLed with pushes pending, a storm of 429s. Afterwards every acknowledged rating is on the
remote side exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from evaluation import Store, load_config
from evaluation.connectors.commands import push_command
from evaluation.connectors.pulling import pull_run
from tests.chat_drivers import ALICE, drivers
from tests.conftest import HILBOT
from tests.fakes.langfuse_api import FakeLangfuse
from tests.fakes.langsmith_api import FakeLangSmith
from tests.fakes.phoenix_api import FakePhoenix
from tests.fakes.telegram_api import FakeTelegram, Limits

RUN = "live"
TAPS = ("⭐ Excellent", "✓ Good")
"""What the reviewer taps on the first and the second card: neither asks concern tags."""


@dataclass
class Stand:
    """A tool's stand-in with two items to review."""

    tool: str
    settings: dict[str, Any]
    """The source's settings."""
    env: dict[str, str]
    """Its keys and host."""
    remote: Callable[[], list[str]]
    """The human labels it holds, as the judgments they carry (one entry per label)."""
    completed: Callable[[], int] = lambda: -1
    """Queue items marked done (-1: the tool has no queue)."""
    sink_toml: str = ""
    """More settings of the sink."""


@contextmanager
def langfuse(tmp_path: Path) -> Iterator[Stand]:
    with FakeLangfuse() as lf:
        lf.add_queue("q1", "Support QA")
        items = []
        for n in (1, 2):
            lf.add_trace(
                f"t{n}", name="qa", input={"question": f"question {n}?"}, output=f"answer {n}"
            )
            items.append(lf.add_queue_item("q1", f"t{n}"))
        yield Stand(
            "langfuse",
            {"queue": "q1"},
            lf.env(),
            lambda: [str(s["value"]) for s in lf.scores("answer")],
            lambda: sum(lf.item(i)["status"] == "COMPLETED" for i in items),
        )


@contextmanager
def langsmith(tmp_path: Path) -> Iterator[Stand]:
    ls = FakeLangSmith().start()
    try:
        project = ls.add_project("support-bot")
        runs = [
            ls.add_run(project, {"question": f"question {n}?"}, {"answer": f"answer {n}"})
            for n in (1, 2)
        ]
        queue = ls.add_queue("review", runs)
        yield Stand(
            "langsmith",
            {"queue": queue},
            ls.env(),
            lambda: [str(f.get("value")) for f in ls.feedback.values() if f.get("key") == "answer"],
            lambda: 2 - len(ls.queue_run_ids(queue)),
        )
    finally:
        ls.stop()


@contextmanager
def phoenix(tmp_path: Path) -> Iterator[Stand]:
    with FakePhoenix() as phx:
        phx.add_project("support")
        for n in (1, 2):
            phx.add_span(
                "support",
                kind="LLM",
                name="qa",
                attributes={
                    "input": {"value": f"question {n}?"},
                    "output": {"value": f"answer {n}"},
                },
            )
        yield Stand(
            "phoenix",
            {"project": "support"},
            phx.env(),
            lambda: [
                a["result"]["label"]
                for a in phx.span_annotations.values()
                if a.get("annotator_kind") == "HUMAN"
            ],
        )


@contextmanager
def inspect_ai(tmp_path: Path) -> Iterator[Stand]:
    import sys

    # written by inspect_ai in a process of its own: running an eval patches asyncio's loops for
    # good
    # (nest_asyncio), which a later test of hilbot's own pull would see
    code = (
        f"from pathlib import Path; from tests.auxil.inspect_logs import run_task; "
        f"print(run_task(Path({str(tmp_path / 'logs')!r}), 'tiny_qa'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[3],
        check=True,
    )
    log = Path(done.stdout.strip().splitlines()[-1])
    out = tmp_path / "reviewed.eval"

    def remote() -> list[str]:
        if not out.exists():
            return []
        from concurrent.futures import ThreadPoolExecutor

        from inspect_ai.log import read_eval_log

        with ThreadPoolExecutor(
            1
        ) as pool:  # inspect_ai in a thread running a loop patches asyncio for good
            samples = pool.submit(read_eval_log, str(out)).result().samples or []
        return [
            str(s.scores["human_answer"].answer)
            for s in samples
            if s.scores and "human_answer" in s.scores
        ]

    yield Stand(
        "inspect_ai", {"log": str(log), "limit": 2}, {}, remote, sink_toml=f'out = "{out}"\n'
    )


STANDS = {
    "langfuse": langfuse,
    "langsmith": langsmith,
    "phoenix": phoenix,
    "inspect_ai": inspect_ai,
}


def _config(stand: Stand) -> str:
    return (
        f'[sinks.out]\ntype = "{stand.tool}"\nrate_per_s = 50\n{stand.sink_toml}'
        "[connectors]\nevery_s = 0.2\npush_budget_s = 5\n"
    )


@pytest.mark.parametrize("tool", STANDS)
async def test_items_in_ratings_in_a_chat_labels_out(
    tool: str, store: Store, tmp_path: Path, monkeypatch
) -> None:
    with STANDS[tool](tmp_path) as stand:
        for name, value in stand.env.items():
            monkeypatch.setenv(name, value)
        pulled = pull_run(store, load_config(None), tool, stand.settings, stand.env, run_id=RUN)
        assert pulled.added == 2
        with drivers()["telegram"](tmp_path) as driver:
            async with driver.bot(store, _config(stand)):
                _, card = await driver.command(ALICE, "review", RUN, replies=2)
                await driver.tap(ALICE, card, TAPS[0])
                await driver.until(lambda: len(driver.cards(ALICE)) == 2, what="the second card")
                await driver.tap(ALICE, driver.cards(ALICE)[-1], TAPS[1])
                await driver.until(
                    lambda: len(stand.remote()) == 2, timeout=20, what=f"both labels in {tool}"
                )
                config = driver.config
        assert sorted(stand.remote()) == ["excellent", "good"]
        assert stand.completed() in (-1, 2)
        again = push_command(store, config, RUN, "out", [], stand.env, seconds=5)
        assert (again.sent, again.failed) == (0, []) and len(
            stand.remote()
        ) == 2  # sent once, confirmed once


# ----------------------------------------------------------------------------------------------
# faults


ADMIN = 900
TELEGRAM_ALICE = 101


def _serve(telegram: FakeTelegram, lf: FakeLangfuse, tmp_path: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        **telegram.env(),
        **lf.env(),
        "HILBOT_DATA_DIR": str(tmp_path / "results"),
        "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"),
    }
    proc = subprocess.Popen(
        [str(HILBOT), "serve", "telegram"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    telegram.wait(
        lambda: telegram.commands or proc.poll() is not None, timeout=30, what="the bot to start"
    )
    assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
    return proc


def _ratings(tmp_path: Path) -> list[dict]:
    lines = (tmp_path / "results" / "ratings.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["type"] == "rating"]


def _on_remote_once(lf: FakeLangfuse, tmp_path: Path) -> None:
    """Every acknowledged rating's latest judgment is on the stand-in, each as exactly one score."""
    latest = {(r["item_id"], r["reviewer"]["id"]): r["judgment"] for r in _ratings(tmp_path)}
    scores = lf.scores("answer")
    assert len(scores) == len(latest) == len({s["id"] for s in scores}), (len(scores), len(latest))
    assert sorted(str(s["value"]) for s in scores) == sorted(latest.values())


def _review_all(telegram: FakeTelegram, count: int, tmp_path: Path) -> None:
    """Alice rates every item; returns once every tap is answered (so every rating is
    acknowledged)."""
    telegram.send_text(TELEGRAM_ALICE, f"/review {RUN}")
    for n in range(count):
        telegram.wait(lambda: len(_cards(telegram)) == n + 1, timeout=15, what=f"card {n + 1}")
        telegram.tap_button(
            TELEGRAM_ALICE, TELEGRAM_ALICE, _cards(telegram)[-1]["message_id"], TAPS[n % 2][:2]
        )
    telegram.wait(
        lambda: len(telegram.calls_to("answerCallbackQuery")) >= count,
        timeout=15,
        what="the answers",
    )
    assert len(_ratings(tmp_path)) == count


def _cards(telegram: FakeTelegram) -> list[dict]:
    return [m for m in telegram.messages(TELEGRAM_ALICE) if m.get("reply_markup")]


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[FakeTelegram, FakeLangfuse, Store]]:
    """The Telegram fake, the Langfuse stand-in with a queue of six traces pulled into run ``live``,
    and a hilbot.toml that pushes the labels back."""
    (tmp_path / "hilbot.toml").write_text(
        f"[telegram]\nreviewers = [{TELEGRAM_ALICE}]\nadmins = [{ADMIN}]\npoll_timeout_s = 1\n"
        "[telegram.limits]\nchat_per_s = 10\n"
        '[sinks.out]\ntype = "langfuse"\nrate_per_s = 20\n[connectors]\nevery_s = '
        "0.3\npush_budget_s = 2\n"
    )
    with FakeTelegram(limits=Limits(chat=10)) as telegram, FakeLangfuse() as lf:
        telegram.user(TELEGRAM_ALICE, first_name="Alice")
        lf.add_queue("q1")
        for n in range(6):
            lf.add_trace(f"t{n}", name="qa", input=f"question {n}?", output=f"answer {n}")
            lf.add_queue_item("q1", f"t{n}")
        store = Store(tmp_path / "results")
        pull_run(
            store,
            load_config(tmp_path / "hilbot.toml"),
            "langfuse",
            {"queue": "q1"},
            lf.env(),
            run_id=RUN,
        )
        yield telegram, lf, store


def _stop(proc: subprocess.Popen) -> str:
    """Stop the bot; what it printed."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    return proc.communicate(timeout=30)[0] or ""


OUTAGE_S = float(os.environ.get("HILBOT_OUTAGE_S", "4"))
"""How long the stand-in is down (``HILBOT_OUTAGE_S=60`` for a minute; the suite keeps it short)."""


def test_labels_tapped_while_the_tool_is_down_arrive_once_it_is_back(live, tmp_path: Path) -> None:
    telegram, lf, _ = live
    lf.outage(OUTAGE_S)
    proc = _serve(telegram, lf, tmp_path)
    try:
        _review_all(telegram, 6, tmp_path)
        assert lf.scores("answer") == []  # acknowledged, not yet out
        lf_wait(
            lf, lambda: len(lf.scores("answer")) == 6, OUTAGE_S + 30, "the labels after the outage"
        )
    finally:
        _stop(proc)
    _on_remote_once(lf, tmp_path)


def test_a_bot_killed_with_pushes_pending_sends_them_after_its_restart(
    live, tmp_path: Path
) -> None:
    telegram, lf, _ = live
    lf.outage(60.0)
    proc = _serve(telegram, lf, tmp_path)
    _review_all(telegram, 6, tmp_path)
    deadline = time.monotonic() + 15
    while (
        time.monotonic() < deadline
        and '"state":"pending"' not in (tmp_path / "results" / "ratings.jsonl").read_text()
    ):
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    lf.clear_faults()
    proc = _serve(telegram, lf, tmp_path)
    try:
        lf_wait(
            lf, lambda: len(lf.scores("answer")) == 6, 30, "the labels pending when it was killed"
        )
    finally:
        _stop(proc)
    _on_remote_once(lf, tmp_path)


def test_a_storm_of_429s_delays_the_labels_and_loses_none(live, tmp_path: Path) -> None:
    telegram, lf, _ = live
    lf.fail_next(
        429, count=12, retry_after=0.2
    )  # every call, reads and writes, until twelve are refused
    proc = _serve(telegram, lf, tmp_path)
    try:
        _review_all(telegram, 6, tmp_path)
        lf_wait(lf, lambda: len(lf.scores("answer")) == 6, 30, "the labels through the 429s")
    finally:
        _stop(proc)
    refused = [c for c in lf.requests("") if c.status == 429]
    assert len(refused) == 12  # it was refused and kept going
    _on_remote_once(lf, tmp_path)


def lf_wait(lf: FakeLangfuse, predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
