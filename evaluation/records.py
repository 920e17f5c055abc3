"""Record models: every line of every event log is one of these.

Each record is one JSON line with ``type`` and ``v`` (schema version). Run files hold
``run_header``, ``query_evaluation`` and ``run_summary``; ``ratings.jsonl`` holds the human
events ``rating``, ``skip``, ``note`` and ``adjudication``, the chat channels' ``delivery`` and the
derived ``review_summary``.

Every time a record carries is a :data:`Timestamp`: one written without a zone is UTC, and one
outside the years 1970–2200 makes the line invalid (reported as ``file:line: timestamp: …``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, model_validator
from pydantic_core import PydanticCustomError

SCHEMA_VERSION = 1

Confidence = Literal["high", "medium", "low"]


def utcnow() -> datetime:
    """The current time, timezone-aware UTC (what every record's timestamp uses)."""
    return datetime.now(timezone.utc)


EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)
"""The earliest time a record may carry."""
LATEST = datetime(2200, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc)
"""The latest time a record may carry (pandas and date arithmetic hold it comfortably)."""


def _sane_time(value: datetime) -> datetime:
    """A record's time: one without a zone is UTC; outside years 1970–2200 it is an error."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    if not EARLIEST <= value <= LATEST:
        raise PydanticCustomError(
            "time_out_of_range",
            "{time} is outside the years 1970–2200; write the time in UTC as 2026-01-31T12:00:00Z",
            {"time": value.isoformat()},
        )
    return value


Timestamp = Annotated[datetime, AfterValidator(_sane_time)]
"""A datetime in a record: naive means UTC, and it must lie in years 1970–2200 (UTC)."""

MAX_WEIGHT = 1_000_000.0
"""The largest weight of a metric or a priority (a weighted sum of larger ones can overflow)."""


def _sane_weight(value: float) -> float:
    if not 0.0 <= value <= MAX_WEIGHT:
        raise PydanticCustomError(
            "weight_out_of_range",
            "a weight must be between 0 and 1,000,000, not {weight}",
            {"weight": f"{value:g}"},
        )
    return value


Weight = Annotated[float, AfterValidator(_sane_weight)]
"""A weight in a weighted mean: finite, between 0 and :data:`MAX_WEIGHT`."""


class Model(BaseModel):
    """The base of a record other tools write: unknown fields are kept, numbers are finite."""

    model_config = ConfigDict(
        extra="allow", populate_by_name=True, use_attribute_docstrings=True, allow_inf_nan=False
    )


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, use_attribute_docstrings=True, allow_inf_nan=False
    )


# --------------------------------------------------------------------------- run records


JudgeKind = Literal["local", "llm", "recorded"]
"""How a judge scores: ``local`` methods, an ``llm``'s verdict, or ``recorded`` elsewhere (imported
scores)."""


def legacy_judge_kind(name: str | None) -> JudgeKind:
    """The kind a judge name implies, for files written before the kind was recorded (and names no
    judge registers).

    ``lexical`` is local, ``provider/model`` (or no name) is an LLM, anything else was recorded by
    another tool.
    """
    if name == "lexical":
        return "local"
    return "llm" if name is None or "/" in name else "recorded"


class JudgeInfo(Model):
    """How a run's items were judged."""

    name: str = "unknown"
    """Judge name as items carry it: ``lexical``, ``provider/model`` for the LLM judge, ``recorded`` (imported)."""
    registry_name: str | None = None
    """Name the judge is registered under (``--judge``, ``[judge] name``): ``lexical``, ``llm`` or a plugin's."""
    kind: JudgeKind = "recorded"
    """``local``, ``llm`` or ``recorded``: labels scores as the judge's name, ``AI`` or ``AI [name]``; older files: from ``name``."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Judge parameters (model, temperature, weights)."""
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    """SHA-256 of each prompt template used, so a run says how it was judged."""

    @model_validator(mode="before")
    @classmethod
    def _legacy_kind(cls, data: Any) -> Any:
        """A header written before judges recorded their kind gets the one its name implies."""
        if isinstance(data, dict) and data.get("kind") is None:
            name = data.get("name", "unknown")
            data = {**data, "kind": legacy_judge_kind(name if isinstance(name, str) else None)}
        return data


