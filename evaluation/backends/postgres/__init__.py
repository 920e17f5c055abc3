"""PostgreSQL as the store's backend: one shared log for several bot replicas.

Through psycopg 3 and its connection pool. The lines of every stream go to one append-only
table (``hilbot_events``: a trigger refuses UPDATE, DELETE and TRUNCATE) with a unique
idempotency key, so an event is counted once whichever replica stores it; each append is one
transaction, committed before the caller is told the records are stored. Readers pull in the
log's order by transaction id: only lines of transactions older than every one still running
are handed out (``pg_snapshot_xmin``, in the same snapshot as the lines), so a line committed
late by a slow writer is never skipped. Items are claimed in ``hilbot_claims``: a dealer locks a
few candidates' rows in ``hilbot_items`` at a time (``FOR UPDATE SKIP LOCKED``: two replicas never
wait on each other's items), then counts their ratings and live claims in a fresh snapshot and
claims up to its room.

The password comes only from the environment (``HILBOT_STORE_PASSWORD``, or libpq's own
``PGPASSWORD``); errors are one line, scrubbed, with the fix.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any, Iterable
from urllib.parse import urlsplit

from ...errors import HilbotError
from ..base import RATINGS, RUN_PREFIX, Claim, Line, RunTaken, StoreError
from .schema import LOCK, META, MIGRATIONS

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

LOCK_SLACK = 2
"""Candidates a dealer locks at a time beyond its room (in case some are full): the others stay
free for other dealers."""
PULL_BATCH = 20_000
"""Lines one pull hands out at most (the mirror pulls again until it has all)."""


class PostgresBackend:
    """The store's lines and claims in a PostgreSQL database."""

    def __init__(self, url: str, *, pool_size: int = 8, timeout_s: float = 5.0):
        try:
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401
        except ImportError:
            raise StoreError(
                "the PostgreSQL store needs psycopg",
                fix="pip install 'hilbot[postgres]'",
            ) from None
        self.url = url
        self.where = _where(url)
        self.timeout_s = timeout_s
        with self._connect() as conn:
            self.identity = _migrate(conn, self.where)
        self.pool = self._pool(pool_size)

    # ------------------------------------------------------------------ connections

    def _kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "connect_timeout": max(1, int(self.timeout_s)),
            "application_name": "hilbot",
        }
        password = os.environ.get("HILBOT_STORE_PASSWORD")
        if password:
            kwargs["password"] = password
        return kwargs

    def _connect(self) -> "Connection[Any]":
        import psycopg

        try:
            return psycopg.connect(self.url, **self._kwargs())
        except (psycopg.Error, ValueError) as exc:
            raise _error(exc, self.where) from None

    def _pool(self, size: int) -> "ConnectionPool":
        from psycopg_pool import ConnectionPool

        pool = ConnectionPool(
            self.url,
            kwargs=self._kwargs(),
            min_size=1,
            max_size=size,
            timeout=self.timeout_s,
            # give up reconnecting soon: the next request tries again at once, not after a
            # backoff grown through a long outage (minutes after the database is back)
            reconnect_timeout=self.timeout_s,
            open=False,
            name="hilbot-store",
        )
        pool.open(wait=False)
        return pool

    def _transaction(self, work: Any) -> Any:
        """Run ``work(conn)`` in one transaction from the pool; a database error is a
        :class:`StoreError` (nothing was committed)."""
        import psycopg
        import psycopg_pool

        for attempt in range(2):
            try:
                with self.pool.connection() as conn:
                    return work(conn)
            except HilbotError:
                raise
            except psycopg.OperationalError as exc:
                # a pooled connection the server dropped (a restart): the pool discards it, and
                # the work is done again once on a new one. Again is safe: every line is unique by
                # its key or bytes, and a claim taken already reads as taken
                if attempt or not _dropped(exc):
                    raise _error(exc, self.where) from None
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                raise _error(exc, self.where) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        """Close the pool's connections."""
        self.pool.close()

    # ------------------------------------------------------------------ the log

    def append(self, stream: str, lines: list[bytes], *, new: bool = False) -> int:
        """Store ``lines`` in one transaction (see :class:`~evaluation.backends.Backend`); how
        many were new."""
        rows = [_row(stream, line) for line in lines]

        def work(conn: "Connection[Any]") -> list[int]:
            with conn.cursor() as cur:
                if stream.startswith(RUN_PREFIX):
                    _run_row(cur, stream[len(RUN_PREFIX) :], new, self.where)
                cur.execute(_INSERT, _columns(stream, rows))
                seqs = [seq for (seq,) in cur.fetchall()]
                _facts(cur, stream, rows)
            return seqs

        return len(self._transaction(work))

    def pull(self, cursor: str) -> tuple[list[Line], str]:
        """Lines after ``cursor`` in the log's order: ``floor:tx:seq`` means every line of a
        transaction below ``floor`` and every line up to ``(tx, seq)`` is taken."""
        floor, last_tx, last_seq = _cursor(cursor)

        def work(conn: "Connection[Any]") -> list[Any]:
            conn.autocommit = True  # one statement, one round trip: no transaction to end
            try:
                return conn.execute(_PULL, (floor, last_tx, last_seq, PULL_BATCH)).fetchall()
            finally:
                if not conn.closed:
                    conn.autocommit = False

        found = self._transaction(work)
        xmin = int(found[0][0])
        rows = [row[1:] for row in found if row[1] is not None]
        lines = self._lines(rows)
        if rows:
            last_tx, last_seq = int(rows[-1][0]), int(rows[-1][1])
        if len(rows) < PULL_BATCH:
            floor = xmin
        return lines, f"{floor}:{last_tx}:{last_seq}"

    @staticmethod
    def _lines(rows: list[Any]) -> list[Line]:
        return [Line(stream, bytes(data)) for _, _, stream, data in rows]

    # ------------------------------------------------------------------ claims

    def claim(self, claim: Claim) -> list[str]:
        """Claim up to ``room`` candidates, in their order: lock a few item rows at a time
        (skipping rows another dealer holds), then, in a fresh snapshot, keep those with fewer
        than ``k`` ratings and live claims that the reviewer never met; go on to the next few
        until the room is filled or the candidates run out."""

        def work(conn: "Connection[Any]") -> list[str]:
            chosen: list[str] = []
            rest = list(claim.item_ids)
            with conn.cursor() as cur:
                while rest and len(chosen) < claim.room:
                    batch, rest = rest[: claim.room + LOCK_SLACK], rest[claim.room + LOCK_SLACK :]
                    chosen += _free_of(cur, claim, batch)[: claim.room - len(chosen)]
                if chosen:
                    cur.execute(
                        _CLAIM,
                        (claim.run_id, claim.dimension, claim.reviewer_key, claim.expiry_s, chosen),
                    )
            return chosen

        return list(self._transaction(work))

    def release(self, run_id: str, dimension: str, reviewer_key: str, item_id: str) -> None:
        """Free an open claim whose card was never delivered."""

        def work(conn: "Connection[Any]") -> None:
            conn.execute(_RELEASE, (run_id, item_id, dimension, reviewer_key))

        self._transaction(work)

    def once(self, key: str) -> bool:
        """True for the first caller of ``key`` (a row in ``hilbot_once``)."""

        def work(conn: "Connection[Any]") -> bool:
            cur = conn.execute(
                "INSERT INTO hilbot_once (key) VALUES (%s) ON CONFLICT DO NOTHING RETURNING key",
                (key,),
            )
            return cur.fetchone() is not None

        return bool(self._transaction(work))

    def expire(self) -> list[bytes]:
        """Mark the open claims past their time expired and log a delivery of kind ``expired``
        for each, in one transaction (a claim expires once, whichever replica sweeps)."""

        def work(conn: "Connection[Any]") -> list[bytes]:
            with conn.cursor() as cur:
                cur.execute(_EXPIRING)
                claims = cur.fetchall()
                if not claims:
                    return []
                lines = [_expired_line(*c) for c in claims]
                rows = [_row(RATINGS, line) for line in lines]
                cur.execute(_INSERT, _columns(RATINGS, rows))
                cur.execute(
                    _EXPIRE,
                    (
                        [c[0] for c in claims],
                        [c[1] for c in claims],
                        [c[2] for c in claims],
                        [c[3] for c in claims],
                    ),
                )
            return lines  # not marked as this process's own: every replica folds them as pulled

        return list(self._transaction(work))


