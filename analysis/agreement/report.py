"""The agreement report's shape: the dataclasses ``agreement`` returns (an estimate, a pair, an
item in dispute, a dimension, the pooled coefficients, the whole report) and the names its
coefficients and weightings are keyed by; nothing here computes (:mod:`analysis.agreement.compute`
does, and says the report's conventions)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import stats
from ..stats import Bounds, Number
from ..vocabulary import Report

VERSION = 2
"""Version of the report's JSON: 2 added the coefficients, their analytic precision, and
``dimensions`` by name."""
WEIGHTINGS = stats.WEIGHTS
"""The weightings a dimension's coefficients are reported under (identity only for a two-category
scale)."""
PAIR_WEIGHTINGS = ("identity", "linear", "quadratic")
"""The weightings every pair is reported under (with the ``weights`` shown, when another)."""
DEFAULT_WEIGHTS = "quadratic"
"""The weighting Markdown shows beside the identity by default (the usual one for ordered
scales)."""
COEFFICIENTS = stats.RAW
"""A dimension's coefficients over all its reviewers, per weighting."""
PAIR_COEFFICIENTS = stats.TABLE
"""A pair's coefficients, per weighting."""
POOLED_COEFFICIENTS = stats.POOLED
"""The coefficients pooled across dimensions, per weighting."""


@dataclass(frozen=True)
class AgreementEstimate(Report):
    """One coefficient: value, analytic precision, bootstrap CI, band and the items it rests on."""

    value: Number
    se: Number
    """Standard error (Gwet's linearisation)."""
    ci: Bounds
    """Analytic 95% CI: value ± t · SE, the upper bound clipped at 1."""
    p_value: Number
    """One-sided p-value of H0: coefficient = 0."""
    bootstrap_ci: Bounds
    """Percentile bootstrap 95% CI."""
    band: str
    n_items: int
    """Items (units) the coefficient used."""
    pa: Number
    """Percent agreement it rests on (weighted under weights)."""
    pe: Number
    """Chance agreement."""


@dataclass(frozen=True)
class PairAgreement(Report):
    """Two reviewers' agreement over the items both rated."""

    reviewer_a: str
    reviewer_b: str
    n_shared: int
    coefficients: dict[str, dict[str, AgreementEstimate]]
    """By weighting (identity; linear, quadratic and the report's ``weights`` for three categories
    or more), then by coefficient (:data:`PAIR_COEFFICIENTS`)."""

    @property
    def unweighted(self) -> AgreementEstimate:
        """Cohen's κ."""
        return self.coefficients["identity"]["cohen_kappa"]

    @property
    def linear(self) -> AgreementEstimate:
        """Cohen's κ with linear weights (with two categories: the unweighted κ, the same)."""
        return self.coefficients.get("linear", self.coefficients["identity"])["cohen_kappa"]

    @property
    def quadratic(self) -> AgreementEstimate:
        """Cohen's κ with quadratic weights (with two categories: the unweighted κ, the same)."""
        return self.coefficients.get("quadratic", self.coefficients["identity"])["cohen_kappa"]


@dataclass(frozen=True)
class ItemDisagreement(Report):
    """An item whose reviewers gave different judgments."""

    run_id: str
    item_id: str
    spread: float
    """max − min score."""
    n_raters: int
    ratings: tuple[tuple[str, str, float], ...]
    """(reviewer, judgment, score), by reviewer."""


@dataclass(frozen=True)
class DimensionAgreement(Report):
    """Agreement among the reviewers of one dimension."""

    dimension: str
    scale: str | None
    """Name of the dimension's scale; None when the dimension is not configured."""
    categories: tuple[str, ...]
    """Judgments in ascending score order."""
    values: tuple[float, ...]
    """Each category's value (its ``number``, else its score; NaN: none): weights' distances."""
    n_items: int
    """Items with at least one rating."""
    n_pairable: int
    """Items with at least two ratings."""
    n_raters: int
    n_ratings: int
    reviewers: tuple[str, ...]
    coefficients: dict[str, dict[str, AgreementEstimate]]
    """Over all reviewers: by weighting (:data:`WEIGHTINGS`; identity only for two categories), then
    by coefficient (:data:`COEFFICIENTS`)."""
    alpha: dict[str, AgreementEstimate]
    """Krippendorff's α by level: nominal, ordinal, interval, ratio."""
    pairs: tuple[PairAgreement, ...]
    """Reviewer pairs with ≥ ``min_shared`` shared items, by reviewer ids."""
    pairs_below_min_shared: int
    """Reviewer pairs sharing 1 … min_shared − 1 items (left out of ``pairs``)."""
    disagreements: tuple[ItemDisagreement, ...]
    notes: tuple[str, ...] = ()
    """Anything unusual (judgments off the scale, an unconfigured dimension, duplicates)."""

    @property
    def fleiss(self) -> AgreementEstimate:
        """Fleiss' κ (unweighted)."""
        return self.coefficients["identity"]["fleiss_kappa"]


@dataclass(frozen=True)
class AcrossDimensions(Report):
    """The coefficients pooled over the dimensions (each keeps its own chance agreement)."""

    dimensions: tuple[str, ...]
    """The dimensions pooled: every one with two ratings of an item."""
    left_out: dict[str, str]
    """Dimensions not pooled, and why (e.g. "one rater")."""
    n_items: int
    """Items rated on any pooled dimension: the sampling units of the SE."""
    coefficients: dict[str, dict[str, AgreementEstimate]]
    """By weighting (:data:`WEIGHTINGS`), then by coefficient (:data:`POOLED_COEFFICIENTS`);
    analytic CIs only."""


@dataclass(frozen=True)
class AgreementReport(Report):
    """Inter-rater agreement per dimension."""

    version: int
    """The JSON's version (:data:`VERSION`)."""
    run: str | None
    """The run the ratings were limited to, or None (all runs: their items are different units)."""
    weights: str
    """The weighting Markdown shows beside the identity (and every pair is reported under)."""
    dimensions: dict[str, DimensionAgreement]
    """By dimension name, in name order."""
    n_boot: int
    seed: int
    min_shared: int
    across: AcrossDimensions | None = None
    """The pooled coefficients, when two dimensions or more have agreement to pool."""

    def dimension(self, name: str) -> DimensionAgreement:
        """The named dimension's agreement (KeyError if absent)."""
        return self.dimensions[name]
