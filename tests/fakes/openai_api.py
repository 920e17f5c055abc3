"""A local server that speaks the OpenAI Chat Completions API (``POST /v1/chat/completions``).

It runs an aiohttp app on 127.0.0.1 in a thread of its own
(:class:`tests.fakes._server.ThreadedApp`), like the Messages API fake, so sync tests, async tests
and subprocesses (via ``OPENAI_BASE_URL``) can all use it. It answers as OpenAI and the local
servers that copy its protocol do: the key as ``Authorization: Bearer`` (checked only when
:attr:`FakeOpenAI.api_key` is set, as local servers need none), errors as ``{"error": {"message",
"type", "param", "code"}}``, 429 with ``Retry-After``, ``usage`` in every answer.
``response_format`` ``json_schema`` and ``json_object`` are honoured, or refused with a 400 naming
them (:attr:`FakeOpenAI.json_schema`, :attr:`FakeOpenAI.json_object`), as servers without structured
outputs do.

Replies are queued (FIFO; a reply with a ``match`` waits for a request it accepts); when none
applies, a responder builds a valid answer for the schema the request carries: its
``response_format`` schema, or else the JSON Schema written in its system message (what a model
that follows the instructions would do). Every call is recorded as a :class:`Call`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from aiohttp import web

from ._server import Call, ThreadedApp, example_for, quoting, take_fault

KEY = "sk-proj-test-not-a-real-openai-key-0123456789"
"""The key :meth:`FakeOpenAI.env` hands out (and the server expects, when it checks one)."""


@dataclass
class Reply:
    """One scripted answer."""

    answer: dict[str, Any] | None = None
    """Answer with this object as the message's JSON content."""
    text: str | None = None
    """Answer with this content instead, verbatim (malformed output for a judge)."""
    status: int = 200
    """HTTP status; not 200 means an error body."""
    error_type: str = "server_error"
    """``error.type`` of an error body (``invalid_request_error``, ``rate_limit_exceeded``…)."""
    code: str | None = None
    """``error.code`` of an error body."""
    retry_after: float | None = None
    """``Retry-After`` header (seconds) on an error."""
    message: str | None = None
    """``error.message`` of an error body (default ``fake <error_type>``)."""
    echo_key: bool = False
    """Append the request's ``Authorization`` header to the error message, as careless servers
    do."""
    echo_headers: bool = False
    """Append the request's headers (as JSON) to every text field of a normal answer, as a server
    quoting its request does."""
    delay: float = 0.0
    """Seconds to wait before answering (a delay past the client's timeout is a timeout)."""
    prompt_tokens: int = 120
    completion_tokens: int = 30
    usage: bool = True
    """Send ``usage`` (some local servers send none)."""
    finish_reason: str = "stop"
    match: Callable[[dict[str, Any]], bool] | None = None
    """Only for a request body this accepts (None: the next request)."""


def answer(**fields: Any) -> Reply:
    """A normal answer: the JSON object with these fields."""
    return Reply(answer=fields)


def error(
    status: int,
    error_type: str = "server_error",
    retry_after: float | None = None,
    message: str | None = None,
    code: str | None = None,
    echo_key: bool = False,
) -> Reply:
    """An error answer (429 rate_limit_exceeded, 500 server_error…); ``echo_key``: its message
    quotes the key."""
    return Reply(
        status=status,
        error_type=error_type,
        retry_after=retry_after,
        message=message,
        code=code,
        echo_key=echo_key,
    )


def echoed(reply: Reply, headers: dict[str, str]) -> Reply:
    """``reply`` with the request's headers appended to each text field of its answer."""
    quoted = json.dumps(headers)
    fields = {name: quoting(value, quoted) for name, value in (reply.answer or {}).items()}
    text = None if reply.text is None else f"{reply.text} {quoted}"
    return replace(reply, answer=fields, text=text)


