"""``hilbot dashboard`` and ``hilbot report --html`` in a real browser: every page opens clean
and talks to its own origin only, the charts hold the JSON reports' figures with their tables one
click away, a rating made in the terminal shows without a reload, the keyboard reaches
everything, hostile text stays text, and the static report stands alone."""

from __future__ import annotations

import math
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator
from urllib.parse import quote

import pexpect
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bot.demo import SEARCH_RUN
from tests.bot.dashboard.hostile import RUN as HOSTILE_RUN
from tests.bot.dashboard.hostile import SCRIPT

from .conftest import HILBOT, Dashboard, Tab, clean_environment

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

DATASETS = ("demo", "generated")
"""The data sets every page is opened on."""
PAGES = ("overview", "run", "agreement", "calibration", "patterns", "triage", "reviewers")
"""Every built-in page (``run``: the page of each run of the data set)."""
CHARTED = ("overview", "agreement", "calibration", "patterns", "triage", "reviewers")
"""The pages whose charts are checked (a run page has tables only)."""
LIVE_SECONDS = 3.0
"""How soon a rating made in the terminal must show on an open page."""
QUESTION = "How did the search do"
"""The terminal review's question for a search run (it waits for a key)."""
REVIEWER = "browser-test"
"""The reviewer who rates in the terminal during the live test."""
REPORT_BYTES = 2 * 1024 * 1024
"""The static report's size at most."""


def _server(request: pytest.FixtureRequest, dataset: str) -> Dashboard:
    """The module's dashboard of ``dataset`` (``demo``, ``generated`` or ``hostile``)."""
    server = request.getfixturevalue(f"{dataset}_server")
    assert isinstance(server, Dashboard)
    return server


def _path(name: str) -> str:
    """A page's path below the dashboard's URL (the overview is ``/``)."""
    return "" if name == "overview" else name


def _run_path(run_id: str) -> str:
    return "run/" + quote(run_id, safe="")


def _tables_text(page: "Page") -> str:
    """The text of every table of the page (open or behind a closed ``details``)."""
    return "\n".join(page.locator("table").all_text_contents())


