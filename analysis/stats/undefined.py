"""A statistic that has no value, and why: never a silent NaN, never an exception.

Conventions, for every module of :mod:`analysis.stats`:

* A statistic the data cannot give — too few items, one rater, every rating the same category — is
  ``Undefined(reason)``, with the reason in a few words (``"one rater"``, ``"all ratings
  identical"``); so are its standard error, intervals and p-value. ``Undefined`` is falsy and prints
  as ``undefined (reason)``.
* Only a programming error (a bad argument) raises: :mod:`analysis.stats.errors`.
* Vectorised kernels work on arrays and use NaN for "undefined" internally; what they return to a
  caller is a float or an ``Undefined``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Undefined:
    """Why a statistic could not be computed (e.g. "one rater", "all ratings identical")."""

    reason: str
    """What made it undefined, in a few words."""

    def __bool__(self) -> bool:
        return False

    def __format__(self, spec: str) -> str:
        return f"undefined ({self.reason})"

    def __str__(self) -> str:
        return f"undefined ({self.reason})"


Number = float | Undefined
"""A statistic's value: a float, or why there is none."""
Bounds = tuple[float, float] | Undefined
"""A confidence interval as (low, high), the form the agreement coefficients report it in (a JSON
pair); an interval that carries its level and method is an
:class:`analysis.stats.intervals.Interval`."""

__all__ = ["Bounds", "Number", "Undefined"]
