"""The review digest the chat bot posts on a schedule: progress per run, totals, top concerns, a
chart.

Everything here returns values; nothing prints or posts (the bot's channels render and escape
:meth:`Digest.lines`). Conventions:

* Figures come from the loaded log (:mod:`analysis.load`, the same fold as the ledger): only each
  reviewer's *current* judgment per (run, item, dimension) counts, so a changed rating counts once,
  at its latest value, and a skip after a rating replaces it. Records that are not ratings or skips
  are ignored.
* An average is None when there is nothing to average; :meth:`Digest.lines` shows it as "–".
* Stored figures are never rounded; only :meth:`Digest.lines` rounds, to 2 decimals.
* Δ is human − AI: negative means humans score lower than the AI. On a run's line it is taken
  over the same items as the human and AI figures beside it (items with their ``k`` ratings and
  an AI score: the mean of each item's human mean minus its AI score), so it is the difference
  of the two figures shown, and "–" when they are; on the "All runs" line, over every current
  rating whose item the AI scored (as in :func:`evaluation.reviews.summarize`).
* Runs are ordered by their most recent current rating (newest first), then by run id;
  a run's dimensions stay together, by name. Runs without ratings come last, by run id.
* The triage line (when the listed runs, or the log, hold ``triage_decision`` records) gives the
  figures of the triage report over them: changes triaged, decided by rules (and their share), and
  how many of the AI's accepts and rejects the humans decided the same way.
* The figures (``build_digest(figures=True)``) and the triage line are the lines the registered
  analyses give the digest (:attr:`analysis.registry.Analysis.digest`), asked for by name:
  :data:`FIGURES`, then :data:`TRIAGE`. The digest imports no analysis; an analysis of gold labels
  gets the gold-label frames (:mod:`analysis.gold`).
* What changed (``figures=True`` too): the regression alerts of the :data:`REGRESSIONS` analysis
  over the "new" window [since, now) against the window of the same length before it
  (:attr:`analysis.registry.Inputs.window`; none when ``since`` is None), and the synthesis and
  action items of the :data:`SYNTHESIS` analysis for the runs rated in the window (at most
  :data:`SYNTHESIZED_RUNS`, the most recently rated first).
* ``matplotlib`` is imported only inside :func:`chart_png`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Iterable, Sequence

from evaluation.text import visible

from .errors import AnalysisError
from .registry import Inputs, analyses
from .vocabulary import exact_means

if TYPE_CHECKING:  # numpy, pandas and the store's models are imported when the digest is built
    import numpy as np
    import pandas as pd

    from evaluation.config import HilbotConfig
    from evaluation.log import LogIssue
    from evaluation.store import Store

    from .load import Frames

DASH = "–"
"""How a missing average is shown."""
RUN_LINES = 12
"""Run lines in a digest message (the most recently rated first); the rest are counted."""
FIGURES = ("agreement", "calibration")
"""The analyses whose digest lines are the figures, in order."""
TRIAGE = "triage"
"""The analysis whose digest line is the triage line."""
TOP_CONCERNS = 5
"""How many concern tags the digest lists."""
REGRESSIONS = "patterns"
"""The analysis whose digest lines are the regression alerts of the digest's window."""
SYNTHESIS = "synthesize"
"""The analysis whose digest lines are the synthesis and action items of the runs rated anew."""
SYNTHESIZED_RUNS = 3
"""Runs with new ratings whose synthesis a digest carries (the most recently rated first)."""


