"""Labels out, never lost on the way: the outbox.

Every label on its way to a sink is a ``push`` record in the ratings log, one per state:
``pending`` (to send) → ``sent`` (the platform accepted it) → ``confirmed`` (read back with the
value sent); ``failed`` when the platform refused it for good (the reason says why). The records
are the outbox: what is pending is derived from the log, so a restart resumes where the last
process stopped, and :func:`outbox_status` tells what waits and why.

:func:`push_labels` sends what is not yet confirmed, in the sink's batches, paced to the
platform's documented rate, and retries within its time budget: a 429 waits its
``Retry-After``, a 5xx or an unreachable host backs off (0.5 s, doubling, at most 30 s). A label
is the latest rating of a reviewer on an item and dimension, with its note, plus each
adjudicated gold label; its remote id is derived from (run, item, dimension, reviewer), so a
corrected rating updates the same label there. Each call is recorded in
``connectors-calls.jsonl`` (what was sent where), scrubbed like every file hilbot writes.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Mapping

from ..records import Adjudication, ConnectorCall, Push, Rating
from ..scrub import scrub
from .base import ConnectorError, Label, Sent, Sink, SinkSpec, remote_id, sinks
from .pulling import origin_of

if TYPE_CHECKING:
    from ..config import HilbotConfig
    from ..reviews import Ledger
    from ..runs import Run
    from ..store import Store

BACKOFF_S = (0.5, 30.0)
"""The first wait after a transient failure, and the longest (it doubles in between)."""

PushState = Literal["pending", "sent", "confirmed", "failed"]
Operation = Literal["pull", "send", "confirm"]

_NEXT_CALL: dict[str, float] = {}
"""When each sink may be called next (monotonic time): the rate holds across pushes of one
process."""


@dataclass
class PushReport:
    """What a push did, per label state."""

    sink: str
    """The sink pushed to."""
    sent: int = 0
    """Labels the platform accepted in this push."""
    confirmed: int = 0
    """Labels read back with the value sent (in this push)."""
    waiting: int = 0
    """Labels still pending or not yet read back (they go out or are confirmed on a later push)."""
    failed: list[str] = field(default_factory=list)
    """Labels the platform refused for good, each with why."""
    error: str | None = None
    """The last transient error, when the time budget ran out on one."""

    def lines(self) -> list[str]:
        """The report in words."""
        lines = [
            f"{self.sink}: {self.sent} label(s) sent, {self.confirmed} confirmed, {self.waiting} "
            "waiting" + (f", {len(self.failed)} failed" if self.failed else "")
        ]
        lines += [f"  failed: {why}" for why in self.failed]
        if self.error and self.waiting:
            lines.append(f"  waiting because: {self.error}")
        return lines


# ----------------------------------------------------------------------------------------------
# labels


def run_labels(
    ledger: "Ledger", run: "Run", config: "HilbotConfig", tool: str | None = None
) -> list[Label]:
    """Every label of a run's items that came from ``tool`` (any tool, when None): the reviewers'
    current ratings, then the adjudicated gold labels."""
    labels: list[Label] = []
    for item in run.items:
        origin = origin_of(item.features)
        if origin is None or (tool is not None and origin.tool != tool):
            continue
        for dimension in run.header.dimensions:
            labels += _item_labels(ledger, run, config, item.id, dimension, origin)
    return labels


def _item_labels(
    ledger: "Ledger", run: "Run", config: "HilbotConfig", item_id: str, dimension: str, origin: Any
) -> list[Label]:
    scale = config.scale_for(dimension) if dimension in config.dimensions else None
    ratings = [
        j for _, j in ledger.item_judgments(run.run_id, item_id, dimension) if isinstance(j, Rating)
    ]
    complete = len(ratings) >= config.review.k
    labels = [_label(run.run_id, r, scale, origin, complete, _note(ledger, r)) for r in ratings]
    decided = ledger.adjudications.get((run.run_id, item_id, dimension))
    if decided is not None and decided.decision == "consensus" and decided.judgment:
        labels.append(_gold(run.run_id, decided, scale, origin))
    return labels


def _note(ledger: "Ledger", rating: Rating) -> str | None:
    note = ledger.notes.get((rating.run_id, rating.item_id, rating.dimension, rating.reviewer.key))
    texts = [t for t in (rating.note, note.text if note else None) if t]
    return "\n".join(texts) or None


def _scale_fields(scale: Any, judgment: str) -> dict[str, Any]:
    if scale is None:
        return {}
    option = scale.option(judgment)
    return {
        "options": [o.value for o in scale.options],
        "number": option.number if option is not None else None,
    }


def _label(
    run_id: str, rating: Rating, scale: Any, origin: Any, complete: bool, note: str | None
) -> Label:
    who = rating.reviewer.key
    return Label(
        run_id=run_id,
        item_id=rating.item_id,
        dimension=rating.dimension,
        reviewer=who,
        reviewer_name=rating.reviewer.name,
        judgment=rating.judgment,
        score=rating.score,
        note=note,
        origin=origin,
        remote_id=remote_id(run_id, rating.item_id, rating.dimension, who),
        version=rating.idempotency_key,
        timestamp=rating.timestamp,
        complete=complete,
        **_scale_fields(scale, rating.judgment),
    )


def _gold(run_id: str, decided: Adjudication, scale: Any, origin: Any) -> Label:
    judgment = decided.judgment or ""
    option = scale.option(judgment) if scale is not None else None
    return Label(
        run_id=run_id,
        item_id=decided.item_id,
        dimension=decided.dimension,
        reviewer=decided.reviewer.key,
        reviewer_name=decided.reviewer.name,
        judgment=judgment,
        score=option.score if option is not None else None,
        note=decided.reason,
        origin=origin,
        remote_id=remote_id(run_id, decided.item_id, decided.dimension, "gold"),
        gold=True,
        version=decided.idempotency_key,
        timestamp=decided.timestamp,
        complete=True,
        **_scale_fields(scale, judgment),
    )


# ---------------------------------------------------------------------------------------------- the
# outbox


@dataclass
class _State:
    version: str
    state: str
    attempt: int
    error: str | None


def outbox(store: "Store", sink: str | None = None) -> dict[tuple[str, str], _State]:
    """Each label's latest outbox state, by (sink, remote id), from the log."""
    from analysis import read_typed

    states: dict[tuple[str, str], _State] = {}
    for _, push in read_typed(store.ratings.path, "push"):
        if sink is None or push.sink == sink:
            states[(push.sink, push.remote_id)] = _State(
                push.version, push.state, push.attempt, push.error
            )
    return states


