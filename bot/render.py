"""Turning an item into card sections and full-text views, and a review card whole (no platform
formatting).

Item text comes from files and systems hilbot does not control: every piece of it goes through
:func:`evaluation.text.visible`, so no escape sequence, control or bidi character reaches a
reviewer's terminal (or chat) raw.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from evaluation import ItemData
from evaluation.scrub import scrub
from evaluation.text import visible

from .cards import Card, CardLayout, Reveal, Section, State

if TYPE_CHECKING:
    from evaluation import JudgeInfo, Rating
    from evaluation.config import Scale

SNIPPET_CHARS = 160
ANSWER_CHARS = 700
TOOL_LINES = 5


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


def has_more(item: ItemData) -> bool:
    """Whether the full view shows more than the card."""
    if is_change(item):
        return True  # both outputs whole
    long_answer = item.answer is not None and len(" ".join(item.answer.split())) > ANSWER_CHARS
    long_snippet = any(r.snippet and len(r.snippet) > SNIPPET_CHARS for r in item.results)
    return long_answer or long_snippet or bool(item.contexts) or bool(item.ground_truth)


def full_text(item: ItemData) -> str:
    """Everything the reviewer may see about an item (never the AI's verdict)."""
    if is_change(item):
        return _change_text(item)
    parts = [f'QUERY: "{visible(item.query.query)}"']
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


def is_change(item: ItemData) -> bool:
    """Whether the item is a change found by ``hilbot triage`` (it carries its diff)."""
    return isinstance(item.features.get("diff"), str)


def change_sections(
    item: ItemData, *, ai_first: bool = False
) -> list[tuple[str | None, list[str]]]:
    """A change's card: what it is, the triage's recommendation (only when shown before the
    decision), the diff."""
    f = item.features
    meta = [one_line(str(v)) for v in (f.get("path"), f.get("status"), item.query.intent) if v]
    sections: list[tuple[str | None, list[str]]] = [(None, ["  ·  ".join(meta)])] if meta else []
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


def item_sections(item: ItemData, *, ai_first: bool = False) -> list[tuple[str | None, list[str]]]:
    """The card body: context line, expected outcome, tool captures, results or response preview (a
    change: its diff)."""
    if is_change(item):
        return change_sections(item, ai_first=ai_first)
    sections: list[tuple[str | None, list[str]]] = []
    meta = [
        f"{k}: {one_line(v)}"
        for k, v in (("intent", item.query.intent), ("category", item.query.category))
        if v
    ]
    if meta:
        sections.append((None, ["  ·  ".join(meta)]))
    if item.query.expected and not item.results:
        sections.append(("Expected", [", ".join(map(one_line, item.query.expected))]))
    if item.tool_captures:
        sections.append(("Tool captures", tool_lines(item)))
    if item.results:
        sections.append(("Results returned", result_lines(item)))
    if item.answer is not None:
        sections.append(("Response", [_clip(item.answer, ANSWER_CHARS)]))
    if not item.results and item.answer is None:
        sections.append(("Response", ["(no output recorded)"]))
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


def guide_text(dimension: str, question: str | None, scale: "Scale") -> str:
    """The guidelines of a dimension: what it asks and what each option of its scale means."""
    lines = [f"{dimension}: {question or ''}".rstrip()]
    for option in scale.options:
        meaning = f" — {option.meaning}" if option.meaning else ""
        lines.append(f"  {option.key or ' '}  {option.label}{meaning}")
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
) -> Card:
    """An item's review card: ``[number/of]`` and its query, its sections, the reviewer's rating
    (``current``) and the buttons of ``state`` (default: from the rating).

    Blind: the AI's view is revealed (when ``reveal_ai``, ``[review] reveal_after_rating``) only
    once the item is rated and the questions after the rating are answered or passed.
    ``ai_first``: a change's triage recommendation is among its sections, before any rating.
    """
    state = state or (State.FOLLOW_UP if current is not None else State.RATING)
    asked = state in (State.CONFIDENCE, State.QUESTION, State.ANSWER) and not final
    title = f'[{number}/{of}] "{one_line(item.query.query)}"'
    sections = tuple(
        Section(t, tuple(lines), mono=t == "Diff" and is_change(item))
        for t, lines in item_sections(item, ai_first=ai_first)
    )
    show_ai = current is not None and reveal_ai and not asked  # blind till answered
    buttons = layout.rows(
        item.id,
        current,
        state,
        asking,
        final=final,
        tools=bool(item.tool_captures),
        change=is_change(item),
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
        has_more=has_more(item),
        has_tools=bool(item.tool_captures),
        prompt=None if final else layout.prompt(state, asking),
        answers=layout.answers(current),
        enter=None if final else layout.enter(item.id, state, asking),
    )
