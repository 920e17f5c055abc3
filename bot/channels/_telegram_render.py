"""Cards as Telegram messages: HTML text within 4,096 characters, and inline keyboards.

User content (queries, snippets, answers, notes) is always escaped for HTML. Telegram counts
a message's length after parsing entities, in UTF-16 code units; the text is built from plain
lines so that length is known exactly. Body lines that do not fit are cut, and the card's
"View full" button shows everything.
"""

from __future__ import annotations

import textwrap
from html import escape

from evaluation.output import judge_label
from evaluation.text import visible

from ..cards import Action, Button, Card

LIMIT = 4096
"""Telegram's message length limit (after entity parsing)."""
ANSWER_LIMIT = 200
"""answerCallbackQuery's text limit."""
RATIONALE_CHARS = 500
ROW = 4
"""Scale buttons per keyboard row."""
TAG_ROW = 2
"""Concern-tag buttons per row (tag names are long)."""
CHAT_LABELS = {"next": "✓ Done"}
"""Engine labels that read differently in a chat (the next card is already there)."""
CUT = "… (more under View full)"


def units(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def _line(text: str, style: str | None = None) -> tuple[str, str]:
    text = visible(text)  # bidi overrides and control characters from item text, made visible
    html = escape(text, quote=False)
    return text, f"<{style}>{html}</{style}>" if style else html


def _fmt(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _body(card: Card) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    for section in card.sections:
        if section.title:
            lines.append(_line(f"{section.title}:", "b"))
        lines.extend(_line(text) for text in section.lines)
    return lines


def _footer(card: Card, final: bool) -> list[tuple[str, str]]:
    if card.recorded is None and final:
        return [_line("⏭ Skipped — tap a rating to rate it after all.", "i")]
    if card.recorded is None:
        return [_line(card.question or "Your rating?", "b")]
    tags = f" · concerns: {', '.join(card.concerns)}" if card.concerns else ""
    lines = [_line(f"✓ Recorded: {card.recorded}{tags}", "b")]
    return lines + reveal_lines(card)


def reveal_lines(card: Card) -> list[tuple[str, str]]:
    """The AI verdict, shown only once the reviewer's rating is stored."""
    if card.reveal is None:
        return []
    r = card.reveal
    scores = " ".join(f"{k}={_fmt(v)}" for k, v in r.scores.items())
    conf = f" (confidence {_fmt(r.confidence)})" if r.confidence is not None else ""
    lines = [_line(f"🤖 {judge_label(r.judge)}: {r.verdict or '–'} {scores}{conf}".rstrip())]
    if r.rationale:
        rationale = r.rationale if len(r.rationale) <= RATIONALE_CHARS else r.rationale[: RATIONALE_CHARS - 1] + "…"
        lines.append(_line(f"“{rationale}”", "i"))
    return lines


def card_html(card: Card, *, final: bool = False) -> tuple[str, bool]:
    """The card as HTML within the limit, and whether body lines were cut."""
    head, foot = [_line(card.title, "b")], _footer(card, final)
    budget = LIMIT - sum(units(p) + 1 for p, _ in head + foot) - units(CUT) - 1
    body, cut = [], False
    for plain, html in _body(card):
        if units(plain) + 1 > budget:
            cut = True
            break
        budget -= units(plain) + 1
        body.append((plain, html))
    if cut:
        body.append(_line(CUT, "i"))
    return "\n".join(html for _, html in head + body + [("", "")] + foot), cut


def keyboard_rows(card: Card, *, group: bool = False) -> list[list[Button]]:
    """The card's buttons in phone-sized rows (Quit has no place in a chat)."""
    rows: list[list[Button]] = []
    for row in card.buttons:
        buttons = [_relabel(b) for b in row if b.action.kind != "quit"]
        if group:
            buttons = [b for b in buttons if b.action.kind not in ("toggle", "next")]
        size = TAG_ROW if buttons and buttons[0].action.kind == "toggle" else ROW
        rows.extend(buttons[i:i + size] for i in range(0, len(buttons), size))
    return [row for row in rows if row]


def _relabel(button: Button) -> Button:
    label = CHAT_LABELS.get(button.action.kind, button.label)
    return Button(label, button.action, button.key)


def chunks(text: str, limit: int = LIMIT - 100) -> list[str]:
    """Plain text split on line breaks into escaped pieces that each fit in one message."""
    pieces, current = [], ""
    for line in text.splitlines():
        for part in _split_long(line, limit):
            candidate = f"{current}\n{part}" if current else part
            if current and units(candidate) > limit:
                pieces.append(current)
                candidate = part
            current = candidate
    pieces.append(current)
    return [escape(p, quote=False) for p in pieces if p.strip()]


def _split_long(line: str, limit: int) -> list[str]:
    """A line cut at spaces into pieces of at most ``limit`` units (nothing dropped)."""
    if units(line) <= limit:
        return [line]
    width = limit if units(line) == len(line) else limit // 2  # outside the BMP a character is two units
    return textwrap.wrap(line, width, replace_whitespace=False, drop_whitespace=False, break_on_hyphens=False)


def clip(text: str, limit: int = ANSWER_LIMIT) -> str:
    """Text cut to a limit in UTF-16 units (callback answers and alerts), control characters made visible."""
    text = visible(text)
    if units(text) <= limit:
        return text
    while units(text) > limit - 1:
        text = text[:-1]
    return text + "…"


def action_label(action: Action) -> str:
    """What a tap did, for the callback answer."""
    return {"rate": f"Recorded: {action.value}", "skip": "Skipped", "next": "Done",
            "note": "Reply with your note", "view_full": "Full view below", "view_tools": "Tool captures below"}.get(action.kind, "")
