"""LangSmith's JSON as hilbot items: the query, answer, retrieved contexts, expected answer and the
evaluators' scores of a run, read leniently (any field may be missing, null or of another type).

What is recognised:

* **query** (a run's ``inputs``): a string; a dict's ``question``, ``query``, ``input``, ``prompt``,
  ``text``, ``content`` or ``message`` (looked into when nested); a ``messages`` list (OpenAI-style
  ``{"role", "content"}``, LangChain ``{"type": "human"}`` or serialized ``HumanMessage``, content
  as a string or as ``{"type": "text"}`` blocks; a chat model's list of lists) → its last human or
  user message; a dict of one value → that value; anything else as JSON.
* **answer** (``outputs``): ``output``, ``answer``, ``text``, ``content``, ``result``,
  ``response``, ``generation``, ``completion``; the last AI/assistant message; an LLM run's
  ``generations`` → the last generation's text or message.
* **contexts**: the ``documents`` (or ``docs``, ``context``, ``contexts``) a retriever run returned,
  each a LangChain ``Document`` (``page_content``) or ``{"content"|"text"}`` or a string.
* **expected answer** (a reference example's ``outputs``): ``expected``, ``expected_answer``,
  ``expected_output``, ``reference``, ``ground_truth``, ``answer``, ``output``, ``label`` first,
  then as an answer.
* **evaluation**: feedback from the chosen source types (evaluators log ``model``, online
  evaluators ``auto_eval``), never hilbot's own; a boolean score is 1/0, a score in 0–1 is kept
  (other numbers have no known range and are left out), a comment is the metric's reason, a
  string value is the verdict.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from typing import Any, Iterable

from ...records import Evaluation, ItemData, Query

QUERY_KEYS = ("question", "query", "input", "prompt", "text", "content", "message")
ANSWER_KEYS = (
    "output",
    "answer",
    "text",
    "content",
    "result",
    "response",
    "generation",
    "completion",
)
EXPECTED_KEYS = (
    "expected",
    "expected_answer",
    "expected_output",
    "reference",
    "ground_truth",
    "answer",
    "output",
    "label",
)
DOCUMENT_KEYS = ("documents", "docs", "context", "contexts")
HUMAN = frozenset({"human", "user", "humanmessage", "humanmessagechunk"})
AI = frozenset({"ai", "assistant", "aimessage", "aimessagechunk"})
DEPTH = 6
"""How deep nested inputs are looked into."""


# ---------------------------------------------------------------------------------------------
# Text out of inputs and outputs.


def query_text(inputs: Any) -> str:
    """The question a run answered, from its inputs."""
    found = _text(inputs, QUERY_KEYS, HUMAN, DEPTH)
    return found if found is not None else _as_json(inputs)


def answer_text(outputs: Any) -> str | None:
    """The answer a run gave, from its outputs (None when it has none)."""
    if outputs is None or outputs == {}:
        return None
    found = _text(outputs, ANSWER_KEYS, AI, DEPTH)
    return found if found is not None else _as_json(outputs)


def expected_text(outputs: Any) -> str | None:
    """The reference answer of a dataset example, from its outputs."""
    if outputs is None or outputs == {}:
        return None
    found = _text(outputs, EXPECTED_KEYS, AI, DEPTH)
    return found if found is not None else answer_text(outputs)


def documents(outputs: Any) -> list[str]:
    """The documents a retriever run returned, as texts."""
    if not isinstance(outputs, dict):
        return []
    for key in DOCUMENT_KEYS:
        docs = outputs.get(key)
        if isinstance(docs, list):
            return [text for text in (_document(doc) for doc in docs) if text]
    return []


def _document(doc: Any) -> str | None:
    if isinstance(doc, str):
        return doc
    if not isinstance(doc, dict):
        return None
    kwargs = doc.get("kwargs")
    body: dict[str, Any] = kwargs if isinstance(kwargs, dict) else doc
    for key in ("page_content", "content", "text"):
        if isinstance(body.get(key), str):
            return str(body[key])
    return None


def _text(value: Any, keys: tuple[str, ...], roles: frozenset[str], depth: int) -> str | None:
    """The text ``value`` holds: a string, a key's, the last message of ``roles``."""
    if depth <= 0 or value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return _from_list(value, keys, roles, depth)
    if not isinstance(value, dict):
        return None
    if _role(value) is not None:
        return _content(value)
    for key in keys:
        if key in value:
            found = _text(value[key], keys, roles, depth - 1)
            if found:
                return found
    for key in ("messages", "generations"):
        if key in value:
            found = _text(value[key], keys, roles, depth - 1)
            if found:
                return found
    if len(value) == 1:
        return _text(next(iter(value.values())), keys, roles, depth - 1)
    return None


def _from_list(
    items: list[Any], keys: tuple[str, ...], roles: frozenset[str], depth: int
) -> str | None:
    """A list's text: the last message of ``roles``, or the last generation's text."""
    flat = [m for item in items for m in (item if isinstance(item, list) else [item])]
    messages = [m for m in flat if isinstance(m, dict) and _role(m) is not None]
    if messages:
        picked = [m for m in messages if _role(m) in roles] or messages
        return _content(picked[-1])
    generations = [m for m in flat if isinstance(m, dict) and ("text" in m or "message" in m)]
    if generations:
        last = generations[-1]
        return _text(last.get("message"), keys, roles, depth - 1) or _text(
            last.get("text"), keys, roles, depth - 1
        )
    texts = [t for t in flat if isinstance(t, str)]
    return "\n".join(texts) if texts and len(texts) == len(flat) else None


