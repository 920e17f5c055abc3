"""The files of the index: Parquet, written and read with DuckDB.

Per chunk ``<name>`` (its byte range of the log in the name):

* ``<name>.events.parquet``: one row per valid ``rating``, ``skip`` or ``note`` record of the
  chunk, in log order. ``line`` (the record's 1-based line in the log) and ``kind`` (0 rating,
  1 skip, 2 note) are stable; so are ``idempotency_key``, ``ts`` (nanoseconds since the epoch, UTC;
  the smallest int64 where the record has no time), ``score`` (NULL for skips and notes),
  ``n_tags`` (the rating's distinct concern tags), ``note``, ``skip_reason``, ``text``, and
  ``byte_offset``, where the record's line starts in the log (what reads the record itself). The
  low-cardinality columns ``run_id item_id dimension reviewer channel judgment source_type
  session_date`` hold integer codes (-1: none) into the names.
* ``<name>.tags.parquet``: the concern tags, one row per (``line``, ``tag`` code), in the order of
  the events.
* ``<name>.deliveries.parquet``: the chat deliveries (:mod:`.deliveries`).
* ``<name>.names.parquet``: ``field``, ``code``, ``value``: what each code of every chunk up to
  this one stands for (``field`` is the events' column, or ``tag`` for the tags). A code, once
  given, never changes, so the last chunk's names decode every chunk.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._columns import CATEGORICAL, EVENT_COLUMNS
from . import deliveries as delivery_files

if TYPE_CHECKING:
    import duckdb
    import numpy as np

    from .._scan import Scan

STORED = [c for c in EVENT_COLUMNS if c not in ("idem_hash", "tag_start")]
"""The events files' columns, in order."""
TAG = "tag"
"""The names' column of the concern tags."""
_TYPES = {
    "line": "BIGINT",
    "kind": "TINYINT",
    "idempotency_key": "VARCHAR",
    "ts": "BIGINT",
    "score": "DOUBLE",
    "n_tags": "INTEGER",
    "note": "VARCHAR",
    "skip_reason": "VARCHAR",
    "text": "VARCHAR",
    "byte_offset": "BIGINT",
    **{c: "INTEGER" for c in CATEGORICAL},
}
DERIVED = {
    "key_hash": "(hash(idempotency_key) >> 1)::BIGINT",
    "first": "first",
}
"""Columns the events files add: a stable 63-bit hash of the idempotency key, and whether the event
is the first of the log with its key (of the ratings, skips and notes: later ones are
redeliveries). An event's ``first`` never changes as the log grows."""
SCHEMAS = {
    "events": {c: _TYPES[c] for c in [*STORED, "byte_offset"]},
    "tags": {"line": "BIGINT", "tag": "INTEGER"},
    "names": {"field": "VARCHAR", "code": "INTEGER", "value": "VARCHAR"},
}
"""Each file's columns and their types (every chunk's files have them, whatever their values)."""


def connect() -> "duckdb.DuckDBPyConnection":
    """An in-memory DuckDB connection (two threads: this machine's cores)."""
    import duckdb

    return duckdb.connect(config={"threads": 2})


def files(folder: Path, names: list[str], kind: str) -> list[str]:
    """The ``kind`` (events, tags, names) files of the chunks ``names``."""
    return [str(folder / f"{name}.{kind}.parquet") for name in names]


# --------------------------------------------------------------------------- the names


