"""Judges: one async call per item, registered by name.

- ``llm``: an LLM judge through the configured provider (Anthropic by default). Search items get
  relevance / ranking / coverage / snippet / overall; answers get three
  judges (quote faithfulness, explanation faithfulness, answer correctness), each a prompt
  template in an editable file with a verdict and a one-sentence reason.
- ``lexical``: local methods only, no key and nothing sent anywhere. Its scores are labelled
  ``lexical`` wherever they appear and are never presented as an LLM's verdict.

Both add the local metrics: nDCG@k and recall@k where expected results exist, quote precision
and priority-weighted quote recall where ground-truth contexts exist. An answer's ``overall`` is
the weighted aggregate (0–100, stored as 0–1), renormalised over the metrics present.
A failed judgment is recorded on its item (the error, no scores); it never aborts a run.

Judges are registered by name in :data:`JUDGES` (:func:`judge`); a plugin adds one through the
``hilbot.judges`` entry-point group (see :mod:`evaluation.registry`). Each declares its kind —
``local``, ``llm`` or ``recorded`` — and the run header records the registry name and the kind,
which decides how its scores are labelled (:func:`evaluation.output.judge_label`).
"""

from __future__ import annotations

import asyncio
import hashlib
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Literal, Mapping, Protocol, get_args

from pydantic import BaseModel, Field

from . import metrics
from .cases import Case
from .errors import HilbotError
from .records import Evaluation, ItemData, JudgeInfo, JudgeKind
from .registry import Registry

if TYPE_CHECKING:
    from .config import HilbotConfig
    from .llm import LLM
    from .store import Store

PROMPTS = ("search", "quote_faithfulness", "explanation_faithfulness", "answer_correctness")
"""Prompt template names (``<name>.txt`` in the prompts directory)."""


class Judge(Protocol):
    """Scores one item."""

    name: str
    kind: JudgeKind
    """``local`` (labelled by the judge's name), ``llm`` (labelled ``AI``) or ``recorded`` (``AI
    [name]``)."""

    def info(self) -> JudgeInfo:
        """Name, parameters and prompt hashes, recorded in the run header."""
        ...

    async def judge(self, case: Case, item: ItemData) -> Evaluation:
        """The evaluation of one item (errors are recorded on it, not raised)."""
        ...


JudgeFactory = Callable[["HilbotConfig", "Store"], Judge]
KINDS: tuple[str, ...] = get_args(JudgeKind)
"""The kinds a judge may declare."""


class JudgeError(HilbotError):
    """A judge is declared wrongly (no kind, or one hilbot does not know)."""


def _declares_kind(name: str, factory: JudgeFactory) -> None:
    kind = getattr(factory, "kind", None)
    if kind not in KINDS:
        said = "declares no kind" if kind is None else f"declares the unknown kind {kind!r}"
        raise JudgeError(
            f"judge {name!r} {said}",
            fix='set kind = "local" (local methods), "llm" (an LLM\'s verdict) or "recorded" '
            "(scores made elsewhere) on the judge class, or pass judge(name, kind=...)",
        )


JUDGES: Registry[JudgeFactory] = Registry(
    "judge",
    "hilbot.judges",
    hint="pass --judge or set [judge] name to one of {names}",
    check=_declares_kind,
)
"""Every judge by name; plugins add theirs through the ``hilbot.judges`` entry-point group."""


def judge(name: str, *, kind: JudgeKind | None = None) -> Callable[[JudgeFactory], JudgeFactory]:
    """Register a judge factory under ``name`` (built-ins register the same way a plugin would).

    The factory declares its kind as a ``kind`` attribute (a class attribute on a judge class);
    ``kind=`` sets it, e.g. on a plain function factory.
    """

    def register(factory: JudgeFactory) -> JudgeFactory:
        if kind is not None and getattr(factory, "kind", kind) != kind:
            raise JudgeError(
                f"judge {name!r} is registered as {kind!r} but declares kind {factory.kind!r}",  # type: ignore[attr-defined]
                fix="declare one kind",
            )
        if kind is not None:
            factory.kind = kind  # type: ignore[attr-defined]
        return JUDGES.register(name)(factory)

    return register


def get_judge(name: str, config: "HilbotConfig", store: "Store") -> Judge:
    """Build the named judge; its :meth:`~Judge.info` records ``name`` (as ``registry_name``) and
    the declared kind."""
    factory = JUDGES.get(name)
    return _stamped(factory(config, store), name, factory.kind)  # type: ignore[attr-defined]


