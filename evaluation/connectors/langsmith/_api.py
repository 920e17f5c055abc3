"""The one place that talks to LangSmith: every call into the ``langsmith`` SDK sits here, behind a
small method of :class:`Api`, so a deprecated SDK method (the classic ``Client`` methods go after
January 2027) is swapped in one spot.

The SDK's client is built with its hidden machinery switched off: no background tracing thread
(``auto_batch_tracing=False``), no urllib3 retries (``Retry(total=0)``), one attempt per call
(``stop_after_attempt=1``), short timeouts, a static server ``info`` (no ``GET /info`` round trip),
every trace sampled (an inherited ``LANGSMITH_TRACING_SAMPLING_RATE`` would make
``create_feedback`` skip the write without a word) and no workspace taken from ``os.environ``.
Feedback goes without ``trace_id``, so ``create_feedback`` is always one synchronous
``POST /api/v1/feedback`` whose failure is seen, never a multipart batch that only logs errors.

Reads go through the SDK's own request path (``Client.request_with_retries``: its auth header,
timeouts and error classes) to the documented endpoints, and their JSON is read as plain data: the
SDK's models require fields the API documents as optional (a run's ``start_time``, a feedback's
``created_at``) and drop ``queue_run_id``. Every failure becomes one :class:`ConnectorError`.
"""

from __future__ import annotations

import email.utils
import inspect
import json
import logging
import math
import time
import uuid
import warnings
import weakref
from typing import Any, Callable, Mapping, NoReturn
from urllib.parse import quote, urlsplit

from ...scrub import hold
from ..base import ConnectorError, Env, require

KEY = "LANGSMITH_API_KEY"
"""The API key variable (``LANGCHAIN_API_KEY`` is read too, as the SDK reads it)."""
ENDPOINT = "LANGSMITH_ENDPOINT"
"""The API host variable (``LANGCHAIN_ENDPOINT`` is read too, as the SDK reads it)."""
WORKSPACE = "LANGSMITH_WORKSPACE_ID"
"""The workspace an org-scoped key acts in (sent as ``X-Tenant-Id``)."""
CLOUD = "https://api.smith.langchain.com"
"""The endpoint when none is set: LangSmith Cloud (US)."""
PREFIX = "/api/v1"
"""Where the documented REST API lives under the host."""

Json = Any


def _env(env: Env, name: str) -> str:
    """A LangSmith variable, or its older ``LANGCHAIN_`` spelling (as the SDK reads them)."""
    for candidate in (name, name.replace("LANGSMITH_", "LANGCHAIN_", 1)):
        value = env.get(candidate, "").strip()
        if value:
            return value
    return ""


def api_url(env: Env) -> str:
    """The documented API root (``…/api/v1``) of the ``LANGSMITH_ENDPOINT`` host (or Cloud's)."""
    raw = _env(env, ENDPOINT).strip("'\"").rstrip("/") or CLOUD
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConnectorError(
            f"{ENDPOINT}={raw!r} is not an http(s) URL",
            fix=f"export {ENDPOINT}=https://api.smith.langchain.com (or your "
            "self-hosted https://host/api/v1)",
        )
    path = parts.path.rstrip("/")
    if path.endswith("/api"):
        path += "/v1"
    elif not path.endswith(PREFIX):
        path += PREFIX
    return f"{parts.scheme}://{parts.netloc}{path}"


def api_key(env: Env) -> str:
    """The API key, or the error that names ``LANGSMITH_API_KEY``."""
    key = _env(env, KEY) or require(env, KEY, "a LangSmith API key: Settings → API Keys")
    hold(key)
    return key


