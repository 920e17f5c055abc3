"""A realistic, large, deterministic review log for tests and benchmarks.

:func:`write_synthetic` writes runs (through :meth:`Store.create_run`) and a big
``ratings.jsonl`` whose lines are valid ``rating`` / ``skip`` / ``note`` / ``delivery`` records:

* **Runs**: two of every three are ``answer`` runs rated on ``quality`` and ``answer`` (the
  ``quality`` scale: excellent / good / okay / miss); every third is a ``search`` run rated on
  ``overall`` (the ``search`` scale: good / okay / poor / terrible). Dimensions the config does
  not define are dropped (at least one is kept).
* **Items** have a latent quality ``q``: normal noise, worse at larger ``leap_distance``
  (feature, 0–4), shifted by the query's category and the item's ``source_type`` (feature). The
  AI's ``overall`` is a noisy logistic function of ``q`` (so AI and humans correlate, imperfectly);
  answer runs also score ``answer_correctness`` and ``quote_recall``, search runs ``relevance``.
  About 4 % of items failed judging (no scores); verdicts are PASS / FAIL / UNSURE.
* **Ratings**: every reviewer has a bias; a judgment is ``q`` + bias + noise, cut into the
  scale's options (best first). First ratings cover as many (item, dimension, reviewer) keys as
  the budget allows (so most items have several reviewers and agreement is meaningful); the rest
  of the budget re-rates keys later — a quarter in the same session (minutes later, same
  ``session_date``), the rest days later — and a re-rating often changes the judgment.
  About 3 % of lines are skips (most replace an earlier rating), 1 % notes, 0.5 % redelivered
  taps (a line repeated verbatim, same idempotency key), 0.3 % chat ``delivery`` records.
  Options with ``ask_concerns`` carry 1–3 tags of the dimension's concern set (75 % of the time;
  ``leap_unjustified`` / ``conviction_too_high`` grow likelier with the leap); 0.3 % of the other
  ratings carry one tag anyway ("excellent with a concern").
* **Time**: runs are created over the first 20 days of a 30-day window starting 2026-01-05 UTC;
  a run's ratings fall between its creation and the window's end. The log is in time order.
  ``metadata.session_date`` is the UTC date of the event, ``metadata.source_type`` the item's.

The same ``seed`` and sizes give byte-identical files. Lines are written with orjson (an
installed, not yet declared, dependency: ``json.dumps`` of 1M dicts takes several times longer),
straight to ``store.ratings.path`` in one buffered append pass (not fsynced: it is test data).
The garbage collector is paused meanwhile; lines go through a 1 MB write buffer rather than big
joined chunks, which made glibc map and unmap memory over and over (5 s of page faults).

CLI (for benches): ``python -m analysis.synthetic DATA_DIR --ratings N [--runs R]
[--items-per-run I] [--reviewers K] [--seed S]``.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .errors import AnalysisError

if TYPE_CHECKING:
    from evaluation.config import HilbotConfig
    from evaluation.store import Store

START = datetime(2026, 1, 5, tzinfo=timezone.utc)
"""Start of the 30-day window."""
DAYS = 30
CATEGORIES = [
    "how-to",
    "concept",
    "troubleshooting",
    "api-reference",
    "market-thesis",
    "comparison",
]
_CATEGORY_P = [0.25, 0.2, 0.18, 0.15, 0.12, 0.1]
_CATEGORY_EFFECT = [0.3, 0.2, -0.3, 0.4, -0.5, 0.0]
SOURCE_TYPES = ["chat", "transcript", "article", "tweet", "docs"]
_SOURCE_P = [0.3, 0.15, 0.25, 0.1, 0.2]
_SOURCE_EFFECT = [0.0, -0.3, 0.2, -0.4, 0.3]
_LEAP_P = [0.3, 0.25, 0.2, 0.15, 0.1]
SKIP_REASONS = [None, "unclear", "not my area", "broken item"]
NOTE_TEXTS = [
    "The answer skips the key step.",
    "Second result is the one I wanted; ranking is off.",
    "Conviction is way ahead of the evidence here.",
    "Fine, but too long.",
    "Cites an outdated API.",
    "Would be excellent with a catalyst.",
]


@dataclass(frozen=True)
class SyntheticLog:
    """What :func:`write_synthetic` wrote."""

    path: Path
    """The ratings log."""
    lines: int
    """Lines appended to it."""
    ratings: int
    """Rating lines (first ratings and re-ratings)."""
    skips: int
    """Skip lines."""
    notes: int
    """Note lines."""
    redeliveries: int
    """Lines repeating an earlier line (same idempotency key)."""
    deliveries: int
    """Chat ``delivery`` lines."""
    runs: list[str]
    """Run ids created."""
    items: int
    """Items over all runs."""

    def to_dict(self) -> dict[str, Any]:
        """Plain values (the path as a string)."""
        return {**asdict(self), "path": str(self.path)}


def write_synthetic(
    store: "Store",
    *,
    ratings: int = 1_000_000,
    runs: int = 20,
    items_per_run: int = 500,
    reviewers: int = 40,
    seed: int = 0,
    config: "HilbotConfig | None" = None,
) -> SyntheticLog:
    """Write ``runs`` runs and append ``ratings`` lines of human events to ``store``'s ratings log.

    ``config`` supplies scales and concern tags (default: :func:`evaluation.load_config`, the
    built-ins merged with ``./hilbot.toml``). Refuses (``HilbotError``) if a run id exists.
    """
    import gc

    import numpy as np

    from evaluation.config import load_config

    if ratings < 0 or runs < 1 or items_per_run < 1 or reviewers < 1:
        raise AnalysisError(
            f"ratings={ratings}, runs={runs}, items_per_run={items_per_run}, reviewers={reviewers}",
            fix="use ratings ≥ 0 and runs, items_per_run and reviewers ≥ 1",
        )
    config = config or load_config()
    rng = np.random.default_rng(seed)

    # ---------------------------------------------------------------- runs and items
    run_specs = _write_runs(store, config, rng, runs, items_per_run)
    n_items = runs * items_per_run
    q_item = np.concatenate([spec["q"] for spec in run_specs])
    leap = np.concatenate([spec["leap"] for spec in run_specs])
    source = np.concatenate([spec["source"] for spec in run_specs])
    created_s = np.repeat([spec["created_s"] for spec in run_specs], items_per_run)

    # (item, dimension) pairs
    pair_item: list[int] = []
    pair_dim: list[str] = []
    for r, spec in enumerate(run_specs):
        for dim in spec["dimensions"]:
            pair_item.extend(range(r * items_per_run, (r + 1) * items_per_run))
            pair_dim.extend([dim] * items_per_run)
    p_item = np.asarray(pair_item)
    dims = sorted(set(pair_dim))
    p_dim = np.asarray([dims.index(d) for d in pair_dim])
    n_pairs = len(p_item)
    q_pair = q_item[p_item] + rng.normal(0, 0.3, n_pairs)

    scales = {d: config.scale_for(d) for d in dims}
    concern_sets = {d: config.concerns_for(d) for d in dims}

    # reviewers
    platforms = np.where(np.arange(reviewers) % 5 == 4, "terminal", "telegram")
    rev_dicts = []
    for k in range(reviewers):
        if platforms[k] == "terminal":
            rev_dicts.append({"platform": "terminal", "id": f"user{k}", "name": f"Reviewer {k}"})
        else:
            rev_dicts.append(
                {"platform": "telegram", "id": str(100_000 + k), "name": f"Reviewer {k}"}
            )
    bias = rng.normal(0, 0.35, reviewers)

    # ---------------------------------------------------------------- the event budget
    n_notes = round(ratings * 0.01)
    n_redeliver = round(ratings * 0.005)
    n_deliveries = round(ratings * 0.003)
    n_skips = round(ratings * 0.03)
    n_rate = max(0, ratings - n_notes - n_redeliver - n_deliveries - n_skips)
    n_keys = n_pairs * reviewers
    n_first = min(n_keys, int(n_rate * 0.8)) if n_rate else 0
    if n_rate and n_first == 0:
        n_first = min(n_keys, n_rate)
    n_rerate = n_rate - n_first

    end_s = DAYS * 86400.0
    first_keys = (
        rng.choice(n_keys, n_first, replace=False) if n_first else np.zeros(0, dtype=np.int64)
    )
    # events: key, time (s since START), kind (0 rating, 1 skip, 2 note, 3 delivery)
    first_pair = first_keys // reviewers
    first_lo = created_s[p_item[first_pair]] + 3600.0
    first_t = first_lo + rng.random(n_first) * np.maximum(end_s - 86400.0 - first_lo, 3600.0)

    if n_rerate and n_first:
        pick = rng.integers(0, n_first, n_rerate)
        same_session = rng.random(n_rerate) < 0.25
        delta = np.where(
            same_session, rng.uniform(30, 1800, n_rerate), rng.uniform(86400, 10 * 86400, n_rerate)
        )
        re_keys = first_keys[pick]
        re_t = np.minimum(first_t[pick] + delta, end_s - rng.uniform(1, 600, n_rerate))
        re_t = np.maximum(re_t, first_t[pick] + 1.0)
    else:
        re_keys, re_t = np.zeros(0, dtype=np.int64), np.zeros(0)
        n_rerate = 0 if not n_first else n_rerate
        if not n_first:
            n_rate = 0

    def after_rating(n: int) -> tuple[Any, Any]:
        if not n_first:
            return rng.integers(0, n_keys, n), rng.uniform(0, end_s, n)
        pick = rng.integers(0, n_first, n)
        return first_keys[pick], first_t[pick] + rng.uniform(60, 3 * 86400, n)

    skip_keys, skip_t = after_rating(n_skips)
    unrated = n_keys - n_first
    if unrated and n_skips:  # some skips of items never rated
        fresh = np.setdiff1d(rng.integers(0, n_keys, min(unrated, n_skips) * 3), first_keys)[
            : n_skips // 2
        ]
        skip_keys[: len(fresh)] = fresh
        skip_t[: len(fresh)] = created_s[p_item[fresh // reviewers]] + rng.uniform(
            3600, 20 * 86400, len(fresh)
        )
    note_keys, note_t = after_rating(n_notes)
    deliv_keys, deliv_t = after_rating(n_deliveries)
    deliv_t = deliv_t - 1800

    keys = np.concatenate([first_keys, re_keys, skip_keys, note_keys, deliv_keys]).astype(np.int64)
    times = np.concatenate([first_t, re_t, skip_t, note_t, deliv_t])
    kinds = np.concatenate(
        [
            np.zeros(n_first + len(re_keys), np.int8),
            np.ones(len(skip_keys), np.int8),
            np.full(len(note_keys), 2, np.int8),
            np.full(len(deliv_keys), 3, np.int8),
        ]
    )
    times = np.clip(times, 0, end_s - 0.001)
    order = np.lexsort((np.arange(len(times)), times))
    keys, times, kinds = keys[order], times[order], kinds[order]
    n_events = len(keys)

    # judgments for ratings: q + reviewer bias + noise, cut into the scale (best first)
    e_pair = keys // reviewers
    e_rev = keys % reviewers
    x = q_pair[e_pair] + bias[e_rev] + rng.normal(0, 0.55, n_events)
    e_dim = p_dim[e_pair]
    n_opts = {d: len(scales[d].options) for d in dims}
    option_idx = np.zeros(n_events, dtype=np.int64)
    for j, d in enumerate(dims):
        cuts = np.linspace(1.0, -0.8, n_opts[d] - 1) if n_opts[d] > 2 else np.array([0.1])
        mask = e_dim == j
        option_idx[mask] = (x[mask][:, None] <= cuts[None, :]).sum(axis=1)

    u_concern = rng.random(n_events)
    n_tags = rng.integers(1, 4, n_events)
    u_extra = rng.random((n_events, 6))
    u_conf = rng.random(n_events)
    u_note = rng.random(n_events)
    u_misc = rng.integers(0, 1 << 30, n_events)
    millis = np.round(times * 1000).astype("int64")
    stamps = np.datetime_as_string(
        np.datetime64("2026-01-05T00:00:00", "ms") + millis.astype("timedelta64[ms]"), unit="ms"
    ).tolist()

    # ---------------------------------------------------------------- write
    run_ids = [spec["run_id"] for spec in run_specs]
    item_run = np.repeat(np.arange(runs), items_per_run)
    item_names = [f"q{j:04d}" for j in range(items_per_run)]
    dumps = _dumps()
    counts = {"rating": 0, "skip": 0, "note": 0, "redeliver": 0, "delivery": 0}
    human = np.flatnonzero(kinds != 3)
    redeliver_at = (
        set(rng.choice(human, min(n_redeliver, len(human)), replace=False).tolist())
        if len(human)
        else set()
    )
    options = {d: scales[d].options for d in dims}
    path = store.ratings.path
    path.parent.mkdir(parents=True, exist_ok=True)
    collecting = gc.isenabled()
    gc.disable()  # a million short-lived dicts would trigger the collector constantly
    try:
        with open(path, "ab", buffering=1 << 20) as handle:
            if handle.tell() and _last_byte(path) != b"\n":
                handle.write(b"\n")
            write = handle.write
            for n in range(n_events):
                pair = int(e_pair[n])
                item = int(p_item[pair])
                dim = dims[e_dim[n]]
                rev = rev_dicts[e_rev[n]]
                platform = rev["platform"]
                stamp = stamps[n] + "Z"
                base = {
                    "v": 1,
                    "run_id": run_ids[item_run[item]],
                    "item_id": item_names[item % items_per_run],
                    "dimension": dim,
                    "reviewer": rev,
                    "channel": platform,
                    "idempotency_key": f"{platform}:{rev['id']}:{n}",
                    "timestamp": stamp,
                }
                kind = kinds[n]
                if kind == 0:
                    option = options[dim][option_idx[n]]
                    concerns: list[str] = []
                    tags = concern_sets[dim]
                    if tags and (
                        (option.ask_concerns and u_concern[n] < 0.75)
                        or (not option.ask_concerns and u_concern[n] < 0.003)
                    ):
                        count = 1 if not option.ask_concerns else int(n_tags[n])
                        concerns = _tags(tags, count, int(leap[item]), u_extra[n])
                    record = {
                        "type": "rating",
                        **base,
                        "judgment": option.value,
                        "score": option.score,
                        "concerns": concerns,
                    }
                    if option.ask_concerns and u_note[n] < 0.04:
                        record["note"] = NOTE_TEXTS[int(u_misc[n]) % len(NOTE_TEXTS)]
                    if u_conf[n] < 0.3:
                        record["confidence"] = ("high", "medium", "low")[int(u_misc[n]) % 3]
                    record["ai_verdict_shown"] = bool(u_conf[n] > 0.9)
                    record["labels"] = dict(option.labels)
                    meta = {"source_type": SOURCE_TYPES[source[item]], "session_date": stamp[:10]}
                    if u_note[n] > 0.995:
                        meta["user_notes"] = "see thread"
                    record["metadata"] = meta
                    counts["rating"] += 1
                elif kind == 1:
                    record = {"type": "skip", **base}
                    reason = SKIP_REASONS[int(u_misc[n]) % len(SKIP_REASONS)]
                    if reason:
                        record["skip_reason"] = reason
                    counts["skip"] += 1
                elif kind == 2:
                    record = {
                        "type": "note",
                        **base,
                        "text": NOTE_TEXTS[int(u_misc[n]) % len(NOTE_TEXTS)],
                    }
                    counts["note"] += 1
                else:
                    record = {
                        "type": "delivery",
                        "v": 1,
                        "run_id": base["run_id"],
                        "item_id": base["item_id"],
                        "dimension": dim,
                        "reviewer": rev,
                        "channel": "telegram",
                        "kind": "card",
                        "chat_id": rev["id"],
                        "message_id": str(n),
                        "timestamp": stamp,
                    }
                    counts["delivery"] += 1
                line = dumps(record)
                write(line)
                if n in redeliver_at:
                    write(line)
                    counts["redeliver"] += 1
            handle.flush()  # not fsynced: test data (unlike EventLog appends)
    finally:
        if collecting:
            gc.enable()
    total = sum(counts.values())
    return SyntheticLog(
        path=path,
        lines=total,
        ratings=counts["rating"],
        skips=counts["skip"],
        notes=counts["note"],
        redeliveries=counts["redeliver"],
        deliveries=counts["delivery"],
        runs=run_ids,
        items=n_items,
    )


def _dumps() -> Any:
    """One record as a JSON line (bytes, newline-terminated): orjson, else the json module (same
    bytes)."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - several times slower
        import json

        def dumps(record: dict) -> bytes:
            return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode(
                "utf-8"
            )

        return dumps
    option = orjson.OPT_APPEND_NEWLINE
    return lambda record: orjson.dumps(record, option=option)


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1)


