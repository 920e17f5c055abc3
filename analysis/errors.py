"""The analysis package's one base exception.

Every error an analysis raises is an :class:`AnalysisError`: a :class:`evaluation.HilbotError`
(one line on the command line, saying what is wrong and how to fix it, exit code 2) and, for
code that calls the statistics directly, a ``ValueError`` too — the functions took a bad value.
It is also the statistics' :class:`analysis.stats.errors.StatsError`: importing this module makes
:mod:`analysis.stats` raise it (:func:`analysis.stats.errors.raise_as`), and ``analysis`` imports it
first thing, so a bad argument to a statistic is an ``AnalysisError`` wherever it is raised.
"""

from __future__ import annotations

from evaluation.errors import HilbotError

from .stats.errors import StatsError, raise_as


class AnalysisError(HilbotError, StatsError):
    """An analysis cannot run on what it was given: a bad option, a bad argument or unusable
    data."""


def _analysis_error(what: str, fix: str | None) -> AnalysisError:
    return AnalysisError(what, fix=fix)


raise_as(_analysis_error)

__all__ = ["AnalysisError"]
