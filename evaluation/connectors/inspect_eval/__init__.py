"""inspect_ai: the samples of an eval log as a hilbot run, human labels back as score edits.

The source reads one log file (``.eval`` or ``.json``) with ``inspect_ai.log``: each sample
(and epoch) becomes an item whose query is the sample's input (a chat's last user message),
whose answer is the model's completion and whose expected answer is the target; every scorer's
score becomes a 0–1 AI score (``overall`` is the judging scorer's: ``scorer``, else the log's
headline scorer), its explanation the reason, hidden from reviewers until they have rated. The
sample's metadata become the item's features. An item's id is the sample's id, ``id#epoch``
when the log has several epochs; so is its origin's id (two epochs of a sample are two items),
and the origin keeps the log's absolute path, the epoch, the sample's raw id and uuid, the task
and the eval id.

The sink writes each label as a score edit of inspect_ai's (see :mod:`._sink`) into a copy of
the log beside it (``<name>.hilbot.eval``), into ``out``, or into the log itself
(``in_place``); files have no rate limit, and one call rewrites a log once for all its labels.

``inspect_ai`` is imported only by the functions that read or write a log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, Field

from ...records import ItemData
from ..base import (
    ConnectorError,
    Env,
    Origin,
    Pulled,
    SinkSpec,
    SourceSpec,
    settings_model,
    sink,
    source,
)
from . import _items, _logs
from ._items import TOOL
from ._sink import InspectSink

EXTRA = "inspect"
"""The optional dependency that installs inspect_ai (``pip install 'hilbot[inspect]'``)."""


class InspectSource(BaseModel):
    """What ``hilbot pull inspect_ai`` reads: one inspect_ai log."""

    model_config = settings_model()

    log: str
    """The log file inspect_ai wrote (``.eval`` or ``.json``), e.g. ``logs/…_task_….eval``."""
    scorer: str | None = None
    """The scorer (or a dict scorer's key) whose score is the AI judgment when the log has
    several; default: the log's headline scorer, else its first."""
    epoch: int | None = Field(default=None, ge=1)
    """Only this epoch's samples; default: every epoch (an item per sample and epoch)."""
    limit: int | None = Field(default=None, ge=1)
    """At most this many items (the log's first, in dataset order)."""


class InspectSinkSettings(BaseModel):
    """Where ``hilbot push RUN --to inspect_ai`` writes the labels."""

    model_config = settings_model()

    in_place: bool = False
    """Write the labels into the original log itself (atomically) instead of a copy."""
    out: str | None = None
    """The log file to write (labels of one log), or a directory for ``<name>.hilbot.eval``
    copies; default: the copy beside the original log."""
    names: dict[str, str] = Field(default_factory=dict)
    """Dimension → score name; default ``human_<dimension>`` (``…_gold`` for gold labels)."""


# ------------------------------------------------------------------------------------- pull


def pull(settings: InspectSource, env: Env) -> Pulled:
    """The log's samples as the items of a run (``env`` is unused: a log file needs no key)."""
    path = _logs.checked_path(settings.log)
    header = _logs.read_header(path)
    epochs = _epochs(header)
    if settings.epoch is not None and settings.epoch > epochs:
        raise ConnectorError(
            f"the log has {epochs} epoch(s), not epoch {settings.epoch}",
            where=str(path),
            fix=f"give --epoch 1…{epochs}, or leave it out",
        )
    items: list[ItemData] = []
    judge: str | None = None
    for n, sample in enumerate(_samples(path, header, settings, epochs)):
        if n == 0:
            judge = _judge(settings.scorer, header, sample, path)
        items.append(_item(path, header, sample, epochs, judge))
    return Pulled(
        kind="answer",
        source=f"inspect_ai log {path}",
        set_name=_task(header, path),
        items=_unique(items),
        judge=judge,
    )


def _epochs(header: Any) -> int:
    config = getattr(getattr(header, "eval", None), "config", None)
    epochs = getattr(config, "epochs", None)
    return int(epochs) if isinstance(epochs, int) and epochs > 0 else 1


def _task(header: Any, path: Path) -> str:
    task = getattr(getattr(header, "eval", None), "task", None)
    return str(task) if task else path.stem


def _samples(path: Path, header: Any, settings: InspectSource, epochs: int) -> Iterator[Any]:
    """The samples to pull, in dataset order, at most ``limit`` of them."""
    wanted = _wanted(header, settings, epochs)
    count = 0
    for sample in _logs.read_samples(path, header, wanted):
        if settings.epoch is not None and getattr(sample, "epoch", 1) != settings.epoch:
            continue
        yield sample
        count += 1
        if settings.limit is not None and count >= settings.limit:
            return


def _wanted(header: Any, settings: InspectSource, epochs: int) -> list[tuple[Any, int]] | None:
    """The (id, epoch) pairs to read one by one: known only for a finished log listing its ids."""
    ids = getattr(getattr(getattr(header, "eval", None), "dataset", None), "sample_ids", None)
    if getattr(header, "status", None) != "success" or not ids:
        return None
    chosen = [settings.epoch] if settings.epoch is not None else range(1, epochs + 1)
    wanted = [(sample_id, epoch) for sample_id in ids for epoch in chosen]
    return wanted[: settings.limit] if settings.limit is not None else wanted


def _judge(wanted: str | None, header: Any, sample: Any, path: Path) -> str | None:
    """The scorer whose score is ``overall``: the one asked for, else the log's headline."""
    names = _items.names_of(getattr(header, "results", None), [sample])
    if wanted is not None:
        if wanted not in names:
            known = ", ".join(names) or "(none: it was not scored)"
            raise ConnectorError(
                f"the log has no scorer {wanted!r}", where=str(path), fix=f"use one of {known}"
            )
        return wanted
    headline = getattr(getattr(header, "results", None), "headline", None)
    for name in (getattr(headline, "score", None), getattr(headline, "scorer", None)):
        if isinstance(name, str) and name in names:
            return name
    return names[0] if names else None


def _item(path: Path, header: Any, sample: Any, epochs: int, judge: str | None) -> ItemData:
    """One sample as an item, with its origin."""
    epoch = int(getattr(sample, "epoch", 1) or 1)
    item_id = _items.item_id(sample.id, epoch, epochs)
    info = getattr(header, "eval", None)
    extra: dict[str, Any] = {
        "log": str(path),
        "epoch": epoch,
        "sample_id": sample.id,
        "task": _task(header, path),
        "eval_id": getattr(info, "eval_id", None),
    }
    if getattr(sample, "uuid", None):
        extra["sample_uuid"] = str(sample.uuid)
    origin = Origin(tool=TOOL, kind="sample", id=item_id, extra=extra)
    model = getattr(info, "model", None)
    return _items.item(sample, item_id=item_id, origin=origin, judge=judge, model=model)


def _unique(items: list[ItemData]) -> list[ItemData]:
    """Items with distinct ids (sample ids ``1`` and ``"1"`` are one text): a repeat gets ``~``."""
    seen: set[str] = set()
    out = []
    for item in items:
        while item.id in seen:
            item = item.model_copy(update={"id": f"{item.id}~"})
        seen.add(item.id)
        out.append(item)
    return out


# ------------------------------------------------------------------------------------- push


def make(settings: InspectSinkSettings, env: Env) -> InspectSink:
    """The sink (``env`` is unused: a log file needs no key)."""
    if settings.in_place and settings.out:
        raise ConnectorError(
            "in_place and out both say where to write the labels",
            fix="give one: in_place = true (the original log) or out = PATH",
        )
    _logs.sdk()
    return InspectSink(settings)


class _SourceSpec(SourceSpec):
    """A source spec made here: the registry takes a built-in only from its home module, which
    it reads from the spec's ``__module__`` (a plain SourceSpec's is ``base``)."""


class _SinkSpec(SinkSpec):
    """A sink spec made here (see :class:`_SourceSpec`)."""


source(_SourceSpec(name=TOOL, extra=EXTRA, settings=InspectSource, pull=pull))
sink(
    _SinkSpec(
        name=TOOL,
        extra=EXTRA,
        settings=InspectSinkSettings,
        make=make,
        rate_per_s=1000.0,
        batch=500,
    )
)

__all__ = ["InspectSink", "InspectSinkSettings", "InspectSource", "make", "pull"]
