"""What a review bot needs of a long ratings log when it starts, found with the columnar index.

A bot (and ``hilbot review RUN``) folds the log into :class:`evaluation.reviews.Ledger`. Most of
that fold is about runs the bot may never touch again; only a little is about every run at once.
:func:`review_state` reads that little from the index, as the fold would leave it, once:

* each reviewer's latest card (the session a restarted bot resumes) and open note prompt (a prompt
  is answered by a later note, skip or typed answer of its reviewer on its item that is not a
  redelivery);
* each (reviewer, run, dimension)'s chat: its latest card or session start;
* the runs and dimensions each reviewer has judged or been dealt cards in (when first asked);
* the idempotency key of every rating, skip, note and adjudication, as sorted 63-bit hashes with
  the line's offset, so that a repeated key is found without holding the keys.

The rest is read per run when a run is first reviewed (:meth:`ReviewState.run_records`): its
current judgments and latest notes, its adjudications and every delivery of its cards, in log
order; folded, they leave the ledger's state of that run as the whole fold does. Every query stops
at the log's last line when the state was read, so a run read later sees the log as it was then,
as a fold at start would (the bot adds what it writes itself).

``tests/bot/test_ledger.py`` holds the state equal to the whole fold's on generated logs.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import numpy as np

    from evaluation.log import LogIssue
    from evaluation.records import Delivery

    from .index import Snapshot

_LATEST = """
SELECT arg_max(byte_offset, line), max(line) FROM read_parquet($d)
WHERE list_contains($kinds, kind) AND line <= $upto GROUP BY {by}
"""
_PROMPTS = """
SELECT arg_max(byte_offset, line), max(line), arg_max(reviewer, line), arg_max(run_id, line),
       arg_max(item_id, line), arg_max(dimension, line)
