"""The run output: verbose (default), quiet and silent lines, as plain strings.

Queries, results, answers, quotes and error details come from outside; every line is made safe
for a terminal with :func:`evaluation.text.visible` (one line each, control characters visible).
"""

from __future__ import annotations

from statistics import mean

from .records import ItemData, JudgeInfo
from .runs import Run
from .scrub import scrub
from .text import visible

PASS_MARK = 0.6
"""``overall`` at or above this gets ✓ in verbose output, below it ✗."""


def _line(text: str) -> str:
    """One line for a terminal: whitespace runs folded to a space, secrets scrubbed, control characters made visible."""
    return visible(scrub(" ".join(text.split())), newlines=False)


def _snippet(text: str, limit: int = 90) -> str:
    text = _line(text)
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _scores(item: ItemData) -> str:
    scores = item.evaluation.scores
    ordered = [k for k in scores if k != "overall"] + (["overall"] if "overall" in scores else [])
    return " ".join(f"{_line(k)}={scores[k]:.2f}" for k in ordered)


def signed(value: float | None, none: str = "–") -> str:
    """A difference to two decimals with its sign: ``+0.05``, ``−0.05`` (a real minus sign), ``0.00``; ``none`` for None."""
    if value is None:
        return none
    text = f"{abs(value):.2f}"
    return text if text == "0.00" else ("+" if value > 0 else "−") + text


def judge_label(judge: object = None, kind: str | None = None) -> str:
    """Who scored an item, from the judge's kind: ``AI`` (llm), ``AI [name]`` (recorded: e.g. ``AI [recorded]``
    for imported scores), and a local judge's own name (``lexical``, ``bm25``): local methods are never labelled AI.

    ``judge`` is a name (what an item's ``evaluation.judge`` holds), or anything carrying ``name`` and ``kind``
    (a run header's :class:`~evaluation.records.JudgeInfo`, a judge). Without a kind, a judge registered under
    that name gives its declared kind; only a name no judge registers (a ``provider/model``, an imported
    tool's) falls back to the guess older files need (:func:`~evaluation.records.legacy_judge_kind`).
    """
    from .records import legacy_judge_kind

    name = judge if judge is None or isinstance(judge, str) else (getattr(judge, "registry_name", None)
                                                                    or getattr(judge, "name", None))
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
    """The label of whoever scored ``item``: its name, with the kind of judge its run header records (every item
    of a run was scored the same way: an imported run's items are ``recorded`` whatever names they carry).
    Without a header, from the item's judge name alone (see :func:`judge_label`)."""
    name = item.evaluation.judge
    return judge_label(name or judge.name, kind=judge.kind) if judge is not None else judge_label(name)


def verbose_item(item: ItemData, position: int, total: int, *, max_results: int = 3, judge: JudgeInfo | None = None) -> list[str]:
    """``[1/15] "query"``, the top results or the answer, then the AI line."""
    lines = [f'[{position}/{total}] "{_line(item.query.query)}"']
    for number, result in enumerate(item.results[:max_results], 1):
        score = f"[{result.score:.2f}] " if result.score is not None else ""
        lines.append(f"  → {result.rank or number}. {score}{_line(result.path or result.title or '(untitled)')}")
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
    elif evaluation.error:
        lines.append(f"  ✗ {who}: judging failed: {_line(evaluation.error)}")
    else:
        overall = evaluation.scores.get("overall")
        mark = "✓" if overall is not None and overall >= PASS_MARK else "✗"
        lines.append(f"  {mark} {who}: {_scores(item)}")
    return lines


def quiet_item(item: ItemData, position: int, total: int, *, judge: JudgeInfo | None = None) -> str:
    """``[1/15] "query" - overall: 0.76 (AI)``: the label says which judge scored it (``lexical``, ``AI``…)."""
    overall = item.evaluation.scores.get("overall")
    value = f"{overall:.2f}" if overall is not None else "n/a"
    line = f'[{position}/{total}] "{_line(item.query.query)}" - overall: {value}'
    line += f" ({who_judged(item, judge)})"
    return line if not (item.error or item.evaluation.error) else f"{line} ({'target' if item.error else 'judging'} failed)"


def unjudged(run: Run) -> list[ItemData]:
    """The items that were not judged: the target failed, or the judge did."""
    return [i for i in run.items if i.error or i.evaluation.error]


def gate_failed(run: Run, regressions: int, tolerance: float = 0.0) -> bool:
    """Whether CI should fail: a regression, or more unjudged items than the tolerated share."""
    missed = len(unjudged(run))
    return regressions > 0 or (missed > 0 and missed > tolerance * len(run.items))


def silent_lines(run: Run, regressions: int = 0, tolerance: float = 0.0) -> list[str]:
    """The CI lines: average overall, how many items went unjudged (if any), the regression verdict.

    A run with items nobody could judge is never reported as a pass: the regression verdict
    speaks only when every item beyond the tolerated share was judged.
    """
    overall = [s for i in run.items if (s := i.evaluation.scores.get("overall")) is not None]
    average = f"{mean(overall):.2f}" if overall else "n/a"
    lines = [f"📈 Average overall score: {average}"]
    missed = unjudged(run)
    if missed:
        first = missed[0].error and f"target failed: {missed[0].error}" or missed[0].evaluation.error
        allowed = f" (tolerated: up to {tolerance:.0%})" if not gate_failed(run, 0, tolerance) else ""
        lines.append(f"❌ {len(missed)} of {len(run.items)} items could not be judged{allowed}: {_line(first or '')}")
    if regressions:
        lines.append(f"❌ {regressions} regression(s) detected")
    elif not gate_failed(run, 0, tolerance):
        lines.append("✅ No regressions detected" + (f" among the {len(overall)} judged items" if missed else ""))
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
