"""``hilbot triage``: sort the changes between two outputs, decide the clear ones, review the
rest."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ._common import Context, default_reviewer, warn, warn_issues


def triage(
    ctx: typer.Context,
    sources: Annotated[
        Optional[list[str]],
        typer.Argument(
            help="EXPECTED_DIR ACTUAL_DIR, or BASELINE_RUN CURRENT_RUN, or one "
            ".jsonl/.csv file of id, name, description, expected, actual rows."
        ),
    ] = None,
    interactive: Annotated[
        bool,
        typer.Option(
            "--interactive",
            "-i",
            help="Review the changes left for humans now, in the "
            "terminal; then write what was accepted.",
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", help="The whole analysis of each change, with its diff."),
    ] = False,
    silent: Annotated[
        bool, typer.Option("--silent", help="One line per category, for CI.")
    ] = False,
    only_failed: Annotated[
        bool, typer.Option("--only-failed", help="Leave out the changes a rule accepted.")
    ] = False,
    judge: Annotated[
        Optional[str],
        typer.Option(
            "--judge",
            help="local (rules, nothing sent anywhere) or llm (opt-in: each "
            "change goes to [llm]); default: [triage] judge.",
        ),
    ] = None,
    update: Annotated[
        bool,
        typer.Option(
            "--update",
            "-u",
            help="Write the snapshot changes rules accepted over their expected files.",
        ),
    ] = False,
    reviewer: Annotated[
        Optional[str],
        typer.Option("--reviewer", "-r", help="Your reviewer id with -i (default: $USER)."),
    ] = None,
    apply: Annotated[
        Optional[str],
        typer.Option(
            "--apply",
            help="Write the snapshot changes humans accepted on this triage run "
            "(in any channel) over their expected files.",
        ),
    ] = None,
    exclude: Annotated[
        Optional[list[str]],
        typer.Option(
            "--exclude",
            metavar="GLOB",
            help="Never compare snapshot paths matching GLOB (repeatable; added to [triage] "
            "exclude), e.g. '**/*.bin' or 'big/**'.",
        ),
    ] = None,
) -> None:
    """Triage changed outputs: FAIL · RECOMMEND FAIL · UNSURE · RECOMMEND ACCEPT · ACCEPT, with a
    confidence.

    Rules of [triage] accept or reject the clear cases; the rest (and a blind audit sample of the
    rules' decisions) go to humans: with -i here, or in Telegram and Slack (hilbot serve), where
    accepting a snapshot change writes the actual file over the expected one (hilbot triage --apply
    RUN). Exit 1 when a change was rejected or still waits for a human, or an accepted one was not
    written.

    Examples:

    \b
    hilbot triage books books/.out
    hilbot triage nightly-41 nightly-42 --judge llm -v
    hilbot triage books books/.out -i
    hilbot triage books books/.out --exclude '**/*.bin'
    """
    from evaluation.triage_run import TriageOptions, triage_command

    context: Context = ctx.obj
    if silent and (verbose or interactive):
        from evaluation import HilbotError

        raise HilbotError(
            "--silent prints only the counts",
            fix="leave out --verbose and --interactive with --silent",
        )
    if apply is not None:
        from evaluation.triage_run import apply_command

        _print(apply_command(context.store(), apply, sources or []))
        return
    options = TriageOptions(
        mode="silent" if silent else "verbose" if verbose else "compact",
        only_failed=only_failed,
        judge=judge,
        update=update,
        interactive=interactive,
        reviewer=reviewer or default_reviewer(),
        exclude=tuple(exclude or ()),
    )
    _print(
        triage_command(
            context.store(),
            context.config(),
            sources or [],
            options,
            review=_review_in_terminal,
            show=_echo,
        )
    )


def _echo(lines: list[str]) -> None:
    for line in lines:
        typer.echo(line)


def _print(result) -> None:
    warn(result.warnings)
    _echo(result.lines)
    raise typer.Exit(result.exit_code)


def _review_in_terminal(store, config, run_id: str, reviewer: str) -> None:
    from bot.channels.terminal import review_run

    review_run(store, config, run_id, dimension="change", reviewer=reviewer, on_issues=warn_issues)
