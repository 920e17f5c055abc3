"""LLM providers: one small protocol, registered by name, and the client every call goes through.

Providers live in :data:`PROVIDERS` (:func:`provider`); a plugin adds one through the
``hilbot.providers`` entry-point group (see :mod:`evaluation.registry`) and is chosen with
``[llm] provider``.

A provider makes one call and returns the parsed structured output and its token usage. The
:class:`LLM` client wraps any provider with what every call needs: redaction before anything
leaves the machine, the on-disk cache keyed by model and prompt, bounded concurrency, the
dollar cost, and a log of what was sent (``results/llm-calls.jsonl``).

Output is structured: the request names a pydantic model, the provider asks for it as a tool
call (or JSON), and anything that does not validate is an :class:`LLMOutputError` — never a
guess.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol

from pydantic import BaseModel, ValidationError

from .errors import HilbotError
from .records import LLMCall
from .registry import Registry, UnknownName
from .scrub import scrub
from .text import visible

if TYPE_CHECKING:
    from .config import LLMSettings
    from .store import Store


class LLMError(HilbotError):
    """A call to the LLM provider failed (after its retries)."""


class LLMOutputError(LLMError):
    """The model answered, but not in the structure asked for."""


class NoAPIKey(LLMError):
    """No key for the provider in the environment."""


@dataclass
class LLMRequest:
    """One structured call: a system prompt, a user prompt, and the shape of the answer."""

    prompt: str
    output: type[BaseModel]
    system: str = "You evaluate text. Be concise and consistent."
    purpose: str = "call"
    tool_name: str = "record_answer"
    tool_description: str = "Record your answer."
    max_tokens: int | None = None

    def schema(self) -> dict[str, Any]:
        """The JSON Schema the answer must satisfy (the tool's input schema)."""
        return _schema(self.output)


@functools.lru_cache(maxsize=64)
def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


@dataclass
class ProviderReply:
    """What a provider returns: the raw structured answer and the tokens billed."""

    data: dict[str, Any] | None
    text: str = ""
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class LLMResponse:
    """A validated answer with its cost."""

    output: BaseModel
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    cached: bool = False


class Provider(Protocol):
    """An LLM provider: one async structured call."""

    name: str
    model: str

    async def complete(
        self, request: LLMRequest, *, system: str, prompt: str, max_tokens: int
    ) -> ProviderReply:
        """Send one (already redacted) call and return the structured answer."""
        ...


ProviderFactory = Callable[["LLMSettings"], Provider]


class UnknownProvider(LLMError, UnknownName):
    """``[llm] provider`` names no built-in or installed provider."""


PROVIDERS: Registry[ProviderFactory] = Registry(
    "LLM provider",
    "hilbot.providers",
    builtins={"anthropic": "evaluation._anthropic", "openai-compatible": "evaluation._openai"},
    hint="set [llm] provider to one of {names}",
    error=UnknownProvider,
)
"""Every provider by name; built-ins are imported on first use, plugins come from
``hilbot.providers`` entry points."""


def provider(name: str) -> Callable[[ProviderFactory], ProviderFactory]:
    """Register a provider factory under ``name`` (how built-ins and plugins both register)."""
    return PROVIDERS.register(name)


def get_provider(settings: "LLMSettings") -> Provider:
    """Build the provider ``settings.provider`` names; a missing key is a :class:`NoAPIKey`."""
    return PROVIDERS.get(settings.provider)(settings)


_KEY_VARIABLES = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai-compatible": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
}


def has_key(settings: "LLMSettings") -> bool:
    """Whether the environment holds a key for the configured provider (for ``openai-compatible``, a
    base URL will do)."""
    names = _KEY_VARIABLES.get(settings.provider)
    return any(os.environ.get(name) for name in names) if names else True


def key_hint(settings: "LLMSettings") -> str:
    """What to set for the configured provider, in words: ``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY or
    OPENAI_BASE_URL``."""
    names = _KEY_VARIABLES.get(settings.provider)
    return " or ".join(names) if names else f"the key the {settings.provider} provider reads"


def parse_output(request: LLMRequest, reply: ProviderReply) -> BaseModel:
    """Validate a reply against the requested model; anything else is an :class:`LLMOutputError`."""
    data = reply.data
    if data is None:
        text = reply.text.strip()
        try:
            data = json.loads(text) if text.startswith("{") else None
        except json.JSONDecodeError:
            data = None
        if data is None:
            shown = (
                visible(scrub(" ".join(text.split())), newlines=False)[:80] or "(empty)"
            )  # scrubbed before the cut
            raise LLMOutputError(
                f"model answered without the {request.tool_name} tool: {shown!r}",
                fix="check the prompt template; the answer must be the tool call or one JSON object",
            )
    try:
        return request.output.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = visible(".".join(str(p) for p in err["loc"]), newlines=False)[:80] or "answer"
        raise LLMOutputError(
            f"malformed model output at {where}: {err['msg']}",
            fix="check the prompt template asks for the tool's fields",
        ) from None