def _due(label: Label, state: _State | None, retry_failed: bool) -> str:
    """What a label needs: ``send``, ``confirm`` or nothing (``""``)."""
    if state is None or state.version != label.version:
        return "send"
    if state.state == "confirmed":
        return ""
    if state.state == "sent":
        return "confirm"
    if state.state == "failed" and not retry_failed:
        return ""
    return "send"


def outbox_status(store: "Store") -> list[str]:
    """What waits in the outbox, per sink, and why: pending and sent-but-unconfirmed labels,
    failures."""
    by_sink: dict[str, list[_State]] = {}
    for (name, _), state in outbox(store).items():
        by_sink.setdefault(name, []).append(state)
    lines = []
    for name, states in sorted(by_sink.items()):
        count = {
            s: sum(1 for x in states if x.state == s)
            for s in ("pending", "sent", "confirmed", "failed")
        }
        lines.append(
            f"{name}: {count['confirmed']} confirmed, {count['sent']} sent (not yet read back), "
            f"{count['pending']} pending, {count['failed']} failed"
        )
        reasons = sorted({x.error for x in states if x.error and x.state in ("pending", "failed")})
        lines += [f"  why: {why}" for why in reasons[:5]]
    return lines or ["no label has been pushed anywhere yet"]


# ----------------------------------------------------------------------------------------------
# pushing


