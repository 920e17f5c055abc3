"""Cards and texts as Telegram messages: HTML within 4,096 characters (as Telegram counts them).

User content (queries, snippets, answers, notes, names) is always escaped for HTML by
:func:`escape`: every text sent in HTML parse mode is built from its output and hilbot's own tags,
so user content can neither format nor link. Telegram counts a message's length after parsing
entities, in UTF-16 code units; the text is built from plain lines so that length is known
exactly. Body lines that do not fit are cut, and the card's "View full" button shows everything.
A text is scrubbed of secrets before it is cut or split (a cut through a secret would leave a part
no scrubber recognises); the HTTP client scrubs every call again on its way out.
"""

from __future__ import annotations

import textwrap
from html import escape as html_escape

from evaluation.scrub import scrub
from evaluation.text import visible

from ... import render
from ...cards import Card

LIMIT = 4096
"""Telegram's message length limit (after entity parsing)."""
ANSWER_LIMIT = 200
"""answerCallbackQuery's text limit."""
CUT = "… (more under View full)"
LINE_UNITS = 600
"""The longest title, question or verdict line a card shows (the rest of a card is cut to what is
left)."""


def units(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def escape(text: str) -> str:
    """User text for HTML parse mode: control and bidi characters made visible, ``&<>`` escaped."""
    return html_escape(visible(text), quote=False)


def _line(text: str, style: str | None = None) -> tuple[str, str]:
    text = visible(text)  # bidi overrides and control characters from item text, made visible
    html = escape(text)
    return text, f"<{style}>{html}</{style}>" if style else html


def _body(card: Card) -> list[tuple[str, str, str]]:
    """The card's body lines as (plain, HTML, what closes the HTML if the card is cut after it): a
    code section is one ``<pre>`` block."""
    lines: list[tuple[str, str, str]] = []
    for section in card.sections:
        if section.title:
            lines.append((*_line(f"{section.title}:", "b"), ""))
        if section.code:
            lines.extend(_pre(section.lines, section.language))
            continue
        lines.extend((*_line(text, "code" if section.mono else None), "") for text in section.lines)
    return lines


def _pre(lines: tuple[str, ...], language: str | None) -> list[tuple[str, str, str]]:
    """A code block as ``<pre>`` (``<pre><code class="language-…">`` when its language is known),
    one entry a line: the first opens the block, the last closes it, any other says how to close
    it if the card is cut there."""
    opening, closing = "<pre>", "</pre>"
    if language:
        opening += f'<code class="language-{html_escape(language)}">'
        closing = "</code>" + closing
    entries = []
    for n, text in enumerate(lines):
        plain, html = _line(text)
        last = n == len(lines) - 1
        html = (opening if n == 0 else "") + html + (closing if last else "")
        entries.append((plain, html, "" if last else closing))
    return entries


def _footer(card: Card, final: bool) -> list[tuple[str, str]]:
    if card.recorded is None and final:
        return [_line("⏭ Skipped — tap a rating to rate it after all.", "i")]
    if card.recorded is None:  # the question, or (skipped) why
        return [_line(clip(card.prompt or card.question or "Your rating?", LINE_UNITS), "b")]
    tags = f" · concerns: {', '.join(card.concerns)}" if card.concerns else ""
    answers = "".join(f" · {answer}" for answer in card.answers)
    lines = [_line(clip(f"✓ Recorded: {card.recorded}{tags}{answers}", LINE_UNITS), "b")]
    # how sure, a follow-up's question
    asked = [_line(clip(card.prompt, LINE_UNITS), "b")] if card.prompt else []
    return lines + reveal_lines(card) + asked


def reveal_lines(card: Card) -> list[tuple[str, str]]:
    """The AI verdict, shown only once the reviewer's rating is stored (the rationale in
    italics)."""
    plain = render.reveal_lines(card)
    return [_line(clip(line, LINE_UNITS), "i" if n else None) for n, line in enumerate(plain)]


def card_html(card: Card, *, final: bool = False) -> tuple[str, bool]:
    """The card as HTML within the limit, and whether body lines were cut."""
    head, foot = [_line(clip(card.title, LINE_UNITS), "b")], _footer(card, final)
    if card.progress:  # the run's progress, under the title
        head.append(_line(clip(card.progress, LINE_UNITS), "i"))
    budget = LIMIT - sum(units(p) + 1 for p, _ in head + foot) - units(CUT) - 1
    body: list[tuple[str, str]] = []
    cut, unclosed = False, ""
    for plain, html, closing in _body(card):
        if units(plain) + 1 > budget:
            cut = True
            break
        budget -= units(plain) + 1
        body.append((plain, html))
        unclosed = closing
    if cut:
        if unclosed:  # cut inside a code block: it is closed where it stops
            body[-1] = (body[-1][0], body[-1][1] + unclosed)
        body.append(_line(CUT, "i"))
    return "\n".join(html for _, html in head + body + [("", "")] + foot), cut


def chunks(text: str, limit: int = LIMIT - 100) -> list[str]:
    """Plain text split on line breaks into escaped pieces that each fit in one message."""
    pieces, current = [], ""
    for line in visible(scrub(text)).splitlines():  # what is split is what Telegram counts
        for part in _split_long(line, limit):
            candidate = f"{current}\n{part}" if current else part
            if current and units(candidate) > limit:
                pieces.append(current)
                candidate = part
            current = candidate
    pieces.append(current)
    return [escape(p) for p in pieces if p.strip()]


def _split_long(line: str, limit: int) -> list[str]:
    """A line cut at spaces into pieces of at most ``limit`` units (nothing dropped)."""
    if units(line) <= limit:
        return [line]
    # outside the BMP a character is two units
    width = limit if units(line) == len(line) else limit // 2
    return textwrap.wrap(
        line, width, replace_whitespace=False, drop_whitespace=False, break_on_hyphens=False
    )


def clip(text: str, limit: int = ANSWER_LIMIT) -> str:
    """Text cut to a limit in UTF-16 units (callback answers, alerts, card lines), scrubbed before
    it is cut, control characters made visible."""
    text = visible(text)
    if units(text) <= limit:
        return text
    text = visible(scrub(text))
    if units(text) <= limit:
        return text
    text = text[: limit - 1]  # a character is at least one unit
    while units(text) > limit - 1:
        text = text[:-1]
    return text + "…"
