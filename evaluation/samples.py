"""Stratified samples of a run (``hilbot sample``), and how many items a confidence interval needs.

A sample is a new run holding a subset of another run's items, drawn stratum by stratum so a team
reviews a representative subset.

**Strata.** ``--by`` names item fields: ``category`` (``item.query.category``), ``kind`` and ``set``
(the run header's), ``verdict`` (``item.evaluation.verdict``) or any key of ``item.features``.
Several fields combine: the stratum is the tuple of the values. A missing value is its own stratum,
``(none)``. Strata are ordered by their values (text order, ``(none)`` last): that order breaks ties
below.

**Allocation.** ``proportional`` (default): stratum *h* of *N_h* of the run's *N* items gets the
quota *n·N_h/N*, rounded by the largest-remainder method (every stratum gets the whole part of its
quota, then the items still to give go one each to the largest fractional parts, ties to the earlier
stratum), so the counts sum to exactly *n*. Then, when *n* is at least the number of strata, every
stratum left with 0 gets 1, each taken from the stratum holding the most sampled items at that
moment (ties: the larger stratum, then the earlier one). When *n* is smaller than the number of
strata some strata get none. ``equal``: *n* is split evenly, the items left over going one each to
the earliest strata; a stratum smaller than its share gives all its items and its surplus is shared
the same way among the strata that still have items (water-filling). Either way no stratum gives
more items than it has.

**Drawing.** Within a stratum the items are taken in the run's order; a ``random.Random`` seeded
with the first 8 bytes (big-endian) of ``sha256(f"{seed}:{json.dumps(list(stratum))}")`` shuffles
their positions once, and the sample takes the first *k* of that shuffled order. So the same seed
gives the same sample on any machine and Python 3 version, a stratum's draw does not depend on any
other stratum, and a larger *k* only adds items to a smaller one's draw. The sampled items keep the
run's order.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

from .errors import HilbotError
from .records import ItemData, QueryEvaluation, RunSummary, utcnow
from .runs import Run, average_scores
from .store import Store, validate_run_id

Allocation = Literal["proportional", "equal"]
"""How the sample is split among strata."""

NONE = "(none)"
"""The stratum value of an item that has no value for a field."""

BUILTIN_FIELDS = ("category", "kind", "set", "verdict")
"""Fields every run may be stratified by; any key of ``item.features`` works too."""

Z95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95% interval (``NormalDist().inv_cdf(0.975)``)."""

ADVICE_WIDTHS = (0.20, 0.10, 0.05)
"""Interval widths the sample-size advice is given for."""

_EPSILON = 1e-9
"""Rounding slack: a size that is a whole number but for float error is not rounded up past it."""


# --------------------------------------------------------------------------- sample-size advice


def sample_size(
    width: float, *, p: float = 0.5, population: int | None = None, z: float = Z95
) -> int:
    """Items needed for a proportion's confidence interval of total ``width`` (95% by default),
    rounded UP.

    Without a population (infinite *N*): ``n = z² p(1−p) / (w/2)²``. With one, the finite-population
    correction ``n_fpc = n / (1 + (n − 1)/N)`` is applied to the unrounded *n*, and the result is at
    most *N*.
    ``p = 0.5`` is the worst case. Examples: w = 0.10 → 385, w = 0.20 → 97, w = 0.05 → 1537;
    w = 0.10 with N = 1000 → 278.
    """
    if not 0 < width <= 2 or not 0 <= p <= 1:
        raise ValueError("width must be in (0, 2] and p in [0, 1]")
    n = z * z * p * (1 - p) / (width / 2) ** 2
    if population is not None:
        if population < 1:
            raise ValueError("population must be at least 1")
        n = n / (1 + (n - 1) / population)
        return min(population, max(0, math.ceil(n - _EPSILON)))
    return max(0, math.ceil(n - _EPSILON))


