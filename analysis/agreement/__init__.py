"""Inter-rater reliability: do reviewers agree with each other? The ``agreement`` analysis, as
registered: the ``hilbot analyze agreement`` command (its options, Markdown, chart and digest
lines), and every public name of the package; the report's dataclasses are in
:mod:`~analysis.agreement.report`, the computation and its conventions in
:mod:`~analysis.agreement.compute`, the Markdown and the chart in
:mod:`~analysis.agreement.markdown`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from evaluation._lazy import lazy_getattr

from ..registry import Inputs, Option, analysis
from .markdown import NAMES, PAIRS, alpha_chart, markdown_view
from .report import (
    COEFFICIENTS,
    DEFAULT_WEIGHTS,
    PAIR_COEFFICIENTS,
    PAIR_WEIGHTINGS,
    POOLED_COEFFICIENTS,
    VERSION,
    WEIGHTINGS,
    AcrossDimensions,
    AgreementEstimate,
    AgreementReport,
    DimensionAgreement,
    ItemDisagreement,
    PairAgreement,
)

_EXPORTS = {"NOT_BOOTSTRAPPED_ACROSS": "compute", "agreement": "compute"}
"""The computation's public names, imported on first use: it brings numpy, pandas and the
configuration, which ``--help`` and a usage error never need."""

if TYPE_CHECKING:
    from .compute import NOT_BOOTSTRAPPED_ACROSS as NOT_BOOTSTRAPPED_ACROSS
    from .compute import agreement as agreement

BOOTSTRAP_MAX = 100_000
"""The most bootstrap replicates ``--bootstrap`` takes."""


def _digest(inputs: Inputs, runs: Sequence[str] | None) -> list[str]:
    """Krippendorff's α (ordinal) per dimension with its band, over every rating of ``inputs`` (no
    bootstrap)."""
    from .compute import ordinal_alphas

    return [
        f"Agreement on {dimension}: α {alpha.value:.3f} ({alpha.band}, {pairable} items with 2+ "
        "ratings)"
        for dimension, alpha, pairable in ordinal_alphas(inputs.frames.ratings, inputs.config)
        if isinstance(alpha.value, float)
    ]


@analysis(
    "agreement",
    markdown=markdown_view,
    digest=_digest,
    charts=lambda report, inputs: {"agreement": lambda: alpha_chart(report)},
    options=[
        Option(
            "n_boot",
            int,
            1000,
            "Bootstrap replicates for the 95% CIs",
            flag="--bootstrap",
            low=0,
            high=BOOTSTRAP_MAX,
        ),
        Option("seed", int, 0, "Bootstrap seed", low=0, high=2**32 - 1),
        Option(
            "weights",
            str,
            DEFAULT_WEIGHTS,
            "Weighting shown beside the unweighted coefficients (JSON has all)",
            choices=WEIGHTINGS,
        ),
        Option(
            "detail",
            bool,
            False,
            "Every coefficient, the reviewer pairs and the items to resolve (default: one row "
            "per dimension)",
            view=True,
        ),
    ],
)
def agreement_command(inputs: Inputs, *, n_boot: int, seed: int, weights: str) -> AgreementReport:
    """Inter-rater agreement per dimension, every coefficient with its standard error, CIs and p-value.

    By default one row per dimension: the coefficient its scale calls for (Krippendorff's α, nominal
    on two options, ordinal on more), its 95% CI, band and n. --detail: percent agreement, Fleiss',
    Conger's and Cohen's κ, Scott's π, Gwet's AC1/AC2, Brennan–Prediger and Krippendorff's α at
    four levels, with analytic and bootstrap CIs, p-values and bands, the pairs and the items.

    Example: hilbot analyze agreement --run demo-docs-search --weights linear
    """
    from .compute import agreement

    return agreement(
        inputs.frames.ratings,
        inputs.config,
        run=inputs.run,
        dimension=inputs.dimension,
        n_boot=n_boot,
        seed=seed,
        weights=weights,
    )


__all__ = [
    "COEFFICIENTS",
    "DEFAULT_WEIGHTS",
    "NAMES",
    "NOT_BOOTSTRAPPED_ACROSS",
    "PAIRS",
    "PAIR_COEFFICIENTS",
    "PAIR_WEIGHTINGS",
    "POOLED_COEFFICIENTS",
    "VERSION",
    "WEIGHTINGS",
    "AcrossDimensions",
    "AgreementEstimate",
    "AgreementReport",
    "DimensionAgreement",
    "ItemDisagreement",
    "PairAgreement",
    "agreement",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
