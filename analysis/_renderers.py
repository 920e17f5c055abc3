"""Markdown for each report type (registered with :func:`analysis.report.renders`)."""

from __future__ import annotations

from typing import Any

from .report import ci, fmt, renders, table


def _p(value: Any) -> str:
    return "< 0.0001" if isinstance(value, float) and value < 0.0001 else fmt(value, 4)


def _key(key: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in key.items()) or "all"


# ---------------------------------------------------------------------------------------------- calibration


@renders("CalibrationReport")
def calibration(report: Any) -> list[str]:
    """AI judge against humans, one section per group."""
    lines = [f"# Calibration: AI judge vs humans (by {', '.join(report.by)})", "",
             f"Items rated but not scored by the AI: {report.unscored}. PASS at AI score ≥ {report.pass_mark}.", ""]
    rows = [(_key(g.key), g.n, g.n_ratings, fmt(g.spearman.coefficient), _p(g.spearman.p_value), ci(g.spearman.ci),
             fmt(g.kendall.coefficient), fmt(g.categories.kappa), fmt(g.pass_fail.kappa), fmt(g.mean_ai), fmt(g.mean_human),
             fmt(g.mean_delta)) for g in report.groups]
    lines += table(["group", "items", "ratings", "Spearman ρ", "p", "95% CI", "Kendall τ", "κ (categories)", "κ (pass/fail)",
                    "AI mean", "human mean", "human − AI"], rows)
    for group in report.groups:
        lines += _calibration_group(group)
    return lines


def _calibration_group(group: Any) -> list[str]:
    lines = ["", f"## {_key(group.key)}", ""]
    lines += [f"- note: {note}" for note in getattr(group, "notes", ())] + ([""] if getattr(group, "notes", ()) else [])
    matrix = group.categories.confusion
    if hasattr(matrix, "labels"):
        lines += ["Confusion matrix (rows: AI category, columns: human category):", ""]
        lines += table(["AI \\ human", *matrix.labels], [(label, *row) for label, row in zip(matrix.labels, matrix.counts)])
        lines.append("")
    if group.disagreements:
        lines += ["Largest disagreements:", ""]
        lines += table(["run", "item", "query", "AI", "human", "human − AI", "judgments", "notes"],
                       [(d.run_id, d.item_id, d.query or "", fmt(d.ai_score, 2), fmt(d.human_score, 2), fmt(d.delta, 2),
                         ", ".join(d.judgments), " / ".join(d.notes)) for d in group.disagreements])
    return lines


# ---------------------------------------------------------------------------------------------- correlation


@renders("CorrelationReport")
def correlation(report: Any) -> list[str]:
    """Success rate per feature bucket, monotonicity, Spearman."""
    m = report.monotonicity
    lines = [f"# Ratings vs {report.feature}", "",
             f"{report.n_ratings} ratings on {', '.join(report.dimensions)}; buckets: {report.bucketing}; "
             f"{report.missing_feature} without the feature, {report.outside_buckets} outside the buckets.", ""]
    lines += table(["bucket", "ratings", "items", "successes", "success rate", "95% CI (Wilson)", "mean score"],
                   [(b.label, b.n, b.n_items, b.successes, fmt(b.success_rate), ci(b.ci), fmt(b.mean_score)) for b in report.buckets])
    verdict = "monotonic" if m.monotonic is True else ("not monotonic" if m.monotonic is False else fmt(m.monotonic))
    lines += ["", f"Expectation: success {m.expect} as {report.feature} grows — **{verdict}**; "
              f"last bucket vs first as expected: {fmt(m.ends_as_expected)}."]
    lines += [f"- ⚠ {b.lower} → {b.upper}: {b.lower_rate:.3f} → {b.upper_rate:.3f}"
              + (" (beyond the CIs)" if b.beyond_ci else " (within the CIs)") for b in m.breaks]
    s = report.spearman
    lines += ["", f"Spearman ρ ({report.feature} vs human score, per item): {fmt(s.coefficient)} "
              f"(p = {_p(s.p_value)}, 95% CI {ci(s.ci)}, n = {s.n})"]
    return lines


# ---------------------------------------------------------------------------------------------- patterns


@renders("PatternsReport")
def patterns(report: Any) -> list[str]:
    """Distribution, groups, concerns, drift and regressed patterns per dimension."""
    lines = ["# Patterns"]
    for dim in report.dimensions:
        lines += _dimension_patterns(dim)
    return lines


def _groups(title: str, groups: Any) -> list[str]:
    if not groups:
        return []
    return ["", f"### {title}", ""] + table(["group", "ratings", "success rate", "95% CI", "mean score"],
                                             [(str(g.key), g.n, fmt(g.success_rate), ci(g.ci), fmt(g.mean_score)) for g in groups])


