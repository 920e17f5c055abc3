"""The ``openai-compatible`` provider, end to end through the real ``openai`` SDK against a local
fake Chat Completions server (:class:`tests.fakes.openai_api.FakeOpenAI`), as a user points hilbot
at Ollama, vLLM or llama.cpp: request bodies, structured output and its fallbacks, retries, keys.

Nothing here may leave the machine: :func:`no_network` refuses every connection and name lookup
that is not to the loopback interface, and records the attempt.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from evaluation import load_config
from evaluation.config import Price
from evaluation.llm import LLM, PROVIDERS, LLMError, LLMOutputError, LLMRequest, NoAPIKey, has_key
from tests.auxil.network import guard_network
from tests.evaluation.test_llm import cache_files, calls_log
from tests.fakes.openai_api import KEY, FakeOpenAI, Reply, answer, error

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "fixtures" / "cases"
CLAUDE = ROOT / "tests" / "fixtures" / "outputs" / "rules-claude-sonnet.jsonl"
MODEL = "qwen2.5:7b-instruct"
"""A local model's name, as Ollama knows it: unpriced."""
SDK_LOGGERS = ("openai", "httpx", "httpcore", "httpx2", "httpcore2")


class Verdict(BaseModel):
    """The structured answer the tests ask for."""

    verdict: Literal["YES", "NO"]
    reason: str


def ask(prompt: str = "Is the sky blue?", **kw: Any) -> LLMRequest:
    return LLMRequest(prompt=prompt, output=Verdict, **kw)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse (and record) every connection or name lookup that is not to the loopback interface."""
    return guard_network(monkeypatch)


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)  # no stray ./hilbot.toml
    return load_config(None).llm.model_copy(
        update={"provider": "openai-compatible", "model": MODEL}
    )


def formats(server: FakeOpenAI) -> list[str | None]:
    """The response_format type of every request, in order (None: none sent)."""
    return [(b.get("response_format") or {}).get("type") for b in server.requests]


def instruction(request: LLMRequest) -> str:
    """What the provider appends to the system prompt: the answer is one JSON object matching the
    schema."""
    return (
        "Answer with one JSON object and nothing else (no prose, no code fence). It is the input "
        f"of the {request.tool_name} tool ({request.tool_description}) and matches this JSON "
        "Schema:\n" + json.dumps(request.schema(), ensure_ascii=False)
    )


# --------------------------------------------------------------------------- registration


def test_openai_compatible_is_a_builtin_imported_only_when_used():
    code = """
import sys
from evaluation import load_config
from evaluation.llm import PROVIDERS, get_provider
names = PROVIDERS.names()
before = sorted({m.split(".")[0] for m in sys.modules} & {"openai", "anthropic"})
import os
os.environ["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
provider = get_provider(load_config(None).llm.model_copy(update={"provider": "openai-compatible", "model": "m"}))
after = sorted({m.split(".")[0] for m in sys.modules} & {"openai", "anthropic"})
print(names, before, after, type(provider).__module__, provider.name, sep="\\n")
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env
    ).stdout
    names, before, after, module, name = out.strip().split("\n")
    assert names == "['anthropic', 'openai-compatible']"
    assert before == "[]"  # registered by name only: nothing heavy imported
    assert after == "['openai']" and module == "evaluation._openai" and name == "openai-compatible"
    assert "openai-compatible" in PROVIDERS


# --------------------------------------------------------------------------- a normal answer


async def test_normal_answer_request_body_usage_and_no_cost(openai_api, settings, store):
    openai_api.queue(
        Reply(
            answer={"verdict": "YES", "reason": "Rayleigh scattering."},
            prompt_tokens=1000,
            completion_tokens=200,
        )
    )
    llm = LLM(settings, store)
    assert llm.label == f"openai-compatible/{MODEL}"
    request = ask("Is the sky blue?", system="You judge facts.", purpose="judge:test:1")

    response = await llm.complete(request)

    assert response.output == Verdict(verdict="YES", reason="Rayleigh scattering.")
    assert (response.input_tokens, response.output_tokens) == (1000, 200)
    assert response.cost_usd is None and response.cached is False  # a local model has no price
    [call] = openai_api.calls
    assert (call.method, call.status) == ("/v1/chat/completions", 200)
    body = call.params
    assert body["model"] == MODEL
    assert body["messages"] == [
        {"role": "system", "content": "You judge facts.\n\n" + instruction(request)},
        {"role": "user", "content": "Is the sky blue?"},
    ]
    assert body["max_tokens"] == 400 and body["temperature"] == 0
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "record_answer",
            "description": "Record your answer.",
            "schema": Verdict.model_json_schema(),
            "strict": False,
        },
    }
    assert "tools" not in body and "stream" not in body
    assert {k.lower(): v for k, v in openai_api.headers[0].items()}[
        "authorization"
    ] == f"Bearer {KEY}"

    [record] = calls_log(store)
    assert (record["provider"], record["model"], record["purpose"]) == (
        "openai-compatible",
        MODEL,
        "judge:test:1",
    )
    assert record["sent"] == "[system]\nYou judge facts.\n[user]\nIs the sky blue?"
    assert (record["input_tokens"], record["output_tokens"]) == (1000, 200)
    assert record.get("cost_usd") is None and record.get("error") is None


