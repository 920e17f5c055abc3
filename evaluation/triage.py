"""Diff triage: every change sorted into five categories with a confidence, then decided by the
policy.

The categories, from worst to best: 1 FAIL (a clear regression), 2 RECOMMEND FAIL (likely a
regression), 3 UNSURE (needs a human), 4 RECOMMEND ACCEPT (minor, likely fine), 5 ACCEPT (no
significant change, or a clear improvement). A triage judge gives one :class:`Triage` per change:

* ``local`` never calls a model, and says so: a traceback, an error or exception line added, or
  most of the output removed → RECOMMEND FAIL (confidence 0.8, the rule and the lines as its
  issues; :mod:`evaluation.changes.failures`); identical once whitespace is normalised → ACCEPT
  (1); only numbers changed, each within ``[triage]``'s tolerance → RECOMMEND ACCEPT (0.8);
  anything else → UNSURE (0).
* ``llm`` sends each change (name, description, both outputs, the diff) to ``[llm]`` through the
  one LLM client (cache, bounded concurrency, retries, cost, redaction, ``llm-calls.jsonl``), with
  the prompt ``prompts/triage.txt`` (overridable from ``[judge] prompts_dir``) and the answer forced
  to :class:`TriageAnswer`. A failed or malformed answer is UNSURE with the error, and the rest go
  on.

The policy (:func:`decide`) then accepts or rejects what its rules allow and sends the rest to
humans, in this order: the same change (path and both outputs) decided by a human before → that
decision (``precedent``); a ``require_human`` pattern matching the path → human; a failed triage →
human; flagged for a human → human; an auto-accept category at or above its threshold → accepted;
an auto-reject category at or above its threshold → rejected; anything else → human. A share of
the automatic decisions (``audit_share``, chosen by a hash of the triage and change ids, so the
same changes are chosen on every run) is also sent to humans, blind.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, Sequence

from pydantic import BaseModel, Field

from .changes import (
    Change,
    Tolerance,
    failure_sign,
    marked_diff,
    normalized_equal,
    numeric_diff,
    path_matches,
)
from .errors import HilbotError
from .records import JudgeKind
from .registry import Registry
from .triage_decisions import PRECEDENT

if TYPE_CHECKING:
    from .config import HilbotConfig, TriageSettings
    from .llm import LLM
    from .store import Store
    from .triage_decisions import Precedent

CATEGORIES = {1: "FAIL", 2: "RECOMMEND FAIL", 3: "UNSURE", 4: "RECOMMEND ACCEPT", 5: "ACCEPT"}
"""Category number → its name."""
PROMPT_CHARS = 12_000
"""Most characters of each output (and of the diff) put into a prompt; longer texts are cut, saying
so."""


class TriageError(HilbotError):
    """A triage cannot run: a bad source, an unknown triage judge, a bad prompt template."""


class TriageAnswer(BaseModel):
    """What the model must answer about one change."""

    category: int = Field(
        ge=1, le=5, description="1 FAIL, 2 RECOMMEND FAIL, 3 UNSURE, 4 RECOMMEND ACCEPT, 5 ACCEPT"
    )
    confidence: float = Field(ge=0, le=1, description="How sure you are of the category, 0 to 1")
    summary: str = Field(min_length=1, description="One line for reports")
    rationale: str = Field(min_length=1, description="Why this category")
    issues: list[str] = Field(
        default_factory=list,
        description="Specific issues, each with its line number: 'line 43: ...'",
    )
    suggestions: list[str] = Field(
        default_factory=list, description="How the test could be made easier to review"
    )
    flags_for_human: bool = Field(
        default=False, description="True when a human should look whatever the category"
    )


class Triage(BaseModel):
    """One change's triage, as reports, cards and ``.ai.json`` files show it."""

    category: int = Field(ge=1, le=5)
    """1 FAIL … 5 ACCEPT."""
    confidence: float = Field(ge=0, le=1)
    """How sure the judge is of the category."""
    summary: str
    """One line for reports."""
    rationale: str = ""
    """Why this category."""
    issues: list[str] = Field(default_factory=list)
    """Specific issues, with line numbers."""
    suggestions: list[str] = Field(default_factory=list)
    """How the test could be made easier to review."""
    flags_for_human: bool = False
    """A human should look whatever the category."""
    judge: str = "local"
    """Who triaged: ``local`` or the LLM's ``provider/model``."""
    judge_kind: JudgeKind = "local"
    """``local`` (rules, no model) or ``llm``."""
    error: str | None = None
    """Why the triage failed (then the category is UNSURE)."""
    cost_usd: float | None = None
    """Dollar cost of the call, when priced."""

    @property
    def label(self) -> str:
        """The category's name."""
        return CATEGORIES[self.category]


