"""Phoenix spans as hilbot items: OpenInference attributes read, nothing imported from the SDK.

Phoenix's REST API (``GET /v1/projects/{project}/spans``) answers each span with its attributes
flattened to dotted keys (``llm.input_messages.0.message.content``); a span whose attributes
come nested (a proxy, an older server) is flattened here the same way, so both read alike.

Recognised (OpenInference semantic conventions):

- ``input.value`` / ``output.value`` (with ``input.mime_type`` ``application/json``: the first
  text field of the object named ``query``, ``question``, ``input``, ``prompt``… or the JSON as
  written);
- ``llm.input_messages.N.message.role/content`` (or ``…message.contents.M.message_content.text``)
  and ``llm.output_messages.N…``, ``…message.tool_calls.M.tool_call.function.name/arguments``;
- ``llm.model_name``, ``llm.token_count.prompt/completion``, ``llm.cost.total``;
- ``retrieval.documents.N.document.id/content/score/name/url/metadata``;
- ``tool.name`` / ``tool.parameters`` of TOOL spans, ``session.id`` and ``user.id``;
- the span's ``status_code`` (``ERROR`` → the item's error), ``start_time``/``end_time``.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from typing import Any, Iterable

from ...records import Evaluation, ItemData, Query, SearchResult
from ..base import Origin

Attributes = dict[str, Any]

JUDGE_KINDS = ("LLM", "CODE")
"""Annotator kinds whose annotations are an AI judge's (a HUMAN one is never shown as the AI's)."""
JUDGE = "phoenix"
"""The judge name items carry when their span had LLM or CODE annotations."""
_TEXT_KEYS = ("query", "question", "input", "prompt", "user_input", "text", "content", "message")
_ANSWER_KEYS = ("output", "answer", "response", "result", "text", "content", "completion")
_DOC = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(.+)$")
_MESSAGE = re.compile(r"^(\d+)\.message\.(.+)$")
_MAX_INDEX = 100_000
"""Largest list position read from an attribute key (a hostile ``…documents.9999999…`` is not)."""


def flatten(value: Any) -> Attributes:
    """A span's attributes as dotted keys: nested objects and lists unrolled, as Phoenix does."""
    if not isinstance(value, dict):
        return {}
    out: Attributes = {}
    stack: list[tuple[str, Any]] = [(str(k), v) for k, v in reversed(list(value.items()))]
    while stack:
        key, current = stack.pop()
        if isinstance(current, dict) and current:
            stack.extend((f"{key}.{k}", v) for k, v in reversed(list(current.items())))
        elif (
            isinstance(current, list)
            and current
            and any(isinstance(v, (dict, list)) for v in current)
        ):
            stack.extend((f"{key}.{i}", v) for i, v in reversed(list(enumerate(current))))
        else:
            out[key] = current
    return out


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def text(value: Any) -> str | None:
    """A value as text: a string as it is, anything else (but null) as compact JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def number(value: Any) -> float | None:
    """A finite number, or None (booleans and text are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        result = float(value)
    except OverflowError:
        return None
    return result if math.isfinite(result) else None


def _json_field(raw: str, keys: Iterable[str]) -> str | None:
    """The first text field named one of ``keys`` in the JSON object ``raw``, if it is one."""
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if isinstance(parsed, str):
        return parsed
    if isinstance(parsed, dict):
        for key in keys:
            if isinstance(parsed.get(key), str) and parsed[key]:
                return str(parsed[key])
    return None


def _value(attrs: Attributes, prefix: str, keys: Iterable[str]) -> str | None:
    """``input.value`` or ``output.value`` as text (a JSON value: its main text field, if any)."""
    raw = text(attrs.get(f"{prefix}.value"))
    if raw is None or raw == "":
        return None
    if (
        str(attrs.get(f"{prefix}.mime_type", "")).lower() == "application/json"
        or raw.lstrip()[:1] == "{"
    ):
        return _json_field(raw, keys) or raw
    return raw


def _indexed(attrs: Attributes, prefix: str) -> dict[int, dict[str, Any]]:
    """``prefix.N.rest`` keys grouped by N: ``{N: {rest: value}}``, in order."""
    groups: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in attrs.items():
        if key.startswith(start):
            head, _, rest = key[len(start) :].partition(".")
            if head.isdigit() and int(head) <= _MAX_INDEX and rest:
                groups.setdefault(int(head), {})[rest] = value
    return dict(sorted(groups.items()))


def messages(attrs: Attributes, prefix: str) -> list[dict[str, Any]]:
    """The chat messages under ``prefix`` (``llm.input_messages``): role, content, tool calls."""
    out = []
    for fields in _indexed(attrs, prefix).values():
        parts = [
            text(v)
            for k, v in sorted(fields.items())
            if k.startswith("message.contents.") and k.endswith(".message_content.text")
        ]
        content = text(fields.get("message.content")) or "\n".join(p for p in parts if p) or None
        calls = _indexed({k.removeprefix("message."): v for k, v in fields.items()}, "tool_calls")
        out.append(
            {
                "role": text(fields.get("message.role")) or "",
                "content": content,
                "tool_calls": [
                    {
                        "tool": text(c.get("tool_call.function.name")) or "tool",
                        "input": text(c.get("tool_call.function.arguments")) or "",
                    }
                    for c in calls.values()
                ],
            }
        )
    return out


def documents(attrs: Attributes) -> list[tuple[int, SearchResult]]:
    """The span's retrieved documents with their positions (0-based, what a document annotation
    names)."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        match = _DOC.match(key)
        if match and int(match.group(1)) <= _MAX_INDEX:
            found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [(position, _result(position, fields)) for position, fields in sorted(found.items())]


def _result(position: int, fields: dict[str, Any]) -> SearchResult:
    meta = _metadata(fields)
    where = next(
        (
            text(v)
            for v in (
                fields.get("url"),
                meta.get("url"),
                meta.get("source"),
                meta.get("file_path"),
                meta.get("path"),
                fields.get("id"),
            )
            if v not in (None, "")
        ),
        None,
    )
    title = next(
        (text(v) for v in (fields.get("name"), meta.get("title")) if v not in (None, "")), None
    )
    return SearchResult(
        rank=position + 1,
        path=where,
        title=title,
        score=number(fields.get("score")),
        snippet=text(fields.get("content")),
    )


def _metadata(fields: dict[str, Any]) -> dict[str, Any]:
    """A document's metadata: a JSON object written as text, or flattened ``metadata.x`` keys."""
    raw = fields.get("metadata")
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    return {k.removeprefix("metadata."): v for k, v in fields.items() if k.startswith("metadata.")}


def _transcript(turns: list[dict[str, Any]]) -> str | None:
    """What the user asked: the last user message, after the earlier turns (system prompts left
    out)."""
    shown = [t for t in turns if t["role"] != "system" and t["content"]]
    if not shown:
        return None
    last_user = max((i for i, t in enumerate(shown) if t["role"] == "user"), default=len(shown) - 1)
    shown = shown[: last_user + 1]
    if len(shown) == 1:
        return str(shown[0]["content"])
    return "\n\n".join(f"{t['role'] or 'message'}: {t['content']}" for t in shown)


def query_text(span: dict[str, Any], attrs: Attributes) -> str:
    """What the span was asked: the chat's user turn, else ``input.value``, else the span's name."""
    asked = _transcript(messages(attrs, "llm.input_messages")) or _value(attrs, "input", _TEXT_KEYS)
    return asked if asked is not None else f"({text(span.get('name')) or 'span'})"


def answer_text(attrs: Attributes) -> str | None:
    """What the span answered: the first output message, else ``output.value``."""
    said = [m["content"] for m in messages(attrs, "llm.output_messages") if m["content"]]
    return said[0] if said else _value(attrs, "output", _ANSWER_KEYS)


def tool_captures(attrs: Attributes, kind: str) -> list[dict[str, Any]]:
    """Tool calls the model asked for, or the TOOL span's own call."""
    calls = [c for m in messages(attrs, "llm.output_messages") for c in m["tool_calls"]]
    if kind == "TOOL" and attrs.get("tool.name") is not None:
        calls.append(
            {
                "tool": text(attrs["tool.name"]),
                "input": text(attrs.get("tool.parameters")) or _value(attrs, "input", ()) or "",
                "output": _value(attrs, "output", ()),
            }
        )
    return calls


def _milliseconds(span: dict[str, Any]) -> float | None:
    """The span's duration in ms, when both times parse and the end is not before the start."""
    try:
        start, end = (
            datetime.fromisoformat(str(span[k]).replace("Z", "+00:00"))
            for k in ("start_time", "end_time")
        )
        if start.tzinfo is None:
            start = start.replace(tzinfo=timezone.utc)
        if end.tzinfo is None:
            end = end.replace(tzinfo=timezone.utc)
        elapsed = (end - start).total_seconds() * 1000
    except (KeyError, ValueError, TypeError, OverflowError):
        return None
    return elapsed if elapsed >= 0 else None


def _usage(attrs: Attributes) -> dict[str, int]:
    counts = {
        "input_tokens": attrs.get("llm.token_count.prompt"),
        "output_tokens": attrs.get("llm.token_count.completion"),
    }
    return {
        k: v
        for k, v in counts.items()
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**53
    }


def _error(span: dict[str, Any]) -> str | None:
    if str(span.get("status_code", "")).upper() != "ERROR":
        return None
    message = text(span.get("status_message")) or ""
    for event in span.get("events") or []:
        if not message and isinstance(event, dict) and isinstance(event.get("attributes"), dict):
            message = text(event["attributes"].get("exception.message")) or ""
    return message or "ERROR"


def _features(span: dict[str, Any], attrs: Attributes, origin: Origin) -> dict[str, Any]:
    features: dict[str, Any] = {
        "origin": origin.model_dump(),
        "span_kind": kind_of(span),
        "span_name": text(span.get("name")) or "",
    }
    for key in ("session.id", "user.id", "llm.provider"):
        if isinstance(attrs.get(key), str):
            features[key.replace(".", "_")] = attrs[key]
    return features


def kind_of(span: dict[str, Any]) -> str:
    """The span's OpenInference kind (``LLM``, ``RETRIEVER``…), upper case."""
    return (text(span.get("span_kind")) or "UNKNOWN").upper()


def span_id_of(span: dict[str, Any]) -> str | None:
    """The span's OpenTelemetry id (what annotations name), or None when it has none."""
    context = span.get("context")
    value = context.get("span_id") if isinstance(context, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def trace_id_of(span: dict[str, Any]) -> str | None:
    context = span.get("context")
    value = context.get("trace_id") if isinstance(context, dict) else None
    return value if isinstance(value, str) else None


def evaluation(annotations: list[dict[str, Any]], headline: str | None) -> Evaluation:
    """The AI judges' view of a span: its LLM and CODE annotations, newest of each name.

    A score in 0–1 becomes ``scores[name]`` (others are left out: hilbot's scores are 0–1), an
    explanation ``reasons[name]``. The headline annotation (``headline``, or the only one) gives
    ``overall``, the verdict (its label) and the rationale.
    """
    scores: dict[str, float] = {}
    reasons: dict[str, str] = {}
    labels: dict[str, str] = {}
    names: list[str] = []
    for annotation in annotations:
        name = annotation.get("name")
        if (
            not isinstance(name, str)
            or not name
            or name in names
            or annotation.get("annotator_kind") not in JUDGE_KINDS
        ):
            continue
        names.append(name)
        result = as_dict(annotation.get("result"))
        score = number(result.get("score"))
        if score is not None and 0.0 <= score <= 1.0:
            scores[name] = score
        if isinstance(result.get("explanation"), str) and result["explanation"]:
            reasons[name] = result["explanation"]
        if isinstance(result.get("label"), str) and result["label"]:
            labels[name] = result["label"]
    if not names:
        return Evaluation()
    top = headline if headline in names else names[0] if len(names) == 1 else None
    if top is not None and top in scores:
        scores.setdefault("overall", scores[top])
    rationale = reasons.get(top) if top else None
    if rationale is None and reasons:
        rationale = "\n".join(f"{name}: {reason}" for name, reason in reasons.items())
    return Evaluation(
        scores=scores,
        verdict=labels.get(top) if top else None,
        rationale=rationale,
        reasons=reasons,
        judge=JUDGE,
    )


def origin(span: dict[str, Any], project: str, position: int | None = None) -> Origin:
    """Where the span (or one of its documents) lives in Phoenix."""
    span_id = span_id_of(span) or ""
    extra: dict[str, Any] = {"trace_id": trace_id_of(span), "project": project}
    if position is None:
        return Origin(tool="phoenix", kind="span", id=span_id, extra=extra)
    return Origin(
        tool="phoenix",
        kind="document",
        id=f"{span_id}:{position}",
        extra={**extra, "span_id": span_id, "document_position": position},
    )


def answer_item(span: dict[str, Any], project: str, judged: Evaluation) -> ItemData:
    """A span as an answer item: what it was asked, what it said, the documents it retrieved."""
    attrs = flatten(span.get("attributes"))
    where = origin(span, project)
    return ItemData(
        id=where.id,
        query=Query(query=query_text(span, attrs)),
        answer=answer_text(attrs),
        contexts=[r.snippet for _, r in documents(attrs) if r.snippet],
        tool_captures=tool_captures(attrs, kind_of(span)),
        evaluation=judged,
        features=_features(span, attrs, where),
        **_measures(span, attrs),
    )


def search_item(span: dict[str, Any], project: str, judged: Evaluation) -> ItemData | None:
    """A RETRIEVER span as a search item ranking its documents (None when it has none)."""
    attrs = flatten(span.get("attributes"))
    found = documents(attrs)
    if not found:
        return None
    where = origin(span, project)
    return ItemData(
        id=where.id,
        query=Query(query=query_text(span, attrs)),
        results=[r for _, r in found],
        evaluation=judged,
        features=_features(span, attrs, where),
        **_measures(span, attrs),
    )


def document_items(span: dict[str, Any], project: str) -> list[ItemData]:
    """One search item per retrieved document, each labelled (and written back) on its own."""
    attrs = flatten(span.get("attributes"))
    asked = query_text(span, attrs)
    items = []
    for position, result in documents(attrs):
        where = origin(span, project, position)
        items.append(
            ItemData(
                id=where.id,
                query=Query(query=asked),
                results=[result],
                features=_features(span, attrs, where),
                **_measures(span, attrs),
            )
        )
    return items


def _measures(span: dict[str, Any], attrs: Attributes) -> dict[str, Any]:
    cost = number(attrs.get("llm.cost.total"))
    model = attrs.get("llm.model_name")
    return {
        "latency_ms": _milliseconds(span),
        "cost_usd": cost if cost is not None and cost >= 0 else None,
        "usage": _usage(attrs),
        "error": _error(span),
        "model": model if isinstance(model, str) else None,
    }
