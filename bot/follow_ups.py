"""A dimension's follow-up questions as a rating stores them: after a rating come, in order,
"how sure are you?" (when the dimension asks it) and each follow-up whose ``when`` names the
option chosen (:func:`asked`); a picked choice (:func:`picked`) or a typed answer
(:func:`typed`) becomes the field's new value (a list field of several answers gains or loses
it, else holds it alone), and :func:`with_answer` is the update that sets it on the rating's
``labels`` or ``metadata``. Where the review goes next is :class:`bot.review.ReviewSession`'s.
"""

from __future__ import annotations

from typing import Any

from evaluation import Rating
from evaluation.config import FOLLOW_UP_FIELDS, LIST_FIELDS, FollowUp


def asked(judgment: str, follow_ups: dict[str, FollowUp], *, confidence: bool) -> list[str]:
    """What a rating of ``judgment`` is followed by, in order: ``confidence``, then the
    follow-ups' fields."""
    first = ["confidence"] if confidence else []
    return first + [f.field for f in follow_ups.values() if not f.when or judgment in f.when]


def picked(follow_up: FollowUp, current: Any, choice: str) -> Any:
    """The field's value once ``choice`` is picked: a list field of several answers toggles it
    (keeping the typed ones), a list field of one holds it alone."""
    if follow_up.field not in LIST_FIELDS:
        return choice
    chosen = set(current or []) ^ {choice} if follow_up.multiple else {choice}
    given = [v for v in current or [] if v not in follow_up.choices] if follow_up.multiple else []
    return [c for c in follow_up.choices if c in chosen] + given or None


def typed(follow_up: FollowUp, current: Any, text: str) -> Any:
    """The field's value once ``text`` is typed: a list field of several answers gains it (once),
    a list field of one holds it alone."""
    if follow_up.field not in LIST_FIELDS:
        return text
    given = list(current or [])
    return (given + ([] if text in given else [text])) if follow_up.multiple else [text]


def with_answer(rating: Rating, name: str, value: Any) -> dict[str, Any]:
    """The update that sets a follow-up field on a rating."""
    where = FOLLOW_UP_FIELDS[name]
    home = rating.labels if where == "labels" else rating.metadata
    return {where: home.model_copy(update={name: value})}


__all__ = ["asked", "picked", "typed", "with_answer"]