class TriageJudge(Protocol):
    """Sorts one change into a category."""

    name: str
    kind: JudgeKind

    async def triage(self, change: Change) -> Triage:
        """The change's category, confidence and reasons; never raises for one change's failure."""
        ...


TRIAGE_JUDGES: Registry = Registry(
    "triage judge",
    "hilbot.triage_judges",
    builtins={"local": __name__, "llm": __name__},
    hint="use --judge local (rules, nothing sent) or --judge llm",
)
"""Triage judges by name: ``local``, ``llm`` and plugins' (entry-point group
``hilbot.triage_judges``)."""


def tolerance(settings: "TriageSettings") -> Tolerance:
    """The numeric tolerance ``[triage]`` sets."""
    return Tolerance(relative=settings.relative_tolerance, absolute=settings.absolute_tolerance)


# --------------------------------------------------------------------------------------- the judges


class LocalTriage:
    """Rules only, no model: a sign of failure → RECOMMEND FAIL, whitespace-only → ACCEPT, numbers
    within tolerance → RECOMMEND ACCEPT, else UNSURE."""

    name = "local"
    kind: JudgeKind = "local"

    def __init__(self, config: "HilbotConfig", store: "Store"):
        self.tolerance = tolerance(config.triage)

    async def triage(self, change: Change) -> Triage:
        return self.decide(change)

    def decide(self, change: Change) -> Triage:
        """The rules, synchronously."""
        sign = failure_sign(change)
        if sign is not None:
            return _local(2, 0.8, sign.rule, sign.issues)
        if change.status != "changed" or change.expected is None or change.actual is None:
            return _local(
                3, 0.0, f"{change.status} (local rules do not judge added or removed outputs)"
            )
        if normalized_equal(change.expected, change.actual):
            return _local(5, 1.0, "identical once whitespace is normalised")
        numbers = numeric_diff(change.expected, change.actual, self.tolerance)
        if numbers.all_within:
            return _local(
                4, 0.8, f"only numbers changed, all {len(numbers.changes)} within tolerance"
            )
        if numbers.only_numbers:
            beyond = sum(not c.within for c in numbers.changes)
            return _local(
                3, 0.0, f"only numbers changed, {beyond} of {len(numbers.changes)} beyond tolerance"
            )
        return _local(3, 0.0, "the text changed (local rules cannot judge it)")


def _local(category: int, confidence: float, summary: str, issues: Sequence[str] = ()) -> Triage:
    return Triage(
        category=category,
        confidence=confidence,
        summary=f"local: {summary}",
        rationale=f"Local rules, no model: {summary}.",
        issues=list(issues),
    )


class LLMTriage:
    """Each change sent to the LLM with the triage prompt; the answer forced to
    :class:`TriageAnswer`."""

    name = "llm"
    kind: JudgeKind = "llm"

    def __init__(self, config: "HilbotConfig", store: "Store", llm: "LLM | None" = None):
        from .judges import load_prompts
        from .llm import LLM

        self.llm = llm or LLM(config.llm, store)
        self.template = load_prompts(config.judge.prompts_dir, names=("triage",))["triage"]
        self.tolerance = tolerance(config.triage)

    async def triage(self, change: Change) -> Triage:
        from .llm import LLMError, LLMRequest

        request = LLMRequest(
            prompt=self.prompt(change),
            output=TriageAnswer,
            purpose=f"triage:{change.id}",
            system="You review changes in test outputs. Be precise, brief and consistent.",
            tool_name="record_review",
            tool_description="Record your review of the change.",
        )
        try:
            response = await self.llm.complete(request)
        except LLMError as exc:
            return Triage(
                category=3,
                confidence=0.0,
                summary="triage failed: the change needs a human",
                judge=self.llm.label,
                judge_kind="llm",
                error=exc.one_line(),
                flags_for_human=True,
            )
        answer = response.output
        assert isinstance(answer, TriageAnswer)
        return Triage(
            **answer.model_dump(),
            judge=self.llm.label,
            judge_kind="llm",
            cost_usd=response.cost_usd,
        )

    async def aclose(self) -> None:
        """Close the LLM client's connections."""
        await self.llm.aclose()

    def prompt(self, change: Change) -> str:
        """The triage prompt for one change (each text cut to :data:`PROMPT_CHARS`)."""
        from .judges import fill

        return fill(
            "triage",
            self.template,
            test=change.name,
            description=change.description or "(none given)",
            path=change.path,
            status=change.status,
            expected=_cut(change.expected),
            actual=_cut(change.actual),
            diff=_cut(marked_diff(change, self.tolerance)),
            tolerance=_tolerance_text(self.tolerance),
        )