# ---------------------------------------------------------------------- SQL

_INSERT = """
INSERT INTO hilbot_events (stream, idempotency_key, digest, line)
SELECT %s, k, d, l
FROM unnest(%s::text[], %s::bytea[], %s::bytea[]) WITH ORDINALITY AS t(k, d, l, n)
ORDER BY n
ON CONFLICT DO NOTHING
RETURNING seq
"""
_PULL = """
WITH horizon AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
SELECT h.xmin::text::numeric, e.tx::text::numeric, e.seq, e.stream, e.line
FROM horizon h LEFT JOIN LATERAL (
    SELECT tx, seq, stream, line FROM hilbot_events
    WHERE tx >= %s::text::xid8 AND (tx, seq) > (%s::text::xid8, %s) AND tx < h.xmin
    ORDER BY tx, seq LIMIT %s
) e ON true
"""
"""The lines below the horizon, and the horizon: the oldest transaction still running when the
statement's snapshot was taken. One statement, one snapshot: every transaction below the horizon
had ended by then, so all its lines are in it (a slow writer's line is never skipped)."""
_LOCK_ITEMS = """
SELECT item_id FROM hilbot_items WHERE item_id = ANY(%s) AND run_id = %s
FOR UPDATE SKIP LOCKED
"""
_LOADS = """
SELECT item_id,
       count(*) FILTER (WHERE state = 'done' OR (state = 'open' AND expires_at > now())),
       bool_or(reviewer_key = %s)
FROM hilbot_claims WHERE run_id = %s AND dimension = %s AND item_id = ANY(%s)
GROUP BY item_id
"""
_CLAIM = """
INSERT INTO hilbot_claims (run_id, item_id, dimension, reviewer_key, state, expires_at)
SELECT %s, i, %s, %s, 'open', now() + make_interval(secs => %s) FROM unnest(%s::text[]) AS i
ON CONFLICT DO NOTHING
"""
_RELEASE = """
DELETE FROM hilbot_claims
WHERE run_id = %s AND item_id = %s AND dimension = %s AND reviewer_key = %s AND state = 'open'
"""
_EXPIRING = """
SELECT run_id, item_id, dimension, reviewer_key, channel, chat_id, message_id FROM hilbot_claims
WHERE state = 'open' AND expires_at <= now() ORDER BY expires_at LIMIT 1000
FOR UPDATE SKIP LOCKED
"""
_EXPIRE = """
UPDATE hilbot_claims SET state = 'expired'
FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) AS e(r, i, d, k)
WHERE run_id = e.r AND item_id = e.i AND dimension = e.d AND reviewer_key = e.k
"""
_JUDGED = """
INSERT INTO hilbot_claims (run_id, item_id, dimension, reviewer_key, state, expires_at)
SELECT r, i, d, k, s, now() FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[],
                                        %s::text[]) AS t(r, i, d, k, s)
ON CONFLICT (run_id, item_id, dimension, reviewer_key) DO UPDATE SET state = EXCLUDED.state
"""
_DELIVERED = """
INSERT INTO hilbot_claims
    (run_id, item_id, dimension, reviewer_key, state, expires_at, channel, chat_id, message_id)
SELECT r, i, d, k, 'open', now() + interval '1 hour', c, h, m
FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[])
    AS t(r, i, d, k, c, h, m)
ON CONFLICT (run_id, item_id, dimension, reviewer_key) DO UPDATE
SET channel = EXCLUDED.channel, chat_id = EXCLUDED.chat_id, message_id = EXCLUDED.message_id
"""