def _number(value: Any) -> float | None:
    """A report's value as a finite float, or None (undefined, missing)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _focused(page: "Page") -> dict[str, Any]:
    """What has the keyboard focus: its tag, text, id, and whether it is in the page nav or in
    ``main``."""
    return dict(page.evaluate(
        """() => {
            const e = document.activeElement;
            return {
                tag: e ? e.tagName.toLowerCase() : "",
                text: e ? (e.textContent || "").trim() : "",
                id: e ? e.id : "",
                nav: !!(e && e.closest('nav[aria-label="Pages"]')),
                inMain: !!(e && e !== document.getElementById("main")
                           && document.getElementById("main").contains(e)),
            };
        }"""
    ))


def _tab_to(page: "Page", wanted: Any, presses: int) -> int:
    """Press Tab until ``wanted(focused)`` holds; the number of presses (fails after
    ``presses``)."""
    seen = []
    for count in range(1, presses + 1):
        page.keyboard.press("Tab")
        focused = _focused(page)
        if wanted(focused):
            return count
        seen.append(f"{focused['tag']} {focused['text'][:30]!r}")
    pytest.fail(f"not reached in {presses} presses of Tab; focus went: " + ", ".join(seen))


# ------------------------------------------------------------------------------ 1. every page


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("name", PAGES)
def test_every_page_opens_clean_and_stays_on_its_origin(
    request: pytest.FixtureRequest, tab: Tab, dataset: str, name: str
) -> None:
    """HTTP 200, a visible ``h1``, no console error or uncaught exception, every request to the
    dashboard's own origin (the overview also waits for the live poll of ``/api/version``); a
    full-page screenshot of each page in ``test-artifacts/browser/``."""
    server = _server(request, dataset)
    shown = (
        {f"run-{run_id}": _run_path(run_id) for run_id in server.runs()}
        if name == "run"
        else {name: _path(name)}
    )
    assert shown, f"the {dataset} data set has no run"
    for label, path in shown.items():
        tab.open(server.url + path)
        heading = tab.page.locator("h1")
        assert heading.count() >= 1, f"{label}: no h1"
        assert heading.first.is_visible() and heading.first.inner_text().strip(), f"{label}: h1"
        tab.screenshot(f"{dataset}-{label}")
    if name == "overview":
        version = server.url + "api/version"
        with tab.page.expect_response(lambda r: r.url == version, timeout=3000) as polled:
            pass  # the page polls each second
        assert polled.value.status == 200
    tab.assert_no_errors()
    tab.assert_only(server.origin)


# ------------------------------------------------------------------------------ 2. the figures


def _coefficients(document: dict[str, Any]) -> Iterator[tuple[str, float]]:
    """Each dimension's coefficients the agreement page shows, as ``dimension: path`` and value:
    the unweighted ones and those under the report's weights (the JSON holds every weighting;
    the page charts these two), and Krippendorff's α at each level; then the coefficients pooled
    across dimensions (α is per dimension only)."""
    weights = document["weights"]
    for name, dimension in document["dimensions"].items():
        for weighting in dict.fromkeys(("identity", weights)):
            for key, estimate in dimension["coefficients"].get(weighting, {}).items():
                value = _number(estimate.get("value"))
                if value is not None:
                    yield f"{name}: {weighting}.{key}", value
        for level, estimate in dimension["alpha"].items():
            value = _number(estimate.get("value"))
            if value is not None:
                yield f"{name}: alpha.{level}", value
    across = document.get("across") or {}
    for weighting in dict.fromkeys(("identity", weights)) if across else ():
        for key, estimate in across["coefficients"].get(weighting, {}).items():
            value = _number(estimate.get("value"))
            if value is not None and key != "krippendorff_alpha":
                yield f"across dimensions: {weighting}.{key}", value


@pytest.mark.parametrize("dataset", DATASETS)
def test_the_agreement_tables_hold_the_reports_coefficients(
    request: pytest.FixtureRequest, tab: Tab, dataset: str
) -> None:
    """Every coefficient of ``/api/agreement.json`` (three decimals) is in the page's tables."""
    server = _server(request, dataset)
    expected = list(_coefficients(server.json("agreement")))
    assert expected, "the agreement report has no defined coefficient"
    tab.open(server.url + "agreement")
    text = _tables_text(tab.page)
    missing = [f"{path} = {value:.3f}" for path, value in expected if f"{value:.3f}" not in text]
    assert not missing, "coefficients of /api/agreement.json not in the page's tables:\n" + (
        "\n".join(missing)
    )
    tab.assert_no_errors()


@pytest.mark.parametrize("dataset", DATASETS)
def test_the_calibration_page_shows_the_reports_spearman(
    request: pytest.FixtureRequest, tab: Tab, dataset: str
) -> None:
    """Each group's Spearman coefficient of ``/api/calibration.json`` is in the page's tables."""
    server = _server(request, dataset)
    document = server.json("calibration")
    expected = [
        (str(group.get("key")), value)
        for group in document.get("groups", [])
        if (value := _number((group.get("spearman") or {}).get("coefficient"))) is not None
    ]
    assert expected, f"the calibration report has no Spearman coefficient: {document}"
    tab.open(server.url + "calibration")
    text = _tables_text(tab.page)
    missing = [f"{key}: {value:.3f}" for key, value in expected if f"{value:.3f}" not in text]
    assert not missing, "Spearman coefficients not in the calibration page's tables:\n" + (
        "\n".join(missing)
    )
    tab.assert_no_errors()


@pytest.mark.parametrize("dataset", DATASETS)
def test_the_overview_links_every_run(
    request: pytest.FixtureRequest, tab: Tab, dataset: str
) -> None:
    """Each run id is a link to its page on the overview; following one opens that run."""
    server = _server(request, dataset)
    tab.open(server.url)
    page = tab.page
    missing = []
    for run_id in server.runs():
        links = page.locator(f'a[href="/{_run_path(run_id)}"]')
        if links.count() == 0:
            missing.append(run_id)
            continue
        assert (links.first.text_content() or "").strip() == run_id
    assert not missing, f"runs not linked from the overview: {missing} (of {server.runs()})"
    first = server.runs()[0]
    link = page.locator(f'a[href="/{_run_path(first)}"]').first
    if not link.is_visible():  # in the table behind a chart: one click away
        link.locator("xpath=ancestor::details[1]/summary").click()
    with page.expect_navigation():
        link.click()
    assert page.url == server.url + _run_path(first)
    assert first in page.locator("h1").first.inner_text()
    tab.assert_no_errors()


