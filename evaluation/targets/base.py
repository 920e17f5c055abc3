"""The interface every kind of target meets, and the factory that picks the kind the options name.

A target is the system under test: called with a :class:`~evaluation.cases.Case`, it returns a
:class:`TargetOutput` (the answer, ranked results, quotes, contexts, usage, cost and model, or why
there is none: a failure is returned on the output, never raised). :func:`to_output` reads what a
system returned, :func:`failed_output` and :func:`first_line` record a failure the same way for
every kind, and :func:`make_target` builds the one target ``--target``, ``--target-cmd`` or
``--outputs`` names. Every call is timed; the latency and the target's own cost are recorded on
the item.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Protocol

from pydantic import Field

from ..cases import Case
from ..errors import HilbotError
from ..records import Model, SearchResult


class TargetError(HilbotError):
    """A target cannot be set up (bad module path, missing outputs file)."""


class TargetOutput(Model):
    """What the system under test produced for one case."""

    answer: str | None = None
    """The answer text."""
    results: list[SearchResult] = Field(default_factory=list)
    """Ranked results."""
    quotes: list[str] = Field(default_factory=list)
    """Passages cited verbatim."""
    contexts: list[str] = Field(default_factory=list)
    """Retrieved passages the answer was grounded on."""
    usage: dict[str, int] = Field(default_factory=dict)
    """Tokens used (input_tokens, output_tokens)."""
    cost_usd: float | None = None
    """What producing the output cost."""
    model: str | None = None
    """Model the system used, if it says."""
    latency_ms: float | None = None
    """Time taken (measured by hilbot unless precomputed)."""
    error: str | None = None
    """Why there is no output."""


class Target(Protocol):
    """The system under test."""

    name: str

    async def __call__(self, case: Case) -> TargetOutput:
        """Produce the output for one case (errors are returned on the output, not raised)."""
        ...


def to_output(value: Any) -> TargetOutput:
    """Interpret what a target returned (str, list of results, or dict)."""
    if isinstance(value, TargetOutput):
        return value
    if isinstance(value, str):
        return TargetOutput(answer=value)
    if isinstance(value, list):
        value = {"results": value}
    if not isinstance(value, dict):
        raise ValueError(f"a target must return str, list or dict, not {type(value).__name__}")
    if not isinstance(value.get("results") or [], list):
        raise ValueError(f"results must be a list, not {type(value['results']).__name__}")
    results: list[dict[str, Any]] = [
        r if isinstance(r, dict) else {"path": str(r)} for r in value.get("results") or []
    ]
    for rank, result in enumerate(results, 1):
        result.setdefault("rank", rank)
    return TargetOutput.model_validate({**value, "results": results})


def failed_output(message: str, started: float) -> TargetOutput:
    """An output that is only an error, timed from ``started`` (a ``time.perf_counter()``)."""
    return TargetOutput(error=message, latency_ms=round((time.perf_counter() - started) * 1000, 1))


def first_line(exc: BaseException) -> str:
    """The last line of an error (where Python puts the message), scrubbed of secrets, at most 200
    characters."""
    from ..scrub import scrub

    return (scrub(str(exc)).strip().splitlines() or [""])[-1][:200]


def make_target(
    *,
    target: str | None = None,
    command: str | None = None,
    outputs: str | Path | None = None,
    timeout_s: float = 60.0,
) -> Target:
    """The one target the options name (exactly one of them)."""
    given = [
        name
        for name, value in (("--target", target), ("--target-cmd", command), ("--outputs", outputs))
        if value
    ]
    if len(given) != 1:
        raise TargetError(
            "give exactly one of --target, --target-cmd, --outputs (got "
            f"{', '.join(given) or 'none'})",
            fix="e.g. --target examples.docs_search:search",
        )
    # each kind is imported when named (they import this module: no cycle at import time)
    if target:
        from .python import PythonTarget

        return PythonTarget(target, timeout_s)
    if command:
        from .command import CommandTarget

        return CommandTarget(command, timeout_s)
    from .outputs import OutputsTarget

    return OutputsTarget(outputs)  # type: ignore[arg-type]
