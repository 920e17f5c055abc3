"""``hilbot report --html FILE``: one self-contained file, small enough to post, with every page."""

from __future__ import annotations

import base64
import hashlib
import re
from html import unescape
from pathlib import Path

from bot.dashboard.html import static_text
from tests.bot.dashboard.hostile import IMAGE, SCRIPT, hostile_store

LIMIT = 2 * 1024 * 1024
"""The report of the demo data posts in a chat: at most 2 MB."""


def test_the_report_holds_every_page_and_needs_nothing_else(demo_store, run_cli, tmp_path):
    from bot.demo import build_demo

    build_demo(demo_store, panel=True)
    target = tmp_path / "report.html"
    result = run_cli("report", "--html", str(target))
    assert result.exit_code == 0, result.stderr
    assert str(target) in result.stdout
    html = target.read_text("utf-8")
    assert len(html.encode()) <= LIMIT
    for page in ("page-overview", "page-agreement", "page-calibration", "page-patterns",
                 "page-triage", "page-reviewers", "page-run-demo-panel",
                 "page-run-demo-docs-search", "page-run-demo-rag-answers"):
        assert f'id="{page}"' in html, page
    # nothing is fetched: no src or href leaves the file, no stylesheet or script is linked
    assert not re.search(r'\b(?:src|href)="(?!#|data:image/png;base64,|data:,")', html)
    assert re.findall(r"<link [^>]*>", html) == ['<link rel="icon" href="data:,">']  # no request
    assert "@import" not in html
    # the one inline script is allowed by its hash, and by nothing else
    script = static_text("dashboard.js")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    [csp] = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    csp = unescape(csp)
    scripts = csp.split("script-src", 1)[1].split(";", 1)[0]
    assert scripts.strip() == f"'sha256-{digest}'" and "default-src 'none'" in csp
    assert html.count("<script>") == 1 and f"<script>{script}</script>" in html
    # every in-page link has its target
    targets = set(re.findall(r'\bid="([^"]+)"', html))
    for anchor in re.findall(r'href="#([^"]+)"', html):
        assert anchor in targets, anchor


def test_the_report_escapes_hostile_text(tmp_path):
    from bot.dashboard.report import report_html
    from evaluation import load_config

    html = report_html(hostile_store(tmp_path / "results"), load_config(None))
    assert SCRIPT not in html and IMAGE not in html and "\x1b" not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html


def test_a_directory_or_a_missing_parent_is_one_line(demo_store, run_cli, tmp_path):
    missing = tmp_path / "no" / "r.html"
    for target, says in ((tmp_path, "is a directory"), (missing, "no directory")):
        result = run_cli("report", "--html", str(target))
        assert result.exit_code == 2 and says in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "no").exists()


def test_the_report_replaces_a_file_whole(demo_store, run_cli, tmp_path: Path):
    target = tmp_path / "report.html"
    target.write_text("old " * 100_000)
    assert run_cli("report", "--html", str(target)).exit_code == 0
    text = target.read_text()
    assert text.startswith("<!doctype html>") and "old old" not in text
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []
    target.chmod(0o640)
    assert run_cli("report", "--html", str(target)).exit_code == 0
    assert target.stat().st_mode & 0o777 == 0o640  # a replaced report keeps its permissions
    fresh = tmp_path / "fresh.html"
    assert run_cli("report", "--html", str(fresh)).exit_code == 0
    assert fresh.stat().st_mode & 0o044 == 0o044  # a new one is readable as any new file


def test_the_report_never_overwrites_a_log_or_a_run(demo_store, run_cli, tmp_path):
    root = demo_store.root
    (root / "ratings.jsonl").write_text("")
    for target in (root / "ratings.jsonl", root / "runs" / "demo-docs-search.jsonl",
                   root / "cache" / "report.html"):
        before = target.read_bytes() if target.exists() else None
        result = run_cli("report", "--html", str(target))
        assert result.exit_code == 2 and "hilbot's own logs" in result.stderr, target
        assert (target.read_bytes() if target.exists() else None) == before
