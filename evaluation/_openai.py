"""The ``openai-compatible`` provider: the official ``openai`` SDK against any Chat Completions
server.

That is OpenAI itself, or a model served on the machine or the network hilbot runs in (Ollama,
vLLM, llama.cpp's ``llama-server``, LM Studio…) at ``OPENAI_BASE_URL``, e.g.
``http://localhost:11434/v1``. The key comes only from ``OPENAI_API_KEY``; a server at a base URL
may need none, and the SDK (which refuses to run without one) then gets the placeholder
``not-needed``, which local servers ignore.

Retries are the SDK's own: 408, 409, 429 and 5xx and timeouts, with exponential backoff that
honours ``retry-after``; ``[llm] max_retries`` and ``timeout_s`` set them.

Output: the answer is one JSON object. It is asked for with ``response_format`` ``json_schema``
(the request's schema, ``strict: false`` so any pydantic schema goes through), and the system
prompt carries the schema too, for servers that do not constrain decoding. A server that refuses
``json_schema`` (a 400 or 422 naming the response format) gets ``json_object`` from then on, and
one that refuses that as well gets no ``response_format``: the model's text is the answer (said
once each in the log). Either way the client validates it (:func:`evaluation.llm.parse_output`);
the only things taken off the text are a leading ``<think>…</think>`` block and a code fence
around the whole answer. ``[llm] output`` applies to the ``anthropic`` provider only.

Temperature 0 is sent until a model answers 400 naming ``temperature`` (OpenAI's reasoning
models), then none for the rest of the run. Tokens are the reply's ``usage`` (0 when a server
sends none); the cost comes from ``[llm.prices]`` for the model id, so a local model has none.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .llm import LLMError, LLMRequest, NoAPIKey, ProviderReply, provider
from .scrub import scrub
from .text import visible

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

    from .config import LLMSettings

OPENAI_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "not-needed"
"""Sent as the key to a server at ``OPENAI_BASE_URL`` when ``OPENAI_API_KEY`` is not set."""

FORMATS: tuple[str | None, ...] = ("json_schema", "json_object", None)
"""The ``response_format`` types tried, in order; None sends none."""

_FORMAT_REFUSED = re.compile(
    r"response_format|json_schema|json_object|structured output|schema", re.IGNORECASE
)
"""How a server's 400 says it does not support the response format asked for."""

_INSTRUCTION = (
    "Answer with one JSON object and nothing else (no prose, no code fence). It is the input of "
    "the {tool} tool ({description}) and matches this JSON Schema:\n{schema}"
)

_KEY_FIX = (
    "export OPENAI_API_KEY=... for the OpenAI API, or OPENAI_BASE_URL=http://localhost:11434/v1 (a "
    "local server, no key needed); offline, `hilbot run --judge lexical` needs no key"
)

log = logging.getLogger("hilbot")


class OpenAICompatibleProvider:
    """Any Chat Completions API through ``openai.AsyncOpenAI``."""

    name = "openai-compatible"

    def __init__(self, settings: "LLMSettings"):
        key = os.environ.get("OPENAI_API_KEY") or None
        base_url = os.environ.get("OPENAI_BASE_URL") or None
        if key is None and base_url is None:
            raise NoAPIKey(
                "no OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) in the environment",
                fix=_KEY_FIX,
            )
        import openai

        self.model = settings.model
        self._openai = openai
        self._client = openai.AsyncOpenAI(
            api_key=key or PLACEHOLDER_KEY,
            base_url=base_url or OPENAI_URL,
            max_retries=settings.max_retries,
            timeout=settings.timeout_s,
        )
        self.where = "the OpenAI API" if base_url is None else f"the server at {_origin(base_url)}"
        """How errors name the server (scheme, host and port only: a URL may hold a password)."""
        self.format: str | None = FORMATS[0]
        """The response format asked for; moves down :data:`FORMATS` when the server refuses one."""
        self.temperature: float | None = 0.0
        """Sent while the model accepts it; None once a 400 said it does not."""

    async def aclose(self) -> None:
        """Close the SDK's HTTP client (in the event loop that used it)."""
        await self._client.close()

    async def complete(
        self, request: LLMRequest, *, system: str, prompt: str, max_tokens: int
    ) -> ProviderReply:
        """One Chat Completions call whose answer is one JSON object (as the text the model
        wrote)."""
        fmt, temperature = self.format, self.temperature
        try:
            completion = await self._create(request, system, prompt, max_tokens, fmt, temperature)
        except (self._openai.BadRequestError, self._openai.UnprocessableEntityError) as exc:
            said = _message(exc)
            if temperature is not None and "temperature" in said.lower():
                if self.temperature is not None:
                    log.warning("%s rejects temperature; sending none from now on", self.model)
                    self.temperature = None
            elif fmt is not None and _FORMAT_REFUSED.search(said):
                if self.format == fmt:  # not yet moved on by a call that learnt it first
                    self.format = FORMATS[FORMATS.index(fmt) + 1]
                    log.warning(
                        "%s refuses response_format %s; asking for %s from now on",
                        self.where,
                        fmt,
                        self.format or "the JSON object in the prompt only",
                    )
            else:
                raise _translate(self._openai, exc, self.where) from None
            return await self.complete(request, system=system, prompt=prompt, max_tokens=max_tokens)
        except self._openai.APIError as exc:
            raise _translate(self._openai, exc, self.where) from None
        choices = getattr(completion, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        text = (
            (getattr(message, "content", None) or getattr(message, "refusal", None) or "")
            if message is not None
            else ""
        )
        usage = getattr(completion, "usage", None)
        return ProviderReply(
            None,
            unwrap(text if isinstance(text, str) else ""),
            getattr(usage, "prompt_tokens", None) or 0,
            getattr(usage, "completion_tokens", None) or 0,
        )

    async def _create(
        self,
        request: LLMRequest,
        system: str,
        prompt: str,
        max_tokens: int,
        fmt: str | None,
        temperature: float | None,
    ) -> "ChatCompletion":
        schema = request.schema()
        instruction = _INSTRUCTION.format(
            tool=request.tool_name,
            description=request.tool_description,
            schema=json.dumps(schema, ensure_ascii=False),
        )
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": f"{system}\n\n{instruction}"},
            {"role": "user", "content": prompt},
        ]
        options: dict[str, Any] = {}
        if temperature is not None:
            options["temperature"] = temperature
        if fmt == "json_schema":
            name = re.sub(r"[^A-Za-z0-9_-]", "_", request.tool_name)[:64] or "answer"
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": name,
                    "description": request.tool_description,
                    "schema": schema,
                    "strict": False,
                },
            }
        elif fmt == "json_object":
            options["response_format"] = {"type": "json_object"}
        return await self._client.chat.completions.create(
            model=self.model, messages=messages, max_tokens=max_tokens, **options
        )


