"""The dashboard's one base exception."""

from __future__ import annotations

from evaluation.errors import HilbotError


class DashboardError(HilbotError):
    """The dashboard cannot start or the report cannot be written; the message says how to fix
    it."""


__all__ = ["DashboardError"]
