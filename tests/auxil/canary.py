"""Canary secrets and every encoding one can take on its way out: what leak tests plant and seek.

A secret leaks when any of these forms of it reaches a chat, a stream, a log or a file: raw, in a
URL (``quote``, ``quote_plus``, upper- and lower-case hex digits), JSON-escaped (ASCII or not),
HTML-escaped, as a JSON string inside a form body, in base64 (alone, or after ``user:`` as HTTP
Basic auth carries it), and in another letter case (libraries capitalise error messages).
"""

from __future__ import annotations

import base64
import html
import json
import re
from typing import Iterable
from urllib.parse import quote, quote_plus

CANARIES = {
    "ANTHROPIC_API_KEY": 'sk-ant-api03-CANARYanthropic/key+with:odd "chars"&<x>',
    "TELEGRAM_BOT_TOKEN": "424242:CANARY-telegram_Token-AAbbCCddEEffGG",
    "SLACK_BOT_TOKEN": "xoxb-4242-4242-CANARYslackBotToken",
    "SLACK_SIGNING_SECRET": "CANARYsigning0secret0f00dfeed",
    "FOO_API_KEY": "CANARY-foo/key=é+ü&more",
    "ALL_PROXY": "http://proxyuser:CANARY-pr0xy%2Fpass@127.0.0.1:9",
}
"""Variables a process may hold, set to canary values (the proxy's password is its secret)."""
PROXY_PASSWORD = "CANARY-pr0xy/pass"
"""The password ``ALL_PROXY`` holds, decoded (``urlsplit`` leaves it as written, with ``%2F``)."""


def secret_values() -> list[str]:
    """The secret each canary variable holds."""
    return [PROXY_PASSWORD if name == "ALL_PROXY" else value for name, value in CANARIES.items()]


def _lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), text)


def _b64(data: str) -> list[str]:
    raw = data.encode()
    return [base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode().rstrip("=")]


def encodings(value: str) -> dict[str, str]:
    """Every form of ``value`` a leak test plants and looks for, by name."""
    dumped = json.dumps(value)[1:-1]
    found = {
        "raw": value,
        "quote": quote(value, safe=""),
        "quote_path": quote(value),
        "quote_plus": quote_plus(value),
        "json": dumped,
        "json_unicode": json.dumps(value, ensure_ascii=False)[1:-1],
        "html": html.escape(value),
        "html_noquote": html.escape(value, quote=False),
        "form_json": quote_plus(dumped),
        "json_in_json": json.dumps(dumped)[1:-1],
        "b64": _b64(value)[0],
        "b64_url": _b64(value)[1],
        "basic": _b64(f"user:{value}")[0],
        "upper": value.upper(),
        "lower": value.lower(),
    }
    hexes = {f"{name}_lowerhex": _lower_hex(text) for name, text in found.items() if "%" in text}
    found |= hexes
    return found


def leaks(text: str, values: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """(secret, encoding) of every form of every canary secret in ``text`` (letter case ignored)."""
    lowered = text.lower()
    return [
        (value[:12], name)
        for value in (secret_values() if values is None else values)
        for name, form in encodings(value).items()
        if form.lower() in lowered
    ]


def planted(value: str) -> str:
    """A text carrying ``value`` in every encoding, each on its own line."""
    return "\n".join(f"{name}: {form}" for name, form in encodings(value).items())


__all__ = ["CANARIES", "PROXY_PASSWORD", "encodings", "leaks", "planted", "secret_values"]