def _tags(tags: list[str], count: int, leap: int, u: Any) -> list[str]:
    """``count`` distinct tags, in the set's order; leap-related tags likelier at larger leaps."""
    weights = []
    for tag in tags:
        w = 1.0
        if tag == "leap_unjustified":
            w += 1.2 * leap
        elif tag == "conviction_too_high":
            w += 0.5 * leap
        weights.append(w)
    total = sum(weights)
    chosen: set[int] = set()
    for k in range(min(count, len(tags))):
        target = u[k] * total
        acc = 0.0
        pick = len(tags) - 1
        for j, w in enumerate(weights):
            acc += w
            if target < acc:
                pick = j
                break
        chosen.add(pick)
    return [tags[j] for j in sorted(chosen)]


def _write_runs(
    store: "Store", config: "HilbotConfig", rng: Any, runs: int, items_per_run: int
) -> list[dict[str, Any]]:
    """Create the runs; return per run its id, dimensions, creation second and item arrays."""
    import numpy as np

    from evaluation.records import (
        Evaluation,
        ItemData,
        JudgeInfo,
        Query,
        QueryEvaluation,
        RunHeader,
        RunSummary,
    )
    from evaluation.runs import average_scores

    specs = []
    for r in range(runs):
        kind: Literal["search", "answer"] = "search" if r % 3 == 2 else "answer"
        wanted = ["overall"] if kind == "search" else ["quality", "answer"]
        dimensions = [d for d in wanted if d in config.dimensions] or [
            next(iter(config.dimensions))
        ]
        run_id = f"syn-{r:03d}-{kind}"
        created_s = r * (20 * 86400.0 / max(runs, 1))
        created = START + timedelta(seconds=created_s)
        category = rng.choice(len(CATEGORIES), items_per_run, p=_CATEGORY_P)
        source = rng.choice(len(SOURCE_TYPES), items_per_run, p=_SOURCE_P)
        leap = rng.choice(5, items_per_run, p=_LEAP_P)
        q = (
            rng.normal(0.75, 0.9, items_per_run)
            - 0.4 * leap
            + np.asarray(_CATEGORY_EFFECT)[category]
            + np.asarray(_SOURCE_EFFECT)[source]
        )
        ai = 1 / (1 + np.exp(-(1.3 * q + rng.normal(0, 0.6, items_per_run))))
        second = np.clip(ai + rng.normal(0, 0.12, items_per_run), 0, 1)
        third = np.clip(ai + rng.normal(0, 0.2, items_per_run), 0, 1)
        failed = rng.random(items_per_run) < 0.04
        unsure = rng.random(items_per_run) < 0.05
        conf = rng.uniform(0.4, 0.95, items_per_run)
        judge = "llm" if kind == "answer" else "lexical"
        header = RunHeader(
            run_id=run_id,
            set="synthetic",
            kind=kind,
            created_at=created,
            source="analysis.synthetic",
            judge=JudgeInfo(
                name=judge,
                params={"seed": r},
                prompt_hashes={"answer_correctness": f"{r:064x}"} if judge == "llm" else {},
            ),
            dimensions=dimensions,
            item_count=items_per_run,
            label=f"model-{r % 4}",
        )
        items = []
        for j in range(items_per_run):
            if failed[j]:
                evaluation = Evaluation(error="judge timed out", judge=judge)
            else:
                overall = round(float(ai[j]), 4)
                if kind == "answer":
                    scores = {
                        "overall": overall,
                        "answer_correctness": round(float(second[j]), 4),
                        "quote_recall": round(float(third[j]), 4),
                    }
                    confidence: float | str = round(float(conf[j]), 3)
                else:
                    scores = {"overall": overall, "relevance": round(float(second[j]), 4)}
                    confidence = ("low", "medium", "high")[min(2, int(conf[j] * 3.3) - 1)]
                verdict = "UNSURE" if unsure[j] else ("PASS" if overall >= 0.6 else "FAIL")
                evaluation = Evaluation(
                    scores=scores, verdict=verdict, confidence=confidence, judge=judge
                )
            cat = CATEGORIES[category[j]]
            items.append(
                QueryEvaluation(
                    run_id=run_id,
                    data=ItemData(
                        id=f"q{j:04d}",
                        query=Query(query=f"{cat} question {j} of run {r}", category=cat),
                        answer=f"answer {j}" if kind == "answer" else None,
                        evaluation=evaluation,
                        features={
                            "leap_distance": int(leap[j]),
                            "source_type": SOURCE_TYPES[source[j]],
                        },
                    ),
                )
            )
        summary = RunSummary(
            run_id=run_id,
            finished_at=created + timedelta(minutes=30),
            item_count=items_per_run,
            averageScores=average_scores(i.data for i in items),
        )
        store.create_run(header, items, summary)
        specs.append(
            {
                "run_id": run_id,
                "dimensions": dimensions,
                "created_s": created_s,
                "q": q,
                "leap": leap,
                "source": source,
            }
        )
    return specs


def main(argv: list[str] | None = None) -> int:
    """``python -m analysis.synthetic DATA_DIR --ratings N``: write a synthetic store, print what
    was written."""
    import argparse
    import json
    import time

    from evaluation.store import Store

    parser = argparse.ArgumentParser(
        prog="python -m analysis.synthetic", description=__doc__.split("\n")[0]
    )
    parser.add_argument("data_dir")
    parser.add_argument(
        "--ratings", type=int, default=1_000_000, help="lines of human events (default 1000000)"
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--items-per-run", type=int, default=500)
    parser.add_argument("--reviewers", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    log = write_synthetic(
        Store(args.data_dir),
        ratings=args.ratings,
        runs=args.runs,
        items_per_run=args.items_per_run,
        reviewers=args.reviewers,
        seed=args.seed,
    )
    print(json.dumps({**log.to_dict(), "seconds": round(time.perf_counter() - started, 2)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
