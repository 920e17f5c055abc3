"""Starting a Slack bot: the tokens, the Web API client, and every refusal at start-up as one line.

Tokens come only from the environment (``SLACK_BOT_TOKEN``, ``SLACK_APP_TOKEN`` in Socket Mode,
``SLACK_SIGNING_SECRET`` in HTTP mode). A missing or malformed token, a token Slack rejects
(``auth.test``), an unreachable Web API or a busy port is one :class:`HilbotError` saying what
to do, with no token in it. Every client is a :class:`ScrubbingWebClient`: whatever the bot sends
Slack passes the scrubber on its way out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from evaluation import HilbotConfig, HilbotError
from evaluation.scrub import hold, scrub, scrub_values
from evaluation.text import visible

from .port import error_code

SCOPES = ("chat:write", "commands", "im:write", "im:history", "files:write")
"""The bot token scopes the app needs (see the app manifest in docs/slack.md)."""
_TOKEN_FIX = {
    "SLACK_BOT_TOKEN": "export SLACK_BOT_TOKEN=<the Bot User OAuth Token (xoxb-…) from your app's "
    "OAuth & Permissions page>",
    "SLACK_APP_TOKEN": "export SLACK_APP_TOKEN=<an app-level token (xapp-…) with "
    "connections:write, from Basic Information>",
    "SLACK_SIGNING_SECRET": "export SLACK_SIGNING_SECRET=<the Signing Secret from your app's Basic "
    "Information page>",
}
_PREFIX = {"SLACK_BOT_TOKEN": "xoxb-", "SLACK_APP_TOKEN": "xapp-"}


@dataclass(frozen=True)
class Secrets:
    """What the bot authenticates with; only ever read from the environment."""

    bot_token: str
    app_token: str | None = None
    signing_secret: str | None = None

    def __repr__(self) -> str:
        return "Secrets([secret])"


def _env(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise HilbotError(f"{name} is not set", fix=_TOKEN_FIX[name])
    prefix = _PREFIX.get(name)
    if prefix and not value.startswith(prefix):
        kind = "a bot" if prefix == "xoxb-" else "an app-level"
        raise HilbotError(
            f"{name} does not look like {kind} token (it should start with {prefix})",
            fix=_TOKEN_FIX[name],
        )
    return value


def secrets(config: HilbotConfig) -> Secrets:
    """The tokens the configured mode needs, from the environment."""
    bot = _env("SLACK_BOT_TOKEN")
    if config.slack.mode == "socket":
        return Secrets(bot, app_token=_env("SLACK_APP_TOKEN"))
    return Secrets(bot, signing_secret=_env("SLACK_SIGNING_SECRET"))


def bot_token() -> str:
    """``SLACK_BOT_TOKEN`` alone (posting a digest needs nothing else)."""
    return _env("SLACK_BOT_TOKEN")


def api_url(config: HilbotConfig) -> str:
    """The Web API base URL: ``SLACK_API_URL``, else ``[slack] api_url`` (with the trailing slash
    slack_sdk wants)."""
    url = (os.environ.get("SLACK_API_URL") or config.slack.api_url).strip()
    return url if url.endswith("/") else url + "/"


def _proxy(url: str) -> str | None:
    """The proxy for ``url`` from the environment, honouring ``no_proxy`` (which slack_sdk alone
    ignores)."""
    host = urlsplit(url).hostname or ""
    if proxy_bypass(host):
        return None
    proxies = getproxies()
    return proxies.get(urlsplit(url).scheme) or proxies.get("https") or None


CREDENTIALS = frozenset({"token", "client_secret"})
"""Parameters whose value is a secret the call must carry: never scrubbed."""


class ScrubbingWebClient(AsyncWebClient):
    """slack_sdk's client, every text of every Web API call scrubbed of secrets on its way out.

    Every method (``chat.postMessage``, ``chat.update``, ``chat.postEphemeral``, ``views.*``, the
    file upload's ``files.completeUploadExternal``…) goes through :meth:`api_call`: this is where
    every message, modal, App Home and file title the bot sends passes.
    """

    async def api_call(
        self,
        api_method: str,
        *,
        http_verb: str = "POST",
        files: dict | None = None,
        data: Any = None,
        params: dict | None = None,
        json: dict | None = None,
        headers: dict | None = None,
        auth: dict | None = None,
    ) -> Any:
        return await super().api_call(
            api_method,
            http_verb=http_verb,
            files=files,
            headers=headers,
            auth=auth,
            data=scrub_values(data, CREDENTIALS),
            params=scrub_values(params, CREDENTIALS),
            json=scrub_values(json, CREDENTIALS),
        )


def web_client(
    token: str | None, url: str, *, timeout: float, retries: int, connections: int = 100
) -> AsyncWebClient:
    """A :class:`ScrubbingWebClient` on one pooled aiohttp session; 429s and dropped connections
    retried by slack_sdk. Its token is a secret from now on, however it came."""
    hold(token)
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=connections), trust_env=False
    )
    retry = [
        AsyncRateLimitErrorRetryHandler(max_retry_count=retries),
        AsyncConnectionErrorRetryHandler(max_retry_count=2),
    ]
    client = ScrubbingWebClient(
        token=token,
        base_url=url,
        timeout=int(max(1, timeout)),
        session=session,
        retry_handlers=retry,
    )
    client.proxy = _proxy(url)
    return client


async def close_client(client: AsyncWebClient) -> None:
    """Close a :func:`web_client`'s pooled session."""
    assert client.session is not None  # web_client always gives it one
    await client.session.close()


def shown(url: str) -> str:
    """A URL as an error names it: no user or password, one visible line."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return visible(parts._replace(netloc=netloc).geturl(), newlines=False)[:200]


def refusal(exc: BaseException, what: str, url: str) -> HilbotError:
    """A failed start-up call as one line: what Slack said (scrubbed) and what to do."""
    where = shown(url)
    if isinstance(exc, SlackApiError):
        code = visible(scrub(error_code(exc)), newlines=False)[:100]
        if code in (
            "invalid_auth",
            "not_authed",
            "account_inactive",
            "token_revoked",
            "token_expired",
        ):
            name = "SLACK_APP_TOKEN" if what == "apps.connections.open" else "SLACK_BOT_TOKEN"
            return HilbotError(
                f"Slack rejected {name} ({what}: {code})", where=where, fix=_TOKEN_FIX[name]
            )
        if code == "not_allowed_token_type":
            return HilbotError(
                f"Slack refused {what}: the token is of the wrong type",
                where=where,
                fix="SLACK_APP_TOKEN must be an app-level token (xapp-…) with connections:write",
            )
        return HilbotError(
            f"Slack refused {what} ({code})",
            where=where,
            fix="check the app's set-up (scopes, Socket Mode) against docs/slack.md, "
            "and SLACK_API_URL",
        )
    said = visible(scrub(f"{type(exc).__name__}: {exc}"), newlines=False)[:200]
    return HilbotError(
        f"cannot reach the Slack Web API ({said})",
        where=where,
        fix="check the network, and SLACK_API_URL or [slack] api_url",
    )


async def check(client: AsyncWebClient, url: str) -> dict[str, Any]:
    """``auth.test``: who the bot is; any refusal or failure is one error that says what to do."""
    try:
        answer = await client.auth_test()
    except Exception as exc:  # noqa: BLE001 — every failure becomes the one line
        raise refusal(exc, "auth.test", url) from None
    return dict(answer.data) if isinstance(answer.data, dict) else {}


__all__ = [
    "SCOPES",
    "ScrubbingWebClient",
    "Secrets",
    "api_url",
    "bot_token",
    "check",
    "close_client",
    "refusal",
    "secrets",
    "shown",
    "web_client",
]
