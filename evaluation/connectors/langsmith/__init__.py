"""LangSmith: runs in (an annotation queue's, a project's, an experiment's), human labels back out
as feedback on those runs.

``hilbot pull langsmith --queue Q`` (or ``--project P``, ``--experiment E``) makes a run of the
runs found, each keeping its run id, trace, project and queue in ``features["origin"]``; the
evaluators' feedback on them is the AI judge's view (hidden from reviewers until they rate).
``hilbot push RUN --to langsmith`` writes each label as feedback with a deterministic id, so a
re-send or a corrected rating updates the same feedback.

The key comes from ``LANGSMITH_API_KEY`` (or ``LANGCHAIN_API_KEY``), the host from
``LANGSMITH_ENDPOINT`` (default LangSmith Cloud; a self-hosted ``https://host/api/v1`` works as
it is) and, for an org-scoped key, the workspace from ``LANGSMITH_WORKSPACE_ID``. The ``langsmith``
SDK is imported only when a pull or a push runs (:mod:`._api` holds every call into it).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from ..base import Env, Pulled, Sink, SinkSpec, SourceSpec, settings_model, sink, source

SourceType = Literal["api", "model", "app", "auto_eval"]
"""LangSmith's feedback source types."""
JUDGE_SOURCES: tuple[SourceType, ...] = ("model", "auto_eval")
"""The feedback read as the AI judge's by default: evaluators' and online evaluators'."""
RunType = Literal["tool", "chain", "llm", "retriever", "embedding", "prompt", "parser"]
"""LangSmith's run types."""


class LangSmithSource(BaseModel):
    """Where to pull from: exactly one of ``queue``, ``project`` and ``experiment``."""

    model_config = settings_model()

    queue: str | None = None
    """An annotation queue's id: the runs waiting in it."""
    project: str | None = None
    """A tracing project's name (or id): its runs, newest first."""
    experiment: str | None = None
    """An experiment's name (or id): its runs, with their reference examples' expected outputs."""
    filter: str | None = None
    """A LangSmith filter on the project's or experiment's runs, e.g. ``eq(feedback_key, "x")``."""
    run_type: RunType | None = None
    """Only runs of this type (a project's ``llm`` calls, say) rather than whole traces."""
    roots: bool | None = None
    """Only root runs, one item per trace (default: yes, unless ``run_type`` is given)."""
    start_time: datetime | None = None
    """Only runs started at or after this time (ISO 8601)."""
    limit: int = Field(1000, ge=1)
    """At most this many items."""
    page_size: int = Field(100, ge=1, le=100)
    """Runs asked for per request (the API serves at most 100)."""
    contexts: bool = True
    """Fetch the documents each run's trace retrieved (one query per trace) as its contexts."""
    judge_sources: list[SourceType] = Field(default_factory=lambda: list(JUDGE_SOURCES))
    """Feedback read as the AI judge's scores: evaluators log ``model``, online evaluators
    ``auto_eval``; empty: no feedback is read."""
    timeout_s: float = Field(30.0, gt=0, le=600)
    """Seconds to wait for each answer."""

    @model_validator(mode="after")
    def _one_mode(self) -> "LangSmithSource":
        modes = [name for name in ("queue", "project", "experiment") if getattr(self, name)]
        if len(modes) != 1:
            raise ValueError(
                "give exactly one of queue, project and experiment"
                + (f" (not {' and '.join(modes)})" if modes else "")
            )
        if self.queue and (
            self.filter or self.run_type or self.start_time or self.roots is not None
        ):
            raise ValueError(
                "filter, run_type, roots and start_time select a project's or an "
                "experiment's runs; a queue's runs are all pulled"
            )
        return self


class LangSmithSink(BaseModel):
    """How labels go back as feedback."""

    model_config = settings_model()

    names: dict[str, str] = Field(default_factory=dict)
    """Feedback key per dimension (default: the dimension's name)."""
    score: Literal["unit", "number"] = "unit"
    """The feedback's score: the option's 0–1 score (``unit``; a boolean on a two-option
    scale), or the scale's own number where it has one (``number``, e.g. 1–5)."""
    on_complete: Literal["remove", "keep"] = "remove"
    """What a complete item's run does in the annotation queue it came from: leaves it, or stays."""
    timeout_s: float = Field(30.0, gt=0, le=600)
    """Seconds to wait for each answer."""


def pull(settings: LangSmithSource, env: Env) -> Pulled:
    """The source: the items of a queue, project or experiment (imports the SDK)."""
    from ._source import pull as pull_from

    return pull_from(settings, env)


def make(settings: LangSmithSink, env: Env) -> Sink:
    """The sink (checks the key and host; imports the SDK)."""
    from ._sink import LangSmithFeedbackSink

    return LangSmithFeedbackSink(settings, env)


RATE_PER_S = 2000 / 60 / 2
"""Sends a second: LangSmith allows every API key 2000 requests a minute on any endpoint (5000 for
``POST /feedback``; docs.smith.langchain.com/concepts/usage_and_billing/rate_limits), and a send is
usually two of them (a read of the id, then the write)."""


class _Source(SourceSpec):
    """The source's spec, of a class of this module: the registry accepts a built-in's name only
    from its own module, and a plain ``SourceSpec`` reports ``evaluation.connectors.base``."""


class _Sink(SinkSpec):
    """The sink's spec, of a class of this module (see :class:`_Source`)."""


__all__ = ["LangSmithSink", "LangSmithSource", "RATE_PER_S", "make", "pull"]

source(_Source(name="langsmith", extra="langsmith", settings=LangSmithSource, pull=pull))
sink(
    _Sink(
        name="langsmith",
        extra="langsmith",
        settings=LangSmithSink,
        make=make,
        rate_per_s=RATE_PER_S,
        batch=1,
    )
)
