"""``hilbot dashboard``'s server: read-only, loopback or token, strict headers, live version,
the reports' JSON as ``analyze --format json`` prints it, and every hostile text escaped."""

from __future__ import annotations

import json
import re

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.dashboard.errors import DashboardError
from bot.dashboard.server import COOKIE, TOKEN_VARIABLE, Settings, application, settings
from evaluation import Store, load_config
from tests.bot.dashboard.hostile import IMAGE, REVIEWER, RUN, SCRIPT, hostile_store

TOKEN = "t" * 12 + "0123456789abcdef"


async def _client(store: Store, setting: Settings = Settings()) -> TestClient:
    client = TestClient(TestServer(application(store, load_config(None), setting)))
    await client.start_server()
    return client


@pytest.fixture
async def demo(demo_panel: Store):
    client = await _client(demo_panel)
    yield client
    await client.close()


@pytest.fixture
def demo_panel(store: Store) -> Store:
    from bot.demo import build_demo

    build_demo(store, panel=True)
    return store


async def test_every_page_answers_with_the_strict_headers(demo: TestClient) -> None:
    for path in ("/", "/overview", "/run/demo-panel", "/static/dashboard.js",
                 "/static/dashboard.css", "/api/version", "/api/agreement.json"):
        response = await demo.get(path)
        assert response.status == 200, path
        csp = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp.split("style-src")[0]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "no-referrer"


async def test_the_dashboard_is_read_only_and_knows_its_pages(demo: TestClient) -> None:
    assert (await demo.post("/", data="x")).status == 405
    assert (await demo.get("/nothing-here")).status == 404
    assert (await demo.get("/static/../../etc/passwd")).status == 404
    assert (await demo.get("/api/synthesize.json")).status == 404  # it would append a record


async def test_a_report_is_the_json_analyze_prints(demo_panel: Store, run_cli) -> None:
    client = await _client(demo_panel)
    try:
        served = await (await client.get("/api/agreement.json")).json()
    finally:
        await client.close()
    printed = run_cli("analyze", "agreement", "--format", "json")
    assert printed.exit_code == 0
    assert served == json.loads(printed.stdout)


async def test_the_version_changes_when_a_rating_is_appended(demo_panel: Store) -> None:
    client = await _client(demo_panel)
    try:
        first = (await (await client.get("/api/version")).json())["version"]
        assert (await (await client.get("/api/version")).json())["version"] == first
        page = await (await client.get("/run/demo-panel")).text()
        assert "demo:zoe" not in page
        with open(demo_panel.ratings.path, "a", encoding="utf-8") as log:
            log.write(json.dumps({
                "v": 1, "type": "rating", "run_id": "demo-panel", "item_id": "q02",
                "dimension": "overall", "reviewer": {"platform": "demo", "id": "zoe"},
                "channel": "demo", "idempotency_key": "zoe:q02", "action": "rate:poor",
                "timestamp": "2026-11-22T10:00:00Z", "judgment": "poor", "score": 0.4,
                "ai_verdict_shown": False}) + "\n")
        assert (await (await client.get("/api/version")).json())["version"] != first
        assert "demo:zoe" in await (await client.get("/run/demo-panel")).text()
    finally:
        await client.close()


async def test_loopback_only_answers_a_loopback_host_header(demo: TestClient) -> None:
    rebound = await demo.get("/", headers={"Host": "attacker.example:8765"})
    assert rebound.status == 421
    assert (await demo.get("/", headers={"Host": "localhost:8765"})).status == 200


def test_another_host_needs_a_token_from_the_environment(monkeypatch) -> None:
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)
    with pytest.raises(DashboardError, match="--token"):
        settings("0.0.0.0", 8765, token=False)
    with pytest.raises(DashboardError, match=TOKEN_VARIABLE):
        settings("0.0.0.0", 8765, token=True)
    monkeypatch.setenv(TOKEN_VARIABLE, "short")
    with pytest.raises(DashboardError, match="at least 16"):
        settings("0.0.0.0", 8765, token=True)
    monkeypatch.setenv(TOKEN_VARIABLE, TOKEN)
    assert settings("0.0.0.0", 8765, token=True).token == TOKEN
    assert settings("127.0.0.1", 8765, token=False).token is None


