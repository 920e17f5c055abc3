"""The network guard every test runs under: no connection and no name lookup leaves the loopback
interface, and no real credential or endpoint from the developer's environment reaches the code.

A test that reaches a real service by mistake (a provider key left in the shell, an SDK's
telemetry) fails with ``ConnectionRefusedError: network access in a test: HOST`` instead of
quietly calling it; subprocesses inherit the scrubbed environment.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest

__all__ = ["CREDENTIALS", "guard_network", "scrub_credentials"]

CREDENTIALS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "LANGFUSE_PUBLIC_KEY",
    "LANGFUSE_SECRET_KEY",
    "LANGFUSE_BASE_URL",
    "LANGFUSE_HOST",
    "LANGSMITH_API_KEY",
    "LANGSMITH_ENDPOINT",
    "LANGCHAIN_API_KEY",
    "LANGCHAIN_ENDPOINT",
    "PHOENIX_API_KEY",
    "PHOENIX_BASE_URL",
    "PHOENIX_COLLECTOR_ENDPOINT",
    "TELEGRAM_BOT_TOKEN",
    "TELEGRAM_API_URL",
    "TELEGRAM_WEBHOOK_SECRET",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "SLACK_SIGNING_SECRET",
)
"""Environment variables that name a real service or a key for one; a test sets its own."""


def loopback(host: object) -> bool:
    """Whether ``host`` (str or bytes) is this machine."""
    host = host.decode() if isinstance(host, bytes) else str(host)
    return host in ("localhost", "::1") or host.startswith("127.")


def scrub_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CREDENTIALS:
        monkeypatch.delenv(name, raising=False)


def guard_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse (and record) every connection or name lookup that is not to the loopback
    interface; returns the list of refused hosts."""
    blocked: list[str] = []
    connect, connect_ex, getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def guard(address: Any) -> None:
        # (host, port[, …]); a str is a unix socket
        if isinstance(address, tuple) and not loopback(address[0]):
            blocked.append(str(address[0]))
            raise ConnectionRefusedError(f"network access in a test: {address[0]}")

    def guarded_connect(self: socket.socket, address: Any) -> None:
        guard(address)
        return connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        guard(address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kw: Any) -> Any:
        if host is not None and not loopback(host):
            blocked.append(host.decode() if isinstance(host, bytes) else str(host))
            raise socket.gaierror(socket.EAI_NONAME, "name lookup in a test")
        return getaddrinfo(host, *args, **kw)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    return blocked
