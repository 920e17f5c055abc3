"""The run output: verbose (default), quiet and silent lines, as plain strings, and the CI gate.

Queries, results, answers, quotes and error details come from outside; every line is made safe
for a terminal with :func:`evaluation.text.visible` (one line each, control characters visible).

The gate (:func:`gate_failed`) is the same whatever the output mode: it fails on a regression,
on more unjudged items than ``[judge] max_unjudged`` tolerates, when every query came back empty,
and when no item has an overall score at all.
"""

from __future__ import annotations

from statistics import mean
from typing import TYPE_CHECKING

from .records import ItemData, JudgeInfo
from .runs import Run
from .scrub import scrub
from .text import visible

if TYPE_CHECKING:
    from .regressions import RegressionReport

PASS_MARK = 0.6
"""``overall`` at or above this gets ✓ in verbose output, below it ✗."""


def _line(text: str) -> str:
    """One line for a terminal: whitespace runs folded to a space, secrets scrubbed, control
    characters made visible."""
    return visible(scrub(" ".join(text.split())), newlines=False)


def _snippet(text: str, limit: int = 90) -> str:
    text = _line(text)
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _scores(item: ItemData) -> str:
    scores = item.evaluation.scores
    ordered = [k for k in scores if k != "overall"] + (["overall"] if "overall" in scores else [])
    return " ".join(f"{_line(k)}={scores[k]:.2f}" for k in ordered)


def signed(value: float | None, none: str = "–") -> str:
    """A difference to two decimals with its sign: ``+0.05``, ``−0.05`` (a real minus sign),
    ``0.00``; ``none`` for None."""
    if value is None:
        return none
    text = f"{abs(value):.2f}"
    return text if text == "0.00" else ("+" if value > 0 else "−") + text


def judge_label(judge: object = None, kind: str | None = None) -> str:
    """Who scored an item, from the judge's kind: ``AI`` (llm), ``AI [name]`` (recorded: e.g. ``AI
    [recorded]`` for imported scores), and a local judge's own name (``lexical``, ``bm25``): local
    methods are never labelled AI.

    ``judge`` is a name (what an item's ``evaluation.judge`` holds), or anything carrying ``name``
    and ``kind`` (a run header's :class:`~evaluation.records.JudgeInfo`, a judge). Without a kind, a
    judge registered under that name gives its declared kind; only a name no judge registers (a
    ``provider/model``, an imported tool's) falls back to the guess older files need
    (:func:`~evaluation.records.legacy_judge_kind`).
    """
    from .records import legacy_judge_kind

    name = (
        judge
        if judge is None or isinstance(judge, str)
        else (getattr(judge, "registry_name", None) or getattr(judge, "name", None))
    )
    if kind is None and not (judge is None or isinstance(judge, str)):
        kind = getattr(judge, "kind", None)
    if kind is None and name is not None and "/" not in name:
        from .judges import registered_kind

        kind = registered_kind(name)
    if kind is None:
        kind = legacy_judge_kind(name)
    if kind == "llm":
        return "AI"
    if kind == "local":
        return _line(name or "local")
    return f"AI [{_line(name or 'recorded')}]"


def who_judged(item: ItemData, judge: JudgeInfo | None = None) -> str:
    """The label of whoever scored ``item``: its name, with the kind of judge its run header records
    (every item of a run was scored the same way: an imported run's items are ``recorded`` whatever
    names they carry). Without a header, from the item's judge name alone (see
    :func:`judge_label`)."""
    name = item.evaluation.judge
    return (
        judge_label(name or judge.name, kind=judge.kind) if judge is not None else judge_label(name)
    )


def verbose_item(
    item: ItemData,
    position: int,
    total: int,
    *,
    max_results: int = 3,
    judge: JudgeInfo | None = None,
) -> list[str]:
    """``[1/15] "query"``, the top results or the answer, then the AI line."""
    lines = [f'[{position}/{total}] "{_line(item.query.query)}"']
    for number, result in enumerate(item.results[:max_results], 1):
        score = f"[{result.score:.2f}] " if result.score is not None else ""
        lines.append(
            f"  → {result.rank or number}. "
            f"{score}{_line(result.path or result.title or '(untitled)')}"
        )
        if result.snippet:
            lines.append(f'       "{_snippet(result.snippet)}"')
    if len(item.results) > max_results:
        lines.append("  ...")
    if item.answer is not None and not item.results:
        lines.append(f'  → "{_snippet(item.answer, 110)}"')
    for quote in item.quotes[:2]:
        lines.append(f'  ❝ "{_snippet(quote)}"')
    evaluation = item.evaluation
    who = who_judged(item, judge)
    if item.error:
        lines.append(f"  ✗ target failed: {_line(item.error)}")
    elif returned_nothing(item):
        lines.append(f"  ✗ {_nothing(item)}: overall=0.00 (not judged)")
    elif evaluation.error:
        lines.append(f"  ✗ {who}: judging failed: {_line(evaluation.error)}")
    else:
        overall = evaluation.scores.get("overall")
        mark = "✓" if overall is not None and overall >= PASS_MARK else "✗"
        lines.append(f"  {mark} {who}: {_scores(item)}")
    return lines


