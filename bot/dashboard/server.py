"""``hilbot dashboard``: the pages served live from the data dir, read-only (aiohttp).

- **Bound to 127.0.0.1** by default. Any other address needs a token (``--token``: the value of
  ``HILBOT_DASHBOARD_TOKEN``), checked on every request: ``?token=`` once (it becomes an HttpOnly,
  SameSite=Strict cookie and the URL is cleaned), then the cookie or an ``Authorization: Bearer``
  header. On loopback the ``Host`` header must name loopback too, so a web page elsewhere cannot
  reach the dashboard by rebinding a domain name to 127.0.0.1.
- **Read-only**: only GET and HEAD; nothing is written anywhere.
- **Every response** carries a Content-Security-Policy that allows hilbot's own script, styles and
  requests only, no framing, no referrer, no sniffing, no caching; every text is scrubbed of
  secrets.
- **Live**: the page polls ``/api/version`` (a hash of the logs' sizes, times and inodes) each
  second and fetches itself again when it changed; pages are built in a worker thread, one at a
  time, from the data kept until the logs change (:class:`bot.dashboard.data.DataCache`).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from aiohttp import web

from evaluation.errors import HilbotError
from evaluation.scrub import scrub

from .errors import DashboardError
from .html import CSP_LIVE, STATIC, static_text

if TYPE_CHECKING:
    from evaluation import HilbotConfig, Store

    from .data import DataCache

_log = logging.getLogger("hilbot.dashboard")
TOKEN_VARIABLE = "HILBOT_DASHBOARD_TOKEN"
"""The environment variable holding the token (never a command-line value: ``ps`` shows those)."""
MIN_TOKEN = 16
"""Characters a token needs at least."""
COOKIE = "hilbot_dashboard"
"""The cookie that carries the token after the first request."""
HEADERS = {
    "Content-Security-Policy": CSP_LIVE,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
"""Headers on every response."""
_TYPES = {".css": "text/css", ".js": "text/javascript"}


@dataclass(frozen=True)
class Settings:
    """Where the dashboard listens and whether it asks for a token."""

    host: str = "127.0.0.1"
    """The address to bind."""
    port: int = 8765
    """The port (0: any free one)."""
    token: str | None = None
    """The token every request must carry, or None (loopback only)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def settings(host: str, port: int, token: bool) -> Settings:
    """The settings for ``--host``, ``--port`` and ``--token``; a non-loopback host without a token,
    or a token asked for but not set, is a :class:`DashboardError`."""
    if not 0 <= port <= 65535:
        raise DashboardError(
            f"port {port} is not a port", fix="give --port 1–65535 (0: any free one)"
        )
    value = os.environ.get(TOKEN_VARIABLE, "") if token else ""
    if token and len(value) < MIN_TOKEN:
        raise DashboardError(
            f"--token needs {TOKEN_VARIABLE} set to at least {MIN_TOKEN} characters",
            fix=f'export {TOKEN_VARIABLE}="$(python3 -c "import secrets; '
            'print(secrets.token_urlsafe(24))")"',
        )
    if not is_loopback(host) and not token:
        raise DashboardError(
            f"--host {host} would show the ratings to anyone who can reach it",
            fix=f"add --token (with {TOKEN_VARIABLE} set), or leave out --host to stay on "
            "127.0.0.1",
        )
    return Settings(host, port, value or None)


def _host_ok(request: "web.Request", setting: Settings) -> bool:
    if setting.token is not None:
        return True
    name = request.host.rsplit(":", 1)[0] if not request.host.endswith("]") else request.host
    return is_loopback(name)


def _token_ok(request: "web.Request", token: str) -> bool:
    offered = [request.cookies.get(COOKIE, ""), request.query.get("token", "")]
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        offered.append(header[len("Bearer "):])
    return any(hmac.compare_digest(o.encode(), token.encode()) for o in offered if o)


def _guard(setting: Settings) -> Callable[..., Awaitable[Any]]:
    @web.middleware
    async def guard(request: "web.Request", handler: Callable[..., Awaitable[Any]]) -> Any:
        if request.method not in ("GET", "HEAD"):
            response: Any = web.Response(status=405, text="the dashboard is read-only\n")
        elif not _host_ok(request, setting):
            response = web.Response(status=421, text="open the dashboard at 127.0.0.1\n")
        elif setting.token is not None and not _token_ok(request, setting.token):
            response = web.Response(status=401, text="add ?token=… (HILBOT_DASHBOARD_TOKEN)\n")
        elif setting.token is not None and "token" in request.query:
            kept = {k: v for k, v in request.query.items() if k != "token"}
            clean = request.rel_url.with_query(kept)
            response = web.Response(status=303, headers={"Location": str(clean)})
            response.set_cookie(COOKIE, setting.token, httponly=True, samesite="Strict",
                                path="/")
        else:
            try:
                response = await handler(request)
            except web.HTTPException as exc:  # a 404: answered as plain text, with the headers
                response = web.Response(status=exc.status, text=exc.text or exc.reason)
        response.headers.update(HEADERS)
        return response

    return guard


KEPT_PAGES = 64
"""Pages kept built while the logs do not change (the oldest dropped first)."""


