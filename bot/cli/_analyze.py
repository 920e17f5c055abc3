"""``hilbot analyze …``: validation, agreement, calibration, correlation, patterns, synthesis.

Each command parses its options and calls one function of :mod:`analysis.commands`; reports
are Markdown on stdout (``--format json`` for JSON), ``--out DIR`` also writes them with charts.
"""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from ._common import Context, warn

app = typer.Typer(help="Analyse the ratings: validate, agreement, calibration, correlate, patterns, synthesize.",
                  no_args_is_help=True, rich_markup_mode=None)

Run = Annotated[Optional[str], typer.Option("--run", "-r", help="Only this run.")]
Dim = Annotated[Optional[str], typer.Option("--dimension", "-d", help="Only this dimension.")]
Format = Annotated[str, typer.Option("--format", "-f", help="markdown or json.")]
Out = Annotated[Optional[str], typer.Option("--out", "-o", help="Also write the report (.md, .json) and its charts (.png) here.")]


BOOTSTRAP_MAX = 100_000
SEED_MAX = 2**32 - 1
BUCKETS_MAX = 100


def in_range(option: str, value: float, low: float, high: float) -> None:
    """A numeric option outside [low, high] (NaN, ±inf included) is a one-line error naming it and the range."""
    from evaluation import HilbotError

    if not low <= value <= high:  # False for NaN
        kind = "a whole number" if isinstance(value, int) else "a number"
        raise HilbotError(f"{option} {value} is out of range", fix=f"use {kind} from {_plain(low)} to {_plain(high)}")


def _plain(number: float) -> str:
    return str(number) if isinstance(number, int) else f"{number:g}"


def _emit(output) -> None:
    warn(output.warnings)
    typer.echo(output.text.rstrip("\n"))
    for path in output.files:
        print(f"wrote {path}", file=sys.stderr)
    if output.exit_code:
        raise typer.Exit(output.exit_code)


def _check_format(fmt: str) -> None:
    from evaluation import HilbotError

    if fmt not in ("markdown", "json"):
        raise HilbotError(f"unknown format {fmt!r}", fix="use --format markdown or --format json")


@app.command("validate")
def validate(ctx: typer.Context, fmt: Format = "markdown", out: Out = None) -> None:
    """Schema and consistency checks of ratings.jsonl: `file:line: flag` lines and counts.

    Contradictions are flagged, never rejected; exit 1 only on schema errors.
    Example: hilbot analyze validate
    """
    from analysis import commands

    _check_format(fmt)
    context: Context = ctx.obj
    _emit(commands.validate(context.store(), context.config(), fmt=fmt, out=out))


@app.command("agreement")
def agreement(ctx: typer.Context, run: Run = None, dimension: Dim = None, fmt: Format = "markdown", out: Out = None,
              n_boot: Annotated[int, typer.Option("--bootstrap", help="Bootstrap replicates for the 95% CIs (0–100000).")] = 1000,
              seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed (0–4294967295).")] = 0) -> None:
    """Inter-rater agreement: Cohen's κ per pair, Fleiss' κ, Krippendorff's α (4 levels), with CIs and bands.

    Example: hilbot analyze agreement --run demo-docs-search
    """
    from analysis import commands

    _check_format(fmt)
    in_range("--bootstrap", n_boot, 0, BOOTSTRAP_MAX)
    in_range("--seed", seed, 0, SEED_MAX)
    context: Context = ctx.obj
    _emit(commands.agreement(context.store(), context.config(), run=run, dimension=dimension, fmt=fmt, out=out,
                             n_boot=n_boot, seed=seed))


@app.command("calibration")
def calibration(ctx: typer.Context, run: Run = None, dimension: Dim = None, fmt: Format = "markdown", out: Out = None,
                by: Annotated[str, typer.Option("--by", help="Group by: comma-separated of dimension, metric, run_id, category, judge, "
                                                             "prompt_hash, source_type.")] = "dimension") -> None:
    """The AI judge against the humans: Spearman ρ, Kendall τ, κ on categories, confusion matrix, Δ, worst items.

    Example: hilbot analyze calibration --by dimension,category
    """
    from analysis import commands

    _check_format(fmt)
    context: Context = ctx.obj
    groups = tuple(part.strip() for part in by.split(",") if part.strip())
    _emit(commands.calibration(context.store(), context.config(), run=run, dimension=dimension, by=groups, fmt=fmt, out=out))


@app.command("correlate")
def correlate(ctx: typer.Context,
              feature: Annotated[str, typer.Option("--feature", help="An item feature: numbers (or number text), or ordered category labels, "
                                                                     "e.g. leap_distance.")],
              run: Run = None, dimension: Dim = None, fmt: Format = "markdown", out: Out = None,
              buckets: Annotated[Optional[int], typer.Option("--buckets", help="Quantile buckets, 1–100 (default: distinct values if ≤ 10, else 5); "
                                                                           "not for category features.")] = None,
              expect: Annotated[str, typer.Option("--expect", help="decreasing (larger values rate worse) or increasing.")] = "decreasing",
              order: Annotated[Optional[str], typer.Option("--order", help="A category feature's labels, lowest first, comma-separated, "
                                                                         "e.g. none,small,medium,large,max (default: a built-in order of "
                                                                         "well-known labels).")] = None) -> None:
    """Ratings against a feature: success rate per bucket with Wilson CIs, monotonicity, Spearman ρ.

    Numbers and number text ("3") are the same value; category labels are ordered by --order.
    Example: hilbot analyze correlate --feature leap_distance --order none,small,medium,large,max
    """
    from analysis import commands

    _check_format(fmt)
    if buckets is not None:
        in_range("--buckets", buckets, 1, BUCKETS_MAX)
    levels = None if order is None else tuple(part.strip() for part in order.split(",") if part.strip())
    context: Context = ctx.obj
    _emit(commands.correlate(context.store(), context.config(), feature=feature, run=run, dimension=dimension, buckets=buckets,
                             expect=expect, fmt=fmt, out=out, order=levels))


@app.command("patterns")
def patterns(ctx: typer.Context, run: Run = None, dimension: Dim = None, fmt: Format = "markdown", out: Out = None,
             window_days: Annotated[int, typer.Option("--window-days", help="Days per drift window (1–3650).")] = 7) -> None:
    """Patterns by quality, source type, category and concern tag; drift; patterns that regressed.

    Example: hilbot analyze patterns --window-days 7
    """
    from analysis import commands
    from analysis.patterns import MAX_WINDOW_DAYS

    _check_format(fmt)
    in_range("--window-days", window_days, 1, MAX_WINDOW_DAYS)
    context: Context = ctx.obj
    _emit(commands.patterns(context.store(), context.config(), run=run, dimension=dimension, window_days=window_days,
                            fmt=fmt, out=out))


@app.command("synthesize")
def synthesize(ctx: typer.Context, run: Run = None, dimension: Dim = None, fmt: Format = "markdown",
               llm: Annotated[bool, typer.Option("--llm", help="Have the LLM write it (sends notes and scores to [llm]).")] = False) -> None:
    """Synthesis and action items from the notes and scores, appended as a review_summary record.

    Without --llm the synthesis is statistical (top concerns, worst items, largest AI-human gaps).
    Example: hilbot analyze synthesize --run demo-docs-search --llm
    """
    from analysis import commands

    _check_format(fmt)
    context: Context = ctx.obj
    _emit(commands.synthesize(context.store(), context.config(), run=run, dimension=dimension, use_llm=llm, fmt=fmt))
