"""The fake Slack speaks the protocol slack_sdk and slack-bolt speak, and enforces Slack's
documented rules."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import parse_qs

import aiohttp
import pytest
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.app.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_api import Delivery, FakeSlack, SlackLimits

ALICE, BOB, CAROL = "U0ALICE", "U0BOB", "U0CAROL"
GENERAL, OUTSIDE = "C0GENERAL", "C0OUTSIDE"


def section(text: str) -> dict[str, Any]:
    """A section block of mrkdwn text."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def actions(*labels: str) -> dict[str, Any]:
    """An actions block with one button per label (value = label lower-cased)."""
    return {
        "type": "actions",
        "elements": [
            {
                "type": "button",
                "text": {"type": "plain_text", "text": label},
                "action_id": f"act_{label.lower()}",
                "value": label.lower(),
            }
            for label in labels
        ],
    }


def note_modal(title: str = "Note") -> dict[str, Any]:
    """A modal with one multiline text input."""
    return {
        "type": "modal",
        "callback_id": "note",
        "private_metadata": '{"item": 7}',
        "title": {"type": "plain_text", "text": title},
        "submit": {"type": "plain_text", "text": "Save"},
        "blocks": [
            {
                "type": "input",
                "block_id": "note",
                "label": {"type": "plain_text", "text": "Your note"},
                "element": {"type": "plain_text_input", "action_id": "text", "multiline": True},
            }
        ],
    }


@pytest.fixture
def slack():
    """The fake without posting limits: Alice and Bob in #general, Carol with her Messages tab
    off."""
    with FakeSlack(limits=None) as fake:
        fake.user(ALICE, "alice")
        fake.user(BOB, "bob")
        fake.user(CAROL, "carol", reachable=False)
        fake.channel(GENERAL, "general", members=[ALICE, BOB])
        fake.channel(OUTSIDE, "outside", members=[ALICE], bot_member=False)
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> AsyncWebClient:
    """A real slack_sdk client talking to the fake with the bot token."""
    return AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)


async def error_of(call: Any) -> SlackApiError:
    """The SlackApiError an awaited call raises."""
    with pytest.raises(SlackApiError) as raised:
        await call
    return raised.value


