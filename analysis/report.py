"""Reports as Markdown or JSON, and the files ``--out DIR`` writes (reports and their charts).

Each report type has one Markdown renderer, registered with :func:`renders`. JSON is the
report's ``to_dict()``. Undefined statistics print as ``undefined (reason)``, never as NaN.
Markdown never carries a control character from the logs (see :func:`render`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Iterable

from evaluation import Store
from evaluation.text import visible

from ._undefined import Undefined

_RENDERERS: dict[str, Callable[[Any], list[str]]] = {}


def renders(type_name: str) -> Callable[[Callable[[Any], list[str]]], Callable[[Any], list[str]]]:
    """Register the Markdown renderer of a report type (by class name)."""

    def register(function: Callable[[Any], list[str]]) -> Callable[[Any], list[str]]:
        _RENDERERS[type_name] = function
        return function

    return register


def render(report: Any, fmt: str = "markdown") -> str:
    """The report as Markdown or JSON text.

    Markdown is for people: text from the logs in it (queries, tags, names) goes through
    :func:`evaluation.text.visible`. JSON is data and keeps every value exact.
    """
    if fmt == "json":
        return json.dumps(report.to_dict(), indent=2, ensure_ascii=False, default=str)
    _load_renderers()
    return visible("\n".join(_RENDERERS[type(report).__name__](report)).rstrip() + "\n")


def save(store: Store, out: str | Path, name: str, report: Any, charts: dict[str, bytes] | None = None) -> list[Path]:
    """Write ``name.md``, ``name.json`` and each chart PNG under ``out``; returns the paths."""
    out = Path(out)
    paths = [store.write_file(out / f"{name}.md", render(report)), store.write_file(out / f"{name}.json", render(report, "json"))]
    paths += [store.write_bytes(out / f"{chart}.png", png) for chart, png in (charts or {}).items()]
    return paths


def _load_renderers() -> None:
    from . import _renderers  # noqa: F401  (registers the renderers)


# ---------------------------------------------------------------------------------------------- formatting


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
    """A confidence interval as ``[low, high]``."""
    if interval is None or isinstance(interval, Undefined):
        return fmt(interval)
    return f"[{interval.low:.3f}, {interval.high:.3f}]"


def table(headers: Iterable[str], rows: Iterable[Iterable[Any]]) -> list[str]:
    """A Markdown table (cells escaped for pipes)."""
    headers = list(headers)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else fmt(value)
    return text.replace("|", "\\|").replace("\n", " ")


__all__ = ["ci", "fmt", "render", "renders", "save", "table"]
