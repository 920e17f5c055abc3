"""The terminal reviewer, the embedded default: the single-key flow.

Every key that records a judgment is stored (fsynced) by the engine before the next card is
drawn. Ctrl-C or ``q`` quits, saves the session summary and prints it.

Everything printed goes through :func:`_text`: control characters made visible
(:func:`evaluation.text.visible`), and a rich ``Text``, so item text is never parsed as markup.
"""

from __future__ import annotations

import contextlib
import os
import sys
import termios
import tty
from typing import IO, Callable, Iterator

from rich.console import Console
from rich.text import Text

from evaluation import HilbotConfig, LogIssue, Reviewer, ReviewSummary, Store, validate_run_id
from evaluation.output import signed
from evaluation.text import visible

from ..cards import Action, Button, Card
from ..review import ReviewEngine, ReviewSession, State, Step
from . import channel

ENTER = ("\r", "\n")


class Keys:
    """Single keys from a terminal in cbreak mode, or characters from a pipe."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.tty = stream.isatty()

    @contextlib.contextmanager
    def raw(self) -> Iterator[None]:
        """Cbreak mode (no echo, no line buffering; Ctrl-C still interrupts) while inside."""
        if not self.tty:
            yield
            return
        fd = self.stream.fileno()
        saved = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd)
            yield
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)

    def key(self) -> str:
        """One key; EOF reads as ``q``."""
        if self.tty:
            data = os.read(self.stream.fileno(), 1)
            return data.decode("utf-8", "replace") if data else "q"
        char = self.stream.read(1)
        return char or "q"

    def line(self, console: Console, prompt: str) -> str:
        """A line of text, echoed, for notes."""
        if self.tty:
            fd = self.stream.fileno()
            saved = termios.tcgetattr(fd)
            new = termios.tcgetattr(fd)
            new[3] |= termios.ICANON | termios.ECHO
            termios.tcsetattr(fd, termios.TCSADRAIN, new)
            try:
                console.print(prompt, end="", markup=False)
                return self.stream.readline().rstrip("\n")
            finally:
                termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        console.print(prompt, end="", markup=False)
        return self.stream.readline().rstrip("\n")


def _text(text: str, style: str = "", *, newlines: bool = False) -> Text:
    """What the terminal prints: ``text`` with control characters made visible, as rich text (never markup)."""
    return Text(visible(text, newlines=newlines), style=style)


def _diff_style(line: str) -> str:
    """A diff line's colour: added green, removed red, hunk headers cyan."""
    if line.startswith(("+++", "---")):
        return "bold"
    return {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "")


def _button_text(button: Button) -> str:
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
        self.console.print(_text(f"Reviewing run: {run.run_id} ({len(run.items)} queries{score})", "bold"))
        blind = ("the triage's recommendation is shown, except on audit cards" if run.header.kind == "change"
                 else "AI scores stay hidden until you rate (blind review)")
        self.console.print(_text(f"dimension: {session.dimension} · reviewer: {session.reviewer.name or session.reviewer.id} · {blind}",
                                 "dim"))

    def card(self, card: Card, state: State) -> None:
        out = self.console
        if state == State.SKIP_REASON:
            self.recorded(card)  # ⏭ skipped
            out.print(_text("  Why? press a reason's key (optional)", "bold"))
            self.keys(card, state)
            return
        if state != State.RATING:  # rated: how sure, a follow-up's question, or the concern tags
            self.recorded(card)
            out.print(_text(f"  {card.prompt or 'Concerns? press a key to toggle'}", "bold", newlines=True))
            self.keys(card, state)
            return
        self.body(card)
        out.print(_text(f"\n  {card.question}", "bold", newlines=True))
        self.keys(card, state)

    def body(self, card: Card) -> None:
        """The card's title and sections (a diff's lines coloured)."""
        out = self.console
        out.print()
        out.print(_text(card.title, "bold cyan"))
        for section in card.sections:
            if section.title:
                out.print(_text(f"\n  {section.title}:", "bold", newlines=True))
            for line in section.lines:
                out.print(_text("  " + line, _diff_style(line) if section.title == "Diff" else ""), soft_wrap=True)

    def keys(self, card: Card, state: State) -> None:
        for number, row in enumerate(card.buttons):
            parts = [_button_text(b) for b in row if b.key]
            if state == State.FOLLOW_UP and number == 2:
                parts.insert(0, "change:")
            if number == 1:
                parts += ([f"[enter] {card.enter.label}"] if card.enter else []) + ["[?] guide"]
            if parts:
                self.console.print(_text("  " + "  ".join(parts), "yellow"))

    def guide(self, session: ReviewSession) -> None:
        """What the question asks and what each option of the scale means (the ``?`` key)."""
        first, *options = session.guide().splitlines()
        self.console.print(_text(f"  {first}", "bold", newlines=True))
        for line in options:
            self.console.print(_text(f"  {line}", newlines=True))

    def recorded(self, card: Card) -> None:
        if card.recorded is None:
            self.console.print(_text("  ⏭ skipped", "yellow"))
            return
        tags = f"  concerns: {', '.join(card.concerns)}" if card.concerns else ""
        answers = "".join(f"  {answer}" for answer in card.answers)
        self.console.print(_text(f"  ✓ recorded: {card.recorded}{tags}{answers}", "green"))
        if card.reveal:
            r = card.reveal
            scores = " ".join(f"{k}={_fmt_score(v)}" for k, v in r.scores.items())
            conf = f" (confidence {_fmt_score(r.confidence)})" if r.confidence is not None else ""
            self.console.print(_text(f"  {r.label}: {r.verdict or '-'} {scores}{conf}", "magenta"))
            if r.rationale:
                self.console.print(_text(f"     \"{r.rationale}\"", "magenta", newlines=True), soft_wrap=True)

    def summary(self, summary: ReviewSummary) -> None:
        human = f"{summary.humanAverageScore:.2f}" if summary.humanAverageScore is not None else "-"
        delta = signed(summary.aiVsHumanDelta, "-")
        self.console.print(_text("\nSession summary", "bold", newlines=True))
        self.console.print(_text(f"  reviewed {summary.queriesReviewed} · skipped {summary.queriesSkipped} · "
                                f"flagged {summary.queriesFlagged} · human average {human} · human − AI {delta}"))


