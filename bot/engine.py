"""The review engine: what every review session in one process shares. One
:class:`ReviewEngine` holds the store, the config, the ratings log folded into the ledger, each
run read once (re-read when it grows) and its items in assignment order, and the judge the "AI
review" button asks (the LLM, also about a change triaged locally); sessions
(:class:`bot.review.ReviewSession`) are started from it, one per reviewer, run and dimension, and
what it loads is kept out of the garbage collector's walks, as it lives as long as the engine.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluation import HilbotConfig, ItemData, LogIssue, Reviewer, Run, Store

from . import assignment
from .ledger import start_ledger

if TYPE_CHECKING:
    from .review import ReviewSession


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _long_lived() -> None:
    """Take what is loaded now (the log folded into the ledger, a run's items) out of the garbage
    collector's walks.

    They live as long as the engine. A full collection walks every object it tracks: with a run
    of 2,100 items loaded, one such walk in the middle of 300 taps stopped the bot for 76 ms.
    Frozen objects are still freed when nothing refers to them (a re-read run's old items).
    """
    gc.freeze()


class ReviewEngine:
    """Shared state for every session in one process: the store, the config and the folded log."""

    def __init__(self, store: Store, config: HilbotConfig, issues: list[LogIssue] | None = None):
        self.store = store
        self.config = config
        self.issues = issues
        """Unreadable lines of the ratings log and of every run read, each reported once (None: not
        collected)."""
        self._offset = _size(store.ratings.path) if store.shared else 0
        """How far into the ratings log's copy the ledger has folded (a shared store): measured
        before the fold, so a line is at worst folded twice, in order, never missed."""
        self.ledger = start_ledger(store, issues)
        self._runs: dict[str, Run] = {}
        self._sizes: dict[str, int] = {}
        self._orders: dict[str, tuple[Run, list[ItemData]]] = {}
        self._numbers: dict[str, tuple[list[ItemData], dict[str, int]]] = {}
        self._triage_judge: Any = None
        self._no_model: str | None = None
        """Why the AI review is the local rules' (no key, not allowed), once asked."""
        self._asked = self._caught = 0
        self._catching: asyncio.Lock | None = None
        _long_lived()

    async def catch_up(self) -> None:
        """With a shared store (several replicas): fold into the ledger what the others stored
        since the last look, so a tap on a card another replica dealt is handled the same. Callers
        that ask while a look is under way wait for the next one; with the JSONL files, nothing."""
        if not self.store.shared:
            return
        self._catching = self._catching or asyncio.Lock()
        self._asked += 1
        ticket = self._asked
        async with self._catching:
            if self._caught >= ticket:
                return
            target = self._asked
            await asyncio.to_thread(self.store.sync)
            self._caught = target
            self.fold_copy()

    def fold_copy(self) -> int:
        """Fold the lines of the ratings log's copy beyond what the ledger has folded, but those
        this process stored (they were folded as they were stored); returns how many. Read from
        the copy, not from what this process pulled: another reader of the data directory (the
        dashboard) may have pulled them."""
        from evaluation.backends import SharedLog
        from evaluation.log import parse_line

        log = self.store.ratings
        if not isinstance(log, SharedLog):
            return 0
        lines, self._offset = log.since(self._offset)
        for line in lines:
            try:
                self.ledger.add(parse_line(line))
            except (ValueError, RecursionError):
                continue  # a bad line is the readers' to report
        return len(lines)

    def expire_claims(self) -> set[str]:
        """Expire the store's claims past their time (a shared store); returns the runs whose
        items were freed (the next catch-up folds the expiries)."""
        from evaluation.log import parse_line

        return {parse_line(line, as_dict=True)["run_id"] for line in self.store.expire()}

    async def review_change(self, item: ItemData) -> str:
        """The AI review of a change item, asked for now (``R``/``i``, the AI review button), as
        text: the LLM's (``[llm]``, its cache), also when the triage was local, unless ``[triage]
        llm_on_request`` is off; the local rules' when no model can be asked, saying why. One judge
        per engine."""
        from evaluation.triage import triage_judge
        from evaluation.triage_items import change_of
        from evaluation.triage_report import triage_text

        if self._triage_judge is None:
            self._triage_judge, self._no_model = self._review_judge()
        change = change_of(item)
        triage = await self._triage_judge.triage(change)
        why = self._no_model
        if triage.error:  # the call failed: the local rules' review, and why
            why = f"local rules only: the model's review failed — {triage.error}"
            triage = await triage_judge("local", self.config, self.store).triage(change)
        return triage_text(triage) + (f"\n\n({why})" if why else "")

    def _review_judge(self) -> tuple[Any, str | None]:
        """The judge the AI review asks: the LLM when allowed and configured; else the local rules,
        with why."""
        from evaluation import HilbotError
        from evaluation.triage import LLMTriage, triage_judge

        settings = self.config.triage
        why = "local rules only: set [triage] llm_on_request = true for a model's review"
        if settings.judge == "llm" or settings.llm_on_request:
            try:
                return LLMTriage(self.config, self.store), None
            except HilbotError as exc:  # no key for the provider
                why = f"local rules only: no model's review — {exc.one_line()}"
        return triage_judge("local", self.config, self.store), why

    def order(self, run_id: str) -> list[ItemData]:
        """The run's items in assignment order, worked out once per reading of the run."""
        run = self.run(run_id)
        if self._orders.get(run_id, (None,))[0] is not run:
            self._orders[run_id] = (run, assignment.order(run))
        return self._orders[run_id][1]

    def number(self, run_id: str, item_id: str) -> int:
        """An item's card number: its place in the run's assignment order, the same for every
        reviewer, in every session and on every channel (a run still growing may renumber)."""
        order = self.order(run_id)
        if self._numbers.get(run_id, (None,))[0] is not order:
            self._numbers[run_id] = (order, {item.id: n for n, item in enumerate(order, 1)})
        numbers = self._numbers[run_id][1]
        return numbers.get(item_id, len(numbers) + 1)

    def run(self, run_id: str) -> Run:
        """A run, read once and cached (see :meth:`refresh`)."""
        if run_id not in self._runs:
            self._sizes[run_id] = (
                self.store.run_path(run_id).stat().st_size if self.store.run_exists(run_id) else 0
            )
            if self.issues is None:
                self._runs[run_id] = self.store.load_run(run_id)
            else:
                found: list[LogIssue] = []
                self._runs[run_id] = self.store.load_run(run_id, found)
                self.issues.extend(i for i in found if i not in self.issues)
            _long_lived()
        return self._runs[run_id]

    def growing(self, run_id: str) -> bool:
        """Whether a run is still being evaluated (no summary yet). A run not read yet is not read
        for this: its file's facts are (kept beside the index), so a bot that resumes many
        sessions of finished runs holds none of them."""
        if run_id in self._runs:
            return self._runs[run_id].summary is None
        from analysis.index.runs import run_facts

        found: list[LogIssue] = []
        facts = run_facts(self.store, run_id, found)
        if self.issues is not None:
            self.issues.extend(i for i in found if i not in self.issues)
        return not facts.complete

    def refresh(self, run_id: str) -> int:
        """Re-read a run whose file has grown (it is still being evaluated); returns the new item
        count."""
        before = len(self.run(run_id).items)
        size = self.store.run_path(run_id).stat().st_size
        if size == self._sizes.get(run_id):
            return 0
        del self._runs[run_id]
        return len(self.run(run_id).items) - before

    def session(
        self,
        run_id: str,
        reviewer: Reviewer,
        dimension: str | None = None,
        channel: str = "terminal",
    ) -> ReviewSession:
        """Start or resume a reviewer's session on a run and dimension (default: the run's
        first)."""
        run = self.run(run_id)
        dimension = (
            run.header.dimensions[0] if dimension is None else dimension
        )  # '' is an unknown dimension
        self.config.dimension(dimension)  # unknown dimension → ConfigError with the fix
        self.ledger.load(run_id)
        from .review import ReviewSession

        return ReviewSession(self, run, dimension, reviewer, channel)


__all__ = ["ReviewEngine"]
