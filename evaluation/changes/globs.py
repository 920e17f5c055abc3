"""Glob patterns of relative POSIX paths (``**/payment_*``, ``*.md``), as ``include``,
``exclude`` and triage's require-human patterns write them: ``**/`` any directories (or none),
``**`` anything, ``*`` and ``?`` within one name; a pattern without ``/`` matches a name at any
depth, a leading ``/`` anchors it at the top (:func:`path_matches`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    """``**/`` any directories (or none), ``**`` anything, ``*`` and ``?`` within one name, other
    characters as they are.

    A pattern without ``/`` matches a name at any depth (``*.md``); a leading ``/`` anchors it at
    the top.
    """
    anchored = pattern.strip()
    pattern = re.sub(r"(?:\*\*/)+", "**/", anchored.lstrip("/"))
    if "/" not in anchored:
        pattern = "**/" + pattern
    out, i = [], 0
    tokens = (("**/", "(?:.*/)?"), ("**", ".*"), ("*", "[^/]*"), ("?", "[^/]"))
    while i < len(pattern):
        token = next(
            ((t, r) for t, r in tokens if pattern.startswith(t, i)),
            (pattern[i], re.escape(pattern[i])),
        )
        out.append(token[1])
        i += len(token[0])
    return re.compile("".join(out), re.S)


def path_matches(path: str, patterns: Sequence[str]) -> bool:
    """Whether the relative POSIX ``path`` matches any of the glob ``patterns`` (``**/payment_*``,
    ``*.md``)."""
    return any(_glob(p).fullmatch(path) for p in patterns)
