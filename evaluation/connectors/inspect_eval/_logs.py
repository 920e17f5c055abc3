"""Reading and writing inspect_ai log files, every failure as one :class:`ConnectorError`.

``inspect_ai`` is imported here, inside the functions, never when the package is imported.
Its log functions run their own event loop (``run_coroutine``); called from a thread that
runs one already (a bot's), they would patch that loop with ``nest_asyncio``, so there they
run on a worker thread instead. A log is written whole to a temporary file in its directory,
flushed to disk, then renamed over the target: a reader sees the old log or the new one,
never half of one. Writers of one directory take turns (an exclusive ``flock`` on it, where
the platform has one), so two pushes at once cannot lose each other's labels.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from ..base import ConnectorError

T = TypeVar("T")

SUFFIXES = (".eval", ".json")
"""The log formats inspect_ai writes: the ``.eval`` zip (its default) and ``.json``."""

LIGHT = {"events", "messages", "store"}
"""Sample fields a source does not need (the transcript): left unread in ``.eval`` logs."""

INSTALL = "pip install 'hilbot[inspect]' (or pip install inspect_ai) in hilbot's environment"
"""How to install the SDK."""

TRANSIENT = {errno.ENOSPC, errno.EAGAIN, errno.EBUSY, errno.EINTR, errno.ETIMEDOUT}
"""Write failures that may pass by themselves (a full disk, a busy file)."""


def sdk() -> Any:
    """The ``inspect_ai.log`` module, or the error saying how to install it."""
    try:
        import inspect_ai.log as log
    except ImportError:
        raise ConnectorError("inspect_ai is not installed", fix=INSTALL) from None
    return log


def off_loop(work: Callable[[], T]) -> T:
    """``work()``, on a worker thread when this thread runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return work()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hilbot-inspect") as pool:
        return pool.submit(work).result()


def checked_path(given: str | Path, what: str = "log") -> Path:
    """An existing log file's absolute path, or the error that says what is wrong with it."""
    path = Path(os.path.expanduser(str(given))).absolute()
    if path.suffix.lower() not in SUFFIXES:
        raise ConnectorError(
            f"not an inspect_ai log (a {what} ends in .eval or .json)",
            where=str(path),
            fix="give the .eval (or .json) file inspect_ai "
            "wrote, e.g. logs/<time>_<task>_<id>.eval",
        )
    if path.is_dir():
        raise ConnectorError(
            "is a directory, not a log file",
            where=str(path),
            fix="give one .eval (or .json) log file of that directory",
        )
    if not path.exists():
        raise ConnectorError(
            "no such inspect_ai log",
            where=str(path),
            fix="check the path; a log moved or deleted since the pull must be "
            "restored there, or the run pulled again from where it is now",
        )
    return path


def reading_error(path: Path, exc: Exception) -> ConnectorError:
    """A failure to read ``path`` as one line."""
    if isinstance(exc, ConnectorError):
        return exc
    if isinstance(exc, FileNotFoundError):
        return ConnectorError(
            "no such inspect_ai log",
            where=str(path),
            fix="restore the log there, or pull the run again from its new place",
        )
    if isinstance(exc, IndexError):
        return ConnectorError(
            "a sample the log lists is not in it",
            where=str(path),
            fix="pull a finished log written with its samples (not one from "
            "--no-log-samples or a run still going)",
        )
    if isinstance(exc, PermissionError):
        return ConnectorError(
            "permission denied reading the log",
            where=str(path),
            fix="give the user running hilbot read access to it",
        )
    return ConnectorError(
        f"cannot read it as an inspect_ai log ({_brief(exc)})",
        where=str(path),
        fix="check it is a complete log inspect_ai wrote (`inspect log dump "
        "FILE` reads one); a truncated or corrupt file cannot be used",
    )


def writing_error(path: Path, exc: Exception) -> ConnectorError:
    """A failure to write ``path`` as one line (a full disk or a busy file may pass: transient)."""
    if isinstance(exc, ConnectorError):
        return exc
    transient = isinstance(exc, OSError) and exc.errno in TRANSIENT
    return ConnectorError(
        f"cannot write the log ({_brief(exc)})",
        where=str(path),
        transient=transient,
        fix="check the directory exists, is writable and has free space",
    )


