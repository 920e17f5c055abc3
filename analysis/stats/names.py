"""The names the statistics key their results by: the weightings, and the coefficients of each
family. Plain tuples, importable without numpy, so a command can list them (``--weights``' choices)
before anything is computed; the families re-export them (:data:`analysis.stats.gwet.RAW`, …)."""

from __future__ import annotations

WEIGHTS = ("identity", "linear", "quadratic", "ordinal", "radical", "ratio", "circular")
"""The weightings (irrCAC's names)."""
RAW = (
    "percent_agreement",
    "fleiss_kappa",
    "conger_kappa",
    "gwet_ac",
    "brennan_prediger",
    "krippendorff_alpha",
)
"""Coefficients of raw ratings from any number of raters
(:func:`analysis.stats.gwet.raw_coefficients`)."""
POOLED = ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac", "brennan_prediger")
"""Coefficients :func:`analysis.stats.gwet.pooled` combines across dimensions (every one of the form
(p_a − p_e)/(1 − p_e))."""
TABLE = (
    "percent_agreement",
    "cohen_kappa",
    "scott_pi",
    "gwet_ac",
    "brennan_prediger",
    "krippendorff_alpha",
)
"""Coefficients of two raters' contingency table
(:func:`analysis.stats.tables.table_coefficients`)."""

__all__ = ["POOLED", "RAW", "TABLE", "WEIGHTS"]
