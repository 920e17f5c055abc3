"""The ``anthropic`` provider: the official SDK, key and base URL from the environment.

Retries are the SDK's own: 408, 409, 429 and 5xx (529 "overloaded" included) and timeouts, with
exponential backoff that honours ``retry-after``; ``[llm] max_retries`` and ``timeout_s`` set
them. The answer is forced through one tool call.

Temperature: the SDK (2.x) no longer has a ``temperature`` argument, and models after Opus 4.6
reject a non-default one with a 400. hilbot sends ``temperature: 0`` in the request body to the
models that take it; when a model answers 400 naming ``temperature`` it drops it for the rest of
the run (said once in the log).

Output: ``[llm] output = "tool"`` (default) forces one tool call whose input is the answer;
``"json"`` asks for structured output (``output_config.format``, a JSON schema) instead, for
models that refuse forced tool use (Sonnet 5.5 and later).
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING, Any

from .llm import LLMError, LLMRequest, NoAPIKey, ProviderReply, provider
from .scrub import scrub
from .text import visible

if TYPE_CHECKING:
    from anthropic.types import MessageParam, OutputConfigParam, ToolChoiceToolParam, ToolParam

    from .config import LLMSettings

_NO_SAMPLING = re.compile(r"claude-(opus-4-[7-9]|opus-5|sonnet-5|haiku-5|fable|mythos)")
"""Models that answer 400 to a non-default temperature (Opus 4.7 onwards, the 5 family)."""

_KEY_FIX = (
    "export ANTHROPIC_API_KEY=... (and ANTHROPIC_BASE_URL for another Messages API server); "
    "offline, `hilbot run --judge lexical` needs no key"
)


class AnthropicProvider:
    """Claude through ``anthropic.AsyncAnthropic``."""

    name = "anthropic"

    def __init__(self, settings: "LLMSettings"):
        key = os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise NoAPIKey("no ANTHROPIC_API_KEY in the environment", fix=_KEY_FIX)
        import anthropic

        self.model = settings.model
        self._anthropic = anthropic
        self._client = anthropic.AsyncAnthropic(
            api_key=key, max_retries=settings.max_retries, timeout=settings.timeout_s
        )
        self.output = settings.output
        self.temperature: float | None = None if _NO_SAMPLING.search(self.model) else 0.0
        """Sent while the model accepts it; None for models that reject it, or once a 400 said
        so."""

    async def aclose(self) -> None:
        """Close the SDK's HTTP client (in the event loop that used it)."""
        await self._client.close()

    async def complete(
        self, request: LLMRequest, *, system: str, prompt: str, max_tokens: int
    ) -> ProviderReply:
        """One Messages API call whose answer is the forced tool call (or JSON, with
        ``output = "json"``)."""
        temperature = self.temperature
        try:
            message = await self._create(request, system, prompt, max_tokens, temperature)
        except self._anthropic.BadRequestError as exc:
            if temperature is None or "temperature" not in _message(exc).lower():
                raise _translate(self._anthropic, exc) from None
            if self.temperature is not None:
                logging.getLogger("hilbot").warning(
                    "%s rejects temperature; sending none from now on", self.model
                )
                self.temperature = None
            return await self.complete(request, system=system, prompt=prompt, max_tokens=max_tokens)
        except self._anthropic.APIError as exc:
            raise _translate(self._anthropic, exc) from None
        data, text = None, []
        for block in message.content:
            if block.type == "tool_use" and block.name == request.tool_name:
                data = block.input if isinstance(block.input, dict) else None
            elif block.type == "text":
                text.append(block.text)
        usage = message.usage
        return ProviderReply(
            data, "\n".join(text), usage.input_tokens or 0, usage.output_tokens or 0
        )

    async def _create(
        self,
        request: LLMRequest,
        system: str,
        prompt: str,
        max_tokens: int,
        temperature: float | None,
    ):
        extra = {"temperature": temperature} if temperature is not None else None
        messages: list[MessageParam] = [{"role": "user", "content": prompt}]
        if self.output == "json":
            fmt: OutputConfigParam = {
                "format": {"type": "json_schema", "schema": json_schema(request.schema())}
            }
            return await self._client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=system,
                messages=messages,
                output_config=fmt,
                extra_body=extra,
            )
        tool: ToolParam = {
            "name": request.tool_name,
            "description": request.tool_description,
            "input_schema": request.schema(),
        }
        choice: ToolChoiceToolParam = {"type": "tool", "name": tool["name"]}
        return await self._client.messages.create(
            model=self.model,
            max_tokens=max_tokens,
            system=system,
            messages=messages,
            tools=[tool],
            tool_choice=choice,
            extra_body=extra,
        )


def json_schema(schema: Any) -> Any:
    """A pydantic schema cut down for structured outputs: closed objects, no numeric bounds or
    titles."""
    if isinstance(schema, list):
        return [json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {
        k: json_schema(v)
        for k, v in schema.items()
        if k not in ("title", "minimum", "maximum", "minLength", "default")
    }
    if out.get("type") == "object":
        out["additionalProperties"] = False
        out.setdefault("required", list(out.get("properties", {})))
    return out


def _translate(anthropic, exc: Exception) -> LLMError:
    """An SDK error as one line that says what to do."""
    if isinstance(exc, anthropic.AuthenticationError):
        return LLMError(
            "the Anthropic API rejected ANTHROPIC_API_KEY (401)", fix="set a valid key: " + _KEY_FIX
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return LLMError(
            "the Anthropic API timed out after all retries",
            fix="raise [llm] timeout_s or max_retries, or lower concurrency",
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return LLMError(
            f"cannot reach the Anthropic API ({_said(str(exc))})",
            fix="check the network or ANTHROPIC_BASE_URL",
        )
    if isinstance(exc, anthropic.APIStatusError):
        return LLMError(
            f"the Anthropic API answered {exc.status_code} after all retries: {_message(exc)}",
            fix="wait and rerun (cached judgments are kept), or lower [llm] concurrency",
        )
    return LLMError(
        f"Anthropic API error: {_said(str(exc))}", fix="rerun; judgments made so far are cached"
    )


def _message(exc) -> str:
    """The server's own words for an error (its ``error.message``), as :func:`_said` shows them."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return _said(str(error["message"]))
    return _said(str(exc))


def _said(text: str) -> str:
    """Text from the server, fit to store and show: secrets scrubbed, one visible line, then cut to
    200 characters."""
    return visible(scrub(text), newlines=False)[:200]


provider("anthropic")(AnthropicProvider)
