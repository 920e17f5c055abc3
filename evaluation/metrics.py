"""Local metrics, no LLM: quote precision and priority-weighted recall, nDCG@k and recall@k,
token overlap, and the weighted aggregate and dimension profile.

Conventions (also in docs/evaluating.md):

- Text is compared after :func:`normalize`: markdown emphasis, code ticks, heading and quote
  markers and link syntax are removed and runs of whitespace become one space. Case is kept:
  quotes must be verbatim.
- A ground-truth context is *found* when its normalised text is a substring of a normalised
  quote. A quote is *relevant* (precision) when it contains a ground-truth context or is itself
  a part of one of at least :data:`MIN_FRAGMENT` characters.
- A metric that cannot be computed (no quotes, no ground truth) is ``None`` and is left out of
  the aggregate, whose weights are renormalised over the metrics present.
"""

from __future__ import annotations

import math
import re
from typing import Iterable, Mapping, Sequence

from .records import GroundTruthContext

MIN_FRAGMENT = 20
"""Shortest quote (normalised characters) that counts as relevant by being part of a context."""

ANSWER_METRICS = (
    "answer_correctness",
    "quote_recall",
    "explanation_faithfulness",
    "quote_faithfulness",
    "quote_precision",
)
"""The five answer metrics."""

_MARKDOWN = [
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),  # links and images keep their text
    (re.compile(r"(?m)^\s{0,3}(#{1,6}|>+|[-*+]|\d+\.)\s+"), ""),  # headings, quotes, list markers
    (re.compile(r"[*_`~]+"), ""),  # emphasis, code ticks, strikethrough
]
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from has have how i if in is it its my of on or that "
    "the this to was what when where which while who why will with you your".split()
)


def normalize(text: str) -> str:
    """Text without markdown formatting, whitespace collapsed."""
    for pattern, replacement in _MARKDOWN:
        text = pattern.sub(replacement, text)
    return _SPACE.sub(" ", text).strip()


def found(context: str, quotes: Iterable[str]) -> bool:
    """Whether any quote contains the context (normalised substring match)."""
    needle = normalize(context)
    return bool(needle) and any(needle in normalize(q) for q in quotes)


def coverage(contexts: Sequence[GroundTruthContext], quotes: Sequence[str]) -> list[bool]:
    """Per ground-truth context, in order: found in the quotes or not."""
    normalized = [normalize(q) for q in quotes]
    return [bool(n := normalize(c.text)) and any(n in q for q in normalized) for c in contexts]


def recall_weights(
    contexts: Sequence[GroundTruthContext], quotes: Sequence[str], weights: Mapping[str, float]
) -> tuple[float, float]:
    """(found weight, total weight): the worked example gives (23, 23), (20, 23) and (13, 23)."""
    total = sum(weights[c.priority] for c in contexts)
    hit = sum(weights[c.priority] for c, ok in zip(contexts, coverage(contexts, quotes)) if ok)
    return hit, total


def quote_recall(
    contexts: Sequence[GroundTruthContext], quotes: Sequence[str], weights: Mapping[str, float]
) -> float | None:
    """Priority-weighted share of ground-truth contexts found in the quotes.

    ``weights`` maps a priority to its weight (critical 10, supporting 3); ``None`` without
    contexts.
    """
    hit, total = recall_weights(contexts, quotes, weights)
    return hit / total if total else None


def quote_precision(contexts: Sequence[GroundTruthContext], quotes: Sequence[str]) -> float | None:
    """Share of quotes that are relevant (unweighted); ``None`` without quotes or contexts."""
    if not quotes or not contexts:
        return None
    targets = [normalize(c.text) for c in contexts]
    relevant = 0
    for quote in quotes:
        q = normalize(quote)
        if any(t and t in q for t in targets) or (
            len(q) >= MIN_FRAGMENT and any(q in t for t in targets)
        ):
            relevant += 1
    return relevant / len(quotes)


def quotes_in_contexts(quotes: Sequence[str], contexts: Sequence[str]) -> float | None:
    """Share of quotes that are verbatim substrings of the retrieved contexts (lexical
    faithfulness)."""
    if not quotes or not contexts:
        return None
    haystack = [normalize(c) for c in contexts]
    return sum(any(normalize(q) in h for h in haystack) for q in quotes) / len(quotes)


def recall_at_k(paths: Sequence[str | None], expected: Sequence[str], k: int) -> float | None:
    """Share of expected paths among the top ``k`` results; ``None`` without expected paths."""
    if not expected:
        return None
    top = {p for p in paths[:k] if p}
    return len(top & set(expected)) / len(set(expected))


def ndcg_at_k(paths: Sequence[str | None], expected: Sequence[str], k: int) -> float | None:
    """Binary-relevance nDCG@k (relevant = an expected path); ``None`` without expected paths."""
    if not expected:
        return None
    wanted, seen, dcg = set(expected), set(), 0.0
    for rank, path in enumerate(paths[:k], 1):
        if path in wanted and path not in seen:  # a page returned twice counts once
            seen.add(path)
            dcg += 1 / math.log2(rank + 1)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(k, len(wanted)) + 1))
    return dcg / ideal


def graded_ndcg(gains: Sequence[float]) -> float | None:
    """nDCG of a list's own graded gains against the same gains sorted best first."""
    dcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, 1))
    ideal = sum(g / math.log2(rank + 1) for rank, g in enumerate(sorted(gains, reverse=True), 1))
    return dcg / ideal if ideal else None


def terms(text: str | None) -> set[str]:
    """Lower-cased word tokens without stopwords."""
    return {w for w in _WORD.findall((text or "").lower()) if w not in STOPWORDS}


def term_overlap(query: str, text: str | None) -> float:
    """Share of the query's terms that occur in ``text`` (0 when the query has none)."""
    wanted = terms(query)
    return len(wanted & terms(text)) / len(wanted) if wanted else 0.0


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD-style token F1 between two texts (bags of lower-cased words, stopwords kept)."""
    pred = _WORD.findall(prediction.lower())
    ref = _WORD.findall(reference.lower())
    if not pred or not ref:
        return 0.0
    common = sum(min(pred.count(w), ref.count(w)) for w in set(pred))
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def aggregate(scores: Mapping[str, float | None], weights: Mapping[str, float]) -> float | None:
    """Weighted mean on 0–100 over the weighted metrics present."""
    present = [
        (weights[name], value)
        for name, value in scores.items()
        if name in weights and value is not None and not math.isnan(value)
    ]
    total = sum(w for w, _ in present)
    return 100 * sum(w * v for w, v in present) / total if total else None


QUOTE_QUALITY = {"quote_recall": 0.5, "quote_faithfulness": 0.3, "quote_precision": 0.2}
"""Quote Quality = 0.5·recall + 0.3·faithfulness + 0.2·precision."""


def profile(scores: Mapping[str, float | None]) -> dict[str, float | None]:
    """The dimension profile on 0–100: quote_quality, reasoning, correctness (None when absent)."""

    def pct(name: str) -> float | None:
        value = scores.get(name)
        return None if value is None else 100 * value

    return {
        "quote_quality": aggregate({k: scores.get(k) for k in QUOTE_QUALITY}, QUOTE_QUALITY),
        "reasoning": pct("explanation_faithfulness"),
        "correctness": pct("answer_correctness"),
    }