@dataclass(frozen=True)
class RunProgress:
    """Review progress of one run on one dimension."""

    run_id: str
    """The run."""
    dimension: str
    """The dimension reviewed."""
    items: int
    """Items in the run (plus any judged item the run file does not hold)."""
    rated_items: int
    """Items with at least ``review.k`` current ratings."""
    ratings: int
    """Current ratings (latest per reviewer and item)."""
    skips: int
    """Current skips (latest per reviewer and item)."""
    reviewers: int
    """Reviewers with a current rating or skip."""
    human_average: float | None
    """Mean over rated items of each item's mean human score; None when no item is rated."""
    ai_average: float | None
    """Mean AI score (``ai_score``) over rated items the AI scored; None when there are none."""
    ai_vs_human_delta: float | None
    """Human − AI over the rated items the AI scored (each item's human mean minus its AI score,
    averaged): the difference of :attr:`human_average` and :attr:`ai_average` when every rated item
    is scored; None when no rated item is."""

    @property
    def label(self) -> str:
        """``run-id · dimension``, as the chart and the digest lines name it."""
        return f"{self.run_id} · {self.dimension}"


@dataclass(frozen=True)
class Digest:
    """What a scheduled digest says; :meth:`lines` is its plain text."""

    generated_at: datetime
    """When the digest was built (UTC)."""
    since: datetime | None
    """Start of the "new" window; None = all time."""
    runs: list[RunProgress]
    """One entry per run and dimension, most recently rated run first."""
    new_ratings: int
    """Current ratings of the listed runs with timestamp >= ``since`` (all when ``since`` is
    None)."""
    new_reviewers: int
    """Distinct reviewers of those new ratings."""
    human_average: float | None
    """Mean human score over all current ratings of the listed runs (rating-weighted)."""
    ai_vs_human_delta: float | None
    """Mean (human − AI) over all current ratings of the listed runs whose item the AI scored."""
    top_concerns: list[tuple[str, int]]
    """Up to 5 (tag, ratings carrying it) on current ratings, most frequent first, ties by name."""
    chart_png: bytes | None
    """The :func:`chart_png` image of runs with ratings, or None (no ratings, or
    ``chart=False``)."""
    figures: tuple[str, ...] = ()
    """Agreement and judge-calibration lines from the analysis (``build_digest(figures=True)``)."""
    triage: str | None = None
    """The diff-triage line (:func:`analysis.triage.digest_line`); None when the listed runs have no
    triage decision."""
    alerts: tuple[str, ...] = ()
    """Regression alerts (``build_digest(figures=True)``): the patterns whose success rate fell
    significantly in the "new" window against the window of the same length before it, each with
    the interval of its fall (the :data:`REGRESSIONS` analysis's lines)."""
    synthesis: tuple[str, ...] = ()
    """The synthesis and first action items of the runs rated in the "new" window
    (``build_digest(figures=True)``; the :data:`SYNTHESIS` analysis's lines)."""
    report_html: bytes | None = None
    """The dashboard's pages as one HTML file, attached to the posted digest (``hilbot digest
    --report``); None otherwise."""

    @property
    def total_ratings(self) -> int:
        """Current ratings over all listed runs."""
        return sum(run.ratings for run in self.runs)

    def lines(self) -> list[str]:
        """Plain-text lines, no markup: title, one line per run, totals, top concerns.

        Names from the logs (runs, dimensions, tags) are shown through
        :func:`evaluation.text.visible`.
        """
        return [visible(line, newlines=False) for line in self._lines()]

    def _lines(self) -> list[str]:
        lines = [f"hilbot digest · {_when(self.generated_at)}"]
        lines += [_run_line(run) for run in self.runs[:RUN_LINES]]
        if len(self.runs) > RUN_LINES:
            lines.append(f"… and {len(self.runs) - RUN_LINES} more (run, dimension) lines")
        if self.triage:
            lines.append(self.triage)
        if not self.total_ratings:
            return [*lines, "No ratings yet."]
        lines += [self._totals_line(), self._new_line(), *self._alert_lines(), *self.figures]
        if self.top_concerns:
            lines.append("Top concerns: " + ", ".join(f"{tag} {n}" for tag, n in self.top_concerns))
        return lines + list(self.synthesis)

    def _alert_lines(self) -> list[str]:
        if not self.alerts or self.since is None:
            return []
        before = _span(self.generated_at - self.since)
        return [
            f"Regressions since {_when(self.since)} (against the {before} before):",
            *self.alerts,
        ]

    def text(self) -> str:
        """The lines joined by newlines."""
        return "\n".join(self.lines())

    def _totals_line(self) -> str:
        from evaluation.output import signed

        return (
            f"All runs: {_count(self.total_ratings, 'rating')} · human "
            f"{_number(self.human_average)} · human − AI {signed(self.ai_vs_human_delta)}"
        )

    def _new_line(self) -> str:
        who = f"{_count(self.new_ratings, 'rating')} from {_count(self.new_reviewers, 'reviewer')}"
        if self.since is None:
            return f"All time: {who}"
        if not self.new_ratings:
            return f"No new ratings since {_when(self.since)}"
        return f"New since {_when(self.since)}: {who}"


