"""python-telegram-bot's networking on aiohttp: the Bot API calls a busy bot makes, for less CPU.

python-telegram-bot ships an httpx backend and documents :class:`~telegram.request.BaseRequest`
as the way to bring another. On a 2-core machine an httpx call costs about 1.9 ms of CPU and an
aiohttp call about 0.25 ms, and its connection pool does more work the more requests wait for a
connection. When 300 reviewers tap at once every answer, edit and next card is such a call: on
httpx the last of them was answered after more than a second, most of it spent in the client.

Every Bot API call the bot makes goes out through here, so here every text it sends is scrubbed
of secrets (:func:`_body`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from evaluation.scrub import scrub, scrub_values

_log = logging.getLogger("hilbot.telegram.http")
"""Each call and its status, at debug level (``serve -v``); the token in the URL is scrubbed as
every log line is."""

TAPPED_ON = "hilbot_tapped_on"
"""The field a tap's message is replaced by (see :func:`slim_updates`)."""
CONNECT_S = 5.0
"""How long to wait for a connection to the Bot API (PTB's own default)."""
CREDENTIALS = frozenset({"secret_token"})
"""Parameters whose value is a secret the call must carry (setWebhook's ``secret_token``): never
scrubbed."""


class AiohttpRequest(BaseRequest):
    """A :class:`~telegram.request.BaseRequest` on one :class:`aiohttp.ClientSession` with
    ``connections`` kept alive.

    Timeouts: ``read_timeout`` bounds each wait for bytes from the server (a long poll passes its
    own); ``connect`` and ``pool`` bound getting a connection. There is no total limit, so a large
    upload is not cut off while it is still moving.
    """

    __slots__ = ("_connect_s", "_connections", "_proxies", "_read_s", "_session")

    def __init__(
        self, connections: int = 64, read_timeout: float = 15.0, connect_timeout: float = CONNECT_S
    ):
        self._connections = connections
        self._read_s = read_timeout
        self._connect_s = connect_timeout
        self._session: aiohttp.ClientSession | None = None
        self._proxies: dict[str, str | None] = {}

    def _proxy(self, url: str) -> str | None:
        """The proxy for the URL's origin, read from the environment once per origin.

        (aiohttp's ``trust_env`` reads it, and ``~/.netrc``, in a thread at every call: that was
        most of a call's cost.)
        """
        origin = url[: url.find("/", url.find("//") + 2)]
        if origin not in self._proxies:
            self._proxies[origin] = _proxy_for(url)
        return self._proxies[origin]

    @property
    def read_timeout(self) -> float | None:
        """The default wait for bytes from the server."""
        return self._read_s

    async def initialize(self) -> None:
        """Open the session (in the running event loop)."""
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=self._connections, limit_per_host=self._connections
            )
            self._session = aiohttp.ClientSession(connector=connector, trust_env=False)

    async def shutdown(self) -> None:
        """Close the session and its connections."""
        if self._session is not None and not self._session.closed:
            await self._session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """Make the call; a timeout is :class:`TimedOut`, any other failure :class:`NetworkError`
        (no token in it)."""
        if self._session is None or self._session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized")
        timeout = aiohttp.ClientTimeout(
            total=None,
            sock_read=_given(read_timeout, self._read_s),
            connect=_given(pool_timeout, self._connect_s),
            sock_connect=_given(connect_timeout, self._connect_s),
        )
        try:
            async with self._session.request(
                method,
                url,
                data=_body(request_data),
                timeout=timeout,
                proxy=self._proxy(url),
                headers={"User-Agent": self.USER_AGENT},
            ) as response:
                body = await response.read()
        except asyncio.TimeoutError as exc:
            raise TimedOut(f"the Bot API did not answer in time ({type(exc).__name__})") from exc
        except aiohttp.ClientError as exc:
            raise NetworkError(f"aiohttp.{type(exc).__name__}: {scrub(str(exc))}") from exc
        _log.debug('HTTP Request: %s %s "%s %s"', method, url, response.status, response.reason)
        return response.status, body


class PollRequest(AiohttpRequest):
    """The request that fetches updates; a tap's update reaches python-telegram-bot without the card
    it was tapped on.

    Telegram sends with each button tap the whole message the button sits under: the card's
    text, its formatting and its keyboard. The bot needs only which message and chat that was.
    Building python-telegram-bot objects for the rest was a fifth of the bot's work when 300
    reviewers tapped at once, so the message is replaced by those ids first (see
    :func:`slim_updates`).
    """

    __slots__ = ()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> tuple[int, bytes]:
        status, body = await super().do_request(url, method, request_data, *args, **kwargs)
        if status != 200 or not url.endswith("/getUpdates"):
            return status, body
        return status, slim_updates(body)


def slim_updates(body: bytes) -> bytes:
    """A getUpdates answer with each callback query's message replaced by :data:`TAPPED_ON`: its id
    and its chat's id and type.

    python-telegram-bot keeps a field it does not know in the query's ``api_kwargs``. Anything
    unexpected (not JSON, not a list of updates, a message without those keys) is left as it
    came, for python-telegram-bot to parse or report.
    """
    try:
        answer = json.loads(body)
        changed = False
        for update in answer["result"]:
            query = update.get("callback_query")
            message = query.get("message") if isinstance(query, dict) else None
            if (
                isinstance(message, dict)
                and isinstance(message.get("message_id"), int)
                and isinstance(message.get("chat"), dict)
            ):
                chat = message["chat"]
                if isinstance(chat.get("id"), int) and isinstance(chat.get("type"), str):
                    del query["message"]
                    query[TAPPED_ON] = {
                        "message_id": message["message_id"],
                        "chat_id": chat["id"],
                        "chat_type": chat["type"],
                    }
                    changed = True
    except (ValueError, KeyError, TypeError, AttributeError):
        return body
    return json.dumps(answer, ensure_ascii=False).encode() if changed else body


def _proxy_for(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``, ``NO_PROXY``, …), or None."""
    from urllib.request import (  # type: ignore[attr-defined]  # in CPython, not in typeshed
        getproxies_environment,
        proxy_bypass_environment,
    )

    parts = urlsplit(url)
    proxies = getproxies_environment()
    if not parts.hostname or proxy_bypass_environment(parts.hostname, proxies):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


def _given(value: Any, default: float) -> float | None:
    """A timeout PTB passed (None: no limit), or the default when it passed none."""
    return default if isinstance(value, type(BaseRequest.DEFAULT_NONE)) else value


def _body(request_data: RequestData | None) -> aiohttp.FormData | None:
    """The call's parameters as a form (multipart when it uploads a file), every text scrubbed.

    This is where every text the bot sends Telegram passes (messages, edits, captions, answers to
    taps, keyboards): no secret the process holds reaches a chat, whatever a text was built from.
    """
    if request_data is None:
        return None
    form = aiohttp.FormData(scrub_values(request_data.json_parameters, CREDENTIALS))
    for name, (filename, content, mimetype) in (request_data.multipart_data or {}).items():
        form.add_field(name, content, filename=filename, content_type=mimetype)
    return form


__all__ = ["TAPPED_ON", "AiohttpRequest", "PollRequest", "slim_updates"]
