"""Regression detection: a run against a baseline run like it.

A query regresses when its ``overall`` drops by more than ``[regression] threshold``; the run
regresses when its average ``overall`` drops by more than ``average_threshold``. Items match by
id, else by query text. An item with no ``overall`` on either side (a failed judgment) is not
compared and is counted as ``unjudged``.

Runs are compared like with like. The default baseline is the newest *complete* run of the same
set and kind, of the same target (:func:`target_of`: the label, which for ``--outputs`` is the
model the outputs report, else ``module:function`` or the command) and judged by the same judge.
With none, the run is the first of its line and the report says so. A baseline asked for by name
is used whatever it is, and the report names what makes it unlike the run.

A run without a summary is incomplete (cut short, or still being evaluated): newer incomplete
runs are passed over for the default baseline, and the report says so. An incomplete baseline
asked for by name is used, said to be incomplete, and its averages are taken over the items both
runs have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from statistics import mean

from .config import RegressionSettings
from .errors import HilbotError
from .records import ItemData, RunHeader
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
    """False when the baseline has no summary (then the averages cover only the items both runs
    have)."""
    baseline_items: int | None = None
    """Items in the baseline run."""
    baseline_expected: int | None = None
    """Items the baseline set out to evaluate (its header's ``item_count``), when known."""
    skipped: list[str] = field(default_factory=list)
    """Newer incomplete runs of the set passed over to choose the default baseline, newest first."""
    line: str = ""
    """What the run is (``set cases with target grok-3 and judge lexical``): said when no run is
    like it."""
    unlike: list[str] = field(default_factory=list)
    """How a baseline asked for by name differs from the run (``target a, this run b``)."""

    @property
    def count(self) -> int:
        """Queries that regressed (a drop of the average is not a query, and is not counted)."""
        return len(self.queries)

    @property
    def regressed(self) -> bool:
        """Whether anything regressed: a query, or the average."""
        return bool(self.queries) or self.average_regressed

    def verdict(self) -> str | None:
        """The ``❌`` line when something regressed: the queries, and the average if it dropped."""
        if not self.regressed:
            return None
        drop = f"the average overall dropped {self.average_before:.2f} → {self.average_after:.2f}"
        if not self.queries:
            return f"❌ No query regressed, but {drop}"
        average = f"; {drop}" if self.average_regressed else ""
        return f"❌ {self.count} regression(s) detected{average}"

    def first_of_its_line(self) -> str | None:
        """What to say when no earlier run is like this one (there is no baseline), else None."""
        if self.baseline_id is not None:
            return None
        return f"no earlier complete run of {self.line} to compare with; this run is the baseline"

    def warning(self) -> str | None:
        """What to say when the baseline asked for is unlike the run, else None."""
        if not self.unlike:
            return None
        return (
            f"baseline {visible(self.baseline_id or '', newlines=False)} is unlike this run "
            f"({visible('; '.join(self.unlike), newlines=False)}): compared as asked"
        )

    def lines(self) -> list[str]:
        """Human-readable detail, one line per regression (queries made visible: they come from
        files)."""
        if self.baseline_id is None:
            return [f"({visible(self.first_of_its_line() or '', newlines=False)})"]
        out = []
        if self.skipped:
            passed = ", ".join(self.skipped)
            out.append(
                f"  (baseline {self.baseline_id}: the latest complete run of this set, "
                f"target and judge; passed over incomplete run(s) {passed}: no summary, cut "
                "short or still running)"
            )
        if not self.baseline_complete:
            size = (
                f"{self.baseline_items} of {self.baseline_expected} items"
                if self.baseline_expected is not None
                else f"{self.baseline_items} items"
            )
            out.append(
                f"  (baseline {self.baseline_id} is incomplete: no summary, {size}; "
                f"compared on the items both runs have)"
            )
        out += [
            f'  ↓ "{visible(q.query, newlines=False)}" {q.before:.2f} → {q.after:.2f} '
            f"(−{q.drop:.2f})"
            for q in self.queries
        ]
        if self.average_regressed:
            out.append(f"  ↓ average overall {self.average_before:.2f} → {self.average_after:.2f}")
        return out


def _key_map(items: list[ItemData]) -> dict[str, ItemData]:
    mapping = {i.query.query: i for i in items}
    mapping.update({i.id: i for i in items})
    return mapping


def _average(items: list[ItemData]) -> float | None:
    values = [
        s for i in items if (s := ai_score(i, "overall")) is not None and not i.evaluation.error
    ]
    return round(mean(values), 4) if values else None


def target_of(header: RunHeader) -> str:
    """What a run evaluated, as baselines match it: its label (for ``--outputs``, the model the
    outputs report), else its target (``module:function``, the command), else its source."""
    return header.label or header.target or header.source or "(unknown)"


def line_of(header: RunHeader) -> str:
    """``set cases with target grok-3 and judge lexical``: what a baseline shares with the run."""
    return f"set {header.set} with target {target_of(header)} and judge {header.judge.name}"


def unlike(run: RunHeader, baseline: RunHeader) -> list[str]:
    """How ``baseline`` differs from ``run`` in what makes runs comparable (``target a, this run
    b``)."""
    pairs = (
        ("set", baseline.set, run.set),
        ("kind", baseline.kind, run.kind),
        ("target", target_of(baseline), target_of(run)),
        ("judge", baseline.judge.name, run.judge.name),
    )
    return [f"{what} {theirs}, this run {ours}" for what, theirs, ours in pairs if theirs != ours]


def detect(
    run: Run, baseline: Run | None, settings: RegressionSettings, skipped: list[str] | None = None
) -> RegressionReport:
    """Per-query and average regressions of ``run`` against ``baseline`` (``skipped``: the
    incomplete runs :func:`previous_run` passed over to choose it)."""
    report = RegressionReport(
        run.run_id, baseline.run_id if baseline else None, line=line_of(run.header)
    )
    if baseline is None:
        return report
    report.unlike = unlike(run.header, baseline.header)
    report.skipped = list(skipped or ())
    report.baseline_complete = baseline.complete
    report.baseline_items, report.baseline_expected = (
        len(baseline.items),
        baseline.header.item_count,
    )
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
        report.average_regressed = (
            report.average_before - report.average_after > settings.average_threshold + 1e-9
        )
    return report


def _alike(header: RunHeader, target: str | None, judge: str | None) -> bool:
    """Whether a run is of ``target`` and by ``judge`` (either None: any)."""
    same_target = target is None or target_of(header) == target
    return same_target and (judge is None or header.judge.name == judge)


def _complete(store: Store, run_id: str) -> bool:
    try:
        return store.load_run(run_id, []).complete
    except HilbotError:  # unreadable: not a baseline
        return False


def previous_run(
    store: Store,
    set_name: str,
    kind: str,
    *,
    before: datetime | None = None,
    exclude: str | None = None,
    target: str | None = None,
    judge: str | None = None,
) -> tuple[str | None, list[str]]:
    """The newest complete run of the same set and kind (created before ``before``; of ``target``
    and ``judge`` when given, see :func:`target_of`): the default baseline, and the newer such
    runs passed over because they have no summary (most likely aborted, or still running), newest
    first. With no complete run there is no baseline.
    """
    candidates = []
    for run_id in store.run_ids():
        if run_id == exclude:
            continue
        header = store.run_header(run_id)
        if header is None or header.set != set_name or header.kind != kind:
            continue
        if not _alike(header, target, judge):
            continue
        if before is None or header.created_at < before:
            candidates.append((header.created_at, run_id))
    skipped: list[str] = []
    for _, run_id in sorted(
        candidates, key=lambda c: c[0], reverse=True
    ):  # stable: ties keep run_ids' order
        if _complete(store, run_id):
            return run_id, skipped
        skipped.append(run_id)
    return None, skipped