def interval_width(
    n: int, *, p: float = 0.5, population: int | None = None, z: float = Z95
) -> float:
    """Total width of a proportion's confidence interval (95% by default) from ``n`` items.

    ``w = 2 z sqrt(p(1−p)/n · (N−n)/(N−1))``; without a population the correction ``(N−n)/(N−1)`` is
    1.
    A census (``n = N``) has width 0. Example: n = 385, p = 0.5, infinite N → 0.0999.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    fpc = 1.0
    if population is not None:
        if n > population:
            raise ValueError("n cannot exceed the population")
        fpc = 0.0 if population == 1 else (population - n) / (population - 1)
    return 2 * z * math.sqrt(p * (1 - p) / n * fpc)


def advice_lines(n: int, population: int) -> list[str]:
    """What ``hilbot sample`` says about sample sizes, for a run of ``population`` items sampled to
    ``n``."""
    lines = [
        f"95% interval of a proportion (worst case p = 0.5), for this run's {population} items:"
    ]
    for width in ADVICE_WIDTHS:
        lines.append(
            f"  width {width:.2f} (±{width / 2:.3f}) needs "
            f"{sample_size(width, population=population)} items ({sample_size(width)} from an "
            "unlimited pool)"
        )
    width = interval_width(n, population=population)
    lines.append(f"  this sample's {n} items give width {width:.3f} (±{width / 2:.3f})")
    return lines


# --------------------------------------------------------------------------- allocation


def allocate(sizes: Sequence[int], n: int, allocation: Allocation = "proportional") -> list[int]:
    """How many items each stratum gives, by the module's rules; ``sizes`` are the strata's sizes in
    stratum order."""
    if any(size < 0 for size in sizes):
        raise ValueError("stratum sizes cannot be negative")
    if not 0 <= n <= sum(sizes):
        raise ValueError("n must be between 0 and the number of items")
    if allocation == "proportional":
        return proportional(sizes, n)
    if allocation == "equal":
        return equal(sizes, n)
    raise ValueError(f"unknown allocation {allocation!r}")


def proportional(sizes: Sequence[int], n: int) -> list[int]:
    """Largest-remainder rounding of ``n·N_h/N`` (exact integer arithmetic), then at least 1 per
    non-empty stratum when n allows."""
    total = sum(sizes)
    if total == 0 or n == 0:
        return [0 for _ in sizes]
    counts = [n * size // total for size in sizes]
    remainders = [n * size % total for size in sizes]  # the fractional parts, times N
    order = sorted(range(len(sizes)), key=lambda h: (-remainders[h], h))
    for h in order[: n - sum(counts)]:
        counts[h] += 1
    nonempty = [h for h, size in enumerate(sizes) if size > 0]
    if n >= len(nonempty):
        for h in nonempty:
            if counts[h] == 0:
                donor = max(nonempty, key=lambda d: (counts[d], sizes[d], -d))
                counts[donor] -= 1  # n ≥ strata, so while one has 0 another has at least 2
                counts[h] = 1
    return counts


def equal(sizes: Sequence[int], n: int) -> list[int]:
    """``n`` split evenly, capped at each stratum's size, the surplus shared among strata with items
    left (earliest first)."""
    if n == 0:
        return [0 for _ in sizes]
    # the highest level L with Σ min(N_h, L) ≤ n, then one more each to the earliest strata still
    # above L
    low, high = 0, max(sizes)
    while low < high:
        mid = (low + high + 1) // 2
        if sum(min(size, mid) for size in sizes) <= n:
            low = mid
        else:
            high = mid - 1
    counts = [min(size, low) for size in sizes]
    left = n - sum(counts)
    for h, size in enumerate(sizes):
        if left == 0:
            break
        if size > counts[h]:
            counts[h] += 1
            left -= 1
    return counts


# --------------------------------------------------------------------------- strata and drawing


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def field_value(run: Run, item: ItemData, name: str) -> str | None:
    """The item's value for a stratum field, as text (None when it has none)."""
    if name == "category":
        return item.query.category
    if name == "kind":
        return run.header.kind
    if name == "set":
        return run.header.set
    if name == "verdict":
        return item.evaluation.verdict
    return _text(item.features.get(name))


def known_fields(run: Run) -> list[str]:
    """Fields some item of the run has: ``kind``, ``set``, ``category`` and ``verdict`` if any item
    has one, and every feature."""
    names = ["kind", "set"]
    if any(item.query.category is not None for item in run.items):
        names.append("category")
    if any(item.evaluation.verdict is not None for item in run.items):
        names.append("verdict")
    features = sorted({key for item in run.items for key in item.features} - set(BUILTIN_FIELDS))
    return names + features


def parse_fields(by: str | Sequence[str], run: Run) -> list[str]:
    """The ``--by`` fields, checked against what the run's items have."""
    names = (
        [name.strip() for name in by.split(",")]
        if isinstance(by, str)
        else [name.strip() for name in by]
    )
    from ._input import listed_once

    known = known_fields(run)
    for name in listed_once(names, "--by", "field", HilbotError, f"from: {', '.join(known)}"):
        if name not in known:
            raise HilbotError(
                f"no item of run {run.run_id!r} has the field {name!r}",
                where="--by",
                fix=f"use one of the fields the items have: {', '.join(known)}",
            )
    return names


def stratum_of(run: Run, item: ItemData, fields: Sequence[str]) -> tuple[str, ...]:
    """The item's stratum: its value for each field, ``(none)`` where it has none."""
    return tuple(
        NONE if (value := field_value(run, item, name)) is None else value for name in fields
    )


def stratum_label(stratum: tuple[str, ...]) -> str:
    """A stratum as shown: its values joined by `` / ``."""
    return " / ".join(stratum)


def _order(stratum: tuple[str, ...]) -> tuple[tuple[bool, str], ...]:
    return tuple((value == NONE, value) for value in stratum)


