"""Pattern discovery over ratings.

Per dimension: the distribution of judgments, success rate and mean score by source type, by
category and by concern tag, drift over time, and regressed patterns. Everything returns values.
Conventions:

* **Success** of a rating: its option's ``success`` flag, else score ≥ 0.5; rates carry Wilson
  95% intervals (:func:`analysis.stats.wilson_interval`). Every figure counts current ratings.
* **Distribution**: the scale's options best first, then judgments the scale does not offer (by
  name). A dimension the configuration lacks is described from the log itself, as every analysis
  does (:func:`analysis.vocabulary.judgment_means`): its judgments by mean score, here best first
  (ties by judgment, a judgment without a score last); its ``scale`` is None, its ``notes`` say it
  is not configured, a rating succeeds when its score ≥ 0.5, and no concern tag is offered (tags in
  use are listed). A ``dimension`` asked for that neither the configuration defines nor any selected
  rating carries is a :class:`AnalysisError` with the fix; a configured one without ratings gets an
  empty entry.
* **Source type** of a rating: the rating's own ``source_type`` (rating metadata), else its item's.
  **Category**: the item's. Missing values form their own group, keyed None.
* **Concern tags**: ``count`` = ratings carrying the tag, ``share`` = count / ratings of the
  dimension, and the mean score and success rate of those ratings. Every tag the dimension offers is
  listed, unused ones with count 0; tags in use but not offered are listed too. Order: count
  descending, then tag.
* **Windows**: consecutive ``window_days``-day windows from 00:00 UTC of the day of the earliest
  selected
  rating (all dimensions share them); empty windows in between are listed with n = 0. A rating
  without a time (its line has none) counts everywhere but in the windows. At most
  :data:`MAX_WINDOWS` windows.
* **Regressed pattern**: a (category, source type) group of one dimension whose *earlier* window
  (the first window where the group has ≥ ``min_ratings`` ratings) and *recent* window (the last
  such window, a different one) show a success-rate drop of at least
  ``min_drop`` **and** non-overlapping Wilson intervals (recent upper bound below earlier lower
  bound). The evidence lists both windows with their judgment counts.
* **Regression alerts** (the digest's lines, :func:`regression_alerts`): over the digest's window
  [since, until) against the window of the same length before it, each category, source type,
  bucket of an item feature (:func:`_bucket_labels`) and concern tag of a dimension whose success
  rate fell significantly — at least :data:`ALERT_MIN_RATINGS` ratings on each side and Newcombe's
  95% interval of the change (:func:`analysis.stats.newcombe_interval`) wholly below 0. For a
  concern tag a rating succeeds when it does not carry the tag (the alert: the tag became more
  frequent).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .errors import AnalysisError
from .registry import Inputs, Option, analysis
from .stats import Interval, Number, Undefined
from .vocabulary import (
    KEY4,
    Report,
    check_dimensions,
    judgment_means,
    key_value,
    not_configured,
    rate_fields,
    select,
    success_flags,
)

if TYPE_CHECKING:  # pandas and the configuration are imported when the analysis runs
    import numpy as np
    import pandas as pd

    from evaluation.config import HilbotConfig

MIN_RATINGS = 5
"""Ratings a window needs to count as the earlier or the recent one in regression detection."""
MIN_DROP = 0.5
"""Success-rate drop that makes a regression (with non-overlapping Wilson intervals)."""
MAX_WINDOWS = 1000
"""Most drift windows a report holds (ratings spread over longer get wider windows)."""
MAX_WINDOW_DAYS = 3650
"""Widest drift window, in days (ten years)."""


@dataclass(frozen=True)
class JudgmentCount(Report):
    """How often one judgment was given."""

    value: str
    count: int
    share: Number


@dataclass(frozen=True)
class Group(Report):
    """Success rate and mean score of the ratings of one group."""

    key: Any
    """The group's value (None: the ratings have none)."""
    n: int
    successes: int
    success_rate: Number
    ci: Interval | Undefined
    mean_score: Number


@dataclass(frozen=True)
class ConcernStats(Report):
    """One concern tag."""

    tag: str
    count: int
    """Ratings carrying the tag."""
    share: Number
    """count / ratings of the dimension."""
    mean_score: Number
    """Mean score of the ratings carrying the tag."""
    success_rate: Number


