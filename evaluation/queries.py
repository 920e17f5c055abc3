"""Query sets: the JSON files of queries a search or RAG system is evaluated on.

A directory (default ``tests/fixtures/queries``, ``[queries] dir``) holds curated sets as
``<name>.json`` and AI-generated ones as ``generated/<YYYY-MM-DD>.json``. A set is named by its
path without ``.json``: ``core``, ``generated/2026-11-02``.

Every file is validated on load; a problem is one line, ``file:line: queries[3].text: Field
required``, with the line where that query starts. A file is read as hostile input: bytes that
are not UTF-8, nesting deeper than 200 levels, duplicate keys, NaN, numbers too large to store and
lone surrogates are errors at their line too. Saving is atomic (``Store.write_file``), keeps
the order of the queries and every field hilbot does not touch (top-level and per query, unknown
keys included), and writes the fixtures' layout: top-level keys indented by two, one query object
per line.

The ``name`` key inside a file is never rewritten: a set's name is its path.
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from . import _json
from ._input import decode, json_problem_line, non_finite, read_file, where
from .errors import HilbotError
from .text import visible

if TYPE_CHECKING:
    from .llm import LLM
    from .store import Store

GENERATED = "generated"
"""Sub-directory (and name prefix) of AI-generated sets."""

_FIX = "correct the file (it was not changed) and rerun"


class QuerySetError(HilbotError):
    """A query set is unknown, unreadable or invalid."""


class QueryItem(BaseModel):
    """One query of a set; fields hilbot does not know are kept as they are."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    id: str
    """Identifier, unique within the set (e.g. ``core-03``)."""
    text: str = Field(min_length=1)
    """The query as a user would type it."""
    category: str | None = None
    """Topic used for stratified sampling and pattern analysis."""
    intent: str | None = None
    """What the user wants to find."""
    expected: list[str] = Field(default_factory=list)
    """Paths of the documents a good search returns."""
    expected_answer: str | None = None
    """The answer a RAG system should give, when known."""

    _keys: list[str] = PrivateAttr(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The query as written to its file: the keys it was read with, in their order, then new
        ones."""
        data = self.model_dump(mode="json", exclude_unset=True)
        ordered = {key: data[key] for key in self._keys if key in data}
        return {**ordered, **data}


class QuerySet(BaseModel):
    """A query set as loaded from (or to be saved to) its file."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    name: str
    """The set's name: its path under the directory without ``.json`` (``core``, ``generated/2026-11-02``)."""
    version: str | None = None
    """The set's version (curated sets), e.g. ``1.0.0``."""
    description: str | None = None
    """What the set covers."""
    source: str = "curated"
    """``curated`` or ``ai-generated``."""
    path: Path
    """The file it lives in."""
    queries: list[QueryItem] = Field(default_factory=list)
    """The queries, in file order."""
    fields: dict[str, Any] = Field(default_factory=dict)
    """The file's top-level object as read, in file order; ``save`` writes it back, updating only
    ``version``, ``description``, ``source`` and ``queries``."""

    @property
    def generated(self) -> bool:
        """Whether this is an AI-generated set."""
        return self.name.startswith(f"{GENERATED}/")

    def label(self) -> str:
        """What the listing shows in parentheses: ``curated, v1.0.0`` or ``ai-generated``."""
        return f"{self.source}, v{self.version}" if self.version else self.source

    def next_id(self, taken: Iterable[str] = ()) -> str:
        """A new query id in the style of the set's own ids (``core-16`` after ``core-15``), unused
        by the set and ``taken``."""
        own = [m for m in (re.fullmatch(r"(.*?)(\d{1,18})", q.id) for q in self.queries) if m]
        prefixes = [m.group(1) for m in own]
        prefix = max(set(prefixes), key=prefixes.count, default=f"{self.name.replace('/', '-')}-")
        width = max((len(m.group(2)) for m in own if m.group(1) == prefix), default=2)
        number = 1 + max((int(m.group(2)) for m in own if m.group(1) == prefix), default=0)
        used = {q.id for q in self.queries} | set(taken)
        while f"{prefix}{number:0{width}d}" in used:
            number += 1
        return f"{prefix}{number:0{width}d}"


# --------------------------------------------------------------------------- reading


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _array_starts(text: str, pos: int, decoder: json.JSONDecoder) -> list[int]:
    """Offsets where the elements of the array starting at ``pos`` begin."""
    starts: list[int] = []
    pos = _skip(text, pos + 1)
    while pos < len(text) and text[pos] != "]":
        starts.append(pos)
        _, pos = decoder.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos : pos + 1] == ",":
            pos = _skip(text, pos + 1)
    return starts


