"""What the queries of the index share: the adjudications, whose idempotency keys count as seen.

The ledger keeps one event per idempotency key, whatever its type: a rating whose key an earlier
adjudication carries is a redelivery. The index holds ratings, skips and notes; the few
adjudications are read from their lines and put in a table the queries join.
"""

from __future__ import annotations

from typing import Any

ADJUDICATED = (
    "AND NOT EXISTS (SELECT 1 FROM adjudications a "
    "WHERE a.h = e.key_hash AND a.k = e.idempotency_key AND a.line < e.line)"
)
"""The clause that leaves out events whose key an earlier adjudication carries."""


def with_adjudications(adjudications: list[tuple[int, Any]]) -> Any:
    """A DuckDB connection with the table ``adjudications`` (``k`` key, ``line`` where the key
    first appears among them, ``h`` its hash as the index's ``key_hash``)."""
    from .chunks import connect

    first: dict[str, int] = {}
    for line, record in adjudications:
        first.setdefault(record.idempotency_key, line)
    con = connect()
    con.execute("CREATE TEMP TABLE given (k VARCHAR, line BIGINT)")
    if first:
        con.executemany("INSERT INTO given VALUES (?, ?)", list(first.items()))
    con.execute(
        "CREATE TEMP TABLE adjudications AS SELECT *, (hash(k) >> 1)::BIGINT AS h FROM given"
    )
    return con


__all__ = ["ADJUDICATED", "with_adjudications"]
