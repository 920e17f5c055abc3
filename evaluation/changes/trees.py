"""Changes between two snapshot trees (:func:`changes_between_trees`): an expected tree and an
actual tree of text files, matched by relative POSIX path. A file only in the actual tree is
``added``, only in the expected tree ``removed``, in both with different bytes ``changed``;
identical files are no change. Files are read as UTF-8 with ``errors="replace"``. Skipped,
silently: binary files (a NUL byte in the first 8 KB on either side), hidden files and directories
(``.git``, ``.out``…), symbolic links to directories, symbolic links that lead outside their tree
or to anything but a regular file, files whose names are not UTF-8, ``.ai.json`` records a triage
wrote (:func:`evaluation.snapshots.is_record`; a user's own ``.ai.json`` file is compared like any
other), and, when one tree lies inside the other, the inner tree on the outer side. hilbot's data
directory is never part of a tree: inside one it is left out, and a tree inside it is a
:class:`ChangeError`. A changed file larger than :data:`MAX_FILE_BYTES` is left out and named in
``skipped`` when the caller passes that list (``hilbot triage`` warns, naming ``--exclude``), else
a :class:`ChangeError`; an unreadable directory is always one, since skipping it would report its
files as removed. A snapshot change records each tree's root (resolved: absolute, no links) and
the relative ``path``; :mod:`evaluation.snapshots` writes through nothing else.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Sequence

from .. import snapshots
from .._input import is_regular, where
from ..log import os_reason
from .globs import path_matches
from .model import Change, ChangeError, change_status, sorted_changes

MAX_FILE_BYTES = 32 * 1024 * 1024
"""Largest snapshot file read (32 MiB); a larger changed one is left out, or is an error."""
BINARY_SNIFF = 8192
"""Bytes at the start of a file searched for a NUL byte: one there makes the file binary
(skipped)."""


def _check_dirs(expected: Path, actual: Path) -> None:
    """Both trees are directories, and not the same one; else a :class:`ChangeError` with the
    fix."""
    fixes = {
        "expected": "give the snapshot (expected) directory first, e.g. books",
        "actual": "run the tests first so they write their output (booktest writes books/.out), "
        "then give that directory second",
    }
    for side, folder in (("expected", expected), ("actual", actual)):
        if not folder.is_dir():
            what = "is not a directory" if os.path.lexists(folder) else "directory not found"
            raise ChangeError(f"the {side} {what}", where=where(folder), fix=fixes[side])
    try:
        same = os.path.samefile(expected, actual)
    except OSError as exc:
        raise ChangeError(
            f"cannot read the directories ({os_reason(exc)})",
            where=where(expected),
            fix="check their permissions",
        ) from None
    if same:
        raise ChangeError(
            "the expected and the actual directory are the same directory",
            where=where(actual),
            fix="give the snapshots first and the outputs second, e.g. books books/.out",
        )


def _identity(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_dev, info.st_ino


def _walk_error(exc: OSError) -> None:
    raise ChangeError(
        f"cannot read the directory ({os_reason(exc)})",
        where=where(exc.filename or "?"),
        fix="check its permissions, or leave it out with --exclude 'DIR/**' (or [triage] exclude)",
    )


def _enter(folder: Path, rel: str, skip: set[tuple[int, int]], exclude: Sequence[str]) -> bool:
    """Whether the walk goes into ``folder``: not when it is hidden, a link, excluded, or one of
    ``skip`` (the other tree, the data directory)."""
    if folder.name.startswith(".") or folder.is_symlink() or path_matches(rel + "/", exclude):
        return False
    try:
        return _identity(folder) not in skip
    except OSError:
        return False


def _triage_record(path: Path) -> bool:
    """Whether ``path`` is an ``.ai.json`` record a triage wrote (never itself a change)."""
    if not path.name.endswith(snapshots.RECORD_SUFFIX):
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            regular = stat.S_ISREG(os.fstat(fd).st_mode)
            return regular and snapshots.is_record(handle.read(snapshots.MAX_RECORD_BYTES + 1))
    except OSError:
        return False


def _inside(path: Path, real_root: str) -> bool:
    """Whether ``path``, with every link resolved, is a regular file inside the tree
    ``real_root``."""
    resolved = os.path.realpath(path)
    return os.path.commonpath([real_root, resolved]) == real_root and is_regular(Path(resolved))


def _relative(root: Path, path: Path) -> str | None:
    """``path`` relative to ``root`` as POSIX text, or None for a hidden or non-UTF-8 name."""
    rel = path.relative_to(root).as_posix()
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return None if path.name.startswith(".") else rel


def _compared(
    root: Path, path: Path, real_root: str, include: Sequence[str], exclude: Sequence[str]
) -> str | None:
    """``path``'s relative path when the tree's file is compared, else None."""
    rel = _relative(root, path)
    if rel is None or not path_matches(rel, include) or path_matches(rel, exclude):
        return None
    return rel if _inside(path, real_root) and not _triage_record(path) else None


def _files(
    root: Path, skip: set[tuple[int, int]], include: Sequence[str], exclude: Sequence[str]
) -> dict[str, Path]:
    """The files of the tree ``root`` compared, by relative path (directories in ``skip`` not)."""
    real_root = os.path.realpath(root)
    found: dict[str, Path] = {}
    for folder, dirs, names in os.walk(root, onerror=_walk_error):
        base = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if _enter(base / d, (base / d).relative_to(root).as_posix(), skip, exclude)
        )
        for name in names:
            rel = _compared(root, base / name, real_root, include, exclude)
            if rel is not None:
                found[rel] = base / name
    return found


class _TooLarge(ChangeError):
    """A snapshot past :data:`MAX_FILE_BYTES`."""

    def __init__(self, path: Path, size: int, rel: str = "PATH"):
        super().__init__(
            f"larger than {MAX_FILE_BYTES // 2**20} MiB, too large to review as text",
            where=where(path),
            fix=f"leave it out with --exclude '{rel}' (or [triage] exclude)",
        )
        self.path, self.size = path, size


def _load(path: Path) -> str | None:
    """A snapshot's text, None if it is binary; past :data:`MAX_FILE_BYTES`, :class:`_TooLarge`."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            head = handle.read(BINARY_SNIFF) if stat.S_ISREG(info.st_mode) else b"\0"
            if b"\0" in head:
                return None
            data = head + handle.read(max(0, MAX_FILE_BYTES + 1 - len(head)))
    except OSError as exc:
        raise ChangeError(
            f"cannot read the file ({os_reason(exc)})",
            where=where(path),
            fix="check its permissions",
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise _TooLarge(path, max(info.st_size, len(data)))
    return data.decode("utf-8", errors="replace")


def too_large_warning(rel: str, size: int) -> str:
    """The warning for a snapshot left out for its size: which, its size, the limit, the fix."""
    limit = MAX_FILE_BYTES // 2**20
    return (
        f"{rel}: {size / 2**20:.1f} MiB, over the {limit} MiB limit for a snapshot reviewed as "
        f"text; left out, the rest triaged (to leave it out on purpose: --exclude '{rel}', or "
        f'exclude = ["{rel}"] under [triage])'
    )


def _same_bytes(old: Path, new: Path) -> bool:
    """Whether the two files hold the same bytes (read in chunks, so a huge identical file costs no
    memory)."""
    try:
        if old.stat().st_size != new.stat().st_size:
            return False
        with open(old, "rb") as a, open(new, "rb") as b:
            while (chunk := a.read(1 << 20)) == b.read(1 << 20):
                if not chunk:
                    return True
            return False
    except OSError as exc:
        raise ChangeError(
            f"cannot read the file ({os_reason(exc)})",
            where=where(exc.filename or old),
            fix="check its permissions",
        ) from None


def _tree_change(
    rel: str, roots: tuple[str, str], old: Path | None, new: Path | None, skipped: list[str] | None
) -> Change | None:
    """The change of one relative path, or None when the files are identical or either is binary
    (or too large, when ``skipped`` takes the warning)."""
    if old is not None and new is not None and _same_bytes(old, new):
        return None
    try:
        expected = _load(old) if old is not None else None
        actual = _load(new) if new is not None else None
    except _TooLarge as exc:
        if skipped is None:
            raise _TooLarge(exc.path, exc.size, rel) from None
        skipped.append(too_large_warning(rel, exc.size))
        return None
    if (old is not None and expected is None) or (new is not None and actual is None):
        return None
    return Change(
        id=rel,
        name=rel,
        path=rel,
        status=change_status(expected, actual),
        expected=expected,
        actual=actual,
        source="snapshots",
        expected_root=roots[0],
        actual_root=roots[1],
    )


def _check_guards(
    trees: Sequence[tuple[str, Path]], guard: Sequence[str | Path]
) -> set[tuple[int, int]]:
    """The guarded directories' identities; a tree inside one of them is a :class:`ChangeError`."""
    found = set()
    for folder in guard:
        real = os.path.realpath(folder)
        for side, tree in trees:
            if os.path.commonpath([real, os.path.realpath(tree)]) == real:
                raise ChangeError(
                    f"the {side} directory is in hilbot's data directory ({folder})",
                    where=where(tree),
                    fix="triage trees outside it, or give hilbot another --data-dir",
                )
        if os.path.isdir(real):
            found.add(_identity(Path(real)))
    return found


def changes_between_trees(
    expected_dir: str | Path,
    actual_dir: str | Path,
    *,
    include: Sequence[str] = ("**/*",),
    exclude: Sequence[str] = (),
    partial: bool = False,
    guard: Sequence[str | Path] = (),
    skipped: list[str] | None = None,
) -> list[Change]:
    """The changes from the tree ``expected_dir`` to the tree ``actual_dir``, matched by relative
    path.

    ``include``/``exclude`` are glob patterns of relative paths (see :func:`path_matches`). With
    ``partial`` the actual tree holds only the outputs of what ran (booktest's ``.out``): an
    expected file with no actual one is no change rather than ``removed``. ``guard`` names
    directories that are never part of a tree (hilbot's data directory). A changed file too large to
    review is a warning appended to ``skipped`` when it is given, else a :class:`ChangeError`.
    """
    expected, actual = Path(expected_dir), Path(actual_dir)
    _check_dirs(expected, actual)
    guarded = _check_guards([("expected", expected), ("actual", actual)], guard)
    old = _files(expected, guarded | {_identity(actual)}, include, exclude)
    new = _files(actual, guarded | {_identity(expected)}, include, exclude)
    names = set(new) if partial else set(new) | set(old)
    roots = (os.path.realpath(expected), os.path.realpath(actual))
    found = (_tree_change(rel, roots, old.get(rel), new.get(rel), skipped) for rel in sorted(names))
    return sorted_changes(found)
