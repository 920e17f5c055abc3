"""``hilbot report --html FILE``: every dashboard page in one self-contained file.

The file needs no network and no server: its styles and its one script (table sorting) are inside
it, its charts are inline SVG, and its Content-Security-Policy allows nothing to be loaded from
anywhere. It is written atomically (a temporary file beside it, then renamed), so a reader never
sees half of it.
"""

from __future__ import annotations

import os
import tempfile
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
    """Write the report to ``path`` (replacing it atomically); returns the path written."""
    target = Path(path)
    if target.is_dir():
        raise DashboardError(f"{target} is a directory", fix="give a file name, e.g. report.html")
    if not target.parent.is_dir():
        raise DashboardError(
            f"no directory {target.parent}", fix="create it first, or give another path"
        )
    html = report_html(store, config).encode("utf-8")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        os.fchmod(handle, _mode(target))
        with os.fdopen(handle, "wb") as out:
            out.write(html)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except OSError as exc:
        raise DashboardError(
            f"cannot write {target}: {exc.strerror or exc}", fix="choose a path you can write"
        ) from None
    return target


def _mode(target: Path) -> int:
    """The replaced file's permissions, or a new file's as ``open`` would make it (the umask)."""
    try:
        return target.stat().st_mode & 0o777
    except FileNotFoundError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


__all__ = ["report_html", "write_report"]
