"""The LLM client and the Anthropic provider, end to end against a local fake Messages API.

Every test talks HTTP to :class:`tests.fakes.anthropic_api.FakeAnthropic` through the real
``anthropic`` SDK, so retries, timeouts, headers and request bodies are the real ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from pathlib import Path
from typing import Any, Iterator, Literal

import pytest
from pydantic import BaseModel

from evaluation import Store, load_config
from evaluation.errors import HilbotError
from evaluation.llm import LLM, LLMError, LLMOutputError, LLMRequest, NoAPIKey
from tests.fakes.anthropic_api import FakeAnthropic, Reply, error, schema_responder, tool

FAKE_KEY = "sk-ant-test-not-a-real-key"

# The tests pin claude-sonnet-4-6: priced at $3/$15 and it takes a temperature.
MODEL = "claude-sonnet-4-6"


class Verdict(BaseModel):
    """The structured answer the tests ask for."""

    verdict: Literal["YES", "NO"]
    reason: str


def ask(prompt: str = "Is the sky blue?", **kw: Any) -> LLMRequest:
    return LLMRequest(prompt=prompt, output=Verdict, **kw)


# --------------------------------------------------------------------------- fixtures


@contextlib.contextmanager
def serve(monkeypatch: pytest.MonkeyPatch, **kw: Any) -> Iterator[FakeAnthropic]:
    """A fake server with the client's environment pointing at it."""
    with FakeAnthropic(**kw) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        yield server


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with serve(monkeypatch, latency=0.0) as server:
        yield server


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)  # no stray ./hilbot.toml
    return load_config(None).llm.model_copy(update={"model": MODEL})


def calls_log(store: Store) -> list[dict[str, Any]]:
    path = store.root / "llm-calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def cache_files(store: Store) -> list[Path]:
    folder = store.root / "cache" / "llm"
    return sorted(folder.rglob("*.json")) if folder.is_dir() else []


# --------------------------------------------------------------------------- 1. a normal answer


async def test_normal_answer_request_body_usage_and_cost(fake, settings, store):
    assert settings.model == MODEL
    assert (settings.prices[MODEL].input, settings.prices[MODEL].output) == (3.0, 15.0)
    fake.queue(
        Reply(
            tool_input={"verdict": "YES", "reason": "Rayleigh scattering."},
            input_tokens=1000,
            output_tokens=200,
        )
    )
    llm = LLM(settings, store)
    assert llm.label == "anthropic/claude-sonnet-4-6"

    response = await llm.complete(
        ask("Is the sky blue?", system="You judge facts.", purpose="judge:test:1")
    )

    assert isinstance(response.output, Verdict)
    assert response.output == Verdict(verdict="YES", reason="Rayleigh scattering.")
    assert response.cached is False
    assert (response.input_tokens, response.output_tokens) == (1000, 200)
    # $3/M in, $15/M out: 1000*3 + 200*15 = 6000 micro-dollars (swapped prices would give 0.0156).
    assert response.cost_usd == pytest.approx(0.006)

    assert len(fake.requests) == 1
    body = fake.requests[0]
    assert body["model"] == MODEL
    assert body["max_tokens"] == 400
    assert body["system"] == "You judge facts."
    assert body["messages"] == [{"role": "user", "content": "Is the sky blue?"}]
    assert len(body["tools"]) == 1
    assert body["tools"][0]["name"] == "record_answer"
    assert body["tools"][0]["input_schema"] == Verdict.model_json_schema()
    assert body["tool_choice"] == {"type": "tool", "name": "record_answer"}
    assert body["temperature"] == 0
    # The key from the environment authenticates the call: anthropic 1.x sends it as x-api-key,
    # the 2.x SDK pinned here as "Authorization: Bearer <key>".
    headers = {k.lower(): v for k, v in fake.headers[0].items()}
    assert (
        headers.get("x-api-key") == FAKE_KEY or headers.get("authorization") == f"Bearer {FAKE_KEY}"
    ), headers

    [record] = calls_log(store)
    assert record["type"] == "llm_call"
    assert (record["provider"], record["model"], record["purpose"]) == (
        "anthropic",
        MODEL,
        "judge:test:1",
    )
    assert re.fullmatch(r"[0-9a-f]{64}", record["cache_key"])
    assert record["sent"] == "[system]\nYou judge facts.\n[user]\nIs the sky blue?"
    assert (record["input_tokens"], record["output_tokens"]) == (1000, 200)
    assert record["cost_usd"] == pytest.approx(0.006)
    assert record.get("error") is None
    assert record["redactions"] == 0
    assert llm.calls == 1 and llm.cache_hits == 0


