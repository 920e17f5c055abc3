"""The demo: realistic sample data for a documentation search system and a RAG assistant.

``docs-search.outputs.jsonl`` holds 18 curated queries (``docs-search.set.json``) with the
ranked results the search returned and a recorded AI judge's scores; ``rag-answers.jsonl``
holds 12 RAG answers with retrieved and ground-truth contexts. The demo imports both as runs
(once; later calls reuse them, so a review resumes where it stopped).
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
_FILES = {SEARCH_RUN: ("docs-search.outputs.jsonl", "docs-search"), RAG_RUN: ("rag-answers.jsonl", "rag-answers")}


@dataclass
class DemoRuns:
    """The demo's runs and whether this call created them."""

    search: Run
    rag: Run
    created: list[str]


def data_file(name: str) -> Path:
    """Path of a bundled demo data file."""
    return Path(str(resources.files(__package__).joinpath(name)))


def build_demo(store: Store) -> DemoRuns:
    """Import the bundled outputs as two runs unless they already exist."""
    created = []
    for run_id, (filename, set_name) in _FILES.items():
        if not store.run_exists(run_id):
            import_outputs(store, data_file(filename), run_id=run_id, set_name=set_name, judge="recorded")
            created.append(run_id)
    return DemoRuns(store.load_run(SEARCH_RUN), store.load_run(RAG_RUN), created)


def run_demo(store: Store, config: "HilbotConfig", *, reviewer: str, interactive: bool,
             on_issues: Callable[[list], None] | None = None, echo: Callable[[str], None] = print) -> DemoRuns:
    """Build the demo runs, print the verbose run output, then review in the terminal or say how to."""
    from evaluation.output import run_lines

    from ..channels.terminal import review_run

    runs = build_demo(store)
    for run in (runs.search, runs.rag):
        state = "created" if run.run_id in runs.created else "already there"
        echo(f"── run {run.run_id} ({run.header.kind}, {len(run.items)} items, {state}) " + "─" * 20)
        for line in run_lines(run, "verbose"):
            echo(line)
    if interactive:
        review_run(store, config, SEARCH_RUN, reviewer=reviewer, on_issues=on_issues)
    else:
        echo(f"Runs are in {store.root}/runs. Review them in a terminal with:")
        echo(f"  hilbot review {SEARCH_RUN}")
        echo(f"  hilbot review {RAG_RUN}")
    return runs