class RunHeader(Model):
    """First line of a run file: what was evaluated and how."""

    type: Literal["run_header"] = "run_header"
    """Record type."""
    v: int = SCHEMA_VERSION
    """Schema version."""
    run_id: str
    """Run identifier (letters, digits, ``._-``)."""
    set: str = "core"
    """Query set or source the items came from."""
    kind: Literal["search", "answer", "scenario", "change"] = "search"
    """What each item is: a ranked results list, an answer, or an agent scenario."""
    created_at: Timestamp = Field(default_factory=utcnow)
    """When the run was started."""
    source: str | None = None
    """File or target the outputs came from (e.g. the imported file's name)."""
    judge: JudgeInfo = Field(default_factory=JudgeInfo)
    """The judge that produced the AI scores."""
    dimensions: list[str] = Field(default_factory=lambda: ["overall"])
    """Dimensions humans rate this run on (keys of ``[dimensions]`` in hilbot.toml)."""
    item_count: int | None = None
    """Number of items, when known up front."""
    target: str | None = None
    """The system under test: ``module:function``, a command, or an outputs file."""
    label: str | None = None
    """Name shown in model comparisons (default: the model the target reports, else the run id)."""
    baseline: str | None = None
    """Run this one was checked against for regressions."""
    sample: dict[str, Any] | None = None
    """How a sampled run was drawn (``hilbot sample``): source, by, allocation, n, seed, population, strata."""
    triage_key: str | None = None
    """``hilbot triage``: a hash of the changes found and how they were triaged; triaging the same changes again reuses this run."""


class Query(Model):
    """The query or scenario an item answers (``data.query``)."""

    query: str
    """The query text or scenario prompt."""
    intent: str | None = None
    """What the user wanted."""
    category: str | None = None
    """Category used for stratified sampling and pattern analysis."""
    expected: list[str] = Field(default_factory=list)
    """Expected result paths or expected component, when known."""
    expected_answer: str | None = None
    """Expected answer, when the query set gives one."""


class SearchResult(Model):
    """One entry of a ranked results list."""

    rank: int | None = None
    """1-based position in the list."""
    path: str | None = None
    """Document path or URL."""
    title: str | None = None
    """Document title."""
    score: float | None = None
    """The search system's own score."""
    snippet: str | None = None
    """Snippet shown to the user."""


class Evaluation(Model):
    """The AI judge's view of an item (``data.evaluation``)."""

    scores: dict[str, float] = Field(default_factory=dict)
    """Scores in 0–1 per metric; ``overall`` is the headline."""
    verdict: str | None = None
    """Verdict category, e.g. PASS / FAIL / UNSURE."""
    confidence: float | str | None = None
    """Judge confidence: 0–1 or high/medium/low."""
    rationale: str | None = None
    """The judge's reason, hidden from reviewers until they have rated."""
    judge: str | None = None
    """Name of the judge that produced this evaluation."""
    error: str | None = None
    """Why judging failed, if it did (then there are no scores)."""
    reasons: dict[str, str] = Field(default_factory=dict)
    """One-sentence reason per judged metric."""
    coverage: list[bool] = Field(default_factory=list)
    """Per ground-truth context (in order): whether a quote contains it."""
    cost_usd: float | None = None
    """Dollar cost of judging this item (0 when every call came from the cache)."""


class GroundTruthContext(_Strict):
    """A context a correct answer should quote, with its priority."""

    text: str = Field(min_length=1)
    """The passage, matched as a substring ignoring markdown and whitespace."""
    priority: str = "critical"
    """``critical`` (default) or ``supporting``; weights come from ``[judge.priority_weights]``."""


class ItemData(Model):
    """Everything about one evaluated item."""

    id: str
    """Item id, unique within the run."""
    query: Query
    """The query or scenario."""
    results: list[SearchResult] = Field(default_factory=list)
    """Ranked results, for search items."""
    answer: str | None = None
    """The system's answer or response, for answer and scenario items."""
    contexts: list[str] = Field(default_factory=list)
    """Retrieved contexts the answer was grounded on."""
    ground_truth: list[str] = Field(default_factory=list)
    """Reference answers or critical contexts, when known."""
    ground_truth_contexts: list[GroundTruthContext] = Field(default_factory=list)
    """Contexts a good answer quotes, with priorities (from the test cases)."""
    quotes: list[str] = Field(default_factory=list)
    """Passages the answer cites verbatim."""
    tool_captures: list[dict[str, Any]] = Field(default_factory=list)
    """Tools the system invoked, with their inputs and outputs."""
    evaluation: Evaluation = Field(default_factory=Evaluation)
    """The AI judge's evaluation."""
    features: dict[str, Any] = Field(default_factory=dict)
    """Arbitrary item features (leap_distance, source_type, …) for correlation analysis."""
    latency_ms: float | None = None
    """Time the system under test took."""
    cost_usd: float | None = None
    """Cost of producing the item (the system under test's calls)."""
    usage: dict[str, int] = Field(default_factory=dict)
    """Tokens the system under test reported (input_tokens, output_tokens)."""
    error: str | None = None
    """Why the system under test failed on this item, if it did."""
    model: str | None = None
    """Model the system under test reported using."""