def _check_chart(figure: "Locator", where: str) -> None:
    """A chart's SVG is an image with a label and a title; a ``details`` right after it holds
    its table, shown by clicking its ``summary``."""
    svg = figure.locator("svg").first
    assert svg.get_attribute("role") == "img", f"{where}: the svg has no role=img"
    label = (svg.get_attribute("aria-label") or "").strip()
    assert label, f"{where}: the svg has no aria-label"
    title = svg.locator(":scope > title")
    assert title.count() == 1 and title.text_content() == label, f"{where}: svg <title>"
    details = figure.locator("xpath=following-sibling::*[1]")
    assert details.evaluate("e => e.tagName.toLowerCase()") == "details", (
        f"{where}: the chart {label!r} is not followed by a details element"
    )
    table = details.locator("table")
    assert table.count() == 1, f"{where}: no table behind the chart {label!r}"
    if not table.is_visible():
        details.locator("summary").first.click()
    assert table.is_visible(), f"{where}: the table of {label!r} does not open"


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("name", CHARTED)
def test_every_chart_is_an_image_with_its_table_one_click_away(
    request: pytest.FixtureRequest, tab: Tab, dataset: str, name: str
) -> None:
    """Every ``figure.chart``: ``svg`` with ``role="img"``, an ``aria-label`` and the same
    ``<title>``; the ``details`` after it opens on a click of its ``summary`` to show the table
    of the chart's figures. The overview and the agreement page have charts on both data sets."""
    server = _server(request, dataset)
    tab.open(server.url + _path(name))
    charts = tab.page.locator("figure.chart")
    if name in ("overview", "agreement"):
        assert charts.count() >= 1, f"{name}: no chart"
    for n in range(charts.count()):
        _check_chart(charts.nth(n), f"{dataset} {name}, chart {n + 1}")
    tab.assert_no_errors()


# ------------------------------------------------------------------------------ 3. live update


_SHOWS = """(needle) => {
    const table = document.querySelector('section[id$="--cards"] table');
    return !!table && table.textContent.includes(needle);
}"""
_RATINGS = """() => {
    const table = document.querySelector('section[id$="--items"] table');
    const column = Array.from(table.tHead.rows[0].cells)
        .findIndex((th) => th.textContent.trim() === "ratings");
    return Array.from(table.tBodies[0].rows)
        .reduce((sum, row) => sum + Number(row.cells[column].dataset.value), 0);
}"""


