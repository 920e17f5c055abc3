"""The one exception the statistics raise: a bad argument, with what is wrong and how to fix it.

Conventions:

* Data that gives no value is never an error: it is ``Undefined(reason)``
  (:mod:`analysis.stats.undefined`). Only calling a statistic wrongly — a label outside its
  categories, an unknown weighting or level, a wrongly shaped array, a bootstrap of an undefined
  estimate — raises.
* Such an error is made by :func:`bad_argument`: a :class:`StatsError`, which is a ``ValueError``
  with ``what`` and ``fix``.
* The package around the statistics can make them raise its own subclass of :class:`StatsError`
  (:func:`raise_as`). hilbot's does: importing ``analysis`` (which Python does before any
  ``analysis.stats`` module) imports :mod:`analysis.errors`, which passes
  :class:`analysis.errors.AnalysisError` — so within hilbot every bad argument is an
  ``AnalysisError`` too, one line on the command line (exit code 2), while this package imports
  nothing of hilbot's.
"""

from __future__ import annotations

from typing import Callable


class StatsError(ValueError):
    """A statistic was called with a bad argument: ``what`` is wrong, and the ``fix``."""

    what: str
    fix: str | None


def _plain(what: str, fix: str | None) -> StatsError:
    error = StatsError(f"{what} — {fix}" if fix else what)
    error.what, error.fix = what, fix
    return error


_make: Callable[[str, str | None], StatsError] = _plain


def raise_as(make: Callable[[str, str | None], StatsError]) -> None:
    """Make every later bad argument ``make(what, fix)``: a :class:`StatsError` of the caller's own
    kind."""
    global _make
    _make = make


def bad_argument(what: str, fix: str | None = None) -> StatsError:
    """The exception for a bad argument (raise it): ``what`` is wrong, and how to ``fix`` it."""
    return _make(what, fix)


__all__ = ["StatsError", "bad_argument", "raise_as"]