class Names:
    """The dictionary of codes: per column, its values in code order."""

    def __init__(self, values: dict[str, list[str]] | None = None):
        self.values = {c: list((values or {}).get(c, [])) for c in (*CATEGORICAL, TAG)}
        self._codes = {c: {v: i for i, v in enumerate(vs)} for c, vs in self.values.items()}

    @classmethod
    def read(cls, con: Any, path: Path | None) -> "Names":
        """The names of a chunk's names file (none: an empty dictionary)."""
        if path is None:
            return cls()
        rows = con.execute(
            "SELECT field, value FROM read_parquet(?) ORDER BY field, code", [str(path)]
        ).fetchall()
        values: dict[str, list[str]] = {}
        for column, value in rows:
            values.setdefault(column, []).append(value)
        return cls(values)

    def recode(self, column: str, categories: list[str], codes: "np.ndarray") -> "np.ndarray":
        """``codes`` into ``categories`` as codes of this dictionary (new values are added)."""
        import numpy as np

        known = self._codes[column]
        values = self.values[column]
        mapping = np.empty(len(categories) + 1, dtype=np.int32)
        mapping[-1] = -1
        for i, value in enumerate(categories):
            if value not in known:
                known[value] = len(values)
                values.append(value)
            mapping[i] = known[value]
        return mapping[np.asarray(codes, dtype=np.int64)]

    def frame(self) -> Any:
        import numpy as np
        import pandas as pd

        rows = [(c, i, v) for c, vs in self.values.items() for i, v in enumerate(vs)]
        return pd.DataFrame(rows, columns=["field", "code", "value"]).astype(
            {"field": object, "code": np.int32, "value": object}
        )


# --------------------------------------------------------------------------- writing


def write(
    folder: Path,
    name: str,
    scan: "Scan",
    names: Names,
    earlier: list[str],
    deliveries: dict[str, list],
) -> None:
    """Write a scan (its lines already the log's) as chunk ``name``; ``names`` grows with its new
    values and is written as the chunk's names; ``earlier``: the events files before it;
    ``deliveries``: the chunk's deliveries' columns (:mod:`.deliveries`)."""
    import numpy as np
    import pandas as pd

    events = scan.events
    columns: dict[str, Any] = {}
    for column in [*STORED, "byte_offset"]:
        values = events[column]
        if column in CATEGORICAL:
            columns[column] = names.recode(column, list(values.categories), values.codes)
        else:
            columns[column] = values
    tags = names.recode(TAG, list(scan.tag_names), scan.tags) if len(scan.tags) else scan.tags
    lines = np.repeat(events["line"], events["n_tags"].astype(np.int64))
    tables = {
        "events": pd.DataFrame(columns),
        "tags": pd.DataFrame({"line": lines, "tag": np.asarray(tags, dtype=np.int32)}),
        "names": names.frame(),
    }
    con = connect()
    try:
        tables["events"]["first"] = _firsts(con, tables["events"], earlier)
        for kind, frame in tables.items():
            con.register("frame", frame)
            typed = [f'CAST("{c}" AS {t}) AS "{c}"' for c, t in SCHEMAS[kind].items()]
            if kind == "events":
                typed += [f"{sql} AS {c}" for c, sql in DERIVED.items()]
            _copy(con, f"SELECT {', '.join(typed)} FROM frame", folder, f"{name}.{kind}.parquet")
            con.unregister("frame")
        target = f"{name}.deliveries.parquet"
        delivery_files.write(con, deliveries, lambda c, query: _copy(c, query, folder, target))
    finally:
        con.close()


def _firsts(con: Any, events: Any, earlier: list[str]) -> "np.ndarray":
    """Per event: whether no earlier event (in this chunk by line, or in an earlier chunk) has its
    idempotency key."""
    import numpy as np
    import pandas as pd

    keys = pd.Series(events["idempotency_key"].to_numpy(), index=events["line"].to_numpy())
    order = np.argsort(events["line"].to_numpy(), kind="stable")
    first = np.empty(len(keys), dtype=bool)
    first[order] = ~keys.iloc[order].duplicated().to_numpy()
    if earlier and len(keys):
        con.register("fresh", pd.DataFrame({"k": keys.to_numpy(dtype=object)}))
        seen = con.execute(
            "SELECT DISTINCT e.idempotency_key FROM read_parquet($files) e "
            "SEMI JOIN (SELECT (hash(k) >> 1)::BIGINT AS h FROM fresh) f ON e.key_hash = f.h",
            {"files": earlier},
        ).fetchall()
        con.unregister("fresh")
        if seen:
            first &= ~keys.isin({k for (k,) in seen}).to_numpy()
    return first


