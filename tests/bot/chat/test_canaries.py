"""No secret leaves the process, whichever way: canaries sent down every path, sought in every form.

The environment holds canary secrets (an Anthropic key, a Telegram bot token, a Slack bot token and
signing secret, a custom ``FOO_API_KEY``, a proxy URL with a password). Each path out of the process
is made to carry them in every encoding one can take (``tests/_canary.py``): a command's stdout (a
triage report quoting a server's answer) and stderr (an error, a third-party logger's warning), the
files under the data dir, a Telegram bot's messages, edits, answers and photo captions, and a Slack
bot's messages, edits, ephemeral answers, modals, App Home and file titles. Then everything that
went out — every request the fake platforms received, the streams, the log lines, the files — is
searched for every encoding of every canary.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evaluation import ItemData, Query, QueryEvaluation, RunHeader, Store, scrub
from evaluation.records import Evaluation
from tests.auxil.canary import CANARIES, leaks, planted, secret_values
from tests.auxil.cli import BUG, invoke
from tests.chat_drivers import ALICE, BOB, GROUP
from tests.fakes.anthropic_api import FakeAnthropic, schema_responder

SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_KEY", "_PASSWD")


@pytest.fixture(autouse=True)
def canaries(monkeypatch):
    """The environment holds the canaries and no other secret; local servers bypass the proxy."""
    for name in list(os.environ):
        if name.upper().endswith(SECRET_SUFFIXES) or "://" in os.environ[name]:
            monkeypatch.delenv(name)
    for name, value in CANARIES.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def one_line(value: str) -> str:
    """Every encoding of ``value`` on one line (a report line, a log line, a card's title)."""
    return " | ".join(planted(value).splitlines())


def everything() -> str:
    """Every encoding of every canary."""
    return "\n".join(planted(value) for value in secret_values())


def leaked_anywhere(*texts: str) -> list[tuple[str, str]]:
    return leaks("\n".join(texts))


# ------------------------------------------------------------------------------------ a command


def _answering_with_canaries(body: dict[str, Any]) -> Any:
    """A model's answer whose every text quotes every canary (and the request's headers); a library
    logs them as it answers."""
    logging.getLogger("vendor.sdk").warning("answering with %s", everything())
    reply = schema_responder(body)
    quoted = " | ".join(map(one_line, secret_values()))
    fields = {
        name: quoted if isinstance(value, str) else value
        for name, value in (reply.tool_input or {}).items()
    }
    return replace(reply, tool_input=fields, echo_headers=True)


def _trees(root: Path) -> list[str]:
    for side, text in (("books", "answer: Paris\n"), ("out", "answer: Lyon\n")):
        (root / side).mkdir()
        (root / side / "capital.md").write_text(text)
    return [str(root / "books"), str(root / "out")]


def test_a_commands_stdout_stderr_log_lines_and_files_carry_no_canary(tmp_path):
    (tmp_path / "hilbot.toml").write_text('[llm]\nmodel = "m-test"\nmax_retries = 0\n')
    with FakeAnthropic(responder=_answering_with_canaries) as fake:
        env = {
            "ANTHROPIC_BASE_URL": fake.base_url,
            "HILBOT_DATA_DIR": str(tmp_path / "results"),
            "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"),
        }
        report = invoke("triage", *_trees(tmp_path), "--judge", "llm", "-v", env=env, cwd=tmp_path)
        failing = invoke("triage", one_line(CANARIES["FOO_API_KEY"]), "out", env=env, cwd=tmp_path)
        assert len(fake.requests) == 1
    assert report.exit_code in (0, 1) and BUG not in report.stderr, report
    assert "[secret]" in report.stdout and "warning: answering with" in report.stderr  # scrubbed
    assert failing.exit_code == 2 and failing.stderr.startswith("error: ")
    assert "[secret]" in failing.stderr
    files = [path for path in (tmp_path / "results").rglob("*") if path.is_file()]
    assert any(path.name == "llm-calls.jsonl" for path in files)
    stored = [path.read_bytes().decode("utf-8", "replace") for path in files]
    streams = [report.stdout, report.stderr, failing.stdout, failing.stderr]
    assert leaked_anywhere(*streams, *stored) == []


# ------------------------------------------------------------------------------------ the chats


