"""The store as pandas DataFrames: current ratings, skips, concerns and notes, items and runs.

:func:`load` is where every analysis starts; :class:`Frames` lists the columns and dtypes
(the contract other analysis modules build on). Runs are read with :meth:`Store.load_run`;
``ratings.jsonl`` is streamed from ``store.ratings.path`` by a fast reader whose result equals
folding ``store.human_events()`` with :class:`evaluation.reviews.Ledger`:

* a line counts if it is a valid ``rating``, ``skip`` or ``note`` record; ``delivery``,
  ``review_summary`` and every other record type are checked, then ignored;
* an event whose idempotency key was already seen (on any rating, skip or note) is dropped;
* per (run_id, item_id, dimension, reviewer) the latest rating or skip counts (a skip after a
  rating replaces it, a rating after a skip replaces the skip); the latest note is kept apart;
* a bad line (not JSON, not an object, not a valid record, a torn last line) is skipped and
  reported into ``issues`` as the same :class:`LogIssue` (``file:line: reason``) ``read_log`` gives.

How it is fast (1M lines in about 4 s on this 2-vCPU machine, 7 s in one process; folding
``human_events()`` through the pydantic models takes about 40 s): lines are parsed with orjson
(installed, not yet a declared dependency; ``json.loads`` and ``pandas.read_json`` are several
times slower), a few hundred at a time, with the garbage collector paused. Records are checked
column-wise against hand-written plans of ``Rating`` / ``Skip`` / ``Note`` / ``Delivery`` that
accept only plainly valid values (exact JSON types, no unknown keys, a strict ISO-8601 shape for
timestamps, scores in 0–1, known literals); every line they do not accept goes to the pydantic
models (``parse_record``), which decide: a lax value pydantic coerces (``"0.5"`` as a score)
still counts, with pydantic's value, and the fast path never accepts a line the models reject.
Low-cardinality columns are interned into categorical codes while the strings are hot in cache;
the fold is vectorised (``duplicated`` on the idempotency keys' hashes, checked exactly on the
strings where hashes repeat, then ``duplicated(keep="last")`` on one int64 code per key). Logs of
32 MB or more are split at line boundaries: forked workers read the later ranges while this
process loads the runs and reads the first range — not when other threads run (forking a
threaded process is unsafe), nor with ``jobs=1``.

Conventions of the frames:

* ``reviewer`` is the ``platform:id`` key; rows are in log order; ``line`` is 1-based.
* ``n_concerns`` and the ``concerns`` frame count each distinct tag of a rating once.
* ``note`` is the rating's own note when non-empty, else the text of the latest ``note`` record
  of the same key (wherever it is in the log), else None.
* ``source_type`` of a rating is its ``metadata.source_type``, else the item's ``source_type``
  feature, else None.
* A record without a timestamp has ``NaT`` (the model would invent "now"); a timestamp without
  a zone counts as UTC.
* ``runs=`` restricts every frame to those runs. Without it, ratings of runs no run file holds
  are kept (as the Ledger keeps them).
"""

from __future__ import annotations

import gc
import hashlib
import math
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, compress, islice, repeat
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np
import pandas as pd

try:
    from orjson import loads as _json_loads
except ImportError:  # pragma: no cover - without orjson: the same results, several times slower
    from json import loads as _json_loads

from evaluation.log import LogIssue
from evaluation.records import EARLIEST, LATEST

if TYPE_CHECKING:
    from evaluation.runs import Run
    from evaluation.store import Store

KIND_RATING, KIND_SKIP, KIND_NOTE = 0, 1, 2
HUMAN_TYPES = {"rating": KIND_RATING, "skip": KIND_SKIP, "note": KIND_NOTE}
KEY = ["run_id", "item_id", "dimension", "reviewer"]
"""The fold key of a human event."""
Events = dict  # column name -> np.ndarray or pd.Categorical (see Scan.events)

RATING_COLUMNS = ["run_id", "item_id", "dimension", "reviewer", "judgment", "score", "n_concerns", "note",
                  "timestamp", "channel", "source_type", "session_date", "line"]
SKIP_COLUMNS = ["run_id", "item_id", "dimension", "reviewer", "skip_reason", "timestamp", "line"]
CONCERN_COLUMNS = ["run_id", "item_id", "dimension", "reviewer", "tag", "timestamp"]
NOTE_COLUMNS = ["run_id", "item_id", "dimension", "reviewer", "text", "timestamp"]
ITEM_COLUMNS = ["run_id", "item_id", "kind", "set", "category", "query", "verdict", "confidence", "judge",
                "prompt_hash"]
RUN_COLUMNS = ["run_id", "set", "kind", "created_at", "judge", "item_count", "dimensions"]
TIMESTAMP = "datetime64[ns, UTC]"

_BLOCK = 4 << 20
"""Bytes read at a time (about 10k lines); the vectorised checks run once per block."""
_SUB = 512
"""Lines parsed and checked together, while their dicts are in the CPU's cache."""
_NAT = np.iinfo(np.int64).min


@dataclass(frozen=True)
class Frames:
    """The store as DataFrames (see the module doc for conventions).

    * ``ratings``: the latest RATING per (run_id, item_id, dimension, reviewer); a later skip
      removes it. ``run_id item_id dimension reviewer judgment channel`` str, ``score`` float64,
      ``n_concerns`` int64, ``note source_type session_date`` object, ``timestamp``
      datetime64[ns, UTC], ``line`` int64.
    * ``skips``: the latest SKIP per key: ``run_id item_id dimension reviewer`` str,
      ``skip_reason`` object, ``timestamp``, ``line`` int64.
    * ``concerns``: one row per (key, tag) of the current ratings: the key columns, ``tag`` str,
      ``timestamp`` (the rating's).
    * ``notes``: the latest note per key: the key columns, ``text`` str, ``timestamp``.
    * ``items``: one row per (run_id, item_id): ``run_id item_id kind set query judge`` str,
      ``category verdict prompt_hash source_type`` object, ``confidence`` float64 (``ai_confidence``),
      ``ai_<score>`` float64 per score name (NaN where the run's value is not in 0–1),
      ``feature_<name>`` float64 per numeric feature.
    * ``runs``: ``run_id set kind judge dimensions`` str (dimensions comma-joined),
      ``created_at`` datetime64[ns, UTC], ``item_count`` int64 (items in the run file).
    """

    ratings: pd.DataFrame
    skips: pd.DataFrame
    concerns: pd.DataFrame
    notes: pd.DataFrame
    items: pd.DataFrame
    runs: pd.DataFrame


# =========================================================================== public API