def as_uuid(value: Any) -> str | None:
    """``value`` as a canonical UUID string, or None when it is not one."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        return str(uuid.UUID(value.strip()))
    except ValueError:
        return None


def segment(value: str) -> str:
    """A path segment, percent-encoded whatever it holds."""
    return quote(value, safe="")


class Api:
    """A LangSmith connection: the SDK client, its host for messages, and typed failures."""

    def __init__(self, env: Env, timeout_s: float):
        self.url = api_url(env)
        self.key = api_key(env)
        self.workspace = env.get(WORKSPACE, "").strip()
        self.timeout_s = timeout_s
        parts = urlsplit(self.url)
        self.host = f"{parts.scheme}://{parts.netloc}"
        """The host, as messages name it."""
        self._client: Any = None
        self._closer: weakref.finalize | None = None

    # -- the SDK client ------------------------------------------------------------------------

    def client(self) -> Any:
        """The SDK's client, built once (importing the SDK); closed with this object."""
        if self._client is None:
            try:
                self._client = _new_client(self.url, self.key, self.workspace, self.timeout_s)
            except ImportError:
                raise ConnectorError(
                    "the langsmith SDK is not installed", fix="pip install 'hilbot[langsmith]'"
                ) from None
            except Exception as exc:  # the SDK checks its own environment as it starts
                raise ConnectorError(
                    f"cannot set up the LangSmith client for {self.host}: {_short(exc)}",
                    fix=f"check {ENDPOINT} and {KEY}",
                ) from None
            self._closer = weakref.finalize(self, _close_client, self._client)
        return self._client

    def close(self) -> None:
        """Close the client's connections (and drop the SDK's exit hook that pins them)."""
        if self._closer is not None:
            self._closer()

    # -- the calls -----------------------------------------------------------------------------

    def get(self, path: str, params: Mapping[str, Any] | None, what: str, missing: str) -> Json:
        """``GET`` a documented path: its JSON (a 404: ``what`` not found, ``missing`` the fix)."""
        response = self._call(
            lambda: _request(self.client(), "GET", path, params=dict(params or {})), what, missing
        )
        return self._json(response, what)

    def find(self, path: str, params: Mapping[str, Any] | None, what: str) -> Json | None:
        """``GET`` a documented path: its JSON, or None when it is not there (404)."""
        response = self._call(
            lambda: _request(self.client(), "GET", path, params=dict(params or {})),
            what,
            "",
            absent_ok=True,
        )
        return None if response is None else self._json(response, what)

    def post(self, path: str, body: Mapping[str, Any], what: str, missing: str) -> Json:
        """``POST`` JSON to a documented path: the JSON answer."""
        data = json.dumps(body).encode()
        response = self._call(
            lambda: _request(self.client(), "POST", path, data=data), what, missing
        )
        return self._json(response, what)

    def delete(self, path: str, what: str) -> bool:
        """``DELETE`` a documented path: True when done, False when it was not there (404)."""
        return (
            self._call(lambda: _request(self.client(), "DELETE", path), what, "", absent_ok=True)
            is not None
        )

    def read_feedback(self, feedback_id: str) -> dict[str, Any] | None:
        """``GET /feedback/{id}``: the feedback, or None when there is none with that id."""
        what = f"feedback {feedback_id}"
        response = self._call(
            lambda: _request(self.client(), "GET", f"/feedback/{segment(feedback_id)}"),
            what,
            "",
            absent_ok=True,
        )
        if response is None:
            return None
        found = self._json(response, what)
        return found if isinstance(found, dict) else self._bad(what, "not a JSON object")

    def create_feedback(self, fields: Mapping[str, Any], what: str, missing: str) -> bool:
        """One synchronous ``POST /feedback``; False when that id exists already (409)."""
        try:
            _create_feedback(self.client(), fields)
        except ConnectorError:
            raise
        except Exception as exc:
            if _status(exc)[0] == 409:
                return False
            raise self.failure(exc, what, missing) from None
        return True

    def update_feedback(self, feedback_id: str, fields: Mapping[str, Any]) -> None:
        """``PATCH /feedback/{id}`` with these fields (score, value, comment, correction)."""
        missing = "it was deleted meanwhile; push again to create it"
        self._call(
            lambda: _update_feedback(self.client(), feedback_id, fields),
            f"feedback {feedback_id}",
            missing,
        )

    # -- failures ------------------------------------------------------------------------------

    def _call(
        self, call: Callable[[], Any], what: str, missing: str, absent_ok: bool = False
    ) -> Any:
        """Make one call; a failure is a :class:`ConnectorError` (a 404 None with ``absent_ok``)."""
        try:
            return call()
        except ConnectorError:
            raise
        except Exception as exc:
            if absent_ok and _status(exc)[0] == 404:
                return None
            raise self.failure(exc, what, missing) from None

    def _json(self, response: Any, what: str) -> Json:
        try:
            return response.json()
        except Exception:
            return self._bad(what, "not JSON")

    def _bad(self, what: str, why: str) -> NoReturn:
        raise ConnectorError(
            f"LangSmith at {self.host} answered {what} with a bad response ({why})",
            fix=f"check that {ENDPOINT} points at a LangSmith API",
        )

    def failure(self, exc: BaseException, what: str, missing: str) -> ConnectorError:
        """The one-line error for an SDK or HTTP failure on ``what``."""
        status, headers, detail = _status(exc)
        if status is None:
            return self._no_answer(exc, what, missing)
        said = f": {detail}" if detail else ""
        if status == 401:
            return ConnectorError(
                f"LangSmith at {self.host} refused the API key (401)",
                fix=f"check {KEY}: a key of this LangSmith instance (Settings → API Keys)",
            )
        if status == 403:
            return ConnectorError(
                f"LangSmith at {self.host} forbids access to {what} (403){said}",
                fix=f"use a {KEY} with access to it; an org-scoped key also needs {WORKSPACE}",
            )
        if status == 404:
            return ConnectorError(f"{what} not found at {self.host}", fix=missing or None)
        if status == 429:
            return ConnectorError(
                f"LangSmith at {self.host} is rate limiting (429)",
                fix="hilbot waits and tries again",
                retry_after=_retry_after(headers),
            )
        if status == 408 or status >= 500:
            return ConnectorError(
                f"LangSmith at {self.host} failed on {what} ({status}){said}",
                fix="try again later",
                transient=True,
            )
        return ConnectorError(
            f"LangSmith at {self.host} refused {what} ({status}){said}",
            fix="see the reason; this label is not retried until it changes",
        )

    def _no_answer(self, exc: BaseException, what: str, missing: str) -> ConnectorError:
        import requests
        from langsmith import utils as ls_utils

        if isinstance(exc, ls_utils.LangSmithNotFoundError):
            return ConnectorError(f"{what} not found at {self.host}", fix=missing or None)
        if isinstance(exc, (requests.Timeout, ls_utils.LangSmithRequestTimeout)):
            return ConnectorError(
                f"LangSmith at {self.host} did not answer in {self.timeout_s:g} s",
                fix="try again later (or raise timeout_s)",
                transient=True,
            )
        if isinstance(exc, (requests.ConnectionError, ls_utils.LangSmithConnectionError)):
            return ConnectorError(
                f"cannot reach LangSmith at {self.host}",
                fix=f"check {ENDPOINT} and the network",
                transient=True,
            )
        if isinstance(exc, ls_utils.LangSmithUserError):
            return ConnectorError(
                f"LangSmith client refused {what}: {_short(exc)}",
                fix=f"check {KEY}, {ENDPOINT} and {WORKSPACE}",
            )
        if isinstance(exc, (ValueError, TypeError, KeyError)):
            return ConnectorError(
                f"LangSmith at {self.host} answered {what} with a bad response",
                fix=f"check that {ENDPOINT} points at a LangSmith API",
            )
        return ConnectorError(
            f"LangSmith at {self.host} failed on {what}: {_short(exc)}",
            fix="try again later",
            transient=True,
        )


