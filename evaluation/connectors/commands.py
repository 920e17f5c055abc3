"""The connector commands as library calls: ``hilbot pull``, ``hilbot push``, ``hilbot status``, and
the round ``hilbot serve`` runs every few seconds to keep the configured sources and sinks in step.

A name given to ``pull`` or ``push`` is a configured ``[sources.NAME]`` / ``[sinks.NAME]`` of
hilbot.toml, or else a tool's name (``langfuse``), with the settings given on the command line.
"""

from __future__ import annotations

import fnmatch
import threading
from typing import TYPE_CHECKING, Any, Mapping, Sequence, get_args, get_origin

from ..errors import HilbotError
from .base import ConnectorError, sinks, sources
from .outbox import PushReport, outbox_status, push_labels, run_labels
from .pulling import PullReport, origin_of, pull_run

if TYPE_CHECKING:
    from ..config import HilbotConfig
    from ..store import Store


def options_to_settings(tool: str, args: Sequence[str], *, sink: bool = False) -> dict[str, Any]:
    """``--queue q1 --tags a,b --root-spans-only`` as a source's (or sink's) settings: dashes become
    underscores, a list setting takes a comma-separated value (or the option repeated), a flag alone
    is true."""
    model = (sinks.get(tool) if sink else sources.get(tool)).settings
    fields = model.model_fields
    settings: dict[str, Any] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("--") or len(arg) < 3:
            raise HilbotError(
                f"unexpected argument {arg!r}",
                fix=f"give settings as --name value ({_names(fields)})",
            )
        name, eq, value = arg[2:].partition("=")
        key = name.replace("-", "_")
        if key not in fields:
            raise HilbotError(
                f"a {tool} {'sink' if sink else 'source'} has no setting --{name}",
                fix=f"use {_names(fields)}",
            )
        if not eq:
            value = rest.pop(0) if rest and not rest[0].startswith("--") else "true"
        settings[key] = _value(fields[key].annotation, value, settings.get(key))
    return settings


def _names(fields: Mapping[str, Any]) -> str:
    return ", ".join(f"--{name.replace('_', '-')}" for name in fields)


def _value(annotation: Any, value: str, before: Any) -> Any:
    if _is_list(annotation):
        return [*(before or []), *(v.strip() for v in value.split(",") if v.strip())]
    return value


def _is_list(annotation: Any) -> bool:
    if get_origin(annotation) in (list, tuple, set):
        return True
    return any(_is_list(arg) for arg in get_args(annotation))


# ----------------------------------------------------------------------------------------------
# pull


def pull_command(
    store: "Store",
    config: "HilbotConfig",
    name: str,
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    run_id: str | None = None,
    dimensions: list[str] | None = None,
) -> PullReport:
    """``hilbot pull NAME [--setting value …]``: items of a configured source or a tool into a
    run."""
    configured = config.sources.get(name)
    if configured is not None:
        settings = {**configured.settings(), **options_to_settings(configured.type, args)}
        target = run_id or configured.run_id or (name if configured.follow else None)
        return pull_run(
            store,
            config,
            configured.type,
            settings,
            env,
            run_id=target,
            dimensions=dimensions or configured.dimensions,
            follow=configured.follow,
        )
    if name not in sources:
        raise ConnectorError(
            f"no source {name!r}",
            fix=f"name a tool ({', '.join(sources.names())}) or a "
            f"[sources.NAME] of hilbot.toml ({', '.join(config.sources) or 'none configured'})",
        )
    return pull_run(
        store,
        config,
        name,
        options_to_settings(name, args),
        env,
        run_id=run_id,
        dimensions=dimensions,
    )


# ----------------------------------------------------------------------------------------------
# push