def quiet_item(item: ItemData, position: int, total: int, *, judge: JudgeInfo | None = None) -> str:
    """``[1/15] "query" - overall: 0.76 (AI)``: the label says which judge scored it (``lexical``,
    ``AI``…)."""
    overall = item.evaluation.scores.get("overall")
    value = f"{overall:.2f}" if overall is not None else "n/a"
    line = f'[{position}/{total}] "{_line(item.query.query)}" - overall: {value}'
    line += f" ({who_judged(item, judge)})"
    if returned_nothing(item):
        return f"{line} ({_nothing(item)})"
    return (
        line
        if not (item.error or item.evaluation.error)
        else f"{line} ({'target' if item.error else 'judging'} failed)"
    )


def returned_nothing(item: ItemData) -> bool:
    """Whether the target gave nothing to judge: no error, no results and no answer text."""
    return not item.error and not item.results and not (item.answer or "").strip()


def _nothing(item: ItemData) -> str:
    return "no results" if item.answer is None else "empty answer"


def unjudged(run: Run) -> list[ItemData]:
    """The items that were not judged: the target failed, or the judge did."""
    return [i for i in run.items if i.error or i.evaluation.error]


def empty(run: Run) -> list[ItemData]:
    """The items the target returned nothing for (each scored 0)."""
    return [i for i in run.items if returned_nothing(i)]


def _unscored(run: Run) -> bool:
    """Whether items were judged and not one has an overall score: nothing was measured."""
    judged = [i for i in run.items if not (i.error or i.evaluation.error)]
    return bool(judged) and all(i.evaluation.scores.get("overall") is None for i in judged)


def _too_many_unjudged(run: Run, tolerance: float) -> bool:
    missed = len(unjudged(run))
    return missed > 0 and missed > tolerance * len(run.items)


def gate_failed(run: Run, report: "RegressionReport | None" = None, tolerance: float = 0.0) -> bool:
    """Whether CI should fail: a regression, more unjudged items than the tolerated share, every
    query empty, or no overall score at all. The output mode has no say."""
    all_empty = bool(run.items) and len(empty(run)) == len(run.items)
    regressed = bool(report and report.regressed)
    return regressed or _too_many_unjudged(run, tolerance) or all_empty or _unscored(run)


def _empty_line(run: Run) -> str | None:
    """``❌ 15 of 15 queries returned no results`` (all: the gate fails), ``⚠ 3 of 15 …`` (some),
    or None."""
    nothing = empty(run)
    if not nothing:
        return None
    what = "returned no results" if run.header.kind == "search" else "returned an empty answer"
    if len(nothing) == len(run.items):
        return f"❌ {len(nothing)} of {len(run.items)} queries {what}"
    return f"⚠ {len(nothing)} of {len(run.items)} queries {what} (each scored 0)"


def silent_lines(
    run: Run, report: "RegressionReport | None" = None, tolerance: float = 0.0
) -> list[str]:
    """The CI lines: average overall, the queries that came back empty and the items that went
    unjudged (if any), then the verdict.

    A run is never reported as a pass when items nobody could judge exceed the tolerated share, when
    every query came back empty, or when no item has an overall score.
    """
    overall = [s for i in run.items if (s := i.evaluation.scores.get("overall")) is not None]
    average = f"{mean(overall):.2f}" if overall else "n/a"
    lines = [f"📈 Average overall score: {average}"]
    lines += [line for line in (_empty_line(run),) if line]
    missed = unjudged(run)
    if missed:
        first = (
            missed[0].error and f"target failed: {missed[0].error}" or missed[0].evaluation.error
        )
        tolerated = not _too_many_unjudged(run, tolerance)
        allowed = f" (tolerated: up to {tolerance:.0%})" if tolerated else ""
        lines.append(
            f"❌ {len(missed)} of {len(run.items)} items could not be judged{allowed}: "
            f"{_line(first or '')}"
        )
    if _unscored(run):
        judged = len(run.items) - len(missed)
        nothing = "has an overall score: nothing was measured"
        lines.append(f"❌ none of the {judged} judged items {nothing}")
    verdict = report.verdict() if report else None
    if verdict:
        lines.append(verdict)
    elif not gate_failed(run, report, tolerance):
        lines.append(
            "✅ No regressions detected"
            + (f" among the {len(overall)} judged items" if missed else "")
        )
    return lines


def run_lines(run: Run, mode: str = "verbose") -> list[str]:
    """All output lines of a run in ``verbose``, ``quiet`` or ``silent`` mode."""
    if mode == "silent":
        return silent_lines(run)
    total, lines = len(run.items), []
    for position, item in enumerate(run.items, 1):
        if mode == "quiet":
            lines.append(quiet_item(item, position, total, judge=run.header.judge))
        else:
            lines.extend(verbose_item(item, position, total, judge=run.header.judge) + [""])
    return lines
