"""The model comparison: a profile per run and a quote coverage matrix per test case.

Overall is the mean of the items' weighted aggregates; Quote Quality, Reasoning and Correctness
are computed per item and averaged (items where a dimension is undefined
are left out of its mean); Speed is the mean latency and Cost the mean cost per item (the
system's own cost plus judging). Items whose judgment failed count in no column but ``failed``.
A run without a summary (cut short, or still being evaluated) is marked incomplete: its numbers
cover only the items it has.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from statistics import mean
from typing import Sequence

from . import metrics
from .records import ItemData
from .runs import Run
from .text import visible


@dataclass
class Profile:
    """One row of the comparison table (percentages 0–100, seconds, dollars)."""

    run_id: str
    label: str
    judge: str
    items: int
    failed: int
    overall: float | None
    quote_quality: float | None
    reasoning: float | None
    correctness: float | None
    speed_s: float | None
    cost_usd: float | None
    complete: bool = True
    """Whether the run has its summary; an incomplete one was cut short or is still being
    evaluated."""
    expected_items: int | None = None
    """How many items the run set out to evaluate (its header's ``item_count``), when known."""


@dataclass
class CoverageRow:
    """One ground-truth context of a test case and whether each run's quotes contain it."""

    text: str
    priority: str
    found: dict[str, bool | None] = field(default_factory=dict)


@dataclass
class Comparison:
    """The table and the coverage matrices."""

    profiles: list[Profile]
    coverage: dict[str, list[CoverageRow]]

    def to_json(self) -> str:
        return json.dumps(
            {
                "profiles": [asdict(p) for p in self.profiles],
                "coverage": {k: [asdict(r) for r in rows] for k, rows in self.coverage.items()},
            },
            indent=2,
            ensure_ascii=False,
        )

    def to_markdown(self) -> str:
        """The table and the matrices for people: text from the runs (labels, contexts) made
        visible."""
        return visible(
            "\n".join(_table(self.profiles) + [""] + _matrices(self.profiles, self.coverage))
        )


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return mean(present) if present else None


def label_of(run: Run) -> str:
    """The header's label, else the model most items report, else the run id."""
    if run.header.label:
        return run.header.label
    models = [i.model for i in run.items if i.model]
    return max(set(models), key=models.count) if models else run.run_id


def _cost(item: ItemData) -> float | None:
    parts = [c for c in (item.cost_usd, item.evaluation.cost_usd) if c is not None]
    return sum(parts) if parts else None


def profile_of(run: Run) -> Profile:
    """A run's row of the comparison table."""
    judged = [i for i in run.items if not i.evaluation.error and "overall" in i.evaluation.scores]
    dims = [metrics.profile(i.evaluation.scores) for i in judged]
    latencies = [i.latency_ms / 1000 for i in run.items if i.latency_ms is not None]
    return Profile(
        run.run_id,
        label_of(run),
        run.header.judge.name,
        len(run.items),
        len(run.items) - len(judged),
        _mean([100 * i.evaluation.scores["overall"] for i in judged]),
        _mean([d["quote_quality"] for d in dims]),
        _mean([d["reasoning"] for d in dims]),
        _mean([d["correctness"] for d in dims]),
        _mean(latencies),
        _mean([_cost(i) for i in run.items]),
        run.complete,
        run.header.item_count,
    )


def coverage_matrix(runs: list[Run]) -> dict[str, list[CoverageRow]]:
    """Per test case with ground-truth contexts: which run found which context."""
    labels = [label_of(run) for run in runs]
    matrix: dict[str, list[CoverageRow]] = {}
    for run, label in zip(runs, labels):
        for item in run.items:
            if not item.ground_truth_contexts:
                continue
            rows = matrix.setdefault(
                item.id, [CoverageRow(c.text, c.priority) for c in item.ground_truth_contexts]
            )
            covered = item.evaluation.coverage or metrics.coverage(
                item.ground_truth_contexts, item.quotes
            )
            for row, ok in zip(rows, covered):
                row.found[label] = None if item.error else ok
    for rows in matrix.values():
        for row in rows:
            row.found = {label: row.found.get(label) for label in labels}
    return matrix


def compare(runs: list[Run]) -> Comparison:
    """The comparison of ``runs`` in the order given."""
    return Comparison([profile_of(r) for r in runs], coverage_matrix(runs))


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}%"