def query_starts(text: str) -> list[int]:
    """Line numbers where each element of the top-level ``queries`` array starts (``text`` is valid
    JSON)."""
    decoder, starts = json.JSONDecoder(), []
    pos = _skip(text, 0)
    if text[pos : pos + 1] != "{":
        return []
    pos = _skip(text, pos + 1)
    while text[pos : pos + 1] == '"':
        key, pos = decoder.raw_decode(text, pos)
        pos = _skip(text, _skip(text, pos) + 1)
        if key == "queries" and text[pos : pos + 1] == "[":
            starts = _array_starts(text, pos, decoder)
        _, pos = decoder.raw_decode(text, pos)
        pos = _skip(text, _skip(text, pos) + 1)
    return [_line(text, offset) for offset in starts]


def _key_line(text: str, key: str) -> int:
    match = re.search(rf'"{re.escape(key)}"\s*:', text)
    return _line(text, match.start()) if match else 1


def _loc(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return visible(out.lstrip("."), newlines=False)


def _json_document(path: Path, text: str) -> Any:
    """``text`` parsed as hostile JSON, or a QuerySetError at the line that is wrong."""
    try:
        data = _json.loads(text, duplicates=False)
    except _json.JSONInputError as exc:
        what, _, fix = exc.reason.partition(" — ")
        if what.startswith("invalid JSON ("):
            what = "not valid JSON (" + what.removeprefix("invalid JSON (")
        line = exc.line or json_problem_line(text) or 1
        raise QuerySetError(
            what, where=where(path, line), fix=f"{fix}; {_FIX}" if fix else _FIX
        ) from None
    loc = non_finite(data)
    if loc is not None:
        raise QuerySetError(
            f"{_loc(loc)}: a number too large for a float is not a finite number",
            where=where(path, json_problem_line(text) or 1),
            fix=f"write it as a string; {_FIX}",
        )
    return data


def _parse(path: Path, text: str) -> dict[str, Any]:
    """The file's top-level object, or a QuerySetError at the line that is wrong."""
    data = _json_document(path, text)
    if not isinstance(data, dict):
        raise QuerySetError(
            'not a query set: expected a JSON object with a "queries" list',
            where=where(path, 1),
            fix=_FIX,
        )
    if not isinstance(data.get("queries"), list):
        what = "missing" if "queries" not in data else "not a list"
        raise QuerySetError(
            f"queries: {what} (expected a list of query objects)",
            where=where(path, _key_line(text, "queries")),
            fix=_FIX,
        )
    for key in ("version", "description", "source"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise QuerySetError(
                f"{key}: Input should be a valid string",
                where=where(path, _key_line(text, key)),
                fix=_FIX,
            )
    return data


def _item(raw: Any, index: int, here: str) -> QueryItem:
    try:
        item = QueryItem.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise QuerySetError(
            f"{_loc(('queries', index, *err['loc']))}: {err['msg']}", where=here, fix=_FIX
        ) from None
    item._keys = list(raw)
    return item


def _items(path: Path, text: str, raws: list[Any]) -> list[QueryItem]:
    lines = query_starts(text)
    items: list[QueryItem] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raws):
        here = where(path, lines[index] if index < len(lines) else 1)
        item = _item(raw, index, here)
        if item.id in seen:
            raise QuerySetError(
                f"queries[{index}].id: duplicate id {item.id!r} (also queries[{seen[item.id]}])",
                where=here,
                fix="give every query its own id; " + _FIX,
            )
        seen[item.id] = index
        items.append(item)
    return items


def read_set(name: str, path: Path) -> QuerySet:
    """Load and validate one query set file."""
    text = decode(read_file(path, QuerySetError, fix="check the file"), path, QuerySetError)
    data = _parse(path, text)
    source = data.get("source") or (
        "ai-generated" if name.startswith(f"{GENERATED}/") else "curated"
    )
    return QuerySet(
        name=name,
        version=data.get("version"),
        description=data.get("description"),
        source=source,
        path=path,
        queries=_items(path, text, data["queries"]),
        fields=data,
    )


# --------------------------------------------------------------------------- writing


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def render(top: dict[str, Any]) -> str:
    """A query set file's text: top-level keys indented by two, one query object per line."""
    lines = []
    for key, value in top.items():
        if key == "queries" and isinstance(value, list) and value:
            rows = ",\n".join(f"    {_dumps(query)}" for query in value)
            lines.append(f"  {_dumps(key)}: [\n{rows}\n  ]")
        else:
            lines.append(f"  {_dumps(key)}: {_dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _storable(path: Path, top: dict[str, Any]) -> str:
    """The file text of ``top``, or a QuerySetError when a value cannot be stored as UTF-8 JSON."""
    loc = non_finite(top)
    if loc is not None:
        raise QuerySetError(
            f"{_loc(loc)}: not a finite number",
            where=where(path),
            fix="give a finite number; the file was not changed",
        )
    text = render(top)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        shown = text[max(0, exc.start - 30) : exc.start].rsplit("\n", 1)[-1]
        raise QuerySetError(
            f"a lone surrogate (not valid Unicode) after {visible(shown, newlines=False)!r}",
            where=where(path),
            fix="fix the text of that query; the file was not changed",
        ) from None
    return text


def _check_ids(qs: QuerySet) -> None:
    seen: set[str] = set()
    for index, item in enumerate(qs.queries):
        if item.id in seen:
            raise QuerySetError(
                f"queries[{index}].id: duplicate id {item.id!r}",
                where=where(qs.path),
                fix="give every query its own id before saving",
            )
        seen.add(item.id)


def _top(qs: QuerySet) -> dict[str, Any]:
    top = dict(qs.fields)
    default_source = "ai-generated" if qs.generated else "curated"
    for key, value, default in (
        ("version", qs.version, None),
        ("description", qs.description, None),
        ("source", qs.source, default_source),
    ):
        if key in top or value != default:
            top[key] = value
    top["queries"] = [item.to_json() for item in qs.queries]
    return top


def _date(today: date | str | None) -> str:
    if today is None:
        return date.today().isoformat()
    return today.isoformat() if isinstance(today, date) else date.fromisoformat(today).isoformat()


# --------------------------------------------------------------------------- the directory


def _natural(name: str) -> list:
    """Sort key putting ``2026-12-17`` before ``2026-12-17-2`` before ``2026-12-17-10``."""
    return [
        (1, int(part), "") if part.isdigit() else (0, 0, part) for part in re.split(r"(\d+)", name)
    ]


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a directory; a path the system cannot look up is a QuerySetError."""
    try:
        return path.is_dir()
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise QuerySetError(
            f"cannot read the query set directory ({visible(reason, newlines=False)})",
            where=where(path),
            fix="point --dir or [queries] dir at a directory of query sets",
        ) from None


class QuerySets:
    """The directory of query sets: list, load, resolve ``--set`` specs, save."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def _curated(self) -> list[str]:
        if not _is_dir(self.directory):
            return []
        return sorted(
            (
                p.stem
                for p in self.directory.glob("*.json")
                if p.is_file() and not p.name.startswith(".")
            ),
            key=_natural,
        )

    def _generated(self) -> list[str]:
        folder = self.directory / GENERATED
        if not _is_dir(folder):
            return []
        return sorted(
            (
                f"{GENERATED}/{p.stem}"
                for p in folder.glob("*.json")
                if p.is_file() and not p.name.startswith(".")
            ),
            key=_natural,
        )

    def names(self) -> list[str]:
        """Every set's name: curated ones first, then ``generated/<date>``, each group in natural
        order."""
        return self._curated() + self._generated()

    def path(self, name: str) -> Path:
        """The file a set of this name lives in (whether or not it exists)."""
        return self.directory / f"{name}.json"

    def load(self, name: str) -> QuerySet:
        """Load one set by name; an unknown name is a QuerySetError listing the known ones."""
        if name not in self.names():
            raise self._unknown(name)
        return read_set(name, self.path(name))

    def _unknown(self, name: str) -> QuerySetError:
        known = self.names()
        if not known:
            return QuerySetError(
                f"no query sets in {self.directory}",
                fix="create <dir>/core.json, run `hilbot sets generate`, or point --dir / "
                "[queries] dir elsewhere",
            )
        specs = ", ".join([*known, "all", f"{GENERATED}/*"])
        return QuerySetError(
            f"unknown query set {name!r} in {self.directory}", fix=f"use one of: {specs}"
        )

    def resolve(self, spec: str = "core") -> list[QuerySet]:
        """The sets a ``--set`` value names: a set, ``all`` (every curated set) or
        ``generated/*``."""
        if spec == "all":
            names = self._curated()
        elif spec == f"{GENERATED}/*":
            names = self._generated()
        else:
            return [self.load(spec)]
        if not names:
            raise (
                self._unknown(spec)
                if not self.names()
                else QuerySetError(
                    f"no {'curated' if spec == 'all' else 'generated'} query sets in "
                    f"{self.directory}",
                    fix="run `hilbot sets generate`"
                    if spec != "all"
                    else "add a <name>.json set to the directory",
                )
            )
        return [self.load(name) for name in names]

    def listing(self) -> list[str]:
        """The query set listing: ``Available query sets:`` then ``  core  15 queries  (curated,
        v1.0.0)`` lines."""
        sets = [self.load(name) for name in self.names()]
        if not sets:
            return ["Available query sets:", f"  (none in {self.directory})"]
        digits = max(len(str(len(qs.queries))) for qs in sets)
        lines = ["Available query sets:"]
        for group in ([s for s in sets if not s.generated], [s for s in sets if s.generated]):
            width = max((len(qs.name) for qs in group), default=0)
            lines += [
                f"  {qs.name:<{width}}  {len(qs.queries):>{digits}} queries  ({qs.label()})"
                for qs in group
            ]
        return lines

    def save(self, qs: QuerySet, store: "Store") -> Path:
        """Write a set back to its file atomically, keeping query order and untouched fields."""
        _check_ids(qs)
        return store.write_file(qs.path, _storable(qs.path, _top(qs)))

    def _free_generated(self, day: str) -> str:
        stem, suffix = day, 1
        while self.path(f"{GENERATED}/{stem}").exists():
            suffix += 1
            stem = f"{day}-{suffix}"
        return stem

    def save_generated(
        self,
        queries: Sequence[QueryItem],
        *,
        seeded_from: str | None,
        model: str,
        store: "Store",
        today: date | str | None = None,
    ) -> Path:
        """Write a new ``generated/<date>.json`` (``<date>-2.json``… when taken); ids become
        ``gen-<stem>-01``…"""
        from .records import utcnow

        stem = self._free_generated(_date(today))
        items = []
        for number, query in enumerate(queries, 1):
            item = query.model_copy()
            item.id = f"gen-{stem}-{number:02d}"
            items.append(item.to_json())
        top = {
            "name": f"{GENERATED}/{stem}",
            "source": "ai-generated",
            "generated_at": utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seeded_from": seeded_from,
            "model": model,
            "queries": items,
        }
        path = self.path(f"{GENERATED}/{stem}")
        return store.write_file(path, _storable(path, top))


# --------------------------------------------------------------------------- the LLM


class ProposedQuery(BaseModel):
    """One query the LLM proposes."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    text: str = Field(min_length=1)
    """The query as a user would type it into the search box."""
    category: str
    """A short topic label, reusing the example categories where they fit."""
    intent: str
    """One sentence: what the user wants to find."""


class Proposal(BaseModel):
    """The LLM's batch of proposed queries."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    queries: list[ProposedQuery] = Field(min_length=1)
    """The proposed queries."""


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _bullets(items: Iterable[QueryItem]) -> str:
    return "\n".join(
        f"- [{q.category or '-'}] {q.text}" + (f" — {q.intent}" if q.intent else "") for q in items
    )


def proposal_prompt(
    count: int, seed: QuerySet | None, keep: Sequence[QueryItem], avoid: Sequence[QueryItem]
) -> str:
    """The user prompt of a ``propose_queries`` call."""
    parts = [
        f"Propose exactly {count} new search {'query' if count == 1 else 'queries'} for evaluating "
        "a documentation search system.",
        "Vary phrasing (keywords, questions, error messages), difficulty and category; each query "
        "needs a category and a one-sentence intent.",
    ]
    if seed is not None and seed.queries:
        parts.append(
            f"Examples from the query set {seed.name!r} (match their domain and style, do not copy "
            "them):\n" + _bullets(seed.queries)
        )
    if keep:
        parts.append(
            "The set already has these queries; propose only what is missing, no duplicates or "
            "paraphrases:\n" + _bullets(keep)
        )
    if avoid:
        parts.append("A reviewer rejected these; propose different ones:\n" + _bullets(avoid))
    return "\n\n".join(parts)


async def propose_queries(
    llm: "LLM",
    *,
    count: int,
    seed: QuerySet | None,
    keep: Sequence[QueryItem] = (),
    avoid: Sequence[QueryItem] = (),
) -> list[QueryItem]:
    """One structured LLM call proposing ``count`` queries, deduplicated (case-insensitively)
    against ``keep``, ``avoid`` and each other; ids are provisional (``new-01``…) until the set is
    saved."""
    from .llm import LLMRequest

    request = LLMRequest(
        prompt=proposal_prompt(count, seed, keep, avoid),
        output=Proposal,
        purpose="generate",
        system="You write realistic search queries that people type into a documentation search "
        "box.",
        tool_name="propose_queries",
        tool_description="Record the proposed queries.",
        max_tokens=300 + 150 * count,
    )
    answer = (await llm.complete(request)).output
    assert isinstance(answer, Proposal)  # the reply is validated against request.output
    seen = {_norm(q.text) for q in (*keep, *avoid)}
    items: list[QueryItem] = []
    for proposed in answer.queries:
        if _norm(proposed.text) in seen or len(items) >= count:
            continue
        seen.add(_norm(proposed.text))
        fields: dict[str, Any] = {
            "text": proposed.text.strip(),
            "category": proposed.category.strip(),
            "intent": proposed.intent.strip(),
        }
        items.append(
            QueryItem(id=f"new-{len(items) + 1:02d}", **{k: v for k, v in fields.items() if v})
        )
    return items
