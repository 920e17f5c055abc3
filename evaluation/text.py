"""Showing untrusted text safely: control characters made visible, never sent to a terminal raw.

Item text, notes, file names and error details come from files and people hilbot does not
control. Written raw to a terminal, an escape sequence in them can set the window title, clear
the screen, recolour or hide the text around it, and a bidi override can reorder what the
reviewer reads. :func:`visible` replaces every such character with a printable stand-in:

- C0 controls and DEL become their Unicode control pictures (``ESC`` → ``␛``, ``CR`` → ``␍``,
  ``NUL`` → ``␀``, ``DEL`` → ``␡``); tab and newline are kept unless ``newlines=False``;
- C1 controls (U+0080–U+009F, e.g. the one-byte CSI) become ``<U+009B>``;
- bidi embeddings, overrides and isolates, and the line and paragraph separators, become
  ``<U+202E>`` and so on.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_UNSAFE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")


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
    return pattern.sub(_stand_in, text) if pattern.search(text) else text