def _dimension_patterns(dim: Any) -> list[str]:
    lines = ["", f"## {dim.dimension} ({dim.n} ratings)", "",
             "Judgments: " + ", ".join(f"{j.value} {j.count} ({fmt(j.share, 2)})" for j in dim.distribution),
             f"Overall success rate {fmt(dim.overall.success_rate)} {ci(dim.overall.ci)}, mean score {fmt(dim.overall.mean_score)}."]
    lines += [f"- note: {note}" for note in getattr(dim, "notes", ())]
    lines += _groups("By source type", dim.by_source_type) + _groups("By category", dim.by_category)
    if dim.by_concern:
        lines += ["", "### By concern tag", ""] + table(
            ["tag", "ratings", "share", "mean score", "success rate"],
            [(c.tag, c.count, fmt(c.share), fmt(c.mean_score), fmt(c.success_rate)) for c in dim.by_concern])
    lines += ["", "### Drift", ""] + table(["from", "to", "ratings", "success rate", "95% CI", "mean score"],
                                           [(w.start.date().isoformat(), w.end.date().isoformat(), w.n, fmt(w.success_rate),
                                             ci(w.ci), fmt(w.mean_score)) for w in dim.drift])
    lines += ["", f"### Regressed patterns ({len(dim.regressions)} of {dim.groups_checked} groups checked)", ""]
    lines += [f"- ❌ category={r.category}, source_type={r.source_type}: success {fmt(r.earlier.success_rate, 2)} "
              f"({r.earlier.start.date()}, n={r.earlier.n}) → {fmt(r.recent.success_rate, 2)} ({r.recent.start.date()}, "
              f"n={r.recent.n}); judgments then {r.earlier.judgments}, now {r.recent.judgments}" for r in dim.regressions]
    return lines if dim.regressions else lines + ["None."]


# ---------------------------------------------------------------------------------------------- agreement


PAIRS = 30
"""Reviewer pairs shown in Markdown."""


def _estimate(e: Any) -> tuple[str, str, str, int]:
    interval = e.ci if isinstance(e.ci, tuple) else None
    return fmt(e.value), f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else fmt(e.ci), e.band, e.n_items


@renders("AgreementReport")
def agreement(report: Any) -> list[str]:
    """α, Fleiss' κ and pairwise Cohen's κ per dimension, with the items to resolve."""
    scope = f"run {report.run}" if report.run else "all runs"
    lines = [f"# Inter-rater agreement ({scope})", "",
             f"95% CIs: percentile bootstrap over items, {report.n_boot} replicates, seed {report.seed}. "
             "Bands: κ ≥ 0.60 acceptable, ≥ 0.75 good, ≥ 0.85 excellent; α ≥ 0.67 / 0.80 / 0.90."]
    for dim in report.dimensions:
        lines += _dimension_agreement(dim, report.min_shared)
    return lines


def _dimension_agreement(dim: Any, min_shared: int) -> list[str]:
    lines = ["", f"## {dim.dimension}", "",
             f"{dim.n_ratings} ratings of {dim.n_items} items by {dim.n_raters} reviewers; {dim.n_pairable} items have ≥ 2 ratings. "
             f"Scale: {' < '.join(dim.categories)}.", ""]
    rows = [(f"Krippendorff's α ({level})", *_estimate(e)) for level, e in dim.alpha.items()]
    rows.append((f"Fleiss' κ ({dim.fleiss_raters or '–'} raters per item)", *_estimate(dim.fleiss)))
    lines += table(["statistic", "value", "95% CI", "band", "items"], rows)
    if dim.pairs:
        shown = sorted(dim.pairs, key=lambda p: (-p.n_shared, p.reviewer_a, p.reviewer_b))[:PAIRS]
        more = f"; the {PAIRS} with most shared items shown, all {len(dim.pairs)} in --format json" if len(dim.pairs) > PAIRS else ""
        lines += ["", f"Cohen's κ per reviewer pair (≥ {min_shared} shared items; {dim.pairs_below_min_shared} pairs had fewer{more}):", ""]
        lines += table(["pair", "shared", "κ", "95% CI", "band", "κ linear", "κ quadratic"],
                       [(f"{p.reviewer_a} · {p.reviewer_b}", p.n_shared, *_estimate(p.unweighted)[:3], fmt(p.linear.value),
                         fmt(p.quadratic.value)) for p in shown])
    lines += [f"- note: {n}" for n in dim.notes]
    if dim.disagreements:
        lines += ["", f"Items to resolve ({len(dim.disagreements)}; largest spread first):", ""]
        lines += table(["run", "item", "spread", "ratings"],
                       [(d.run_id, d.item_id, fmt(d.spread, 2), "; ".join(f"{who}: {j}" for who, j, _ in d.ratings))
                        for d in dim.disagreements[:25]])
    return lines


# ---------------------------------------------------------------------------------------------- validation


@renders("ValidationReport")
def validation(report: Any) -> list[str]:
    """Counts by flag, then every ``file:line: flag: message`` (schema errors first within a line)."""
    verdict = f"{len(report.schema_errors)} schema error(s)" if report.schema_errors else "no schema errors"
    lines = [f"# Validation of {report.path}", "",
             f"{report.line_count} lines; records: " + ", ".join(f"{k} {v}" for k, v in sorted(report.records.items())) + f"; {verdict}.",
             "Flags mark contradictions for a human to look at; nothing was rejected or changed.", ""]
    lines += table(["flag", "count"], [("schema error", len(report.schema_errors)), *sorted(report.counts.items())])
    found = report.lines()
    return lines + (["", "```text", *found, "```"] if found else ["", "Nothing flagged."])
