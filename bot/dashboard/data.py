"""What the dashboard shows, read once per state of the logs and kept until they change.

:class:`DashboardData` holds the store's frames and each analysis's report, computed on first
use: a page asks only for what it shows. A report is the analysis's JSON exactly as
``hilbot analyze NAME --format json`` prints it, so a chart holds the figures a user can check on
the command line. :class:`DataCache` keeps one :class:`DashboardData` per :func:`signature` of the
data dir (each log's and run file's size, modification time and inode): a rating appended changes
it, and the next request reads the log again (through the columnar index, only its new tail).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from evaluation.errors import HilbotError

if TYPE_CHECKING:
    from analysis.load import Frames
    from analysis.registry import Inputs
    from evaluation import HilbotConfig, Store

READ_ONLY = ("validate", "agreement", "calibration", "correlate", "patterns", "triage")
"""The analyses a page may run: those that only read (``synthesize`` appends its synthesis to the
log, so the dashboard reads the stored ones instead: :meth:`DashboardData.summaries`)."""

Signature = tuple[tuple[str, int, int, int], ...]
"""Each file of the data dir the dashboard reads: name, size, modification time (ns), inode."""


def signature(store: "Store") -> Signature:
    """The state of the data dir's log and run files (a new rating or run changes it); with a
    database store, after pulling what the bots stored since."""
    store.sync()
    paths = [str(store.ratings.path)]
    runs = store.root / "runs"
    try:
        paths += sorted(entry.path for entry in os.scandir(runs) if entry.name.endswith(".jsonl"))
    except FileNotFoundError:
        pass
    state = []
    for path in paths:
        try:
            info = os.stat(path)
        except FileNotFoundError:
            continue
        state.append((os.path.basename(path), info.st_size, info.st_mtime_ns, info.st_ino))
    return tuple(state)


@dataclass
class Report:
    """One analysis's JSON report, or why there is none (no ratings yet, say)."""

    name: str
    """The analysis (``agreement``, ``calibration``, …)."""
    document: dict[str, Any] | None = None
    """The report, as ``hilbot analyze NAME --format json`` prints it."""
    error: str | None = None
    """Why there is no report: the analysis's one-line error."""


@dataclass
class DashboardData:
    """The data dir as the pages see it; each part is read or computed once, on first use."""

    store: "Store"
    """The data directory."""
    config: "HilbotConfig"
    """The configuration (dimensions, scales, features, triage thresholds)."""
    state: Signature = ()
    """The data dir's :func:`signature` when this was made."""
    warnings: list[str] = field(default_factory=list)
    """Unreadable log lines and other warnings, shown on the overview."""
    _reports: dict[tuple[str, str], Report] = field(default_factory=dict, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @cached_property
    def inputs(self) -> "Inputs":
        """The analyses' inputs over every run (frames loaded once, shared by every report)."""
        from analysis.registry import Inputs

        return Inputs(self.store, self.config, warnings=self.warnings)

    @property
    def frames(self) -> "Frames":
        """The ratings, skips, concerns, notes, items and runs of every run."""
        with self._lock:
            return self.inputs.frames

    def report(self, name: str, **options: Any) -> Report:
        """The analysis ``name``'s report over every run (``options`` as the command takes
        them), computed once."""
        key = (name, json.dumps(options, sort_keys=True, default=str))
        with self._lock:
            if key not in self._reports:
                self._reports[key] = self._compute(name, options)
            return self._reports[key]

    def summaries(self) -> dict[tuple[str, str], Any]:
        """The latest stored synthesis per (run, dimension) (``review_summary`` records for all
        reviewers, as ``hilbot analyze synthesize`` appended them)."""
        with self._lock:
            return self._summaries

    @cached_property
    def _summaries(self) -> dict[tuple[str, str], Any]:
        from analysis.synthesize import latest_summaries

        return latest_summaries(self.store)

    def _compute(self, name: str, options: dict[str, Any]) -> Report:
        from analysis.registry import analyses

        if name not in READ_ONLY:
            raise ValueError(f"the dashboard only reads: {name!r} is not one of {READ_ONLY}")
        try:
            output = analyses.get(name).run(self.inputs, fmt="json", **options)
        except HilbotError as exc:
            return Report(name, error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return Report(name, document=json.loads(output.text))


@dataclass
class DataCache:
    """One :class:`DashboardData` per state of the data dir: the latest one, kept until a file
    changes."""

    store: "Store"
    """The data directory."""
    config: "HilbotConfig"
    """The configuration."""
    _current: DashboardData | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get(self) -> DashboardData:
        """The data for the data dir as it is now (the kept one while no file changed)."""
        state = signature(self.store)
        with self._lock:
            if self._current is None or self._current.state != state:
                self._current = DashboardData(self.store, self.config, state)
            return self._current

    def version(self) -> str:
        """A short text that changes whenever the data dir changes (what the live page polls)."""
        return version(signature(self.store))


def version(state: Signature) -> str:
    """A short text naming a state of the data dir: the page carries its data's, the live page
    polls the current one and fetches itself again when they differ."""
    import hashlib

    return hashlib.sha256(repr(state).encode()).hexdigest()[:16]


__all__ = [
    "READ_ONLY",
    "DashboardData",
    "DataCache",
    "Report",
    "Signature",
    "signature",
    "version",
]