def load(store: "Store", *, runs: list[str] | None = None, issues: list[LogIssue] | None = None,
         jobs: int | None = None) -> Frames:
    """Read runs and ratings into :class:`Frames`; bad lines go to ``issues`` (never fatal).

    ``runs`` restricts the frames to those run ids (an unknown one raises ``RunNotFound``).
    ``jobs``: processes reading the log (default: one per CPU, at most 4, for logs of 32 MB or
    more when no other thread runs; 1 = in this process).
    """
    sink: list[LogIssue] = []
    pending = _start_scan(Path(store.ratings.path), jobs)  # the log is read while the runs load
    try:
        run_ids = list(dict.fromkeys(runs)) if runs is not None else store.run_ids()
        loaded = [store.load_run(run_id, sink) for run_id in run_ids]
        items = _items_frame(loaded)
    finally:
        scan = pending()
    sink.extend(scan.issues)
    folded = _fold(scan, items, run_ids if runs is not None else None)
    if issues is not None:
        issues.extend(sink)
    return Frames(ratings=folded["ratings"], skips=folded["skips"], concerns=folded["concerns"],
                  notes=folded["notes"], items=items, runs=_runs_frame(loaded))


def ai_score_column(items: pd.DataFrame, dimension: str) -> pd.Series:
    """The AI's 0–1 score for ``dimension`` per item, as :func:`evaluation.runs.ai_score` gives it.

    ``ai_<dimension>`` (then the same with ``-`` as ``_``) where present and not NaN, else
    ``ai_overall``; NaN where the item has none. Same index as ``items``; float64.
    """
    result = pd.Series(np.nan, index=items.index, dtype="float64", name=f"ai_{dimension}")
    for name in dict.fromkeys((dimension, dimension.replace("-", "_"), "overall")):
        column = f"ai_{name}"
        if column in items.columns:
            result = result.fillna(items[column].astype("float64"))
    return result


# =========================================================================== runs and items


def _items_frame(runs: list["Run"]) -> pd.DataFrame:
    from evaluation.runs import ai_confidence

    rows: list[dict[str, Any]] = []
    scores: set[str] = set()
    numeric: dict[str, bool] = {}
    for run in _in_order(runs):
        header = run.header
        prompt_hash = _prompt_hash(header.judge.prompt_hashes)
        for item in run.items:
            evaluation = item.evaluation
            row = {
                "run_id": run.run_id, "item_id": item.id, "kind": header.kind, "set": header.set,
                "category": item.query.category, "query": item.query.query, "verdict": evaluation.verdict,
                "confidence": float(ai_confidence(item)), "judge": evaluation.judge or header.judge.name,
                "prompt_hash": prompt_hash,
            }
            for name, value in evaluation.scores.items():
                row[f"ai_{name}"] = float(value) if 0.0 <= value <= 1.0 else np.nan  # not a 0–1 score: none
                scores.add(name)
            for name, value in item.features.items():
                if value is None:
                    numeric.setdefault(name, True)
                    continue
                is_number = isinstance(value, (int, float)) and not isinstance(value, bool) and _finite(value)
                numeric[name] = numeric.get(name, True) and is_number
                if is_number:
                    row[f"feature_{name}"] = float(value)
            source = item.features.get("source_type")
            row["source_type"] = source if isinstance(source, str) else None
            rows.append(row)
    ai_columns = [f"ai_{name}" for name in sorted(scores)]
    feature_columns = [f"feature_{name}" for name, ok in sorted(numeric.items())
                       if ok and any(f"feature_{name}" in row for row in rows)]
    columns = ITEM_COLUMNS + ai_columns + feature_columns + ["source_type"]
    data: dict[str, Any] = {}
    for name in columns:
        values = [row.get(name) for row in rows]
        if name in ("run_id", "item_id", "kind", "set", "query", "judge"):
            data[name] = pd.Series(values, dtype="str")
        elif name == "confidence" or name in ai_columns or name in feature_columns:
            data[name] = pd.Series([np.nan if v is None else v for v in values], dtype="float64")
        else:
            data[name] = pd.Series(values, dtype=object)
    return pd.DataFrame(data, columns=columns)


