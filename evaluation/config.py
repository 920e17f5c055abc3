"""``hilbot.toml``: scales, concern tags, dimensions and review settings, validated.

The built-in ``defaults.toml`` is loaded first; a project's file is merged over it table by
table. Unknown keys are errors reported with their path (and line, when it can be found). A file
that is not UTF-8, not a regular file, nested too deep for the TOML parser, or that holds an
integer past 4,300 digits, ``nan``/``inf`` or a path with a NUL character is one error as well.
"""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ._input import decode, line_of, read_file, where
from .errors import ConfigError, HilbotError
from .records import Weight
from .text import visible

RESERVED_KEYS = {"q", "\r", "\n", " "}
"""Keys no scale option may use: quit, and enter/space which skip or go on."""


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("a path cannot hold a NUL character (\\u0000); remove it")
    return value


PathText = Annotated[str, AfterValidator(_no_nul)]
"""A file or directory path from the config: any text but NUL, which no file system accepts."""


class ScaleOption(_Config):
    """One button of a rating scale."""

    value: str
    """Stored as the rating's ``judgment``."""
    label: str
    """What the button shows."""
    key: str = Field(min_length=1, max_length=1)
    """Single key that picks it in the terminal."""
    score: float = Field(ge=0.0, le=1.0)
    """Numeric score (0–1) stored with the rating."""
    number: float | None = None
    """The option's value on the scale's own numbers (e.g. 1–5) for interval and ratio agreement; default: its score."""
    meaning: str | None = None
    """One-line guidance shown in help."""
    ask_concerns: bool = False
    """Offer concern tags after this option (conditional follow-ups)."""
    success: bool | None = None
    """Counts as a success in success-rate analyses (default: score ≥ 0.5)."""
    labels: dict[str, Any] = Field(default_factory=dict)
    """Label fields this option sets, e.g. ``{trigger_correct = true}``."""


class Scale(_Config):
    """A rating scale: the question and its buttons."""

    question: str
    """Prompt shown above the buttons."""
    options: list[ScaleOption] = Field(min_length=2)
    """Buttons, best first."""
    skip_when: str | None = None
    """When to skip an item rather than rate it: the guide's (``?``, Guide) last line."""

    @model_validator(mode="after")
    def _unique(self) -> "Scale":
        for attr in ("value", "key"):
            seen = [getattr(o, attr) for o in self.options]
            dup = {v for v in seen if seen.count(v) > 1}
            if dup:
                raise ValueError(
                    f"duplicate option {attr} {sorted(dup)}; each option needs its own {attr}"
                )
        bad = [o.key for o in self.options if o.key.lower() in RESERVED_KEYS]
        if bad:
            raise ValueError(
                f"option key {bad[0]!r} is reserved (q quits, enter skips); pick another key"
            )
        return self

    def option(self, value: str) -> ScaleOption | None:
        """The option with this value, or None."""
        return next((o for o in self.options if o.value == value), None)


class ConcernSet(_Config):
    """A named set of concern tags."""

    tags: list[str] = Field(min_length=1)
    """Tag names (snake_case), offered as toggles."""


def _once(values: list[str]) -> list[str]:
    """A list of names, each given once."""
    twice = next((v for n, v in enumerate(values) if v in values[:n]), None)
    if twice is not None:
        raise ValueError(f"{twice!r} listed twice; list each once")
    return values


Choice = Annotated[str, Field(min_length=1, max_length=60)]
"""A button's text: a skip reason, a follow-up's choice."""

LIST_FIELDS = ("code_issues", "inaccuracies", "missing_elements")
"""Follow-up fields that hold a list of answers (``Labels``)."""
FOLLOW_UP_FIELDS = {
    "trigger_component_observed": "labels",
    **{f: "labels" for f in LIST_FIELDS},
    "blocked_by": "metadata",
    "follow_up": "metadata",
}
"""Every field a follow-up may fill, and where it lives on a rating (``labels`` or ``metadata``)."""
FollowUpField = Literal[
    "trigger_component_observed",
    "code_issues",
    "inaccuracies",
    "missing_elements",
    "blocked_by",
    "follow_up",
]