async def test_request_overrides_redaction_and_a_priced_model(openai_api, settings, store):
    priced = settings.model_copy(
        update={
            "model": "gpt-4.1-mini",
            "prices": {"gpt-4.1-mini": Price(input=0.4, output=1.6)},
            "max_tokens": 123,
            "redact": [r"sk-[A-Za-z0-9]+"],
        }
    )
    llm = LLM(priced, store)
    response = await llm.complete(
        ask(
            "my key is sk-AbC123xyz",
            max_tokens=77,
            tool_name="give.verdict!",
            tool_description="Give the verdict.",
        )
    )
    body = openai_api.requests[0]
    assert body["model"] == "gpt-4.1-mini" and body["max_tokens"] == 77
    assert (
        body["response_format"]["json_schema"]["name"] == "give_verdict_"
    )  # the API allows [A-Za-z0-9_-] only
    assert body["messages"][1][
        "content"
    ] == "my key is [REDACTED]" and "sk-AbC123xyz" not in json.dumps(body)
    assert (
        "the input of the give.verdict! tool (Give the verdict.)" in body["messages"][0]["content"]
    )
    assert response.cost_usd == pytest.approx((120 * 0.4 + 30 * 1.6) / 1_000_000)


async def test_a_reply_without_usage_counts_no_tokens(openai_api, settings, store):
    openai_api.queue(Reply(answer={"verdict": "NO", "reason": "r"}, usage=False))
    response = await LLM(settings, store).complete(ask())
    assert "usage" not in json.dumps(openai_api.calls[0].params)
    assert (response.input_tokens, response.output_tokens) == (0, 0)
    assert calls_log(store)[0]["input_tokens"] == 0


# -------------------------------------------------------------------- the LLM judge through the CLI


def test_llm_judge_runs_against_a_local_server_and_a_rerun_is_cached(run_cli, openai_api, tmp_path):
    (tmp_path / "hilbot.toml").write_text(
        '[llm]\nprovider = "openai-compatible"\nmodel = "llama3.1:8b"\n'
    )
    env = {**openai_api.env(), "ANTHROPIC_API_KEY": ""}
    first = run_cli(
        "run",
        "--cases",
        str(CASES),
        "--outputs",
        str(CLAUDE),
        "--run-id",
        "local-1",
        "--judge",
        "llm",
        env=env,
    )
    assert first.returncode == 0, first.stderr
    sent = len(openai_api.calls)
    assert sent == 8 * 3  # every fixture answer has quotes, contexts and ground-truth answers
    assert all(c.status == 200 and c.params["model"] == "llama3.1:8b" for c in openai_api.calls)
    assert formats(openai_api) == ["json_schema"] * sent
    assert {
        c.params["response_format"]["json_schema"]["schema"]["title"] for c in openai_api.calls
    } >= {"BinaryVerdict"}
    lines = re.findall(r"^  ✓ AI: .*$", first.stdout, re.M)
    assert len(lines) == 8
    assert all(
        line.startswith(
            "  ✓ AI: quote_faithfulness=1.00 explanation_faithfulness=1.00 answer_correctness=1.00"
        )
        for line in lines
    )
    header = json.loads(
        (tmp_path / "results" / "runs" / "local-1.jsonl").read_text("utf-8").splitlines()[0]
    )
    assert (
        header["judge"]["name"] == "openai-compatible/llama3.1:8b"
        and header["judge"]["params"]["provider"] == "openai-compatible"
    )

    again = run_cli(
        "run",
        "--cases",
        str(CASES),
        "--outputs",
        str(CLAUDE),
        "--run-id",
        "local-2",
        "--quiet",
        "--judge",
        "llm",
        env=env,
    )
    assert again.returncode == 0, again.stderr
    assert (
        len(openai_api.calls) == sent
    )  # the rerun made no call: every judgment came from the cache
    records = [
        json.loads(line)
        for line in (tmp_path / "results" / "llm-calls.jsonl").read_text("utf-8").splitlines()
    ]
    assert len(records) == 24 and all(
        r["provider"] == "openai-compatible" and r.get("error") is None for r in records
    )


