"""Secrets never written or printed: every secret the process holds is scrubbed from errors, logs
and files.

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
from tests.auxil.canary import CANARIES, PROXY_PASSWORD, encodings, leaks, planted
from tests.auxil.cli import BUG, invoke
from tests.fakes.anthropic_api import FakeAnthropic, error, schema_responder

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "fixtures" / "cases"
CLAUDE = ROOT / "tests" / "fixtures" / "outputs" / "rules-claude-sonnet.jsonl"
VALUE = 'sk-ant-api03-R3AL/k3y+with:odd "chars"'
"""A value whose URL-encoded and JSON-escaped forms differ from it."""
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_KEY", "_PASSWD")


@pytest.fixture(autouse=True)
def no_secrets(monkeypatch):
    """An environment holding no secret (CI machines may hold some of their own), and no secret held
    in code (bots started by earlier tests hold their fakes' tokens)."""
    for name in list(os.environ):
        if name.upper().endswith(SECRET_SUFFIXES) or "://" in os.environ[name]:
            monkeypatch.delenv(name)
    monkeypatch.setattr(scrub, "_held", {})


def forms(value: str) -> list[str]:
    """The forms a value takes in transit: raw, in a URL (upper and lower case escapes), in JSON, in
    another letter case."""
    encoded = quote(value, safe="")
    lower = re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), encoded)
    return [
        value,
        encoded,
        lower,
        quote_plus(value, safe=""),
        quote(value),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=True)[1:-1],
        value.lower(),
        value.upper(),
    ]  # libraries capitalise messages


# --------------------------------------------------------------------------- scrub()


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "TELEGRAM_BOT_TOKEN",
        "TELEGRAM_WEBHOOK_SECRET",
        "SLACK_BOT_TOKEN",
        "SLACK_APP_TOKEN",
        "SLACK_SIGNING_SECRET",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "HOOK_SECRET",
    ],
)
def test_every_secret_variable_is_replaced_in_every_form_it_travels_in(monkeypatch, name):
    monkeypatch.setenv(name, VALUE)
    for form in forms(VALUE):
        text = f'POST https://example.org/bot{form}/getMe failed: {{"key": "{form}"}}'
        scrubbed = scrub.scrub(text)
        assert "sk-ant-api03" not in scrubbed.lower() and "r3al" not in scrubbed.lower(), (
            form,
            scrubbed,
        )
        assert (
            scrubbed
            == f'POST https://example.org/bot{scrub.MARK}/getMe failed: {{"key": "{scrub.MARK}"}}'
        )
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
    monkeypatch.setenv(
        "DB_PASSWORD", "hunter2"
    )  # 7 characters: replacing it would corrupt ordinary text
    monkeypatch.setenv("EDITOR", "vim-with-a-long-name")
    text = "hunter2 uses vim-with-a-long-name"
    assert scrub.scrub(text) is text and scrub.secrets() == []


def test_a_secret_that_contains_another_is_replaced_whole(monkeypatch):
    monkeypatch.setenv("SHORT_TOKEN", "abcdefgh")
    monkeypatch.setenv("LONG_TOKEN", "abcdefgh12345678")
    assert scrub.scrub("a abcdefgh12345678 b abcdefgh c") == f"a {scrub.MARK} b {scrub.MARK} c"


