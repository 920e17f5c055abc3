"""``hilbot pull``, ``hilbot push`` and ``hilbot status``: items in from the tools a team already
uses, human labels back out to them."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ._common import Context

SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True}
"""Each tool's settings follow as --name value, parsed by the tool's own settings model."""


def pull(
    ctx: typer.Context,
    name: Annotated[
        str,
        typer.Argument(
            help="A tool (langfuse, langsmith, inspect_ai, phoenix, promptfoo) or a "
            "[sources.NAME] of hilbot.toml."
        ),
    ],
    run_id: Annotated[
        Optional[str],
        typer.Option(
            "--run-id",
            help="The run to make (default: a timestamp id); an existing run of the source grows.",
        ),
    ] = None,
    dimensions: Annotated[
        Optional[str],
        typer.Option("--dimensions", help="Comma-separated dimensions to rate (default by kind)."),
    ] = None,
) -> None:
    """Pull items from another tool into a run, each keeping its id there so labels can go back.

    The tool's own settings follow as --name value (a wrong one lists them all); keys and hosts
    come only from the environment.

    \b
    hilbot pull langfuse --queue q-123
    hilbot pull langsmith --project support-bot --limit 200
    hilbot pull inspect_ai --log logs/2026-11-26T10-00_task.eval
    hilbot pull phoenix --project default --span-kind RETRIEVER --documents
    hilbot pull promptfoo --file results.json
    """
    import os

    from evaluation.connectors.commands import pull_command

    context: Context = ctx.obj
    names = [d.strip() for d in dimensions.split(",")] if dimensions else None
    report = pull_command(
        context.store(),
        context.config(),
        name,
        ctx.args,
        os.environ,
        run_id=run_id,
        dimensions=names,
    )
    typer.echo(
        f"pulled {report.added} of {report.found} items from {report.source} into run "
        f"{report.run_id}"
    )
    typer.echo(f"review it: {context.hint('review', report.run_id)}")


def push(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="A run made by hilbot pull.")],
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="A tool (langfuse, langsmith, inspect_ai, phoenix) or a "
            "[sinks.NAME] of hilbot.toml.",
        ),
    ],
    wait: Annotated[
        float,
        typer.Option(
            "--wait", min=0, max=3600, help="Seconds to keep retrying and reading back (0–3600)."
        ),
    ] = 60.0,
    retry: Annotated[
        bool, typer.Option("--retry", help="Send the labels the tool refused before again.")
    ] = False,
) -> None:
    """Write the run's human labels back to the tool its items came from, as that tool's own human
    feedback.

    Each label goes once: a re-sent or corrected rating updates it there. Every label on its way is
    recorded (pending, sent, confirmed) so nothing is lost to a restart; exit 1 while some wait or
    were refused. The sink's own settings follow as --name value.

    \b
    hilbot push support-queue --to langfuse
    """
    import os

    from evaluation.connectors.commands import push_command

    context: Context = ctx.obj
    report = push_command(
        context.store(),
        context.config(),
        run_id,
        to,
        ctx.args,
        os.environ,
        seconds=wait,
        retry_failed=retry,
    )
    for line in report.lines():
        typer.echo(line)
    raise typer.Exit(1 if report.failed or report.waiting else 0)


def status(ctx: typer.Context) -> None:
    """What waits to be written back to other tools, per sink, and why."""
    from evaluation.connectors.commands import status_lines

    context: Context = ctx.obj
    for line in status_lines(context.store()):
        typer.echo(line)