class FollowUp(_Config):
    """A structured question asked after a rating; the answer is stored in a field of the rating."""

    field: FollowUpField
    """The rating's field: trigger_component_observed, code_issues, inaccuracies, missing_elements (labels), blocked_by, follow_up."""
    question: str = Field(min_length=1, max_length=300)
    """What the reviewer is asked, e.g. "Which issues?"."""
    choices: Annotated[list[Choice], AfterValidator(_once)] = Field(
        default_factory=list, max_length=12
    )
    """Answers offered as buttons (terminal keys 1–9, then letters)."""
    text: bool = False
    """Also take a typed answer: "Other…" reads a line in the terminal and asks for a reply in a chat."""
    multiple: bool = False
    """Several choices may be picked (they toggle, then Done); only for the list fields."""
    when: list[str] = Field(default_factory=list)
    """Scale values after which it is asked (empty: after every rating)."""

    @model_validator(mode="after")
    def _answerable(self) -> "FollowUp":
        if not self.choices and not self.text:
            raise ValueError("give choices, or text = true for a typed answer")
        if self.multiple and self.field not in LIST_FIELDS:
            raise ValueError(
                f"multiple = true only for the list fields ({', '.join(LIST_FIELDS)}); "
                f"{self.field} holds one answer"
            )
        return self


class Dimension(_Config):
    """A dimension reviewers rate: which scale and which concern tags."""

    scale: str
    """Name of a scale in ``[scales]``."""
    concerns: str | None = None
    """Name of a concern set in ``[concerns]``, or none."""
    question: str | None = None
    """Overrides the scale's question for this dimension."""
    confidence: bool = False
    """After a rating, ask how sure the reviewer is (high, medium, low): one more key or tap, which may be skipped."""
    follow_ups: list[FollowUp] = Field(default_factory=list, max_length=9)
    """Structured questions asked after a rating, in order, each only after the options its ``when`` names."""
    metric: str | None = Field(default=None, min_length=1, max_length=100)
    """The judge's score its ratings are compared with (answer_correctness…); default: its own name, else overall."""

    @model_validator(mode="after")
    def _each_field_once(self) -> "Dimension":
        fields = [f.field for f in self.follow_ups]
        twice = next((f for n, f in enumerate(fields) if f in fields[:n]), None)
        if twice is not None:
            raise ValueError(f"follow_ups asks {twice} twice; ask each field once")
        return self


FeatureName = Annotated[str, Field(min_length=1, max_length=60, pattern=r"^[^\x00-\x1f\x7f]+$")]
"""An item feature's name (``plugin``, ``component_type``)."""
FeatureNames = Annotated[list[FeatureName], Field(max_length=20), AfterValidator(_once)]


class CardContext(_Config):
    """The item features a review card shows as the item's context, by run kind; a kind not set
    shows the ones an import recognises (plugin, plugin_description, component, component_type,
    system)."""

    search: FeatureNames | None = None
    """Shown on a search run's cards."""
    answer: FeatureNames | None = None
    """Shown on an answer run's cards."""
    scenario: FeatureNames | None = None
    """Shown on a scenario run's cards."""

    def fields(self, kind: str) -> list[str]:
        """The features shown on the cards of a run of ``kind`` (none on a change's card)."""
        from .imports import CONTEXT_FIELDS

        if kind not in type(self).model_fields:
            return []
        configured = getattr(self, kind)
        return list(CONTEXT_FIELDS if configured is None else configured)


class ReviewSettings(_Config):
    """How items are assigned and revealed."""

    k: int = Field(default=1, ge=1)
    """Ratings needed per item and dimension (from different reviewers)."""
    reveal_after_rating: bool = True
    """Show the AI verdict once the reviewer's own rating is stored."""
    window: int = Field(default=1, ge=1)
    """Unanswered cards pushed per reviewer on chat channels."""
    synthesize_at_end: Literal["off", "statistical", "llm"] = "statistical"
    """At a session's end, synthesize the run's reviews into its summary (``llm``: sends notes and scores to [llm])."""
    skip_reasons: Annotated[list[Choice], AfterValidator(_once)] = Field(
        default_factory=list, max_length=9
    )
    """Why a reviewer skips, offered after Skip (one more key or tap, which may be left out); ``other`` also asks for a note."""
    enter_skips_after_s: float = Field(default=1.5, ge=0, le=60)
    """Seconds a terminal card must have been on screen before enter skips it (``s`` skips at once); 0: at once."""
    context: CardContext = Field(default_factory=CardContext)
    """The item features a card shows as the item's context, by run kind ([review.context])."""


