"""Secrets never written or printed: every secret the process holds is scrubbed from errors, logs and files.

The values come from the environment at the time of the call, in every form they travel in
(raw, URL-encoded, JSON-escaped); the end-to-end tests run ``hilbot run --judge llm`` against a
Messages API server that echoes the key back in its errors.
"""

from __future__ import annotations

import json
import logging
import os
import re
import warnings
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from evaluation import scrub
from evaluation.errors import HilbotError
from tests._cli import BUG, invoke
from tests.fakes.anthropic_api import FakeAnthropic, error, schema_responder

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "fixtures" / "cases"
CLAUDE = ROOT / "tests" / "fixtures" / "outputs" / "rules-claude-sonnet.jsonl"
VALUE = 'sk-ant-api03-R3AL/k3y+with:odd "chars"'
"""A value whose URL-encoded and JSON-escaped forms differ from it."""
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_KEY", "_PASSWD")


@pytest.fixture(autouse=True)
def no_secrets(monkeypatch):
    """An environment holding no secret (CI machines may hold some of their own)."""
    for name in list(os.environ):
        if name.upper().endswith(SECRET_SUFFIXES) or "://" in os.environ[name]:
            monkeypatch.delenv(name)


def forms(value: str) -> list[str]:
    """The forms a value takes in transit: raw, in a URL (upper and lower case escapes), in JSON, in another letter case."""
    encoded = quote(value, safe="")
    lower = re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), encoded)
    return [value, encoded, lower, quote_plus(value, safe=""), quote(value), json.dumps(value)[1:-1],
            json.dumps(value, ensure_ascii=True)[1:-1], value.lower(), value.upper()]  # libraries capitalise messages


# --------------------------------------------------------------------------- scrub()


@pytest.mark.parametrize("name", ["ANTHROPIC_API_KEY", "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "SLACK_BOT_TOKEN",
                                  "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "OPENAI_API_KEY", "GITHUB_TOKEN",
                                  "DB_PASSWORD", "HOOK_SECRET"])
def test_every_secret_variable_is_replaced_in_every_form_it_travels_in(monkeypatch, name):
    monkeypatch.setenv(name, VALUE)
    for form in forms(VALUE):
        text = f"POST https://example.org/bot{form}/getMe failed: {{\"key\": \"{form}\"}}"
        scrubbed = scrub.scrub(text)
        assert "sk-ant-api03" not in scrubbed.lower() and "r3al" not in scrubbed.lower(), (form, scrubbed)
        assert scrubbed == f"POST https://example.org/bot{scrub.MARK}/getMe failed: {{\"key\": \"{scrub.MARK}\"}}"
    assert VALUE in scrub.secrets()


def test_values_are_read_from_the_environment_at_the_time_of_the_call(monkeypatch):
    text = "token=first-token-value then second-token-value"
    assert scrub.scrub(text) == text
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "first-token-value")
    assert scrub.scrub(text) == f"token={scrub.MARK} then second-token-value"
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "second-token-value")
    assert scrub.scrub(text) == f"token=first-token-value then {scrub.MARK}"
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN")
    assert scrub.scrub(text) == text and scrub.secrets() == []


def test_short_values_and_other_variables_are_left_alone(monkeypatch):
    monkeypatch.setenv("DB_PASSWORD", "hunter2")  # 7 characters: replacing it would corrupt ordinary text
    monkeypatch.setenv("EDITOR", "vim-with-a-long-name")
    text = "hunter2 uses vim-with-a-long-name"
    assert scrub.scrub(text) is text and scrub.secrets() == []


def test_a_secret_that_contains_another_is_replaced_whole(monkeypatch):
    monkeypatch.setenv("SHORT_TOKEN", "abcdefgh")
    monkeypatch.setenv("LONG_TOKEN", "abcdefgh12345678")
    assert scrub.scrub("a abcdefgh12345678 b abcdefgh c") == f"a {scrub.MARK} b {scrub.MARK} c"