def stratum_rng(seed: int | str, stratum: tuple[str, ...]) -> random.Random:
    """The stratum's own generator: seeded with the first 8 bytes of
    ``sha256(f"{seed}:{json.dumps(list(stratum))}")``."""
    digest = hashlib.sha256(f"{seed}:{json.dumps(list(stratum))}".encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def draw_order(seed: int | str, stratum: tuple[str, ...], size: int) -> list[int]:
    """Positions 0…size−1 of a stratum's items (in run order), shuffled by the stratum's generator;
    a sample takes a prefix."""
    positions = list(range(size))
    stratum_rng(seed, stratum).shuffle(positions)
    return positions


@dataclass
class Stratum:
    """One stratum of a sample."""

    key: tuple[str, ...]
    """The stratum's value for each field."""
    population: int
    """Items of the run in it."""
    sampled: int = 0
    """Items drawn from it."""

    @property
    def label(self) -> str:
        """The stratum as shown."""
        return stratum_label(self.key)


@dataclass
class Sample:
    """A stratified sample of a run's items."""

    source: str
    """The run sampled."""
    fields: list[str]
    """The stratum fields."""
    allocation: Allocation
    """How the sample was split among strata."""
    n: int
    """Items sampled."""
    seed: int | str
    """The seed."""
    population: int
    """Items in the run."""
    strata: list[Stratum]
    """The strata, in stratum order."""
    items: list[ItemData] = field(default_factory=list)
    """The sampled items, in the run's order."""

    def record(self) -> dict[str, Any]:
        """What the new run's header keeps about how it was drawn (its ``sample`` entry)."""
        return {
            "source": self.source,
            "by": self.fields,
            "allocation": self.allocation,
            "n": self.n,
            "seed": self.seed,
            "population": self.population,
            "strata": [
                {"stratum": list(s.key), "population": s.population, "sampled": s.sampled}
                for s in self.strata
            ],
        }

    def describe(self) -> str:
        """One line: what was sampled, how."""
        return (
            f"{self.n}-item sample of {self.source} by {','.join(self.fields)} "
            f"({self.allocation}, seed {self.seed})"
        )


def draw_sample(
    run: Run,
    n: int,
    by: str | Sequence[str],
    allocation: Allocation = "proportional",
    seed: int | str = 0,
) -> Sample:
    """Draw a stratified sample of ``n`` of ``run``'s items (see the module's rules); raises
    :class:`HilbotError` on bad input."""
    population = len(run.items)
    if n < 1:
        raise HilbotError(f"cannot sample {n} items", where="--n", fix="use --n 1 or more")
    if n > population:
        raise HilbotError(
            f"cannot sample {n} items: run {run.run_id!r} has {population}",
            where="--n",
            fix=f"use --n {population} or fewer (the run's size)",
        )
    fields = parse_fields(by, run)
    members: dict[tuple[str, ...], list[int]] = {}
    for index, item in enumerate(run.items):
        members.setdefault(stratum_of(run, item, fields), []).append(index)
    keys = sorted(members, key=_order)
    counts = allocate([len(members[key]) for key in keys], n, allocation)
    chosen: list[int] = []
    strata = []
    for key, count in zip(keys, counts):
        positions = members[key]
        chosen += [positions[p] for p in draw_order(seed, key, len(positions))[:count]]
        strata.append(Stratum(key, len(positions), count))
    items = [run.items[index].model_copy(deep=True) for index in sorted(chosen)]
    return Sample(run.run_id, fields, allocation, n, seed, population, strata, items)


def default_sample_id(source: str, n: int) -> str:
    """``<RUN>-sample-<n>``, the run id shortened so the id stays a valid one."""
    suffix = f"-sample-{n}"
    return f"{source[: 120 - len(suffix)]}{suffix}"


SEED_MAX = 2**32 - 1
"""The largest seed a sample takes (seeds are 0 to 2³² − 1, as every other seed of hilbot's)."""


def sample_run(
    store: Store,
    source: str,
    n: int,
    by: str | Sequence[str],
    *,
    allocation: Allocation = "proportional",
    seed: int | str = 0,
    run_id: str | None = None,
) -> tuple[Sample, str]:
    """Write a new run holding a stratified sample of run ``source``; returns the sample and the new
    run's id.

    The new run has the source's kind, set, dimensions and judge; its ``source`` is ``sample of
    RUN``, its ``label`` describes the sample and its ``sample`` entry records the fields,
    allocation, n, seed and the per-stratum counts. Without ``run_id`` the id is
    ``<RUN>-sample-<n>``, suffixed if taken.
    """
    if isinstance(seed, int) and not 0 <= seed <= SEED_MAX:
        raise HilbotError(
            f"--seed {seed} is out of range", fix=f"use a whole number from 0 to {SEED_MAX}"
        )
    generated = run_id is None
    if run_id is not None:
        validate_run_id(run_id)
        store.ensure_free(run_id)
    run = store.load_run(source)
    sample = draw_sample(run, n, by, allocation, seed)
    new_id = default_sample_id(run.run_id, n) if run_id is None else run_id
    header = run.header.model_copy(
        deep=True,
        update={
            "run_id": new_id,
            "created_at": utcnow(),
            "source": f"sample of {run.run_id}",
            "label": sample.describe(),
            "item_count": len(sample.items),
            "sample": sample.record(),
        },
    )
    summary = RunSummary(
        run_id=new_id, item_count=len(sample.items), averageScores=average_scores(sample.items)
    )
    placed = store.create_run(
        header,
        (QueryEvaluation(run_id=new_id, data=item) for item in sample.items),
        summary,
        generated=generated,
    )
    return sample, placed.stem