class Price(_Config):
    """A model's price in US dollars per million tokens."""

    input: float = Field(ge=0)
    """Dollars per million input tokens."""
    output: float = Field(ge=0)
    """Dollars per million output tokens."""


class LLMSettings(_Config):
    """The LLM provider judges and query generation call (the key comes from the environment)."""

    provider: str = "anthropic"
    """Registered provider name: ``anthropic`` or ``openai-compatible``."""
    model: str = "claude-sonnet-4-5"
    """Model id sent to the provider."""
    max_tokens: int = Field(default=400, ge=1)
    """Output token cap per call."""
    output: Literal["tool", "json"] = "tool"
    """How the answer is forced: one tool call, or structured JSON output (for models that refuse forced tools)."""
    concurrency: int = Field(default=8, ge=1)
    """Calls in flight at once."""
    max_retries: int = Field(default=4, ge=0)
    """Retries on 429, 529, 5xx and timeouts (backoff, honouring retry-after)."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Seconds before one call times out."""
    cache: bool = True
    """Reuse the answer to an identical (model, prompt) call from the on-disk cache."""
    redact: list[str] = Field(default_factory=list)
    """Regular expressions replaced by ``[REDACTED]`` before anything leaves the machine."""
    prices: dict[str, Price] = Field(default_factory=dict)
    """Price per model id, for the dollar cost of each call."""


class JudgeSettings(_Config):
    """How items are scored."""

    name: str = "lexical"
    """Judge used when ``--judge`` is not given; ``llm`` opts in to sending items to the LLM provider."""
    metric_weights: dict[str, Weight] = Field(default_factory=dict)
    """Weights of the answer metrics in the 0–100 aggregate."""
    priority_weights: dict[str, Weight] = Field(default_factory=dict)
    """Weight of a ground-truth context per priority in quote recall."""
    prompts_dir: PathText | None = None
    """Directory with prompt templates overriding the built-in ones (same file names)."""
    k: int = Field(default=5, ge=1)
    """Cut-off for nDCG@k and recall@k."""
    pass_mark: float = Field(default=0.6, ge=0, le=1)
    """``overall`` at or above this is PASS."""
    max_unjudged: float = Field(default=0.0, ge=0, le=1)
    """Share of a run's items (0–1) that may go unjudged (target or judge failed) before ``run --silent`` exits 1."""

    @model_validator(mode="after")
    def _known_metrics(self) -> "JudgeSettings":
        from .metrics import ANSWER_METRICS

        unknown = sorted(set(self.metric_weights) - set(ANSWER_METRICS))
        if unknown:
            raise ValueError(
                f"judge.metric_weights: unknown metric {unknown[0]!r}; use "
                f"{', '.join(ANSWER_METRICS)}"
            )
        return self


class RegressionSettings(_Config):
    """When a run counts as a regression against its baseline."""

    threshold: float = Field(default=0.1, ge=0)
    """A query regresses when its ``overall`` drops by more than this."""
    average_threshold: float = Field(default=0.05, ge=0)
    """The run regresses when its average ``overall`` drops by more than this."""


class QuerySettings(_Config):
    """Where query sets live."""

    dir: PathText = "tests/fixtures/queries"
    """Directory of curated sets (``<name>.json``) and ``generated/<date>.json``."""
    generate_count: int = Field(default=12, ge=1, le=50)
    """Queries the LLM proposes per batch."""


class TargetSettings(_Config):
    """How the system under test is called."""

    timeout_s: float = Field(default=60.0, gt=0)
    """Seconds one call of a target may take."""
    concurrency: int = Field(default=4, ge=1)
    """Calls of the target in flight at once (judging is bounded by ``[llm] concurrency``)."""


