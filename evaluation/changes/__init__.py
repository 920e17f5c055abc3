"""Changes between two versions of outputs: what a change is, where changes come from, and the
diff.

``hilbot triage`` sorts each change into FAIL · RECOMMEND FAIL · UNSURE · RECOMMEND ACCEPT · ACCEPT
and sends the rest to humans; this package is its input side. Every source gives a list of
:class:`Change` (:mod:`.model`), sorted by ``path`` then ``id``:

- **Snapshot trees** (:func:`changes_between_trees`, :mod:`.trees`): an expected tree and an
  actual tree of text files, matched by relative POSIX path; booktest's two trees
  (:mod:`.booktest`) are compared as such a pair, its outputs only, each change described by its
  test's docstrings (:func:`with_purposes`).
- **Two runs** (:func:`changes_between_runs`, :mod:`.runs`): items matched by id, an item's output
  its answer or its ranked results as text.
- **A file** (:func:`changes_from_file`, :mod:`.rows`): JSONL, JSON or CSV rows ``{id, name,
  description, expected, actual}``.

:func:`find_changes` (:mod:`.find`) picks the source from what the user gave (two directories, two
run ids or one file). :func:`unified_diff` and :func:`marked_diff` (:mod:`.diff`) show a change,
:func:`numeric_diff` (:mod:`.numeric`) tells a change of numbers only from a change of text,
:func:`failure_sign` (:mod:`.failures`) finds a traceback, an error line or lost output, and
:func:`path_matches` (:mod:`.globs`) matches relative paths to glob patterns. The limits
(:data:`MAX_FILE_BYTES`, :data:`MAX_DIFF_LINES`, :data:`MAX_NUMERIC_CHARS`) are read in the module
that defines them, so that is the one to patch.
"""

from __future__ import annotations

from .booktest import BOOKTEST_EXCLUDE, BOOKTEST_INCLUDE, is_booktest_output, with_purposes
from .diff import MAX_DIFF_LINES, WITHIN_MARK, Marks, marked_diff, unified_diff
from .failures import FailureSign, failure_sign
from .find import find_changes
from .globs import path_matches
from .model import Change, ChangeError
from .numeric import (
    MAX_NUMERIC_CHARS,
    NUMBER,
    NumberChange,
    NumericDiff,
    Tolerance,
    normalized_equal,
    numeric_diff,
)
from .rows import FIELDS, changes_from_file
from .runs import changes_between_runs, item_output
from .trees import BINARY_SNIFF, MAX_FILE_BYTES, changes_between_trees, too_large_warning

__all__ = [
    "BINARY_SNIFF",
    "BOOKTEST_EXCLUDE",
    "BOOKTEST_INCLUDE",
    "FIELDS",
    "MAX_DIFF_LINES",
    "MAX_FILE_BYTES",
    "MAX_NUMERIC_CHARS",
    "NUMBER",
    "WITHIN_MARK",
    "Change",
    "ChangeError",
    "FailureSign",
    "Marks",
    "NumberChange",
    "NumericDiff",
    "Tolerance",
    "changes_between_runs",
    "changes_between_trees",
    "changes_from_file",
    "failure_sign",
    "find_changes",
    "is_booktest_output",
    "item_output",
    "marked_diff",
    "normalized_equal",
    "numeric_diff",
    "path_matches",
    "too_large_warning",
    "unified_diff",
    "with_purposes",
]
