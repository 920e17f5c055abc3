"""``hilbot analyze NAME``: one command per registered analysis, built from its registration.

The commands are not written out here: each comes from its :class:`analysis.registry.Analysis`
(options, help, checks), built when it is asked for, so a plugin's analysis is a command too.
Every command has ``--format markdown|json``; scoped ones ``--run`` and ``--dimension``; those that
write files ``--out DIR`` (the report as ``.md`` and ``.json``, and its charts as ``.png``).
"""

from __future__ import annotations

import inspect
import sys
from typing import TYPE_CHECKING, Any, Optional

import typer
from typer.core import TyperGroup

from ._common import Context, warn

if TYPE_CHECKING:
    from analysis.registry import Analysis, Option, Output


class _Analyses(TyperGroup):
    """The ``analyze`` group: its commands are the registered analyses."""

    def list_commands(self, ctx: Any) -> list[str]:
        from analysis.registry import analyses

        return analyses.names()

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        from analysis.registry import UnknownAnalysis, analyses

        try:  # a built-in is found without reading the installed plugins
            return command(analyses.get(cmd_name))
        except UnknownAnalysis:
            return None


app = typer.Typer(
    cls=_Analyses,
    help="Analyse the ratings: validate, agreement, calibration, correlate, patterns, synthesize, "
    "triage, and any analysis a plugin adds.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def command(spec: "Analysis") -> Any:
    """The click command of one analysis: its options as flags, its docstring as help."""

    def run(ctx: typer.Context, **values: Any) -> None:
        from analysis.registry import run_analysis

        spec.check_usage(**values)  # a usage error before the configuration and the store load
        context: Context = ctx.obj
        _emit(
            run_analysis(spec.name, context.store(), context.config(), **values), values.get("fmt")
        )

    parameters = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
    ]
    parameters += [_parameter(name, kind, default) for name, kind, default in _common(spec)]
    parameters += [_parameter(option.name, *_typed(option)) for option in spec.options]
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    run.__doc__ = spec.help
    single = typer.Typer(rich_markup_mode=None, add_completion=False)
    single.command(spec.name)(run)
    return typer.main.get_command(single)


def _common(spec: "Analysis") -> list[tuple[str, Any, Any]]:
    """``--run``, ``--dimension`` (scoped analyses), ``--format``, ``--out`` (analyses that write
    files)."""
    common: list[tuple[str, Any, Any]] = []
    if spec.scoped:
        common += [
            ("run", Optional[str], typer.Option(None, "--run", "-r", help="Only this run.")),
            (
                "dimension",
                Optional[str],
                typer.Option(None, "--dimension", "-d", help="Only this dimension."),
            ),
        ]
    common.append(
        ("fmt", str, typer.Option("markdown", "--format", "-f", help="markdown or json."))
    )
    if spec.writes_files:
        common.append(
            (
                "out",
                Optional[str],
                typer.Option(
                    None,
                    "--out",
                    "-o",
                    help="Also write the report (.md, .json) and its charts (.png) here.",
                ),
            )
        )
    return common


def _typed(option: "Option") -> tuple[Any, Any]:
    """The annotation and the typer default of an analysis option (its values are checked by the
    analysis)."""
    kind: Any = str if option.many else option.kind
    default = (
        option.default
        if not option.many or option.default is None
        else ",".join([option.default] if isinstance(option.default, str) else option.default)
    )
    declared = [option.option] + ([option.short] if option.short else [])
    described = option.describe()
    help_text = described if not described or described.endswith(".") else described + "."
    if option.required and option.default is None:
        return kind, typer.Option(..., *declared, help=help_text)
    return (kind if default is not None else Optional[kind]), typer.Option(
        default, *declared, help=help_text
    )


def _parameter(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotation
    )


def _emit(output: "Output", fmt: str | None) -> None:
    from evaluation.text import for_terminal

    warn(output.warnings)
    text = output.text.rstrip("\n")
    typer.echo(for_terminal(text, fmt or "markdown") if sys.stdout.isatty() else text)
    for path in output.files:
        print(f"wrote {path}", file=sys.stderr)
    if output.exit_code:
        raise typer.Exit(output.exit_code)
