"""What both example systems share when run as commands (``--target-cmd``)."""

from __future__ import annotations

import json
import sys


def read_query(argv: list[str]) -> str:
    """The query from the arguments (after a ``--``, if one comes first), else stdin (plain text or
    ``{"query": ...}``)."""
    words = argv[2:] if argv[1:2] == ["--"] else argv[1:]
    if words:
        return " ".join(words)
    raw = sys.stdin.read().strip()
    if raw.startswith("{"):
        try:
            data = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(data, dict):
            return str(data.get("query") or data.get("text") or "")
    return raw


def main(function, wrap: str | None = None) -> None:
    """Call ``function`` with the query and print its result as JSON (under ``wrap`` if given)."""
    result = function(read_query(sys.argv))
    print(json.dumps({wrap: result} if wrap else result, ensure_ascii=False, indent=2))