async def test_request_max_tokens_and_tool_name_override(fake, settings, store):
    llm = LLM(settings.model_copy(update={"max_tokens": 123}), store)
    await llm.complete(ask("a"))
    await llm.complete(ask("b", max_tokens=77, tool_name="give_verdict"))
    assert [b["max_tokens"] for b in fake.requests] == [123, 77]
    assert fake.requests[1]["tools"][0]["name"] == "give_verdict"
    assert fake.requests[1]["tool_choice"] == {"type": "tool", "name": "give_verdict"}


async def test_unpriced_model_has_no_cost(fake, settings, store):
    llm = LLM(settings.model_copy(update={"model": "claude-unpriced-9"}), store)
    response = await llm.complete(ask())
    assert fake.requests[0]["model"] == "claude-unpriced-9"
    assert response.cost_usd is None
    [record] = calls_log(store)
    assert record.get("cost_usd") is None
    assert record["input_tokens"] == 120


# --------------------------------------------------------------------------- 2-3. retries


async def test_429_honours_retry_after_then_succeeds(fake, settings, store):
    fake.queue(
        error(429, "rate_limit_error", retry_after=1), tool(verdict="NO", reason="Night time.")
    )
    llm = LLM(settings, store)
    response = await llm.complete(ask())
    assert response.output == Verdict(verdict="NO", reason="Night time.")
    assert len(fake.requests) == 2
    assert fake.arrivals[1] - fake.arrivals[0] >= 0.9
    assert fake.requests[1] == fake.requests[0]  # the same call, resent
    assert llm.calls == 1
    [record] = calls_log(store)
    assert record.get("error") is None


async def test_529_then_500_then_success(fake, settings, store):
    fake.queue(
        error(529, "overloaded_error"), error(500, "api_error"), tool(verdict="YES", reason="ok")
    )
    llm = LLM(settings.model_copy(update={"max_retries": 2}), store)
    response = await llm.complete(ask())
    assert response.output == Verdict(verdict="YES", reason="ok")
    assert len(fake.requests) == 3
    assert len(calls_log(store)) == 1


async def test_retries_exhausted_raise_and_log_the_failure(fake, settings, store):
    fake.queue(error(529, "overloaded_error"), error(529, "overloaded_error"))
    llm = LLM(settings.model_copy(update={"max_retries": 1}), store)
    with pytest.raises(LLMError) as info:
        await llm.complete(ask(purpose="judge:x"))
    assert not isinstance(info.value, LLMOutputError)
    assert "529" in info.value.what
    assert "\n" not in info.value.one_line()
    assert len(fake.requests) == 2
    [record] = calls_log(store)
    assert record["purpose"] == "judge:x"
    assert "529" in record["error"]
    assert cache_files(store) == []  # a failure is never cached
    # The next call goes to the server again (queue empty: the default responder answers).
    response = await llm.complete(ask(purpose="judge:x"))
    assert response.cached is False and len(fake.requests) == 3


# --------------------------------------------------------------------------- 4. timeouts


async def test_timeout_is_retried(fake, settings, store):
    fake.queue(Reply(delay=2), tool(verdict="YES", reason="second try"))
    llm = LLM(settings.model_copy(update={"timeout_s": 0.5, "max_retries": 1}), store)
    start = time.monotonic()
    response = await llm.complete(ask())
    elapsed = time.monotonic() - start
    assert response.output == Verdict(verdict="YES", reason="second try")
    assert len(fake.requests) == 2
    assert fake.arrivals[1] - fake.arrivals[0] >= 0.45  # waited for the timeout...
    assert elapsed < 1.9  # ...but not for the slow reply


