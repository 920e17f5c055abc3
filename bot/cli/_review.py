"""``hilbot review``: list runs, or review one in the terminal."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ._common import Context, default_reviewer, warn_issues


def review(
    ctx: typer.Context,
    run_id: Annotated[Optional[str], typer.Argument(help="Run to review (see --list).")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List runs instead of reviewing.")] = False,
    dimension: Annotated[
        Optional[str],
        typer.Option("--dimension", "-d", help="Dimension to rate (default: the run's first)."),
    ] = None,
    reviewer: Annotated[
        Optional[str], typer.Option("--reviewer", "-r", help="Your reviewer id (default: $USER).")
    ] = None,
) -> None:
    """Review a run's AI-scored items in the terminal, one key per judgment.

    Keys: the scale's keys (g/o/p/t for search), n note, s skip (enter too, once a card has
    been read), u undo a skip, v view full response, x view tool captures, ? guide, q quit and
    save. Every judgment is on disk before the next item.

    Example: hilbot review --list ; hilbot review demo-docs-search --reviewer alice
    """
    from evaluation import HilbotError

    context: Context = ctx.obj
    if list_:
        from bot.listing import run_listing

        issues: list = []
        typer.echo(run_listing(context.store(), issues, context.config().review.k))
        warn_issues(issues)
        return
    if run_id is None:
        raise HilbotError("no run id given", fix="name a run (see `hilbot review --list`)")
    from bot.channels.terminal import review_run

    review_run(
        context.store(),
        context.config(),
        run_id,
        dimension=dimension,
        reviewer=reviewer or default_reviewer(),
        on_issues=warn_issues,
    )
