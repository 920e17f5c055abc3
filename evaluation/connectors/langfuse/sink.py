"""The Langfuse sink: each human label becomes a Langfuse score, idempotently.

Calls (SDK 5 method → HTTP, every path under ``/api/public``):

* ``score_configs.get`` → ``GET /score-configs`` (``page``/``limit``), once a sink: the score
  configs by name, so a label is checked against its config before it is sent;
* ``scores.get_many`` → ``GET /v3/scores?id=…`` before each send (the timestamps of the scores
  already there) and to confirm (``fields=details``: the value and the metadata read back);
* ``scores.create`` → ``POST /scores`` with a list of scores (202 when all were accepted; 207 with
  counts and errors when some were refused);
* ``annotation_queues.update_queue_item`` → ``PATCH /annotation-queues/{queueId}/items/{itemId}``
  ``{"status": "COMPLETED"}`` when an item's label is complete.

A score: ``id`` = the label's remote id; ``traceId`` (and ``observationId`` for an observation);
``name`` = the dimension (or ``names[dimension]``, plus ``gold_suffix`` for a gold label);
``value`` and ``dataType`` from the score config of that name when there is one (then
``configId`` and source ANNOTATION, Langfuse's own human annotation), else from the scale
(``data_type``; source API); ``comment`` = the note; ``queueId`` when it came from a queue;
``metadata`` = who rated it and what (``hilbot_reviewer``, ``hilbot_judgment``, ``hilbot_version``,
``hilbot_gold``, …); ``timestamp`` = when it was rated. The score API has no author field, so the
reviewer is in the metadata.

Langfuse keeps one score per id, name and *day of its timestamp* (its ClickHouse table replaces
rows with that key), so a corrected rating must carry the first one's timestamp: before sending,
the scores already there are read by id and their timestamps reused. (A score written moments
earlier may not be readable yet; a correction across midnight within that moment leaves two.)

Langfuse accepts a score that breaks its config (an unknown category, a value out of range, an
archived config) and drops it later, so such a label is refused here, before sending, naming the
config and the value. Reads lag writes on Langfuse Cloud: a score not yet readable is simply not
confirmed yet. The read-backs are plain JSON (:meth:`~._client.Connection.get_json`, the same
request the SDK sends), not the SDK's models.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterator

from ..base import ConnectorError, Env, Label, Sent
from ._client import Connection, chunks, connect, parse_time

if TYPE_CHECKING:
    from . import LangfuseSink

MAX_COMMENT = 50_000
"""The longest comment sent (characters); a longer note is cut with a mark (the body of one
``POST /scores`` must stay under 1 MB)."""
MAX_BODY = 900_000
"""The largest body of one ``POST /scores`` (bytes); a larger batch is split."""
READ_IDS = 100
"""Score ids in one ``GET /v3/scores`` (a comma-separated ``id``; a page holds up to 100)."""
CONFIG_FIX = (
    "fix or unarchive the score config in Langfuse (Project settings → Scores), or "
    'send the dimension under another name: [sinks.NAME] names = {dimension = "x"}'
)
NO_CONFIGS = "the project has no score configs endpoint"
"""What a 404 on listing the score configs says (a host without them: no config to check)."""
GONE = "the annotation queue item is gone"
"""What a 404 on completing a queue item says (the item was deleted: nothing to complete)."""
TRUE_WORDS = {
    "yes",
    "true",
    "correct",
    "pass",
    "passed",
    "good",
    "1",
    "y",
    "ok",
    "right",
    "relevant",
    "accept",
}
FALSE_WORDS = {
    "no",
    "false",
    "incorrect",
    "fail",
    "failed",
    "bad",
    "0",
    "n",
    "wrong",
    "irrelevant",
    "reject",
}


@dataclass
class Score:
    """One label as the score it becomes."""

    label: Label
    """The label."""
    body: dict[str, Any]
    """The ``CreateScoreRequest`` fields (snake_case, as the SDK's model takes them)."""
    data_type: str
    """NUMERIC, BOOLEAN, CATEGORICAL or TEXT."""
    value: float | str
    """The value sent."""

    @property
    def id(self) -> str:
        """The score's id: the label's remote id."""
        return self.label.remote_id


class ScoreSink:
    """Writes labels to one Langfuse project as scores, and reads them back."""

    def __init__(self, settings: "LangfuseSink", env: Env):
        self.settings = settings
        self.conn: Connection = connect(env)
        self.where = self.conn.host
        """Where the labels go (named in ``connectors-calls.jsonl``)."""
        self._configs: dict[str, Any] | None = None
        self._single = False
        """The server takes one score a request (it refused a list)."""
        self._expected: dict[str, tuple[str, str, float | str]] = {}
        """What was sent, by remote id: (version, data type, value)."""

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    # -- send --------------------------------------------------------------------------------------

    def send(self, labels: list[Label]) -> list[Sent]:
        """Write the labels as scores; returns those Langfuse accepted.

        A label its score config refuses is not sent: alone, it is a ConnectorError naming the
        config and the value; in a batch the others still go (it is missing from the answer).
        A failed call is a ConnectorError (``retry_after`` on a 429, ``transient`` on a 5xx, a
        timeout or an unreachable host).
        """
        if not labels:
            return []
        scores, refused = self._scores(labels)
        if not scores:
            raise refused[0]
        self._keep_times(scores)
        accepted = set().union(*(self._post(batch) for batch in _by_size(scores)))
        done = [s for s in scores if s.id in accepted]
        self._complete(done)
        for score in done:
            self._expected[score.id] = (score.label.version, score.data_type, score.value)
        return [Sent(remote_id=s.id, version=s.label.version) for s in done]

    def _scores(self, labels: list[Label]) -> tuple[list[Score], list[ConnectorError]]:
        """The labels as scores, and the refusals of those that cannot be one. A failure to read the
        configs (a 429, an outage) is the whole call's: it is raised, so the batch is tried
        again."""
        self.configs()
        scores: list[Score] = []
        refused: list[ConnectorError] = []
        for label in labels:
            try:
                scores.append(self.score(label))
            except ConnectorError as exc:
                if exc.transient:
                    raise
                refused.append(exc)
        return scores, refused

    def score(self, label: Label) -> Score:
        """The score a label becomes, checked against its config (a ConnectorError when it cannot
        be one)."""
        target = _target(label)
        suffix = self.settings.gold_suffix if label.gold else ""
        name = self.settings.names.get(label.dimension, label.dimension) + suffix
        config = self.configs().get(name)
        if config is not None:
            data_type, value = _by_config(config, label, name)
        else:
            data_type, value = _by_scale(label, self.settings.data_type)
        body: dict[str, Any] = {
            "id": label.remote_id,
            "name": name,
            "value": value,
            "data_type": data_type,
            "timestamp": label.timestamp,
            "metadata": _metadata(label),
            "source": "API",
            **target,
        }
        if config is not None:
            body.update(config_id=config.id, source="ANNOTATION")
        if label.note:
            body["comment"] = _cut(label.note, MAX_COMMENT)
        queue_id = label.origin.extra.get("queue_id")
        if isinstance(queue_id, str) and queue_id:
            body["queue_id"] = queue_id
        return Score(label, body, data_type, value)

    def configs(self) -> dict[str, Any]:
        """The project's score configs by name (read once; an active one wins over an archived)."""
        if self._configs is None:
            configs: dict[str, Any] = {}
            listing = self.conn.pages(
                "reading the score configs",
                self.conn.api.score_configs.get,
                missing=NO_CONFIGS,
                limit=100,
            )
            for config in _unless_missing(listing):
                held = configs.get(config.name)
                if held is None or (held.is_archived and not config.is_archived):
                    configs[config.name] = config
            self._configs = configs
        return self._configs

    def _keep_times(self, scores: list[Score]) -> None:
        """A score already in Langfuse keeps its timestamp (it upserts by id, name and day).

        A read that fails for good (an answer of an unexpected shape, a refused filter) leaves
        the labels' own times: the write itself says whether Langfuse takes them. Labels the
        outbox never sent before (``resent`` false) cannot be there: nothing is read for them.
        """
        scores = [s for s in scores if s.label.resent]
        if not scores:
            return
        try:
            held = self._read([s.id for s in scores], None)
        except ConnectorError as exc:
            if exc.transient:
                raise
            return
        for score in scores:
            found = held.get(score.id)
            timestamp = parse_time(found.get("timestamp")) if found is not None else None
            if isinstance(timestamp, datetime):
                score.body["timestamp"] = timestamp

    def _post(self, batch: list[Score]) -> set[str]:
        """POST the scores; the ids accepted. Of a batch with refusals, each is sent again alone
        to learn which (an accepted score is upserted again, unchanged).

        SDK 5 sends a list; the API reference documents one ``CreateScoreRequest`` a request. A
        server that refuses the list (400) gets each score alone from then on."""
        from langfuse.api.scores.types import CreateScoreBatchResults, CreateScoreRequest

        if self._single:
            return {s.id for s in batch if self._post_one(s)}
        request = [CreateScoreRequest(**s.body) for s in batch]
        try:
            answer = self.conn.fetch(
                f"writing {len(batch)} score(s)", self.conn.api.scores.create, request=request
            )
        except ConnectorError as exc:
            if getattr(exc, "status", None) not in (400, 422):
                raise
            self._single = True
            return {s.id for s in batch if self._post_one(s)}
        if not isinstance(answer, CreateScoreBatchResults) or not answer.rejected:
            return {s.id for s in batch}
        if len(batch) == 1:
            reasons = "; ".join(e.message for e in answer.errors or [])[:500] or "no reason given"
            score = batch[0]
            raise ConnectorError(
                f"Langfuse at {self.conn.host} refused score {score.body['name']!r} "
                f"({score.value!r}) of {score.label.item_id}: {reasons}",
                fix="check the score's name, value and target in Langfuse",
            )
        accepted: set[str] = set()
        for score in batch:
            try:
                accepted |= self._post([score])
            except ConnectorError as exc:
                if exc.transient:
                    raise
        return accepted

    def _post_one(self, score: Score) -> bool:
        """One score in the API reference's single form (answered ``{"id"}``); a refusal of a score
        in a batch leaves it out (True: accepted), alone it is the error."""
        from langfuse.api.scores.types import CreateScoreRequest

        body = CreateScoreRequest(**score.body).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        self.conn.post_json(
            f"writing score {score.body['name']!r} of {score.label.item_id}", "scores", body
        )
        return True

    def _complete(self, done: list[Score]) -> None:
        """Mark the queue items of complete labels COMPLETED (a deleted item is passed over)."""
        if not self.settings.complete_items:
            return
        from langfuse.api.annotation_queues.types import AnnotationQueueStatus

        items = {
            (s.label.origin.extra.get("queue_id"), s.label.origin.extra.get("queue_item_id"))
            for s in done
            if s.label.complete
        }
        named = sorted((q, i) for q, i in items if isinstance(q, str) and isinstance(i, str))
        for queue, item in named:
            try:
                self.conn.fetch(
                    f"completing item {item!r} of annotation queue {queue!r}",
                    self.conn.api.annotation_queues.update_queue_item,
                    queue,
                    item,
                    missing=GONE,
                    status=AnnotationQueueStatus.COMPLETED,
                )
            except ConnectorError as exc:
                if exc.what != GONE:
                    raise

    # -- confirm -----------------------------------------------------------------------------------

    def confirm(self, sent: list[Sent]) -> list[str]:
        """The remote ids of ``sent`` read back as sent (a score not readable yet is not)."""
        held = self._read([s.remote_id for s in sent], "details")
        return [
            s.remote_id for s in sent if s.remote_id in held and self._same(s, held[s.remote_id])
        ]

    def _same(self, sent: Sent, score: Any) -> bool:
        """Whether a score read back carries the version (and, when known here, the value) sent."""
        metadata = score.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        version = metadata.get("hilbot_version")
        if version is not None and str(version) != sent.version:
            return False
        expected = self._expected.get(sent.remote_id)
        if expected is None or expected[0] != sent.version:
            return True
        return _equal(expected[2], score.get("value"), expected[1])

    def _read(self, ids: list[str], fields: str | None) -> dict[str, dict[str, Any]]:
        """The scores with these ids Langfuse has (readable now), by id (their JSON)."""
        found: dict[str, dict[str, Any]] = {}
        for chunk in chunks(list(dict.fromkeys(ids)), READ_IDS):
            what = f"reading back {len(chunk)} score(s)"
            answer = self.conn.get_json(
                what, "v3/scores", {"limit": 100, "fields": fields, "id": ",".join(chunk)}
            )
            data = answer.get("data")
            if not isinstance(data, list):
                raise self.conn.shape(what, "data: Field required")
            wanted = set(chunk)
            found.update(
                {
                    s["id"]: s
                    for s in data
                    if isinstance(s, dict) and isinstance(s.get("id"), str) and s["id"] in wanted
                }
            )
        return found


# ------------------------------------------------------------------------------------------- values


def _target(label: Label) -> dict[str, Any]:
    """Where the score goes: the trace, or the observation and its trace."""
    origin = label.origin
    if origin.tool != "langfuse":
        raise ConnectorError(
            f"{label.item_id} came from {origin.tool}, not Langfuse", fix="push it to its own tool"
        )
    if origin.kind == "trace":
        return {"trace_id": origin.id}
    trace_id = origin.extra.get("trace_id")
    if origin.kind == "observation" and isinstance(trace_id, str) and trace_id:
        return {"trace_id": trace_id, "observation_id": origin.id}
    raise ConnectorError(
        f"{label.item_id}: a Langfuse {origin.kind} without a trace takes no score",
        fix="pull the item again (hilbot pull langfuse …) so its origin names its trace",
    )


def _by_config(config: Any, label: Label, name: str) -> tuple[str, float | str]:
    """The data type and value a score config asks for; an error when the label breaks it."""
    kind = str(getattr(config.data_type, "value", config.data_type)).upper()
    said = f"score config {name!r} ({config.id})"
    if config.is_archived:
        raise ConnectorError(
            f"{said} is archived; Langfuse would drop {label.judgment!r} of {label.item_id}",
            fix=CONFIG_FIX,
        )
    if kind == "CATEGORICAL":
        return "CATEGORICAL", _category(config, label, said)
    if kind == "BOOLEAN":
        truth = _truth(label)
        if truth is None:
            raise ConnectorError(
                f"{label.judgment!r} is neither true nor false for boolean {said}", fix=CONFIG_FIX
            )
        return "BOOLEAN", 1.0 if truth else 0.0
    if kind == "NUMERIC":
        value = _numeric(label, config.min_value, config.max_value)
        low = -math.inf if config.min_value is None else config.min_value
        high = math.inf if config.max_value is None else config.max_value
        if value is None or not low <= value <= high:
            shown = "no number" if value is None else f"{value:g}"
            raise ConnectorError(
                f"{label.judgment!r} ({shown}) is outside {said}, {_range(config)}", fix=CONFIG_FIX
            )
        return "NUMERIC", value
    if kind == "TEXT":
        return "TEXT", _cut(label.judgment, 500) or "-"
    raise ConnectorError(f"{said} has data type {kind}, which a label cannot fill", fix=CONFIG_FIX)


def _category(config: Any, label: Label, said: str) -> str:
    """The config's category the label chose (exactly, else ignoring case and spaces)."""
    labels = [c.label for c in config.categories or []]
    loose = label.judgment.strip().lower()
    match = next((c for c in labels if c == label.judgment), None) or next(
        (c for c in labels if c.strip().lower() == loose), None
    )
    if match is None:
        raise ConnectorError(
            f"{label.judgment!r} is not a category of {said} (categories: "
            f"{', '.join(labels) or 'none'})",
            fix=CONFIG_FIX,
        )
    return match


def _by_scale(label: Label, data_type: str) -> tuple[str, float | str]:
    """The data type and value of a label without a score config (``data_type``, or its scale)."""
    if data_type == "auto":
        if len(label.options) == 2 and _truth(label) is not None:
            data_type = "BOOLEAN"
        elif label.number is not None:
            data_type = "NUMERIC"
        elif label.options or label.score is None:
            data_type = "CATEGORICAL"
        else:
            data_type = "NUMERIC"
    if data_type == "BOOLEAN":
        truth = _truth(label)
        if truth is None:
            raise ConnectorError(
                f"{label.judgment!r} of {label.item_id} is neither true nor false",
                fix='send it with data_type = "CATEGORICAL" or "NUMERIC"',
            )
        return "BOOLEAN", 1.0 if truth else 0.0
    if data_type == "NUMERIC":
        value = label.number if label.number is not None else label.score
        if value is None or not math.isfinite(value):
            raise ConnectorError(
                f"{label.judgment!r} of {label.item_id} has no number",
                fix='send it with data_type = "CATEGORICAL"',
            )
        return "NUMERIC", float(value)
    return "CATEGORICAL", _cut(label.judgment, 500)


def _truth(label: Label) -> bool | None:
    """Whether a two-sided label says yes: its score (≥ 0.5), else a yes/no word, else its place
    among two options (the first is yes)."""
    if label.score is not None and math.isfinite(label.score):
        return label.score >= 0.5
    word = label.judgment.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    if len(label.options) == 2 and label.judgment in label.options:
        return label.options.index(label.judgment) == 0
    return None


def _numeric(label: Label, low: float | None, high: float | None) -> float | None:
    """A numeric config's value: the 0–1 score for a config within 0–1, else the scale's number
    (or the score when there is none)."""
    unit = low is not None and high is not None and 0.0 <= low and high <= 1.0
    first, second = (label.score, label.number) if unit else (label.number, label.score)
    value = first if first is not None else second
    return float(value) if value is not None and math.isfinite(value) else None


def _range(config: Any) -> str:
    low = "-∞" if config.min_value is None else f"{config.min_value:g}"
    high = "∞" if config.max_value is None else f"{config.max_value:g}"
    return f"{low}–{high}"


def _metadata(label: Label) -> dict[str, str]:
    """Who rated it and what, as flat text (Langfuse keeps score metadata as a map of strings)."""
    data = {
        "hilbot_run": label.run_id,
        "hilbot_item": label.item_id,
        "hilbot_dimension": label.dimension,
        "hilbot_reviewer": label.reviewer,
        "hilbot_judgment": label.judgment,
        "hilbot_version": label.version,
        "hilbot_gold": "true" if label.gold else "false",
    }
    if label.reviewer_name:
        data["hilbot_reviewer_name"] = label.reviewer_name
    if label.score is not None:
        data["hilbot_score"] = f"{label.score:g}"
    if label.correction:
        data["hilbot_correction"] = label.correction
    return {key: _cut(value, 2_000) for key, value in data.items()}


def _equal(sent: float | str, read: Any, data_type: str) -> bool:
    """Whether a value read back is the value sent."""
    if data_type == "BOOLEAN":
        return isinstance(read, (bool, int, float)) and bool(read) == bool(sent)
    if data_type == "NUMERIC":
        return (
            isinstance(read, (int, float))
            and not isinstance(read, bool)
            and isinstance(sent, float)
            and math.isclose(read, sent, abs_tol=1e-9)
        )
    return isinstance(read, str) and read == sent


def _cut(text: str, limit: int) -> str:
    """``text``, at most ``limit`` characters (cut with a mark)."""
    if len(text) <= limit:
        return text
    return text[: limit - 40] + f" … [cut by hilbot: {len(text)} characters]"


def _unless_missing(listing: Iterator[Any]) -> Iterator[Any]:
    """The score configs listed, none when the host has no such listing (a 404)."""
    try:
        yield from listing
    except ConnectorError as exc:
        if exc.what != NO_CONFIGS:
            raise


def _by_size(scores: list[Score]) -> list[list[Score]]:
    """The scores in batches whose JSON bodies stay under :data:`MAX_BODY`."""
    batches: list[list[Score]] = [[]]
    size = 0
    for score in scores:
        weight = len(json.dumps(score.body, default=str, ensure_ascii=False).encode()) + 1
        if batches[-1] and size + weight > MAX_BODY:
            batches.append([])
            size = 0
        batches[-1].append(score)
        size += weight
    return [b for b in batches if b]
