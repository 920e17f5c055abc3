"""Cards and texts as Slack Block Kit: section blocks in mrkdwn, rows of buttons, modals, the App
Home.

Every text hilbot sends Slack — the notification text of a message, mrkdwn and plain_text objects
of every block, button labels, modal titles, the App Home, ephemeral answers, file titles — goes
through :func:`escape` (or :func:`fit`, which also cuts): ``&``, ``<`` and ``>`` become ``&amp;``,
``&lt;`` and ``&gt;`` as Slack documents, so user content (queries, snippets, answers, notes,
names) can neither mention anyone nor link anywhere, and control characters are made visible.
Everything stays within Slack's limits: 50 blocks per message, 3,000 characters per section
text, 150 per header, 75 per button label, 100 blocks and 24-character titles in a modal. A
card's body lines that do not fit are cut, and its "View full" button opens a modal with the
whole item.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from evaluation.scrub import scrub
from evaluation.text import visible

from ... import render
from ...cards import Card
from ...chat import Keyboard

Block = dict[str, Any]

MESSAGE_BLOCKS = 50
"""The most blocks Slack takes in one message."""
VIEW_BLOCKS = 100
"""The most blocks in a modal or the Home tab."""
SECTION = 3000
"""The longest section text."""
HEADER = 150
"""The longest header text."""
LABEL = 75
"""The longest button label."""
TITLE = 24
"""The longest modal title."""
TEXT = 3900
"""The longest plain message we send (Slack truncates display after about 4,000 characters)."""
EPHEMERAL = 2000
"""The longest ephemeral answer to a click."""
LINE = 600
"""The longest question, rating or verdict line a card shows."""
CUT = "_… (more under View full)_"
NOTE_VIEW = "hilbot_note"
"""The callback id of the note modal."""
FULL_VIEW = "hilbot_full"
"""The callback id of the "View full" modal."""
ACTION = "hilbot"
"""Every button's ``action_id`` starts with this (``hilbot:<n>``); the value is the checked
token."""
HOME_ACTION = "hilbot_home"
"""The App Home's start or resume buttons (``hilbot_home:<n>``)."""
NOTE_BLOCK, NOTE_INPUT = "note", "text"
"""Where the note's text sits in a submitted note modal's state."""


_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
"""Slack's escapes: the only characters it decodes, and the only ones it needs escaped."""


def escape(text: str) -> str:
    """User text for Slack: control characters made visible, ``&`` ``<`` ``>`` escaped."""
    return visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def fit(text: str, limit: int) -> str:
    """:func:`escape` d text cut to ``limit`` characters, escapes counted and none split (an
    ellipsis shows a cut). Scrubbed of secrets before it is cut: a cut through a secret would leave
    a part no scrubber recognises.
    """
    escaped = escape(text)
    if len(escaped) <= limit:
        return escaped
    text = scrub(text)
    pieces, size = [], 0
    for char in visible(text):
        piece = _ENTITIES.get(char, char)
        if size + len(piece) > limit - 1:
            break
        pieces.append(piece)
        size += len(piece)
    return "".join(pieces) + "…"


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": fit(text, limit) or " ", "emoji": True}


def _section(mrkdwn: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}


def _sections(lines: list[str]) -> list[Block]:
    """Escaped mrkdwn lines packed into as few sections as fit (a line longer than a section is
    split)."""
    pieces = [part for line in lines for part in _split(line, SECTION)]
    return [_section(text) for text in _packed(pieces, SECTION) if text.strip()]


def _split(line: str, limit: int) -> list[str]:
    """An escaped line in pieces of at most ``limit`` characters (scrubbed first; an escape may be
    split)."""
    if len(line) <= limit:
        return [line or " "]
    line = scrub(line)
    return [line[i : i + limit] for i in range(0, len(line), limit)]


def _body(card: Card) -> list[Block]:
    """The card's sections as section blocks: lines of mrkdwn packed together, each code block in
    sections of its own, preformatted."""
    blocks: list[Block] = []
    lines: list[str] = []
    for section in card.sections:
        if section.title:
            lines.append(f"*{escape(section.title)}:*")
        if section.code:
            blocks += _sections(lines) + _preformatted(section.lines)
            lines = []
            continue
        lines.extend(_mono(text) if section.mono else escape(text) for text in section.lines)
    return blocks + _sections(lines)


FENCE = "```"


def _preformatted(lines: tuple[str, ...]) -> list[Block]:
    """Code as mrkdwn preformatted blocks (````…````), line breaks and indentation kept, in as few
    sections as fit; a fence in the code is shown as ˋˋˋ, so it cannot end the block."""
    room = SECTION - 2 * len(FENCE)
    pieces = [piece for line in lines for piece in _split(escape(line.replace(FENCE, "ˋˋˋ")), room)]
    return [_section(f"{FENCE}{text}{FENCE}") for text in _packed(pieces, room)]


def _packed(pieces: list[str], limit: int) -> list[str]:
    """Lines joined by line breaks into as few texts of at most ``limit`` characters as hold
    them."""
    texts, current = [], ""
    for piece in pieces:
        candidate = f"{current}\n{piece}" if current else piece
        if current and len(candidate) > limit:
            texts.append(current)
            candidate = piece
        current = candidate
    return texts + ([current] if current else [])


def _mono(text: str) -> str:
    """A line in a monospaced font: inline code, which cannot hold a backtick (shown as ˋ), and not
    empty."""
    return f"`{escape(text.replace('`', 'ˋ')) or ' '}`"


