"""Turning any evaluation tool's output (JSONL, JSON or CSV) into a run.

Field names are matched loosely (``query``/``question``/``prompt``/``scenario``…); whatever is
not recognised and is a plain value becomes a feature of the item. A bad row is an error
naming ``file:line``; with ``skip_bad`` the rest is imported and the bad rows are counted.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from .errors import ImportFailed
from .records import Evaluation, ItemData, JudgeInfo, Query, QueryEvaluation, RunHeader, RunSummary, SearchResult
from .runs import average_scores
from .store import Store, validate_run_id

_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "item_id", "test_id", "scenario_id", "scenarioId", "query_id", "uid"),
    "query": ("query", "question", "prompt", "scenario", "input", "user_input"),
    "answer": ("answer", "response", "output", "completion", "actual_output"),
    "results": ("results", "hits", "documents", "ranked_results"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context", "context"),
    "ground_truth": ("ground_truth", "ground_truth_answers", "reference", "expected_output", "ground_truth_contexts"),
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
_KNOWN = {alias for names in _ALIASES.values() for alias in names}
_JSON_CELLS = ("results", "contexts", "ground_truth", "tool_captures", "scores", "features", "expected")

DEFAULT_DIMENSIONS = {"search": ["overall"], "answer": ["answer"], "scenario": ["trigger-accuracy", "code-validity", "technical-accuracy", "completeness"]}


@dataclass
class ImportReport:
    """What an import did."""

    run_id: str
    path: Path
    imported: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)


class _BadRow(Exception):
    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


class _CsvRow(dict):
    """A CSV row: every cell is a string, so number-like features are converted."""


_NUMBER = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _number(text: str) -> int | float | str:
    if not _NUMBER.match(text.strip()):
        return text
    value = float(text)
    return int(value) if value.is_integer() and re.fullmatch(r"-?\d+", text.strip()) else value


def _json_cell(value: Any, name: str, kind: type) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise _BadRow(f"{name}: not valid JSON ({exc.msg})") from None
    if value is not None and not isinstance(value, kind):
        raise _BadRow(f"{name}: expected a JSON {'object' if kind is dict else 'list'}, got {type(value).__name__}")
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
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise _BadRow(f"{name}: not valid JSON ({exc.msg})") from None
    return value if isinstance(value, list) else [value]


def _text(value: Any) -> str:
    return value["text"] if isinstance(value, dict) and "text" in value else value if isinstance(value, str) else json.dumps(value)


def _results(value: Any) -> list[SearchResult]:
    out = []
    for rank, entry in enumerate(_as_list(value, "results"), 1):
        if isinstance(entry, str):
            entry = {"path": entry}
        if not isinstance(entry, dict):
            raise _BadRow(f"results[{rank - 1}]: expected an object with path/title, score, snippet")
        entry = {"snippet": entry.get("snippet", entry.get("text", entry.get("content"))),
                 "path": entry.get("path", entry.get("url", entry.get("id"))), "rank": entry.get("rank", rank),
                 **{k: v for k, v in entry.items() if k not in ("text", "content", "url")}}
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
    clean = {}
    for name, value in scores.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise _BadRow(f"scores.{name}: {value!r} is not a number") from None
        if not 0.0 <= number <= 1.0:
            raise _BadRow(f"scores.{name}: {number} is outside 0–1; rescale the scores to 0–1")
        clean[name] = number
    return clean


def _features(row: dict[str, Any]) -> dict[str, Any]:
    features = dict(_json_cell(_pick(row, "features"), "features", dict) or {})
    for key, value in row.items():
        if key not in _KNOWN and not re.match(r"^scores?[._]", key) and isinstance(value, (str, int, float, bool)) and value != "":
            features.setdefault(key, _number(value) if isinstance(row, _CsvRow) and isinstance(value, str) else value)
    return features


def _confidence(value: Any) -> float | str | None:
    if isinstance(value, str):
        if value.strip().lower() in ("high", "medium", "low"):
            return value.strip().lower()
        try:
            value = float(value)
        except ValueError:
            raise _BadRow(f"confidence: {value!r} is neither a number in 0–1 nor high/medium/low") from None
    if value is not None and not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
        raise _BadRow(f"confidence: {value!r} is outside 0–1; rescale it to 0–1")
    return value


def row_to_item(row: dict[str, Any], default_id: str) -> ItemData:
    """Map one row of any tool's output to an :class:`ItemData` (raises ``_BadRow``)."""
    if not isinstance(row, dict):
        raise _BadRow("a row must be a JSON object")
    query = _pick(row, "query")
    if isinstance(query, dict):
        query = query.get("query") or query.get("text")
    if not query or not isinstance(query, (str, int, float)):
        raise _BadRow(f"no query (one of {', '.join(_ALIASES['query'])}); add the column or field")
    if None in row:
        raise _BadRow("more cells than header columns; quote cells that contain commas")
    confidence = _confidence(_pick(row, "confidence"))
    item_id = _pick(row, "id")
    try:
        return ItemData(
            id=str(item_id) if item_id is not None else default_id,
            query=Query(query=str(query), intent=_pick(row, "intent"), category=_pick(row, "category"),
                        expected=[_text(e) for e in _as_list(_pick(row, "expected"), "expected")]),
            results=_results(_pick(row, "results")),
            answer=_pick(row, "answer"),
            contexts=[_text(c) for c in _as_list(_pick(row, "contexts"), "contexts")],
            ground_truth=[_text(g) for alias in _ALIASES["ground_truth"] for g in _as_list(row.get(alias) or None, alias)],
            tool_captures=[t if isinstance(t, dict) else {"tool": str(t)} for t in _as_list(_pick(row, "tool_captures"), "tool_captures")],
            evaluation=Evaluation(scores=_scores(row), verdict=_pick(row, "verdict"), confidence=confidence,
                                  rationale=_pick(row, "rationale"), judge=row.get("judge") if isinstance(row.get("judge"), str) else None),
            features=_features(row),
            latency_ms=_pick(row, "latency_ms"), cost_usd=_pick(row, "cost_usd"),
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        raise _BadRow(f"{'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def _skip(text: str, pos: int, chars: str = " \t\r\n") -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def _list_start(text: str, whole: Any) -> int:
    """Offset of the ``[`` of the rows: the top-level array, or an object's first top-level list value."""
    decoder, pos = json.JSONDecoder(), _skip(text, 0)
    if isinstance(whole, list):
        return pos
    if not isinstance(whole, dict):
        raise _BadRow("a JSON file must hold an array of rows, or an object with one", line=1)
    pos = _skip(text, pos + 1)
    while text[pos] != "}":
        key, pos = decoder.raw_decode(text, pos)
        pos = _skip(text, _skip(text, pos) + 1)  # past the colon
        if isinstance(whole[key], list):
            return pos
        _, pos = decoder.raw_decode(text, pos)
        pos = _skip(text, pos, " \t\r\n,")
    raise _BadRow("a JSON file must hold an array of rows, or an object with one", line=1)


def _json_rows(text: str) -> Iterator[tuple[int, Any]]:
    """Elements of a top-level JSON array (or of an object's first list) with their line numbers."""
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _BadRow(f"invalid JSON ({exc.msg} at column {exc.colno})", line=exc.lineno) from None
    decoder = json.JSONDecoder()
    pos = _list_start(text, whole) + 1
    while True:
        pos = _skip(text, pos, " \t\r\n,")
        if pos >= len(text) or text[pos] == "]":
            return
        line = text.count("\n", 0, pos) + 1
        value, pos = decoder.raw_decode(text, pos)
        yield line, value


def _csv_rows(path: Path) -> Iterator[tuple[int, Any]]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader, None) or []
        end = reader.line_num
        for cells in reader:
            start, end = end + 1, reader.line_num
            if not any(cell.strip() for cell in cells):
                continue
            row = _CsvRow(zip(header, cells))
            if len(cells) > len(header):
                row[None] = cells[len(header):]
            yield start, row


def read_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line, row)`` pairs from a JSONL, JSON or CSV file; an undecodable JSONL line yields an exception as its row."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        yield from _csv_rows(path)
    elif suffix == ".json":
        yield from _json_rows(path.read_text("utf-8"))
    else:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        yield number, json.loads(line)
                    except json.JSONDecodeError as exc:
                        yield number, _BadRow(f"invalid JSON ({exc.msg} at column {exc.colno})")


