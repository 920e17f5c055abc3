"""A local server that speaks Slack's Web API, Socket Mode and signed HTTP deliveries for one app in
one workspace.

It runs an aiohttp app on 127.0.0.1 in a thread of its own
(:class:`~tests.fakes._server.ThreadedApp`), so a real slack-bolt ``AsyncApp`` and slack_sdk's
``AsyncWebClient(base_url=fake.api_url)`` can run against it from a test's event loop, a benchmark
or a subprocess (``env()``).

* Web API: ``POST /api/<method>`` with a JSON, form or multipart body (or query parameters); the
  token comes from ``Authorization: Bearer`` or a ``token`` parameter. Errors are HTTP 200 ``{"ok":
  false, "error": …}`` as Slack answers them, rate limits HTTP 429 with ``Retry-After``. Block Kit
  is checked against Slack's documented limits (``invalid_blocks`` / ``invalid_arguments`` with
  ``response_metadata.messages`` naming a JSON pointer).
* Socket Mode: ``apps.connections.open`` (app-level token) hands out a one-use
  ``ws://…/socket?ticket=…``; the socket says ``hello``, carries envelopes (``slash_commands``,
  ``interactive``, ``events_api``) and reads the client's acks (``{"envelope_id", "payload"?}``).
  Deliveries wait while no client is connected; with several connections open (several app
  processes), each envelope goes to one of them at random, as Slack sends them.
* HTTP: with ``http_target`` set, deliveries are POSTed there signed as Slack signs them (``v0=``
  HMAC-SHA256 of ``v0:<timestamp>:<body>``): slash commands form-encoded, interactivity as a
  ``payload`` form field, events as JSON ``event_callback`` bodies; the answer is the ack.

The test plays the users (``slash``, ``click_button``, ``submit_view``, ``message_im``,
``open_home``) and inspects what the app did (``messages``, ``ephemerals``, ``views``, ``uploads``,
``calls``, the :class:`Delivery` records). Acks act as Slack acts on them: a slash command's ack
text is shown to the user, a view submission's ``response_action`` keeps, updates, pushes or closes
the modal. Faults (``fail_next``, ``outage``) can be injected.

Not modelled: Slack's own retries (a delivery is sent again only by ``redeliver``), group DMs,
private channel membership changes, threads' reply counts, file sizes checked against ``length``,
views.push (a ``push`` ack works), message attachments (stored unchecked), and any rate limit but
the posting ones.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import hashlib
import hmac
import itertools
import json
import math
import random
import secrets
import threading
import time
import uuid
from collections import defaultdict, deque
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable
from urllib.parse import urlencode

import aiohttp
from aiohttp import WSMsgType, web

from ._server import Call as _Call
from ._server import ThreadedApp, Waits, Window, take_fault

Json = dict[str, Any]

BOT_TOKEN = "xoxb-1000000001-2000000002-hilbotfaketoken000000"
APP_TOKEN = "xapp-1-A0HILBOT-3000000003-hilbotfakeapptoken0000000000"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
VERIFICATION_TOKEN = "hilbotfakeverificationtoken"
SLACKBOT_AGENT = "Slackbot 1.0 (+https://api.slack.com/robots)"

TEXT_LIMIT = 40_000
MESSAGE_BLOCKS, VIEW_BLOCKS = 50, 100
SECTION_TEXT, FIELD_TEXT, FIELDS, HEADER_TEXT = 3000, 2000, 10, 150
CONTEXT_ELEMENTS, ACTIONS_ELEMENTS, BUTTON_TEXT, BUTTON_VALUE = 10, 25, 75, 2000
ID_LIMIT, VIEW_TITLE, PRIVATE_METADATA, LABEL_TEXT, INPUT_LENGTH = 255, 24, 3000, 2000, 3000
RESPONSE_URL_USES = 5
RATED_METHODS = frozenset({"chat.postMessage", "chat.update", "chat.postEphemeral"})
"""Methods that count against the per-channel posting limit."""
APP_TOKEN_METHODS = frozenset({"apps.connections.open"})
"""Methods that take the app-level token (xapp-); every other method takes the bot token (xoxb-)."""

_TEXT_TYPES = ("plain_text", "mrkdwn")
_INPUT_ELEMENTS = frozenset(
    {
        "plain_text_input",
        "number_input",
        "email_text_input",
        "url_text_input",
        "rich_text_input",
        "file_input",
        "static_select",
        "multi_static_select",
        "external_select",
        "multi_external_select",
        "users_select",
        "multi_users_select",
        "conversations_select",
        "multi_conversations_select",
        "channels_select",
        "multi_channels_select",
        "datepicker",
        "timepicker",
        "datetimepicker",
        "checkboxes",
        "radio_buttons",
    }
)
_ACTION_ELEMENTS = (
    _INPUT_ELEMENTS
    - {
        "plain_text_input",
        "number_input",
        "email_text_input",
        "url_text_input",
        "rich_text_input",
        "file_input",
    }
) | {"button", "overflow", "workflow_button"}
_ACCESSORIES = _ACTION_ELEMENTS | {"image"}
_TEXT_INPUTS = frozenset({"plain_text_input", "number_input", "email_text_input", "url_text_input"})
_PICKED = {
    "datepicker": "selected_date",
    "timepicker": "selected_time",
    "datetimepicker": "selected_date_time",
    "users_select": "selected_user",
    "conversations_select": "selected_conversation",
    "channels_select": "selected_channel",
    "multi_users_select": "selected_users",
    "multi_conversations_select": "selected_conversations",
    "multi_channels_select": "selected_channels",
}
"""Where a picked user, channel, date or time goes in an input's state."""


# ---------------------------------------------------------------------------------------------
# Errors


class ApiError(Exception):
    """An error answer: ``{"ok": false, "error": …}`` with an HTTP status (200 for ordinary API
    errors)."""

    def __init__(
        self,
        error: str,
        status: int = 200,
        retry_after: int | None = None,
        messages: list[str] | None = None,
    ):
        super().__init__(error)
        self.error, self.status, self.retry_after, self.messages = (
            error,
            status,
            retry_after,
            messages,
        )

    def body(self) -> Json:
        """The JSON body Slack sends with this error."""
        body: Json = {"ok": False, "error": self.error}
        if self.messages:
            body["response_metadata"] = {"messages": list(self.messages)}
            if self.error == "invalid_blocks":
                body["errors"] = [message.removeprefix("[ERROR] ") for message in self.messages]
        return body

    def headers(self) -> dict[str, str]:
        """``Retry-After`` on a 429."""
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}


def ratelimited(retry_after: int) -> ApiError:
    """The 429 slack_sdk's ``RateLimitErrorRetryHandler`` retries after ``Retry-After`` seconds."""
    return ApiError("ratelimited", 429, retry_after=max(1, retry_after))


# ---------------------------------------------------------------------------------------------
# Block Kit


