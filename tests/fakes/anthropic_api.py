"""A local server that speaks the Anthropic Messages API (``POST /v1/messages``).

It runs an aiohttp app on 127.0.0.1 in a thread of its own, so sync tests, async tests,
subprocesses (via ``ANTHROPIC_BASE_URL``) and the benchmark can all use it. Replies are
queued (FIFO); when the queue is empty a responder builds a valid tool call for whatever
schema the request's tool declares. Every request is recorded.
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

from ._server import ThreadedApp, example_for, quoting


@dataclass
class Reply:
    """One scripted answer."""

    tool_input: dict[str, Any] | None = None
    """Answer with a tool_use block carrying this input."""
    text: str | None = None
    """Answer with a text block instead (malformed output for a judge)."""
    status: int = 200
    """HTTP status; not 200 means an error body."""
    error_type: str = "api_error"
    """``error.type`` of an error body (rate_limit_error, overloaded_error, …)."""
    retry_after: float | None = None
    """``retry-after`` header (seconds) on an error."""
    message: str | None = None
    """``error.message`` of an error body (default ``fake <error_type>``)."""
    echo_key: bool = False
    """Append the request's key header (``x-api-key``, or ``authorization``) to the error message,
    as careless servers do."""
    echo_headers: bool = False
    """Append the request's headers (as JSON) to every text field of a normal answer, as a server
    quoting its request does."""
    delay: float = 0.0
    """Seconds to wait before answering (a delay past the client's timeout is a timeout)."""
    input_tokens: int = 120
    output_tokens: int = 30


def tool(**fields: Any) -> Reply:
    """A normal answer: the forced tool call with these fields."""
    return Reply(tool_input=fields)


def error(
    status: int,
    error_type: str = "api_error",
    retry_after: float | None = None,
    message: str | None = None,
    echo_key: bool = False,
) -> Reply:
    """An error answer (429 rate_limit_error, 529 overloaded_error, 500 api_error…); ``echo_key``:
    its message quotes the key."""
    return Reply(
        status=status,
        error_type=error_type,
        retry_after=retry_after,
        message=message,
        echo_key=echo_key,
    )


def echoed(reply: Reply, headers: dict[str, str]) -> Reply:
    """``reply`` with the request's headers appended to each text field of its answer."""
    quoted = json.dumps(headers)
    fields = {name: quoting(value, quoted) for name, value in (reply.tool_input or {}).items()}
    text = None if reply.text is None else f"{reply.text} {quoted}"
    return replace(reply, tool_input=fields, text=text)


def schema_responder(body: dict[str, Any]) -> Reply:
    """A valid answer for the request's first tool: enums take their first value, numbers 0.8."""
    schema = (
        body["tools"][0]["input_schema"]
        if body.get("tools")
        else body["output_config"]["format"]["schema"]
    )
    return Reply(tool_input=example_for(schema, schema.get("$defs", {})))


@dataclass
class FakeAnthropic:
    """The server. Use as a context manager; ``base_url`` goes into ``ANTHROPIC_BASE_URL``."""

    latency: float = 0.0
    """Seconds every answer waits (the benchmark uses 0.3)."""
    responder: Callable[[dict[str, Any]], Reply] = schema_responder
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Every request body, in arrival order."""
    headers: list[dict[str, str]] = field(default_factory=list)
    """Every request's headers."""
    arrivals: list[float] = field(default_factory=list)
    """``time.monotonic()`` of every arrival."""
    in_flight_max: int = 0
    """Most requests being answered at once."""

    def __post_init__(self) -> None:
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._in_flight = 0
        self._server = ThreadedApp(self._app, "fake-anthropic")
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def queue(self, *replies: Reply) -> None:
        """Answer the next requests with these, in order."""
        with self._lock:
            self._queue.extend(replies)

    def env(self) -> dict[str, str]:
        """Environment for a client (or a subprocess) that should talk to this server."""
        return {
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
        }

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self.responder(body)

    async def _messages(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            self.arrivals.append(time.monotonic())
            self._in_flight += 1
            self.in_flight_max = max(self.in_flight_max, self._in_flight)
        try:
            reply = self._next(body)
            await asyncio.sleep(self.latency + reply.delay)
            if reply.echo_headers:
                reply = echoed(reply, dict(request.headers))
            return self._response(
                body,
                reply,
                request.headers.get("x-api-key") or request.headers.get("authorization", ""),
            )
        finally:
            with self._lock:
                self._in_flight -= 1

    def _response(self, body: dict[str, Any], reply: Reply, key: str = "") -> web.Response:
        if reply.status != 200:
            headers = (
                {"retry-after": str(reply.retry_after)} if reply.retry_after is not None else {}
            )
            headers["x-should-retry"] = (
                "true" if reply.status in (429, 529) or reply.status >= 500 else "false"
            )
            message = reply.message if reply.message is not None else f"fake {reply.error_type}"
            if reply.echo_key:
                message += f" (bad key header: {key})"
            payload = {"type": "error", "error": {"type": reply.error_type, "message": message}}
            return web.json_response(payload, status=reply.status, headers=headers)
        if reply.text is not None:
            content = [{"type": "text", "text": reply.text}]
        elif body.get("output_config"):  # structured output: the answer is JSON text
            content = [{"type": "text", "text": json.dumps(reply.tool_input or {})}]
        else:
            name = body["tools"][0]["name"] if body.get("tools") else "record_answer"
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{next(self._ids):06d}",
                    "name": name,
                    "input": reply.tool_input or {},
                }
            ]
        message = {
            "id": f"msg_{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }
        return web.json_response(message)

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/messages", self._messages)
        return app

    def __enter__(self) -> "FakeAnthropic":
        self.port = self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    def tool_inputs(self) -> list[dict[str, Any]]:
        """The prompts (user messages) received, in order."""
        return [json.loads(json.dumps(b["messages"][0]["content"])) for b in self.requests]