def _kind(items: list[ItemData]) -> str:
    if any(i.results for i in items):
        return "search"
    if any(i.tool_captures and i.query.expected for i in items):
        return "scenario"
    return "answer"


def default_run_id(store: Store) -> str:
    """A timestamp id as in seed 000 (``2025-12-17T22-32-30``), suffixed if taken."""
    base = datetime.now().strftime("%Y-%m-%dT%H-%M-%S")
    run_id, n = base, 1
    while store.run_exists(run_id):
        n += 1
        run_id = f"{base}-{n}"
    return run_id


def import_outputs(store: Store, path: str | Path, *, run_id: str | None = None, set_name: str = "core",
                   skip_bad: bool = False, dimensions: list[str] | None = None, judge: str = "recorded") -> ImportReport:
    """Import ``path`` as a new run in ``store``; raises :class:`ImportFailed` on the first bad row unless ``skip_bad``."""
    path = Path(path)
    if not path.is_file():
        raise ImportFailed("file not found", where=str(path), fix="give the path of a .jsonl, .json or .csv file")
    run_id = validate_run_id(run_id) if run_id else default_run_id(store)
    report = ImportReport(run_id, path)
    items: list[ItemData] = []
    seen: set[str] = set()
    try:
        rows = list(read_rows(path))
    except _BadRow as exc:
        where = f"{path}:{exc.line}" if exc.line else str(path)
        raise ImportFailed(str(exc), where=where, fix="fix the file") from None
    except UnicodeDecodeError:
        raise ImportFailed("not UTF-8 text", where=str(path), fix="save the file as UTF-8") from None
    for line, row in rows:
        try:
            if isinstance(row, _BadRow):
                raise row
            item = row_to_item(row, default_id=f"item-{len(items) + 1:04d}")
            if item.id in seen:
                raise _BadRow(f"duplicate id {item.id!r}; ids must be unique within a run")
        except _BadRow as exc:
            if not skip_bad:
                raise ImportFailed(str(exc), where=f"{path}:{line}", fix="fix the row, or pass --skip-bad to import the rest") from None
            report.skipped += 1
            report.errors.append(f"{path}:{line}: {exc}")
            continue
        seen.add(item.id)
        items.append(item)
    if not items:
        raise ImportFailed("no rows could be imported", where=str(path), fix="check the file has one row per item with a query field")
    kind = _kind(items)
    header = RunHeader(run_id=run_id, set=set_name, kind=kind, source=path.name, judge=JudgeInfo(name=judge),
                       dimensions=dimensions or DEFAULT_DIMENSIONS[kind], item_count=len(items))
    for item in items:
        item.evaluation.judge = item.evaluation.judge or judge
    store.create_run(header, (QueryEvaluation(run_id=run_id, data=i) for i in items),
                     RunSummary(run_id=run_id, item_count=len(items), averageScores=average_scores(items)))
    report.imported = len(items)
    return report
