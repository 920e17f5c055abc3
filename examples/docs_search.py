"""Example search target: BM25 over the small Ferret/Burrow/Relay docs corpus in
``examples/corpus``.

Standard library only. Use it as a function target (``examples.docs_search:search``) or as a
command target::

    python examples/docs_search.py "ferret middleware"
    echo "burrow pool size" | python examples/docs_search.py

Both print ``{"results": [{"rank", "path", "title", "score", "snippet"}, ...]}`` as JSON.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
K1 = 1.2
B = 0.75
SNIPPET_MAX = 200

STOPWORDS = frozenset(
    """a an and are as at be by can do does for from how i if in into is it its my of on or so
    that the this to was what when where which why will with without you your""".split()
)

_TOKEN = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

_index: dict | None = None  # module-level cache, built on first search


def tokenize(text: str) -> list[str]:
    """Lowercase ``\\w+`` tokens without stopwords."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


def _load() -> dict:
    global _index
    if _index is not None:
        return _index
    docs = []
    for file in sorted(CORPUS_DIR.rglob("*.md")):
        text = file.read_text(encoding="utf-8")
        first, _, body = text.partition("\n")
        title = first.lstrip("#").strip() if first.startswith("#") else file.stem
        body = body.strip()
        tokens = tokenize(title + " " + body)
        docs.append(
            {
                "path": "/" + file.relative_to(CORPUS_DIR).as_posix(),
                "title": title,
                "sentences": [
                    s.strip() for s in _SENTENCE_END.split(" ".join(body.split())) if s.strip()
                ],
                "tf": Counter(tokens),
                "length": len(tokens),
            }
        )
    n = len(docs)
    df = Counter(term for d in docs for term in d["tf"])
    _index = {
        "docs": docs,
        "avgdl": (sum(d["length"] for d in docs) / n) if n else 0.0,
        # BM25 idf with +1 inside the log (always positive).
        "idf": {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()},
    }
    return _index


def _bm25(doc: dict, terms: list[str], index: dict) -> float:
    score = 0.0
    norm = K1 * (1 - B + B * doc["length"] / index["avgdl"])
    for term in terms:
        tf = doc["tf"].get(term, 0)
        if tf:
            score += index["idf"][term] * tf * (K1 + 1) / (tf + norm)
    return score


def _snippet(sentences: list[str], terms: set[str]) -> str:
    best, best_hits = (sentences[0] if sentences else ""), -1
    for sentence in sentences:
        hits = sum(1 for t in tokenize(sentence) if t in terms)
        if hits > best_hits:
            best, best_hits = sentence, hits
    if len(best) > SNIPPET_MAX:
        best = best[: SNIPPET_MAX - 1].rstrip() + "…"
    return best


def search(query: str, k: int = 5) -> list[dict]:
    """Top ``k`` corpus pages for ``query`` by BM25; scores are divided by the top score."""
    index = _load()
    terms = tokenize(query)
    if not terms or not index["docs"]:
        return []
    scored = [(_bm25(d, terms, index), d) for d in index["docs"]]
    scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]["path"]))[:k]
    if not scored:
        return []
    top = scored[0][0]
    term_set = set(terms)
    return [
        {
            "rank": rank,
            "path": doc["path"],
            "title": doc["title"],
            "score": round(score / top, 2),
            "snippet": _snippet(doc["sentences"], term_set),
        }
        for rank, (score, doc) in enumerate(scored, start=1)
    ]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from examples._cli import main

    main(search, "results")