async def test_timeout_without_retries_raises(fake, settings, store):
    fake.queue(Reply(delay=1.5), Reply(delay=1.5))
    llm = LLM(settings.model_copy(update={"timeout_s": 0.5, "max_retries": 0}), store)
    start = time.monotonic()
    with pytest.raises(LLMError) as info:
        await llm.complete(ask())
    assert time.monotonic() - start < 1.4
    assert "timed out" in info.value.what
    assert len(fake.requests) == 1
    [record] = calls_log(store)
    assert "timed out" in record["error"]


# --------------------------------------------------------------------------- 5. output parsing


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "",
        'Here it is: {"verdict": "YES", "reason": "r"}',
        '{"verdict": "YES", ',
        '[{"verdict": "YES", "reason": "r"}]',
    ],
)
async def test_text_that_is_not_one_json_object_is_an_output_error(fake, settings, store, text):
    fake.queue(Reply(text=text))
    llm = LLM(settings, store)
    with pytest.raises(LLMOutputError) as info:
        await llm.complete(ask())
    assert "record_answer" in info.value.what
    assert "\n" not in info.value.one_line()
    assert len(fake.requests) == 1
    [record] = calls_log(store)
    assert record["error"] == info.value.what
    assert record["input_tokens"] == 120  # the tokens were still billed
    assert cache_files(store) == []
    # Not cached: asking again reaches the server (and the default responder answers well).
    response = await llm.complete(ask())
    assert response.cached is False and len(fake.requests) == 2


@pytest.mark.parametrize(
    ("tool_input", "field"),
    [
        ({"verdict": "YES"}, "reason"),
        ({"verdict": "MAYBE", "reason": "hmm"}, "verdict"),
        ({"verdict": "YES", "reason": 42}, "reason"),
    ],
)
async def test_tool_call_that_does_not_validate_names_the_field(
    fake, settings, store, tool_input, field
):
    fake.queue(Reply(tool_input=tool_input))
    llm = LLM(settings, store)
    with pytest.raises(LLMOutputError) as info:
        await llm.complete(ask())
    assert f"at {field}" in info.value.what
    assert len(fake.requests) == 1
    assert cache_files(store) == []


async def test_text_that_is_a_valid_json_object_is_accepted(fake, settings, store):
    fake.queue(Reply(text='  {"verdict": "NO", "reason": "plain JSON"}\n'))
    llm = LLM(settings, store)
    response = await llm.complete(ask())
    assert response.output == Verdict(verdict="NO", reason="plain JSON")
    assert len(cache_files(store)) == 1


# --------------------------------------------------------------------------- 6. cache


async def test_identical_call_is_answered_from_the_cache(fake, settings, store):
    fake.queue(tool(verdict="NO", reason="cached answer"))
    llm = LLM(settings, store)
    first = await llm.complete(ask("same prompt"))
    second = await llm.complete(ask("same prompt"))
    assert len(fake.requests) == 1
    assert first.cached is False and second.cached is True
    assert second.output == first.output == Verdict(verdict="NO", reason="cached answer")
    assert (llm.calls, llm.cache_hits) == (1, 1)
    [path] = cache_files(store)
    assert path.parent.parent == store.root / "cache" / "llm"
    assert path.stem == calls_log(store)[0]["cache_key"] and path.parent.name == path.stem[:2]
    # The cache survives the client: a new LLM on the same data dir does not call either.
    other = LLM(settings, store)
    third = await other.complete(ask("same prompt"))
    assert third.cached is True and third.output == first.output
    assert len(fake.requests) == 1 and other.calls == 0


async def test_a_different_prompt_system_or_model_is_a_new_call(fake, settings, store):
    llm = LLM(settings, store)
    await llm.complete(ask("prompt one"))
    await llm.complete(ask("prompt two"))
    await llm.complete(ask("prompt one", system="Another system prompt."))
    haiku = LLM(settings.model_copy(update={"model": "claude-haiku-4-5"}), store)
    response = await haiku.complete(ask("prompt one"))
    assert response.cached is False
    assert len(fake.requests) == 4
    assert fake.requests[3]["model"] == "claude-haiku-4-5"
    assert (llm.calls, llm.cache_hits, haiku.calls) == (3, 0, 1)
    assert len(cache_files(store)) == 4


