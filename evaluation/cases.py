"""What a run evaluates: cases, from query sets or from YAML test cases.

A YAML file holds one test case, a list of them, or several ``---`` documents::

    test_id: eliminator-concealed-counteract
    query: Can the Eliminator Sniper shoot during counteract while having Conceal order?
    ground_truth_answers: [Yes, ...]
    ground_truth_contexts:
      - "plain string (priority critical)"
      - {text: "...", priority: supporting}
    metric_weights: {answer_correctness: 0.5}   # optional, overrides [judge.metric_weights]

Unknown keys, a missing field or an unknown priority are errors naming ``file:line`` and the
field's path; nothing is read from a file with an error. So is hostile YAML: bytes that are not
UTF-8, control characters, nesting deeper than :data:`MAX_DEPTH`, aliases that expand to more than
:data:`MAX_ALIAS_VALUES` values (or contain themselves), duplicate keys, integers past 4,300
digits, invalid dates, lone surrogates, NaN or infinite weights, and any tag beyond YAML's own
(``!!python/object`` is never constructed).
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ._input import decode, is_regular, line_of, read_file, where
from .errors import HilbotError
from .metrics import ANSWER_METRICS
from .records import GroundTruthContext, Query, Weight
from .text import visible

if TYPE_CHECKING:
    from .queries import QuerySet

MAX_DEPTH = 100
"""Deepest nesting of mappings and lists accepted in a test case file (test cases nest a few
levels)."""
MAX_ALIAS_VALUES = 100_000
"""How many values aliases may add to a document when expanded (a "billion laughs" adds
billions)."""
_INT_DIGITS = 4300
_CASES_FIX = "point --cases at a YAML file or a directory of them"


class CaseError(HilbotError):
    """A test case file is invalid."""


@dataclass
class Case:
    """One thing to evaluate: a query with whatever the judges can check it against."""

    id: str
    query: Query
    ground_truth_answers: list[str] = field(default_factory=list)
    ground_truth_contexts: list[GroundTruthContext] = field(default_factory=list)
    metric_weights: dict[str, float] = field(default_factory=dict)
    source: str | None = None


class TestCase(BaseModel):
    """One test case as written in YAML."""

    __test__ = False  # not a pytest class
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)

    test_id: str = Field(min_length=1)
    """Unique id of the test case."""
    query: str = Field(min_length=1)
    """The question asked."""
    ground_truth_answers: list[str] = Field(default_factory=list)
    """Reference answers (answer correctness is judged against them)."""
    ground_truth_contexts: list[GroundTruthContext] = Field(default_factory=list)
    """Passages a correct answer quotes: plain strings (critical) or ``{text, priority}``."""
    category: str | None = None
    """Category for stratified review and pattern analysis."""
    intent: str | None = None
    """What the user wanted."""
    metric_weights: dict[str, Weight] | None = None
    """Per-test weights overriding ``[judge.metric_weights]``."""
    requirements: list[dict[str, Any]] | None = None
    """Legacy field, accepted and ignored."""

    @field_validator("ground_truth_contexts", mode="before")
    @classmethod
    def _plain_strings(cls, value: Any) -> Any:
        """A plain string is a critical context."""
        return (
            [{"text": v} if isinstance(v, str) else v for v in value]
            if isinstance(value, list)
            else value
        )

    @field_validator("metric_weights")
    @classmethod
    def _known_metrics(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        unknown = sorted(set(value or {}) - set(ANSWER_METRICS))
        if unknown:
            raise ValueError(f"unknown metric {unknown[0]!r}; use {', '.join(ANSWER_METRICS)}")
        return value

    def contexts(self) -> list[GroundTruthContext]:
        """Contexts with priorities."""
        return list(self.ground_truth_contexts)

    def case(self, source: str) -> Case:
        query = Query(query=self.query.strip(), category=self.category, intent=self.intent)
        return Case(
            self.test_id,
            query,
            [a.strip() for a in self.ground_truth_answers],
            self.contexts(),
            dict(self.metric_weights or {}),
            source,
        )


def _node_line(node: Any, loc: tuple) -> int:
    """Line (1-based) of the YAML node at ``loc`` below ``node``, or the deepest one found."""
    import yaml

    for depth, key in enumerate(loc, 1):
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == key), None)
            match = None if pair is None else pair[0] if depth == len(loc) else pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            match = node.value[key]
        else:
            match = None
        if match is None:
            break
        node = match
    return node.start_mark.line + 1


def _read(path: Path) -> str:
    return decode(read_file(path, CaseError, fix=_CASES_FIX), path, CaseError)


def _error_at(path: Path, node: Any, what: str, fix: str) -> CaseError:
    return CaseError(
        visible(what, newlines=False), where=where(path, node.start_mark.line + 1), fix=fix
    )


def _check_depth(path: Path, text: str) -> None:
    """Refuse nesting past :data:`MAX_DEPTH` before the (recursive) composer sees it."""
    import yaml

    opening = (
        yaml.BlockMappingStartToken,
        yaml.BlockSequenceStartToken,
        yaml.FlowMappingStartToken,
        yaml.FlowSequenceStartToken,
    )
    closing = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
    depth = 0
    for token in yaml.scan(text, Loader=yaml.SafeLoader):
        depth += 1 if isinstance(token, opening) else -1 if isinstance(token, closing) else 0
        if depth > MAX_DEPTH:
            raise _error_at(
                path, token, f"nested more than {MAX_DEPTH} levels deep", "flatten the data"
            )


def _children(node: Any) -> list[Any]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_scalar(path: Path, node: Any, loader: Any) -> None:
    """A scalar hilbot cannot store or Python cannot convert is an error at its line."""
    import yaml

    try:
        node.value.encode("utf-8")
    except UnicodeEncodeError:
        raise _error_at(
            path,
            node,
            "a lone surrogate (\\ud800–\\udfff) is not valid Unicode",
            "fix the text's encoding",
        ) from None
    if node.tag == "tag:yaml.org,2002:int" and len(node.value) > _INT_DIGITS:
        raise _error_at(
            path, node, "a number with more than 4,300 digits", "quote it to keep it as text"
        )
    if node.tag == "tag:yaml.org,2002:timestamp":
        try:
            yaml.SafeLoader.construct_yaml_timestamp(loader, node)
        except (ValueError, OverflowError):
            raise _error_at(
                path,
                node,
                f"{node.value!r} is not a valid date",
                "write a real date, or quote it to keep it as text",
            ) from None


def _check_mapping(path: Path, node: Any) -> None:
    keys: set[str] = set()
    for key, _ in node.value:
        if getattr(key, "id", None) == "scalar":
            if key.value in keys:
                raise _error_at(path, key, f"duplicate key {key.value!r}", "keep one of them")
            keys.add(key.value)


def _check_nodes(path: Path, root: Any, loader: Any) -> None:
    """Walk a document's node graph once: scalars, duplicate keys, and what aliases expand to."""
    import yaml

    size: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            open_nodes.discard(id(node))
            size[id(node)] = 1 + sum(size[id(child)] for child in _children(node))
            continue
        if id(node) in open_nodes:
            raise _error_at(
                path, node, "an alias refers to a value that contains it", "remove the alias"
            )
        if id(node) in size:
            continue  # an alias to a value already checked
        size[id(node)] = 0
        open_nodes.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            _check_scalar(path, node, loader)
        elif isinstance(node, yaml.MappingNode):
            _check_mapping(path, node)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
    if size[id(root)] - len(size) > MAX_ALIAS_VALUES:
        raise _error_at(
            path,
            root,
            f"aliases expand to more than {MAX_ALIAS_VALUES:,} values",
            "write the values out, or use fewer aliases",
        )


