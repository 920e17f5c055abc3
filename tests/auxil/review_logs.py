"""A random ratings log of every kind of human event, for tests that compare two ways of reading
it (the columnar index and the whole-log fold)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from evaluation import Store
from evaluation.records import (
    Adjudication,
    Delivery,
    Note,
    Rating,
    Reviewer,
    ReviewSummary,
    Skip,
)


def write_review_log(
    store: Store, seed: int, runs: list[str], *, chat: bool = False, events: int = 500
) -> None:
    """Write ``store``'s ratings log: ratings, skips, notes, re-ratings, redeliveries (some
    sharing an adjudication's key), adjudications, syntheses and bad lines over ``runs``, in two
    dimensions.

    With ``chat``, the reviewers are Telegram users and the log also holds what a chat bot logs:
    cards, note prompts and session starts (in private chats and a group), and typed answers."""
    rng = random.Random(seed)
    items = [(r, i.id) for r in runs for i in store.load_run(r).items]
    lines, keys = [], []
    prompted: dict[str, tuple[str, str, str]] = {}  # per reviewer: the item of their last prompt
    for n in range(events):
        run_id, item_id = rng.choice(items)
        who = f"r{rng.randrange(5)}"
        dimension = rng.choice(["overall", "completeness"])
        if chat and who in prompted and rng.random() < 0.3:  # the prompt's answer (or not)
            run_id, item_id, dimension = prompted[who]
        key = rng.choice(keys) if keys and rng.random() < 0.08 else f"key-{n}"
        keys.append(key)
        common = dict(
            run_id=run_id,
            item_id=item_id,
            dimension=dimension,
            reviewer=Reviewer(platform="telegram" if chat else "terminal", id=who),
            idempotency_key=key,
            timestamp=datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=n),
        )
        if chat and rng.random() < 0.45:
            delivery = _delivery(rng, common, n)
            if delivery.kind == "note_prompt":
                prompted[who] = (run_id, item_id, dimension)
            lines.append(delivery.model_dump_json())
            continue
        roll = rng.random()
        if chat and roll < 0.1:
            record = Rating(
                **common, judgment="good", score=0.7, action=f"text:{rng.choice(['why', 'fix'])}"
            )
        elif roll < 0.6:
            judgment, score = rng.choice([("good", 0.7), ("bad", 0.2), ("excellent", 1.0)])
            record = Rating(
                **common,
                judgment=judgment,
                score=score,
                concerns=rng.sample(["a", "b"], rng.randint(0, 2)),
                note=rng.choice([None, "own"]),
            )
        elif roll < 0.75:
            record = Skip(**common, skip_reason=rng.choice([None, "unclear"]))
        elif roll < 0.87:
            record = Note(**common, text=f"note {n}")
        elif roll < 0.95:
            record = Adjudication(**common, decision="consensus", judgment="good", score=0.7)
        else:
            record = ReviewSummary(
                run_id=run_id,
                dimension=common["dimension"],
                synthesis=f"synthesis {n}",
                actionItems=[f"do {n}"],
            )
        lines.append(record.model_dump_json())
        if rng.random() < 0.03:
            lines.append(rng.choice(["not json", "[]", '{"type": "rating"}']))
    store.ratings.path.write_text("\n".join(lines) + "\n")


def _delivery(rng: random.Random, common: dict, n: int) -> Delivery:
    """A card, note prompt or session start of the event's reviewer, run, item and dimension."""
    kind = rng.choices(["card", "note_prompt", "session"], [6, 2, 1])[0]
    group = rng.random() < 0.2
    reviewer = common["reviewer"]
    return Delivery(
        run_id=common["run_id"],
        item_id="" if kind == "session" else common["item_id"],
        dimension=common["dimension"],
        reviewer=reviewer,
        channel="telegram",
        kind=kind,
        chat_id="-100" if group else reviewer.id,
        message_id="" if kind == "session" else str(n),  # a platform never reuses one in a chat
        group=group,
        timestamp=common["timestamp"],
    )
