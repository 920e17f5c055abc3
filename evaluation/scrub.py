"""Secrets never written or printed: every secret the process holds is replaced by ``[secret]``.

The process holds its secrets in the environment (``ANTHROPIC_API_KEY``, ``TELEGRAM_BOT_TOKEN``,
…) and, for tokens handed over in code (a bot built by a test or a plugin), in what :func:`hold`
was given. A server can echo one back in an error or an answer, a library can log a URL with the
bot token in it, a traceback can carry either. :func:`scrub` replaces every occurrence, in each
form a secret takes in transit and in any letter case (libraries capitalise error messages):

- raw, or in any letter case;
- URL-encoded (``quote``, ``quote_plus``, hex digits in either case, encoded twice), JSON-escaped
  (``ensure_ascii`` or not, a JSON string inside JSON or inside a form body such as Slack's
  ``payload=%7B%22token%22%3A+%22…``), HTML-escaped (named or numeric entities, escaped twice),
  a Python ``\\x`` escape — and any mix of these, character by character;
- in base64 (standard or URL-safe, at any offset): an HTTP Basic ``Authorization`` header carries
  ``base64(user:secret)``.

Everything that leaves the process passes through it: errors when they are built
(:class:`~evaluation.errors.HilbotError`), log lines as they are formatted
(:func:`install_logging`), the command line's stdout and stderr (:class:`ScrubbingStream`,
installed by ``bot.cli.main``), every parameter of every call to a chat platform
(:func:`scrub_values`, in the channels' HTTP clients), records and reports as the store writes
them.

A secret is the value of a variable named in :data:`NAMES` or whose name ends in one of
:data:`SUFFIXES`, the password of a URL held in any variable (``https://user:pw@proxy``, as written
and decoded), or a value given to :func:`hold`. Values shorter than :data:`MIN_LENGTH` characters
are left alone: replacing them would corrupt ordinary text. The environment is read at every call
(its size, last name and the values of the variables that may hold a secret); what is derived from
it is cached on those. A text costs a lower-case copy and a few substring searches per secret; the
regex runs only when one of them hits.
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
NAMES = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "TELEGRAM_BOT_TOKEN",
        "TELEGRAM_WEBHOOK_SECRET",
        "SLACK_BOT_TOKEN",
        "SLACK_APP_TOKEN",
        "SLACK_SIGNING_SECRET",
        "HILBOT_STORE_PASSWORD",
        "PGPASSWORD",
    }
)
"""The secrets hilbot itself reads."""
SUFFIXES = (
    "_API_KEY",
    "_TOKEN",
    "_SECRET",
    "_PASSWORD",
    "_PASSWD",
    "_ACCESS_KEY",
    "_SECRET_KEY",
    "_PRIVATE_KEY",
)
"""Any other variable whose name ends like this holds a secret too."""
MIN_LENGTH = 8
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
"""The log line format of ``hilbot serve``."""

_DATA = cast("dict[Any, Any]", getattr(os.environ, "_data", os.environ))
"""The environment's own dictionary (CPython: encoded names and values): the cheap way to see it
change."""
_held: dict[str, None] = {}
"""Secrets handed over in code (:func:`hold`), in the order they came; replaced, never changed."""


class _Derived:
    """What the environment held at the last look, and the pattern made from it."""

    __slots__ = ("size", "last", "watched", "held", "secrets", "needles", "pattern")

    def __init__(
        self,
        watched: tuple[tuple, ...] = (),
        secrets: Iterable[str] = (),
        size: int | None = None,
        held: int = 0,
    ):
        self.size, self.last = len(_DATA) if size is None else size, next(reversed(_DATA), None)
        self.watched, self.held = watched, held
        self.secrets = sorted(set(secrets), key=lambda s: (-len(s), s))
        """Longest first, so that a secret inside another is not half replaced."""
        self.needles = tuple(dict.fromkeys(n for secret in self.secrets for n in _needles(secret)))
        """Pieces every form of a secret holds, in lower case: the cheap test before the regex."""
        pattern = "|".join(_pattern(secret) for secret in self.secrets)
        self.pattern = re.compile(pattern, re.IGNORECASE) if pattern else None

    def scrub(self, text: str) -> str:
        """``text`` with every form of these secrets, in any letter case, replaced by
        :data:`MARK`."""
        if self.pattern is None:
            return text
        lowered = text.lower()
        for needle in self.needles:
            if needle in lowered:
                return self.pattern.sub(MARK, text)
        return text

    def current(self) -> bool:
        """Whether the environment and the held secrets are still what this was derived from.

        A variable added moves the last name or the count, one removed changes the count, and
        the variables that may hold a secret are compared value by value.
        """
        if len(_DATA) != self.size or next(reversed(_DATA), None) != self.last:
            return False
        if len(_held) != self.held:
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


def _secrets_of(name: str, value: str) -> set[str]:
    """The secrets a variable holds: its value, or a URL's password as written and decoded."""
    if "://" in value and not name.upper().endswith(SUFFIXES) and name.upper() not in NAMES:
        from urllib.parse import unquote, urlsplit

        try:
            password = urlsplit(value.strip()).password
        except ValueError:
            password = None
        found = {password, unquote(password)} if password else set()
    else:
        found = {value.strip()}
    return {secret for secret in found if len(secret) >= MIN_LENGTH}