class BlockKit:
    """Block Kit checked as Slack checks it: each problem as ``[ERROR] <reason>
    [json-pointer:<where>]``."""

    def __init__(self, surface: str) -> None:
        self.surface = surface
        """``message``, ``modal`` or ``home``."""
        self.errors: list[str] = []
        self._block_ids: set[str] = set()
        self._action_ids: set[str] = set()
        self._blocks: dict[str, Callable[[Json, str], None]] = {
            "section": self._section,
            "actions": self._actions,
            "context": self._context,
            "header": self._header,
            "divider": lambda block, pointer: None,
            "image": self._image,
            "input": self._input,
            "rich_text": self._rich_text,
        }

    def fail(self, pointer: str, reason: str) -> None:
        """Note one problem."""
        self.errors.append(f"[ERROR] {reason} [json-pointer:{pointer}]")

    def string(self, value: Any, pointer: str, limit: int, minimum: int = 0) -> None:
        """A string of ``minimum``…``limit`` characters."""
        if not isinstance(value, str):
            self.fail(pointer, "must be a string")
        elif len(value) > limit:
            self.fail(pointer, f"must be less than {limit + 1} characters")
        elif len(value) < minimum:
            self.fail(pointer, f"must be more than {minimum - 1} characters")

    def text(self, obj: Any, pointer: str, limit: int, plain: bool = False) -> None:
        """A text object (``plain_text`` only when ``plain``) of 1…``limit`` characters."""
        if not isinstance(obj, dict):
            self.fail(pointer, "must provide an object")
        elif obj.get("type") not in (("plain_text",) if plain else _TEXT_TYPES):
            self.fail(f"{pointer}/type", "must be a valid enum value")
        else:
            self.string(obj.get("text"), f"{pointer}/text", limit, minimum=1)

    def optional_text(
        self, parent: Json, key: str, pointer: str, limit: int, plain: bool = True
    ) -> None:
        """A text object that may be absent."""
        if key in parent:
            self.text(parent[key], f"{pointer}/{key}", limit, plain)

    def array(self, value: Any, pointer: str, limit: int, minimum: int = 1) -> list[Any]:
        """An array of ``minimum``…``limit`` items (its items, to check one by one)."""
        if not isinstance(value, list):
            self.fail(pointer, "must provide an array")
            return []
        if len(value) > limit:
            self.fail(pointer, f"no more than {limit} items allowed")
        elif len(value) < minimum:
            self.fail(pointer, f"must provide at least {minimum} items")
        return value

    def unique(self, seen: set[str], value: Any, pointer: str, what: str) -> None:
        """An id of at most 255 characters, unique on its surface."""
        self.string(value, pointer, ID_LIMIT, minimum=1)
        if isinstance(value, str) and value in seen:
            self.fail(pointer, f"{what} must be unique: {value!r} is used twice")
        elif isinstance(value, str):
            seen.add(value)

    def blocks(self, blocks: Any, pointer: str) -> list[str]:
        """Check a surface's blocks; returns every problem found."""
        limit = MESSAGE_BLOCKS if self.surface == "message" else VIEW_BLOCKS
        for index, block in enumerate(self.array(blocks, pointer, limit, minimum=0)):
            self._block(block, f"{pointer}/{index}")
        return self.errors

    def _block(self, block: Any, pointer: str) -> None:
        if not isinstance(block, dict):
            self.fail(pointer, "must provide an object")
            return
        check = self._blocks.get(block.get("type"))
        if check is None or (block["type"] == "input" and self.surface == "message"):
            self.fail(f"{pointer}/type", f"unsupported type: {block.get('type')}")
            return
        if "block_id" in block:
            self.unique(self._block_ids, block["block_id"], f"{pointer}/block_id", "block_id")
        check(block, pointer)

    def _section(self, block: Json, pointer: str) -> None:
        if "text" not in block and "fields" not in block:
            self.fail(pointer, "must provide text or fields")
        self.optional_text(block, "text", pointer, SECTION_TEXT, plain=False)
        if "fields" in block:
            for index, item in enumerate(self.array(block["fields"], f"{pointer}/fields", FIELDS)):
                self.text(item, f"{pointer}/fields/{index}", FIELD_TEXT)
        if "accessory" in block:
            self.element(block["accessory"], f"{pointer}/accessory", _ACCESSORIES)

    def _actions(self, block: Json, pointer: str) -> None:
        for index, element in enumerate(
            self.array(block.get("elements"), f"{pointer}/elements", ACTIONS_ELEMENTS)
        ):
            self.element(element, f"{pointer}/elements/{index}", _ACTION_ELEMENTS)

    def _context(self, block: Json, pointer: str) -> None:
        for index, element in enumerate(
            self.array(block.get("elements"), f"{pointer}/elements", CONTEXT_ELEMENTS)
        ):
            where = f"{pointer}/elements/{index}"
            if isinstance(element, dict) and element.get("type") == "image":
                self._image_element(element, where)
            else:
                self.text(element, where, SECTION_TEXT)

    def _header(self, block: Json, pointer: str) -> None:
        self.text(block.get("text"), f"{pointer}/text", HEADER_TEXT, plain=True)

    def _image(self, block: Json, pointer: str) -> None:
        self._image_element(block, pointer)
        self.optional_text(block, "title", pointer, LABEL_TEXT)

    def _image_element(self, element: Json, pointer: str) -> None:
        if "image_url" not in element and "slack_file" not in element:
            self.fail(pointer, "must provide image_url or slack_file")
        if "image_url" in element:
            self.string(element["image_url"], f"{pointer}/image_url", 3000, minimum=1)
        self.string(element.get("alt_text"), f"{pointer}/alt_text", LABEL_TEXT, minimum=1)

    def _input(self, block: Json, pointer: str) -> None:
        self.text(block.get("label"), f"{pointer}/label", LABEL_TEXT, plain=True)
        self.optional_text(block, "hint", pointer, LABEL_TEXT)
        if "element" not in block:
            self.fail(pointer, "must provide element")
        else:
            self.element(block["element"], f"{pointer}/element", _INPUT_ELEMENTS)

    def _rich_text(self, block: Json, pointer: str) -> None:
        self.array(block.get("elements"), f"{pointer}/elements", 100, minimum=0)

    def element(self, element: Any, pointer: str, allowed: frozenset[str]) -> None:
        """An interactive element (or an accessory image) of a type this place allows."""
        if not isinstance(element, dict):
            self.fail(pointer, "must provide an object")
            return
        if element.get("type") not in allowed:
            self.fail(f"{pointer}/type", f"unsupported type: {element.get('type')}")
            return
        if element["type"] == "image":
            self._image_element(element, pointer)
            return
        if "action_id" in element:
            self.unique(self._action_ids, element["action_id"], f"{pointer}/action_id", "action_id")
        self.optional_text(element, "placeholder", pointer, 150)
        if element["type"] == "button":
            self._button(element, pointer)
        elif element["type"] == "plain_text_input":
            self._text_input(element, pointer)

    def _button(self, button: Json, pointer: str) -> None:
        self.text(button.get("text"), f"{pointer}/text", BUTTON_TEXT, plain=True)
        if "value" in button:
            self.string(button["value"], f"{pointer}/value", BUTTON_VALUE)
        if "url" in button:
            self.string(button["url"], f"{pointer}/url", 3000, minimum=1)
        if "style" in button and button["style"] not in ("primary", "danger"):
            self.fail(f"{pointer}/style", "must be a valid enum value")

    def _text_input(self, element: Json, pointer: str) -> None:
        for key, low in (("max_length", 1), ("min_length", 0)):
            value = element.get(key)
            if value is not None and (
                not isinstance(value, int) or not low <= value <= INPUT_LENGTH
            ):
                self.fail(f"{pointer}/{key}", f"must be between {low} and {INPUT_LENGTH}")
        if "initial_value" in element:
            self.string(element["initial_value"], f"{pointer}/initial_value", INPUT_LENGTH)


def view_errors(view: Any, surface: str) -> list[str]:
    """What Slack finds wrong with a modal or Home tab view (pointers under ``/view``)."""
    kit = BlockKit(surface)
    if not isinstance(view, dict):
        kit.fail("/view", "must provide an object")
        return kit.errors
    if view.get("type") != surface:
        kit.fail("/view/type", f"must be {surface!r}")
    if surface == "modal":
        kit.text(view.get("title"), "/view/title", VIEW_TITLE, plain=True)
        for key in ("submit", "close"):
            kit.optional_text(view, key, "/view", VIEW_TITLE)
        if "submit" not in view and _inputs(view):
            kit.fail("/view", "must provide a submit property when using input blocks")
    for key, limit in (
        ("private_metadata", PRIVATE_METADATA),
        ("callback_id", ID_LIMIT),
        ("external_id", ID_LIMIT),
    ):
        if key in view:
            kit.string(view[key], f"/view/{key}", limit)
    return kit.blocks(view.get("blocks"), "/view/blocks")


def _inputs(view: Json) -> list[Json]:
    """The input blocks of a view."""
    blocks = view.get("blocks")
    return (
        [b for b in blocks if isinstance(b, dict) and b.get("type") == "input"]
        if isinstance(blocks, list)
        else []
    )


def _short_id() -> str:
    """A block_id or action_id as Slack makes one up for a block or element sent without."""
    return secrets.token_urlsafe(4)[:5]


def with_ids(blocks: list[Json]) -> list[Json]:
    """A copy of valid blocks as Slack stores them: every block has a block_id, every element an
    action_id."""
    stored = copy.deepcopy(blocks)
    for block in stored:
        block.setdefault("block_id", _short_id())
        elements = (
            block.get("elements", [])
            if block["type"] == "actions"
            else [block.get("accessory"), block.get("element")]
        )
        for element in elements:
            if isinstance(element, dict) and element.get("type") != "image":
                element.setdefault("action_id", _short_id())
    return stored


def buttons(blocks: list[Json]) -> list[tuple[Json, Json]]:
    """(block, button) for every button in actions blocks and section accessories."""
    found = []
    for block in blocks:
        elements = (
            block.get("elements", [])
            if block.get("type") == "actions"
            else [block.get("accessory")]
        )
        found += [(block, e) for e in elements if isinstance(e, dict) and e.get("type") == "button"]
    return found


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's request signature: ``v0=`` + HMAC-SHA256 of ``v0:<timestamp>:<body>``."""
    digest = hmac.new(
        secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256
    ).hexdigest()
    return f"v0={digest}"


# ---------------------------------------------------------------------------------------------
# Records


@dataclass
class SlackLimits:
    """Posting limits: sliding one-second windows, measured at arrival."""

    channel_per_s: float = 1.0
    """chat.postMessage, chat.update and chat.postEphemeral to one conversation."""
    workspace_per_s: float | None = None
    """Every chat.postMessage together (None: no such limit)."""


@dataclass
class Call(_Call):
    """One Web API request the fake received."""

    error: str | None = None
    """Slack's error code when the answer was not ok."""


@dataclass
class Upload:
    """A file shared with files.completeUploadExternal (``channel`` None: not shared, private to the
    app)."""

    channel: str | None
    filename: str
    data: bytes
    title: str
    initial_comment: str | None
    file_id: str
    thread_ts: str | None = None


