"""The tests' PostgreSQL server (tests/pgserver.py) and its fixtures (tests/conftest.py)."""

from __future__ import annotations

import os
import pwd
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from tests import pgserver
from tests.pgserver import PostgresServer


def test_password_is_required_and_checked(postgres: PostgresServer, monkeypatch, tmp_path):
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    with psycopg.connect(postgres.url()) as conn:
        row = conn.execute("SELECT current_user, current_setting('fsync')").fetchone()
    assert row == ("hilbot", "on")

    wrong = postgres.url().replace(postgres.password, "not-" + postgres.password)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(wrong)
    with pytest.raises(psycopg.OperationalError, match="no password supplied"):
        psycopg.connect(postgres.url(password=False))


def test_pg_url_has_no_password_and_the_environment_has_it(pg_url: str, postgres):
    parts = urlsplit(pg_url)
    assert parts.password is None and postgres.password not in pg_url
    assert (parts.hostname, parts.port, parts.username) == ("127.0.0.1", postgres.port, "hilbot")
    assert os.environ["PGPASSWORD"] == postgres.password
    with psycopg.connect(pg_url) as conn:  # the test's own schema, first on the search path
        row = conn.execute("SELECT current_database(), current_schema()").fetchone()
    assert row is not None and row[0] == parts.path.lstrip("/") and row[1].startswith("t_")


def test_databases_are_distinct(pg_url: str, postgres: PostgresServer):
    other = postgres.create_database("t_other_" + urlsplit(pg_url).path[-6:])
    assert other != pg_url
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE TABLE marks (n int)")
        conn.execute("INSERT INTO marks VALUES (1)")
    with psycopg.connect(other) as conn:
        row = conn.execute("SELECT to_regclass('marks')").fetchone()
    assert row == (None,)
    postgres.drop_database(urlsplit(other).path.lstrip("/"))


@pytest.mark.parametrize("run", [1, 2])
def test_each_test_gets_an_empty_database(pg_url: str, run: int):
    with psycopg.connect(pg_url) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchone()
        conn.execute("CREATE TABLE leftover (n int)")
    assert tables == (0,)


def test_committed_data_survives_a_kill(tmp_path):
    with PostgresServer() as server:
        port, directory = server.port, server.dir
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (n int)")
            conn.execute("INSERT INTO kept VALUES (42)")
        server.kill()
        assert not server.running
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(server.url(), connect_timeout=5)

        server.restart()
        assert server.running and server.port == port
        with psycopg.connect(server.url()) as conn:
            assert conn.execute("SELECT n FROM kept").fetchall() == [(42,)]
    assert directory is not None and not directory.exists()
    assert not server.running
    server.cleanup()  # again: nothing


def test_the_server_does_not_run_as_root(postgres: PostgresServer):
    with psycopg.connect(postgres.url()) as conn:  # its backend process lives while it is open
        row = conn.execute("SELECT current_setting('data_directory'), pg_backend_pid()").fetchone()
        assert row is not None
        data_directory, backend = Path(row[0]), row[1]
        expected = pwd.getpwnam("postgres").pw_uid if os.geteuid() == 0 else os.geteuid()
        assert data_directory.stat().st_uid == expected != 0

        postmaster = int((data_directory / "postmaster.pid").read_text().split()[0])
        for pid in (postmaster, backend):
            status = Path(f"/proc/{pid}/status").read_text()
            uids = next(line for line in status.splitlines() if line.startswith("Uid:"))
            assert set(map(int, uids.split()[1:])) == {expected}, f"process {pid}: {uids}"


def test_missing_binaries_say_what_to_install(monkeypatch):
    monkeypatch.setattr(pgserver.shutil, "which", lambda name: None)
    monkeypatch.setattr(pgserver.glob, "glob", lambda pattern: [])
    with pytest.raises(RuntimeError, match="install the Debian package postgresql"):
        PostgresServer()