_EXPIRED = """
INSERT INTO hilbot_claims (run_id, item_id, dimension, reviewer_key, state, expires_at)
SELECT r, i, d, k, 'expired', now()
FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) AS t(r, i, d, k)
ON CONFLICT (run_id, item_id, dimension, reviewer_key) DO UPDATE SET state = 'expired'
WHERE hilbot_claims.state = 'open'
"""


# ---------------------------------------------------------------------- helpers


def _where(url: str) -> str:
    """The URL without its password (what errors and the mirror name)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "localhost"
        port = f":{parts.port}" if parts.port else ""
        user = f"{parts.username}@" if parts.username else ""
        return f"{parts.scheme}://{user}{host}{port}{parts.path}"
    except ValueError:
        return "the store URL"


def _dropped(exc: BaseException) -> bool:
    """Whether an error says the server closed a connection the pool still held."""
    text = str(exc).lower()
    return any(
        w in text
        for w in (
            "server closed",
            "terminating connection",
            "connection is bad",
            "consuming input failed",
            "connection is lost",
            "eof detected",
        )
    )


def _error(exc: BaseException, where: str) -> StoreError:
    """A database error as one line with the fix."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    low = text.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        fix = "set the database password in HILBOT_STORE_PASSWORD (or PGPASSWORD)"
    elif "database" in low and "does not exist" in low:
        fix = "create the database (createdb), or fix the database name in the URL"
    elif any(
        w in low
        for w in (
            "connection refused",
            "could not connect",
            "timeout",
            "timed out",
            "could not translate host",
            "connection is bad",
            "closed",
            "get a connection",  # the pool's timeout: no connection could be made
            "terminating connection",
            "server closed",
        )
    ):
        fix = (
            "check that PostgreSQL is running and reachable at that host and port; nothing "
            "was stored, and the bot answers again once it is back"
        )
    elif "invalid" in low and ("uri" in low or "connection option" in low or "dsn" in low):
        fix = "give a URL like postgresql://user@host:5432/db in HILBOT_STORE_URL or [store] url"
    else:
        fix = "check the store URL and the database's permissions; nothing was stored"
    return StoreError(f"database: {text[:300]}", where=where, fix=fix)