def _platform_id(value: Any) -> Any:
    """A platform's id as a string; Telegram's numeric ids may be written as numbers."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


PlatformId = Annotated[
    str,
    BeforeValidator(_platform_id),
    Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_@.:-]+$"),
]
"""A user or chat id on a chat platform (opaque; Telegram's are numbers, Slack's ``U…``/``C…``)."""


class FloodLimits(_Config):
    """Telegram's flood limits, which the bot keeps to on its side."""

    overall_per_s: float = Field(default=30, gt=0)
    """Messages per second across all chats."""
    chat_per_s: float = Field(default=1, gt=0)
    """Messages per second to one private chat."""
    group_per_min: float = Field(default=20, gt=0)
    """Messages per minute to one group."""
    max_retries: int = Field(default=8, ge=0)
    """Retries of one call after a 429 (waiting the ``retry_after`` it names) or a timeout."""


class DigestSchedule(_Config):
    """When and where the bot posts digests."""

    chats: list[PlatformId] = Field(default_factory=list)
    """Chat ids the scheduled digest goes to (none: no schedule)."""
    time: str | None = Field(default=None, pattern=r"^([01]\d|2[0-3]):[0-5]\d$")
    """Daily at this time, ``HH:MM``."""
    timezone: str = "UTC"
    """IANA time zone of ``time``, e.g. ``Europe/Berlin``."""
    every_minutes: int | None = Field(default=None, ge=1)
    """Or every this many minutes."""

    @model_validator(mode="after")
    def _one_schedule(self) -> "DigestSchedule":
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        if self.time and self.every_minutes:
            raise ValueError("digest: set either time or every_minutes, not both")
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"digest.timezone: unknown time zone {self.timezone!r}; use an IANA name such as "
                "Europe/Berlin"
            ) from None
        return self


class TelegramSettings(_Config):
    """The Telegram bot (the token comes only from ``TELEGRAM_BOT_TOKEN``)."""

    api_url: str = "https://api.telegram.org"
    """Bot API server; ``TELEGRAM_API_URL`` overrides it (e.g. a self-hosted Bot API server)."""
    reviewers: list[PlatformId] = Field(default_factory=list)
    """Telegram user ids allowed to review; ``/push`` deals cards to each of them."""
    admins: list[PlatformId] = Field(default_factory=list)
    """User ids allowed to ``/push`` and ``/digest`` (admins may review too)."""
    mode: Literal["polling", "webhook"] = "polling"
    """Long polling, or a webhook (secret from ``TELEGRAM_WEBHOOK_SECRET``)."""
    poll_timeout_s: int = Field(default=10, ge=0)
    """Long-poll timeout of ``getUpdates``."""
    poll_interval_s: float = Field(default=0.0, ge=0, le=60)
    """Pause between one ``getUpdates`` answer and the next call (0: at once)."""
    webhook_url: str | None = None
    """Public HTTPS URL Telegram posts updates to (webhook mode)."""
    listen: str = "127.0.0.1"
    """Address the webhook server binds."""
    port: int = Field(default=8443, ge=1, le=65535)
    """Port the webhook server binds."""
    read_timeout_s: float = Field(default=10, gt=0)
    """Seconds to wait for the Bot API's answer to one call."""
    refresh_s: float = Field(default=2, gt=0)
    """How often runs still being evaluated are re-read, so new items are pushed as they come."""
    limits: FloodLimits = Field(default_factory=FloodLimits)
    """Flood control."""
    digest: DigestSchedule = Field(default_factory=DigestSchedule)
    """Scheduled digests."""

    @model_validator(mode="after")
    def _webhook(self) -> "TelegramSettings":
        if self.mode == "webhook" and not self.webhook_url:
            raise ValueError(
                "telegram.webhook_url is required in webhook mode; set it to the public https URL"
            )
        return self


class FeatureSettings(_Config):
    """An item feature, as ``analyze correlate`` reads it."""

    order: list[str] | None = Field(default=None, min_length=2)
    """Its category labels, lowest first (compared without regard to case)."""

    @model_validator(mode="after")
    def _distinct(self) -> "FeatureSettings":
        labels = [label.strip().lower() for label in self.order or []]
        if any(not label for label in labels) or len(set(labels)) != len(labels):
            raise ValueError(
                "features.<name>.order: give each label once, none blank, lowest first"
            )
        return self