def merge(folder: Path, names: list[str], into: str) -> None:
    """Write chunk ``into`` holding the chunks ``names`` (in order); they stay until removed."""
    con = connect()
    try:
        for kind in ("events", "tags", "deliveries"):
            listed = ", ".join(_literal(f) for f in files(folder, names, kind))
            _copy(con, f"SELECT * FROM read_parquet([{listed}])", folder, f"{into}.{kind}.parquet")
        last = _literal(files(folder, names[-1:], "names")[0])
        _copy(con, f"SELECT * FROM read_parquet({last})", folder, f"{into}.names.parquet")
    finally:
        con.close()


def _copy(con: Any, query: str, folder: Path, name: str) -> None:
    """``COPY (query)`` to a file beside ``name``, renamed into place."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    os.close(fd)
    try:
        con.execute(
            f"COPY ({query}) TO {_literal(tmp)} "
            "(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 262144)"
        )
        os.replace(tmp, folder / name)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _literal(path: str) -> str:
    return "'" + path.replace("'", "''") + "'"


# --------------------------------------------------------------------------- reading


def read(
    folder: Path, chunks: list[str], keys: bool = True
) -> tuple[dict[str, Any], "np.ndarray", Names, "np.ndarray"]:
    """Every chunk's events (columns; categorical ones as ``pandas.Categorical``), their tags'
    codes (flat, in the events' order), the names, and each event's ``first``. Without ``keys``
    the idempotency keys are not read (None): ``first`` says what they would."""
    import duckdb
    import numpy as np
    import pandas as pd

    wanted = [c for c in STORED if keys or c != "idempotency_key"] + ["first"]
    con = connect()
    try:
        names = Names.read(con, folder / f"{chunks[-1]}.names.parquet")
        events = _fetch(con, files(folder, chunks, "events"), wanted)
        tags = _fetch(con, files(folder, chunks, "tags"), ["tag"])["tag"]
    except duckdb.IOException as exc:  # merged by another process meanwhile: the caller reads again
        raise FileNotFoundError(str(exc)) from None
    finally:
        con.close()
    first = np.asarray(events.pop("first"), dtype=bool)
    if not keys:
        events["idempotency_key"] = np.full(len(first), None, dtype=object)
    columns: dict[str, Any] = {}
    for column in STORED:
        values = events[column]
        if column in CATEGORICAL:
            dtype = pd.CategoricalDtype(pd.Index(names.values[column], dtype=object))
            columns[column] = pd.Categorical.from_codes(values, dtype=dtype)
        else:
            columns[column] = values
    counts = np.asarray(columns["n_tags"], dtype=np.int64)
    columns["tag_start"] = np.cumsum(counts) - counts
    columns["idem_hash"] = np.zeros(len(counts), dtype=np.int64)  # hashed by the reader
    events = {c: columns[c] for c in EVENT_COLUMNS}
    return events, np.asarray(tags, dtype=np.int32), names, first


def _fetch(con: Any, paths: list[str], columns: list[str] | None = None) -> dict[str, "np.ndarray"]:
    for path in paths:
        if not Path(path).is_file():  # merged by another process meanwhile: the caller reads again
            raise FileNotFoundError(path)
    listed = ", ".join(columns) if columns else "*"
    result = con.execute(f"SELECT {listed} FROM read_parquet(?)", [paths]).fetchnumpy()
    return {name: _plain(values) for name, values in result.items()}


def _plain(values: Any) -> "np.ndarray":
    """A masked array (a column with NULLs) as a plain one: None (or NaN) where NULL."""
    import numpy as np

    if isinstance(values, np.ma.MaskedArray):
        plain = np.array(values.data, copy=True)
        mask = np.ma.getmaskarray(values)
        if plain.dtype == object:
            plain[mask] = None  # (``filled(None)`` would fill with the array's fill value, '?')
        elif plain.dtype.kind == "f":
            plain[mask] = np.nan
        else:
            plain[mask] = 0
        return plain
    return np.asarray(values)


__all__ = ["SCHEMAS", "STORED", "TAG", "Names", "connect", "files", "merge", "read", "write"]
