"""``hilbot report --html FILE``: every dashboard page in one self-contained file.

The file needs no network and no server: its styles and its one script (table sorting) are inside
it, its charts are inline SVG, and its Content-Security-Policy allows nothing to be loaded from
anywhere. It is written atomically (a temporary file beside it, then renamed), so a reader never
sees half of it, and never over one of the store's logs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .errors import DashboardError

if TYPE_CHECKING:
    from evaluation import HilbotConfig, Store


def report_html(store: "Store", config: "HilbotConfig") -> str:
    """The report's HTML over the data dir as it is now."""
    from .data import DashboardData
    from .document import report

    return report(DashboardData(store, config))


def write_report(store: "Store", config: "HilbotConfig", path: str | Path) -> Path:
    """Write the report to ``path`` whole (a file beside it, then renamed over it), through the
    store, which refuses its own logs, run files and cache; returns the path written."""
    target = Path(path)
    store.refuse_logs(target)  # at once, not after the pages are built
    if target.is_dir():
        raise DashboardError(f"{target} is a directory", fix="give a file name, e.g. report.html")
    if not target.parent.is_dir():
        raise DashboardError(
            f"no directory {target.parent}", fix="create it first, or give another path"
        )
    return store.write_bytes(target, report_html(store, config).encode("utf-8"))


__all__ = ["report_html", "write_report"]
