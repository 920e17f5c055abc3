"""A random ratings log of every kind of human event, for tests that compare two ways of reading
it (the columnar index and the whole-log fold)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from evaluation import Store
from evaluation.records import Adjudication, Note, Rating, Reviewer, ReviewSummary, Skip


def write_review_log(store: Store, seed: int, runs: list[str]) -> None:
    """Write ``store``'s ratings log: ratings, skips, notes, re-ratings, redeliveries (some sharing an
    adjudication's key), adjudications, syntheses and bad lines over ``runs``, in two dimensions."""
    rng = random.Random(seed)
    items = [(r, i.id) for r in runs for i in store.load_run(r).items]
    lines, keys = [], []
    for n in range(500):
        run_id, item_id = rng.choice(items)
        key = rng.choice(keys) if keys and rng.random() < 0.08 else f"key-{n}"
        keys.append(key)
        common = dict(
            run_id=run_id,
            item_id=item_id,
            dimension=rng.choice(["overall", "completeness"]),
            reviewer=Reviewer(platform="terminal", id=f"r{rng.randrange(5)}"),
            idempotency_key=key,
            timestamp=datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=n),
        )
        roll = rng.random()
        if roll < 0.6:
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