def _footer(card: Card, final: bool) -> list[str]:
    if card.recorded is None and final:
        return ["_⏭ Skipped — click a rating to rate it after all._"]
    if card.recorded is None:  # the question, or (skipped) why
        return [f"*{fit(card.prompt or card.question or 'Your rating?', LINE)}*"]
    tags = f" · concerns: {', '.join(card.concerns)}" if card.concerns else ""
    answers = "".join(f" · {answer}" for answer in card.answers)
    lines = [f"*{fit(f'✓ Recorded: {card.recorded}{tags}{answers}', LINE)}*"]
    asked = [f"*{fit(card.prompt, LINE)}*"] if card.prompt else []  # how sure, a follow-up's ask
    return lines + [fit(line, LINE) for line in render.reveal_lines(card)] + asked


def buttons(keyboard: Keyboard, action: str = ACTION) -> list[Block]:
    """One actions block per row of choices; each button's value is its token."""
    blocks: list[Block] = []
    n = 0
    for row in keyboard:
        elements = []
        for choice in row[:25]:
            elements.append(
                {
                    "type": "button",
                    "text": _plain(choice.label, LABEL),
                    "value": choice.data,
                    "action_id": f"{action}:{n}",
                }
            )
            n += 1
        if elements:
            blocks.append(
                {"type": "actions", "block_id": f"row{len(blocks)}", "elements": elements}
            )
    return blocks


def card_blocks(card: Card, keyboard: Keyboard, *, final: bool = False) -> tuple[str, list[Block]]:
    """The card as Block Kit within the limits, and its notification text."""
    head = [{"type": "header", "text": _plain(card.title, HEADER)}]
    if card.progress:  # the run's progress, under the title
        head.append(_section(f"_{fit(card.progress, LINE - 2)}_"))
    foot = _sections(_footer(card, final))
    rows = buttons(keyboard)
    room = MESSAGE_BLOCKS - len(head) - len(foot) - len(rows) - 2  # a divider, and the cut notice
    body = _body(card)
    if len(body) > room:
        body = body[: max(room, 0)] + [_section(CUT)]
    blocks = head + body + [{"type": "divider"}] + foot + rows
    return fit(card.title, 300), blocks


def text_pieces(text: str, *, code: bool = False) -> list[str]:
    """Plain text, escaped, split on line breaks into messages that fit (monospaced when
    ``code``)."""
    limit = TEXT - 8
    pieces: list[str] = []
    current: list[str] = []
    size = 0  # the escaped length of the piece being filled (escaping works character by character)
    for line in scrub(text).splitlines() or [""]:  # scrubbed before it is split
        parts = textwrap.wrap(line, limit, replace_whitespace=False, drop_whitespace=False)
        for part in parts or [""]:
            part = escape(part)
            if current and size + 1 + len(part) > limit:
                pieces.append("\n".join(current))
                current = []
            size = size + 1 + len(part) if current else len(part)
            current.append(part)
    pieces.append("\n".join(current))
    shown = [p for p in pieces if p.strip()] or [" "]
    return [f"```{p}```" for p in shown] if code else shown


def note_modal(about: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """The note modal: what it is about, one multi-line input; ``metadata`` comes back on
    submission."""
    return {
        "type": "modal",
        "callback_id": NOTE_VIEW,
        "title": _plain("Add a note", TITLE),
        "submit": _plain("Save note", TITLE),
        "close": _plain("Cancel", TITLE),
        "private_metadata": json.dumps(metadata),
        "blocks": [
            _section(f"✍️ Note on “{fit(about, 200)}”"),
            {
                "type": "input",
                "block_id": NOTE_BLOCK,
                "label": _plain("Your note", 2000),
                "element": {
                    "type": "plain_text_input",
                    "action_id": NOTE_INPUT,
                    "multiline": True,
                    "max_length": 3000,
                },
            },
        ],
    }


def full_modal(title: str, text: str) -> dict[str, Any]:
    """A read-only modal with the whole text (cut, and saying so, past 100 sections)."""
    blocks = _sections([escape(line) for line in text.splitlines()])
    if len(blocks) > VIEW_BLOCKS:
        left = sum(len(b["text"]["text"]) for b in blocks[VIEW_BLOCKS - 1 :])
        blocks = blocks[: VIEW_BLOCKS - 1] + [_section(f"_… {left:,} more characters not shown_")]
    return {
        "type": "modal",
        "callback_id": FULL_VIEW,
        "title": _plain(title, TITLE),
        "close": _plain("Close", TITLE),
        "blocks": blocks or [_section(" ")],
    }


def home_view(rows: list[tuple[str, str, str]], intro: str) -> dict[str, Any]:
    """The App Home: ``intro``, then each run's progress line with a Start or Resume button (value
    ``run|dimension``)."""
    blocks: list[Block] = [
        {"type": "header", "text": _plain("Your reviews", HEADER)},
        _section(escape(intro)),
    ]
    for n, (line, label, value) in enumerate(rows[: (VIEW_BLOCKS - 2)]):
        blocks.append(
            {
                **_section(fit(line, SECTION)),
                "accessory": {
                    "type": "button",
                    "text": _plain(label, LABEL),
                    "value": value,
                    "action_id": f"{HOME_ACTION}:{n}",
                },
            }
        )
    return {"type": "home", "blocks": blocks}


def note_text(state: dict[str, Any]) -> str:
    """The note typed into a submitted note modal (``view.state.values``)."""
    value = ((state.get("values") or {}).get(NOTE_BLOCK) or {}).get(NOTE_INPUT) or {}
    return str(value.get("value") or "")


__all__ = [
    "ACTION",
    "FULL_VIEW",
    "HOME_ACTION",
    "NOTE_VIEW",
    "buttons",
    "card_blocks",
    "escape",
    "fit",
    "full_modal",
    "home_view",
    "note_modal",
    "note_text",
    "text_pieces",
]