def registered_kind(name: str) -> JudgeKind | None:
    """The kind the judge registered as ``name`` declares, or None when no judge (built-in or
    plugin) has that name."""
    try:
        return getattr(JUDGES.get(name), "kind", None)
    except HilbotError:  # unknown, or a broken plugin: the caller falls back
        return None


class _Stamped:
    """A judge object that cannot take an instance attribute (``__slots__``, frozen), with the
    stamped ``info``."""

    def __init__(self, judge: Judge, info: Callable[[], JudgeInfo]):
        self._judge, self.info = judge, info

    def __getattr__(self, attr: str):
        return getattr(self._judge, attr)


def _stamped(built: Judge, name: str, kind: JudgeKind) -> Judge:
    """``built`` whose ``info()`` carries the registry name and the declared kind, whatever the
    judge itself fills in."""
    plain = built.info

    def info() -> JudgeInfo:
        return plain().model_copy(update={"registry_name": name, "kind": kind})

    try:
        built.info = info  # type: ignore[method-assign]  # the judge stays the object its factory built
    except (AttributeError, TypeError):
        return _Stamped(built, info)  # type: ignore[return-value]
    return built


def default_judge(config: "HilbotConfig") -> str:
    """The judge ``[judge] name`` names (``lexical`` unless the project opted in to ``llm``)."""
    return config.judge.name


# --------------------------------------------------------------------------- shared pieces


def load_prompts(prompts_dir: str | None, names: Iterable[str] = PROMPTS) -> dict[str, str]:
    """The templates ``names`` (default: the judges'), from ``prompts_dir`` where it has the file,
    else the built-in one."""
    builtin = resources.files(__package__).joinpath("prompts")
    templates = {}
    for name in names:
        override = Path(prompts_dir) / f"{name}.txt" if prompts_dir else None
        source = override if override and override.exists() else builtin.joinpath(f"{name}.txt")
        templates[name] = source.read_text("utf-8")
    return templates


def prompt_hashes(templates: dict[str, str]) -> dict[str, str]:
    """SHA-256 of each template."""
    return {
        name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in templates.items()
    }


def fill(name: str, template: str, **values: str) -> str:
    """A template with its ``{placeholders}`` filled; an unknown one is a one-line error."""
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise HilbotError(
            f"prompt template {name}.txt has an unknown placeholder or stray brace ({exc})",
            fix=f"use only {{{'}, {'.join(values)}}} and double literal braces",
        ) from None


def _numbered(texts: list[str]) -> str:
    return "\n".join(f"[{i}] {t}" for i, t in enumerate(texts, 1)) or "(none)"


def _results_text(item: ItemData) -> str:
    lines = []
    for n, r in enumerate(item.results, 1):
        lines.append(f"{r.rank or n}. {r.title or ''} {r.path or ''}".rstrip())
        if r.snippet:
            lines.append(f"   {r.snippet}")
    return "\n".join(lines) or "(no results)"


def is_search(item: ItemData) -> bool:
    """Judge as a ranked results list (else as an answer)."""
    return bool(item.results) and not item.answer


def local_scores(
    case: Case, item: ItemData, config: "HilbotConfig"
) -> tuple[dict[str, float | None], list[bool]]:
    """The metrics computed without any judge, and the ground-truth coverage."""
    if is_search(item):
        paths = [r.path for r in item.results]
        k = config.judge.k
        return {
            f"ndcg@{k}": metrics.ndcg_at_k(paths, case.query.expected, k),
            f"recall@{k}": metrics.recall_at_k(paths, case.query.expected, k),
        }, []
    contexts, weights = case.ground_truth_contexts, config.judge.priority_weights
    return {
        "quote_precision": metrics.quote_precision(contexts, item.quotes),
        "quote_recall": metrics.quote_recall(contexts, item.quotes, weights),
    }, metrics.coverage(contexts, item.quotes)