class Pages:
    """The request handlers: pages, static files, the version and the reports' JSON.

    A page built is kept until the logs change (:data:`KEPT_PAGES` of them), so a reload, or a
    second reader, costs nothing."""

    def __init__(self, cache: "DataCache") -> None:
        self.cache = cache
        self._lock = threading.Lock()
        self._data: Any = None
        self._built: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}

    def _html(self, name: str, query: dict[str, str]) -> str:
        from .data import version
        from .document import live_page

        key = (name, tuple(sorted(query.items())))
        with self._lock:
            data = self.cache.get()
            if data is not self._data:
                self._data, self._built = data, {}
            if key not in self._built:
                if len(self._built) >= KEPT_PAGES:
                    self._built.pop(next(iter(self._built)))
                self._built[key] = live_page(data, name, query, version(data.state))
            return self._built[key]

    def warm(self) -> None:
        """Build the overview now (at start), so the first request is answered from it; a failure
        here is left to that request to report."""
        try:
            self._html("overview", {})
        except Exception:  # noqa: BLE001 - the request that asks for the page reports it
            pass

    async def page(self, request: "web.Request") -> "web.Response":
        """``/`` (the overview), ``/NAME`` and ``/run/RUN``."""
        from evaluation.registry import UnknownName

        from .page import pages

        name = request.match_info.get("name", "overview")
        query = {k: v for k, v in request.query.items() if k != "token"}
        if "run" in request.match_info:
            name, query["run"] = "run", request.match_info["run"]
        if name not in pages:
            raise web.HTTPNotFound(text=f"no page {name!r}\n")
        loop = asyncio.get_running_loop()
        try:
            html = await loop.run_in_executor(None, self._html, name, query)
        except UnknownName as exc:
            raise web.HTTPNotFound(text=scrub(str(exc)) + "\n") from None
        except HilbotError as exc:  # an unreadable log, say: its one line, on the page and stderr
            _log.error("%s: %s", request.path, exc)
            raise web.HTTPServiceUnavailable(text=f"{exc}\n") from None
        return web.Response(text=html, content_type="text/html", charset="utf-8")

    async def static(self, request: "web.Request") -> "web.Response":
        """``/static/dashboard.css`` and ``/static/dashboard.js``."""
        file = request.match_info["file"]
        if file not in STATIC:
            raise web.HTTPNotFound(text="no such file\n")
        kind = _TYPES[os.path.splitext(file)[1]]
        return web.Response(text=static_text(file), content_type=kind, charset="utf-8")

    async def version(self, request: "web.Request") -> "web.Response":
        """``/api/version``: changes whenever a log or run file changes."""
        return web.json_response({"version": self.cache.version()})

    async def analysis(self, request: "web.Request") -> "web.Response":
        """``/api/NAME.json``: the report the charts of a page come from, as
        ``hilbot analyze NAME --format json`` prints it."""
        from .data import READ_ONLY

        name = request.match_info["analysis"]
        if name not in READ_ONLY:
            raise web.HTTPNotFound(text=f"no report {name!r}\n")
        loop = asyncio.get_running_loop()
        report = await loop.run_in_executor(None, self._report, name)
        body = {"error": report.error} if report.document is None else report.document
        return web.Response(text=scrub(json.dumps(body, ensure_ascii=False)),
                            content_type="application/json", status=200)

    def _report(self, name: str) -> Any:
        with self._lock:
            return self.cache.get().report(name)


PAGES = web.AppKey("pages", Pages)
"""Where the application keeps its :class:`Pages`."""


def application(store: "Store", config: "HilbotConfig", setting: Settings) -> "web.Application":
    """The aiohttp application (not started)."""
    from .data import DataCache

    handlers = Pages(DataCache(store, config))
    app = web.Application(middlewares=[_guard(setting)])
    app[PAGES] = handlers
    app.router.add_get("/", handlers.page)
    app.router.add_get("/static/{file}", handlers.static)
    app.router.add_get("/api/version", handlers.version)
    app.router.add_get("/api/{analysis}.json", handlers.analysis)
    app.router.add_get("/run/{run}", handlers.page)
    app.router.add_get("/{name}", handlers.page)
    return app


async def serve(
    store: "Store",
    config: "HilbotConfig",
    setting: Settings,
    ready: Callable[[str], None] | None = None,
    stop: "asyncio.Event | None" = None,
) -> None:
    """Serve until ``stop`` is set (or forever); ``ready`` gets the URL once listening."""
    runner = web.AppRunner(application(store, config, setting), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, setting.host, setting.port)
        try:
            await site.start()
        except OSError as exc:
            raise DashboardError(
                f"cannot listen on {setting.host}:{setting.port}: {exc.strerror or exc}",
                fix="choose another --port (0: any free one)",
            ) from None
        port = runner.addresses[0][1] if runner.addresses else setting.port
        shown = f"[{setting.host}]" if ":" in setting.host else setting.host
        warming = asyncio.get_running_loop().run_in_executor(
            None, runner.app[PAGES].warm
        )  # the overview built while the user opens it: the first request finds it ready
        if ready is not None:
            ready(f"http://{shown}:{port}/")
        await (stop.wait() if stop is not None else asyncio.Event().wait())
        await warming
    finally:
        await runner.cleanup()


def run_dashboard(
    store: "Store",
    config: "HilbotConfig",
    echo: Callable[[str], None],
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: bool = False,
) -> None:
    """``hilbot dashboard``: the options checked (:func:`settings`), then serve until stopped,
    saying where once listening."""
    setting = settings(host, port, token)

    def ready(url: str) -> None:
        shown = url + ("?token=$" + TOKEN_VARIABLE if setting.token else "")
        echo(f"hilbot dashboard of {store.root}, read-only: open {shown}  (Ctrl-C stops it)")

    asyncio.run(serve(store, config, setting, ready))


__all__ = ["COOKIE", "HEADERS", "KEPT_PAGES", "MIN_TOKEN", "TOKEN_VARIABLE", "Pages", "Settings",
           "application", "is_loopback", "run_dashboard", "serve", "settings"]
