"""promptfoo: the results file of ``promptfoo eval --output results.json`` as a run (a source only).

The file is promptfoo's ``OutputFile``: ``{evalId, results: EvaluateSummary, config, shareableUrl,
metadata}``, where the summary is version 3 (``{version: 3, timestamp, prompts, results: [...],
stats}``) or version 2 (the same rows beside a ``table``); a bare summary is read too. Each row
(promptfoo's ``EvaluateResult``) becomes one answer item:

- ``vars``: the query is the var named ``query_var`` (default: ``query``, ``question``, ``input``,
  ``prompt``…, else the first text var; no vars: the rendered prompt); a var named ``expected``,
  ``reference``, ``ground_truth`` or ``expected_output`` is the expected answer; the other vars
  are features;
- ``response.output`` is the answer (JSON output as compact JSON text), ``error`` the item's error;
- ``gradingResult`` is the AI judgment: ``score`` → ``scores.overall``, ``pass`` → verdict
  ``PASS``/``FAIL``, ``reason`` → rationale; each of its ``componentResults`` is scored under its
  assertion's ``metric`` (else its ``type``) with its reason (``human`` assertions, promptfoo's
  manual grades, are left out: they are not the AI's), and ``namedScores`` in 0–1 join them;
- ``provider.label``/``id`` → model, ``latencyMs`` → latency, ``cost`` → cost, ``tokenUsage``
  → usage.

An item's id is ``t<testIdx>-p<promptIdx>`` (v3), else ``row<N>`` by position, so pulling the
same file again gives the same ids. The file is read as hostile input (:mod:`evaluation._json`):
anything wrong is one :class:`ConnectorError` naming ``file:line`` or the JSON pointer of the value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ... import _json
from ..._input import BOM, check_file, json_problem_line, read_file, where
from ...records import Evaluation, ItemData, Query
from ..base import ConnectorError, Env, Origin, Pulled, SourceSpec, settings_model, source

TOOL = "promptfoo"
QUERY_VARS = ("query", "question", "input", "prompt", "user_input", "message", "text")
"""Vars tried, in order, for the item's query."""
EXPECTED_VARS = ("expected", "expected_output", "reference", "ground_truth", "expected_answer")
"""Vars taken as the expected answer."""
VERSIONS = (2, 3)
"""The summary versions read."""
MAX_MS = 1e9
"""Longest latency kept (11.6 days in ms); a larger one is left out as junk."""
MAX_COST = 1e6
"""Largest cost kept (dollars per row); a larger one is left out as junk."""
_FIX = "give the JSON file `promptfoo eval --output results.json` wrote"


class PromptfooSettings(BaseModel):
    """What ``hilbot pull promptfoo`` and a ``[sources.X]`` of type ``promptfoo`` take."""

    model_config = settings_model()

    file: Path
    """The results file: ``promptfoo eval --output results.json`` (JSON, summary version 3 or 2)."""
    query_var: str | None = None
    """The var holding the query (default: query, question, input, prompt…, else the first text
    var)."""


# ------------------------------------------------------------------------------- the file's shape


class _Loose(BaseModel):
    """A part of promptfoo's output: the fields hilbot reads are typed, the rest is kept unread."""

    model_config = ConfigDict(
        extra="allow", strict=True, populate_by_name=True, allow_inf_nan=False
    )


class _Assertion(_Loose):
    type: Optional[str] = None
    """The assertion's type (``llm-rubric``, ``contains``…)."""
    metric: Optional[str] = None
    """The named metric it is tagged with."""


class _Grading(_Loose):
    passed: Optional[bool] = Field(default=None, alias="pass")
    """Whether it passed."""
    score: Optional[float] = None
    """Its score (typically 0–1)."""
    reason: Optional[str] = None
    """Why."""
    componentResults: Optional[list[Optional["_Grading"]]] = None
    """Each assertion's own result."""
    assertion: Optional[_Assertion] = None
    """The assertion graded."""
    namedScores: Optional[dict[str, Optional[float]]] = None
    """Scores by metric name."""