def _migrate(conn: "Connection[Any]", where: str) -> str:
    """Create or migrate the schema; returns the store's identity."""
    import uuid

    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
        cur.execute(META)
        cur.execute("SELECT value FROM hilbot_meta WHERE key = 'version'")
        row = cur.fetchone()
        version = int(row[0]) if row else 0
        if version > len(MIGRATIONS):
            raise StoreError(
                f"the database's schema is version {version}; this hilbot knows {len(MIGRATIONS)}",
                where=where,
                fix="upgrade hilbot on this machine (pip install -U hilbot)",
            )
        for number in range(version + 1, len(MIGRATIONS) + 1):
            cur.execute(MIGRATIONS[number - 1])
        cur.execute(
            "INSERT INTO hilbot_meta VALUES ('version', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (str(len(MIGRATIONS)),),
        )
        cur.execute(
            "INSERT INTO hilbot_meta VALUES ('store_id', %s) ON CONFLICT (key) DO NOTHING",
            (uuid.uuid4().hex,),
        )
        cur.execute("SELECT value FROM hilbot_meta WHERE key = 'store_id'")
        ident = cur.fetchone()
    assert ident is not None
    return f"postgresql:{ident[0]}"


def _cursor(cursor: str) -> tuple[int, int, int]:
    if not cursor:
        return 0, 0, 0
    floor, tx, seq = cursor.split(":")
    return int(floor), int(tx), int(seq)


def _row(stream: str, line: bytes) -> tuple[str | None, bytes, bytes, dict[str, Any] | None]:
    """(idempotency key, digest, line, the record's fields or None) of one line."""
    from ...log import parse_line

    try:
        record = parse_line(line, as_dict=True)
    except (ValueError, RecursionError):
        record = None
    key = record.get("idempotency_key") if record else None
    return (key if isinstance(key, str) else None), hashlib.sha256(line).digest(), line, record


def _columns(stream: str, rows: list[Any]) -> tuple[Any, ...]:
    return stream, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def _run_row(cur: Any, run_id: str, new: bool, where: str) -> None:
    """The run's row: created by its first append; with ``new`` it must not exist yet."""
    cur.execute(
        "INSERT INTO hilbot_runs (run_id) VALUES (%s) ON CONFLICT DO NOTHING RETURNING run_id",
        (run_id,),
    )
    if new and cur.fetchone() is None:
        raise RunTaken(
            f"run {run_id!r} already exists",
            where=where,
            fix="pick another run id (see `hilbot review --list`)",
        )