# --------------------------------------------------------------------------- retries and errors


async def test_429_honours_retry_after_then_succeeds(openai_api, settings, store):
    openai_api.queue(
        error(429, "requests", retry_after=1, code="rate_limit_exceeded"),
        answer(verdict="NO", reason="Night time."),
    )
    llm = LLM(settings, store)
    response = await llm.complete(ask())
    assert response.output == Verdict(verdict="NO", reason="Night time.")
    assert [c.status for c in openai_api.calls] == [429, 200]
    assert (
        openai_api.arrivals[1] - openai_api.arrivals[0] >= 0.9
    )  # waited as told (backoff alone is under 0.5 s)
    assert openai_api.requests[1] == openai_api.requests[0]  # the same call, resent
    assert llm.calls == 1
    [record] = calls_log(store)
    assert record.get("error") is None


async def test_5xx_is_retried_and_exhausted_retries_are_a_logged_error(openai_api, settings, store):
    openai_api.queue(
        error(503, "server_error", message="model is loading"), answer(verdict="YES", reason="ok")
    )
    llm = LLM(settings.model_copy(update={"max_retries": 1}), store)
    assert (await llm.complete(ask("first"))).output == Verdict(verdict="YES", reason="ok")
    assert [c.status for c in openai_api.calls] == [503, 200]

    openai_api.queue(error(500), error(502, message="bad gateway"))
    with pytest.raises(LLMError) as info:
        await llm.complete(ask("second", purpose="judge:x"))
    assert not isinstance(info.value, LLMOutputError)
    assert (
        info.value.what
        == f"the server at http://127.0.0.1:{openai_api.port} answered 502 after all retries: bad "
        "gateway"
    )
    assert "\n" not in info.value.one_line()
    assert [c.status for c in openai_api.calls] == [503, 200, 500, 502]
    assert calls_log(store)[-1]["error"] == info.value.what
    assert len(cache_files(store)) == 1  # only the answer, never the failure


async def test_a_404_names_the_model_and_base_url(openai_api, settings, store):
    openai_api.queue(
        error(404, "not_found_error", message=f"model '{MODEL}' not found, try pulling it first")
    )
    llm = LLM(settings.model_copy(update={"max_retries": 3}), store)
    with pytest.raises(LLMError) as info:
        await llm.complete(ask())
    assert len(openai_api.calls) == 1  # not retried
    assert info.value.what.endswith(
        f"answered 404: model '{MODEL}' not found, try pulling it first"
    )
    assert "[llm] model" in info.value.fix and "OPENAI_BASE_URL" in info.value.fix


async def test_an_unreachable_server_is_a_one_line_error(monkeypatch, settings, store):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://user:hunter2-password@127.0.0.1:{port}/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = LLM(settings.model_copy(update={"max_retries": 0}), store)
    with pytest.raises(LLMError) as info:
        await llm.complete(ask())
    assert info.value.what.startswith(f"cannot reach the server at http://127.0.0.1:{port} (")
    assert "hunter2" not in info.value.one_line() and "hunter2" not in calls_log(store)[0]["error"]


async def test_a_slow_server_times_out(openai_api, settings, store):
    openai_api.queue(Reply(delay=1.0))
    llm = LLM(settings.model_copy(update={"timeout_s": 0.3, "max_retries": 0}), store)
    start = time.monotonic()
    with pytest.raises(LLMError) as info:
        await llm.complete(ask())
    assert time.monotonic() - start < 0.9  # gave up at the timeout, not at the answer
    assert info.value.what.endswith("timed out after all retries") and "timeout_s" in info.value.fix