FROM read_parquet($d) WHERE kind = 1 AND line <= $upto GROUP BY reviewer
"""
_ANSWERS = """
SELECT p.reviewer, e.kind, e.byte_offset, e.line FROM read_parquet($e) e JOIN prompts p
ON e.reviewer = p.rc AND e.run_id = p.runc AND e.item_id = p.itemc AND e.dimension = p.dimc
WHERE e.line > p.line AND e.line <= $upto AND e.first {adjudicated}
"""
_JUDGED = """
SELECT DISTINCT reviewer, run_id, dimension FROM read_parquet($e) e
WHERE kind IN (0, 1) AND first AND line <= $upto {adjudicated}
"""
_DEALT = """
SELECT DISTINCT reviewer, run_id, dimension FROM read_parquet($d)
WHERE kind = 0 AND line <= $upto
"""
_KEYS = """
SELECT key_hash, byte_offset FROM read_parquet($e) WHERE first AND line <= $upto ORDER BY key_hash
"""
_MESSAGE = """
SELECT arg_max(byte_offset, line), max(line) FROM read_parquet($d)
WHERE kind IN (0, 1) AND channel = $channel AND chat_id = $chat AND message_id = $message
AND line <= $upto HAVING count(*) > 0
"""
_HASH = "SELECT (hash($1::VARCHAR) >> 1)::BIGINT"
"""An idempotency key's hash, as the index's ``key_hash``."""
_RUN_DELIVERIES = (
    "SELECT byte_offset, line, 'delivery' FROM read_parquet($d) WHERE run_id = $run "
    "AND line <= $upto"
)


@dataclass
class ReviewState:
    """The part of the folded log about every run at once, and the way to the rest."""

    path: Path
    """The ratings log."""
    snapshot: "Snapshot"
    """Its index when the state was read."""
    upto: int
    """The log's lines the state covers (what a run read later is read up to)."""
    sessions: dict[str, "Delivery"] = field(default_factory=dict)
    """Per reviewer key: the latest card dealt to them."""
    prompts: dict[str, "Delivery"] = field(default_factory=dict)
    """Per reviewer key: the note prompt still waiting for its text."""
    streams: dict[tuple[str, str, str], "Delivery"] = field(default_factory=dict)
    """Per (reviewer key, run, dimension): its latest card or session start."""
    _reviewed: dict[str, set[tuple[str, str]]] | None = field(default=None, repr=False)
    """Per reviewer key: the (run, dimension) pairs they judged or were dealt a card in (read when
    first asked)."""
    issues: list["LogIssue"] = field(default_factory=list)
    """The log's bad lines."""
    adjudications: list[tuple[int, Any]] = field(default_factory=list)
    """Every adjudication (line, record), redeliveries included."""
    earliest: dict[str, int] = field(default_factory=dict)
    """Per adjudication's key: the first line of a rating, skip or note with it."""
    hashes: "np.ndarray | None" = None
    """The key hashes of the ratings, skips and notes that are not redeliveries, sorted."""
    offsets: "np.ndarray | None" = None
    """Where each of their lines starts, in the order of :attr:`hashes`."""
    _con: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def run_records(self, run_id: str) -> list[Any]:
        """The records whose fold is the run's state: its current judgments and latest notes, its
        adjudications that are not redeliveries and all its deliveries, in log order."""
        from .index.queries import current_lines, kept_adjudications, read_records

        def query(con: Any) -> tuple[list, list]:
            lines = current_lines(con, self.snapshot, run_id, self.upto)
            return lines, con.execute(_RUN_DELIVERIES, self._args(run=run_id)).fetchall()

        lines, sent = self._query(query)
        found = read_records(self.path, [*lines, *sent])
        found += kept_adjudications(self.adjudications, run_id, self.earliest)
        return [record for _, record in sorted(found, key=lambda pair: pair[0])]

    def first_with_key(self, key: str) -> Any:
        """The record that first carried an idempotency key (the fold keeps it), or None."""
        event = self._event_with_key(key)
        adjudication = next(
            ((n, r) for n, r in self.adjudications if r.idempotency_key == key), None
        )
        if event is None or adjudication is None:
            return event if adjudication is None else adjudication[1]
        # an adjudication's key has its first event's line in ``earliest``
        return event if self.earliest[key] < adjudication[0] else adjudication[1]

    def _event_with_key(self, key: str) -> Any:
        """The rating, skip or note that first carried the key, or None."""
        import numpy as np

        from .index.queries import read_records

        with self._lock:
            self._current()
            if self.hashes is None or self.offsets is None or not len(self.hashes):
                return None
            (wanted,) = self._connection().execute(_HASH, [key]).fetchone()
            at = int(np.searchsorted(self.hashes, wanted))
            stop = int(np.searchsorted(self.hashes, wanted, side="right"))
            places = [(int(offset), 0) for offset in self.offsets[at:stop]]
        found = [r for _, r in read_records(self.path, places) if _key(r) == key]
        return found[0] if found else None

    def reviewed(self, reviewer_key: str) -> set[tuple[str, str]]:
        """The (run, dimension) pairs a reviewer judged or was dealt a card in."""
        from .index.chunks import Names
        from .index.queries import ADJUDICATED

        def query(con: Any) -> dict[str, set[tuple[str, str]]]:
            names = Names.read(con, Path(self.snapshot.names_file() or ""))
            return self._read_reviewed(con, names, ADJUDICATED)

        if self._reviewed is None:
            self._reviewed = self._query(query)
        return set(self._reviewed.get(reviewer_key, ()))

    def message(self, channel: str, chat_id: str, message_id: str) -> "Delivery | None":
        """The latest card or note prompt logged for a chat message, or None."""
        from .index.queries import read_records

        def query(con: Any) -> Any:
            where = self._args(channel=channel, chat=chat_id, message=message_id)
            return con.execute(_MESSAGE, where).fetchone()

        row = self._query(query)
        return read_records(self.path, [row])[0][1] if row else None

    # --------------------------------------------------------------- reading it

    def _query(self, query: Callable[[Any], Any]) -> Any:
        """``query(connection)`` over the index's files. Another process (or a digest in this one)
        may have merged the chunks it read at start: then the index is opened again and the query
        repeated (every query stops at :attr:`upto`, so the answer is the same)."""
        import duckdb

        from .index import indexed

        for attempt in range(3):
            with self._lock:
                try:
                    self._current()
                    return query(self._connection())
                except (duckdb.IOException, FileNotFoundError):
                    if attempt == 2:
                        raise
            snapshot = indexed(self.path)
            if snapshot is not None and sum(c["lines"] for c in snapshot.chunks) >= self.upto:
                self.snapshot = snapshot
        raise AssertionError("unreachable")  # pragma: no cover

    def _current(self) -> None:
        """Make sure the index read is still the log's (under :attr:`_lock`). An editor may have
        replaced the log while the bot runs (save-by-rename, ``sed -i``) or copied an older,
        shorter one over it: the offsets read at start no longer point at its lines. Then its index
        (rebuilt by :func:`analysis.index.indexed`) is read again: the adjudications, and the
        keys' hashes and offsets."""
        from .index import indexed

        log = self.snapshot.log
        try:
            now = os.stat(self.path)
        except OSError:
            return  # gone: the reads say so
        covered = self.snapshot.chunks[-1]["end"] if self.snapshot.chunks else 0
        if log is None or (
            (now.st_dev, now.st_ino) == (log.device, log.inode) and now.st_size >= covered
        ):
            return
        snapshot = indexed(self.path)
        if snapshot is None or not snapshot.chunks:
            return
        self.snapshot = snapshot
        self.adjudications = _adjudications(snapshot, self.upto)
        self._drop_connection()
        self._keys(self._connection())

    def _connection(self) -> Any:
        """The state's DuckDB connection (with the adjudications' table), opened once; used under
        :attr:`_lock`."""
        from .index.queries import with_adjudications

        if self._con is None:
            self._con = with_adjudications(self.adjudications)
        return self._con

    def close(self) -> None:
        """Close the DuckDB connection (a later query opens another)."""
        with self._lock:
            self._drop_connection()

    def _drop_connection(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def _args(self, **more: Any) -> dict[str, Any]:
        return {"d": self.snapshot.delivery_files(), "upto": self.upto, **more}

    def _read(self) -> None:
        from .index.chunks import Names
        from .index.queries import ADJUDICATED, read_records

        con = self._connection()
        try:
            names = Names.read(con, Path(self.snapshot.names_file() or ""))
            self._keys(con)
            latest = {
                "sessions": _LATEST.format(by="reviewer"),
                "streams": _LATEST.format(by="reviewer, run_id, dimension"),
            }
            found = read_records(
                self.path, con.execute(latest["sessions"], self._args(kinds=[0])).fetchall()
            )
            self.sessions = {r.reviewer.key: r for _, r in found}
            found = read_records(
                self.path, con.execute(latest["streams"], self._args(kinds=[0, 2])).fetchall()
            )
            self.streams = {(r.reviewer.key, r.run_id, r.dimension): r for _, r in found}
            self._prompts(con, names, ADJUDICATED)
        except BaseException:
            self.close()
            raise

    def _keys(self, con: Any) -> None:
        """Read the keys: the first event line of each adjudication's key, and the sorted hashes
        and offsets of the events' keys."""
        import numpy as np

        from .index.queries import earliest_keys

        self.earliest = earliest_keys(con, self.snapshot)
        found = con.execute(_KEYS, {"e": self.snapshot.event_files(), "upto": self.upto})
        columns = found.fetchnumpy()
        self.hashes = np.asarray(columns["key_hash"], dtype=np.int64)
        self.offsets = np.asarray(columns["byte_offset"], dtype=np.int64)

    def _prompts(self, con: Any, names: Any, adjudicated: str) -> None:
        from .index.queries import read_records

        rows = con.execute(_PROMPTS, self._args()).fetchall()
        open_ = {who: (offset, line) for offset, line, who, *_ in rows}
        coded = [
            (who, line, *codes)
            for offset, line, who, run, item, dimension in rows
            if (codes := _codes(names, who, run, item, dimension)) is not None
        ]
        con.execute(
            "CREATE OR REPLACE TEMP TABLE prompts "
            "(reviewer VARCHAR, line BIGINT, rc INT, runc INT, itemc INT, dimc INT)"
        )
        if coded:
            con.executemany("INSERT INTO prompts VALUES (?, ?, ?, ?, ?, ?)", coded)
        answers = con.execute(
            _ANSWERS.format(adjudicated=adjudicated),
            {"e": self.snapshot.event_files(), "upto": self.upto},
        ).fetchall()
        typed = [(offset, line) for who, kind, offset, line in answers if kind == 0]
        answered = {who for who, kind, _, _ in answers if kind != 0}
        for _, rating in read_records(self.path, typed):
            if (rating.action or "").startswith("text:"):  # a typed follow-up answer
                answered.add(rating.reviewer.key)
        kept = [place for who, place in open_.items() if who not in answered]
        self.prompts = {r.reviewer.key: r for _, r in read_records(self.path, kept)}

    def _read_reviewed(
        self, con: Any, names: Any, adjudicated: str
    ) -> dict[str, set[tuple[str, str]]]:
        values = names.values
        judged = con.execute(
            _JUDGED.format(adjudicated=adjudicated),
            {"e": self.snapshot.event_files(), "upto": self.upto},
        ).fetchall()
        pairs = [
            (values["reviewer"][r], values["run_id"][u], values["dimension"][d])
            for r, u, d in judged
        ]
        pairs += con.execute(_DEALT, self._args()).fetchall()
        reviewed: dict[str, set[tuple[str, str]]] = {}
        for who, run, dimension in pairs:
            reviewed.setdefault(who, set()).add((run, dimension))
        return reviewed


def _codes(names: Any, *values: str) -> tuple[int, ...] | None:
    """The codes of (reviewer, run, item, dimension) in the events' names; None if one has none."""
    codes = []
    for column, value in zip(("reviewer", "run_id", "item_id", "dimension"), values):
        found = names.values[column]
        if value not in found:
            return None
        codes.append(found.index(value))
    return tuple(codes)


def _key(record: Any) -> str | None:
    return getattr(record, "idempotency_key", None)


def _adjudications(snapshot: "Snapshot", upto: int) -> list[tuple[int, Any]]:
    """Every adjudication of the log up to line ``upto``, with its line."""
    return [(n, r) for n, r in snapshot.typed("adjudication") if n <= upto]


def review_state(path: str | Path, issues: list["LogIssue"] | None = None) -> ReviewState | None:
    """The state of the log at ``path`` from its index; None when the index is not used for it
    (``HILBOT_NO_INDEX``, a small log, an index that cannot hold every record): fold the log."""
    from .index import enabled, indexed

    if not enabled(path):
        return None
    import duckdb

    for _ in range(3):
        snapshot = indexed(path)
        if snapshot is None or not snapshot.chunks or not snapshot.whole:
            return None
        upto = sum(c["lines"] for c in snapshot.chunks)
        adjudications = _adjudications(snapshot, upto)
        state = ReviewState(Path(path), snapshot, upto, adjudications=adjudications)
        try:
            state._read()
        except duckdb.IOException:  # merged by another process meanwhile: read again
            continue
        state.issues = snapshot.issues()
        if issues is not None:
            issues.extend(state.issues)
        return state
    return None


__all__ = ["ReviewState", "review_state"]