@dataclass(frozen=True)
class Window(Report):
    """Ratings given in one time window [start, end)."""

    start: datetime
    end: datetime
    n: int
    successes: int
    success_rate: Number
    ci: Interval | Undefined
    mean_score: Number
    judgments: dict[str, int]


@dataclass(frozen=True)
class Regression(Report):
    """A group rated well earlier and badly recently."""

    category: Any
    source_type: Any
    earlier: Window
    recent: Window
    drop: float
    """earlier success rate − recent success rate."""


@dataclass(frozen=True)
class DimensionPatterns(Report):
    """Patterns of one dimension."""

    dimension: str
    n: int
    distribution: tuple[JudgmentCount, ...]
    """Scale options best first, then judgments the scale does not offer; a dimension the
    configuration lacks: its judgments by mean score, best first."""
    overall: Group
    by_source_type: tuple[Group, ...]
    by_category: tuple[Group, ...]
    by_concern: tuple[ConcernStats, ...]
    drift: tuple[Window, ...]
    regressions: tuple[Regression, ...]
    groups_checked: int
    """(category, source type) groups with two windows of ≥ min_ratings ratings."""
    scale: str | None = None
    """Name of the dimension's scale; None when the dimension is not configured (described from the
    log)."""
    notes: tuple[str, ...] = ()
    """Anything unusual: a dimension the configuration lacks."""


@dataclass(frozen=True)
class PatternsReport(Report):
    """Pattern discovery, per dimension."""

    window_days: int
    min_ratings: int
    min_drop: float
    dimensions: tuple[DimensionPatterns, ...]


# ---------------------------------------------------------------- pieces


def _distribution(
    rated: pd.DataFrame, config: HilbotConfig, dimension: str
) -> tuple[JudgmentCount, ...]:
    dim = config.dimensions.get(dimension)
    counts = Counter(map(str, rated["judgment"].dropna()))
    if dim is None:  # from the log: best mean score first, a judgment without a score last
        values = [
            j
            for j, mean in sorted(
                judgment_means(rated), key=lambda p: (p[1] == math.inf, -p[1], p[0])
            )
        ]
    else:
        offered = [o.value for o in config.scales[dim.scale].options]
        values = offered + sorted(set(counts) - set(offered))
    n = len(rated)
    return tuple(
        JudgmentCount(v, counts[v], counts[v] / n if n else Undefined("no ratings")) for v in values
    )


def _group(key: Any, rows: pd.DataFrame) -> Group:
    return Group(key=key_value(key), **rate_fields(rows, rows["success"]))


def _by(rated: pd.DataFrame, column: str) -> tuple[Group, ...]:
    groups = rated.groupby(column, dropna=False, sort=False)
    made = [_group(key, rows) for key, rows in groups]
    return tuple(sorted(made, key=lambda g: (g.key is None, str(g.key))))


def _concerns(
    rated: pd.DataFrame, concerns: pd.DataFrame, offered: list[str]
) -> tuple[ConcernStats, ...]:
    if len(rated) and len(concerns):  # the dimension's tags only: the merge below keeps no other
        concerns = concerns[(concerns["dimension"] == rated["dimension"].iloc[0]).to_numpy()]
    tagged = concerns[[*KEY4, "tag"]].drop_duplicates().merge(rated, on=KEY4)
    tags = dict.fromkeys([*offered, *sorted(set(tagged["tag"]))])
    made = [_tag(tag, tagged[tagged["tag"] == tag], len(rated)) for tag in tags]
    return tuple(sorted(made, key=lambda c: (-c.count, c.tag)))


def _tag(tag: str, rows: pd.DataFrame, total: int) -> ConcernStats:
    fields = (
        rate_fields(rows, rows["success"])
        if len(rows)
        else dict.fromkeys(("mean_score", "success_rate"), Undefined("no rating carries this tag"))
    )
    share = len(rows) / total if total else Undefined("no ratings")
    return ConcernStats(tag, len(rows), share, fields["mean_score"], fields["success_rate"])