class QueryEvaluation(Model):
    """One evaluated item of a run (``data.query`` and ``data.evaluation.scores``)."""

    type: Literal["query_evaluation"] = "query_evaluation"
    """Record type."""
    v: int = SCHEMA_VERSION
    """Schema version."""
    run_id: str
    """Run this item belongs to."""
    data: ItemData
    """The item."""


class RunSummary(Model):
    """Last line of a run file."""

    type: Literal["run_summary"] = "run_summary"
    """Record type."""
    v: int = SCHEMA_VERSION
    """Schema version."""
    run_id: str
    """Run this summarises."""
    finished_at: Timestamp = Field(default_factory=utcnow)
    """When the run finished."""
    item_count: int = 0
    """Items evaluated."""
    averageScores: dict[str, float] = Field(default_factory=dict)
    """Mean of each AI score over the run's items."""


# --------------------------------------------------------------------------- human events


class Reviewer(_Strict):
    """Who made a human event."""

    platform: str = "terminal"
    """Where the reviewer is: terminal, telegram, slack."""
    id: str
    """Platform user id (the OS user name on the terminal)."""
    name: str | None = None
    """Display name."""

    @property
    def key(self) -> str:
        """``platform:id``, the reviewer's identity across records."""
        return f"{self.platform}:{self.id}"


class Labels(_Strict):
    """Per-dimension label fields, filled from the chosen scale option."""

    trigger_correct: bool | None = None
    """Trigger accuracy: did the correct component trigger?"""
    trigger_component_observed: str | None = None
    """Trigger accuracy: what actually triggered, if wrong."""
    code_parses: bool | None = None
    """Code validity: does the code parse?"""
    code_runs: bool | None = None
    """Code validity: would the code run?"""
    code_issues: list[str] | None = None
    """Code validity: specific issues found."""
    technically_correct: bool | None = None
    """Technical accuracy: is the information accurate?"""
    inaccuracies: list[str] | None = None
    """Technical accuracy: specific inaccuracies."""
    completeness_score: int | None = Field(default=None, ge=1, le=5)
    """Completeness: 1 = minimal … 5 = comprehensive."""
    missing_elements: list[str] | None = None
    """Completeness: what was omitted."""


class RatingMetadata(_Strict):
    """Metadata kept with each rating."""

    source_type: str | None = None
    """Input format of the item: chat, transcript, article, tweet, docs…"""
    session_date: str | None = None
    """Batch the rating belongs to (YYYY-MM-DD)."""
    user_notes: str | None = None
    """Free-form feedback."""
    blocked_by: str | None = None
    """What blocked a good answer, e.g. "missing market data"."""
    follow_up: str | None = None
    """Link to the next iteration on the same item."""


class _HumanEvent(_Strict):
    v: int = SCHEMA_VERSION
    """Schema version."""
    run_id: str
    """Run the item belongs to."""
    item_id: str
    """Item the event is about."""
    dimension: str = "overall"
    """Dimension being reviewed."""
    reviewer: Reviewer
    """Who made the event."""
    channel: str = "terminal"
    """Channel the event came through: terminal, telegram, slack."""
    idempotency_key: str
    """Unique per platform event (a tap's callback id, a message's chat and id, a keypress); repeats are not counted."""
    action: str | None = None
    """What the reviewer did (``rate:good``, ``toggle:stale_content``, ``skip``): tells a repeat from a reused key."""
    timestamp: Timestamp = Field(default_factory=utcnow)
    """When the reviewer acted."""