def _finite(value: int | float) -> bool:
    """Whether a number is a finite float64 (a huge integer is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _prompt_hash(hashes: dict[str, str]) -> str | None:
    """12 hex digits naming the set of judge prompts a run used; None when it lists none."""
    if not hashes:
        return None
    text = "\n".join(f"{name}={value}" for name, value in sorted(hashes.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _in_order(runs: list["Run"]) -> list["Run"]:
    """Runs oldest first (then by id): the order of the ``runs`` and ``items`` frames."""
    return sorted(runs, key=lambda r: (_utc(r.header.created_at), r.run_id))


def _utc(moment: Any) -> float:
    stamp = pd.Timestamp(moment)
    return (stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp).timestamp()


def _runs_frame(runs: list["Run"]) -> pd.DataFrame:
    rows = _in_order(runs)
    created = [pd.Timestamp(r.header.created_at) for r in rows]
    created = [t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC") for t in created]
    return pd.DataFrame({
        "run_id": pd.Series([r.run_id for r in rows], dtype="str"),
        "set": pd.Series([r.header.set for r in rows], dtype="str"),
        "kind": pd.Series([r.header.kind for r in rows], dtype="str"),
        "created_at": pd.Series(created, dtype=TIMESTAMP),
        "judge": pd.Series([r.header.judge.name for r in rows], dtype="str"),
        "item_count": pd.Series([len(r.items) for r in rows], dtype="int64"),
        "dimensions": pd.Series([",".join(r.header.dimensions) for r in rows], dtype="str"),
    }, columns=RUN_COLUMNS)


# =========================================================================== the fold


def _fold(scan: "Scan", items: pd.DataFrame, runs: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """Ledger's fold, vectorised, over the valid human events of a scan (``runs``: only those)."""
    events = scan.events
    line = events["line"]
    order = np.argsort(line, kind="stable")
    alive = order[~_duplicated_keys(events, order)]  # file order
    if runs is not None:
        alive = alive[np.asarray(events["run_id"].isin(runs))[alive]]
    key = _key_codes(events)
    kind = events["kind"]

    judged = alive[kind[alive] != KIND_NOTE]
    latest = judged[~pd.Series(key[judged]).duplicated(keep="last").to_numpy()]
    rating_pos = latest[kind[latest] == KIND_RATING]
    skip_pos = latest[kind[latest] == KIND_SKIP]
    noted = alive[kind[alive] == KIND_NOTE]
    note_pos = noted[~pd.Series(key[noted]).duplicated(keep="last").to_numpy()]

    # the rating's own note, else the latest note of its key
    own = events["note"][rating_pos]
    note = np.where(pd.isna(own) | (own == ""), None, own)
    if len(note_pos) and len(rating_pos):
        texts = pd.Series(events["text"][note_pos], index=key[note_pos])
        found = texts.reindex(key[rating_pos]).to_numpy(dtype=object)
        note = np.where(note == None, found, note)  # noqa: E711 - elementwise
        note = np.where(pd.isna(note), None, note)

    keys = {name: _strings(events[name], rating_pos) for name in KEY}
    source = _strings(events["source_type"], rating_pos)
    missing = np.flatnonzero(source == None)  # noqa: E711 - elementwise
    if len(missing) and len(items):
        lookup = dict(zip(zip(items["run_id"].astype(object), items["item_id"].astype(object)),
                          items["source_type"].astype(object)))
        run_id, item_id = keys["run_id"], keys["item_id"]
        source[missing] = [lookup.get((run_id[i], item_id[i])) for i in missing]

    rows, tags = scan.row_tags(rating_pos)
    counts = np.zeros(len(rating_pos), dtype=np.int64)
    if len(tags):
        codes, names = pd.factorize(tags)
        first = ~pd.Series(rows * len(names) + codes).duplicated().to_numpy()  # a tag twice counts once
        rows, tags = rows[first], tags[first]
        counts = np.bincount(rows, minlength=len(rating_pos)).astype(np.int64)
    ts = events["ts"]
    rating_ts = ts[rating_pos]
    ratings = pd.DataFrame({
        **{name: pd.Series(values, dtype="str") for name, values in keys.items()},
        "judgment": pd.Series(_strings(events["judgment"], rating_pos), dtype="str"),
        "score": events["score"][rating_pos],
        "n_concerns": counts,
        "note": pd.Series(note, dtype=object),
        "timestamp": _timestamps(rating_ts),
        "channel": pd.Series(_strings(events["channel"], rating_pos), dtype="str"),
        "source_type": pd.Series(source, dtype=object),
        "session_date": pd.Series(_strings(events["session_date"], rating_pos), dtype=object),
        "line": line[rating_pos].astype(np.int64),
    }, columns=RATING_COLUMNS)
    concerns = pd.DataFrame({
        **{name: pd.Series(values[rows], dtype="str") for name, values in keys.items()},
        "tag": pd.Series(tags, dtype="str"),
        "timestamp": _timestamps(rating_ts[rows]),
    }, columns=CONCERN_COLUMNS)
    skips = pd.DataFrame({
        **_key_columns(events, skip_pos),
        "skip_reason": pd.Series(_none(events["skip_reason"][skip_pos]), dtype=object),
        "timestamp": _timestamps(ts[skip_pos]),
        "line": line[skip_pos].astype(np.int64),
    }, columns=SKIP_COLUMNS)
    notes = pd.DataFrame({
        **_key_columns(events, note_pos),
        "text": pd.Series(events["text"][note_pos], dtype="str"),
        "timestamp": _timestamps(ts[note_pos]),
    }, columns=NOTE_COLUMNS)
    return {"ratings": ratings, "skips": skips, "concerns": concerns, "notes": notes}


def _duplicated_keys(events: pd.DataFrame, order: np.ndarray) -> np.ndarray:
    """Per position of ``order`` (file order): whether its idempotency key was seen before.

    Compares the keys' hashes, then the strings of the few rows whose hash repeats (exact).
    """
    hashes = pd.Series(events["idem_hash"][order])
    repeated = hashes.duplicated(keep=False).to_numpy()
    duplicated = np.zeros(len(order), dtype=bool)
    if repeated.any():
        where = np.flatnonzero(repeated)
        strings = pd.Series(events["idempotency_key"][order[where]])
        duplicated[where[strings.duplicated(keep="first").to_numpy()]] = True
    return duplicated


def _key_codes(events: "Events") -> np.ndarray:
    """One int64 per (run_id, item_id, dimension, reviewer): equal iff the keys are equal."""
    code = np.zeros(len(events["line"]), dtype=np.int64)
    bound = 1
    for name in KEY:
        column = events[name]
        codes, size = column.codes.astype(np.int64), len(column.categories) + 1
        if bound * size >= 1 << 62:  # keep it small: renumber what we have so far
            code, uniques = pd.factorize(code)
            bound = len(uniques) + 1
        code = code * size + codes + 1
        bound *= size
    return code


def _strings(column: pd.Categorical, positions: np.ndarray) -> np.ndarray:
    """Values of a categorical column at ``positions`` as an object array (None where missing)."""
    categories = np.append(np.asarray(column.categories, dtype=object), None)
    return categories[column.codes[positions]]


def _none(values: np.ndarray) -> np.ndarray:
    return np.where(pd.isna(values), None, values)


def _key_columns(events: "Events", positions: np.ndarray) -> dict[str, pd.Series]:
    return {name: pd.Series(_strings(events[name], positions), dtype="str") for name in KEY}


def _timestamps(ns: np.ndarray) -> pd.Series:
    return pd.Series(np.asarray(ns, dtype=np.int64).view("datetime64[ns]")).dt.tz_localize("UTC")


# =========================================================================== the fast reader