# --------------------------------------------------------------------------- building


@dataclass(frozen=True)
class _Slice:
    """One run and dimension the digest lists: its items' AI scores."""

    run_id: str
    dimension: str
    ai: dict[str, float | None]


def build_digest(
    store: Store,
    config: HilbotConfig,
    *,
    since: datetime | None = None,
    now: datetime | None = None,
    runs: Iterable[str] | None = None,
    chart: bool = True,
    figures: bool = False,
    issues: "list[LogIssue] | None" = None,
) -> Digest:
    """The digest of ``store``: every run with a human judgment, or exactly the ``runs`` given.

    A listed run gets a line per dimension of its header and per judged dimension, even with no
    ratings (0 rated); a listed run id with no run file counts as a run with no items.
    Naive datetimes are taken as UTC. A rating whose line has no time is never new.
    Unreadable lines of the logs go to ``issues``.
    """
    from evaluation.records import utcnow

    from .load import load

    frames = load(store, issues=issues)
    start = _aware(since) if since is not None else None
    generated = _aware(now or utcnow())
    window = (start, generated) if start is not None and start < generated else None
    inputs = Inputs(store, config, window=window).with_frames(frames)
    runs = list(runs) if runs is not None else None  # read twice: the run lines and the triage line
    tally = _Tally(frames, runs, config, start)
    progress = tally.progress(config.review.k)
    charted = [p for p in progress if p.ratings]
    ask = _Asker(inputs, issues)
    return Digest(
        generated_at=generated,
        since=start,
        runs=progress,
        new_ratings=tally.new_ratings,
        new_reviewers=tally.new_reviewers,
        human_average=tally.human_average(),
        ai_vs_human_delta=tally.ai_vs_human_delta(),
        top_concerns=tally.top_concerns(),
        chart_png=chart_png(charted) if chart and charted else None,
        figures=tuple(ask.all(FIGURES, runs)) if figures and tally.rated else (),
        triage=triage_line(inputs, runs),
        alerts=tuple(ask.lines(REGRESSIONS, runs)) if figures and tally.new_ratings else (),
        synthesis=(
            tuple(ask.lines(SYNTHESIS, tally.rated_anew()[:SYNTHESIZED_RUNS])) if figures else ()
        ),
    )


def run_progress(
    frames: "Frames", config: "HilbotConfig", runs: Sequence[str] | None = None
) -> list[RunProgress]:
    """Every run's progress per dimension, as the digest lists it (the most recently rated
    first), from frames already loaded: the dashboard's overview."""
    return _Tally(frames, list(runs) if runs is not None else None, config, None).progress(
        config.review.k
    )


def triage_line(inputs: Inputs, runs: Sequence[str] | None = None) -> str | None:
    """``Triage: 120 changes, 85 decided by rules (71%), humans agreed with the AI on 42 of 45
    (93%)`` over the triage decisions of the log (of the ``runs`` given), from the :data:`TRIAGE`
    analysis; None when there are none."""
    return next(iter(_lines(TRIAGE, inputs, runs)), None)