def canary_run(store: Store) -> None:
    """A search run whose items' query, answer and AI rationale quote canaries; one for a group."""
    values = secret_values()
    answer = "\n".join(map(one_line, values))
    for run_id in ("leak", "leak-group"):
        items = [
            ItemData(
                id=f"q{n}",
                query=Query(query=one_line(value)),
                answer=answer,
                evaluation=Evaluation(
                    verdict="okay", scores={"overall": 0.7}, rationale=one_line(value)
                ),
            )
            for n, value in enumerate(values)
        ]
        evaluations = [QueryEvaluation(run_id=run_id, data=item) for item in items]
        store.create_run(RunHeader(run_id=run_id, kind="search"), evaluations)


async def review_with_canaries(driver: Any) -> None:
    """A card, View full, a rating and its revealed verdict, a group's private reveal."""
    _, card = await driver.command(ALICE, "review", "leak", replies=2)
    await driver.tap(ALICE, card, "View full")
    await driver.settle()
    await driver.tap(ALICE, driver.now(card), "okay")
    _, shared = await driver.command(ALICE, "review", "leak-group", chat=GROUP, replies=2)
    await driver.tap(BOB, shared, "poor", chat=GROUP)
    await driver.settle()


@pytest.fixture
def logs(capsys):
    """Every logger at DEBUG to stderr through the scrubbing formatter (as ``serve -v``); yields a
    reader of what was logged."""
    undo = scrub.install_logging(logging.DEBUG)
    yield lambda: capsys.readouterr().err
    undo()


async def test_a_telegram_bot_sends_no_canary(tmp_path, store, logs):
    from tests.chat_drivers.telegram import IDS, TelegramDriver
    from tests.fakes.telegram_api import FakeTelegram

    canary_run(store)
    fake = FakeTelegram(token=CANARIES["TELEGRAM_BOT_TOKEN"], limits=None)
    with TelegramDriver(tmp_path, fake) as driver:
        async with driver.bot(store):
            await review_with_canaries(driver)
            port = driver.bot_object.port
            chat = await port.private_chat(str(IDS[ALICE]))
            for value in secret_values():
                await port.send_file(chat, PNG, "chart.png", one_line(value)[:900])
                await port.send_text(chat, planted(value), code=True)
        sent = [json.dumps(call.params, default=repr) for call in fake.calls]
    assert len(fake.photos) == len(secret_values()) and any("[secret]" in text for text in sent)
    assert leaked_anywhere(*sent, logs()) == []


async def test_a_slack_bot_sends_no_canary(tmp_path, store, logs):
    from bot.channels.slack import render
    from tests.chat_drivers.slack import IDS, SlackDriver
    from tests.fakes.slack_api import FakeSlack

    canary_run(store)
    fake = FakeSlack(
        bot_token=CANARIES["SLACK_BOT_TOKEN"],
        limits=None,
        signing_secret=CANARIES["SLACK_SIGNING_SECRET"],
    )
    with SlackDriver(tmp_path, fake, mode="http") as driver:
        async with driver.bot(store):
            await review_with_canaries(driver)
            port = driver.bot_object.port
            chat = await port.private_chat(IDS[ALICE])
            rows = [(one_line(value), "Start", "leak|overall") for value in secret_values()]
            home = render.home_view(rows, one_line(CANARIES["FOO_API_KEY"]))
            await port.publish_home(IDS[ALICE], home)
            for value in secret_values():
                await port.send_file(chat, PNG, "chart.png", one_line(value))
                await port.send_text(chat, planted(value))
        assert fake.home(IDS[ALICE]) and len(fake.uploads) == len(secret_values())
        assert fake.ephemerals(IDS[GROUP])
        assert [v for v in fake.views if v.get("callback_id") == "hilbot_full"]
        sent = [json.dumps(call.params, default=repr) for call in fake.calls]
        sent += [json.dumps(r["params"]) for r in fake.responses]
        sent += [d.body or "" for d in fake.deliveries]
        learned = scrub.scrub(fake.verification_token)  # learned from the payloads
    assert any("[secret]" in text for text in sent) and learned == scrub.MARK
    assert leaked_anywhere(*sent, logs()) == []


PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 8 + (1).to_bytes(4, "big") * 2 + b"\0" * 16
"""The smallest thing the fakes take for a chart."""