_Grading.model_rebuild()


class _Tokens(_Loose):
    prompt: Optional[int] = None
    """Prompt tokens."""
    completion: Optional[int] = None
    """Completion tokens."""


class _Response(_Loose):
    output: Any = None
    """What the provider answered (text, or any JSON)."""
    error: Optional[str] = None
    """The provider's error."""
    cost: Optional[float] = None
    """The call's cost in dollars."""
    tokenUsage: Optional[_Tokens] = None
    """Tokens used."""


class _TestCase(_Loose):
    description: Optional[str] = None
    """What the test is about."""
    vars: Optional[dict[str, Any]] = None
    """The test's vars."""


class _Row(_Loose):
    id: Optional[str] = None
    """The result's id (v3)."""
    testIdx: Optional[int] = None
    """The test's position (v3)."""
    promptIdx: Optional[int] = None
    """The prompt's position (v3)."""
    description: Optional[str] = None
    """The test's description."""
    vars: Optional[dict[str, Any]] = None
    """The vars the prompt was rendered with."""
    prompt: Any = None
    """The prompt: ``{raw, label}`` (or text)."""
    provider: Any = None
    """The provider: ``{id, label}`` (or its id)."""
    response: Optional[_Response] = None
    """What the provider answered."""
    gradingResult: Optional[_Grading] = None
    """The assertions' combined result."""
    success: Optional[bool] = None
    """Whether the test passed."""
    score: Optional[float] = None
    """The test's score."""
    namedScores: Optional[dict[str, Optional[float]]] = None
    """Scores by metric name."""
    latencyMs: Optional[float] = None
    """How long the provider took."""
    cost: Optional[float] = None
    """The cost in dollars."""
    error: Optional[str] = None
    """Why the test errored."""
    testCase: Optional[_TestCase] = None
    """The test case."""
    tokenUsage: Optional[_Tokens] = None
    """Tokens used."""


# ---------------------------------------------------------------------------------------- reading


def pull(settings: PromptfooSettings, env: Env) -> Pulled:
    """The file's rows as an answer run."""
    path = check_file(settings.file, ConnectorError, fix=_FIX)
    document = _document(path)
    summary, eval_id, name = _summary(path, document)
    rows = summary["results"]
    items, ids = [], set()
    for index, raw in enumerate(rows):
        row = _row(path, raw, index)
        item = _item(path, row, index, eval_id, settings.query_var)
        while item.id in ids:
            item = item.model_copy(update={"id": f"{item.id}~"})
        item.features["origin"]["id"] = item.id
        ids.add(item.id)
        items.append(item)
    judged = any(i.evaluation.scores or i.evaluation.verdict for i in items)
    return Pulled(
        kind="answer",
        source=f"promptfoo results {where(path)}",
        set_name=name,
        items=items,
        judge=TOOL if judged else None,
    )


def _document(path: Path) -> Any:
    """The file parsed as hostile JSON; every problem is one error naming ``file:line``."""
    data = read_file(path, ConnectorError, fix=_FIX).removeprefix(BOM)
    try:
        return _json.loads(data)
    except _json.JSONInputError as exc:
        line = exc.line
        if line is None:
            line = json_problem_line(data.decode("utf-8", "replace"))
        what, _, fix = exc.reason.partition(" — ")
        raise ConnectorError(what, where=where(path, line), fix=fix or _FIX) from None


def _summary(path: Path, document: Any) -> tuple[dict[str, Any], str | None, str]:
    """(the summary with its rows, the eval's id, the set name) of an output file or a summary."""
    if not isinstance(document, dict):
        raise _bad(path, "", f"expected an object with results, not {_kind(document)}")
    summary, pointer = document, ""
    if isinstance(document.get("results"), dict):
        summary, pointer = document["results"], "/results"
    version = summary.get("version")
    if isinstance(version, bool) or version not in VERSIONS:
        shown = "missing" if version is None else json.dumps(version)[:40]
        raise _bad(
            path, f"{pointer}/version", f"summary version {shown} is not one hilbot reads (2 or 3)"
        )
    if not isinstance(summary.get("results"), list):
        raise _bad(
            path,
            f"{pointer}/results",
            f"expected the list of results, not {_kind(summary.get('results'))}",
        )
    eval_id = document.get("evalId") if isinstance(document.get("evalId"), str) else None
    config: dict[str, Any] = document["config"] if isinstance(document.get("config"), dict) else {}
    name = config.get("description") if isinstance(config.get("description"), str) else None
    return summary, eval_id, " ".join((name or path.stem).split())[:200] or "promptfoo"