def test_a_password_inside_a_url_variable_is_a_secret(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://hilbot:pr0xy-pa55word@proxy.internal:3128")
    assert scrub.scrub("407 from http://hilbot:pr0xy-pa55word@proxy.internal:3128") == \
        f"407 from http://hilbot:{scrub.MARK}@proxy.internal:3128"


def test_a_hilbot_error_is_clean_from_the_moment_it_is_built(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", VALUE)
    exc = HilbotError(f"server said: bad key {VALUE}", where=f"https://x/{quote(VALUE, safe='')}", fix=f"not {VALUE}")
    for text in (exc.one_line(), str(exc), exc.what, exc.where, exc.fix):
        assert "R3AL" not in text and scrub.MARK in text


# --------------------------------------------------------------------------- logging


@pytest.fixture
def install(capsys):
    """``scrub.install_logging``, undone after the test; yields (install, capsys)."""
    undo: list = []
    yield (lambda level, **kw: undo.append(scrub.install_logging(level, **kw))), capsys
    for step in reversed(undo):
        step()


def test_every_logger_at_every_level_is_scrubbed_messages_arguments_and_tracebacks(monkeypatch, install):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:TEST-TOKEN")
    install, logs = install
    install(logging.DEBUG)
    logging.getLogger("httpx").debug('HTTP Request: POST %s "HTTP/1.1 200 OK"', "http://127.0.0.1/bot123456:TEST-TOKEN/getMe")
    logging.getLogger("vendor.lib").info("quoted: %r", {"token": "123456%3ATEST-TOKEN"})
    logging.getLogger("vendor.lib").warning("the server said: %s", "\x1b]0;pwned\x07\x1b[2J")
    try:
        raise RuntimeError("Unauthorized for bot123456:TEST-TOKEN")
    except RuntimeError:
        logging.getLogger("telegram.ext.Application").exception("No error handlers are registered")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("deprecated use of 123456:TEST-TOKEN")
    [ours] = [h for h in logging.getLogger().handlers if isinstance(h, scrub.StderrHandler)]
    ours.handle(logging.LogRecord("vendor.lib", logging.INFO, __file__, 1, "%d items", ("123456:TEST-TOKEN",), None))  # a broken call
    err = logs.readouterr().err
    assert "TEST-TOKEN" not in err
    assert "HTTP Request: POST http://127.0.0.1/bot[secret]/getMe" in err  # the request was logged
    assert "RuntimeError: Unauthorized for bot[secret]" in err and "Traceback" in err
    assert "deprecated use of [secret]" in err
    assert "logging failed on a line from vendor.lib" in err  # logging's own error report: scrubbed, one line
    assert "the server said: ␛]0;pwned␇␛[2J" in err and "\x1b" not in err  # no escape sequence reaches the terminal


def test_install_logging_twice_keeps_one_handler_and_the_undo_restores_what_was_there(install):
    install, logs = install
    root, chatty = logging.getLogger(), logging.getLogger("vendor.chatty")
    install(logging.INFO, quiet=["vendor.chatty"])
    install(logging.INFO, quiet=["vendor.chatty"])
    logging.getLogger("vendor.lib").info("once")
    chatty.info("too much")
    assert logs.readouterr().err.count("once") == 1
    undo = scrub.install_logging(logging.DEBUG, quiet=["vendor.chatty"])
    undo()
    assert chatty.level == logging.WARNING and root.level == logging.INFO  # as the earlier install left them


# --------------------------------------------------------------------------- end to end


def test_a_messages_api_that_echoes_the_key_leaks_it_nowhere(tmp_path):
    def echo(body):
        if "Eliminator" in body["messages"][0]["content"]:
            return error(400, "invalid_request_error", message="x" * 160, echo_key=True)  # the key straddles a 200-character cut
        return schema_responder(body)

    (tmp_path / "hilbot.toml").write_text("[llm]\nmax_retries = 0\n")
    with FakeAnthropic(responder=echo) as fake:
        key = fake.env()["ANTHROPIC_API_KEY"]
        env = {**fake.env(), "HILBOT_DATA_DIR": str(tmp_path / "results"), "HILBOT_CONFIG": str(tmp_path / "hilbot.toml")}
        result = invoke("run", "--cases", str(CASES), "--outputs", str(CLAUDE), "--run-id", "echo", "--judge", "llm",
                        env=env, cwd=tmp_path)
        echoed = [r for r in fake.requests if "Eliminator" in r["messages"][0]["content"]]
    assert result.exit_code == 0, result.stderr
    assert echoed and BUG not in result.stderr
    assert re.search(r"^  ✗ AI: judging failed: .*400", result.stdout, re.M)  # the failure is shown
    files = [p for p in (tmp_path / "results").rglob("*") if p.is_file()]
    assert any(p.name == "llm-calls.jsonl" for p in files)
    for path in files:
        data = path.read_bytes()
        assert key[:10].encode() not in data, path  # not the key, nor a prefix left by a cut
    assert b"[secret]" in (tmp_path / "results" / "llm-calls.jsonl").read_bytes()
    assert key[:10] not in result.stdout and key[:10] not in result.stderr


def test_a_logged_token_field_loses_its_value_in_every_form():
    """A platform's payload carries the app's verification token, which no variable of this process holds."""
    from evaluation.scrub import scrub_fields

    assert scrub_fields('{"payload": {"token": "Zx9verificationTOKEN", "team_id": "T1"}}') == \
        '{"payload": {"token": "[secret]", "team_id": "T1"}}'
    assert scrub_fields("{'token': 'Zx9verificationTOKEN'}") == "{'token': '[secret]'}"
    assert scrub_fields("token=Zx9verificationTOKEN&user_id=U1") == "token=[secret]&user_id=U1"
    assert scrub_fields('"verification_token": "Zx9verificationTOKEN"') == '"verification_token": "[secret]"'
    assert scrub_fields("next_token=abcdefghijk, a token: short") == "next_token=abcdefghijk, a token: short"
