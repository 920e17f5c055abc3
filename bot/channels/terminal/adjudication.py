"""``hilbot adjudicate`` in the terminal: the disputed items one by one, every label shown, single
keys, through the adjudication engine (:mod:`bot.adjudication`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, Callable

from rich.console import Console

from evaluation import HilbotConfig, LogIssue, Reviewer, Store, validate_run_id

from ...adjudication import AdjudicationSession, Phase, Turn
from ...cards import Action, Card
from ...review import ReviewEngine
from .keys import ENTER, Keys
from .render import TerminalView, button_text, printable


@dataclass(frozen=True)
class AdjudicationSummary:
    """What one adjudication session did."""

    consensus: int
    excluded: int
    remaining: int
    """Disputed items still unresolved on the dimension (left ones included)."""


class TerminalAdjudicator:
    """The single-key adjudication loop."""

    def __init__(self, stdin: IO[str] | None = None, console: Console | None = None):
        import sys

        self.keys = Keys(stdin or sys.stdin)
        self.console = console or Console(highlight=False)
        self._counts = {"consensus": 0, "exclude": 0}

    def run(self, session: AdjudicationSession) -> AdjudicationSummary:
        """Until quit, done, EOF or Ctrl-C; every decision is on disk before the next card."""
        self.console.print(
            printable(
                f"Adjudicating run {session.run_id} · dimension "
                f"{session.dimension} · {len(session.queue())} disputed "
                f"items, largest disagreement first",
                "bold",
            )
        )
        self.console.print(
            printable(
                "Not blind: every reviewer's label, tags and notes and the AI's verdict are shown.",
                "dim",
            )
        )
        turn, redraw = session.start(), True
        with self.keys.raw():
            try:
                while turn.phase not in (Phase.DONE, Phase.QUIT):
                    if redraw and turn.card is not None:
                        self._show(turn.card, turn.phase)
                    turn, redraw = self._turn(session, turn)
            except KeyboardInterrupt:
                pass
        left = session.unresolved()
        if turn.phase == Phase.DONE:
            self.console.print()
            self.console.print(printable("No disputed items left on this dimension.", "green"))
        summary = AdjudicationSummary(self._counts["consensus"], self._counts["exclude"], left)
        self.console.print()
        self.console.print(
            printable(
                f"Adjudicated {summary.consensus + summary.excluded}: "
                f"{summary.consensus} consensus, {summary.excluded} excluded; "
                f"{summary.remaining} disputed items remain.",
                "bold",
            )
        )
        return summary

    def _turn(self, session: AdjudicationSession, turn: Turn) -> tuple[Turn, bool]:
        if turn.phase == Phase.REASON_TEXT:
            reason = self.keys.line(self.console, "  reason> ")
            return self._after(session.act(Action("text", reason))), True
        key = self.keys.key()
        if key == "?":
            self.console.print(printable(session.guide(), newlines=True))
            return turn, False
        action = self._action(turn.card, key)
        if action is None:
            self.console.print(printable(f"  (key {key!r} does nothing here)", "dim"))
            return turn, False
        return self._after(session.act(action)), True

    def _after(self, turn: Turn) -> Turn:
        if turn.decided is not None and turn.stored:
            self._counts[turn.decided.decision] += 1
            what = (
                turn.decided.judgment
                if turn.decided.decision == "consensus"
                else f"excluded ({turn.decided.reason})"
            )
            self.console.print(printable(f"  ✓ recorded: {what}", "green"))
        if turn.alert:
            self.console.print(printable(f"  {turn.alert}", "red"))
        if turn.detail:
            self.console.print(printable(turn.detail, newlines=True), soft_wrap=True)
        return turn

    @staticmethod
    def _action(card: Card | None, key: str) -> Action | None:
        if card is None:
            return None
        if key in ENTER:
            return Action("skip", item_id=card.item_id)
        button = card.button_for_key(key) or card.button_for_key(key.lower())
        return button.action if button else None

    def _show(self, card: Card, phase: Phase) -> None:
        out = self.console
        if phase == Phase.DECIDING:
            TerminalView(out).body(card)
            if card.reveal is not None:
                r = card.reveal
                scores = " ".join(f"{k}={v:.2f}" for k, v in r.scores.items())
                out.print(printable(f"  {r.label}: {r.verdict or '-'} {scores}", "magenta"))
        out.print(printable(f"\n  {card.question}", "bold", newlines=True))
        for n, row in enumerate(card.buttons):
            parts = [button_text(b) for b in row if b.key]
            if n == 1 and phase == Phase.DECIDING:
                parts += ["[?] guide"]
            if parts:
                out.print(printable("  " + "  ".join(parts), "yellow"))


def adjudicate_run(
    store: Store,
    config: HilbotConfig,
    run_id: str,
    *,
    dimension: str | None = None,
    adjudicator: str = "adjudicator",
    on_issues: Callable[[list[LogIssue]], None] | None = None,
    stdin: IO[str] | None = None,
) -> AdjudicationSummary:
    """Adjudicate ``run_id``'s disputed items in this terminal as ``adjudicator``."""
    issues: list[LogIssue] = []
    engine = ReviewEngine(store, config, issues)
    session = AdjudicationSession(
        engine,
        validate_run_id(run_id),
        dimension,
        Reviewer(platform="terminal", id=adjudicator, name=adjudicator),
    )
    if on_issues:
        on_issues(issues)
    return TerminalAdjudicator(stdin).run(session)


__all__ = ["AdjudicationSummary", "TerminalAdjudicator", "adjudicate_run"]
