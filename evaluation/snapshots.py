"""Snapshot files read, written and deleted inside their tree, and never through a symbolic link.

``hilbot triage`` writes into two trees: an accepted change's actual file over its expected one
(or the expected file deleted, for an accepted removal), and an ``.ai.json`` record beside each
actual file. Every such file is named by a :class:`Tree` (a root the triage resolved: absolute,
normalised, no links) and a relative POSIX path, and reached one component at a time from ``/``:
each directory is opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to the one before it, the file
itself with ``O_NOFOLLOW``. A link anywhere on the way, in the tree or above its root, is refused
rather than followed, so a directory swapped for a link after the triage leads nowhere. The walk
also refuses to pass through hilbot's data directory (its logs, runs, cache and reports), and to
enter the other tree when that lies inside this one.

A relative path that is not text, is empty or absolute, or has an empty, ``.``, ``..`` or hidden
part is refused before anything is opened (:func:`parts`); the triage never makes one.

A file is written whole: a hidden temporary name in its directory created exclusively, written,
fsynced and given its mode, renamed over the target and the directory fsynced. :func:`stage` and
:func:`commit` split this in two, so a caller can write every file aside before it records
anything, and move them into place after. Failures are :class:`SnapshotError` whose fix fits the
cause: free disk space, raise ``ulimit -f``, check the permissions of the directory.

The ``.ai.json`` records carry :data:`RECORD_MARK`; :func:`is_record` tells one (or a record of an
older hilbot, which had no mark) from a user's own file, which is never overwritten.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Sequence

from .errors import HilbotError
from .log import os_reason

Identity = tuple[int, int]
"""A directory's ``(st_dev, st_ino)``."""