class Rating(_HumanEvent):
    """A reviewer's judgment of one item on one dimension. The latest per (run, item, dimension, reviewer) counts."""

    type: Literal["rating"] = "rating"
    """Record type."""
    judgment: str
    """Scale option chosen, e.g. ``good`` or ``excellent``."""
    score: float = Field(ge=0.0, le=1.0)
    """The option's numeric score (0–1)."""
    concerns: list[str] = Field(default_factory=list)
    """Concern tags the reviewer attached."""
    concerns_dropped: list[str] | None = None
    """Concern tags the item had before this rating changed it to an option that takes none."""
    note: str | None = None
    """Free-text note typed with the rating."""
    confidence: Confidence | None = None
    """The reviewer's confidence in the judgment."""
    ai_verdict_shown: bool = False
    """Whether the AI verdict had been shown before this judgment (False = blind)."""
    labels: Labels = Field(default_factory=Labels)
    """Per-dimension label fields."""
    metadata: RatingMetadata = Field(default_factory=RatingMetadata)
    """Rating metadata."""


class Skip(_HumanEvent):
    """A reviewer passed on an item."""

    type: Literal["skip"] = "skip"
    """Record type."""
    skip_reason: str | None = None
    """Why (skipReason in the label export), e.g. "unclear"."""


class Note(_HumanEvent):
    """A free-text note on an item, with or without a rating."""

    type: Literal["note"] = "note"
    """Record type."""
    text: str
    """The note."""


class AdjudicatedLabel(_Strict):
    """One reviewer's independent label as the adjudicator saw it."""

    reviewer: str
    """The reviewer's ``platform:id`` key."""
    judgment: str
    """What they rated."""
    score: float = Field(ge=0.0, le=1.0)
    """Its score (0–1)."""


class Adjudication(_HumanEvent):
    """How an adjudicator resolved an item the reviewers (or the AI and the humans) disagree on.

    ``reviewer`` is the adjudicator. The latest adjudication of an item and dimension counts; the
    reviewers' own ratings are never changed, so agreement is still measured on them.
    """

    type: Literal["adjudication"] = "adjudication"
    """Record type."""
    decision: Literal["consensus", "exclude"]
    """A consensus label for the item, or the item left out of every gold-label analysis."""
    judgment: str | None = None
    """The consensus label (a value of the dimension's scale); None when excluded."""
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    """The consensus label's score (0–1); None when excluded."""
    reason: str | None = None
    """Why the item is excluded (required then), or a remark on the consensus."""
    labels: list[AdjudicatedLabel] = Field(default_factory=list)
    """The independent labels the adjudicator saw, by reviewer."""

    @model_validator(mode="after")
    def _complete(self) -> "Adjudication":
        if self.decision == "consensus" and (self.judgment is None or self.score is None):
            raise ValueError("a consensus adjudication needs its judgment and score")
        if self.decision == "exclude" and not (self.reason or "").strip():
            raise ValueError("an exclusion needs its reason")
        return self


class Delivery(_Strict):
    """A card or a note prompt a chat channel delivered to a reviewer (so sessions survive restarts)."""

    type: Literal["delivery"] = "delivery"
    """Record type."""
    v: int = SCHEMA_VERSION
    """Schema version."""
    run_id: str
    """Run the item belongs to."""
    item_id: str
    """Item shown."""
    dimension: str = "overall"
    """Dimension asked about."""
    reviewer: Reviewer
    """Reviewer the card was dealt to."""
    channel: str
    """Channel that delivered it: ``telegram`` or ``slack``."""
    kind: Literal["card", "note_prompt", "session", "expired"] = "card"
    """Card, note prompt, session started in a chat (no item), or ``expired`` (claim ran out)."""
    chat_id: str
    """Platform chat (Telegram chat id, Slack channel id)."""
    message_id: str
    """Platform message id (Telegram message id, Slack ts)."""
    group: bool = False
    """Delivered in a group chat, where any allow-listed member may rate it as themselves."""
    timestamp: Timestamp = Field(default_factory=utcnow)
    """When it was delivered (UTC)."""


