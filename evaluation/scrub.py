"""Secrets never written or printed: every secret the process holds is replaced by ``[secret]``.

The process holds its secrets in the environment (``ANTHROPIC_API_KEY``, ``TELEGRAM_BOT_TOKEN``,
…). A server can echo one back in an error, a library can log a URL with the bot token in it,
a traceback can carry either. :func:`scrub` replaces every occurrence, in each form a secret
takes in transit (raw, URL-encoded, JSON- and HTML-escaped) and in any letter case (libraries
capitalise error messages). Errors are scrubbed when they are built
(:class:`~evaluation.errors.HilbotError`), log lines as they are formatted
(:func:`install_logging`), records and reports as the store writes them.

A secret is the value of a variable named in :data:`NAMES` or whose name ends in one of
:data:`SUFFIXES`, or the password of a URL held in any variable (``https://user:pw@proxy``).
Values shorter than :data:`MIN_LENGTH` characters are left alone: replacing them would corrupt
ordinary text. The environment is read at every call (its size, last name and the values of
the variables that may hold a secret); what is derived from it is cached on those. A text costs
a lower-case copy and one substring search per secret; the regex runs only when one occurs.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from typing import Any, Callable, Iterable, cast

from .text import visible

MARK = "[secret]"
"""What every occurrence of a secret becomes."""
NAMES = frozenset({"ANTHROPIC_API_KEY", "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "SLACK_BOT_TOKEN",
                   "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"})
"""The secrets hilbot itself reads."""
SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PASSWD", "_ACCESS_KEY", "_SECRET_KEY", "_PRIVATE_KEY")
"""Any other variable whose name ends like this holds a secret too."""
MIN_LENGTH = 8
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
"""The log line format of ``hilbot serve``."""

_DATA = cast("dict[Any, Any]", getattr(os.environ, "_data", os.environ))
"""The environment's own dictionary (CPython: encoded names and values): the cheap way to see it change."""


class _Derived:
    """What the environment held at the last look, and the pattern made from it."""

    __slots__ = ("size", "last", "watched", "forms", "needles", "pattern")

    def __init__(self, watched: tuple[tuple, ...] = (), secrets: Iterable[str] = (), size: int | None = None):
        self.size, self.last = len(_DATA) if size is None else size, next(reversed(_DATA), None)
        self.watched = watched
        self.forms = sorted(set().union(*map(forms, secrets)), key=lambda s: (-len(s), s))
        """Every form of every secret, longest first (so a secret inside another is not half replaced)."""
        self.needles = tuple({_needle(secret) for secret in secrets})
        """A piece of each secret that all its forms hold, in lower case: the cheap test before the regex."""
        self.pattern = re.compile("|".join(map(re.escape, self.forms)), re.IGNORECASE) if self.forms else None

    def scrub(self, text: str) -> str:
        """``text`` with every form of these secrets, in any letter case, replaced by :data:`MARK`."""
        if self.pattern is None:
            return text
        lowered = text.lower()
        for needle in self.needles:
            if needle in lowered:
                return self.pattern.sub(MARK, text)
        return text

    def current(self) -> bool:
        """Whether the environment still holds what this was derived from.

        A variable added moves the last name or the count, one removed changes the count, and
        the variables that may hold a secret are compared value by value.
        """
        if len(_DATA) != self.size or next(reversed(_DATA), None) != self.last:
            return False
        get = _DATA.get
        for name, value in self.watched:
            if get(name) != value:
                return False
        return True


def _may_hold(name: str, value: str) -> bool:
    """Whether a variable is one to watch: a secret's name, or a URL that may carry a password."""
    upper = name.upper()
    return upper in NAMES or upper.endswith(SUFFIXES) or ("://" in value and "@" in value)


def _secret(name: str, value: str) -> str | None:
    """The secret a variable holds, if any."""
    if "://" in value and not name.upper().endswith(SUFFIXES) and name.upper() not in NAMES:
        from urllib.parse import urlsplit

        try:
            secret = urlsplit(value.strip()).password
        except ValueError:
            secret = None
    else:
        secret = value.strip()
    return secret if secret and len(secret) >= MIN_LENGTH else None


_UNESCAPED = re.compile(r"[a-z0-9._~-]+")
"""Characters no URL, JSON or HTML encoding changes."""


def _needle(secret: str) -> str:
    """The end of the longest run of the secret that every form of it holds unchanged, lower-cased.

    At most 32 characters: Python finds a needle that short fastest.
    """
    return max(_UNESCAPED.findall(secret.lower()), key=len, default="")[-32:]


def forms(value: str) -> set[str]:
    """The forms a secret takes in transit: raw, URL-encoded, JSON- and HTML-escaped."""
    import html
    import json
    from urllib.parse import quote, quote_plus

    return {value, quote(value, safe=""), quote(value), quote_plus(value, safe=""), json.dumps(value)[1:-1],
            json.dumps(value, ensure_ascii=False)[1:-1], html.escape(value)}