async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
    """Serve an aiohttp app on a free port in the test's loop; returns the runner and its root
    URL."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"


# ---------------------------------------------------------------------------------------------
# Web API: identity and tokens


async def test_auth_test_names_the_bot_and_the_workspace(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    answer = await client.auth_test()
    assert (answer["team_id"], answer["user_id"], answer["bot_id"]) == (
        slack.team_id,
        slack.bot_user_id,
        slack.bot_id,
    )
    assert slack.api_url.endswith("/api/") and slack.env()["SLACK_API_URL"] == slack.api_url


async def test_tokens_are_checked(slack: FakeSlack) -> None:
    wrong = AsyncWebClient(token="xoxb-wrong", base_url=slack.api_url)
    assert (await error_of(wrong.auth_test())).response["error"] == "invalid_auth"
    as_app = AsyncWebClient(token=slack.app_token, base_url=slack.api_url)
    assert (await error_of(as_app.chat_postMessage(channel=ALICE, text="hi"))).response[
        "error"
    ] == "not_allowed_token_type"
    async with aiohttp.ClientSession() as session:
        async with session.post(slack.api_url + "auth.test") as response:
            assert response.status == 200 and (await response.json())["error"] == "not_authed"
        async with session.post(
            slack.api_url + "auth.test", data={"token": slack.bot_token}
        ) as response:
            assert (await response.json())["ok"] is True
    unknown = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
    assert (await error_of(unknown.api_call("chat.nonsense"))).response["error"] == "unknown_method"


async def test_connections_open_takes_only_the_app_token(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    assert (await error_of(client.apps_connections_open(app_token=slack.bot_token))).response[
        "error"
    ] == "not_allowed_token_type"
    first = await client.apps_connections_open(app_token=slack.app_token)
    second = await client.apps_connections_open(app_token=slack.app_token)
    assert (
        first["url"].startswith(f"ws://127.0.0.1:{slack.port}/socket?ticket=")
        and first["url"] != second["url"]
    )


# ---------------------------------------------------------------------------------------------
# Web API: messages


async def test_a_post_to_a_user_id_lands_in_their_dm(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    opened = await client.conversations_open(users=ALICE)
    answer = await client.chat_postMessage(channel=ALICE, text="hello", blocks=[section("*hello*")])
    assert answer["channel"] == opened["channel"]["id"] == slack.dm(ALICE) and slack.dm(
        ALICE
    ).startswith("D")
    later = await client.chat_postMessage(
        channel=slack.dm(ALICE), text="again", thread_ts=answer["ts"]
    )
    assert float(later["ts"]) > float(answer["ts"])
    sent = slack.messages(ALICE)
    assert [m["text"] for m in sent] == ["hello", "again"] and sent[1]["thread_ts"] == answer["ts"]
    assert sent[0]["blocks"][0]["block_id"] and slack.messages(slack.dm(ALICE)) == sent
    assert (await error_of(client.conversations_open(users="U0NOBODY"))).response[
        "error"
    ] == "user_not_found"


async def test_conversations_the_bot_cannot_post_to(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    for channel, error in (
        (CAROL, "messages_tab_disabled"),
        (slack.dm(CAROL), "messages_tab_disabled"),
        (OUTSIDE, "not_in_channel"),
        ("C0NOWHERE", "channel_not_found"),
    ):
        assert (await error_of(client.chat_postMessage(channel=channel, text="hi"))).response[
            "error"
        ] == error
    assert (await client.chat_postMessage(channel=GENERAL, text="hi"))["channel"] == GENERAL
    assert slack.messages(CAROL) == [] and len(slack.messages(GENERAL)) == 1


async def test_block_kit_limits(slack: FakeSlack, client: AsyncWebClient) -> None:
    await client.chat_postMessage(channel=ALICE, text="fifty", blocks=[section("x")] * 50)
    await client.chat_postMessage(channel=ALICE, text="3000", blocks=[section("x" * 3000)])
    too_many = (
        await error_of(
            client.chat_postMessage(channel=ALICE, text="51", blocks=[section("x")] * 51)
        )
    ).response
    assert (
        too_many["error"] == "invalid_blocks"
        and "[json-pointer:/blocks]" in too_many["response_metadata"]["messages"][0]
    )
    too_long = (
        await error_of(
            client.chat_postMessage(channel=ALICE, text="3001", blocks=[section("x" * 3001)])
        )
    ).response
    assert too_long["response_metadata"]["messages"] == [
        "[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]"
    ]
    long_label = actions("x" * 76)
    twice = {"type": "actions", "elements": actions("Yes")["elements"] * 2}
    unknown = {"type": "carousel"}
    field_heavy = {"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11}
    modal_only = note_modal()["blocks"][0]
    for blocks in (
        [long_label],
        [twice],
        [unknown],
        [field_heavy],
        [modal_only],
        [{"type": "header", "text": section("x")["text"]}],
    ):
        assert (
            await error_of(client.chat_postMessage(channel=ALICE, text="t", blocks=blocks))
        ).response["error"] == "invalid_blocks"
    assert len(slack.messages(ALICE)) == 2


async def test_text_limits(slack: FakeSlack, client: AsyncWebClient) -> None:
    await client.chat_postMessage(channel=ALICE, text="x" * 40_000)
    assert (await error_of(client.chat_postMessage(channel=ALICE, text="x" * 40_001))).response[
        "error"
    ] == "msg_too_long"
    assert (await error_of(client.api_call("chat.postMessage", json={"channel": ALICE}))).response[
        "error"
    ] == "no_text"


async def test_form_bodies_and_query_params_are_read(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    blocks = json.dumps([section("from a form")])
    answer = await client.api_call(
        "chat.postMessage", data={"channel": ALICE, "text": "form", "blocks": blocks}
    )
    assert slack.message(ALICE, answer["ts"])["blocks"][0]["text"]["text"] == "from a form"
    assert (await client.users_info(user=BOB))["user"]["name"] == "bob"
    broken = await error_of(
        client.api_call("chat.postMessage", data={"channel": ALICE, "text": "x", "blocks": "[{"})
    )
    assert broken.response["error"] == "invalid_blocks_format"
    assert slack.calls_to("users.info")[0].params == {"user": BOB}


async def test_update_counts_edits_and_keeps_blocks_unless_replaced(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    posted = await client.chat_postMessage(
        channel=GENERAL, text="card", blocks=[section("v1"), actions("Yes")]
    )
    await client.chat_update(
        channel=GENERAL, ts=posted["ts"], text="card v2", blocks=[section("v2")]
    )
    await client.chat_update(channel=GENERAL, ts=posted["ts"], text="card v3")
    card = slack.message(GENERAL, posted["ts"])
    assert (card["edits"], card["text"], card["history"]) == (
        2,
        "card v3",
        ["card", "card v2", "card v3"],
    )
    assert [b["type"] for b in card["blocks"]] == ["section"]
    assert (await error_of(client.chat_update(channel=GENERAL, ts="1.000001", text="x"))).response[
        "error"
    ] == "message_not_found"
    assert (await error_of(client.chat_update(channel=ALICE, ts=posted["ts"], text="x"))).response[
        "error"
    ] == "channel_not_found"
    said = slack.message_im(ALICE, "a user's words")
    users_ts = said.payload["event"]["ts"]
    cant = await error_of(client.chat_update(channel=slack.dm(ALICE), ts=users_ts, text="x"))
    assert cant.response["error"] == "cant_update_message"
    assert slack.messages(ALICE) == [] and slack.message(ALICE, users_ts)["user"] == ALICE


async def test_ephemerals_go_to_members_only(slack: FakeSlack, client: AsyncWebClient) -> None:
    shown = await client.chat_postEphemeral(channel=GENERAL, user=BOB, text="only bob")
    assert shown["message_ts"]
    await client.chat_postEphemeral(channel=slack.dm(ALICE), user=ALICE, text="only alice")
    for channel, user in ((GENERAL, CAROL), (slack.dm(ALICE), BOB)):
        assert (
            await error_of(client.chat_postEphemeral(channel=channel, user=user, text="x"))
        ).response["error"] == "user_not_in_channel"
    assert [e["text"] for e in slack.ephemerals(GENERAL, BOB)] == ["only bob"] and slack.ephemerals(
        GENERAL, ALICE
    ) == []
    assert slack.messages(GENERAL) == [] and slack.ephemerals(ALICE)[0]["user"] == ALICE


# ---------------------------------------------------------------------------------------------
# Web API: views and files


async def test_a_trigger_opens_one_modal_within_three_seconds(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    trigger = slack.slash(ALICE, "note").payload["trigger_id"]
    opened = await client.views_open(trigger_id=trigger, view=note_modal())
    view = opened["view"]
    assert view["id"].startswith("V") and view["state"] == {"values": {}} and view["hash"]
    assert (
        slack.open_views(ALICE)[0]["id"] == view["id"]
        and slack.view(view["id"])["status"] == "open"
    )
    assert (await error_of(client.views_open(trigger_id=trigger, view=note_modal()))).response[
        "error"
    ] == "exchanged_trigger_id"
    assert (await error_of(client.views_open(trigger_id="1.2.3", view=note_modal()))).response[
        "error"
    ] == "invalid_trigger_id"
    slack.trigger_ttl = 0.05
    late = slack.slash(ALICE, "note").payload["trigger_id"]
    await asyncio.sleep(0.1)
    assert (await error_of(client.views_open(trigger_id=late, view=note_modal()))).response[
        "error"
    ] == "expired_trigger_id"


async def test_views_are_checked_updated_and_published(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    trigger = slack.slash(ALICE, "note").payload["trigger_id"]
    bad = (
        await error_of(client.views_open(trigger_id=trigger, view=note_modal("x" * 25)))
    ).response
    assert bad["error"] == "invalid_arguments"
    assert bad["response_metadata"]["messages"] == [
        "[ERROR] must be less than 25 characters [json-pointer:/view/title/text]"
    ]
    no_submit = note_modal() | {"submit": None}
    del no_submit["submit"]
    assert (await error_of(client.views_open(trigger_id=trigger, view=no_submit))).response[
        "error"
    ] == "invalid_arguments"
    view = (await client.views_open(trigger_id=trigger, view=note_modal()))["view"]
    updated = (
        await client.views_update(view_id=view["id"], hash=view["hash"], view=note_modal("Note 2"))
    )["view"]
    assert (
        updated["id"] == view["id"]
        and updated["title"]["text"] == "Note 2"
        and slack.view(view["id"])["updates"] == 1
    )
    stale_hash = await error_of(
        client.views_update(view_id=view["id"], hash=view["hash"], view=note_modal())
    )
    assert stale_hash.response["error"] == "hash_conflict"
    home = {"type": "home", "blocks": [section("Welcome"), actions("Start")]}
    published = (await client.views_publish(user_id=ALICE, view=home))["view"]
    assert slack.home(ALICE)["id"] == published["id"] and slack.home(BOB) is None
    too_big = await error_of(
        client.views_publish(user_id=ALICE, view={"type": "home", "blocks": [section("x")] * 101})
    )
    assert too_big.response["error"] == "invalid_arguments"


async def test_files_upload_v2_stores_the_bytes(slack: FakeSlack, client: AsyncWebClient) -> None:
    data = bytes(range(256)) * 40
    answer = await client.files_upload_v2(
        channel=slack.dm(ALICE),
        file=data,
        filename="agreement.png",
        title="Agreement",
        initial_comment="this week",
    )
    assert answer["file"]["id"].startswith("F")
    upload = slack.uploads[0]
    assert (upload.channel, upload.filename, upload.data, upload.title, upload.initial_comment) == (
        slack.dm(ALICE),
        "agreement.png",
        data,
        "Agreement",
        "this week",
    )
    assert slack.messages(ALICE)[0]["files"][0]["id"] == answer["file"]["id"]
    missing = await error_of(
        client.files_completeUploadExternal(
            files=[{"id": "F0NEVER", "title": "x"}], channel_id=GENERAL
        )
    )
    assert missing.response["error"] == "file_not_found"
    denied = await error_of(client.files_upload_v2(channel=CAROL, content="x", filename="a.txt"))
    assert denied.response["error"] == "posting_to_channel_denied"


# ---------------------------------------------------------------------------------------------
# Web API: limits and faults


async def test_a_429_is_retried_after_retry_after() -> None:
    with FakeSlack() as fake:
        fake.user(ALICE)
        client = AsyncWebClient(
            token=fake.bot_token,
            base_url=fake.api_url,
            retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=2)],
        )
        started = time.monotonic()
        await asyncio.gather(
            client.chat_postMessage(channel=ALICE, text="one"),
            client.chat_postMessage(channel=fake.dm(ALICE), text="two"),
        )
        assert sorted(m["text"] for m in fake.messages(ALICE)) == ["one", "two"]
        assert fake.ratelimited == [("chat.postMessage", fake.dm(ALICE), "channel")]
        assert [c.status for c in fake.calls_to("chat.postMessage")].count(429) == 1
        assert time.monotonic() - started >= 1.0


async def test_the_workspace_limit_answers_429_with_retry_after() -> None:
    with FakeSlack(SlackLimits(channel_per_s=100, workspace_per_s=1)) as fake:
        fake.user(ALICE)
        fake.user(BOB)
        client = AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)
        await client.chat_postMessage(channel=ALICE, text="one")
        refused = await error_of(client.chat_postMessage(channel=BOB, text="two"))
        assert refused.response.status_code == 429 and refused.response["error"] == "ratelimited"
        assert int(refused.response.headers["Retry-After"]) >= 1
        await client.chat_update(
            channel=fake.dm(ALICE), ts=fake.messages(ALICE)[0]["ts"], text="edit"
        )


async def test_faults_outage_and_the_call_hook(slack: FakeSlack, client: AsyncWebClient) -> None:
    seen: list[str] = []
    slack.on_call = lambda call: seen.append(call.method)
    slack.fail_next(
        "chat.postMessage", "channel_not_found", match=lambda params: params.get("text") == "doomed"
    )
    await client.chat_postMessage(channel=ALICE, text="fine")
    assert (await error_of(client.chat_postMessage(channel=ALICE, text="doomed"))).response[
        "error"
    ] == "channel_not_found"
    slack.fail_next("chat.postMessage", status=429, retry_after=7)
    limited = await error_of(client.chat_postMessage(channel=ALICE, text="x"))
    assert limited.response.status_code == 429 and limited.response.headers["Retry-After"] == "7"
    slack.outage(503)
    down = await error_of(client.auth_test())
    assert down.response.status_code == 503 and down.response["error"] == "service_unavailable"
    slack.clear_faults()
    await client.auth_test()
    assert [m["text"] for m in slack.messages(ALICE)] == ["fine"]
    assert (
        seen.count("chat.postMessage") == 3
        and slack.calls_to("chat.postMessage")[1].error == "channel_not_found"
    )


# ---------------------------------------------------------------------------------------------
# Socket Mode


async def test_socket_mode_client_gets_an_envelope_and_its_ack_is_recorded(
    slack: FakeSlack,
) -> None:
    acked: list[Delivery] = []
    slack.on_ack = acked.append
    waiting = slack.slash(ALICE, "status please")  # made before any client: it waits for one
    received: list[dict[str, Any]] = []

    async def answer(client: SocketModeClient, request: Any) -> None:
        received.append(
            request.payload | {"_type": request.type, "_accepts": request.accepts_response_payload}
        )
        await client.send_socket_mode_response(
            SocketModeResponse(envelope_id=request.envelope_id, payload={"text": "working on it"})
        )

    hellos: list[dict[str, Any]] = []

    async def listen(client: SocketModeClient, message: dict, raw: str | None) -> None:
        if message.get("type") == "hello":
            hellos.append(message)

    web_client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
    client = SocketModeClient(app_token=slack.app_token, web_client=web_client)
    client.socket_mode_request_listeners.append(answer)
    client.message_listeners.append(listen)
    try:
        await client.connect()
        await waiting.wait_acked()
        assert (
            hellos
            and hellos[0]["num_connections"] == 1
            and hellos[0]["connection_info"]["app_id"] == slack.app_id
        )
        assert received[0]["_type"] == "slash_commands" and received[0]["_accepts"] is True
        assert (received[0]["command"], received[0]["text"], received[0]["channel_name"]) == (
            "/hilbot",
            "status please",
            "directmessage",
        )
        assert (
            waiting.ack == {"text": "working on it"}
            and acked == [waiting]
            and waiting.ack_seconds is not None
        )
        assert [e["text"] for e in slack.ephemerals(ALICE, ALICE)] == ["working on it"]
        assert slack.connections == 1
    finally:
        await client.close()


async def test_refresh_makes_the_client_reconnect(slack: FakeSlack) -> None:
    async def ack(client: SocketModeClient, request: Any) -> None:
        await client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))

    client = SocketModeClient(
        app_token=slack.app_token,
        web_client=AsyncWebClient(token=slack.bot_token, base_url=slack.api_url),
    )
    client.socket_mode_request_listeners.append(ack)
    try:
        await client.connect()
        await slack.until(lambda: slack.connections == 1, what="the first connection")
        slack.refresh_socket()
        await slack.until(
            lambda: slack.connects == 2 and slack.connections == 1, what="a reconnection"
        )
        await slack.message_im(ALICE, "after the refresh").wait_acked()
    finally:
        await client.close()


async def test_events_are_redelivered_with_a_retry_attempt(slack: FakeSlack) -> None:
    envelopes: list[dict[str, Any]] = []

    async def listen(client: SocketModeClient, message: dict, raw: str | None) -> None:
        if "envelope_id" in message:
            envelopes.append(message)
            await client.send_socket_mode_response({"envelope_id": message["envelope_id"]})

    client = SocketModeClient(
        app_token=slack.app_token,
        web_client=AsyncWebClient(token=slack.bot_token, base_url=slack.api_url),
    )
    client.message_listeners.append(listen)
    try:
        await client.connect()
        first = await slack.message_im(ALICE, "hello bot").wait_acked()
        again = await slack.redeliver(first).wait_acked()
        assert [e["retry_attempt"] for e in envelopes] == [0, 1] and envelopes[1][
            "retry_reason"
        ] == "timeout"
        assert envelopes[0]["payload"]["event_id"] == envelopes[1]["payload"]["event_id"]
        event = envelopes[0]["payload"]["event"]
        assert (event["type"], event["channel_type"], event["channel"], event["user"]) == (
            "message",
            "im",
            slack.dm(ALICE),
            ALICE,
        )
        assert again.envelope_id != first.envelope_id
    finally:
        await client.close()


async def test_a_bolt_app_runs_over_socket_mode(slack: FakeSlack) -> None:
    client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
    app = AsyncApp(client=client, signing_secret=slack.signing_secret)

    @app.command("/hilbot")
    async def command(ack: Any, body: dict, client: AsyncWebClient) -> None:
        await ack()
        await client.views_open(trigger_id=body["trigger_id"], view=note_modal())
        await client.chat_postMessage(
            channel=body["user_id"], text="card", blocks=[section("Item 7"), actions("Good", "Bad")]
        )

    @app.view("note")
    async def note(ack: Any, view: dict, body: dict) -> None:
        text = view["state"]["values"]["note"]["text"]["value"]
        if len(text) < 3:
            await ack(response_action="errors", errors={"note": "Say more"})
        else:
            await ack()

    @app.action("act_good")
    async def good(ack: Any, body: dict, client: AsyncWebClient) -> None:
        await ack()
        await client.chat_update(
            channel=body["channel"]["id"],
            ts=body["message"]["ts"],
            text="card: good",
            blocks=[section("Item 7: good")],
        )

    @app.event("app_home_opened")
    async def home(event: dict, client: AsyncWebClient) -> None:
        await client.views_publish(
            user_id=event["user"], view={"type": "home", "blocks": [section("hi")]}
        )

    handler = AsyncSocketModeHandler(app, slack.app_token)
    await handler.connect_async()
    try:
        await slack.slash(ALICE, "note").wait_acked()
        await slack.until(
            lambda: slack.open_views(ALICE) and slack.messages(ALICE), what="the modal and the card"
        )
        view_id = slack.open_views(ALICE)[0]["id"]
        await slack.submit_view(ALICE, view_id, values={"text": "ok"}).wait_acked()
        assert slack.view(view_id)["status"] == "open" and slack.view(view_id)["errors"] == {
            "note": "Say more"
        }
        submitted = await slack.submit_view(ALICE, view_id, text="looks fine").wait_acked()
        assert submitted.payload["view"]["private_metadata"] == '{"item": 7}'
        assert slack.view(view_id)["status"] == "submitted" and slack.open_views(ALICE) == []
        card = slack.messages(ALICE)[0]
        await slack.click_button(ALICE, ALICE, card["ts"], "Good").wait_acked()
        await slack.until(
            lambda: slack.message(ALICE, card["ts"])["edits"] == 1, what="the card's edit"
        )
        assert slack.message(ALICE, card["ts"])["text"] == "card: good"
        await slack.open_home(BOB).wait_acked()
        await slack.until(lambda: slack.home(BOB) is not None, what="Bob's Home tab")
    finally:
        await handler.close_async()


def test_a_required_input_cannot_be_submitted_empty(slack: FakeSlack) -> None:
    trigger = slack.slash(ALICE, "note").payload["trigger_id"]
    view = asyncio.run(
        AsyncWebClient(token=slack.bot_token, base_url=slack.api_url).views_open(
            trigger_id=trigger, view=note_modal()
        )
    )["view"]
    with pytest.raises(AssertionError, match="required"):
        slack.submit_view(ALICE, view["id"])
    closed = slack.close_view(ALICE, view["id"])
    assert closed is None and slack.view(view["id"])["status"] == "closed"


# ---------------------------------------------------------------------------------------------
# HTTP deliveries


async def test_http_deliveries_are_signed_as_slack_signs_them(slack: FakeSlack) -> None:
    verifier = SignatureVerifier(slack.signing_secret)
    received: list[tuple[bytes, dict[str, str], bool]] = []

    async def endpoint(request: web.Request) -> web.Response:
        body = await request.read()
        received.append(
            (body, dict(request.headers), verifier.is_valid_request(body, dict(request.headers)))
        )
        return (
            web.json_response({"text": "got it"}) if b"command" in body else web.Response(text="")
        )

    app = web.Application()
    app.router.add_post("/slack/events", endpoint)
    runner, root = await serve(app)
    try:
        slack.http_target = f"{root}/slack/events"
        command = await slack.slash(ALICE, "go").wait_acked()
        posted = await AsyncWebClient(
            token=slack.bot_token, base_url=slack.api_url
        ).chat_postMessage(channel=GENERAL, text="card", blocks=[actions("Yes")])
        click = await slack.click_button(BOB, GENERAL, posted["ts"], "Yes").wait_acked()
        event = await slack.message_im(BOB, "hi").wait_acked()
        retry = await slack.redeliver(event).wait_acked()
        bad = await slack.slash(ALICE, "go", signature="bad").wait_acked()
        stale = await slack.slash(ALICE, "go", stale=True).wait_acked()
    finally:
        await runner.cleanup()
    assert [valid for _, _, valid in received] == [True, True, True, True, False, False]
    form = parse_qs(received[0][0].decode())
    assert form["command"] == ["/hilbot"] and form["text"] == ["go"] and form["trigger_id"][0]
    assert received[0][1][
        "Content-Type"
    ] == "application/x-www-form-urlencoded" and command.ack == {"text": "got it"}
    interaction = json.loads(parse_qs(received[1][0].decode())["payload"][0])
    assert interaction["type"] == "block_actions" and interaction["actions"][0]["value"] == "yes"
    assert interaction["container"] == {
        "type": "message",
        "message_ts": posted["ts"],
        "channel_id": GENERAL,
        "is_ephemeral": False,
    }
    assert (
        json.loads(received[2][0])["type"] == "event_callback"
        and received[2][1]["Content-Type"] == "application/json"
    )
    assert received[3][0] == received[2][0] and received[3][1]["X-Slack-Retry-Num"] == "1"
    assert (
        received[3][1]["X-Slack-Retry-Reason"] == "http_timeout"
        and "X-Slack-Retry-Num" not in received[2][1]
    )
    assert all(d.status == 200 for d in (click, event, retry, bad, stale))
    assert slack.ephemerals(ALICE, ALICE)[0]["text"] == "got it"


async def test_a_bolt_web_app_accepts_good_deliveries_and_refuses_forged_ones(
    slack: FakeSlack,
) -> None:
    app = AsyncApp(
        client=AsyncWebClient(token=slack.bot_token, base_url=slack.api_url),
        signing_secret=slack.signing_secret,
    )

    @app.command("/hilbot")
    async def command(ack: Any, respond: Any) -> None:
        await ack("on it")
        await respond(text="done", response_type="in_channel")

    runner, root = await serve(app.web_app())
    try:
        slack.http_target = f"{root}/slack/events"
        good = await slack.slash(ALICE, "go", channel_id=GENERAL).wait_acked()
        assert good.status == 200 and good.ack == {"text": "on it"}
        await slack.until(lambda: slack.messages(GENERAL), what="the response_url reply")
        assert slack.messages(GENERAL)[0]["text"] == "done" and slack.responses[0]["status"] == 200
        for forged in (
            slack.slash(ALICE, "go", signature="bad"),
            slack.slash(ALICE, "go", stale=True),
            slack.slash(ALICE, "go", signature="none"),
        ):
            await forged.wait_answered()
            assert forged.status == 401 and not forged.acked.is_set()
            with pytest.raises(AssertionError, match="not acked"):
                await forged.wait_acked(timeout=0.1)
    finally:
        await runner.cleanup()


async def test_an_unreachable_request_url_is_recorded(slack: FakeSlack) -> None:
    slack.http_target = "http://127.0.0.1:9/slack/events"
    delivery = await slack.slash(ALICE, "go").wait_answered()
    assert delivery.error and delivery.status is None and not delivery.acked.is_set()


async def test_acks_slack_cannot_use_are_reported(slack: FakeSlack, client: AsyncWebClient) -> None:
    home = (
        await client.views_publish(
            user_id=ALICE, view={"type": "home", "blocks": [actions("Start")]}
        )
    )["view"]
    url = (await client.apps_connections_open(app_token=slack.app_token))["url"]
    async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
        assert (await ws.receive_json())["type"] == "hello"
        command = slack.slash(ALICE, "go")
        envelope = await ws.receive_json()
        await ws.send_json(
            {"envelope_id": envelope["envelope_id"], "payload": {"blocks": [section("x" * 3001)]}}
        )
        await command.wait_acked()
        click = slack.click_in_view(ALICE, home["id"], "start")
        envelope = await ws.receive_json()
        assert envelope["payload"]["container"] == {"type": "view", "view_id": home["id"]}
        assert (
            envelope["payload"]["actions"][0]["action_id"] == "act_start"
            and envelope["accepts_response_payload"] is False
        )
        await ws.send_json({"envelope_id": envelope["envelope_id"]})
        await ws.send_json({"envelope_id": envelope["envelope_id"]})
        await slack.until(lambda: click.acks == 2, what="the second ack")
    assert command.ack_error == "invalid_blocks" and slack.ephemerals(ALICE) == []
    assert click.ack is None and click.ack_error is None and click.acked.is_set()


async def test_response_urls_reply_replace_and_delete(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    card = await client.chat_postMessage(
        channel=GENERAL, text="card", blocks=[actions("Yes", "No")]
    )
    url = slack.click_button(BOB, GENERAL, card["ts"], "No").payload["response_url"]
    async with aiohttp.ClientSession() as session:

        async def post(body: dict[str, Any]) -> tuple[int, str]:
            async with session.post(url, json=body) as response:
                return response.status, await response.text()

        assert await post({"replace_original": True, "text": "replaced"}) == (200, "ok")
        assert slack.message(GENERAL, card["ts"])["edits"] == 1
        assert await post({"text": "only you"}) == (200, "ok")
        assert await post({"blocks": [section("x" * 3001)]}) == (400, "invalid_blocks")
        assert await post({"delete_original": True}) == (200, "ok")
        assert await post({"text": "fifth"}) == (200, "ok")
        assert await post({"text": "sixth"}) == (404, "used_url")
    assert [e["text"] for e in slack.ephemerals(GENERAL, BOB)] == [
        "only you",
        "fifth",
    ] and slack.messages(GENERAL) == []


def test_deliveries_can_be_awaited_from_sync_code(slack: FakeSlack) -> None:
    delivery = slack.message_im(ALICE, "nobody listens")
    with pytest.raises(AssertionError, match="was not acked"):
        delivery.wait_acked_sync(timeout=0.05)
    with pytest.raises(AssertionError, match="no socket client"):
        slack.wait(lambda: slack.connections, timeout=0.05, what="no socket client")
