"""booktest's two trees, and what of them is compared. What `booktest
<https://github.com/lumoa-oss/booktest>`_ does (read at commit f142121, layout
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

A book's path names its test (``test/report_test.py/test_answer.md`` is
``test/report_test.py::test_answer``, ``…/ExampleTestBook/test_float.md`` a method of a class), so
:func:`with_purposes` reads the test file beside the books (in the project root, ``books``'
parent, or a directory or two above) and gives each change its test's purpose: the function's
docstring, its class's and the module's, in that order. The file is parsed, never imported; one
that cannot be read or parsed gives no purpose.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Iterable

from .model import Change

BOOKTEST_INCLUDE = ("**/*.md",)
"""What :func:`find_changes` compares in a booktest output tree: the outputs, not the reports beside
them."""
BOOKTEST_EXCLUDE = ("**/*.tmp/**",)
"""booktest's scratch directories (``<test>.tmp/``), never compared."""


def is_booktest_output(actual_dir: str | Path) -> bool:
    """Whether ``actual_dir`` is booktest's output tree: named ``.out``, or holding booktest's
    ``cases.ndjson``."""
    folder = Path(actual_dir)
    return folder.name == ".out" or (folder / "cases.ndjson").is_file()


MAX_SOURCE_BYTES = 1 << 20
"""Largest test file read for its docstrings (1 MiB)."""
ROOT_LEVELS = 3
"""Directories looked in for a test file: ``books``' parent and the two above it."""
MAX_PURPOSE_CHARS = 2000
"""Most characters of a purpose read from docstrings; the rest is cut."""


def _test_of(rel: str) -> tuple[str, list[str]] | None:
    """A book's test file (relative to the project root) and the names leading to its test
    (``[class,] function``); None for a path that names no test."""
    parts = rel.split("/")
    at = next((n for n, part in enumerate(parts[:-1]) if part.endswith(".py")), None)
    if at is None or not parts[-1].endswith(".md"):
        return None
    return "/".join(parts[: at + 1]), [*parts[at + 1 : -1], parts[-1][: -len(".md")]]


def _parse(path: Path) -> ast.Module | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_SOURCE_BYTES:
            return None
        return ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None


Definition = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


def _child(scope: ast.Module | Definition, name: str) -> Definition | None:
    """The class or function ``name`` defined directly in ``scope``."""
    kinds = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return next((n for n in scope.body if isinstance(n, kinds) and n.name == name), None)


def _docstrings(module: ast.Module, names: list[str]) -> list[str]:
    """The docstrings of the test ``names`` leads to, innermost first, then the module's."""
    found = [ast.get_docstring(module)]
    scope: ast.Module | Definition | None = module
    for name in names:
        scope = _child(scope, name) if scope is not None else None
        found.append(ast.get_docstring(scope) if scope is not None else None)
    return [doc for doc in reversed(found) if doc]


class _Sources:
    """Test files found beside the books, each parsed once."""

    def __init__(self, books: str):
        base = Path(books).parent
        self.roots = [base, *base.parents][:ROOT_LEVELS]
        self.parsed: dict[str, ast.Module | None] = {}

    def module(self, file: str) -> ast.Module | None:
        if file not in self.parsed:
            found = next((r / file for r in self.roots if (r / file).is_file()), None)
            self.parsed[file] = _parse(found) if found is not None else None
        return self.parsed[file]

    def purpose(self, rel: str) -> str | None:
        test = _test_of(rel)
        module = self.module(test[0]) if test is not None else None
        if test is None or module is None:
            return None
        text = "\n\n".join(_docstrings(module, test[1]))
        return text[:MAX_PURPOSE_CHARS] or None


def with_purposes(changes: Iterable[Change], books: str | os.PathLike[str]) -> list[Change]:
    """The changes of a booktest tree, each whose test's docstrings are found with them as its
    ``description`` (a description already given is kept)."""
    sources = _Sources(os.path.realpath(books))
    return [
        change
        if change.description
        else change.model_copy(update={"description": sources.purpose(change.path)})
        for change in changes
    ]