def _table(profiles: list[Profile]) -> list[str]:
    lines = ["## Model Comparison", ""]
    for p in profiles:
        if (
            not p.complete
        ):  # said before the table, so nobody reads a half run's numbers as a whole one's
            lines += [_incomplete_warning(p), ""]
    lines += [
        "| Model | Overall | Quote Quality | Reasoning | Correctness | Speed | Cost |",
        "|-------|---------|---------------|-----------|-------------|-------|------|",
    ]
    for p in profiles:
        speed = "—" if p.speed_s is None else f"{p.speed_s:.1f}s"
        cost = "—" if p.cost_usd is None else f"${p.cost_usd:.2f}"
        label = p.label if p.complete else f"{p.label} (incomplete)"
        lines.append(
            f"| {label} | {_pct(p.overall)} | {_pct(p.quote_quality)} | {_pct(p.reasoning)} | "
            f"{_pct(p.correctness)} | {speed} | {cost} |"
        )
    lines += [
        "",
        "**Dimensions:**",
        "- Overall = weighted aggregate of the answer metrics ([judge.metric_weights])",
        "- Quote Quality = 0.5×quote_recall + 0.3×quote_faithfulness + 0.2×quote_precision",
        "- Reasoning = explanation_faithfulness",
        "- Correctness = answer_correctness",
        "- Speed = mean latency per item; Cost = mean cost per item (system + judge)",
    ]
    judges = sorted({p.judge for p in profiles})
    lines.append(
        f"- Judged by: {', '.join(judges)}"
        + (" (local methods, no LLM)" if judges == ["lexical"] else "")
    )
    failed = [p for p in profiles if p.failed]
    lines += [
        f"- {p.label}: {p.failed} of {p.items} items have no score (failed judgment or target)"
        for p in failed
    ]
    return lines


def _incomplete_warning(p: Profile) -> str:
    size = (
        f"{p.items} of {p.expected_items} items"
        if p.expected_items is not None
        else f"{p.items} items"
    )
    return (
        f"⚠ Incomplete run: {p.run_id} ({p.label}) has no summary, {size}: it was cut short or is "
        "still being evaluated, so its numbers cover only the items it has."
    )


def _mark(value: bool | None) -> str:
    return "—" if value is None else "✅" if value else "❌"


def _matrices(profiles: list[Profile], coverage: dict[str, list[CoverageRow]]) -> list[str]:
    labels = [p.label for p in profiles]
    lines: list[str] = []
    for test_id, rows in coverage.items():
        lines += [
            f"### Quote Coverage: {test_id}",
            "",
            "| Ground Truth | Priority | " + " | ".join(labels) + " |",
            "|--------------|----------|" + "|".join("-" * (len(x) + 2) for x in labels) + "|",
        ]
        for row in rows:
            text = row.text if len(row.text) <= 60 else row.text[:57].rstrip() + "..."
            priority = "⭐ Critical" if row.priority == "critical" else row.priority.capitalize()
            lines.append(
                f"| {text} | {priority} | "
                + " | ".join(_mark(row.found.get(x)) for x in labels)
                + " |"
            )
        lines.append("")
    if coverage:
        unreached = (
            ""
            if all(p.complete for p in profiles)
            else " (or, for an incomplete run, an item it never reached)"
        )
        lines.append(
            "**Legend**: ⭐ Critical rules weigh more in quote recall ([judge.priority_weights]); "
            "— = no answer" + unreached
        )
    return lines
