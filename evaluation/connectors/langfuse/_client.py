"""The connection to Langfuse: the SDK's generated REST client, and its failures as ConnectorErrors.

hilbot uses ``langfuse.api.LangfuseAPI`` (the client the SDK generates from Langfuse's public
OpenAPI, what ``Langfuse(...).api`` is) with an ``httpx.Client`` of its own and an explicit
timeout — never ``Langfuse(...)`` itself, so no OpenTelemetry exporter, score-ingestion or media
thread is started and nothing is batched in the background: every call is one synchronous
request whose failure hilbot sees. Each call passes ``max_retries=0`` (the generated client
would otherwise retry 429/408/409/5xx twice on its own), because hilbot's outbox retries with
backoff itself.

Auth is HTTP Basic with the project's public key as user and secret key as password, as the SDK
sends it; the host is ``LANGFUSE_BASE_URL`` (what SDK 5 reads), else ``LANGFUSE_HOST``, else
Langfuse Cloud (EU); ``LANGFUSE_TIMEOUT`` (seconds) bounds each request.

The bulk reads (a pull's observations and scores, the queue's items, the sink's read-backs) skip
the SDK's generated models: :meth:`Connection.get_json` sends the same ``GET`` the SDK sends (path,
query parameters, Basic auth, the SDK's headers) and reads the answer's JSON as plain dicts, with
the same errors as an SDK call (the SDK's conversion of each object costs milliseconds; a pull of
10,000 traces would spend most of its time in it). The writes and the one-off reads stay on the SDK.

Pacing: ``LANGFUSE_RATE_PER_S`` (a positive number, e.g. ``0.5`` for the Hobby plan's 30 requests
a minute) spaces the plain-JSON reads of a pull at most that many a second; unset, they are not
spaced. Either way a 429 on such a read waits its ``Retry-After`` (at most
:data:`MAX_RETRY_AFTER_S` seconds, :data:`RETRIES_429` times a request) and tries again; a longer
wait, or one 429 too many, is the ConnectorError carrying ``retry_after``.
"""

from __future__ import annotations

import email.utils
import math
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar
from urllib.parse import urlsplit

from ..base import ConnectorError, Env, require

if TYPE_CHECKING:
    import httpx
    from langfuse.api import LangfuseAPI

T = TypeVar("T")

DEFAULT_HOST = "https://cloud.langfuse.com"
"""Where the SDK goes when no host is set (Langfuse Cloud, EU region)."""
MIN_SDK = 5
"""The oldest Langfuse SDK major hilbot speaks through (the v2 observations and v3 scores reads,
``POST /scores`` with a list; 3.x and 4.x read through deprecated endpoints)."""
SDK_FIX = "pip install 'hilbot[langfuse]' (or: pip install 'langfuse>=5,<6')"
DEFAULT_TIMEOUT_S = 10.0
"""Seconds each request may take unless ``LANGFUSE_TIMEOUT`` says otherwise."""
MAX_RETRY_AFTER_S = 60.0
"""The longest ``Retry-After`` a pull's read waits out itself (a longer one is the error)."""
RETRIES_429 = 5
"""How many 429s in a row one read waits out before the error."""
MAX_PAGES = 10_000
"""A guard on paging: no listing is followed further than this many pages."""
KEYS_FIX = (
    "export LANGFUSE_PUBLIC_KEY=pk-lf-… and LANGFUSE_SECRET_KEY=sk-lf-… of the project "
    "(Langfuse → Settings → API Keys), and LANGFUSE_BASE_URL to the host it lives on"
)
HOST_FIX = (
    "check LANGFUSE_BASE_URL (or LANGFUSE_HOST): the Langfuse host, e.g. https://cloud.langfuse.com"
)
VERSION_FIX = (
    "check the id and LANGFUSE_BASE_URL; hilbot reads through the v2 observations and "
    "v3 scores APIs of Langfuse v4.59 or later (Langfuse Cloud, or a self-hosted v4)"
)
FORBIDDEN_FIX = (
    "use the key pair of the project that holds it, with access to scores and annotation queues"
)


def host_of(env: Env) -> str:
    """The Langfuse host the environment names (no trailing slash); a bad URL is an error."""
    name = "LANGFUSE_BASE_URL" if env.get("LANGFUSE_BASE_URL", "").strip() else "LANGFUSE_HOST"
    host = (env.get(name, "").strip() or DEFAULT_HOST).rstrip("/")
    parts = urlsplit(host)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConnectorError(f"{name} is not an http(s) URL: {host[:200]!r}", fix=HOST_FIX)
    return host


