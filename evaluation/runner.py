"""Executing a run: each case through the target, then the judge, appended to the run's log as it
goes.

The run header is written first and every judged item is appended (and fsynced) the moment it
is done, so an interrupted run keeps what it judged; the summary line is written last. Items
are reported to ``on_item`` in case order whatever order they finish in.

A target that returns nothing for a case (no results, no answer text) is not sent to the judge:
the item scores 0, so an empty run can neither pass nor hide a drop from its baseline.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .cases import Case
from .judges import Judge
from .output import returned_nothing
from .records import Evaluation, ItemData, QueryEvaluation, RunHeader, RunSummary
from .runs import Run, RunKind, average_scores
from .store import Store
from .targets import Target, TargetOutput

if TYPE_CHECKING:
    from .config import HilbotConfig
    from .regressions import RegressionReport


@dataclass
class RunPlan:
    """What to run: the cases, the system under test and the judge."""

    run_id: str
    set_name: str
    kind: RunKind
    cases: list[Case]
    target: Target
    judge: Judge
    label: str | None = None
    dimensions: list[str] = field(default_factory=lambda: ["overall"])
    concurrency: int = 4
    baseline: str | None = None
    generated_id: bool = False
    """Whether hilbot made up ``run_id`` (then a taken one is replaced by the next free id)."""


def item_from(case: Case, output: TargetOutput) -> ItemData:
    """The item a case and its output make (not yet judged)."""
    return ItemData(
        id=case.id,
        query=case.query,
        results=output.results,
        answer=output.answer,
        quotes=output.quotes,
        contexts=output.contexts,
        ground_truth=case.ground_truth_answers,
        ground_truth_contexts=case.ground_truth_contexts,
        latency_ms=output.latency_ms,
        cost_usd=output.cost_usd,
        usage=output.usage,
        model=output.model,
        error=output.error,
        features={"source": case.source} if case.source else {},
    )


async def _evaluate_one(plan: RunPlan, case: Case, gate: asyncio.Semaphore) -> ItemData:
    async with gate:
        output = await plan.target(case)
    item = item_from(case, output)
    if output.error:
        item.evaluation = Evaluation(
            error=f"target failed: {output.error}", judge=plan.judge.info().name
        )
    elif returned_nothing(item):
        item.evaluation = _nothing(plan)
    else:
        item.evaluation = await plan.judge.judge(case, item)
    return item


def _nothing(plan: RunPlan) -> Evaluation:
    """The evaluation of an item the target returned nothing for: overall 0, a FAIL, unjudged."""
    what = "no results" if plan.kind == "search" else "an empty answer"
    reason = f"the target returned {what}: scored 0 without judging"
    return Evaluation(
        scores={"overall": 0.0},
        verdict="FAIL",
        judge=plan.judge.info().name,
        reasons={"overall": reason},
        rationale=reason,
    )


class _InOrder:
    """Calls ``on_item(position, item)`` in case order as items finish in any order."""

    def __init__(self, on_item: Callable[[int, ItemData], None] | None):
        self.on_item = on_item
        self.done: dict[int, ItemData] = {}
        self.next = 0

    def add(self, index: int, item: ItemData) -> None:
        self.done[index] = item
        while self.next in self.done:
            if self.on_item:
                self.on_item(self.next + 1, self.done[self.next])
            self.next += 1


async def execute(
    store: Store, plan: RunPlan, on_item: Callable[[int, ItemData], None] | None = None
) -> Run:
    """Run every case; the run file grows item by item and ends with the summary."""
    header = RunHeader(
        run_id=plan.run_id,
        set=plan.set_name,
        kind=plan.kind,
        judge=plan.judge.info(),
        dimensions=plan.dimensions,
        item_count=len(plan.cases),
        target=plan.target.name,
        label=plan.label,
        baseline=plan.baseline,
    )
    log, plan.run_id = await asyncio.to_thread(store.start_run, header, generated=plan.generated_id)
    header.run_id = plan.run_id
    gate, order, items = asyncio.Semaphore(plan.concurrency), _InOrder(on_item), {}

    async def one(index: int, case: Case) -> None:
        item = await _evaluate_one(plan, case, gate)
        await log.aappend(QueryEvaluation(run_id=plan.run_id, data=item))
        items[index] = item
        order.add(index, item)

    await asyncio.gather(*(one(i, c) for i, c in enumerate(plan.cases)))
    ordered = [items[i] for i in range(len(plan.cases))]
    summary = RunSummary(
        run_id=plan.run_id, item_count=len(ordered), averageScores=average_scores(ordered)
    )
    await log.aappend(summary)
    return Run(plan.run_id, header, ordered, summary)


@dataclass
class Outcome:
    """A finished run and its regression check."""

    run: Run
    regressions: "RegressionReport"


def plan_cases(
    config: "HilbotConfig", *, set_spec: str, cases_path: str | None, queries_dir: str | None
) -> tuple[str, RunKind, list[Case]]:
    """(set name, kind, cases) from ``--cases`` (answers) or ``--set`` (query sets)."""
    from .cases import cases_from_sets, load_cases

    if cases_path:
        return (
            Path(cases_path).stem,
            "answer",
            load_cases(cases_path, config.judge.priority_weights),
        )
    from .queries import QuerySets

    sets = QuerySets(queries_dir or config.queries.dir).resolve(set_spec)
    return set_spec, "search", cases_from_sets(sets)


def evaluate(
    store: Store,
    config: "HilbotConfig",
    plan: RunPlan,
    *,
    baseline: str | None = None,
    on_item: Callable[[int, ItemData], None] | None = None,
) -> Outcome:
    """Execute a plan, then check it against ``baseline`` (default: the previous complete run of the
    set with the same target and judge; see :mod:`evaluation.regressions`)."""
    from .regressions import detect, previous_run

    if baseline is not None:
        store.load_run(baseline)  # a wrong baseline id fails before any work is done
    plan.label = plan.label or getattr(plan.target, "model", None)  # --outputs: their model
    target, judge = plan.label or plan.target.name, plan.judge.info().name
    skipped: list[str] = []
    plan.baseline = baseline
    if baseline is None:
        plan.baseline, skipped = previous_run(
            store, plan.set_name, plan.kind, target=target, judge=judge
        )
    run = asyncio.run(execute(store, plan, on_item))
    report = detect(
        run, store.load_run(plan.baseline) if plan.baseline else None, config.regression, skipped
    )
    return Outcome(run, report)
