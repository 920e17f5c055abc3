"""Ratings against an item feature, and whether success follows the expected trend.

Does a feature (e.g. ``leap_distance``) calibrate to human ratings? Everything returns values.
Conventions:

* **Feature values** (:func:`coerce_feature`). A value is *missing* when it is None, NaN or blank
  text; a *number* when it is an int or float (not a bool) or text that is a plain decimal number
  (``"3"``, ``" 2.5 "``, ``"1e3"``: surrounding spaces allowed, no ``_``, ``inf`` or ``nan``);
  anything else is a *label* (its text, stripped; booleans are ``true``/``false``; ±inf is the label
  ``inf``/``-inf``). So ``3``, ``3.0`` and ``"3"`` are the same value, whichever run wrote which.
  The feature is then **numeric** when every present value is a number, or **ordinal** (an ordered
  category) when its values are labels of an *order*: the ``order`` given (``--order
  none,small,medium,large,max``, lowest first; labels compared case-insensitively, numbers by value,
  so an order may also list numbers), else the first built-in order of :data:`ORDERS` that holds
  every label. An ordinal value is its 0-based position in the order. Anything else — text that is
  no number and no label of an order, numbers mixed with labels, or a value missing from the given
  order — is a :class:`FeatureError` naming the feature and one such value.
* **Ordinal features** get one bucket per category present (``bucketing = "categories"``, labelled
  by the order's labels, empty categories not shown); ``buckets`` does not apply to them.
* **Dimensions.** ``dimension=None`` pools every selected dimension (``dimensions`` lists them;
  success is comparable across scales, scores less so); pass one to keep scales apart.
* **Success** of a rating: its option's ``success`` flag, else score ≥ 0.5 (also when the judgment
  is not an option of the dimension's scale, or the dimension is not configured).
* **Buckets** of the feature, counted over ratings (a rating takes its item's feature value):
  ``buckets=None``: one bucket per distinct value when there are at most 10 of them, else quintiles;
  ``buckets=k``: k quantile buckets (edges = quantiles of the ratings' values, repeated edges
  merged, so there may be fewer); ``buckets=[e0, e1, …]``: the given edges. Interval buckets are
  ``[e0, e1]``, ``(e1, e2]``, … (the first closed on the left); ratings outside explicit edges are
  counted in ``outside_buckets``. A bucket may be empty (explicit edges, or quantile edges between
  sparse values): its rate is Undefined. Ratings whose item lacks the feature are counted in
  ``missing_feature``.
* **Wilson score interval** (no continuity correction; Wilson 1927, Newcombe 1998 method 3) for each
  bucket's success rate.
* **Monotonicity**: with ``expect="decreasing"`` (larger leaps should do worse) a pair of adjacent
  non-empty buckets (empty ones are skipped) breaks the order when the larger-feature bucket has a
  strictly higher success rate (``"increasing"``: strictly lower). A break is ``beyond_ci`` when the
  two Wilson intervals do not overlap. ``ends_as_expected`` is the end-to-end check: the last bucket
  against the first.
* **Spearman ρ** between the feature (an ordinal feature: its positions in the order) and the human
  score,
  over (run, item, dimension) with the human score = mean of the item's current ratings (so several
  reviewers of one item do not count as independent pairs). Ties get average ranks
  (``scipy.stats.spearmanr``: Pearson's r of the average ranks), so the many tied items of a
  category feature are handled and any increasing coding of the categories gives the same ρ. Items
  without the feature are left out. CI as in :func:`analysis.stats.spearman`.

The Wilson interval and Spearman's ρ are :mod:`analysis.stats`; success and rates are
:mod:`analysis.vocabulary`'s (:func:`~analysis.vocabulary.success_flags`,
:func:`~analysis.vocabulary.rate_fields`).
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Literal, Sequence

from evaluation.text import visible

from .errors import AnalysisError
from .registry import Inputs, Option, analysis
from .stats import MIN_N, Interval, Number, RankCorrelation, Undefined, spearman
from .vocabulary import KEY3, Report, rate_fields, select, success_flags

if TYPE_CHECKING:  # numpy, pandas and the configuration are imported when the analysis runs
    import numpy as np
    import pandas as pd

    from evaluation.config import HilbotConfig

MAX_DISTINCT = 10
"""At most this many distinct feature values get one bucket each; more get quantile buckets."""
DEFAULT_QUANTILES = 5
"""Quantile buckets when there are more distinct values."""
ORDERS: tuple[tuple[str, ...], ...] = (
    ("none", "small", "medium", "large", "max"),
    ("none", "low", "medium", "high", "max"),
)
"""Built-in orders of well-known category labels, lowest first, used when no ``order`` is given: the
first one holding every label of a feature orders it. Shared labels sit at the same position in each
(so a feature whose labels fit both gets the same codes), and the two vocabularies are not mixed:
``small`` with ``high`` fits neither and needs an explicit order."""
ORDER_EXAMPLE = "none,small,medium,large,max"


# ---------------------------------------------------------------- feature values


class FeatureError(AnalysisError):
    """A feature's values cannot be put in order: text that is no number and no label of a known
    order, numbers mixed with labels, a value missing from the given order, or a malformed order."""


@dataclass(frozen=True)
class FeatureValues:
    """A feature's values made comparable: floats (NaN where missing), numeric or ordinal."""

    values: pd.Series
    """float64, same index as the input: the number, or for an ordinal feature the 0-based position
    in ``order``."""
    kind: Literal["numeric", "ordinal"]
    order: tuple[str, ...]
    """The labels of an ordinal feature, lowest first (the whole order, present or not); () when
    numeric."""


