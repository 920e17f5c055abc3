"""The ``hilbot triage`` command: triage the sources and report (:func:`triage_command`), then,
as asked, write what rules accepted, have a human review the rest in the terminal and write what
they accepted; or write what humans accepted on an earlier triage run (:func:`apply_command`,
``--apply``). Each returns the lines to print, the warnings and the exit code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

from .text import visible
from .triage import TriageError
from .triage_apply import Applied, apply_accepted, apply_rule_accepted
from .triage_decisions import human_decisions
from .triage_report import decided_lines, failed, report_lines

if TYPE_CHECKING:
    from .config import HilbotConfig
    from .store import Store
    from .triage_run import TriageOutcome


@dataclass(frozen=True)
class TriageOptions:
    """What ``hilbot triage`` was asked for."""

    mode: str = "compact"
    """``compact``, ``verbose`` or ``silent``."""
    only_failed: bool = False
    """Leave out the changes a rule accepted."""
    judge: str | None = None
    """The triage judge (default: ``[triage] judge``)."""
    update: bool = False
    """Write the snapshot changes rules accepted over their expected files."""
    interactive: bool = False
    """Review the changes left for humans now, then write what they accepted."""
    reviewer: str = "me"
    """Who reviews, with ``interactive``."""
    exclude: tuple[str, ...] = ()
    """Glob patterns of snapshot paths never compared, besides ``[triage] exclude``."""


@dataclass
class CommandResult:
    """What a triage command prints and its exit code."""

    lines: list[str]
    exit_code: int = 0
    warnings: list[str] = field(default_factory=list)


def triage_command(
    store: "Store",
    config: "HilbotConfig",
    sources: Sequence[str],
    options: TriageOptions,
    review: Callable[["Store", "HilbotConfig", str, str], None] | None = None,
    show: Callable[[list[str]], None] | None = None,
) -> CommandResult:
    """``hilbot triage``: triage, report, optionally review (``review`` runs a terminal review of a
    run) and apply.

    With a review, the report is handed to ``show`` first, so it is read before the cards come.
    """
    from .triage_run import run_triage

    outcome = run_triage(store, config, sources, judge=options.judge, exclude=options.exclude)
    lines = report_lines(outcome, mode=options.mode, only_failed=options.only_failed)
    warnings = outcome.warnings + _sent_warning(store, outcome)
    applied = (
        apply_rule_accepted(store, outcome) if options.update or options.interactive else Applied()
    )
    decisions: dict[str, str] = {}
    if (
        options.interactive
        and review is not None
        and any(t.decision.to_humans for t in outcome.changes)
    ):
        if show is not None:
            show(lines)
            lines = []
        review(store, config, outcome.run_id, options.reviewer)
        decisions = human_decisions(store, store.load_run(outcome.run_id))
        human = apply_accepted(store, outcome.run_id, decisions)
        applied.written += human.written
        applied.unchanged += human.unchanged
        applied.refused += human.refused
        lines += ["", *decided_lines(outcome, decisions)]
    lines += _applied_lines(applied)
    return CommandResult(lines, 1 if failed(outcome, decisions) or applied.refused else 0, warnings)


def _sent_warning(store: "Store", outcome: TriageOutcome) -> list[str]:
    """Outputs may hold sensitive data: say where they went, and where the record of it is."""
    sent = [t for t in outcome.changes if t.triage.judge_kind == "llm"]
    if not sent:
        return []
    what = "1 change was" if len(sent) == 1 else f"{len(sent)} changes were"
    return [
        f"{what} sent to {outcome.judge} (each prompt as sent is in "
        f"{store.root / 'llm-calls.jsonl'}; [llm] redact masks patterns, and a local model keeps "
        "them on your network)"
    ]


def apply_command(store: "Store", run_id: str, extra: Sequence[str]) -> CommandResult:
    """``hilbot triage --apply RUN``: write what humans accepted on the triage run."""
    if extra:
        raise TriageError(
            "--apply takes a triage run, not sources",
            fix=f"run `hilbot triage --apply {run_id}` alone",
        )
    run = store.load_run(run_id)
    if run.header.kind != "change":
        raise TriageError(
            f"run {run_id!r} is not a triage run",
            fix="name the run `hilbot triage` printed (set triage)",
        )
    decided = human_decisions(store, run)
    applied = apply_accepted(store, run_id, decided)
    waiting = len(run.items) - len(decided)
    lines = _applied_lines(applied) or [
        "nothing to write: no snapshot change of this run was accepted"
    ]
    return CommandResult(
        lines + ([f"{waiting} changes still wait for a human"] if waiting else []),
        1 if applied.refused else 0,
    )


def _applied_lines(applied: Applied) -> list[str]:
    """What was written, what was in place already, and ``not written: path — why`` per
    refusal."""
    lines = []
    if applied.written:
        written = ", ".join(applied.written)
        lines.append(f"wrote {len(applied.written)} expected file(s): {written}")
    if applied.unchanged:
        lines.append("already written: " + ", ".join(applied.unchanged))
    lines += [f"not written: {r}" for r in applied.refused]
    return [visible(line, newlines=False) for line in lines]


__all__ = ["CommandResult", "TriageOptions", "apply_command", "triage_command"]