@dataclass(eq=False)
class Delivery:
    """One thing Slack sends the app (an envelope over Socket Mode, or a signed POST) and how the
    app answered."""

    kind: str
    """``slash_commands``, ``interactive`` or ``events_api``."""
    payload: Json
    envelope_id: str
    transport: str
    """``socket`` or ``http``."""
    accepts_response_payload: bool = False
    target: str | None = None
    """The request URL of an HTTP delivery."""
    content_type: str = ""
    request_body: bytes = b""
    signature: str = "good"
    """``good``, ``bad`` (signed with another secret) or ``none`` (no signature headers)."""
    stale: bool = False
    """Timestamped six minutes ago."""
    retry_attempt: int = 0
    retry_reason: str = ""
    connection: int | None = field(default=None, init=False)
    """The Socket Mode connection that carried it (numbered from 1 in the order they opened)."""
    sent_at: float | None = field(default=None, init=False)
    """``time.monotonic()`` when it went out."""
    acked_at: float | None = field(default=None, init=False)
    ack: Json | None = field(default=None, init=False)
    """The ack's payload (Socket Mode), or the HTTP answer's JSON body (``{"text": …}`` for plain
    text)."""
    acks: int = field(default=0, init=False)
    """How many acks arrived (Socket Mode: more than one is an app bug)."""
    status: int | None = field(default=None, init=False)
    body: str | None = field(default=None, init=False)
    error: str | None = field(default=None, init=False)
    """An HTTP delivery that got no answer: ``http_timeout`` or the connection error's name."""
    ack_error: str | None = field(default=None, init=False)
    """Why Slack could not use the ack's payload (``invalid_blocks``, ``invalid_arguments``), as it
    tells the user."""
    request_headers: dict[str, str] = field(default_factory=dict, init=False)
    acked: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    """Set when the app acknowledged (Socket Mode ack, or HTTP 200)."""
    answered: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    """Set when the app acked, or an HTTP delivery got any answer or failed."""

    @property
    def ack_seconds(self) -> float | None:
        """Seconds from sending to the ack (Slack wants it within 3)."""
        return (
            None if self.acked_at is None or self.sent_at is None else self.acked_at - self.sent_at
        )

    def _outcome(self) -> str:
        return (
            f"status {self.status}, body {self.body!r}"
            if self.error is None
            else f"error {self.error}"
        )

    async def wait_acked(self, timeout: float = 5.0) -> Delivery:
        """Wait (in a test's event loop) for the ack; AssertionError if it does not come."""
        deadline = time.monotonic() + timeout
        while not self.answered.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        return self._checked_ack()

    def wait_acked_sync(self, timeout: float = 5.0) -> Delivery:
        """Wait (blocking) for the ack; AssertionError if it does not come."""
        self.answered.wait(timeout)
        return self._checked_ack()

    async def wait_answered(self, timeout: float = 5.0) -> Delivery:
        """Wait for any answer (an HTTP delivery's refusal too)."""
        deadline = time.monotonic() + timeout
        while not self.answered.is_set():
            if time.monotonic() > deadline:
                raise AssertionError(f"no answer to the {self.kind} delivery {self.envelope_id}")
            await asyncio.sleep(0.005)
        return self

    def _checked_ack(self) -> Delivery:
        if not self.acked.is_set():
            answered = f" (answered: {self._outcome()})" if self.answered.is_set() else ""
            raise AssertionError(
                f"the {self.kind} delivery {self.envelope_id} was not acked{answered}"
            )
        return self


@dataclass
class _Fault:
    error: str
    status: int
    retry_after: int | None
    match: Callable[[Json], bool] | None = None


@dataclass
class _User:
    id: str
    name: str
    reachable: bool
    dm: str


@dataclass
class _Conversation:
    id: str
    name: str
    kind: str
    """``im`` or ``channel``."""
    members: set[str]
    bot_member: bool = True
    user: str | None = None
    """The other side of an ``im``."""
    messages: dict[str, Json] = field(default_factory=dict)
    """ts → message, oldest first."""
    ephemerals: list[Json] = field(default_factory=list)


@dataclass
class _View:
    view: Json
    user: str
    status: str = "open"
    """``open``, ``submitted`` or ``closed``."""
    errors: Json | None = None
    """The field errors of the last ``response_action: errors`` ack."""
    updates: int = 0
    opened_ts: str = ""
    """When it was opened, on the clock of message timestamps (to place it among a conversation's
    messages)."""

    def inspected(self) -> Json:
        """The view object plus who it is for, when it was opened and what became of it."""
        return copy.deepcopy(self.view) | {
            "user": self.user,
            "status": self.status,
            "errors": self.errors,
            "updates": self.updates,
            "opened_ts": self.opened_ts,
        }


@dataclass(eq=False)
class _Socket:
    ws: web.WebSocketResponse
    number: int = 0
    draining: bool = False
    dead: bool = False

    def live(self) -> bool:
        """Can take envelopes: open, and not told to reconnect."""
        return not (self.draining or self.dead or self.ws.closed)


@dataclass
class _UploadSlot:
    file_id: str
    filename: str
    length: int
    data: bytes | None = None
    completed: bool = False


# ---------------------------------------------------------------------------------------------
# The server