_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


BUCKET_COLUMNS = (
    "bucket",
    "ratings",
    "items",
    "successes",
    "success rate",
    "95% CI (Wilson)",
    "mean score",
)
"""The columns of the report's table of buckets (the dashboard's table has the same)."""


def _parse(value: Any) -> float | str | None:
    """None when missing, a finite float when a number, else the label text (see the module
    docstring)."""
    import numpy as np

    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, numbers.Real):
        try:
            number = float(value)
        except OverflowError:  # an int beyond float64
            return str(value)
        if math.isnan(number):
            return None
        return number if math.isfinite(number) else f"{number:g}"
    text = str(value).strip()
    if not text:
        return None
    if _NUMBER.fullmatch(text):
        number = float(text)
        if math.isfinite(number):
            return number
    return text


def _key(parsed: float | str) -> str:
    """What two values must share to be the same category: a number's exact value, a label's
    casefold."""
    if isinstance(parsed, float):
        return str(int(parsed)) if parsed.is_integer() else repr(parsed)
    return parsed.casefold()


def _shown(parsed: float | str) -> str:
    """A value from a run file as a message shows it: a number plainly, a label quoted and made
    safe."""
    return _fmt(parsed) if isinstance(parsed, float) else repr(visible(parsed, newlines=False)[:60])


def _order_fix() -> str:
    return (
        "give the order of its values in --order, lowest first and comma-separated (e.g. --order "
        f"{ORDER_EXAMPLE}), or in [features.<name>] order = [...] in hilbot.toml, or correct the "
        "values in the run files"
    )


def _levels(order: Sequence[Any] | str) -> tuple[tuple[str, ...], dict[str, int]]:
    """The labels of a given order (a sequence, or one comma-separated string) and each one's
    position, by :func:`_key`; a FeatureError if malformed."""
    if isinstance(order, str):
        order = [part for part in order.split(",") if part.strip()]
    labels: list[str] = []
    index: dict[str, int] = {}
    for entry in order:
        parsed = _parse(entry)
        if parsed is None:
            raise FeatureError(
                "--order has an empty value",
                fix=f"separate its values by commas, e.g. --order {ORDER_EXAMPLE}",
            )
        key = _key(parsed)
        if key in index:
            raise FeatureError(
                f"--order lists {_shown(parsed)} twice", fix="list each value once, lowest first"
            )
        index[key] = len(labels)
        labels.append(_fmt(parsed) if isinstance(parsed, float) else parsed)
    if len(labels) < 2:
        raise FeatureError(
            f"--order has {len(labels)} value{'' if len(labels) == 1 else 's'}",
            fix=f"give at least two, lowest first, e.g. --order {ORDER_EXAMPLE}",
        )
    return tuple(labels), index


