"""Example answer target: a retrieval-only "rules bot" over the tabletop rules in
``examples/rules``.

Standard library only, no LLM. It retrieves the top passages by BM25, quotes the best-matching
sentences verbatim (markdown stripped) and wraps them in a templated answer. Use it as a function
target (``examples.rules_bot:answer``) or as a command target::

    python examples/rules_bot.py "Can a concealed operative counteract?"
    echo "Who places a dropped marker?" | python examples/rules_bot.py

Both print ``{"answer", "quotes", "contexts", "usage", "model"}`` as JSON.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from pathlib import Path

RULES_DIR = Path(__file__).resolve().parent / "rules"
MODEL = "rules-bot-bm25"
K1 = 1.2
B = 0.75
TOP_PASSAGES = 4
MAX_QUOTES = 3

STOPWORDS = frozenset(
    """a an and are as at be by can do does for from has have having how i if in into is it its
    me my of on or so that the their them then there this to was what when where which who why
    will with you your""".split()
)

_TOKEN = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*])")
_MARKDOWN = re.compile(r"[*_`]")

_index: dict | None = None  # module-level cache, built on first call


def tokenize(text: str) -> list[str]:
    """Lowercase ``\\w+`` tokens without stopwords."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


def plain(text: str) -> str:
    """Strip markdown emphasis/code markers and collapse whitespace."""
    return " ".join(_MARKDOWN.sub("", text).split())


class _BM25:
    def __init__(self, texts: list[str]):
        self.tfs = [Counter(tokenize(t)) for t in texts]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        n = len(texts)
        self.avgdl = (sum(self.lengths) / n) if n else 0.0
        df = Counter(term for tf in self.tfs for term in tf)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}

    def scores(self, terms: list[str]) -> list[float]:
        out = []
        for tf, length in zip(self.tfs, self.lengths):
            norm = K1 * (1 - B + B * length / self.avgdl) if self.avgdl else K1
            out.append(
                sum(self.idf[t] * tf[t] * (K1 + 1) / (tf[t] + norm) for t in terms if tf.get(t))
            )
        return out


def _passages() -> list[dict]:
    """Paragraphs (and single list items) of every rules file, with the heading they sit under."""
    passages = []
    for file in sorted(RULES_DIR.glob("*.md")):
        heading = ""
        for block in re.split(r"\n\s*\n", file.read_text(encoding="utf-8")):
            block = block.strip()
            if not block:
                continue
            if block.startswith("#"):
                heading = block.lstrip("#").strip()
                continue
            items = [block]
            if all(line.lstrip().startswith("- ") for line in block.splitlines()):
                items = [line.lstrip()[2:] for line in block.splitlines()]
            for item in items:
                passages.append(
                    {
                        "source": f"{file.name} › {heading}" if heading else file.name,
                        "heading": heading,
                        "text": item,
                    }
                )
    return passages


def _load() -> dict:
    global _index
    if _index is None:
        passages = _passages()
        sentences = [
            {"passage": i, "text": s}
            for i, p in enumerate(passages)
            for s in _SENTENCE_END.split(plain(p["text"]))
            if s
        ]
        _index = {
            "passages": passages,
            "passage_bm25": _BM25([p["heading"] + " " + p["text"] for p in passages]),
            "sentences": sentences,
            "sentence_bm25": _BM25([s["text"] for s in sentences]),
        }
    return _index


def _words(*texts: str) -> int:
    return sum(len(t.split()) for t in texts)


def answer(query: str) -> dict:
    """Answer a rules question with verbatim quotes from the top BM25 passages."""
    index = _load()
    terms = tokenize(query)
    passage_scores = index["passage_bm25"].scores(terms)
    ranked = sorted(
        (i for i, s in enumerate(passage_scores) if s > 0), key=lambda i: -passage_scores[i]
    )
    top = ranked[:TOP_PASSAGES]
    contexts = [index["passages"][i]["text"] for i in top]

    # Quote the best sentences, but only from the retrieved passages.
    sentence_scores = index["sentence_bm25"].scores(terms)
    rank_of = {p: r for r, p in enumerate(top)}
    candidates = [
        j
        for j, s in enumerate(index["sentences"])
        if s["passage"] in rank_of and sentence_scores[j] > 0
    ]
    candidates.sort(key=lambda j: (-sentence_scores[j], rank_of[index["sentences"][j]["passage"]]))
    quotes: list[str] = []
    sources: list[str] = []
    for j in candidates:
        sentence = index["sentences"][j]
        if sentence["text"] not in quotes:
            quotes.append(sentence["text"])
            source = index["passages"][sentence["passage"]]["source"]
            if source not in sources:
                sources.append(source)
        if len(quotes) == MAX_QUOTES:
            break

    if quotes:
        text = "Based on the rules: " + " ".join(f'"{q}"' for q in quotes)
        text += f" (sources: {'; '.join(sources)})"
    else:
        text = "I could not find a rule that answers this question."

    return {
        "answer": text,
        "quotes": quotes,
        "contexts": contexts,
        "usage": {"input_tokens": _words(query, *contexts), "output_tokens": _words(text)},
        "model": MODEL,
    }


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from examples._cli import main

    main(answer)
