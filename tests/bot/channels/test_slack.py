"""What only Slack has: signed requests, Block Kit and its limits, modals, the App Home, Slack's
429s, and `hilbot serve slack`.

The chat behaviour every platform shares (durable before acknowledged, blind until rated, forged
buttons, strangers, redelivery, restarts, push, groups, digests) is in ``tests/test_chat.py``,
which runs for Slack in Socket Mode and in HTTP mode. Here the real slack-bolt app and
slack_sdk clients run against the local fake Slack (``tests/fakes/slack_api.py``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from bot.demo import SEARCH_RUN
from evaluation import ItemData, Query, QueryEvaluation, RunHeader, Store
from tests.auxil.cli import BUG, invoke
from tests.chat_drivers import ALICE, BOB
from tests.chat_drivers.slack import IDS, SlackDriver, flatten, unescape
from tests.conftest import HILBOT
from tests.fakes.slack_api import FakeSlack, SlackLimits

HOSTILE = "<!channel> & <https://evil.example|click me> *bold* `code`"


@pytest.fixture
def slack(tmp_path):
    with SlackDriver(tmp_path) as driver:
        yield driver


@pytest.fixture
def slack_http(tmp_path):
    with SlackDriver(tmp_path, mode="http") as driver:
        yield driver


def one_item_run(store: Store, query: str, answer: str = "42", run_id: str = "one") -> None:
    item = ItemData(id="q1", query=Query(query=query), answer=answer)
    store.create_run(
        RunHeader(run_id=run_id, kind="answer", dimensions=["answer"]),
        [QueryEvaluation(run_id=run_id, data=item)],
    )


def ratings(store: Store) -> list[dict]:
    path = store.ratings.path
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [r for r in rows if r["type"] == "rating"]


# ---------------------------------------------------------------------------------------- HTTP mode


async def test_http_mode_refuses_bad_or_stale_signatures_with_401_and_writes_nothing(
    slack_http, demo_store
):
    fake = slack_http.fake
    async with slack_http.bot(demo_store):
        _, card = await slack_http.command(ALICE, "review", SEARCH_RUN, replies=2)
        good = card.datas[0]
        for forged in (dict(signature="bad"), dict(stale=True), dict(signature="none")):
            delivery = fake.click(IDS[ALICE], fake.dm(IDS[ALICE]), card.id, good, **forged)
            await delivery.wait_answered()
            assert delivery.status == 401, forged
        assert ratings(demo_store) == []
        command = fake.slash(IDS[ALICE], f"review {SEARCH_RUN}", signature="bad")
        await command.wait_answered()
        assert command.status == 401 and len(slack_http.messages(ALICE)) == 2
        delivery = fake.click(IDS[ALICE], fake.dm(IDS[ALICE]), card.id, good)
        await delivery.wait_acked()
        assert delivery.status == 200 and [r["judgment"] for r in ratings(demo_store)] == ["good"]


async def test_http_mode_a_retried_click_counts_once(slack_http, demo_store):
    fake = slack_http.fake
    async with slack_http.bot(demo_store):
        _, card = await slack_http.command(ALICE, "review", SEARCH_RUN, replies=2)
        first = fake.click(IDS[ALICE], fake.dm(IDS[ALICE]), card.id, card.datas[0])
        await first.wait_acked()
        again = fake.redeliver(first)
        await again.wait_acked()
        assert again.request_headers.get("X-Slack-Retry-Num") == "1"
        await slack_http.settle()
        assert len(ratings(demo_store)) == 1 and len(slack_http.cards(ALICE)) == 2


# ---------------------------------------------------------------------------------------- Block Kit


async def test_user_text_is_escaped_for_mrkdwn_and_cannot_mention_or_link(slack, store):
    one_item_run(store, HOSTILE, answer=HOSTILE)
    async with slack.bot(store):
        _, card = await slack.command(ALICE, "review", "one", replies=2)
        raw = slack.fake.message(slack.fake.dm(IDS[ALICE]), card.id)
        sections = [b["text"]["text"] for b in raw["blocks"] if b["type"] == "section"]
        assert not any("<!channel>" in t or "<https://" in t for t in sections)
        assert any(
            "&lt;!channel&gt; &amp; &lt;https://evil.example|click me&gt;" in t for t in sections
        )
        assert HOSTILE in card.text  # as the reviewer reads it


async def test_a_card_keeps_within_slacks_limits_and_view_full_opens_the_whole_item_in_a_modal(
    slack, store
):
    answer = "\n".join(
        f"line {n}: " + "lorem ipsum & <tag> " * 30 for n in range(200)
    )  # about 120,000 characters
    one_item_run(store, "a long answer", answer=answer)
    async with slack.bot(store):
        _, card = await slack.command(ALICE, "review", "one", replies=2)
        raw = slack.fake.message(slack.fake.dm(IDS[ALICE]), card.id)
        assert len(raw["blocks"]) <= 50 and all(
            len(b["text"]["text"]) <= 3000 for b in raw["blocks"] if b["type"] == "section"
        )
        assert (
            "View full" in card.labels and len(card.text) < 10_000
        )  # an excerpt; the rest is a click away
        await slack.tap(ALICE, card, "View full")
        await slack.until(
            lambda: [v for v in slack.fake.views if v.get("callback_id") == "hilbot_full"],
            what="the modal",
        )
        [modal] = [v for v in slack.fake.views if v.get("callback_id") == "hilbot_full"]
        assert len(modal["blocks"]) <= 100 and all(
            len(b["text"]["text"]) <= 3000 for b in modal["blocks"]
        )
        shown = flatten(modal["blocks"])
        assert "line 0: lorem ipsum & <tag>" in shown and "line 100:" in shown
        assert (
            ratings(store) == [] and len(slack.fake.messages(IDS[ALICE])) == 2
        )  # nothing stored, nothing posted


async def test_add_note_opens_a_modal_whose_submission_is_the_note(slack, demo_store):
    async with slack.bot(demo_store):
        _, card = await slack.command(ALICE, "review", SEARCH_RUN, replies=2)
        await slack.tap(ALICE, card, "okay")
        note = await slack.labelled(card, "Add note")
        click = slack.fake.click_button(IDS[ALICE], slack.fake.dm(IDS[ALICE]), note.id, "Add note")
        await click.wait_acked()
        await slack.until(lambda: slack.fake.open_views(IDS[ALICE]), what="the note modal")
        [modal] = slack.fake.open_views(IDS[ALICE])
        assert modal["callback_id"] == "hilbot_note" and any(
            b["type"] == "input" for b in modal["blocks"]
        )
        submitted = slack.fake.submit_view(
            IDS[ALICE], modal["id"], text="Misses <errors.md> & more"
        )
        await submitted.wait_acked()
        assert slack.fake.view(modal["id"])["status"] == "submitted"
        [note] = [r for r in slack.records() if r["type"] == "note"]
        assert note["text"] == "Misses <errors.md> & more"


async def test_a_direct_message_note_is_unescaped_as_typed(slack, demo_store):
    async with slack.bot(demo_store):
        _, card = await slack.command(ALICE, "review", SEARCH_RUN, replies=2)
        await slack.tap(ALICE, card, "Note only")
        await slack.until(lambda: slack.fake.open_views(IDS[ALICE]), what="the note modal")
        [modal] = slack.fake.open_views(IDS[ALICE])
        slack.fake.close_view(IDS[ALICE], modal["id"])
        event = slack.fake.message_im(
            IDS[ALICE], "a < b & c > d"
        )  # Slack escapes these three in events
        await event.wait_acked()
        await slack.until(lambda: slack.records("note"), what="the note")
        assert (
            slack.records("note")[0]["text"] == "a < b & c > d" and unescape("&amp;lt;") == "&lt;"
        )


def test_card_blocks_cut_a_body_past_fifty_blocks_and_say_so():
    from bot.cards import Card, Section
    from bot.channels.slack.render import card_blocks
    from bot.chat import Choice

    sections = tuple(Section(f"part {n}", ("x" * 2990, "é" * 3500)) for n in range(40))
    card = Card(
        run_id="r",
        item_id="i",
        dimension="d",
        title="[1/1] " + "t" * 400,
        sections=sections,
        question="Q?",
        buttons=(),
    )
    keyboard = [[Choice(f"button {n} " + "b" * 90, f"d{n}") for n in range(4)] for _ in range(4)]
    text, blocks = card_blocks(card, keyboard)
    assert (
        len(blocks) == 50
        and blocks[0]["type"] == "header"
        and len(blocks[0]["text"]["text"]) <= 150
    )
    assert all(len(b["text"]["text"]) <= 3000 for b in blocks if b["type"] == "section")
    assert any(
        "more under View full" in b["text"]["text"] for b in blocks if b["type"] == "section"
    )
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert len(buttons) == 16 and all(len(e["text"]["text"]) <= 75 for e in buttons)
    assert len({e["action_id"] for e in buttons}) == 16 and len(text) <= 300


async def test_a_command_in_a_channel_without_the_bot_is_told_privately_how_to_invite_it(
    slack, demo_store
):
    slack.fake.channel("C0OTHER", "elsewhere", members=[IDS[ALICE]], bot_member=False)
    async with slack.bot(demo_store):
        command = slack.fake.slash(IDS[ALICE], f"review {SEARCH_RUN}", channel_id="C0OTHER")
        await command.wait_acked()
        await slack.until(
            lambda: slack.fake.ephemerals("C0OTHER", IDS[ALICE]), what="the private answer"
        )
        [said] = slack.fake.ephemerals("C0OTHER", IDS[ALICE])
        assert "/invite @hilbot" in said["text"] and slack.fake.messages("C0OTHER") == []


# ----------------------------------------------------------------------------------------- App Home


async def test_app_home_lists_runs_with_progress_and_start_deals_a_card(slack, demo_store):
    async with slack.bot(demo_store):
        opened = slack.fake.open_home(IDS[ALICE])
        await opened.wait_acked()
        await slack.until(lambda: slack.fake.home(IDS[ALICE]), what="the Home tab")
        home = slack.fake.home(IDS[ALICE])
        text = flatten(home["blocks"])
        assert SEARCH_RUN in text and "0 rated" in text
        start = next(
            b["accessory"]
            for b in home["blocks"]
            if SEARCH_RUN in b.get("text", {}).get("text", "") and "accessory" in b
        )
        assert start["text"]["text"] == "Start"
        click = slack.fake.click_in_view(IDS[ALICE], home["id"], start["value"])
        await click.wait_acked()
        await slack.until(lambda: slack.cards(ALICE), what="the first card")
        await slack.tap(ALICE, slack.cards(ALICE)[0], "good")
        again = slack.fake.open_home(IDS[ALICE])
        await again.wait_acked()
        await slack.until(
            lambda: "1 rated" in flatten(slack.fake.home(IDS[ALICE])["blocks"]),
            what="the new progress",
        )
        assert "Resume" in json.dumps(slack.fake.home(IDS[ALICE])["blocks"])


async def test_a_strangers_home_says_how_to_be_added_and_lists_nothing(slack, demo_store):
    async with slack.bot(demo_store, reviewers=(BOB,)):
        await slack.fake.open_home(IDS[ALICE]).wait_acked()
        await slack.until(lambda: slack.fake.home(IDS[ALICE]), what="the Home tab")
        text = flatten(slack.fake.home(IDS[ALICE])["blocks"])
        assert (
            "not on this bot's reviewer list" in text
            and IDS[ALICE] in text
            and SEARCH_RUN not in text
        )


# ------------------------------------------------------------------------------------------- limits


async def test_posting_keeps_to_one_message_a_second_per_channel_without_a_429(
    tmp_path, demo_store
):
    with SlackDriver(tmp_path, FakeSlack(limits=SlackLimits(channel_per_s=1.0))) as slack:
        async with slack.bot(
            demo_store, "[review]\nwindow = 3\n[slack.limits]\nchannel_per_s = 1\n"
        ):
            await slack.command(
                ALICE, "review", SEARCH_RUN, replies=4
            )  # progress + 3 cards in one DM
            posts = [c for c in slack.fake.calls_to("chat.postMessage") if c.status == 200]
            gaps = [b.at - a.at for a, b in zip(posts, posts[1:])]
            assert len(posts) == 4 and min(gaps) >= 0.9, gaps
            assert slack.fake.ratelimited == []


async def test_a_429_is_waited_out_and_the_card_arrives_once(slack, demo_store):
    async with slack.bot(demo_store):
        slack.fake.fail_next(
            "chat.postMessage",
            status=429,
            retry_after=1,
            match=lambda params: "actions" in json.dumps(params.get("blocks") or ""),
        )
        await slack.command(ALICE, "review", SEARCH_RUN, replies=2)
        await slack.settle()
        refused = [c for c in slack.fake.calls_to("chat.postMessage") if c.status == 429]
        assert len(refused) == 1 and len(slack.cards(ALICE)) == 1
        assert len([d for d in slack.records("delivery") if d["kind"] == "card"]) == 1


async def test_a_click_is_acknowledged_well_inside_three_seconds(slack, demo_store):
    async with slack.bot(demo_store):
        _, card = await slack.command(ALICE, "review", SEARCH_RUN, replies=2)
        click = slack.fake.click(IDS[ALICE], slack.fake.dm(IDS[ALICE]), card.id, card.datas[0])
        await click.wait_acked()
        assert click.ack_seconds < 1.0 and click.acks == 1


# --------------------------------------------------------------------------------- the command line


def _env(fake: FakeSlack, tmp_path: Path, **over: str | None) -> dict[str, str | None]:
    env = {
        **fake.env(),
        "HILBOT_DATA_DIR": str(tmp_path / "results"),
        "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"),
    }
    return {**env, **over}


@pytest.mark.parametrize(
    "over, said",
    [
        ({"SLACK_BOT_TOKEN": None}, "SLACK_BOT_TOKEN is not set"),
        ({"SLACK_BOT_TOKEN": "not-a-token-at-all"}, "does not look like a bot token"),
        ({"SLACK_APP_TOKEN": None}, "SLACK_APP_TOKEN is not set"),
        (
            {"SLACK_BOT_TOKEN": "xoxb-rejected-by-slack-0000"},
            "Slack rejected SLACK_BOT_TOKEN (auth.test: invalid_auth)",
        ),
        ({"SLACK_APP_TOKEN": "xapp-rejected-by-slack-0000"}, "Slack rejected SLACK_APP_TOKEN"),
        ({"SLACK_API_URL": "http://127.0.0.1:9/api/"}, "cannot reach the Slack Web API"),
    ],
)
def test_serve_slack_refusals_are_one_line_with_the_fix_and_exit_2(tmp_path, over, said):
    (tmp_path / "hilbot.toml").write_text('[slack]\nreviewers = ["U0ALICE"]\n')
    with FakeSlack() as fake:
        out = invoke("serve", "slack", env=_env(fake, tmp_path, **over))
        secrets = [
            fake.bot_token,
            fake.app_token,
            fake.signing_secret,
            *(v for v in over.values() if v),
        ]
    assert out.exit_code == 2, out
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("error: ") and said in line and " — " in line, line  # what, then the fix
    assert BUG not in out.stderr and not any(
        s in out.stderr + out.stdout for s in secrets if "127.0.0.1" not in s
    )


def test_http_mode_needs_the_signing_secret(tmp_path):
    (tmp_path / "hilbot.toml").write_text('[slack]\nmode = "http"\n')
    with FakeSlack() as fake:
        out = invoke("serve", "slack", env=_env(fake, tmp_path, SLACK_SIGNING_SECRET=None))
    assert out.exit_code == 2 and "SLACK_SIGNING_SECRET is not set" in out.stderr


def test_a_bad_slack_config_is_one_line(tmp_path):
    (tmp_path / "hilbot.toml").write_text('[slack]\nmode = "webhooks"\n')
    with FakeSlack() as fake:
        out = invoke("serve", "slack", env=_env(fake, tmp_path))
    assert (
        out.exit_code == 2
        and "slack.mode" in out.stderr
        and len(out.stderr.strip().splitlines()) == 1
    )


def test_digest_posts_text_and_chart_to_a_slack_channel(tmp_path, demo_store):
    from tests.bot.test_digest_cli import _rate

    _rate(demo_store)
    (tmp_path / "hilbot.toml").write_text('[slack.digest]\nchats = ["C0GROUP"]\n')
    with FakeSlack() as fake:
        fake.channel("C0GROUP", "reviewers")
        out = invoke(
            "digest",
            "--post",
            "slack",
            env=_env(fake, tmp_path, HILBOT_DATA_DIR=str(demo_store.root)),
        )
        assert out.exit_code == 0 and "Posted the digest to 1 Slack channel(s)." in out.stdout, out
        [text] = [m for m in fake.messages("C0GROUP") if not m.get("files")]
        assert "hilbot digest" in unescape(text["text"])
        [upload] = fake.uploads
        assert upload.channel == "C0GROUP" and upload.data.startswith(b"\x89PNG")


def test_digest_attaches_the_dashboard_report_in_slack(tmp_path, demo_store):
    from tests.bot.test_digest_cli import _rate

    _rate(demo_store)
    (tmp_path / "hilbot.toml").write_text('[slack.digest]\nchats = ["C0GROUP"]\n')
    with FakeSlack() as fake:
        fake.channel("C0GROUP", "reviewers")
        out = invoke(
            "digest",
            "--post",
            "slack",
            "--report",
            env=_env(fake, tmp_path, HILBOT_DATA_DIR=str(demo_store.root)),
        )
        assert out.exit_code == 0, out
        chart, report = fake.uploads
    assert chart.data.startswith(b"\x89PNG") and report.channel == "C0GROUP"
    assert report.filename == "hilbot-report.html" and report.data.startswith(b"<!doctype html>")


def test_digest_to_slack_without_channels_says_where_to_set_them(tmp_path, demo_store):
    (tmp_path / "hilbot.toml").write_text("")
    with FakeSlack() as fake:
        out = invoke(
            "digest",
            "--post",
            "slack",
            env=_env(fake, tmp_path, HILBOT_DATA_DIR=str(demo_store.root)),
        )
    assert out.exit_code == 2 and "[slack.digest] chats" in out.stderr


def test_serve_slack_as_a_user_runs_it_reviews_and_logs_no_secret(tmp_path, demo_store):
    """The real subprocess in Socket Mode with -v (debug logs of every library): a review, a clean
    stop."""
    (tmp_path / "hilbot.toml").write_text('[slack]\nreviewers = ["U0ALICE"]\n')
    with FakeSlack() as fake:
        fake.user("U0ALICE", "alice")
        env = {**os.environ, **_env(fake, tmp_path, HILBOT_DATA_DIR=str(demo_store.root))}
        proc = subprocess.Popen(
            [str(HILBOT), "serve", "slack", "-v"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            fake.slash("U0ALICE", f"review {SEARCH_RUN}").wait_acked_sync(30)
            fake.wait(
                lambda: [m for m in fake.messages("U0ALICE") if m.get("blocks")],
                timeout=15,
                what="the card",
            )
            card = [m for m in fake.messages("U0ALICE") if m.get("blocks")][0]
            fake.click_button("U0ALICE", fake.dm("U0ALICE"), card["ts"], "good").wait_acked_sync(10)
            fake.wait(
                lambda: len([m for m in fake.messages("U0ALICE") if m.get("blocks")]) == 2,
                timeout=10,
                what="card 2",
            )
        finally:
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0, out[-2000:]
        assert [r["judgment"] for r in ratings(demo_store)] == ["good"]
        assert "DEBUG" in out and "chat.postMessage" in out  # -v logs every call...
        for secret in (
            fake.bot_token,
            fake.app_token,
            fake.signing_secret,
            fake.verification_token,
        ):
            assert secret not in out  # ...and no token or secret, at any level
        assert re.search(r"\[secret\]", out)


# -------------------------------------------------------------------------- trying it without Slack


@pytest.mark.parametrize("mode", [[], ["--http"]])
def test_the_console_runs_serve_slack_against_the_fake_and_every_click_is_logged(demo_store, mode):
    """What the README's "try it without a workspace" does: a review with a tag and a note, typed as
    a user would."""
    import sys

    import pexpect

    child = pexpect.spawn(
        sys.executable,
        ["-m", "tests.fakes.slack_console", "--data-dir", str(demo_store.root), *mode],
        cwd=str(Path(__file__).resolve().parents[3]),
        encoding="utf-8",
        timeout=30,
    )
    try:
        child.expect("is running")
        child.sendline(f"/hilbot review {SEARCH_RUN}")
        child.expect(r"card 1\r?\n\[1/18\]")
        child.sendline("okay")
        child.expect(r"\[bad_ranking\]")
        child.sendline("1:bad_ranking")
        child.expect(r"\[✓ bad_ranking\]")
        child.sendline("1:Add note")
        child.expect("type: note")
        child.sendline("note Ranks the <changelog> first & misses errors.md")
        child.expect("Note saved")
        child.sendline("2:good")
        child.expect("Recorded: good")
        child.sendline("quit")
        child.expect(r"bot stopped \(exit 0\)")
    finally:
        child.close(force=True)
    judged = [(r["judgment"], r["concerns"]) for r in ratings(demo_store)]
    assert judged == [("okay", []), ("okay", ["bad_ranking"]), ("good", [])]
    [note] = [
        json.loads(line)
        for line in demo_store.ratings.path.read_text().splitlines()
        if '"type":"note"' in line
    ]
    assert note["text"] == "Ranks the <changelog> first & misses errors.md"


async def test_a_change_card_shows_its_diff_as_code_and_ai_review_opens_in_a_modal(
    slack, store, tmp_path
):
    from tests.bot.chat.test_chat import triage_run

    run_id = triage_run(store, tmp_path / "snapshots")
    async with slack.bot(store):
        _, card = await slack.command(ALICE, "review", run_id, replies=2)
        raw = slack.fake.message(slack.fake.dm(IDS[ALICE]), card.id)
        body = flatten(raw["blocks"])
        assert "`+answer: Lyon`" in body and "`-answer: Paris`" in body and "` score: 0.85`" in body
        await slack.tap(ALICE, card, "AI review")
        await slack.until(
            lambda: [v for v in slack.fake.views if v.get("callback_id") == "hilbot_full"],
            what="the modal",
        )
        [modal] = [v for v in slack.fake.views if v.get("callback_id") == "hilbot_full"]
        assert "Category: UNSURE" in flatten(modal["blocks"]) and ratings(store) == []


async def test_the_guide_button_opens_what_each_option_means(slack, demo_store):
    async with slack.bot(demo_store):
        _, card = await slack.command(ALICE, "review", SEARCH_RUN, replies=2)
        await slack.tap(ALICE, card, "Guide")
        await slack.until(
            lambda: [v for v in slack.fake.views if v.get("callback_id") == "hilbot_full"],
            what="the modal",
        )
        [modal] = [v for v in slack.fake.views if v.get("callback_id") == "hilbot_full"]
        shown = unescape(flatten(modal["blocks"]))
        assert (
            "good — Results nail it - exactly what I'd want" in shown and ratings(demo_store) == []
        )


def test_serve_slack_v_logs_no_token_of_a_request_whose_signature_fails(tmp_path, demo_store):
    """Issue 14: in HTTP mode slack_bolt logs a refused request's raw body, where the verification
    token is URL-encoded (``payload=%7B%22token%22%3A+%22…``)."""
    from tests.auxil.canary import leaks
    from tests.chat_drivers.slack import _free_port

    port = _free_port()
    toml = f'[slack]\nreviewers = ["U0ALICE"]\nmode = "http"\nport = {port}\n'
    (tmp_path / "hilbot.toml").write_text(toml)
    with FakeSlack() as fake:
        fake.user("U0ALICE", "alice")
        env = {**os.environ, **_env(fake, tmp_path, HILBOT_DATA_DIR=str(demo_store.root))}
        proc = subprocess.Popen(
            [str(HILBOT), "serve", "slack", "-v"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            fake.http_target = f"http://127.0.0.1:{port}/slack/events"
            fake.wait(lambda: _listening(port), timeout=30, what="the bot's port")
            fake.slash("U0ALICE", f"review {SEARCH_RUN}").wait_acked_sync(30)
            fake.wait(lambda: _cards(fake), timeout=15, what="the card")
            ts = _cards(fake)[0]["ts"]
            dm = fake.dm("U0ALICE")
            refused = [
                fake.click_button("U0ALICE", dm, ts, "good", signature="bad"),
                fake.slash("U0ALICE", "status", signature="bad"),
                fake.open_home("U0ALICE", signature="bad"),
            ]
            for delivery in refused:
                assert delivery.answered.wait(10) and delivery.status == 401
        finally:
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out[-2000:]
    assert "Invalid request signature" in out  # bolt did log each refused body...
    secrets = [fake.bot_token, fake.app_token, fake.signing_secret, fake.verification_token]
    assert leaks(out, secrets) == [], out[-3000:]  # ...with no token in any encoding


def _cards(fake: FakeSlack) -> list[dict]:
    return [m for m in fake.messages("U0ALICE") if m.get("blocks")]


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


async def test_code_longer_than_a_section_is_preformatted_in_every_section_it_takes(slack, store):
    """Issue 26 §2.4: code is a preformatted block; escaped, it can outgrow one section (3,000
    characters), and each section it takes is a preformatted block of its own."""
    code = "\n".join(f"if a<b && c>d: x{n} = '&<>'" + " <<>>" * 5 for n in range(27))
    one_item_run(store, "escape me", answer=f"```\n{code}\n```")
    async with slack.bot(store):
        _, card = await slack.command(ALICE, "review", "one", replies=2)
        raw = slack.fake.message(slack.fake.dm(IDS[ALICE]), card.id)
        texts = [b["text"]["text"] for b in raw["blocks"] if b["type"] == "section"]
        fenced = [t for t in texts if t.startswith("```")]
        assert len(fenced) >= 2 and all(len(t) <= 3000 and t.endswith("```") for t in fenced)
        assert not any("<" in t or "&&" in t for t in fenced)  # escaped within the blocks
        assert "\n".join(slack.preformatted(card)) == code
