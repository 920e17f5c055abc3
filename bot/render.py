"""Turning an item into card sections and full-text views, and a review card whole (no platform
formatting).

Item text comes from files and systems hilbot does not control: every piece of it goes through
:func:`evaluation.text.visible`, so no escape sequence, control or bidi character reaches a
reviewer's terminal (or chat) raw.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Sequence

from evaluation import ItemData
from evaluation.imports import CONTEXT_FIELDS
from evaluation.scrub import scrub
from evaluation.text import visible

from .cards import ACTION_KEYS, Card, CardLayout, Reveal, Section, State

if TYPE_CHECKING:
    from evaluation import JudgeInfo, Rating
    from evaluation.config import Scale

SNIPPET_CHARS = 160
ANSWER_CHARS = 1500
"""Characters of a response a card shows, its line breaks kept; the rest is under View full."""
ANSWER_LINES = 30
"""Lines of a response a card shows."""
CONTEXT_CHARS = 300
"""The longest context value a card shows (a plugin's description); the full view has it whole."""
SHORT_CONTEXT = 60
"""Context values up to this long share one line (``plugin: x  ·  component: y``); a longer one,
or a description, has a line of its own."""
USEFUL_CUT = 60
"""A response's line that does not fit is shown cut when at least this much of it fits."""
TOOL_LINES = 5
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
"""A Markdown code fence, with the language its info string names."""
_LANGUAGE = re.compile(r"^[A-Za-z0-9_+#.-]{1,30}$")


def one_line(text: str) -> str:
    """``text`` on one line: whitespace runs (line breaks too) folded to one space, controls made
    visible."""
    return visible(" ".join(text.split()), newlines=False)


def _clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters; secrets are scrubbed before the cut, which could
    leave a piece of one no scrubber recognises."""
    text = one_line(scrub(text))
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _shown(text: str, full: bool, limit: int) -> str:
    """The whole text (line breaks kept) in a full view, else clipped to one line."""
    return visible(text) if full else _clip(text, limit)


def result_lines(item: ItemData, *, full: bool = False) -> list[str]:
    """The ranked result list: ``→ 1. [0.82] /path`` then the quoted snippet."""
    lines = []
    for position, result in enumerate(item.results, 1):
        score = f"[{result.score:.2f}] " if result.score is not None else ""
        where = one_line(result.path or result.title or "(untitled)")
        lines.append(f"→ {result.rank or position}. {score}{where}")
        if result.title and result.path:
            lines.append(f"     {one_line(result.title)}")
        if result.snippet:
            lines.append(f'     "{_shown(result.snippet, full, SNIPPET_CHARS)}"')
    return lines


def tool_lines(item: ItemData, *, full: bool = False) -> list[str]:
    """Tool captures as ``- Tool: input`` lines (all of them, with outputs, when ``full``)."""
    lines = []
    for capture in item.tool_captures if full else item.tool_captures[:TOOL_LINES]:
        name = one_line(_as_text(capture.get("tool") or capture.get("name") or "tool"))
        lines.append(
            f"- {name}: {_shown(_as_text(capture.get('input', capture.get('args', ''))), full, 100)}"
        )
        if full and capture.get("output") is not None:
            lines.append(f"    → {visible(_as_text(capture['output']))}")
    if not full and len(item.tool_captures) > TOOL_LINES:
        lines.append(f"… {len(item.tool_captures) - TOOL_LINES} more")
    return lines


def _as_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def has_more(item: ItemData, context: Sequence[str] | None = None) -> bool:
    """Whether the full view shows more than the card."""
    if is_change(item):
        return True  # both outputs whole
    long_answer = item.answer is not None and _preview(item.answer)[1] is not None
    long_snippet = any(r.snippet and len(r.snippet) > SNIPPET_CHARS for r in item.results)
    long_context = any(len(value) > CONTEXT_CHARS for _, value in _context(item, context))
    return (
        long_answer
        or long_snippet
        or long_context
        or bool(item.contexts)
        or bool(item.ground_truth)
    )


def _context(item: ItemData, fields: Sequence[str] | None) -> list[tuple[str, str]]:
    """The item's context as (field, value): its features named in ``fields`` (default: the ones an
    import recognises, :data:`evaluation.imports.CONTEXT_FIELDS`) that hold a plain value."""
    shown = []
    for name in CONTEXT_FIELDS if fields is None else fields:
        value = item.features.get(name)
        if value is not None and value != "" and not isinstance(value, (dict, list)):
            shown.append((name, str(value)))
    return shown


def context_lines(item: ItemData, fields: Sequence[str] | None = None) -> list[str]:
    """The item's context as a card shows it: short values on one line (``plugin: x  ·  component:
    y``), then each longer one or description on a line of its own, clipped."""
    short: list[str] = []
    long: list[str] = []
    for name, value in _context(item, fields):
        text = f"{one_line(name.replace('_', ' '))}: {_clip(value, CONTEXT_CHARS)}"
        alone = len(value) > SHORT_CONTEXT or name.endswith("description")
        (long if alone else short).append(text)
    return (["  ·  ".join(short)] if short else []) + long


def _preview(text: str) -> tuple[list[str], str | None]:
    """The lines of a response a card shows (scrubbed before any cut, made visible, at most
    :data:`ANSWER_LINES` lines and :data:`ANSWER_CHARS` characters), and the line that says what
    the full view has beyond them (None: nothing)."""
    lines = [line.rstrip() for line in visible(scrub(text)).strip("\n").splitlines()]
    shown: list[str] = []
    room = ANSWER_CHARS
    for n, line in enumerate(lines):
        if n < ANSWER_LINES and len(line) <= room:
            shown.append(line)
            room -= len(line) + 1
            continue
        cut = n < ANSWER_LINES and (room > USEFUL_CUT or not shown)
        if cut:
            shown.append(line[: max(room - 1, 1)].rstrip() + "…")
        left = len(lines) - n - cut
        plural = "s" if left != 1 else ""
        more = f"{left} more line{plural}" if left else "the rest"
        return shown, f"… {more} under View full"
    return shown, None


def _blocks(lines: list[str]) -> list[tuple[str | None, list[str]]]:
    """Lines as prose (``None``) and fenced code blocks (their language, ``""`` when the fence
    names none); an unclosed fence runs to the end. Blank lines around prose are dropped."""
    blocks: list[tuple[str | None, list[str]]] = []
    fence, language = "", None
    current: list[str] = []
    for line in lines:
        opening = None if fence else _FENCE.match(line)
        if opening:
            blocks.append((None, current))
            fence, current = opening[1], []
            language = opening[2] if _LANGUAGE.match(opening[2]) else ""
        elif fence and line.strip().startswith(fence) and not line.strip().strip(fence[0]):
            blocks.append((language, current))
            fence, language, current = "", None, []
        else:
            current.append(line if fence else line.expandtabs(4))
    blocks.append((language, current))
    return [
        (kind, block if kind is not None else _trimmed(block))
        for kind, block in blocks
        if _trimmed(block)
    ]


def _trimmed(lines: list[str]) -> list[str]:
    """``lines`` without the blank lines at either end."""
    start = next((n for n, line in enumerate(lines) if line.strip()), len(lines))
    end = next((n for n in range(len(lines), start, -1) if lines[n - 1].strip()), start)
    return lines[start:end]


def _multiline(text: str) -> bool:
    return "\n" in text.strip()


def query_line(item: ItemData) -> str:
    """The query as a card's title shows it: on one line; a query of several lines by its first
    (the card shows it whole as its "Query" section)."""
    query = item.query.query
    if is_change(item) or not _multiline(query):
        return one_line(query)
    return one_line(query.strip().splitlines()[0]) + " …"


def response_sections(answer: str, title: str = "Response") -> list[Section]:
    """A response as a card shows it: its line breaks kept, each fenced code block a code section
    (preformatted, as it is), cut to :data:`ANSWER_LINES` lines and :data:`ANSWER_CHARS`
    characters with a line saying what more the full view has."""
    lines, more = _preview(answer)
    sections: list[Section] = []
    for language, block in _blocks(lines):
        heading = None if sections else title
        code = language is not None
        sections.append(Section(heading, tuple(block), code=code, language=language or None))
    if not sections:
        sections.append(Section(title, ("(empty)",)))
    if more:
        sections.append(Section(None, (more,)))
    return sections


def full_text(item: ItemData, context: Sequence[str] | None = None) -> str:
    """Everything the reviewer may see about an item (never the AI's verdict); ``context``: the
    features shown as its context (default: the ones an import recognises)."""
    if is_change(item):
        return _change_text(item)
    parts = [f'QUERY: "{visible(item.query.query)}"']
    shown = _context(item, context)
    if shown:
        parts.append(
            "CONTEXT:\n"
            + "\n".join(f"{name.replace('_', ' ')}: {visible(value)}" for name, value in shown)
        )
    if item.query.intent:
        parts.append(f"INTENT: {visible(item.query.intent)}")
    if item.query.expected:
        parts.append("EXPECTED: " + ", ".join(map(one_line, item.query.expected)))
    if item.results:
        parts.append("RESULTS:\n" + "\n".join(result_lines(item, full=True)))
    if item.answer is not None:
        parts.append("RESPONSE:\n" + visible(item.answer))
    if item.contexts:
        parts.append(
            "RETRIEVED CONTEXTS:\n"
            + "\n".join(f"[{n}] {visible(c)}" for n, c in enumerate(item.contexts, 1))
        )
    if item.ground_truth:
        parts.append("REFERENCE:\n" + "\n".join(f"- {visible(g)}" for g in item.ground_truth))
    return "\n\n".join(parts)


def _change_text(item: ItemData) -> str:
    """A change whole: its name and purpose, the diff, both outputs."""
    parts = [f"CHANGE: {visible(item.query.query)}"]
    if item.query.intent:
        parts.append(f"PURPOSE: {visible(item.query.intent)}")
    parts.append("DIFF:\n" + visible(item.features["diff"]))
    for title, text in (("EXPECTED", item.query.expected_answer), ("ACTUAL", item.answer)):
        parts.append(f"{title}:\n" + (visible(text) if text is not None else "(none)"))
    return "\n\n".join(parts)


def tools_text(item: ItemData) -> str:
    """All tool captures with their inputs and outputs."""
    return (
        "TOOL CAPTURES:\n" + "\n".join(tool_lines(item, full=True))
        if item.tool_captures
        else "No tool captures."
    )


DIFF_LINES = 40
"""Diff lines a change's card shows; the rest are in the full view."""
PURPOSE_CHARS = 300
"""Characters of a change's purpose its card shows; the full view has it whole."""


def is_change(item: ItemData) -> bool:
    """Whether the item is a change found by ``hilbot triage`` (it carries its diff)."""
    return isinstance(item.features.get("diff"), str)


def change_sections(
    item: ItemData, *, ai_first: bool = False
) -> list[tuple[str | None, list[str]]]:
    """A change's card: what it is, the triage's recommendation (only when shown before the
    decision), the diff."""
    f = item.features
    meta = [one_line(str(v)) for v in (f.get("path"), f.get("status")) if v]
    head = ["  ·  ".join(meta)] if meta else []
    if item.query.intent:  # what the test is for (a booktest test's docstrings)
        head.append(f"purpose: {_clip(item.query.intent, PURPOSE_CHARS)}")
    sections: list[tuple[str | None, list[str]]] = [(None, head)] if head else []
    if ai_first:
        evaluation = item.evaluation
        confidence = (
            f" (confidence {_number(evaluation.confidence)})"
            if evaluation.confidence is not None
            else ""
        )
        lines = [
            f"{evaluation.verdict or 'UNSURE'}{confidence}: {one_line(str(f.get('summary') or ''))}"
        ]
        lines += [f"- {_clip(str(issue), SNIPPET_CHARS)}" for issue in (f.get("issues") or [])[:3]]
        sections.append(("AI recommends", lines))
    diff = visible(f["diff"]).splitlines() or ["(no difference in the text)"]
    more = (
        [f"… {len(diff) - DIFF_LINES} more lines in the full view"]
        if len(diff) > DIFF_LINES
        else []
    )
    sections.append(("Diff", diff[:DIFF_LINES] + more))
    return sections


def item_sections(
    item: ItemData, *, ai_first: bool = False, context: Sequence[str] | None = None
) -> list[tuple[str | None, list[str]]]:
    """:func:`card_sections` as (title, lines) pairs."""
    return [
        (s.title, list(s.lines)) for s in card_sections(item, ai_first=ai_first, context=context)
    ]


def card_sections(
    item: ItemData, *, ai_first: bool = False, context: Sequence[str] | None = None
) -> list[Section]:
    """The card body: the item's context (``context``: the features to show, default the ones an
    import recognises) and its intent and category, the expected outcome, tool captures, results
    or the response (a change: its diff)."""
    if is_change(item):
        return [
            Section(t, tuple(lines), mono=t == "Diff")
            for t, lines in change_sections(item, ai_first=ai_first)
        ]
    sections: list[Section] = []
    meta = [
        f"{k}: {one_line(v)}"
        for k, v in (("intent", item.query.intent), ("category", item.query.category))
        if v
    ]
    head = context_lines(item, context) + (["  ·  ".join(meta)] if meta else [])
    if head:
        sections.append(Section(None, tuple(head)))
    if _multiline(item.query.query):  # a prompt with its own code or layout: whole, as written
        sections += response_sections(item.query.query, "Query")
    if item.query.expected and not item.results:
        sections.append(Section("Expected", (", ".join(map(one_line, item.query.expected)),)))
    if item.tool_captures:
        sections.append(Section("Tool captures", tuple(tool_lines(item))))
    if item.results:
        sections.append(Section("Results returned", tuple(result_lines(item))))
    if item.answer is not None:
        sections += response_sections(item.answer)
    if not item.results and item.answer is None:
        sections.append(Section("Response", ("(no output recorded)",)))
    return sections


RATIONALE_CHARS = 500
"""How much of the judge's rationale a chat card reveals."""


def reveal_lines(card: "Card") -> list[str]:
    """The AI verdict (then its rationale, quoted), shown only once the reviewer's rating is
    stored."""
    if card.reveal is None:
        return []
    r = card.reveal
    scores = " ".join(f"{k}={_number(v)}" for k, v in r.scores.items())
    conf = f" (confidence {_number(r.confidence)})" if r.confidence is not None else ""
    lines = [f"🤖 {r.label}: {r.verdict or '–'} {scores}{conf}".rstrip()]
    if r.rationale:
        rationale = (
            r.rationale
            if len(r.rationale) <= RATIONALE_CHARS
            else r.rationale[: RATIONALE_CHARS - 1] + "…"
        )
        lines.append(f"“{rationale}”")
    return lines


def _number(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def guide_text(
    dimension: str,
    question: str | None,
    scale: "Scale",
    *,
    keys: "dict[str, str | None] | None" = None,
    skip: bool = False,
    confidence: bool = False,
) -> str:
    """The guidelines of a dimension: what it asks, what each option of its scale means (after the
    key that picks it, ``keys`` by option value: default the configured ones), then, for a
    reviewer, when to skip (``skip``) and whether how sure they are is asked next
    (``confidence``)."""
    lines = [f"{dimension}: {question or ''}".rstrip()]
    for option in scale.options:
        meaning = f" — {option.meaning}" if option.meaning else ""
        key = keys.get(option.value) if keys is not None else option.key
        lines.append(f"  {key or ' '}  {option.label}{meaning}")
    if skip and scale.skip_when:
        lines.append(f"  {ACTION_KEYS['skip']}  Skip — {scale.skip_when}")
    if confidence:
        lines.append("  Then: how sure are you? High, medium or low; you may skip it.")
    return "\n".join(lines)


def reveal(item: ItemData, judge: "JudgeInfo") -> Reveal:
    """The AI's view of ``item``, labelled from the kind of the judge its run header records."""
    from evaluation.output import who_judged

    evaluation = item.evaluation
    return Reveal(
        evaluation.judge,
        evaluation.verdict,
        evaluation.confidence,
        dict(evaluation.scores),
        evaluation.rationale,
        who_judged(item, judge),
    )


def review_card(
    item: ItemData,
    current: "Rating | None",
    layout: CardLayout,
    *,
    run_id: str,
    dimension: str,
    question: str | None,
    number: int,
    of: int,
    judge: "JudgeInfo",
    ai_first: bool = False,
    reveal_ai: bool = True,
    final: bool = False,
    state: State | None = None,
    asking: str | None = None,
    context: Sequence[str] | None = None,
    undo: str | None = None,
    progress: str | None = None,
) -> Card:
    """An item's review card: ``[number/of]`` (the item's place in the run's review order) and its
    query, the run's ``progress``, its sections, the reviewer's rating (``current``) and the
    buttons of ``state`` (default: from the rating).

    Blind: the AI's view is revealed (when ``reveal_ai``, ``[review] reveal_after_rating``) only
    once the item is rated and the questions after the rating are answered or passed.
    ``ai_first``: a change's triage recommendation is among its sections, before any rating.
    ``context``: the item features shown as its context (default: the ones an import recognises).
    ``undo``: the item skipped just before, whose skip the card offers to take back (the terminal).
    """
    state = state or (State.FOLLOW_UP if current is not None else State.RATING)
    asked = state in (State.CONFIDENCE, State.QUESTION, State.ANSWER) and not final
    title = f'[{number}/{of}] "{query_line(item)}"'
    sections = tuple(card_sections(item, ai_first=ai_first, context=context))
    show_ai = current is not None and reveal_ai and not asked  # blind till answered
    buttons = layout.rows(
        item.id,
        current,
        state,
        asking,
        final=final,
        tools=bool(item.tool_captures),
        change=is_change(item),
        undo=undo,
    )
    return Card(
        run_id=run_id,
        item_id=item.id,
        dimension=dimension,
        title=title,
        sections=sections,
        question=question,
        buttons=buttons,
        recorded=current.judgment if current else None,
        concerns=tuple(current.concerns) if current else (),
        reveal=reveal(item, judge) if show_ai else None,
        has_more=has_more(item, context),
        has_tools=bool(item.tool_captures),
        prompt=None if final else layout.prompt(state, asking),
        answers=layout.answers(current),
        enter=None if final else layout.enter(item.id, state, asking),
        progress=progress,
    )
