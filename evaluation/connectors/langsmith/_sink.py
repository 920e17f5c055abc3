"""Human labels back to LangSmith as feedback on the run they were given on.

A label becomes one feedback with the label's deterministic id (its remote id, a UUID):
``key`` = the dimension (or its name in ``names``), ``score`` = the option's 0–1 score (a
boolean for a two-option scale; the scale's own number with ``score = "number"``), ``value`` =
the option chosen, ``comment`` = the reviewer's note, ``correction`` = ``{"output": …}`` when the
reviewer gave one, ``feedback_source`` = ``{"type": "api", "metadata": {"hilbot": true,
"reviewer": …, "reviewer_name": …, "gold": …, "version": …, "digest": …}}`` (the SDK's
human/API source type; ``model`` is for evaluators). A gold label has its own id and
``"gold": true``.

The API documents no conflict answer for ``POST /feedback`` with an id that exists, so each send
reads the id first (``GET /feedback/{id}``): absent → ``POST /feedback`` (a 409 from a
concurrent write → ``PATCH``); present with other values → ``PATCH /feedback/{id}``; the same
values → nothing. A re-sent label leaves one feedback, a corrected one updates it.

When a label is complete and its run came from an annotation queue, the run leaves the queue
(``DELETE /annotation-queues/{queue}/runs/{queue_run_id}``; a 404 there is tried once more with
the run id, which the classic SDK sends, and then means it is gone already), unless
``on_complete = "keep"``.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..base import NAMESPACE, ConnectorError, Env, Label, Sent
from . import _items
from ._api import Api, as_uuid, segment

if TYPE_CHECKING:
    from . import LangSmithSink

KEY_MAX = 180
"""The longest feedback key the API takes."""
BOOLEAN = frozenset({"yes", "no", "true", "false", "correct", "incorrect", "pass", "fail"})
"""Judgments read as a boolean when the scale's options are not known."""


@dataclass
class _Written:
    """What this sink wrote for a label (to compare with what reads back)."""

    version: str
    key: str
    fields: dict[str, Any]