def cache_key(
    provider_name: str, model: str, system: str, prompt: str, request: LLMRequest, max_tokens: int
) -> str:
    """SHA-256 over everything that determines the answer."""
    material = json.dumps(
        [
            provider_name,
            model,
            system,
            prompt,
            request.tool_name,
            request.schema(),
            max_tokens,
            0.0,
        ],
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


@dataclass
class Redactor:
    """Replaces every match of the configured patterns with ``[REDACTED]``."""

    patterns: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        try:
            self._compiled = [re.compile(p) for p in self.patterns]
        except re.error as exc:
            raise HilbotError(
                f"[llm] redact pattern {exc.pattern!r} is not a valid regex ({exc})",
                fix="fix the pattern in hilbot.toml",
            ) from None

    def __call__(self, text: str) -> tuple[str, int]:
        total = 0
        for pattern in self._compiled:
            text, count = pattern.subn("[REDACTED]", text)
            total += count
        return text, total


class LLM:
    """The client judges and generators use: redaction, cache, concurrency, cost, the sent log."""

    def __init__(self, settings: "LLMSettings", store: "Store", provider: Provider | None = None):
        self.settings = settings
        self.store = store
        self.provider = provider or get_provider(settings)
        self.redact = Redactor(settings.redact)
        self.calls = 0
        """Calls that reached the provider (cache hits excluded)."""
        self.cache_hits = 0
        self._semaphore: asyncio.Semaphore | None = None

    @property
    def label(self) -> str:
        """``provider/model``, how runs and outputs name this LLM."""
        return f"{self.provider.name}/{self.provider.model}"

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """Dollar cost of a call, or None when the model has no price."""
        price = self.settings.prices.get(self.provider.model)
        if price is None:
            return None
        return round((input_tokens * price.input + output_tokens * price.output) / 1_000_000, 6)

    async def aclose(self) -> None:
        """Close the provider's connections, if it holds any (call it in the event loop the calls
        ran in)."""
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            await close()

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Redact, answer from the cache or the provider, validate, cost and log the call."""
        system, n_system = self.redact(request.system)
        prompt, n_prompt = self.redact(request.prompt)
        max_tokens = request.max_tokens or self.settings.max_tokens
        key = cache_key(
            self.provider.name, self.provider.model, system, prompt, request, max_tokens
        )
        if self.settings.cache and (cached := self._cached(request, key)) is not None:
            self.cache_hits += 1
            return LLMResponse(cached, cached=True)
        record = LLMCall(
            provider=self.provider.name,
            model=self.provider.model,
            purpose=request.purpose,
            cache_key=key,
            sent=f"[system]\n{system}\n[user]\n{prompt}",
            redactions=n_system + n_prompt,
        )
        try:
            reply = await self._call(request, system, prompt, max_tokens)
            record.input_tokens, record.output_tokens = reply.input_tokens, reply.output_tokens
            record.cost_usd = self.cost(reply.input_tokens, reply.output_tokens)
            output = parse_output(request, reply)
        except LLMError as exc:
            record.error = exc.what
            await self.store.llm_calls.aappend(record)
            raise
        await self.store.llm_calls.aappend(record)
        if self.settings.cache:
            await asyncio.to_thread(
                self.store.cache_put,
                key,
                {"data": output.model_dump(mode="json"), "model": self.provider.model},
            )
        return LLMResponse(output, reply.input_tokens, reply.output_tokens, record.cost_usd)

    def _cached(self, request: LLMRequest, key: str) -> BaseModel | None:
        """A valid cached answer, or None (a damaged or stale entry is a miss)."""
        hit = self.store.cache_get(key)
        if not isinstance(hit, dict) or not isinstance(hit.get("data"), dict):
            return None
        try:
            return request.output.model_validate(hit["data"])
        except ValidationError:
            return None

    async def _call(
        self, request: LLMRequest, system: str, prompt: str, max_tokens: int
    ) -> ProviderReply:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.settings.concurrency)
        async with self._semaphore:
            self.calls += 1
            return await self.provider.complete(
                request, system=system, prompt=prompt, max_tokens=max_tokens
            )
