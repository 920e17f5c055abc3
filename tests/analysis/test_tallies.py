"""The run listing's tallies from the columnar index equal the ledger's counts."""

from __future__ import annotations

import random

import pytest

from analysis.tallies import rating_tallies
from evaluation import Ledger, Store
from evaluation.records import Adjudication, Rating

from .test_load import ALICE, BOB, _random_log


@pytest.fixture(autouse=True)
def every_log_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Index these small logs too (by default a log under 1 MiB is read whole)."""
    monkeypatch.setenv("HILBOT_INDEX_MIN_BYTES", "0")


def _ledger_counts(store: Store) -> tuple[dict, list[str]]:
    issues: list = []
    ledger = Ledger.from_events(store.human_events(issues))
    counts: dict = {}
    for (run, item, dimension, _), judgment in ledger.judgments.items():
        if isinstance(judgment, Rating):
            counts[(run, item, dimension)] = counts.get((run, item, dimension), 0) + 1
    return counts, [str(i) for i in issues]


def _tallies(store: Store) -> tuple[dict, list[str]]:
    issues: list = []
    tallies = rating_tallies(store.ratings.path, issues)
    return tallies.counts, [str(i) for i in issues]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_tallies_equal_the_ledgers_counts(store, seed):
    _random_log(store, seed, n=1200)
    assert _tallies(store) == _ledger_counts(store)
    assert _tallies(store) == _ledger_counts(store)  # again, from the index written


def _adjudication(key: str, item: str, line_no: int) -> str:
    return Adjudication(
        run_id="alpha",
        item_id=item,
        dimension="quality",
        reviewer=ALICE if line_no % 2 else BOB,
        idempotency_key=key,
        decision="consensus",
        judgment="good",
        score=0.7,
    ).model_dump_json()


def test_a_key_an_adjudication_used_first_is_a_redelivery_for_the_tallies(store):
    """A rating whose idempotency key an earlier adjudication carries is not counted (the ledger
    keeps one event per key, whatever its type); one before the adjudication is."""
    _random_log(store, 5, n=600)
    lines = store.ratings.path.read_text().splitlines()
    rng = random.Random(5)
    keys = [f"k{n}" for n in range(600)]
    for n in range(20):
        at = rng.randrange(len(lines))
        lines.insert(at, _adjudication(rng.choice(keys), rng.choice(["a1", "a2"]), n))
    dave = Rating(
        run_id="beta",
        item_id="b1",
        dimension="quality",
        reviewer={"platform": "terminal", "id": "dave"},
        idempotency_key="shared",
        judgment="good",
        score=0.7,
    )
    lines += [_adjudication("shared", "a1", 1), dave.model_dump_json()]
    store.ratings.path.write_text("\n".join(lines) + "\n")
    counts, issues = _ledger_counts(store)
    assert _tallies(store) == (counts, issues)
    with_adjudications = counts
    store.ratings.path.write_text(
        "\n".join(line for line in lines if '"adjudication"' not in line) + "\n"
    )
    assert _ledger_counts(store)[0] != with_adjudications  # the collisions mattered


def test_without_a_writable_index_the_tallies_are_folded_from_the_scan(store, monkeypatch):
    from analysis.index import log as index_log

    def refuse(folder):
        raise PermissionError(13, "Permission denied", str(folder))

    _random_log(store, 6, n=800)
    monkeypatch.setattr(index_log, "_safe_folder", refuse)
    assert _tallies(store) == _ledger_counts(store)
    assert not (store.root / "cache").exists()


def test_the_tallies_kept_beside_the_index_are_used_until_the_log_grows(store, monkeypatch):
    """The second listing reads the tallies kept beside the index (no query); after an append or an
    adjudication they are queried again, and still equal the ledger's counts."""
    import analysis.tallies as tallies_module

    _random_log(store, 4, n=800)
    assert _tallies(store) == _ledger_counts(store)
    kept = store.root / "cache" / "index" / "ratings" / "tallies.json"
    assert kept.is_file()
    queried = []
    real = tallies_module._query
    monkeypatch.setattr(tallies_module, "_query", lambda *args: queried.append(1) or real(*args))
    assert _tallies(store) == _ledger_counts(store) and queried == []
    lines = store.ratings.path.read_bytes().splitlines(keepends=True)
    with open(store.ratings.path, "ab") as log:
        log.writelines(lines[:40])  # redeliveries and repeated lines
        log.write(_adjudication("fresh-key", "a1", 3).encode() + b"\n")
    assert _tallies(store) == _ledger_counts(store) and queried == [1]
    kept.write_text('{"key": "another index", "rows": [["alpha", "a1", "quality", 99]]}')
    assert _tallies(store) == _ledger_counts(store) and queried == [1, 1]