@dataclass
class FakeSlack(Waits):
    """The server. Use as a context manager; give slack_sdk ``base_url=fake.api_url``, or a
    subprocess ``env()``."""

    limits: SlackLimits | None = field(default_factory=SlackLimits)
    bot_token: str = BOT_TOKEN
    app_token: str = APP_TOKEN
    signing_secret: str = SIGNING_SECRET
    verification_token: str = VERIFICATION_TOKEN
    team_id: str = "T0HILBOT"
    team_domain: str = "hilbot-test"
    bot_user_id: str = "U0HILBOT"
    bot_id: str = "B0HILBOT"
    app_id: str = "A0HILBOT"
    trigger_ttl: float = 3.0
    """Seconds a trigger_id can open a modal."""
    http_timeout: float = 3.0
    """Seconds Slack waits for the answer to an HTTP delivery."""
    refresh_grace: float = 10.0
    """Seconds a socket told to refresh stays open if its client does not close it."""
    http_target: str | None = None
    """Set to the app's request URL to deliver by signed POSTs instead of Socket Mode."""
    calls: list[Call] = field(default_factory=list, repr=False)
    """Every Web API request, in arrival order."""
    ratelimited: list[tuple[str, str, str]] = field(default_factory=list, repr=False)
    """(method, conversation, "channel" | "workspace") of every 429 for a posting limit."""
    deliveries: list[Delivery] = field(default_factory=list, repr=False)
    uploads: list[Upload] = field(default_factory=list, repr=False)
    responses: list[Json] = field(default_factory=list, repr=False)
    """Every POST to a response_url: ``{"key", "params", "status"}``."""
    socket_messages: list[Any] = field(default_factory=list, repr=False)
    """Everything Socket Mode clients sent (acks and anything else), decoded when JSON."""
    connects: int = 0
    """Socket Mode connections accepted so far."""
    on_call: Callable[[Call], None] | None = field(default=None, repr=False)
    """Called (in the server's thread) with each authorised call as it arrives, before it is carried
    out."""
    on_ack: Callable[[Delivery], None] | None = field(default=None, repr=False)
    """Called (in the server's thread) with a delivery the moment its ack arrives (HTTP: its 200
    answer)."""

    def __post_init__(self) -> None:
        self._lock = threading.RLock()
        self._server = ThreadedApp(self._app, "fake-slack", shutdown_timeout=1.0)
        self.port = 0
        self._users: dict[str, _User] = {}
        self._conversations: dict[str, _Conversation] = {}
        self._views: dict[str, _View] = {}
        self._homes: dict[str, str] = {}
        self._triggers: dict[str, tuple[float, str, bool]] = {}
        self._tickets: set[str] = set()
        self._envelopes: dict[str, Delivery] = {}
        self._response_urls: dict[str, Json] = {}
        self._upload_slots: dict[str, _UploadSlot] = {}
        self._history: dict[tuple[str, str], list[str]] = defaultdict(list)
        self._faults: dict[str, deque[_Fault]] = defaultdict(deque)
        self._outage: ApiError | None = None
        self._windows: dict[tuple[str, str], Window] = {}
        self._last_us = 0
        self._ids = itertools.count(1)
        self._sockets: list[_Socket] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._handlers: dict[str, Callable[[Json], Json]] = {
            "auth.test": self._auth_test,
            "apps.connections.open": self._connections_open,
            "conversations.open": self._conversations_open,
            "users.info": self._users_info,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.delete": self._delete,
            "chat.postEphemeral": self._post_ephemeral,
            "views.open": self._views_open,
            "views.update": self._views_update,
            "views.publish": self._views_publish,
            "files.getUploadURLExternal": self._upload_url,
            "files.completeUploadExternal": self._complete_upload,
        }

    # -- addresses -----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The server's root."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        """What slack_sdk takes as ``base_url`` (it appends the method)."""
        return f"{self.base_url}/api/"

    def env(self) -> dict[str, str]:
        """Environment for an app process that should talk to this server."""
        return {
            "SLACK_BOT_TOKEN": self.bot_token,
            "SLACK_APP_TOKEN": self.app_token,
            "SLACK_SIGNING_SECRET": self.signing_secret,
            "SLACK_API_URL": self.api_url,
        }

    # -- the directory -------------------------------------------------------------------------

    def user(self, user_id: str, name: str | None = None, reachable: bool = True) -> Json:
        """Register a user and their DM with the app; ``reachable=False``: their Messages tab is
        off."""
        assert user_id.startswith(("U", "W")), "user ids start with U (or W)"
        with self._lock:
            person = _User(user_id, name or user_id.lower(), reachable, "D" + user_id[1:])
            self._users[user_id] = person
            if person.dm not in self._conversations:
                self._conversations[person.dm] = _Conversation(
                    person.dm, "directmessage", "im", {user_id}, user=user_id
                )
            return self._person(user_id)

    def dm(self, user_id: str) -> str:
        """The id of a user's DM with the app."""
        with self._lock:
            return self._known_user(user_id).dm

    def channel(
        self,
        channel_id: str,
        name: str | None = None,
        members: list[str] | tuple[str, ...] = (),
        bot_member: bool = True,
    ) -> Json:
        """Register a public channel with these members (the bot among them when ``bot_member``)."""
        assert channel_id.startswith(("C", "G")), "channel ids start with C (or G)"
        with self._lock:
            for member in members:
                self._known_user(member)
            self._conversations[channel_id] = _Conversation(
                channel_id, name or channel_id.lower(), "channel", set(members), bot_member
            )
            return {"id": channel_id, "name": name or channel_id.lower()}

    def _known_user(self, user_id: str) -> _User:
        assert user_id in self._users, f"register user {user_id} with user() first"
        return self._users[user_id]

    # -- faults --------------------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        error: str | None = None,
        status: int = 200,
        retry_after: int | None = None,
        count: int = 1,
        match: Callable[[Json], bool] | None = None,
    ) -> None:
        """The next ``count`` calls to ``method`` (whose params ``match`` accepts) get this error,
        not carried out.

        ``error`` defaults to ``ratelimited`` for a 429 (``Retry-After`` 1 unless given),
        ``internal_error`` otherwise.
        """
        if status == 429 and retry_after is None:
            retry_after = 1
        fault = _Fault(
            error or ("ratelimited" if status == 429 else "internal_error"),
            status,
            retry_after,
            match,
        )
        with self._lock:
            self._faults[method].extend(dataclasses.replace(fault) for _ in range(count))

    def outage(self, status: int = 500, error: str | None = None) -> None:
        """From now on every Web API call gets this error (and is not carried out), until
        :meth:`clear_faults`."""
        with self._lock:
            self._outage = ApiError(
                error or ("service_unavailable" if status == 503 else "internal_error"),
                status,
                retry_after=1 if status == 429 else None,
            )

    def clear_faults(self) -> None:
        """End an outage and drop every fault not yet taken."""
        with self._lock:
            self._outage = None
            self._faults.clear()

    # -- the users' side -----------------------------------------------------------------------

    def slash(
        self,
        user_id: str,
        text: str,
        channel_id: str | None = None,
        command: str = "/hilbot",
        *,
        signature: str = "good",
        stale: bool = False,
    ) -> Delivery:
        """A user runs ``command text`` in a channel (their DM by default)."""
        with self._lock:
            person = self._known_user(user_id)
            conversation = self._conversations[channel_id or person.dm]
            payload = {
                "token": self.verification_token,
                "team_id": self.team_id,
                "team_domain": self.team_domain,
                "channel_id": conversation.id,
                "channel_name": conversation.name,
                "user_id": user_id,
                "user_name": person.name,
                "command": command,
                "text": text,
                "api_app_id": self.app_id,
                "is_enterprise_install": "false",
                "response_url": self._response_url(conversation.id, user_id, None),
                "trigger_id": self._trigger(user_id),
            }
        return self._deliver("slash_commands", payload, signature, stale)

    def click(
        self,
        user_id: str,
        channel_id: str,
        ts: str,
        value: str | None,
        action_id: str | None = None,
        *,
        signature: str = "good",
        stale: bool = False,
    ) -> Delivery:
        """A user clicks the button with this value (and action_id) under a message.

        A button the message no longer has can be clicked (as from a stale client) by giving its
        ``action_id``.
        """
        with self._lock:
            conversation = self._conversation_of(channel_id)
            message = self._stored(conversation.id, ts)
            action = self._action(message.get("blocks", []), value, action_id, f"message {ts}")
            payload = self._interaction(user_id, "block_actions") | {
                "container": {
                    "type": "message",
                    "message_ts": ts,
                    "channel_id": conversation.id,
                    "is_ephemeral": False,
                },
                "channel": {"id": conversation.id, "name": conversation.name},
                "message": copy.deepcopy(message),
                "state": {"values": {}},
                "response_url": self._response_url(conversation.id, user_id, ts),
                "actions": [action],
            }
        return self._deliver("interactive", payload, signature, stale)

    def click_button(
        self,
        user_id: str,
        channel_id: str,
        ts: str,
        label: str,
        *,
        signature: str = "good",
        stale: bool = False,
    ) -> Delivery:
        """A user clicks the button labelled ``label`` (or the first whose label starts with it)
        under a message."""
        with self._lock:
            found = buttons(
                self._stored(self._conversation_of(channel_id).id, ts).get("blocks", [])
            )
        labels = [button["text"]["text"] for _, button in found]
        match = next((b for _, b in found if b["text"]["text"] == label), None) or next(
            (b for _, b in found if b["text"]["text"].startswith(label)), None
        )
        assert match is not None, (
            f"no button labelled {label!r} under message {ts}; buttons: {labels}"
        )
        return self.click(
            user_id,
            channel_id,
            ts,
            match.get("value"),
            match["action_id"],
            signature=signature,
            stale=stale,
        )

    def click_in_view(
        self,
        user_id: str,
        view_id: str,
        value: str | None,
        action_id: str | None = None,
        *,
        signature: str = "good",
        stale: bool = False,
    ) -> Delivery:
        """A user clicks a button in an open modal (or their Home tab)."""
        with self._lock:
            record = self._open_view(user_id, view_id)
            action = self._action(record.view["blocks"], value, action_id, f"view {view_id}")
            payload = self._interaction(user_id, "block_actions") | {
                "container": {"type": "view", "view_id": view_id},
                "view": copy.deepcopy(record.view),
                "actions": [action],
            }
        return self._deliver("interactive", payload, signature, stale)

    def submit_view(
        self,
        user_id: str,
        view_id: str,
        text: str | None = None,
        values: Json | None = None,
        *,
        signature: str = "good",
        stale: bool = False,
    ) -> Delivery:
        """A user submits a modal: ``text`` fills its first plain_text_input, ``values`` inputs by
        action or block id.

        A value in ``values`` is a string (a text input's value) or the element's whole state dict.
        Like Slack's client, this refuses (AssertionError) to submit a required input left empty or
        a text of the wrong length.
        """
        with self._lock:
            record = self._open_view(user_id, view_id)
            state = self._state_values(record.view, text, values or {})
            record.view["state"] = {"values": state}
            payload = self._interaction(user_id, "view_submission") | {
                "view": copy.deepcopy(record.view),
                "response_urls": [],
            }
        return self._deliver("interactive", payload, signature, stale)

    def close_view(
        self, user_id: str, view_id: str, *, signature: str = "good", stale: bool = False
    ) -> Delivery | None:
        """A user closes a modal; the app hears of it (``view_closed``) only if the view asked to
        ``notify_on_close``."""
        with self._lock:
            record = self._open_view(user_id, view_id)
            record.status = "closed"
            if not record.view.get("notify_on_close"):
                return None
            payload = self._interaction(user_id, "view_closed") | {
                "view": copy.deepcopy(record.view),
                "is_cleared": False,
            }
            del payload["trigger_id"]
        return self._deliver("interactive", payload, signature, stale)

    def message_im(
        self,
        user_id: str,
        text: str,
        thread_ts: str | None = None,
        *,
        signature: str = "good",
        stale: bool = False,
    ) -> Delivery:
        """A user writes to the app in their DM (a ``message.im`` event)."""
        return self.message_channel(
            user_id, self.dm(user_id), text, thread_ts, signature=signature, stale=stale
        )

    def message_channel(
        self,
        user_id: str,
        channel_id: str,
        text: str,
        thread_ts: str | None = None,
        *,
        signature: str = "good",
        stale: bool = False,
    ) -> Delivery:
        """A user writes in a conversation the app is in (a ``message`` event; ``channel_type`` im
        or channel)."""
        with self._lock:
            self._known_user(user_id)
            conversation = self._conversations[channel_id]
            ts = self._next_ts()
            message = {
                "type": "message",
                "user": user_id,
                "text": text,
                "ts": ts,
                "team": self.team_id,
                "client_msg_id": str(uuid.uuid4()),
                "blocks": _rich_text(text),
            }
            if thread_ts:
                message["thread_ts"] = thread_ts
            conversation.messages[ts] = message
            event = copy.deepcopy(message) | {
                "channel": conversation.id,
                "event_ts": ts,
                "channel_type": "im" if conversation.kind == "im" else "channel",
            }
        return self._deliver("events_api", self._event_callback(event), signature, stale)

    def open_home(self, user_id: str, *, signature: str = "good", stale: bool = False) -> Delivery:
        """A user opens the app's Home tab (``app_home_opened``, with the published view if there is
        one)."""
        with self._lock:
            event: Json = {
                "type": "app_home_opened",
                "user": user_id,
                "channel": self._known_user(user_id).dm,
                "tab": "home",
                "event_ts": self._next_ts(),
            }
            if user_id in self._homes:
                event["view"] = copy.deepcopy(self._views[self._homes[user_id]].view)
        return self._deliver("events_api", self._event_callback(event), signature, stale)

    def redeliver(self, delivery: Delivery) -> Delivery:
        """Send a delivery again as Slack retries one: same payload, ``retry_attempt`` + 1 (HTTP:
        same body, new signature)."""
        retry = dataclasses.replace(
            delivery,
            envelope_id=str(uuid.uuid4()),
            payload=copy.deepcopy(delivery.payload),
            retry_attempt=delivery.retry_attempt + 1,
            retry_reason="http_timeout" if delivery.transport == "http" else "timeout",
        )
        return self._dispatched(retry)

    def refresh_socket(self) -> None:
        """Tell every connected Socket Mode client to reconnect (``disconnect``, reason
        ``refresh_requested``)."""
        self._server.call_soon(partial(self._spawn, self._refresh()))

    # -- building payloads ---------------------------------------------------------------------

    def _person(self, user_id: str) -> Json:
        person = self._known_user(user_id)
        return {
            "id": user_id,
            "username": person.name,
            "name": person.name,
            "team_id": self.team_id,
        }

    def _interaction(self, user_id: str, kind: str) -> Json:
        """What every interactivity payload starts with."""
        return {
            "type": kind,
            "user": self._person(user_id),
            "api_app_id": self.app_id,
            "token": self.verification_token,
            "trigger_id": self._trigger(user_id),
            "team": {"id": self.team_id, "domain": self.team_domain},
            "enterprise": None,
            "is_enterprise_install": False,
        }

    def _event_callback(self, event: Json) -> Json:
        """An Events API body around one event."""
        n = next(self._ids)
        return {
            "token": self.verification_token,
            "team_id": self.team_id,
            "context_team_id": self.team_id,
            "api_app_id": self.app_id,
            "event": event,
            "type": "event_callback",
            "event_id": f"Ev0{n:08X}",
            "event_time": int(time.time()),
            "is_ext_shared_channel": False,
            "event_context": f"4-fake-{n}",
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": self.team_id,
                    "user_id": self.bot_user_id,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
        }

    def _trigger(self, user_id: str) -> str:
        """A fresh trigger_id for a user's interaction."""
        trigger = f"{next(self._ids)}.{int(time.time())}.{secrets.token_hex(10)}"
        self._triggers[trigger] = (time.monotonic(), user_id, False)
        return trigger

    def _response_url(self, channel: str, user: str, message_ts: str | None) -> str:
        """A response_url on this server for an interaction in ``channel``."""
        key = secrets.token_urlsafe(12)
        self._response_urls[key] = {
            "channel": channel,
            "user": user,
            "message_ts": message_ts,
            "uses": 0,
        }
        return f"{self.base_url}/respond/{key}"

    def _action(
        self, blocks: list[Json], value: str | None, action_id: str | None, where: str
    ) -> Json:
        """The ``actions[0]`` of a click on the button with this value (and action_id)."""
        found = [
            (b, e)
            for b, e in buttons(blocks)
            if e.get("value") == value and action_id in (None, e["action_id"])
        ]
        if not found:
            assert action_id is not None, f"no button with value {value!r} in {where}"
            block, button = (
                {"block_id": _short_id()},
                {
                    "action_id": action_id,
                    "value": value,
                    "text": {"type": "plain_text", "text": "?"},
                },
            )
        else:
            block, button = found[0]
        action = {
            "action_id": button["action_id"],
            "block_id": block["block_id"],
            "text": button["text"],
            "type": "button",
            "action_ts": self._next_ts(),
        }
        return action | {key: button[key] for key in ("value", "style", "url") if key in button}

    def _open_view(self, user_id: str, view_id: str) -> _View:
        self._known_user(user_id)
        record = self._views.get(view_id)
        assert record is not None, f"no view {view_id}"
        assert record.user == user_id, f"view {view_id} is open for {record.user}, not {user_id}"
        assert record.status == "open", f"view {view_id} is {record.status}"
        return record

    def _state_values(self, view: Json, text: str | None, values: Json) -> Json:
        """``view.state.values`` of a submission, as Slack's client builds it from the inputs."""
        state: Json = {}
        for block in view.get("blocks", []):
            element = block.get("element") if block.get("type") == "input" else None
            if element is None:
                continue
            given = values.get(element["action_id"], values.get(block["block_id"]))
            if given is None and text is not None and element["type"] == "plain_text_input":
                given, text = text, None
            entry = _element_state(element, given)
            _check_input(block, entry)
            state[block["block_id"]] = {element["action_id"]: entry}
        return state

    # -- deliveries ----------------------------------------------------------------------------

    def _deliver(self, kind: str, payload: Json, signature: str, stale: bool) -> Delivery:
        """Send one payload to the app by the transport in use now."""
        http = self.http_target is not None
        delivery = Delivery(
            kind,
            payload,
            str(uuid.uuid4()),
            "http" if http else "socket",
            accepts_response_payload=kind == "slash_commands"
            or payload.get("type") == "view_submission",
            target=self.http_target,
            signature=signature,
            stale=stale,
        )
        if http:
            delivery.content_type, delivery.request_body = _http_body(kind, payload)
        return self._dispatched(delivery)

    def _dispatched(self, delivery: Delivery) -> Delivery:
        with self._lock:
            self.deliveries.append(delivery)
            self._envelopes[delivery.envelope_id] = delivery
        self._server.call_soon(partial(self._send, delivery))
        return delivery

    def _send(self, delivery: Delivery) -> None:
        """(server loop) Queue a Socket Mode envelope, or start an HTTP POST."""
        if delivery.transport == "http":
            self._spawn(self._post(delivery))
        else:
            self._outbox.put_nowait(delivery)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, delivery: Delivery) -> None:
        """POST a delivery to the app's request URL, signed; its answer is the ack."""
        assert delivery.target is not None
        delivery.request_headers = self._signed_headers(delivery)
        delivery.sent_at = time.monotonic()
        try:
            async with self._client.post(
                delivery.target,
                data=delivery.request_body,
                headers=delivery.request_headers,
                timeout=aiohttp.ClientTimeout(total=self.http_timeout),
            ) as response:
                delivery.status, delivery.body = response.status, await response.text()
        except asyncio.TimeoutError:
            delivery.error = "http_timeout"
        except aiohttp.ClientError as error:
            delivery.error = type(error).__name__
        if delivery.status == 200:
            self._acked(delivery, _answer_payload(delivery.body or ""))
        delivery.answered.set()

    def _signed_headers(self, delivery: Delivery) -> dict[str, str]:
        """The headers Slack sends with a delivery: signature, timestamp, retry count."""
        timestamp = str(int(time.time()) - (360 if delivery.stale else 0))
        secret = (
            self.signing_secret if delivery.signature == "good" else self.signing_secret + "-not"
        )
        headers = {"Content-Type": delivery.content_type, "User-Agent": SLACKBOT_AGENT}
        if delivery.signature != "none":
            headers["X-Slack-Request-Timestamp"] = timestamp
            headers["X-Slack-Signature"] = sign(secret, timestamp, delivery.request_body)
        if delivery.retry_attempt:
            headers["X-Slack-Retry-Num"] = str(delivery.retry_attempt)
            headers["X-Slack-Retry-Reason"] = delivery.retry_reason
        return headers

    def _acked(self, delivery: Delivery, payload: Json | None) -> None:
        """(server loop) An ack arrived: record it, act on it as Slack does, tell the hook."""
        with self._lock:
            delivery.acks += 1
            if delivery.acks > 1:
                return
            delivery.ack, delivery.acked_at = payload, time.monotonic()
            if delivery.accepts_response_payload:
                delivery.ack_error = self._act_on_ack(delivery.payload, payload or {})
        if self.on_ack is not None:
            self.on_ack(delivery)
        delivery.acked.set()
        delivery.answered.set()

    def _act_on_ack(self, payload: Json, ack: Json) -> str | None:
        """What Slack does with an ack's payload: show a command's reply, keep or close a submitted
        modal.

        Returns the error Slack would show the user when the payload cannot be used.
        """
        if payload.get("type") == "view_submission":
            return self._submission_outcome(payload, ack)
        if "command" in payload and (ack.get("text") or ack.get("blocks")):
            return self._reply(payload["channel_id"], payload["user_id"], ack, None, "ack")
        return None

    def _submission_outcome(self, payload: Json, ack: Json) -> str | None:
        record = self._views[payload["view"]["id"]]
        action = ack.get("response_action")
        if action in ("update", "push") and view_errors(ack.get("view"), "modal"):
            return "invalid_arguments"
        if action == "errors":
            record.errors = ack.get("errors")
        elif action == "update":
            self._replace_view(record, ack["view"])
        elif action == "push":
            self._new_view(ack["view"], record.user, previous=record.view)
        elif action == "clear":
            for other in self._views.values():
                if (
                    other.user == record.user
                    and other.status == "open"
                    and other.view["type"] == "modal"
                ):
                    other.status = "closed"
        else:
            record.status = "submitted"
        return None

    def _reply(
        self, channel: str, user: str, params: Json, message_ts: str | None, source: str
    ) -> str | None:
        """A reply through an ack or a response_url: in the channel, replacing the original, or
        ephemeral.

        Returns ``invalid_blocks`` (and shows nothing) when its blocks break Block Kit's rules.
        """
        conversation = self._conversations[channel]
        if params.get("blocks") and BlockKit("message").blocks(params["blocks"], "/blocks"):
            return "invalid_blocks"
        if params.get("delete_original") and message_ts:
            conversation.messages.pop(message_ts, None)
        elif params.get("replace_original") and message_ts in conversation.messages:
            self._edit(conversation.messages[message_ts], channel, params)
        elif params.get("response_type") == "in_channel":
            blocks = params.get("blocks")
            self._store(
                conversation,
                self._bot_message(
                    params.get("text") or "",
                    with_ids(blocks) if blocks else None,
                    params.get("thread_ts"),
                ),
            )
        else:
            self._add_ephemeral(conversation, user, params, source)
        return None

    # -- Socket Mode ---------------------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        """A Socket Mode connection: hello, then envelopes out and acks in until it closes."""
        with self._lock:
            ticket = request.query.get("ticket", "")
            known = ticket in self._tickets
            self._tickets.discard(ticket)
        if not known:
            return web.Response(status=401, text="invalid_ticket")
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        socket = _Socket(ws, self.connects + 1)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": self.connections + 1,
                "debug_info": {
                    "host": "applink-fake-1",
                    "build_number": 1,
                    "approximate_connection_time": 18060,
                },
                "connection_info": {"app_id": self.app_id},
            }
        )
        self._sockets.append(socket)
        self.connects += 1
        self._connections_changed()
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    self._client_said(message.data)
        finally:
            self._sockets.remove(socket)
            self._connections_changed()
        return ws

    @property
    def connections(self) -> int:
        """Socket Mode connections open now (and not told to refresh)."""
        return sum(socket.live() for socket in list(self._sockets))

    def live_connections(self) -> list[int]:
        """The numbers of the Socket Mode connections open now (and not told to refresh)."""
        return [socket.number for socket in list(self._sockets) if socket.live()]

    def _connections_changed(self) -> None:
        if any(socket.live() for socket in self._sockets):
            self._socket_ready.set()
        else:
            self._socket_ready.clear()

    def _client_said(self, data: str) -> None:
        """(server loop) A text frame from a client: an ack if it names an envelope."""
        try:
            message = json.loads(data)
        except ValueError:
            message = data
        with self._lock:
            self.socket_messages.append(message)
            delivery = (
                self._envelopes.get(message.get("envelope_id", ""))
                if isinstance(message, dict)
                else None
            )
        if delivery is not None:
            payload = message.get("payload")
            self._acked(delivery, {"text": payload} if isinstance(payload, str) else payload)

    async def _dispatch(self) -> None:
        """(server loop) Send queued envelopes in order, each once a client is connected."""
        while True:
            delivery = await self._outbox.get()
            while not await self._send_envelope(delivery):
                await self._socket_ready.wait()

    async def _send_envelope(self, delivery: Delivery) -> bool:
        """Send one envelope over a live socket (one of them at random); False if there is
        none."""
        live = [socket for socket in self._sockets if socket.live()]
        if not live:
            self._connections_changed()
            return False
        socket = random.choice(live)
        envelope: Json = {
            "envelope_id": delivery.envelope_id,
            "payload": delivery.payload,
            "type": delivery.kind,
            "accepts_response_payload": delivery.accepts_response_payload,
        }
        if delivery.kind == "events_api":
            envelope |= {
                "retry_attempt": delivery.retry_attempt,
                "retry_reason": delivery.retry_reason,
            }
        delivery.sent_at, delivery.connection = time.monotonic(), socket.number
        try:
            await socket.ws.send_str(json.dumps(envelope))
        except (ConnectionError, RuntimeError):
            socket.dead, delivery.sent_at, delivery.connection = True, None, None
            return False
        return True

    async def _refresh(self) -> None:
        """Ask every live socket's client to reconnect; close the socket after the grace period."""
        for socket in [socket for socket in self._sockets if socket.live()]:
            socket.draining = True
            try:
                await socket.ws.send_json(
                    {
                        "type": "disconnect",
                        "reason": "refresh_requested",
                        "debug_info": {"host": "applink-fake-1"},
                    }
                )
            except (ConnectionError, RuntimeError):
                socket.dead = True
            self._spawn(self._close_later(socket))
        self._connections_changed()

    async def _close_later(self, socket: _Socket) -> None:
        await asyncio.sleep(self.refresh_grace)
        await socket.ws.close()

    # -- inspection ----------------------------------------------------------------------------

    def calls_to(self, method: str) -> list[Call]:
        """The calls to one method, in arrival order."""
        with self._lock:
            return [call for call in self.calls if call.method == method]

    def messages(self, channel: str) -> list[Json]:
        """The bot's messages in a conversation (a user id means their DM) as they are now, oldest
        first.

        Each has ``channel``, ``edits`` (chat.update and replace_original count) and ``history``
        (its texts).
        """
        with self._lock:
            conversation = self._conversation_of(channel)
            return [
                self._inspected(conversation.id, m)
                for m in conversation.messages.values()
                if "bot_id" in m
            ]

    def message(self, channel: str, ts: str) -> Json:
        """One message (the bot's or a user's) as it is now."""
        with self._lock:
            conversation = self._conversation_of(channel)
            return self._inspected(conversation.id, self._stored(conversation.id, ts))

    def ephemerals(self, channel: str, user: str | None = None) -> list[Json]:
        """Ephemeral messages shown in a conversation (to ``user``), oldest first."""
        with self._lock:
            shown = self._conversation_of(channel).ephemerals
            return [copy.deepcopy(e) for e in shown if user is None or e["user"] == user]

    @property
    def views(self) -> list[Json]:
        """Every modal and Home tab, as :meth:`view` shows it, in the order they were opened."""
        with self._lock:
            return [record.inspected() for record in self._views.values()]

    def view(self, view_id: str) -> Json:
        """A view as it is now, plus ``user``, ``status`` (open/submitted/closed), ``errors`` and
        ``updates``."""
        with self._lock:
            assert view_id in self._views, f"no view {view_id}"
            return self._views[view_id].inspected()

    def open_views(self, user: str) -> list[Json]:
        """The modals open for a user, oldest first."""
        return [
            v
            for v in self.views
            if v["user"] == user and v["status"] == "open" and v["type"] == "modal"
        ]

    def home(self, user: str) -> Json | None:
        """The Home tab published for a user, or None."""
        with self._lock:
            view_id = self._homes.get(user)
        return None if view_id is None else self.view(view_id)

    def _conversation_of(self, channel: str) -> _Conversation:
        """A conversation by id, or a user's DM by their id."""
        if channel in self._users:
            channel = self._users[channel].dm
        assert channel in self._conversations, f"no conversation {channel}"
        return self._conversations[channel]

    def _stored(self, channel: str, ts: str) -> Json:
        message = self._conversations[channel].messages.get(ts)
        assert message is not None, f"no message {ts} in {channel}"
        return message

    def _inspected(self, channel: str, message: Json) -> Json:
        history = self._history.get((channel, message["ts"]), [])
        return copy.deepcopy(message) | {
            "channel": channel,
            "edits": max(len(history) - 1, 0),
            "history": list(history),
        }

    # -- Web API requests ----------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        call = Call(method, {}, time.monotonic())
        with self._lock:
            self.calls.append(call)
        try:
            call.params.update(await _read_params(request))
            result = self._run(method, call, _token(request, call.params))
            call.status, body, headers = 200, {"ok": True} | result, {}
        except ApiError as error:
            call.status, call.error, body, headers = (
                error.status,
                error.error,
                error.body(),
                error.headers(),
            )
        return web.json_response(body, status=call.status, headers=headers)

    def _run(self, method: str, call: Call, token: str | None) -> Json:
        """Authorisation, faults, posting limits, then the method itself."""
        if method not in self._handlers:
            raise ApiError("unknown_method")
        self._authorize(method, token)
        if self.on_call is not None:
            self.on_call(call)
        with self._lock:
            if self._outage is not None:
                raise self._outage
            fault = self._take_fault(method, call.params)
            if fault is not None:
                raise ApiError(fault.error, fault.status, fault.retry_after)
            self._check_rate(method, call)
            return self._handlers[method](call.params)

    def _authorize(self, method: str, token: str | None) -> None:
        """The bot token for Web API methods, the app-level token for apps.connections.open."""
        expected, other = (
            (self.app_token, self.bot_token)
            if method in APP_TOKEN_METHODS
            else (self.bot_token, self.app_token)
        )
        if not token:
            raise ApiError("not_authed")
        if token == other:
            raise ApiError("not_allowed_token_type")
        if token != expected:
            raise ApiError("invalid_auth")

    def _take_fault(self, method: str, params: Json) -> _Fault | None:
        """The first fault queued for ``method`` that this call matches, taken off the queue."""
        return take_fault(self._faults[method], params)

    def _check_rate(self, method: str, call: Call) -> None:
        """Posting limits: per conversation, and every chat.postMessage together; 429 with
        Retry-After."""
        if self.limits is None or method not in RATED_METHODS:
            return
        channel = self._rate_key(call.params.get("channel"))
        windows = (
            [("channel", channel, self.limits.channel_per_s)] if self.limits.channel_per_s else []
        )
        if method == "chat.postMessage" and self.limits.workspace_per_s:
            windows.append(("workspace", "", self.limits.workspace_per_s))
        counted = [
            (scope, self._windows.setdefault((scope, key), Window.per_second(rate)))
            for scope, key, rate in windows
        ]
        for scope, window in counted:
            if (wait := window.wait(call.at)) > 0:
                self.ratelimited.append((method, channel, scope))
                raise ratelimited(math.ceil(wait))
        for _, window in counted:
            window.times.append(call.at)

    def _rate_key(self, channel: Any) -> str:
        """The conversation a post counts for (a user id counts for their DM)."""
        channel = str(channel or "")
        return self._users[channel].dm if channel in self._users else channel

    # -- methods: identity ---------------------------------------------------------------------

    def _auth_test(self, params: Json) -> Json:
        return {
            "url": f"https://{self.team_domain}.slack.com/",
            "team": "Hilbot Test",
            "user": "hilbot",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _connections_open(self, params: Json) -> Json:
        ticket = secrets.token_urlsafe(16)
        self._tickets.add(ticket)
        return {"url": f"ws://127.0.0.1:{self.port}/socket?ticket={ticket}"}

    def _users_info(self, params: Json) -> Json:
        user = self._users.get(params.get("user", ""))
        if user is None:
            raise ApiError("user_not_found")
        return {
            "user": {
                "id": user.id,
                "team_id": self.team_id,
                "name": user.name,
                "real_name": user.name,
                "deleted": False,
                "is_bot": False,
                "profile": {"display_name": user.name, "real_name": user.name},
            }
        }

    def _conversations_open(self, params: Json) -> Json:
        users = params.get("users")
        if not users and params.get("channel") in self._conversations:
            return {"channel": {"id": params["channel"]}}
        if not users:
            raise ApiError("users_list_not_supplied")
        ids = [u.strip() for u in users.split(",")] if isinstance(users, str) else list(users)
        if any(u not in self._users for u in ids):
            raise ApiError("user_not_found")
        if len(ids) > 1:
            raise ApiError("method_not_supported_for_channel_type")  # group DMs are not modelled
        return {"no_op": True, "already_open": True, "channel": {"id": self._users[ids[0]].dm}}

    # -- methods: messages ---------------------------------------------------------------------

    def _post_message(self, params: Json) -> Json:
        conversation = self._writable(params.get("channel"))
        text, blocks = self._content(params)
        message = self._store(
            conversation,
            self._bot_message(text, blocks, params.get("thread_ts"), params.get("attachments")),
        )
        return {"channel": conversation.id, "ts": message["ts"], "message": copy.deepcopy(message)}

    def _own_message(self, params: Json, refusal: str) -> tuple[_Conversation, Json]:
        """The bot's own message that ``channel`` and ``ts`` name (``refusal`` if it is someone
        else's)."""
        conversation = self._conversations.get(params.get("channel", ""))
        if conversation is None:
            raise ApiError("channel_not_found")
        message = conversation.messages.get(params.get("ts", ""))
        if message is None:
            raise ApiError("message_not_found")
        if message.get("bot_id") != self.bot_id:
            raise ApiError(refusal)
        return conversation, message

    def _update(self, params: Json) -> Json:
        conversation, message = self._own_message(params, "cant_update_message")
        self._content(params, partial=True)
        self._edit(message, conversation.id, params)
        return {
            "channel": conversation.id,
            "ts": message["ts"],
            "text": message["text"],
            "message": copy.deepcopy(message),
        }

    def _delete(self, params: Json) -> Json:
        conversation, message = self._own_message(params, "cant_delete_message")
        del conversation.messages[message["ts"]]
        return {"channel": conversation.id, "ts": message["ts"]}

    def _post_ephemeral(self, params: Json) -> Json:
        conversation = self._writable(params.get("channel"))
        if params.get("user") not in conversation.members:
            raise ApiError("user_not_in_channel")
        text, blocks = self._content(params)
        shown = self._add_ephemeral(
            conversation,
            params["user"],
            {"text": text, "blocks": blocks, "thread_ts": params.get("thread_ts")},
            "api",
        )
        return {"message_ts": shown["message_ts"]}

    def _writable(self, channel: Any) -> _Conversation:
        """The conversation a post goes to: a user id means their DM; the bot must be able to post
        there."""
        channel = str(channel or "")
        if channel in self._users:
            channel = self._users[channel].dm
        conversation = self._conversations.get(channel) or next(
            (
                c
                for c in self._conversations.values()
                if c.kind == "channel" and c.name == channel.lstrip("#")
            ),
            None,
        )
        if conversation is None:
            raise ApiError("channel_not_found")
        if conversation.kind == "im" and not self._users[conversation.user or ""].reachable:
            raise ApiError("messages_tab_disabled")
        if conversation.kind == "channel" and not conversation.bot_member:
            raise ApiError("not_in_channel")
        return conversation

    def _content(self, params: Json, partial: bool = False) -> tuple[str, list[Json] | None]:
        """A message's text and blocks, checked: no_text, msg_too_long, invalid_blocks(_format).

        ``partial`` (chat.update): blocks may be an empty list (removing them), and absent text
        stays as it was.
        """
        blocks = _json_field(params, "blocks", "invalid_blocks_format")
        if blocks is not None and not isinstance(blocks, list):
            raise ApiError("invalid_blocks_format")
        text = params.get("text")
        if (
            not text
            and not blocks
            and not params.get("attachments")
            and not (partial and blocks is not None)
        ):
            raise ApiError("no_text")
        if isinstance(text, str) and len(text) > TEXT_LIMIT:
            raise ApiError("msg_too_long")
        if blocks and (errors := BlockKit("message").blocks(blocks, "/blocks")):
            raise ApiError("invalid_blocks", messages=errors)
        return str(text or ""), with_ids(blocks) if blocks else blocks

    def _bot_message(
        self,
        text: str,
        blocks: list[Json] | None,
        thread_ts: str | None = None,
        attachments: Any = None,
    ) -> Json:
        message: Json = {
            "type": "message",
            "user": self.bot_user_id,
            "bot_id": self.bot_id,
            "app_id": self.app_id,
            "text": text,
            "team": self.team_id,
        }
        if blocks:
            message["blocks"] = blocks
        if attachments:
            message["attachments"] = _json_field(
                {"attachments": attachments}, "attachments", "invalid_attachments"
            )
        if thread_ts:
            message["thread_ts"] = thread_ts
        return message

    def _store(self, conversation: _Conversation, message: Json) -> Json:
        """Give a message its ts and keep it in the conversation."""
        message["ts"] = self._next_ts()
        conversation.messages[message["ts"]] = message
        self._history[conversation.id, message["ts"]].append(message["text"])
        return message

    def _edit(self, message: Json, channel: str, params: Json) -> None:
        """Replace a message's text and blocks (blocks kept when absent, removed by an empty
        list)."""
        if "text" in params:
            message["text"] = params["text"]
        blocks = _json_field(params, "blocks", "invalid_blocks_format")
        if blocks:
            message["blocks"] = with_ids(blocks)
        elif blocks is not None:
            message.pop("blocks", None)
        message["edited"] = {"user": self.bot_user_id, "ts": self._next_ts()}
        self._history[channel, message["ts"]].append(message["text"])

    def _add_ephemeral(
        self, conversation: _Conversation, user: str, params: Json, source: str
    ) -> Json:
        shown = {
            "channel": conversation.id,
            "user": user,
            "text": params.get("text") or "",
            "blocks": params.get("blocks") or None,
            "thread_ts": params.get("thread_ts"),
            "message_ts": self._next_ts(),
            "source": source,
        }
        conversation.ephemerals.append(shown)
        return shown

    def _next_ts(self) -> str:
        """A message timestamp: the time in microseconds, always later than the last one handed
        out."""
        with self._lock:
            self._last_us = max(int(time.time() * 1_000_000), self._last_us + 1)
            return f"{self._last_us // 1_000_000}.{self._last_us % 1_000_000:06d}"

    # -- methods: views ------------------------------------------------------------------------

    def _views_open(self, params: Json) -> Json:
        trigger = params.get("trigger_id", "")
        if trigger not in self._triggers:
            raise ApiError("invalid_trigger_id")
        issued, user, used = self._triggers[trigger]
        if used:
            raise ApiError("exchanged_trigger_id")
        if time.monotonic() - issued > self.trigger_ttl:
            raise ApiError("expired_trigger_id")
        view = self._checked_view(params, "modal")
        self._triggers[trigger] = (issued, user, True)
        return {"view": copy.deepcopy(self._new_view(view, user).view)}

    def _views_update(self, params: Json) -> Json:
        record = self._views.get(params.get("view_id", "")) or next(
            (
                r
                for r in self._views.values()
                if params.get("external_id") and r.view.get("external_id") == params["external_id"]
            ),
            None,
        )
        if record is None or record.status != "open":
            raise ApiError("not_found")
        if params.get("hash") and params["hash"] != record.view["hash"]:
            raise ApiError("hash_conflict")
        self._replace_view(record, self._checked_view(params, record.view["type"]))
        return {"view": copy.deepcopy(record.view)}

    def _views_publish(self, params: Json) -> Json:
        user = params.get("user_id", "")
        if user not in self._users:
            raise ApiError(
                "invalid_arguments", messages=["[ERROR] invalid user_id [json-pointer:/user_id]"]
            )
        view = self._checked_view(params, "home")
        if user not in self._homes:
            self._homes[user] = self._new_view(view, user).view["id"]
            return {"view": copy.deepcopy(self._views[self._homes[user]].view)}
        record = self._views[self._homes[user]]
        if params.get("hash") and params["hash"] != record.view["hash"]:
            raise ApiError("hash_conflict")
        self._replace_view(record, view)
        return {"view": copy.deepcopy(record.view)}

    def _checked_view(self, params: Json, surface: str) -> Json:
        view = _json_field(params, "view", "invalid_arguments")
        if errors := view_errors(view, surface):
            raise ApiError("invalid_arguments", messages=errors)
        return view

    def _new_view(self, view: Json, user: str, previous: Json | None = None) -> _View:
        view_id = f"V0{next(self._ids):08X}"
        stored = self._view_object(view, view_id) | {
            "previous_view_id": previous["id"] if previous else None,
            "root_view_id": previous["root_view_id"] if previous else view_id,
        }
        self._views[view_id] = _View(stored, user, opened_ts=self._next_ts())
        return self._views[view_id]

    def _replace_view(self, record: _View, view: Json) -> None:
        keep = {key: record.view[key] for key in ("previous_view_id", "root_view_id")}
        record.view = self._view_object(view, record.view["id"]) | keep
        record.errors, record.updates = None, record.updates + 1

    def _view_object(self, view: Json, view_id: str) -> Json:
        """A view as Slack returns it: ids filled in, empty state, a fresh hash."""
        stored = {
            "id": view_id,
            "team_id": self.team_id,
            "private_metadata": "",
            "callback_id": "",
            "external_id": "",
            "clear_on_close": False,
            "notify_on_close": False,
            "close": None,
            "submit": None,
            "app_id": self.app_id,
            "app_installed_team_id": self.team_id,
            "bot_id": self.bot_id,
        }
        stored |= copy.deepcopy(view)
        stored["blocks"] = with_ids(view.get("blocks", []))
        stored["state"] = {"values": {}}
        stored["hash"] = f"{int(time.time())}.{secrets.token_hex(4)}"
        return stored

    # -- methods: files ------------------------------------------------------------------------

    def _upload_url(self, params: Json) -> Json:
        filename, length = params.get("filename"), str(params.get("length", ""))
        if not filename or not length.isdigit() or int(length) < 1:
            raise ApiError("invalid_arguments")
        key, file_id = secrets.token_urlsafe(12), f"F0{next(self._ids):08X}"
        self._upload_slots[key] = _UploadSlot(file_id, filename, int(length))
        return {"upload_url": f"{self.base_url}/upload/v1/{key}", "file_id": file_id}

    def _complete_upload(self, params: Json) -> Json:
        files = _json_field(params, "files", "invalid_arguments")
        if not isinstance(files, list) or not files:
            raise ApiError("invalid_arguments")
        slots = {
            slot.file_id: slot
            for slot in self._upload_slots.values()
            if slot.data is not None and not slot.completed
        }
        if any(not isinstance(f, dict) or f.get("id") not in slots for f in files):
            raise ApiError("file_not_found")
        channels = [
            c for c in str(params.get("channels") or params.get("channel_id") or "").split(",") if c
        ]
        targets = [self._share_target(channel) for channel in channels]
        shared = [(slots[f["id"]], f.get("title") or slots[f["id"]].filename) for f in files]
        for slot, _ in shared:
            slot.completed = True
        for conversation in targets or [None]:
            self._share(conversation, shared, params)
        return {
            "files": [
                {"id": s.file_id, "name": s.filename, "title": title, "size": len(s.data or b"")}
                for s, title in shared
            ]
        }

    def _share_target(self, channel: str) -> _Conversation:
        try:
            return self._writable(channel)
        except ApiError as error:
            raise ApiError(
                "invalid_channel"
                if error.error == "channel_not_found"
                else "posting_to_channel_denied"
            )

    def _share(
        self,
        conversation: _Conversation | None,
        shared: list[tuple[_UploadSlot, str]],
        params: Json,
    ) -> None:
        """Record the uploads; in a conversation, the files arrive as one bot message with the
        initial comment."""
        comment, thread_ts = params.get("initial_comment"), params.get("thread_ts")
        for slot, title in shared:
            self.uploads.append(
                Upload(
                    conversation.id if conversation else None,
                    slot.filename,
                    slot.data or b"",
                    title,
                    comment,
                    slot.file_id,
                    thread_ts,
                )
            )
        if conversation is not None:
            message = self._bot_message(comment or "", None, thread_ts) | {
                "upload": True,
                "files": [
                    {"id": slot.file_id, "name": slot.filename, "title": title}
                    for slot, title in shared
                ],
            }
            self._store(conversation, message)

    async def _upload(self, request: web.Request) -> web.Response:
        """The upload URL: takes the file's bytes, raw or as a multipart file field."""
        if request.content_type.startswith("multipart/"):
            parts = [
                value
                for value in (await request.post()).values()
                if isinstance(value, web.FileField)
            ]
            data = parts[0].file.read() if parts else b""
        else:
            data = await request.read()
        with self._lock:
            slot = self._upload_slots.get(request.match_info["key"])
            if slot is None or slot.completed:
                return web.Response(status=404, text="not_found")
            slot.data = data
        return web.Response(text=f"OK - {len(data)}")

    # -- response_url --------------------------------------------------------------------------

    async def _respond(self, request: web.Request) -> web.Response:
        """A POST to a response_url: at most five, each a reply to the interaction that issued the
        URL."""
        try:
            params = await request.json()
        except ValueError:
            params = None
        with self._lock:
            status, text = self._respond_with(request.match_info["key"], params)
            self.responses.append(
                {"key": request.match_info["key"], "params": params, "status": status}
            )
        return web.Response(status=status, text=text)

    def _respond_with(self, key: str, params: Any) -> tuple[int, str]:
        target = self._response_urls.get(key)
        if target is None:
            return 404, "no_active_hooks"
        if not isinstance(params, dict):
            return 400, "invalid_payload"
        target["uses"] += 1
        if target["uses"] > RESPONSE_URL_USES:
            return 404, "used_url"
        if not (params.get("text") or params.get("blocks") or params.get("delete_original")):
            return 400, "no_text"
        if error := self._reply(
            target["channel"], target["user"], params, target["message_ts"], "response_url"
        ):
            return 400, error
        return 200, "ok"

    # -- lifecycle -----------------------------------------------------------------------------

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=1024 * 1024 * 1024)
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_get("/socket", self._socket)
        app.router.add_post("/upload/v1/{key}", self._upload)
        app.router.add_post("/respond/{key}", self._respond)
        app.on_startup.append(self._started)
        app.on_shutdown.append(self._shutdown)
        return app

    async def _started(self, app: web.Application) -> None:
        self._outbox: asyncio.Queue[Delivery] = asyncio.Queue()
        self._socket_ready = asyncio.Event()
        self._client = aiohttp.ClientSession()
        self._spawn(self._dispatch())

    async def _shutdown(self, app: web.Application) -> None:
        for task in list(self._tasks):
            task.cancel()
        for socket in list(self._sockets):
            try:
                await asyncio.wait_for(socket.ws.close(code=aiohttp.WSCloseCode.GOING_AWAY), 1.0)
            except (asyncio.TimeoutError, ConnectionError):
                pass
        await self._client.close()

    def __enter__(self) -> FakeSlack:
        self.port = self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()


