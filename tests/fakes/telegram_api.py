"""A local server that speaks the Telegram Bot API for a bot in long-polling mode.

It runs an aiohttp app on 127.0.0.1 in a thread of its own, so the real python-telegram-bot
``Application`` (``Bot(token, base_url=fake.base_url)``) can run against it from a test's event
loop. The test plays the users (``send_text``, ``tap``) and inspects what the bot did
(``messages``, ``answers``, ``calls``). Validation, flood control and errors follow the real
API closely enough that a bot which works here has met Telegram's rules; faults (``fail_next``,
``stall_next``, ``redeliver``) can be injected. Every call is recorded.

Webhook delivery is off unless ``webhook_targets`` is given: then, once the bot has set a webhook,
each update is POSTed to one of those URLs chosen at random (a load balancer in front of several
bot replicas), with setWebhook's secret token, and delivered again, as Telegram does, while the
POST fails or is not answered in time.

PTB's wire format: no parameters → empty body without a content type; otherwise form-encoded
(multipart when a file is attached) where strings go raw, numbers and booleans as their JSON text
and nested objects as JSON strings, so each field is decoded by its name (``_FIELDS``).
"""

from __future__ import annotations

import asyncio
import copy
import html
import itertools
import json
import math
import random
import re
import struct
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from functools import partial
from http import HTTPStatus
from typing import Any, Callable

import aiohttp
from aiohttp import web

from ._server import Call, ThreadedApp, Waits, Window, take_fault

TOKEN = "123456:TEST-TOKEN"
MESSAGE_METHODS = frozenset(
    {"sendmessage", "sendphoto", "editmessagetext", "editmessagereplymarkup", "editmessagecaption"}
)
"""Methods that count against flood control (lower case: Telegram method names ignore case)."""
TOO_OLD = "query is too old and response timeout expired or query ID is invalid"
NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
TEXT_LIMIT, CAPTION_LIMIT, CALLBACK_DATA_LIMIT, ANSWER_TEXT_LIMIT = 4096, 1024, 64, 200

Json = dict[str, Any]


def _bool(value: str) -> bool:
    """A boolean form field: PTB sends ``true`` / ``false``."""
    return value.lower() == "true"


def _chat_id(value: str) -> int | str:
    """A chat id: an integer, or an ``@channelusername``."""
    return int(value) if value.lstrip("-").isdigit() else value


_FIELDS: dict[str, Callable[[str], Any]] = {
    "chat_id": _chat_id,
    "message_id": int,
    "reply_to_message_id": int,
    "offset": int,
    "limit": int,
    "timeout": float,
    "cache_time": int,
    "max_connections": int,
    "show_alert": _bool,
    "disable_notification": _bool,
    "protect_content": _bool,
    "drop_pending_updates": _bool,
    "allow_sending_without_reply": _bool,
    "has_spoiler": _bool,
    "show_caption_above_media": _bool,
    "reply_markup": json.loads,
    "reply_parameters": json.loads,
    "link_preview_options": json.loads,
    "entities": json.loads,
    "caption_entities": json.loads,
    "commands": json.loads,
    "scope": json.loads,
    "allowed_updates": json.loads,
}
"""How to decode each form field PTB sends as text; fields not listed stay strings."""


