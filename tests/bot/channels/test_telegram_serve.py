"""``hilbot serve telegram`` as a user runs it: a subprocess against the local Bot API server.

Covers the one-line errors (no token, rejected token, unreachable server, bad config), a whole
review tapped through over long polling, flood limits kept with 429s enforced, webhook mode
with its secret token, a clean stop whenever a signal comes, and ``hilbot digest --post telegram``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

from bot.demo import RAG_RUN
from evaluation import ItemData, Query, QueryEvaluation, Rating, Reviewer, RunHeader, Store
from tests.auxil.cli import BUG, invoke
from tests.conftest import HILBOT
from tests.fakes.telegram_api import FakeTelegram, Limits

ALICE, ADMIN = 101, 900


def write_config(tmp_path: Path, extra: str = "", reviewers: list[int] | None = None) -> Path:
    path = tmp_path / "hilbot.toml"
    path.write_text(
        f"[telegram]\nreviewers = {reviewers or [ALICE]}\nadmins = [{ADMIN}]\npoll_timeout_s = "
        f"1\n{extra}\n"
    )
    return path


def serve(
    fake: FakeTelegram, tmp_path: Path, env: dict | None = None, args: tuple[str, ...] = ()
) -> subprocess.Popen:
    """Start the bot (``args``: more options, such as ``-v``); wait until it has registered its
    commands."""
    full = {
        **os.environ,
        **fake.env(),
        "HILBOT_DATA_DIR": str(tmp_path / "results"),
        "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"),
        **(env or {}),
    }
    proc = subprocess.Popen(
        [str(HILBOT), "serve", "telegram", *args],
        env=full,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
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
    expected = {
        "no token": "TELEGRAM_BOT_TOKEN is not set",
        "rejected token": "rejected TELEGRAM_BOT_TOKEN",
        "unreachable": "cannot reach the Bot API",
        "bad config": "hilbot.toml:5",
    }[case]
    assert expected in lines[0] and " — " in lines[0]
    assert "123:abc" not in result.stderr  # the token is never printed


def _deactivated(fake: FakeTelegram) -> None:
    fake.fail_next(
        "getMe", 403, description=f"Forbidden: bot{fake.token} was deactivated"
    )  # echoes the token


REFUSALS = {
    "getMe 403": (_deactivated, "", "the Bot API refused getMe (403"),
    "getMe 409": (
        lambda f: f.fail_next(
            "getMe", 409, description="Conflict: terminated by other getUpdates request"
        ),
        "",
        "another program is using this bot token",
    ),
    "getMe 500": (
        lambda f: f.fail_next("getMe", 500),
        "",
        "the Bot API failed on getMe (Internal Server Error",
    ),
    "getMe 429": (
        lambda f: f.fail_next("getMe", 429, retry_after=30),
        "",
        "rate-limiting this bot",
    ),
    "getMe not JSON": (
        lambda f: f.garble_next("getMe"),
        "",
        "getMe: the answer is not the Bot API's",
    ),
    "getMe error page": (
        lambda f: f.garble_next(
            "getMe", b"<h1>\x1b[2J" + f.token.encode() + b"</h1>\n" * 5000, status=502
        ),
        "",
        "the Bot API failed on getMe (Bad Gateway",
    ),
    "getMe timeout": (
        lambda f: f.stall_next("getMe", 0.9),
        "",
        "the Bot API did not answer getMe within 0.5 s",
    ),
    "setMyCommands 400": (
        lambda f: f.fail_next("setMyCommands", 400, description="Bad Request: BOT_COMMAND_INVALID"),
        "",
        "the Bot API refused setMyCommands (400: Bot_command_invalid)",
    ),
    "deleteWebhook 403": (
        lambda f: f.fail_next("deleteWebhook", 403, description=f"Forbidden: {f.token}"),
        "",
        "the Bot API refused deleteWebhook (403",
    ),
    "deleteWebhook 409": (
        lambda f: f.fail_next("deleteWebhook", 409, description="Conflict: busy"),
        "",
        "another program is using this bot token",
    ),
    "setWebhook 400": (
        lambda f: f.fail_next(
            "setWebhook", 400, description="Bad Request: bad webhook: An HTTPS URL must be provided"
        ),
        'mode = "webhook"\nwebhook_url = "http://127.0.0.1:{port}/hook"\nport = {port}',
        "the Bot API refused setWebhook (400: Bad webhook: an https url must be provided",
    ),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_bot_api_that_refuses_the_start_is_one_line_with_the_fix(case, tmp_path):
    fault, extra, expected = REFUSALS[case]
    write_config(tmp_path, "read_timeout_s = 0.5\n" + extra.format(port=_free_port()))
    with FakeTelegram() as fake:
        fault(fake)
        env = {
            **fake.env(),
            "HILBOT_DATA_DIR": str(tmp_path / "results"),
            "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"),
        }
        result = invoke("serve", "telegram", env=env, cwd=tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (
        result.stderr
    )
    assert "Traceback" not in result.stderr and BUG not in result.stderr
    assert expected in lines[0] and " — " in lines[0], lines[0]
    assert (
        fake.token not in result.stderr + result.stdout
        and fake.token.split(":")[1] not in result.stderr
    )
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", result.stderr) and len(lines[0]) < 600


@pytest.mark.parametrize(
    "url", ["http://hilbot:pr0xy-pa55word@127.0.0.1:9", "http://127.0.0.1:9/\x1b[2J", "http://[::1"]
)
def test_a_bad_api_url_is_one_visible_line_without_its_password(url, tmp_path):
    write_config(tmp_path, "read_timeout_s = 0.5")
    env = {
        "TELEGRAM_BOT_TOKEN": "123456:TEST-TOKEN",
        "TELEGRAM_API_URL": url,
        "HILBOT_DATA_DIR": str(tmp_path / "results"),
        "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"),
    }
    result = invoke("serve", "telegram", env=env, cwd=tmp_path)
    lines = result.stderr.strip().splitlines()
    assert (
        result.exit_code == 2
        and len(lines) == 1
        and "cannot reach the Bot API" in lines[0]
        and BUG not in lines[0]
    )
    assert (
        "pr0xy-pa55word" not in result.stderr
        and "\x1b" not in result.stderr
        and "TEST-TOKEN" not in result.stderr
    )


def test_a_busy_webhook_port_is_one_line(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        write_config(
            tmp_path,
            f'mode = "webhook"\nwebhook_url = "http://127.0.0.1:{port}/hook"\nport = {port}',
        )
        with FakeTelegram() as fake:
            env = {
                **fake.env(),
                "HILBOT_DATA_DIR": str(tmp_path / "results"),
                "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"),
            }
            result = invoke("serve", "telegram", env=env, cwd=tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and BUG not in lines[0], result.stderr
    assert (
        f"cannot listen for webhook updates on 127.0.0.1:{port}" in lines[0] and " — " in lines[0]
    )


@pytest.mark.parametrize("mode", ["polling", "webhook"])
def test_verbose_output_logs_every_request_and_never_a_secret(mode, demo_store, tmp_path):
    port = _free_port()
    write_config(
        tmp_path,
        f'mode = "webhook"\nwebhook_url = "http://127.0.0.1:{port}/hook"\nport = {port}'
        if mode == "webhook"
        else "",
    )
    with FakeTelegram() as fake:
        fake.user(ALICE, first_name="Alice")
        proc = serve(
            fake, tmp_path, env={"TELEGRAM_WEBHOOK_SECRET": "s3cret-webhook-value"}, args=("-v",)
        )
        try:
            if mode == "polling":
                fake.send_text(ALICE, "/start")
                fake.wait(lambda: fake.messages(ALICE), timeout=10, what="the reply to /start")
            else:
                fake.wait(lambda: fake.calls_to("setWebhook"), timeout=10, what="setWebhook")
        finally:
            out = stop(proc)
    assert (
        re.search(r"DEBUG .*getMe", out) and "HTTP Request: POST" in out
    )  # every request is logged...
    for secret in (
        fake.token,
        quote(fake.token, safe=""),
        fake.token.split(":")[1],
        "s3cret-webhook-value",
    ):
        assert secret not in out, secret  # ...without a secret
    assert "[secret]" in out
    # -v is DEBUG for every library: python-telegram-bot's own DEBUG lines, which name the URL with
    # the token, are there, scrubbed
    assert re.search(r"^\S+ \S+ DEBUG telegram\.\S+: .*\[secret\]", out, re.M), out[:2000]


def test_a_secret_in_a_traceback_logged_by_the_error_handler_is_scrubbed(demo_store, tmp_path):
    write_config(tmp_path)
    with FakeTelegram() as fake:
        fake.user(ALICE, first_name="Alice")
        proc = serve(fake, tmp_path)
        try:
            fake.fail_next(
                "sendMessage", 400, description=f"Bad Request: chat not found for bot{fake.token}"
            )
            fake.send_text(ALICE, "/start")
            fake.wait(
                lambda: any(c.status == 400 for c in fake.calls_to("sendMessage")),
                timeout=10,
                what="the refused reply",
            )
            fake.send_text(ALICE, "/help")
            fake.wait(lambda: fake.messages(ALICE), timeout=10, what="the reply to /help")
        finally:
            out = stop(proc)
    assert (
        "Traceback" in out and "telegram.error.BadRequest: Chat not found for bot[secret]" in out
    )  # the error was logged...
    assert fake.token not in out and fake.token.split(":")[1] not in out  # ...without the token


def test_a_reviewer_taps_through_a_run_and_every_tap_is_in_the_log(demo_store, tmp_path):
    # each tap edits a card and sends the next, to one chat: at Telegram's 1 message/s a chat, 24 s
    # of pacing; the pacing itself is the flood test's, so here the bot and the fake both allow 10 a
    # second
    write_config(tmp_path, "[telegram.limits]\nchat_per_s = 10")
    with FakeTelegram(limits=Limits(chat=10)) as fake:
        fake.user(ALICE, first_name="Alice", username="alice")
        proc = serve(fake, tmp_path)
        try:
            fake.send_text(ALICE, f"/review {RAG_RUN}")
            for n in range(12):
                fake.wait(
                    lambda: len(cards(fake, ALICE)) == n + 1, timeout=10, what=f"card {n + 1}"
                )
                card = cards(fake, ALICE)[-1]
                fake.tap_button(ALICE, ALICE, card["message_id"], ["⭐", "✓ Good"][n % 2])
            fake.wait(
                lambda: "All done" in fake.messages(ALICE)[-1]["text"],
                timeout=10,
                what="the end of the run",
            )
        finally:
            out = stop(proc)
    records = [
        json.loads(line)
        for line in (tmp_path / "results" / "ratings.jsonl").read_text().splitlines()
    ]
    ratings = [r for r in records if r["type"] == "rating"]
    assert len(ratings) == 12 and len({r["item_id"] for r in ratings}) == 12
    assert [r["judgment"] for r in ratings] == ["excellent", "good"] * 6
    synthesis, summary = [
        r for r in records if r["type"] == "review_summary"
    ]  # the run's synthesis, then the session's
    assert synthesis.get("reviewer") is None and summary["synthesis"] == synthesis["synthesis"]
    assert summary["queriesReviewed"] == 12 and "12 rated" in fake.messages(ALICE)[-1]["text"]
    assert fake.rejected == [] and fake.token not in out


def test_flood_limits_hold_with_no_429_when_pushing_to_many(store, tmp_path):
    reviewers = list(range(1001, 1046))
    write_config(tmp_path, reviewers=reviewers)
    items = [
        QueryEvaluation(
            run_id="many", data=ItemData(id=f"q{n}", query=Query(query=f"query {n}"), answer="a")
        )
        for n in range(60)
    ]
    store.create_run(RunHeader(run_id="many", kind="answer", dimensions=["answer"]), items)
    with FakeTelegram(limits=Limits()) as fake:
        fake.user(ADMIN, first_name="Admin")
        for uid in reviewers:
            fake.user(uid, first_name=f"R{uid}")
        proc = serve(fake, tmp_path)
        try:
            start = time.monotonic()
            fake.send_text(ADMIN, "/push many")
            fake.wait(
                lambda: all(cards(fake, r) for r in reviewers),
                timeout=20,
                what="a card per reviewer",
            )
            fake.wait(
                lambda: "Pushed" in fake.messages(ADMIN)[-1]["text"],
                timeout=10,
                what="the push report",
            )
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
    write_config(
        tmp_path, f'mode = "webhook"\nwebhook_url = "http://127.0.0.1:{port}/hook"\nport = {port}'
    )
    with FakeTelegram() as fake:
        fake.user(ALICE, first_name="Alice")
        proc = serve(fake, tmp_path, env={"TELEGRAM_WEBHOOK_SECRET": "s3cret-token"})
        try:
            fake.wait(lambda: fake.calls_to("setWebhook"), timeout=10, what="setWebhook")
            fake.wait(
                lambda: _accepting(port), timeout=10, what="the webhook server"
            )  # it starts after setWebhook
            params = fake.calls_to("setWebhook")[-1].params
            assert (
                params["url"] == f"http://127.0.0.1:{port}/hook"
                and params["secret_token"] == "s3cret-token"
            )
            update = {
                "update_id": 1,
                "message": {
                    "message_id": 1,
                    "date": int(time.time()),
                    "text": "/start",
                    "chat": {"id": ALICE, "type": "private"},
                    "from": {"id": ALICE, "is_bot": False, "first_name": "Alice"},
                    "entities": [{"type": "bot_command", "offset": 0, "length": 6}],
                },
            }
            assert _post(f"http://127.0.0.1:{port}/hook", update, "wrong") == 403
            assert _post(f"http://127.0.0.1:{port}/hook", update, "s3cret-token") == 200
            fake.wait(
                lambda: fake.messages(ALICE), timeout=10, what="the reply to a webhook update"
            )
            assert "Welcome" in fake.messages(ALICE)[0]["text"]
        finally:
            out = stop(proc)
    assert "s3cret-token" not in out


def _accepting(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _post(url: str, body: dict, secret: str) -> int:
    request = urllib.request.Request(
        url,
        json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": secret},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


# --------------------------------------------------------------------------------- flaws (issue 11)


def _interrupted(tmp_path: Path, sig: signal.Signals, at_call: int) -> tuple[int, str, str]:
    """Start ``serve telegram``; send ``sig`` as its ``at_call``-th call to the Bot API arrives
    (held 0.2 s)."""
    tmp_path.mkdir()
    write_config(tmp_path)
    with FakeTelegram() as fake:
        fake.user(ALICE, first_name="Alice")
        proc: list[subprocess.Popen] = []
        seen: list[str] = []

        def interrupt(call) -> None:  # in the fake's thread: the bot waits on this call meanwhile
            seen.append(call.method)
            if len(seen) == at_call:
                proc[0].send_signal(sig)
                time.sleep(0.2)

        fake.on_call = interrupt
        env = {
            **os.environ,
            **fake.env(),
            "HILBOT_DATA_DIR": str(tmp_path / "results"),
            "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"),
        }
        proc.append(
            subprocess.Popen(
                [str(HILBOT), "serve", "telegram"],
                env=env,
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
        try:
            out, _ = proc[0].communicate(timeout=30)
        finally:
            proc[0].kill()
    return proc[0].returncode, out, seen[at_call - 1] if len(seen) >= at_call else "(never called)"


def test_a_signal_at_any_moment_of_the_start_stops_cleanly_with_exit_0(tmp_path):
    """§3.6: SIGTERM or Ctrl-C in the first moments exited 1 (or 2, 130, -15) with a traceback;
    stopping is always clean.

    The signal lands while the bot waits on each of its first calls (check, initialise, commands,
    webhook, first polls).
    """
    cases = [
        (1, signal.SIGTERM),
        (2, signal.SIGINT),
        (3, signal.SIGTERM),
        (4, signal.SIGINT),
        (5, signal.SIGTERM),
        (6, signal.SIGINT),
    ]
    results: dict[tuple[int, signal.Signals], tuple[int, str, str]] = {}

    def run(case: tuple[int, signal.Signals]) -> None:
        at_call, sig = case
        try:
            results[case] = _interrupted(tmp_path / f"{at_call}-{sig.name}", sig, at_call)
        except Exception as exc:  # reported below with the others
            results[case] = (-1, f"{type(exc).__name__}: {exc}", "?")

    threads = [threading.Thread(target=run, args=(case,)) for case in cases]
    for n, thread in enumerate(threads):  # three at a time: each start is mostly CPU
        thread.start()
        if n % 3 == 2:
            for started in threads[n - 2 : n + 1]:
                started.join()
    for thread in threads:
        thread.join()
    unclean = [
        f"{sig.name} during call {at_call} ({method}): exit {code}: {out.strip().splitlines()[-1:]}"
        for (at_call, sig), (code, out, method) in sorted(results.items())
        if code != 0 or "Traceback" in out
    ]
    assert len(results) == len(cases) and not unclean, "\n".join(unclean)


def test_digest_post_without_chats_fails_at_once(tmp_path):
    """§3.5: `hilbot digest --post telegram` with no chats built the whole digest (about 10 s)
    before its config error."""
    store = Store(tmp_path / "results")  # enough data that building a digest takes seconds
    reviewers = [Reviewer(platform="telegram", id=str(n)) for n in (1, 2, 3)]
    ratings = []
    for r in range(60):
        items = [
            QueryEvaluation(
                run_id=f"run{r}",
                data=ItemData(id=f"q{n}", query=Query(query=f"query {n}"), answer="a"),
            )
            for n in range(50)
        ]
        store.create_run(RunHeader(run_id=f"run{r}", kind="answer", dimensions=["answer"]), items)
        ratings += [
            Rating(
                run_id=f"run{r}",
                item_id=f"q{n}",
                dimension="answer",
                reviewer=who,
                channel="telegram",
                idempotency_key=f"telegram:{r}:{n}:{who.id}",
                judgment="good",
                score=0.75,
            )
            for n in range(50)
            for who in reviewers
        ]
    store.ratings.append_many(ratings)
    write_config(tmp_path)
    env = {
        "HILBOT_DATA_DIR": str(tmp_path / "results"),
        "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"),
        "TELEGRAM_BOT_TOKEN": "123456:TEST-TOKEN",
        "TELEGRAM_API_URL": "http://127.0.0.1:9",
    }
    start = time.monotonic()
    result = invoke("digest", "--post", "telegram", env=env, cwd=tmp_path)
    elapsed = time.monotonic() - start
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "chats" in lines[0], result.stderr
    assert elapsed < 0.5, f"{elapsed:.2f} s before: {lines[0]}"


# ----------------------------------------------------------------------- trying it without a token


def test_the_console_runs_serve_telegram_against_the_fake_and_every_tap_is_logged(demo_store):
    """What the README's "try it without a bot token" does: a review with a tag and a note, typed
    as a user would, through the console's own pty."""
    import sys

    import pexpect

    from bot.demo import SEARCH_RUN

    child = pexpect.spawn(
        sys.executable,
        ["-m", "tests.fakes.telegram_console", "--data-dir", str(demo_store.root)],
        cwd=str(Path(__file__).resolve().parents[3]),
        encoding="utf-8",
        timeout=30,
    )
    try:
        child.expect("is running")
        child.sendline(f"/review {SEARCH_RUN}")
        child.expect(r"card 1\r?\n\[1/18\]")
        child.expect(r"\[okay\]")
        child.sendline("okay")
        child.expect(r"\[bad_ranking\]")
        child.sendline("1:bad_ranking")
        child.expect(r"\[✓ bad_ranking\]")
        child.sendline("1:Add note")
        child.expect("reply to this message with your note")
        child.sendline("say Ranks the <changelog> first & misses errors.md")
        child.expect("Note saved")
        child.sendline("2:good")
        child.expect("Recorded: good")
        child.sendline("quit")
        child.expect(r"bot stopped \(exit 0\)")
    finally:
        child.close(force=True)
    records = [json.loads(line) for line in demo_store.ratings.path.read_text().splitlines()]
    judged = [(r["judgment"], r["concerns"]) for r in records if r["type"] == "rating"]
    assert judged == [("okay", []), ("okay", ["bad_ranking"]), ("good", [])]
    [note] = [r for r in records if r["type"] == "note"]
    assert note["text"] == "Ranks the <changelog> first & misses errors.md"
