"""``hilbot sample``: a new run holding a stratified sample of a run's items."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Optional

import typer

from ._common import Context


class AllocationChoice(str, Enum):
    proportional = "proportional"
    equal = "equal"


def sample(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="Run to sample.")],
    n: Annotated[int, typer.Option("--n", "-n", help="Items to sample (at most the run's size).")],
    by: Annotated[
        str,
        typer.Option(
            "--by",
            help="Comma-separated stratum fields: category, kind, set, verdict or any item feature.",
        ),
    ],
    allocation: Annotated[
        AllocationChoice,
        typer.Option("--allocation", help="proportional (to stratum size) or equal (per stratum)."),
    ] = AllocationChoice.proportional,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the draw: the same seed gives the same sample.")
    ] = 0,
    new_run_id: Annotated[
        Optional[str], typer.Option("--run-id", help="Id of the new run (default: RUN-sample-N).")
    ] = None,
) -> None:
    """Write a new run holding a stratified random sample of RUN's items, so a team reviews a
    representative subset.

    Proportional allocation rounds by largest remainder and gives every stratum at least one item
    when --n allows; equal allocation splits --n evenly, capped at each stratum's size. Also prints
    how many items a 95% interval of a given width needs.

    Example: hilbot sample nightly-42 --n 100 --by category,verdict --seed 7
    """
    from evaluation.samples import advice_lines, sample_run
    from evaluation.text import visible

    context: Context = ctx.obj
    drawn, placed = sample_run(
        context.store(), run_id, n, by, allocation=allocation.value, seed=seed, run_id=new_run_id
    )
    labels = [visible(s.label, newlines=False) for s in drawn.strata]
    width = max([len("stratum (" + ",".join(drawn.fields) + ")"), *map(len, labels)])
    typer.echo(
        f"{'stratum (' + ','.join(drawn.fields) + ')':<{width}}  {'items':>7}  {'sampled':>7}"
    )
    for label, stratum in zip(labels, drawn.strata):
        typer.echo(f"{label:<{width}}  {stratum.population:>7}  {stratum.sampled:>7}")
    typer.echo(f"{'total':<{width}}  {drawn.population:>7}  {drawn.n:>7}")
    typer.echo(
        f"sampled {drawn.n} of {drawn.population} items ({drawn.allocation}, seed {drawn.seed}) "
        f"into run {placed}"
    )
    typer.echo(f"review it: {context.hint('review', placed)}")
    for line in advice_lines(drawn.n, drawn.population):
        typer.echo(line)
