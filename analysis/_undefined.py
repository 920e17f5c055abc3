"""A statistic that has no value, and why: never a silent NaN, never an exception."""

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


__all__ = ["Undefined"]
