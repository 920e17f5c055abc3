"""The fast reader of ``ratings.jsonl``: lines parsed with orjson and checked by the record plans, a
block at a time.

A line the plans (:mod:`analysis._plans`) do not accept goes to the pydantic models, which
decide and say why (the same :class:`LogIssue` ``read_log`` gives). Big logs are split at line
boundaries and read by forked workers. The result is a :class:`analysis._scan.Scan`.
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from itertools import islice
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from evaluation.log import LogIssue, issue_reason

from ._plans import DICT, EMPTY, PLANS, STR, Acc, Interner, check_rows, finish
from ._scan import CATEGORICAL, EVENT_COLUMNS, HUMAN_TYPES, Scan, empty_events, events_frame

_BLOCK = 4 << 20
"""Bytes read at a time (about 10k lines); the vectorised checks run once per block."""
_SUB = 512
"""Lines parsed and checked together, while their dicts are in the CPU's cache."""
_PARALLEL_BYTES = 32 << 20
_MAX_JOBS = 4
_RATING_ONLY = ("judgment", "score", "concerns", "confidence", "labels")
"""Rating fields a skip record may wrongly carry (the skip_with_score flag)."""


def _json_loader() -> Callable[[bytes], Any]:
    """orjson's ``loads``; without orjson the standard library's (the same results, several times
    slower)."""
    try:
        from orjson import loads
    except ImportError:  # pragma: no cover - without orjson
        from json import loads as standard_loads

        return standard_loads
    return loads


json_loads = _json_loader()
"""The JSON parser of the fast readers (this module and :mod:`analysis._records`)."""


def scan_log(path: str | Path, *, jobs: int | None = None) -> Scan:
    """Read a ratings log fast (see :mod:`analysis.load`); a missing file reads as empty.

    ``jobs``: reader processes (default: one per CPU, at most 4, for logs of 32 MB or more when
    no other thread runs; 1 = in this process).
    """
    return start_scan(Path(path), jobs)()


def start_scan(
    path: str | Path, jobs: int | None = None, end: int | None = None
) -> Callable[[], Scan]:
    """Start reading ``path``; returns a function that finishes the read and gives the
    :class:`Scan`.

    With several jobs, forked workers read the later ranges of the log at once, and this process
    reads the first (a little shorter: the caller may load the runs in between). ``jobs`` as for
    :func:`scan_log`; ``end``: read only the bytes before it (at a line boundary).
    """
    path = Path(path)
    size = _readable_size(path)
    if size is None:
        return lambda: Scan(empty_events())
    size = size if end is None else min(size, end)
    jobs = _jobs(jobs, size)
    if jobs <= 1:
        return lambda: _scan_range(path, 0, size)
    import multiprocessing

    bounds = _split(path, size, jobs)
    pool = multiprocessing.get_context("fork").Pool(len(bounds) - 1)
    pending = pool.starmap_async(_scan_part, [(str(path), a, b) for a, b in bounds[1:]])
    enabled = gc.isenabled()
    gc.disable()  # the workers' results are unpickled in the background: millions of objects

    def finish_scan() -> Scan:
        try:
            own = _scan_range(path, *bounds[0])
            return _merge([own, *pending.get()])
        finally:
            pool.close()
            pool.join()
            if enabled:
                gc.enable()

    return finish_scan


def _readable_size(path: Path) -> int | None:
    """The log's size, None when there is no log; a one-line ``LogError`` when it cannot be read.

    Opened as ``read_log`` opens it: a directory, a FIFO or a device is refused (never blocks),
    as is a path without permission or under a file.
    """
    from evaluation.log import open_for_reading

    handle = open_for_reading(path)
    if handle is None:
        return None
    with handle:
        return os.fstat(handle.fileno()).st_size


def _cannot_read(path: Path, exc: OSError) -> Exception:
    from evaluation.errors import LogError
    from evaluation.log import os_fix, os_reason

    return LogError(f"cannot read: {os_reason(exc)}", where=str(path), fix=os_fix(exc))