def coerce_feature(
    values: pd.Series, feature: str, order: Sequence[Any] | str | None = None
) -> FeatureValues:
    """``values`` as numbers or positions in an order (the rules are in the module docstring).

    ``order``: the feature's labels, lowest first (or one comma-separated string); when given, every
    present value must be one of them (numbers too: ``order=["1", "2", "3"]`` orders 1, 2 and 3) and
    the feature is ordinal. Without it the feature is numeric when every present value is a number,
    ordinal when its labels all fit one of :data:`ORDERS`, and a :class:`FeatureError` otherwise.
    """
    import numpy as np
    import pandas as pd

    name = visible(feature, newlines=False)[:60]
    given = _levels(order) if order is not None else None
    if (
        given is None
        and pd.api.types.is_numeric_dtype(values.dtype)
        and not pd.api.types.is_bool_dtype(values.dtype)
    ):
        floats = values.astype("float64")
        if not np.isinf(floats).any():  # the loader's feature_* columns: finite numbers or NaN
            return FeatureValues(floats, "numeric", ())
    parsed = [_parse(v) for v in values.tolist()]
    present = [p for p in parsed if p is not None]
    if given is not None:
        labels, index = given
        for p in present:
            if _key(p) not in index:
                raise FeatureError(
                    f"feature {name!r} has the value {_shown(p)}, which is not in the given order "
                    f"({', '.join(labels)})"[:300],
                    fix="add it to --order (lowest first), or correct the value",
                )
        return _ordinal(values, parsed, labels, index)
    texts = [p for p in present if isinstance(p, str)]
    if not texts:
        return FeatureValues(
            pd.Series(
                [np.nan if p is None else p for p in parsed], index=values.index, dtype="float64"
            ),
            "numeric",
            (),
        )
    keys = {_key(t) for t in texts}
    known = next((o for o in ORDERS if keys <= set(o)), None)
    if known is None:
        fits = next((o for o in ORDERS if _key(texts[0]) in o), ())
        odd = next(t for t in texts if _key(t) not in fits)
        raise FeatureError(
            f"feature {name!r} has text values that are neither numbers nor labels of one known "
            f"order, e.g. {_shown(odd)}",
            fix=_order_fix(),
        )
    number = next((p for p in present if isinstance(p, float)), None)
    if number is not None:
        raise FeatureError(
            f"feature {name!r} mixes numbers and category labels, e.g. {_shown(number)} and "
            f"{_shown(texts[0])}",
            fix=_order_fix(),
        )
    return _ordinal(values, parsed, known, {label: i for i, label in enumerate(known)})


def _ordinal(
    values: pd.Series,
    parsed: list[float | str | None],
    labels: tuple[str, ...],
    index: dict[str, int],
) -> FeatureValues:
    import numpy as np
    import pandas as pd

    codes = [np.nan if p is None else float(index[_key(p)]) for p in parsed]
    return FeatureValues(pd.Series(codes, index=values.index, dtype="float64"), "ordinal", labels)


# ---------------------------------------------------------------- buckets


@dataclass(frozen=True)
class Bucket(Report):
    """Ratings whose item's feature falls in one bucket."""

    label: str
    low: float
    """Smallest feature value of the bucket (an ordinal feature: the category's 0-based
    position)."""
    high: float
    n: int
    """Ratings."""
    n_items: int
    """Distinct (run, item, dimension) among them."""
    successes: int
    success_rate: Number
    ci: Interval | Undefined
    """Wilson interval of the success rate."""
    mean_score: Number


def _fmt(value: float) -> str:
    return f"{value:g}"


def _edges(values: np.ndarray, buckets: int | Sequence[float]) -> np.ndarray:
    import numpy as np

    if isinstance(buckets, int):
        if buckets < 1:
            raise AnalysisError(
                f"buckets={buckets}", fix="give a positive number of quantile buckets"
            )
        return np.unique(np.quantile(values, np.linspace(0, 1, buckets + 1)))
    edges = np.asarray(list(buckets), float)
    if len(edges) < 2 or np.any(np.diff(edges) <= 0):
        raise AnalysisError(
            f"bucket edges {list(buckets)} are not increasing",
            fix="give at least two increasing edges",
        )
    return edges


def assign(
    values: pd.Series, buckets: int | Sequence[float] | None
) -> tuple[str, pd.Series, list[tuple[str, float, float]]]:
    """How ``values`` are bucketed: the method, each value's bucket number (−1 outside), and (label,
    low, high)."""
    import numpy as np
    import pandas as pd

    distinct = np.unique(values.to_numpy(float))
    explicit = buckets is not None and not isinstance(buckets, int)
    if not explicit and (len(distinct) <= 1 or buckets is None and len(distinct) <= MAX_DISTINCT):
        codes = pd.Series(np.searchsorted(distinct, values.to_numpy(float)), index=values.index)
        return "distinct", codes, [(_fmt(v), float(v), float(v)) for v in distinct]
    method = "edges" if explicit else "quantile"
    edges = _edges(values.to_numpy(float), DEFAULT_QUANTILES if buckets is None else buckets)
    codes = pd.cut(values, edges, right=True, include_lowest=True, labels=False)
    labels = [
        (f"{'[' if i == 0 else '('}{_fmt(lo)}, {_fmt(hi)}]", float(lo), float(hi))
        for i, (lo, hi) in enumerate(zip(edges, edges[1:]))
    ]
    return method, codes.fillna(-1).astype(int), labels