async def test_cache_off_always_calls(fake, settings, store):
    llm = LLM(settings.model_copy(update={"cache": False}), store)
    first = await llm.complete(ask("same"))
    second = await llm.complete(ask("same"))
    assert len(fake.requests) == 2
    assert first.cached is False and second.cached is False
    assert (llm.calls, llm.cache_hits) == (2, 0)
    assert cache_files(store) == []


@pytest.mark.parametrize(
    "damage",
    [
        '{"data": {"verdict": "N',
        "",
        "\x00\x01garbage",
        "null",
        "{}",
        "[]",
        '{"data": {"verdict": "MAYBE"}}',
    ],
)
async def test_damaged_cache_entry_is_a_miss(fake, settings, store, damage):
    llm = LLM(settings, store)
    await llm.complete(ask("cache me"))
    [path] = cache_files(store)
    path.write_text(damage, "utf-8")
    fake.queue(tool(verdict="NO", reason="fresh"))
    response = await llm.complete(ask("cache me"))
    assert response.cached is False
    assert response.output == Verdict(verdict="NO", reason="fresh")
    assert len(fake.requests) == 2
    # The entry is rewritten, so the next identical call is a hit again.
    assert json.loads(path.read_text("utf-8"))["data"] == {"verdict": "NO", "reason": "fresh"}
    again = await llm.complete(ask("cache me"))
    assert again.cached is True and len(fake.requests) == 2


# --------------------------------------------------------------------------- 7. redaction


async def test_redaction_before_anything_is_sent_or_logged(fake, settings, store):
    llm = LLM(
        settings.model_copy(update={"redact": [r"sk-[A-Za-z0-9]+", r"\b\d{3}-\d{2}-\d{4}\b"]}),
        store,
    )
    prompt = "User key sk-AbC123xyz and SSN 123-45-6789, is this fine?"
    await llm.complete(ask(prompt))
    raw = json.dumps(fake.requests[0])
    assert "sk-AbC123xyz" not in raw and "123-45-6789" not in raw
    assert (
        fake.requests[0]["messages"][0]["content"]
        == "User key [REDACTED] and SSN [REDACTED], is this fine?"
    )
    [record] = calls_log(store)
    assert record["redactions"] == 2
    assert "[REDACTED]" in record["sent"]
    assert "sk-AbC123xyz" not in record["sent"] and "123-45-6789" not in record["sent"]
    for path in store.root.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            assert b"sk-AbC123xyz" not in text and b"123-45-6789" not in text, path


async def test_redaction_covers_the_system_prompt(fake, settings, store):
    llm = LLM(settings.model_copy(update={"redact": [r"sk-[A-Za-z0-9]+"]}), store)
    await llm.complete(ask("plain prompt", system="Internal token sk-SYSTEM999 must not leak."))
    assert fake.requests[0]["system"] == "Internal token [REDACTED] must not leak."
    assert calls_log(store)[0]["redactions"] == 1


@pytest.mark.parametrize("pattern", ["(unclosed", "[a-", "*star"])
def test_invalid_redact_pattern_is_a_one_line_error(fake, settings, store, pattern):
    with pytest.raises(HilbotError) as info:
        LLM(settings.model_copy(update={"redact": [r"sk-\w+", pattern]}), store)
    line = info.value.one_line()
    assert "\n" not in line
    assert pattern in line and "redact" in line
    assert info.value.fix


# --------------------------------------------------------------------------- 8. concurrency


async def test_concurrency_is_bounded(monkeypatch, settings, store):
    with serve(monkeypatch, latency=0.2) as server:
        llm = LLM(settings.model_copy(update={"concurrency": 3}), store)
        start = time.monotonic()
        responses = await asyncio.gather(*(llm.complete(ask(f"question {i}")) for i in range(12)))
        elapsed = time.monotonic() - start
    assert len(responses) == 12 and all(isinstance(r.output, Verdict) for r in responses)
    assert len(server.requests) == 12
    assert sorted(b["messages"][0]["content"] for b in server.requests) == sorted(
        f"question {i}" for i in range(12)
    )
    assert server.in_flight_max == 3
    assert elapsed >= 0.75  # four waves of 0.2 s
    assert llm.calls == 12
    assert len(calls_log(store)) == 12


