"""Langfuse: annotation queues, dataset runs and traces in; human labels back out as scores.

The source pulls one of three things (exactly one mode):

* ``queue``: an annotation queue's PENDING items, each a trace or an observation;
* ``dataset`` + ``dataset_run``: the items of one run (an *experiment*) of a dataset;
* a trace filter: ``name``, ``tags``, ``from_time`` / ``to_time``, ``score_below``.

Each item's query comes from the input, its answer from the output, its contexts from the
trace's retrieval observations, and the AI judges' scores already on it (source EVAL or API) go
into ``item.evaluation``, hidden from reviewers until they have rated (see :mod:`.shapes` for
every shape recognised). The sink writes each human label as a Langfuse score whose id is the
label's remote id, so a re-send or a corrected rating updates the same score (see :mod:`.sink`).

Built for the Langfuse Python SDK 5 (``pip install 'hilbot[langfuse]'``, ``langfuse>=5``) and the
APIs it speaks: Langfuse Cloud or a self-hosted Langfuse v4.59 or later. The SDK is imported only
when a pull or push runs. Keys and host come from the environment: ``LANGFUSE_PUBLIC_KEY``,
``LANGFUSE_SECRET_KEY``, ``LANGFUSE_BASE_URL`` (or ``LANGFUSE_HOST``), ``LANGFUSE_TIMEOUT``, and
``LANGFUSE_RATE_PER_S`` (reads a second a pull keeps to, e.g. ``0.5`` on the Hobby plan; see
:mod:`._client`).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from ..base import Env, Pulled, Sink, SinkSpec, SourceSpec, settings_model, sink, source

RATE_PER_S = 0.25
"""Sends (and confirms) a second. Langfuse Cloud's documented limit for the public API's "all other
APIs" class, which ``POST /scores`` and ``GET /v3/scores`` belong to, is 30 requests a minute on
the Hobby plan (100 Core, 1,000 Pro/Team/Enterprise; https://langfuse.com/faq/all/api-limits); a
send is two of those requests (the read of existing scores, the write), so 15 sends a minute keep
within the smallest plan. Annotation-queue updates count against a limit of their own."""
BATCH = 100
"""Labels a send carries: one ``POST /scores`` of up to 100 scores (a larger body is split to stay
under Langfuse's 1 MB limit), and one ``GET /v3/scores`` of 100 ids to confirm them (a page of v3
scores holds 100, so a confirm is one page)."""


class ScoreBelow(BaseModel):
    """A score name and a threshold: traces whose score of that name is below it."""

    model_config = settings_model()

    name: str = Field(min_length=1)
    """The score's name."""
    threshold: float = Field(allow_inf_nan=False)
    """Traces whose score is strictly below this are pulled (booleans count as 1 and 0)."""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        """``name<0.5`` (as a command-line option gives it) as a name and a threshold."""
        if isinstance(data, str):
            mark = "<" if "<" in data else "="
            name, found, threshold = data.rpartition(mark)
            if not found or not name.strip() or not threshold.strip():
                raise ValueError("give a score name and a threshold, e.g. helpfulness<0.5")
            return {"name": name.strip(), "threshold": threshold.strip()}
        return data


class LangfuseSource(BaseModel):
    """What ``[sources.X] type = "langfuse"`` (and ``hilbot pull langfuse --…``) take."""

    model_config = settings_model()

    queue: str | None = None
    """An annotation queue's id: its PENDING items (traces and observations) are pulled."""
    dataset: str | None = None
    """A dataset's name; with ``dataset_run``, the items of that run (an experiment) are pulled."""
    dataset_run: str | None = None
    """The name of the dataset run (experiment) to pull."""
    name: str | None = None
    """Trace filter: only traces of this name."""
    tags: list[str] = Field(default_factory=list)
    """Trace filter: only traces carrying all these tags."""
    from_time: datetime | None = None
    """Only traces (or runs) started at or after this time (UTC when no zone is given)."""
    to_time: datetime | None = None
    """Only traces started before this time (UTC when no zone is given)."""
    score_below: ScoreBelow | None = None
    """Trace filter: traces whose score of a name is below a threshold (``helpfulness<0.5``)."""
    limit: int = Field(1000, ge=1, le=100_000)
    """At most this many items are pulled (any mode)."""
    contexts: bool = True
    """Read each trace's retrievals as contexts (one more request an item, but for queues)."""
    overall: str | None = None
    """The AI score taken as an item's headline ``overall`` score, if any."""

    @field_validator("from_time", "to_time")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        """A time without a zone is UTC."""
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value

    @model_validator(mode="after")
    def _one_mode(self) -> "LangfuseSource":
        """Exactly one mode: a queue, a dataset run, or a trace filter."""
        filtered = bool(self.name or self.tags or self.score_below or self.to_time)
        others = self.dataset or self.dataset_run or filtered or self.from_time
        if self.queue is not None and others:
            raise ValueError(
                "queue takes no other mode's settings: give a queue, a dataset and "
                "dataset_run, or a trace filter (name, tags, from_time, to_time, "
                "score_below)"
            )
        if (self.dataset is None) != (self.dataset_run is None):
            raise ValueError(
                "dataset and dataset_run go together: the run (experiment) of a dataset to pull"
            )
        if self.dataset is not None and filtered:
            raise ValueError(
                "a dataset run takes no trace filter (only from_time, to bound the runs searched)"
            )
        if self.queue is None and self.dataset is None and not (filtered or self.from_time):
            raise ValueError(
                "say what to pull: a queue, a dataset and dataset_run, or a trace "
                "filter (name, tags, from_time, to_time, score_below)"
            )
        if self.from_time and self.to_time and self.from_time >= self.to_time:
            raise ValueError("from_time must come before to_time")
        return self


class LangfuseSink(BaseModel):
    """What ``[sinks.X] type = "langfuse"`` (and ``hilbot push RUN --to langfuse --…``) take."""

    model_config = settings_model()

    names: dict[str, str] = Field(default_factory=dict)
    """A dimension's score name where it differs (``--names answer=correctness,tone=style``)."""
    data_type: Literal["auto", "NUMERIC", "BOOLEAN", "CATEGORICAL"] = "auto"
    """``auto``: two options BOOLEAN, a number NUMERIC, else CATEGORICAL (when no config says)."""
    gold_suffix: str = ""
    """Appended to a gold label's score name (``-gold``); its metadata says hilbot_gold=true."""
    complete_items: bool = True
    """Mark an annotation queue item COMPLETED once its label is complete (k ratings)."""

    @field_validator("names", mode="before")
    @classmethod
    def _names_from_text(cls, value: Any) -> Any:
        """``answer=correctness,tone=style`` (a command-line value) as a mapping."""
        if isinstance(value, str):
            pairs = [part.split("=", 1) for part in value.split(",") if part.strip()]
            if any(len(pair) != 2 or not pair[0].strip() or not pair[1].strip() for pair in pairs):
                raise ValueError("give dimension=name pairs, e.g. answer=correctness,tone=style")
            return {key.strip(): name.strip() for key, name in pairs}
        return value

    @field_validator("names")
    @classmethod
    def _no_empty_names(cls, value: dict[str, str]) -> dict[str, str]:
        if any(not name.strip() for name in value.values()):
            raise ValueError("a score name may not be empty")
        return value


def pull(settings: LangfuseSource, env: Env) -> Pulled:
    """The source: pull the items ``settings`` name (see :mod:`.source`)."""
    from .source import pull as pull_items

    return pull_items(settings, env)


def make(settings: LangfuseSink, env: Env) -> Sink:
    """The sink: checks the keys and the host (nothing is sent yet)."""
    from .sink import ScoreSink

    return ScoreSink(settings, env)


class _SourceSpec(SourceSpec):
    """The source's spec as a class of this module: the registry takes a built-in's name only from
    its home module, which it reads from the spec's ``__module__`` (a plain SourceSpec's is
    ``base``)."""


class _SinkSpec(SinkSpec):
    """The sink's spec as a class of this module (see :class:`_SourceSpec`)."""


source(_SourceSpec(name="langfuse", extra="langfuse", settings=LangfuseSource, pull=pull))
sink(
    _SinkSpec(
        name="langfuse",
        extra="langfuse",
        settings=LangfuseSink,
        make=make,
        rate_per_s=RATE_PER_S,
        batch=BATCH,
    )
)

__all__ = ["BATCH", "RATE_PER_S", "LangfuseSink", "LangfuseSource", "ScoreBelow", "make", "pull"]