class ReviewSummary(_Strict):
    """The ``hilReview``: one review session's (or the synthesis') summary of a run."""

    type: Literal["review_summary"] = "review_summary"
    """Record type."""
    v: int = SCHEMA_VERSION
    """Schema version."""
    run_id: str
    """Run summarised."""
    dimension: str = "overall"
    """Dimension summarised."""
    reviewer: Reviewer | None = None
    """Reviewer whose session this summarises (None = all reviewers)."""
    reviewedAt: Timestamp = Field(default_factory=utcnow)
    """When the summary was made."""
    queriesReviewed: int = 0
    """Items rated."""
    queriesSkipped: int = 0
    """Items skipped."""
    queriesFlagged: int = 0
    """Rated items that carry a concern tag or a note."""
    humanAverageScore: float | None = None
    """Mean human score over rated items."""
    aiVsHumanDelta: float | None = None
    """AI − human, as the hil format defines it: mean (AI score − human score) over rated items the AI scored."""
    synthesis: str | None = None
    """Prose synthesis of the human feedback."""
    synthesis_source: str | None = None
    """What wrote the synthesis: an LLM's name or ``statistical``."""
    actionItems: list[str] = Field(default_factory=list)
    """Action items derived from the feedback."""

    @property
    def human_minus_ai(self) -> float | None:
        """Human − AI (``−aiVsHumanDelta``), for the texts that say "human − AI"."""
        return None if self.aiVsHumanDelta is None else -self.aiVsHumanDelta


class TriageDecision(_Strict):
    """How one change found by ``hilbot triage`` was decided: by a rule of the policy, or sent to humans."""

    type: Literal["triage_decision"] = "triage_decision"
    """Record type."""
    v: int = SCHEMA_VERSION
    """Schema version."""
    run_id: str
    """The triage: the run holding the changes sent to humans (its items are the changes)."""
    change_id: str
    """The change (a snapshot's relative path, a run item's id, a file row's id)."""
    path: str
    """What the require-human patterns matched against."""
    outcome: Literal["accepted", "rejected", "human"]
    """Accepted or rejected by a rule, or sent to humans to decide."""
    rule: str
    """The rule that decided, in words (``auto_accept: ACCEPT at confidence 0.97 ≥ 0.95``, ``require_human: **/payment_*``)."""
    audit: bool = False
    """An automatic decision also sent to humans, blind, to measure how often the rules are right."""
    category: int = Field(ge=1, le=5)
    """The triage's category: 1 FAIL, 2 RECOMMEND FAIL, 3 UNSURE, 4 RECOMMEND ACCEPT, 5 ACCEPT."""
    confidence: float = Field(ge=0, le=1)
    """The triage's confidence in its category."""
    judge: str
    """Who triaged: ``local`` (rules, no model) or the LLM's ``provider/model``."""
    judge_kind: JudgeKind = "local"
    """``local`` or ``llm``: how the category was reached."""
    timestamp: Timestamp = Field(default_factory=utcnow)
    """When it was decided (UTC)."""


class DigestPosted(_Strict):
    """A scheduled digest a chat bot posted: when, where, and from when its "new" ratings count."""

    type: Literal["digest_posted"] = "digest_posted"
    """Record type."""
    v: int = SCHEMA_VERSION
    """Schema version."""
    channel: str
    """The bot that posted it: ``telegram`` or ``slack``."""
    chats: list[str] = Field(default_factory=list)
    """The chats it went to (Telegram chat ids, Slack channel ids)."""
    since: Timestamp
    """Ratings after this time were counted as new."""
    scheduled: bool = True
    """Posted by the schedule (a digest asked for with a command does not move the schedule)."""
    timestamp: Timestamp = Field(default_factory=utcnow)
    """When it was posted (UTC)."""


class Push(_Strict):
    """A human label on its way to the tool its item came from (the outbox): one record per state."""

    type: Literal["push"] = "push"
    """Record type."""
    v: int = SCHEMA_VERSION
    """Schema version."""
    sink: str
    """Where it goes: a ``[sinks.NAME]`` of hilbot.toml, or the tool's name for ``hilbot push --to``."""
    tool: str
    """The tool (``langfuse``, ``langsmith``, ``inspect_ai``, ``phoenix``)."""
    run_id: str
    """The run the label belongs to."""
    item_id: str
    """The item rated."""
    dimension: str
    """The dimension rated."""
    reviewer: str
    """Who rated it (``platform:id``); the adjudicator for a gold label."""
    version: str
    """The idempotency key of the rating (or adjudication) sent: a corrected rating is a new version."""
    remote_id: str
    """The label's id in the tool (derived, so a re-send updates it)."""
    state: Literal["pending", "sent", "confirmed", "failed"]
    """``pending`` (to send), ``sent`` (accepted), ``confirmed`` (read back) or ``failed`` (refused: see ``error``)."""
    attempt: int = 0
    """How many times it was tried."""
    error: str | None = None
    """Why the last attempt failed (scrubbed)."""
    gold: bool = False
    """An adjudicated gold label rather than one reviewer's rating."""
    timestamp: Timestamp = Field(default_factory=utcnow)
    """When the state was reached (UTC)."""


