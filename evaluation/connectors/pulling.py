"""Items in: a source's items become a hilbot run, or join the growing run of a source that follows.

:func:`pull_run` validates the source's settings (its own pydantic model: an unknown or bad
setting is one line naming it), calls the source, records the call in
``connectors-calls.jsonl`` and writes the run through the store: a new run whole, or, for a
run that already exists (a source that keeps producing items), only the items whose origin it
does not hold yet, appended to the run's file. A run that grows has no summary, so the bots
deal its new items as they arrive.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from pydantic import ValidationError

from ..records import ConnectorCall, JudgeInfo, QueryEvaluation, RunHeader, RunSummary
from ..runs import average_scores
from ..scrub import scrub
from ..store import validate_run_id
from .base import ConnectorError, Origin, Pulled, sources

if TYPE_CHECKING:
    from ..config import HilbotConfig
    from ..store import Store

DEFAULT_DIMENSIONS = {
    "search": ["overall"],
    "answer": ["answer"],
    "scenario": ["trigger-accuracy", "code-validity", "technical-accuracy", "completeness"],
}
"""The dimensions a pulled run is rated on unless its source says otherwise (as ``hilbot
import``'s)."""


@dataclass
class PullReport:
    """What a pull did."""

    run_id: str
    """The run the items went to."""
    added: int
    """Items added (new run, or new items of a growing run)."""
    found: int
    """Items the source returned."""
    source: str
    """Where they came from, in words."""


def check_settings(tool: str, settings: Mapping[str, Any]) -> Any:
    """The source's settings model for ``settings``; one :class:`ConnectorError` for a bad one."""
    spec = sources.get(tool)
    try:
        return spec.settings(**settings)
    except ValidationError as exc:
        raise ConnectorError(
            f"{tool}: {_first(exc)}",
            where=f"[sources] {tool}",
            fix=f"settings of a {tool} source: {', '.join(spec.settings.model_fields)}",
        ) from None


def _first(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    return f"{loc}: {err['msg']}" if loc else err["msg"]


def pull_run(
    store: "Store",
    config: "HilbotConfig",
    tool: str,
    settings: Mapping[str, Any],
    env: Mapping[str, str],
    *,
    run_id: str | None = None,
    dimensions: list[str] | None = None,
    follow: bool = False,
) -> PullReport:
    """Pull from ``tool`` with ``settings`` into run ``run_id`` (default: a new timestamp id).

    With ``follow`` the run grows: it is made without a summary, and a later pull into it adds the
    items it does not hold yet. Otherwise the run is made whole, and an existing ``run_id`` is an
    error.
    """
    spec = sources.get(tool)
    checked = check_settings(tool, settings)
    if run_id is not None and not (follow and store.run_exists(run_id)):
        store.ensure_free(validate_run_id(run_id))
    pulled = _call(store, tool, lambda: spec.pull(checked, env))
    if follow and run_id is not None and store.run_exists(run_id):
        return _grow(store, run_id, pulled)
    return _create(store, config, tool, pulled, run_id, dimensions, follow)


def _call(store: "Store", tool: str, pull: Any) -> Pulled:
    """Run the source, recording the call (and its failure) in ``connectors-calls.jsonl``."""
    started = time.monotonic()
    try:
        pulled = pull()
    except ConnectorError as exc:
        store.connector_calls.append(
            ConnectorCall(
                tool=tool,
                operation="pull",
                seconds=time.monotonic() - started,
                error=scrub(str(exc)),
            )
        )
        raise
    store.connector_calls.append(
        ConnectorCall(
            tool=tool,
            operation="pull",
            where=pulled.source,
            count=len(pulled.items),
            seconds=time.monotonic() - started,
        )
    )
    return pulled


def _create(
    store: "Store",
    config: "HilbotConfig",
    tool: str,
    pulled: Pulled,
    run_id: str | None,
    dimensions: list[str] | None,
    follow: bool,
) -> PullReport:
    if not pulled.items and not follow:
        raise ConnectorError(
            f"{pulled.source}: nothing to review",
            fix="check the source's settings (queue, filter, "
            "time range); a source that keeps producing items can follow it: [sources.NAME] follow "
            "= true",
        )
    generated = run_id is None
    new_id = run_id or store.new_run_id()
    chosen = dimensions or DEFAULT_DIMENSIONS[pulled.kind]
    unknown = [d for d in chosen if d not in config.dimensions]
    if unknown:
        raise ConnectorError(
            f"unknown dimension {unknown[0]!r}", fix=f"use one of {', '.join(config.dimensions)}"
        )
    judge = JudgeInfo(name=pulled.judge or tool, kind="recorded")
    header = RunHeader(
        run_id=new_id,
        set=pulled.set_name,
        kind=pulled.kind,
        source=pulled.source,
        judge=judge,
        dimensions=chosen,
        item_count=len(pulled.items),
    )
    records = (QueryEvaluation(run_id=new_id, data=item) for item in pulled.items)
    summary = (
        None
        if follow
        else RunSummary(
            run_id=new_id, item_count=len(pulled.items), averageScores=average_scores(pulled.items)
        )
    )
    placed = store.create_run(header, records, summary, generated=generated)
    return PullReport(placed.stem, len(pulled.items), len(pulled.items), pulled.source)


def _grow(store: "Store", run_id: str, pulled: Pulled) -> PullReport:
    """Append the items whose origin the run does not hold yet (ids made unique within the run)."""
    run = store.load_run(run_id)
    if run.summary is not None:
        raise ConnectorError(
            f"run {run_id!r} is complete and does not grow",
            where=str(store.run_path(run_id)),
            fix="pull into a new run (another --run-id), or leave --run-id out",
        )
    held = {origin_key(item.features) for item in run.items}
    ids = {item.id for item in run.items}
    new = []
    for item in pulled.items:
        key = origin_key(item.features)
        if key in held:
            continue
        held.add(key)
        while item.id in ids:
            item = item.model_copy(update={"id": f"{item.id}~"})
        ids.add(item.id)
        new.append(item)
    store.run_log(run_id).append_many(QueryEvaluation(run_id=run_id, data=item) for item in new)
    return PullReport(run_id, len(new), len(pulled.items), pulled.source)


def origin_of(features: Mapping[str, Any]) -> Origin | None:
    """An item's origin, if it came from a source (and the record is well formed)."""
    raw = features.get("origin")
    if not isinstance(raw, dict):
        return None
    try:
        return Origin(**raw)
    except (ValidationError, TypeError):
        return None


def origin_key(features: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(tool, kind, id) of an item's origin: what makes two pulled items the same."""
    origin = origin_of(features)
    return None if origin is None else (origin.tool, origin.kind, origin.id)


__all__ = [
    "DEFAULT_DIMENSIONS",
    "PullReport",
    "check_settings",
    "origin_key",
    "origin_of",
    "pull_run",
]
