"""Gold labels for the analyses: one row per item and dimension instead of one per reviewer.

Calibration, correlation, patterns and synthesis compare the AI (or the items' features) with *the*
human label of each item. That label is the item's gold label (:mod:`evaluation.gold` has the
rules): an adjudicator's consensus where there is one, else a rule that says it is derived (a single
label, the majority, the lower median); excluded and unresolved items are left out and counted.
Agreement (:mod:`analysis.agreement`) never uses gold labels: it measures the independent ratings.

:func:`gold_ratings` gives a frame with the ``ratings`` frame's columns: an item with one label and
no adjudication keeps its rating's row as it is; any other item gets one row copied from its latest
rating with the gold ``judgment`` and ``score``, ``reviewer`` and ``channel`` ``"gold"`` and the
reviewers' notes joined. Each row also says ``gold_source`` and ``n_labels``.

The rules run on arrays over every item at once (a million-line log has some 17,000 items): each
rating gets its item's code, one stable sort puts an item's labels in the rule's order (score, then
judgment), and the lower median, the majority and the counts are read off it. An adjudicated item,
or one with a NaN score, goes through :func:`evaluation.gold.gold_label` itself;
``tests/analysis/test_gold.py`` holds the frame equal to the rule applied item by item.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evaluation.gold import DERIVED, Source, gold_label

from .vocabulary import KEY3, Report

if TYPE_CHECKING:
    from evaluation.config import HilbotConfig
    from evaluation.log import LogIssue

    from .load import Frames


@dataclass(frozen=True)
class GoldCounts(Report):
    """How the items' gold labels were reached."""

    items: int
    """Items (and dimensions) with a rating or an adjudication."""
    adjudicated: int
    """Labelled by an adjudicator's consensus."""
    excluded: int
    """Excluded by an adjudicator: left out."""
    derived: int
    """Labelled by a rule: a single label, the majority or the median."""
    unresolved: int
    """Labels tied on a two-option scale, no adjudication: left out."""
    multi_labelled: bool = False
    """Whether some item has more than one label."""

    @property
    def differs(self) -> bool:
        """Whether gold labels say more than the ratings do (some item has several labels or an
        adjudication)."""
        return bool(self.adjudicated or self.excluded or self.unresolved or self.multi_labelled)

    def line(self) -> str:
        """The one line a report shows."""
        return (
            f"Gold labels: {self.items} items — {self.adjudicated} adjudicated, {self.derived} "
            f"derived by rule (single label, majority or median); {self.excluded} excluded and "
            f"{self.unresolved} unresolved, left out."
        )


_LAST_READ: dict[str, tuple[tuple[int, ...], list[Any], list["LogIssue"]]] = {}
"""The last log read for its adjudications, by path: its size, time and inode when read, the
records and the bad lines (the digest asks twice: for the gold labels and for the synthesis)."""


def read_adjudications(path: Any, issues: list["LogIssue"] | None = None) -> list[Any]:
    """Every ``adjudication`` record of the log at ``path``, in log order (the latest per item
    counts); bad candidate lines go to ``issues``. A log unchanged since the last read (same size,
    modification time and inode) is not read again."""
    import os

    from ._records import read_typed

    try:
        found = os.stat(path)
        stamp: tuple[int, ...] | None = (found.st_size, found.st_mtime_ns, found.st_ino)
    except OSError:
        stamp = None
    last = _LAST_READ.get(str(path))
    if stamp is None or last is None or last[0] != stamp:
        bad: list[LogIssue] = []
        records = [record for _, record in read_typed(path, "adjudication", bad)]
        last = (stamp or (), records, bad)
        _LAST_READ.clear()
        if stamp is not None:
            _LAST_READ[str(path)] = last
    if issues is not None:
        issues.extend(last[2])
    return list(last[1])


def _scale(config: "HilbotConfig", dimension: str) -> Any:
    dim = config.dimensions.get(dimension)
    return config.scales.get(dim.scale) if dim else None


def gold_ratings(
    ratings: pd.DataFrame, adjudications: list[Any], config: "HilbotConfig"
) -> tuple[pd.DataFrame, GoldCounts]:
    """The gold-label frame (see the module doc) and the counts; ``ratings`` is the loader's ratings
    frame."""
    derived = _Derived.of(ratings, adjudications, config)
    return derived.frame, derived.counts


def gold_frames(
    frames: "Frames", adjudications: list[Any], config: "HilbotConfig"
) -> tuple["Frames", GoldCounts]:
    """``frames`` with gold-label ratings, and the concerns, notes and skips of left-out items
    removed."""
    derived = _Derived.of(frames.ratings, adjudications, config)
    ratings = derived.frame
    concerns, items = derived.gold_concerns(frames.concerns)
    if len(ratings) and len(concerns):
        gold = (ratings["reviewer"] == "gold").to_numpy()
        tags = _distinct(items, concerns["tag"], derived.groups)
        ratings.loc[gold, "n_concerns"] = tags[derived.usable[gold]]
    notes = derived.kept(frames.notes)[0]
    return replace(frames, ratings=ratings, concerns=concerns, notes=notes), derived.counts


