"""The names of the scan's columns and event kinds (no imports: the index reads them without
loading pandas)."""

KIND_RATING, KIND_SKIP, KIND_NOTE = 0, 1, 2
HUMAN_TYPES = {"rating": KIND_RATING, "skip": KIND_SKIP, "note": KIND_NOTE}
KEY = ["run_id", "item_id", "dimension", "reviewer"]
"""The fold key of a human event."""
EVENT_COLUMNS = [
    "line",
    "kind",
    "run_id",
    "item_id",
    "dimension",
    "reviewer",
    "channel",
    "idempotency_key",
    "idem_hash",
    "ts",
    "judgment",
    "score",
    "n_tags",
    "tag_start",
    "note",
    "source_type",
    "session_date",
    "skip_reason",
    "text",
]
CATEGORICAL = (
    "run_id",
    "item_id",
    "dimension",
    "reviewer",
    "channel",
    "judgment",
    "source_type",
    "session_date",
)
"""Columns held as categoricals (the key and the other low-cardinality strings); the rest are object
arrays."""


__all__ = [
    "CATEGORICAL",
    "EVENT_COLUMNS",
    "HUMAN_TYPES",
    "KEY",
    "KIND_NOTE",
    "KIND_RATING",
    "KIND_SKIP",
]