def timeout_of(env: Env) -> float:
    """Seconds a request may take: ``LANGFUSE_TIMEOUT`` (a positive number), else the default."""
    raw = env.get("LANGFUSE_TIMEOUT", "").strip()
    try:
        seconds = float(raw) if raw else DEFAULT_TIMEOUT_S
    except ValueError:
        raise ConnectorError(
            f"LANGFUSE_TIMEOUT is not a number of seconds: {raw[:50]!r}",
            fix="export LANGFUSE_TIMEOUT=10 (or unset it)",
        ) from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConnectorError(
            f"LANGFUSE_TIMEOUT must be a positive number, not {raw[:50]!r}",
            fix="export LANGFUSE_TIMEOUT=10 (or unset it)",
        )
    return seconds


@dataclass
class Connection:
    """An open connection to one Langfuse project: the generated client and how to call it."""

    host: str
    """The Langfuse host (named in every error)."""
    timeout: float
    """Seconds each request may take."""
    api: "LangfuseAPI"
    """The SDK's generated REST client."""
    http: "httpx.Client"
    """The HTTP client it sends through (ours: its timeout, no retries)."""
    options: dict[str, Any] = field(default_factory=dict)
    """The request options every call passes (``max_retries=0``: no retries inside the SDK)."""
    auth: tuple[str, str] = field(default=("", ""), repr=False)
    """The key pair (HTTP Basic), for the requests made without the SDK's models."""
    headers: dict[str, str] = field(default_factory=dict)
    """The headers the SDK sends with each request (its name and version, the public key)."""
    rate_per_s: float | None = None
    """At most this many plain-JSON reads a second (``LANGFUSE_RATE_PER_S``); None: unspaced."""
    retry_429: bool = False
    """Whether a plain-JSON read waits out a 429 (a pull's reads; the sink's outbox retries
    itself)."""
    _last: float = field(default=-math.inf, repr=False)
    """When the last paced read was sent (``time.monotonic``)."""

    def get_json(
        self,
        what: str,
        path: str,
        params: dict[str, Any],
        *,
        missing: str | None = None,
        missing_fix: str | None = None,
    ) -> dict[str, Any]:
        """``GET {host}/api/public/{path}`` as the SDK sends it (``None`` parameters left out,
        datetimes as the SDK writes them); the answer's JSON object. Every failure is a
        ConnectorError, as :meth:`call` makes them; an answer that is not a JSON object is the
        "unexpected shape" error. Paced and 429-retried as the module says."""
        from langfuse.api.core.api_error import ApiError

        query = {key: _param(value) for key, value in params.items() if value is not None}
        url = f"{self.host}/api/public/{path}"

        def request(options: dict[str, Any]) -> Any:
            self._pace()
            answer = self.http.get(url, params=query, headers=self.headers, auth=self.auth)
            if answer.status_code >= 300:
                raise ApiError(
                    status_code=answer.status_code,
                    headers=dict(answer.headers),
                    body=_json_or_text(answer),
                )
            try:
                return answer.json()
            except ValueError:
                raise ApiError(
                    status_code=answer.status_code,
                    headers=dict(answer.headers),
                    body=answer.text[:500],
                ) from None

        for attempt in range(RETRIES_429 + 1):
            try:
                body = self.call(what, request, missing=missing, missing_fix=missing_fix)
                break
            except ConnectorError as exc:
                wait = exc.retry_after
                if (
                    not self.retry_429
                    or wait is None
                    or attempt >= RETRIES_429
                    or wait > MAX_RETRY_AFTER_S
                ):
                    raise
                time.sleep(wait)
        if not isinstance(body, dict):
            raise self.shape(what, f"expected an object, got {type(body).__name__}")
        return body

    def walk_json(self, what: str, path: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Every object of a cursor-paged listing read with :meth:`get_json`."""
        for data in self.walk_pages_json(what, path, params):
            yield from data

    def walk_pages_json(
        self,
        what: str,
        path: str,
        params: dict[str, Any],
        *,
        ahead: bool = False,
        upto: int | None = None,
    ) -> Iterator[list[Any]]:
        """The pages (``data`` lists) of a cursor-paged listing read with :meth:`get_json`
        (``meta.cursor`` until it is absent, or repeats).

        ``ahead``: each page is asked for as soon as the one before it came (:meth:`ahead`), until
        ``upto`` objects came; the rest, if the caller wants them, page by page as it asks."""
        state: dict[str, Any] = {
            "cursor": None,
            "seen": set(),
            "pages": 0,
            "items": 0,
            "done": False,
        }

        def step() -> list[Any]:
            page = _Page(
                self, what, self.get_json(what, path, {**params, "cursor": state["cursor"]})
            )
            data = list(page.data or [])
            cursor = page.meta.get("cursor")
            state["pages"] += 1
            state["items"] += len(data)
            if (
                not isinstance(cursor, str)
                or not cursor
                or cursor in state["seen"]
                or state["pages"] >= MAX_PAGES
            ):
                state["done"] = True
            else:
                state["seen"].add(cursor)
                state["cursor"] = cursor
            return data

        def run(early: bool) -> Iterator[list[Any]]:
            while not state["done"]:
                yield step()
                if early and upto is not None and state["items"] >= upto:
                    return

        if ahead:
            yield from self.ahead(run(True))
        yield from run(False)

    def ahead(self, pages: Iterator[T]) -> Iterator[T]:
        """``pages`` read in a thread of their own, each request sent as soon as the one before it
        was answered, while the caller works on the pages already read (the requests still go
        one after another; the caller must send none meanwhile). A failure is raised to the
        caller; when the caller stops early, the request in flight is waited for."""
        import queue
        import threading

        box: "queue.Queue[tuple[BaseException | None, Any]]" = queue.Queue(maxsize=2)
        stop = threading.Event()
        done = object()

        def run() -> None:
            try:
                for page in pages:
                    if stop.is_set():
                        return
                    box.put((None, page))
                box.put((None, done))
            except BaseException as exc:  # handed to the caller
                box.put((exc, None))

        worker = threading.Thread(target=run, name="langfuse-read-ahead", daemon=True)
        worker.start()
        try:
            while True:
                failure, page = box.get()
                if failure is not None:
                    raise failure
                if page is done:
                    return
                yield page
        finally:
            stop.set()
            while worker.is_alive():
                try:
                    box.get(timeout=0.05)
                except queue.Empty:
                    pass
            worker.join()

    def pages_json(
        self,
        what: str,
        path: str,
        params: dict[str, Any],
        *,
        missing: str | None = None,
        missing_fix: str | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Every object of a page-numbered listing read with :meth:`get_json`."""
        return pages(
            lambda page: _Page(
                self,
                what,
                self.get_json(
                    what, path, {**params, "page": page}, missing=missing, missing_fix=missing_fix
                ),
            ),
            plain=True,
        )

    def shape(self, what: str, problem: str) -> ConnectorError:
        """The error of an answer of an unexpected shape (as a model the SDK cannot build)."""
        return ConnectorError(
            f"Langfuse at {self.host} answered {what} with an unexpected shape: {problem}"[:500],
            fix=VERSION_FIX,
        )

    def _pace(self) -> None:
        """Wait until the next read is due (``rate_per_s``)."""
        if self.rate_per_s:
            due = self._last + 1.0 / self.rate_per_s
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            self._last = time.monotonic()

    def post_json(self, what: str, path: str, body: Any) -> Any:
        """``POST {host}/api/public/{path}`` with a JSON body, as the API reference documents it;
        its answer's JSON (every failure a ConnectorError, as :meth:`call` makes them)."""
        from langfuse.api.core.api_error import ApiError

        def request(options: dict[str, Any]) -> Any:
            answer = self.http.post(f"{self.host}/api/public/{path}", json=body, auth=self.auth)
            if answer.status_code >= 300:
                raise ApiError(
                    status_code=answer.status_code,
                    headers=dict(answer.headers),
                    body=_json_or_text(answer),
                )
            return answer.json()

        return self.call(what, request)

    def close(self) -> None:
        """Close the HTTP client."""
        self.http.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def fetch(
        self,
        what: str,
        method: Callable[..., T],
        *args: Any,
        missing: str | None = None,
        missing_fix: str | None = None,
        **params: Any,
    ) -> T:
        """``method(*args, **params)`` of the SDK, without its retries; a failure is an error.

        ``what`` says what was asked (in the error); ``missing`` is the message of a 404 (the
        queue, dataset or run asked for does not exist), ``missing_fix`` its fix.
        """
        return self.call(
            what,
            lambda o: method(*args, **params, request_options=o),
            missing=missing,
            missing_fix=missing_fix,
        )

    def walk(self, what: str, method: Callable[..., Any], **params: Any) -> Iterator[Any]:
        """Every item of a cursor-paged listing (``meta.cursor`` until absent, or repeated)."""
        return cursor_pages(lambda cursor: self.fetch(what, method, cursor=cursor, **params))

    def pages(
        self,
        what: str,
        method: Callable[..., Any],
        *args: Any,
        missing: str | None = None,
        missing_fix: str | None = None,
        **params: Any,
    ) -> Iterator[Any]:
        """Every item of a page-numbered listing (``page`` from 1 to ``meta.totalPages``)."""
        return pages(
            lambda page: self.fetch(
                what, method, *args, page=page, missing=missing, missing_fix=missing_fix, **params
            )
        )

    def call(
        self,
        what: str,
        request: Callable[[dict[str, Any]], T],
        *,
        missing: str | None = None,
        missing_fix: str | None = None,
    ) -> T:
        """One SDK call (``request(options)``); every failure becomes a ConnectorError."""
        import httpx
        from langfuse.api.core.api_error import ApiError
        from pydantic import ValidationError

        try:
            return request(self.options)
        except ApiError as exc:
            raise self.refused(exc, what, missing, missing_fix) from None
        except httpx.TimeoutException:
            raise ConnectorError(
                f"Langfuse at {self.host} did not answer within {self.timeout:g} s ({what})",
                fix="try again later, or raise LANGFUSE_TIMEOUT",
                transient=True,
            ) from None
        except httpx.HTTPError as exc:
            raise ConnectorError(
                f"cannot reach Langfuse at {self.host} ({what}): {type(exc).__name__}",
                fix=HOST_FIX,
                transient=True,
            ) from None
        except ValidationError as exc:
            raise ConnectorError(
                f"Langfuse at {self.host} answered {what} with an unexpected shape: "
                f"{_first_problem(exc)}",
                fix=VERSION_FIX,
            ) from None
        except Exception as exc:  # the SDK's own surprises never escape as tracebacks
            raise ConnectorError(
                f"talking to Langfuse at {self.host} failed ({what}): "
                f"{type(exc).__name__}: {str(exc)[:300]}",
                fix=HOST_FIX,
            ) from None

    def refused(
        self, exc: Any, what: str, missing: str | None, missing_fix: str | None
    ) -> ConnectorError:
        """The ConnectorError for an error answer (``langfuse.api.core.ApiError``)."""
        status, said, at = exc.status_code, _message(exc.body), f"Langfuse at {self.host}"
        if status == 401:
            return ConnectorError(f"{at} refused the API keys (401) while {what}", fix=KEYS_FIX)
        if status == 403:
            return ConnectorError(f"{at} forbade {what} (403){said}", fix=FORBIDDEN_FIX)
        if status == 404:
            return ConnectorError(
                missing or f"{at} has nothing at {what} (404){said}", fix=missing_fix or VERSION_FIX
            )
        if status == 429:
            wait = retry_after(exc.headers)
            return ConnectorError(
                f"{at} is rate limiting {what} (429); retry in {wait:g} s",
                fix="wait; the limits are per organisation and plan",
                retry_after=wait,
            )
        if status is None or status >= 500 or status == 408:
            return ConnectorError(
                f"{at} failed {what} ({status or 'no status'}){said}",
                fix="try again later (https://status.langfuse.com)",
                transient=True,
            )
        if 200 <= status < 300:
            return ConnectorError(
                f"{at} answered {what} with something that is not JSON", fix=HOST_FIX
            )
        refusal = ConnectorError(f"{at} refused {what} ({status}){said}", fix=VERSION_FIX)
        refusal.status = status  # type: ignore[attr-defined]
        return refusal


def connect(env: Env) -> Connection:
    """A connection from the environment: keys (required), host and timeout; nothing is sent yet."""
    public = require(env, "LANGFUSE_PUBLIC_KEY", "the project's public key, pk-lf-…")
    secret = require(env, "LANGFUSE_SECRET_KEY", "the project's secret key, sk-lf-…")
    host, timeout = host_of(env), timeout_of(env)
    sdk_version()
    import httpx
    from langfuse import __version__
    from langfuse.api import LangfuseAPI

    http = httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=True)
    api = LangfuseAPI(
        base_url=host,
        username=public,
        password=secret,
        x_langfuse_sdk_name="python",
        x_langfuse_sdk_version=__version__,
        x_langfuse_public_key=public,
        httpx_client=http,
        timeout=timeout,
    )
    headers = {
        "X-Langfuse-Sdk-Name": "python",
        "X-Langfuse-Sdk-Version": __version__,
        "X-Langfuse-Public-Key": public,
    }
    return Connection(
        host, timeout, api, http, {"max_retries": 0}, (public, secret), headers, rate_of(env)
    )


