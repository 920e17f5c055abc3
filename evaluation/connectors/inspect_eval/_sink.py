"""Human labels into inspect_ai logs, as inspect_ai's own score edits.

Each label becomes a score edit (``inspect_ai.log.edit_score``: a ``ScoreEdit`` whose
``ProvenanceData`` names the reviewer, the note as its reason) on the sample it rated. The edit
goes to a score of its own, ``human_<dimension>`` (or the name ``names`` gives;
``…_gold`` for an adjudicated gold label), never to an AI scorer's score: inspect_ai's viewer
shows it next to the scorers', and its metrics (``accuracy``, ``stderr``) are recomputed over it.

One score holds every reviewer's label on its dimension: ``metadata["hilbot"]["labels"]`` by
remote id, and the value is theirs together (one reviewer's value as it is; several: the mean
of numbers, the majority of grades, ``P`` on a tie). A label on a two-option scale is a grade
as ``match()`` gives one (``C`` for a score of 0.5 or more, else ``I``); on another scale its
0–1 score (its scale number where it has no score, its judgment where it has neither). Sending
a label again changes nothing; a corrected one edits the same score again, so its history holds
each version.

The edited log is written beside the original (``<name>.hilbot.eval``), or into ``out``, or
over the original with ``in_place``; an output that exists already is edited further, so labels
accumulate there (a run pulled from such a copy writes back into the copy itself). Confirming
reads the outputs back: those this sink wrote, else (a sink made afresh) the ``out`` file or the
copies in the ``out`` directory; a copy beside its log is found only by the sink that wrote it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from ..base import ConnectorError, Label, Sent
from . import _logs
from ._items import LETTERS, TOOL

HILBOT = "hilbot"
"""The key of hilbot's own part of a score's metadata."""

LABELLED = (".hilbot.eval", ".hilbot.json")
"""How the names of the labelled copies end."""


# ------------------------------------------------------------------------------------ values


def label_value(label: Label) -> Any:
    """What a label is in inspect_ai's terms: a grade, a 0–1 number, a scale number or a word."""
    if len(label.options) == 2 and label.score is not None:
        return "C" if label.score >= 0.5 else "I"
    if label.score is not None:
        return float(label.score)
    if label.number is not None:
        return float(label.number)
    return label.judgment


def combined(records: list[dict[str, Any]]) -> Any:
    """The score's value from every reviewer's label on it."""
    values = [r.get("value") for r in records]
    if len(values) == 1:
        return values[0]
    grades = [LETTERS[v] for v in values if isinstance(v, str) and v in LETTERS]
    if values and len(grades) == len(values):
        mean = sum(grades) / len(grades)
        return "C" if mean > 0.5 else "I" if mean < 0.5 else "P"
    numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if values and len(numbers) == len(values):
        return sum(numbers) / len(numbers)
    latest = max(records, key=lambda r: str(r.get("timestamp", "")))
    return latest.get("value")


def _who(record: dict[str, Any]) -> str:
    return str(record.get("reviewer_name") or record.get("reviewer") or "?")


def _answer(records: list[dict[str, Any]]) -> str:
    if len(records) == 1:
        return str(records[0].get("judgment"))
    return "; ".join(f"{_who(r)}: {r.get('judgment')}" for r in records)


def _explanation(records: list[dict[str, Any]]) -> str | None:
    notes = [r for r in records if r.get("note")]
    if len(records) == 1 or not notes:
        return notes[0]["note"] if notes else None
    return "\n".join(f"{_who(r)}: {r['note']}" for r in notes)


def record(label: Label) -> dict[str, Any]:
    """What the score's metadata keeps of a label."""
    return {
        "version": label.version,
        "run_id": label.run_id,
        "item_id": label.item_id,
        "dimension": label.dimension,
        "reviewer": label.reviewer,
        "reviewer_name": label.reviewer_name,
        "judgment": label.judgment,
        "score": label.score,
        "number": label.number,
        "options": list(label.options),
        "note": label.note,
        "correction": label.correction,
        "gold": label.gold,
        "complete": label.complete,
        "timestamp": label.timestamp.isoformat(),
        "value": label_value(label),
    }


def labels_of(score: Any) -> dict[str, dict[str, Any]]:
    """The hilbot labels a score holds, by remote id."""
    meta = getattr(score, "metadata", None) or {}
    ours = meta.get(HILBOT) if isinstance(meta, dict) else None
    found = ours.get("labels") if isinstance(ours, dict) else None
    if not isinstance(found, dict):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, dict)}


# ---------------------------------------------------------------------------------- the sink