def _cut(text: str | None) -> str:
    if text is None:
        return "(none: the output did not exist)"
    return (
        text
        if len(text) <= PROMPT_CHARS
        else f"{text[:PROMPT_CHARS]}\n[… {len(text) - PROMPT_CHARS} more characters cut]"
    )


def _tolerance_text(tol: Tolerance) -> str:
    if not tol.relative and not tol.absolute:
        return "none configured: any numeric change is a change"
    return f"numbers may move by {tol.relative:.2%} of their size or by {tol.absolute:g}"


TRIAGE_JUDGES.register("local")(LocalTriage)
TRIAGE_JUDGES.register("llm")(LLMTriage)


def triage_judge(name: str, config: "HilbotConfig", store: "Store") -> TriageJudge:
    """The triage judge registered as ``name``."""
    return TRIAGE_JUDGES.get(name)(config, store)


WORKERS = 32
"""Changes triaged at once by a judge that makes no calls; an LLM judge uses twice ``[llm]
concurrency``."""


async def triage_all(
    judge: TriageJudge, changes: list[Change], *, close: bool = False
) -> list[Triage]:
    """Every change's triage, in order, by a few workers (so the first calls go out before every
    prompt is built).

    With ``close`` the judge's connections are closed at the end, in this event loop.
    """
    results: list[Triage | None] = [None] * len(changes)
    pending = iter(range(len(changes)))

    async def work() -> None:
        for n in pending:
            results[n] = await judge.triage(changes[n])

    try:
        workers = 2 * judge.llm.settings.concurrency if isinstance(judge, LLMTriage) else WORKERS
        await asyncio.gather(*(work() for _ in range(min(workers, len(changes)))))
    finally:
        if close and (aclose := getattr(judge, "aclose", None)) is not None:
            await aclose()
    return [r for r in results if r is not None]


# --------------------------------------------------------------------------------------- the policy


@dataclass(frozen=True)
class Decision:
    """What the policy decided for one change."""

    outcome: Literal["accepted", "rejected", "human"]
    """Accepted or rejected by a rule, or sent to humans."""
    rule: str
    """The rule that decided, in words."""
    audit: bool = False
    """An automatic decision also sent to humans, blind."""

    @property
    def to_humans(self) -> bool:
        """Whether humans see it: sent to them, or in the audit sample."""
        return self.outcome == "human" or self.audit

    @property
    def precedent(self) -> bool:
        """Whether a human's earlier decision on the same change decided it."""
        return self.rule.startswith(PRECEDENT + ":")


def decide(
    change: Change,
    triage: Triage,
    settings: "TriageSettings",
    triage_id: str,
    precedent: "Precedent | None" = None,
) -> Decision:
    """The policy's decision for one change (rules in the module docstring); a human's decision on
    the same change (``precedent``) comes before every rule."""
    if precedent is not None:
        return Decision(precedent.outcome, precedent.rule)
    pattern = next((p for p in settings.require_human if glob_match(p, change.path)), None)
    if pattern is not None:
        return Decision("human", f"require_human: {pattern}")
    if triage.error:
        return Decision("human", "the triage failed")
    if triage.flags_for_human:
        return Decision("human", "flagged for a human by the triage")
    where = f"{triage.label} at confidence {triage.confidence:.2f}"
    if (
        triage.category in settings.auto_accept_categories
        and triage.confidence >= settings.auto_accept_threshold
    ):
        rule = f"auto_accept: {where} ≥ {settings.auto_accept_threshold:g}"
        return Decision("accepted", rule, in_audit(triage_id, change.id, settings.audit_share))
    if (
        triage.category in settings.auto_reject_categories
        and triage.confidence >= settings.auto_reject_threshold
    ):
        rule = f"auto_reject: {where} ≥ {settings.auto_reject_threshold:g}"
        return Decision("rejected", rule, in_audit(triage_id, change.id, settings.audit_share))
    return Decision("human", f"{where}: no rule decides it")


def in_audit(triage_id: str, change_id: str, share: float) -> bool:
    """Whether an automatic decision is in the audit sample: a hash of the ids below ``share``
    (stable across runs)."""
    digest = hashlib.sha256(f"{triage_id}\0{change_id}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def glob_match(pattern: str, path: str) -> bool:
    """Whether ``path`` (POSIX) matches ``pattern``: ``**`` spans directories (also none), ``*`` and
    ``?`` stay within one."""
    return path_matches(path, [pattern])


__all__ = [
    "CATEGORIES",
    "TRIAGE_JUDGES",
    "Decision",
    "LLMTriage",
    "LocalTriage",
    "Triage",
    "TriageAnswer",
    "TriageError",
    "TriageJudge",
    "decide",
    "glob_match",
    "in_audit",
    "tolerance",
    "triage_all",
    "triage_judge",
]
