"""Shared fixtures: a data directory with the demo runs imported, the CLI in-process or as a
subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from bot.demo import RAG_RUN, SEARCH_RUN, build_demo
from evaluation import Store, load_config
from tests.auxil.network import guard_network, scrub_credentials

# Property tests draw the same examples on every run, so ``make test`` (and CI) is repeatable;
# ``HYPOTHESIS_PROFILE= random`` draws fresh ones (how the Wilson bound at 10 of 10 was found).
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("random", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

ROOT = Path(__file__).resolve().parents[1]
HILBOT = Path(sys.executable).parent / "hilbot"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test: no real credential from the environment, no network beyond loopback."""
    scrub_credentials(monkeypatch)
    guard_network(monkeypatch)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """An empty data directory."""
    return Store(tmp_path / "results")


@pytest.fixture
def demo_store(store: Store) -> Store:
    """A data directory holding the two demo runs."""
    build_demo(store)
    return store


@pytest.fixture
def fake(monkeypatch):
    """The local Messages API server, with ANTHROPIC_BASE_URL and a key pointing at it."""
    from tests.fakes.anthropic_api import FakeAnthropic

    with FakeAnthropic() as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield server


@pytest.fixture
def config():
    """The built-in configuration."""
    return load_config(None)


@pytest.fixture
def run_cli(tmp_path: Path):
    """Run ``hilbot`` in-process, exactly as the console script does, with its data dir under
    tmp_path.

    Returns the exit code and both streams (``returncode``, ``stdout``, ``stderr``).
    """
    from tests.auxil.cli import invoke

    def run(*args: str, input: str | None = None, cwd: Path | None = None, env: dict | None = None):
        full_env = {"HILBOT_DATA_DIR": str(tmp_path / "results"), "USER": "tester", **(env or {})}
        return invoke(*args, input=input, cwd=cwd or tmp_path, env=full_env)

    return run


@pytest.fixture
def run_process(tmp_path: Path):
    """Run the installed ``hilbot`` console script in a subprocess (for the few smoke tests that
    need one)."""

    def run(
        *args: str, input: str | None = None, cwd: Path | None = None, env: dict | None = None
    ) -> subprocess.CompletedProcess:
        full_env = {
            **os.environ,
            "HILBOT_DATA_DIR": str(tmp_path / "results"),
            "USER": "tester",
            **(env or {}),
        }
        return subprocess.run(
            [str(HILBOT), *args],
            input=input,
            capture_output=True,
            text=True,
            cwd=cwd or tmp_path,
            env=full_env,
            timeout=60,
        )

    return run


__all__ = ["RAG_RUN", "ROOT", "SEARCH_RUN"]


@pytest.fixture
def openai_api(monkeypatch):
    """The local Chat Completions server, with OPENAI_BASE_URL and OPENAI_API_KEY pointing at it (no
    other OPENAI_* variable)."""
    from tests.fakes.openai_api import FakeOpenAI

    for name in [
        n for n in os.environ if n.startswith("OPENAI_")
    ]:  # the SDK reads several (ORG_ID, PROJECT_ID, CUSTOM_HEADERS…)
        monkeypatch.delenv(name)
    with FakeOpenAI() as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield server


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server of this session (one per xdist worker), removed at its end: see
    tests/pgserver.py."""
    from tests.pgserver import PostgresServer

    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def pg_url(postgres, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh database on the session's server: its URL without the password, which is in
    ``PGPASSWORD`` (libpq reads it; no other ``PG*`` variable is left set)."""
    for name in [n for n in os.environ if n.startswith("PG")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PGPASSWORD", postgres.password)
    if not postgres.running:  # an earlier test stopped or killed it
        postgres.start()
    # a schema of its own in the worker's one test database: as separate as a database for
    # hilbot (its tables are named without a schema), and made in milliseconds, not a copy of
    # template1 fsynced (0.2 s a test)
    import psycopg
    from psycopg import sql

    schema = f"t_{uuid.uuid4().hex[:12]}"
    if not getattr(postgres, "test_database", None):
        postgres.create_database("hilbot_tests")
        postgres.test_database = "hilbot_tests"
    with psycopg.connect(postgres.url("hilbot_tests"), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    yield postgres.url("hilbot_tests", password=False) + f"?options=-csearch_path%3D{schema}"
    if postgres.running:  # dropped, so that a long run does not fill the disk
        with psycopg.connect(postgres.url("hilbot_tests"), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
