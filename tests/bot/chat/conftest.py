"""The store the chat tests run on. The behaviour suite of the chat core (test_chat.py,
test_chat_core.py) runs on both backends: the JSONL files, and PostgreSQL shared by bot replicas
(the data directory then being its read copy); those modules parametrize ``backend``, and their
test ids name it. The other chat tests (canaries, injection, connectors) run on the JSONL files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluation import Store

BACKENDS = ["jsonl", "postgres"]


@pytest.fixture
def backend() -> str:
    """The store's backend: ``jsonl`` (the files) or ``postgres`` (a fresh database schema)."""
    return "jsonl"


@pytest.fixture
def store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Store]:
    """An empty data directory; with ``postgres`` the read copy of a fresh database (the server
    is started only when a test asks for it)."""
    if backend == "jsonl":
        yield Store(tmp_path / "results")
        return
    shared = Store(tmp_path / "results", url=request.getfixturevalue("pg_url"))
    try:
        yield shared
    finally:
        shared.close()
