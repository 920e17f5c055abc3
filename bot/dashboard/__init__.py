"""The dashboard: a read-only local web app over the data dir (``hilbot dashboard``) and the same
pages as one self-contained HTML file (``hilbot report --html FILE``).

Pages are registered by name (:func:`page`), each a function from the data to sections of text,
charts and tables; :mod:`bot.dashboard.html` renders them, escaped, for both.
"""

from __future__ import annotations

from .errors import DashboardError
from .page import Chart, Link, Section, Table, page, pages

__all__ = ["Chart", "DashboardError", "Link", "Section", "Table", "page", "pages"]
