"""Finding the changes the user named (:func:`find_changes`): two directories (expected, then
actual: snapshot trees, compared as booktest's when the actual one is), two run ids (baseline,
then current) or one file of rows; anything else is a :class:`ChangeError` saying which forms are
accepted.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from .._input import where
from ..store import Store
from .booktest import BOOKTEST_EXCLUDE, BOOKTEST_INCLUDE, is_booktest_output, with_purposes
from .model import Change, ChangeError
from .rows import changes_from_file
from .runs import changes_between_runs
from .trees import changes_between_trees

_FORMS = (
    "give two directories (expected, then actual, e.g. books books/.out), two run ids (baseline, "
    "then current; see `hilbot review --list`) or one .jsonl/.csv file of rows with expected and "
    "actual"
)


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
        found = changes_between_trees(
            sources[0],
            sources[1],
            include=include,
            exclude=exclude,
            partial=booktest,
            guard=[store.root],
            skipped=skipped,
        )
        return with_purposes(found, sources[0]) if booktest else found
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
    A booktest change's description is its test's docstrings (:func:`with_purposes`).
    """
    sources = [str(s) for s in sources]
    if len(sources) == 2:
        return _pair(store, sources, include, exclude, skipped)
    if len(sources) == 1:
        return _single(store, sources[0])
    raise ChangeError(f"{len(sources)} sources given", where="sources", fix=_FORMS)
