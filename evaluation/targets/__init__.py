"""Targets: how the system under test's outputs are obtained, one kind of target per module.

- ``--target module:function`` (:mod:`.python`): a sync or async callable taking the query text
  and returning an answer (``str``), ranked results (a ``list`` of dicts or paths), or a ``dict``
  with any of ``answer``, ``results``, ``quotes``, ``contexts``, ``usage``, ``cost_usd``,
  ``model``.
- ``--target-cmd 'CMD'`` (:mod:`.command`): a command printing that JSON (or plain text, an
  answer) on stdout. The query never becomes part of a command line a shell reads: with
  ``{query}`` the command is split into arguments (``shlex``) and run *without a shell*,
  ``{query}`` replaced by the query as one whole argument. Shell syntax in such a template is
  refused up front (:mod:`.template`), and so is ``{query}`` anywhere a program could run it
  (:func:`query_refusal`, :mod:`.placement`): inside another argument, after an option no ``--``
  has ended, where a program is named, or among the arguments of a program known to run them
  (shells, interpreters, ``ssh``, ``xargs``...; looked up through ``env``, ``timeout`` and the
  other wrappers, :mod:`.programs`). A query starting with ``-`` where the program still reads
  options is an error on its item. Without ``{query}`` the command runs through the shell (pipes
  work) and reads the query from stdin. Either way the query is also in the environment as
  ``HILBOT_QUERY``. A non-zero exit, a timeout or a query that cannot be passed (a NUL byte, too
  long for one argument) is recorded on the item and the run goes on.
- ``--outputs FILE`` (:mod:`.outputs`): precomputed outputs (JSONL or a JSON list), matched to
  cases by ``id`` (or by the query text).

:mod:`.base` holds what every kind shares: :class:`Target`, :class:`TargetOutput`,
:class:`TargetError` and :func:`make_target`, which builds the kind the options name. Every call
is timed; the latency and the target's own cost are recorded on the item.
"""

from __future__ import annotations

from .base import Target, TargetError, TargetOutput, make_target, to_output
from .command import MAX_ARG_BYTES, CommandTarget
from .outputs import OutputsTarget
from .placement import PLACEHOLDER, query_refusal
from .python import PythonTarget

__all__ = [
    "MAX_ARG_BYTES",
    "PLACEHOLDER",
    "CommandTarget",
    "OutputsTarget",
    "PythonTarget",
    "Target",
    "TargetError",
    "TargetOutput",
    "make_target",
    "query_refusal",
    "to_output",
]
