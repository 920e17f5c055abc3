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
"""

from __future__ import annotations

from pathlib import Path

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