def _facts(cur: Any, stream: str, rows: list[Any]) -> None:
    """Keep the items and claims tables in step with the lines just stored."""
    records = [r[3] for r in rows if r[3] is not None]
    if stream.startswith(RUN_PREFIX):
        items = [_item_id(r) for r in records if r.get("type") == "query_evaluation"]
        items = [i for i in items if i is not None]
        if items:
            cur.execute(
                "INSERT INTO hilbot_items SELECT %s, i FROM unnest(%s::text[]) AS i "
                "ON CONFLICT DO NOTHING",
                (stream[len(RUN_PREFIX) :], items),
            )
        return
    # one row per claim and statement (an upsert may not touch a row twice): the last line wins
    judged = _last_per_claim(_judged(r) for r in records if r.get("type") in ("rating", "skip"))
    if judged:
        cur.execute(_JUDGED, tuple(list(col) for col in zip(*judged)))
    cards = _last_per_claim(_card(r) for r in records if r.get("type") == "delivery")
    if cards:
        cur.execute(_DELIVERED, tuple(list(col) for col in zip(*cards)))
    # a claim that expired where these lines were written (an import): expired here too
    expired = _last_per_claim(
        _who(r) for r in records if r.get("type") == "delivery" and r.get("kind") == "expired"
    )
    if expired:
        cur.execute(_EXPIRED, tuple(list(col) for col in zip(*expired)))


def _last_per_claim(rows: Iterable[tuple[str, ...] | None]) -> list[tuple[str, ...]]:
    last: dict[tuple[str, ...], tuple[str, ...]] = {}
    for row in rows:
        if row is not None:
            last[row[:4]] = row
    return list(last.values())


def _item_id(record: dict[str, Any]) -> str | None:
    data = record.get("data")
    item = data.get("id") if isinstance(data, dict) else None
    return item if isinstance(item, str) else None


def _who(record: dict[str, Any]) -> tuple[str, str, str, str] | None:
    reviewer = record.get("reviewer")
    fields = (record.get("run_id"), record.get("item_id"), record.get("dimension", "overall"))
    if not isinstance(reviewer, dict) or not all(isinstance(f, str) for f in fields):
        return None
    key = f"{reviewer.get('platform', 'terminal')}:{reviewer.get('id')}"
    return fields[0], fields[1], fields[2], key  # type: ignore[return-value]


def _judged(record: dict[str, Any]) -> tuple[str, ...] | None:
    who = _who(record)
    return None if who is None else (*who, "done" if record["type"] == "rating" else "skipped")


def _card(record: dict[str, Any]) -> tuple[str, ...] | None:
    who = _who(record)
    if who is None or record.get("kind", "card") != "card":
        return None
    return (
        *who,
        str(record.get("channel", "")),
        str(record.get("chat_id", "")),
        str(record.get("message_id", "")),
    )


def _free_of(cur: Any, claim: Claim, batch: list[str]) -> list[str]:
    """The candidates of ``batch`` this dealer could lock and may claim, in order."""
    cur.execute(_LOCK_ITEMS, (batch, claim.run_id))
    locked = {item for (item,) in cur.fetchall()}
    if not locked:
        return []
    cur.execute(_LOADS, (claim.reviewer_key, claim.run_id, claim.dimension, list(locked)))
    loads = {item: (load, mine) for item, load, mine in cur.fetchall()}
    return [item for item in batch if item in locked and _free(loads.get(item), claim.k)]


def _free(load: tuple[int, bool] | None, k: int) -> bool:
    return load is None or (not load[1] and load[0] < k)


def _expired_line(
    run_id: str,
    item_id: str,
    dimension: str,
    reviewer_key: str,
    channel: str,
    chat: str,
    message: str,
) -> bytes:
    from ...log import encode
    from ...records import Delivery, Reviewer

    platform, _, user = reviewer_key.partition(":")
    record = Delivery(
        run_id=run_id,
        item_id=item_id,
        dimension=dimension,
        reviewer=Reviewer(platform=platform, id=user),
        channel=channel or platform,
        kind="expired",
        chat_id=chat,
        message_id=message,
    )
    return encode(record)