class ConnectorCall(_Strict):
    """One call a connector made to another tool (``results/connectors-calls.jsonl``): what went where."""

    type: Literal["connector_call"] = "connector_call"
    """Record type."""
    v: int = SCHEMA_VERSION
    """Schema version."""
    at: Timestamp = Field(default_factory=utcnow)
    """When the call was made."""
    tool: str
    """The tool called."""
    sink: str | None = None
    """The sink it was made for, if any."""
    operation: Literal["pull", "send", "confirm"]
    """What was asked."""
    where: str | None = None
    """The host or file it went to."""
    count: int = 0
    """Items pulled, or labels sent or confirmed."""
    labels: list[str] = Field(default_factory=list)
    """The remote ids written or read back."""
    sent: list[dict[str, Any]] = Field(default_factory=list)
    """What was sent, label by label (item, dimension, reviewer, value, comment)."""
    seconds: float = 0.0
    """How long it took."""
    error: str | None = None
    """Why it failed, if it did."""


class LLMCall(_Strict):
    """One call to an LLM provider, as sent after redaction (``results/llm-calls.jsonl``)."""

    type: Literal["llm_call"] = "llm_call"
    """Record type."""
    v: int = SCHEMA_VERSION
    """Schema version."""
    at: Timestamp = Field(default_factory=utcnow)
    """When the call was made."""
    provider: str
    """Provider name, e.g. ``anthropic``."""
    model: str
    """Model id."""
    purpose: str
    """What the call was for, e.g. ``judge:answer_correctness:case-3`` or ``generate``."""
    cache_key: str
    """SHA-256 of (provider, model, prompt, parameters): the on-disk cache key."""
    sent: str
    """The system and user prompt exactly as sent, after redaction."""
    redactions: int = 0
    """How many matches of the redact patterns were replaced."""
    input_tokens: int | None = None
    """Input tokens billed."""
    output_tokens: int | None = None
    """Output tokens billed."""
    cost_usd: float | None = None
    """Dollar cost (None when the model has no price in ``[llm.prices]``)."""
    error: str | None = None
    """Why the call failed, if it did."""


RunRecord = Annotated[Union[RunHeader, QueryEvaluation, RunSummary], Field(discriminator="type")]
HumanRecord = Annotated[
    Union[
        Rating,
        Skip,
        Note,
        ReviewSummary,
        Delivery,
        TriageDecision,
        Adjudication,
        DigestPosted,
        Push,
    ],
    Field(discriminator="type"),
]
AnyRecord = Annotated[
    Union[
        RunHeader,
        QueryEvaluation,
        RunSummary,
        Rating,
        Skip,
        Note,
        ReviewSummary,
        Delivery,
        TriageDecision,
        Adjudication,
        DigestPosted,
        Push,
        ConnectorCall,
        LLMCall,
    ],
    Field(discriminator="type"),
]

RECORD_TYPES: dict[str, type[BaseModel]] = {
    m.model_fields["type"].default: m
    for m in (
        RunHeader,
        QueryEvaluation,
        RunSummary,
        Rating,
        Skip,
        Note,
        ReviewSummary,
        Delivery,
        TriageDecision,
        Adjudication,
        DigestPosted,
        Push,
        ConnectorCall,
        LLMCall,
    )
}

_any_adapter: TypeAdapter[Any] | None = None


def parse_record(obj: dict[str, Any]) -> BaseModel:
    """Validate a decoded JSON object as the record its ``type`` names."""
    global _any_adapter
    if _any_adapter is None:
        _any_adapter = TypeAdapter(AnyRecord)
    return _any_adapter.validate_python(obj)


def json_schemas() -> dict[str, Any]:
    """The JSON Schema of every record type, keyed by type name."""
    return {name: model.model_json_schema() for name, model in RECORD_TYPES.items()}