def _yaml_error(path: Path, text: str, exc: Exception) -> CaseError:
    import yaml

    if isinstance(exc, yaml.reader.ReaderError):
        code = ord(exc.character) if isinstance(exc.character, str) else exc.character
        return CaseError(
            f"character U+{code:04X} is not allowed in YAML",
            where=where(path, line_of(text, exc.position)),
            fix="remove it, or write it as an escape inside double quotes",
        )
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or type(exc).__name__
    return CaseError(
        f"not valid YAML ({visible(str(problem), newlines=False)})",
        where=where(path, mark.line + 1 if mark else None),
        fix="fix the YAML syntax",
    )


def _documents(path: Path) -> Iterable[tuple[Any, Any]]:
    """(node, value) for each test case mapping in a YAML file."""
    import yaml

    text = _read(path)
    loader = None
    try:
        _check_depth(path, text)
        loader = yaml.SafeLoader(text)
        while loader.check_node():
            node = loader.get_node()
            _check_nodes(path, node, loader)
            value = loader.construct_document(node)
            if isinstance(node, yaml.SequenceNode):
                yield from zip(node.value, value)
            elif value is not None:  # an empty document (a stray ---) holds no case
                yield node, value
    except yaml.YAMLError as exc:
        raise _yaml_error(path, text, exc) from None
    except RecursionError:
        raise CaseError(
            f"nested more than {MAX_DEPTH} levels deep", where=where(path), fix="flatten the data"
        ) from None
    finally:
        if loader is not None:
            loader.dispose()


