"""Validate the ratings log — schema errors, and contradictions flagged, never rejected.

:func:`validate` streams every event of ``ratings.jsonl`` (not only the latest per key) with the
fast reader of :mod:`analysis.load`, resolves items against the run files, and returns a
:class:`ValidationReport`. Nothing is rewritten: the log stays byte-identical.

**Schema errors** (the only ones that make ``hilbot analyze validate`` exit 1): a line of
``ratings.jsonl`` — or of a run file read to resolve items — that is not JSON, not an object,
or not a valid record, reported as ``file:line: reason`` exactly as ``read_log`` reports it.
Every reader skips such a line, so it counts nowhere.

**Flags** (``file:line: flag: message``; the line stays and counts as it is). See :data:`FLAGS`.
Events whose idempotency key was already seen are redeliveries of the same tap: they are only
counted (``duplicate_delivery``) and not checked again.

Decided, not flagged: a note with no rating of the same item (``note_without_rating``): hilbot
lets a reviewer leave a note without rating (the terminal's ``n`` key), so it is no contradiction.

``rated_twice_in_session`` means the judgment changed within a session. Toggling a concern tag
stores a whole new rating event, so one reviewer's ratings of one (run, item, dimension) in one
session are read in file order, and a rating is flagged only when its judgment differs from the
rating just before it in that sequence (the message names that line). Hence:

- same judgment, other concern tags, note or confidence (or nothing else changed): not flagged;
- okay, okay + a tag, miss: one flag, on the miss, against the okay + a tag line;
- okay, miss, okay: two flags (each change counts, even back to the first judgment);
- score is not compared (a score that disagrees with its judgment is ``score_mismatch``);
- ratings in other sessions, by other reviewers, or of another item or dimension do not count as
  "before"; a redelivered event (``duplicate_delivery``) is not seen at all; a rating with no
  session date and no timestamp is not checked.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .registry import Inputs, Option, analysis

if TYPE_CHECKING:
    from evaluation.config import HilbotConfig
    from evaluation.log import LogIssue
    from evaluation.store import Store

FLAGS: dict[str, str] = {
    "excellent_with_concern": "a rating whose option is the top of its scale, or an option that "
    "asks no concern follow-up (ask_concerns = false), carries concern tags",
    "skip_with_score": "a skip record carries rating fields (score, judgment, concerns, confidence "
    "or labels); Skip has no such fields, so the line is also a schema error and counts nowhere",
    "unknown_item": "a rating, skip or note names a run no run file holds, or an item its run does "
    "not have",
    "unknown_dimension": "a rating is on a dimension hilbot.toml does not define (so its judgment "
    "cannot be checked)",
    "unknown_judgment": "a rating's judgment is not an option of its dimension's scale",
    "score_mismatch": "a rating's score differs from the score of the option it names",
    "rated_twice_in_session": "the judgment changed within a session: the same reviewer rated the "
    "same item and dimension in the same session (metadata.session_date, else the UTC date of the "
    "rating) with a judgment other than their rating just before; each change is "
    "flagged, the latest rating counts. A new rating with the same judgment (a concern tag "
    "toggled, a note or confidence changed, or the same judgment again) is not flagged",
    "duplicate_delivery": "an event whose idempotency key was seen before (a redelivered tap); "
    "counted once, only counted here (no line listed)",
    "duplicate_run_header": "a run file holds a second run_header: two runs were written into one "
    "file",
    "duplicate_item": "a run file holds an item id a second time; readers keep the last one",
}
"""Every flag, with its definition."""

COUNT_ONLY = {"duplicate_delivery"}
"""Flags that are counted but not listed line by line."""


@dataclass(frozen=True)
class Flag:
    """One flagged line."""

    path: Path
    line: int
    flag: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.flag}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "line": self.line,
            "flag": self.flag,
            "message": self.message,
        }


@dataclass
class ValidationReport:
    """What :func:`validate` found."""

    path: Path
    """The ratings log."""
    line_count: int = 0
    """Lines read from it."""
    records: dict[str, int] = field(default_factory=dict)
    """Valid records per type."""
    schema_errors: list[LogIssue] = field(default_factory=list)
    """Lines that are not valid records (ratings log first, then run files)."""
    flags: list[Flag] = field(default_factory=list)
    """Flagged lines, in log order."""
    counts: dict[str, int] = field(default_factory=dict)
    """Per flag (every flag of :data:`FLAGS`, zeros included), how many events it hit."""

    @property
    def exit_code(self) -> int:
        """1 when there is a schema error, else 0 (flags never fail validation)."""
        return 1 if self.schema_errors else 0

    def lines(self) -> list[str]:
        """``file:line: reason`` per schema error and ``file:line: flag: message`` per flag, by file
        and line."""
        entries: list[tuple[str, int, int, str]] = [
            (str(i.path), i.line, 0, str(i)) for i in self.schema_errors
        ]
        entries += [(str(f.path), f.line, 1, str(f)) for f in self.flags]
        ratings = str(self.path)
        entries.sort(key=lambda e: (e[0] != ratings, e[0], e[1], e[2]))
        return [e[3] for e in entries]

    def to_dict(self) -> dict[str, Any]:
        """Plain values (JSON-ready)."""
        return {
            "path": str(self.path),
            "lines": self.line_count,
            "records": dict(self.records),
            "exit_code": self.exit_code,
            "schema_errors": [
                {"path": str(i.path), "line": i.line, "reason": i.reason}
                for i in self.schema_errors
            ],
            "counts": dict(self.counts),
            "flags": [f.to_dict() for f in self.flags],
        }


def validate(
    store: "Store", config: "HilbotConfig", *, jobs: int | None = None
) -> ValidationReport:
    """Validate ``store``'s ratings log against its run files and ``config``'s scales
    (read-only)."""
    import numpy as np
    import pandas as pd

    from .load import KIND_RATING, start_scan

    path = Path(store.ratings.path)
    pending = start_scan(path, jobs)  # the log is read while the runs load
    run_issues: list[LogIssue] = []
    known: dict[str, set[str]] = {}
    run_flags: list[Flag] = []
    try:
        for run_id in store.run_ids():
            run = store.load_run(run_id, run_issues)
            known[run_id] = {item.id for item in run.items}
            run_flags += _run_file_flags(store.run_path(run_id))
    finally:
        scan = pending()
    report = ValidationReport(
        path=path,
        line_count=scan.lines,
        records=dict(scan.counts),
        schema_errors=[*scan.issues, *run_issues],
    )
    counts: Counter[str] = Counter({name: 0 for name in FLAGS})
    counts.update(f.flag for f in run_flags)
    flags: list[Flag] = []

    def flag(line: int, name: str, message: str) -> None:
        flags.append(Flag(path, int(line), name, message))
        counts[name] += 1

    for where, what, detail in scan.raw:
        if what == "skip_fields":
            fields = detail.split(",")
            flag(
                where,
                "skip_with_score",
                f"a skip carrying {', '.join(fields)}; the line is not a valid skip "
                "and counts nowhere",
            )

    line = scan.column("line")
    alive = scan.counted()  # file order, each idempotency key once
    counts["duplicate_delivery"] = len(line) - len(alive)
    kind = scan.column("kind")
    run_ids, item_ids, dimensions = (
        scan.column("run_id"),
        scan.column("item_id"),
        scan.column("dimension"),
    )
    judgments, reviewers = scan.column("judgment"), scan.column("reviewer")
    kind_names = {0: "rating", 1: "skip", 2: "note"}

    # unknown_item: any rating, skip or note (checked once per distinct run and item)
    pair = scan.codes(("run_id", "item_id"))
    distinct, first, inverse = np.unique(pair[alive], return_index=True, return_inverse=True)
    verdicts = []
    for j in first.tolist():
        i = alive[j]
        items = known.get(run_ids[i])
        verdicts.append(0 if items is None else 1 if item_ids[i] not in items else 2)
    verdict = (
        np.asarray(verdicts, dtype=np.int8)[inverse] if len(first) else np.zeros(0, dtype=np.int8)
    )
    for i, v in zip(alive[verdict < 2].tolist(), verdict[verdict < 2].tolist()):
        what = kind_names[int(kind[i])]
        if v == 0:
            flag(line[i], "unknown_item", f"{what} of run {run_ids[i]!r}, which no run file holds")
        else:
            flag(
                line[i],
                "unknown_item",
                f"{what} of item {item_ids[i]!r}, which run {run_ids[i]!r} does not have",
            )

    # judgments, scores and concerns of every rating (checked once per distinct dimension and
    # judgment)
    rated = alive[kind[alive] == KIND_RATING]
    scores = scan.column("score")[rated]
    has_tags = scan.column("n_tags")[rated] > 0
    pair = scan.codes(("dimension", "judgment"))[rated]
    distinct, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    status, option_score, no_concerns, why = [], [], [], []
    for j in first.tolist():
        dimension, judgment = dimensions[rated[j]], judgments[rated[j]]
        scale = config.scale_for(dimension) if dimension in config.dimensions else None
        option = scale.option(judgment) if scale is not None else None
        status.append(0 if scale is None else 1 if option is None else 2)
        option_score.append(option.score if option is not None else np.nan)
        top = option is not None and scale is not None and option is scale.options[0]
        no_concerns.append(option is not None and (top or not option.ask_concerns))
        why.append("the top of the scale" if top else "an option that asks no concerns")
    status_of = (
        np.asarray(status, dtype=np.int8)[inverse] if len(first) else np.zeros(0, dtype=np.int8)
    )
    expected = np.asarray(option_score, dtype=np.float64)[inverse] if len(first) else np.zeros(0)
    mismatch = (status_of == 2) & (np.abs(scores - expected) > 1e-9)
    tagged = (
        np.asarray(no_concerns, dtype=bool)[inverse] if len(first) else np.zeros(0, dtype=bool)
    ) & has_tags
    rows, tags = scan.row_tags(rated[tagged])
    tags_of: dict[int, list[str]] = {}
    for row, tag in zip(rows.tolist(), tags.tolist()):
        tags_of.setdefault(row, []).append(tag)
    for n in np.flatnonzero(status_of < 2).tolist():
        i = rated[n]
        if status_of[n] == 0:
            flag(
                line[i],
                "unknown_dimension",
                f"dimension {dimensions[i]!r} is not in hilbot.toml's [dimensions]",
            )
        else:
            options = config.scale_for(dimensions[i]).options
            flag(
                line[i],
                "unknown_judgment",
                f"{judgments[i]!r} is not an option of {dimensions[i]!r} "
                f"({', '.join(o.value for o in options)})",
            )
    for n in np.flatnonzero(mismatch).tolist():
        i = rated[n]
        flag(
            line[i],
            "score_mismatch",
            f"{judgments[i]!r} scores {expected[n]:g} on {dimensions[i]!r}, "
            f"the rating says {float(scores[n]):g}",
        )
    for k, n in enumerate(np.flatnonzero(tagged).tolist()):
        i = rated[n]
        flag(
            line[i],
            "excellent_with_concern",
            f"{judgments[i]!r} ({why[inverse[n]]}) carries concerns "
            f"{', '.join(tags_of.get(k, []))}",
        )

    # rated_twice_in_session: a judgment other than the one the same reviewer gave the same key just
    # before, in the same session (a tag or note toggle stores a rating with the same judgment: not
    # flagged)
    if len(rated):
        session = scan.column("session_date")[rated]
        dates = _dates(scan.column("ts")[rated])
        session = np.where(session == None, dates, session)  # noqa: E711 - elementwise
        has = ~pd.isna(session)
        key = scan.codes()[rated]
        codes, _ = pd.factorize(pd.Series(session).where(has))
        combined = pd.Series(key * (codes.max() + 2) + codes + 1)
        again = (combined.duplicated(keep="first") & has).to_numpy()
        if again.any():
            previous = (
                pd.Series(np.arange(len(rated))).groupby(combined.to_numpy()).shift(1).to_numpy()
            )
            before = np.where(again, previous, 0).astype(
                np.int64
            )  # the rating just before (where there is one)
            verdict = scan.codes(("judgment",))[rated]
            changed = again & (verdict != verdict[before])
            for n in np.flatnonzero(changed).tolist():
                i, j = rated[n], rated[int(before[n])]
                flag(
                    line[i],
                    "rated_twice_in_session",
                    f"{reviewers[i]} rated {run_ids[i]}/{item_ids[i]} on {dimensions[i]!r} before "
                    f"in session {session[n]} (line {int(line[j])}): changed {judgments[j]!r} to "
                    f"{judgments[i]!r}",
                )

    flags.sort(key=lambda f: (f.line, f.flag))
    report.flags = flags + run_flags
    report.counts = dict(counts)
    return report


def _run_file_flags(path: Path) -> list[Flag]:
    """A second header, and items whose id came before, in one run file (bad lines are schema errors
    already)."""
    from evaluation.log import read_numbered

    flags: list[Flag] = []
    header_line: int | None = None
    item_lines: dict[str, int] = {}
    for line, record in read_numbered(path, raw=True):
        if record.get("type") == "run_header":
            if header_line is not None:
                flags.append(
                    Flag(
                        path,
                        line,
                        "duplicate_run_header",
                        f"a second run_header (the first is on line "
                        f"{header_line}): two runs share this file",
                    )
                )
            header_line = header_line or line
        elif record.get("type") == "query_evaluation" and isinstance(record.get("data"), dict):
            item = record["data"].get("id")
            if isinstance(item, str) and item in item_lines:
                flags.append(
                    Flag(
                        path,
                        line,
                        "duplicate_item",
                        f"item {item!r} again (first on line {item_lines[item]}); "
                        "reviewers see the last one",
                    )
                )
            elif isinstance(item, str):
                item_lines[item] = line
    return flags


def _dates(ns: Any) -> Any:
    """UTC dates (``YYYY-MM-DD``, None for NaT) of int64 nanosecond timestamps, formatted once per
    day."""
    import numpy as np

    nat = ns == np.iinfo(np.int64).min
    days = np.where(nat, 0, ns // 86_400_000_000_000)
    distinct, inverse = np.unique(days, return_inverse=True)
    names = np.asarray([str(np.datetime64(int(d), "D")) for d in distinct.tolist()], dtype=object)
    none = np.array(None, dtype=object)
    return np.where(nat, none, names[inverse] if len(distinct) else np.zeros(0, dtype=object))


# -------------------------------------------------------------------------------------- the command


LIMIT = 20
"""Lines of each flag the Markdown lists by default (``--limit``; the JSON has every one)."""


def _markdown(report: ValidationReport, *, limit: int = LIMIT) -> list[str]:
    """Counts by flag, then ``file:line: flag: message`` (schema errors first within a line): at
    most ``limit`` lines of each flag (0: all), with how many more there are."""
    from .report import table

    verdict = (
        f"{len(report.schema_errors)} schema error(s)"
        if report.schema_errors
        else "no schema errors"
    )
    lines = [
        f"# Validation of {report.path}",
        "",
        f"{report.line_count} lines; records: "
        + ", ".join(f"{k} {v}" for k, v in sorted(report.records.items()))
        + f"; {verdict}.",
        "Flags mark contradictions for a human to look at; nothing was rejected or changed.",
        "",
    ]
    lines += table(
        ["flag", "count"],
        [("schema error", len(report.schema_errors)), *sorted(report.counts.items())],
    )
    found, more = _limited(report, limit)
    if not found:
        return lines + ["", "Nothing flagged."]
    return (
        lines
        + ["", "```text", *found, "```"]
        + [
            f"… and {n} more {name} lines (--limit 0 lists every line; --format json has them all)"
            for name, n in more.items()
        ]
    )


def _limited(report: ValidationReport, limit: int) -> tuple[list[str], dict[str, int]]:
    """The listed lines, at most ``limit`` of each flag (schema errors are one flag), in file
    order; and per flag, how many were left out."""
    kinds = {str(i): "schema error" for i in report.schema_errors}
    kinds.update({str(f): f.flag for f in report.flags})
    shown: Counter[str] = Counter()
    listed = []
    for line in report.lines():
        kind = kinds.get(line, "")
        shown[kind] += 1
        if not limit or shown[kind] <= limit:
            listed.append(line)
    return listed, {k: n - limit for k, n in shown.items() if limit and n > limit}


@analysis(
    "validate",
    markdown=_markdown,
    scoped=False,
    options=[
        Option(
            "limit",
            int,
            LIMIT,
            "Flagged lines listed per flag, after the counts (0: every line; JSON has all)",
            low=0,
            high=10**9,
            view=True,
        )
    ],
)
def validate_command(inputs: Inputs) -> ValidationReport:
    """Schema and consistency checks of ratings.jsonl: `file:line: flag` lines and counts.

    Contradictions are flagged, never rejected; exit 1 only on schema errors.

    Example: hilbot analyze validate
    """
    return validate(inputs.store, inputs.config)


__all__ = ["COUNT_ONLY", "FLAGS", "Flag", "ValidationReport", "validate"]
