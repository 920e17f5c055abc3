"""What the chat bot says, in plain text (the adapter escapes and formats it for its platform)."""

from __future__ import annotations

from evaluation import HilbotError, ReviewSummary
from evaluation.output import signed

from ..cards import Action, Progress
from ..ending import Closing

COMMANDS: list[tuple[str, str, bool]] = [
    ("start", "Welcome, and your user id", False),
    ("help", "How to review", False),
    ("runs", "Recent runs", False),
    ("review", "<run-id> [dimension]: start or resume a review", False),
    ("next", "Show your open card again, or the next one", False),
    ("status", "Your progress per run", False),
    ("push", "<run-id> [dimension]: deal cards to every reviewer", True),
    ("digest", "Post a digest here now", True),
    ("adjudicate", "<run-id> [dimension]: resolve the items reviewers disagree on", True),
]
"""Every command: name, what it does, admins only."""

ECHO_CHARS = 80
"""How much of what a user typed an error repeats back."""


def clip(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis shows the cut), scrubbed of secrets before
    it is cut: a cut through a secret would leave a part of it that no scrubber recognises."""
    if len(text) <= limit:
        return text
    from evaluation.scrub import scrub

    text = scrub(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def help_text(prefix: str) -> str:
    """How to review, and every command once."""
    lines = [
        "Rate each card with its buttons; after a middling or bad rating you can add concern tags "
        "and a note.",
        "Your rating is saved before the button answers. The AI's verdict stays hidden until you "
        "have rated.",
        "",
    ]
    lines += [
        f"{prefix}{name} — {what}" + (" (admins)" if admin else "")
        for name, what, admin in COMMANDS
    ]
    return "\n".join(lines)


def welcome(prefix: str, title: str, user_id: str) -> str:
    """/start for a reviewer."""
    return f"👋 Welcome to hilbot. Your {title} user id is {user_id}.\n\n" + help_text(prefix)


def refusal(title: str, platform: str, user_id: str) -> str:
    """What a user who is not on the list is told (and nothing else)."""
    return (
        f"You are not on this bot's reviewer list. Your {title} user id is {user_id}; an admin can "
        f"add it to [{platform}] reviewers in hilbot.toml."
    )


REFUSED_TAP = "You are not on this bot's reviewer list."
STALE_BUTTON = "This button is not valid any more."
EXPIRED_CARD = (
    "This card waited too long and went to another reviewer; your next card comes with /next."
)


def progress_line(
    run_id: str,
    dimension: str,
    progress: Progress,
    lead: str | None = None,
    run: str | None = None,
) -> str:
    """``Reviewing demo-docs-search · overall: 1 rated, 0 skipped, 17 left of 18 for you · run:
    rated 3/18 · complete 1/18 (k=2)`` (``lead`` first, if any; the run's part when ``run`` is
    given).

    The first counts are this reviewer's: what they judged, and what they hold or may still be
    dealt (items other reviewers hold, when ``k`` ratings are enough, are not theirs). The run's
    are everyone's, as the run listing and the cards say them (:mod:`bot.progress`).
    """
    p = progress
    text = (
        f"{run_id} · {dimension}: {p.done} rated, {p.skipped} skipped, {p.remaining} left of "
        f"{p.total} for you"
    ) + (f" · run: {run}" if run else "")
    return f"{lead} {text}" if lead else text


def done(
    run_id: str, dimension: str, summary: ReviewSummary, closing: Closing | None = None
) -> str:
    """The end of a reviewer's session on a run: the counts (a change run's decisions instead),
    then what ``closing`` adds: the synthesis and its action items, or how to write the accepted
    changes."""
    s = summary
    human = f"{s.humanAverageScore:.2f}" if s.humanAverageScore is not None else "–"
    delta = signed(s.human_minus_ai)
    counts = (
        f"{s.queriesReviewed} rated, {s.queriesSkipped} skipped, {s.queriesFlagged} flagged · "
        f"human average {human} · human − AI {delta}"
    )
    if closing is not None and closing.decisions is not None:
        counts = closing.decisions.line()
    lines = [f"🎉 All done with {run_id} · {dimension}: {counts}"]
    for section in closing.sections if closing is not None else []:
        lines += ["", section.heading, *section.lines] if section.heading else section.lines
    return "\n".join(lines)


def nothing_new(held: int, prefix: str) -> str:
    """Nothing to deal: open cards above, or the run is finished for this reviewer."""
    if held:
        return f"You have {held} open card(s) above — tap one, or {prefix}next to see it again."
    return "Nothing left for you in this run. 🎉"


def unsendable(title: str, card_title: str, reason: str) -> str:
    """A card the platform would not take: one line, and the review goes on."""
    return (
        f"⚠️ {title} refused the card {clip(card_title)} ({clip(reason, 120)}); it is left "
        "out, and the next card follows."
    )


def error(exc: HilbotError, prefix: str) -> str:
    """A review error as a chat reply: what, and a fix the chat can act on (never a terminal
    command)."""
    what = clip(exc.what, 200)
    if "dimension" in exc.what:
        return f"{what} — {clip(exc.fix or '', 200)}" if exc.fix else what
    return f"{what} — see {prefix}runs"


def action_label(action: Action) -> str:
    """What a tap did, for its answer."""
    return {
        "rate": f"Recorded: {action.value}",
        "skip": f"Skipped: {action.value}" if action.value else "Skipped",
        "next": "Done",
        "note": "Reply with your note",
        "view_full": "Full view below",
        "view_tools": "Tool captures below",
        "ai_review": "AI review below",
        "guide": "Guide below",
        "confidence": f"Confidence: {action.value}",
        "answer": f"Saved: {(action.value or '').partition(':')[2]}",
        "type": "Reply with your answer",
        "undo": "Skip taken back: rate it",
    }.get(action.kind, "")


def usage(prefix: str, name: str) -> str:
    """How to call a command that needs arguments."""
    what = next(w for n, w, _ in COMMANDS if n == name)
    return f"Usage: {prefix}{name} {what.split(':')[0]} — see {prefix}runs"
