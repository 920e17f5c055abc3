"""hilbot's analysis: read-only figures over the store (the review digest, …).

Depends on ``evaluation`` only. Public names are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluation._lazy import lazy_getattr

_EXPORTS = {
    "Frames": "load",
    "ai_score_column": "load",
    "scan_log": "load",
    "SyntheticLog": "synthetic",
    "write_synthetic": "synthetic",
    "FLAGS": "validate",
    "Flag": "validate",
    "ValidationReport": "validate",
    "AgreementEstimate": "agreement",
    "AgreementReport": "agreement",
    "DimensionAgreement": "agreement",
    "ItemDisagreement": "agreement",
    "PairAgreement": "agreement",
    "band": "agreement",
    "bootstrap_ci": "agreement",
    "fleiss_kappa": "agreement",
    "krippendorff_alpha": "agreement",
    "Digest": "digest",
    "RunProgress": "digest",
    "build_digest": "digest",
    "chart_png": "digest",
    "CalibrationReport": "calibration",
    "CorrelationReport": "correlate",
    "wilson_interval": "correlate",
    "PatternsReport": "patterns",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .agreement import (
        AgreementEstimate,
        AgreementReport,
        DimensionAgreement,
        ItemDisagreement,
        PairAgreement,
        band,
        bootstrap_ci,
        fleiss_kappa,
        krippendorff_alpha,
    )
    from .calibration import CalibrationReport
    from .correlate import CorrelationReport, wilson_interval
    from .digest import Digest, RunProgress, build_digest, chart_png
    from .load import Frames, ai_score_column, scan_log
    from .synthetic import SyntheticLog, write_synthetic
    from .validate import FLAGS, Flag, ValidationReport
    from .patterns import PatternsReport

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