def finish(
    case: Case,
    item: ItemData,
    config: "HilbotConfig",
    scores: Mapping[str, float | None],
    *,
    label: str,
    reasons: dict[str, str],
    confidence: float | None = None,
    verdict: str | None = None,
    cost: float | None = None,
) -> Evaluation:
    """Assemble an evaluation: local metrics added, the answer aggregate as ``overall``, a
    verdict."""
    local, covered = local_scores(case, item, config)
    merged = {**scores, **local}
    if not is_search(item):
        weights = {**config.judge.metric_weights, **case.metric_weights}
        total = metrics.aggregate(merged, weights)
        merged["overall"] = None if total is None else total / 100
    clean = {k: round(v, 4) for k, v in merged.items() if v is not None}
    overall = clean.get("overall")
    if verdict is None and overall is not None:
        verdict = "PASS" if overall >= config.judge.pass_mark else "FAIL"
    return Evaluation(
        scores=clean,
        verdict=verdict,
        confidence=confidence,
        judge=label,
        reasons=reasons,
        rationale=" ".join(reasons.values()) or None,
        coverage=covered,
        cost_usd=cost,
    )


# --------------------------------------------------------------------------- lexical


class LexicalJudge:
    """Local methods only: term overlap, verbatim quote checks, token F1. Labelled ``lexical``."""

    name = "lexical"
    kind: JudgeKind = "local"

    def __init__(self, config: "HilbotConfig", store: "Store"):
        self.config = config

    def info(self) -> JudgeInfo:
        return JudgeInfo(
            name=self.name,
            kind=self.kind,
            params={
                "k": self.config.judge.k,
                "metric_weights": self.config.judge.metric_weights,
                "priority_weights": self.config.judge.priority_weights,
            },
        )

    async def judge(self, case: Case, item: ItemData) -> Evaluation:
        if is_search(item):
            scores, reasons = self._search(case, item)
        else:
            scores, reasons = self._answer(case, item)
        return finish(case, item, self.config, scores, label=self.name, reasons=reasons)

    def _search(self, case: Case, item: ItemData) -> tuple[dict[str, float | None], dict[str, str]]:
        query, top = case.query.query, item.results[: self.config.judge.k]
        gains = [
            metrics.term_overlap(query, f"{r.title or ''} {r.snippet or ''} {r.path or ''}")
            for r in top
        ]
        relevance = sum(gains) / len(gains)
        recall = metrics.recall_at_k([r.path for r in top], case.query.expected, len(top))
        union = " ".join(f"{r.title or ''} {r.snippet or ''} {r.path or ''}" for r in top)
        coverage = recall if recall is not None else metrics.term_overlap(query, union)
        snippet = sum(metrics.term_overlap(query, r.snippet) for r in top) / len(top)
        ranking = metrics.graded_ndcg(gains) or 0.0
        overall = (relevance + ranking + coverage + snippet) / 4
        reason = (
            f"lexical: the top {len(top)} results share {relevance:.0%} of the query's terms "
            "on average"
        )
        return {
            "relevance": relevance,
            "ranking": ranking,
            "coverage": coverage,
            "snippet": snippet,
            "overall": overall,
        }, {"overall": reason}

    def _answer(self, case: Case, item: ItemData) -> tuple[dict[str, float | None], dict[str, str]]:
        answer = item.answer or ""
        faithful = metrics.quotes_in_contexts(item.quotes, item.contexts)
        grounding = " ".join(item.quotes + item.contexts)
        explanation = metrics.term_overlap(answer, grounding) if grounding and answer else None
        correctness = (
            max((metrics.token_f1(answer, gt) for gt in case.ground_truth_answers), default=None)
            if answer
            else None
        )
        reasons = {}
        if faithful is not None:
            reasons["quote_faithfulness"] = (
                f"lexical: {faithful:.0%} of quotes appear verbatim in the retrieved contexts."
            )
        if explanation is not None:
            reasons["explanation_faithfulness"] = (
                f"lexical: {explanation:.0%} of the answer's terms occur in the quotes or contexts."
            )
        if correctness is not None:
            reasons["answer_correctness"] = (
                f"lexical: token F1 {correctness:.2f} against the closest ground-truth answer."
            )
        return {
            "quote_faithfulness": faithful,
            "explanation_faithfulness": explanation,
            "answer_correctness": correctness,
        }, reasons


judge("lexical")(LexicalJudge)


# --------------------------------------------------------------------------- LLM


class BinaryVerdict(BaseModel):
    """A YES/NO judgment with its reason."""

    answer: Literal["YES", "NO"]
    reason: str = Field(min_length=1)


class CorrectnessVerdict(BaseModel):
    """A CORRECT/INCORRECT judgment with its reason."""

    answer: Literal["CORRECT", "INCORRECT"]
    reason: str = Field(min_length=1)


