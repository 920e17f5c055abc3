"""Reading the analyses' JSON reports: numbers, undefined statistics and intervals.

A report writes an undefined statistic as ``{"undefined": "why"}`` and an interval as
``[low, high]`` (agreement) or ``{"low": …, "high": …, "level", "method"}`` (the others); the
pages read both through these few functions.
"""

from __future__ import annotations

from typing import Any

from .page import Cell, interval


def number(value: Any) -> float | None:
    """A report's value as a number; None when it is undefined, a flag or missing."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def cell(value: Any) -> Cell:
    """A report's figure as a table cell: a number as it is, an undefined statistic as
    ``undefined (reason)``, a flag as yes or no."""
    if isinstance(value, dict) and "undefined" in value:
        return f"undefined ({value['undefined']})"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or isinstance(value, (str, int, float)):
        return value
    return str(value)


def bounds(ci: Any) -> tuple[float | None, float | None]:
    """An interval of a report (either form) as (low, high); (None, None) when it is undefined."""
    if isinstance(ci, dict) and "low" in ci and "high" in ci:
        return number(ci["low"]), number(ci["high"])
    if isinstance(ci, (list, tuple)) and len(ci) == 2:
        return number(ci[0]), number(ci[1])
    return None, None


def span(ci: Any) -> str:
    """An interval of a report as the reports write it (``[0.123, 0.456]``, or ``–``)."""
    return interval(*bounds(ci))


__all__ = ["bounds", "cell", "number", "span"]