def _derive() -> _Derived:
    """Look at the whole environment: which variables hold secrets, and the pattern matching them."""
    held = {name: value for name, value in os.environ.items() if _may_hold(name, value)}
    found = {secret for name, value in held.items() if (secret := _secret(name, value))}
    watched = tuple((os.environ.encodekey(name), _DATA.get(os.environ.encodekey(name))) for name in held)
    return _Derived(watched, found)


_derived = _Derived(size=-1)
"""Derived at the first call (a size of -1 is never current)."""


def _current() -> _Derived:
    global _derived
    derived = _derived
    if not derived.current():
        derived = _derived = _derive()
    return derived


def secrets() -> list[str]:
    """Every secret the process holds now, in every form it travels in (longest first)."""
    return list(_current().forms)


def scrub(text: str) -> str:
    """``text`` with every occurrence of a secret replaced by :data:`MARK`."""
    derived = _derived
    if not derived.current():
        derived = _current()
    return derived.scrub(text)


def scrubber() -> Callable[[str], str]:
    """:func:`scrub` for a batch of texts: the environment is read once, here, not at each call."""
    return _current().scrub


# ---------------------------------------------------------------------------- logging


class ScrubbingFormatter(logging.Formatter):
    """Wraps another formatter: whatever it makes of a record (message, arguments, traceback, stack) is scrubbed.

    Control and bidi characters in it are made visible too (:func:`evaluation.text.visible`): a
    log line can quote a server's answer or a user's message, and goes to a terminal.
    """

    def __init__(self, inner: logging.Formatter | None = None):
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        return visible(scrub_fields(scrub(self.inner.format(record))))


_TOKEN_FIELD = re.compile(r"""(\b(?:verification_)?token["']?\s*[:=]\s*["']?)([A-Za-z0-9_.-]{8,})""")
"""A ``token`` field of a JSON body, a dict's repr or a form, with its value (a platform's payloads carry
the app's verification token, which no variable of this process holds)."""


def scrub_fields(text: str) -> str:
    """``text`` with the value of every ``token`` field (JSON, repr or form) replaced by :data:`MARK`."""
    return _TOKEN_FIELD.sub(lambda m: m[1] + MARK, text) if "token" in text else text


class CommandFormatter(logging.Formatter):
    """``warning: message``: how a command (not ``serve``) shows what hilbot and its libraries log."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {super().format(record)}"


class StderrHandler(logging.StreamHandler):
    """Writes each line to ``sys.stderr`` as it is at that moment; its own failures are one scrubbed line."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass

    def handleError(self, record: logging.LogRecord) -> None:
        if logging.raiseExceptions:
            exc = sys.exc_info()[1]
            line = scrub(f"logging failed on a line from {record.name} ({type(exc).__name__}: {exc}): {str(record.msg)!r}")
            sys.stderr.write(visible(line, newlines=False)[:400] + "\n")


def _handlers() -> Iterable[logging.Handler]:
    """Every handler attached anywhere now, and logging's last resort."""
    loggers = [logging.getLogger(), *(lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger))]
    yield from {id(h): h for lg in loggers for h in lg.handlers}.values()
    if logging.lastResort is not None:
        yield logging.lastResort


def install_logging(level: int, *, quiet: Iterable[str] = (), formatter: logging.Formatter | None = None) -> Callable[[], None]:
    """Log to stderr at ``level`` with every line scrubbed, whichever logger it comes from; returns the undo.

    The root logger gets one handler (installing again replaces it); handlers already attached
    elsewhere get their formatter wrapped; warnings are logged. ``quiet`` loggers (chatty
    libraries) log warnings only, unless ``level`` is DEBUG.
    """
    root = logging.getLogger()
    before = root.level, {name: logging.getLogger(name).level for name in quiet}
    for old in [h for h in root.handlers if isinstance(h, StderrHandler)]:
        root.removeHandler(old)
    handler = StderrHandler()
    handler.setFormatter(ScrubbingFormatter(formatter or logging.Formatter(FORMAT)))
    root.addHandler(handler)
    root.setLevel(level)
    for name in quiet:
        logging.getLogger(name).setLevel(logging.DEBUG if level <= logging.DEBUG else logging.WARNING)
    wrapped = {h: h.formatter for h in _handlers() if not isinstance(h.formatter, ScrubbingFormatter)}
    for h, formatter in wrapped.items():
        h.setFormatter(ScrubbingFormatter(formatter))
    logging.captureWarnings(True)

    def undo() -> None:
        root.removeHandler(handler)
        root.setLevel(before[0])
        for name, old_level in before[1].items():
            logging.getLogger(name).setLevel(old_level)
        for h, formatter in wrapped.items():
            h.setFormatter(formatter)
        logging.captureWarnings(False)

    return undo
