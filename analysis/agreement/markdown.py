"""The agreement report as people read it: the Markdown of ``hilbot analyze agreement`` (the pooled
coefficients, then per dimension its coefficients, its reviewer pairs and the items to resolve) and
its chart, Krippendorff's α (ordinal) per dimension with its CI; the table helpers and the chart
are imported when used (:mod:`analysis.report`, :mod:`analysis.charts`)."""

from __future__ import annotations

import math

from .. import stats
from ..stats import Undefined
from .report import AcrossDimensions, AgreementEstimate, AgreementReport, DimensionAgreement

PAIRS = 30
"""Reviewer pairs shown in Markdown."""
NAMES = {
    "percent_agreement": "Percent agreement",
    "fleiss_kappa": "Fleiss' κ",
    "conger_kappa": "Conger's κ",
    "gwet_ac": "Gwet's AC",
    "brennan_prediger": "Brennan–Prediger",
    "krippendorff_alpha": "Krippendorff's α",
    "cohen_kappa": "Cohen's κ",
    "scott_pi": "Scott's π",
}
"""Coefficients as Markdown names them."""


def _name(name: str, weighting: str) -> str:
    if name == "gwet_ac":
        return "Gwet's AC1" if weighting == "identity" else "Gwet's AC2"
    return NAMES[name]


def markdown_view(report: AgreementReport, *, detail: bool = False) -> list[str]:
    """The command's Markdown: :func:`summary_lines`, or with ``detail`` every table
    (:func:`markdown_lines`)."""
    return markdown_lines(report) if detail else summary_lines(report)


def called_for(dim: DimensionAgreement) -> str:
    """The level of Krippendorff's α the dimension's scale calls for: ``nominal`` on two options,
    ``ordinal`` on three or more ordered ones (a scale's options are ordered by their scores)."""
    return "nominal" if len(dim.categories) <= 2 else "ordinal"


def summary_lines(report: AgreementReport) -> list[str]:
    """One row per dimension: the coefficient its scale calls for (Krippendorff's α at the scale's
    level, which any number of reviewers and missing ratings allow), its 95% CI (the bootstrap's
    when there is one), its band and what it rests on."""
    from ..report import table

    scope = f"run {report.run}" if report.run else "all runs"
    interval = (
        f"percentile bootstrap over items ({report.n_boot} replicates)"
        if report.n_boot
        else "analytic (Gwet's linearised SE; --bootstrap 0)"
    )
    rows = [_summary_row(dim) for dim in report.dimensions.values()]
    disputed = sum(len(dim.disagreements) for dim in report.dimensions.values())
    return [
        f"# Inter-rater agreement ({scope})",
        "",
        "Per dimension, the coefficient its scale calls for: Krippendorff's α, nominal on two "
        f"options, ordinal on three or more. 95% CI: {interval}. Bands: α ≥ 0.67 acceptable, "
        "≥ 0.80 good, ≥ 0.90 excellent.",
        "",
        *table(["dimension", "coefficient", "value", "95% CI", "band", "n"], rows),
        "",
        f"Items reviewers disagree on: {disputed}. --detail shows every coefficient (κ, AC1, "
        "Brennan–Prediger, α at each level, weighted), the reviewer pairs and the items to "
        "resolve; --format json has everything.",
    ]


def _summary_row(dim: DimensionAgreement) -> tuple[str, ...]:
    from ..report import ci, fmt

    level = called_for(dim)
    e = dim.alpha[level]
    interval = e.bootstrap_ci if isinstance(e.bootstrap_ci, tuple) else e.ci
    rests = (
        f"{e.n_items} items, {dim.n_ratings} ratings, {dim.n_raters} "
        f"{'reviewer' if dim.n_raters == 1 else 'reviewers'}"
    )
    return (
        dim.dimension,
        f"Krippendorff's α ({level})",
        fmt(e.value),
        ci(interval),
        e.band,
        rests,
    )


def markdown_lines(report: AgreementReport) -> list[str]:
    """Per dimension: one table of the coefficients (identity and ``weights``), the pairs, the items
    to resolve."""
    scope = f"run {report.run}" if report.run else "all runs"
    boot = (
        f"percentile bootstrap over items, {report.n_boot} replicates, seed {report.seed}"
        if report.n_boot
        else "none (--bootstrap 0)"
    )
    lines = [
        f"# Inter-rater agreement ({scope})",
        "",
        "95% CIs: analytic (Gwet's linearised SE, value ± t₀.₉₇₅ × SE on n − 1 df, at most "
        f"1); bootstrap: {boot}. p: one-sided, H0: coefficient = 0. "
        "Bands: κ-type ≥ 0.60 acceptable, ≥ 0.75 good, ≥ 0.85 excellent; "
        "α ≥ 0.67 / 0.80 / 0.90. "
        f"Weighted rows: {report.weights} weights on the categories' values "
        "(all weightings in --format json).",
    ]
    lines += _markdown_across(report.across, report.weights)
    for dim in report.dimensions.values():
        lines += _markdown_dimension(dim, report.min_shared, report.weights)
    return lines