def _bucket(spec: tuple[str, float, float], rows: pd.DataFrame, level: float) -> Bucket:
    n_items = int(rows[KEY3].drop_duplicates().shape[0])
    return Bucket(
        label=spec[0],
        low=spec[1],
        high=spec[2],
        n_items=n_items,
        **rate_fields(rows, rows["success"], level),
    )


# ---------------------------------------------------------------- monotonicity


@dataclass(frozen=True)
class MonotonicityBreak(Report):
    """Two adjacent non-empty buckets in the wrong order."""

    lower: str
    """Label of the bucket with the smaller feature values."""
    upper: str
    """Label of the bucket with the larger feature values."""
    lower_rate: float
    upper_rate: float
    beyond_ci: bool
    """The two Wilson intervals do not overlap."""


@dataclass(frozen=True)
class Monotonicity(Report):
    """Whether success rate moves the expected way as the feature grows."""

    expect: str
    """``decreasing`` (larger values should do worse) or ``increasing``."""
    monotonic: bool | Undefined
    breaks: tuple[MonotonicityBreak, ...]
    ends_as_expected: bool | Undefined
    """The last non-empty bucket's rate is below (``increasing``: above) the first's."""


def _wrong_way(first: float, second: float, expect: str) -> bool:
    return second > first if expect == "decreasing" else second < first


def _apart(a: Interval, b: Interval) -> bool:
    return a.high < b.low or b.high < a.low


def _filled(buckets: Sequence[Bucket]) -> list[tuple[str, float, Interval]]:
    """The label, success rate and Wilson interval of each non-empty bucket (an empty one has
    neither)."""
    filled = []
    for b in buckets:
        rate, ci = b.success_rate, b.ci
        if b.n > 0 and not isinstance(rate, Undefined) and not isinstance(ci, Undefined):
            filled.append((b.label, rate, ci))
    return filled


def monotonicity(
    buckets: Sequence[Bucket], expect: Literal["decreasing", "increasing"] = "decreasing"
) -> Monotonicity:
    """Flag adjacent non-empty buckets whose success rates break the expected order."""
    filled = _filled(buckets)
    if len(filled) < 2:
        why = Undefined(f"fewer than 2 non-empty buckets ({len(filled)})")
        return Monotonicity(expect, why, (), why)
    breaks = tuple(
        MonotonicityBreak(a, b, rate_a, rate_b, _apart(ci_a, ci_b))
        for (a, rate_a, ci_a), (b, rate_b, ci_b) in zip(filled, filled[1:])
        if _wrong_way(rate_a, rate_b, expect)
    )
    ends = _wrong_way(filled[-1][1], filled[0][1], expect)
    return Monotonicity(expect, not breaks, breaks, ends)


# ---------------------------------------------------------------- the report


@dataclass(frozen=True)
class CorrelationReport(Report):
    """Success rate by bucket of a feature, its monotonicity, and Spearman ρ of feature and human
    score."""

    feature: str
    dimensions: tuple[str, ...]
    bucketing: str
    """``distinct``, ``quantile``, ``edges`` or (an ordinal feature) ``categories``."""
    buckets: tuple[Bucket, ...]
    monotonicity: Monotonicity
    spearman: RankCorrelation
    """Feature against the item's mean human score, over items."""
    n_ratings: int
    """Ratings with the feature (bucketed or not)."""
    missing_feature: int
    """Ratings whose item has no value for the feature."""
    outside_buckets: int
    """Ratings outside explicit bucket edges."""
    kind: Literal["numeric", "ordinal"] = "numeric"
    """How the feature's values were read (see :func:`coerce_feature`)."""
    order: tuple[str, ...] = ()
    """An ordinal feature's labels, lowest first (the whole order); () when numeric."""


def feature_column(items: pd.DataFrame, feature: str) -> str:
    """``feature_<name>`` for ``name`` or ``feature_<name>``, or an AnalysisError listing the
    available ones."""
    column = feature if feature.startswith("feature_") else f"feature_{feature}"
    if column in items.columns:
        return column
    available = sorted(
        visible(c.removeprefix("feature_"), newlines=False)[:60]
        for c in items.columns
        if c.startswith("feature_")
    )  # names from the run files: shown safely, a few
    more = f" and {len(available) - 20} more" if len(available) > 20 else ""
    fix = (
        f"use one of: {', '.join(available[:20])}{more}"
        if available
        else "the items carry no feature_* columns (no item has features)"
    )
    raise AnalysisError(f"unknown feature {feature!r}", fix=fix)