async def test_the_token_is_checked_on_every_request(demo_panel: Store) -> None:
    client = await _client(demo_panel, Settings("0.0.0.0", 0, TOKEN))
    try:
        for path in ("/", "/api/version", "/static/dashboard.js", "/api/agreement.json"):
            assert (await client.get(path)).status == 401, path
        assert (await client.get("/?token=wrong")).status == 401
        first = await client.get(f"/run/demo-panel?token={TOKEN}&sort=ai", allow_redirects=False)
        assert first.status == 303
        assert TOKEN not in first.headers["Location"] and "sort=ai" in first.headers["Location"]
        assert first.cookies[COOKIE]["httponly"] and first.cookies[COOKIE]["samesite"] == "Strict"
        assert (await client.get("/", cookies={COOKIE: TOKEN})).status == 200
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert (await client.get("/api/version", headers=bearer)).status == 200
    finally:
        await client.close()


async def test_no_secret_reaches_a_page(demo_panel: Store, monkeypatch) -> None:
    secret = "sk-ant-" + "s3cr3t" * 6
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    with open(demo_panel.ratings.path, "a", encoding="utf-8") as log:
        log.write(json.dumps({
            "v": 1, "type": "rating", "run_id": "demo-panel", "item_id": "q03",
            "dimension": "overall", "reviewer": {"platform": "demo", "id": "leaky"},
            "channel": "demo", "idempotency_key": "leak", "action": "rate:good",
            "timestamp": "2026-11-22T10:00:00Z", "judgment": "good", "score": 1.0,
            "note": f"my key is {secret}", "ai_verdict_shown": False}) + "\n")
    client = await _client(demo_panel)
    try:
        page = await (await client.get("/run/demo-panel")).text()
        assert "demo:leaky" in page and "my key is" in page
        assert secret not in page and "s3cr3t" not in page
    finally:
        await client.close()


async def test_hostile_text_is_escaped_everywhere(tmp_path) -> None:
    store = hostile_store(tmp_path / "results")
    client = await _client(store)
    try:
        for path in ("/", f"/run/{RUN}", f"/run/{RUN}?sort=disagreement", "/agreement",
                     "/calibration", "/patterns", "/reviewers", "/triage"):
            response = await client.get(path)
            assert response.status == 200, path
            page = await response.text()
            assert SCRIPT not in page and IMAGE not in page, path
            assert "javascript:" not in re.sub(r"<(?!a )[^>]*>", "", page).split('href="')[0]
            assert not re.search(r'href="\s*javascript:', page), path
            assert "\x07" not in page and "\x1b" not in page, path
        run_page = await (await client.get(f"/run/{RUN}")).text()
        assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in run_page
        assert "evil&lt;script&gt;" in run_page or REVIEWER not in run_page
    finally:
        await client.close()


def test_the_command_refuses_another_host_without_a_token_in_one_line(run_cli, monkeypatch):
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)
    result = run_cli("dashboard", "--host", "0.0.0.0")
    assert result.exit_code == 2 and "--token" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    result = run_cli("dashboard", "--port", "70000")
    assert result.exit_code == 2 and "--port" in result.stderr


async def test_an_unreadable_log_is_one_line_not_a_traceback(demo_panel: Store) -> None:
    demo_panel.ratings.path.unlink()
    demo_panel.ratings.path.mkdir()  # a directory where the log should be
    client = await _client(demo_panel)
    try:
        response = await client.get("/")
        text = await response.text()
        assert response.status == 503 and "directory" in text
        assert len(text.strip().splitlines()) == 1 and "Traceback" not in text
        assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")
    finally:
        await client.close()


def test_a_port_in_use_is_one_line(run_cli) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("dashboard", "--port", str(port))
    assert result.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