@dataclass
class Scan:
    """Every valid human event of a log, plus what was wrong with the other lines."""

    events: "Events"
    """Columns (arrays of equal length) of the valid rating/skip/note records, in blocks of log order (``line`` orders them):
    ``line kind run_id item_id dimension reviewer channel idempotency_key idem_hash`` (its
    ``hash()``) ``ts`` (int64 ns, NaT as int64 min) ``judgment score n_tags tag_start note
    source_type session_date skip_reason text``; key and low-cardinality columns are categorical."""
    issues: list[LogIssue] = field(default_factory=list)
    """Bad lines, as ``read_log`` reports them."""
    raw: list[tuple[int, str, str]] = field(default_factory=list)
    """Observations on raw records, valid or not: (line, what, detail). ``skip_fields``: a skip
    record carries rating fields (detail: their names, comma-separated)."""
    lines: int = 0
    """Lines read."""
    counts: dict[str, int] = field(default_factory=dict)
    """Valid records per type (every type, not only human events)."""
    tags: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    """Concern tags of every rating, flat, as codes into ``tag_names`` (a row's are
    ``tags[tag_start : tag_start + n_tags]``)."""
    tag_names: list[str] = field(default_factory=list)
    """The concern tags, by code."""

    def row_tags(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row, tag name) pairs of the events at ``positions``: rows index ``positions``."""
        counts = self.events["n_tags"].astype(np.int64)[positions]
        starts = self.events["tag_start"][positions]
        rows = np.repeat(np.arange(len(positions)), counts)
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        codes = self.tags[np.repeat(starts, counts) + offsets]
        return rows, np.asarray(self.tag_names, dtype=object)[codes] if len(codes) else np.zeros(0, dtype=object)


def scan_log(path: str | Path, *, jobs: int | None = None) -> Scan:
    """Read a ratings log fast (see the module doc); a missing file reads as empty.

    ``jobs``: reader processes (default: one per CPU, at most 4, for logs of 32 MB or more when
    no other thread runs; 1 = in this process).
    """
    return _start_scan(Path(path), jobs)()


_PARALLEL_BYTES = 32 << 20
_MAX_JOBS = 4


def _start_scan(path: Path, jobs: int | None) -> Any:
    """Start reading ``path``; returns a function that finishes the read and gives the :class:`Scan`.

    With several jobs, forked workers read the later ranges of the log at once, and this process
    reads the first (a little shorter: it also loads the runs in between).
    """
    size = _readable_size(path)
    if size is None:
        return lambda: Scan(_empty_events())
    jobs = _jobs(jobs, size)
    if jobs <= 1:
        return lambda: _scan_range(path, 0, size)
    import multiprocessing

    bounds = _split(path, size, jobs)
    pool = multiprocessing.get_context("fork").Pool(len(bounds) - 1)
    pending = pool.starmap_async(_scan_part, [(str(path), a, b) for a, b in bounds[1:]])
    enabled = gc.isenabled()
    gc.disable()  # the workers' results are unpickled in the background: millions of objects

    def finish() -> Scan:
        try:
            own = _scan_range(path, *bounds[0])
            return _merge([own, *pending.get()])
        finally:
            pool.close()
            pool.join()
            if enabled:
                gc.enable()

    return finish


def _readable_size(path: Path) -> int | None:
    """The log's size, None when there is no log; a one-line ``LogError`` when it cannot be read.

    Opened as ``read_log`` opens it: a directory, a FIFO or a device is refused (never blocks),
    as is a path without permission or under a file.
    """
    from evaluation.log import _open_for_reading

    handle = _open_for_reading(path)
    if handle is None:
        return None
    with handle:
        return os.fstat(handle.fileno()).st_size


def _cannot_read(path: Path, exc: OSError) -> Exception:
    from evaluation.errors import LogError
    from evaluation.log import _os_fix, os_reason

    return LogError(f"cannot read: {os_reason(exc)}", where=str(path), fix=_os_fix(exc))


def _jobs(jobs: int | None, size: int) -> int:
    import multiprocessing
    import os
    import threading

    if jobs is None:
        if size < _PARALLEL_BYTES or threading.active_count() > 1:  # forking a threaded process is unsafe
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
    scan = Scan(_empty_events())
    interner = _Interner()
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
            pieces.extend(_scan_block(lines, scan.lines + 1, path, torn_last=torn, scan=scan, interner=interner))
            scan.lines += len(lines)
        scan.events, scan.tags, scan.tag_names = _events_frame(pieces, interner)
    return scan


def _merge(parts: list[Scan]) -> Scan:
    """One scan of consecutive ranges' scans (lines renumbered, codes unified)."""
    from pandas.api.types import union_categoricals

    merged = Scan(_empty_events())
    frames, tags, names = [], [], {}
    offset = tag_offset = 0
    for part in parts:
        events = dict(part.events)
        events["line"] = events["line"] + offset
        events["tag_start"] = events["tag_start"] + tag_offset
        frames.append(events)
        mapping = np.asarray([names.setdefault(name, len(names)) for name in part.tag_names], dtype=np.int32)
        tags.append(mapping[part.tags] if len(part.tags) else part.tags)
        merged.issues.extend(LogIssue(i.path, i.line + offset, i.reason, i.torn) for i in part.issues)
        merged.raw.extend((line + offset, what, detail) for line, what, detail in part.raw)
        for name, n in part.counts.items():
            merged.counts[name] = merged.counts.get(name, 0) + n
        offset += part.lines
        tag_offset += len(part.tags)
    merged.events = {name: union_categoricals([f[name] for f in frames]) if name in _CATEGORICAL
                     else np.concatenate([f[name] for f in frames]) for name in EVENT_COLUMNS}
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


def _scan_block(lines: list[bytes], first: int, path: Path, *, torn_last: bool, scan: Scan,
                interner: "_Interner") -> list[dict[str, Any]]:
    """Parse and check one block of lines; valid human events as column pieces, the rest into ``scan``."""
    suspect: set[int] = set()
    accs: dict[str, _Acc] = {}
    for start in range(0, len(lines), _SUB):
        objs = _loads(lines[start:start + _SUB])
        if set(map(type, objs)) != _DICT:
            for j, obj in enumerate(objs):
                if obj.__class__ is not dict:
                    suspect.add(start + j)
                    objs[j] = _EMPTY
        for type_name, where, group in _by_type(objs, start):
            if type_name == "skip":
                for j, row in zip(where, group):
                    extra = [name for name in _RATING_ONLY if name in row]
                    if extra:
                        scan.raw.append((first + j, "skip_fields", ",".join(extra)))
            plan = _PLANS.get(type_name)  # type: ignore[arg-type]
            if plan is None:  # another record type, or none: the models decide
                suspect.update(where)
                continue
            acc = accs.get(type_name)
            if acc is None:
                acc = accs[type_name] = _Acc(plan, interner)
            offset = len(acc.pos)
            bad = _check_rows(group, plan, acc)
            acc.pos.extend(where)
            if bad:
                acc.bad.update(offset + j for j in bad)

    pieces: list[dict[str, Any]] = []
    for type_name, acc in accs.items():
        piece, rejected = _finish(acc, type_name, first)
        suspect.update(rejected)
        scan.counts[type_name] = scan.counts.get(type_name, 0) + len(acc.pos) - len(rejected)
        if piece is not None:
            pieces.append(piece)

    # lines the fast checks did not accept: the models decide, and say why
    rescued: dict[str, _Acc] = {}
    for i in sorted(suspect):
        raw = lines[i]
        if not raw.strip():
            continue
        try:
            record = _parse(raw)
        except (ValueError, RecursionError, _validation_error()) as exc:
            torn = torn_last and i == len(lines) - 1
            scan.issues.append(LogIssue(path, first + i, _issue_reason(exc, torn), torn))
            continue
        type_name = record.type  # type: ignore[attr-defined]
        scan.counts[type_name] = scan.counts.get(type_name, 0) + 1
        if type_name in HUMAN_TYPES:
            normal = record.model_dump(mode="json")
            if "timestamp" not in record.model_fields_set:  # not the "now" the model invents
                del normal["timestamp"]
            acc = rescued.get(type_name)
            if acc is None:
                acc = rescued[type_name] = _Acc(_PLANS[type_name], interner)
            _check_rows([normal], acc.plan, acc)
            acc.pos.append(i)
    for type_name, acc in rescued.items():
        piece, _ = _finish(acc, type_name, first, lenient=True)
        if piece is not None:
            pieces.append(piece)
    return pieces


