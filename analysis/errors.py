"""The analysis package's one base exception.

Every error an analysis raises is an :class:`AnalysisError`: a :class:`evaluation.HilbotError`
(one line on the command line, saying what is wrong and how to fix it, exit code 2) and, for
code that calls the statistics directly, a ``ValueError`` too — the functions took a bad value.
"""

from __future__ import annotations

from evaluation.errors import HilbotError


class AnalysisError(HilbotError, ValueError):
    """An analysis cannot run on what it was given: a bad option, a bad argument or unusable data."""


__all__ = ["AnalysisError"]
