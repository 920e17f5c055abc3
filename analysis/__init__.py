"""hilbot's analysis: figures over the store — validation, agreement, calibration, correlation, patterns,
synthesis and the review digest.

Each ``hilbot analyze`` command is an :class:`Analysis` registered with :func:`analysis` (see
:mod:`analysis.registry`, which shows a plugin's). Depends on ``evaluation`` only. Public names are
loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluation._lazy import lazy_getattr

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
    "band": "agreement",
    "bootstrap_ci": "agreement",
    "fleiss_kappa": "agreement",
    "krippendorff_alpha": "agreement",
    "Coefficient": "coefficients",
    "raw_coefficients": "coefficients",
    "table_coefficients": "coefficients",
    "Digest": "digest",
    "RunProgress": "digest",
    "build_digest": "digest",
    "chart_png": "digest",
    "CalibrationReport": "calibration",
    "CorrelationReport": "correlate",
    "wilson_interval": "correlate",
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
    from .agreement import band as band
    from .agreement import bootstrap_ci as bootstrap_ci
    from .agreement import fleiss_kappa as fleiss_kappa
    from .agreement import krippendorff_alpha as krippendorff_alpha
    from .calibration import CalibrationReport as CalibrationReport
    from .coefficients import Coefficient as Coefficient
    from .coefficients import raw_coefficients as raw_coefficients
    from .coefficients import table_coefficients as table_coefficients
    from .correlate import CorrelationReport as CorrelationReport
    from .correlate import wilson_interval as wilson_interval
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
    from .synthetic import SyntheticLog as SyntheticLog
    from .synthetic import write_synthetic as write_synthetic
    from .validate import FLAGS as FLAGS
    from .validate import Flag as Flag
    from .validate import ValidationReport as ValidationReport

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