RECORD_MARK = {"written_by": "hilbot triage"}
"""The field every ``.ai.json`` record of a triage holds, so it is told from a user's file."""
RECORD_SUFFIX = ".ai.json"
"""Appended to a snapshot's whole file name to name its record (``x.md`` → ``x.md.ai.json``)."""
MAX_RECORD_BYTES = 1 << 20
"""A larger ``.ai.json`` file is never a record of hilbot's."""
_OLD_RECORD_KEYS = {"path", "status", "category", "category_name", "decision", "rule"}
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = (
    os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class SnapshotError(HilbotError):
    """A snapshot file cannot be read, written or deleted where the triage said it is."""


class WriteFailed(SnapshotError):
    """Writing failed (a full disk, ``ulimit -f``, an unwritable directory), not this file alone."""


@dataclass(frozen=True)
class Tree:
    """A snapshot tree: its root as the triage resolved it, and the directories no walk enters."""

    root: str
    """Absolute, normalised, without links (``os.path.realpath`` of what the user gave)."""
    guarded: Mapping[Identity, str] = field(default_factory=dict)
    """Directories never passed through, each with what it is (hilbot's data directory)."""
    inner: Mapping[Identity, str] = field(default_factory=dict)
    """Directories never entered below the root: the other tree, when it lies inside this one (above
    the root it may be this tree's parent, as ``books`` is ``books/.out``'s)."""

    def path(self, rel: str) -> str:
        """The file's path as text, for messages."""
        return os.path.join(self.root, rel) if rel else self.root


def identity(path: str | os.PathLike[str]) -> Identity | None:
    """A directory's identity (links followed), or None when it is not there."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def parts(rel: object) -> tuple[str, ...]:
    """The parts of a relative POSIX path inside a tree; else a ``ValueError`` saying why."""
    if not isinstance(rel, str):
        raise ValueError(f"the path is {type(rel).__name__}, not text")
    if not rel or "\0" in rel:
        raise ValueError("the path is empty" if not rel else "the path holds a NUL byte")
    if rel.startswith("/"):
        raise ValueError(f"the path {rel!r} is absolute")
    names = tuple(rel.split("/"))
    for name in names:
        if name in ("", ".", ".."):
            raise ValueError(
                f"the path {rel!r} has a {name!r} part"
                if name
                else f"the path {rel!r} has an empty part"
            )
        if name.startswith("."):
            raise ValueError(
                f"the path {rel!r} has a hidden part ({name!r}), which a triage never compares"
            )
    return names


def check_root(root: object) -> str:
    """A recorded tree root: absolute, normalised text; else a ``ValueError`` saying why."""
    if not isinstance(root, str):
        raise ValueError(f"the tree root is {type(root).__name__}, not text")
    if (
        "\0" in root
        or not os.path.isabs(root)
        or os.path.normpath(root) != root
        or root.startswith("//")
    ):
        raise ValueError(f"the tree root {root!r} is not an absolute, normalised path")
    return root


# --------------------------------------------------------------------------- the walk


def _refuse(what: str, where: str, fix: str) -> SnapshotError:
    return SnapshotError(what, where=where, fix=fix)


def _kind_at(dir_fd: int, name: str) -> str:
    """What ``name`` in the directory is, in words (for a refusal)."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return "not a directory"
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link, and hilbot never writes through one"
    return "not a directory" if not stat.S_ISDIR(info.st_mode) else "a directory it cannot open"


def _step(dir_fd: int, name: str, shown: str, create: bool) -> int:
    """The directory ``name`` under ``dir_fd``, no link followed (made first if ``create``)."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
    try:
        os.mkdir(name, 0o777, dir_fd=dir_fd)
    except FileExistsError:
        pass
    except OSError as exc:
        raise write_error(exc, shown, os.path.dirname(shown)) from None
    return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def _open_step(dir_fd: int, name: str, shown: str, create: bool) -> int:
    try:
        return _step(dir_fd, name, shown, create)
    except (NotADirectoryError, IsADirectoryError) as exc:
        raise _refuse(f"it is {_kind_at(dir_fd, name)}", shown, _LINK_FIX) from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(
                "it is a symbolic link, and hilbot never writes through one", shown, _LINK_FIX
            ) from None
        if isinstance(exc, FileNotFoundError):
            raise
        raise _refuse(
            f"cannot open the directory ({os_reason(exc)})",
            shown,
            f"check the permissions of {shown}",
        ) from None


_LINK_FIX = "replace it with the directory itself, then triage the trees again"
_GUARD_FIX = (
    "keep hilbot's data directory (--data-dir) and the other tree out of the trees, "
    "then triage again"
)


@contextmanager
def directory(tree: Tree, names: Sequence[str], *, create: bool = False) -> Iterator[int]:
    """A descriptor of the directory ``names`` under the tree's root, reached without a link.

    With ``create`` missing directories inside the tree are made, one at a time, with no link
    followed. A directory that does not exist is ``FileNotFoundError``; a link, a file on the way,
    or a guarded directory is a :class:`SnapshotError`.
    """
    shown = "/"
    fd = os.open("/", _DIR_FLAGS)
    try:
        above = [n for n in tree.root.split("/") if n]
        for n, name in enumerate([*above, *names]):
            shown = os.path.join(shown, name)
            parent, fd = fd, -1
            try:
                fd = _open_step(parent, name, shown, create and n >= len(above))
            finally:
                os.close(parent)
            info = os.fstat(fd)
            fences = tree.guarded if n < len(above) else {**tree.guarded, **tree.inner}
            guarded = fences.get((info.st_dev, info.st_ino))
            if guarded:
                raise _refuse(
                    f"it is {guarded}, which no snapshot write or delete may enter",
                    shown,
                    _GUARD_FIX,
                )
        yield fd
    finally:
        if fd >= 0:
            os.close(fd)


# --------------------------------------------------------------------------- reading


def read_at(dir_fd: int, name: str, shown: str, limit: int) -> tuple[bytes, os.stat_result] | None:
    """A regular file's bytes and status, or None when absent.

    A link, anything but a regular file, or more than ``limit`` bytes is a :class:`SnapshotError`.
    """
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(
                "it is a symbolic link, and hilbot never writes through one", shown, _LINK_FIX
            ) from None
        raise _refuse(
            f"cannot read it ({os_reason(exc)})", shown, f"check the permissions of {shown}"
        ) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(
                "it is not a regular file", shown, "move it away, then triage the trees again"
            )
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise _refuse(f"it is larger than {limit / 2**20:g} MiB", shown, "triage the trees again")
    return data, info


def read_file(
    tree: Tree, rel: str, limit: int, *, links_inside: bool = False
) -> tuple[bytes, os.stat_result] | None:
    """The file ``rel`` of the tree (see :func:`read_at`); None when it or its directory is absent.

    With ``links_inside`` a file that is a link to a regular file elsewhere in the same tree is read
    there (the triage compares such a file); a link leading out of the tree is refused.
    """
    names = parts(rel)
    try:
        with directory(tree, names[:-1]) as fd:
            return read_at(fd, names[-1], tree.path(rel), limit)
    except FileNotFoundError:
        return None
    except SnapshotError:
        inner = _link_inside(tree, rel) if links_inside else None
        if inner is None:
            raise
    return read_file(tree, inner, limit)


def _link_inside(tree: Tree, rel: str) -> str | None:
    """Where the link ``rel`` leads, relative to the tree, when it is a link to a path inside it."""
    shown = tree.path(rel)
    if not os.path.islink(shown):
        return None
    target = os.path.realpath(shown)
    if os.path.commonpath([tree.root, target]) != tree.root:
        return None
    inner = os.path.relpath(target, tree.root)
    try:
        parts(inner)
    except ValueError:
        return None
    return inner


# --------------------------------------------------------------------------- writing


def write_error(exc: BaseException, where: str, folder: str) -> WriteFailed:
    """An OS error while writing ``where`` (in ``folder``), with the fix that fits its cause."""
    code = getattr(exc, "errno", None)
    fixes = {
        errno.ENOSPC: f"free disk space where {folder} is",
        errno.EDQUOT: f"free space in your disk quota where {folder} is",
        errno.EFBIG: "raise the file size limit (ulimit -f unlimited)",
        errno.EROFS: f"make the file system of {folder} writable",
    }
    fix = fixes.get(code or 0, f"check the permissions of {folder}")
    return WriteFailed(f"cannot write ({os_reason(exc)})", where=where, fix=fix)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@dataclass
class Staged:
    """A file written aside in its directory, waiting to be renamed over its target."""

    tree: Tree
    rel: str
    """The target, relative to the tree."""
    temp: str
    """The hidden name written aside, in the target's directory."""


def _temp_name() -> str:
    return f".hilbot-{secrets.token_hex(8)}.tmp"


def write_aside(dir_fd: int, name: str, data: bytes, mode: int | None, shown: str) -> str:
    """Write ``data`` to a new hidden name beside ``name`` and fsync it; its name.

    ``mode`` sets the permission bits; None leaves a new file's under the umask (0666 & ~umask).
    """
    temp = _temp_name()
    folder = os.path.dirname(shown)
    try:
        fd = os.open(temp, _NEW_FLAGS, 0o600 if mode is not None else 0o666, dir_fd=dir_fd)
    except OSError as exc:
        raise write_error(exc, shown, folder) from None
    try:
        try:
            _write_all(fd, data)
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        _unlink_quietly(dir_fd, temp)
        raise write_error(exc, shown, folder) from None
    return temp


def move_into_place(dir_fd: int, temp: str, name: str, shown: str) -> None:
    """Rename the file written aside over ``name`` and make the directory's entries durable."""
    try:
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        os.fsync(dir_fd)
    except OSError as exc:
        _unlink_quietly(dir_fd, temp)
        raise write_error(exc, shown, os.path.dirname(shown)) from None


def remove_at(dir_fd: int, name: str, shown: str) -> None:
    """Delete ``name`` from the directory (a link itself, never what it points at)."""
    try:
        os.unlink(name, dir_fd=dir_fd)
        os.fsync(dir_fd)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise write_error(exc, shown, os.path.dirname(shown)) from None


def _unlink_quietly(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


# --------------------------------------------------------------------------- the .ai.json records


def record_name(rel: str) -> str:
    """The record of the snapshot ``rel``: its whole name and :data:`RECORD_SUFFIX`."""
    return rel + RECORD_SUFFIX


def is_record(data: bytes) -> bool:
    """Whether ``data`` is an ``.ai.json`` record a triage wrote.

    It is one when it holds :data:`RECORD_MARK`, or every field an older hilbot's records had.
    """
    try:
        value = json.loads(data) if len(data) <= MAX_RECORD_BYTES else None
    except (ValueError, RecursionError):
        return False
    if not isinstance(value, dict):
        return False
    return (
        all(value.get(k) == v for k, v in RECORD_MARK.items()) or _OLD_RECORD_KEYS <= value.keys()
    )


def stage(tree: Tree, rel: str, data: bytes) -> Staged | str:
    """Write the record ``rel`` aside in its directory (nothing replaced yet), or say why not.

    Not written, with the reason returned: a file that is not a record of hilbot's (a user's, a
    link, a directory) has its name, the name is too long, the directory is gone or is now a link.
    A write that fails is :class:`WriteFailed`.
    """
    names = parts(rel)
    shown = tree.path(rel)
    if len(os.fsencode(names[-1])) > 255:
        return f"{shown}: no record written (the name would be too long)"
    try:
        with directory(tree, names[:-1]) as fd:
            why = _not_ours(fd, names[-1], shown)
            return why or Staged(tree, rel, write_aside(fd, names[-1], data, None, shown))
    except FileNotFoundError:
        return f"{shown}: no record written (its directory is gone)"
    except WriteFailed:
        raise
    except SnapshotError as exc:
        return f"{shown}: no record written ({exc.one_line()})"


def _not_ours(dir_fd: int, name: str, shown: str) -> str | None:
    """Why the record's name cannot be replaced, or None (absent, or a record hilbot wrote)."""
    try:
        found = read_at(dir_fd, name, shown, MAX_RECORD_BYTES)
    except SnapshotError as exc:
        return f"{shown} is left as it is: {exc.what}"
    if found is None or is_record(found[0]):
        return None
    return f"{shown} is left as it is: not a record hilbot wrote (rename it to get the record)"


def commit(staged: Staged) -> str | None:
    """Move a staged record into place; None, or why it was not (the warning to show)."""
    names = parts(staged.rel)
    shown = staged.tree.path(staged.rel)
    try:
        with directory(staged.tree, names[:-1]) as fd:
            why = _not_ours(fd, names[-1], shown)
            if why:
                _unlink_quietly(fd, staged.temp)
                return why
            move_into_place(fd, staged.temp, names[-1], shown)
    except SnapshotError as exc:
        return f"{shown}: not written ({exc.one_line()})"
    except OSError as exc:
        return f"{shown}: not written ({os_reason(exc)})"
    return None


def discard(staged: Staged) -> None:
    """Remove a staged record's file written aside (the triage did not complete)."""
    names = parts(staged.rel)
    try:
        with directory(staged.tree, names[:-1]) as fd:
            _unlink_quietly(fd, staged.temp)
    except (OSError, SnapshotError):
        pass


__all__ = [
    "MAX_RECORD_BYTES",
    "RECORD_MARK",
    "RECORD_SUFFIX",
    "SnapshotError",
    "Staged",
    "Tree",
    "WriteFailed",
    "check_root",
    "commit",
    "directory",
    "discard",
    "identity",
    "is_record",
    "move_into_place",
    "parts",
    "read_at",
    "read_file",
    "record_name",
    "remove_at",
    "stage",
    "write_aside",
    "write_error",
]
