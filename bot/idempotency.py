"""Idempotency keys: the key an action's records are stored under, and whether the action is a
repeat. A platform event's records are keyed by the channel and its delivery, so the same event
coming again (the same key with the same action, by :func:`evaluation.reviews.fingerprint`) is a
repeat and nothing is written; a key that comes back with a *different* action is stored under
a key of its own, the key and a digest of the action (:func:`resolve_key`). A record keeps its
action as text, a note's text by its digest (:func:`action_text`).
"""

from __future__ import annotations

import hashlib
import logging

from evaluation import Ledger

from .cards import Action

_log = logging.getLogger("hilbot.review")


def resolve_key(ledger: Ledger, key: str, mine: str) -> tuple[str, bool]:
    """The key a delivered action's records go under, and whether it was stored before (a
    repeat); ``mine`` is the action's fingerprint."""
    seen = ledger.repeat(key)
    if seen is None or seen == mine:
        return key, seen is not None
    own = f"{key}~{hashlib.sha256(mine.encode()).hexdigest()[:10]}"
    if ledger.repeat(own) == mine:
        return own, True
    _log.warning(
        "idempotency key %s came again with a different action (%s; first: %s); stored under %s",
        key,
        mine,
        seen,
        own,
    )
    return own, False


def action_text(action: Action) -> str:
    """An action as a record keeps it (a note's text by its digest)."""
    if action.kind == "text":
        return (
            "text:"
            + hashlib.sha256((action.value or "").encode("utf-8", "surrogatepass")).hexdigest()[:16]
        )
    return f"{action.kind}:{action.value}" if action.value else action.kind


__all__ = ["action_text", "resolve_key"]
