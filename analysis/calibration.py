"""The AI judge against humans: how well do the judge's scores track ratings?

Everything returns values; nothing prints. Conventions:

* **Unit.** One (run, item, dimension) with at least one current rating and an AI score. The human
  score is the mean of that item's current ratings on the dimension; the AI score follows
  ``evaluation.runs.ai_score``: the column ``ai_<dimension>`` (or with ``-`` → ``_``) when present
  and not NaN, else ``ai_overall``; ``metric`` names the score used (``overall``, ``relevance``, …).
  Rated items the AI did not score (or that are missing from ``items``) are left out and counted in
  :attr:`CalibrationReport.unscored`.
* **Spearman ρ** (scipy, average ranks for ties; p-value from the t approximation with n − 2 df),
  with a 95%
  CI from Fisher's z = atanh ρ and the **Bonett–Wright** standard error √((1 + ρ²/2)/(n − 3))
  (Bonett & Wright 2000, *Psychometrika* 65:23–28), back-transformed with tanh. **Kendall
  τ-b** (scipy; exact p for small n without ties, else the normal approximation). Both are Undefined
  when n < 4 or when either side is constant;
  the CI also when |ρ| = 1 (z is infinite): :mod:`analysis.stats.correlation`.
* **Categories.** Both scores go to the option of the dimension's scale whose score is nearest
  (boundaries at the midpoints between adjacent option scores; a score exactly on a midpoint goes to
  the *higher* option, i.e. round half up; scores are rounded to 9 decimals first, against float
  noise). Cohen's κ (unweighted) and the quadratic-weighted κ come from the confusion matrix, whose
  rows are the AI's category and columns the humans', labels in ascending score order. A group whose
  dimensions use different scales has no category agreement (Undefined).
* **A dimension the configuration lacks** is described from the log itself, as every analysis does
  (:func:`analysis.vocabulary.dimension_categories`): its categories are the judgments rated on it
  in the selected ratings, by mean score (ascending, ties by judgment; a judgment without a score is
  left out), each standing at its mean score, and both scores go to the nearest one by the rule
  above. The group's ``notes`` say the dimension is not configured and list the judgments with their
  means. A group holding several such dimensions, or one with a configured one, has no category
  agreement. A ``dimension`` asked for that neither the configuration defines nor any selected
  rating carries is a :class:`AnalysisError` with the fix.
* **PASS/FAIL.** The AI passes when its score ≥ ``judge.pass_mark`` (0.6); the humans pass when
  their category counts as a success (the option's ``success``, else option score ≥ 0.5); on a
  dimension the configuration lacks, when their mean score ≥ 0.5.
* **Δ** = mean over items of (human − AI): negative means humans score lower than the AI. With one
  rating per item it is the negative of summarize's ``aiVsHumanDelta`` (AI − human, as the hil
  format defines it).
* **Disagreements**: the ``top`` items with the largest |human − AI| (ties by run id, item id), with
  the reviewers' notes (``ratings.note`` plus any ``notes`` text on the same current ratings) and
  the query.

The rank correlations and intervals are :mod:`analysis.stats`; the categories of a dimension, the
selection of ratings and the report base type are :mod:`analysis.vocabulary`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Literal, Sequence

from .errors import AnalysisError
from .registry import Inputs, Option, analysis
from .stats import Number, RankCorrelation, Undefined, kendall_tau, spearman
from .vocabulary import (
    KEY3,
    KEY4,
    Categories,
    Report,
    check_dimensions,
    dimension_categories,
    key_value,
    nearest,
    select,
)

if TYPE_CHECKING:  # numpy, pandas and the configuration are imported when the analysis runs
    import pandas as pd

    from evaluation.config import HilbotConfig

GROUP_KEYS = (
    "dimension",
    "metric",
    "run_id",
    "set",
    "kind",
    "category",
    "judge",
    "prompt_hash",
    "source_type",
)
"""Columns :func:`calibration` can group by (``metric`` is the AI score used, e.g. ``overall``)."""
TOP = 10
"""Disagreements listed per group."""


# ---------------------------------------------------------------- categories agreement


@dataclass(frozen=True)
class ConfusionMatrix(Report):
    """Counts of items by AI category (rows) and human category (columns)."""

    labels: tuple[str, ...]
    """Categories in ascending score order (``FAIL``, ``PASS`` for pass/fail)."""
    counts: tuple[tuple[int, ...], ...]
    """``counts[i][j]``: items the AI put in ``labels[i]`` and humans in ``labels[j]``."""


def confusion_matrix(
    ai: Iterable[str], human: Iterable[str], labels: Iterable[str]
) -> ConfusionMatrix:
    """Cross-tabulate two label sequences over ``labels`` (ascending order)."""
    import numpy as np

    labels = tuple(labels)
    index = {label: i for i, label in enumerate(labels)}
    counts = np.zeros((len(labels), len(labels)), int)
    for a, h in zip(ai, human, strict=True):
        counts[index[a], index[h]] += 1
    return ConfusionMatrix(labels, tuple(tuple(int(c) for c in row) for row in counts))


def confusion_kappa(
    matrix: ConfusionMatrix, weights: Literal["none", "linear", "quadratic"] = "none"
) -> Number:
    """Cohen's κ of the matrix = 1 − Σ w·observed / Σ w·expected (w = 1 off the diagonal when
    unweighted), computed once for all of hilbot by :func:`analysis.stats.kappa_of_table`; undefined
    with no items, or when AI and humans put every item in one and the same category."""
    import numpy as np

    from .stats import kappa_of_table

    observed = np.asarray(matrix.counts, float)
    if observed.sum() == 0:
        return Undefined("no items")
    value = kappa_of_table(observed, None if weights == "none" else weights)
    if math.isnan(value):
        used = matrix.labels[int(observed.sum(axis=1).argmax())]
        return Undefined(f"AI and humans put every item in one category ({used})")
    return value


# ---------------------------------------------------------------- the item table


def ai_scores(
    table: pd.DataFrame, config: HilbotConfig | None = None
) -> tuple[pd.Series, pd.Series]:
    """Per row of ``table`` (items joined with a ``dimension`` column): the AI score and the score's
    name (the dimension's configured ``metric`` first, when ``config`` gives one)."""
    import numpy as np
    import pandas as pd

    score = pd.Series(np.nan, index=table.index, dtype=float)
    metric = pd.Series(None, index=table.index, dtype=object)
    for dimension in table["dimension"].unique():
        rows = table["dimension"] == dimension
        configured = config.metric_for(dimension) if config is not None else None
        names = (configured or dimension, dimension, dimension.replace("-", "_"), "overall")
        for name in dict.fromkeys(names):
            column = f"ai_{name}"
            if column in table.columns:
                take = rows & score.isna() & table[column].notna()
                score[take] = table.loc[take, column].astype(float)
                metric[take] = name
    return score, metric


def _notes_by_item(rated: pd.DataFrame, notes: pd.DataFrame | None) -> pd.Series:
    """Per (run, item, dimension), sorted: the notes of its ratings, then the ``notes`` texts of
    the same reviewers, each text once, in that order."""
    import pandas as pd

    texts = rated[[*KEY4, "note"]].rename(columns={"note": "text"})
    if notes is not None and len(notes):
        texts = pd.concat([texts, notes[[*KEY4, "text"]].merge(rated[KEY4], on=KEY4)])
    texts = texts[texts["text"].notna()]
    texts = texts[texts["text"].astype(str).str.strip() != ""]
    grouped = texts.groupby(KEY3)
    index = grouped.size().index
    table = pd.DataFrame(
        {"item": _codes(grouped), "text": [str(t) for t in texts["text"].to_numpy(dtype=object)]}
    )
    table = table[~table.duplicated().to_numpy()]
    found = _tuples(table["item"].to_numpy(), table["text"].tolist(), len(index))
    return pd.Series(found, index=index, dtype=object, name="text")


def _codes(grouped: Any) -> Any:
    """Each row's group number (groups in the groupby's order; a row of no group: -1)."""
    import numpy as np

    return grouped.ngroup().fillna(-1).to_numpy().astype(np.int64)


def _tuples(codes: Any, values: list[Any], groups: int) -> list[tuple[Any, ...]]:
    """Per group, its ``values`` in row order as a tuple (a row of code -1 in none)."""
    import numpy as np

    kept = np.flatnonzero(codes >= 0)
    order = kept[np.argsort(codes[kept], kind="stable")]
    ends = np.cumsum(np.bincount(codes[kept], minlength=groups)).tolist()
    ordered = [values[i] for i in order.tolist()]
    return [tuple(ordered[a:b]) for a, b in zip([0, *ends[:-1]], ends)]


def item_table(
    ratings: pd.DataFrame,
    items: pd.DataFrame,
    notes: pd.DataFrame | None = None,
    config: HilbotConfig | None = None,
) -> pd.DataFrame:
    """One row per rated (run, item, dimension): human mean, ratings, judgments, notes, item
    columns, AI score (:func:`ai_scores`)."""
    grouped = ratings.groupby(KEY3, sort=True)
    rated = grouped.agg(human_score=("score", "mean"), n_ratings=("score", "size"))
    judgments = ratings["judgment"].to_numpy(dtype=object).tolist()
    rated["judgments"] = _tuples(_codes(grouped), judgments, len(rated))
    rated["notes"] = _notes_by_item(ratings, notes).reindex(rated.index)
    rated["notes"] = rated["notes"].map(lambda v: v if isinstance(v, tuple) else ())
    table = rated.reset_index().merge(
        items, on=["run_id", "item_id"], how="left", suffixes=("", "_item")
    )
    table["ai_score"], table["metric"] = ai_scores(table, config)
    return table


def _categorize(table: pd.DataFrame, described: dict[str, Categories]) -> pd.DataFrame:
    table = table.copy()
    table["scale"], table["ai_category"], table["human_category"], table["human_pass"] = (
        None,
        None,
        None,
        False,
    )
    for dimension, rows in table.groupby("dimension", observed=True).groups.items():
        cats = described[str(dimension)]
        human = table.loc[rows, "human_score"]
        table.loc[rows, "scale"] = cats.scale
        if cats.scale is None:
            table.loc[rows, "human_pass"] = human >= 0.5
        if not cats.labels:
            continue
        ai_at = nearest(table.loc[rows, "ai_score"], cats.scores)
        human_at = nearest(human, cats.scores)
        table.loc[rows, "ai_category"] = [cats.labels[i] for i in ai_at]
        table.loc[rows, "human_category"] = [cats.labels[i] for i in human_at]
        if cats.scale is not None:
            table.loc[rows, "human_pass"] = [cats.success[i] for i in human_at]
    return table


# ---------------------------------------------------------------- the report


@dataclass(frozen=True)
class Agreement(Report):
    """Agreement of AI and humans on categories."""

    confusion: ConfusionMatrix | Undefined
    kappa: Number
    """Cohen's κ, unweighted."""
    weighted_kappa: Number
    """Cohen's κ with quadratic weights (equals κ for two categories)."""
    observed: Number
    """Share of items on the diagonal."""


@dataclass(frozen=True)
class Disagreement(Report):
    """One item where AI and humans differ."""

    run_id: str
    item_id: str
    dimension: str
    query: str | None
    ai_score: float
    human_score: float
    delta: float
    """human − AI."""
    judgments: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class CalibrationGroup(Report):
    """Calibration of one group (e.g. one dimension)."""

    key: dict[str, Any]
    """The group's values of ``by`` (None where the item has none, e.g. no category)."""
    n: int
    """Items with both a human and an AI score."""
    n_ratings: int
    spearman: RankCorrelation
    kendall: RankCorrelation
    categories: Agreement
    """On the scale's options (nearest option to each score)."""
    pass_fail: Agreement
    """AI score ≥ pass mark against human success."""
    mean_ai: Number
    mean_human: Number
    mean_delta: Number
    """mean(human − AI) over items."""
    disagreements: tuple[Disagreement, ...]
    notes: tuple[str, ...] = ()
    """Anything unusual: a dimension the configuration lacks (categories from the log, with their
    mean scores)."""


@dataclass(frozen=True)
class CalibrationReport(Report):
    """The AI judge against humans, per group."""

    by: tuple[str, ...]
    pass_mark: float
    groups: tuple[CalibrationGroup, ...]
    unscored: int
    """Rated (run, item, dimension) left out because the AI gave no score."""


def _agreement(ai: list, human: list, labels: tuple[str, ...]) -> Agreement:
    matrix = confusion_matrix(ai, human, labels)
    n = len(ai)
    observed = (
        sum(matrix.counts[i][i] for i in range(len(labels))) / n if n else Undefined("no items")
    )
    kappa, weighted = confusion_kappa(matrix), confusion_kappa(matrix, "quadratic")
    return Agreement(matrix, kappa, weighted, observed)


def _category_agreement(group: pd.DataFrame, described: dict[str, Categories]) -> Agreement:
    cats = [described[d] for d in sorted(set(map(str, group["dimension"])))]
    scales = sorted(
        {c.scale if c.scale is not None else f"{c.dimension!r} from the log" for c in cats}
    )
    if len(scales) > 1:
        why = Undefined(f"the group mixes scales ({', '.join(scales)})")
    elif not cats[0].labels:
        why = Undefined(f"no judgment on dimension {cats[0].dimension!r} has a score")
    else:
        return _agreement(list(group["ai_category"]), list(group["human_category"]), cats[0].labels)
    return Agreement(why, why, why, why)


def _pass_fail(group: pd.DataFrame, pass_mark: float) -> Agreement:
    label = {True: "PASS", False: "FAIL"}
    ai = [label[bool(s >= pass_mark)] for s in group["ai_score"]]
    return _agreement(ai, [label[bool(p)] for p in group["human_pass"]], ("FAIL", "PASS"))


def _disagreements(group: pd.DataFrame, top: int) -> tuple[Disagreement, ...]:
    import pandas as pd

    ordered = group.assign(
        gap=(group["human_score"] - group["ai_score"]).abs().round(9)
    )  # ties despite float noise
    ordered = ordered.sort_values(["gap", "run_id", "item_id"], ascending=[False, True, True]).head(
        top
    )
    return tuple(
        Disagreement(
            row.run_id,
            row.item_id,
            row.dimension,
            None if pd.isna(row.query) else str(row.query),
            float(row.ai_score),
            float(row.human_score),
            float(row.human_score - row.ai_score),
            tuple(row.judgments),
            tuple(row.notes),
        )
        for row in ordered.itertuples()
    )


def _mean(values: pd.Series, what: str) -> Number:
    return float(values.mean()) if len(values) else Undefined(f"no {what}")


def _group(
    key: dict[str, Any],
    group: pd.DataFrame,
    described: dict[str, Categories],
    pass_mark: float,
    top: int,
) -> CalibrationGroup:
    ai, human = group["ai_score"], group["human_score"]
    names = ("AI score", "human score")
    notes = [described[d].note for d in sorted(set(map(str, group["dimension"])))]
    return CalibrationGroup(
        key=key,
        n=len(group),
        n_ratings=int(group["n_ratings"].sum()),
        spearman=spearman(ai, human, names=names),
        kendall=kendall_tau(ai, human, names=names),
        categories=_category_agreement(group, described),
        pass_fail=_pass_fail(group, pass_mark),
        mean_ai=_mean(ai, "items"),
        mean_human=_mean(human, "items"),
        mean_delta=_mean(human - ai, "items"),
        disagreements=_disagreements(group, top),
        notes=tuple(n for n in notes if n),
    )


def _unpack(data: Any) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    if isinstance(data, tuple):
        return data[0], data[1], data[2] if len(data) > 2 else None
    return data.ratings, data.items, getattr(data, "notes", None)


def _check_by(by: tuple[str, ...]) -> None:
    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown or not by:
        raise AnalysisError(
            f"cannot group calibration by {unknown or 'nothing'}",
            fix=f"use some of {', '.join(GROUP_KEYS)}",
        )


def calibration(
    data: Any,
    config: HilbotConfig,
    *,
    run: str | Iterable[str] | None = None,
    dimension: str | Iterable[str] | None = None,
    by: Iterable[str] = ("dimension",),
    top: int = TOP,
    pass_mark: float | None = None,
) -> CalibrationReport:
    """Calibrate the AI judge against human ratings, per group of ``by`` columns (see the module
    docstring).

    ``data`` is a ``Frames`` (``ratings``, ``items`` and optionally ``notes`` are read) or a tuple
    ``(ratings, items)`` / ``(ratings, items, notes)``. Any log works: a dimension the configuration
    lacks is described from its selected ratings (judgments by mean score) and noted; a
    ``dimension`` neither configured nor rated in the selected run(s) is a :class:`AnalysisError`
    with the fix.
    """
    by = tuple(by)
    _check_by(by)
    ratings, items, notes = _unpack(data)
    if dimension is not None:
        check_dimensions(
            ratings if run is None else select(ratings, run, None), config, dimension, run
        )
    pass_mark = config.judge.pass_mark if pass_mark is None else pass_mark
    selected = select(ratings, run, dimension)
    table = item_table(selected, items, notes, config)
    described = {
        name: dimension_categories(config, name, selected)
        for name in map(str, table["dimension"].unique())
    }
    scored = _categorize(table[table["ai_score"].notna()], described)
    groups = (
        []
        if scored.empty
        else [
            _group({k: key_value(v) for k, v in zip(by, key)}, group, described, pass_mark, top)
            for key, group in scored.groupby(list(by), dropna=False, sort=True)
        ]
    )
    return CalibrationReport(by, pass_mark, tuple(groups), int(table["ai_score"].isna().sum()))


# -------------------------------------------------------------------------------------- the command


def _markdown(report: CalibrationReport) -> list[str]:
    """AI judge against humans, one section per group."""
    from .report import ci, fmt, p_value, table

    lines = [
        f"# Calibration: AI judge vs humans (by {', '.join(report.by)})",
        "",
        f"Items rated but not scored by the AI: {report.unscored}. PASS at AI score ≥ "
        f"{report.pass_mark}.",
        "",
    ]
    rows = [
        (
            _key(g.key),
            g.n,
            g.n_ratings,
            fmt(g.spearman.coefficient),
            p_value(g.spearman.p_value),
            ci(g.spearman.ci),
            fmt(g.kendall.coefficient),
            fmt(g.categories.kappa),
            fmt(g.pass_fail.kappa),
            fmt(g.mean_ai),
            fmt(g.mean_human),
            fmt(g.mean_delta),
        )
        for g in report.groups
    ]
    lines += table(
        [
            "group",
            "items",
            "ratings",
            "Spearman ρ",
            "p",
            "95% CI",
            "Kendall τ",
            "κ (categories)",
            "κ (pass/fail)",
            "AI mean",
            "human mean",
            "human − AI",
        ],
        rows,
    )
    for group in report.groups:
        lines += _markdown_group(group)
    return lines


def _key(key: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in key.items()) or "all"


def _markdown_group(group: CalibrationGroup) -> list[str]:
    from .report import fmt, table

    lines = ["", f"## {_key(group.key)}", ""]
    lines += [f"- note: {note}" for note in group.notes] + ([""] if group.notes else [])
    matrix = group.categories.confusion
    if isinstance(matrix, ConfusionMatrix):
        lines += ["Confusion matrix (rows: AI category, columns: human category):", ""]
        lines += table(
            ["AI \\ human", *matrix.labels],
            [(label, *row) for label, row in zip(matrix.labels, matrix.counts)],
        )
        lines.append("")
    if group.disagreements:
        lines += ["Largest disagreements:", ""]
        lines += table(
            ["run", "item", "query", "AI", "human", "human − AI", "judgments", "notes"],
            [
                (
                    d.run_id,
                    d.item_id,
                    d.query or "",
                    fmt(d.ai_score, 2),
                    fmt(d.human_score, 2),
                    fmt(d.delta, 2),
                    ", ".join(d.judgments),
                    " / ".join(d.notes),
                )
                for d in group.disagreements
            ],
        )
    return lines


def _charts(report: CalibrationReport, inputs: Any) -> dict[str, Any]:
    from .charts import calibration_scatter, judgment_distribution

    return {
        "calibration": lambda: calibration_scatter(
            _points(inputs.frames, inputs.dimension, inputs.config)
        ),
        "distribution": lambda: judgment_distribution(inputs.frames.ratings, inputs.config),
    }


def _points(frames: Any, dimension: str | None, config: Any = None) -> list[tuple[float, float]]:
    """(AI score, mean human score) per rated item the AI scored."""
    from .load import ai_score_column

    ratings = (
        frames.ratings
        if dimension is None
        else frames.ratings[frames.ratings["dimension"] == dimension]
    )
    points: list[tuple[float, float]] = []
    for dim, group in ratings.groupby("dimension"):
        human = group.groupby(["run_id", "item_id"])["score"].mean().rename("human").reset_index()
        metric = config.metric_for(dim) if config is not None else None
        items = frames.items.assign(ai=ai_score_column(frames.items, dim, metric))[
            ["run_id", "item_id", "ai"]
        ]
        joined = human.merge(items, on=["run_id", "item_id"]).dropna()
        points += list(zip(joined["ai"], joined["human"]))
    return points


def _digest(inputs: Inputs, runs: Sequence[str] | None) -> list[str]:
    """Per dimension, the judge's Spearman ρ and κ (categories) against the humans' gold labels
    (``inputs`` holds them: the registration reads gold labels)."""
    lines = []
    for group in calibration(inputs.frames, inputs.config).groups:
        rho, kappa = group.spearman.coefficient, group.categories.kappa
        if isinstance(rho, float):
            extra = f", κ {kappa:.2f}" if isinstance(kappa, float) else ""
            on = group.key.get("dimension", "all")
            lines.append(
                f"AI judge vs humans on {on}: Spearman ρ {rho:.2f}{extra} ({group.n} items)"
            )
    return lines


@analysis(
    "calibration",
    markdown=_markdown,
    charts=_charts,
    gold=True,
    digest=_digest,
    options=[
        Option(
            "by",
            str,
            "dimension",
            "Group by these, comma-separated",
            many=True,
            choices=GROUP_KEYS,
            required=True,
        )
    ],
)
def calibration_command(inputs: Inputs, *, by: tuple[str, ...]) -> CalibrationReport:
    """The AI judge against the humans: Spearman ρ, Kendall τ, κ on categories, confusion matrix, Δ, worst items.

    Example: hilbot analyze calibration --by dimension,category
    """
    return calibration(
        inputs.frames, inputs.config, run=inputs.run, dimension=inputs.dimension, by=by
    )


__all__ = [
    "GROUP_KEYS",
    "Agreement",
    "CalibrationGroup",
    "CalibrationReport",
    "ConfusionMatrix",
    "Disagreement",
    "calibration",
    "confusion_kappa",
    "confusion_matrix",
]
