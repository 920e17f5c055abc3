"""``hilbot digest``: the review digest, printed or posted to the chat."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ._common import Context


def digest(
    ctx: typer.Context,
    post: Annotated[
        str,
        typer.Option(
            "--post",
            help="Where to: stdout, telegram ([telegram.digest] chats) or slack ([slack.digest] "
            "chats).",
        ),
    ] = "stdout",
    since_hours: Annotated[
        float,
        typer.Option("--since-hours", help="Count ratings newer than this as new (0–876000)."),
    ] = 24.0,
    out: Annotated[
        Optional[str],
        typer.Option("--out", help="Also write digest.md and digest.png into this directory."),
    ] = None,
    report: Annotated[
        bool,
        typer.Option(
            "--report",
            help="Attach the dashboard's pages as one HTML file (with --out: report.html too).",
        ),
    ] = False,
) -> None:
    """Progress per run, new ratings, human vs AI, top concerns, a chart, and what changed.

    What changed since --since-hours ago: regression alerts (a pattern whose success rate fell
    significantly against the period before, with its interval), and the synthesis and action
    items of the runs rated since.

    Example: hilbot digest ; hilbot digest --post slack
    """
    from bot.digest import make_digest

    from ._common import warn

    context: Context = ctx.obj
    issues: list = []
    text = make_digest(
        context.store(),
        context.config(),
        post=post,
        since_hours=since_hours,
        out=out,
        issues=issues,
        report=report,
    )
    warn(issues)
    typer.echo(text)