def _rated_with_feature(
    ratings: pd.DataFrame, items: pd.DataFrame, values: pd.Series, config: HilbotConfig
) -> pd.DataFrame:
    """The ratings with their item's coerced feature ``value`` (NaN: missing) and ``success``."""
    import pandas as pd

    values = items[["run_id", "item_id"]].assign(value=values)
    rated = ratings.merge(values, on=["run_id", "item_id"], how="left")
    rated["value"] = rated["value"].astype("float64")
    rated["success"] = success_flags(rated, config) if len(rated) else pd.Series(dtype=bool)
    return rated


def _categories(
    values: pd.Series, order: tuple[str, ...]
) -> tuple[str, pd.Series, list[tuple[str, float, float]]]:
    """One bucket per category present, in the order: like :func:`assign`, labelled by the order's
    labels."""
    import numpy as np
    import pandas as pd

    present = np.unique(values.to_numpy(float))
    codes = pd.Series(np.searchsorted(present, values.to_numpy(float)), index=values.index)
    return "categories", codes, [(order[int(v)], float(v), float(v)) for v in present]


def _feature_spearman(rated: pd.DataFrame, order: tuple[str, ...] = ()) -> RankCorrelation:
    """Spearman ρ of the feature and the mean human score, one pair per (run, item, dimension)."""
    import numpy as np

    per_item = rated.groupby(KEY3).agg(value=("value", "first"), human=("score", "mean"))
    x = per_item["value"].to_numpy(float)
    if order and len(x) >= MIN_N and np.all(x == x[0]):  # name the category, not its position
        why = Undefined(f"feature is constant ({order[int(x[0])]} throughout)")
        return RankCorrelation(why, why, why, len(x))
    return spearman(per_item["value"], per_item["human"], names=("feature", "human score"))


def correlate(
    ratings: pd.DataFrame,
    items: pd.DataFrame,
    config: HilbotConfig,
    feature: str,
    *,
    run: str | Iterable[str] | None = None,
    dimension: str | Iterable[str] | None = None,
    buckets: int | Sequence[float] | None = None,
    expect: Literal["decreasing", "increasing"] = "decreasing",
    level: float = 0.95,
    order: Sequence[str] | str | None = None,
) -> CorrelationReport:
    """Success rate per bucket of ``feature``, a monotonicity check and Spearman ρ (see the module
    docstring).

    ``items[feature_<name>]`` may hold numbers, number-like text and category labels, mixed across
    runs; they are read by :func:`coerce_feature` (``order``: the category labels, lowest first). An
    ordinal feature gets one bucket per category and "grows" along its order; ``buckets`` is then an
    error.
    """
    if expect not in ("decreasing", "increasing"):
        raise AnalysisError(f"expect={expect!r}", fix="use 'decreasing' or 'increasing'")
    column = feature_column(items, feature)
    name = column.removeprefix("feature_")
    coerced = coerce_feature(items[column], name, order)
    if coerced.kind == "ordinal" and buckets is not None:
        raise FeatureError(
            "--buckets does not apply to the ordered categorical feature "
            f"{visible(name, newlines=False)[:60]!r}",
            fix="leave out --buckets: each category is a bucket",
        )
    rated = _rated_with_feature(select(ratings, run, dimension), items, coerced.values, config)
    known = rated[rated["value"].notna()]
    if coerced.kind == "ordinal":
        method, codes, specs = _categories(known["value"], coerced.order)
    else:
        method, codes, specs = assign(known["value"], buckets)
    made = tuple(_bucket(spec, known[codes == i], level) for i, spec in enumerate(specs))
    return CorrelationReport(
        feature=name,
        dimensions=tuple(sorted(rated["dimension"].unique())),
        bucketing=method,
        buckets=made,
        monotonicity=monotonicity(made, expect),
        spearman=_feature_spearman(known, coerced.order),
        n_ratings=len(known),
        missing_feature=len(rated) - len(known),
        outside_buckets=int((codes < 0).sum()),
        kind=coerced.kind,
        order=coerced.order,
    )


# -------------------------------------------------------------------------------------- the command

