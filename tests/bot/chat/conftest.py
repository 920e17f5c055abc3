"""The chat core's tests run on both store backends: the JSONL files, and PostgreSQL shared by
bot replicas (the data directory then being its read copy). Test ids name the backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluation import Store

BACKENDS = ["jsonl", "postgres"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The store's backend: ``jsonl`` (the files) or ``postgres`` (a fresh database)."""
    return str(request.param)


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