class TriageSettings(_Config):
    """``hilbot triage``: who sorts the changes, and which of them are decided without a human."""

    judge: Literal["local", "llm"] = "local"
    """``local`` (rules, nothing sent anywhere) or ``llm`` (each change sent to ``[llm]``; opt-in)."""
    auto_accept_threshold: float = Field(default=0.95, ge=0, le=1)
    """Confidence at or above which a change in an auto-accept category is accepted without a human."""
    auto_reject_threshold: float = Field(default=0.95, ge=0, le=1)
    """Confidence at or above which a change in an auto-reject category is rejected without a human."""
    auto_accept_categories: list[int] = Field(default_factory=lambda: [5])
    """Categories a rule may accept (5 ACCEPT; add 4 to take RECOMMEND ACCEPT too)."""
    auto_reject_categories: list[int] = Field(default_factory=lambda: [1])
    """Categories a rule may reject (1 FAIL)."""
    require_human: list[str] = Field(default_factory=list)
    """Glob patterns (``**/security_*``, ``**/payment_*``) of paths that always go to a human, whatever the triage says."""
    exclude: list[str] = Field(default_factory=list)
    """Glob patterns of snapshot paths never compared (``**/*.bin``, ``big/**``); --exclude adds."""
    audit_share: float = Field(default=0.05, ge=0, le=1)
    """Share of the automatic decisions also sent to humans, blind, so the rules' accuracy is measured."""
    show_ai: bool = True
    """Show the triage's recommendation on a card before the reviewer decides (never for the audit sample)."""
    llm_on_request: bool = True
    """The AI review key (``R``/``i``, a chat button) asks ``[llm]`` also after a local triage; false: local rules only."""
    relative_tolerance: float = Field(default=0.0, ge=0)
    """A number that moved by at most this share of its size counts as within tolerance (0.01 = 1%)."""
    absolute_tolerance: float = Field(default=0.0, ge=0)
    """A number that moved by at most this much counts as within tolerance."""

    @model_validator(mode="after")
    def _categories(self) -> "TriageSettings":
        for name in ("auto_accept_categories", "auto_reject_categories"):
            if any(not 1 <= c <= 5 for c in getattr(self, name)):
                raise ValueError(f"triage.{name}: use categories 1 (FAIL) to 5 (ACCEPT)")
        if set(self.auto_accept_categories) & set(self.auto_reject_categories):
            raise ValueError("triage: a category cannot be both auto-accepted and auto-rejected")
        return self


class SlackLimits(_Config):
    """Slack's posting limits, which the bot keeps to on its side (429s are retried as well)."""

    channel_per_s: float = Field(default=1, gt=0)
    """Messages (posts, updates, ephemerals) per second to one channel or DM."""
    overall_per_s: float = Field(default=10, gt=0)
    """Messages per second across the workspace (Slack allows "several hundred a minute")."""
    max_retries: int = Field(default=8, ge=0)
    """Retries of one call after a 429 (waiting the ``Retry-After`` it names) or a network error."""


class SlackSettings(_Config):
    """The Slack bot (tokens only from ``SLACK_BOT_TOKEN``, ``SLACK_APP_TOKEN``, ``SLACK_SIGNING_SECRET``)."""

    api_url: str = "https://slack.com/api/"
    """Web API base URL; ``SLACK_API_URL`` overrides it (a proxy, or a local server in tests)."""
    reviewers: list[PlatformId] = Field(default_factory=list)
    """Slack user ids (``U…``) allowed to review; ``/hilbot push`` deals cards to each of them."""
    admins: list[PlatformId] = Field(default_factory=list)
    """User ids allowed to ``/hilbot push`` and ``/hilbot digest`` (admins may review too)."""
    mode: Literal["socket", "http"] = "socket"
    """Socket Mode (``SLACK_APP_TOKEN``; no public URL needed) or signed HTTP requests (``SLACK_SIGNING_SECRET``)."""
    command: str = Field(default="/hilbot", pattern=r"^/[a-z0-9_-]{1,31}$")
    """The slash command, as created in the Slack app."""
    listen: str = "127.0.0.1"
    """Address the HTTP server binds (HTTP mode)."""
    port: int = Field(default=3000, ge=1, le=65535)
    """Port the HTTP server binds (HTTP mode)."""
    path: str = Field(default="/slack/events", pattern=r"^/[\w/.-]*$")
    """The one request URL path for slash commands, interactivity and events (HTTP mode)."""
    read_timeout_s: float = Field(default=10, gt=0)
    """Seconds to wait for the Web API's answer to one call."""
    refresh_s: float = Field(default=2, gt=0)
    """How often runs still being evaluated are re-read, so new items are pushed as they come."""
    limits: SlackLimits = Field(default_factory=SlackLimits)
    """Posting limits."""
    digest: DigestSchedule = Field(default_factory=DigestSchedule)
    """Scheduled digests (``chats``: channel ids ``C…``)."""


