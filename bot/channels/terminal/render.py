"""What the terminal prints: cards, reveals and summaries with rich.

Everything printed goes through :func:`printable`: control characters made visible
(:func:`evaluation.text.visible`), and a rich ``Text``, so item text is never parsed as markup.
"""

from __future__ import annotations

import textwrap

from rich.console import Console
from rich.text import Text

from evaluation import ReviewSummary
from evaluation.output import signed
from evaluation.text import visible

from ...cards import Button, Card, State
from ...ending import Closing
from ...progress import item_noun, run_progress
from ...review import ReviewSession
from .keys import ALIASES

CODE_INDENT = "      "
"""A code block's lines, indented past the card's text."""


def printable(text: str, style: str = "", *, newlines: bool = False) -> Text:
    """What the terminal prints: ``text`` with control characters made visible, as rich text (never
    markup)."""
    return Text(visible(text, newlines=newlines), style=style)


def _diff_style(line: str) -> str:
    """A diff line's colour: added green, removed red, hunk headers cyan."""
    if line.startswith(("+++", "---")):
        return "bold"
    return {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "")


def button_text(button: Button) -> str:
    alias = next((k for k, kind in ALIASES.items() if kind == button.action.kind), None)
    if alias and button.key:  # [R] AI review: the key to remember (its own key works too)
        return f"[{alias}] {button.label}"
    if button.key and button.label.lower().startswith(button.key):
        return f"[{button.key}]{button.label[1:]}"
    return f"[{button.key}] {button.label}" if button.key else button.label


def _fmt_score(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


class TerminalView:
    """Prints cards, reveals and summaries with rich (user text is never parsed as markup)."""

    def __init__(self, console: Console):
        self.console = console

    def header(self, session: ReviewSession) -> None:
        run, overall = session.run, session.run.overall
        score = f", overall={overall:.2f}" if overall is not None else ""
        size = f"{len(run.items)} {item_noun(run.header.kind)}"
        title = f"Reviewing run: {run.run_id} ({size}{score})"
        self.console.print(printable(title, "bold"))
        k = session.engine.config.review.k
        progress = run_progress(session.ledger, run, session.dimension, k)
        self.console.print(printable(f"progress: {progress}", "dim"))
        blind = (
            "the triage's recommendation is shown, except on audit cards"
            if run.header.kind == "change"
            else "AI scores stay hidden until you rate (blind review)"
        )
        who = session.reviewer.name or session.reviewer.id
        self.console.print(
            printable(f"dimension: {session.dimension} · reviewer: {who} · {blind}", "dim")
        )

    def card(self, card: Card, state: State) -> None:
        out = self.console
        if state == State.SKIP_REASON:
            self.recorded(card)  # ⏭ skipped
            out.print(printable("  Why? press a reason's key (optional)", "bold"))
            self.keys(card, state)
            return
        if state != State.RATING:  # rated: how sure, a follow-up's question, or the concern tags
            self.recorded(card)
            out.print(
                printable(
                    f"  {card.prompt or 'Concerns? press a key to toggle'}", "bold", newlines=True
                )
            )
            self.keys(card, state)
            return
        self.body(card)
        out.print(printable(f"\n  {card.question}", "bold", newlines=True))
        self.keys(card, state)

    def body(self, card: Card) -> None:
        """The card's title and sections (a diff's lines coloured)."""
        out = self.console
        out.print()
        out.print(printable(card.title, "bold cyan"))
        if card.progress:
            out.print(printable(f"  {card.progress}", "dim"))
        for section in card.sections:
            if section.title:
                out.print(printable(f"\n  {section.title}:", "bold", newlines=True))
            if section.code:
                self.code(section.lines)
                continue
            for line in section.lines:
                style = _diff_style(line) if section.title == "Diff" else ""
                out.print(printable("  " + line, style), soft_wrap=True)

    def code(self, lines: tuple[str, ...]) -> None:
        """A code block, indented and never wrapped: on a terminal a line wider than it is cut (and
        the card says so; View full shows it whole), elsewhere it is printed whole."""
        out, cut = self.console, False
        for line in lines:
            text = printable(CODE_INDENT + line.expandtabs(4), "cyan")
            if out.is_terminal and text.cell_len > out.width:
                text.truncate(out.width, overflow="ellipsis")
                cut = True
            out.print(text, soft_wrap=True)
        if cut:
            out.print(printable(f"{CODE_INDENT}(long lines cut: v shows them whole)", "dim"))

    def keys(self, card: Card, state: State) -> None:
        for number, row in enumerate(card.buttons):
            parts = [button_text(b) for b in row if b.key]
            if state == State.FOLLOW_UP and number == 2:
                parts.insert(0, "change:")
            if number == 1:
                parts += ([f"[enter] {card.enter.label}"] if card.enter else []) + ["[?] guide"]
            if parts:
                self.console.print(printable("  " + "  ".join(parts), "yellow"))

    def guide(self, session: ReviewSession) -> None:
        """What the question asks and what each option of the scale means (the ``?`` key)."""
        first, *options = session.guide().splitlines()
        self.console.print(printable(f"  {first}", "bold", newlines=True))
        for line in options:
            self.console.print(printable(f"  {line}", newlines=True))

    def recorded(self, card: Card) -> None:
        if card.recorded is None:
            self.console.print(printable("  ⏭ skipped", "yellow"))
            return
        tags = f"  concerns: {', '.join(card.concerns)}" if card.concerns else ""
        answers = "".join(f"  {answer}" for answer in card.answers)
        self.console.print(printable(f"  ✓ recorded: {card.recorded}{tags}{answers}", "green"))
        if card.reveal:
            r = card.reveal
            scores = " ".join(f"{k}={_fmt_score(v)}" for k, v in r.scores.items())
            conf = f" (confidence {_fmt_score(r.confidence)})" if r.confidence is not None else ""
            self.console.print(
                printable(f"  {r.label}: {r.verdict or '-'} {scores}{conf}", "magenta")
            )
            if r.rationale:
                self.console.print(
                    printable(f'     "{r.rationale}"', "magenta", newlines=True), soft_wrap=True
                )

    def summary(self, summary: ReviewSummary, closing: Closing | None = None) -> None:
        """The session's counts (a change run's decisions instead), then what ``closing`` adds:
        the synthesis and its action items, or how to write the accepted changes."""
        human = f"{summary.humanAverageScore:.2f}" if summary.humanAverageScore is not None else "-"
        delta = signed(summary.human_minus_ai, "-")
        self.console.print(printable("\nSession summary", "bold", newlines=True))
        counts = (
            f"reviewed {summary.queriesReviewed} · skipped "
            f"{summary.queriesSkipped} · flagged "
            f"{summary.queriesFlagged} · human average {human} · "
            f"human − AI {delta}"
        )
        if closing is not None and closing.decisions is not None:
            counts = closing.decisions.line()
        self.console.print(printable(f"  {counts}"))
        for section in closing.sections if closing is not None else []:
            if section.heading:
                self.console.print(printable(f"\n{section.heading}", "bold", newlines=True))
            for line in section.lines:  # indented, and so are the lines it wraps onto
                width = max(self.console.width - 2, 20)
                parts = [line] if section.command else textwrap.wrap(line, width) or [""]
                for part in parts:
                    self.console.print(printable(f"  {part}"), soft_wrap=True)


__all__ = ["TerminalView", "button_text", "printable"]