def rate_of(env: Env) -> float | None:
    """``LANGFUSE_RATE_PER_S``: reads a second a pull keeps to (a positive number), else None."""
    raw = env.get("LANGFUSE_RATE_PER_S", "").strip()
    if not raw:
        return None
    try:
        rate = float(raw)
    except ValueError:
        rate = math.nan
    if not math.isfinite(rate) or rate <= 0:
        raise ConnectorError(
            f"LANGFUSE_RATE_PER_S must be a positive number, not {raw[:50]!r}",
            fix="export LANGFUSE_RATE_PER_S=0.5 (Hobby: 30 a minute), or unset it",
        )
    return rate


def _param(value: Any) -> Any:
    """A query parameter as the SDK sends it (datetimes by its ``serialize_datetime``)."""
    if isinstance(value, datetime):
        from langfuse.api.core.datetime_utils import serialize_datetime

        return serialize_datetime(value)
    return value


@dataclass
class _Page:
    """A plain-JSON page, read as the paging helpers read the SDK's (``data``, ``meta``)."""

    conn: Connection
    what: str
    body: dict[str, Any]

    @property
    def data(self) -> list[Any]:
        data = self.body.get("data")
        if not isinstance(data, list):
            raise self.conn.shape(
                self.what,
                "data: Input should be a valid list"
                if "data" in self.body
                else "data: Field required",
            )
        return data

    @property
    def meta(self) -> dict[str, Any]:
        meta = self.body.get("meta")
        return meta if isinstance(meta, dict) else {}