# ---------------------------------------------------------------------------------------------
# The SDK calls themselves, one function each.


def _new_client(url: str, key: str, workspace: str, timeout_s: float) -> Any:
    import langsmith
    from langsmith import schemas
    from urllib3.util.retry import Retry

    # create_feedback logs every failure with a traceback before raising it; hilbot reports it.
    logging.getLogger("langsmith.client").setLevel(logging.CRITICAL)
    read_ms = max(1, int(timeout_s * 1000))
    wanted: dict[str, Any] = {
        "api_url": url,
        "api_key": key,
        "workspace_id": workspace,
        "retry_config": Retry(total=0, read=False, raise_on_status=False, raise_on_redirect=False),
        "timeout_ms": (min(read_ms, 10_000), read_ms),
        "auto_batch_tracing": False,
        "info": schemas.LangSmithInfo(),
        "tracing_sampling_rate": 1.0,
        "tracing_mode": "langsmith",
        "disable_prompt_cache": True,
    }
    accepted = inspect.signature(langsmith.Client).parameters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return langsmith.Client(**{k: v for k, v in wanted.items() if k in accepted})


def _close_client(client: Any) -> None:
    try:
        client.close(timeout=0)
    except Exception:  # an older SDK without close(): its session at least
        try:
            client.session.close()
        except Exception:
            pass


def _request(client: Any, method: str, path: str, **kwargs: Any) -> Any:
    return client.request_with_retries(method, path, stop_after_attempt=1, **kwargs)


def _create_feedback(client: Any, fields: Mapping[str, Any]) -> None:
    with warnings.catch_warnings():  # a run without session_id is a deprecation warning
        warnings.simplefilter("ignore")
        client.create_feedback(**fields, feedback_source_type="api", stop_after_attempt=1)


def _update_feedback(client: Any, feedback_id: str, fields: Mapping[str, Any]) -> None:
    client.update_feedback(feedback_id, **fields)


# ---------------------------------------------------------------------------------------------
# Reading a failure.


def _status(exc: BaseException) -> tuple[int | None, Mapping[str, str], str]:
    """The HTTP status, headers and reason behind an SDK exception (None when there was no answer).

    The SDK raises its own errors inside ``except requests.HTTPError``, so the answer is on the
    exception's context.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        response = getattr(current, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            return status, getattr(response, "headers", None) or {}, _detail(response)
        current = current.__cause__ or current.__context__
    return None, {}, ""


def _detail(response: Any) -> str:
    """The reason an error answer gives (its ``detail``), shortened."""
    try:
        body = response.json()
    except Exception:
        body = getattr(response, "text", "") or ""
    if isinstance(body, dict):
        body = body.get("detail", body.get("error", body.get("message", body)))
    text = body if isinstance(body, str) else json.dumps(body, default=str)
    return _short(text)


def _short(value: Any, limit: int = 200) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _retry_after(headers: Mapping[str, str]) -> float:
    """The wait a 429 asks for: ``Retry-After`` seconds or date (1 s when it gives none)."""
    raw = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    if raw is None:
        return 1.0
    try:
        seconds = float(raw)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(raw).timestamp() - time.time()
        except (TypeError, ValueError, IndexError):
            return 1.0
    return max(0.0, seconds) if math.isfinite(seconds) else 1.0
