"""Turning any evaluation tool's output (JSONL, JSON or CSV) into a run.

Field names are matched loosely (``query``/``question``/``prompt``/``scenario``…); whatever is
not recognised and is a plain value becomes a feature of the item. A bad row is an error
naming ``file:line``; with ``skip_bad`` the rest is imported and the bad rows are counted.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from pydantic import ValidationError

from . import _json
from ._input import (
    BOM,
    check_file,
    decode,
    dotted,
    json_problem_line,
    line_of,
    listed_once,
    non_finite,
    read_file,
    where,
)
from .errors import ImportFailed
from .records import (
    Evaluation,
    ItemData,
    JudgeInfo,
    Query,
    QueryEvaluation,
    RunHeader,
    RunSummary,
    SearchResult,
)
from .runs import RunKind, average_scores
from .store import Store, validate_run_id
from .text import visible

if TYPE_CHECKING:
    from .config import HilbotConfig

_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "item_id", "test_id", "scenario_id", "scenarioId", "query_id", "uid"),
    "query": ("query", "question", "prompt", "scenario", "input", "user_input"),
    "answer": ("answer", "response", "output", "completion", "actual_output"),
    "results": ("results", "hits", "documents", "ranked_results"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context", "context"),
    "ground_truth": (
        "ground_truth",
        "ground_truth_answers",
        "reference",
        "expected_output",
        "ground_truth_contexts",
    ),
    "tool_captures": ("tool_captures", "tools", "tool_calls"),
    "scores": ("scores", "metrics"),
    "verdict": ("verdict", "label"),
    "confidence": ("confidence", "judge_confidence"),
    "rationale": ("rationale", "reason", "explanation", "reasoning"),
    "category": ("category",),
    "intent": ("intent",),
    "expected": ("expected", "expected_results", "expected_component"),
    "features": ("features", "metadata"),
    "latency_ms": ("latency_ms",),
    "cost_usd": ("cost_usd",),
    "overall": ("overall", "score"),
}
CONTEXT_FIELDS: tuple[str, ...] = (
    "plugin",
    "plugin_description",
    "component",
    "component_type",
    "system",
)
"""The features an import recognises as an item's context — the plugin or system under test, the
component a scenario tests — under these names; a review card shows them above the item."""
_CONTEXT_ALIASES: dict[str, tuple[str, ...]] = {
    "plugin": ("plugin", "plugin_name", "pluginName"),
    "plugin_description": ("plugin_description", "pluginDescription"),
    "component": ("component", "component_name", "componentName", "component_tested"),
    "component_type": ("component_type", "componentType"),
    "system": ("system", "system_name", "systemName", "system_context", "systemContext"),
}
_CONTEXT_PARTS: dict[str, dict[str, str]] = {
    "plugin": {"name": "plugin", "description": "plugin_description"},
    "component": {"name": "component", "type": "component_type"},
}
"""What an object in a context field gives: ``{"name": …, "description": …}`` of a plugin."""
_CONTEXT_NAMES = {alias for names in _CONTEXT_ALIASES.values() for alias in names}
_KNOWN = {alias for names in _ALIASES.values() for alias in names} | _CONTEXT_NAMES
_JSON_CELLS = (
    "results",
    "contexts",
    "ground_truth",
    "tool_captures",
    "scores",
    "features",
    "expected",
)

DEFAULT_DIMENSIONS = {
    "search": ["overall"],
    "answer": ["answer"],
    "scenario": ["trigger-accuracy", "code-validity", "technical-accuracy", "completeness"],
    "change": ["change"],
}

CSV_FIELD_LIMIT = 16 * 1024 * 1024
"""Longest CSV cell read (16 MiB of text); the standard library's default, 128 KiB, cuts long
answers."""


@dataclass
class ImportReport:
    """What an import did."""

    run_id: str
    path: Path
    imported: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)


class BadRow(Exception):
    """A row that cannot be imported: why, on which line, and how to fix it."""

    def __init__(self, message: str, line: int | None = None, fix: str | None = None):
        super().__init__(visible(message, newlines=False))
        self.line = line
        self.fix = fix


class CsvRow(dict):
    """A CSV row: every cell is a string, so number-like features are converted."""


_NUMBER = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_MAX_NUMBER_CELL = 300


def _number(text: str) -> int | float | str:
    """A CSV cell as a number when it is one that fits a float; otherwise the text as written."""
    stripped = text.strip()
    if len(stripped) > _MAX_NUMBER_CELL or not _NUMBER.match(stripped):
        return text
    if re.fullmatch(r"-?\d+", stripped):
        return int(stripped)
    value = float(stripped)
    return value if math.isfinite(value) else text


def _reason(exc: _json.JSONInputError) -> str:
    """A hostile-JSON reason as one clause (its own fix joined with a semicolon)."""
    return exc.reason.replace(" — ", "; ")


def _parse_cell(text: str, name: str) -> Any:
    """A cell or field holding JSON text, parsed as hostile input."""
    try:
        value = _json.loads(text, duplicates=False)
    except _json.JSONInputError as exc:
        raise BadRow(f"{name}: not valid JSON ({_reason(exc)})") from None
    _check_finite(value, name)
    return value


def _check_finite(value: Any, name: str | None = None) -> None:
    """A bad row when ``value`` holds a number too large for a float (``1e400`` parses to
    infinity)."""
    loc = non_finite(value)
    if loc is not None:
        field_path = dotted(((name,) if name else ()) + loc) or "row"
        raise BadRow(
            f"{field_path}: a number too large for a float is not a finite number; write it as a "
            "string"
        )


def _json_cell(value: Any, name: str, kind: type) -> Any:
    if isinstance(value, str):
        value = _parse_cell(value, name)
    if value is not None and not isinstance(value, kind):
        raise BadRow(
            f"{name}: expected a JSON {'object' if kind is dict else 'list'}, got "
            f"{type(value).__name__}"
        )
    return value


def _pick(row: dict[str, Any], name: str) -> Any:
    for alias in _ALIASES[name]:
        if alias in row and row[alias] not in (None, ""):
            return row[alias]
    return None


def _as_list(value: Any, name: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str) and value.lstrip().startswith(("[", "{")):
        value = _parse_cell(value, name)
    return value if isinstance(value, list) else [value]


def _text(value: Any) -> str:
    return (
        value["text"]
        if isinstance(value, dict) and "text" in value
        else value
        if isinstance(value, str)
        else json.dumps(value)
    )


def _results(value: Any) -> list[SearchResult]:
    out = []
    for rank, entry in enumerate(_as_list(value, "results"), 1):
        if isinstance(entry, str):
            entry = {"path": entry}
        if not isinstance(entry, dict):
            raise BadRow(f"results[{rank - 1}]: expected an object with path/title, score, snippet")
        entry = {
            "snippet": entry.get("snippet", entry.get("text", entry.get("content"))),
            "path": entry.get("path", entry.get("url", entry.get("id"))),
            "rank": entry.get("rank", rank),
            **{k: v for k, v in entry.items() if k not in ("text", "content", "url")},
        }
        out.append(SearchResult.model_validate(entry))
    return out


def _scores(row: dict[str, Any]) -> dict[str, float]:
    scores: dict[str, Any] = dict(_json_cell(_pick(row, "scores"), "scores", dict) or {})
    for key, value in row.items():
        match = re.match(r"^(?:scores?[._])(.+)$", str(key))
        if match and value not in (None, ""):
            scores[match.group(1)] = value
    if "overall" not in scores and _pick(row, "overall") is not None:
        scores["overall"] = _pick(row, "overall")
    return {str(name): _score(name, value) for name, value in scores.items()}


def _score(name: Any, value: Any) -> float:
    """One score as a float in 0–1 (a bad row otherwise)."""
    return _fraction(value, f"scores.{name}", "the scores")


def _fraction(value: Any, name: str, what: str, choices: str = "") -> float:
    """``value`` as a finite number in 0–1; anything else (bools, NaN, text, out of range) is a bad
    row."""
    try:
        number = (
            float(value)
            if isinstance(value, (str, int, float)) and not isinstance(value, bool)
            else math.nan
        )
    except (ValueError, OverflowError):
        number = math.nan
    if not math.isfinite(number):
        raise BadRow(f"{name}: {_shown(value)} is not a number; give a number in 0–1{choices}")
    if not 0.0 <= number <= 1.0:
        raise BadRow(f"{name}: {_shown(value)} is outside 0–1; rescale {what} to 0–1")
    return number


def _shown(value: Any) -> str:
    """A value from the file as a short, safe fragment of a message."""
    text = (
        repr(value)
        if isinstance(value, str)
        else json.dumps(value)
        if not isinstance(value, float)
        else str(value)
    )
    return text if len(text) <= 60 else text[:57] + "..."


def _plain(value: Any) -> bool:
    """Whether ``value`` is a plain value a feature can hold (not empty, not a list or an object)."""
    return isinstance(value, (str, int, float, bool)) and value != ""


def _context(fields: dict[str, Any]) -> dict[str, Any]:
    """The context fields among ``fields`` under their names in :data:`CONTEXT_FIELDS` (an object
    gives its parts: a plugin's name and description, a component's name and type)."""
    found: dict[str, Any] = {}
    for name, aliases in _CONTEXT_ALIASES.items():
        for value in (fields.get(alias) for alias in aliases):
            parts = value.items() if isinstance(value, dict) else [("name", value)]
            for part, part_value in parts:
                target = _CONTEXT_PARTS.get(name, {}).get(part, name if part == "name" else None)
                if target is not None and _plain(part_value):
                    found.setdefault(target, part_value)
    return found


def _features(row: dict[str, Any]) -> dict[str, Any]:
    given = dict(_json_cell(_pick(row, "features"), "features", dict) or {})
    features = {k: v for k, v in given.items() if k not in _CONTEXT_NAMES} | _context(given)
    for name, value in _context(row).items():
        features.setdefault(name, value)
    for key, value in row.items():
        if (
            key not in _KNOWN
            and not re.match(r"^scores?[._]", key)
            and isinstance(value, (str, int, float, bool))
            and value != ""
        ):
            features.setdefault(
                key, _number(value) if isinstance(row, CsvRow) and isinstance(value, str) else value
            )
    return features


def _confidence(value: Any) -> float | str | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("high", "medium", "low"):
        return value.strip().lower()
    return _fraction(value, "confidence", "it", " or high/medium/low")


def row_to_item(row: dict[str, Any], default_id: str) -> ItemData:
    """Map one row of any tool's output to an :class:`ItemData` (raises ``BadRow``)."""
    if not isinstance(row, dict):
        raise BadRow(f"a row must be a JSON object, not {_kind_of(row)}")
    _check_finite(row)
    query = _pick(row, "query")
    if isinstance(query, dict):
        query = query.get("query") or query.get("text")
    if not query or isinstance(query, bool) or not isinstance(query, (str, int, float)):
        raise BadRow(f"no query (one of {', '.join(_ALIASES['query'])}); add the column or field")
    if None in row:
        raise BadRow("more cells than header columns; quote cells that contain commas")
    confidence = _confidence(_pick(row, "confidence"))
    item_id = _pick(row, "id")
    if item_id is not None and (
        isinstance(item_id, bool) or not isinstance(item_id, (str, int, float))
    ):
        raise BadRow(f"id: {_shown(item_id)} is not a string or a number; give each row a plain id")
    try:
        return ItemData(
            id=str(item_id) if item_id is not None else default_id,
            query=Query(
                query=str(query),
                intent=_pick(row, "intent"),
                category=_pick(row, "category"),
                expected=[_text(e) for e in _as_list(_pick(row, "expected"), "expected")],
            ),
            results=_results(_pick(row, "results")),
            answer=_pick(row, "answer"),
            contexts=[_text(c) for c in _as_list(_pick(row, "contexts"), "contexts")],
            ground_truth=[
                _text(g)
                for alias in _ALIASES["ground_truth"]
                for g in _as_list(row.get(alias) or None, alias)
            ],
            tool_captures=[
                t if isinstance(t, dict) else {"tool": str(t)}
                for t in _as_list(_pick(row, "tool_captures"), "tool_captures")
            ],
            evaluation=Evaluation(
                scores=_scores(row),
                verdict=_pick(row, "verdict"),
                confidence=confidence,
                rationale=_pick(row, "rationale"),
                judge=row.get("judge") if isinstance(row.get("judge"), str) else None,
            ),
            features=_features(row),
            latency_ms=_pick(row, "latency_ms"),
            cost_usd=_pick(row, "cost_usd"),
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        raise BadRow(f"{'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def _kind_of(value: Any) -> str:
    """``a list``, ``a number``… for messages about a value of the wrong type."""
    names = {
        list: "a list",
        str: "a string",
        bool: "true/false",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def _skip(text: str, pos: int, chars: str = " \t\r\n") -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


_NO_ROWS = "a JSON file must hold an array of rows, or an object with one"
_LENIENT = json.JSONDecoder(
    parse_constant=lambda _: None, parse_int=lambda _: 0, object_pairs_hook=lambda _: None
)
"""Finds where a value ends without judging it: each row is then parsed, and judged, on its own."""
_FILE_FIX = "give the path of a .jsonl, .json or .csv file"


def _json_problem(
    exc: _json.JSONInputError, *, column: bool = False, whole: bool = False
) -> BadRow:
    """A hostile-JSON error as a bad row (its fix joined to the message) or, ``whole``, as a file's
    error."""
    what, _, fix = exc.reason.partition(" — ")
    if column and exc.column:
        what = f"{what} at column {exc.column}"
    if whole:
        return BadRow(what, line=exc.line, fix=fix or None)
    return BadRow(f"{what}; {fix}" if fix else what, line=exc.line)


def _list_start(text: str) -> int:
    """Offset of the ``[`` of the rows: the top-level array, or an object's first top-level list
    value."""
    pos = _skip(text, 0)
    if text[pos : pos + 1] == "[":
        return pos
    if text[pos : pos + 1] != "{":
        raise BadRow(_NO_ROWS, line=line_of(text, pos))
    pos = _skip(text, pos + 1)
    while text[pos : pos + 1] == '"':
        _, pos = _LENIENT.raw_decode(text, pos)
        pos = _skip(text, _skip(text, pos) + 1)  # past the colon
        if text[pos : pos + 1] == "[":
            return pos
        _, pos = _LENIENT.raw_decode(text, pos)
        pos = _skip(text, pos, " \t\r\n,")
    raise BadRow(_NO_ROWS, line=1)


def _row_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the rows in a JSON file."""
    spans: list[tuple[int, int]] = []
    pos = _list_start(text) + 1
    while True:
        pos = _skip(text, pos, " \t\r\n,")
        if pos >= len(text) or text[pos] == "]":
            return spans
        _, end = _LENIENT.raw_decode(text, pos)
        spans.append((pos, end))
        pos = end


def _document_problem(problem: _json.JSONInputError, text: str | None) -> BadRow:
    bad = _json_problem(problem, whole=True)
    if bad.line is None and text is not None:
        bad.line = json_problem_line(text)
    return bad


def _sound_text(data: bytes, problem: _json.JSONInputError | None) -> str:
    """The text of a JSON document whose syntax is sound, or the error that stops the import."""
    try:
        text = data.decode("utf-8")
        _LENIENT.decode(text)
        return text
    except json.JSONDecodeError as exc:
        raise BadRow(
            f"invalid JSON ({exc.msg} at column {exc.colno})",
            line=exc.lineno,
            fix="fix the JSON syntax",
        ) from None
    except (UnicodeDecodeError, RecursionError):  # the whole-document read named it
        if problem is None:
            raise BadRow("nested too deep to read", fix="flatten the data") from None
        raise _document_problem(problem, None) from None


def _json_rows(data: bytes) -> list[tuple[int, Any]]:
    """Rows of a JSON file with the line each starts on; a row that is hostile JSON is a bad row.

    Bytes that are not UTF-8, a syntax error or nesting too deep to parse stop the import; a
    duplicate key, NaN, huge number or lone surrogate makes only its row bad.
    """
    data = data.removeprefix(BOM)
    try:
        _json.loads(data, duplicates=False)
        problem = None
    except _json.JSONInputError as exc:
        problem = exc
    text = _sound_text(data, problem)
    rows, line, last = [], 1, 0
    for start, end in _row_spans(text):
        line, last = line + text.count("\n", last, start), start
        try:
            rows.append((line, _json.loads(text[start:end], duplicates=False)))
        except _json.JSONInputError as exc:
            rows.append((line, _json_problem(exc)))
    if problem is not None and not any(isinstance(row, BadRow) for _, row in rows):
        raise _document_problem(problem, text)  # the problem is outside the rows
    return rows


def _jsonl_rows(data: bytes) -> list[tuple[int, Any]]:
    """One row per non-blank line; a line that is not a JSON object is a bad row."""
    rows: list[tuple[int, Any]] = []
    for number, line in enumerate(data.removeprefix(BOM).splitlines(), 1):
        if line.strip():
            try:
                rows.append((number, _json.loads(line, duplicates=False)))
            except _json.JSONInputError as exc:
                rows.append((number, _json_problem(exc, column=True)))
    return rows


def _csv_cells(text: str) -> list[tuple[int, list[str]]]:
    """(line, cells) of every CSV record; a cell past :data:`CSV_FIELD_LIMIT` or bad quoting stops
    the import."""
    previous = csv.field_size_limit(CSV_FIELD_LIMIT)
    reader = csv.reader(io.StringIO(text, newline=""))
    records, end = [], 0
    try:
        for cells in reader:
            records.append((end + 1, cells))
            end = reader.line_num
    except csv.Error as exc:
        what = (
            f"a cell longer than {CSV_FIELD_LIMIT:,} characters"
            if "field limit" in str(exc)
            else f"not valid CSV ({visible(str(exc), newlines=False)})"
        )
        raise BadRow(
            what, line=reader.line_num or 1, fix="shorten the cell, or import the outputs as JSONL"
        ) from None
    finally:
        csv.field_size_limit(previous)
    return records


def _csv_rows(text: str) -> list[tuple[int, Any]]:
    """Rows of a CSV file keyed by its header (line 1), with the line each starts on."""
    records = _csv_cells(text)
    header = records[0][1] if records else []
    duplicate = next((name for i, name in enumerate(header) if name in header[:i]), None)
    if duplicate is not None:
        raise BadRow(
            f"duplicate column {duplicate!r}", line=1, fix="give every column its own name"
        )
    rows: list[tuple[int, Any]] = []
    for line, cells in records[1:]:
        if any(cell.strip() for cell in cells):
            row = CsvRow(zip(header, cells))
            if len(cells) > len(header):
                row[None] = cells[len(header) :]
            rows.append((line, row))
    return rows


def read_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line, row)`` pairs from a JSONL, JSON or CSV file; a bad row is yielded as an exception in
    its place.

    A file that cannot be read at all raises :class:`ImportFailed` (or a bad row with no place,
    ``BadRow``).
    """
    data = read_file(path, ImportFailed, fix=_FILE_FIX)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        yield from _csv_rows(decode(data, path, ImportFailed))
    elif suffix == ".json":
        yield from _json_rows(data)
    else:
        yield from _jsonl_rows(data)


def _kind(items: list[ItemData]) -> RunKind:
    if any(i.results for i in items):
        return "search"
    if any(i.query.expected and (i.tool_captures or _tested(i)) for i in items):
        return "scenario"
    return "answer"


def _tested(item: ItemData) -> bool:
    """Whether the item names the plugin or the component it tests (a scenario's context)."""
    return any(name in item.features for name in ("plugin", "component"))


def default_run_id(store: Store) -> str:
    """A timestamp id (``2025-12-17T22-32-30``), suffixed if taken; creating the run may still move
    past it."""
    return store.new_run_id()


def _check_dimensions(dimensions: list[str], config: "HilbotConfig | None") -> list[str]:
    """``dimensions`` if each is defined in the config, named once and not empty; else an
    ImportFailed."""
    from .config import load_config

    known = list((config or load_config(None)).dimensions)
    example = "e.g. --dimensions overall,quality"
    for name in listed_once(dimensions, "--dimensions", "dimension", ImportFailed, example):
        if name not in known:
            raise ImportFailed(
                f"unknown dimension {name!r}",
                where="--dimensions",
                fix=f"use one of {', '.join(known)}, or define it as "
                f"[dimensions.{visible(name, newlines=False)}] in hilbot.toml",
            )
    return dimensions


def _check_set_name(name: str) -> str:
    """``name`` if it is a usable query set name: not blank, at most 200 characters, no control
    characters."""
    if not name.strip() or len(name) > 200 or visible(name, newlines=False) != name:
        raise ImportFailed(
            f"invalid set name {visible(name[:60], newlines=False)!r}",
            where="--set",
            fix="use a short name without control characters, e.g. --set core",
        )
    return name


def _read_all(path: Path) -> list[tuple[int, Any]]:
    """Every (line, row) of ``path``; a file that cannot be read as a whole is an ImportFailed."""
    try:
        return list(read_rows(path))
    except BadRow as exc:
        raise ImportFailed(
            exc.args[0], where=where(path, exc.line), fix=exc.fix or "fix the file"
        ) from None


def import_outputs(
    store: Store,
    path: str | Path,
    *,
    run_id: str | None = None,
    set_name: str = "core",
    skip_bad: bool = False,
    dimensions: list[str] | None = None,
    judge: str = "recorded",
    config: "HilbotConfig | None" = None,
) -> ImportReport:
    """Import ``path`` as a new run in ``store``; raises :class:`ImportFailed` on the first bad row
    unless ``skip_bad``.

    ``dimensions`` must be defined in ``config`` (default: :func:`~evaluation.load_config`).
    """
    path = check_file(path, ImportFailed, fix=_FILE_FIX)
    set_name = _check_set_name(set_name)
    if dimensions is not None:
        dimensions = _check_dimensions(dimensions, config)
    generated = run_id is None
    run_id = default_run_id(store) if run_id is None else validate_run_id(run_id)
    if not generated:
        store.ensure_free(run_id)  # before reading a large file
    report = ImportReport(run_id, path)
    items: list[ItemData] = []
    seen: set[str] = set()
    for line, row in _read_all(path):
        try:
            if isinstance(row, BadRow):
                raise row
            item = row_to_item(row, default_id=f"item-{len(items) + 1:04d}")
            if item.id in seen:
                raise BadRow(f"duplicate id {item.id!r}; ids must be unique within a run")
        except BadRow as exc:
            if not skip_bad:
                raise ImportFailed(
                    str(exc),
                    where=where(path, line),
                    fix="fix the row, or pass --skip-bad to import the rest",
                ) from None
            report.skipped += 1
            report.errors.append(f"{where(path, line)}: {exc}")
            continue
        seen.add(item.id)
        items.append(item)
    if not items:
        raise ImportFailed(
            "no rows could be imported",
            where=where(path),
            fix="check the file has one row per item with a query field",
        )
    kind = _kind(items)
    header = RunHeader(
        run_id=run_id,
        set=set_name,
        kind=kind,
        source=path.name,
        judge=JudgeInfo(name=judge, kind="recorded"),
        dimensions=dimensions or DEFAULT_DIMENSIONS[kind],
        item_count=len(items),
    )
    for item in items:
        item.evaluation.judge = item.evaluation.judge or judge
    placed = store.create_run(
        header,
        (QueryEvaluation(run_id=run_id, data=i) for i in items),
        RunSummary(run_id=run_id, item_count=len(items), averageScores=average_scores(items)),
        generated=generated,
    )
    report.run_id = placed.stem
    report.imported = len(items)
    return report