def schema_in(body: dict[str, Any]) -> dict[str, Any] | None:
    """The schema a request asks its answer to match: ``response_format``'s, else the first one in
    its system message."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["schema"]
    system = "\n".join(
        m["content"]
        for m in body.get("messages", [])
        if m.get("role") == "system" and isinstance(m.get("content"), str)
    )
    decoder = json.JSONDecoder()
    for start, char in enumerate(system):
        if char == "{":
            try:
                found, _ = decoder.raw_decode(system, start)
            except ValueError:
                continue
            if isinstance(found, dict) and "properties" in found:
                return found
    return None


def schema_responder(body: dict[str, Any]) -> Reply:
    """A valid answer for the request's schema: enums take their first value, numbers 0.8 of their
    range."""
    schema = schema_in(body)
    if schema is None:
        return Reply(text="I do not know what shape the answer should take.")
    return Reply(answer=example_for(schema, schema.get("$defs", {})))


def _invalid(message: str, param: str | None = None, status: int = 400) -> web.Response:
    payload = {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    }
    return web.json_response(payload, status=status)


@dataclass
class FakeOpenAI:
    """The server. Use as a context manager; ``base_url`` (ending in ``/v1``) goes into
    ``OPENAI_BASE_URL``."""

    api_key: str | None = KEY
    """The key every request must carry as ``Authorization: Bearer``; None accepts any or none (a
    local server)."""
    json_schema: bool = True
    """Honour ``response_format`` ``json_schema``; False answers it with a 400, as many local
    servers do."""
    json_object: bool = True
    """Honour ``response_format`` ``json_object``; False answers it with a 400."""
    latency: float = 0.0
    """Seconds every answer waits."""
    responder: Callable[[dict[str, Any]], Reply] = schema_responder
    calls: list[Call] = field(default_factory=list)
    """Every request (``method`` is the path, ``params`` the JSON body, ``status`` the answer's), in
    arrival order."""
    headers: list[dict[str, str]] = field(default_factory=list)
    """Every request's headers, in arrival order."""
    in_flight_max: int = 0
    """Most requests being answered at once."""

    def __post_init__(self) -> None:
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._in_flight = 0
        self._server = ThreadedApp(self._app, "fake-openai")
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body, in arrival order."""
        return [call.params for call in self.calls]

    @property
    def arrivals(self) -> list[float]:
        """``time.monotonic()`` of every arrival."""
        return [call.at for call in self.calls]

    def queue(self, *replies: Reply) -> None:
        """Answer the next requests (each the next one its ``match`` accepts) with these, in
        order."""
        with self._lock:
            self._queue.extend(replies)

    def env(self) -> dict[str, str]:
        """Environment for a client (or a subprocess) that should talk to this server."""
        return {
            "OPENAI_BASE_URL": self.base_url,
            **({"OPENAI_API_KEY": self.api_key} if self.api_key else {}),
        }

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            reply = take_fault(self._queue, body)
        return reply if reply is not None else self.responder(body)

    async def _completions(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            body = None
        call = Call(request.path, body if isinstance(body, dict) else {}, time.monotonic())
        with self._lock:
            self.calls.append(call)
            self.headers.append(dict(request.headers))
            self._in_flight += 1
            self.in_flight_max = max(self.in_flight_max, self._in_flight)
        try:
            response = await self._answer(request, body)
            call.status = response.status
            return response
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _answer(self, request: web.Request, body: Any) -> web.Response:
        auth = request.headers.get("Authorization", "")
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            shown = auth.removeprefix("Bearer ")
            shown = (
                f"{shown[:3]}***{shown[-4:]}" if len(shown) > 8 else "***"
            )  # as OpenAI shows a wrong key
            return web.json_response(
                {
                    "error": {
                        "message": f"Incorrect API key provided: {shown}.",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_api_key",
                    }
                },
                status=401,
            )
        if not isinstance(body, dict):
            return _invalid("We could not parse the JSON body of your request.")
        if not isinstance(body.get("model"), str) or not body["model"]:
            return _invalid("you must provide a model parameter", "model")
        messages = body.get("messages")
        if (
            not isinstance(messages, list)
            or not messages
            or not all(
                isinstance(m, dict)
                and m.get("role") in ("system", "developer", "user", "assistant")
                and "content" in m
                for m in messages
            )
        ):
            return _invalid("Invalid 'messages': each needs a role and content.", "messages")
        fmt = body.get("response_format")
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if fmt is not None and kind not in ("text", "json_object", "json_schema"):
            return _invalid(
                f"Invalid value for 'response_format.type': {kind!r}.", "response_format.type"
            )
        if (kind == "json_schema" and not self.json_schema) or (
            kind == "json_object" and not self.json_object
        ):
            return _invalid(
                f"response_format type {kind} is not supported by this server", "response_format"
            )
        if kind == "json_schema" and not isinstance(
            (fmt.get("json_schema") or {}).get("schema"), dict
        ):
            return _invalid(
                "Missing required parameter: 'response_format.json_schema.schema'.",
                "response_format.json_schema",
            )
        reply = self._next(body)
        await asyncio.sleep(self.latency + reply.delay)
        if reply.status != 200:
            headers = (
                {"Retry-After": f"{reply.retry_after:g}"} if reply.retry_after is not None else {}
            )
            message = reply.message if reply.message is not None else f"fake {reply.error_type}"
            if reply.echo_key:
                message += f" (bad key header: {auth})"
            payload = {
                "error": {
                    "message": message,
                    "type": reply.error_type,
                    "param": None,
                    "code": reply.code,
                }
            }
            return web.json_response(payload, status=reply.status, headers=headers)
        if reply.echo_headers:
            reply = echoed(reply, dict(request.headers))
        content = reply.text if reply.text is not None else json.dumps(reply.answer or {})
        completion: dict[str, Any] = {
            "id": f"chatcmpl-{next(self._ids):06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "system_fingerprint": "fp_fake",
        }
        if reply.usage:
            completion["usage"] = {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            }
        return web.json_response(completion)

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        return app

    def __enter__(self) -> "FakeOpenAI":
        self.port = self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()