def _windowed(
    rated: pd.DataFrame, anchor: pd.Timestamp, days: int, count: int
) -> tuple[pd.DataFrame, "np.ndarray", "np.ndarray"]:
    """The timed ratings, each one's window (−1: in none) and the ratings per window."""
    import numpy as np
    import pandas as pd

    timed = rated[rated["timestamp"].notna()]
    index = ((timed["timestamp"] - anchor) // pd.Timedelta(days=days)).astype(int).to_numpy()
    index = np.where((index >= 0) & (index < count), index, -1)
    return timed, index, np.bincount(index[index >= 0], minlength=count)


def _windows(
    rated: pd.DataFrame, anchor: pd.Timestamp, days: int, count: int
) -> tuple[Window, ...]:
    """The ratings per window; ratings without a time are in none."""
    timed, index, _ = _windowed(rated, anchor, days, count)
    return tuple(
        _window(timed[index == i], anchor + timedelta(days=i * days), days) for i in range(count)
    )


def _window(rows: pd.DataFrame, start: pd.Timestamp, days: int) -> Window:
    counts = rows["judgment"].value_counts(sort=False, dropna=False)
    judgments = dict(sorted(zip(counts.index.tolist(), map(int, counts.to_numpy()))))
    return Window(
        start=start.to_pydatetime(),
        end=(start + timedelta(days=days)).to_pydatetime(),
        judgments=judgments,
        **rate_fields(rows, rows["success"]),
    )


def _regression(
    key: tuple, earlier: Window, recent: Window, min_drop: float
) -> Regression | None:
    """The first and the last window with enough ratings, compared."""
    before, now = earlier.success_rate, recent.success_rate
    if isinstance(before, Undefined) or isinstance(now, Undefined):
        return None  # an empty window (min_ratings 0) has no rate to drop from or to
    drop = before - now
    if drop >= min_drop and _apart(recent.ci, earlier.ci):
        return Regression(key_value(key[0]), key_value(key[1]), earlier, recent, drop)
    return None


def _apart(recent: Interval | Undefined, earlier: Interval | Undefined) -> bool:
    """The recent window's Wilson interval lies wholly below the earlier one's."""
    if isinstance(recent, Interval) and isinstance(earlier, Interval):
        return recent.high < earlier.low
    return False


def _regressions(
    rated: pd.DataFrame,
    anchor: pd.Timestamp,
    days: int,
    count: int,
    min_ratings: int,
    min_drop: float,
) -> tuple[tuple[Regression, ...], int]:
    found, checked = [], 0
    for key, rows in rated.groupby(["category", "source_type"], dropna=False, sort=False):
        timed, index, sizes = _windowed(rows, anchor, days, count)
        full = [int(i) for i in (sizes >= min_ratings).nonzero()[0]]
        if len(full) >= 2:  # only the first and the last full window are compared: only they made
            checked += 1
            earlier, recent = (
                _window(timed[index == i], anchor + timedelta(days=i * days), days)
                for i in (full[0], full[-1])
            )
            found.append(_regression(key, earlier, recent, min_drop))
    made = [r for r in found if r is not None]
    return tuple(
        sorted(made, key=lambda r: (-r.drop, str(r.category), str(r.source_type)))
    ), checked


# ---------------------------------------------------------------- the report


def _prepare(ratings: pd.DataFrame, items: pd.DataFrame, config: HilbotConfig) -> pd.DataFrame:
    import pandas as pd

    item_cols = items[["run_id", "item_id", "category", "source_type"]]
    rated = ratings.merge(item_cols, on=["run_id", "item_id"], how="left", suffixes=("", "_item"))
    rated["source_type"] = rated["source_type"].where(
        rated["source_type"].notna(), rated["source_type_item"]
    )
    rated["success"] = success_flags(rated, config) if len(rated) else pd.Series(dtype=bool)
    return rated


def _dimension(
    name: str,
    rated: pd.DataFrame,
    concerns: pd.DataFrame,
    config: HilbotConfig,
    frame: tuple[pd.Timestamp, int, int],
    min_ratings: int,
    min_drop: float,
) -> DimensionPatterns:
    anchor, days, count = frame
    dim = config.dimensions.get(name)
    offered = config.concerns_for(name) if dim else []
    regressions, checked = _regressions(rated, anchor, days, count, min_ratings, min_drop)
    return DimensionPatterns(
        dimension=name,
        n=len(rated),
        distribution=_distribution(rated, config, name),
        overall=_group(None, rated),
        by_source_type=_by(rated, "source_type"),
        by_category=_by(rated, "category"),
        by_concern=_concerns(rated, concerns, offered),
        drift=_windows(rated, anchor, days, count),
        regressions=regressions,
        groups_checked=checked,
        scale=dim.scale if dim else None,
        notes=()
        if dim
        else (f"{not_configured(name)}, best first; a rating succeeds when its score ≥ 0.5",),
    )


def _time_frame(rated: pd.DataFrame, days: int) -> tuple[pd.Timestamp, int, int]:
    import pandas as pd

    times = rated["timestamp"].dropna()
    if times.empty:
        return pd.Timestamp("1970-01-01", tz="UTC"), days, 0
    anchor = times.min().floor("D")
    count = int((times.max() - anchor) // pd.Timedelta(days=days)) + 1
    if count > MAX_WINDOWS:
        span = (times.max() - anchor).days + 1
        raise AnalysisError(
            f"the ratings span {span} days: {count} drift windows of {days} day(s), more than "
            f"{MAX_WINDOWS}",
            fix=f"use --window-days {-(-span // MAX_WINDOWS)} or more, or select a run (--run)",
        )
    return anchor, days, count


def patterns(
    ratings: pd.DataFrame,
    items: pd.DataFrame,
    concerns: pd.DataFrame,
    config: HilbotConfig,
    *,
    run: str | Iterable[str] | None = None,
    dimension: str | Iterable[str] | None = None,
    window_days: int = 7,
    min_ratings: int = MIN_RATINGS,
    min_drop: float = MIN_DROP,
) -> PatternsReport:
    """Distribution, success by source type / category / concern, drift and regressed patterns, per
    dimension.

    Any log works: a dimension the configuration lacks is described from its ratings (see the module
    docstring). A named, configured ``dimension`` with no ratings still gets an (empty) entry; one
    neither configured nor rated in the selected run(s) is a :class:`AnalysisError` with the fix.
    """
    if not 1 <= window_days <= MAX_WINDOW_DAYS:
        raise AnalysisError(
            f"window_days={window_days}", fix=f"use a window of 1 to {MAX_WINDOW_DAYS} days"
        )
    if dimension is not None:
        check_dimensions(
            ratings if run is None else select(ratings, run, None), config, dimension, run
        )
    rated = _prepare(select(ratings, run, dimension), items, config)
    frame = _time_frame(rated, window_days)
    names = [dimension] if isinstance(dimension, str) else sorted(rated["dimension"].unique())
    made = tuple(
        _dimension(
            name, rated[rated["dimension"] == name], concerns, config, frame, min_ratings, min_drop
        )
        for name in names
    )
    return PatternsReport(window_days, min_ratings, min_drop, made)


# ------------------------------------------------------------------- the digest's regression alerts

ALERT_MIN_RATINGS = 3
"""Ratings a pattern needs in the previous window and in the new one before its fall can be an
alert."""
ALERTS_SHOWN = 5
"""Regression alerts a digest lists, the surest falls first; the rest are counted."""
FEATURE_DISTINCT = 10
"""A feature with at most this many distinct values gets a pattern per value; a numeric one with
more, one per :data:`FEATURE_BUCKETS` quantile bucket."""
FEATURE_BUCKETS = 3
"""Quantile buckets of a numeric feature with many values."""


@dataclass(frozen=True)
class Side(Report):
    """A pattern's ratings in one window."""

    n: int
    successes: int
    """Ratings that succeeded (for a concern: that do not carry it)."""
    judgments: dict[str, int]


@dataclass(frozen=True)
class RegressionAlert(Report):
    """A pattern whose success rate fell significantly from the previous window to the new one: the
    Newcombe 95% interval of the change lies wholly below 0."""

    dimension: str
    kind: str
    """``category``, ``source_type``, ``feature`` or ``concern``."""
    pattern: str
    """How the digest names it: ``category=tasks``, ``feature result_count=(3, 7]``, ``concern
    bad_ranking``."""
    before: Side
    now: Side
    change: float
    """New success rate − previous one (for a concern: of the ratings without it)."""
    ci: Interval
    """Newcombe's 95% interval of ``change`` (:func:`analysis.stats.newcombe_interval`)."""

    def line(self) -> str:
        """One line for the digest: the rates, the judgments behind them, the change and its
        interval (for a concern, the share of ratings carrying it, which rose)."""
        b, n = self.before, self.now
        if self.kind == "concern":  # the share of ratings carrying the tag rose
            then, now = 1 - b.successes / b.n, 1 - n.successes / n.n
            rates = f"on {_pct(then)} of {b.n} ratings → {_pct(now)} of {n.n}"
            change = _change(-self.change, -self.ci.high, -self.ci.low)
        else:
            rates = (
                f"success {_pct(b.successes / b.n)} ({_judged(b)}) → "
                f"{_pct(n.successes / n.n)} ({_judged(n)})"
            )
            change = _change(self.change, self.ci.low, self.ci.high)
        return f"⚠ {self.dimension} · {self.pattern}: {rates}, {change}"


def _pct(share: float) -> str:
    return f"{share:.0%}"


def _change(value: float, low: float, high: float) -> str:
    """``−100 pts (95% CI −100 to −45)``: a change of a share in percentage points."""
    return (
        f"{'+' if value > 0 else ''}{_points(value)} pts (95% CI {_points(low)} to {_points(high)})"
    )


def _points(share: float) -> str:
    """A share in whole percentage points, negative with a real minus sign."""
    points = round(share * 100)
    return f"−{-points}" if points < 0 else str(points)


def _judged(side: Side) -> str:
    return ", ".join(f"{j} {c}" for j, c in sorted(side.judgments.items(), key=lambda kv: -kv[1]))


def regression_alerts(
    ratings: pd.DataFrame,
    items: pd.DataFrame,
    concerns: pd.DataFrame,
    config: HilbotConfig,
    *,
    since: datetime,
    until: datetime,
    run: str | Iterable[str] | None = None,
    min_ratings: int = ALERT_MIN_RATINGS,
) -> list[RegressionAlert]:
    """The patterns whose success rate fell significantly in [``since``, ``until``) against the
    window of the same length before it, surest first (highest upper bound of the change's
    interval last).

    A pattern is a dimension's ratings of one category, one source type, one bucket of an item
    feature, or — for a concern tag — all of them, succeeding when they do not carry the tag (a fall
    is the tag becoming more frequent). Each window needs ``min_ratings`` ratings of the pattern.
    Ratings without a time are in neither window.
    """
    import pandas as pd

    start = since - (until - since)
    rated = _prepare(select(ratings, run, None), items, config)
    times = rated["timestamp"]
    side = pd.Series(None, index=rated.index, dtype=object)
    side[(times >= pd.Timestamp(start)) & (times < pd.Timestamp(since))] = "before"
    side[(times >= pd.Timestamp(since)) & (times < pd.Timestamp(until))] = "now"
    rated = rated.assign(side=side)[side.notna()]
    if rated.empty:
        return []
    buckets = _feature_buckets(rated, items)
    found: list[RegressionAlert | None] = []
    for dimension, rows in rated.groupby("dimension", sort=True):
        for kind, column, name in [
            ("category", "category", "category"),
            ("source_type", "source_type", "source_type"),
            *buckets,
        ]:
            for value, group in rows.groupby(column, sort=True, dropna=True):
                pattern = (
                    f"{name}={key_value(value)}" if kind != "feature" else f"feature {name}={value}"
                )
                found.append(
                    _alert(str(dimension), kind, pattern, group, group["success"], min_ratings)
                )
        mine = (
            concerns[(concerns["dimension"] == dimension).to_numpy()] if len(concerns) else concerns
        )
        tagged = mine[[*KEY4, "tag"]].drop_duplicates().merge(rows[KEY4], on=KEY4)
        for tag, free in _tag_free(rows, tagged):
            found.append(
                _alert(str(dimension), "concern", f"concern {tag}", rows, free, min_ratings)
            )
    made = [a for a in found if a is not None]
    kinds = ("category", "source_type", "feature", "concern")
    return sorted(
        made, key=lambda a: (a.ci.high, a.change, a.dimension, kinds.index(a.kind), a.pattern)
    )


def _tag_free(rows: pd.DataFrame, tagged: pd.DataFrame) -> list[tuple[str, pd.Series]]:
    """Per tag of ``tagged`` (by name): whether each of ``rows`` is free of it (rows and tags
    matched on the reviewer's rating, as a left merge matches them), each rating coded once."""
    import numpy as np
    import pandas as pd

    where = pd.MultiIndex.from_frame(rows[KEY4])
    ratings = where.unique()
    row = ratings.get_indexer(where)
    carrier = ratings.get_indexer(pd.MultiIndex.from_frame(tagged[KEY4]))
    tag_of = tagged["tag"].to_numpy(dtype=object)
    return [
        (tag, pd.Series(~np.isin(row, carrier[tag_of == tag]), index=rows.index))
        for tag in sorted(set(tagged["tag"]))
    ]


def _texts_counted(values: Any) -> dict[str, int]:
    """``dict(Counter(map(str, values)))`` without a Python call per value: each value's text and
    how many times it comes, in the order the texts first come."""
    import numpy as np
    import pandas as pd

    codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=False)
    counted: dict[str, int] = {}
    for value, n in zip(list(uniques), np.bincount(codes, minlength=len(uniques)).tolist()):
        counted[str(value)] = counted.get(str(value), 0) + n
    return counted


def _alert(
    dimension: str, kind: str, pattern: str, rows: pd.DataFrame, success: pd.Series, least: int
) -> RegressionAlert | None:
    from .stats import newcombe_interval

    sides = {}
    for name in ("before", "now"):
        mine = (rows["side"] == name).to_numpy()
        judgments = _texts_counted(rows["judgment"].to_numpy(dtype=object)[mine])
        sides[name] = Side(int(mine.sum()), int(success.to_numpy()[mine].sum()), judgments)
    before, now = sides["before"], sides["now"]
    if before.n < least or now.n < least:
        return None
    ci = newcombe_interval(now.successes, now.n, before.successes, before.n)
    if not isinstance(ci, Interval) or ci.high >= 0:
        return None
    change = now.successes / now.n - before.successes / before.n
    return RegressionAlert(dimension, kind, pattern, before, now, change, ci)


def _feature_buckets(rated: pd.DataFrame, items: pd.DataFrame) -> list[tuple[str, str, str]]:
    """Adds a ``bucket_<feature>`` column to ``rated`` per item feature that has few values (or is
    a number): (``feature``, the column, the feature's name) for each."""
    columns = [c for c in items.columns if c.startswith("feature_")]
    if not columns:
        return []
    values = rated[["run_id", "item_id"]].merge(
        items[["run_id", "item_id", *columns]], on=["run_id", "item_id"], how="left"
    )  # a left merge keeps the rows' order
    made = []
    for column in columns:
        labels = _bucket_labels(values[column])
        if labels is not None:
            rated[f"bucket_{column}"] = labels.to_numpy()
            made.append(("feature", f"bucket_{column}", column.removeprefix("feature_")))
    return made


def _bucket_labels(values: pd.Series) -> pd.Series | None:
    """Each value's pattern: the value itself when the feature has at most
    :data:`FEATURE_DISTINCT` distinct values, else its quantile bucket (numbers only); None for a
    feature that fits neither. A value that is no number and no text is in no pattern."""
    import numpy as np
    import pandas as pd

    plain = values.map(_plain_value)
    present = plain.dropna()
    if present.empty:
        return None
    if present.nunique() <= FEATURE_DISTINCT:
        return plain.map(lambda v: v if v is None else f"{v:g}" if isinstance(v, float) else v)
    if not all(isinstance(v, float) for v in present):
        return None
    quantiles = np.linspace(0, 1, FEATURE_BUCKETS + 1)
    edges = np.unique(np.quantile(present.to_numpy(float), quantiles))
    cut = pd.cut(pd.to_numeric(plain, errors="coerce"), edges, include_lowest=True)
    shown = [None if isinstance(c, float) else f"({c.left:g}, {c.right:g}]" for c in cut]
    return pd.Series(shown, index=values.index, dtype=object)


def _plain_value(value: Any) -> float | str | None:
    """A feature value as a pattern takes it: a finite number, or text (at most 40 characters
    shown); None for anything else (a list, a missing value, an infinite or huge number)."""
    if isinstance(value, str):
        return value if len(value) <= 40 else value[:40] + "…"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    return None


def _digest(inputs: Inputs, runs: Sequence[str] | None) -> list[str]:
    """The regression alerts of the digest's window (:attr:`Inputs.window`; none without one), at
    most :data:`ALERTS_SHOWN`, then how many more."""
    if inputs.window is None:
        return []
    frames, (since, until) = inputs.frames, inputs.window
    alerts = regression_alerts(
        frames.ratings,
        frames.items,
        frames.concerns,
        inputs.config,
        since=since,
        until=until,
        run=runs,
    )
    lines = [alert.line() for alert in alerts[:ALERTS_SHOWN]]
    if len(alerts) > ALERTS_SHOWN:
        lines.append(f"… and {len(alerts) - ALERTS_SHOWN} more regression alerts")
    return lines


# -------------------------------------------------------------------------------------- the command


def _markdown(report: PatternsReport) -> list[str]:
    """Distribution, groups, concerns, drift and regressed patterns per dimension."""
    lines = ["# Patterns"]
    for dim in report.dimensions:
        lines += _markdown_dimension(dim)
    return lines


def _markdown_groups(title: str, groups: Any) -> list[str]:
    from .report import ci, fmt, table

    if not groups:
        return []
    return ["", f"### {title}", ""] + table(
        ["group", "ratings", "success rate", "95% CI", "mean score"],
        [(str(g.key), g.n, fmt(g.success_rate), ci(g.ci), fmt(g.mean_score)) for g in groups],
    )


def _markdown_dimension(dim: DimensionPatterns) -> list[str]:
    from .report import ci, fmt, table

    lines = [
        "",
        f"## {dim.dimension} ({dim.n} ratings)",
        "",
        "Judgments: "
        + ", ".join(f"{j.value} {j.count} ({fmt(j.share, 2)})" for j in dim.distribution),
        f"Overall success rate {fmt(dim.overall.success_rate)} {ci(dim.overall.ci)}, mean score "
        f"{fmt(dim.overall.mean_score)}.",
    ]
    lines += [f"- note: {note}" for note in dim.notes]
    lines += _markdown_groups("By source type", dim.by_source_type) + _markdown_groups(
        "By category", dim.by_category
    )
    if dim.by_concern:
        lines += ["", "### By concern tag", ""] + table(
            ["tag", "ratings", "share", "mean score", "success rate"],
            [
                (c.tag, c.count, fmt(c.share), fmt(c.mean_score), fmt(c.success_rate))
                for c in dim.by_concern
            ],
        )
    lines += ["", "### Drift", ""] + table(
        ["from", "to", "ratings", "success rate", "95% CI", "mean score"],
        [
            (
                w.start.date().isoformat(),
                w.end.date().isoformat(),
                w.n,
                fmt(w.success_rate),
                ci(w.ci),
                fmt(w.mean_score),
            )
            for w in dim.drift
        ],
    )
    return lines + _markdown_regressions(dim)


def _markdown_regressions(dim: DimensionPatterns) -> list[str]:
    from .report import fmt

    lines = [
        "",
        f"### Regressed patterns ({len(dim.regressions)} of {dim.groups_checked} groups checked)",
        "",
    ]
    lines += [
        f"- ❌ category={r.category}, source_type={r.source_type}: success "
        f"{fmt(r.earlier.success_rate, 2)} ({r.earlier.start.date()}, n={r.earlier.n}) → "
        f"{fmt(r.recent.success_rate, 2)} ({r.recent.start.date()}, n={r.recent.n}); judgments "
        f"then {r.earlier.judgments}, now {r.recent.judgments}"
        for r in dim.regressions
    ]
    return lines if dim.regressions else lines + ["None."]


def _charts(report: PatternsReport, inputs: Any) -> dict[str, Any]:
    from .charts import judgment_distribution

    return {"distribution": lambda: judgment_distribution(inputs.frames.ratings, inputs.config)}


@analysis(
    "patterns",
    markdown=_markdown,
    charts=_charts,
    gold=True,
    digest=_digest,
    options=[Option("window_days", int, 7, "Days per drift window", low=1, high=MAX_WINDOW_DAYS)],
)
def patterns_command(inputs: Inputs, *, window_days: int) -> PatternsReport:
    """Patterns by quality, source type, category and concern tag; drift; patterns that regressed.

    Example: hilbot analyze patterns --window-days 7
    """
    frames = inputs.frames
    return patterns(
        frames.ratings,
        frames.items,
        frames.concerns,
        inputs.config,
        run=inputs.run,
        dimension=inputs.dimension,
        window_days=window_days,
    )


__all__ = [
    "RegressionAlert",
    "Side",
    "regression_alerts",
    "ConcernStats",
    "DimensionPatterns",
    "Group",
    "JudgmentCount",
    "PatternsReport",
    "Regression",
    "Window",
    "patterns",
]