def _json_or_text(answer: Any) -> Any:
    try:
        return answer.json()
    except ValueError:
        return answer.text[:500]


def sdk_version() -> str:
    """The installed Langfuse SDK's version; a ConnectorError when it is missing or older than 5."""
    try:
        from langfuse import __version__
    except ImportError:
        raise ConnectorError("the Langfuse SDK is not installed", fix=SDK_FIX) from None
    major = __version__.split(".", 1)[0]
    if not major.isdigit() or int(major) < MIN_SDK:
        raise ConnectorError(f"the Langfuse SDK {__version__} is older than {MIN_SDK}", fix=SDK_FIX)
    return __version__


# ------------------------------------------------------------------------------------------- paging


def pages(fetch: Callable[[int], Any], plain: bool = False) -> Iterator[Any]:
    """Every item of a page-numbered listing (``page`` from 1 to ``meta.totalPages``); ``plain``:
    pages of :meth:`Connection.pages_json` (``meta`` a dict)."""
    for page in range(1, MAX_PAGES + 1):
        answer = fetch(page)
        data = list(answer.data or [])
        yield from data
        if plain:
            total = answer.meta.get("totalPages")
            total = total if isinstance(total, int) and not isinstance(total, bool) else None
        else:
            total = getattr(answer.meta, "total_pages", None)
        if not data or total is None or page >= total:
            return