def _row(path: Path, raw: Any, index: int) -> _Row:
    pointer = f"/results/results/{index}"
    if not isinstance(raw, dict):
        raise _bad(path, pointer, f"a result must be an object, not {_kind(raw)}")
    try:
        return _Row.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        at = "".join(f"/{_escape(part)}" for part in err["loc"])
        given = err.get("input")
        shown = (
            ""
            if isinstance(given, (dict, list))
            else f" (got {json.dumps(given, default=str)[:60]})"
        )
        raise _bad(path, pointer + at, f"{err['msg']}{shown}") from None


def _bad(path: Path, pointer: str, what: str) -> ConnectorError:
    return ConnectorError(f"{pointer or '/'}: {what}", where=where(path), fix=_FIX)


def _escape(part: Any) -> str:
    """A JSON pointer's reference token (RFC 6901)."""
    return str(part).replace("~", "~0").replace("/", "~1")


def _kind(value: Any) -> str:
    names = {
        list: "a list",
        str: "a string",
        bool: "true/false",
        int: "a number",
        float: "a number",
        type(None): "null",
        dict: "an object",
    }
    return names.get(type(value), type(value).__name__)


# ------------------------------------------------------------------------------- a row as an item


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _finite(value: float | None, low: float = 0.0, high: float = math.inf) -> float | None:
    return value if value is not None and math.isfinite(value) and low <= value <= high else None


def _item(
    path: Path, row: _Row, index: int, eval_id: str | None, query_var: str | None
) -> ItemData:
    variables = row.vars or (row.testCase.vars if row.testCase and row.testCase.vars else {})
    asked_var = _query_var(variables, query_var)
    expected_var = next((k for k in EXPECTED_VARS if isinstance(variables.get(k), str)), None)
    prompt = row.prompt if isinstance(row.prompt, dict) else {"raw": row.prompt}
    asked = _text(variables[asked_var]) if asked_var else _text(prompt.get("raw")) or ""
    item_id = (
        f"t{row.testIdx}-p{row.promptIdx}"
        if row.testIdx is not None and row.promptIdx is not None
        else f"row{index + 1}"
    )
    origin = Origin(
        tool=TOOL,
        kind="row",
        id=item_id,
        extra={
            "eval_id": eval_id,
            "file": str(path),
            "test_idx": row.testIdx,
            "prompt_idx": row.promptIdx,
            "result_id": row.id,
        },
    )
    response = row.response or _Response()
    description = row.description or (row.testCase.description if row.testCase else None)
    return ItemData(
        id=item_id,
        query=Query(
            query=asked or "",
            intent=description,
            expected_answer=variables.get(expected_var) if expected_var else None,
        ),
        answer=_text(response.output),
        evaluation=_evaluation(row),
        model=_model(row.provider),
        error=row.error or response.error or None,
        latency_ms=_finite(row.latencyMs, high=MAX_MS),
        cost_usd=_finite(row.cost if row.cost is not None else response.cost, high=MAX_COST),
        usage=_usage(response.tokenUsage or row.tokenUsage),
        features={
            "origin": origin.model_dump(),
            **_features(variables, {asked_var, expected_var}),
            **_prompt_label(prompt),
        },
    )


def _prompt_label(prompt: dict[str, Any]) -> dict[str, str]:
    """The prompt's label (v3) or display name (v2), as the ``prompt_label`` feature."""
    label = next((prompt[k] for k in ("label", "display") if isinstance(prompt.get(k), str)), None)
    return {"prompt_label": label} if label else {}