def _jobs(jobs: int | None, size: int) -> int:
    import multiprocessing
    import threading

    if jobs is None:
        if (
            size < _PARALLEL_BYTES or threading.active_count() > 1
        ):  # forking a threaded process is unsafe
            return 1
        try:
            jobs = min(len(os.sched_getaffinity(0)), _MAX_JOBS)
        except AttributeError:  # pragma: no cover - not Linux
            jobs = min(os.cpu_count() or 1, _MAX_JOBS)
    if "fork" not in multiprocessing.get_all_start_methods():  # pragma: no cover - not POSIX
        return 1
    return max(1, min(jobs, size // 1024 or 1))


def _split(path: Path, size: int, jobs: int) -> list[tuple[int, int]]:
    """``jobs`` byte ranges cut just after a newline; the first is 10 % shorter than the others."""
    share = size / (jobs - 0.1)
    targets = [0.9 * share + k * share for k in range(jobs - 1)]
    cuts = [0]
    with open(path, "rb") as handle:
        for target in targets:
            handle.seek(max(cuts[-1], int(target)))
            handle.readline()
            position = handle.tell()
            if cuts[-1] < position < size:
                cuts.append(position)
    cuts.append(size)
    return list(zip(cuts, cuts[1:]))


def scan_range(path: str | Path, start: int, end: int) -> Scan:
    """Scan bytes [start, end) of ``path`` in this process (both at line boundaries); lines
    numbered from 1."""
    return _scan_range(Path(path), start, end)


def merge_scans(parts: list[Scan]) -> Scan:
    """One scan of consecutive ranges' scans (lines renumbered, codes unified)."""
    return _merge(parts)


def _scan_part(path: str, start: int, end: int) -> Scan:
    """A forked reader: scan one range (its dicts die with the process, so no GC at all)."""
    gc.disable()
    return _scan_range(Path(path), start, end)


def _scan_range(path: Path, start: int, end: int) -> Scan:
    """Scan bytes [start, end) of ``path`` (both at line boundaries); lines numbered from 1."""
    try:
        return _scan_open(path, start, end)
    except OSError as exc:  # replaced by a directory meanwhile, an I/O error
        raise _cannot_read(path, exc) from None


def _scan_open(path: Path, start: int, end: int) -> Scan:
    scan = Scan(empty_events())
    interner = Interner()
    pieces: list[dict[str, Any]] = []
    with open(path, "rb") as handle, _no_gc():
        handle.seek(start)
        position = start
        while position < end:
            lines = handle.readlines(_BLOCK)
            if not lines:
                break
            position += sum(map(len, lines))
            if position > end:  # the next range's lines
                extra = position - end
                while extra > 0:
                    extra -= len(lines.pop())
                position = end
            torn = not lines[-1].endswith(b"\n")
            pieces.extend(
                _scan_block(
                    lines, scan.lines + 1, path, torn_last=torn, scan=scan, interner=interner
                )
            )
            scan.lines += len(lines)
        scan.events, scan.tags, scan.tag_names = events_frame(pieces, interner)
    return scan


def _merge(parts: list[Scan]) -> Scan:
    """One scan of consecutive ranges' scans (lines renumbered, codes unified)."""
    from pandas.api.types import union_categoricals

    merged = Scan(empty_events())
    frames, tags = [], []
    names: dict[str, int] = {}
    offset = tag_offset = 0
    for part in parts:
        events = dict(part.events)
        events["line"] = events["line"] + offset
        events["tag_start"] = events["tag_start"] + tag_offset
        frames.append(events)
        mapping = np.asarray(
            [names.setdefault(name, len(names)) for name in part.tag_names], dtype=np.int32
        )
        tags.append(mapping[part.tags] if len(part.tags) else part.tags)
        merged.issues.extend(
            LogIssue(i.path, i.line + offset, i.reason, i.torn) for i in part.issues
        )
        merged.raw.extend((line + offset, what, detail) for line, what, detail in part.raw)
        for name, n in part.counts.items():
            merged.counts[name] = merged.counts.get(name, 0) + n
        merged.slow_lines += part.slow_lines
        offset += part.lines
        tag_offset += len(part.tags)
    merged.events = {
        name: union_categoricals([f[name] for f in frames])
        if name in CATEGORICAL
        else np.concatenate([f[name] for f in frames])
        for name in EVENT_COLUMNS
    }
    merged.tags = np.concatenate(tags).astype(np.int32) if tags else np.zeros(0, dtype=np.int32)
    merged.tag_names = list(names)
    merged.lines = offset
    return merged


@contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector (millions of fresh dicts would trigger it constantly)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# --------------------------------------------------------------------------- one block of lines


def _scan_block(
    lines: list[bytes], first: int, path: Path, *, torn_last: bool, scan: Scan, interner: Interner
) -> list[dict[str, Any]]:
    """Parse and check one block of lines; valid human events as column pieces, the rest into
    ``scan``."""
    accs, suspect = _check_block(lines, first, scan, interner)
    pieces: list[dict[str, Any]] = []
    for type_name, acc in accs.items():
        piece, rejected = finish(acc, type_name, first)
        suspect.update(rejected)
        scan.counts[type_name] = scan.counts.get(type_name, 0) + len(acc.pos) - len(rejected)
        if piece is not None:
            pieces.append(piece)
    return pieces + _rescue(
        lines, sorted(suspect), first, path, torn_last=torn_last, scan=scan, interner=interner
    )


def _check_block(
    lines: list[bytes], first: int, scan: Scan, interner: Interner
) -> tuple[dict[str, Acc], set[int]]:
    """The plans' checks over a block, ``_SUB`` lines at a time: the columns per record type, and
    the block positions of the lines left to the models (not JSON objects, no plan, a bad field)."""
    suspect: set[int] = set()
    accs: dict[str, Acc] = {}
    for start in range(0, len(lines), _SUB):
        objs = _loads(lines[start : start + _SUB])
        if set(map(type, objs)) != DICT:
            for j, obj in enumerate(objs):
                if obj.__class__ is not dict:
                    suspect.add(start + j)
                    objs[j] = EMPTY
        for type_name, where, group in _by_type(objs, start):
            if type_name == "skip":
                _skip_fields(group, where, first, scan)
            plan = PLANS.get(type_name) if type_name is not None else None
            if type_name is None or plan is None:  # another record type, or none: the models decide
                suspect.update(where)
                continue
            acc = accs.get(type_name)
            if acc is None:
                acc = accs[type_name] = Acc(plan, interner)
            offset = len(acc.pos)
            bad = check_rows(group, plan, acc)
            acc.pos.extend(where)
            if bad:
                acc.bad.update(offset + j for j in bad)
    return accs, suspect


def _skip_fields(group: list[dict], where: Any, first: int, scan: Scan) -> None:
    """Note skip records that carry rating fields (valid or not: ``validate`` flags them)."""
    for j, row in zip(where, group):
        extra = [name for name in _RATING_ONLY if name in row]
        if extra:
            scan.raw.append((first + j, "skip_fields", ",".join(extra)))


def _rescue(
    lines: list[bytes],
    suspects: list[int],
    first: int,
    path: Path,
    *,
    torn_last: bool,
    scan: Scan,
    interner: Interner,
) -> list[dict[str, Any]]:
    """The lines the fast checks did not accept: the models decide, and say why (``scan.issues``).

    Returns the column pieces of the human events the models accept, with the models' values.
    """
    rescued: dict[str, Acc] = {}
    for i in suspects:
        raw = lines[i]
        if not raw.strip():
            continue
        scan.slow_lines += 1
        try:
            record = _parse(raw)
        except (ValueError, RecursionError, _validation_error()) as exc:
            torn = torn_last and i == len(lines) - 1
            scan.issues.append(LogIssue(path, first + i, issue_reason(exc, torn), torn))
            continue
        type_name = record.type
        scan.counts[type_name] = scan.counts.get(type_name, 0) + 1
        if type_name in HUMAN_TYPES:
            normal = record.model_dump(mode="json")
            if "timestamp" not in record.model_fields_set:  # not the "now" the model invents
                del normal["timestamp"]
            acc = rescued.get(type_name)
            if acc is None:
                acc = rescued[type_name] = Acc(PLANS[type_name], interner)
            check_rows([normal], acc.plan, acc)
            acc.pos.append(i)
    pieces = []
    for type_name, acc in rescued.items():
        piece, _ = finish(acc, type_name, first, lenient=True)
        if piece is not None:
            pieces.append(piece)
    return pieces


def _validation_error() -> type[Exception]:
    from pydantic import ValidationError

    return ValidationError


def _parse(raw: bytes) -> Any:
    """What ``read_log`` does with a line (its own parser: hostile JSON, then the record model)."""
    from evaluation.log import parse_line

    return parse_line(raw, False)


def _loads(lines: list[bytes]) -> list[Any]:
    """orjson.loads of every line; None where a line is not JSON (blank lines included)."""
    loads = json_loads
    out: list[Any] = []
    position = 0
    while True:
        try:
            out.extend(map(loads, islice(lines, position, None)))
            return out
        except (ValueError, RecursionError):  # orjson's JSONDecodeError is a ValueError
            position = len(out)
            out.append(None)
            position += 1


_TYPE = itemgetter("type")


def _by_type(objs: list[dict], start: int) -> list[tuple[str | None, Any, list[dict]]]:
    """Split records by their ``type``: (the type, None when it is not a string; block positions;
    records)."""
    try:
        types = list(map(_TYPE, objs))
    except KeyError:
        types = [d.get("type") for d in objs]
    if not set(map(type, types)) <= STR:
        types = [t if t.__class__ is str else None for t in types]
    kinds = dict.fromkeys(types)
    if len(kinds) == 1:
        return [(types[0], range(start, start + len(objs)), objs)]
    out = []
    for kind in kinds:
        picked = [j for j, t in enumerate(types) if t == kind]
        out.append((kind, [start + j for j in picked], [objs[j] for j in picked]))
    return out