def cursor_pages(fetch: Callable[[str | None], Any]) -> Iterator[Any]:
    """Every item of a cursor-paged listing (``meta.cursor`` until it is absent, or repeats)."""
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        answer = fetch(cursor)
        yield from list(answer.data or [])
        cursor = getattr(answer.meta, "cursor", None) if answer.meta is not None else None
        if not cursor or cursor in seen:
            return
        seen.add(cursor)


# --------------------------------------------------------------------------------------------- bits


def retry_after(headers: Any) -> float:
    """Seconds a 429 asks to wait: ``Retry-After`` in seconds or as an HTTP date, else 1."""
    found = {str(k).lower(): v for k, v in dict(headers or {}).items()}.get("retry-after")
    if found is None:
        return 1.0
    text = str(found).strip()
    try:
        seconds = float(text)
    except ValueError:
        parsed = email.utils.parsedate_tz(text)
        if parsed is None:
            return 1.0
        seconds = email.utils.mktime_tz(parsed) - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else 1.0


def _message(body: Any) -> str:
    """``: <what the server said>``, short, or nothing."""
    if isinstance(body, dict):
        text = body.get("message") or body.get("error") or body.get("detail")
        text = text if isinstance(text, str) else (str(body) if body else "")
    else:
        text = str(body) if body else ""
    text = " ".join(text.split())
    return f": {text[:300]}" if text else ""


def _first_problem(exc: Any) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc)[:200]
    err = errors[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    return f"{where}: {err.get('msg', '')}"[:300]


def chunks(items: list[T], size: int) -> Iterator[list[T]]:
    """``items`` in runs of at most ``size``."""
    for start in range(0, len(items), max(1, size)):
        yield items[start : start + size]


def iso(value: Any) -> str:
    """A datetime as ISO 8601 text (what ``startTime`` comparisons use); other values as text."""
    return value.isoformat() if hasattr(value, "isoformat") else str(value or "")


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 time of an answer as a datetime (None when it is not one)."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
