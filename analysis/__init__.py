"""hilbot's analysis: figures over the store — validation, agreement, calibration, correlation,
patterns, synthesis and the review digest.

Each ``hilbot analyze`` command is an :class:`Analysis` registered with :func:`analysis` (see
:mod:`analysis.registry`, which shows a plugin's). Depends on ``evaluation`` only. Public names are
loaded on first use.

Where things live: the statistics in :mod:`analysis.stats` (numpy and scipy only, one family per
module); what every analysis says the same way (selecting ratings, the categories of a dimension,
success, the report base type) in :mod:`analysis.vocabulary`; each analysis in its own module (or
a package of one: report, computation, Markdown), which imports the statistics, the vocabulary,
the registry and the helpers (:mod:`~analysis.load`, :mod:`~analysis.report`,
:mod:`~analysis.charts`, :mod:`~analysis.gold`), never another analysis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluation._lazy import lazy_getattr

# first: it makes the statistics raise AnalysisError (analysis.stats.errors.raise_as)
from . import errors as errors

_EXPORTS = {
    "Analysis": "registry",
    "Inputs": "registry",
    "Option": "registry",
    "Output": "registry",
    "analyses": "registry",
    "analysis": "registry",
    "run_analysis": "registry",
    "AnalysisError": "errors",
    "Frames": "load",
    "ai_score_column": "load",
    "scan_log": "load",
    "SyntheticLog": "synthetic",
    "write_synthetic": "synthetic",
    "FLAGS": "validate",
    "Flag": "validate",
    "ValidationReport": "validate",
    "AcrossDimensions": "agreement",
    "AgreementEstimate": "agreement",
    "AgreementReport": "agreement",
    "DimensionAgreement": "agreement",
    "ItemDisagreement": "agreement",
    "PairAgreement": "agreement",
    "band": "stats",
    "bootstrap_ci": "stats",
    "fleiss_kappa": "stats",
    "krippendorff_alpha": "stats",
    "Coefficient": "stats",
    "raw_coefficients": "stats",
    "table_coefficients": "stats",
    "Digest": "digest",
    "RunProgress": "digest",
    "build_digest": "digest",
    "chart_png": "digest",
    "CalibrationReport": "calibration",
    "CorrelationReport": "correlate",
    "wilson_interval": "stats",
    "PatternsReport": "patterns",
    "read_typed": "_records",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from ._records import read_typed as read_typed
    from .agreement import AcrossDimensions as AcrossDimensions
    from .agreement import AgreementEstimate as AgreementEstimate
    from .agreement import AgreementReport as AgreementReport
    from .agreement import DimensionAgreement as DimensionAgreement
    from .agreement import ItemDisagreement as ItemDisagreement
    from .agreement import PairAgreement as PairAgreement
    from .calibration import CalibrationReport as CalibrationReport
    from .correlate import CorrelationReport as CorrelationReport
    from .digest import Digest as Digest
    from .digest import RunProgress as RunProgress
    from .digest import build_digest as build_digest
    from .digest import chart_png as chart_png
    from .errors import AnalysisError as AnalysisError
    from .load import Frames as Frames
    from .load import ai_score_column as ai_score_column
    from .load import scan_log as scan_log
    from .patterns import PatternsReport as PatternsReport
    from .registry import Analysis as Analysis
    from .registry import Inputs as Inputs
    from .registry import Option as Option
    from .registry import Output as Output
    from .registry import analyses as analyses
    from .registry import analysis as analysis
    from .registry import run_analysis as run_analysis
    from .stats import Coefficient as Coefficient
    from .stats import band as band
    from .stats import bootstrap_ci as bootstrap_ci
    from .stats import fleiss_kappa as fleiss_kappa
    from .stats import krippendorff_alpha as krippendorff_alpha
    from .stats import raw_coefficients as raw_coefficients
    from .stats import table_coefficients as table_coefficients
    from .stats import wilson_interval as wilson_interval
    from .synthetic import SyntheticLog as SyntheticLog
    from .synthetic import write_synthetic as write_synthetic
    from .validate import FLAGS as FLAGS
    from .validate import Flag as Flag
    from .validate import ValidationReport as ValidationReport

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
