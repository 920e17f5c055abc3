"""One function per ``hilbot analyze`` command: load, compute, render, write ``--out`` files.

Each returns an :class:`Output` (the text to print and the exit code); the CLI only prints it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation import HilbotConfig, Store
from evaluation.text import visible

from .report import render, save


@dataclass
class Output:
    """What a command prints, its exit code and the files it wrote."""

    text: str
    exit_code: int = 0
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _frames(store: Store, run: str | None) -> tuple[Any, list[str]]:
    from .load import load

    issues: list = []
    return load(store, runs=[run] if run else None, issues=issues), [str(i) for i in issues]  # an unknown run: RunNotFound


def _finish(store: Store, name: str, report: Any, fmt: str, out: str | None, charts: dict[str, Any] | None = None,
            warnings: list[str] | None = None, exit_code: int = 0) -> Output:
    files = save(store, out, name, report, {k: v() for k, v in (charts or {}).items()}) if out else []
    return Output(render(report, fmt), exit_code, files, warnings or [])


def validate(store: Store, config: HilbotConfig, *, fmt: str = "markdown", out: str | None = None) -> Output:
    """``analyze validate``: schema errors and contradiction flags; exit 1 only on schema errors."""
    from .validate import validate as check

    report = check(store, config)
    return _finish(store, "validate", report, fmt, out, exit_code=report.exit_code)


def agreement(store: Store, config: HilbotConfig, *, run: str | None = None, dimension: str | None = None,
              fmt: str = "markdown", out: str | None = None, n_boot: int = 1000, seed: int = 0) -> Output:
    """``analyze agreement``: κ, Fleiss' κ and α per dimension, with CIs, bands and the disagreements."""
    from .agreement import agreement as compute

    frames, warnings = _frames(store, run)
    report = compute(frames.ratings, config, run=run, dimension=dimension, n_boot=n_boot, seed=seed)
    return _finish(store, "agreement", report, fmt, out, {"agreement": lambda: _agreement_chart(report)}, warnings)


def calibration(store: Store, config: HilbotConfig, *, run: str | None = None, dimension: str | None = None,
                by: tuple[str, ...] = ("dimension",), fmt: str = "markdown", out: str | None = None) -> Output:
    """``analyze calibration``: the AI judge against the humans."""
    from .calibration import calibration as compute

    frames, warnings = _frames(store, run)
    report = compute(frames, config, run=run, dimension=dimension, by=by)
    charts = {"calibration": lambda: _scatter(frames, run, dimension), "distribution": lambda: _distribution(frames, config)}
    return _finish(store, "calibration", report, fmt, out, charts, warnings)


def correlate(store: Store, config: HilbotConfig, *, feature: str, run: str | None = None, dimension: str | None = None,
              buckets: int | None = None, expect: str = "decreasing", fmt: str = "markdown", out: str | None = None,
              order: tuple[str, ...] | None = None) -> Output:
    """``analyze correlate``: success rate per bucket of a feature, monotonicity, Spearman.

    A feature the loader left out (text in some item: ``"3"``, or category labels) is read back from the run
    files; ``order`` lists its category labels, lowest first (see :func:`analysis.correlate.coerce_feature`).
    """
    from .correlate import correlate as compute
    from .correlate import with_run_features

    configured = config.features.get(feature.removeprefix("feature_"))
    order = order or (tuple(configured.order) if configured and configured.order else None)
    frames, warnings = _frames(store, run)
    items = with_run_features(frames.items, feature, lambda: (store.load_run(r, []) for r in frames.runs["run_id"]))
    report = compute(frames.ratings, items, config, feature, run=run, dimension=dimension, buckets=buckets, expect=expect,
                     order=order)
    name = _file_part(report.feature)
    return _finish(store, f"correlate-{name}", report, fmt, out, {f"success-by-{name}": lambda: _buckets_chart(report)},
                   warnings)


def _file_part(text: str) -> str:
    """A name from the logs as part of a file name: letters, digits, ``_`` and ``-`` only (never a path)."""
    import re

    return re.sub(r"[^A-Za-z0-9_-]+", "_", text)[:80] or "_"


