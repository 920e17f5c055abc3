"""``hilbot run`` and ``hilbot compare``."""

from __future__ import annotations

import sys
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ._common import Context

if TYPE_CHECKING:
    from evaluation import HilbotConfig, Store
    from evaluation.judges import Judge


class CompareFormat(str, Enum):
    markdown = "markdown"
    json = "json"


def _judge(name: str | None, config: "HilbotConfig", store: "Store") -> "Judge":
    from evaluation.judges import default_judge, get_judge
    from evaluation.llm import has_key, key_hint

    if name is None:
        name = default_judge(config)
        if name == "lexical":
            how = 'pass --judge llm or set [judge] name = "llm"' + (
                "" if has_key(config.llm) else f" with {key_hint(config.llm)} set"
            )
            typer.echo(
                "note: judging with the lexical judge (local methods, nothing sent). AI review is "
                f"opt-in: {how}.",
                err=True,
            )
    return get_judge(name, config, store)


class _Printer:
    """Prints each finished item in the chosen mode and drives a progress bar on a terminal's
    stderr."""

    def __init__(self, mode: str, total: int, judge=None):
        from evaluation.output import quiet_item, verbose_item
        from evaluation.text import visible

        self.mode, self.total, self.judge = (
            mode,
            total,
            judge,
        )  # the run header's JudgeInfo: labels come from its kind
        self.verbose_item, self.quiet_item, self.visible = verbose_item, quiet_item, visible
        self.progress = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self.progress = Progress(
                "judging",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.task = self.progress.add_task("run", total=total)
            self.progress.start()

    def __call__(self, position: int, item) -> None:
        if self.mode == "verbose":
            lines = self.verbose_item(item, position, self.total, judge=self.judge) + [""]
        elif self.mode == "quiet":
            lines = [self.quiet_item(item, position, self.total, judge=self.judge)]
        else:
            lines = []
        for line in lines:
            typer.echo(
                self.visible(line, newlines=False)
            )  # with a live bar, rich redirects stdout above it
        if self.progress:
            self.progress.advance(self.task)

    def stop(self) -> None:
        if self.progress:
            self.progress.stop()


def _report(
    outcome, mode: str, store: "Store", tolerance: float = 0.0, review: str = "hilbot review"
) -> None:
    """The average, empty and unjudged items, the regression verdict (and detail), where the run is.

    Exits 1 for CI, in every mode alike, when the gate fails: a regression, more unjudged items than
    ``[judge] max_unjudged`` tolerates, every query empty, or no overall score at all. A baseline
    unlike the run is a warning; no baseline at all is a note (in the detail; on stderr if silent).
    """
    from evaluation.output import gate_failed, silent_lines
    from evaluation.text import visible

    report, run_id = outcome.regressions, outcome.run.run_id
    warning = report.warning()
    if warning:
        typer.echo(f"warning: {warning}", err=True)
    for line in silent_lines(outcome.run, report, tolerance):
        typer.echo(line)
    if mode != "silent":
        for line in report.lines():
            typer.echo(visible(line, newlines=False))  # the regressed queries' text
        typer.echo(f"run {run_id}: {store.run_path(run_id)}  ·  review it: {review} {run_id}")
    elif report.first_of_its_line():
        typer.echo(f"note: {visible(report.first_of_its_line() or '', newlines=False)}", err=True)
    if gate_failed(outcome.run, report, tolerance):
        raise typer.Exit(1)


def run(
    ctx: typer.Context,
    set_spec: Annotated[
        str,
        typer.Option(
            "--set", help="Query set: a name, all (curated sets), generated/*, generated/<date>."
        ),
    ] = "core",
    cases: Annotated[
        Optional[str],
        typer.Option(
            "--cases", help="YAML test cases (a file or a directory) instead of a query set."
        ),
    ] = None,
    target: Annotated[
        Optional[str], typer.Option("--target", help="module:function called with each query.")
    ] = None,
    target_cmd: Annotated[
        Optional[str],
        typer.Option(
            "--target-cmd",
            help="Command printing JSON or text. With {query} it runs without a "
            "shell, {query} a whole argument no option can take (mytool --json "
            "-- {query}); without, in the shell, the query on stdin. "
            "$HILBOT_QUERY holds it either way.",
        ),
    ] = None,
    outputs: Annotated[
        Optional[str], typer.Option("--outputs", help="Precomputed outputs (JSONL/JSON, by id).")
    ] = None,
    judge: Annotated[
        Optional[str],
        typer.Option(
            "--judge",
            help="lexical (default, local methods) or llm (opt-in: sends items to [llm]).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="One line per query.")] = False,
    silent: Annotated[
        bool,
        typer.Option(
            "--silent",
            help="Only the average and the verdict. Every mode exits 1 on a regression, "
            "when items could not be judged ([judge] max_unjudged) or when every "
            "query came back empty.",
        ),
    ] = False,
    baseline: Annotated[
        Optional[str],
        typer.Option(
            "--baseline",
            help="Run to check regressions against (default: the previous complete run "
            "of the set with the same target and judge).",
        ),
    ] = None,
    run_id: Annotated[
        Optional[str], typer.Option("--run-id", help="Id of the new run (default: a timestamp).")
    ] = None,
    label: Annotated[
        Optional[str],
        typer.Option(
            "--label", help="Name in model comparisons (default: the model the target reports)."
        ),
    ] = None,
    queries_dir: Annotated[
        Optional[str], typer.Option("--dir", help="Query sets directory (default: [queries] dir).")
    ] = None,
) -> None:
    """Evaluate a query set or YAML test cases against the system under test and judge every item.

    Verbose by default; the run is written to results/runs/<run-id>.jsonl as
    it goes, so an interrupted run keeps what it judged. Reviewers then rate it: hilbot review RUN.

    Examples:

    \b
    hilbot run --set core --target examples.docs_search:search
    hilbot run --cases tests/fixtures/cases --outputs tests/fixtures/outputs/rules-gpt-4.1.jsonl --silent
    """
    from evaluation.imports import DEFAULT_DIMENSIONS, default_run_id
    from evaluation.runner import RunPlan, evaluate, plan_cases
    from evaluation.targets import make_target

    context: Context = ctx.obj
    config, store = context.config(), context.store()
    set_name, kind, case_list = plan_cases(
        config, set_spec=set_spec, cases_path=cases, queries_dir=queries_dir
    )
    the_target = make_target(
        target=target, command=target_cmd, outputs=outputs, timeout_s=config.targets.timeout_s
    )
    plan = RunPlan(
        run_id or default_run_id(store),
        set_name,
        kind,
        case_list,
        the_target,
        _judge(judge, config, store),
        label=label,
        dimensions=DEFAULT_DIMENSIONS[kind],
        concurrency=config.targets.concurrency,
        generated_id=run_id is None,
    )
    mode = "silent" if silent else "quiet" if quiet else "verbose"
    printer = _Printer(mode, len(case_list), plan.judge.info())
    try:
        outcome = evaluate(store, config, plan, baseline=baseline, on_item=printer)
    except KeyboardInterrupt:
        printer.stop()
        typer.echo(
            f"interrupted: the items judged so far are in {store.run_path(plan.run_id)}", err=True
        )
        raise typer.Exit(130)
    printer.stop()
    _report(outcome, mode, store, config.judge.max_unjudged, context.hint("review"))


def compare(
    ctx: typer.Context,
    run_ids: Annotated[
        list[str],
        typer.Argument(help="Runs to compare (e.g. one per model over the same test cases)."),
    ],
    fmt: Annotated[
        CompareFormat, typer.Option("--format", "-f", help="markdown or json.")
    ] = CompareFormat.markdown,
) -> None:
    """Compare runs: the comparison table (Overall, Quote Quality, Reasoning, Correctness, Speed,
    Cost) and the quote coverage matrix of each test case.

    Example: hilbot compare claude gpt41 grok3 --format markdown
    """
    from evaluation.comparison import compare as build

    from ._common import warn

    store = ctx.obj.store()
    issues: list = []
    comparison = build([store.load_run(r, issues) for r in run_ids])
    warn(issues)
    typer.echo(comparison.to_json() if fmt is CompareFormat.json else comparison.to_markdown())