# ---------------------------------------------------------------------------------------------
# Helpers


def _http_body(kind: str, payload: Json) -> tuple[str, bytes]:
    """Content type and body of an HTTP delivery, as Slack encodes each kind."""
    if kind == "slash_commands":
        return "application/x-www-form-urlencoded", urlencode(payload).encode()
    if kind == "interactive":
        return "application/x-www-form-urlencoded", urlencode(
            {"payload": json.dumps(payload)}
        ).encode()
    return "application/json", json.dumps(payload).encode()


def _answer_payload(body: str) -> Json | None:
    """An HTTP answer's body as an ack payload: its JSON, ``{"text": …}`` for plain text, None when
    empty."""
    if not body.strip():
        return None
    try:
        parsed = json.loads(body)
    except ValueError:
        return {"text": body}
    return parsed if isinstance(parsed, dict) else {"text": body}


def _rich_text(text: str) -> list[Json]:
    """The rich_text block Slack's client attaches to a message a user types."""
    return [
        {
            "type": "rich_text",
            "block_id": _short_id(),
            "elements": [
                {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}
            ],
        }
    ]


def _element_state(element: Json, given: Any) -> Json:
    """One input's entry in ``state.values``: a string is the value typed or picked, a dict the
    entry itself."""
    kind = element["type"]
    if isinstance(given, dict):
        return {"type": kind} | given
    if kind in _TEXT_INPUTS:
        return {"type": kind, "value": given}
    if kind in _PICKED:
        return {"type": kind, _PICKED[kind]: given}
    option = None if given is None else _option(element, given)
    if kind.startswith("multi_") or kind == "checkboxes":
        return {"type": kind, "selected_options": [] if option is None else [option]}
    return {"type": kind, "selected_option": option}


