"""``hilbot store import|export`` and every command on a database store, as a user runs them.

- Import, a second import (nothing new), export: what they print and what they write; an export
  never writes over a file.
- A store that cannot be used (a wrong password, a closed port, a malformed URL, an unknown
  scheme, a password in hilbot.toml) is exit 2 and one line on stderr that says where and what to
  do, and never the password, as written or URL-encoded; in-process and in a subprocess.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, quote_plus, urlsplit

import pytest

from bot.demo import PANEL_RUN, RAG_RUN, SEARCH_RUN, build_demo
from evaluation import Store
from tests.pgserver import free_port

WRONG = "Quokka/Zebra@wrong:pa ss%word-4711"
"""A wrong password that no message holds by chance, with characters a URL encodes."""


def logs(root: Path) -> dict[str, bytes]:
    """Every log of a data directory (ratings.jsonl, runs/*.jsonl) and its bytes."""
    found = sorted([root / "ratings.jsonl", *(root / "runs").glob("*.jsonl")])
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in found if p.exists()}


def one_error_line(outcome) -> str:
    """The one line a failed command printed on stderr (exit 2, nothing else)."""
    assert outcome.returncode == 2, (outcome.stdout, outcome.stderr)
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), outcome.stderr
    assert "this is a bug in hilbot" not in lines[0]
    return lines[0]


def no_password(outcome, password: str = WRONG) -> None:
    printed = outcome.stdout + outcome.stderr
    for form in {password, quote(password, safe=""), quote(password), quote_plus(password)}:
        assert form not in printed


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A JSONL data directory holding the demo (three runs, the panel's ratings)."""
    store = Store(tmp_path / "source")
    build_demo(store, panel=True)
    return store.root


@pytest.fixture
def db_env(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a command on the test's database (its password in PGPASSWORD)."""
    monkeypatch.delenv("HILBOT_STORE_PASSWORD", raising=False)
    return {"HILBOT_STORE_URL": pg_url}


# ---------------------------------------------------------------------------- moving


def test_import_a_second_import_and_export(run_cli, source, db_env, tmp_path):
    files = logs(source)
    total = sum(data.count(b"\n") for data in files.values())

    first = run_cli("store", "import", str(source), env=db_env)
    assert first.returncode == 0, first.stderr
    assert first.stdout == (
        f"imported {total:,} line(s) of 3 run(s) and the ratings log; 0 already there\n"
    )
    again = run_cli("store", "import", str(source), env=db_env)
    assert again.returncode == 0, again.stderr
    assert again.stdout == (
        f"imported 0 line(s) of 3 run(s) and the ratings log; {total:,} already there\n"
    )

    listed = run_cli("--data-dir", str(tmp_path / "replica"), "review", "--list", env=db_env)
    assert listed.returncode == 0, listed.stderr
    for run_id in (SEARCH_RUN, RAG_RUN, PANEL_RUN):
        assert run_id in listed.stdout

    out = tmp_path / "backup"
    exported = run_cli("store", "export", str(out), env=db_env)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.startswith(f"exported {total:,} line(s) of 3 run(s)")
    assert logs(out) == files

    (out / "ratings.jsonl").write_bytes(b"changed by hand\n")
    refused = run_cli("store", "export", str(out), env=db_env)
    line = one_error_line(refused)
    assert "already exists" in line and "new, empty directory" in line
    assert (out / "ratings.jsonl").read_bytes() == b"changed by hand\n"
    assert {k: v for k, v in logs(out).items() if k != "ratings.jsonl"} == {
        k: v for k, v in files.items() if k != "ratings.jsonl"
    }


@pytest.mark.parametrize("verb", ["import", "export"])
def test_moving_without_a_database_says_how_to_name_one(run_cli, source, tmp_path, verb):
    outcome = run_cli("store", verb, str(source if verb == "import" else tmp_path / "out"))
    line = one_error_line(outcome)
    assert f"hilbot store {verb} needs a database store" in line and "HILBOT_STORE_URL" in line
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------- errors


def _cases(pg_url: str) -> dict[str, tuple[str, list[str]]]:
    """Per case: the store URL and what its one line must say."""
    parts = urlsplit(pg_url)
    db = parts.path.lstrip("/")
    port = free_port()
    with_password = pg_url.replace("hilbot@", f"hilbot:{quote(WRONG, safe='')}@")
    return {
        "wrong password": (
            pg_url,
            [
                f"127.0.0.1:{parts.port}/{db}",
                "password authentication failed",
                "HILBOT_STORE_PASSWORD",
            ],
        ),
        "wrong password in the URL": (
            with_password,
            [f"127.0.0.1:{parts.port}/{db}", "password authentication failed"],
        ),
        "closed port": (
            f"postgresql://hilbot@127.0.0.1:{port}/{db}",
            [f"127.0.0.1:{port}/{db}", "check that PostgreSQL is running"],
        ),
        "malformed URL": (
            f"postgresql://hilbot@127.0.0.1:port/{db}",
            ["malformed", "postgresql://user@host:5432/db"],
        ),
        "unknown scheme": (f"mysql://hilbot@127.0.0.1/{db}", ["no store backend", "'mysql'"]),
    }


CASES = [
    "wrong password",
    "wrong password in the URL",
    "closed port",
    "malformed URL",
    "unknown scheme",
]


@pytest.mark.parametrize("command", [("review", "--list"), ("store", "export", "out")])
@pytest.mark.parametrize("case", CASES)
def test_a_store_that_cannot_be_used_is_one_line_without_the_password(
    run_cli, pg_url, monkeypatch, tmp_path, case, command
):
    monkeypatch.delenv("PGPASSWORD")
    url, expected = _cases(pg_url)[case]
    outcome = run_cli(*command, env={"HILBOT_STORE_URL": url, "HILBOT_STORE_PASSWORD": WRONG})
    line = one_error_line(outcome)
    for part in expected:
        assert part in line
    no_password(outcome)
    assert not (tmp_path / "out").exists()


def test_a_wrong_password_in_a_subprocess_is_one_line_without_it(run_process, pg_url, monkeypatch):
    monkeypatch.delenv("PGPASSWORD")
    outcome = run_process(
        "review", "--list", env={"HILBOT_STORE_URL": pg_url, "HILBOT_STORE_PASSWORD": WRONG}
    )
    line = one_error_line(outcome)
    db = urlsplit(pg_url).path.lstrip("/")
    assert f"/{db}" in line and "password authentication failed" in line
    no_password(outcome)


def test_a_password_in_hilbot_toml_is_refused_with_the_fix(run_cli, pg_url, tmp_path):
    secret = "Toml-Secret-Wombat-8822"
    url = pg_url.replace("hilbot@", f"hilbot:{secret}@")
    (tmp_path / "hilbot.toml").write_text(f'[store]\nurl = "{url}"\n', encoding="utf-8")
    for command in (("review", "--list"), ("store", "import", str(tmp_path))):
        outcome = run_cli(*command, env={"HILBOT_STORE_URL": None})
        line = one_error_line(outcome)
        assert "password" in line and "HILBOT_STORE_PASSWORD" in line
        no_password(outcome, secret)
    assert not (tmp_path / "results" / "cache").exists()  # no store was opened