# --------------------------------------------------------------------------- 9. keys


@pytest.mark.parametrize("value", [None, ""])
def test_no_key_is_a_no_api_key_error(monkeypatch, settings, store, value):
    if value is None:
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    else:
        monkeypatch.setenv("ANTHROPIC_API_KEY", value)
    with pytest.raises(NoAPIKey) as info:
        LLM(settings, store)
    line = info.value.one_line()
    assert "ANTHROPIC_API_KEY" in line
    assert "--judge lexical" in line
    assert "\n" not in line
    assert isinstance(info.value, LLMError) and isinstance(info.value, HilbotError)


async def test_rejected_key_is_not_retried(fake, settings, store):
    fake.queue(error(401, "authentication_error"))
    llm = LLM(settings.model_copy(update={"max_retries": 3}), store)
    with pytest.raises(LLMError) as info:
        await llm.complete(ask())
    assert "rejected" in info.value.what and "ANTHROPIC_API_KEY" in info.value.what
    assert len(fake.requests) == 1
    assert FAKE_KEY not in info.value.one_line()
    assert "rejected" in calls_log(store)[0]["error"]


async def test_other_400_is_not_retried_and_keeps_temperature(fake, settings, store):
    fake.queue(Reply(status=400, error_type="invalid_request_error"))
    llm = LLM(settings.model_copy(update={"max_retries": 3}), store)
    with pytest.raises(LLMError) as info:
        await llm.complete(ask("first"))
    assert "400" in info.value.what
    assert len(fake.requests) == 1
    await llm.complete(ask("second"))
    assert len(fake.requests) == 2
    assert fake.requests[1]["temperature"] == 0


# --------------------------------------------------------------------------- 10. temperature


def rejects_temperature(body: dict[str, Any]) -> Reply:
    """A model that answers 400 to any request carrying ``temperature``."""
    if "temperature" in body:
        return Reply(
            status=400, error_type="invalid_request_error: temperature is deprecated for this model"
        )
    return schema_responder(body)


async def test_temperature_is_dropped_after_a_400_naming_it(monkeypatch, settings, store):
    with serve(monkeypatch, responder=rejects_temperature) as server:
        llm = LLM(settings, store)
        response = await llm.complete(ask("first"))
        assert isinstance(response.output, Verdict)
        assert len(server.requests) == 2
        assert server.requests[0]["temperature"] == 0
        assert "temperature" not in server.requests[1]
        assert server.requests[1]["messages"] == server.requests[0]["messages"]
        await llm.complete(ask("second"))
        assert len(server.requests) == 3
        assert "temperature" not in server.requests[2]
    [first, second] = calls_log(store)
    assert first.get("error") is None and second.get("error") is None


async def test_temperature_fallback_does_not_loop(monkeypatch, settings, store):
    def always(body):
        return Reply(status=400, error_type="invalid_request_error: temperature is deprecated")

    with serve(monkeypatch, responder=always) as server:
        llm = LLM(settings, store)
        with pytest.raises(LLMError) as info:
            await llm.complete(ask())
        assert "400" in info.value.what
        assert len(server.requests) == 2
        assert "temperature" in server.requests[0] and "temperature" not in server.requests[1]


async def test_temperature_fallback_with_calls_in_flight(monkeypatch, settings, store):
    """Calls already sent with temperature when another call learns it is rejected must retry
    too."""
    with serve(monkeypatch, latency=0.1, responder=rejects_temperature) as server:
        llm = LLM(settings.model_copy(update={"concurrency": 3}), store)
        results = await asyncio.gather(
            *(llm.complete(ask(f"q{i}")) for i in range(3)), return_exceptions=True
        )
    failures = [r for r in results if isinstance(r, BaseException)]
    assert failures == [], [str(f) for f in failures]
    assert sum("temperature" in b for b in server.requests) == 3
    assert sum("temperature" not in b for b in server.requests) == 3


# --------------------------------------------------------------------------- 11. secrets


