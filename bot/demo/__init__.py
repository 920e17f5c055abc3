"""The demo: realistic sample data for a documentation search system and a RAG assistant.

``docs-search.outputs.jsonl`` holds 18 curated queries (``docs-search.set.json``) with the
ranked results the search returned and a recorded AI judge's scores; ``rag-answers.jsonl``
holds 12 RAG answers with retrieved and ground-truth contexts. The demo imports both as runs
(once; later calls reuse them, so a review resumes where it stopped). A third run, ``demo-panel``,
holds the same searches already rated by a sample panel of three reviewers
(``panel-ratings.jsonl``), who disagree on a few: the material for ``hilbot adjudicate`` and
``hilbot analyze agreement``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from evaluation import Run, Store
from evaluation.imports import import_outputs

if TYPE_CHECKING:
    from evaluation import HilbotConfig

SEARCH_RUN = "demo-docs-search"
RAG_RUN = "demo-rag-answers"
PANEL_RUN = "demo-panel"
_FILES = {
    SEARCH_RUN: ("docs-search.outputs.jsonl", "docs-search"),
    RAG_RUN: ("rag-answers.jsonl", "rag-answers"),
}


@dataclass
class DemoRuns:
    """The demo's runs and whether this call created them."""

    search: Run
    rag: Run
    created: list[str]
    panel: Run | None = None
    """The searches as rated by the sample panel."""


def data_file(name: str) -> Path:
    """Path of a bundled demo data file."""
    return Path(str(resources.files(__package__).joinpath(name)))


def build_demo(store: Store, *, panel: bool = False) -> DemoRuns:
    """Import the bundled outputs as two runs unless they already exist (``panel``: and the panel's
    run and ratings)."""
    created = []
    for run_id, (filename, set_name) in _FILES.items():
        if not store.run_exists(run_id):
            import_outputs(
                store, data_file(filename), run_id=run_id, set_name=set_name, judge="recorded"
            )
            created.append(run_id)
    if panel and not store.run_exists(PANEL_RUN):
        import_outputs(
            store,
            data_file(_FILES[SEARCH_RUN][0]),
            run_id=PANEL_RUN,
            set_name="docs-search",
            judge="recorded",
        )
        _panel_ratings(store)
        created.append(PANEL_RUN)
    return DemoRuns(
        store.load_run(SEARCH_RUN),
        store.load_run(RAG_RUN),
        created,
        store.load_run(PANEL_RUN) if store.run_exists(PANEL_RUN) else None,
    )


def _panel_ratings(store: Store) -> None:
    """The sample panel's ratings of ``demo-panel`` into the log (their idempotency keys make a
    second append a no-op)."""
    import json

    from evaluation import parse_record

    text = data_file("panel-ratings.jsonl").read_text("utf-8")
    store.ratings.append_many(
        [parse_record(json.loads(line)) for line in text.splitlines() if line.strip()]
    )


def run_demo(
    store: Store,
    config: "HilbotConfig",
    *,
    reviewer: str,
    interactive: bool,
    on_issues: Callable[[list], None] | None = None,
    echo: Callable[[str], None] = print,
    command: str = "hilbot",
) -> DemoRuns:
    """Build the demo runs, print the verbose run output, then review in the terminal or say how
    to. ``command``: how the hints start the next commands (``.venv/bin/hilbot`` when ``hilbot``
    is not on PATH)."""
    from evaluation.output import run_lines

    from ..channels.terminal import review_run

    runs = build_demo(store, panel=True)
    for run in (runs.search, runs.rag):
        state = "created" if run.run_id in runs.created else "already there"
        echo(
            f"── run {run.run_id} ({run.header.kind}, {len(run.items)} items, {state}) " + "─" * 20
        )
        for line in run_lines(run, "verbose"):
            echo(line)
    echo(
        f"── run {PANEL_RUN}: the same searches, rated by a sample panel of three reviewers "
        + "─" * 10
    )
    echo(f"  They disagree on some items. Resolve them: {command} adjudicate {PANEL_RUN}")
    echo(f"  How well they agree: {command} analyze agreement --run {PANEL_RUN}")
    echo(f"  All of it as web pages: {command} report --html report.html (or live: {command} "
         "dashboard)")
    if interactive:
        review_run(store, config, SEARCH_RUN, reviewer=reviewer, on_issues=on_issues)
    else:
        echo(f"Runs are in {store.root}/runs. Review them in a terminal with:")
        echo(f"  {command} review {SEARCH_RUN}")
        echo(f"  {command} review {RAG_RUN}")
    return runs