def hold(*values: str | None) -> None:
    """From now on, treat these values as secrets too: a token handed over in code, or one learned
    from a platform's payload. None, and values shorter than :data:`MIN_LENGTH`, are ignored."""
    global _held
    for value in values:
        value = value.strip() if isinstance(value, str) else ""
        if len(value) >= MIN_LENGTH and value not in _held:
            _held = {
                **_held,
                value: None,
            }  # a new dict: a scrub in another thread never sees one change


# ---------------------------------------------------------------------------- encodings

_PLAIN = re.compile(r"[A-Za-z0-9._-]")
"""Characters no URL, JSON or HTML encoding changes."""
_SLASH = r"(?:\\|%5C|%255C)"
"""A backslash, raw or URL-encoded (once or twice): what JSON escapes start with, at any depth."""
_SLASHES, _SOME_SLASHES = f"(?>{_SLASH}{{1,15}})", f"(?>{_SLASH}{{0,15}})"
"""One or more, none or more: atomic and bounded (four levels of JSON in JSON need 15), so that a
long run of backslashes costs the regex no backtracking."""
_NAMED = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos"}


def _percent(char: str) -> str:
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))


def _escapes(char: str) -> list[str]:
    """Regexes for a character escaped with backslashes: JSON's (``\\"``, ``\\n``, ``\\u00e9``, and
    ``\\u003c`` as HTML-safe encoders write it) and Python's bytes repr (``\\xc3\\xa9``)."""
    found = []
    escaped = __import__("json").dumps(char)[1:-1]
    if escaped != char and escaped.startswith("\\"):
        found.append("".join(_SLASHES + re.escape(part) for part in escaped[1:].split("\\")))
    if ord(char) <= 0xFFFF:
        found.append(f"{_SLASHES}u0*{ord(char):x}")
    if not char.isascii():
        found.append(
            "".join(f"{_SLASHES}x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
        )
    return found


def _char(char: str) -> str:
    """A regex for one character of a secret in any of its encodings, or a mix of them."""
    if _PLAIN.fullmatch(char):
        return re.escape(char)
    names = [_NAMED[char]] if char in _NAMED else []
    entity = (
        "&(?:amp;){0,4}(?:" + "|".join([*names, f"#0*{ord(char)}", f"#x0*{ord(char):x}"]) + ");"
    )
    if char == "\\":  # a backslash escaped is more backslashes
        return f"(?:{_SLASHES}|{entity})"
    percent = _percent(char)
    direct = [re.escape(char), re.escape(percent), re.escape(percent.replace("%", "%25"))]
    direct += [r"\+", "%2B"] if char == " " else []
    return f"(?:{_SOME_SLASHES}(?:{'|'.join(direct)})|{'|'.join(_escapes(char))}|{entity})"


def _base64_cores(secret: str) -> list[str]:
    """The part of ``base64(anything + secret + anything)`` the secret alone decides, at each of the
    three offsets it can start at, standard and URL-safe."""
    import base64

    data = secret.encode("utf-8", "surrogatepass")
    cores = []
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + data).decode()
        first, end = -(-8 * pad // 6), 8 * (pad + len(data)) // 6  # the secret's bits only
        core = encoded[first:end]
        cores += [core, core.translate(str.maketrans("+/", "-_"))]
    return list(dict.fromkeys(core for core in cores if len(core) >= MIN_LENGTH))


def _pattern(secret: str) -> str:
    """A regex for a secret in every form it takes: each character in any encoding, or base64."""
    return "|".join(["".join(map(_char, secret)), *map(re.escape, _base64_cores(secret))])


def _needles(secret: str) -> list[str]:
    """The longest run of the secret that every form of it holds unchanged, and the same of each
    base64 form; lower-cased, at most 32 characters each (Python finds a short needle fastest)."""
    runs = [max(re.findall(r"[a-z0-9._-]+", secret.lower()), key=len, default="")]
    for core in _base64_cores(secret):
        runs.append(max(re.findall(r"[a-z0-9]+", core.lower()), key=len, default=""))
    return list(dict.fromkeys(run[-32:] for run in runs))


def forms(value: str) -> set[str]:
    """The commonest forms a secret takes in transit: raw, URL-encoded, JSON- and HTML-escaped, a
    JSON string in a form body, base64 (:func:`scrub` finds these and any mix of their escapes)."""
    import base64
    import html
    import json
    from urllib.parse import quote, quote_plus

    dumped = json.dumps(value)[1:-1]
    return {
        value,
        quote(value, safe=""),
        quote(value),
        quote_plus(value, safe=""),
        dumped,
        json.dumps(value, ensure_ascii=False)[1:-1],
        html.escape(value),
        html.escape(value, quote=False),
        quote_plus(dumped),
        base64.b64encode(value.encode("utf-8", "surrogatepass")).decode(),
    }


def _derive() -> _Derived:
    """Look at the whole environment: which variables hold secrets, and the pattern matching
    them."""
    env = {name: value for name, value in os.environ.items() if _may_hold(name, value)}
    found = {secret for name, value in env.items() for secret in _secrets_of(name, value)}
    keys = [os.environ.encodekey(name) for name in env]
    watched = tuple((key, _DATA.get(key)) for key in keys)
    held = list(_held)
    return _Derived(watched, found | set(held), held=len(held))


_derived = _Derived(size=-1)
"""Derived at the first call (a size of -1 is never current)."""


def _current() -> _Derived:
    global _derived
    derived = _derived
    if not derived.current():
        derived = _derived = _derive()
    return derived


def secrets() -> list[str]:
    """Every secret the process holds now, in the commonest forms it travels in (longest first)."""
    found = {form for secret in _current().secrets for form in forms(secret)}
    return sorted(found, key=lambda s: (-len(s), s))


def scrub(text: str) -> str:
    """``text`` with every occurrence of a secret replaced by :data:`MARK`."""
    derived = _derived
    if not derived.current():
        derived = _current()
    return derived.scrub(text)


def scrubber() -> Callable[[str], str]:
    """:func:`scrub` for a batch of texts: the environment is read once, here, not at each call."""
    return _current().scrub


def scrub_values(value: Any, keep: frozenset[str] = frozenset()) -> Any:
    """A JSON-like value (dicts, lists, strings) with every string in it scrubbed; the values of the
    keys in ``keep`` (a credential a call must carry) are left as they are."""
    clean = scrubber()

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return clean(item)
        if isinstance(item, dict):
            return {key: entry if key in keep else walk(entry) for key, entry in item.items()}
        if isinstance(item, (list, tuple)):
            return [walk(entry) for entry in item]
        return item

    return walk(value)


# ---------------------------------------------------------------------------- streams


class ScrubbingStream:
    """A text stream (stdout, stderr) whose every write is scrubbed before it reaches the stream.

    Everything else — ``isatty``, ``fileno``, ``encoding``, flushing — is the wrapped stream's, so a
    terminal stays a terminal for rich and the terminal reviewer. Each write is scrubbed on its own
    (``print``, ``typer.echo`` and rich write a message whole); ``buffer`` is scrubbed too, for code
    that writes bytes.
    """

    def __init__(self, inner: Any):
        self.inner = inner
        self._buffer: _ScrubbingBuffer | None = None

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.inner.write(scrub(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return bool(self.inner.isatty())

    def fileno(self) -> int:
        return int(self.inner.fileno())

    @property
    def encoding(self) -> str:
        return getattr(self.inner, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:
        return getattr(self.inner, "errors", None)

    @property
    def buffer(self) -> _ScrubbingBuffer:
        """The wrapped stream's binary buffer, scrubbed the same way (AttributeError if none)."""
        if self._buffer is None:
            self._buffer = _ScrubbingBuffer(self.inner.buffer, self.encoding)
        return self._buffer

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _ScrubbingBuffer:
    """A binary stream whose writes are decoded, scrubbed and encoded again (untouched if clean)."""

    def __init__(self, inner: Any, encoding: str):
        self.inner, self.encoding = inner, encoding

    def write(self, data: bytes) -> int:
        raw = bytes(data)
        text = raw.decode(self.encoding, "surrogateescape")
        cleaned = scrub(text)
        if cleaned != text:
            raw = cleaned.encode(self.encoding, "surrogateescape")
        self.inner.write(raw)
        return len(raw)

    def flush(self) -> None:
        self.inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def scrub_streams() -> Callable[[], None]:
    """Wrap ``sys.stdout`` and ``sys.stderr`` in :class:`ScrubbingStream` s (not twice); returns the
    undo."""
    saved = sys.stdout, sys.stderr

    def wrapped(stream: Any) -> Any:
        if stream is None or isinstance(stream, ScrubbingStream):
            return stream
        return ScrubbingStream(stream)

    sys.stdout, sys.stderr = wrapped(saved[0]), wrapped(saved[1])

    def undo() -> None:
        sys.stdout, sys.stderr = saved

    return undo


# ---------------------------------------------------------------------------- logging


class ScrubbingFormatter(logging.Formatter):
    """Wraps another formatter: whatever it makes of a record (message, arguments, traceback, stack)
    is scrubbed.

    Control and bidi characters in it are made visible too (:func:`evaluation.text.visible`): a
    log line can quote a server's answer or a user's message, and goes to a terminal.
    """

    def __init__(self, inner: logging.Formatter | None = None):
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        return visible(scrub_fields(scrub(self.inner.format(record))))


_QUOTE = (
    r"""(?:\\{0,15}["']|%(?:25)?2[27]|&(?:amp;){0,4}(?:quot|apos|#0*3[49]|#x0*2[27]);"""
    r"|\\{1,15}u002[27])?"
)
"""An optional quote around a key or a value: raw, JSON-escaped, URL-encoded (once or twice), or
HTML-escaped."""
_SPACE = r"(?:\s|\+|%(?:25)?20){0,16}"
_TOKEN_FIELD = re.compile(
    r"(?:(?<![A-Za-z0-9_])|(?<=%22)|(?<=%27)|(?<=%2522))"  # a key of its own (not next_token)
    rf"((?:verification_)?token{_QUOTE}{_SPACE}(?:[:=]|%(?:25)?3[AD]){_SPACE}{_QUOTE})"
    r"([A-Za-z0-9_.-]{8,})",
    re.IGNORECASE,
)
"""A ``token`` field with its value: of a JSON body, a dict's repr or a form, and the same
URL-encoded in a form value (Slack's ``payload=%7B%22token%22%3A+%22…``) or escaped in JSON. A
platform's payloads carry the app's verification token, which no variable of this process holds."""


def scrub_fields(text: str) -> str:
    """``text`` with the value of every ``token`` field (JSON, repr, form, URL-encoded JSON)
    replaced by :data:`MARK`."""
    return _TOKEN_FIELD.sub(lambda m: m[1] + MARK, text) if "token" in text.lower() else text


class CommandFormatter(logging.Formatter):
    """``warning: message``: how a command (not ``serve``) shows what hilbot and its libraries
    log."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {super().format(record)}"


class StderrHandler(logging.StreamHandler):
    """Writes each line to ``sys.stderr`` as it is at that moment; its own failures are one scrubbed
    line."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass

    def handleError(self, record: logging.LogRecord) -> None:
        if logging.raiseExceptions:
            exc = sys.exc_info()[1]
            line = scrub(
                f"logging failed on a line from {record.name} ({type(exc).__name__}: {exc}): "
                f"{str(record.msg)!r}"
            )
            sys.stderr.write(visible(line, newlines=False)[:400] + "\n")


def _handlers() -> Iterable[logging.Handler]:
    """Every handler attached anywhere now, and logging's last resort."""
    loggers = [
        logging.getLogger(),
        *(
            lg
            for lg in logging.Logger.manager.loggerDict.values()
            if isinstance(lg, logging.Logger)
        ),
    ]
    yield from {id(h): h for lg in loggers for h in lg.handlers}.values()
    if logging.lastResort is not None:
        yield logging.lastResort


def install_logging(
    level: int, *, quiet: Iterable[str] = (), formatter: logging.Formatter | None = None
) -> Callable[[], None]:
    """Log to stderr at ``level`` with every line scrubbed, whichever logger it comes from; returns
    the undo.

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
        logging.getLogger(name).setLevel(
            logging.DEBUG if level <= logging.DEBUG else logging.WARNING
        )
    wrapped = {
        h: h.formatter for h in _handlers() if not isinstance(h.formatter, ScrubbingFormatter)
    }
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
