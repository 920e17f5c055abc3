"""A throwaway PostgreSQL server for the tests, started from the machine's binaries.

The server listens on 127.0.0.1 at a free port, with the superuser ``hilbot`` and a random
password (scram-sha-256 over TCP, trust on its own unix socket). fsync stays on. PostgreSQL
refuses to run as root, so under root (as in CI) its commands run as the system user
``postgres``.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

__all__ = ["PostgresServer", "find_bindir"]

SUPERUSER = "hilbot"
SYSTEM_USER = "postgres"
"""Who runs the server when the tests run as root."""


def find_bindir() -> Path:
    """The directory holding ``initdb`` and ``pg_ctl``: ``pg_config --bindir`` when it has them,
    else the newest ``/usr/lib/postgresql/*/bin``."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip():
            candidates.append(Path(done.stdout.strip()))

    def version(path: str) -> tuple[int, ...]:
        name = Path(path).parent.parent.name  # /usr/lib/postgresql/<version>/bin/initdb
        return tuple(int(part) for part in name.split(".") if part.isdigit())

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version, reverse=True)
    candidates += [Path(path).parent for path in found]
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    raise RuntimeError(
        "no PostgreSQL server binaries (initdb): install the Debian package postgresql"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def accepting(port: int) -> bool:
    """Whether something listens on 127.0.0.1:``port`` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


class PostgresServer:
    """One PostgreSQL cluster in a temporary directory: ``start()``, ``url()``, ``cleanup()``."""

    def __init__(self, bindir: Path | None = None) -> None:
        self.bindir = bindir or find_bindir()
        self.password = secrets.token_urlsafe(24)
        self.port = 0
        self.dir: Path | None = None
        self._as_postgres = os.geteuid() == 0

    # paths -------------------------------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        return self._base / "data"

    @property
    def log_file(self) -> Path:
        return self._base / "log"

    @property
    def _base(self) -> Path:
        if self.dir is None:
            raise RuntimeError("the PostgreSQL server was not started")
        return self.dir

    # lifecycle ---------------------------------------------------------------------------------

    def start(self) -> PostgresServer:
        """Create the cluster on first use, then start the server; returns self."""
        first = self.dir is None
        if first:
            self._init()
        args = ["-D", str(self.data_dir), "-l", str(self.log_file), "-w", "-t", "60", "start"]
        for attempt in range(3):
            try:
                self._run("pg_ctl", *args)
                return self
            except RuntimeError as error:
                # another process took the free port between the probe and the bind
                if not first or attempt == 2 or "could not bind" not in str(error):
                    raise
                self._set_port(free_port())
        return self

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (mode ``smart``, ``fast`` or ``immediate``) if it is running."""
        if self.running:
            self._run("pg_ctl", "-D", str(self.data_dir), "-m", mode, "-w", "-t", "60", "stop")

    def kill(self) -> None:
        """Stop at once, without a checkpoint: the next start recovers from the WAL."""
        self.stop("immediate")

    def restart(self) -> None:
        """Stop (fast) and start again, at the same port."""
        self.stop()
        self.start()

    @property
    def running(self) -> bool:
        if self.dir is None or not self.data_dir.is_dir():
            return False
        done = self._command("pg_ctl", "-D", str(self.data_dir), "status")
        return done.returncode == 0

    def cleanup(self) -> None:
        """Stop the server and remove its directory (again: nothing)."""
        atexit.unregister(self.cleanup)
        if self.dir is None:
            return
        try:
            self.stop("immediate")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    # clients -----------------------------------------------------------------------------------

    def url(self, database: str = "postgres", *, password: bool = True) -> str:
        """``postgresql://hilbot[:password]@127.0.0.1:PORT/DATABASE``."""
        secret = f":{quote(self.password, safe='')}" if password else ""
        return f"postgresql://{SUPERUSER}{secret}@127.0.0.1:{self.port}/{quote(database)}"

    def create_database(self, name: str) -> str:
        """``CREATE DATABASE name``; returns its URL without the password."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name, password=False)

    def drop_database(self, name: str) -> None:
        """``DROP DATABASE IF EXISTS name WITH (FORCE)``: its open connections are ended."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url(), autocommit=True) as conn:
            query = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            conn.execute(query.format(sql.Identifier(name)))

    # internals ---------------------------------------------------------------------------------

    def _init(self) -> None:
        base = Path(tempfile.mkdtemp(prefix="hilbot-pg-"))
        self.dir = base
        atexit.register(self.cleanup)
        pwfile = base / "pwfile"
        pwfile.write_text(self.password + "\n")
        pwfile.chmod(0o600)
        if self._as_postgres:
            try:
                user = pwd.getpwnam(SYSTEM_USER)
            except KeyError:
                raise RuntimeError(
                    f"running as root, the server needs the system user {SYSTEM_USER}: "
                    "install the Debian package postgresql"
                ) from None
            for path in (base, pwfile):
                os.chown(path, user.pw_uid, user.pw_gid)
        self._run(
            "initdb",
            "-D",
            str(self.data_dir),
            "-U",
            SUPERUSER,
            f"--pwfile={pwfile}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-instructions",
        )
        pwfile.unlink()
        settings = {
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{base}'",
            "max_connections": "300",
            "shared_buffers": "32MB",
        }
        with (self.data_dir / "postgresql.conf").open("a") as conf:
            conf.write("\n# tests/pgserver.py\n")
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())
        self._set_port(free_port())

    def _set_port(self, port: int) -> None:
        """Append ``port = PORT`` to postgresql.conf (the last setting of a name wins)."""
        with (self.data_dir / "postgresql.conf").open("a") as conf:
            conf.write(f"port = {port}\n")
        self.port = port

    def _command(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        argv = [str(self.bindir / program), *args]
        if self._as_postgres:
            argv = ["runuser", "-u", SYSTEM_USER, "--", *argv]
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.dir,
            stdin=subprocess.DEVNULL,
        )

    def _run(self, program: str, *args: str) -> None:
        done = self._command(program, *args)
        if done.returncode != 0:
            output = (done.stderr or done.stdout).strip().splitlines()[-5:]
            command = " ".join([program, *args])
            raise RuntimeError(
                f"{command} failed ({done.returncode}): {' | '.join(output)}{self._log_tail()}"
            )

    def _log_tail(self, lines: int = 15) -> str:
        try:
            tail = self.log_file.read_text(errors="replace").splitlines()[-lines:]
        except (OSError, RuntimeError):
            return ""
        return "\nserver log:\n" + "\n".join(tail)
