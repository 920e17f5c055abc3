"""The chat deliveries of a chunk: which card or note prompt went to whom, and where.

A chat bot logs a ``delivery`` for every card and note prompt it sends and every session it starts
in a chat (:class:`evaluation.records.Delivery`). A bot that starts on a long log needs only a few
of them (each reviewer's latest card and open prompt, each session's chat, the cards of the runs it
deals from), so each chunk keeps them as ``<name>.deliveries.parquet``, one row per valid delivery
in log order: ``line``, ``byte_offset`` (where its line starts: what reads the record itself),
``kind`` (0 card, 1 note prompt, 2 session), ``run_id``, ``item_id``, ``dimension``, ``reviewer``
(``platform:id``), ``channel``, ``chat_id``, ``message_id`` and ``grp`` (sent to a group chat).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

KINDS = {"card": 0, "note_prompt": 1, "session": 2, "expired": 3}
"""The ``kind`` codes."""
SCHEMA = {
    "line": "BIGINT",
    "byte_offset": "BIGINT",
    "kind": "TINYINT",
    "run_id": "VARCHAR",
    "item_id": "VARCHAR",
    "dimension": "VARCHAR",
    "reviewer": "VARCHAR",
    "channel": "VARCHAR",
    "chat_id": "VARCHAR",
    "message_id": "VARCHAR",
    "grp": "BOOLEAN",
}
"""The deliveries files' columns and their types."""


def rows(
    path: Path, starts: "np.ndarray", candidates: list[int], bad: set[int], before: int
) -> dict[str, list]:
    """The deliveries among the candidate lines (0-based within the range whose line starts are
    ``starts``), as columns; ``bad``: the range's bad lines (1-based), which the record parser
    refused; ``before``: the log's lines before the range.

    Every other candidate line was accepted by the record models, so its JSON (orjson's, which lets
    a repeated key's last value win as the log's parser does) holds a valid delivery's fields.
    """
    from .._reader import json_loads

    columns: dict[str, list] = {name: [] for name in SCHEMA}
    with open(path, "rb") as handle:
        for n in candidates:
            if n + 1 in bad:
                continue
            handle.seek(int(starts[n]))
            try:
                record = json_loads(handle.readline())
            except ValueError:  # pragma: no cover - the reader accepted the line
                continue
            if not isinstance(record, dict) or record.get("type") != "delivery":
                continue  # "delivery" only in a value of another record
            _add(columns, record, before + n + 1, int(starts[n]))
    return columns


def _add(columns: dict[str, list], record: dict[str, Any], line: int, offset: int) -> None:
    reviewer = record["reviewer"]
    values = {
        "line": line,
        "byte_offset": offset,
        "kind": KINDS[record.get("kind", "card")],
        "run_id": record["run_id"],
        "item_id": record["item_id"],
        "dimension": record.get("dimension", "overall"),
        "reviewer": f"{reviewer.get('platform', 'terminal')}:{reviewer['id']}",
        "channel": record["channel"],
        "chat_id": record["chat_id"],
        "message_id": record["message_id"],
        "grp": bool(record.get("group", False)),
    }
    for name, value in values.items():
        columns[name].append(value)


def write(con: Any, columns: dict[str, list], copy: Any) -> None:
    """Write the columns with ``copy(con, query)`` (the chunk's file, renamed into place)."""
    import pandas as pd

    frame = pd.DataFrame(
        {name: pd.Series(values, dtype=object) for name, values in columns.items()}
    )
    con.register("deliveries", frame)
    typed = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in SCHEMA.items())
    try:
        copy(con, f"SELECT {typed} FROM deliveries")
    finally:
        con.unregister("deliveries")


__all__ = ["KINDS", "SCHEMA", "rows", "write"]
