"""The next command as the user can type it: hints name hilbot the way it runs from where they are.

A hint such as ``review it: hilbot review demo-docs-search`` is only useful if it runs as printed.
``hilbot`` is right when that name on ``PATH`` is this very program; right after ``make demo``
(no virtual environment activated) it is not, and the hint says ``.venv/bin/hilbot`` instead. A
data directory given on the command line (or in ``HILBOT_DATA_DIR``) that the next command would
not find by itself is carried along as ``--data-dir``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

__all__ = ["program", "prefix"]


def program() -> str:
    """``hilbot`` when that name on PATH runs this installation, else the script's path (relative
    to the working directory when it lies below it)."""
    script = Path(sys.executable).parent / "hilbot"
    if not script.exists():
        return "hilbot"  # run from a source tree without the console script
    found = shutil.which("hilbot")
    if found and Path(found).resolve() == script.resolve():
        return "hilbot"
    absolute = Path(os.path.abspath(script))
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def prefix(data_dir: str | None = None, default_data_dir: str | None = None) -> str:
    """The start of a command line that runs hilbot on the same data: :func:`program`, plus
    ``--data-dir`` when ``data_dir`` is not where the next command looks by itself."""
    words = [program()]
    if data_dir and Path(data_dir).resolve() != Path(default_data_dir or "results").resolve():
        words += ["--data-dir", data_dir]
    return shlex.join(words)
