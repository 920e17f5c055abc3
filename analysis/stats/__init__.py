"""The statistics of hilbot's analyses: numpy and scipy only, nothing of hilbot's.

One family per module, each module's docstring stating its conventions (what is Undefined, what
raises):

* :mod:`~analysis.stats.undefined` — ``Undefined`` (a statistic without a value, and why),
  ``Number``, ``Bounds``; :mod:`~analysis.stats.errors` — the one exception, for a bad argument;
  :mod:`~analysis.stats.jsonable` — results as JSON (``to_dict()``).
* :mod:`~analysis.stats.intervals` — Wilson, Fisher's z and Student's t intervals.
* :mod:`~analysis.stats.correlation` — Spearman's ρ and Kendall's τ.
* :mod:`~analysis.stats.weightings` — agreement and disagreement weight matrices.
* :mod:`~analysis.stats.ratings` — raw ratings as the coefficients take them; rater pairs' tables.
* :mod:`~analysis.stats.kappa` — Cohen's κ and Fleiss' κ.
* :mod:`~analysis.stats.krippendorff` — Krippendorff's α by the coincidence matrix.
* :mod:`~analysis.stats.gwet` — Gwet's family of raw ratings with analytic SEs (percent agreement,
  Fleiss, Conger, AC1/AC2, Brennan–Prediger, α), pooled across dimensions.
* :mod:`~analysis.stats.tables` — the same coefficients of two raters' contingency tables.
* :mod:`~analysis.stats.resampling` — the bootstrap's engine; :mod:`~analysis.stats.bootstrap` —
  bootstrap CIs.
* :mod:`~analysis.stats.bands` — target bands (excellent, good, acceptable).
* :mod:`~analysis.stats.names` — the names results are keyed by (weightings, each family's
  coefficients), without numpy.

Names are loaded on first use (importing the package imports no numpy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Undefined": "undefined",
    "Number": "undefined",
    "Bounds": "undefined",
    "StatsError": "errors",
    "bad_argument": "errors",
    "Jsonable": "jsonable",
    "to_jsonable": "jsonable",
    "CONFIDENCE": "intervals",
    "MIN_N": "intervals",
    "Interval": "intervals",
    "fisher_ci": "intervals",
    "inference": "intervals",
    "newcombe_interval": "intervals",
    "wilson_interval": "intervals",
    "z_value": "intervals",
    "RankCorrelation": "correlation",
    "kendall_tau": "correlation",
    "spearman": "correlation",
    "KAPPA_WEIGHTS": "weightings",
    "WEIGHTS": "names",
    "Weights": "weightings",
    "category_weights": "weightings",
    "kappa_weights": "weightings",
    "weight_matrix": "weightings",
    "weights": "weightings",
    "Ratings": "ratings",
    "Units": "ratings",
    "pair_tables": "ratings",
    "shared_pairs": "ratings",
    "cohen_kappa": "kappa",
    "fleiss_kappa": "kappa",
    "kappa_of_table": "kappa",
    "kappas": "kappa",
    "LEVELS": "krippendorff",
    "Level": "krippendorff",
    "krippendorff_alpha": "krippendorff",
    "category_level_weights": "krippendorff",
    "level_weights": "krippendorff",
    "ordinal_alpha_weights": "krippendorff",
    "POOLED": "names",
    "RAW": "names",
    "Coefficient": "gwet",
    "Terms": "gwet",
    "alpha": "gwet",
    "alpha_features": "gwet",
    "features": "gwet",
    "pooled": "gwet",
    "raw_coefficients": "gwet",
    "resampled": "gwet",
    "resampled_alpha": "gwet",
    "resampled_weightings": "gwet",
    "terms": "gwet",
    "units_coefficients": "gwet",
    "TABLE": "names",
    "TableBatch": "tables",
    "batch_coefficients": "tables",
    "pair_coefficients": "tables",
    "table_batch": "tables",
    "table_coefficients": "tables",
    "bootstrap_ci": "bootstrap",
    "start_pair_bootstrap": "bootstrap",
    "threads": "bootstrap",
    "units_bootstrap": "bootstrap",
    "ALPHA_BANDS": "bands",
    "KAPPA_BANDS": "bands",
    "band": "bands",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .bands import ALPHA_BANDS as ALPHA_BANDS
    from .bands import KAPPA_BANDS as KAPPA_BANDS
    from .bands import band as band
    from .bootstrap import bootstrap_ci as bootstrap_ci
    from .bootstrap import start_pair_bootstrap as start_pair_bootstrap
    from .bootstrap import threads as threads
    from .bootstrap import units_bootstrap as units_bootstrap
    from .correlation import RankCorrelation as RankCorrelation
    from .correlation import kendall_tau as kendall_tau
    from .correlation import spearman as spearman
    from .errors import StatsError as StatsError
    from .errors import bad_argument as bad_argument
    from .gwet import Coefficient as Coefficient
    from .gwet import Terms as Terms
    from .gwet import alpha as alpha
    from .gwet import alpha_features as alpha_features
    from .gwet import features as features
    from .gwet import pooled as pooled
    from .gwet import raw_coefficients as raw_coefficients
    from .gwet import resampled as resampled
    from .gwet import resampled_alpha as resampled_alpha
    from .gwet import resampled_weightings as resampled_weightings
    from .gwet import terms as terms
    from .gwet import units_coefficients as units_coefficients
    from .intervals import CONFIDENCE as CONFIDENCE
    from .intervals import MIN_N as MIN_N
    from .intervals import Interval as Interval
    from .intervals import fisher_ci as fisher_ci
    from .intervals import inference as inference
    from .intervals import newcombe_interval as newcombe_interval
    from .intervals import wilson_interval as wilson_interval
    from .intervals import z_value as z_value
    from .jsonable import Jsonable as Jsonable
    from .jsonable import to_jsonable as to_jsonable
    from .kappa import cohen_kappa as cohen_kappa
    from .kappa import fleiss_kappa as fleiss_kappa
    from .kappa import kappa_of_table as kappa_of_table
    from .kappa import kappas as kappas
    from .krippendorff import LEVELS as LEVELS
    from .krippendorff import Level as Level
    from .krippendorff import category_level_weights as category_level_weights
    from .krippendorff import krippendorff_alpha as krippendorff_alpha
    from .krippendorff import level_weights as level_weights
    from .krippendorff import ordinal_alpha_weights as ordinal_alpha_weights
    from .names import POOLED as POOLED
    from .names import RAW as RAW
    from .names import TABLE as TABLE
    from .names import WEIGHTS as WEIGHTS
    from .ratings import Ratings as Ratings
    from .ratings import Units as Units
    from .ratings import pair_tables as pair_tables
    from .ratings import shared_pairs as shared_pairs
    from .tables import TableBatch as TableBatch
    from .tables import batch_coefficients as batch_coefficients
    from .tables import pair_coefficients as pair_coefficients
    from .tables import table_batch as table_batch
    from .tables import table_coefficients as table_coefficients
    from .undefined import Bounds as Bounds
    from .undefined import Number as Number
    from .undefined import Undefined as Undefined
    from .weightings import KAPPA_WEIGHTS as KAPPA_WEIGHTS
    from .weightings import Weights as Weights
    from .weightings import category_weights as category_weights
    from .weightings import kappa_weights as kappa_weights
    from .weightings import weight_matrix as weight_matrix
    from .weightings import weights as weights


def __getattr__(name: str) -> Any:
    """Import the module of ``name`` on first use (numpy and scipy load with the first
    statistic)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