def test_a_rating_made_in_the_terminal_shows_without_a_reload(
    live_server: Dashboard, tab: Tab, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run page of the demo's search run, open; a reviewer rates an item ``good`` in
    ``hilbot review`` (a pseudo-terminal) just after the page polled; within 3 s the page's cards
    table shows the rating and its ratings column one more, and the page was not reloaded
    (``window.__marker`` kept). The latency is printed."""
    tab.open(live_server.url + _run_path(SEARCH_RUN))
    page = tab.page
    needle = f"{REVIEWER}: good"
    before = page.evaluate(_RATINGS)
    assert not page.evaluate(_SHOWS, needle), f"{needle!r} is on the page before the rating"
    page.evaluate("window.__marker = 1")
    child = pexpect.spawn(
        str(HILBOT),
        ["review", SEARCH_RUN, "--reviewer", REVIEWER],
        env=clean_environment(live_server.data_dir),
        cwd=str(live_server.data_dir.parent),
        encoding="utf-8",
        timeout=20,
        dimensions=(60, 140),
    )
    version = live_server.url + "api/version"
    try:
        child.expect(QUESTION)
        # the key right after a poll: the worst case, a whole poll interval to the next one
        with page.expect_response(lambda r: r.url == version, timeout=LIVE_SECONDS * 1000):
            pass
        pressed = time.perf_counter()
        child.send("g")
        child.expect("recorded: good")
        recorded = time.perf_counter()
        try:
            page.wait_for_function(_SHOWS, arg=needle, timeout=LIVE_SECONDS * 1000)
        except PlaywrightTimeout:
            pytest.fail(f"{needle!r} not on the page {LIVE_SECONDS:.0f} s after the terminal "
                        "recorded it", pytrace=False)
        shown = time.perf_counter()
        child.send("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    with capsys.disabled():  # shown even when pytest captures the output
        print(
            f"\nlive update: the rating shown {shown - recorded:.2f} s after the terminal said "
            f"recorded ({shown - pressed:.2f} s after the key, just after a poll)"
        )
    assert page.evaluate("window.__marker") == 1, "the page was reloaded"
    assert page.evaluate(_RATINGS) == before + 1
    tab.assert_no_errors()
    tab.assert_only(live_server.origin)


def test_a_focused_reader_keeps_their_place_until_the_focus_leaves(
    live_server: Dashboard, tab: Tab
) -> None:
    """A keyboard user inside the content is not moved by a refresh: a rating appended while a
    sort button has the focus is announced, not swapped in; once the focus is back on the
    navigation, the page updates (without a reload)."""
    import json

    tab.open(live_server.url + _run_path(SEARCH_RUN))
    page = tab.page
    page.evaluate("window.__marker = 1")
    button = page.locator("main button.sort").first
    button.focus()
    rating = {
        "v": 1, "type": "rating", "run_id": SEARCH_RUN, "item_id": "q01", "dimension": "overall",
        "reviewer": {"platform": "cli", "id": "focus-test"}, "channel": "terminal",
        "idempotency_key": "focus-test:q01", "action": "rate:good", "judgment": "good",
        "score": 1.0, "timestamp": "2026-11-26T12:00:00Z", "ai_verdict_shown": False,
    }
    with open(live_server.data_dir / "ratings.jsonl", "a", encoding="utf-8") as log:
        log.write(json.dumps(rating) + "\n")
    status = page.locator(".status")
    status.filter(has_text="New data").wait_for(timeout=LIVE_SECONDS * 1000)
    assert page.evaluate("document.activeElement.classList.contains('sort')")
    assert not page.evaluate(_SHOWS, "cli:focus-test: good"), "swapped under the focus"
    page.locator("header nav a").first.focus()
    page.wait_for_function(_SHOWS, arg="cli:focus-test: good", timeout=LIVE_SECONDS * 1000)
    assert page.evaluate("window.__marker") == 1, "the page was reloaded"
    tab.assert_no_errors()


# ------------------------------------------------------------------------------ 4. keyboard


def test_the_keyboard_reaches_the_content_the_pages_and_the_sorting(
    demo_server: Dashboard, tab: Tab
) -> None:
    """From a fresh overview: the first Tab focuses the skip link, Enter moves the focus to
    ``main`` (the next Tab lands inside it); from a fresh overview again, Tab reaches the nav
    link "Agreement" and Enter opens ``/agreement``; on a run page, Tab reaches a column's sort
    button and Enter sorts the rows by it."""
    page = tab.page
    tab.open(demo_server.url)
    page.keyboard.press("Tab")
    focused = _focused(page)
    assert (focused["tag"], focused["text"]) == ("a", "Skip to the content"), focused
    page.keyboard.press("Enter")
    assert _focused(page)["id"] == "main", "Enter on the skip link did not focus main"
    page.keyboard.press("Tab")
    assert _focused(page)["inMain"], f"the Tab after the skip link left main: {_focused(page)}"

    tab.open(demo_server.url)
    _tab_to(page, lambda f: f["nav"] and f["text"] == "Agreement", 30)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url == demo_server.url + "agreement"
    assert page.locator("h1").first.inner_text().strip() == "Agreement"

    tab.open(demo_server.url + _run_path(SEARCH_RUN))
    table = page.locator('section[id$="--items"] table')
    first_row = table.locator("tbody tr").first.inner_text()
    column = "AI score"
    _tab_to(page, lambda f: f["tag"] == "button" and f["text"] == column, 120)
    page.keyboard.press("Enter")
    # by CSS: once sorted, the button's accessible name is "AI score ▲" (the CSS ::after)
    header = table.locator("thead th", has=page.locator("button.sort", has_text=column))
    assert header.get_attribute("aria-sort") == "ascending"
    assert table.locator("tbody tr").first.inner_text() != first_row, "the rows did not move"
    index = [t.strip() for t in table.locator("thead th").all_inner_texts()].index(column)
    values = [
        float(v) for v in table.locator(f"tbody tr td:nth-child({index + 1})").evaluate_all(
            "cells => cells.map((c) => c.dataset.value)"
        ) if v not in (None, "")
    ]
    assert values == sorted(values), f"not sorted by {column}: {values}"
    tab.assert_no_errors()


# ------------------------------------------------------------------------------ 5. hostile text


HOSTILE_PAGES = ("overview", "run", "agreement", "reviewers", "patterns")
"""The pages that show the hostile run's texts (``run``: the hostile run's page)."""


@pytest.mark.parametrize("name", HOSTILE_PAGES)
def test_hostile_text_stays_text(hostile_server: Dashboard, tab: Tab, name: str) -> None:
    """No dialog, ``window.__pwned`` never set, no ``javascript:`` link, no injected element
    (an ``onerror`` handler, a script but hilbot's own); on the run page the query's
    ``<script>`` is shown as text."""
    path = _run_path(HOSTILE_RUN) if name == "run" else _path(name)
    tab.open(hostile_server.url + path)
    page = tab.page
    assert page.evaluate("typeof window.__pwned") == "undefined", "hostile markup ran"
    assert page.locator('a[href^="javascript:" i]').count() == 0, "a javascript: link"
    assert page.locator("[onerror], [onload], [onclick]").count() == 0, "an injected handler"
    sources = page.locator("script").evaluate_all("s => s.map((e) => e.getAttribute('src'))")
    assert sources == ["/static/dashboard.js"], f"scripts on the page: {sources}"
    if name == "run":
        shown = page.get_by_text(SCRIPT, exact=False)
        assert shown.count() >= 1, "the query's <script> is not on the run page as text"
        assert shown.first.is_visible()
    tab.screenshot(f"hostile-{name}")
    tab.assert_no_errors()
    tab.assert_only(hostile_server.origin)


# ------------------------------------------------------------------------------ 6. the report


def test_the_static_report_stands_alone(demo_dir: Path, tab: Tab, tmp_path: Path) -> None:
    """``hilbot report --html``: at most 2 MB; opened from a ``file://`` URL it requests nothing
    but itself and logs no error (a CSP refusal of its inline script would); its tables sort on
    a click; its navigation links, and every other link, are anchors of the document."""
    target = tmp_path / "report.html"
    done = subprocess.run(
        [str(HILBOT), "report", "--html", str(target)],
        env=clean_environment(demo_dir),
        cwd=demo_dir.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    size = target.stat().st_size
    assert size <= REPORT_BYTES, f"the report is {size:,} bytes"
    url = target.as_uri()
    page = tab.page
    page.goto(url, wait_until="load")
    tab.assert_no_errors()  # first: a refused inline script logs an error, then nothing sorts
    assert page.locator("h1").count() >= 7, "not every page is in the report"

    nav = page.locator('header nav[aria-label="Pages"] a').evaluate_all(
        "links => links.map((a) => a.getAttribute('href'))"
    )
    assert len(nav) >= 6, f"the report's navigation: {nav}"
    hrefs = page.locator("a[href]").evaluate_all(
        "links => links.map((a) => a.getAttribute('href'))"
    )
    outside = sorted({h for h in hrefs if not h.startswith("#")})
    assert not outside, f"links that are not anchors of the report: {outside}"
    dangling = sorted({h for h in hrefs if not page.evaluate(
        "id => !!document.getElementById(id)", h[1:]
    )})
    assert not dangling, f"links to no element of the report: {dangling}"

    button = page.locator("details[open] table thead button.sort").first
    header = button.locator("xpath=ancestor::th[1]")
    assert header.get_attribute("aria-sort") is None
    button.click()
    assert header.get_attribute("aria-sort") == "ascending", "the report's tables do not sort"

    tab.screenshot("report")
    tab.assert_no_errors()
    tab.assert_only(url)
