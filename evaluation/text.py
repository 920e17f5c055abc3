"""Showing untrusted text safely: control characters made visible, never sent to a terminal raw.

Item text, notes, file names and error details come from files and people hilbot does not
control. Written raw to a terminal, an escape sequence in them can set the window title, clear
the screen, recolour or hide the text around it, and a bidi override can reorder what the
reviewer reads. :func:`visible` replaces every such character with a printable stand-in:

- C0 controls and DEL become their Unicode control pictures (``ESC`` → ``␛``, ``CR`` → ``␍``,
  ``NUL`` → ``␀``, ``DEL`` → ``␡``); tab and newline are kept unless ``newlines=False``;
- C1 controls (U+0080–U+009F, e.g. the one-byte CSI) become ``<U+009B>``;
- bidi embeddings, overrides and isolates, and the line and paragraph separators, become
  ``<U+202E>`` and so on;
- invisible characters that can hide text from the reader (zero-width space, word joiner,
  byte order mark, interlinear annotations, the tag characters U+E0000–U+E007F) and lone
  surrogates (which no terminal can be sent) become ``<U+200B>``, ``<U+E0041>``, ``<U+D800>``.

Zero-width (non-)joiners and the soft hyphen are kept: emoji sequences and several scripts need
them. A Windows line break (CR LF) is a line break when newlines are kept.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
_INVISIBLE = (
    "\u180e\u200b\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\ud800-\udfff"
)
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}{_INVISIBLE}]")
_UNSAFE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}{_INVISIBLE}]")


def _stand_in(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"<U+{code:04X}>"


def visible(text: str, *, newlines: bool = True) -> str:
    """``text`` with every control, bidi and separator character replaced by a visible stand-in.

    With ``newlines=False`` (one-line fields: titles, ids, error lines) newline and tab are
    replaced too.
    """
    pattern = _UNSAFE if newlines else _UNSAFE_LINE
    if not pattern.search(text):
        return text
    return pattern.sub(_stand_in, text.replace("\r\n", "\n") if newlines else text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_visible(text: str) -> str:
    """JSON text with every character :func:`visible` would replace written as its JSON escape
    (``\\u202e``): the same JSON value, safe to send to a terminal.

    Such characters can stand only inside JSON strings (the line breaks and indents between values
    are kept), so the document parses to exactly the data it held.
    """
    return _UNSAFE.sub(_json_escape, text) if _UNSAFE.search(text) else text


def for_terminal(text: str, kind: str) -> str:
    """A document as it may go to a terminal: ``json`` through :func:`json_visible`, anything else
    (CSV, Markdown) through :func:`visible`."""
    return json_visible(text) if kind in ("json", "jsonl") else visible(text)
