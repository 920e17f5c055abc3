"""What a run evaluates: cases, from query sets or from seed 001's YAML test cases.

A YAML file holds one test case, a list of them, or several ``---`` documents::

    test_id: eliminator-concealed-counteract
    query: Can the Eliminator Sniper shoot during counteract while having Conceal order?
    ground_truth_answers: [Yes, ...]
    ground_truth_contexts:
      - "plain string (priority critical)"
      - {text: "...", priority: supporting}
    metric_weights: {answer_correctness: 0.5}   # optional, overrides [judge.metric_weights]

Unknown keys, a missing field or an unknown priority are errors naming ``file:line`` and the
field's path; nothing is read from a file with an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import HilbotError
from .metrics import ANSWER_METRICS
from .records import GroundTruthContext, Query

if TYPE_CHECKING:
    from .queries import QuerySet


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
    """One seed 001 test case as written in YAML."""

    __test__ = False  # not a pytest class
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

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
    metric_weights: dict[str, float] | None = None
    """Per-test weights overriding ``[judge.metric_weights]``."""
    requirements: list[dict[str, Any]] | None = None
    """Legacy field, accepted and ignored."""

    @field_validator("ground_truth_contexts", mode="before")
    @classmethod
    def _plain_strings(cls, value: Any) -> Any:
        """A plain string is a critical context."""
        return [{"text": v} if isinstance(v, str) else v for v in value] if isinstance(value, list) else value

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
        return Case(self.test_id, query, [a.strip() for a in self.ground_truth_answers], self.contexts(),
                    dict(self.metric_weights or {}), source)


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


def _documents(path: Path) -> Iterable[tuple[Any, Any]]:
    """(node, value) for each test case mapping in a YAML file."""
    import yaml

    try:
        loader = yaml.SafeLoader(path.read_text("utf-8"))
        try:
            while loader.check_node():
                node = loader.get_node()
                value = loader.construct_document(node)
                if isinstance(node, yaml.SequenceNode):
                    yield from zip(node.value, value)
                elif node is not None:
                    yield node, value
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise CaseError(f"not valid YAML ({getattr(exc, 'problem', exc)})", where=where, fix="fix the YAML syntax") from None


def _validate(path: Path, node: Any, value: Any, priorities: Iterable[str]) -> TestCase:
    if not isinstance(value, dict):
        raise CaseError("a test case must be a mapping with test_id and query", where=f"{path}:{node.start_mark.line + 1}",
                        fix="see the test case format in README")
    try:
        case = TestCase.model_validate(value)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        field_path = ".".join(str(p) for p in loc)
        fix = "remove it or check its spelling" if err["type"] == "extra_forbidden" else "correct the value"
        raise CaseError(f"{field_path}: {err['msg']}", where=f"{path}:{_node_line(node, loc)}", fix=fix) from None
    known = set(priorities)
    for index, context in enumerate(case.contexts()):
        if context.priority not in known:
            line = _node_line(node, ("ground_truth_contexts", index, "priority"))
            raise CaseError(f"ground_truth_contexts.{index}.priority: unknown priority {context.priority!r}",
                            where=f"{path}:{line}", fix=f"use one of {', '.join(sorted(known))} (see [judge.priority_weights])")
    return case


def load_cases(path: str | Path, priorities: Iterable[str] = ("critical", "supporting")) -> list[Case]:
    """Every test case in a YAML file, or in the ``*.yaml``/``*.yml`` files of a directory (sorted)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        if not files:
            raise CaseError("no .yaml test cases", where=str(path), fix="point --cases at a YAML file or a directory of them")
    elif path.exists():
        files = [path]
    else:
        raise CaseError("no such file or directory", where=str(path), fix="check the --cases path")
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for file in files:
        for node, value in _documents(file):
            case = _validate(file, node, value, priorities).case(str(file))
            where = f"{file}:{node.start_mark.line + 1}"
            if case.id in seen:
                raise CaseError(f"duplicate test_id {case.id!r} (first in {seen[case.id]})", where=where, fix="give each test case its own test_id")
            seen[case.id] = where
            cases.append(case)
    return cases


def cases_from_sets(sets: "Iterable[QuerySet]") -> list[Case]:
    """Cases for every query of the given query sets, in order (ids must be unique across them)."""
    cases: list[Case] = []
    seen: set[str] = set()
    for qs in sets:
        for q in qs.queries:
            if q.id in seen:
                raise CaseError(f"query id {q.id!r} appears in more than one set", where=str(qs.path), fix="make query ids unique across sets")
            seen.add(q.id)
            query = Query(query=q.text, intent=q.intent, category=q.category, expected=list(q.expected), expected_answer=q.expected_answer)
            answers = [q.expected_answer] if q.expected_answer else []
            cases.append(Case(q.id, query, answers, source=qs.name))
    return cases
