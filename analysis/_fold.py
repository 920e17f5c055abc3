"""The fold of a scan into the ratings, skips, concerns and notes frames, as
``evaluation.reviews.Ledger`` folds.

Vectorised over a :class:`analysis._scan.Scan`: redeliveries (a repeated idempotency key) are
dropped, then the latest rating or skip per (run_id, item_id, dimension, reviewer) counts, and
the latest note per key is kept apart.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._scan import KEY, KIND_NOTE, KIND_RATING, KIND_SKIP, Events, Scan, strings

RATING_COLUMNS = [
    "run_id",
    "item_id",
    "dimension",
    "reviewer",
    "judgment",
    "score",
    "n_concerns",
    "note",
    "timestamp",
    "channel",
    "source_type",
    "session_date",
    "line",
]
SKIP_COLUMNS = ["run_id", "item_id", "dimension", "reviewer", "skip_reason", "timestamp", "line"]
CONCERN_COLUMNS = ["run_id", "item_id", "dimension", "reviewer", "tag", "timestamp"]
NOTE_COLUMNS = ["run_id", "item_id", "dimension", "reviewer", "text", "timestamp"]


def fold(scan: Scan, items: pd.DataFrame, runs: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """Ledger's fold, vectorised, over the valid human events of a scan (``runs``: only those)."""
    events = scan.events
    alive = scan.counted()  # file order
    if runs is not None:
        alive = alive[np.asarray(events["run_id"].isin(runs))[alive]]
    key = scan.codes()
    kind = events["kind"]

    judged = alive[kind[alive] != KIND_NOTE]
    latest = judged[~pd.Series(key[judged]).duplicated(keep="last").to_numpy()]
    rating_pos = latest[kind[latest] == KIND_RATING]
    skip_pos = latest[kind[latest] == KIND_SKIP]
    noted = alive[kind[alive] == KIND_NOTE]
    note_pos = noted[~pd.Series(key[noted]).duplicated(keep="last").to_numpy()]
    ratings, concerns = _ratings(scan, items, key, rating_pos, note_pos)
    return {
        "ratings": ratings,
        "skips": _skips(events, skip_pos),
        "concerns": concerns,
        "notes": _notes(events, note_pos),
    }


def _ratings(
    scan: Scan, items: pd.DataFrame, key: np.ndarray, rating_pos: np.ndarray, note_pos: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ratings and concerns frames of the current ratings (``note_pos``: the latest note of each
    key)."""
    events = scan.events
    note = _rating_notes(events, key, rating_pos, note_pos)
    keys = {name: strings(events[name], rating_pos) for name in KEY}
    source = _source_types(events, items, keys, rating_pos)
    rows, tags, counts = _concerns(scan, rating_pos)
    rating_ts = events["ts"][rating_pos]
    ratings = pd.DataFrame(
        {
            **{name: pd.Series(values, dtype="str") for name, values in keys.items()},
            "judgment": pd.Series(strings(events["judgment"], rating_pos), dtype="str"),
            "score": events["score"][rating_pos],
            "n_concerns": counts,
            "note": pd.Series(note, dtype=object),
            "timestamp": _timestamps(rating_ts),
            "channel": pd.Series(strings(events["channel"], rating_pos), dtype="str"),
            "source_type": pd.Series(source, dtype=object),
            "session_date": pd.Series(strings(events["session_date"], rating_pos), dtype=object),
            "line": events["line"][rating_pos].astype(np.int64),
        },
        columns=RATING_COLUMNS,
    )
    concerns = pd.DataFrame(
        {
            **{name: pd.Series(values[rows], dtype="str") for name, values in keys.items()},
            "tag": pd.Series(tags, dtype="str"),
            "timestamp": _timestamps(rating_ts[rows]),
        },
        columns=CONCERN_COLUMNS,
    )
    return ratings, concerns


def _rating_notes(
    events: Events, key: np.ndarray, rating_pos: np.ndarray, note_pos: np.ndarray
) -> np.ndarray:
    """The rating's own note, else the latest note of its key, else None."""
    own = events["note"][rating_pos]
    note: Any = np.where(pd.isna(own) | (own == ""), None, own)
    if len(note_pos) and len(rating_pos):
        texts = pd.Series(events["text"][note_pos], index=key[note_pos])
        found = texts.reindex(key[rating_pos]).to_numpy(dtype=object)
        note = np.where(note == None, found, note)  # noqa: E711 - elementwise
        note = np.where(pd.isna(note), None, note)
    return note


def _source_types(
    events: Events, items: pd.DataFrame, keys: dict[str, np.ndarray], rating_pos: np.ndarray
) -> np.ndarray:
    """The rating's ``metadata.source_type``, else its item's ``source_type`` feature, else None."""
    source = strings(events["source_type"], rating_pos)
    missing = np.flatnonzero(source == None)  # noqa: E711 - elementwise
    if len(missing) and len(items):
        lookup = dict(
            zip(
                zip(items["run_id"].astype(object), items["item_id"].astype(object)),
                items["source_type"].astype(object),
            )
        )
        run_id, item_id = keys["run_id"], keys["item_id"]
        source[missing] = [lookup.get((run_id[i], item_id[i])) for i in missing]
    return source


def _concerns(scan: Scan, rating_pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, tag) pairs of the ratings at ``rating_pos``, each tag of a rating once; and the tags
    per rating."""
    rows, tags = scan.row_tags(rating_pos)
    counts = np.zeros(len(rating_pos), dtype=np.int64)
    if len(tags):
        codes, names = pd.factorize(tags)
        first = (
            ~pd.Series(rows * len(names) + codes).duplicated().to_numpy()
        )  # a tag twice counts once
        rows, tags = rows[first], tags[first]
        counts = np.bincount(rows, minlength=len(rating_pos)).astype(np.int64)
    return rows, tags, counts


def _skips(events: Events, skip_pos: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            **_key_columns(events, skip_pos),
            "skip_reason": pd.Series(_none(events["skip_reason"][skip_pos]), dtype=object),
            "timestamp": _timestamps(events["ts"][skip_pos]),
            "line": events["line"][skip_pos].astype(np.int64),
        },
        columns=SKIP_COLUMNS,
    )


def _notes(events: Events, note_pos: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            **_key_columns(events, note_pos),
            "text": pd.Series(events["text"][note_pos], dtype="str"),
            "timestamp": _timestamps(events["ts"][note_pos]),
        },
        columns=NOTE_COLUMNS,
    )


def _none(values: np.ndarray) -> np.ndarray:
    return np.where(pd.isna(values), np.array(None, dtype=object), values)


def _key_columns(events: Events, positions: np.ndarray) -> dict[str, pd.Series]:
    return {name: pd.Series(strings(events[name], positions), dtype="str") for name in KEY}


def _timestamps(ns: np.ndarray) -> pd.Series:
    return pd.Series(np.asarray(ns, dtype=np.int64).view("datetime64[ns]")).dt.tz_localize("UTC")