def _validate(path: Path, node: Any, value: Any, priorities: Iterable[str]) -> TestCase:
    if not isinstance(value, dict):
        raise CaseError(
            "a test case must be a mapping with test_id and query",
            where=where(path, node.start_mark.line + 1),
            fix="see the test case format in docs/evaluating.md",
        )
    try:
        case = TestCase.model_validate(value)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        field_path = ".".join(str(p) for p in loc)
        fix = (
            "remove it or check its spelling"
            if err["type"] == "extra_forbidden"
            else "correct the value"
        )
        raise CaseError(
            visible(f"{field_path}: {err['msg']}", newlines=False),
            where=where(path, _node_line(node, loc)),
            fix=fix,
        ) from None
    known = set(priorities)
    for index, context in enumerate(case.contexts()):
        if context.priority not in known:
            line = _node_line(node, ("ground_truth_contexts", index, "priority"))
            raise CaseError(
                f"ground_truth_contexts.{index}.priority: unknown priority {context.priority!r}",
                where=where(path, line),
                fix=f"use one of {', '.join(sorted(known))} (see [judge.priority_weights])",
            )
    return case


def _case_files(path: Path) -> list[Path]:
    """The YAML file ``path``, or the regular ``*.yaml``/``*.yml`` files below the directory
    ``path`` (sorted)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise CaseError(
            "no such file or directory", where=where(path), fix="check the --cases path"
        ) from None
    except (OSError, ValueError):
        return [path]  # reading it says what is wrong
    if not stat.S_ISDIR(mode):
        return [path]
    files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and is_regular(p))
    if not files:
        raise CaseError("no .yaml test cases", where=where(path), fix=_CASES_FIX)
    return files


def load_cases(
    path: str | Path, priorities: Iterable[str] = ("critical", "supporting")
) -> list[Case]:
    """Every test case in a YAML file, or in the ``*.yaml``/``*.yml`` files of a directory
    (sorted)."""
    path = Path(path)
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for file in _case_files(path):
        for node, value in _documents(file):
            case = _validate(file, node, value, priorities).case(str(file))
            here = where(file, node.start_mark.line + 1)
            if case.id in seen:
                raise CaseError(
                    f"duplicate test_id {case.id!r} (first in {seen[case.id]})",
                    where=here,
                    fix="give each test case its own test_id",
                )
            seen[case.id] = here
            cases.append(case)
    if not cases:
        raise CaseError(
            "no test cases",
            where=where(path),
            fix="add test cases (each a mapping with test_id and query)",
        )
    return cases


def cases_from_sets(sets: "Iterable[QuerySet]") -> list[Case]:
    """Cases for every query of the given query sets, in order (ids must be unique across them)."""
    sets = list(sets)
    cases: list[Case] = []
    seen: set[str] = set()
    for qs in sets:
        for q in qs.queries:
            if q.id in seen:
                raise CaseError(
                    f"query id {q.id!r} appears in more than one set",
                    where=where(qs.path),
                    fix="make query ids unique across sets",
                )
            seen.add(q.id)
            query = Query(
                query=q.text,
                intent=q.intent,
                category=q.category,
                expected=list(q.expected),
                expected_answer=q.expected_answer,
            )
            answers = [q.expected_answer] if q.expected_answer else []
            cases.append(Case(q.id, query, answers, source=qs.name))
    if not cases:
        names = ", ".join(qs.name for qs in sets)
        raise CaseError(
            f"no queries in the query set {visible(names, newlines=False)}",
            where=where(sets[0].path) if sets else None,
            fix="add queries to the set, or pick another with --set",
        )
    return cases