class InspectSink:
    """Writes labels into inspect_ai logs as score edits (see the module)."""

    def __init__(self, settings: Any):
        self.settings = settings
        self.written: dict[str, Path] = {}
        """The output log each label went to, by remote id (what :meth:`confirm` reads back)."""
        self.outputs: dict[Path, Path] = {}
        """The original log of each output written, so one output never mixes two logs."""

    @property
    def where(self) -> str:
        """The log file(s) written (for the record of each call)."""
        if self.outputs:
            return ", ".join(sorted(str(p) for p in self.outputs))
        return str(self.settings.out) if self.settings.out else "beside each inspect_ai log"

    def score_name(self, label: Label) -> str:
        """The score a label's dimension is written to."""
        name = self.settings.names.get(label.dimension) or f"human_{label.dimension}"
        return f"{name}_gold" if label.gold else name

    def output_of(self, source: Path) -> Path:
        """Where the labels on the samples of ``source`` are written."""
        if self.settings.in_place:
            return source
        stem = source.stem if source.stem.endswith(".hilbot") else f"{source.stem}.hilbot"
        out = self.settings.out
        if not out:
            return source.with_name(stem + source.suffix)
        given = Path(out).expanduser().absolute()
        if given.suffix.lower() in _logs.SUFFIXES and not given.is_dir():
            return given
        return given / (stem + source.suffix)

    # ------------------------------------------------------------------ send

    def send(self, labels: list[Label]) -> list[Sent]:
        """Write the labels, one read and one write per log; the labels of a log that cannot be
        read or written are not sent (the first such failure is raised when none was)."""
        groups: dict[Path, list[Label]] = {}
        failure: ConnectorError | None = None
        for label in labels:
            try:
                groups.setdefault(_source_of(label), []).append(label)
            except ConnectorError as exc:
                failure = failure or exc
        sent: list[Sent] = []
        for source, group in groups.items():
            try:
                sent += self._send_log(source, group)
            except ConnectorError as exc:
                failure = failure or exc
            except Exception as exc:  # noqa: BLE001 - never a traceback out of a sink
                failure = failure or _logs.writing_error(self.output_of(source), exc)
        if failure is not None and not sent:
            raise failure
        return sent

    def _send_log(self, source: Path, labels: list[Label]) -> list[Sent]:
        out = self.output_of(source)
        held = self.outputs.get(out)
        if held is not None and held != source:
            raise ConnectorError(
                f"out is one file but the labels come from two logs ({held.name}, {source.name})",
                where=str(out),
                fix="set out to a directory, or push each log's run on its own",
            )
        if not out.parent.is_dir():
            raise ConnectorError(
                "the directory to write the labelled log to does not exist",
                where=str(out.parent),
                fix="create it, or set out to an existing directory",
            )
        with _logs.locked(out.parent):
            base = out if out.exists() else _logs.checked_path(source)
            log = _logs.read_whole(base)
            _same_eval(log, labels, base)
            sent, changed = self._apply(log, labels, base)
            if changed or not out.exists():
                if changed:
                    _recompute(log)
                _logs.write_atomic(log, out)
        self.outputs[out] = source
        for s in sent:
            self.written[s.remote_id] = out
        return sent

    def _apply(self, log: Any, labels: list[Label], base: Path) -> tuple[list[Sent], bool]:
        """Edit the log's scores with the labels: (the labels accepted, whether any changed)."""
        changed = False
        sent: list[Sent] = []
        missing: list[Label] = []
        for label in labels:
            sample = find_sample(log, label)
            if sample is None:
                missing.append(label)
                continue
            changed |= self._edit(log, sample, label)
            sent.append(Sent(remote_id=label.remote_id, version=label.version))
        if missing and not sent:
            origin = missing[0].origin
            epoch = origin.extra.get("epoch", 1)
            raise ConnectorError(
                f"sample {origin.id!r} (epoch {epoch}) is not in the log",
                where=str(base),
                fix="push to the log the run was pulled from, or pull again",
            )
        return sent, changed

    def _edit(self, log: Any, sample: Any, label: Label) -> bool:
        """Add or update the label on its score; False when the score holds it already as it is."""
        log_api = _logs.sdk()
        from inspect_ai.scorer import ScoreEdit

        name = self.score_name(label)
        score = (sample.scores or {}).get(name)
        held = labels_of(score)
        new = record(label)
        value = getattr(score, "value", None)
        if held.get(label.remote_id) == new and _same(value, combined(list(held.values()))):
            return False
        held[label.remote_id] = new
        records = list(held.values())
        meta = dict(getattr(score, "metadata", None) or {})
        meta[HILBOT] = {"labels": held, "dimension": label.dimension, "gold": label.gold}
        edit = ScoreEdit(
            value=combined(records),
            answer=_answer(records),
            explanation=_explanation(records),
            metadata=meta,
            provenance=_provenance(log_api, label),
        )
        log_api.edit_score(log, sample.id, name, edit, recompute_metrics=False, epoch=sample.epoch)
        return True

    # ------------------------------------------------------------------ confirm

    def confirm(self, sent: list[Sent]) -> list[str]:
        """The remote ids whose label is in the written log at the version sent, on a score whose
        value is the one its labels give (a label edited away or overwritten is not confirmed)."""
        found: dict[str, tuple[str, bool]] = {}
        for path in self._candidates(sent):
            try:
                found.update(_held(_logs.read_scores(path)))
            except ConnectorError:
                if any(self.written.get(s.remote_id) == path for s in sent):
                    raise
            except Exception as exc:  # noqa: BLE001
                raise _logs.reading_error(path, exc) from None
        return [
            s.remote_id
            for s in sent
            if s.remote_id in found and found[s.remote_id] == (s.version, True)
        ]

    def _candidates(self, sent: list[Sent]) -> list[Path]:
        """The logs to read back: those this sink wrote the labels to, else the ``out`` log (or the
        labelled logs in the ``out`` directory) a sink made afresh can only know of."""
        paths = {self.written[s.remote_id] for s in sent if s.remote_id in self.written}
        if len(paths) < len(sent) and self.settings.out:
            given = Path(self.settings.out).expanduser().absolute()
            if given.is_dir():
                paths |= {p for p in given.iterdir() if p.name.endswith(LABELLED)}
            elif given.exists():
                paths.add(given)
        return sorted(paths)