BUCKETS_MAX = 100
"""The most quantile buckets ``--buckets`` takes."""


def _markdown(report: CorrelationReport) -> list[str]:
    """Success rate per feature bucket, monotonicity, Spearman."""
    from .report import ci, fmt, p_value, table

    m = report.monotonicity
    lines = [
        f"# Ratings vs {report.feature}",
        "",
        f"{report.n_ratings} ratings on {', '.join(report.dimensions)}; buckets: "
        f"{report.bucketing}; {report.missing_feature} without the feature, "
        f"{report.outside_buckets} outside the buckets.",
        "",
    ]
    lines += table(
        BUCKET_COLUMNS,
        [
            (b.label, b.n, b.n_items, b.successes, fmt(b.success_rate), ci(b.ci), fmt(b.mean_score))
            for b in report.buckets
        ],
    )
    verdict = (
        "monotonic"
        if m.monotonic is True
        else ("not monotonic" if m.monotonic is False else fmt(m.monotonic))
    )
    lines += [
        "",
        f"Expectation: success {m.expect} as {report.feature} grows — **{verdict}**; "
        f"last bucket vs first as expected: {fmt(m.ends_as_expected)}.",
    ]
    lines += [
        f"- ⚠ {b.lower} → {b.upper}: {b.lower_rate:.3f} → {b.upper_rate:.3f}"
        + (" (beyond the CIs)" if b.beyond_ci else " (within the CIs)")
        for b in m.breaks
    ]
    s = report.spearman
    lines += [
        "",
        f"Spearman ρ ({report.feature} vs human score, per item): {fmt(s.coefficient)} "
        f"(p = {p_value(s.p_value)}, 95% CI {ci(s.ci)}, n = {s.n})",
    ]
    return lines


def _chart(report: CorrelationReport) -> bytes:
    from .charts import interval_bars

    values = [
        None if isinstance(b.success_rate, Undefined) else b.success_rate for b in report.buckets
    ]
    intervals = [
        None if isinstance(b.ci, Undefined) else (b.ci.low, b.ci.high) for b in report.buckets
    ]
    return interval_bars(
        [b.label for b in report.buckets],
        values,
        intervals,
        title=f"Success rate by {report.feature}",
        ylabel="success rate (95% Wilson CI)",
    )


@analysis(
    "correlate",
    markdown=_markdown,
    gold=True,
    file_name=lambda report: f"correlate-{report.feature}",
    charts=lambda report, inputs: {f"success-by-{report.feature}": lambda: _chart(report)},
    options=[
        Option(
            "feature",
            str,
            None,
            "An item feature: numbers (or number text), or ordered category labels, e.g. "
            "leap_distance",
            required=True,
        ),
        Option(
            "buckets",
            int,
            None,
            "Quantile buckets (default: distinct values if ≤ 10, else 5); not for category features",
            low=1,
            high=BUCKETS_MAX,
        ),
        Option(
            "expect",
            str,
            "decreasing",
            "Whether success should fall (larger values rate worse) or rise as the feature grows",
            choices=("decreasing", "increasing"),
        ),
        Option(
            "order",
            str,
            None,
            "A category feature's labels, lowest first, comma-separated, e.g. "
            "none,small,medium,large,max (default: the feature's order in hilbot.toml, else a "
            "built-in order of well-known labels)",
            many=True,
        ),
    ],
)
def correlate_command(
    inputs: Inputs,
    *,
    feature: str,
    buckets: int | None,
    expect: Literal["decreasing", "increasing"],
    order: tuple[str, ...] | None,
) -> CorrelationReport:
    """Ratings against a feature: success rate per bucket with Wilson CIs, monotonicity, Spearman ρ.

    Numbers and number text ("3") are the same value; category labels are ordered by --order.

    Example: hilbot analyze correlate --feature leap_distance --order none,small,medium,large,max
    """
    configured = inputs.config.features.get(feature.removeprefix("feature_"))
    order = order or (tuple(configured.order) if configured and configured.order else None)
    frames = inputs.frames
    return correlate(
        frames.ratings,
        frames.items,
        inputs.config,
        feature,
        run=inputs.run,
        dimension=inputs.dimension,
        buckets=buckets,
        expect=expect,
        order=order,
    )


__all__ = [
    "BUCKET_COLUMNS",
    "ORDERS",
    "Bucket",
    "CorrelationReport",
    "FeatureError",
    "FeatureValues",
    "Monotonicity",
    "MonotonicityBreak",
    "coerce_feature",
    "correlate",
    "monotonicity",
]