def _option(element: Json, value: str) -> Json:
    """The option of a select (or radio/checkbox group) with this value."""
    options = element.get("options") or [
        o for g in element.get("option_groups", []) for o in g.get("options", [])
    ]
    found = next((o for o in options if o.get("value") == value), None)
    return (
        copy.deepcopy(found)
        if found
        else {"text": {"type": "plain_text", "text": value}, "value": value}
    )


def _check_input(block: Json, entry: Json) -> None:
    """Slack's client submits only when required inputs are filled and texts fit their length
    limits."""
    value = entry.get("value")
    empty = value in (None, "") and not any(
        v for k, v in entry.items() if k not in ("type", "value")
    )
    assert not (empty and not block.get("optional")), f"input {block['block_id']} is required"
    element = block["element"]
    if isinstance(value, str) and value:
        assert len(value) <= element.get("max_length", INPUT_LENGTH), (
            f"input {block['block_id']} is too long"
        )
        assert len(value) >= element.get("min_length", 0), f"input {block['block_id']} is too short"


def _token(request: web.Request, params: Json) -> str | None:
    """The call's token: ``Authorization: Bearer …``, else a ``token`` parameter."""
    token = params.pop("token", None)
    authorization = request.headers.get("Authorization", "")
    if authorization.startswith("Bearer "):
        return authorization.removeprefix("Bearer ").strip()
    return token if isinstance(token, str) else None


def _json_field(params: Json, name: str, error: str) -> Any:
    """A field that may come as JSON text (form bodies) or as JSON itself (JSON bodies)."""
    value = params.get(name)
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        raise ApiError(error) from exc


async def _read_params(request: web.Request) -> Json:
    """Query parameters plus the body's: JSON, form-encoded or multipart; null values dropped."""
    params: Json = dict(request.query)
    if request.method == "POST" and request.body_exists:
        if request.content_type == "application/json":
            try:
                body = await request.json()
            except ValueError as exc:
                raise ApiError("invalid_json") from exc
            if not isinstance(body, dict):
                raise ApiError("invalid_json")
            params.update(body)
        else:
            form = await request.post()
            params.update(
                (k, v.file.read() if isinstance(v, web.FileField) else v) for k, v in form.items()
            )
    return {key: value for key, value in params.items() if value is not None}
