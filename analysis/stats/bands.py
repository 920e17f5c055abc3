"""Target bands: how good an agreement coefficient is, in words.

Conventions:

* The κ-type coefficients (Cohen's, Scott's, Fleiss', Conger's, Gwet's AC1/AC2, Brennan–Prediger):
  ≥ 0.85 excellent, ≥ 0.75 good, ≥ 0.60 acceptable, else below acceptable (:data:`KAPPA_BANDS`).
* Krippendorff's α: ≥ 0.90 excellent, ≥ 0.80 good, ≥ 0.67 acceptable (:data:`ALPHA_BANDS`).
* Percent agreement is not chance-corrected: no band (``"n/a"``).
* Undefined, None or NaN: ``"undefined"``. An unknown metric is a
  :func:`analysis.stats.errors.bad_argument`.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from .errors import bad_argument
from .undefined import Number, Undefined

KAPPA_BANDS = ((0.85, "excellent"), (0.75, "good"), (0.60, "acceptable"))
"""Target bands for the κ-type coefficients."""
ALPHA_BANDS = ((0.90, "excellent"), (0.80, "good"), (0.67, "acceptable"))
"""Target bands for Krippendorff's α."""
BELOW = "below acceptable"
UNDEFINED_BAND = "undefined"
NO_BAND = "n/a"
"""The band of percent agreement (not chance-corrected)."""
_KAPPA_NAMES = (
    "cohen",
    "cohen_kappa",
    "fleiss",
    "fleiss_kappa",
    "kappa",
    "conger",
    "conger_kappa",
    "scott",
    "scott_pi",
    "gwet",
    "gwet_ac",
    "ac1",
    "ac2",
    "brennan_prediger",
    "bp",
)
_ALPHA_NAMES = ("krippendorff", "krippendorff_alpha", "alpha")


def band(value: Number | None, metric: str | Callable[..., Any]) -> str:
    """The target band for ``value`` of ``metric``: excellent / good / acceptable / below
    acceptable.

    ``metric`` is a κ-type coefficient (``"cohen"``, ``"fleiss"``, ``"conger"``, ``"scott"``,
    ``"gwet"``, ``"brennan_prediger"`` or their keys, e.g. ``"cohen_kappa"``: thresholds 0.85 / 0.75
    / 0.60), Krippendorff's α (``"krippendorff"`` / ``"alpha"`` / ``"krippendorff_alpha"``: 0.90 /
    0.80 / 0.67), or ``"percent_agreement"`` (no band: ``"n/a"``); the statistic functions
    themselves also work. Undefined, None or NaN → ``"undefined"``.
    """
    name = str(getattr(metric, "__name__", metric)).lower()
    if name in _KAPPA_NAMES:
        cuts = KAPPA_BANDS
    elif name in _ALPHA_NAMES:
        cuts = ALPHA_BANDS
    elif name in ("percent_agreement", "percent"):
        return UNDEFINED_BAND if _not_a_number(value) else NO_BAND
    else:
        raise bad_argument(
            f"unknown metric {metric!r}",
            fix="use 'cohen', 'fleiss', 'conger', 'scott', 'gwet', "
            "'brennan_prediger', 'krippendorff' or 'percent_agreement'",
        )
    if value is None or isinstance(value, Undefined) or not math.isfinite(value):
        return UNDEFINED_BAND
    return next((label for cut, label in cuts if value >= cut), BELOW)


def _not_a_number(value: Number | None) -> bool:
    return value is None or isinstance(value, Undefined) or not math.isfinite(value)


__all__ = ["ALPHA_BANDS", "BELOW", "KAPPA_BANDS", "NO_BAND", "UNDEFINED_BAND", "band"]
