"""Reaching Phoenix: where it is, how to authenticate (from ``env`` only), every failure in a line.

The host comes from ``PHOENIX_ENDPOINT``, ``PHOENIX_COLLECTOR_ENDPOINT`` or ``PHOENIX_BASE_URL``
(the first set, in the SDK's own order; a collector URL's ``/v1/traces`` is dropped, as the SDK
drops it). ``PHOENIX_API_KEY``, when set, is sent as ``Authorization: Bearer <key>`` (as the SDK
sends it); ``PHOENIX_CLIENT_HEADERS`` (``name=value,…``) adds headers, as for Phoenix Cloud's
older ``api_key=…`` header. The SDK gets an ``httpx.Client`` built here, so it reads nothing of
the process environment, keeps no background threads and retries nothing (httpx does not retry).
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from typing import TYPE_CHECKING, Any, Callable, TypeVar
from urllib.parse import quote

from ..base import ConnectorError, Env, require

if TYPE_CHECKING:
    import httpx
    from phoenix.client import Client

T = TypeVar("T")

HOST_VARS = ("PHOENIX_ENDPOINT", "PHOENIX_COLLECTOR_ENDPOINT", "PHOENIX_BASE_URL")
"""Where the Phoenix host is read from, first set wins (the SDK's order, less its legacy ones)."""
KEY_VAR = "PHOENIX_API_KEY"
HEADERS_VAR = "PHOENIX_CLIENT_HEADERS"
TIMEOUT_S = 30.0
"""Seconds a read may take (a page of spans, a batch of annotations)."""


def read_timeout() -> Any:
    """:data:`TIMEOUT_S` as the SDK's reads take it (typed ``int`` there; httpx takes a float)."""
    return TIMEOUT_S


_OTLP_PATH = re.compile(r"/+v1/traces/?$")
_HOST_FIX = "export PHOENIX_COLLECTOR_ENDPOINT=http://localhost:6006 (your Phoenix's URL)"


class Phoenix:
    """A configured SDK client and the host it talks to (for messages)."""

    def __init__(self, client: "Client", http: "httpx.Client", host: str, var: str, keyed: bool):
        self.client, self.http, self.host, self.var, self.keyed = client, http, host, var, keyed

    def call(self, what: str, action: Callable[[], T], *, not_found: str | None = None) -> T:
        """``action()``, every failure a :class:`ConnectorError` naming the host (``what`` says what
        was done)."""
        try:
            return action()
        except ConnectorError:
            raise
        except Exception as exc:  # the SDK raises httpx's, its own and plain ValueErrors
            raise self.error(what, exc, not_found) from None

    def error(self, what: str, exc: BaseException, not_found: str | None = None) -> ConnectorError:
        """One line for a failed call."""
        import httpx
        from phoenix.client.exceptions import PhoenixException

        where = f"phoenix at {self.host}"
        if isinstance(exc, httpx.HTTPStatusError):
            return self._status(what, exc.response, not_found)
        if isinstance(exc, httpx.TimeoutException):
            return ConnectorError(
                f"{what}: no answer within {TIMEOUT_S:g} s",
                where=where,
                transient=True,
                fix="try again later; check the server's load",
            )
        if isinstance(exc, (httpx.InvalidURL, httpx.UnsupportedProtocol)):
            return ConnectorError(
                f"{self.var} is not a usable URL ({exc})", where=where, fix=_HOST_FIX
            )
        if isinstance(exc, httpx.TransportError):
            return ConnectorError(
                f"{what}: cannot reach the server ({type(exc).__name__})",
                where=where,
                transient=True,
                fix=f"check that Phoenix runs there, or set {self.var}",
            )
        if isinstance(exc, PhoenixException):
            return ConnectorError(f"{what}: {exc}", where=where, fix="upgrade the Phoenix server")
        return ConnectorError(
            f"{what}: the server's answer is not what Phoenix sends ({type(exc).__name__}: "
            f"{str(exc)[:200]})",
            where=where,
            fix=f"check that {self.var} names a Phoenix server",
        )

    def _status(self, what: str, response: Any, not_found: str | None) -> ConnectorError:
        status = response.status_code
        where = f"phoenix at {self.host}"
        detail = _detail(response)
        if status in (401, 403):
            fix = (
                f"set {KEY_VAR} to a valid key (Phoenix → Settings → API Keys)"
                if not self.keyed
                else f"{KEY_VAR} was refused: use a key of this Phoenix with write access"
            )
            return ConnectorError(f"{what}: HTTP {status} {detail}".rstrip(), where=where, fix=fix)
        if status == 404:
            return ConnectorError(
                f"{what}: {not_found or 'not found'} (HTTP 404 {detail})".rstrip(),
                where=where,
                fix="check the project (a name or an id) and that the spans still exist",
            )
        if status == 429:
            return ConnectorError(
                f"{what}: rate limited (HTTP 429)",
                where=where,
                retry_after=retry_after(response.headers.get("retry-after")),
                fix="hilbot waits and retries",
            )
        if status >= 500:
            return ConnectorError(
                f"{what}: HTTP {status} {detail}".rstrip(),
                where=where,
                transient=True,
                fix="try again later",
            )
        return ConnectorError(
            f"{what}: HTTP {status} {detail}".rstrip(),
            where=where,
            fix="check the settings; upgrade the Phoenix server if it is older than the client",
        )


def _detail(response: Any) -> str:
    """The error's ``detail`` (FastAPI's), shortened; else the start of the body."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200].strip()
    detail = body.get("detail", body) if isinstance(body, dict) else body
    shown = detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False)
    return shown[:300]


def retry_after(value: str | None) -> float:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date); 1 when absent or
    odd."""
    if not value:
        return 1.0
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return 1.0
    return min(max(seconds, 0.0), 3600.0) if math.isfinite(seconds) else 1.0


def host(env: Env) -> tuple[str, str]:
    """(the base URL, the variable it came from); a missing one is the one-line error naming it."""
    for var in HOST_VARS:
        value = env.get(var, "").strip()
        if value:
            url = _OTLP_PATH.sub("", value) if var == "PHOENIX_COLLECTOR_ENDPOINT" else value
            if not re.match(r"^https?://[^/\s]", url, re.IGNORECASE):
                raise ConnectorError(f"{var} is not an http(s) URL: {value[:100]!r}", fix=_HOST_FIX)
            return url.rstrip("/"), var
    require(
        env, "PHOENIX_COLLECTOR_ENDPOINT", "the URL of your Phoenix, e.g. http://localhost:6006"
    )
    raise AssertionError("unreachable")  # require raised


def headers(env: Env) -> dict[str, str]:
    """Extra headers (``PHOENIX_CLIENT_HEADERS``) and the API key as a bearer token."""
    from phoenix.client.utils.parse_env_headers import parse_env_headers

    out = parse_env_headers(env.get(HEADERS_VAR)) if env.get(HEADERS_VAR) else {}
    key = env.get(KEY_VAR, "").strip()
    if key:
        out = {k: v for k, v in out.items() if k.lower() != "authorization"}
        out["Authorization"] = f"Bearer {key}"
    return out


def connect(env: Env) -> Phoenix:
    """A client for the Phoenix ``env`` names (nothing is sent yet)."""
    base, var = host(env)
    import httpx
    from phoenix.client import Client

    try:
        http = httpx.Client(
            base_url=base,
            headers=headers(env),
            trust_env=False,
            follow_redirects=False,
            timeout=httpx.Timeout(TIMEOUT_S, connect=10.0),
        )
    except (
        ValueError,
        TypeError,
    ) as exc:  # a header value httpx cannot send, a URL it cannot parse
        raise ConnectorError(
            f"cannot use {var} / {KEY_VAR} / {HEADERS_VAR}: {exc}",
            fix="check the variables hold a URL and plain ASCII header values",
        ) from None
    return Phoenix(Client(http_client=http), http, base, var, bool(env.get(KEY_VAR, "").strip()))


def path_part(project: str) -> str:
    """A project name or id as a URL path segment (the spans calls put it in the path as it is)."""
    return quote(project, safe="")


__all__ = [
    "HOST_VARS",
    "KEY_VAR",
    "Phoenix",
    "connect",
    "headers",
    "host",
    "path_part",
    "retry_after",
]