def _sink_of(config: "HilbotConfig", name: str, args: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """(tool, settings) of a configured sink or a tool named on the command line."""
    configured = config.sinks.get(name)
    if configured is not None:
        return configured.type, {
            **configured.settings(),
            **options_to_settings(configured.type, args, sink=True),
        }
    if name not in sinks:
        raise ConnectorError(
            f"no sink {name!r}",
            fix=f"name a tool ({', '.join(sinks.names())}) or a "
            f"[sinks.NAME] of hilbot.toml ({', '.join(config.sinks) or 'none configured'})",
        )
    return name, options_to_settings(name, args, sink=True)


def push_command(
    store: "Store",
    config: "HilbotConfig",
    run_id: str,
    name: str,
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    seconds: float = 60.0,
    retry_failed: bool = False,
) -> PushReport:
    """``hilbot push RUN --to NAME``: the run's labels to a configured sink or a tool, confirmed."""
    from ..reviews import Ledger

    tool, raw = _sink_of(config, name, args)
    settings = _checked(tool, raw)
    rate = config.sinks[name].rate_per_s if name in config.sinks else None
    run = store.load_run(run_id)
    if not any(origin_of(item.features) is not None for item in run.items):
        raise ConnectorError(
            f"run {run_id!r} did not come from another tool", fix="push a run made by `hilbot pull`"
        )
    labels = run_labels(Ledger.from_events(store.human_events()), run, config, tool)
    return push_labels(
        store,
        name,
        tool,
        settings,
        env,
        labels,
        seconds=seconds,
        retry_failed=retry_failed,
        rate_per_s=rate,
    )


def _checked(tool: str, raw: Mapping[str, Any]) -> Any:
    from pydantic import ValidationError

    spec = sinks.get(tool)
    try:
        return spec.settings(**raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConnectorError(
            f"{tool} sink: {'.'.join(map(str, err['loc']))}: {err['msg']}",
            fix=f"settings of a {tool} sink: {_names(spec.settings.model_fields)}",
        ) from None


def status_lines(store: "Store") -> list[str]:
    """``hilbot status``: what waits in the outbox, per sink, and why."""
    return outbox_status(store)


# ----------------------------------------------------------------------------------------------
# serve


def sync_round(
    store: "Store",
    config: "HilbotConfig",
    env: Mapping[str, str],
    *,
    stop: threading.Event | None = None,
) -> list[str]:
    """One round of ``hilbot serve``: pull what the following sources have new, push what the sinks
    have pending. Returns what went wrong, a line each (the next round tries again)."""
    from ..reviews import Ledger

    problems = []
    for name, source in config.sources.items():
        if source.follow:
            try:
                pull_command(store, config, name, [], env)
            except HilbotError as exc:
                problems.append(f"source {name}: {exc.one_line()}")
    if not config.sinks:
        return problems
    ledger = Ledger.from_events(store.human_events())
    for name, sink in config.sinks.items():
        problems += _push_round(store, config, ledger, name, sink, env, stop)
    return problems


def _push_round(
    store: "Store",
    config: "HilbotConfig",
    ledger: Any,
    name: str,
    sink: Any,
    env: Mapping[str, str],
    stop: threading.Event | None,
) -> list[str]:
    labels = []
    for run_id in store.run_ids():
        if any(fnmatch.fnmatchcase(run_id, pattern) for pattern in sink.runs):
            try:
                labels += run_labels(ledger, store.load_run(run_id), config, sink.type)
            except HilbotError:
                continue  # an unreadable run is reported by the commands that list runs
    if not labels:
        return []
    try:
        report = push_labels(
            store,
            name,
            sink.type,
            _checked(sink.type, sink.settings()),
            env,
            labels,
            seconds=config.connectors.push_budget_s,
            stop=stop,
            rate_per_s=sink.rate_per_s,
        )
    except HilbotError as exc:
        return [f"sink {name}: {exc.one_line()}"]
    return [f"sink {name}: {line}" for line in report.failed] + (
        [f"sink {name}: waiting: {report.error}"] if report.error and report.waiting else []
    )


__all__ = ["options_to_settings", "pull_command", "push_command", "status_lines", "sync_round"]