class AdjudicationSettings(_Config):
    """Which items ``hilbot adjudicate`` offers, and the reasons an item can be excluded for."""

    min_spread: int = Field(default=1, ge=1)
    """How many levels apart labels must be to count as a disagreement on scales of 3+ options (two options: any)."""
    ai_gap: float | None = Field(default=0.5, gt=0.0, le=1.0)
    """Also offer items whose AI score is more than this far (0–1) from the humans' median score; none: never."""
    exclude_reasons: list[Annotated[str, Field(min_length=1, max_length=60)]] = Field(
        default_factory=lambda: [
            "genuinely ambiguous",
            "broken item",
            "guidelines do not cover it",
            "other",
        ],
        min_length=1,
        max_length=8,
    )
    """The reasons an adjudicator picks from to exclude an item (buttons in chat, keys 1–8 in the terminal)."""


class SourceConfig(BaseModel):
    """A ``[sources.NAME]``: where a run's items come from; its other keys are the source's own settings."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    type: str
    """The tool: ``langfuse``, ``langsmith``, ``inspect_ai``, ``phoenix`` or ``promptfoo``."""
    run_id: str | None = None
    """The run the items go to (default: the source's name)."""
    dimensions: list[str] | None = None
    """Dimensions to rate (default by the items' kind)."""
    follow: bool = False
    """Keep pulling new items into the run while ``hilbot serve`` runs (a growing run)."""

    def settings(self) -> dict[str, Any]:
        """The source's own settings (every key but hilbot's)."""
        return dict(self.model_extra or {})

    @model_validator(mode="after")
    def _known(self) -> "SourceConfig":
        from .connectors.pulling import check_settings

        try:
            check_settings(self.type, self.settings())
        except HilbotError as exc:
            raise ValueError(str(exc)) from None
        return self


class SinkConfig(BaseModel):
    """A ``[sinks.NAME]``: where the labels of runs pulled from a tool go back to; its other keys are the sink's."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    type: str
    """The tool: ``langfuse``, ``langsmith``, ``inspect_ai`` or ``phoenix``."""
    runs: list[str] = Field(default_factory=lambda: ["*"])
    """Glob patterns of the run ids whose labels go there (only items that came from the tool are sent)."""
    rate_per_s: float | None = Field(default=None, gt=0, le=10000)
    """Calls a second to allow (default: the tool's documented limit on its smallest plan)."""

    def settings(self) -> dict[str, Any]:
        """The sink's own settings (every key but hilbot's)."""
        return dict(self.model_extra or {})

    @model_validator(mode="after")
    def _known(self) -> "SinkConfig":
        from .connectors.base import sinks

        try:
            sinks.get(self.type).settings(**self.settings())
        except HilbotError as exc:
            raise ValueError(str(exc)) from None
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ValueError(f"{'.'.join(map(str, err['loc']))}: {err['msg']}") from None
        return self


class ConnectorSettings(_Config):
    """How ``hilbot serve`` keeps the sources and sinks in step."""

    every_s: float = Field(default=5.0, gt=0, le=3600)
    """Seconds between two rounds (pull what is new, push what is pending)."""
    push_budget_s: float = Field(default=30.0, gt=0, le=3600)
    """The longest one round spends pushing (the rest waits for the next round)."""


class StoreSettings(_Config):
    """Where the logs live: the JSONL files of the data directory (no ``url``) or a database."""

    url: str | None = None
    """PostgreSQL URL without a password (``HILBOT_STORE_URL`` wins; password from the env)."""
    claim_expiry_s: float = Field(default=3600.0, gt=0, le=30 * 24 * 3600)
    """Seconds a dealt card stays claimed unanswered before its item goes to someone else."""

    @field_validator("url")
    @classmethod
    def _no_password(cls, url: str | None) -> str | None:
        if url is not None and urlsplit(url).password is not None:
            raise ValueError(
                "the store URL holds a password: drop it from the URL and set "
                "HILBOT_STORE_PASSWORD (or PGPASSWORD) in the environment"
            )
        return url


class HilbotConfig(_Config):
    """The whole of ``hilbot.toml``."""

    data_dir: PathText = "results"
    """Where run files and ratings.jsonl live."""
    review: ReviewSettings = Field(default_factory=ReviewSettings)
    """Assignment and reveal settings."""
    scales: dict[str, Scale] = Field(default_factory=dict)
    """Rating scales by name."""
    concerns: dict[str, ConcernSet] = Field(default_factory=dict)
    """Concern tag sets by name."""
    dimensions: dict[str, Dimension] = Field(default_factory=dict)
    """Dimensions by name."""
    llm: LLMSettings = Field(default_factory=LLMSettings)
    """The LLM provider."""
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    """Judging: weights, prompts, cut-offs."""
    regression: RegressionSettings = Field(default_factory=RegressionSettings)
    """Regression thresholds."""
    queries: QuerySettings = Field(default_factory=QuerySettings)
    """Query sets."""
    targets: TargetSettings = Field(default_factory=TargetSettings)
    """The system under test."""
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    """The Telegram reviewer bot."""
    slack: SlackSettings = Field(default_factory=SlackSettings)
    """The Slack reviewer bot."""
    adjudication: AdjudicationSettings = Field(default_factory=AdjudicationSettings)
    """Disagreement adjudication: which items are offered, and the exclusion reasons."""
    triage: TriageSettings = Field(default_factory=TriageSettings)
    """Diff triage: the judge, the thresholds, the patterns that always need a human, the audit sample."""
    features: dict[str, FeatureSettings] = Field(default_factory=dict)
    """Item features by name (without the ``feature_`` prefix): ordered categories for ``analyze correlate``."""
    sources: dict[str, SourceConfig] = Field(default_factory=dict)
    """Where items come from (Langfuse, LangSmith, inspect_ai, Phoenix, promptfoo), by name."""
    sinks: dict[str, SinkConfig] = Field(default_factory=dict)
    """Where human labels go back to, by name."""
    connectors: ConnectorSettings = Field(default_factory=ConnectorSettings)
    """How the bots keep sources and sinks in step."""
    store: StoreSettings = Field(default_factory=StoreSettings)
    """Where the logs live: the data directory's JSONL files, or PostgreSQL for replicas."""

    @model_validator(mode="after")
    def _references(self) -> "HilbotConfig":
        for name, dim in self.dimensions.items():
            if dim.scale not in self.scales:
                raise ValueError(
                    f"dimensions.{name}.scale names unknown scale {dim.scale!r}; known: "
                    f"{', '.join(sorted(self.scales))}"
                )
            if dim.concerns is not None and dim.concerns not in self.concerns:
                raise ValueError(
                    f"dimensions.{name}.concerns names unknown concern set {dim.concerns!r}; "
                    f"known: {', '.join(sorted(self.concerns))}"
                )
            options = [o.value for o in self.scales[dim.scale].options]
            for n, follow_up in enumerate(dim.follow_ups):
                off = next((w for w in follow_up.when if w not in options), None)
                if off is not None:
                    raise ValueError(
                        f"dimensions.{name}.follow_ups.{n}.when: {off!r} is not an option of scale "
                        f"{dim.scale!r} ({', '.join(options)})"
                    )
        return self

    def dimension(self, name: str) -> Dimension:
        """The named dimension, or a ConfigError listing the known ones."""
        try:
            return self.dimensions[name]
        except KeyError:
            raise ConfigError(
                f"unknown dimension {name!r}",
                fix=f"use one of {', '.join(self.dimensions)} or add [dimensions.{name}] to "
                "hilbot.toml",
            ) from None

    def scale_for(self, dimension: str) -> Scale:
        """The scale reviewers use on a dimension."""
        return self.scales[self.dimension(dimension).scale]

    def concerns_for(self, dimension: str) -> list[str]:
        """The concern tags offered on a dimension."""
        name = self.dimension(dimension).concerns
        return list(self.concerns[name].tags) if name else []

    def metric_for(self, dimension: str) -> str | None:
        """The judge's score a dimension's ratings are compared with, when one is configured (else
        the score named like the dimension is, then ``overall``: :func:`evaluation.runs.ai_score`).
        None for a dimension the configuration lacks."""
        found = self.dimensions.get(dimension)
        return found.metric if found is not None else None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            if key in ("scales", "concerns", "dimensions"):
                merged[key] = {**base[key], **value}  # a named entry replaces the built-in one
            else:
                merged[key] = _merge(base[key], value)  # settings tables merge key by key
        else:
            merged[key] = value
    return merged


def _defaults() -> dict[str, Any]:
    return tomllib.loads(resources.files(__package__).joinpath("defaults.toml").read_text("utf-8"))


def _find_line(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if (
            stripped.startswith(f"{key} ")
            or stripped.startswith(f"{key}=")
            or f"{key} =" in stripped
            or f".{key}]" in stripped
        ):
            return number
    return None


def _raise_for(exc: ValidationError, path: Path | None, text: str) -> None:
    err = exc.errors()[0]
    loc = visible(".".join(str(p) for p in err["loc"]), newlines=False)
    last = str(err["loc"][-1]) if err["loc"] else ""
    line = _find_line(text, last) if path and last else None
    here = where(path, line) if path else "built-in defaults"
    if err["type"] == "extra_forbidden":
        raise ConfigError(
            f"unknown key {loc}",
            where=here,
            fix="remove it or check its spelling against docs/configuration.md",
        ) from None
    message = visible(err["msg"].removeprefix("Value error, "), newlines=False)
    raise ConfigError(
        f"{loc}: {message}" if loc else message, where=here, fix="correct the value"
    ) from None


_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column \d+\)$|\s*\(at end of document\)$")
_LONG_INT = re.compile(r"\d{4301,}")


def _parse_toml(file: Path, text: str) -> dict[str, Any]:
    """``text`` as TOML, or a ConfigError naming the line."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_POSITION.search(str(exc))
        line = int(match.group(1)) if match and match.group(1) else None
        what = visible(_TOML_POSITION.sub("", str(exc)), newlines=False)
        raise ConfigError(
            f"not valid TOML ({what})", where=where(file, line), fix="fix the syntax"
        ) from None
    except RecursionError:
        raise ConfigError(
            "nested too deep for the TOML parser",
            where=where(file),
            fix="flatten the arrays and tables",
        ) from None
    except ValueError:  # an integer past Python's 4,300-digit conversion limit
        match = _LONG_INT.search(text)
        raise ConfigError(
            "a number with more than 4,300 digits",
            where=where(file, line_of(text, match.start()) if match else None),
            fix="use a smaller number",
        ) from None


def _present(path: Path) -> bool:
    """Whether ``path`` exists; when the system cannot tell, True, so reading it reports why."""
    try:
        return path.exists()
    except OSError:
        return True


def load_config(path: str | Path | None = None) -> HilbotConfig:
    """Load built-in defaults merged with ``path`` (default ``./hilbot.toml`` when it exists)."""
    data = _defaults()
    text = ""
    file: Path | None = None
    if path is not None or _present(Path("hilbot.toml")):
        file = Path(path or "hilbot.toml")
        text = decode(
            read_file(
                file, ConfigError, fix="give the path of a hilbot.toml file, or drop --config"
            ),
            file,
            ConfigError,
        )
        data = _merge(data, _parse_toml(file, text))
    try:
        return HilbotConfig.model_validate(data)
    except ValidationError as exc:
        _raise_for(exc, file, text)
        raise  # unreachable
