"""``hilbot dashboard`` and ``hilbot report``: the results as web pages, live or in one file."""

from __future__ import annotations

from typing import Annotated

import typer

from ._common import Context


def dashboard(
    ctx: typer.Context,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (other than 127.0.0.1: --token).")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="Port to listen on (0: any free one).")
    ] = 8765,
    token: Annotated[
        bool,
        typer.Option(
            "--token", help="Ask every request for the token in HILBOT_DASHBOARD_TOKEN."
        ),
    ] = False,
) -> None:
    """A live, read-only web page of progress, agreement, calibration, patterns, triage and
    reviewers; a new rating shows within seconds, without a reload.

    Example: hilbot dashboard   (then open http://127.0.0.1:8765/)
    """
    from bot.dashboard.server import run_dashboard

    context: Context = ctx.obj
    run_dashboard(context.store(), context.config(), typer.echo, host=host, port=port, token=token)


def report(
    ctx: typer.Context,
    html: Annotated[str, typer.Option("--html", help="The HTML file to write.")],
) -> None:
    """Every dashboard page in one self-contained HTML file: no server, no network needed to
    open it.

    Example: hilbot report --html report.html
    """
    from bot.dashboard.report import write_report

    context: Context = ctx.obj
    path = write_report(context.store(), context.config(), html)
    typer.echo(f"Wrote {path} ({path.stat().st_size:,} bytes).")
