"""``evaluation.text.visible``: untrusted text made safe to show in a terminal, every dangerous
character visible."""

from __future__ import annotations

import unicodedata

import pytest

from evaluation.text import visible

ATTACKS = {
    "\x1b]0;TITLE\x07": "␛]0;TITLE␇",  # set the window title
    "\x1b[2J": "␛[2J",  # clear the screen
    "\x1b[31mred": "␛[31mred",  # recolour
    "safe\rEVIL": "safe␍EVIL",  # overwrite the line
    "\x1b[8mhidden": "␛[8mhidden",  # hide
    "\x9b31m": "<U+009B>31m",  # the one-byte CSI
    "\x9d0;T\x9c": "<U+009D>0;T<U+009C>",  # the one-byte OSC and ST
    "abc\u202edcba": "abc<U+202E>dcba",  # right-to-left override
    "a\u2066b\u2069": "a<U+2066>b<U+2069>",
    "NUL\x00DEL\x7f": "NUL␀DEL␡",
    "back\x08space": "back␈space",
}


@pytest.mark.parametrize("text, shown", ATTACKS.items())
def test_escape_sequences_and_bidi_controls_become_visible(text, shown):
    assert visible(text) == shown
    assert visible(text, newlines=False) == shown


def test_newlines_and_tabs_are_kept_only_when_asked():
    assert visible("a\nb\tc") == "a\nb\tc"
    assert visible("a\nb\tc", newlines=False) == "a␊b␉c"


def test_a_windows_line_break_is_a_line_break_not_an_overwrite():
    assert visible("one\r\ntwo\r\n") == "one\ntwo\n"
    assert visible("one\r\ntwo", newlines=False) == "one␍␊two"
    assert visible("one\rtwo\r\n") == "one␍two\n"


def test_invisible_and_smuggling_characters_become_visible():
    hidden = "ok\U000e0041\U000e0042\u200b\u2060\ufeff\ufff9x\ufffb\u206a\u2028\u2029"
    assert (
        visible(hidden)
        == "ok<U+E0041><U+E0042><U+200B><U+2060><U+FEFF><U+FFF9>x<U+FFFB><U+206A><U+2028><U+2029>"
    )


def test_lone_surrogates_become_visible_so_the_text_can_be_printed():
    shown = visible("bad \ud800 \udcff")
    assert shown == "bad <U+D800> <U+DCFF>"
    shown.encode("utf-8")  # would raise with a surrogate left in


def test_ordinary_text_is_unchanged():
    for text in (
        "plain",
        "ünïcödé ✓ — “quotes”",
        "emoji 👩‍💻 🏳️‍🌈",
        "עברית and العربية",
        "日本語",
        "[bold]markup[/]",
        "",
    ):
        assert visible(text) == text and visible(text, newlines=False) == text


def test_visible_is_idempotent():
    for text in [*ATTACKS, "a\r\nb", "\ud800", "\U000e0041"]:
        assert visible(visible(text)) == visible(text)


@pytest.mark.parametrize("newlines", [True, False])
def test_no_control_format_or_separator_character_survives(newlines):
    kept = {"\u00ad", "\u200c", "\u200d"} | (
        {"\n", "\t"} if newlines else set()
    )  # soft hyphen, ZWNJ, ZWJ
    bidi = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    every = "".join(
        chr(c)
        for c in [
            *range(0x3000),
            *range(0xD800, 0xE000),
            *range(0xFE00, 0x10000),
            *range(0xE0000, 0xE0080),
        ]
    )
    shown = visible(every, newlines=newlines)
    left = {
        c
        for c in shown
        if c not in kept and (unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") or c in bidi)
    }
    assert not left, sorted(f"U+{ord(c):04X}" for c in left)
    invisible = {
        c
        for c in shown
        if unicodedata.category(c) == "Cf"
        and c not in kept
        and not 0x600 <= ord(c) <= 0x8FF
        and not 0x110BD <= ord(c) <= 0x110CD
    }  # Arabic/Kaithi number signs
    assert not invisible, sorted(f"U+{ord(c):04X}" for c in invisible)


# --------------------------------------------------------------------------- JSON on a terminal

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from evaluation.text import json_visible  # noqa: E402

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(_JSON, st.booleans())
def test_json_made_safe_for_a_terminal_is_the_same_value(value, indent):
    import json

    text = json.dumps(value, ensure_ascii=False, indent=2 if indent else None)
    shown = json_visible(text)
    assert visible(shown) == shown  # nothing left for a terminal to act on
    assert json.loads(shown) == value


def test_json_escapes_bidi_c1_and_tag_characters():
    assert json_visible('["a\u202eb\x9b\U000e0041"]') == '["a\\u202eb\\u009b\\udb40\\udc41"]'
