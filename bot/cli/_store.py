"""``hilbot store export|import``: move the logs between the JSONL files and a database store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import Context

app = typer.Typer(
    help="Move the logs between the JSONL files and the database store (HILBOT_STORE_URL).\n\n"
    "Example: hilbot store import results",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


@app.command("import")
def import_(
    ctx: typer.Context,
    source: Annotated[
        Path, typer.Argument(help="A data directory: its ratings.jsonl and runs/*.jsonl.")
    ],
) -> None:
    """Load a data directory's JSONL files into the database store, line for line, runs first.
    A second import of the same files adds nothing.

    Example: HILBOT_STORE_URL=postgresql://hilbot@db:5432/hilbot hilbot store import results
    """
    from evaluation.backends import store_url
    from evaluation.backends.moving import import_into

    context: Context = ctx.obj
    moved = import_into(store_url(context.config().store.url), source)
    typer.echo(moved.summary("imported"))


@app.command("export")
def export(
    ctx: typer.Context,
    destination: Annotated[
        Path, typer.Argument(help="A new directory for ratings.jsonl and runs/*.jsonl.")
    ],
) -> None:
    """Write the database store's logs as JSONL files (the interchange format) into a new
    directory; nothing there is overwritten.

    Example: hilbot store export backup-2026-11-26
    """
    from evaluation.backends import store_url
    from evaluation.backends.moving import export_from

    context: Context = ctx.obj
    moved = export_from(store_url(context.config().store.url), destination)
    typer.echo(moved.summary("exported"))