async def test_api_key_is_never_written_to_the_data_dir(fake, settings, store):
    fake.queue(Reply(text="not json"), error(500, "api_error"))
    llm = LLM(settings.model_copy(update={"max_retries": 0}), store)
    errors: list[str] = []
    for prompt in ("a", "b"):
        with pytest.raises(LLMError) as info:
            await llm.complete(ask(prompt))
        errors.append(info.value.one_line())
    await llm.complete(ask("c"))
    await llm.complete(ask("c"))  # a cache hit
    await llm.complete(ask("d", purpose="generate"))
    assert (llm.calls, llm.cache_hits) == (4, 1)
    assert len(calls_log(store)) == 4
    files = [p for p in store.root.rglob("*") if p.is_file()]
    assert any(p.name == "llm-calls.jsonl" for p in files) and len(cache_files(store)) == 2
    for path in files:
        assert FAKE_KEY.encode() not in path.read_bytes(), path
    assert all(FAKE_KEY not in e for e in errors)


@pytest.mark.parametrize("status", [400, 500])
async def test_a_server_error_that_echoes_the_key_is_scrubbed_before_it_is_stored(
    fake, settings, store, status
):
    fake.queue(
        error(status, "api_error", message="x" * 160, echo_key=True)
    )  # a 200-character cut would split the key
    llm = LLM(settings.model_copy(update={"max_retries": 0}), store)
    with pytest.raises(LLMError) as info:
        await llm.complete(ask())
    [record] = calls_log(store)
    assert f"answered {status}" in info.value.what and "[secret]" in info.value.what
    for text in (info.value.one_line(), record["error"]):
        assert FAKE_KEY[:10] not in text  # neither the key nor the part of it a cut would leave


async def test_a_model_answer_that_quotes_the_key_is_scrubbed_before_it_is_stored(
    fake, settings, store
):
    fake.queue(
        Reply(text="y" * 68 + " " + FAKE_KEY)
    )  # an 80-character cut would leave its first 11 characters
    llm = LLM(settings, store)
    with pytest.raises(LLMOutputError) as info:
        await llm.complete(ask())
    [record] = calls_log(store)
    assert "[secret]" in info.value.what
    assert FAKE_KEY[:10] not in info.value.one_line() and FAKE_KEY[:10] not in record["error"]


@pytest.mark.parametrize(
    "reply",
    [
        error(400, "invalid_request_error", message="bad\nrequest \x1b[2J\u202e\x9b"),
        Reply(text="no tool \x1b]0;pwned\x07 \u202egnp.exe"),
    ],
    ids=["error", "text"],
)
async def test_text_from_the_server_is_one_visible_line(fake, settings, store, reply):
    fake.queue(reply)
    llm = LLM(settings.model_copy(update={"max_retries": 0}), store)
    with pytest.raises(LLMError) as info:
        await llm.complete(ask())
    [record] = calls_log(store)
    for text in (info.value.one_line(), record["error"]):
        assert not re.search("[\x00-\x1f\x7f-\x9f\u202e]", text), text
        assert "␛" in text and "<U+202E>" in text


# --------------------------------------------------------------------------- models of the 5 family


async def test_sonnet_5_gets_no_temperature(fake, settings, store):
    llm = LLM(settings.model_copy(update={"model": "claude-sonnet-5"}), store)
    response = await llm.complete(ask("no sampling params"))
    assert isinstance(response.output, Verdict)
    assert "temperature" not in fake.requests[0]
    # priced from the built-in table: $2 in / $10 out per million
    assert response.cost_usd == pytest.approx((120 * 2 + 30 * 10) / 1_000_000)


async def test_json_output_mode_uses_structured_output_and_parses_strictly(fake, settings, store):
    llm = LLM(settings.model_copy(update={"model": "claude-sonnet-5-5", "output": "json"}), store)
    fake.queue(tool(verdict="NO", reason="Not verbatim."), Reply(text="YES, it is."))
    response = await llm.complete(ask("structured"))
    body = fake.requests[0]
    assert "tools" not in body and "tool_choice" not in body
    schema = body["output_config"]["format"]["schema"]
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert schema["additionalProperties"] is False and set(schema["required"]) == {
        "verdict",
        "reason",
    }
    assert response.output == Verdict(verdict="NO", reason="Not verbatim.")
    with pytest.raises(LLMOutputError):
        await llm.complete(ask("structured, but the model rambles"))