_SOURCES: tuple[Source, ...] = (
    "consensus",
    "excluded",
    "single",
    "majority",
    "median",
    "unresolved",
)
"""The gold sources, by their code in :class:`_Gold`."""
_CONSENSUS, _EXCLUDED, _SINGLE, _MAJORITY, _MEDIAN, _UNRESOLVED = range(len(_SOURCES))


@dataclass
class _Gold:
    """Per item: the gold source's code, the gold label's judgment and score, and whether an
    adjudication decided it."""

    source: np.ndarray
    judgment: np.ndarray
    score: np.ndarray
    decided: np.ndarray


class _Keys:
    """The items (run, item, dimension) of a ratings frame: each row's item code, items numbered in
    the order they first appear in log order (as ``groupby(sort=False)`` numbers them); and the
    item code of another table's rows."""

    def __init__(self, ratings: pd.DataFrame, order: np.ndarray) -> None:
        codes, self.names = [], []
        for column in KEY3:
            code, names = pd.factorize(ratings[column].to_numpy(dtype=object))
            codes.append(code)
            self.names.append(pd.Index(names, dtype=object))
        valid = (codes[0] >= 0) & (codes[1] >= 0) & (codes[2] >= 0)  # a key missing: no item
        self.rows = order if valid.all() else order[valid[order]]
        """Positions in the ratings frame of the rows with an item, in log order."""
        self.width = (len(self.names[1]), len(self.names[2]))
        run_item, pairs = pd.factorize((codes[0] * self.width[0] + codes[1])[self.rows])
        self.pairs = pd.Index(pairs)
        self.code, items = pd.factorize(run_item * self.width[1] + codes[2][self.rows])
        self.items = pd.Index(items)
        self.dimension = codes[2][self.rows]

    def of(self, table: pd.DataFrame) -> np.ndarray:
        """The item code of each row of ``table`` (-1: an item no rating has)."""
        codes = [
            names.get_indexer(table[column].to_numpy(dtype=object))
            for names, column in zip(self.names, KEY3)
        ]
        pair = self.pairs.get_indexer(codes[0] * self.width[0] + codes[1])
        item = self.items.get_indexer(pair * self.width[1] + codes[2])
        known = (codes[0] >= 0) & (codes[1] >= 0) & (codes[2] >= 0) & (pair >= 0)
        return np.where(known, item, -1)


