"""What a Langfuse trace says, in hilbot's terms: the query, the answer, the retrieved contexts and
the AI judges' scores. Pure functions over plain values; nothing here talks to Langfuse.

Recognised shapes:

* **query** (an observation's input): a string (JSON text is decoded first); a chat — a list of
  ``{"role", "content"}`` messages, or a dict with ``messages`` — gives its last user message; a
  dict gives its ``query``, ``question``, ``input``, ``prompt``, ``user_input``, ``text`` or
  ``content``; message content may be a list of ``{"type": "text", "text"}`` parts.
* **answer** (an output): a string; a dict's ``answer``, ``output``, ``response``, ``completion``,
  ``result``, ``text`` or ``content``; an assistant message; a chat completion's
  ``choices[0].message.content``; a list of messages gives the last assistant message.
* **contexts**: observations of type ``RETRIEVER``, or named like ``retriev…``, whose output is a
  list of documents (strings, or dicts with ``page_content`` / ``pageContent`` / ``content`` /
  ``text`` / ``document`` / ``chunk``), or a dict holding such a list under ``documents``,
  ``docs``, ``contexts``, ``results``, ``chunks``, ``nodes`` or ``matches``.
* **AI scores** (source ``EVAL`` or ``API``, never ``ANNOTATION``, never a score hilbot wrote):
  numeric in 0–1 as is, booleans as 1/0, categories recognised as pass/fail words as 1/0 (and
  ``partial…`` as 0.5); the first category is the verdict; each comment is the score's reason.

Anything else becomes compact JSON text. Texts longer than :data:`MAX_TEXT` are cut.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from ...records import Evaluation

MAX_TEXT = 200_000
"""The longest query, answer or context kept (characters); longer ones are cut with a mark."""
MAX_DEPTH = 8
"""How deep into nested inputs the search for a query or an answer goes."""

QUERY_KEYS = (
    "query",
    "question",
    "input",
    "prompt",
    "user_input",
    "userInput",
    "text",
    "content",
    "message",
)
"""Where a query hides in a dict, in order."""
ANSWER_KEYS = (
    "answer",
    "output",
    "response",
    "completion",
    "result",
    "text",
    "content",
    "message",
    "generation",
)
"""Where an answer hides in a dict, in order."""
DOCUMENT_KEYS = (
    "page_content",
    "pageContent",
    "content",
    "text",
    "document",
    "chunk",
    "snippet",
    "body",
)
"""A retrieved document's text, in order."""
DOCUMENT_LISTS = (
    "documents",
    "docs",
    "contexts",
    "context",
    "results",
    "chunks",
    "nodes",
    "matches",
    "output",
    "retrieved",
    "sources",
)
"""Where a retrieval's output keeps its list of documents."""
PASSING = {
    "pass",
    "passed",
    "correct",
    "yes",
    "true",
    "good",
    "relevant",
    "grounded",
    "faithful",
    "accurate",
    "helpful",
    "supported",
    "safe",
    "compliant",
    "ok",
    "success",
}
"""Categories read as a score of 1."""
FAILING = {
    "fail",
    "failed",
    "incorrect",
    "wrong",
    "no",
    "false",
    "bad",
    "irrelevant",
    "ungrounded",
    "unfaithful",
    "inaccurate",
    "unhelpful",
    "unsupported",
    "hallucination",
    "hallucinated",
    "unsafe",
    "toxic",
    "error",
}
"""Categories read as a score of 0."""
HILBOT_MARK = "hilbot_version"
"""A score's metadata key that says hilbot wrote it (a human label sent back, not an AI judge's)."""


@dataclass
class Row:
    """One observation of a trace, as the v2 observations API gives it."""

    id: str
    trace_id: str
    type: str = ""
    name: str | None = None
    parent_id: str | None = None
    is_root: bool | None = None
    start: str = ""
    input: Any = None
    output: Any = None
    trace_name: str | None = None
    tags: list[str] = field(default_factory=list)


@dataclass
class JudgeScore:
    """One score already on a trace or observation."""

    name: str
    value: Any
    data_type: str
    source: str
    comment: str | None = None
    metadata: dict[str, Any] | None = None


# ------------------------------------------------------------------------------------------- values


def decoded(value: Any) -> Any:
    """An input or output as a value: JSON text (what v2 returns) decoded, anything else as is."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[", '"'):
            try:
                return json.loads(text)
            except ValueError:
                return value
    return value


def cut(text: str) -> str:
    """``text``, cut to :data:`MAX_TEXT` characters with a mark saying so."""
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f" … [cut: {len(text) - MAX_TEXT} more characters]"


def as_text(value: Any) -> str:
    """Any value as text: strings as they are, the rest as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return cut(value)
    try:
        return cut(json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":")))
    except (TypeError, ValueError):
        return cut(str(value))


def _content(value: Any) -> str | None:
    """A message's content: a string, or the texts of its parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [
            p if isinstance(p, str) else p.get("text") for p in value if isinstance(p, (str, dict))
        ]
        texts = [p for p in parts if isinstance(p, str)]
        return "\n".join(texts) if texts else None
    return None


def _last_message(messages: list[Any], roles: tuple[str, ...]) -> str | None:
    for message in reversed(messages):
        role = message.get("role", message.get("type", "")) if isinstance(message, dict) else None
        if role is not None and str(role).lower() in roles:
            text = _content(message.get("content"))
            if text is not None:
                return text
    return None


def _is_chat(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(m, dict) and "role" in m for m in value)
    )


def _pick(value: Any, keys: tuple[str, ...], roles: tuple[str, ...], depth: int = 0) -> str | None:
    """The text ``keys`` (or a chat's last message of ``roles``) names in ``value``, if any."""
    value = decoded(value)
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, str):
        return value
    if _is_chat(value):
        return _last_message(value, roles)
    if not isinstance(value, dict):
        return None
    if _is_chat(value.get("messages")):
        found = _last_message(value["messages"], roles)
        if found is not None:
            return found
    if str(value.get("role", "")).lower() in roles:
        text = _content(value.get("content"))
        if text is not None:
            return text
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message") or {}
        text = _content(message.get("content")) if isinstance(message, dict) else None
        if text is not None or isinstance(choices[0].get("text"), str):
            return text if text is not None else choices[0]["text"]
    for key in keys:
        if key in value and value[key] is not None:
            found = _pick(value[key], keys, roles, depth + 1)
            if found is not None:
                return found
    return None


