"""What the terminal prints: cards, reveals and summaries with rich.

Everything printed goes through :func:`printable`: control characters made visible
(:func:`evaluation.text.visible`), and a rich ``Text``, so item text is never parsed as markup.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from evaluation import ReviewSummary
from evaluation.output import signed
from evaluation.text import visible

from ...cards import Button, Card, State
from ...review import ReviewSession


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
        title = f"Reviewing run: {run.run_id} ({len(run.items)} queries{score})"
        self.console.print(printable(title, "bold"))
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
        for section in card.sections:
            if section.title:
                out.print(printable(f"\n  {section.title}:", "bold", newlines=True))
            for line in section.lines:
                style = _diff_style(line) if section.title == "Diff" else ""
                out.print(printable("  " + line, style), soft_wrap=True)

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

    def summary(self, summary: ReviewSummary) -> None:
        human = f"{summary.humanAverageScore:.2f}" if summary.humanAverageScore is not None else "-"
        delta = signed(summary.aiVsHumanDelta, "-")
        self.console.print(printable("\nSession summary", "bold", newlines=True))
        self.console.print(
            printable(
                f"  reviewed {summary.queriesReviewed} · skipped "
                f"{summary.queriesSkipped} · flagged "
                f"{summary.queriesFlagged} · human average {human} · "
                f"human − AI {delta}"
            )
        )


__all__ = ["TerminalView", "button_text", "printable"]
