"""An inspect_ai sample as a hilbot item: its question, answer, target and its scorers' verdicts.

Pure functions over the objects ``inspect_ai.log`` reads (duck-typed, so this module never
imports the SDK). A scorer's value becomes a 0–1 score the way inspect_ai's own metrics read
it: ``C``/``I``/``P``/``N`` are 1/0/0.5/0, a bool is 1/0, ``yes``/``no`` are 1/0, a number in
0–1 is itself; a dict value is one score per key. A value with no such reading (a number
outside 0–1, a list, free text) is kept as it is in ``evaluation.inspect_values``, not scored.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from ...records import Evaluation, ItemData, Query
from ..base import Origin

TOOL = "inspect_ai"
"""The tool's name, as origins and registrations carry it."""

LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
"""inspect_ai's letter grades (CORRECT, INCORRECT, PARTIAL, NOANSWER) as scores."""

WORDS = {
    "yes": 1.0,
    "true": 1.0,
    "correct": 1.0,
    "pass": 1.0,
    "no": 0.0,
    "false": 0.0,
    "incorrect": 0.0,
    "fail": 0.0,
}
"""Yes/no words a scorer may return, as scores."""

RESERVED = ("origin", "scorer_answers", "messages")
"""Feature names the connector sets itself; a sample's metadata key of the same name gets a
``sample_`` prefix."""


def fraction(value: Any) -> float | None:
    """A scalar score value as 0–1, or None when it has no such reading."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        number = float(value)
        return number if math.isfinite(number) and 0.0 <= number <= 1.0 else None
    if isinstance(value, str):
        text = value.strip()
        if text.upper() in LETTERS and len(text) == 1:
            return LETTERS[text.upper()]
        if text.lower() in WORDS:
            return WORDS[text.lower()]
        try:
            return fraction(float(text)) if text else None
        except ValueError:
            return None
    return None


def is_categorical(value: Any) -> bool:
    """Whether a value is a grade (a letter, a bool, a yes/no word) rather than a number."""
    if isinstance(value, bool):
        return True
    return isinstance(value, str) and fraction(value) is not None and not _numeric_text(value)


def _numeric_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def verdict(value: Any) -> str | None:
    """PASS / FAIL / PARTIAL for a grade; None for a number (it has no verdict of its own)."""
    if not is_categorical(value):
        return None
    score = fraction(value)
    return "PASS" if score == 1.0 else "FAIL" if score == 0.0 else "PARTIAL"


def score_values(scores: dict[str, Any]) -> tuple[dict[str, float], dict[str, Any]]:
    """Every scorer's value as 0–1 scores (a dict value: one per key), and the values that have
    no 0–1 reading (kept as they are)."""
    mapped: dict[str, float] = {}
    raw: dict[str, Any] = {}
    for name, score in scores.items():
        value = getattr(score, "value", None)
        parts = (
            [(_part_name(name, str(k), scores, mapped, raw), v) for k, v in value.items()]
            if isinstance(value, dict)
            else [(name, value)]
        )
        for key, part in parts:
            number = fraction(part)
            if number is None:
                raw[key] = _plain(part)
            else:
                mapped[key] = number
    return mapped, raw


def _part_name(name: str, key: str, scores: dict[str, Any], *taken: dict[str, Any]) -> str:
    """A dict value's key as its score's name (as inspect_ai names it), or ``scorer.key`` when
    another scorer or part already has that name."""
    clash = key in scores or any(key in names for names in taken)
    return f"{name}.{key}" if clash else key


def judge_value(scores: dict[str, Any], judge: str | None) -> tuple[float | None, Any]:
    """The judging scorer's 0–1 score and its raw value: a scorer by name (a dict-valued one is
    the mean of its parts) or one key of a dict-valued scorer."""
    if judge is None:
        return None, None
    if judge in scores:
        value = getattr(scores[judge], "value", None)
        if isinstance(value, dict):
            parts = [x for x in (fraction(v) for v in value.values()) if x is not None]
            return (sum(parts) / len(parts) if parts else None), value
        return fraction(value), value
    for score in scores.values():
        value = getattr(score, "value", None)
        if isinstance(value, dict) and judge in value:
            return fraction(value[judge]), value[judge]
    return None, None


def _plain(value: Any) -> Any:
    """A value as JSON holds it (a non-finite float as text)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(x) for x in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def question(sample: Any) -> str:
    """The sample's input as one text: the string, or the last user message of a chat (the last
    message when none is the user's); multiple-choice options are listed after it."""
    given = getattr(sample, "input", "")
    if isinstance(given, str):
        text = given
    else:
        messages = list(given or [])
        users = [m for m in messages if getattr(m, "role", None) == "user"]
        last = (users or messages or [None])[-1]
        text = _text(last)
    choices = [str(c) for c in (getattr(sample, "choices", None) or [])]
    if choices:
        text += "\n\n" + "\n".join(f"{_letter(n)}) {c}" for n, c in enumerate(choices))
    return text