def _brief(exc: Exception) -> str:
    """An exception as a short clause: its type and the first line of its message."""
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else ""
    text = text if len(text) <= 160 else text[:157] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def read_header(path: Path) -> Any:
    """The log without its samples (task, model, epochs, sample ids, results)."""
    log = sdk()
    try:
        return off_loop(lambda: log.read_eval_log(str(path), header_only=True))
    except Exception as exc:  # noqa: BLE001 - any failure of the SDK is one line naming the file
        raise reading_error(path, exc) from None


def read_samples(path: Path, header: Any, wanted: list[tuple[Any, int]] | None) -> Iterator[Any]:
    """The samples of ``wanted`` (id, epoch) pairs, read a chunk at a time from an ``.eval`` log;
    every sample of the log (in dataset order) when ``wanted`` is None, the log is ``.json``, or
    a sample it lists is missing (then those not yet read)."""
    log = sdk()
    seen: set[tuple[str, int]] = set()
    if wanted is not None and path.suffix.lower() == ".eval":
        try:
            for start in range(0, len(wanted), 100):
                chunk = wanted[start : start + 100]
                for sample in off_loop(
                    lambda: log.read_eval_log_samples_by_id(
                        str(path), chunk, exclude_fields=LIGHT, resolve_attachments="core"
                    )
                ):
                    seen.add((str(sample.id), sample.epoch))
                    yield sample
            return
        except IndexError:
            pass  # a listed sample is not there: read the samples there are
        except Exception as exc:  # noqa: BLE001 - any failure of the SDK is one line naming the file
            raise reading_error(path, exc) from None
    try:
        whole = off_loop(
            lambda: log.read_eval_log(str(path), exclude_fields=LIGHT, resolve_attachments="core")
        )
    except Exception as exc:  # noqa: BLE001
        raise reading_error(path, exc) from None
    for sample in sorted(whole.samples or [], key=_dataset_order(header)):
        if (str(sample.id), sample.epoch) not in seen:
            yield sample


def _dataset_order(header: Any) -> Callable[[Any], tuple[int, int]]:
    """A sample's place in the dataset (its id's position, then its epoch)."""
    ids = getattr(getattr(getattr(header, "eval", None), "dataset", None), "sample_ids", None) or []
    position = {str(sample_id): n for n, sample_id in enumerate(ids)}
    last = len(position)
    return lambda sample: (position.get(str(sample.id), last), int(getattr(sample, "epoch", 1)))


def read_whole(path: Path) -> Any:
    """The whole log, as it is stored (what a sink edits and writes back)."""
    log = sdk()
    try:
        return off_loop(lambda: log.read_eval_log(str(path)))
    except Exception as exc:  # noqa: BLE001
        raise reading_error(path, exc) from None


def read_scores(path: Path) -> Any:
    """The log's samples without their transcripts (what a confirmation reads back)."""
    log = sdk()
    try:
        return off_loop(lambda: log.read_eval_log(str(path), exclude_fields=LIGHT))
    except Exception as exc:  # noqa: BLE001
        raise reading_error(path, exc) from None


def write_atomic(log_obj: Any, path: Path) -> None:
    """Write the log to ``path``: whole to a temporary file beside it, synced, renamed over it."""
    log = sdk()
    fmt = "json" if path.suffix.lower() == ".json" else "eval"
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")  # no log's name: unlisted
    try:
        off_loop(lambda: log.write_eval_log(log_obj, str(temp), format=fmt))
        _sync(temp)
        os.replace(temp, path)
        _sync_dir(path.parent)
    except Exception as exc:  # noqa: BLE001
        raise writing_error(path, exc) from None
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_dir(directory: Path) -> None:
    """Make the rename durable (where a directory can be synced)."""
    with contextlib.suppress(OSError):
        _sync(directory)


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` (no-op where ``fcntl`` is missing)."""
    try:
        import fcntl
    except ImportError:  # Windows: one writer at a time is up to the user
        yield
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError as exc:
        raise writing_error(directory, exc) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
