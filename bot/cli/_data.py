"""``hilbot import``, ``hilbot export`` and ``hilbot schema``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from ._common import Context


class ExportFormat(str, Enum):
    json = "json"
    csv = "csv"
    jsonl = "jsonl"


def import_(
    ctx: typer.Context,
    file: Annotated[
        Path, typer.Argument(help="A .jsonl, .json or .csv file of any evaluation tool's outputs.")
    ],
    run_id: Annotated[
        Optional[str], typer.Option("--run-id", help="Id of the new run (default: a timestamp).")
    ] = None,
    set_name: Annotated[str, typer.Option("--set", help="Query set the items belong to.")] = "core",
    skip_bad: Annotated[
        bool, typer.Option("--skip-bad", help="Import the good rows and report the bad ones.")
    ] = False,
    dimensions: Annotated[
        Optional[str],
        typer.Option(
            "--dimensions", help="Comma-separated dimensions to review (default by kind)."
        ),
    ] = None,
) -> None:
    """Turn an evaluation tool's outputs into a run reviewers can rate.

    Rows need a query (query/question/prompt/scenario); answers, ranked results, contexts,
    tool captures, AI scores/verdict/confidence/rationale and any other fields are kept.

    Example: hilbot import evals/outputs.jsonl --run-id nightly-42 --set core
    """
    from evaluation.imports import import_outputs

    context: Context = ctx.obj
    names = [name.strip() for name in dimensions.split(",")] if dimensions is not None else None
    report = import_outputs(
        context.store(),
        file,
        run_id=run_id,
        set_name=set_name,
        skip_bad=skip_bad,
        dimensions=names,
        config=context.config(),
    )
    for error in report.errors:
        typer.echo(f"skipped: {error}", err=True)
    typer.echo(
        f"imported {report.imported} items into run {report.run_id} ({report.skipped} bad rows "
        "skipped)"
    )
    typer.echo(f"review it: {context.hint('review', report.run_id)}")


def export(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="Run to export.")],
    fmt: Annotated[
        ExportFormat,
        typer.Option(
            "--format", "-f", help="json (labels + hil view), jsonl (run with inline hil) or csv."
        ),
    ] = ExportFormat.json,
    out: Annotated[
        Optional[Path], typer.Option("--out", "-o", help="Write to this file instead of stdout.")
    ] = None,
    dimension: Annotated[
        Optional[str], typer.Option("--dimension", "-d", help="Only this dimension.")
    ] = None,
    reviewer: Annotated[
        Optional[str], typer.Option("--reviewer", help="Only this reviewer (platform:id).")
    ] = None,
) -> None:
    """Export a run's human labels and per-item review.

    Written to a terminal, control characters are made visible (JSON as escapes: the same data);
    to a pipe or --out, the data is exact.

    Example: hilbot export demo-docs-search --format csv --out labels.csv
    """
    import sys

    from analysis.run_events import export_events
    from evaluation.exports import export_run
    from evaluation.text import for_terminal

    from ._common import warn

    context: Context = ctx.obj
    store = context.store()
    issues: list = []
    text = export_run(
        store,
        run_id,
        fmt.value,
        dimension=dimension,
        reviewer=reviewer,
        issues=issues,
        config=context.config(),
        events=export_events(store, run_id),
    )
    warn(issues)
    if out is None:
        typer.echo(for_terminal(text, fmt.value) if sys.stdout.isatty() else text, nl=False)
    else:
        typer.echo(f"wrote {store.write_file(out, text)}")


def schema(ctx: typer.Context) -> None:
    """Print the JSON Schema of every record type (docs/schema.json is this output).

    Example: hilbot schema > docs/schema.json
    """
    import json

    from evaluation import json_schemas

    typer.echo(json.dumps(json_schemas(), indent=2, ensure_ascii=False))
