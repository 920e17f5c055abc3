"""What a change is: one output whose expected (previous) and actual (current) versions differ,
found in snapshot trees, in two runs or in a file of rows (:class:`Change`), and the one error of
finding changes (:class:`ChangeError`). Every source gives its changes sorted by ``path`` then
``id`` (:func:`sorted_changes`).
"""

from __future__ import annotations

from typing import Iterable, Literal

from pydantic import BaseModel, ConfigDict

from ..errors import HilbotError


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


def change_status(
    expected: str | None, actual: str | None
) -> Literal["changed", "added", "removed"]:
    """A change's status from which versions there are (at least one is)."""
    if expected is not None and actual is not None:
        return "changed"
    return "added" if actual is not None else "removed"


def sorted_changes(changes: Iterable[Change | None]) -> list[Change]:
    """The changes (Nones dropped) by ``path`` then ``id``."""
    return sorted((c for c in changes if c is not None), key=lambda c: (c.path, c.id))