class SearchVerdict(BaseModel):
    """The search scores, a verdict, a confidence and a reason."""

    relevance: float = Field(ge=0, le=1)
    ranking: float = Field(ge=0, le=1)
    coverage: float = Field(ge=0, le=1)
    snippet: float = Field(ge=0, le=1)
    overall: float = Field(ge=0, le=1)
    verdict: Literal["PASS", "FAIL", "UNSURE"]
    confidence: float = Field(ge=0, le=1)
    reason: str = Field(min_length=1)


_POSITIVE = {"YES", "CORRECT"}


class LLMJudge:
    """The search judge and the three answer judges, through the LLM client."""

    name = "llm"
    kind: JudgeKind = "llm"

    def __init__(self, config: "HilbotConfig", store: "Store", llm: "LLM | None" = None):
        from .llm import LLM

        self.config = config
        self.llm = llm or LLM(config.llm, store)
        self.templates = load_prompts(config.judge.prompts_dir)

    @property
    def label(self) -> str:
        return self.llm.label

    def info(self) -> JudgeInfo:
        params = {
            "provider": self.llm.provider.name,
            "model": self.llm.provider.model,
            "max_tokens": self.config.llm.max_tokens,
            "k": self.config.judge.k,
            "metric_weights": self.config.judge.metric_weights,
            "priority_weights": self.config.judge.priority_weights,
        }
        return JudgeInfo(
            name=self.label,
            kind=self.kind,
            params=params,
            prompt_hashes=prompt_hashes(self.templates),
        )

    async def judge(self, case: Case, item: ItemData) -> Evaluation:
        from .llm import LLMError

        try:
            if is_search(item):
                return await self._search(case, item)
            return await self._answer(case, item)
        except LLMError as exc:  # not judged; the local metrics still hold
            local, covered = local_scores(case, item, self.config)
            return Evaluation(
                judge=self.label,
                error=exc.what,
                coverage=covered,
                scores={k: round(v, 4) for k, v in local.items() if v is not None},
            )

    async def _ask(self, name: str, output: type[BaseModel], case: Case, **values: str):
        from .llm import LLMRequest

        prompt = fill(name, self.templates[name], **values)
        return await self.llm.complete(
            LLMRequest(prompt=prompt, output=output, purpose=f"judge:{name}:{case.id}")
        )

    async def _search(self, case: Case, item: ItemData) -> Evaluation:
        reply = await self._ask(
            "search",
            SearchVerdict,
            case,
            query=case.query.query,
            intent=case.query.intent or "(not given)",
            results=_results_text(item),
        )
        v: SearchVerdict = reply.output  # type: ignore[assignment]
        scores = {
            "relevance": v.relevance,
            "ranking": v.ranking,
            "coverage": v.coverage,
            "snippet": v.snippet,
            "overall": v.overall,
        }
        return finish(
            case,
            item,
            self.config,
            scores,
            label=self.label,
            reasons={"overall": v.reason},
            confidence=v.confidence,
            verdict=v.verdict,
            cost=reply.cost_usd or 0.0,
        )

    async def _answer(self, case: Case, item: ItemData) -> Evaluation:
        answer, quotes = item.answer or "", item.quotes
        calls = {}
        if quotes and item.contexts:
            calls["quote_faithfulness"] = self._ask(
                "quote_faithfulness",
                BinaryVerdict,
                case,
                rag_contexts=_numbered(item.contexts),
                quotes=_numbered(quotes),
            )
        if quotes and answer:
            calls["explanation_faithfulness"] = self._ask(
                "explanation_faithfulness",
                BinaryVerdict,
                case,
                quotes=_numbered(quotes),
                answer=answer,
            )
        if case.ground_truth_answers and answer:
            calls["answer_correctness"] = self._ask(
                "answer_correctness",
                CorrectnessVerdict,
                case,
                query=case.query.query,
                ground_truth="\n".join(case.ground_truth_answers),
                answer=answer,
            )
        replies = dict(zip(calls, await asyncio.gather(*calls.values())))
        scores = {name: 1.0 if r.output.answer in _POSITIVE else 0.0 for name, r in replies.items()}
        reasons = {name: r.output.reason for name, r in replies.items()}
        cost = sum(r.cost_usd or 0.0 for r in replies.values())
        return finish(case, item, self.config, scores, label=self.label, reasons=reasons, cost=cost)


judge("llm")(LLMJudge)