@dataclass
class _Pusher:
    store: "Store"
    name: str
    tool: str
    sink: Sink
    spec: SinkSpec
    deadline: float
    stop: threading.Event
    clock: Callable[[], float] = time.monotonic
    rate_per_s: float = 10.0
    report: PushReport = field(init=False)
    refused: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.report = PushReport(self.name)

    def record(
        self, label: Label, state: PushState, attempt: int = 0, error: str | None = None
    ) -> Push:
        return Push(
            sink=self.name,
            tool=self.tool,
            run_id=label.run_id,
            item_id=label.item_id,
            dimension=label.dimension,
            reviewer=label.reviewer,
            version=label.version,
            remote_id=label.remote_id,
            state=state,
            attempt=attempt,
            error=scrub(error) if error else None,
            gold=label.gold,
        )

    def pace(self) -> bool:
        """Wait for the next call's turn under the rate limit; False when the time is up."""
        turn = _NEXT_CALL.get(self.name, 0.0)
        wait = turn - self.clock()
        if wait > 0 and not self.wait(wait):
            return False
        _NEXT_CALL[self.name] = max(self.clock(), turn) + 1.0 / max(self.rate_per_s, 1e-3)
        return self.clock() < self.deadline

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless the time budget ends first or the push is stopped."""
        if self.clock() + seconds > self.deadline:
            return False
        return not self.stop.wait(seconds)

    def call(self, operation: Operation, labels: list[Label], work: Callable[[], Any]) -> Any:
        """One call to the sink, recorded in ``connectors-calls.jsonl``."""
        started = time.monotonic()
        where = getattr(self.sink, "where", None)
        sent = (
            [
                {
                    "item": x.item_id,
                    "dimension": x.dimension,
                    "reviewer": x.reviewer,
                    "value": x.judgment,
                    "comment": x.note,
                }
                for x in labels
            ]
            if operation == "send"
            else []
        )
        try:
            result = work()
        except ConnectorError as exc:
            self.store.connector_calls.append(
                ConnectorCall(
                    tool=self.tool,
                    sink=self.name,
                    operation=operation,
                    where=where,
                    count=len(labels),
                    labels=[x.remote_id for x in labels],
                    sent=sent,
                    seconds=time.monotonic() - started,
                    error=scrub(str(exc)),
                )
            )
            raise
        self.store.connector_calls.append(
            ConnectorCall(
                tool=self.tool,
                sink=self.name,
                operation=operation,
                where=where,
                count=len(labels),
                labels=[x.remote_id for x in labels],
                sent=sent,
                seconds=time.monotonic() - started,
            )
        )
        return result

    def send(self, batch: list[Label], attempts: dict[str, int]) -> bool:
        """Send one batch until it is accepted, refused for good, or the time is up; False when it
        is up."""
        backoff = BACKOFF_S[0]
        while True:
            if not self.pace():
                return False
            for label in batch:
                attempts[label.remote_id] = attempts.get(label.remote_id, 0) + 1
            try:
                sent = self.call("send", batch, lambda: self.sink.send(batch))
            except ConnectorError as exc:
                if not exc.transient:
                    self._failed(batch, attempts, str(exc))
                    return True
                self.report.error = str(exc)
                wait = exc.retry_after if exc.retry_after is not None else backoff
                backoff = min(backoff * 2, BACKOFF_S[1])
                if not self.wait(wait):
                    return False
                continue
            self._sent(batch, sent, attempts)
            return True

    def _failed(self, batch: list[Label], attempts: dict[str, int], why: str) -> None:
        self.refused |= {x.remote_id for x in batch}
        self.store.ratings.append_many(
            self.record(x, "failed", attempts[x.remote_id], why) for x in batch
        )
        self.report.failed += [
            f"{x.run_id}/{x.item_id} {x.dimension} by {x.reviewer}: {scrub(why)}" for x in batch
        ]

    def _sent(self, batch: list[Label], sent: list[Sent], attempts: dict[str, int]) -> None:
        accepted = {(s.remote_id, s.version) for s in sent}
        done = [x for x in batch if (x.remote_id, x.version) in accepted]
        self.store.ratings.append_many(self.record(x, "sent", attempts[x.remote_id]) for x in done)
        self.report.sent += len(done)
        missing = [x for x in batch if (x.remote_id, x.version) not in accepted]
        if missing:
            self._failed(missing, attempts, "the platform did not accept it (no error given)")

    def confirm(self, labels: list[Label]) -> None:
        """Read back what was sent; the confirmed ones are recorded, the rest wait for a later
        push."""
        for batch in _batches(labels, self.spec.batch):
            if not self.pace():
                return
            try:
                found = set(
                    self.call(
                        "confirm",
                        batch,
                        lambda: self.sink.confirm(
                            [
                                Sent(remote_id=x.remote_id, version=x.version, origin=x.origin)
                                for x in batch
                            ]
                        ),
                    )
                )
            except ConnectorError as exc:
                self.report.error = str(exc)
                continue
            done = [x for x in batch if x.remote_id in found]
            self.store.ratings.append_many(self.record(x, "confirmed") for x in done)
            self.report.confirmed += len(done)


def _batches(labels: list[Label], size: int) -> Iterable[list[Label]]:
    size = max(1, size)
    for start in range(0, len(labels), size):
        yield labels[start : start + size]


def push_labels(
    store: "Store",
    name: str,
    tool: str,
    settings: Any,
    env: Mapping[str, str],
    labels: list[Label],
    *,
    seconds: float = 60.0,
    retry_failed: bool = False,
    stop: threading.Event | None = None,
    rate_per_s: float | None = None,
) -> PushReport:
    """Send ``labels`` to sink ``name`` (a ``tool`` sink with ``settings``) and confirm them, within
    ``seconds``.

    Labels already confirmed at their version are passed over; ``retry_failed`` sends the refused
    ones again. What is left when the time is up stays pending in the log for the next push.
    ``rate_per_s`` replaces the tool's documented limit (a paid plan allows more).
    """
    spec = sinks.get(tool)
    states = outbox(store, name)
    todo = {"send": [], "confirm": []}  # type: dict[str, list[Label]]
    for label in labels:
        state = states.get((name, label.remote_id))
        due = _due(label, state, retry_failed)
        if due:
            todo[due].append(
                label if state is not None else label.model_copy(update={"resent": False})
            )
    pusher = _Pusher(
        store,
        name,
        tool,
        spec.make(settings, env) if todo["send"] or todo["confirm"] else _Nothing(),
        spec,
        time.monotonic() + seconds,
        stop or threading.Event(),
        rate_per_s=rate_per_s or spec.rate_per_s,
    )
    fresh = [x for x in todo["send"] if _fresh(states.get((name, x.remote_id)), x)]
    store.ratings.append_many(pusher.record(x, "pending") for x in fresh)
    attempts = {
        x.remote_id: (states[(name, x.remote_id)].attempt if (name, x.remote_id) in states else 0)
        for x in todo["send"]
    }
    sent: list[Label] = []
    for batch in _batches(todo["send"], spec.batch):
        if not pusher.send(batch, attempts):
            break
        sent += batch
    pusher.confirm(todo["confirm"] + [x for x in sent if x.remote_id not in pusher.refused])
    pusher.report.waiting = (
        len(todo["send"])
        + len(todo["confirm"])
        - pusher.report.confirmed
        - len(pusher.report.failed)
    )
    return pusher.report


def _fresh(state: _State | None, label: Label) -> bool:
    """Whether the label needs a ``pending`` record (it has none at this version)."""
    return state is None or state.version != label.version or state.state == "failed"


class _Nothing:
    """The sink of a push with nothing to do: its SDK is never imported."""

    def send(self, labels: list[Label]) -> list[Sent]:
        return []

    def confirm(self, sent: list[Sent]) -> list[str]:
        return []


__all__ = ["BACKOFF_S", "PushReport", "outbox", "outbox_status", "push_labels", "run_labels"]
