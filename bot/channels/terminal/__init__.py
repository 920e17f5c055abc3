"""The terminal channel, the embedded default: the single-key review loop.

Every key that records a judgment is stored (fsynced) by the engine before the next card is
drawn. Enter skips only a card that has been on screen ``[review] enter_skips_after_s`` (a stray
enter after a rating that moved on skips nothing); ``s`` skips at once, ``u`` takes a skip back.
Ctrl-C or ``q`` quits, saves the session summary and prints it. The rest of the channel is in
this package: :mod:`.keys` (single keys, or a pipe), :mod:`.render` (what is printed: never
raw item text, never markup) and :mod:`.adjudication` (``hilbot adjudicate``'s loop).
"""

from __future__ import annotations

import sys
import time
from typing import IO, Callable

from rich.console import Console

from evaluation import HilbotConfig, LogIssue, Reviewer, ReviewSummary, Store, validate_run_id

from ...cards import Action, Card
from ...review import ReviewEngine, ReviewSession, State, Step
from .. import channel
from .keys import ALIASES, ENTER, Keys
from .render import TerminalView, printable


class TerminalChannel:
    """The terminal reviewer."""

    name = "terminal"

    def __init__(self, stdin: IO[str] | None = None, console: Console | None = None):
        self.input = Keys(stdin or sys.stdin)
        self.view = TerminalView(console or Console(highlight=False))
        self._shown: tuple[str | None, float] = (None, 0.0)
        """The item whose card is on screen, and since when (enter skips only once it is read)."""

    def review(self, session: ReviewSession) -> ReviewSummary:
        """Run the single-key loop until quit, done, EOF or Ctrl-C."""
        self.view.header(session)
        step, redraw = session.start(), True
        with self.input.raw():
            try:
                while step.state not in (State.DONE, State.QUIT):
                    text_asked = step.state in (State.NOTE, State.ANSWER)
                    if redraw and step.card is not None and not text_asked:
                        self.view.card(step.card, step.state)
                        if step.card.item_id != self._shown[0]:
                            self._shown = (step.card.item_id, time.monotonic())
                    step, redraw = self._turn(session, step)
            except KeyboardInterrupt:
                step = session.act(Action("quit"))
        if step.state == State.DONE:
            self.view.console.print(
                printable(
                    "\nAll items in this run are reviewed for this dimension. 🎉",
                    "green",
                    newlines=True,
                )
            )
            step = session.act(Action("quit"))
        assert step.summary is not None  # the quit that ends the session carries its summary
        self.view.summary(step.summary, session.closing(step.summary))
        return step.summary

    def _turn(self, session: ReviewSession, step: Step) -> tuple[Step, bool]:
        """One key (or one note, or a typed answer) → the next step, and whether to draw its
        card."""
        if step.state in (State.NOTE, State.ANSWER):
            prompt = "  note> " if step.state == State.NOTE else "  answer> "
            typed = self.input.line(self.view.console, prompt)
            result = session.act(Action("text", typed))
            if result.finished is not None:
                self.view.recorded(result.finished)
            if result.alert:
                self.view.console.print(printable(f"  {result.alert}", "red"))
            return result, True
        key = self.input.key()
        if key == "?":
            self.view.guide(session)
            return step, False
        if key in ENTER and step.state == State.RATING and self._unread(session):
            wait = session.engine.config.review.enter_skips_after_s
            self.view.console.print(
                printable(f"  (enter skips a card after {wait:g} s on screen; s skips now)", "dim")
            )
            return step, False
        action = self._action(step.card, step.state, key)
        if action is None:
            self.view.console.print(printable(f"  (key {key!r} does nothing here)", "dim"))
            return step, False
        result = session.act(action)
        if result.finished is not None:
            self.view.recorded(result.finished)
        if result.alert:
            self.view.console.print(printable(f"  {result.alert}", "red"))
        if result.detail:
            self.view.console.print(printable(result.detail, newlines=True), soft_wrap=True)
        return result, True

    def _unread(self, session: ReviewSession) -> bool:
        """Whether the card on screen came up too recently for an enter to be a choice to skip it
        (typed at a terminal: a pipe's keys are all deliberate)."""
        wait = session.engine.config.review.enter_skips_after_s
        return self.input.tty and time.monotonic() - self._shown[1] < wait

    @staticmethod
    def _action(card: Card | None, state: State, key: str) -> Action | None:
        if card is None:
            return None
        if key in ENTER:  # skip before a judgment, pass a question, or move on: what the card says
            return card.enter.action if card.enter is not None else None
        if key in ALIASES and card.button_for_key(key) is None:  # R: the AI review, never r
            kinds = [b.action for row in card.buttons for b in row]
            return next((a for a in kinds if a.kind == ALIASES[key]), None)
        button = card.button_for_key(key) or card.button_for_key(key.lower())
        return button.action if button else None


channel("terminal")(TerminalChannel)


def review_run(
    store: Store,
    config: HilbotConfig,
    run_id: str,
    *,
    dimension: str | None = None,
    reviewer: str = "reviewer",
    on_issues: Callable[[list[LogIssue]], None] | None = None,
    stdin: IO[str] | None = None,
) -> ReviewSummary:
    """Review ``run_id`` in this terminal as ``reviewer``; returns the session summary."""
    issues: list[LogIssue] = []
    engine = ReviewEngine(store, config, issues)
    who = Reviewer(platform="terminal", id=reviewer, name=reviewer)
    session = engine.session(validate_run_id(run_id), who, dimension)
    if on_issues:
        on_issues(issues)
    return TerminalChannel(stdin).review(session)


__all__ = ["TerminalChannel", "review_run"]