def _markdown_across(across: AcrossDimensions | None, weights: str) -> list[str]:
    from ..report import table

    if across is None:
        return []
    rows = [_row(_name(name, "identity"), e) for name, e in across.coefficients["identity"].items()]
    if weights != "identity":
        rows += [
            _row(f"{_name(name, weights)} ({weights})", e)
            for name, e in across.coefficients[weights].items()
        ]
    left = "".join(f" Not pooled: {name} ({why})." for name, why in across.left_out.items())
    return [
        "",
        "## Across dimensions (pooled)",
        "",
        f"{', '.join(across.dimensions)} on {across.n_items} items. Each dimension keeps its "
        "own chance agreement: (mean p_a − mean p_e) / (1 − mean p_e) over the dimensions "
        "(De Vries et al. 2008); SE by Gwet's linearisation over items; no bootstrap. "
        f"Krippendorff's α is per dimension only.{left}",
        "",
        *table(
            ["coefficient", "value", "SE", "95% CI", "p", "band"], [(*r[:4], *r[5:]) for r in rows]
        ),
    ]


def _row(label: str, e: AgreementEstimate) -> tuple[str, ...]:
    from ..report import ci, fmt, p_value

    return label, fmt(e.value), fmt(e.se), ci(e.ci), ci(e.bootstrap_ci), p_value(e.p_value), e.band


def _coefficient_rows(dim: DimensionAgreement, weights: str) -> list[tuple[str, ...]]:
    rows = [_row(_name(name, "identity"), e) for name, e in dim.coefficients["identity"].items()]
    rows[-1] = _row(
        "Krippendorff's α (nominal)", dim.coefficients["identity"]["krippendorff_alpha"]
    )
    if weights != "identity" and weights in dim.coefficients:
        for name, e in dim.coefficients[weights].items():
            # α under quadratic or ratio weights is α interval / ratio, listed below
            if name != "krippendorff_alpha" or weights not in ("quadratic", "ratio"):
                rows.append(_row(f"{_name(name, weights)} ({weights})", e))
    rows += [_row(f"Krippendorff's α ({level})", dim.alpha[level]) for level in stats.LEVELS[1:]]
    return rows


def _markdown_dimension(dim: DimensionAgreement, min_shared: int, weights: str) -> list[str]:
    from ..report import fmt, table

    values = ", ".join(
        fmt(v, 3).rstrip("0").rstrip(".") if math.isfinite(v) else "–" for v in dim.values
    )
    lines = [
        "",
        f"## {dim.dimension}",
        "",
        f"{dim.n_ratings} ratings of {dim.n_items} items by {dim.n_raters} reviewers; "
        f"{dim.n_pairable} items have ≥ 2 ratings. Scale: {' < '.join(dim.categories)} "
        f"(values {values}).",
        "",
    ]
    lines += table(
        ["coefficient", "value", "SE", "95% CI", "bootstrap 95% CI", "p", "band"],
        _coefficient_rows(dim, weights),
    )
    lines += _markdown_pairs(dim, min_shared, weights)
    lines += [f"- note: {n}" for n in dim.notes]
    if dim.disagreements:
        lines += ["", f"Items to resolve ({len(dim.disagreements)}; largest spread first):", ""]
        lines += table(
            ["run", "item", "spread", "ratings"],
            [
                (
                    d.run_id,
                    d.item_id,
                    fmt(d.spread, 2),
                    "; ".join(f"{who}: {j}" for who, j, _ in d.ratings),
                )
                for d in dim.disagreements[:25]
            ],
        )
    return lines


def _markdown_pairs(dim: DimensionAgreement, min_shared: int, weights: str) -> list[str]:
    from ..report import ci, fmt, table

    if not dim.pairs:
        return []
    shown = sorted(dim.pairs, key=lambda p: (-p.n_shared, p.reviewer_a, p.reviewer_b))[:PAIRS]
    more = (
        f"; the {PAIRS} with most shared items shown, all {len(dim.pairs)} in --format json"
        if len(dim.pairs) > PAIRS
        else ""
    )
    weighted = weights if weights in shown[0].coefficients else "identity"
    rows = []
    for p in shown:
        c = p.coefficients["identity"]
        kappa = c["cohen_kappa"]
        rows.append(
            (
                f"{p.reviewer_a} · {p.reviewer_b}",
                p.n_shared,
                fmt(kappa.value),
                ci(kappa.ci),
                ci(kappa.bootstrap_ci),
                kappa.band,
                fmt(p.coefficients[weighted]["cohen_kappa"].value),
                fmt(c["scott_pi"].value),
                fmt(c["gwet_ac"].value),
                fmt(c["brennan_prediger"].value),
                fmt(c["percent_agreement"].value),
            )
        )
    return [
        "",
        f"Per reviewer pair (≥ {min_shared} shared items; {dim.pairs_below_min_shared} "
        f"pairs had fewer{more}):",
        "",
        *table(
            [
                "pair",
                "shared",
                "Cohen's κ",
                "95% CI",
                "bootstrap 95% CI",
                "band",
                f"κ ({weighted})",
                "Scott's π",
                "AC1",
                "Brennan–Prediger",
                "% agreement",
            ],
            rows,
        ),
    ]


def alpha_chart(report: AgreementReport) -> bytes:
    from ..charts import interval_bars

    estimates = [(name, dim.alpha["ordinal"]) for name, dim in report.dimensions.items()]
    values = [None if isinstance(e.value, Undefined) else e.value for _, e in estimates]
    intervals = [
        e.bootstrap_ci
        if isinstance(e.bootstrap_ci, tuple)
        else e.ci
        if isinstance(e.ci, tuple)
        else None
        for _, e in estimates
    ]
    return interval_bars(
        [name for name, _ in estimates],
        values,
        intervals,
        title="Krippendorff's α (ordinal) per dimension",
        ylabel="α",
        lines=[(0.67, "acceptable"), (0.8, "good"), (0.9, "excellent")],
    )