def _role(message: dict[str, Any]) -> str | None:
    """Who a message is from (lower case), or None when the dict is not a message."""
    lc_id = message.get("id")
    if (
        message.get("lc") is not None
        and isinstance(lc_id, list)
        and lc_id
        and isinstance(lc_id[-1], str)
    ):
        return lc_id[-1].lower()
    for key in ("role", "type"):
        role = message.get(key)
        if isinstance(role, str) and "content" in message:
            return role.lower()
    return None


def _content(message: dict[str, Any]) -> str | None:
    """A message's text: its content string, or its text blocks joined."""
    kwargs = message.get("kwargs")
    body: dict[str, Any] = kwargs if isinstance(kwargs, dict) else message
    content = body.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b if isinstance(b, str) else b.get("text")
            for b in content
            if isinstance(b, (str, dict))
        ]
        texts = [p for p in parts if isinstance(p, str)]
        return "\n".join(texts) if texts else None
    return None


def _as_json(value: Any) -> str:
    """A value shown as JSON (what a reviewer sees when no text was recognised)."""
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


# ---------------------------------------------------------------------------------------------
# Feedback as the AI judge's evaluation.


def source_type(feedback: dict[str, Any]) -> str | None:
    """A feedback's source type (``api``, ``model``, ``app``, ``auto_eval``), when it says."""
    source = feedback.get("feedback_source")
    kind = source.get("type") if isinstance(source, dict) else None
    return kind if isinstance(kind, str) else None


def is_hilbots(feedback: dict[str, Any]) -> bool:
    """Whether hilbot wrote this feedback (a human label sent back)."""
    source = feedback.get("feedback_source")
    metadata = source.get("metadata") if isinstance(source, dict) else None
    return isinstance(metadata, dict) and bool(metadata.get("hilbot"))


def unit_score(value: Any) -> float | None:
    """A feedback score in 0–1 (a boolean is 1 or 0), or None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)) and math.isfinite(value) and 0.0 <= value <= 1.0:
        return float(value)
    return None


def evaluation(feedback: Iterable[dict[str, Any]], sources: set[str]) -> Evaluation:
    """The evaluators' view of a run: scores by feedback key, comments as reasons."""
    scores: dict[str, list[float]] = {}
    reasons: dict[str, str] = {}
    verdicts: list[str] = []
    for item in feedback:
        key = item.get("key")
        kind = source_type(item)
        if (
            not isinstance(key, str)
            or not key
            or is_hilbots(item)
            or (kind is not None and kind not in sources)
        ):
            continue
        score = unit_score(item.get("score"))
        value = item.get("value")
        if score is None:
            score = unit_score(value)
        if score is not None:
            scores.setdefault(key, []).append(score)
        if isinstance(value, str) and value.strip():
            verdicts.append(value)
        comment = item.get("comment")
        if isinstance(comment, str) and comment.strip() and key not in reasons:
            reasons[key] = comment
    if not scores and not reasons and not verdicts:
        return Evaluation()
    rationale = "\n".join(f"{key}: {why}" for key, why in reasons.items()) or None
    return Evaluation(
        scores={k: sum(v) / len(v) for k, v in scores.items()},
        verdict=verdicts[0] if verdicts else None,
        rationale=rationale,
        reasons=reasons,
        judge="langsmith",
    )


# ---------------------------------------------------------------------------------------------
# A run as an item.


def item(
    run: dict[str, Any],
    origin: dict[str, Any],
    *,
    contexts: list[str],
    expected: str | None,
    judged: Evaluation,
    inputs: Any = None,
) -> ItemData:
    """One pulled run as a hilbot item (``inputs`` stand in for a run that has none)."""
    run_inputs = run.get("inputs") if run.get("inputs") not in (None, {}) else inputs
    features: dict[str, Any] = {"origin": origin}
    for key, name in (("name", "run_name"), ("run_type", "run_type")):
        if isinstance(run.get(key), str):
            features[name] = run[key]
    tags = run.get("tags")
    if isinstance(tags, list) and all(isinstance(t, str) for t in tags) and tags:
        features["tags"] = tags
    error = run.get("error")
    return ItemData(
        id=origin["id"],
        query=Query(query=query_text(run_inputs), expected_answer=expected),
        answer=answer_text(run.get("outputs")),
        contexts=contexts,
        ground_truth=[expected] if expected else [],
        evaluation=judged,
        features=features,
        latency_ms=_latency_ms(run),
        cost_usd=_number(run.get("total_cost")),
        usage=_usage(run),
        error=error if isinstance(error, str) and error else None,
        model=_model(run),
    )


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _latency_ms(run: dict[str, Any]) -> float | None:
    start, end = _time(run.get("start_time")), _time(run.get("end_time"))
    if start is None or end is None or end < start:
        return None
    return (end - start).total_seconds() * 1000


def _number(value: Any) -> float | None:
    """A number the API may send as a decimal string (costs)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _usage(run: dict[str, Any]) -> dict[str, int]:
    usage = {}
    for key, name in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")):
        value = run.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            usage[name] = value
    return usage


def _model(run: dict[str, Any]) -> str | None:
    held = run.get("extra")
    extra: dict[str, Any] = held if isinstance(held, dict) else {}
    for place, key in (
        ("metadata", "ls_model_name"),
        ("invocation_params", "model"),
        ("invocation_params", "model_name"),
    ):
        section = extra.get(place)
        if isinstance(section, dict) and isinstance(section.get(key), str) and section[key]:
            return str(section[key])
    return None


def start_time(run: dict[str, Any]) -> datetime | None:
    """When a run started (feedback on it is found faster with it)."""
    return _time(run.get("start_time"))
