"""How a review session ends: quitting stores one record, the reviewer's
:class:`evaluation.ReviewSummary` (the hilReview), which :func:`ending` finds in a transition;
with ``[review] synthesize_at_end`` it also carries the run's synthesis and action items
(:func:`with_synthesis`), made over every reviewer's ratings and notes and stored on its own
too, and a synthesis that fails is logged while the session ends all the same.
"""

from __future__ import annotations

import logging

from evaluation import HilbotConfig, HilbotError, Reviewer, ReviewSummary, Store

from .cards import State
from .steps import Transition

_log = logging.getLogger("hilbot.review")


def ending(transition: Transition) -> ReviewSummary | None:
    """The session's summary when a transition ends the session (it is its one record), else
    None."""
    if (
        transition.state == State.QUIT
        and len(transition.records) == 1
        and isinstance(transition.records[0], ReviewSummary)
    ):
        return transition.records[0]
    return None


def with_synthesis(
    store: Store,
    config: HilbotConfig,
    summary: ReviewSummary,
    *,
    run_id: str,
    dimension: str,
    reviewer: Reviewer,
) -> ReviewSummary:
    """The session's summary with the run's synthesis and action items (``[review]
    synthesize_at_end``).

    The synthesis covers every reviewer's ratings and notes of the run and is stored on its own
    too (exports carry the latest); a failure to synthesize is logged and ends nothing.
    """
    mode = config.review.synthesize_at_end
    if mode == "off" or not summary.queriesReviewed:
        return summary
    from analysis.synthesize import synthesize_and_store

    try:
        made = synthesize_and_store(store, config, run_id, dimension, llm=mode == "llm")
    except HilbotError as exc:
        _log.warning(
            "no synthesis at the end of %s's review of %s: %s",
            reviewer.key,
            run_id,
            exc,
        )
        return summary
    if made is None:
        return summary
    return summary.model_copy(
        update={
            "synthesis": made.synthesis,
            "synthesis_source": made.synthesis_source,
            "actionItems": made.actionItems,
        }
    )


__all__ = ["ending", "with_synthesis"]