class ApiError(Exception):
    """An error answer; the dispatcher turns it into Telegram's error body."""

    def __init__(self, status: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.status, self.description, self.retry_after = status, description, retry_after

    def body(self) -> Json:
        """The JSON body Telegram sends with this error."""
        body: Json = {"ok": False, "error_code": self.status, "description": self.description}
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        return body


def bad_request(reason: str) -> ApiError:
    """A 400 with Telegram's ``Bad Request: …`` description."""
    return ApiError(400, f"Bad Request: {reason}")


def too_many(retry_after: int) -> ApiError:
    """A 429 that PTB raises as ``RetryAfter``."""
    return ApiError(429, f"Too Many Requests: retry after {retry_after}", retry_after)


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as Telegram counts text and entity offsets."""
    return len(text.encode("utf-16-le")) // 2


# ---------------------------------------------------------------------------------------------
# HTML parse mode

_HTML_TOKEN = re.compile(
    r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)(\s[^<>]*)?>|&(#[0-9]+|#x[0-9a-fA-F]+|lt|gt|amp|quot);|[<&]|[^<&]+"
)
_ATTRIBUTE = re.compile(r"""([a-zA-Z-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"']+)))?""")
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ENTITY_TYPES = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "code": "code",
    "pre": "pre",
    "a": "text_link",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "blockquote": "blockquote",
}


@dataclass
class _OpenTag:
    name: str
    attributes: dict[str, str]
    offset: int


class _HtmlParser:
    """Telegram's HTML parse mode: plain text plus entities, or ``can't parse entities``."""

    def __init__(self, source: str) -> None:
        self.source, self.text, self.entities = source, [], []
        self.offset = 0
        self.open: list[_OpenTag] = []

    def parse(self) -> tuple[str, list[Json]]:
        """Walk the source token by token."""
        for token in _HTML_TOKEN.finditer(self.source):
            self._token(token)
        if self.open:
            self.fail(f'Can\'t find end tag corresponding to start tag "{self.open[-1].name}"')
        return "".join(self.text), sorted(self.entities, key=lambda e: (e["offset"], -e["length"]))

    def fail(self, reason: str) -> None:
        """Reject the markup the way Telegram does."""
        raise bad_request(f"can't parse entities: {reason}")

    def at(self, token: re.Match[str]) -> str:
        """Where a token starts, as Telegram reports it (a UTF-8 byte offset)."""
        return f"byte offset {len(self.source[: token.start()].encode())}"

    def _token(self, token: re.Match[str]) -> None:
        closing, name, attributes, entity = token.group(1, 2, 3, 4)
        if name is not None and closing:
            self._end(name.lower(), token)
        elif name is not None:
            self._start(name.lower(), attributes or "", token)
        elif entity is not None:
            self._add(self._character(entity, token))
        elif token.group() in ("<", "&"):
            self.fail(f'unescaped "{token.group()}" at {self.at(token)}; write &lt; or &amp;')
        else:
            self._add(token.group())

    def _character(self, entity: str, token: re.Match[str]) -> str:
        """The character an entity (``amp``, ``#38``, ``#x26``) stands for."""
        if entity in _NAMED_ENTITIES:
            return _NAMED_ENTITIES[entity]
        code = int(entity[2:], 16) if entity[1] == "x" else int(entity[1:])
        if not 0 < code <= 0x10FFFF:
            self.fail(f"Invalid character entity at {self.at(token)}")
        return chr(code)

    def _add(self, text: str) -> None:
        self.text.append(text)
        self.offset += utf16_len(text)

    def _start(self, name: str, raw: str, token: re.Match[str]) -> None:
        attributes = {
            m.group(1).lower(): html.unescape(
                next((v for v in m.group(2, 3, 4) if v is not None), "")
            )
            for m in _ATTRIBUTE.finditer(raw)
        }
        if name not in _ENTITY_TYPES or (
            name == "span" and attributes.get("class") != "tg-spoiler"
        ):
            self.fail(f'Unsupported start tag "{name}" at {self.at(token)}')
        self.open.append(_OpenTag(name, attributes, self.offset))

    def _end(self, name: str, token: re.Match[str]) -> None:
        if not self.open:
            self.fail(f"Unexpected end tag at {self.at(token)}")
        tag = self.open.pop()
        if tag.name != name:
            self.fail(
                f'Unmatched end tag at {self.at(token)}, expected "</{tag.name}>", found '
                f'"</{name}>"'
            )
        if self.offset > tag.offset:
            self._entity(tag)

    def _entity(self, tag: _OpenTag) -> None:
        entity: Json = {
            "type": _ENTITY_TYPES[tag.name],
            "offset": tag.offset,
            "length": self.offset - tag.offset,
        }
        language = tag.attributes.get("class", "")
        if (
            tag.name == "code"
            and self.open
            and self.open[-1].name == "pre"
            and language.startswith("language-")
        ):
            self.open[-1].attributes["language"] = language.removeprefix("language-")
            return
        if tag.name == "pre" and "language" in tag.attributes:
            entity["language"] = tag.attributes["language"]
        if tag.name == "a":
            if "href" not in tag.attributes:
                return
            entity["url"] = tag.attributes["href"]
        if tag.name == "blockquote" and "expandable" in tag.attributes:
            entity["type"] = "expandable_blockquote"
        self.entities.append(entity)


def parse_text(text: str, parse_mode: str | None, limit: int, what: str) -> tuple[str, list[Json]]:
    """The text Telegram would store: parsed, then checked to be 1…limit UTF-16 units long."""
    if parse_mode and parse_mode.upper() != "HTML":
        raise bad_request(f"this fake parses only parse_mode HTML, not {parse_mode!r}")
    plain, entities = _HtmlParser(text).parse() if parse_mode else (text, [])
    if not plain.strip():
        raise bad_request("message text is empty" if what == "message" else f"{what} is empty")
    if utf16_len(plain) > limit:
        raise bad_request(f"{what} is too long")
    return plain, entities


def inline_markup(markup: Json | None) -> Json | None:
    """The inline keyboard a message would carry (None if there is none); checks callback_data."""
    rows = (markup or {}).get("inline_keyboard")
    if not rows:
        return None
    for button in itertools.chain.from_iterable(rows):
        data = button.get("callback_data")
        if data is not None and not 1 <= len(data.encode()) <= CALLBACK_DATA_LIMIT:
            raise bad_request("BUTTON_DATA_INVALID")
    return markup


def image_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG ((0, 0) for anything else)."""
    return struct.unpack(">II", data[16:24]) if data[:8] == b"\x89PNG\r\n\x1a\n" else (0, 0)


# ---------------------------------------------------------------------------------------------
# Records


@dataclass
class Limits:
    """Flood control: sliding windows on message calls, measured at arrival."""

    overall: int = 30
    overall_period: float = 1.0
    chat: int = 1
    """Per private chat (chat_id > 0)."""
    chat_period: float = 1.0
    group: int = 20
    """Per group (chat_id < 0)."""
    group_period: float = 60.0


@dataclass
class _Fault:
    status: int | None
    description: str | None = None
    retry_after: int = 1
    delay: float = 0.0
    process: bool = False
    body: bytes | None = None
    """Answer these raw bytes (not JSON) with ``status`` (200 when None)."""
    match: Callable[[Json], bool] | None = None
    """Only a call whose params this accepts takes the fault (None: any call)."""


class _Raw(Exception):
    """A raw (non-JSON) answer; the dispatcher sends it as it is."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(status)
        self.status, self.body = status, body


# ---------------------------------------------------------------------------------------------
# The server


@dataclass
class FakeTelegram(Waits):
    """The server. Use as a context manager; give PTB ``base_url``, or a subprocess ``env()``."""

    token: str = TOKEN
    limits: Limits | None = field(default_factory=Limits)
    callback_ttl: float = 15.0
    """Seconds after a tap within which answerCallbackQuery is accepted."""
    bot_username: str = "hilbot_test_bot"
    calls: list[Call] = field(default_factory=list, repr=False)
    """Every request, in arrival order."""
    accepted: list[tuple[float, str, int | str]] = field(default_factory=list, repr=False)
    """(arrival, method, chat_id) of every message call that passed flood control."""
    rejected: list[tuple[str, int | str, str]] = field(default_factory=list, repr=False)
    """(method, chat_id, "overall" | "chat" | "group") of every flood 429."""
    answers: dict[str, Json] = field(default_factory=dict, repr=False)
    """callback_query_id → the answerCallbackQuery params, plus ``at``."""
    tapped_at: dict[str, float] = field(default_factory=dict, repr=False)
    """callback_query_id → ``time.monotonic()`` of the tap."""
    photos: list[tuple[int | str, bytes, str | None]] = field(default_factory=list, repr=False)
    """(chat_id, bytes, caption) of every photo sent."""
    documents: list[tuple[int | str, bytes, str | None]] = field(default_factory=list, repr=False)
    """Each sendDocument: (chat id, the file's bytes, its caption)."""
    commands: list[Json] = field(default_factory=list, repr=False)
    """The last setMyCommands list."""
    webhook_url: str = ""
    on_call: Callable[[Call], None] | None = field(default=None, repr=False)
    """Called (in the server's thread) with each authorised call as it arrives, before it is carried
    out."""
    webhook_targets: list[str] = field(default_factory=list)
    """Where updates are POSTed once a webhook is set (empty: no delivery, updates wait for
    getUpdates): one URL chosen at random per POST, as a load balancer in front of several bot
    replicas spreads them. A URL that refuses a connection is left out of the choice from then
    on (the balancer's health check), unless every one has."""
    webhook_timeout: float = 10.0
    """Seconds a webhook POST may take before it counts as failed (and the update is sent
    again)."""
    webhook_retry_s: float = 0.2
    """Pause before an update whose POST failed is sent again."""
    webhook_posts: list[tuple[int, str, int | None]] = field(default_factory=list, repr=False)
    """(update_id, target URL, HTTP status or None when the POST failed) of every webhook POST."""

    def __post_init__(self) -> None:
        self._lock = threading.RLock()
        self._server = ThreadedApp(self._app, "fake-telegram", shutdown_timeout=1.0)
        self._closing = False
        self._new_updates = asyncio.Event()
        self.port = 0
        self._users: dict[int, Json] = {}
        self._blocked: set[int] = set()
        self._chats: dict[int, Json] = {}
        self._messages: dict[int, dict[int, Json]] = defaultdict(dict)
        self._history: dict[tuple[int, int], list[str]] = defaultdict(list)
        self._message_ids: dict[int, itertools.count[int]] = defaultdict(lambda: itertools.count(1))
        self._update_ids, self._callback_ids, self._file_ids = (
            itertools.count(1),
            itertools.count(1),
            itertools.count(1),
        )
        self._updates: dict[int, Json] = {}
        self._sent_order: list[tuple[str, int]] = []
        self._pending: list[Json] = []
        self._redeliveries: list[Json] = []
        self._allowed_updates: list[str] = []
        self._files: dict[str, bytes] = {}
        self._faults: dict[str, deque[_Fault]] = defaultdict(deque)
        self._outage: ApiError | None = None
        self._epoch = 0
        """Counts :meth:`restart_ids`: a long poll from before one answers nothing (it was made to
        the old server)."""
        self._windows: dict[tuple[str, int | str], Window] = {}
        self._webhook_secret: str | None = None
        self._webhook_slots = 40
        self._targets_down: set[str] = set()
        self._client: aiohttp.ClientSession | None = None
        self._deliveries: set[asyncio.Task[None]] = set()
        self._handlers: dict[str, Callable[[Json], Any]] = {
            name.lower(): handler
            for name, handler in {
                "getMe": self._get_me,
                "logOut": self._true,
                "close": self._true,
                "setWebhook": self._set_webhook,
                "deleteWebhook": self._delete_webhook,
                "getWebhookInfo": self._webhook_info,
                "sendMessage": self._send_message,
                "sendPhoto": self._send_photo,
                "sendDocument": self._send_document,
                "editMessageText": self._edit_text,
                "editMessageCaption": self._edit_caption,
                "editMessageReplyMarkup": self._edit_markup,
                "answerCallbackQuery": self._answer,
                "setMyCommands": self._set_commands,
                "getMyCommands": lambda params: self.commands,
                "sendChatAction": self._chat_action,
            }.items()
        }

    # -- addresses -----------------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What PTB takes as ``base_url`` (it appends the token and the method)."""
        return f"{self.api_url}/bot"

    @property
    def bot(self) -> Json:
        """The bot's User object."""
        return {
            "id": int(self.token.split(":")[0]),
            "is_bot": True,
            "first_name": "Hilbot Test",
            "username": self.bot_username,
        }

    def env(self) -> dict[str, str]:
        """Environment for a bot process that should talk to this server."""
        return {"TELEGRAM_BOT_TOKEN": self.token, "TELEGRAM_API_URL": self.api_url}

    # -- faults --------------------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        status: int = 429,
        retry_after: int = 1,
        count: int = 1,
        description: str | None = None,
        match: Callable[[Json], bool] | None = None,
    ) -> None:
        """The next ``count`` calls to ``method`` get this error (and are not carried out).

        ``match``: only calls whose (decoded) params it accepts count, e.g. a sendMessage with a
        keyboard.
        """
        self._add_faults(method, count, _Fault(status, description, retry_after, match=match))

    def outage(self, status: int = 500, description: str = "Internal Server Error") -> None:
        """From now on every call but getUpdates gets this error (and is not carried out), until
        :meth:`clear_faults`.

        As if the bot's process died: whatever it still sends never arrives.
        """
        with self._lock:
            self._outage = ApiError(status, description)

    def clear_faults(self) -> None:
        """End an outage and drop every fault not yet taken."""
        with self._lock:
            self._outage = None
            self._faults.clear()

    def restart_ids(self) -> None:
        """Update ids and callback query ids start again from 1, as on a fresh Bot API server; chats
        and messages stay.

        Telegram promises neither to keep update ids growing across a server change nor that they
        never jump. Answers to the old callback queries are forgotten (their ids will be used
        again).
        """
        with self._lock:
            self._update_ids, self._callback_ids = itertools.count(1), itertools.count(1)
            self.answers.clear()
            self.tapped_at.clear()
            self._epoch += 1
        self._wake()

    def garble_next(
        self,
        method: str,
        body: bytes = b"<html><body>502 Bad Gateway</body></html>",
        status: int = 200,
        count: int = 1,
    ) -> None:
        """The next ``count`` calls to ``method`` get ``body`` (not JSON, as a proxy's error page)
        with ``status``."""
        self._add_faults(method, count, _Fault(status, body=body))

    def stall_next(
        self, method: str, seconds: float, process: bool = False, count: int = 1
    ) -> None:
        """The next calls to ``method`` answer ``seconds`` late; ``process=False``: never carried
        out (502)."""
        self._add_faults(method, count, _Fault(None, delay=seconds, process=process))

    def _add_faults(self, method: str, count: int, fault: _Fault) -> None:
        with self._lock:
            self._faults[method.lower()].extend(fault for _ in range(count))

    def redeliver(self, update_id: int) -> None:
        """Send an update again, same update_id, in the next getUpdates answer whatever its
        offset."""
        with self._lock:
            assert update_id in self._updates, f"no update {update_id}"
            self._redeliveries.append(self._updates[update_id])
        self._wake()

    def last_update_id(self, kind: str | None = None) -> int:
        """The id of the latest update made (of ``kind``, such as ``callback_query``), in the order
        they were made."""
        with self._lock:
            return next(uid for k, uid in reversed(self._sent_order) if kind is None or k == kind)

    # -- the users' side -----------------------------------------------------------------------

    def user(
        self,
        id: int,
        first_name: str = "Reviewer",
        username: str | None = None,
        blocked: bool = False,
    ) -> Json:
        """Register a user (and their private chat, whose id is theirs); ``blocked``: they blocked
        the bot."""
        assert id > 0, "user ids are positive"
        person = {"id": id, "is_bot": False, "first_name": first_name} | (
            {"username": username} if username else {}
        )
        with self._lock:
            self._users[id] = person
            self._chats[id] = {"id": id, "type": "private", "first_name": first_name} | (
                {"username": username} if username else {}
            )
            if blocked:
                self._blocked.add(id)
            else:
                self._blocked.discard(id)
        return dict(person)

    def group(self, chat_id: int, title: str = "Reviewers") -> Json:
        """Register a group chat (negative id; -100… is a supergroup)."""
        assert chat_id < 0, "group chat ids are negative"
        chat = {
            "id": chat_id,
            "type": "supergroup" if chat_id <= -(10**12) else "group",
            "title": title,
        }
        with self._lock:
            self._chats[chat_id] = chat
        return dict(chat)

    def send_text(
        self, user_id: int, text: str, chat_id: int | None = None, reply_to: int | None = None
    ) -> int:
        """A user writes ``text`` (a ``/command`` gets its entity); returns the update_id."""
        with self._lock:
            sender, chat = self._users[self._known_user(user_id)], chat_id or user_id
            content: Json = {"text": text}
            if text.startswith("/"):
                content["entities"] = [
                    {"type": "bot_command", "offset": 0, "length": utf16_len(text.split()[0])}
                ]
            if reply_to is not None:
                content["reply_to_message"] = self._reply_target(chat, reply_to)
            message = self._new_message(chat, sender, content)
            return self._push({"message": copy.deepcopy(message)})

    def sent_before(self, chat_id: int, text: str) -> int:
        """A message the bot sent before this server started (a card from before a restart); returns
        its id."""
        with self._lock:
            return self._new_message(chat_id, self.bot, {"text": text})["message_id"]

    def tap(self, user_id: int, chat_id: int, message_id: int, data: str) -> str:
        """A user taps a button carrying ``data`` under a message; returns the callback_query id."""
        with self._lock:
            sender, message = (
                self._users[self._known_user(user_id)],
                self._stored(chat_id, message_id),
            )
            query_id = str(4_000_000_000_000 + next(self._callback_ids))
            query = {
                "id": query_id,
                "from": sender,
                "message": copy.deepcopy(message),
                "chat_instance": str(abs(chat_id) * 7 + 1),
                "data": data,
            }
            self.tapped_at[query_id] = time.monotonic()
            self._push({"callback_query": query})
            return query_id

    def tap_button(self, user_id: int, chat_id: int, message_id: int, label_startswith: str) -> str:
        """Tap the button whose label starts with ``label_startswith``; returns the callback_query
        id."""
        buttons = [
            b
            for row in (self.message(chat_id, message_id).get("reply_markup") or {}).get(
                "inline_keyboard", []
            )
            for b in row
        ]
        match = next((b for b in buttons if b["text"].startswith(label_startswith)), None)
        assert match is not None, (
            f"no button starting {label_startswith!r}; buttons: {[b['text'] for b in buttons]}"
        )
        assert "callback_data" in match, f"button {match['text']!r} has no callback_data"
        return self.tap(user_id, chat_id, message_id, match["callback_data"])

    def _known_user(self, user_id: int) -> int:
        assert user_id in self._users, f"register user {user_id} with user() first"
        return user_id

    def _push(self, content: Json) -> int:
        update = {"update_id": next(self._update_ids), **content}
        self._updates[update["update_id"]] = update
        self._sent_order.append((next(iter(content)), update["update_id"]))
        if self._delivering():
            self._server.call_soon(partial(self._post_update, copy.deepcopy(update)))
        else:
            self._pending.append(update)
        self._wake()
        return update["update_id"]

    # -- webhook delivery ----------------------------------------------------------------------

    def _delivering(self) -> bool:
        """Whether updates go out by webhook now (targets given and a webhook set)."""
        return bool(self.webhook_targets and self.webhook_url)

    def _post_update(self, update: Json) -> None:
        """(server loop) Start delivering one update by webhook."""
        task = asyncio.ensure_future(self._deliver_update(update))
        self._deliveries.add(task)
        task.add_done_callback(self._deliveries.discard)

    async def _deliver_update(self, update: Json) -> None:
        """(server loop) POST an update to a target chosen at random until one answers 200."""
        if self._client is None:
            self._client = aiohttp.ClientSession()
            self._slots = asyncio.Semaphore(self._webhook_slots)
        headers = {"Content-Type": "application/json"}
        if self._webhook_secret:
            headers["X-Telegram-Bot-Api-Secret-Token"] = self._webhook_secret
        body = json.dumps(update).encode()
        while not self._closing:
            up = [t for t in self.webhook_targets if t not in self._targets_down]
            target = random.choice(up or self.webhook_targets)
            status: int | None = None
            try:
                async with self._slots, self._client.post(
                    target,
                    data=body,
                    headers=headers,
                    timeout=aiohttp.ClientTimeout(total=self.webhook_timeout),
                ) as response:
                    status = response.status
            except aiohttp.ClientConnectorError:
                self._targets_down.add(target)
            except (aiohttp.ClientError, asyncio.TimeoutError):
                pass
            with self._lock:
                self.webhook_posts.append((update["update_id"], target, status))
            if status == 200:
                return
            await asyncio.sleep(self.webhook_retry_s)

    def _wake(self) -> None:
        """Wake long polls (from any thread)."""
        self._server.call_soon(self._set_new_updates)

    def _set_new_updates(self) -> None:
        self._new_updates.set()
        self._new_updates = asyncio.Event()

    # -- inspection ----------------------------------------------------------------------------

    def calls_to(self, method: str) -> list[Call]:
        """The calls to one method (any case), in arrival order."""
        with self._lock:
            return [call for call in self.calls if call.method.lower() == method.lower()]

    def messages(self, chat_id: int) -> list[Json]:
        """The bot's messages in a chat as they are now, oldest first, with ``edits`` and
        ``history``."""
        with self._lock:
            return [
                self._inspected(m) for m in self._messages[chat_id].values() if m["from"]["is_bot"]
            ]

    def message(self, chat_id: int, message_id: int) -> Json:
        """One message in a chat as it is now (the bot's, with ``edits`` and ``history``, or a
        user's)."""
        with self._lock:
            return self._inspected(self._stored(chat_id, message_id))

    def card_ids(self, chat_id: int) -> list[int]:
        """Ids of the bot's messages with an inline keyboard in a chat (cheap: nothing is
        copied)."""
        with self._lock:
            return [
                i
                for i, m in self._messages[chat_id].items()
                if m["from"]["is_bot"] and m.get("reply_markup")
            ]

    def last_message(self, chat_id: int) -> Json | None:
        """The bot's latest message in a chat, or None."""
        sent = self.messages(chat_id)
        return sent[-1] if sent else None

    def _inspected(self, message: Json) -> Json:
        history = self._history[message["chat"]["id"], message["message_id"]]
        return copy.deepcopy(message) | {
            "edits": max(len(history) - 1, 0),
            "history": list(history),
        }

    # -- requests ------------------------------------------------------------------------------

    async def _request(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        call = Call(method, {}, time.monotonic())
        with self._lock:
            self.calls.append(call)
        try:
            call.params.update(await _read_params(request))
            if request.match_info["token"] != self.token:
                raise ApiError(401, "Unauthorized")
            if self.on_call is not None:
                self.on_call(call)
            result = await self._run(method.lower(), call)
            call.status, body = 200, {"ok": True, "result": result}
        except ApiError as error:
            call.status, body = error.status, error.body()
        except _Raw as raw:
            call.status = raw.status
            return web.Response(body=raw.body, status=raw.status, content_type="text/html")
        return web.json_response(body, status=call.status)

    async def _run(self, method: str, call: Call) -> Any:
        """Faults, flood control, then the method itself."""
        if method not in self._handlers and method != "getupdates":
            raise ApiError(404, "Not Found")
        with self._lock:
            if self._outage is not None and method != "getupdates":
                raise self._outage
            fault = self._take_fault(method, call.params)
        if fault and fault.body is not None:
            raise _Raw(fault.status or 200, fault.body)
        if fault and fault.status:
            raise _fault_error(fault)
        if fault and not fault.process:
            await asyncio.sleep(fault.delay)
            raise ApiError(502, "Bad Gateway")
        if method == "getupdates":
            result = await self._get_updates(call.params)
        else:
            with self._lock:
                self._check_flood(method, call)
                result = self._handlers[method](call.params)
        await asyncio.sleep(fault.delay if fault else 0)
        return result

    def _take_fault(self, method: str, params: Json) -> _Fault | None:
        """The first fault queued for ``method`` that this call matches, taken off the queue."""
        return take_fault(self._faults[method], params)

    def _check_flood(self, method: str, call: Call) -> None:
        if self.limits is None or method not in MESSAGE_METHODS:
            return
        chat_id = call.params.get("chat_id", 0)
        windows = self._windows_for(chat_id)
        for reason, window in windows:
            if (wait := window.wait(call.at)) > 0:
                self.rejected.append((call.method, chat_id, reason))
                raise too_many(max(1, math.ceil(wait)))
        for _, window in windows:
            window.times.append(call.at)
        self.accepted.append((call.at, call.method, chat_id))

    def _windows_for(self, chat_id: int | str) -> list[tuple[str, Window]]:
        """The windows a message call to this chat counts in."""
        limits = self.limits
        assert limits is not None
        keys = [("overall", "", limits.overall, limits.overall_period)]
        if isinstance(chat_id, int) and chat_id > 0:
            keys.append(("chat", chat_id, limits.chat, limits.chat_period))
        elif isinstance(chat_id, int) and chat_id < 0:
            keys.append(("group", chat_id, limits.group, limits.group_period))
        return [
            (reason, self._windows.setdefault((reason, key), Window(limit, period)))
            for reason, key, limit, period in keys
        ]

    # -- updates -------------------------------------------------------------------------------

    async def _get_updates(self, params: Json) -> list[Json]:
        """Long poll: answer as soon as there are updates, or after ``timeout`` seconds."""
        deadline = time.monotonic() + params.get("timeout", 0)
        epoch = self._epoch
        while True:
            with self._lock:
                if self._epoch != epoch:
                    return []  # a poll made to the server before its ids started again: its offset means nothing now
                if self.webhook_url:
                    raise ApiError(
                        409,
                        "Conflict: can't use getUpdates method while webhook is active; use "
                        "deleteWebhook to delete the webhook first",
                    )
                batch, arrived = self._take_updates(params), self._new_updates
            remaining = deadline - time.monotonic()
            if batch or remaining <= 0 or self._closing:
                return batch
            try:
                await asyncio.wait_for(arrived.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    def _take_updates(self, params: Json) -> list[Json]:
        """Drop confirmed updates (id < offset) and those not allowed; the next batch, redeliveries
        first."""
        if params.get("allowed_updates") is not None:
            self._allowed_updates = params["allowed_updates"]
        offset, limit = params.get("offset"), min(max(params.get("limit", 100), 1), 100)
        self._pending = [
            u
            for u in self._pending
            if (offset is None or u["update_id"] >= offset) and self._allowed(u)
        ]
        batch = (self._redeliveries + self._pending)[:limit]
        del self._redeliveries[:limit]
        return copy.deepcopy(batch)

    def _allowed(self, update: Json) -> bool:
        kind = next(key for key in update if key != "update_id")
        return not self._allowed_updates or kind in self._allowed_updates

    # -- methods -------------------------------------------------------------------------------

    def _true(self, params: Json) -> bool:
        return True

    def _get_me(self, params: Json) -> Json:
        return self.bot | {
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    def _set_webhook(self, params: Json) -> bool:
        self.webhook_url = params.get("url", "")
        self._webhook_secret = params.get("secret_token")
        self._webhook_slots = params.get("max_connections", 40)
        if self._delivering():  # what waited for a webhook goes out now
            for update in self._pending:
                self._server.call_soon(partial(self._post_update, copy.deepcopy(update)))
            self._pending.clear()
        return True

    def _delete_webhook(self, params: Json) -> bool:
        self.webhook_url = ""
        if params.get("drop_pending_updates"):
            self._pending.clear()
        return True

    def _webhook_info(self, params: Json) -> Json:
        return {
            "url": self.webhook_url,
            "has_custom_certificate": False,
            "pending_update_count": len(self._pending),
        }

    def _set_commands(self, params: Json) -> bool:
        self.commands = params.get("commands", [])
        return True

    def _chat_action(self, params: Json) -> bool:
        self._writable_chat(params)
        return True

    def _send_message(self, params: Json) -> Json:
        chat_id = self._writable_chat(params)
        text, entities = parse_text(
            params.get("text", ""), params.get("parse_mode"), TEXT_LIMIT, "message"
        )
        content: Json = {"text": text} | ({"entities": entities} if entities else {})
        if "link_preview_options" in params:
            content["link_preview_options"] = params["link_preview_options"]
        return self._send(chat_id, params, content)

    def _send_photo(self, params: Json) -> Json:
        chat_id = self._writable_chat(params)
        data = self._photo_bytes(params.get("photo"))
        caption, entities = self._caption(params)
        file_id = f"AgAC{next(self._file_ids):08d}"
        width, height = image_size(data)
        photo = {
            "file_id": file_id,
            "file_unique_id": f"AQAD{file_id[4:]}",
            "width": width,
            "height": height,
            "file_size": len(data),
        }
        message = self._send(chat_id, params, {"photo": [photo]} | caption | entities)
        self._files[file_id] = data
        self.photos.append((chat_id, data, params.get("caption")))
        return message

    def _send_document(self, params: Json) -> Json:
        """sendDocument: a general file (the Bot API's Document object in the message)."""
        chat_id = self._writable_chat(params)
        data = self._photo_bytes(params.get("document"))
        if not data:
            raise bad_request("file must be non-empty")
        caption, entities = self._caption(params)
        file_id = f"BQAC{next(self._file_ids):08d}"
        document = {"file_id": file_id, "file_unique_id": f"AgAD{file_id[4:]}",
                    "file_size": len(data)}
        message = self._send(chat_id, params, {"document": document} | caption | entities)
        self._files[file_id] = data
        self.documents.append((chat_id, data, params.get("caption")))
        return message

    def _photo_bytes(self, photo: Any) -> bytes:
        """The uploaded bytes, or those of a file_id sent before."""
        if isinstance(photo, bytes):
            return photo
        if photo in self._files:
            return self._files[photo]
        raise bad_request("wrong file identifier/HTTP URL specified")

    def _caption(self, params: Json) -> tuple[Json, Json]:
        """The caption and caption_entities fields of a message (empty when there is no caption)."""
        if not params.get("caption"):
            return {}, {}
        caption, entities = parse_text(
            params["caption"], params.get("parse_mode"), CAPTION_LIMIT, "message caption"
        )
        return {"caption": caption}, ({"caption_entities": entities} if entities else {})

    def _send(self, chat_id: int, params: Json, content: Json) -> Json:
        """Store and return a new bot message with its keyboard and the message it replies to."""
        markup = inline_markup(params.get("reply_markup"))
        reply = params.get("reply_parameters") or (
            {"message_id": params["reply_to_message_id"]}
            if "reply_to_message_id" in params
            else None
        )
        if reply:
            content = content | self._reply_to(chat_id, reply)
        return self._new_message(
            chat_id, self.bot, content | ({"reply_markup": markup} if markup else {})
        )

    def _reply_to(self, chat_id: int, reply: Json) -> Json:
        if reply["message_id"] in self._messages[chat_id]:
            return {"reply_to_message": self._reply_target(chat_id, reply["message_id"])}
        if reply.get("allow_sending_without_reply"):
            return {}
        raise bad_request("message to be replied not found")

    def _edit_text(self, params: Json) -> Json:
        text, entities = parse_text(
            params.get("text", ""), params.get("parse_mode"), TEXT_LIMIT, "message"
        )
        return self._edit(params, {"text": text, "entities": entities})

    def _edit_caption(self, params: Json) -> Json:
        caption, entities = self._caption(params)
        return self._edit(
            params,
            {
                "caption": caption.get("caption"),
                "caption_entities": entities.get("caption_entities"),
            },
        )

    def _edit_markup(self, params: Json) -> Json:
        return self._edit(params, {})

    def _edit(self, params: Json, content: Json) -> Json:
        """Change a bot message in place (a missing reply_markup removes the keyboard)."""
        message = self._messages[params.get("chat_id", 0)].get(params.get("message_id", 0))
        if message is None or not message["from"]["is_bot"]:
            raise bad_request("message to edit not found")
        changes = {
            key: value or None
            for key, value in (
                content | {"reply_markup": inline_markup(params.get("reply_markup"))}
            ).items()
        }
        if all(message.get(key) == value for key, value in changes.items()):
            raise bad_request(NOT_MODIFIED)
        message.update((key, value) for key, value in changes.items() if value is not None)
        for key in [key for key, value in changes.items() if value is None]:
            message.pop(key, None)
        message["edit_date"] = int(time.time())
        self._history[message["chat"]["id"], message["message_id"]].append(
            message.get("text", message.get("caption", ""))
        )
        return message

    def _answer(self, params: Json) -> bool:
        query_id = params.get("callback_query_id", "")
        tapped = self.tapped_at.get(query_id)
        if (
            tapped is None
            or query_id in self.answers
            or time.monotonic() - tapped > self.callback_ttl
        ):
            raise bad_request(TOO_OLD)
        if utf16_len(params.get("text", "")) > ANSWER_TEXT_LIMIT:
            raise bad_request("MESSAGE_TOO_LONG")
        self.answers[query_id] = params | {"at": time.monotonic()}
        return True

    # -- chats and messages --------------------------------------------------------------------

    def _writable_chat(self, params: Json) -> int:
        """The chat a send goes to: it must exist and must not have blocked the bot."""
        chat_id = params.get("chat_id")
        if chat_id not in self._chats:
            raise bad_request("chat not found")
        if chat_id in self._blocked:
            raise ApiError(403, "Forbidden: bot was blocked by the user")
        return chat_id

    def _stored(self, chat_id: int, message_id: int) -> Json:
        message = self._messages[chat_id].get(message_id)
        assert message is not None, f"no message {message_id} in chat {chat_id}"
        return message

    def _reply_target(self, chat_id: int, message_id: int) -> Json:
        """A stored message as it appears in ``reply_to_message`` (without its own)."""
        target = copy.deepcopy(self._stored(chat_id, message_id))
        target.pop("reply_to_message", None)
        return target

    def _new_message(self, chat_id: int, sender: Json, content: Json) -> Json:
        assert chat_id in self._chats, f"unknown chat {chat_id}: register it with user() or group()"
        message = {
            "message_id": next(self._message_ids[chat_id]),
            "date": int(time.time()),
            "chat": self._chats[chat_id],
            "from": sender,
            **content,
        }
        self._messages[chat_id][message["message_id"]] = message
        if sender["is_bot"]:
            self._history[chat_id, message["message_id"]].append(
                content.get("text", content.get("caption", ""))
            )
        return message

    # -- lifecycle -----------------------------------------------------------------------------

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=60 * 1024 * 1024)
        app.router.add_post("/bot{token}/{method}", self._request)
        app.on_shutdown.append(self._shutdown)
        return app

    async def _shutdown(self, app: web.Application) -> None:
        for task in list(self._deliveries):
            task.cancel()
        await asyncio.gather(*self._deliveries, return_exceptions=True)
        if self._client is not None:
            await self._client.close()

    def __enter__(self) -> "FakeTelegram":
        self.port = self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing = True
        self._wake()
        self._server.stop()


def _fault_error(fault: _Fault) -> ApiError:
    """The error an injected failure answers with."""
    assert fault.status is not None
    if fault.status == 429:
        return ApiError(
            429,
            fault.description or f"Too Many Requests: retry after {fault.retry_after}",
            fault.retry_after,
        )
    return ApiError(fault.status, fault.description or HTTPStatus(fault.status).phrase)


async def _read_params(request: web.Request) -> Json:
    """The call's parameters, decoded by field name, from a JSON, form or multipart body."""
    try:
        if request.content_type == "application/json":
            raw = await request.json()
        else:
            raw = {
                name: value.file.read() if isinstance(value, web.FileField) else value
                for name, value in (await request.post()).items()
            }
        return {
            name: _FIELDS[name](value) if name in _FIELDS and isinstance(value, str) else value
            for name, value in raw.items()
        }
    except ValueError as error:
        raise bad_request(f"can't parse parameters: {error}") from error
