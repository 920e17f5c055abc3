"""``hilbot serve telegram`` as a user runs it: a subprocess against the local Bot API server.

Covers the one-line errors (no token, rejected token, unreachable server, bad config), a whole
review tapped through over long polling, flood limits kept with 429s enforced, and webhook mode
with its secret token.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bot.demo import RAG_RUN
from evaluation import ItemData, Query, QueryEvaluation, RunHeader
from tests.conftest import HILBOT
from tests.fakes.telegram_api import FakeTelegram, Limits

ALICE, ADMIN = 101, 900


def write_config(tmp_path: Path, extra: str = "", reviewers: list[int] | None = None) -> Path:
    path = tmp_path / "hilbot.toml"
    path.write_text(f"[telegram]\nreviewers = {reviewers or [ALICE]}\nadmins = [{ADMIN}]\npoll_timeout_s = 1\n{extra}\n")
    return path


def serve(fake: FakeTelegram, tmp_path: Path, env: dict | None = None) -> subprocess.Popen:
    """Start the bot; wait until it has registered its commands."""
    full = {**os.environ, **fake.env(), "HILBOT_DATA_DIR": str(tmp_path / "results"),
            "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"), **(env or {})}
    proc = subprocess.Popen([str(HILBOT), "serve", "telegram"], env=full, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    fake.wait(lambda: fake.commands or proc.poll() is not None, timeout=30, what="the bot to start")
    assert proc.poll() is None, proc.stdout.read()
    return proc


def stop(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=20)
    return out


def cards(fake: FakeTelegram, chat: int) -> list[dict]:
    return [m for m in fake.messages(chat) if m.get("reply_markup")]


@pytest.mark.parametrize("case", ["no token", "rejected token", "unreachable", "bad config"])
def test_startup_problems_are_one_line_with_the_fix_and_exit_2(case, run_cli, tmp_path):
    write_config(tmp_path, 'mode = "sideways"' if case == "bad config" else "")
    env = {"HILBOT_CONFIG": str(tmp_path / "hilbot.toml"), "TELEGRAM_BOT_TOKEN": "123:abc"}
    with FakeTelegram() as fake:
        env["TELEGRAM_API_URL"] = fake.api_url
        if case == "no token":
            env["TELEGRAM_BOT_TOKEN"] = ""
        if case == "unreachable":
            env["TELEGRAM_API_URL"] = "http://127.0.0.1:9"
        result = run_cli("serve", "telegram", env=env)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr
    expected = {"no token": "TELEGRAM_BOT_TOKEN is not set", "rejected token": "rejected TELEGRAM_BOT_TOKEN",
                "unreachable": "cannot reach the Bot API", "bad config": "hilbot.toml:5"}[case]
    assert expected in lines[0] and " — " in lines[0]
    assert "123:abc" not in result.stderr  # the token is never printed


def test_a_reviewer_taps_through_a_run_and_every_tap_is_in_the_log(demo_store, tmp_path):
    write_config(tmp_path)
    with FakeTelegram(limits=Limits()) as fake:
        fake.user(ALICE, first_name="Alice", username="alice")
        proc = serve(fake, tmp_path)
        try:
            fake.send_text(ALICE, f"/review {RAG_RUN}")
            for n in range(12):
                fake.wait(lambda: len(cards(fake, ALICE)) == n + 1, timeout=10, what=f"card {n + 1}")
                card = cards(fake, ALICE)[-1]
                fake.tap_button(ALICE, ALICE, card["message_id"], ["⭐", "✓ Good"][n % 2])
            fake.wait(lambda: "All done" in fake.messages(ALICE)[-1]["text"], timeout=10, what="the end of the run")
        finally:
            out = stop(proc)
    records = [json.loads(line) for line in (tmp_path / "results" / "ratings.jsonl").read_text().splitlines()]
    ratings = [r for r in records if r["type"] == "rating"]
    assert len(ratings) == 12 and len({r["item_id"] for r in ratings}) == 12
    assert [r["judgment"] for r in ratings] == ["excellent", "good"] * 6
    [summary] = [r for r in records if r["type"] == "review_summary"]
    assert summary["queriesReviewed"] == 12 and "12 rated" in fake.messages(ALICE)[-1]["text"]
    assert fake.rejected == [] and fake.token not in out


def test_flood_limits_hold_with_no_429_when_pushing_to_many(store, tmp_path):
    reviewers = list(range(1001, 1046))
    write_config(tmp_path, reviewers=reviewers)
    items = [QueryEvaluation(run_id="many", data=ItemData(id=f"q{n}", query=Query(query=f"query {n}"), answer="a")) for n in range(60)]
    store.create_run(RunHeader(run_id="many", kind="answer", dimensions=["answer"]), items)
    with FakeTelegram(limits=Limits()) as fake:
        fake.user(ADMIN, first_name="Admin")
        for uid in reviewers:
            fake.user(uid, first_name=f"R{uid}")
        proc = serve(fake, tmp_path)
        try:
            start = time.monotonic()
            fake.send_text(ADMIN, "/push many")
            fake.wait(lambda: all(cards(fake, r) for r in reviewers), timeout=20, what="a card per reviewer")
            fake.wait(lambda: "Pushed" in fake.messages(ADMIN)[-1]["text"], timeout=10, what="the push report")
            elapsed = time.monotonic() - start
        finally:
            stop(proc)
    assert fake.rejected == [] and len(fake.accepted) == 47  # 45 cards, "Pushing…" and the report
    assert 1.0 <= elapsed < 5  # more than 30 messages: the second batch waits its second
    assert "45 cards to 45 reviewers" in fake.messages(ADMIN)[-1]["text"]
    assert len({cards(fake, r)[0]["text"] for r in reviewers}) == 45  # k = 1: a different item each


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_webhook_mode_checks_the_secret_token(demo_store, tmp_path):
    port = _free_port()
    write_config(tmp_path, f'mode = "webhook"\nwebhook_url = "http://127.0.0.1:{port}/hook"\nport = {port}')
    with FakeTelegram() as fake:
        fake.user(ALICE, first_name="Alice")
        proc = serve(fake, tmp_path, env={"TELEGRAM_WEBHOOK_SECRET": "s3cret-token"})
        try:
            fake.wait(lambda: fake.calls_to("setWebhook"), timeout=10, what="setWebhook")
            params = fake.calls_to("setWebhook")[-1].params
            assert params["url"] == f"http://127.0.0.1:{port}/hook" and params["secret_token"] == "s3cret-token"
            update = {"update_id": 1, "message": {"message_id": 1, "date": int(time.time()), "text": "/start",
                      "chat": {"id": ALICE, "type": "private"}, "from": {"id": ALICE, "is_bot": False, "first_name": "Alice"},
                      "entities": [{"type": "bot_command", "offset": 0, "length": 6}]}}
            assert _post(f"http://127.0.0.1:{port}/hook", update, "wrong") == 403
            assert _post(f"http://127.0.0.1:{port}/hook", update, "s3cret-token") == 200
            fake.wait(lambda: fake.messages(ALICE), timeout=10, what="the reply to a webhook update")
            assert "Welcome" in fake.messages(ALICE)[0]["text"]
        finally:
            out = stop(proc)
    assert "s3cret-token" not in out


def _post(url: str, body: dict, secret: str) -> int:
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": secret})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