def _text(message: Any) -> str:
    if message is None:
        return ""
    text = getattr(message, "text", None)
    return text if isinstance(text, str) else str(getattr(message, "content", ""))


def _letter(n: int) -> str:
    return chr(ord("A") + n) if n < 26 else str(n + 1)


def targets(sample: Any) -> list[str]:
    """The sample's target(s) as a list of non-empty texts."""
    target = getattr(sample, "target", None)
    found = [target] if isinstance(target, str) else list(target or [])
    return [str(t) for t in found if str(t)]


def chat(sample: Any) -> list[dict[str, str]] | None:
    """A chat input's messages (role and text), when it has more than one."""
    given = getattr(sample, "input", "")
    if isinstance(given, str) or len(given or []) < 2:
        return None
    return [{"role": str(getattr(m, "role", "")), "text": _text(m)} for m in given]


def usage(sample: Any) -> dict[str, int]:
    """Input and output tokens over every model the sample called."""
    totals = {"input_tokens": 0, "output_tokens": 0}
    for model_usage in (getattr(sample, "model_usage", None) or {}).values():
        for key in totals:
            totals[key] += int(getattr(model_usage, key, 0) or 0)
    return totals if any(totals.values()) else {}


def features(sample: Any, origin: Origin) -> dict[str, Any]:
    """The sample's metadata (for correlation analysis), its origin, the scorers' extracted
    answers and a chat input's messages."""
    out: dict[str, Any] = {}
    for key, value in (getattr(sample, "metadata", None) or {}).items():
        key = str(key)
        out[f"sample_{key}" if key in RESERVED else key] = _plain(value)
    answers = {
        name: s.answer
        for name, s in (getattr(sample, "scores", None) or {}).items()
        if isinstance(getattr(s, "answer", None), str)
    }
    if answers:
        out["scorer_answers"] = answers
    messages = chat(sample)
    if messages:
        out["messages"] = messages
    out["origin"] = origin.model_dump()
    return out


def evaluation(sample: Any, judge: str | None) -> Evaluation:
    """The scorers' view of the sample: 0–1 scores (``overall`` is the judging scorer's), its
    verdict and explanation, and each scorer's explanation as its reason."""
    scores = dict(getattr(sample, "scores", None) or {})
    mapped, raw = score_values(scores)
    overall, value = judge_value(scores, judge)
    if overall is not None:
        mapped["overall"] = overall
    reasons = {
        name: s.explanation
        for name, s in scores.items()
        if isinstance(getattr(s, "explanation", None), str) and s.explanation
    }
    rationale = reasons.get(judge) if judge else None
    if judge and rationale is None:
        rationale = next(
            (
                reasons[n]
                for n, s in scores.items()
                if isinstance(s.value, dict) and judge in s.value and n in reasons
            ),
            None,
        )
    fields: dict[str, Any] = {
        "scores": mapped,
        "verdict": verdict(value),
        "rationale": rationale,
        "judge": judge,
        "reasons": reasons,
    }
    if raw:
        fields["inspect_values"] = raw
    return Evaluation.model_validate(fields)


def item(
    sample: Any, *, item_id: str, origin: Origin, judge: str | None, model: str | None
) -> ItemData:
    """One sample as a hilbot item."""
    metadata = getattr(sample, "metadata", None) or {}
    expected = targets(sample)
    category = metadata.get("category") if isinstance(metadata.get("category"), str) else None
    output = getattr(sample, "output", None)
    answer = getattr(output, "completion", None) if output is not None else None
    error = getattr(sample, "error", None)
    seconds = getattr(sample, "total_time", None)
    return ItemData(
        id=item_id,
        query=Query(
            query=question(sample), category=category, expected_answer="\n".join(expected) or None
        ),
        answer=answer if isinstance(answer, str) else None,
        ground_truth=expected,
        evaluation=evaluation(sample, judge),
        features=features(sample, origin),
        latency_ms=float(seconds) * 1000 if isinstance(seconds, (int, float)) else None,
        usage=usage(sample),
        error=str(getattr(error, "message", error)) if error else None,
        model=str(model or getattr(output, "model", None) or "") or None,
    )


def item_id(sample_id: Any, epoch: int, epochs: int) -> str:
    """The item's id in the run: the sample's id, with ``#epoch`` when the log has several."""
    return f"{sample_id}#{epoch}" if epochs > 1 else str(sample_id)


def names_of(results: Any, samples: Iterable[Any] = ()) -> list[str]:
    """The score names a log holds: its results' (scorers and dict keys), else its samples'."""
    found: list[str] = []
    for score in getattr(results, "scores", None) or []:
        for name in (getattr(score, "scorer", None), getattr(score, "name", None)):
            if isinstance(name, str) and name not in found:
                found.append(name)
    for sample in samples:
        for name, score in (getattr(sample, "scores", None) or {}).items():
            keys = [name] + (list(score.value) if isinstance(score.value, dict) else [])
            found += [str(k) for k in keys if str(k) not in found]
    return found