class LangSmithFeedbackSink:
    """Writes labels as LangSmith feedback and reads them back."""

    def __init__(self, settings: "LangSmithSink", env: Env):
        self.settings = settings
        self.api = Api(env, settings.timeout_s)
        self.api.client()
        self.where = self.api.host
        """The host labels go to (named in ``connectors-calls.jsonl``)."""
        self._written: dict[str, _Written] = {}

    def send(self, labels: list[Label]) -> list[Sent]:
        """Write each label (create, or update what its id holds); one error stops the batch."""
        return [self._send(label) for label in labels]

    def confirm(self, sent: list[Sent]) -> list[str]:
        """The remote ids whose feedback reads back with the values sent."""
        return [s.remote_id for s in sent if self._confirmed(s)]

    # -- sending -------------------------------------------------------------------------------

    def _send(self, label: Label) -> Sent:
        run_id = self._run_id(label)
        feedback_id = feedback_id_of(label.remote_id)
        key = self.settings.names.get(label.dimension, label.dimension)
        if not key or len(key) > KEY_MAX:
            raise ConnectorError(
                f"feedback key {key[:40]!r}… has {len(key)} characters, not 1–{KEY_MAX}",
                fix=f"map it to a shorter name: [sinks.X] names = "
                f'{{ {label.dimension[:20]} = "…" }}',
            )
        fields = self._fields(label)
        current = self.api.read_feedback(feedback_id)
        if current is None:
            created = self.api.create_feedback(
                self._create(label, run_id, feedback_id, key, fields),
                f"run {run_id}",
                "the run was deleted, or belongs to another workspace (LANGSMITH_WORKSPACE_ID)",
            )
            if not created:
                self.api.update_feedback(feedback_id, fields)
        elif not same(current, fields):
            self.api.update_feedback(feedback_id, fields)
        self._written[label.remote_id] = _Written(label.version, key, fields)
        if label.complete and self.settings.on_complete == "remove":
            self._leave_queue(label, run_id)
        return Sent(remote_id=label.remote_id, version=label.version)

    def _run_id(self, label: Label) -> str:
        run_id = as_uuid(label.origin.id)
        if label.origin.tool != "langsmith" or label.origin.kind != "run" or run_id is None:
            raise ConnectorError(
                f"item {label.item_id!r} did not come from a LangSmith run "
                f"({label.origin.tool} {label.origin.kind} {label.origin.id[:60]!r})",
                fix="push it to the tool it came from",
            )
        return run_id

    def _fields(self, label: Label) -> dict[str, Any]:
        """The feedback's values: what is compared on read-back and sent on update."""
        return {
            "score": score_of(label, self.settings.score),
            "value": label.judgment,
            "comment": label.note or None,
            "correction": {"output": label.correction} if label.correction else None,
        }

    def _create(
        self, label: Label, run_id: str, feedback_id: str, key: str, fields: dict[str, Any]
    ) -> dict[str, Any]:
        """``create_feedback``'s arguments (never ``trace_id``: with it the SDK batches feedback
        in the background)."""
        extra = label.origin.extra
        metadata = {
            "hilbot": True,
            "reviewer": label.reviewer,
            "reviewer_name": label.reviewer_name,
            "gold": label.gold,
            "run": label.run_id,
            "item": label.item_id,
            "dimension": label.dimension,
            "version": label.version,
            "digest": digest(fields),
            "rated_at": label.timestamp.isoformat(),
        }
        created = {
            "run_id": run_id,
            "key": key,
            **{k: v for k, v in fields.items() if v is not None},
            "feedback_id": feedback_id,
            "source_info": {k: v for k, v in metadata.items() if v is not None},
        }
        session = as_uuid(extra.get("session_id"))
        if session:
            created["session_id"] = session
        started = _items.start_time(extra)
        if started is not None:
            created["start_time"] = started
        return created

    def _leave_queue(self, label: Label, run_id: str) -> None:
        """Take a complete item's run out of the annotation queue it came from."""
        queue = as_uuid(label.origin.extra.get("queue_id"))
        if queue is None:
            return
        for entry in dict.fromkeys(
            e for e in (as_uuid(label.origin.extra.get("queue_run_id")), run_id) if e
        ):
            if self.api.delete(
                f"/annotation-queues/{segment(queue)}/runs/{segment(entry)}",
                f"run {run_id} in annotation queue {queue}",
            ):
                return

    # -- reading back --------------------------------------------------------------------------

    def _confirmed(self, sent: Sent) -> bool:
        current = self.api.read_feedback(feedback_id_of(sent.remote_id))
        if current is None:
            return False
        written = self._written.get(sent.remote_id)
        if written is not None and written.version == sent.version:
            return current.get("key") in (None, written.key) and same(current, written.fields)
        source = current.get("feedback_source")
        metadata = source.get("metadata") if isinstance(source, dict) else None
        if not isinstance(metadata, dict):
            return False
        return metadata.get("version") == sent.version and metadata.get("digest") == digest(current)


def feedback_id_of(remote_id: str) -> str:
    """The feedback id of a label: its remote id (a UUID), or a UUID derived from it."""
    return as_uuid(remote_id) or str(uuid.uuid5(NAMESPACE, remote_id))


def score_of(label: Label, mode: str) -> float | bool | None:
    """The feedback score: the 0–1 score (boolean on a two-option scale) or the scale's number."""
    if mode == "number" and label.number is not None and math.isfinite(label.number):
        return label.number
    if label.score is None or not math.isfinite(label.score):
        return None
    if _two_options(label):
        return label.score >= 0.5
    return round(label.score, 4)


def _two_options(label: Label) -> bool:
    options = [o.lower() for o in label.options]
    return len(options) == 2 or (not options and label.judgment.lower() in BOOLEAN)


def _normal(fields: dict[str, Any]) -> dict[str, Any]:
    """Feedback values as compared: a boolean score is 1/0, scores to 4 places, no comment None."""
    score = fields.get("score")
    if isinstance(score, bool):
        score = 1.0 if score else 0.0
    elif isinstance(score, (int, float)) and math.isfinite(score):
        score = round(float(score), 4)
    correction = fields.get("correction")
    return {
        "score": score,
        "value": fields.get("value"),
        "comment": fields.get("comment") or None,
        "correction": correction or None,
    }


def same(current: dict[str, Any], fields: dict[str, Any]) -> bool:
    """Whether a feedback read back holds these values."""
    return _normal(current) == _normal(fields)


def digest(fields: dict[str, Any]) -> str:
    """A short fingerprint of feedback values (kept in the metadata, to confirm without memory)."""
    text = json.dumps(_normal(fields), sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
