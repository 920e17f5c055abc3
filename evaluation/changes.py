"""Changes between two versions of outputs: what a change is, where changes come from, and the diff.

``hilbot triage`` sorts each change into FAIL · RECOMMEND FAIL · UNSURE · RECOMMEND ACCEPT · ACCEPT
and sends the rest to humans; this module is its input side. Every source gives a list of
:class:`Change`, sorted by ``path`` then ``id``:

- **Snapshot trees** (:func:`changes_between_trees`): an expected tree and an actual tree of text
  files, matched by relative POSIX path. A file only in the actual tree is ``added``, only in the
  expected tree ``removed``, in both with different bytes ``changed``; identical files are no
  change. Files are read as UTF-8 with ``errors="replace"``. Skipped, silently: binary files (a NUL
  byte in the first 8 KB on either side), hidden files and directories (``.git``, ``.out``…),
  symbolic links to directories, symbolic links that lead outside their tree or to anything but a
  regular file, files whose names are not UTF-8, ``.ai.json`` records a triage wrote
  (:func:`evaluation.snapshots.is_record`; a user's own ``.ai.json`` file is compared like any
  other), and, when one tree lies inside the other, the inner tree on the outer side. hilbot's
  data directory is never part of a tree: inside one it is left out, and a tree inside it is a
  :class:`ChangeError`. A changed file larger than :data:`MAX_FILE_BYTES` is left out and named in
  ``skipped`` when the caller passes that list (``hilbot triage`` warns, naming ``--exclude``), else
  a :class:`ChangeError`; an unreadable directory is always one, since skipping it would report
  its files as removed. A snapshot change records each tree's root (resolved: absolute, no links)
  and the relative ``path``; :mod:`evaluation.snapshots` writes through nothing else.
- **Two runs** (:func:`changes_between_runs`): items matched by id; an item's output is
  :func:`item_output` — the answer for answer and scenario runs, one ``1. /docs/x.md — Title``
  line per result for search runs. Scores and snippets are left out: a search result that moved
  in score but not in rank, or whose snippet was re-cut, shows the reader the same list. A tool
  capture is not output either (scenario runs compare their answers). ``path`` is
  ``<set>/<item id>``, the set from the current run (the baseline's for removed items).
- **A file** (:func:`changes_from_file`): JSONL, JSON or CSV rows ``{id, name, description,
  expected, actual}``, read by :func:`evaluation.imports.read_rows` (the reader of ``hilbot
  import``: hostile JSON, cells up to ``CSV_FIELD_LIMIT``, a byte order mark) and matched
  loosely, see :data:`FIELDS`. In CSV an empty cell is a missing value.

:func:`find_changes` picks the source from what the user gave (two directories, two run ids or
one file).

booktest
--------
What `booktest <https://github.com/lumoa-oss/booktest>`_ does (read at commit f142121, layout
``fs_version=v2``): each test prints Markdown, and ``books_path`` in ``booktest.ini`` (default
``books``) holds two trees — ``Tests.exec_parsed`` sets ``exp_dir = books`` and
``out_dir = books/.out``:

- ``books/<test file>/<test>.md`` is the accepted snapshot, committed to git: ``books/test/
  examples/hello_book.py/test_hello.md`` for ``test/examples/hello_book.py::test_hello``, one more
  level for a class, ``books/test/examples/example_book.py/ExampleTestBook/test_float.md``. Beside
  it may lie ``<test>.snapshots.json`` (recorded HTTP and function calls) and ``<test>/`` (files
  the test wrote); ``books/index.md`` lists the books.
- ``books/.out/`` (git-ignored) holds the latest run under the same relative paths: ``<test>.md``
  the actual output, ``<test>.txt`` the run's report of it with diff markers, ``<test>.log`` its
  stderr, ``<test>.bin`` the pickled result, ``<test>/`` and ``<test>.tmp/`` its files, and at the
  top ``cases.ndjson`` (one line per case run: name, OK/DIFF/FAIL, duration, AI review),
  ``metrics.json``, ``log.txt`` and ``.batches/``.
- Accepting (``freeze_case``) moves ``.out/<test>.md`` (and ``<test>/``) over the book. Running some
  tests writes only their outputs, so ``.out`` is a partial tree: a book without an output there
  was not run, which is not a removal.

So a booktest user runs ``booktest`` and then points hilbot at the two trees, expected first:
``find_changes(store, ["books", "books/.out"])`` (``hilbot triage books books/.out``). ``.out`` is
hidden, so the expected side never counts it. When the actual directory is booktest's (named
``.out``, or holding ``cases.ndjson``; :func:`is_booktest_output`), :func:`find_changes` compares
only the outputs (:data:`BOOKTEST_INCLUDE`, ``**/*.md`` outside ``*.tmp/``), not the reports,
logs and pickles beside them, and treats the actual tree as ``partial``: books that did not run
are no change, an output with no book (a new test) is ``added``. ``include=`` overrides the
patterns.

The diff
--------
:func:`unified_diff` is ``difflib``'s, lines split on ``\\r\\n``, ``\\r`` or ``\\n``; the body is
the raw text (show it through :func:`evaluation.text.visible`), the ``---``/``+++`` paths are made
visible. :func:`numeric_diff` tells a change of numbers only (``0.85`` → ``0.87``) from a change
of text, and :func:`marked_diff` marks each changed line whose numbers all moved within a
:class:`Tolerance`. Texts over :data:`MAX_NUMERIC_CHARS` are never "numbers only"; diffs of more
than :data:`MAX_DIFF_LINES` lines a side are cut there, with a note.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

from pydantic import BaseModel, ConfigDict

from . import snapshots
from ._input import check_file, is_regular, where
from .errors import HilbotError, ImportFailed
from .imports import BadRow, CsvRow, read_rows
from .log import os_reason
from .records import ItemData
from .runs import Run
from .store import Store
from .text import visible

MAX_FILE_BYTES = 32 * 1024 * 1024
"""Largest snapshot file read (32 MiB); a larger changed one is left out, or is an error."""
BINARY_SNIFF = 8192
"""Bytes at the start of a file searched for a NUL byte: one there makes the file binary
(skipped)."""
MAX_NUMERIC_CHARS = 2_000_000
"""Longest text :func:`numeric_diff` looks at (2 M characters); a longer one is never "numbers
only"."""
MAX_DIFF_LINES = 20_000
"""Lines per side a diff covers; the rest is left out with a note (``difflib`` is quadratic at
worst)."""
BOOKTEST_INCLUDE = ("**/*.md",)
"""What :func:`find_changes` compares in a booktest output tree: the outputs, not the reports beside
them."""
BOOKTEST_EXCLUDE = ("**/*.tmp/**",)
"""booktest's scratch directories (``<test>.tmp/``), never compared."""
WITHIN_MARK = "  ≈ within tolerance"
"""What :func:`marked_diff` appends to a changed line whose numbers all moved within tolerance."""

FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id", "key", "test_id", "item_id", "case_id", "path"),
    "name": ("name", "test", "test_name", "title"),
    "description": ("description", "purpose", "intent"),
    "path": ("path",),
    "expected": ("expected", "previous", "baseline", "old", "before", "expected_output"),
    "actual": ("actual", "current", "new", "after", "output", "actual_output"),
}
"""Field or column names :func:`changes_from_file` accepts for each part of a row (case, spaces and
``-`` ignored)."""

_FILE_FIX = "give a .jsonl, .json or .csv file of rows with id, name, expected and actual"
_FORMS = (
    "give two directories (expected, then actual, e.g. books books/.out), two run ids (baseline, "
    "then current; see `hilbot review --list`) or one .jsonl/.csv file of rows with expected and "
    "actual"
)


class ChangeError(HilbotError):
    """Changes cannot be found: a missing directory, a bad row, sources of no known form."""


class Change(BaseModel):
    """One output that differs between its expected (previous) and its actual (current) version."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    id: str
    """Stable id: the relative POSIX path for snapshots, the item id for runs and file rows."""
    name: str
    """Test or item name shown to reviewers (snapshot: the relative path; run: the query text; file: the name field, else the id)."""
    description: str | None = None
    """What the test is for (file rows: description/purpose/intent; runs: the query's intent)."""
    path: str
    """What require-human glob patterns match (snapshot: relative POSIX path; run: ``<set>/<item id>``; file: path field or id)."""
    status: Literal["changed", "added", "removed"]
    """``changed`` (both versions), ``added`` (no expected version) or ``removed`` (no actual version)."""
    expected: str | None
    """The previous output text (None when added)."""
    actual: str | None
    """The current output text (None when removed)."""
    source: Literal["runs", "snapshots", "file"]
    """Where the change was found."""
    expected_root: str | None = None
    """Snapshots: the expected tree's root, resolved (absolute, no links); the file is ``path``."""
    actual_root: str | None = None
    """Snapshots: the actual tree's root, resolved the same way (also for a removed file)."""


def _status(expected: str | None, actual: str | None) -> Literal["changed", "added", "removed"]:
    if expected is not None and actual is not None:
        return "changed"
    return "added" if actual is not None else "removed"


def _sorted(changes: Iterable[Change | None]) -> list[Change]:
    """The changes (Nones dropped) by ``path`` then ``id``."""
    return sorted((c for c in changes if c is not None), key=lambda c: (c.path, c.id))


# --------------------------------------------------------------------------- glob patterns


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    """``**/`` any directories (or none), ``**`` anything, ``*`` and ``?`` within one name, other
    characters as they are.

    A pattern without ``/`` matches a name at any depth (``*.md``); a leading ``/`` anchors it at
    the top.
    """
    anchored = pattern.strip()
    pattern = re.sub(r"(?:\*\*/)+", "**/", anchored.lstrip("/"))
    if "/" not in anchored:
        pattern = "**/" + pattern
    out, i = [], 0
    tokens = (("**/", "(?:.*/)?"), ("**", ".*"), ("*", "[^/]*"), ("?", "[^/]"))
    while i < len(pattern):
        token = next(
            ((t, r) for t, r in tokens if pattern.startswith(t, i)),
            (pattern[i], re.escape(pattern[i])),
        )
        out.append(token[1])
        i += len(token[0])
    return re.compile("".join(out), re.S)


def path_matches(path: str, patterns: Sequence[str]) -> bool:
    """Whether the relative POSIX ``path`` matches any of the glob ``patterns`` (``**/payment_*``,
    ``*.md``)."""
    return any(_glob(p).fullmatch(path) for p in patterns)


# --------------------------------------------------------------------------- snapshot trees


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
        status=_status(expected, actual),
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
    return _sorted(found)


def is_booktest_output(actual_dir: str | Path) -> bool:
    """Whether ``actual_dir`` is booktest's output tree: named ``.out``, or holding booktest's
    ``cases.ndjson``."""
    folder = Path(actual_dir)
    return folder.name == ".out" or (folder / "cases.ndjson").is_file()


# --------------------------------------------------------------------------- runs


def item_output(item: ItemData, kind: str) -> str:
    """An item's output as text: the answer, or for a search run one ``rank. path — title`` line per
    result.

    An item the system under test failed on ends with an ``error: …`` line.
    """
    if kind == "search":
        lines = [
            f"{r.rank if r.rank is not None else n}. {r.path or '(no path)'}"
            + (f" — {r.title}" if r.title else "")
            for n, r in enumerate(item.results, 1)
        ]
    else:
        lines = [item.answer] if item.answer is not None else []
    if item.error:
        lines.append(f"error: {item.error}")
    return "\n".join(lines)


def _run_change(
    old_run: Run, new_run: Run, old: ItemData | None, new: ItemData | None
) -> Change | None:
    expected = item_output(old, old_run.header.kind) if old is not None else None
    actual = item_output(new, new_run.header.kind) if new is not None else None
    shown, run = (new, new_run) if new is not None else (old, old_run)
    if expected == actual or shown is None:
        return None
    return Change(
        id=shown.id,
        name=shown.query.query,
        description=shown.query.intent,
        path=f"{run.header.set}/{shown.id}",
        status=_status(expected, actual),
        expected=expected,
        actual=actual,
        source="runs",
    )


def changes_between_runs(store: Store, baseline: str, current: str) -> list[Change]:
    """The items whose output differs from run ``baseline`` to run ``current`` (an unknown id is
    :class:`RunNotFound`)."""
    if baseline == current:
        raise ChangeError(
            f"the baseline and the current run are the same run ({baseline!r})",
            where="runs",
            fix="give the earlier run first and the later one second (see `hilbot review --list`)",
        )
    old_run, new_run = store.load_run(baseline), store.load_run(current)
    old = {item.id: item for item in old_run.items}
    new = {item.id: item for item in new_run.items}
    return _sorted(
        _run_change(old_run, new_run, old.get(i), new.get(i)) for i in old.keys() | new.keys()
    )


# --------------------------------------------------------------------------- a file of rows


def _rows(path: Path) -> list[tuple[int, Any]]:
    """Every ``(line, row)`` of the file; one that cannot be read as a whole is a
    :class:`ChangeError`."""
    try:
        return list(read_rows(path))
    except ImportFailed as exc:
        raise ChangeError(exc.what, where=exc.where, fix=exc.fix) from None
    except BadRow as exc:
        raise ChangeError(
            exc.args[0], where=where(path, exc.line), fix=exc.fix or "fix the file"
        ) from None


def _fields(row: Any, at: str) -> dict[str, Any]:
    """A row's values by normalised name (``Test ID`` → ``test_id``); a row that is not an object is
    an error."""
    if isinstance(row, BadRow):
        raise ChangeError(
            str(row),
            where=at,
            fix="fix the row: one JSON object per line, with expected and actual",
        )
    if not isinstance(row, dict):
        kind = {
            list: "a list",
            str: "a string",
            bool: "true/false",
            int: "a number",
            float: "a number",
            type(None): "null",
        }
        raise ChangeError(
            f"a row must be a JSON object, not {kind.get(type(row), type(row).__name__)}",
            where=at,
            fix='write each row as an object, e.g. {"id": "t1", "expected": "…", "actual": "…"}',
        )
    if None in row:
        raise ChangeError(
            "more cells than header columns", where=at, fix="quote cells that contain commas"
        )
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = re.sub(r"[\s-]+", "_", str(key).strip().lower())
        if value is not None and not (isinstance(row, CsvRow) and value == "") and name not in out:
            out[name] = value
    return out


def _pick(fields: dict[str, Any], name: str) -> Any:
    return next((fields[alias] for alias in FIELDS[name] if alias in fields), None)


def _label(value: Any, name: str, at: str) -> str | None:
    """An id, name, description or path as text; an object, a list or true/false is an error."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ChangeError(
        f"{name}: {json.dumps(value)[:60]} is not text",
        where=at,
        fix=f"give the {name} as a string or a number",
    )


def _output(value: Any) -> str | None:
    """An expected or actual value as text: strings as they are, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(
        value, ensure_ascii=False, indent=2 if isinstance(value, (dict, list)) else None
    )


def _row_change(fields: dict[str, Any], change_id: str, at: str) -> Change | None:
    expected, actual = _output(_pick(fields, "expected")), _output(_pick(fields, "actual"))
    if expected is None and actual is None:
        raise ChangeError(
            "no expected or actual value (one of "
            f"{', '.join(FIELDS['expected'] + FIELDS['actual'])})",
            where=at,
            fix="give the previous output as expected and the current one as actual (one may be "
            "missing, not both)",
        )
    if expected == actual:
        return None
    return Change(
        id=change_id,
        name=_label(_pick(fields, "name"), "name", at) or change_id,
        description=_label(_pick(fields, "description"), "description", at),
        path=_label(_pick(fields, "path"), "path", at) or change_id,
        status=_status(expected, actual),
        expected=expected,
        actual=actual,
        source="file",
    )


def changes_from_file(path: str | Path) -> list[Change]:
    """The rows of a JSONL, JSON or CSV file whose expected and actual differ (a bad row is a
    :class:`ChangeError`)."""
    path = check_file(path, ChangeError, fix=_FILE_FIX)
    seen: dict[str, int] = {}
    changes: list[Change | None] = []
    for line, row in _rows(path):
        at = where(path, line)
        fields = _fields(row, at)
        change_id = _label(_pick(fields, "id"), "id", at) or f"row-{line}"
        if change_id in seen:
            raise ChangeError(
                f"duplicate id {visible(change_id, newlines=False)!r}, first on line "
                f"{seen[change_id]}",
                where=at,
                fix="give each row its own id",
            )
        seen[change_id] = line
        changes.append(_row_change(fields, change_id, at))
    return _sorted(changes)


# --------------------------------------------------------------------------- dispatch


def _looks_like_path(source: str) -> bool:
    return "/" in source or os.sep in source or Path(source).is_dir()


def _pair(
    store: Store,
    sources: list[str],
    include: Sequence[str] | None,
    exclude: Sequence[str],
    skipped: list[str] | None,
) -> list[Change]:
    if any(_looks_like_path(s) for s in sources):
        booktest = is_booktest_output(sources[1])
        include = include if include is not None else BOOKTEST_INCLUDE if booktest else ("**/*",)
        exclude = (*exclude, *BOOKTEST_EXCLUDE) if booktest else tuple(exclude)
        return changes_between_trees(
            sources[0],
            sources[1],
            include=include,
            exclude=exclude,
            partial=booktest,
            guard=[store.root],
            skipped=skipped,
        )
    if set(sources) & set(store.run_ids()):
        return changes_between_runs(store, sources[0], sources[1])
    raise ChangeError(
        f"{sources[0]!r} and {sources[1]!r} are neither directories nor runs",
        where="sources",
        fix=_FORMS,
    )


def _single(store: Store, source: str) -> list[Change]:
    path = Path(source)
    if path.is_dir():
        raise ChangeError("one directory is half of a comparison", where=where(path), fix=_FORMS)
    if path.is_file() or path.suffix.lower() in (".jsonl", ".json", ".csv", ".ndjson"):
        return changes_from_file(path)
    if source in store.run_ids():
        raise ChangeError(
            f"one run ({source!r}) is half of a comparison", where="sources", fix=_FORMS
        )
    raise ChangeError(f"{source!r} is neither a file nor a run", where="sources", fix=_FORMS)


def find_changes(
    store: Store,
    sources: Sequence[str],
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    skipped: list[str] | None = None,
) -> list[Change]:
    """The changes named by ``sources``: two directories (expected, actual), two run ids (baseline,
    current) or one file.

    Two sources are trees when either is a directory or a path (holds a ``/``), else runs when
    either is a run id in ``store``. ``include`` defaults to every file, or to
    :data:`BOOKTEST_INCLUDE` when the actual tree is booktest's (:func:`is_booktest_output`, which
    also makes it ``partial``); ``include``/``exclude`` apply to trees only, and so does
    ``skipped`` (see :func:`changes_between_trees`). The store's data directory is never in a tree.
    """
    sources = [str(s) for s in sources]
    if len(sources) == 2:
        return _pair(store, sources, include, exclude, skipped)
    if len(sources) == 1:
        return _single(store, sources[0])
    raise ChangeError(f"{len(sources)} sources given", where="sources", fix=_FORMS)


# --------------------------------------------------------------------------- the diff

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WS = re.compile(r"\s+")


def _lines(text: str | None) -> list[str]:
    """``text`` as lines each ending in ``\\n`` (whatever its line breaks were)."""
    if not text:
        return []
    parts = _LINE_BREAK.split(text)
    if parts[-1] == "":
        parts.pop()
    return [part + "\n" for part in parts]


def _capped(lines: list[str]) -> tuple[list[str], bool]:
    return (lines[:MAX_DIFF_LINES], True) if len(lines) > MAX_DIFF_LINES else (lines, False)


def _range(start: int, stop: int) -> str:
    """A hunk header's range as ``difflib`` writes it (``3``, ``3,4``, ``2,0`` for an empty range
    after line 2)."""
    length = stop - start
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"


Marks = dict[int, bool]
"""0-based indices of actual lines to mark."""


def _hunk(
    group: list[tuple[str, int, int, int, int]], old: list[str], new: list[str], marks: Marks
) -> list[str]:
    """One hunk of the diff, ``+`` lines in ``marks`` marked within tolerance."""
    (_, i1, _, j1, _), (_, _, i2, _, j2) = group[0], group[-1]
    out = [f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n"]
    for tag, a1, a2, b1, b2 in group:
        if tag == "equal":
            out += [" " + line for line in old[a1:a2]]
            continue
        out += ["-" + line for line in old[a1:a2]]
        out += [
            "+" + (line[:-1] + WITHIN_MARK + "\n" if marks.get(j) else line)
            for j, line in enumerate(new[b1:b2], b1)
        ]
    return out


def _diff_lines(change: Change, context: int, tolerance: Tolerance | None = None) -> list[str]:
    """The unified diff of ``change`` as lines, each ending in ``\\n``; empty when the texts are
    equal.

    With a ``tolerance``, changed lines whose numbers all moved within it are marked.
    """
    if change.expected == change.actual:
        return []
    shown = visible(change.path, newlines=False)
    (old, cut_old), (new, cut_new) = (
        _capped(_lines(change.expected)),
        _capped(_lines(change.actual)),
    )
    matcher = difflib.SequenceMatcher(None, old, new)
    marks = _within_lines(matcher, old, new, tolerance) if tolerance is not None else {}
    body = [
        line
        for group in matcher.get_grouped_opcodes(max(0, context))
        for line in _hunk(group, old, new, marks)
    ]
    if not body:
        note = (
            "only line endings or the final newline differ"
            if change.status == "changed"
            else f"{change.status}, empty"
        )
        body = [f"\\ {note}\n"]
    if cut_old or cut_new:
        body.append(f"\\ diff cut at {MAX_DIFF_LINES:,} lines a side\n")
    return [f"--- expected/{shown}\n", f"+++ actual/{shown}\n", *body]


def unified_diff(change: Change, *, context: int = 3) -> str:
    """``--- expected/<path>`` / ``+++ actual/<path>`` unified diff of the change; ``""`` when the
    texts are equal.

    An added or removed output is diffed against nothing; a change of line endings alone gets a
    one-line ``\\`` note instead of hunks.
    """
    return "".join(_diff_lines(change, context))


def normalized_equal(expected: str | None, actual: str | None) -> bool:
    """Whether the texts are equal once every run of whitespace is one space and the ends are
    stripped (None only equals None)."""
    if expected is None or actual is None:
        return expected is actual
    return _WS.sub(" ", expected).strip(" ") == _WS.sub(" ", actual).strip(" ")


@dataclass(frozen=True)
class Tolerance:
    """How far a number may move and still count as the same: ``|new-old| ≤
    relative·max(|old|,|new|)`` or ``≤ absolute``."""

    relative: float = 0.0
    """Share of the larger magnitude a number may move (0.01 = 1%)."""
    absolute: float = 0.0
    """Amount a number may move."""

    def __post_init__(self) -> None:
        if not all(math.isfinite(v) and v >= 0 for v in (self.relative, self.absolute)):
            raise ChangeError(
                f"tolerance relative={self.relative} absolute={self.absolute}",
                where="tolerance",
                fix="give finite tolerances of 0 or more",
            )

    def within(self, old: float, new: float) -> bool:
        """Whether ``old`` → ``new`` is within tolerance; a number too large for a float never
        is."""
        if not (math.isfinite(old) and math.isfinite(new)):
            return False
        scale = max(abs(old), abs(new))
        bound = max(self.absolute, self.relative * scale)
        slack = 1e-12 * max(scale, 1.0) if bound > 0 else 0.0  # 1.1 - 1.0 is 0.10000000000000009
        return abs(new - old) <= bound + slack


@dataclass(frozen=True)
class NumberChange:
    """One number that changed, at a line of the actual text."""

    line: int
    """1-based line of the actual text the new number is on."""
    old: float
    """The expected value (``inf`` when too large for a float)."""
    new: float
    """The actual value (``inf`` when too large for a float)."""
    old_text: str
    """The number as the expected text writes it."""
    new_text: str
    """The number as the actual text writes it."""
    within: bool
    """Whether it moved within the tolerance asked for."""


@dataclass(frozen=True)
class NumericDiff:
    """Whether two texts differ only in their numbers, and which numbers."""

    only_numbers: bool
    """The texts are equal once every number is a placeholder (and whitespace normalised)."""
    changes: tuple[NumberChange, ...]
    """The numbers written differently, paired in order (only meaningful when ``only_numbers``)."""

    @property
    def all_within(self) -> bool:
        """Only numbers changed, at least one did, and every one within tolerance."""
        return self.only_numbers and bool(self.changes) and all(c.within for c in self.changes)


NUMBER = re.compile(r"(?<![\w.])[-+]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?(?!\.?\w)")
"""A number standing alone: ``42``, ``-1.5e-3``, ``.5``, ``0.85``; not the digits of ``v2``,
``abc123``, ``12ms`` or ``1.2.3``."""


def _skeleton(text: str, numbers: list[re.Match[str]]) -> list[str]:
    """The text between the numbers, whitespace runs made one space, the ends stripped."""
    parts, last = [], 0
    for match in numbers:
        parts.append(_WS.sub(" ", text[last : match.start()]))
        last = match.end()
    parts.append(_WS.sub(" ", text[last:]))
    parts[0] = parts[0].lstrip(" ")
    parts[-1] = parts[-1].rstrip(" ")  # the same part as parts[0] when there are no numbers
    return parts


def _number_changes(
    actual: str, pairs: Iterable[tuple[re.Match[str], re.Match[str]]], tolerance: Tolerance
) -> tuple[NumberChange, ...]:
    """The pairs written differently, each with the line of the actual text it is on."""
    out, line, last = [], 1, 0
    for old, new in pairs:
        if old.group() == new.group():
            continue
        line, last = line + len(_LINE_BREAK.findall(actual, last, new.start())), new.start()
        before, after = (
            float(old.group()),
            float(new.group()),
        )  # the pattern only matches what float() reads (inf when huge)
        out.append(
            NumberChange(
                line, before, after, old.group(), new.group(), tolerance.within(before, after)
            )
        )
    return tuple(out)


def numeric_diff(expected: str, actual: str, tolerance: Tolerance) -> NumericDiff:
    """Whether ``actual`` is ``expected`` with only numbers (and whitespace) changed, and the
    numbers that did.

    A number written differently with the same value (``0.50`` → ``0.5``) is a change within any
    tolerance. Texts longer than :data:`MAX_NUMERIC_CHARS` are never numbers only.
    """
    if len(expected) > MAX_NUMERIC_CHARS or len(actual) > MAX_NUMERIC_CHARS:
        return NumericDiff(False, ())
    old, new = list(NUMBER.finditer(expected)), list(NUMBER.finditer(actual))
    if len(old) != len(new) or _skeleton(expected, old) != _skeleton(actual, new):
        return NumericDiff(False, ())
    return NumericDiff(True, _number_changes(actual, zip(old, new), tolerance))


def _block_marks(old: list[str], new: list[str], first: int, tolerance: Tolerance) -> Marks:
    """Of a block of changed lines (``new`` starting at line index ``first``): the lines whose
    numbers all moved within tolerance."""
    block = numeric_diff("".join(old), "".join(new), tolerance)
    marks: Marks = {}
    for number in block.changes if block.only_numbers else ():
        index = first + number.line - 1
        marks[index] = marks.get(index, True) and number.within
    return marks


def _within_lines(
    matcher: difflib.SequenceMatcher[str], old: list[str], new: list[str], tolerance: Tolerance
) -> Marks:
    """The changed actual lines whose numbers all moved within tolerance: line by line where a block
    replaces as many lines as it removes, else the block as a whole."""
    marks: Marks = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            for offset in range(i2 - i1):
                marks.update(
                    _block_marks(
                        old[i1 + offset : i1 + offset + 1],
                        new[j1 + offset : j1 + offset + 1],
                        j1 + offset,
                        tolerance,
                    )
                )
        elif tag == "replace":
            marks.update(_block_marks(old[i1:i2], new[j1:j2], j1, tolerance))
    return marks


def marked_diff(change: Change, tolerance: Tolerance, *, context: int = 3) -> str:
    """:func:`unified_diff` with :data:`WITHIN_MARK` after each ``+`` line whose numbers all moved
    within ``tolerance``.

    Where a block of changed lines replaces as many lines as it removes, lines are paired one to
    one; otherwise the block counts when, as a whole, only numbers changed.
    """
    return "".join(_diff_lines(change, context, tolerance))
