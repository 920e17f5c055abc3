"""Which items a reviewer gets, in what order.

Each item needs ``k`` ratings per dimension from different reviewers; a reviewer never gets
an item they have rated or skipped, nor one whose card they already hold. A card open with
another reviewer (dealt on a chat channel, not yet answered) counts towards ``k``, so two
reviewers are not sent the same item when one rating is enough. The items the AI is least sure of
come first (missing or low confidence, UNSURE verdicts); within each confidence band, categories
take turns (stratified), keeping the run's order inside a category.
"""

from __future__ import annotations

from itertools import islice, zip_longest

from evaluation import ItemData, Ledger, Reviewer, Run, ai_confidence

from .cards import Progress

_BANDS = (0.5, 0.8)


def _band(item: ItemData) -> int:
    confidence = ai_confidence(item)
    return sum(confidence >= edge for edge in _BANDS)


def _stratify(items: list[ItemData]) -> list[ItemData]:
    by_category: dict[str, list[ItemData]] = {}
    for item in items:
        by_category.setdefault(item.query.category or "", []).append(item)
    rounds = zip_longest(*by_category.values())
    return [item for round_ in rounds for item in round_ if item is not None]


def _full(run_id: str, item_id: str, ledger: Ledger, dimension: str, k: int) -> bool:
    """k ratings, or k with the open cards: nobody new is dealt it."""
    return (
        len(ledger.raters(run_id, item_id, dimension))
        + len(ledger.open_reviewers(run_id, item_id, dimension))
        >= k
    )


def _mine(run_id: str, item_id: str, ledger: Ledger, dimension: str, reviewer: Reviewer) -> bool:
    """Already judged by this reviewer, or on a card they hold."""
    return ledger.judgment(run_id, item_id, dimension, reviewer) is not None or ledger.dealt(
        run_id, item_id, dimension, reviewer
    )


def order(run: Run) -> list[ItemData]:
    """Every item of the run in assignment order: least-confident first, stratified by category."""
    bands: list[list[ItemData]] = [[] for _ in range(len(_BANDS) + 1)]
    for item in run.items:
        bands[_band(item)].append(item)
    return [item for band in bands for item in _stratify(band)]


def queue(
    run: Run,
    ledger: Ledger,
    dimension: str,
    reviewer: Reviewer,
    k: int = 1,
    *,
    ordered: list[ItemData] | None = None,
    limit: int | None = None,
) -> list[ItemData]:
    """Items still to show this reviewer, in assignment order (the first ``limit`` of them).

    ``ordered`` is :func:`order` of the run, when the caller keeps it.
    """
    found: list[ItemData] = []
    key = (run.run_id, dimension, k)
    full = ledger.full.setdefault(key, set())
    items = ordered if ordered is not None else order(run)
    for item in islice(items, _full_prefix(ledger, key, items, full), None):
        if limit is not None and len(found) >= limit:
            break
        if item.id in full or _mine(run.run_id, item.id, ledger, dimension, reviewer):
            continue
        if _full(run.run_id, item.id, ledger, dimension, k):
            full.add(item.id)
            continue
        found.append(item)
    return found


def _full_prefix(
    ledger: Ledger, key: tuple[str, str, int], items: list[ItemData], full: set[str]
) -> int:
    """How many of the first ``items`` are full (none is dealt again until the ledger reopens
    one)."""
    seen, n = ledger.full_prefix.get(key, (None, 0))
    if seen is not items:  # another order (the run grew): count again
        n = 0
    while n < len(items) and items[n].id in full:
        n += 1
    ledger.full_prefix[key] = (items, n)
    return n


def progress(
    run: Run,
    ledger: Ledger,
    dimension: str,
    reviewer: Reviewer,
    k: int = 1,
    ordered: list[ItemData] | None = None,
) -> Progress:
    """Done / skipped / remaining (to deal, or dealt and open) for one reviewer on one run and
    dimension.

    Worked out from the ledger's running counts (no walk over the run); equal to the length of
    :func:`queue` plus the reviewer's open cards.
    """
    if ledger.registered(run.run_id) != len(run.items):
        ledger.register_run(run.run_id, (item.id for item in run.items))
    done, skipped = ledger.counts(run.run_id, dimension, reviewer)
    return Progress(done, skipped, ledger.left(run.run_id, dimension, reviewer, k))