def _validation_error() -> type[Exception]:
    from pydantic import ValidationError

    return ValidationError


def _parse(raw: bytes) -> Any:
    """What ``read_log`` does with a line (its own parser: hostile JSON, then the record model)."""
    from evaluation.log import _parse_line

    return _parse_line(raw, False)


def _issue_reason(exc: Exception, torn: bool) -> str:
    """The reason ``read_log`` gives for a bad line (its own words)."""
    from evaluation.log import BAD_LINE, _reason

    if torn:
        return "torn last line (a crash mid-write?), skipped; the next append starts on a fresh line"
    return _reason(exc) + "; " + BAD_LINE


def _loads(lines: list[bytes]) -> list[Any]:
    """orjson.loads of every line; None where a line is not JSON (blank lines included)."""
    loads = _json_loads
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
    """Split records by their ``type``: (the type, None when it is not a string; block positions; records)."""
    try:
        types = list(map(_TYPE, objs))
    except KeyError:
        types = [d.get("type") for d in objs]
    if not set(map(type, types)) <= _STR:
        types = [t if t.__class__ is str else None for t in types]
    kinds = dict.fromkeys(types)
    if len(kinds) == 1:
        return [(types[0], range(start, start + len(objs)), objs)]
    out = []
    for kind in kinds:
        picked = [j for j, t in enumerate(types) if t == kind]
        out.append((kind, [start + j for j in picked], [objs[j] for j in picked]))
    return out


# --------------------------------------------------------------------------- record plans
#
# Hand-written plans of Rating, Skip, Note and Delivery (evaluation/records.py) that accept only
# plainly valid values; anything else goes to the pydantic model. ``MISSING`` marks an absent key.


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()
_EMPTY: dict = {}
_NONE = type(None)
_DICT = {dict}
_STR = {str}
_STR_OPT = frozenset({str, _Missing})
_OPTSTR = frozenset({str, _NONE, _Missing})
_INT_OPT = frozenset({int, _Missing})
_BOOL_OPT = frozenset({bool, _Missing})
_NUMBER = frozenset({float, int})
_LIST = {list}
_LIST_OPT = frozenset({list, _Missing})
_STR_NONE = {str, _NONE}
_PLATFORM_ID = itemgetter("platform", "id")
_REVIEWER_KEYS = frozenset({"platform", "id", "name"})
_METADATA_KEYS = frozenset({"source_type", "session_date", "user_notes", "blocked_by", "follow_up"})
_LABEL_KINDS = {
    "trigger_correct": "bool", "trigger_component_observed": "str", "code_parses": "bool", "code_runs": "bool",
    "code_issues": "list", "technically_correct": "bool", "inaccuracies": "list", "completeness_score": "int15",
    "missing_elements": "list",
}
_RATING_ONLY = ("judgment", "score", "concerns", "confidence", "labels")
"""Rating fields a skip record may wrongly carry (the skip_with_score flag)."""
_CATEGORICAL = ("run_id", "item_id", "dimension", "reviewer", "channel", "judgment", "source_type", "session_date")
_INTERNED = _CATEGORICAL + ("tag",)


@dataclass(frozen=True)
class _Plan:
    allowed: frozenset[str]
    """Every field the model knows (any other key makes the record invalid)."""
    core: tuple[str, ...]
    """Fields hilbot always writes: read with one ``itemgetter`` when every record has them."""
    optional: tuple[str, ...]
    """Other fields read here."""
    cats: tuple[tuple[str, str | None], ...] = ()
    """Kept string fields, interned: (field, default when absent; None = required)."""
    checks: tuple[tuple[str, frozenset, frozenset | None], ...] = ()
    """Checked-only fields: (field, accepted classes, accepted string values or None)."""
    kept: tuple[tuple[str, frozenset], ...] = ()
    """Kept high-cardinality fields: (field, accepted classes)."""
    rating: bool = False
    human: bool = True

    @cached_property
    def getter(self) -> Any:
        return itemgetter(*self.core)

    @property
    def columns(self) -> list[str]:
        names = [name for name, _ in self.cats] + [name for name, _ in self.kept] + ["reviewer", "timestamp"]
        return names + (["score", "concerns", "source_type", "session_date"] if self.rating else [])


_EVENT = frozenset({"type", "v", "run_id", "item_id", "dimension", "reviewer", "channel", "idempotency_key",
                    "action", "timestamp"})
_EVENT_CORE = ("v", "run_id", "item_id", "dimension", "reviewer", "channel", "idempotency_key", "timestamp")
_EVENT_CATS = (("run_id", None), ("item_id", None), ("dimension", "overall"), ("channel", "terminal"))
_EVENT_CHECKS = (("v", _INT_OPT, None), ("action", _OPTSTR, None))
_PLANS: dict[str, _Plan] = {
    "rating": _Plan(
        _EVENT | {"judgment", "score", "concerns", "note", "confidence", "ai_verdict_shown", "labels", "metadata"},
        _EVENT_CORE + ("judgment", "score", "concerns", "ai_verdict_shown", "labels", "metadata"),
        ("note", "confidence", "action"),
        _EVENT_CATS + (("judgment", None),),
        _EVENT_CHECKS + (("confidence", _OPTSTR, frozenset({"high", "medium", "low"})),
                         ("ai_verdict_shown", _BOOL_OPT, None)),
        (("idempotency_key", frozenset(_STR)), ("note", _OPTSTR)),
        rating=True),
    "skip": _Plan(_EVENT | {"skip_reason"}, _EVENT_CORE, ("skip_reason", "action"), _EVENT_CATS, _EVENT_CHECKS,
                  (("idempotency_key", frozenset(_STR)), ("skip_reason", _OPTSTR))),
    "note": _Plan(_EVENT | {"text"}, _EVENT_CORE + ("text",), ("action",), _EVENT_CATS, _EVENT_CHECKS,
                  (("idempotency_key", frozenset(_STR)), ("text", frozenset(_STR)))),
    "delivery": _Plan(
        frozenset({"type", "v", "run_id", "item_id", "dimension", "reviewer", "channel", "kind", "chat_id",
                   "message_id", "group", "timestamp"}),
        ("v", "run_id", "item_id", "dimension", "reviewer", "channel", "kind", "chat_id", "message_id", "group",
         "timestamp"), (), (),
        (("v", _INT_OPT, None), ("run_id", frozenset(_STR), None), ("item_id", frozenset(_STR), None),
         ("dimension", _STR_OPT, None), ("channel", frozenset(_STR), None),
         ("kind", _STR_OPT, frozenset({"card", "note_prompt", "session"})), ("chat_id", frozenset(_STR), None),
         ("message_id", frozenset(_STR), None), ("group", _BOOL_OPT, None)),
        human=False),
}