# --------------------------------------------------------------------------- output parsing


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("not json", "model answered without the record_answer tool: 'not json'"),
        ('{"verdict": "YES", ', "model answered without the record_answer tool"),
        (
            'Here it is: {"verdict": "YES", "reason": "r"}',
            "model answered without the record_answer tool",
        ),
        ("", "model answered without the record_answer tool: '(empty)'"),
        ('{"verdict": "MAYBE", "reason": "r"}', "malformed model output at verdict"),
        ('{"verdict": "YES"}', "malformed model output at reason"),
    ],
)
async def test_a_malformed_answer_is_an_output_error_and_not_cached(
    openai_api, settings, store, text, said
):
    openai_api.queue(Reply(text=text))
    llm = LLM(settings, store)
    with pytest.raises(LLMOutputError) as info:
        await llm.complete(ask())
    assert info.value.what.startswith(said)
    assert len(openai_api.calls) == 1
    [record] = calls_log(store)
    assert (
        record["error"] == info.value.what and record["input_tokens"] == 120
    )  # the tokens were still billed
    assert cache_files(store) == []
    response = await llm.complete(
        ask()
    )  # asked again, it reaches the server (the default responder answers well)
    assert response.cached is False and len(openai_api.calls) == 2


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"verdict": "NO", "reason": "fenced"}\n```',
        '<think>The sky at night is dark.</think>\n\n{"verdict": "NO", "reason": "fenced"}',
        '  {"verdict": "NO", "reason": "fenced"}\n',
    ],
)
async def test_a_fenced_or_thinking_answer_is_one_json_object(openai_api, settings, store, text):
    openai_api.queue(Reply(text=text))
    response = await LLM(settings, store).complete(ask())
    assert response.output == Verdict(verdict="NO", reason="fenced")


# --------------------------------------------------------------- servers without structured outputs


async def test_a_server_refusing_json_schema_gets_json_object_from_then_on(
    openai_api, settings, store, caplog
):
    openai_api.json_schema = False
    caplog.set_level(logging.WARNING, logger="hilbot")
    llm = LLM(settings, store)
    first = await llm.complete(ask("first"))
    assert [c.status for c in openai_api.calls] == [400, 200]
    assert formats(openai_api) == ["json_schema", "json_object"]
    refused = openai_api.calls[0]
    assert (
        refused.params["messages"] == openai_api.requests[1]["messages"]
    )  # the same call, another format
    second = await llm.complete(ask("second"))
    assert formats(openai_api) == ["json_schema", "json_object", "json_object"]
    assert isinstance(first.output, Verdict) and isinstance(second.output, Verdict)
    assert [r.get("error") for r in calls_log(store)] == [None, None]
    warnings = [r.getMessage() for r in caplog.records if r.name == "hilbot"]
    assert warnings == [
        f"the server at http://127.0.0.1:{openai_api.port} refuses response_format json_schema; "
        "asking for json_object from now on"
    ]


async def test_a_server_refusing_both_formats_gets_none_and_the_text_is_parsed(
    openai_api, settings, store
):
    openai_api.json_schema = openai_api.json_object = False
    llm = LLM(settings, store)
    openai_api.queue(
        Reply(
            text='{"verdict": "YES", "reason": "from plain text"}',
            match=lambda body: "response_format" not in body,
        )
    )
    response = await llm.complete(ask("first"))
    assert response.output == Verdict(verdict="YES", reason="from plain text")
    assert formats(openai_api) == ["json_schema", "json_object", None]
    assert [c.status for c in openai_api.calls] == [400, 400, 200]
    assert (
        instruction(ask()) in openai_api.requests[2]["messages"][0]["content"]
    )  # the schema travels in the prompt
    await llm.complete(
        ask("second")
    )  # the default responder reads the schema from the system message
    assert formats(openai_api) == ["json_schema", "json_object", None, None]
    openai_api.queue(Reply(text="Sure! The verdict is YES."))
    with pytest.raises(LLMOutputError):  # still never a guess
        await llm.complete(ask("third"))


async def test_calls_in_flight_when_the_format_is_refused_all_fall_back(
    openai_api, settings, store, caplog
):
    openai_api.json_schema, openai_api.latency = False, 0.1
    caplog.set_level(logging.WARNING, logger="hilbot")
    llm = LLM(settings.model_copy(update={"concurrency": 3}), store)
    results = await asyncio.gather(
        *(llm.complete(ask(f"q{i}")) for i in range(3)), return_exceptions=True
    )
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert sorted(formats(openai_api), key=str) == ["json_object"] * 3 + ["json_schema"] * 3
    assert len([r for r in caplog.records if "refuses response_format" in r.getMessage()]) == 1


async def test_another_400_is_not_a_reason_to_fall_back(openai_api, settings, store):
    openai_api.queue(
        error(
            400,
            "invalid_request_error",
            message="This model's maximum context length is 8192 tokens.",
        )
    )
    llm = LLM(settings.model_copy(update={"max_retries": 3}), store)
    with pytest.raises(LLMError) as info:
        await llm.complete(ask("first"))
    assert info.value.what.endswith(
        "answered 400: This model's maximum context length is 8192 tokens."
    )
    assert len(openai_api.calls) == 1
    await llm.complete(ask("second"))
    assert formats(openai_api) == ["json_schema", "json_schema"]
    assert openai_api.requests[1]["temperature"] == 0


async def test_temperature_is_dropped_after_a_400_naming_it(openai_api, settings, store):
    refusal = Reply(
        status=400,
        error_type="invalid_request_error",
        code="unsupported_value",
        message="Unsupported value: 'temperature' does not support 0 with this model. Only the "
        "default (1) value is supported.",
    )
    openai_api.queue(
        refusal, Reply(**{**refusal.__dict__, "match": lambda body: "temperature" in body})
    )
    llm = LLM(settings, store)
    await llm.complete(ask("first"))
    assert ["temperature" in b for b in openai_api.requests] == [True, False]
    assert formats(openai_api) == ["json_schema", "json_schema"]
    await llm.complete(ask("second"))
    assert ["temperature" in b for b in openai_api.requests] == [True, False, False]


# --------------------------------------------------------------------------- keys


async def test_a_local_server_needs_no_key(openai_api, settings, store, monkeypatch):
    openai_api.api_key = None
    monkeypatch.delenv("OPENAI_API_KEY")
    assert has_key(settings)  # the base URL is enough: `hilbot sets review` offers generation
    response = await LLM(settings, store).complete(ask())
    assert isinstance(response.output, Verdict)
    assert {k.lower(): v for k, v in openai_api.headers[0].items()}[
        "authorization"
    ] == "Bearer not-needed"


def test_no_key_and_no_base_url_is_a_no_api_key_error(monkeypatch, settings, store):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    assert not has_key(settings)
    with pytest.raises(NoAPIKey) as info:
        LLM(settings, store)
    line = info.value.one_line()
    assert "\n" not in line
    assert (
        "no OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)" in line
        and "--judge lexical" in line
    )


async def test_an_api_key_alone_talks_to_the_openai_api_which_the_tests_never_reach(
    monkeypatch, settings, store, no_network
):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert has_key(settings)
    llm = LLM(settings.model_copy(update={"max_retries": 0}), store)
    with pytest.raises(LLMError) as info:
        await llm.complete(ask())
    assert info.value.what.startswith("cannot reach the OpenAI API")
    assert no_network and set(no_network) == {"api.openai.com"}


async def test_a_rejected_key_is_not_retried(openai_api, settings, store):
    openai_api.api_key = "sk-proj-the-key-the-server-expects"
    llm = LLM(settings.model_copy(update={"max_retries": 3}), store)
    with pytest.raises(LLMError) as info:
        await llm.complete(ask())
    assert len(openai_api.calls) == 1 and openai_api.calls[0].status == 401
    assert info.value.what.startswith(
        f"the server at http://127.0.0.1:{openai_api.port} rejected OPENAI_API_KEY (401)"
    )
    assert KEY not in info.value.one_line()


async def test_the_key_never_reaches_logs_files_or_errors(openai_api, settings, store, caplog):
    caplog.set_level(logging.DEBUG)
    for name in SDK_LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    llm = LLM(settings.model_copy(update={"max_retries": 1}), store)
    openai_api.queue(
        error(429, retry_after=0.05),
        answer(verdict="YES", reason="ok"),  # a retry, then an answer
        error(
            400, "invalid_request_error", message="x" * 160, echo_key=True
        ),  # a 200-character cut would split the key
        error(500, echo_key=True),
        error(500, echo_key=True),
        Reply(text="y" * 60 + " " + KEY),
    )  # a model answer quoting the key
    errors: list[str] = []
    await llm.complete(ask("a"))
    for prompt in ("b", "c", "d"):
        with pytest.raises(LLMError) as info:
            await llm.complete(ask(prompt))
        errors.append(info.value.one_line())
    await llm.complete(ask("a"))  # a cache hit
    assert [c.status for c in openai_api.calls] == [429, 200, 400, 500, 500, 200]
    assert all(
        f"Bearer {KEY}" == {k.lower(): v for k, v in h.items()}["authorization"]
        for h in openai_api.headers
    )
    assert (
        sum("[secret]" in e for e in errors) == 3
    )  # the server and the model did echo it: scrubbed

    logged = [r for r in caplog.records if r.name.split(".")[0] in SDK_LOGGERS]
    assert any(r.name.startswith("openai") for r in logged)  # the SDK's DEBUG lines were captured
    for record in caplog.records:
        text = record.getMessage() + repr(record.args) + repr(getattr(record, "__dict__", {}))
        assert KEY[:12] not in text, record.name
    assert KEY[:12] not in caplog.text
    files = [p for p in store.root.rglob("*") if p.is_file()]
    assert any(p.name == "llm-calls.jsonl" for p in files) and len(calls_log(store)) == 4
    for path in files:
        assert KEY[:12].encode() not in path.read_bytes(), path
    assert all(KEY[:12] not in e for e in errors)
