"""``hilbot adjudicate``: resolve the items whose labels disagree, in the terminal."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ._common import Context, default_reviewer, warn_issues


def adjudicate(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="Run whose disagreements to resolve.")],
    dimension: Annotated[
        Optional[str],
        typer.Option("--dimension", "-d", help="Dimension (default: the run's first)."),
    ] = None,
    adjudicator: Annotated[
        Optional[str], typer.Option("--adjudicator", "-a", help="Your id (default: $USER).")
    ] = None,
) -> None:
    """Resolve disagreements: the items whose labels differ (or that the AI and the humans see far
    apart), largest disagreement first, with every reviewer's label, tags and notes shown.

    Keys: a scale key records the consensus label, x excludes the item (then a reason: 1-4), enter
    leaves it for later, v view full, ? guide, q quit. Each decision is an `adjudication` record in
    the log; the reviewers' ratings stay as they were, so agreement is still measured on them. Which
    items count as disputed: [adjudication] min_spread and ai_gap in hilbot.toml.

    Example: hilbot adjudicate demo-docs-search --adjudicator lead
    """
    from bot.channels.terminal.adjudication import adjudicate_run

    context: Context = ctx.obj
    adjudicate_run(
        context.store(),
        context.config(),
        run_id,
        dimension=dimension,
        adjudicator=adjudicator or default_reviewer(),
        on_issues=warn_issues,
    )
