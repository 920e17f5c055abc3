"""Learning from the humans' corrections of ``hilbot triage``: how often the AI and its rules are
right. The ``triage`` analysis, as registered: the ``hilbot analyze triage`` command (its options,
Markdown, chart and digest line), and every public name of the package; what was decided is read in
:mod:`~analysis.triage.decisions`, the report's dataclasses are in :mod:`~analysis.triage.report`,
the computation and its conventions in :mod:`~analysis.triage.compute`, the Markdown, the digest
line and the chart in :mod:`~analysis.triage.markdown`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from evaluation._lazy import lazy_getattr

from ..errors import AnalysisError
from ..registry import Inputs, Option, analysis
from .markdown import digest_line, markdown_lines, reliability_png
from .report import (
    CATEGORIES,
    VERSION,
    Accuracy,
    AtThreshold,
    AuditAccuracy,
    Calibration,
    ConfusionRow,
    Counts,
    PathGroup,
    ReliabilityBin,
    SafeThreshold,
    TriageReport,
)

_EXPORTS = {
    "BIN_EDGES": "compute",
    "TOP_LEVEL": "compute",
    "segment": "compute",
    "triage_report": "compute",
    "DECISION_COLUMNS": "decisions",
    "DIMENSION": "decisions",
    "changes_table": "decisions",
    "human_decisions": "decisions",
    "read_decisions": "decisions",
}
"""The computation's and the decisions' public names, imported on first use: they bring numpy,
pandas and the log's records, which ``--help`` and a usage error never need."""

if TYPE_CHECKING:
    import pandas as pd

    from evaluation.log import LogIssue

    from .compute import BIN_EDGES as BIN_EDGES
    from .compute import TOP_LEVEL as TOP_LEVEL
    from .compute import segment as segment
    from .compute import triage_report as triage_report
    from .decisions import DECISION_COLUMNS as DECISION_COLUMNS
    from .decisions import DIMENSION as DIMENSION
    from .decisions import changes_table as changes_table
    from .decisions import human_decisions as human_decisions
    from .decisions import read_decisions as read_decisions


def _charts(report: TriageReport, inputs: Inputs) -> dict[str, Any]:
    return {"triage": lambda: reliability_png(report)}


def decisions_in(inputs: Inputs) -> pd.DataFrame:
    """The triage decisions of the store's log; issues the loader has not reported go to the
    warnings."""
    from .decisions import read_decisions

    issues: list[LogIssue] = []
    decisions = read_decisions(inputs.store.ratings.path, issues)
    inputs.warnings += [text for text in map(str, issues) if text not in inputs.warnings]
    return decisions


def _digest(inputs: Inputs, runs: Sequence[str] | None) -> list[str]:
    """The digest's triage line (:func:`digest_line`) over the triage decisions of the log, of the
    ``runs`` listed (None: all); none without a decision. Bad lines are not reported again: the
    loader of ``inputs`` reported them."""
    from .compute import triage_report
    from .decisions import read_decisions

    decisions = read_decisions(inputs.store.ratings.path)
    if runs is not None:
        decisions = decisions[decisions["run_id"].isin(list(runs))]
    if not len(decisions):
        return []
    line = digest_line(triage_report(decisions, inputs.frames.ratings, inputs.config.triage))
    return [line] if line else []


@analysis(
    "triage",
    markdown=markdown_lines,
    charts=_charts,
    digest=_digest,
    options=[
        Option(
            "target_precision",
            float,
            0.99,
            "Share of a threshold's changes the humans must agree with",
            low=0.5,
            high=1,
        ),
        Option(
            "min_n", int, 20, "Fewest human-decided changes a threshold needs", low=1, high=10000
        ),
    ],
)
def triage_command(inputs: Inputs, *, target_precision: float, min_n: int) -> TriageReport:
    """How often the humans agree with the triage: audit accuracy, calibration, safe auto-accept/reject thresholds.

    Example: hilbot analyze triage --target-precision 0.99
    """
    from .compute import triage_report
    from .decisions import DIMENSION

    if inputs.dimension is not None:
        raise AnalysisError(
            "hilbot analyze triage has no --dimension: every change is decided on the dimension "
            f"{DIMENSION!r}",
            fix="leave out --dimension (use --run to see one triage run)",
        )
    ratings = (
        inputs.frames.ratings
    )  # first: an unknown --run is an error, and the loader's warnings come first
    decisions = decisions_in(inputs)
    if inputs.run is not None and not (decisions["run_id"] == inputs.run).any():
        raise AnalysisError(
            f"run {inputs.run!r} has no triage decisions",
            fix="name a run `hilbot triage` made (it prints the id), or leave out --run",
        )
    return triage_report(
        decisions,
        ratings,
        inputs.config.triage,
        run=inputs.run,
        target_precision=target_precision,
        min_n=min_n,
    )


__all__ = [
    "BIN_EDGES",
    "CATEGORIES",
    "DECISION_COLUMNS",
    "DIMENSION",
    "TOP_LEVEL",
    "VERSION",
    "Accuracy",
    "AtThreshold",
    "AuditAccuracy",
    "Calibration",
    "ConfusionRow",
    "Counts",
    "PathGroup",
    "ReliabilityBin",
    "SafeThreshold",
    "TriageReport",
    "changes_table",
    "digest_line",
    "human_decisions",
    "read_decisions",
    "reliability_png",
    "segment",
    "triage_report",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