def unwrap(text: str) -> str:
    """The answer in a model's text: without a leading ``<think>…</think>`` block or a code fence
    around all of it."""
    body = text.strip()
    if body.startswith("<think>") and "</think>" in body:
        body = body.split("</think>", 1)[1].strip()
    fenced = re.fullmatch(r"```(?:json)?[ \t]*\n(.*?)\n?[ \t]*```", body, re.DOTALL | re.IGNORECASE)
    return fenced.group(1).strip() if fenced else body


def _origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL, or ``OPENAI_BASE_URL`` when it does not parse."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return "OPENAI_BASE_URL"
    if not parts.scheme or not host:
        return "OPENAI_BASE_URL"
    host = f"[{host}]" if ":" in host else host
    return visible(f"{parts.scheme}://{host}" + (f":{port}" if port else ""), newlines=False)[:100]


def _translate(openai, exc: Exception, where: str) -> LLMError:
    """An SDK error as one line that says what to do."""
    if isinstance(exc, openai.AuthenticationError):
        return LLMError(
            f"{where} rejected OPENAI_API_KEY (401): {_message(exc)}",
            fix="set a valid key: " + _KEY_FIX,
        )
    if isinstance(exc, openai.APITimeoutError):
        return LLMError(
            f"{where} timed out after all retries",
            fix="raise [llm] timeout_s (a local model on a CPU can be slow) or max_retries, or "
            "lower concurrency",
        )
    if isinstance(exc, openai.APIConnectionError):
        return LLMError(
            f"cannot reach {where} ({_said(str(exc))})",
            fix="check that the server is running, and OPENAI_BASE_URL",
        )
    if isinstance(exc, openai.NotFoundError):
        return LLMError(
            f"{where} answered 404: {_message(exc)}",
            fix="check [llm] model (the name the server knows the model by) and OPENAI_BASE_URL "
            "(it usually ends in /v1)",
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status in (408, 409, 429) or status >= 500:
            return LLMError(
                f"{where} answered {status} after all retries: {_message(exc)}",
                fix="wait and rerun (cached judgments are kept), or lower [llm] concurrency",
            )
        return LLMError(
            f"{where} answered {status}: {_message(exc)}",
            fix="check [llm] model and the server's log",
        )
    return LLMError(
        f"{where} error: {_said(str(exc))}", fix="rerun; judgments made so far are cached"
    )


def _message(exc: Exception) -> str:
    """The server's own words for an error (``error.message``, or FastAPI's ``detail``), as
    :func:`_said` shows them."""
    body = getattr(
        exc, "body", None
    )  # the SDK has already taken the ``error`` object out of ``{"error": {...}}``
    if isinstance(body, dict):
        for name in ("message", "error", "detail"):
            said = body.get(name)
            if isinstance(said, dict):
                said = said.get("message")
            if said:
                return _said(
                    said if isinstance(said, str) else json.dumps(said, ensure_ascii=False)
                )
    elif isinstance(body, str) and body.strip():
        return _said(body)
    return _said(str(exc))


def _said(text: str) -> str:
    """Text from the server, fit to store and show: secrets scrubbed, one visible line, then cut to
    200 characters."""
    return visible(scrub(text), newlines=False)[:200]


provider("openai-compatible")(OpenAICompatibleProvider)