class TerminalChannel:
    """The terminal reviewer."""

    name = "terminal"

    def __init__(self, stdin: IO[str] | None = None, console: Console | None = None):
        self.input = Keys(stdin or sys.stdin)
        self.view = TerminalView(console or Console(highlight=False))

    def review(self, session: ReviewSession) -> ReviewSummary:
        """Run the single-key loop until quit, done, EOF or Ctrl-C."""
        self.view.header(session)
        step, redraw = session.start(), True
        with self.input.raw():
            try:
                while step.state not in (State.DONE, State.QUIT):
                    if redraw and step.card is not None and step.state not in (State.NOTE, State.ANSWER):
                        self.view.card(step.card, step.state)
                    step, redraw = self._turn(session, step)
            except KeyboardInterrupt:
                step = session.act(Action("quit"))
        if step.state == State.DONE:
            self.view.console.print(_text("\nAll items in this run are reviewed for this dimension. 🎉", "green", newlines=True))
            step = session.act(Action("quit"))
        assert step.summary is not None  # the quit that ends the session carries its summary
        self.view.summary(step.summary)
        return step.summary

    def _turn(self, session: ReviewSession, step: Step) -> tuple[Step, bool]:
        """One key (or one note, or a typed answer) → the next step, and whether to draw its card."""
        if step.state in (State.NOTE, State.ANSWER):
            typed = self.input.line(self.view.console, "  note> " if step.state == State.NOTE else "  answer> ")
            result = session.act(Action("text", typed))
            if result.finished is not None:
                self.view.recorded(result.finished)
            if result.alert:
                self.view.console.print(_text(f"  {result.alert}", "red"))
            return result, True
        key = self.input.key()
        if key == "?":
            self.view.guide(session)
            return step, False
        action = self._action(step.card, step.state, key)
        if action is None:
            self.view.console.print(_text(f"  (key {key!r} does nothing here)", "dim"))
            return step, False
        result = session.act(action)
        if result.finished is not None:
            self.view.recorded(result.finished)
        if result.alert:
            self.view.console.print(_text(f"  {result.alert}", "red"))
        if result.detail:
            self.view.console.print(_text(result.detail, newlines=True), soft_wrap=True)
        return result, True

    @staticmethod
    def _action(card: Card | None, state: State, key: str) -> Action | None:
        if card is None:
            return None
        if key in ENTER:  # skip before a judgment, pass a question, or move on: what the card says
            return card.enter.action if card.enter is not None else None
        button = card.button_for_key(key) or card.button_for_key(key.lower())
        return button.action if button else None


channel("terminal")(TerminalChannel)


def review_run(store: Store, config: HilbotConfig, run_id: str, *, dimension: str | None = None, reviewer: str = "reviewer",
               on_issues: Callable[[list[LogIssue]], None] | None = None, stdin: IO[str] | None = None) -> ReviewSummary:
    """Review ``run_id`` in this terminal as ``reviewer``; returns the session summary."""
    issues: list[LogIssue] = []
    engine = ReviewEngine(store, config, issues)
    session = engine.session(validate_run_id(run_id), Reviewer(platform="terminal", id=reviewer, name=reviewer), dimension)
    if on_issues:
        on_issues(issues)
    return TerminalChannel(stdin).review(session)