def query_text(value: Any) -> str:
    """The user's query in an input (see the module's list); else the input as compact JSON."""
    found = _pick(value, QUERY_KEYS, ("user", "human"))
    return cut(found) if found is not None else as_text(decoded(value))


def answer_text(value: Any) -> str | None:
    """The answer in an output (see the module's list); else the output as compact JSON; None
    when there is none."""
    value = decoded(value)
    if value is None or value == "":
        return None
    found = _pick(value, ANSWER_KEYS, ("assistant", "ai", "model"))
    return cut(found) if found is not None else as_text(value)


# ----------------------------------------------------------------------------------------- contexts


def is_retrieval(row: Row) -> bool:
    """Whether an observation retrieved documents: type RETRIEVER, or a name like ``retriev…``."""
    return row.type.upper() == "RETRIEVER" or "retriev" in (row.name or "").lower()


def _document(value: Any) -> str | None:
    value = decoded(value)
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        for key in DOCUMENT_KEYS:
            if isinstance(value.get(key), str) and value[key]:
                return value[key]
        return as_text(value) if value else None
    return None if value is None else as_text(value)


def documents(output: Any, depth: int = 0) -> list[str]:
    """The texts of the documents a retrieval's output holds (see the module's list)."""
    output = decoded(output)
    if depth > MAX_DEPTH or output is None:
        return []
    if isinstance(output, list):
        return [cut(text) for text in map(_document, output) if text]
    if isinstance(output, dict):
        for key in DOCUMENT_LISTS:
            if key in output:
                found = documents(output[key], depth + 1)
                if found:
                    return found
        single = _document(output) if any(key in output for key in DOCUMENT_KEYS) else None
        return [cut(single)] if single else []
    return [cut(output)] if isinstance(output, str) and output else []


def descends(row: Row, ancestor: str, parents: dict[str, str | None]) -> bool:
    """Whether ``row`` sits under observation ``ancestor`` (following parents; cycles stop)."""
    seen: set[str] = set()
    parent = row.parent_id
    while parent and parent not in seen:
        if parent == ancestor:
            return True
        seen.add(parent)
        parent = parents.get(parent)
    return False


def contexts(rows: Iterable[Row], under: str | None = None) -> list[str]:
    """The retrieved documents of a trace's retrieval observations, in start order (only those under
    observation ``under``, when given)."""
    rows = list(rows)
    parents = {row.id: row.parent_id for row in rows}
    found: list[str] = []
    for row in sorted(rows, key=lambda r: r.start):
        inside = under is None or row.id == under or descends(row, under, parents)
        if inside and is_retrieval(row):
            found += documents(row.output)
    return found


def root(rows: list[Row]) -> Row | None:
    """A trace's root observation: the earliest without a parent, else the earliest marked root."""
    ordered = sorted(rows, key=lambda r: r.start)
    for row in ordered:
        if not row.parent_id:
            return row
    return next((row for row in ordered if row.is_root), ordered[0] if ordered else None)


# ------------------------------------------------------------------------------------------- scores


def is_judge(score: JudgeScore) -> bool:
    """Whether a score is an AI judge's: EVAL or API, not a human annotation, not one hilbot
    sent back."""
    if score.source.upper() not in ("EVAL", "API"):
        return False
    return not (isinstance(score.metadata, dict) and HILBOT_MARK in score.metadata)


def fraction(score: JudgeScore) -> float | None:
    """A judge's score in 0–1: numbers in range, booleans, and pass/fail-like categories."""
    value = score.value
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        number = float(value)
        if score.data_type.upper() == "BOOLEAN":
            return 1.0 if number else 0.0
        return number if math.isfinite(number) and 0.0 <= number <= 1.0 else None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in PASSING:
            return 1.0
        if word in FAILING:
            return 0.0
        if word.startswith("partial"):
            return 0.5
    return None


def evaluation(scores: Iterable[JudgeScore], overall: str | None = None) -> Evaluation:
    """The AI judges' view of an item from its scores: 0–1 scores by name, the first category as
    verdict, comments as reasons and rationale; ``overall`` names the score that is the headline."""
    kinds = ("NUMERIC", "BOOLEAN", "CATEGORICAL")
    judged = [s for s in scores if is_judge(s) and s.data_type.upper() in kinds]
    result = Evaluation()
    reasons: dict[str, str] = {}
    for score in judged:
        number = fraction(score)
        if number is not None:
            result.scores[score.name] = number
        category = score.data_type.upper() == "CATEGORICAL" and isinstance(score.value, str)
        if result.verdict is None and category:
            result.verdict = cut(score.value)
        if score.comment:
            reasons[score.name] = cut(score.comment)
    if overall and overall in result.scores:
        result.scores["overall"] = result.scores[overall]
    result.reasons = reasons
    result.rationale = "\n".join(f"{name}: {text}" for name, text in reasons.items()) or None
    if judged:
        result.judge = "langfuse"
    return result