def _query_var(variables: dict[str, Any], chosen: str | None) -> str | None:
    """The var holding the query: the one chosen, else the first named like one with text, else the
    first text."""
    if chosen is not None:
        return chosen if chosen in variables else None
    named = next(
        (k for k in QUERY_VARS if isinstance(variables.get(k), str) and variables[k].strip()), None
    )
    return named or next(
        (k for k, v in variables.items() if isinstance(v, str) and v.strip()), None
    )


def _features(variables: dict[str, Any], used: set[str | None]) -> dict[str, Any]:
    """The vars not used as the query or the expected answer: plain values as they are, others as
    JSON text."""
    out: dict[str, Any] = {}
    for key, value in variables.items():
        if key in used or key == "origin":
            continue
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
            value = str(value)  # past a float's integers: kept exactly, as text
        out[key] = value if isinstance(value, (str, int, float, bool)) else _text(value)
    return out


def _model(provider: Any) -> str | None:
    if isinstance(provider, str):
        return provider or None
    if isinstance(provider, dict):
        for key in ("label", "id"):
            if isinstance(provider.get(key), str) and provider[key]:
                return str(provider[key])
    return None


def _usage(tokens: _Tokens | None) -> dict[str, int]:
    if tokens is None:
        return {}
    counts = {"input_tokens": tokens.prompt, "output_tokens": tokens.completion}
    return {k: v for k, v in counts.items() if v is not None and 0 <= v < 2**53}


def _evaluation(row: _Row) -> Evaluation:
    """promptfoo's grading as hilbot's AI evaluation (scores in 0–1 only)."""
    grading = row.gradingResult
    if grading is None and row.error:
        return Evaluation()  # the provider failed: nothing was graded
    passed = grading.passed if grading and grading.passed is not None else row.success
    overall = grading.score if grading and grading.score is not None else row.score
    scores: dict[str, float] = {}
    reasons: dict[str, str] = {}
    for name, result in _components(grading.componentResults if grading else None):
        score = _finite(result.score, 0.0, 1.0)
        if score is not None:
            scores[name] = score
        if result.reason:
            reasons[name] = result.reason
    for named in (
        row.namedScores or {},
        grading.namedScores if grading and grading.namedScores else {},
    ):
        for name, value in named.items():
            if _finite(value, 0.0, 1.0) is not None and name not in scores:
                scores[name] = float(value)  # type: ignore[arg-type]
    if _finite(overall, 0.0, 1.0) is not None:
        scores["overall"] = float(overall)  # type: ignore[arg-type]
    if passed is None and not scores:
        return Evaluation()
    verdict = None if passed is None else "PASS" if passed else "FAIL"
    return Evaluation(
        scores=scores,
        verdict=verdict,
        rationale=(grading.reason or None) if grading else None,
        reasons=reasons,
        judge=TOOL,
    )


def _components(results: list[_Grading | None] | None) -> list[tuple[str, _Grading]]:
    """Each assertion's result (those of an assert-set too) under a unique name: its metric, else
    its type."""
    out: list[tuple[str, _Grading]] = []
    names: set[str] = set()
    stack = list(reversed(results or []))
    while stack:
        result = stack.pop()
        if result is None:
            continue
        assertion = result.assertion or _Assertion()
        if assertion.type == "human":
            continue
        if result.componentResults and assertion.type in (None, "assert-set"):
            stack.extend(reversed(result.componentResults))
            if assertion.metric is None:
                continue
        base = assertion.metric or assertion.type or "assertion"
        name, n = base, 1
        while name in names or name == "overall":
            n += 1
            name = f"{base} #{n}"
        names.add(name)
        out.append((name, result))
    return out


class _SourceSpec(SourceSpec):
    """A source spec made here: the registry takes a built-in only from its home module, which it
    reads from the spec's ``__module__`` (a plain SourceSpec's is ``base``)."""


source(_SourceSpec(name=TOOL, extra="", settings=PromptfooSettings, pull=pull))

__all__ = ["PromptfooSettings", "pull"]
