"""Regression detection: a run against a baseline run of the same set.

A query regresses when its ``overall`` drops by more than ``[regression] threshold``; the run
regresses when its average ``overall`` drops by more than ``average_threshold``. Items match by
id, else by query text. An item with no ``overall`` on either side (a failed judgment) is not
compared and is counted as ``unjudged``.

A run without a summary is incomplete (cut short, or still being evaluated). The default baseline
is the newest *complete* run of the set: newer incomplete ones are passed over, and the report
says so. An incomplete baseline asked for by name is used, said to be incomplete, and its
averages are taken over the items both runs have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from statistics import mean

from .config import RegressionSettings
from .errors import HilbotError
from .records import ItemData
from .runs import Run, ai_score
from .store import Store
from .text import visible


@dataclass
class QueryRegression:
    """One query whose overall dropped past the threshold."""

    item_id: str
    query: str
    before: float
    after: float

    @property
    def drop(self) -> float:
        return round(self.before - self.after, 4)


@dataclass
class RegressionReport:
    """The outcome of comparing a run with its baseline."""

    run_id: str
    baseline_id: str | None
    queries: list[QueryRegression] = field(default_factory=list)
    average_before: float | None = None
    average_after: float | None = None
    average_regressed: bool = False
    compared: int = 0
    unjudged: int = 0
    baseline_complete: bool = True
    """False when the baseline has no summary (then the averages cover only the items both runs have)."""
    baseline_items: int | None = None
    """Items in the baseline run."""
    baseline_expected: int | None = None
    """Items the baseline set out to evaluate (its header's ``item_count``), when known."""
    skipped: list[str] = field(default_factory=list)
    """Newer incomplete runs of the set passed over to choose the default baseline, newest first."""

    @property
    def count(self) -> int:
        """Regressions found: each query, plus one if the average regressed."""
        return len(self.queries) + int(self.average_regressed)

    def lines(self) -> list[str]:
        """Human-readable detail, one line per regression (queries made visible: they come from files)."""
        if self.baseline_id is None:
            return ["(no baseline run of this set yet: nothing to compare)"]
        out = []
        if self.skipped:
            out.append(f"  (baseline {self.baseline_id}: the latest complete run of this set; passed over incomplete "
                       f"run(s) {', '.join(self.skipped)}: no summary, cut short or still running)")
        if not self.baseline_complete:
            size = (f"{self.baseline_items} of {self.baseline_expected} items" if self.baseline_expected is not None
                    else f"{self.baseline_items} items")
            out.append(f"  (baseline {self.baseline_id} is incomplete: no summary, {size}; "
                       f"compared on the items both runs have)")
        out += [f'  ↓ "{visible(q.query, newlines=False)}" {q.before:.2f} → {q.after:.2f} (−{q.drop:.2f})'
               for q in self.queries]
        if self.average_regressed:
            out.append(f"  ↓ average overall {self.average_before:.2f} → {self.average_after:.2f}")
        return out


def _key_map(items: list[ItemData]) -> dict[str, ItemData]:
    mapping = {i.query.query: i for i in items}
    mapping.update({i.id: i for i in items})
    return mapping


def _average(items: list[ItemData]) -> float | None:
    values = [s for i in items if (s := ai_score(i, "overall")) is not None and not i.evaluation.error]
    return round(mean(values), 4) if values else None


def detect(run: Run, baseline: Run | None, settings: RegressionSettings, skipped: list[str] | None = None) -> RegressionReport:
    """Per-query and average regressions of ``run`` against ``baseline`` (``skipped``: the incomplete runs
    :func:`previous_run` passed over to choose it)."""
    report = RegressionReport(run.run_id, baseline.run_id if baseline else None)
    if baseline is None:
        return report
    report.skipped = list(skipped or ())
    report.baseline_complete = baseline.complete
    report.baseline_items, report.baseline_expected = len(baseline.items), baseline.header.item_count
    before = _key_map(baseline.items)
    paired: list[tuple[ItemData, ItemData]] = []
    for item in run.items:
        old = before.get(item.id) or before.get(item.query.query)
        if old is None:
            continue
        paired.append((old, item))
        a, b = ai_score(old, "overall"), ai_score(item, "overall")
        if a is None or b is None or old.evaluation.error or item.evaluation.error:
            report.unjudged += 1
            continue
        report.compared += 1
        if a - b > settings.threshold + 1e-9:
            report.queries.append(QueryRegression(item.id, item.query.query, a, b))
    if baseline.complete:
        report.average_before, report.average_after = _average(baseline.items), _average(run.items)
    else:  # a partial baseline's average is over other items than the run's: compare the same ones
        report.average_before = _average([old for old, _ in paired])
        report.average_after = _average([new for _, new in paired])
    if report.average_before is not None and report.average_after is not None:
        report.average_regressed = report.average_before - report.average_after > settings.average_threshold + 1e-9
    return report


def _complete(store: Store, run_id: str) -> bool:
    try:
        return store.load_run(run_id, []).complete
    except HilbotError:  # unreadable: not a baseline
        return False


def previous_run(store: Store, set_name: str, kind: str, *, before: datetime | None = None,
                 exclude: str | None = None) -> tuple[str | None, list[str]]:
    """The newest complete run of the same set and kind (created before ``before``): the default baseline,
    and the newer runs of the set passed over because they have no summary (most likely aborted, or still
    running), newest first. With no complete run there is no baseline.
    """
    candidates = []
    for run_id in store.run_ids():
        if run_id == exclude:
            continue
        header = store.run_header(run_id)
        if header is None or header.set != set_name or header.kind != kind:
            continue
        if before is None or header.created_at < before:
            candidates.append((header.created_at, run_id))
    skipped: list[str] = []
    for _, run_id in sorted(candidates, key=lambda c: c[0], reverse=True):  # stable: ties keep run_ids' order
        if _complete(store, run_id):
            return run_id, skipped
        skipped.append(run_id)
    return None, skipped