class _Labels:
    """The labels of each item as arrays, rows in log order: item code, score, judgment."""

    def __init__(self, ratings: pd.DataFrame, keys: _Keys) -> None:
        self.keys, rows = keys, keys.rows
        self.codes = keys.code
        self.groups = len(keys.items)
        self.size = np.bincount(self.codes, minlength=self.groups)
        self.score = ratings["score"].to_numpy(dtype=np.float64)[rows]
        raw, uniques = pd.factorize(
            ratings["judgment"].to_numpy(dtype=object), use_na_sentinel=False
        )  # each judgment as the rule sees it: str() of the value
        same, judgments = pd.factorize(np.array([str(u) for u in uniques], dtype=object))
        self.judgments = np.asarray(judgments, dtype=object)
        self.judgment_code = same[raw][rows]
        places = {j: place for place, j in enumerate(sorted(self.judgments.tolist()))}
        self.judgment_place = np.array([places[j] for j in self.judgments], dtype=np.int64)
        position, codes = np.arange(len(rows)), pd.Series(self.codes)
        self.first = position[~codes.duplicated().to_numpy()]  # in item order
        last = position[~codes.duplicated(keep="last").to_numpy()]
        self.last = np.empty(self.groups, np.int64)
        self.last[self.codes[last]] = last

    def gold(self, adjudications: list[Any], config: "HilbotConfig") -> _Gold:
        """Each item's gold label by the rules (:func:`evaluation.gold.gold_label`)."""
        size = self.size
        order = self._sorted()
        median = order[np.cumsum(size) - size + (size - 1) // 2]  # the lower median
        majority, major_row = self._majority(order)
        source = np.where(
            size == 1,
            _SINGLE,
            np.where(
                majority, _MAJORITY, np.where(self._two_options(config), _UNRESOLVED, _MEDIAN)
            ),
        )
        row = np.where(majority, major_row, median)
        gold = _Gold(
            source,
            self.judgments[self.judgment_code[row]],
            self.score[row],
            np.zeros(self.groups, dtype=bool),
        )
        self._by_rule(gold, adjudications, config)
        return gold

    def _sorted(self) -> np.ndarray:
        """The rows by item, then as the rule orders an item's labels: by score, then judgment
        (equal ones in log order)."""
        code, scores = pd.factorize(self.score, use_na_sentinel=False)
        rank = np.searchsorted(np.unique(scores), scores)  # -0.0 and 0.0 equal; NaN last
        width, place = len(self.judgments), self.judgment_place[self.judgment_code]
        if self.groups * len(scores) * width >= 2**62:  # too many to number in an int64
            return np.lexsort((place, self.score, self.codes))
        key = (self.codes * len(scores) + rank[code]) * width
        return np.argsort(key + place, kind="stable")

    def _majority(self, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per item: whether one judgment holds more than half its labels, and the row of that
        judgment's first label in (score, judgment) order."""
        width = len(self.judgments)
        pair_code, pairs = pd.factorize(self.codes * width + self.judgment_code)
        count = np.bincount(pair_code)
        place = np.empty(len(order), np.int64)
        place[order] = np.arange(len(order))
        first = np.full(len(pairs), len(order), np.int64)
        np.minimum.at(first, pair_code, place)
        item = np.asarray(pairs) // width
        major = count * 2 > self.size[item]
        majority = np.zeros(self.groups, dtype=bool)
        majority[item[major]] = True
        row = np.zeros(self.groups, np.int64)
        row[item[major]] = order[first[major]]
        return majority, row

    def _two_options(self, config: "HilbotConfig") -> np.ndarray:
        """Per item: whether its dimension's scale has fewer than three options."""
        scales = [_scale(config, name) for name in self.keys.names[2]]
        two = np.array([s is not None and len(s.options) < 3 for s in scales], dtype=bool)
        return two[self.keys.dimension[self.first]]

    def _by_rule(self, gold: _Gold, adjudications: list[Any], config: "HilbotConfig") -> None:
        """Adjudicated items and items with a NaN score: the rule itself, item by item."""
        latest = {(a.run_id, a.item_id, a.dimension): a for a in adjudications}
        decided: dict[int, Any] = {}
        if latest:
            items = self.keys.of(pd.DataFrame(list(latest), columns=KEY3, dtype=object))
            decided = {int(g): a for g, a in zip(items, latest.values()) if g >= 0}
        slow = sorted({*np.unique(self.codes[np.isnan(self.score)]).tolist(), *decided})
        if not slow:
            return
        rows = np.argsort(self.codes, kind="stable")
        starts = np.cumsum(self.size) - self.size
        for g in slow:
            mine = rows[starts[g] : starts[g] + self.size[g]]
            labels = list(zip(self.judgments[self.judgment_code[mine]], self.score[mine].tolist()))
            dimension = self.keys.names[2][self.keys.dimension[self.first[g]]]
            one = gold_label(labels, _scale(config, dimension), decided.get(g))
            gold.source[g] = _SOURCES.index(one.source)
            gold.judgment[g] = one.judgment
            gold.score[g] = np.nan if one.score is None else one.score
            gold.decided[g] = g in decided

    def frame(self, ratings: pd.DataFrame, gold: _Gold, usable: np.ndarray) -> pd.DataFrame:
        """One row per usable item (see the module doc), as the rule item by item gives it."""
        columns = [*ratings.columns, "gold_source", "n_labels"]
        if not len(usable):
            return _empty(ratings)
        taken = ratings.iloc[self.keys.rows[self.last[usable]]]
        data = {c: taken[c].tolist() for c in ratings.columns}
        joined = (self.size[usable] > 1) | gold.decided[usable]  # a gold row of its own
        places, items = np.flatnonzero(joined), usable[joined]
        notes = self._notes(ratings, items)
        values = {
            "judgment": gold.judgment[items],
            "score": gold.score[items],
            "reviewer": "gold",
            "channel": "gold",
            "note": [notes.get(g) for g in items.tolist()],
        }
        for column, value in values.items():
            if column in data:
                merged = np.array(data[column], dtype=object)
                merged[places] = value
                data[column] = merged.tolist()
        data["gold_source"] = [_SOURCES[s] for s in gold.source[usable].tolist()]
        data["n_labels"] = self.size[usable].tolist()
        out = pd.DataFrame(data, columns=columns)
        out = out.astype({c: ratings[c].dtype for c in ratings.columns}, errors="ignore")
        return out.reset_index(drop=True)

    def _notes(self, ratings: pd.DataFrame, items: np.ndarray) -> dict[int, str]:
        """The reviewers' notes of each of ``items``, each once, in log order, joined by ``; ``
        (none for an item without a note)."""
        if "note" not in ratings.columns or not len(items):
            return {}
        wanted = np.zeros(self.groups, dtype=bool)
        wanted[items] = True
        note = ratings["note"].to_numpy(dtype=object)[self.keys.rows]
        rows = np.flatnonzero(~pd.isna(note) & wanted[self.codes])
        texts = pd.Series([str(n) for n in note[rows]], dtype=object)
        table = pd.DataFrame({"item": self.codes[rows], "text": texts})
        table = table[table["text"] != ""].drop_duplicates()
        joined: dict[int, list[str]] = {}
        for g, text in zip(table["item"].tolist(), table["text"].tolist()):
            joined.setdefault(g, []).append(text)
        return {g: "; ".join(texts) for g, texts in joined.items()}


@dataclass
class _Derived:
    """The gold labels of a ratings frame: the gold frame and its counts, and what trims the other
    frames to the items kept."""

    frame: pd.DataFrame
    counts: GoldCounts
    groups: int
    """Items with a label or more."""
    usable: np.ndarray
    """The item code of each row of ``frame``."""
    keys: _Keys | None

    @classmethod
    def of(
        cls, ratings: pd.DataFrame, adjudications: list[Any], config: "HilbotConfig"
    ) -> "_Derived":
        keys = _Keys(ratings, _log_order(ratings)) if len(ratings) else None
        if keys is None or not len(keys.rows):
            none = np.zeros(0, dtype=np.int64)
            return cls(_empty(ratings), GoldCounts(0, 0, 0, 0, 0, False), 0, none, keys)
        labels = _Labels(ratings, keys)
        gold = labels.gold(adjudications, config)
        usable = np.flatnonzero((gold.source != _EXCLUDED) & (gold.source != _UNRESOLVED))
        by_source = dict(zip(_SOURCES, np.bincount(gold.source, minlength=len(_SOURCES)).tolist()))
        counts = GoldCounts(
            labels.groups,
            by_source["consensus"],
            by_source["excluded"],
            sum(by_source[s] for s in DERIVED),
            by_source["unresolved"],
            bool((labels.size > 1).any()),
        )
        return cls(labels.frame(ratings, gold, usable), counts, labels.groups, usable, keys)

    def kept(self, table: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
        """The rows of ``table`` whose item has a gold label (in order, a fresh index; an empty
        table as it is), and their item codes."""
        if table.empty:
            return table, np.zeros(0, dtype=np.int64)
        items = self.keys.of(table) if self.keys is not None else np.full(len(table), -1)
        usable = np.zeros(self.groups + 1, dtype=bool)
        usable[self.usable] = True  # the last place: -1, no item
        keep = usable[items]
        return table[keep].reset_index(drop=True), items[keep]

    def gold_concerns(self, concerns: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
        """The concern tags of the items kept, and their item codes: an item with a gold row has
        that row's, every reviewer's tags each once."""
        concerns, items = self.kept(concerns)
        if concerns.empty or "reviewer" not in concerns.columns:
            return concerns, items
        gold = np.zeros(self.groups, dtype=bool)
        gold[self.usable[(self.frame["reviewer"] == "gold").to_numpy()]] = True
        mine = gold[items]
        tag, _ = pd.factorize(
            concerns.loc[mine, "tag"].to_numpy(dtype=object), use_na_sentinel=False
        )
        once = ~pd.Series(items[mine] * (len(tag) + 1) + tag).duplicated().to_numpy()
        merged = concerns[mine].assign(reviewer="gold")[once]
        out = pd.concat([concerns[~mine], merged], ignore_index=True)
        return out.astype(concerns.dtypes.to_dict()), np.concatenate(
            [items[~mine], items[mine][once]]
        )


def _log_order(ratings: pd.DataFrame) -> np.ndarray:
    """The rows in log order (by ``line``, stable), as positions."""
    if "line" not in ratings.columns or ratings["line"].is_monotonic_increasing:
        return np.arange(len(ratings))
    return np.argsort(ratings["line"].to_numpy(), kind="stable")


def _empty(ratings: pd.DataFrame) -> pd.DataFrame:
    """The gold frame of no item."""
    return (
        ratings.iloc[0:0]
        .assign(gold_source=pd.Series(dtype=str), n_labels=pd.Series(dtype="int64"))
        .reset_index(drop=True)
    )


def _distinct(items: np.ndarray, tags: pd.Series, groups: int) -> np.ndarray:
    """Per item, its distinct tags (a missing tag not counted)."""
    code, names = pd.factorize(tags.to_numpy(dtype=object))
    counted = code >= 0
    pairs = np.unique(items[counted] * (len(names) + 1) + code[counted])
    return np.bincount(pairs // (len(names) + 1), minlength=groups)


__all__ = ["GoldCounts", "gold_frames", "gold_ratings", "read_adjudications"]
