"""The browser and the dashboards the browser tests open.

* **One browser per session**: Debian's Chromium (``/usr/bin/chromium``) driven by Playwright's
  sync API; Playwright's own browsers are never downloaded. Each test gets a fresh context (no
  cookies, no cache, no focus left over) and a :class:`Tab` that records the page's console
  errors, uncaught exceptions, dialogs and every request it makes.
* **One dashboard per data set and module**: ``hilbot dashboard --port 0`` in a subprocess over a
  data dir under pytest's tmp dir (the demo with its panel, a generated log of ~3000 lines, the
  hostile data dir), its URL read from the line it prints, stopped with SIGTERM at the end.

The network guard of ``tests/conftest.py`` (``_offline``) stays on: the Playwright driver talks to
its node process over pipes, the browser is a separate process, and the dashboards listen on
127.0.0.1, so nothing the guard refuses is ever used by the test process. The subprocesses this
file starts get the environment without :data:`tests.auxil.network.CREDENTIALS` (a module-scoped
fixture runs before the function-scoped guard has scrubbed them).
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Iterator

import pytest

from tests.auxil.network import CREDENTIALS

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        ConsoleMessage,
        Dialog,
        Page,
        Request,
        Response,
        ViewportSize,
    )

ROOT = Path(__file__).resolve().parents[2]
"""The repository."""
HILBOT = Path(sys.executable).parent / "hilbot"
"""The installed console script (the venv's)."""
CHROMIUM = Path("/usr/bin/chromium")
"""Debian's Chromium: the only browser the tests use."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Headless, and nothing that would call home (updates, sync, background fetches)."""
ARTIFACTS = ROOT / "test-artifacts" / "browser"
"""Where the screenshots go (ignored by git)."""
START_SECONDS = 20.0
"""How long a dashboard may take to say where it listens."""
VIEWPORT: ViewportSize = {"width": 1280, "height": 900}
"""Every context's window."""
_URL = re.compile(r"open (http://\S+/)")


def clean_environment(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment for a ``hilbot`` subprocess over ``data_dir``: this one without any real
    credential or service endpoint, plain output, and ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIALS}
    return {**env, "HILBOT_DATA_DIR": str(data_dir), "NO_COLOR": "1", "TERM": "dumb", **extra}


# ------------------------------------------------------------------------------ the dashboard


@dataclass
class Dashboard:
    """A running ``hilbot dashboard``: its URL, data dir and process."""

    url: str
    """Where it listens, ``http://127.0.0.1:PORT/``."""
    data_dir: Path
    """The data dir it reads."""
    process: "subprocess.Popen[str]"
    """The ``hilbot dashboard`` process."""
    stderr: Path
    """The file its standard error goes to."""

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``: every request a page makes must start with it."""
        return self.url.rstrip("/")

    def json(self, name: str) -> Any:
        """``/api/NAME.json``: the report as ``hilbot analyze NAME --format json`` prints it."""
        with urllib.request.urlopen(f"{self.url}api/{name}.json", timeout=30) as response:
            return json.loads(response.read().decode("utf-8"))

    def runs(self) -> list[str]:
        """The run ids of the data dir, sorted."""
        return sorted(path.stem for path in (self.data_dir / "runs").glob("*.jsonl"))

    def log(self) -> str:
        """What the dashboard wrote to its standard error so far."""
        return self.stderr.read_text("utf-8", errors="replace")


def _first_line(stream: IO[str], timeout: float) -> str | None:
    """The first line of ``stream``, or None when none came within ``timeout`` seconds."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return None


def start_dashboard(data_dir: Path) -> Dashboard:
    """``hilbot dashboard --port 0`` over ``data_dir``, once it says where it listens."""
    stderr = data_dir.parent / f"{data_dir.name}-dashboard.stderr"
    with open(stderr, "w", encoding="utf-8") as err:
        process = subprocess.Popen(
            [str(HILBOT), "dashboard", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=data_dir.parent,  # no ./hilbot.toml of the repository's
            env=clean_environment(data_dir),
        )
    assert process.stdout is not None
    line = _first_line(process.stdout, START_SECONDS) or ""
    found = _URL.search(line)
    if found is None:
        _stop(process)
        pytest.fail(
            f"hilbot dashboard printed {line!r} within {START_SECONDS:.0f} s, not its URL; its "
            f"stderr:\n{stderr.read_text('utf-8', errors='replace')[-3000:]}",
            pytrace=False,
        )
    return Dashboard(found.group(1), data_dir, process, stderr)


def _stop(process: "subprocess.Popen[str]") -> None:
    """SIGTERM, then wait (SIGKILL after 10 s)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    if process.stdout is not None:
        process.stdout.close()


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's data dir, with its panel of reviewers (three runs)."""
    from bot.demo import build_demo
    from evaluation import Store

    root = tmp_path_factory.mktemp("demo") / "results"
    build_demo(Store(root), panel=True)
    return root


@pytest.fixture(scope="module")
def generated_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated log (:func:`analysis.synthetic.write_synthetic`): 3000 lines of ratings, skips
    and notes on three runs of 120 items by eight reviewers."""
    from analysis.synthetic import write_synthetic
    from evaluation import Store, load_config

    root = tmp_path_factory.mktemp("generated") / "results"
    write_synthetic(
        Store(root), ratings=3000, runs=3, items_per_run=120, reviewers=8, seed=7,
        config=load_config(None),
    )
    return root


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo plus a run, ratings, reviewers and tags full of script, markup and
    ``javascript:`` links (``tests/bot/dashboard/hostile.py``)."""
    from tests.bot.dashboard.hostile import hostile_store

    root = tmp_path_factory.mktemp("hostile") / "results"
    hostile_store(root)
    return root


def _serve(data_dir: Path) -> Iterator[Dashboard]:
    dashboard = start_dashboard(data_dir)
    try:
        yield dashboard
    finally:
        _stop(dashboard.process)


@pytest.fixture(scope="module")
def demo_server(demo_dir: Path) -> Iterator[Dashboard]:
    """The dashboard of the demo (nothing writes to its data dir)."""
    yield from _serve(demo_dir)


@pytest.fixture(scope="module")
def generated_server(generated_dir: Path) -> Iterator[Dashboard]:
    """The dashboard of the generated log."""
    yield from _serve(generated_dir)


@pytest.fixture(scope="module")
def hostile_server(hostile_dir: Path) -> Iterator[Dashboard]:
    """The dashboard of the hostile data dir."""
    yield from _serve(hostile_dir)


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[Dashboard]:
    """A dashboard of a demo data dir of this test's own (the test writes to it)."""
    from bot.demo import build_demo
    from evaluation import Store

    root = tmp_path / "results"
    build_demo(Store(root))
    yield from _serve(root)


# ------------------------------------------------------------------------------ the browser


@pytest.fixture(scope="session")
def browser() -> Iterator["Browser"]:
    """Debian's Chromium, headless, for the whole session."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail(
            f"no {CHROMIUM}: the browser tests need Debian's Chromium: "
            "run `apt-get install -y chromium`",
            pytrace=False,
        )
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Tab:
    """A page in a fresh context, and what it did: console errors and uncaught exceptions,
    dialogs (each dismissed) and the URL of every request."""

    page: "Page"
    """The Playwright page."""
    errors: list[str] = field(default_factory=list)
    """``console.error`` messages (a failed load, a CSP refusal) and uncaught exceptions."""
    dialogs: list[str] = field(default_factory=list)
    """Every alert, confirm or prompt the page opened."""
    requests: list[str] = field(default_factory=list)
    """Every URL the page requested (documents, styles, scripts, fetches)."""

    def __post_init__(self) -> None:
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        self.page.on("dialog", self._dialog)
        self.page.on("request", self._request)

    def _console(self, message: "ConsoleMessage") -> None:
        if message.type == "error":
            where = message.location.get("url", "") if message.location else ""
            self.errors.append(f"console.error: {message.text} ({where or 'no location'})")

    def _dialog(self, dialog: "Dialog") -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def _request(self, request: "Request") -> None:
        self.requests.append(request.url)

    def open(self, url: str) -> "Response":
        """Go to ``url`` and wait for its load event; the response must be 200."""
        response = self.page.goto(url, wait_until="load")
        assert response is not None, f"no response for {url}"
        assert response.status == 200, f"{url}: HTTP {response.status}"
        return response

    def screenshot(self, name: str) -> Path:
        """A full-page screenshot as ``test-artifacts/browser/NAME.png``."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def assert_no_errors(self) -> None:
        """No console error, no uncaught exception, no dialog so far."""
        assert not self.errors, "the page logged errors:\n" + "\n".join(self.errors)
        assert not self.dialogs, "the page opened dialogs:\n" + "\n".join(self.dialogs)

    def assert_only(self, origin: str) -> None:
        """Every request so far went to ``origin`` (``http://127.0.0.1:PORT`` or a file URL)."""
        assert self.requests, "the page made no request at all"
        elsewhere = [url for url in self.requests if not _within(url, origin)]
        assert not elsewhere, f"requests outside {origin}:\n" + "\n".join(elsewhere)


def _within(url: str, origin: str) -> bool:
    """Whether ``url`` is on ``origin``: the file itself for a ``file:`` URL, else any path of
    the server."""
    if origin.startswith("file:"):
        return url == origin
    return url.startswith(origin.rstrip("/") + "/")


@pytest.fixture
def tab(browser: "Browser") -> Iterator[Tab]:
    """A page in a new browser context (closed after the test)."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        yield Tab(context.new_page())
    finally:
        context.close()