def patterns(store: Store, config: HilbotConfig, *, run: str | None = None, dimension: str | None = None,
             window_days: int = 7, fmt: str = "markdown", out: str | None = None) -> Output:
    """``analyze patterns``: by quality, source type, category and tag; drift; regressed patterns."""
    from .patterns import patterns as compute

    frames, warnings = _frames(store, run)
    report = compute(frames.ratings, frames.items, frames.concerns, config, run=run, dimension=dimension, window_days=window_days)
    return _finish(store, "patterns", report, fmt, out, {"distribution": lambda: _distribution(frames, config)}, warnings)


def synthesize(store: Store, config: HilbotConfig, *, run: str | None = None, dimension: str | None = None,
               use_llm: bool = False, fmt: str = "markdown") -> Output:
    """``analyze synthesize``: the synthesis and action items, appended as a ``review_summary``."""
    import json

    from .synthesize import STATISTICAL
    from .synthesize import synthesize as write

    found: list = []
    record = write(store, config, run_id=run, dimension=dimension, use_llm=use_llm, issues=found)
    issues = [str(i) for i in found]
    if fmt == "json":
        return Output(json.dumps(record.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False),
                      warnings=issues)
    label = "statistical synthesis (no LLM)" if record.synthesis_source == STATISTICAL else f"synthesis by {record.synthesis_source}"
    lines = [f"# Review summary: {record.run_id} · {record.dimension} ({label})", "", record.synthesis or "", "",
             "Action items:", *[f"{n}. {item}" for n, item in enumerate(record.actionItems, 1)], "",
             f"Appended to {store.ratings.path} as a review_summary record."]
    warnings = [] if use_llm else ["synthesis is statistical; pass --llm to have the LLM write it from the notes and scores"]
    return Output(visible("\n".join(lines)), warnings=issues + warnings)


# ---------------------------------------------------------------------------------------------- charts


def _scatter(frames: Any, run: str | None, dimension: str | None) -> bytes:
    from .charts import calibration_scatter
    from .load import ai_score_column

    ratings = frames.ratings if dimension is None else frames.ratings[frames.ratings["dimension"] == dimension]
    points = []
    for dim, group in ratings.groupby("dimension"):
        human = group.groupby(["run_id", "item_id"])["score"].mean().rename("human").reset_index()
        items = frames.items.assign(ai=ai_score_column(frames.items, dim))[["run_id", "item_id", "ai"]]
        joined = human.merge(items, on=["run_id", "item_id"]).dropna()
        points += list(zip(joined["ai"], joined["human"]))
    return calibration_scatter(points)


def _distribution(frames: Any, config: HilbotConfig) -> bytes:
    from .charts import rating_distribution

    counts = {f"{run} · {dim}": dict(group["judgment"].value_counts())
              for (run, dim), group in frames.ratings.groupby(["run_id", "dimension"])}
    dims = sorted(set(frames.ratings["dimension"]) & set(config.dimensions))
    order = list(dict.fromkeys(o.value for d in dims for o in sorted(config.scale_for(d).options, key=lambda o: o.score)))
    order += sorted(set(frames.ratings["judgment"]) - set(order))  # off every configured scale: drawn last
    return rating_distribution(counts, order)


def _agreement_chart(report: Any) -> bytes:
    from ._undefined import Undefined
    from .charts import interval_bars

    level = lambda dim: "ordinal" if "ordinal" in dim.alpha else next(iter(dim.alpha))  # noqa: E731
    estimates = [(dim.dimension, dim.alpha[level(dim)]) for dim in report.dimensions if dim.alpha]
    values = [None if isinstance(e.value, Undefined) else e.value for _, e in estimates]
    intervals = [e.ci if isinstance(e.ci, tuple) else None for _, e in estimates]
    return interval_bars([name for name, _ in estimates], values, intervals, title="Krippendorff's α (ordinal) per dimension",
                         ylabel="α", lines=[(0.67, "acceptable"), (0.8, "good"), (0.9, "excellent")])


def _buckets_chart(report: Any) -> bytes:
    from ._undefined import Undefined
    from .charts import interval_bars

    values = [None if isinstance(b.success_rate, Undefined) else b.success_rate for b in report.buckets]
    intervals = [None if isinstance(b.ci, Undefined) else (b.ci.low, b.ci.high) for b in report.buckets]
    return interval_bars([b.label for b in report.buckets], values, intervals, title=f"Success rate by {report.feature}",
                         ylabel="success rate (95% Wilson CI)")


__all__ = ["Output", "agreement", "calibration", "correlate", "patterns", "synthesize", "validate"]