def analysis_lines(
    inputs: Inputs, issues: "list[LogIssue] | None" = None, runs: Sequence[str] | None = None
) -> list[str]:
    """The lines of the :data:`FIGURES` analyses: per dimension, Krippendorff's α (ordinal) with its
    band (on the independent ratings), and the judge's Spearman ρ and κ against the humans' gold
    labels (:mod:`analysis.gold`; the log's adjudications read, their bad lines to ``issues``)."""
    return _Asker(inputs, issues).all(FIGURES, runs)


class _Asker:
    """Asks the registered analyses for their digest lines, by name: an analysis of gold labels
    gets the gold-label frames (made once; the log's adjudications read, bad lines to
    ``issues``)."""

    def __init__(self, inputs: Inputs, issues: "list[LogIssue] | None") -> None:
        self.inputs, self.issues = inputs, issues
        self._gold: Inputs | None = None

    def lines(self, name: str, runs: Sequence[str] | None) -> list[str]:
        """The digest lines of the analysis ``name`` over the ``runs`` (None: every run)."""
        return _lines(name, self._gold_inputs() if analyses.get(name).gold else self.inputs, runs)

    def all(self, names: Iterable[str], runs: Sequence[str] | None) -> list[str]:
        """The lines of each analysis of ``names``, in order."""
        return [line for name in names for line in self.lines(name, runs)]

    def _gold_inputs(self) -> Inputs:
        if self._gold is None:
            from .gold import gold_frames, read_adjudications

            inputs = self.inputs
            adjudications = read_adjudications(inputs.store.ratings.path, self.issues)
            frames, _ = gold_frames(inputs.frames, adjudications, inputs.config)
            self._gold = inputs.with_frames(frames)
        return self._gold


def _lines(name: str, inputs: Inputs, runs: Sequence[str] | None) -> list[str]:
    """The digest lines of the analysis ``name`` (none when it gives none)."""
    spec = analyses.get(name)
    return spec.digest(inputs, runs) if spec.digest is not None else []


def top_concerns(ratings: Iterable, limit: int = TOP_CONCERNS) -> list[tuple[str, int]]:
    """The most frequent concern tags (each counted once per rating), ties by name."""
    counts = Counter(tag for r in ratings for tag in set(r.concerns))
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]


def _ai(
    items: "pd.DataFrame", dimension: str, config: "HilbotConfig | None" = None
) -> dict[str, float | None]:
    from .load import ai_score_column

    metric = config.metric_for(dimension) if config is not None else None
    return {
        i: (None if a != a else float(a))
        for i, a in zip(items["item_id"], ai_score_column(items, dimension, metric))
    }