def test_a_password_inside_a_url_variable_is_a_secret(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://hilbot:pr0xy-pa55word@proxy.internal:3128")
    assert (
        scrub.scrub("407 from http://hilbot:pr0xy-pa55word@proxy.internal:3128")
        == f"407 from http://hilbot:{scrub.MARK}@proxy.internal:3128"
    )


def test_a_hilbot_error_is_clean_from_the_moment_it_is_built(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", VALUE)
    exc = HilbotError(
        f"server said: bad key {VALUE}",
        where=f"https://x/{quote(VALUE, safe='')}",
        fix=f"not {VALUE}",
    )
    for text in (exc.one_line(), str(exc), exc.what, exc.where, exc.fix):
        assert "R3AL" not in text and scrub.MARK in text


@pytest.mark.parametrize("name", list(CANARIES))
def test_every_encoding_a_secret_can_take_on_its_way_is_replaced(monkeypatch, name):
    """Raw, quote, quote_plus, lower-case hex, JSON (ASCII or not), HTML, JSON in a form body, JSON
    in JSON, base64 (alone, and after ``user:`` as HTTP Basic auth has it), another letter case."""
    monkeypatch.setenv(name, CANARIES[name])
    value = PROXY_PASSWORD if name == "ALL_PROXY" else CANARIES[name]
    text = planted(value)
    scrubbed = scrub.scrub(text)
    assert leaks(scrubbed, [value]) == [], scrubbed
    assert scrubbed.count(scrub.MARK) == len(encodings(value)) and "canary" not in scrubbed.lower()


def test_a_mix_of_escapes_is_still_the_secret(monkeypatch):
    """JSON in a form body with its escapes escaped, HTML escaped twice, a ``\\x`` escape."""
    monkeypatch.setenv("FOO_API_KEY", 'k3y"with<odd>/é')
    for text in (
        "k3y%5C%22with%3Codd%3E%2F%C3%A9",
        'k3y\\"with\\u003codd\\u003e\\/\\u00e9',
        "k3y&amp;quot;with&amp;lt;odd&amp;gt;/&#233;",
        "k3y&#x22;with&#60;odd&#62;/\\xc3\\xa9",
    ):
        assert scrub.scrub(f"<{text}>") == f"<{scrub.MARK}>", text


def test_hostile_runs_of_escapes_cost_the_scrubber_no_backtracking(monkeypatch):
    """A server's or a user's text with long runs of backslashes next to a secret's start is
    scrubbed in linear time (the escapes' regexes are atomic and bounded)."""
    import time

    monkeypatch.setenv("FOO_API_KEY", 'CANARY-foo/key"\\é')
    monkeypatch.setenv("BAR_TOKEN", '"quoted-secret-value')
    texts = [
        "CANARY-foo" + "\\" * 100_000 + "%5C" * 50_000,
        "quoted-secret" + '\\"' * 100_000,
        "token" + "\\" * 100_000,
        ("%22token%22" + "+" * 40) * 5_000,
    ]
    started = time.perf_counter()
    for text in texts:
        scrub.scrub_fields(scrub.scrub(text))
    assert time.perf_counter() - started < 2.0


def test_a_secret_handed_over_in_code_is_held_like_one_in_the_environment():
    text = "bot 424242:HELD-token-value in a URL: bot424242%3AHELD-token-value"
    assert scrub.scrub(text) == text
    scrub.hold("424242:HELD-token-value", "short", None)
    assert scrub.scrub(text) == f"bot {scrub.MARK} in a URL: bot{scrub.MARK}"
    assert scrub.scrub("short") == "short"


def test_a_proxy_password_is_found_as_written_and_as_decoded(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://me:pa%2Fss-w0rd-long@proxy:3128")
    assert scrub.scrub("pa%2Fss-w0rd-long and pa/ss-w0rd-long") == f"{scrub.MARK} and {scrub.MARK}"


def test_cuts_scrub_first_and_never_leave_part_of_a_secret(monkeypatch):
    """A text cut through a secret would leave a part of it no scrubber recognises."""
    from bot.channels.slack import render as _slack_render
    from bot.channels.telegram import render as _telegram_render
    from bot.chat import texts

    monkeypatch.setenv("FOO_API_KEY", "CANARY-0123456789abcdef")
    text = "x" * 70 + " CANARY-0123456789abcdef and more " * 20
    for cut in (
        texts.clip(text, 80),
        _telegram_render.clip(text, 80),
        _slack_render.fit(text, 80),
        *_telegram_render.chunks(text * 20),
        *_slack_render.text_pieces(text * 30),
    ):
        assert "canary" not in cut.lower(), cut


def test_scrub_values_scrubs_every_string_but_the_credentials_a_call_carries(monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-0000-CANARY")
    token = "xoxb-0000-CANARY"
    sent = {"text": token, "blocks": [{"text": {"text": f"a {token} b"}}], "n": 3, "token": token}
    assert scrub.scrub_values(sent, frozenset({"token"})) == {
        "text": scrub.MARK,
        "blocks": [{"text": {"text": f"a {scrub.MARK} b"}}],
        "n": 3,
        "token": token,
    }


# --------------------------------------------------------------------------- streams


def test_a_scrubbing_stream_scrubs_text_and_bytes_and_stays_what_it_wraps(monkeypatch, tmp_path):
    import io

    monkeypatch.setenv("SLACK_SIGNING_SECRET", CANARIES["SLACK_SIGNING_SECRET"])
    with open(tmp_path / "out", "w", encoding="utf-8") as target:
        stream = scrub.ScrubbingStream(target)
        stream.write(planted(CANARIES["SLACK_SIGNING_SECRET"]) + "\n")
        stream.buffer.write(f"bytes: {CANARIES['SLACK_SIGNING_SECRET']}\n".encode())
        stream.buffer.write(b"\xff not text\n")  # bytes that are not UTF-8 pass as they came
        stream.flush()
        assert stream.fileno() == target.fileno() and stream.encoding == "utf-8"
        assert not stream.isatty()
        with pytest.raises(TypeError):
            stream.write(b"bytes to a text stream")  # type: ignore[arg-type]
    written = (tmp_path / "out").read_bytes()
    assert leaks(written.decode("utf-8", "replace")) == []
    assert b"bytes: [secret]" in written and b"\xff not" in written
    primary, secondary = os.openpty()
    with io.open(secondary, "w", closefd=True) as terminal:
        assert scrub.ScrubbingStream(terminal).isatty()  # rich and the reviewer see a terminal
    os.close(primary)


def test_main_scrubs_stdout_and_stderr_for_the_command_and_restores_them(monkeypatch, capsys):
    """Anything printed while a command runs (print, typer, rich, a library) passes the scrubber."""
    import sys

    import typer

    from bot.cli import _app, main

    monkeypatch.setenv("FOO_API_KEY", CANARIES["FOO_API_KEY"])
    before = sys.stdout, sys.stderr

    @_app.app.command("leak-for-test", hidden=True)
    def leak() -> None:
        print(planted(CANARIES["FOO_API_KEY"]))
        typer.echo(CANARIES["FOO_API_KEY"], err=True)
        if hasattr(sys.stderr, "buffer"):
            sys.stderr.buffer.write(CANARIES["FOO_API_KEY"].encode() + b"\n")

    try:
        with pytest.raises(SystemExit):
            main(["leak-for-test"])
    finally:
        commands = _app.app.registered_commands
        commands[:] = [c for c in commands if c.name != "leak-for-test"]
    out, err = capsys.readouterr()
    assert leaks(out + err) == [] and "[secret]" in out and "[secret]" in err
    assert (sys.stdout, sys.stderr) == before


# --------------------------------------------------------------------------- logging


@pytest.fixture
def install(capsys):
    """``scrub.install_logging``, undone after the test; yields (install, capsys)."""
    undo: list = []
    yield (lambda level, **kw: undo.append(scrub.install_logging(level, **kw))), capsys
    for step in reversed(undo):
        step()


def test_every_logger_at_every_level_is_scrubbed_messages_arguments_and_tracebacks(
    monkeypatch, install
):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:TEST-TOKEN")
    install, logs = install
    install(logging.DEBUG)
    logging.getLogger("httpx").debug(
        'HTTP Request: POST %s "HTTP/1.1 200 OK"', "http://127.0.0.1/bot123456:TEST-TOKEN/getMe"
    )
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
    ours.handle(
        logging.LogRecord(
            "vendor.lib", logging.INFO, __file__, 1, "%d items", ("123456:TEST-TOKEN",), None
        )
    )  # a broken call
    err = logs.readouterr().err
    assert "TEST-TOKEN" not in err
    assert "HTTP Request: POST http://127.0.0.1/bot[secret]/getMe" in err  # the request was logged
    assert "RuntimeError: Unauthorized for bot[secret]" in err and "Traceback" in err
    assert "deprecated use of [secret]" in err
    assert (
        "logging failed on a line from vendor.lib" in err
    )  # logging's own error report: scrubbed, one line
    assert (
        "the server said: ␛]0;pwned␇␛[2J" in err and "\x1b" not in err
    )  # no escape sequence reaches the terminal


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
    assert (
        chatty.level == logging.WARNING and root.level == logging.INFO
    )  # as the earlier install left them


# --------------------------------------------------------------------------- end to end


def test_a_messages_api_that_echoes_the_key_leaks_it_nowhere(tmp_path):
    def echo(body):
        if "Eliminator" in body["messages"][0]["content"]:
            return error(
                400, "invalid_request_error", message="x" * 160, echo_key=True
            )  # the key straddles a 200-character cut
        return schema_responder(body)

    (tmp_path / "hilbot.toml").write_text("[llm]\nmax_retries = 0\n")
    with FakeAnthropic(responder=echo) as fake:
        key = fake.env()["ANTHROPIC_API_KEY"]
        env = {
            **fake.env(),
            "HILBOT_DATA_DIR": str(tmp_path / "results"),
            "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"),
        }
        result = invoke(
            "run",
            "--cases",
            str(CASES),
            "--outputs",
            str(CLAUDE),
            "--run-id",
            "echo",
            "--judge",
            "llm",
            env=env,
            cwd=tmp_path,
        )
        echoed = [r for r in fake.requests if "Eliminator" in r["messages"][0]["content"]]
    assert result.exit_code in (0, 1), result.stderr  # 1: the CI gate counts the unjudged item
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
    """A platform's payload carries the app's verification token, which no variable of this process
    holds."""
    from evaluation.scrub import scrub_fields

    for body in (
        "payload=%7B%22type%22%3A+%22x%22%2C+%22token%22%3A+%22Zx9verificationTOKEN%22",
        "payload=%7b%22token%22%3a%22Zx9verificationTOKEN%22",
        '{\\"token\\": \\"Zx9verificationTOKEN\\"}',
        "&quot;token&quot;: &quot;Zx9verificationTOKEN&quot;",
        "%2522token%2522%253A%2520%2522Zx9verificationTOKEN",
    ):
        cleaned = scrub_fields(body)
        assert "Zx9verification" not in cleaned and scrub.MARK in cleaned, body
    assert (
        scrub_fields('{"payload": {"token": "Zx9verificationTOKEN", "team_id": "T1"}}')
        == '{"payload": {"token": "[secret]", "team_id": "T1"}}'
    )
    assert scrub_fields("{'token': 'Zx9verificationTOKEN'}") == "{'token': '[secret]'}"
    assert scrub_fields("token=Zx9verificationTOKEN&user_id=U1") == "token=[secret]&user_id=U1"
    assert (
        scrub_fields('"verification_token": "Zx9verificationTOKEN"')
        == '"verification_token": "[secret]"'
    )
    assert (
        scrub_fields("next_token=abcdefghijk, a token: short")
        == "next_token=abcdefghijk, a token: short"
    )


# ------------------------------------------------------------------------- a server quoting headers


OPENAI_KEY = "sk-proj-CANARYopenai/key+with:odd"
"""An OpenAI key whose URL-encoded and JSON-escaped forms differ from it (ASCII: a header value)."""


def _one_change(tmp_path: Path) -> list[str]:
    """Two snapshot trees that differ in one file."""
    for side, text in (("books", "answer: Paris\n"), ("out", "answer: Lyon\n")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "capital.md").write_text(text)
    return [str(tmp_path / "books"), str(tmp_path / "out")]


def _echoing_anthropic():
    from dataclasses import replace

    return FakeAnthropic(responder=lambda body: replace(schema_responder(body), echo_headers=True))


def _echoing_openai():
    from dataclasses import replace

    from tests.fakes import openai_api

    def responder(body: dict) -> openai_api.Reply:
        return replace(openai_api.schema_responder(body), echo_headers=True)

    return openai_api.FakeOpenAI(api_key=OPENAI_KEY, responder=responder)


@pytest.mark.parametrize("provider", ["anthropic", "openai-compatible"])
@pytest.mark.parametrize("verbose", [[], ["-v"]])
def test_triage_reports_print_no_key_a_server_echoed(tmp_path, provider, verbose):
    """Issue 13: the compact and ``-v`` reports printed the key a server echoed in its answer."""
    from tests.auxil.canary import CANARIES, leaks

    key = CANARIES["ANTHROPIC_API_KEY"] if provider == "anthropic" else OPENAI_KEY
    toml = f'[llm]\nprovider = "{provider}"\nmodel = "m-test"\nmax_retries = 0\n'
    (tmp_path / "hilbot.toml").write_text(toml)
    with _echoing_anthropic() if provider == "anthropic" else _echoing_openai() as fake:
        env = {
            **fake.env(),
            "HILBOT_DATA_DIR": str(tmp_path / "results"),
            "HILBOT_CONFIG": str(tmp_path / "hilbot.toml"),
        }
        env["ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"] = key
        sources = _one_change(tmp_path)
        out = invoke("triage", *sources, "--judge", "llm", *verbose, env=env, cwd=tmp_path)
        asked = len(fake.requests)
    assert out.exit_code in (0, 1), out
    assert asked == 1 and "capital.md" in out.stdout
    assert "[secret]" in out.stdout  # the echo was shown, scrubbed
    assert leaks(out.stdout + out.stderr, [key]) == []


def test_a_secret_across_a_cards_cut_leaves_no_piece_of_it(monkeypatch):
    """A card clips a long answer: cut first, a piece of the key would be left that no scrubber
    knows."""
    from bot.render import ANSWER_CHARS, item_sections
    from evaluation import ItemData, Query

    key = "sk-ant-cutacrossthecard-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    answer = "x" * (ANSWER_CHARS - 12) + " " + key + " tail"
    shown = "\n".join(
        line
        for _, lines in item_sections(ItemData(id="q", query=Query(query="q"), answer=answer))
        for line in lines
    )
    assert "cutacross" not in shown and "sk-ant-cut" not in shown
