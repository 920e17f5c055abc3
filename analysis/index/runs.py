"""What the run listing shows of each run, kept beside the index so that listing reads no run file
it has read before.

Per run file, ``cache/index/runs/<run id>.json`` holds its header, its items' ids, its AI overall,
whether it is complete and its bad lines, with the file's inode, size and modification time. A
file that changed in any of them is read again (and the facts rewritten); a run file is written
whole and only appended to while it grows, so that is every change hilbot makes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluation.log import LogIssue

from .log import index_dir, write_json

if TYPE_CHECKING:
    from evaluation.records import RunHeader
    from evaluation.store import Store

_VERSION = 1


@dataclass(frozen=True)
class RunFacts:
    """A run as the listing shows it."""

    run_id: str
    """The run's id."""
    header: "RunHeader"
    """Its header record."""
    item_ids: list[str]
    """Its items' ids, in the file's order."""
    overall: float | None
    """Its mean AI overall score (as :attr:`evaluation.runs.Run.overall` gives it)."""
    complete: bool
    """Whether it has its summary record (as :attr:`evaluation.runs.Run.complete`)."""


def run_facts(store: "Store", run_id: str, issues: list[LogIssue] | None = None) -> RunFacts:
    """The facts of a run: from the cache when its file has not changed, else read (and kept).

    Raises what :meth:`evaluation.store.Store.load_run` raises for a missing or unreadable run."""
    path = store.run_path(run_id)
    stamp = _stamp(path)
    cache = index_dir(store.ratings.path).parent / "runs" / f"{run_id}.json"
    kept = _read(cache, stamp)
    if kept is None:
        found: list[LogIssue] = []
        run = store.load_run(run_id, found)
        facts = RunFacts(run_id, run.header, [i.id for i in run.items], run.overall, run.complete)
        kept = (facts, [(i.line, i.reason, i.torn) for i in found])
        _write(cache, stamp, kept)
    facts, bad = kept
    if issues is not None:
        issues.extend(LogIssue(path, line, reason, torn) for line, reason, torn in bad)
    return facts


def _stamp(path: Path) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [_VERSION, info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns]


def _read(cache: Path, stamp: list[int] | None) -> tuple[RunFacts, list] | None:
    from evaluation.records import RunHeader

    if stamp is None:
        return None
    try:
        kept = json.loads(cache.read_bytes())
        if kept["stamp"] != stamp:
            return None
        facts = RunFacts(
            str(kept["run_id"]),
            RunHeader.model_validate_json(kept["header"]),
            [str(i) for i in kept["item_ids"]],
            None if kept["overall"] is None else float(kept["overall"]),
            bool(kept["complete"]),
        )
        return facts, [(int(a), str(b), bool(c)) for a, b, c in kept["issues"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(cache: Path, stamp: list[int] | None, kept: tuple[RunFacts, list]) -> None:
    facts, bad = kept
    if stamp is None:
        return
    record: dict[str, Any] = {
        "stamp": stamp,
        "run_id": facts.run_id,
        "header": facts.header.model_dump_json(),
        "item_ids": facts.item_ids,
        "overall": facts.overall,
        "complete": facts.complete,
        "issues": bad,
    }
    try:
        for part in (cache.parent.parent.parent, cache.parent.parent, cache.parent):
            if part.is_symlink():
                return
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_json(cache, record)
    except (OSError, ValueError):  # a cache: without it the listing is the same, only slower
        return


__all__ = ["RunFacts", "run_facts"]