class _Interner:
    """Integer codes of the low-cardinality string columns (one table per column, per scan)."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[Any, int]] = {name: {None: -1, MISSING: -1} for name in _INTERNED}
        self.values: dict[str, list[str]] = {name: [] for name in _INTERNED}
        self.pairs: dict[tuple[str, str], int] = {}
        """Reviewer code per (platform, id)."""

    def optional(self, name: str, col: list) -> list[int]:
        """Codes of a column of strings and Nones (checked already); None is -1."""
        table = self.tables[name]
        for value in set(col).difference(table):
            table[value] = len(self.values[name])
            self.values[name].append(value)
        return list(map(table.__getitem__, col))

    def code(self, name: str, value: str | None) -> int:
        table = self.tables[name]
        found = table.get(value)
        if found is None:
            found = table[value] = len(self.values[name])
            self.values[name].append(value)  # type: ignore[arg-type]
        return found

    def codes(self, name: str, col: Any, default: str | None) -> tuple[list[int], list[int]]:
        """Codes of a column of strings; absent values take ``default`` (or are bad when it is None).

        Returns (codes, positions whose value is not a string).
        """
        table = self.tables[name]
        try:
            distinct = set(col)
        except TypeError:  # an unhashable value (the record is rejected)
            col = [x if x.__class__ is str or x is MISSING else None for x in col]
            distinct = set(col)
            odd = True
        else:
            odd = not all(x.__class__ is str for x in distinct)
        for value in distinct.difference(table):
            if value.__class__ is str:
                table[value] = len(self.values[name])
                self.values[name].append(value)
            else:
                table[value] = -1
        codes = list(map(table.__getitem__, col))
        if not odd:
            return codes, []
        if default is not None and MISSING in distinct:
            fill = self.code(name, default)
            codes = [fill if x is MISSING else c for x, c in zip(col, codes)]
        wrong = [i for i, x in enumerate(col) if x.__class__ is not str and (x is not MISSING or default is None)]
        return codes, wrong

    def categorical(self, name: str, codes: np.ndarray) -> pd.Categorical:
        categories = pd.Index(self.values[name], dtype=object)
        return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(categories))


class _Acc:
    """Columns of one record type gathered over a block (``bad``: indices into ``pos``)."""

    __slots__ = ("plan", "pos", "bad", "cols", "interner")

    def __init__(self, plan: _Plan, interner: _Interner):
        self.plan = plan
        self.pos: list[int] = []
        self.bad: set[int] = set()
        self.cols: dict[str, list] = {name: [] for name in plan.columns}
        self.interner = interner


def _rows_where(col: Any, test: Any) -> list[int]:
    return [i for i, x in enumerate(col) if test(x)]


def _check_rows(rows: list[dict], plan: _Plan, acc: _Acc) -> set[int]:
    """Check records of one type (dicts); append their columns to ``acc``.

    Returns the indices (in ``rows``) of records the fast checks do not accept.
    """
    bad: set[int] = set()
    allowed = plan.allowed
    if not set().union(*rows) <= allowed:
        bad.update(i for i, d in enumerate(rows) if not d.keys() <= allowed)
    try:
        values = list(zip(*map(plan.getter, rows)))
    except KeyError:  # some record leaves a field out
        cols = {name: [d.get(name, MISSING) for d in rows] for name in plan.core}
    else:
        cols = dict(zip(plan.core, values))
    for name in plan.optional:  # all nullable: absent is None
        cols[name] = [d.get(name) for d in rows]
    out = acc.cols
    interner = acc.interner

    for name, default in plan.cats:
        codes, wrong = interner.codes(name, cols[name], default)
        bad.update(wrong)
        out[name].extend(codes)
    for name, ok, literals in plan.checks:
        col = cols[name]
        if not set(map(type, col)) <= ok:
            bad.update(_rows_where(col, lambda x: type(x) not in ok))
        if literals is not None:
            seen = {x for x in col if x.__class__ is str} if bad else set(col)
            if not seen <= literals | {None, MISSING}:
                bad.update(_rows_where(col, lambda x: x.__class__ is str and x not in literals))
    for name, ok in plan.kept:
        col = cols[name]
        if not set(map(type, col)) <= ok:
            bad.update(_rows_where(col, lambda x: type(x) not in ok))
        out[name].extend(col)

    stamps = cols["timestamp"]
    if not set(map(type, stamps)) <= _STR_OPT:
        bad.update(_rows_where(stamps, lambda x: type(x) not in _STR_OPT))
    out["timestamp"].extend(stamps)

    codes, wrong = _reviewers(cols["reviewer"], interner)
    bad.update(wrong)
    if plan.human:
        out["reviewer"].extend(codes)
    if not plan.rating:
        return bad

    score = cols["score"]
    if set(map(type, score)) <= _NUMBER:
        if not all(0.0 <= x <= 1.0 for x in set(score)):
            bad.update(_rows_where(score, lambda x: not 0.0 <= x <= 1.0))
    else:
        bad.update(_rows_where(score, lambda x: type(x) not in _NUMBER or not 0.0 <= x <= 1.0))
    out["score"].extend(score)

    concerns = cols["concerns"]
    kinds = set(map(type, concerns))
    if kinds <= _LIST:
        tags = chain.from_iterable(concerns)
    else:
        if not kinds <= _LIST_OPT:
            bad.update(_rows_where(concerns, lambda c: type(c) not in _LIST_OPT))
        tags = chain.from_iterable(c for c in concerns if c.__class__ is list)
    if not set(map(type, tags)) <= _STR:
        bad.update(_rows_where(concerns, lambda c: c.__class__ is list and any(t.__class__ is not str for t in c)))
    out["concerns"].extend(concerns)

    source, session, wrong = _metadata(cols["metadata"], interner)
    bad.update(wrong)
    out["source_type"].extend(source)
    out["session_date"].extend(session)

    labels = cols["labels"]
    if not set(map(type, labels)) <= _DICT:
        bad.update(_rows_where(labels, lambda x: x is not MISSING and x.__class__ is not dict))
        labels = [x if x.__class__ is dict else _EMPTY for x in labels]
    if any(labels):
        bad.update(_rows_where(labels, lambda x: x and not _labels_ok(x)))
    return bad


_BAD = -2


def _nested(col: list, convert: Any) -> tuple[list, list[int]]:
    """``convert(dict)`` per dict of ``col``, computed once per distinct dict; and the bad positions.

    ``convert`` returns ``_BAD`` for a dict the fast checks do not accept; a value that is not
    a dict is bad too (an absent one, ``MISSING``, is converted as ``{}``).
    """
    if set(map(type, col)) <= _DICT:
        try:
            fields = tuple(set().union(*col))
            if len(fields) > 1:  # every dict has every key: one itemgetter
                shapes: list = list(map(itemgetter(*fields), col))
                table = {shape: convert(dict(zip(fields, shape))) for shape in dict.fromkeys(shapes)}
            else:
                raise KeyError
        except (KeyError, TypeError):  # keys differ, or an unhashable value
            try:
                shapes = list(zip(map(tuple, col), map(tuple, map(dict.values, col))))
                table = {shape: convert(dict(zip(*shape))) for shape in dict.fromkeys(shapes)}
            except TypeError:  # an unhashable value: one by one
                shapes = []
        if shapes or not col:
            values = list(map(table.__getitem__, shapes))
            if _BAD not in table.values():
                return values, []
            return values, [i for i, v in enumerate(values) if v == _BAD]
    values = [convert(x) if x.__class__ is dict else convert({}) if x is MISSING else _BAD for x in col]
    return values, [i for i, v in enumerate(values) if v == _BAD]


def _reviewers(col: list, interner: _Interner) -> tuple[list[int], list[int]]:
    """The interned ``platform:id`` code of each reviewer dict, and the bad positions."""

    if set(map(type, col)) <= _DICT and set().union(*col) <= _REVIEWER_KEYS \
            and set(map(type, chain.from_iterable(map(dict.values, col)))) <= _STR \
            and all(map(dict.__contains__, col, repeat("id"))):
        # every reviewer plainly valid: only the (platform, id) pairs matter
        if all(map(dict.__contains__, col, repeat("platform"))):
            pairs = list(map(_PLATFORM_ID, col))
        else:
            pairs = [(r.get("platform", "terminal"), r["id"]) for r in col]
        table = interner.pairs
        for pair in dict.fromkeys(pairs).keys() - table.keys():
            table[pair] = interner.code("reviewer", f"{pair[0]}:{pair[1]}")
        return list(map(table.__getitem__, pairs)), []

    def convert(reviewer: dict) -> int:
        if not reviewer.keys() <= _REVIEWER_KEYS:
            return _BAD
        platform, ident = reviewer.get("platform", "terminal"), reviewer.get("id")
        if platform.__class__ is not str or ident.__class__ is not str or type(reviewer.get("name")) not in _OPTSTR:
            return _BAD
        return interner.code("reviewer", f"{platform}:{ident}")

    return _nested(col, convert)


def _metadata(col: list, interner: _Interner) -> tuple[list[int], list[int], list[int]]:
    """Interned codes of (source_type, session_date) per metadata dict, and the bad positions."""
    if set(map(type, col)) <= _DICT and set().union(*col) <= _METADATA_KEYS \
            and set(map(type, chain.from_iterable(map(dict.values, col)))) <= _STR_NONE:
        return (interner.optional("source_type", [m.get("source_type") for m in col]),
                interner.optional("session_date", [m.get("session_date") for m in col]), [])

    def convert(metadata: dict) -> Any:
        if not metadata.keys() <= _METADATA_KEYS or any(type(v) not in _OPTSTR for v in metadata.values()):
            return _BAD
        source, session = metadata.get("source_type"), metadata.get("session_date")
        return (interner.code("source_type", source) if source is not None else -1,
                interner.code("session_date", session) if session is not None else -1)

    pairs, wrong = _nested(col, convert)
    if wrong:
        pairs = [(-1, -1) if p == _BAD else p for p in pairs]
    if not pairs:
        return [], [], wrong
    source, session = zip(*pairs)
    return list(source), list(session), wrong


def _labels_ok(labels: dict) -> bool:
    """Whether the label fields are plainly valid (``Labels``)."""
    for name, value in labels.items():
        kind = _LABEL_KINDS.get(name)
        if kind is None:
            return False
        if value is None:
            continue
        if kind == "bool" and value.__class__ is not bool:
            return False
        if kind == "str" and value.__class__ is not str:
            return False
        if kind == "list" and not (value.__class__ is list and all(v.__class__ is str for v in value)):
            return False
        if kind == "int15" and not (value.__class__ is int and 1 <= value <= 5):
            return False
    return True


def _finish(acc: _Acc, type_name: str, first: int, *, lenient: bool = False) -> tuple[dict[str, Any] | None, list[int]]:
    """The vectorised checks (timestamps) over a block's records of one type.

    Returns the columns of the accepted human events (None for other types) and the block
    positions rejected. ``lenient``: records the model accepted already (none is rejected).
    """
    positions = np.asarray(acc.pos, dtype=np.int64)
    bad = np.zeros(len(positions), dtype=bool)
    if acc.bad and not lenient:
        bad[np.fromiter(acc.bad, dtype=np.int64, count=len(acc.bad))] = True
    ts, ts_bad = _times(acc.cols["timestamp"], lenient)
    if not lenient:
        bad |= ts_bad
    rejected = positions[bad].tolist()
    if not acc.plan.human:
        return None, rejected
    keep = ~bad
    everything = not rejected

    def column(name: str) -> list:
        return acc.cols[name] if everything else list(compress(acc.cols[name], keep))

    def codes(name: str) -> np.ndarray:
        return np.asarray(column(name), dtype=np.int32)

    kept = len(positions) - len(rejected)
    none = [None] * kept
    no_code = np.full(kept, -1, dtype=np.int32)
    piece: dict[str, Any] = {
        "line": positions[keep] + first,
        "kind": np.full(kept, HUMAN_TYPES[type_name], dtype=np.int8),
        "run_id": codes("run_id"), "item_id": codes("item_id"), "dimension": codes("dimension"),
        "reviewer": codes("reviewer"), "channel": codes("channel"), "idempotency_key": column("idempotency_key"),
        "ts": ts[keep],
        "idem_hash": np.fromiter(map(hash, column("idempotency_key")), dtype=np.int64, count=kept),
        "judgment": no_code, "score": np.full(kept, np.nan), "n_tags": np.zeros(kept, dtype=np.int32),
        "tags": np.zeros(0, dtype=np.int32), "note": none,
        "source_type": no_code, "session_date": no_code, "skip_reason": none, "text": none,
    }
    if type_name == "rating":
        piece["judgment"] = codes("judgment")
        piece["score"] = np.asarray(column("score"), dtype=np.float64)
        lists = [c if c.__class__ is list else () for c in column("concerns")]
        piece["n_tags"] = np.fromiter(map(len, lists), dtype=np.int32, count=kept)
        piece["tags"] = np.asarray(acc.interner.optional("tag", list(chain.from_iterable(lists))), dtype=np.int32)
        piece["note"] = column("note")
        piece["source_type"] = codes("source_type")
        piece["session_date"] = codes("session_date")
    elif type_name == "skip":
        piece["skip_reason"] = column("skip_reason")
    else:
        piece["text"] = column("text")
    return piece, rejected


_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
_SEPARATORS = [4, 7, 13, 16]
_SEPARATOR_CHARS = np.array([45, 45, 58, 58], dtype=np.uint8)
_NS_YEARS = (1678, 2261)
_RANGE_NS = (pd.Timestamp(EARLIEST).value, pd.Timestamp(LATEST).value)
"""The times a record may carry (:data:`evaluation.records.EARLIEST` … ``LATEST``) in ns since the epoch."""


def _times(col: list, lenient: bool) -> tuple[np.ndarray, np.ndarray]:
    """Timestamps as int64 ns since the epoch, UTC (NaT as int64 min), and which ones are bad.

    Accepted without the model: ``YYYY-MM-DD[T ]HH:MM:SS[.f{1,6}][Z|±HH:MM]`` that pandas parses,
    at a time the records allow (years 1970–2200 UTC; no zone is UTC); pandas alone is laxer than
    pydantic (``+05``, ``Z ``, a bare ``.``), hence the shape check. Other strings go to the model,
    which may accept them (``lenient``: parse whatever pandas can, NaT otherwise). Absent is NaT, not bad.
    """
    n = len(col)
    all_str = set(map(type, col)) <= _STR
    strs = col if all_str else [x if x.__class__ is str else "" for x in col]
    is_str = np.ones(n, dtype=bool) if all_str else np.fromiter((x.__class__ is str for x in col), dtype=bool, count=n)
    lengths = np.fromiter(map(len, strs), dtype=np.int64, count=n)
    if lenient:
        shaped = lengths > 0
    else:
        shaped = (lengths >= 19) & (lengths <= 32)
        if shaped.any():
            try:
                chars = np.array(strs, dtype="S32").view(np.uint8).reshape(n, 32)
            except UnicodeEncodeError:  # not ASCII: no valid timestamp either
                chars = np.zeros((n, 32), dtype=np.uint8)
                chars[:, :] = [list(x.encode("ascii", "replace")[:32].ljust(32, b"\0")) for x in strs]
            digits = chars - np.uint8(48) < 10
            shaped &= digits[:, _DIGITS].all(axis=1)
            shaped &= (chars[:, _SEPARATORS] == _SEPARATOR_CHARS).all(axis=1)
            shaped &= (chars[:, 10] == 84) | (chars[:, 10] == 32)
            dot = chars[:, 19] == 46
            tail = digits[:, 20:]
            fraction = np.where(tail.all(axis=1), 12, tail.argmin(axis=1))
            shaped &= ~dot | ((fraction >= 1) & (fraction <= 6))
            zone = np.minimum(19 + np.where(dot, 1 + fraction, 0), 26)
            rows = np.arange(n)
            sign = chars[rows, zone]
            naive = lengths == zone
            zulu = (lengths == zone + 1) & (sign == 90)
            offset = ((lengths == zone + 6) & ((sign == 43) | (sign == 45)) & (chars[rows, zone + 3] == 58)
                      & digits[rows, zone + 1] & digits[rows, zone + 2] & digits[rows, zone + 4]
                      & digits[rows, zone + 5])
            year = (chars[:, :4].astype(np.int64) - 48) @ np.array([1000, 100, 10, 1])
            shaped &= (naive | zulu | offset) & (year >= _NS_YEARS[0]) & (year <= _NS_YEARS[1])
    text = pd.Series(strs, dtype=object)
    if not shaped.all():
        text = text.where(shaped)
    parsed = pd.to_datetime(text, format="ISO8601", utc=True, errors="coerce")
    if lenient:
        parsed = parsed.where((parsed.dt.year >= _NS_YEARS[0]) & (parsed.dt.year <= _NS_YEARS[1]))
    values = parsed.array.as_unit("ns").asi8.copy()
    bad = is_str & (~shaped | (values < _RANGE_NS[0]) | (values > _RANGE_NS[1]))  # NaT is below the range
    return values, bad


# --------------------------------------------------------------------------- the events frame

EVENT_COLUMNS = ["line", "kind", "run_id", "item_id", "dimension", "reviewer", "channel", "idempotency_key",
                 "idem_hash", "ts", "judgment", "score", "n_tags", "tag_start", "note", "source_type", "session_date",
                 "skip_reason", "text"]
_NUMERIC = {"line": np.int64, "kind": np.int8, "idem_hash": np.int64, "ts": np.int64, "score": np.float64,
            "n_tags": np.int32, "tag_start": np.int64}


def _events_frame(pieces: list[dict[str, Any]], interner: _Interner) -> tuple["Events", np.ndarray, list[str]]:
    """One frame of every piece's rows; the flat tag codes and the tag names (``tag_start`` and
    ``n_tags`` of a row locate its tags in the flat codes)."""
    if not pieces:
        return _empty_events(), np.zeros(0, dtype=np.int32), []
    starts = []
    base = 0
    for piece in pieces:
        counts = piece["n_tags"].astype(np.int64)
        starts.append(np.cumsum(counts) - counts + base)
        base += len(piece["tags"])
    columns: dict[str, Any] = {}
    for name in EVENT_COLUMNS:
        if name == "tag_start":
            columns[name] = np.concatenate(starts)
        elif name in _NUMERIC or name in _CATEGORICAL:
            values = np.concatenate([p[name] for p in pieces]) if len(pieces) > 1 else pieces[0][name]
            if name in _CATEGORICAL:
                columns[name] = interner.categorical(name, values)
            else:
                columns[name] = np.asarray(values, dtype=_NUMERIC[name])
        else:
            values = list(chain.from_iterable(p[name] for p in pieces)) if len(pieces) > 1 else pieces[0][name]
            columns[name] = np.fromiter(values, dtype=object, count=len(values))
    tags = np.concatenate([p["tags"] for p in pieces]).astype(np.int32)
    return columns, tags, list(interner.values["tag"])


def _empty_events() -> "Events":
    columns: dict[str, Any] = {}
    for name in EVENT_COLUMNS:
        if name in _NUMERIC:
            columns[name] = np.zeros(0, dtype=_NUMERIC[name])
        elif name in _CATEGORICAL:
            columns[name] = pd.Categorical.from_codes(np.zeros(0, dtype=np.int32),
                                                      dtype=pd.CategoricalDtype(pd.Index([], dtype=object)))
        else:
            columns[name] = np.zeros(0, dtype=object)
    return columns


__all__ = ["Frames", "KEY", "Scan", "ai_score_column", "load", "scan_log"]
