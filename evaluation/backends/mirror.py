"""The data directory as a read copy of a shared backend.

Every line the backend holds is appended, in the backend's order, to the file it would be in
with the JSONL backend (``ratings.jsonl``, ``runs/<run-id>.jsonl``), so the readers read files
whichever backend wrote them. The copy is derived and disposable: where it stopped is kept in
``cache/store/mirror.json`` (the backend's cursor and each file's size); a file longer than that
(a crash between the two) is cut back to it, a shorter one (the copy damaged or deleted) makes
the whole copy be pulled again. Only the store writes it, under ``cache/store/mirror.lock``.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path
from typing import Any

from ..errors import HilbotError
from .base import RATINGS, RUN_PREFIX, Backend, Line, StoreError

STATE = Path("cache") / "store" / "mirror.json"
"""Where the copy stopped, under the data directory."""


class Mirror:
    """A data directory kept as a read copy of one backend."""

    def __init__(self, root: Path, backend: Backend):
        self.root = root
        self.backend = backend
        self._lock = threading.Lock()

    def file_of(self, stream: str) -> Path | None:
        """The file a stream is copied to (None: a stream this version does not know)."""
        if stream == RATINGS:
            return self.root / "ratings.jsonl"
        from ..store import validate_run_id  # the store imports this module

        if not stream.startswith(RUN_PREFIX):
            return None
        try:
            return self.root / "runs" / f"{validate_run_id(stream[len(RUN_PREFIX) :])}.jsonl"
        except HilbotError:
            return None

    def sync(self) -> list[Line]:
        """Pull what the backend holds beyond the copy into its files; returns the new lines."""
        if not (self.root / STATE).exists():  # refused before the lock file is made
            self._refuse_logs_of_another_store()
        with self._lock, _flocked(self.root / STATE.with_suffix(".lock")):
            state = self._state()
            lines, cursor = self.backend.pull(state["cursor"])
            if not lines and cursor == state["cursor"]:
                return []
            self._write(lines, state["sizes"])
            state["cursor"] = cursor
            _save(self.root / STATE, state)
            return lines

    def _state(self) -> dict[str, Any]:
        path = self.root / STATE
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self._refuse_logs_of_another_store()
            return self._fresh()
        except (OSError, ValueError):  # damaged: how far the copy went is unknown, so all again
            return self._rebuilt()
        if not isinstance(state, dict) or state.get("identity") != self.backend.identity:
            raise StoreError(
                f"{self.root} is the read copy of another store "
                f"({state.get('identity') if isinstance(state, dict) else '?'})",
                fix="give this store a data directory of its own (--data-dir or HILBOT_DATA_DIR)",
            )
        sizes: dict[str, int] = state.get("sizes", {})
        base = os.fspath(self.root) + os.sep  # plain strings: this runs before every pull
        for name, size in sizes.items():
            actual = _size(base + name)
            if actual < size:
                return self._rebuilt()
            if actual > size:  # written, but the cursor was not saved after it
                os.truncate(base + name, size)
        for name in self._log_names():  # a file this copy's state never counted: begun, not saved
            if name not in sizes:
                os.unlink(base + name)
        return state

    def _fresh(self) -> dict[str, Any]:
        return {"identity": self.backend.identity, "cursor": "", "sizes": {}}

    def _rebuilt(self) -> dict[str, Any]:
        for path in self._logs():  # every file of the copy (a file it had just begun too)
            path.unlink(missing_ok=True)
        return self._fresh()

    def _logs(self) -> list[Path]:
        return [self.root / name for name in self._log_names()]

    def _log_names(self) -> list[str]:
        """The copy's log files there are, relative to the data directory."""
        names = ["ratings.jsonl"] if os.path.lexists(self.root / "ratings.jsonl") else []
        try:
            with os.scandir(self.root / "runs") as entries:
                names += [f"runs/{e.name}" for e in entries if e.name.endswith(".jsonl")]
        except (FileNotFoundError, NotADirectoryError):
            pass
        return names

    def _refuse_logs_of_another_store(self) -> None:
        if any(_size(path) for path in self._logs()):
            raise StoreError(
                f"{self.root} holds JSONL logs, and a database store keeps its read copy in a "
                "data directory of its own",
                fix=f"load them into the database with `hilbot store import {self.root}`, then "
                "use an empty data directory (--data-dir or HILBOT_DATA_DIR)",
            )

    def _write(self, lines: list[Line], sizes: dict[str, int]) -> None:
        by_file: dict[Path, list[bytes]] = {}
        for line in lines:
            path = self.file_of(line.stream)
            if path is not None:
                by_file.setdefault(path, []).append(line.data)
        for path, chunk in by_file.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            name = path.relative_to(self.root).as_posix()
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(path, flags, 0o644)
            try:
                data = b"".join(chunk)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            sizes[name] = sizes.get(name, 0) + len(data)


def _size(path: Path | str) -> int:
    try:
        return os.lstat(path).st_size
    except FileNotFoundError:
        return 0


def _save(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_suffix(".json.partial")
    aside.write_text(json.dumps(state, sort_keys=True), encoding="utf-8")
    os.replace(aside, path)


class _flocked:
    """An exclusive ``flock`` on a lock file, for one sync."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = -1

    def __enter__(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        self.fd = os.open(self.path, flags, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)