class _Tally:
    """The current ratings and skips of the (run, dimension) slices the digest lists, counted with
    arrays: a slice and an item code per row, no object per rating.

    Slices are ordered most recently rated run first, then run id; a run's dimensions together, by
    name. Every mean is :func:`statistics.mean`'s (:func:`analysis.vocabulary.exact_means`)."""

    def __init__(
        self,
        frames: "Frames",
        runs: Sequence[str] | None,
        config: "HilbotConfig | None",
        start: datetime | None,
    ) -> None:
        import numpy as np

        self.frames, self.config = frames, config
        ratings, skips = frames.ratings, frames.skips
        self.n = len(ratings)
        code, self.names = {}, {}
        for column in ("run_id", "dimension", "item_id", "reviewer"):
            code[column], self.names[column] = _factorized(ratings[column], skips[column])
        dimensions = len(self.names["dimension"])
        pair = code["run_id"] * dimensions + code["dimension"]
        present = np.unique(pair).tolist()
        slices = self._listed(present, runs)
        where = {(s.run_id, s.dimension): n for n, s in enumerate(slices)}
        lookup = np.full(len(self.names["run_id"]) * dimensions, -1, dtype=np.int64)
        for p in present:
            run_id, dimension = self._pair(p)
            lookup[p] = where.get((run_id, dimension), -1)
        self.stamp = _nanoseconds(ratings["timestamp"])
        row = lookup[pair] if len(pair) else np.zeros(0, dtype=np.int64)
        self.slices, row = self._ordered(slices, row)
        self.row, self.item, self.reviewer = row, code["item_id"], code["reviewer"]
        self.score = ratings["score"].to_numpy(dtype=np.float64)
        self.listed = np.flatnonzero(row[: self.n] >= 0)
        self.rated = len(self.listed) > 0
        new = self.listed
        if start is not None:
            moment = self.stamp[new]
            new = new[(moment != _NAT) & (moment >= _ns(start))]
        self.new = new
        self.new_ratings = len(new)
        self.new_reviewers = len(np.unique(self.reviewer[new]))
        self._items()

    def _pair(self, code: int) -> tuple[str, str]:
        """The (run, dimension) of a pair code."""
        run_id, dimension = divmod(code, len(self.names["dimension"]))
        return self.names["run_id"][run_id], self.names["dimension"][dimension]

    def _listed(self, present: list[int], runs: Sequence[str] | None) -> list[_Slice]:
        """One slice per (run, dimension) the digest lists: every judged one of the listed runs,
        and each dimension of a listed run's header."""
        from evaluation.records import RunHeader

        frames = self.frames
        by_run: dict[str, set[str]] = {}
        for p in present:
            run_id, dimension = self._pair(p)
            by_run.setdefault(run_id, set()).add(dimension)
        listed = list(dict.fromkeys(runs)) if runs is not None else sorted(by_run)
        headers = dict(zip(frames.runs["run_id"], frames.runs["dimensions"]))
        slices = []
        for run_id in listed:
            judged = by_run.get(run_id, set())
            if runs is not None:  # a run with no file gets the header's default dimension
                judged |= set(
                    headers.get(run_id, RunHeader(run_id=run_id).dimensions[0]).split(",")
                )
            items = frames.items[frames.items["run_id"] == run_id]
            slices += [_Slice(run_id, d, _ai(items, d, self.config)) for d in sorted(judged)]
        return slices

    def _ordered(
        self, slices: list[_Slice], row: "np.ndarray"
    ) -> tuple[list[_Slice], "np.ndarray"]:
        """The slices most recently rated run first (then run id, dimension), and each row's slice
        renumbered in that order."""
        import numpy as np
        import pandas as pd

        rated = np.flatnonzero((row[: self.n] >= 0) & (self.stamp != _NAT))
        latest_of = np.full(len(slices), _NAT, dtype=np.int64)
        np.maximum.at(latest_of, row[rated], self.stamp[rated])
        latest: dict[str, datetime] = {}
        for s, moment in zip(slices, latest_of.tolist()):
            if moment != _NAT:
                when = pd.Timestamp(moment, tz="UTC").to_pydatetime()
                if s.run_id not in latest or when > latest[s.run_id]:
                    latest[s.run_id] = when

        def key(n: int) -> tuple:
            s = slices[n]
            when = latest.get(s.run_id)
            return (when is None, -when.timestamp() if when else 0.0, s.run_id, s.dimension)

        order = sorted(range(len(slices)), key=key)
        place = np.empty(len(slices) + 1, dtype=np.int64)
        place[order] = np.arange(len(slices))
        place[-1] = -1  # a row of no listed slice stays -1
        return [slices[n] for n in order], place[row]

    def _items(self) -> None:
        """Per (slice, item) rated: its ratings, its mean score and its AI score."""
        import numpy as np
        import pandas as pd

        listed, items = self.listed, len(self.names["item_id"])
        pair_code, pairs = pd.factorize(self.row[listed] * items + self.item[listed])
        pairs = np.asarray(pairs, dtype=np.int64)
        self.pair_code, self.pair_slice = pair_code, pairs // items
        names = self.names["item_id"]
        self.pair_item = [names[i] for i in (pairs % items).tolist()]
        self.pair_count = np.bincount(pair_code, minlength=len(pairs))
        self.pair_mean = np.array(
            exact_means(pair_code, self.score[listed], len(pairs)), dtype=np.float64
        )
        self.pair_ai = np.array(
            [
                np.nan if (ai := self.slices[s].ai.get(item)) is None else ai
                for s, item in zip(self.pair_slice.tolist(), self.pair_item)
            ],
            dtype=np.float64,
        )

    def progress(self, k: int) -> list[RunProgress]:
        """Each slice's progress (``k``: the ratings an item needs to count as rated)."""
        import numpy as np

        count = len(self.slices)
        judged = np.flatnonzero(self.row >= 0)
        ratings = np.bincount(self.row[self.listed], minlength=count)
        skips = np.bincount(self.row[judged], minlength=count) - ratings
        reviewers = _distinct(self.row[judged], self.reviewer[judged], count)
        seen: list[set[str]] = [set() for _ in range(count)]
        names = self.names["item_id"]
        for p in np.unique(self.row[judged] * len(names) + self.item[judged]).tolist():
            seen[p // len(names)].add(names[p % len(names)])
        rated = self.pair_count >= k
        scored = rated & ~np.isnan(self.pair_ai)
        slice_of, mean, ai = self.pair_slice, self.pair_mean, self.pair_ai
        human = exact_means(slice_of[rated], mean[rated], count)
        ai_average = exact_means(slice_of[scored], ai[scored], count)
        delta = exact_means(slice_of[scored], mean[scored] - ai[scored], count)
        rated_items = np.bincount(slice_of[rated], minlength=count).tolist()
        return [
            RunProgress(
                run_id=s.run_id,
                dimension=s.dimension,
                items=len(set(s.ai) | seen[n]),
                rated_items=rated_items[n],
                ratings=int(ratings[n]),
                skips=int(skips[n]),
                reviewers=int(reviewers[n]),
                human_average=human[n],
                ai_average=ai_average[n],
                ai_vs_human_delta=delta[n],
            )
            for n, s in enumerate(self.slices)
        ]

    def human_average(self) -> float | None:
        """The mean score of every listed rating."""
        import numpy as np

        scores = self.score[self.listed]
        return exact_means(np.zeros(len(scores), dtype=np.int64), scores, 1)[0]

    def ai_vs_human_delta(self) -> float | None:
        """The mean (score − AI score) of every listed rating whose item the AI scored."""
        import numpy as np

        ai = self.pair_ai[self.pair_code]
        scored = ~np.isnan(ai)
        deltas = self.score[self.listed][scored] - ai[scored]
        return exact_means(np.zeros(len(deltas), dtype=np.int64), deltas, 1)[0]

    def rated_anew(self) -> list[str]:
        """The runs with a new rating, in slice order."""
        import numpy as np

        anew = np.unique(self.row[self.new]).tolist()
        return list(dict.fromkeys(self.slices[n].run_id for n in anew))

    def top_concerns(self, limit: int = TOP_CONCERNS) -> list[tuple[str, int]]:
        """The most frequent concern tags of the listed ratings (a tag once per rating: the
        concerns frame holds it so), ties by name."""
        concerns = self.frames.concerns
        if not len(concerns):
            return []
        runs = list(dict.fromkeys(s.run_id for s in self.slices))
        tags = concerns.loc[concerns["run_id"].isin(runs).to_numpy(), "tag"]
        counts = tags.value_counts(sort=False)
        pairs = zip(map(str, counts.index), map(int, counts.to_numpy()))
        return sorted(pairs, key=lambda kv: (-kv[1], kv[0]))[:limit]


_NAT = -(2**63)
"""NaT as int64 nanoseconds."""


def _ns(moment: datetime) -> int:
    import pandas as pd

    return int(pd.Timestamp(moment).value)


def _nanoseconds(stamps: "pd.Series") -> "np.ndarray":
    """A frame's timestamps as int64 nanoseconds since the epoch (UTC); NaT as :data:`_NAT`."""
    import numpy as np
    import pandas as pd

    utc = pd.to_datetime(stamps, utc=True).dt.tz_localize(None)
    return utc.to_numpy(dtype="datetime64[ns]").view(np.int64)


def _factorized(*columns: "pd.Series") -> tuple["np.ndarray", list]:
    """One code per value of the columns, end to end, and the values by code."""
    import numpy as np
    import pandas as pd

    values = np.concatenate([c.to_numpy(dtype=object) for c in columns])
    code, names = pd.factorize(values, use_na_sentinel=False)
    return code.astype(np.int64), list(names)


def _distinct(group: "np.ndarray", value: "np.ndarray", groups: int) -> "np.ndarray":
    """Per group, how many distinct values it has."""
    import numpy as np

    pairs = np.unique(group * (int(value.max(initial=0)) + 1) + value)
    return np.bincount(pairs // (int(value.max(initial=0)) + 1), minlength=groups)


def _aware(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive datetime is taken as UTC."""
    return (
        moment.replace(tzinfo=timezone.utc)
        if moment.tzinfo is None
        else moment.astimezone(timezone.utc)
    )


# --------------------------------------------------------------------------- text


def _when(moment: datetime) -> str:
    return _aware(moment).strftime("%Y-%m-%d %H:%M UTC")


def _span(length: timedelta) -> str:
    """A window's length in words: ``24 hours``, ``7 days``, ``30 minutes``."""
    minutes = round(length.total_seconds() / 60)
    if minutes < 120:
        return _count(minutes, "minute")
    if minutes < 48 * 60:
        return _count(round(minutes / 60), "hour")
    return _count(round(minutes / 1440), "day")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _number(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}"


def _run_line(run: RunProgress) -> str:
    from evaluation.output import signed

    counts = _count(run.ratings, "rating") + (f", {_count(run.skips, 'skip')}" if run.skips else "")
    return (
        f"{run.label}: {run.rated_items}/{run.items} rated · {counts} · human "
        f"{_number(run.human_average)} · AI {_number(run.ai_average)} · human − AI "
        f"{signed(run.ai_vs_human_delta)}"
    )


# --------------------------------------------------------------------------- chart


def chart_png(runs: list[RunProgress]) -> bytes:
    """One PNG: per run and dimension, human vs AI average as paired bars on 0–1, annotated
    rated/items.

    Uses matplotlib's Agg backend through a bare ``Figure`` (no pyplot state, so nothing is left
    open). A missing average draws no bar. Raises ValueError for an empty list.
    """
    if not runs:
        raise AnalysisError("no run to chart", fix="give chart_png at least one run")
    import warnings
    from io import BytesIO

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 1.5 + 0.55 * len(runs)), dpi=90, layout="constrained")
    _draw(fig.add_subplot(), runs)
    fig.suptitle("Human vs AI average (0–1, rated items)", fontsize=9, x=0.02, ha="left")
    fig.legend(loc="outside upper right", ncol=2, fontsize=8, frameon=False)
    buffer = BytesIO()
    with (
        warnings.catch_warnings()
    ):  # a glyph the font lacks is drawn as a box, not reported on stderr
        warnings.simplefilter("ignore")
        fig.savefig(buffer, format="png")
    fig.clear()
    return buffer.getvalue()


def _draw(ax, runs: list[RunProgress]) -> None:
    """Paired horizontal bars, first run at the top."""
    from .charts import text

    rows = range(len(runs))
    human = [r.human_average or 0.0 for r in runs]
    ai = [r.ai_average or 0.0 for r in runs]
    ax.barh([y - 0.2 for y in rows], human, height=0.4, color="#2f6db5", label="human")
    ax.barh([y + 0.2 for y in rows], ai, height=0.4, color="#c9a227", label="AI")
    for y, run in zip(rows, runs):
        ax.text(
            max(human[y], ai[y]) + 0.02,
            y,
            f"{run.rated_items}/{run.items} rated",
            va="center",
            fontsize=8,
        )
    ax.set_yticks(list(rows), [text(r.label) for r in runs], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.3)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
