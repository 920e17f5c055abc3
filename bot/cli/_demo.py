"""``hilbot demo``: build the demo runs, print the run output, start reviewing."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ._common import Context, default_reviewer, warn_issues


def demo(
    ctx: typer.Context,
    review: Annotated[
        bool,
        typer.Option(
            "--review/--no-review",
            help="Start the terminal review after the output (when there is a terminal).",
        ),
    ] = True,
) -> None:
    """Build three demo runs (18 documentation searches, 12 RAG answers, and the searches as a
    panel of three reviewers rated them), print them, start the review.

    With no terminal it prints the command to review and exits 0.

    Example: hilbot demo ; hilbot --data-dir /tmp/demo demo --no-review
    """
    from bot.demo import run_demo

    context: Context = ctx.obj
    run_demo(
        context.store(),
        context.config(),
        reviewer=default_reviewer(),
        interactive=review and sys.stdin.isatty() and sys.stdout.isatty(),
        on_issues=warn_issues,
        command=context.hint(),
    )
