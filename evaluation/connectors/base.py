"""What a connector is: a source that turns another tool's items into a run, a sink that writes
human labels back to it as that tool's own human feedback.

Each tool is a package of its own under :mod:`evaluation.connectors` (``langfuse``,
``langsmith``, ``inspect_eval``, ``phoenix``, ``promptfoo``) that registers its source and sink
by name (:func:`source`, :func:`sink`), exactly as a plugin in another distribution would
through the entry-point groups ``hilbot.sources`` and ``hilbot.sinks``. A tool's SDK is an optional
extra, imported only inside
the functions that talk to it, so ``hilbot --help`` never imports one.

A source is a callable ``pull(settings, env) -> Pulled``; a sink has ``send(labels) -> list[Sent]``
and ``confirm(sent) -> list[str]``; each is registered with a pydantic settings model. Both raise
:class:`ConnectorError` (a one-line error with the
fix; ``retry_after`` set when the platform asked to wait, ``transient`` for a 5xx or an
unreachable host) and nothing else. Keys come only from the environment (``env``), never from
``hilbot.toml``.

Every pulled item keeps where it came from in ``features["origin"]`` (:class:`Origin`), so its
labels can go back; a label's remote id is :func:`remote_id` of (run, item, dimension, reviewer),
so a re-sent or corrected label updates instead of adding a second one.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Callable, Literal, Mapping, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..errors import HilbotError
from ..records import ItemData, Timestamp
from ..registry import Registry
from .sdks import guard

guard()  # the tools' SDKs never change the process's logging, whoever imports them first

NAMESPACE = uuid.UUID("6f1d3c2e-8a3b-5f0e-9c1a-6b2d7e4f9a10")
"""The namespace of every remote id hilbot derives (uuid5)."""


class ConnectorError(HilbotError):
    """A source or sink failed: what, where (the host or file) and how to fix it.

    ``retry_after`` is the wait (seconds) the platform asked for (a 429's ``Retry-After``);
    ``transient`` is true when trying again later may work (a 5xx, a timeout, a refused
    connection); otherwise the failure is permanent for this label (a 4xx other than 429).
    """

    def __init__(
        self,
        message: str,
        *,
        fix: str | None = None,
        where: str | None = None,
        retry_after: float | None = None,
        transient: bool = False,
    ):
        super().__init__(message, fix=fix, where=where)
        self.retry_after = retry_after
        self.transient = transient or retry_after is not None


class Origin(BaseModel):
    """Where a pulled item came from: what its labels attach to in the other tool."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    """The tool: ``langfuse``, ``langsmith``, ``inspect_ai``, ``phoenix`` or ``promptfoo``."""
    kind: str
    """What ``id`` names there: ``trace``, ``observation``, ``run``, ``example``, ``span``,
    ``document``, ``sample`` or ``row``."""
    id: str
    """Its id there (a label is written onto this object)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """What a sink needs beyond the id: the queue and queue item, the trace of an observation,
    the project, the log file, the sample's epoch, a document's position, …"""


class Pulled(BaseModel):
    """What a source found: the items of a new (or growing) run."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["search", "answer", "scenario"] = "answer"
    """What each item is (a run's kind)."""
    source: str
    """Where they came from, in words (``langfuse annotation queue q-1 at http://…``)."""
    set_name: str
    """The set the run belongs to (the queue's, project's, dataset's or log's name)."""
    items: list[ItemData] = Field(default_factory=list)
    """The items; each has ``features["origin"]`` (an :class:`Origin` as a dict)."""
    judge: str | None = None
    """The name of the AI judge whose scores the items carry (an evaluator, a scorer), if any."""
    cursor: str | None = None
    """Where the next pull of a growing run starts (opaque to hilbot; the source's own)."""


class Label(BaseModel):
    """One human label on its way to the tool its item came from."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    """The hilbot run."""
    item_id: str
    """The item in the run."""
    dimension: str
    """What was rated (a score's, feedback's or annotation's name there)."""
    reviewer: str
    """Who rated it (``platform:id``), or who adjudicated a gold label."""
    reviewer_name: str | None = None
    """The reviewer's display name, when known."""
    judgment: str
    """The option chosen (the scale's value), e.g. ``good`` or ``yes``."""
    score: float | None = None
    """The option's score in 0–1."""
    number: float | None = None
    """The option's value on the scale's own numbers (1–5), when it has one."""
    options: list[str] = Field(default_factory=list)
    """Every option of the scale, in order (a categorical score config's categories)."""
    note: str | None = None
    """The reviewer's note on the item, sent as the comment."""
    correction: str | None = None
    """A corrected output the reviewer gave, where the scale asks for one."""
    gold: bool = False
    """An adjudicated gold label rather than one reviewer's rating."""
    origin: Origin
    """Where the item came from."""
    remote_id: str
    """The deterministic id the label has there (:func:`remote_id`)."""
    version: str
    """The idempotency key of the rating this label carries: a new rating is a new version."""
    timestamp: Timestamp
    """When the label was given (a re-send keeps it, so an upsert by id and time holds)."""
    complete: bool = False
    """The item has its k ratings on this dimension (a queue item may be marked done)."""
    resent: bool = True
    """A label with this id may be there already (the outbox has sent one before); False only when
    it surely is not, so a sink may skip reading what is there."""


class Sent(BaseModel):
    """A label the platform accepted."""

    model_config = ConfigDict(extra="forbid")

    remote_id: str
    """The label's id there."""
    version: str
    """:attr:`Label.version` of what was sent."""
    origin: Origin | None = None
    """Where the label's item came from (the outbox fills it in when it asks to confirm)."""


def remote_id(*parts: str) -> str:
    """A stable UUID for a label: ``uuid5`` of its parts (run, item, dimension, reviewer)."""
    return str(uuid.uuid5(NAMESPACE, "\x1f".join(parts)))


Env = Mapping[str, str]
"""The process environment (keys and hosts come only from here)."""


class Source(Protocol):
    """Pulls items from a tool: ``settings`` are the source's own (validated by its model)."""

    def __call__(self, settings: Any, env: Env) -> Pulled: ...


class Sink(Protocol):
    """Writes labels back to a tool as its own human feedback, idempotently."""

    def send(self, labels: list[Label]) -> list[Sent]:
        """Write the labels; returns those accepted. Raises :class:`ConnectorError` for the rest."""
        ...

    def confirm(self, sent: list[Sent]) -> list[str]:
        """The remote ids of ``sent`` that can be read back with the values sent."""
        ...


class SourceSpec(BaseModel):
    """What a tool registers as a source: its settings model and its pull."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str
    """The tool's name (``langfuse``): ``hilbot pull NAME`` and ``type = "NAME"`` in
    ``[sources.X]``."""
    extra: str
    """The optional dependency that installs its SDK (``pip install 'hilbot[langfuse]'``), or
    ``""``."""
    settings: type[BaseModel]
    """What a ``[sources.X]`` of this type (and ``hilbot pull``'s options) take; unknown keys are
    errors."""
    pull: Callable[[Any, Env], Pulled]
    """The source."""

    @property
    def module(self) -> str:
        """The module that registers it (the registry checks a built-in's home by this)."""
        return str(getattr(self.pull, "__module__", "") or "")


class SinkSpec(BaseModel):
    """What a tool registers as a sink: its settings model and how to make the sink."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str
    """The tool's name: ``hilbot push RUN --to NAME`` and ``type = "NAME"`` in ``[sinks.X]``."""
    extra: str
    """The optional dependency that installs its SDK, or ``""``."""
    settings: type[BaseModel]
    """What a ``[sinks.X]`` of this type takes; unknown keys are errors."""
    make: Callable[[Any, Env], Sink]
    """Makes the sink (checks its keys and host; raises :class:`ConnectorError`)."""
    rate_per_s: float = 10.0
    """The platform's documented write rate limit for labels (calls per second)."""
    batch: int = 1
    """How many labels one :meth:`Sink.send` call may carry."""

    @property
    def module(self) -> str:
        """The module that registers it (the registry checks a built-in's home by this)."""
        return str(getattr(self.make, "__module__", "") or "")


_BUILTINS = {
    "langfuse": "evaluation.connectors.langfuse",
    "langsmith": "evaluation.connectors.langsmith",
    "inspect_ai": "evaluation.connectors.inspect_eval",
    "phoenix": "evaluation.connectors.phoenix",
}

sources: Registry[SourceSpec] = Registry(
    "source",
    "hilbot.sources",
    builtins={**_BUILTINS, "promptfoo": "evaluation.connectors.promptfoo"},
    hint="use one of {names}",
)
"""Every source by tool name; a plugin adds one through the entry-point group ``hilbot.sources``."""

sinks: Registry[SinkSpec] = Registry(
    "sink", "hilbot.sinks", builtins=_BUILTINS, hint="use one of {names}"
)
"""Every sink by tool name; a plugin adds one through the entry-point group ``hilbot.sinks``."""


def source(spec: SourceSpec) -> SourceSpec:
    """Register a tool's source under its name (what the built-ins do at the end of their
    module)."""
    return sources.register(spec.name)(spec)


def sink(spec: SinkSpec) -> SinkSpec:
    """Register a tool's sink under its name."""
    return sinks.register(spec.name)(spec)


def settings_model() -> ConfigDict:
    """The model config every connector's settings use: unknown keys are errors."""
    return ConfigDict(extra="forbid", use_attribute_docstrings=True)


def require(env: Env, name: str, what: str) -> str:
    """A variable the connector needs, or the one-line error naming it."""
    value = env.get(name, "").strip()
    if not value:
        raise ConnectorError(
            f"{name} is not set",
            fix=f"export {name}=… ({what}); keys come only from the environment",
        )
    return value


def when(value: datetime | str | None) -> str | None:
    """An ISO 8601 time, or None."""
    return value.isoformat() if isinstance(value, datetime) else value


__all__ = [
    "NAMESPACE",
    "ConnectorError",
    "Env",
    "Label",
    "Origin",
    "Pulled",
    "Sent",
    "Sink",
    "SinkSpec",
    "Source",
    "SourceSpec",
    "remote_id",
    "require",
    "settings_model",
    "sink",
    "sinks",
    "source",
    "sources",
    "when",
]
