"""Table cells and tables for the analyses' Markdown.

Undefined statistics print as ``undefined (reason)``, never as NaN. Rendering a whole report
(Markdown, or JSON from its ``to_dict()``) and writing the ``--out`` files is the analysis
registration's job (:class:`analysis.registry.Analysis`).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from .stats import Undefined


def fmt(value: Any, digits: int = 3) -> str:
    """A number, an undefined statistic or a missing value, for a table cell."""
    if isinstance(value, Undefined):
        return str(value)
    if isinstance(value, dict) and "undefined" in value:
        return f"undefined ({value['undefined']})"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def ci(interval: Any) -> str:
    """A confidence interval as ``[low, high]``: an :class:`analysis.stats.Interval` or a
    (low, high) pair (:data:`analysis.stats.Bounds`)."""
    if interval is None or isinstance(interval, Undefined):
        return fmt(interval)
    if isinstance(interval, tuple):
        return f"[{interval[0]:.3f}, {interval[1]:.3f}]"
    return f"[{interval.low:.3f}, {interval.high:.3f}]"


def p_value(value: Any) -> str:
    """A p-value: four decimals, or ``< 0.0001``."""
    return "< 0.0001" if isinstance(value, float) and value < 0.0001 else fmt(value, 4)


def table(headers: Iterable[str], rows: Iterable[Iterable[Any]]) -> list[str]:
    """A Markdown table (cells escaped for pipes)."""
    headers = list(headers)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else fmt(value)
    return text.replace("|", "\\|").replace("\n", " ")


__all__ = ["ci", "fmt", "p_value", "table"]