def _source_of(label: Label) -> Path:
    """The log a label's item was pulled from (absolute), or why the label has none."""
    origin = label.origin
    given = origin.extra.get("log")
    if origin.tool != TOOL or not isinstance(given, str) or not given:
        raise ConnectorError(
            f"label of {label.item_id!r} did not come from an inspect_ai log "
            f"(its origin is {origin.tool} {origin.kind})",
            fix="push it to the tool it came from (hilbot push RUN --to TOOL)",
        )
    return Path(given).expanduser().absolute()


def find_sample(log: Any, label: Label) -> Any:
    """The sample (and epoch) a label rated: by its uuid, else by its id and epoch."""
    extra = label.origin.extra
    uuid = extra.get("sample_uuid")
    epoch = extra.get("epoch", 1)
    sample_id = str(extra.get("sample_id", label.origin.id))
    candidates = [s for s in log.samples or [] if str(s.id) == sample_id and s.epoch == epoch]
    if uuid:
        by_uuid = [s for s in log.samples or [] if s.uuid == uuid]
        return (by_uuid or candidates or [None])[0]
    return (candidates or [None])[0]


def _same_eval(log: Any, labels: Iterable[Label], path: Path) -> None:
    """The log must be the eval the labels' items were pulled from (same eval id)."""
    wanted = {label.origin.extra.get("eval_id") for label in labels} - {None}
    have = getattr(getattr(log, "eval", None), "eval_id", None)
    if wanted and have and have not in wanted:
        raise ConnectorError(
            "this log holds another eval than the one the run was pulled from",
            where=str(path),
            fix="move the file away (or set out elsewhere) and push again, or pull the run again",
        )


def _provenance(log_api: Any, label: Label) -> Any:
    """Who gave the label, when and why (the note), as inspect_ai records an edit's provenance."""
    author = f"{label.reviewer_name} ({label.reviewer})" if label.reviewer_name else label.reviewer
    return log_api.ProvenanceData(
        timestamp=label.timestamp,
        author=author,
        reason=label.note,
        metadata={
            "tool": "hilbot",
            "remote_id": label.remote_id,
            "version": label.version,
            "run_id": label.run_id,
            "item_id": label.item_id,
            "dimension": label.dimension,
            "reviewer": label.reviewer,
            "gold": label.gold,
        },
    )


def _recompute(log: Any) -> None:
    """Recompute the log's metrics over its scores (a failure leaves the old metrics)."""
    log_api = _logs.sdk()
    try:
        log_api.recompute_metrics(log)
    except Exception:  # noqa: BLE001, S110 - the labels matter more than the summary metrics
        pass


def _held(log: Any) -> dict[str, tuple[str, bool]]:
    """Every hilbot label in a log: remote id → (version, whether its score's value holds)."""
    found: dict[str, tuple[str, bool]] = {}
    for sample in log.samples or []:
        for score in (sample.scores or {}).values():
            held = labels_of(score)
            if not held:
                continue
            right = _same(score.value, combined(list(held.values())))
            for remote, rec in held.items():
                found[remote] = (str(rec.get("version")), right)
    return found


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(float(a) - float(b)) < 1e-9
    return bool(a == b)
