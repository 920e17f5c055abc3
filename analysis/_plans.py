"""The record plans: which ``rating``, ``skip``, ``note`` and ``delivery`` records the fast reader
accepts itself.

A plan checks a record type column-wise (a block's records at once) and accepts only plainly
valid values: exact JSON types, no unknown keys, strict ISO-8601 timestamps, scores in 0–1, known
literals. Any record it does not accept goes to the pydantic model (:mod:`evaluation.records`),
which decides. A plan's fields are the ones it checks; ``tests/test_plans.py`` holds them equal to
the models' fields, so a field added to a model sends every record carrying it to the model until
a plan checks it (never accepted unchecked). Accepted records become column pieces of a
:class:`analysis._scan.Scan`, with low-cardinality strings interned as integer codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import chain, compress, repeat
from operator import itemgetter
from typing import Any, get_args

import numpy as np
import pandas as pd

from evaluation.records import EARLIEST, LATEST, Confidence, Delivery

from ._scan import CATEGORICAL, HUMAN_TYPES


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()
"""Marks an absent key in a column of field values."""
EMPTY: dict = {}
_NONE = type(None)
DICT = {dict}
STR = {str}
_STR_OPT = frozenset({str, _Missing})
_OPTSTR = frozenset({str, _NONE, _Missing})
_INT_OPT = frozenset({int, _Missing})
_BOOL_OPT = frozenset({bool, _Missing})
_NUMBER = frozenset({float, int})
_LIST = {list}
_LIST_OPT = frozenset({list, _Missing})
_STR_NONE = {str, _NONE}
_PLATFORM_ID = itemgetter("platform", "id")
REVIEWER_KEYS = frozenset({"platform", "id", "name"})
"""The keys of ``Reviewer`` (each checked in :func:`_reviewers`)."""
METADATA_KEYS = frozenset({"source_type", "session_date", "user_notes", "blocked_by", "follow_up"})
"""The keys of ``RatingMetadata`` (each a string or null)."""
LABEL_KINDS = {
    "trigger_correct": "bool",
    "trigger_component_observed": "str",
    "code_parses": "bool",
    "code_runs": "bool",
    "code_issues": "list",
    "technically_correct": "bool",
    "inaccuracies": "list",
    "completeness_score": "int15",
    "missing_elements": "list",
}
"""The keys of ``Labels``, with what each accepts besides null."""
INTERNED = CATEGORICAL + ("tag",)
_CHECKED = frozenset({"type", "reviewer", "timestamp"})
"""Fields every plan checks outside its tuples: ``type`` picks the plan, the other two have their
own checks."""
_RATING_CHECKED = frozenset({"score", "concerns", "concerns_dropped", "metadata", "labels"})
"""Fields a rating plan checks in :func:`_check_rating`."""


@dataclass(frozen=True)
class Plan:
    """How one record type is checked (see the module doc)."""

    core: tuple[str, ...]
    """Fields hilbot always writes: read with one ``itemgetter`` when every record has them."""
    optional: tuple[str, ...]
    """Other fields read here."""
    cats: tuple[tuple[str, str | None], ...] = ()
    """Kept string fields, interned: (field, default when absent; None = required)."""
    checks: tuple[tuple[str, frozenset, frozenset | None], ...] = ()
    """Checked-only fields: (field, accepted classes, accepted string values or None)."""
    kept: tuple[tuple[str, frozenset], ...] = ()
    """Kept high-cardinality fields: (field, accepted classes)."""
    rating: bool = False
    human: bool = True

    @cached_property
    def allowed(self) -> frozenset[str]:
        """Every field the plan checks: a record with any other key goes to the model."""
        checked = (
            {name for name, _ in self.cats}
            | {name for name, _, _ in self.checks}
            | {name for name, _ in self.kept}
        )
        return frozenset(checked | _CHECKED | (_RATING_CHECKED if self.rating else set()))

    @cached_property
    def getter(self) -> Any:
        return itemgetter(*self.core)

    @property
    def columns(self) -> list[str]:
        names = (
            [name for name, _ in self.cats]
            + [name for name, _ in self.kept]
            + ["reviewer", "timestamp"]
        )
        return names + (["score", "concerns", "source_type", "session_date"] if self.rating else [])


_EVENT_CORE = (
    "v",
    "run_id",
    "item_id",
    "dimension",
    "reviewer",
    "channel",
    "idempotency_key",
    "timestamp",
)
_EVENT_CATS = (
    ("run_id", None),
    ("item_id", None),
    ("dimension", "overall"),
    ("channel", "terminal"),
)
_EVENT_CHECKS = (("v", _INT_OPT, None), ("action", _OPTSTR, None))
_KEY = ("idempotency_key", frozenset(STR))
PLANS: dict[str, Plan] = {
    "rating": Plan(
        core=_EVENT_CORE
        + ("judgment", "score", "concerns", "ai_verdict_shown", "labels", "metadata"),
        optional=("note", "confidence", "action", "concerns_dropped"),
        cats=_EVENT_CATS + (("judgment", None),),
        checks=_EVENT_CHECKS
        + (
            ("confidence", _OPTSTR, frozenset(get_args(Confidence))),
            ("ai_verdict_shown", _BOOL_OPT, None),
        ),
        kept=(_KEY, ("note", _OPTSTR)),
        rating=True,
    ),
    "skip": Plan(
        core=_EVENT_CORE,
        optional=("skip_reason", "action"),
        cats=_EVENT_CATS,
        checks=_EVENT_CHECKS,
        kept=(_KEY, ("skip_reason", _OPTSTR)),
    ),
    "note": Plan(
        core=_EVENT_CORE + ("text",),
        optional=("action",),
        cats=_EVENT_CATS,
        checks=_EVENT_CHECKS,
        kept=(_KEY, ("text", frozenset(STR))),
    ),
    "delivery": Plan(
        core=(
            "v",
            "run_id",
            "item_id",
            "dimension",
            "reviewer",
            "channel",
            "kind",
            "chat_id",
            "message_id",
            "group",
            "timestamp",
        ),
        optional=(),
        checks=(
            ("v", _INT_OPT, None),
            ("run_id", frozenset(STR), None),
            ("item_id", frozenset(STR), None),
            ("dimension", _STR_OPT, None),
            ("channel", frozenset(STR), None),
            ("kind", _STR_OPT, frozenset(get_args(Delivery.model_fields["kind"].annotation))),
            ("chat_id", frozenset(STR), None),
            ("message_id", frozenset(STR), None),
            ("group", _BOOL_OPT, None),
        ),
        human=False,
    ),
}
"""A plan per record type the fast path reads (every other type goes to the models)."""


class Interner:
    """Integer codes of the low-cardinality string columns (one table per column, per scan)."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[Any, int]] = {
            name: {None: -1, MISSING: -1} for name in INTERNED
        }
        self.values: dict[str, list[str]] = {name: [] for name in INTERNED}
        self.pairs: dict[tuple[str, str], int] = {}
        """Reviewer code per (platform, id)."""

    def optional(self, name: str, col: list) -> list[int]:
        """Codes of a column of strings and Nones (checked already); None is -1."""
        table = self.tables[name]
        for value in set(col).difference(table):
            table[value] = len(self.values[name])
            self.values[name].append(value)
        return list(map(table.__getitem__, col))

    def code(self, name: str, value: str | None) -> int:
        table = self.tables[name]
        found = table.get(value)
        if found is None:
            assert value is not None  # every table holds None (as -1)
            found = table[value] = len(self.values[name])
            self.values[name].append(value)
        return found

    def codes(self, name: str, col: Any, default: str | None) -> tuple[list[int], list[int]]:
        """Codes of a column of strings; absent values take ``default`` (or are bad when it is
        None).

        Returns (codes, positions whose value is not a string).
        """
        table = self.tables[name]
        try:
            distinct = set(col)
        except TypeError:  # an unhashable value (the record is rejected)
            col = [x if x.__class__ is str or x is MISSING else None for x in col]
            distinct = set(col)
            odd = True
        else:
            odd = not all(x.__class__ is str for x in distinct)
        for value in distinct.difference(table):
            if value.__class__ is str:
                table[value] = len(self.values[name])
                self.values[name].append(value)
            else:
                table[value] = -1
        codes = list(map(table.__getitem__, col))
        if not odd:
            return codes, []
        if default is not None and MISSING in distinct:
            fill = self.code(name, default)
            codes = [fill if x is MISSING else c for x, c in zip(col, codes)]
        wrong = [
            i
            for i, x in enumerate(col)
            if x.__class__ is not str and (x is not MISSING or default is None)
        ]
        return codes, wrong

    def categorical(self, name: str, codes: np.ndarray) -> pd.Categorical:
        categories = pd.Index(self.values[name], dtype=object)
        return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(categories))


class Acc:
    """Columns of one record type gathered over a block (``bad``: indices into ``pos``)."""

    __slots__ = ("plan", "pos", "bad", "cols", "interner")

    def __init__(self, plan: Plan, interner: Interner):
        self.plan = plan
        self.pos: list[int] = []
        self.bad: set[int] = set()
        self.cols: dict[str, list] = {name: [] for name in plan.columns}
        self.interner = interner


# --------------------------------------------------------------------------- checking records


def _rows_where(col: Any, test: Any) -> list[int]:
    return [i for i, x in enumerate(col) if test(x)]


def check_rows(rows: list[dict], plan: Plan, acc: Acc) -> set[int]:
    """Check records of one type (dicts); append their columns to ``acc``.

    Returns the indices (in ``rows``) of records the fast checks do not accept.
    """
    bad: set[int] = set()
    allowed = plan.allowed
    if not set().union(*rows) <= allowed:
        bad.update(i for i, d in enumerate(rows) if not d.keys() <= allowed)
    cols = _columns(rows, plan)
    _check_fields(cols, plan, acc, bad)
    codes, wrong = _reviewers(cols["reviewer"], acc.interner)
    bad.update(wrong)
    if plan.human:
        acc.cols["reviewer"].extend(codes)
    if plan.rating:
        _check_rating(cols, acc, bad)
    return bad


def _columns(rows: list[dict], plan: Plan) -> dict[str, Any]:
    """The plan's fields of ``rows`` as columns: ``MISSING`` where a core field is absent, None for
    an optional one."""
    cols: dict[str, Any]
    try:
        values = list(zip(*map(plan.getter, rows)))
    except KeyError:  # some record leaves a field out
        cols = {name: [d.get(name, MISSING) for d in rows] for name in plan.core}
    else:
        cols = dict(zip(plan.core, values))
    for name in plan.optional:  # all nullable: absent is None
        cols[name] = [d.get(name) for d in rows]
    return cols


def _check_fields(cols: dict[str, Any], plan: Plan, acc: Acc, bad: set[int]) -> None:
    """The plan's interned, checked-only and kept fields, and the timestamps' type (their shape is
    checked per block)."""
    out = acc.cols
    for name, default in plan.cats:
        codes, wrong = acc.interner.codes(name, cols[name], default)
        bad.update(wrong)
        out[name].extend(codes)
    for name, ok, literals in plan.checks:
        col = cols[name]
        if not set(map(type, col)) <= ok:
            bad.update(_rows_where(col, lambda x: type(x) not in ok))
        if literals is not None:
            seen = {x for x in col if x.__class__ is str} if bad else set(col)
            if not seen <= literals | {None, MISSING}:
                bad.update(_rows_where(col, lambda x: x.__class__ is str and x not in literals))
    for name, ok in plan.kept:
        col = cols[name]
        if not set(map(type, col)) <= ok:
            bad.update(_rows_where(col, lambda x: type(x) not in ok))
        out[name].extend(col)

    stamps = cols["timestamp"]
    if not set(map(type, stamps)) <= _STR_OPT:
        bad.update(_rows_where(stamps, lambda x: type(x) not in _STR_OPT))
    out["timestamp"].extend(stamps)


def _check_rating(cols: dict[str, Any], acc: Acc, bad: set[int]) -> None:
    """A rating's score, concern tags, metadata and labels."""
    out = acc.cols
    score = cols["score"]
    if set(map(type, score)) <= _NUMBER:
        if not all(0.0 <= x <= 1.0 for x in set(score)):
            bad.update(_rows_where(score, lambda x: not 0.0 <= x <= 1.0))
    else:
        bad.update(_rows_where(score, lambda x: type(x) not in _NUMBER or not 0.0 <= x <= 1.0))
    out["score"].extend(score)

    _check_concerns(cols["concerns"], bad)
    out["concerns"].extend(cols["concerns"])
    _check_dropped(cols["concerns_dropped"], bad)

    source, session, wrong = _metadata(cols["metadata"], acc.interner)
    bad.update(wrong)
    out["source_type"].extend(source)
    out["session_date"].extend(session)

    labels = cols["labels"]
    if not set(map(type, labels)) <= DICT:
        bad.update(_rows_where(labels, lambda x: x is not MISSING and x.__class__ is not dict))
        labels = [x if x.__class__ is dict else EMPTY for x in labels]
    if any(labels):
        bad.update(_rows_where(labels, lambda x: x and not _labels_ok(x)))


def _check_concerns(concerns: list, bad: set[int]) -> None:
    """Concern tags: a list of strings (absent is none)."""
    kinds = set(map(type, concerns))
    if kinds <= _LIST:
        tags = chain.from_iterable(concerns)
    else:
        if not kinds <= _LIST_OPT:
            bad.update(_rows_where(concerns, lambda c: type(c) not in _LIST_OPT))
        tags = chain.from_iterable(c for c in concerns if c.__class__ is list)
    if not set(map(type, tags)) <= STR:
        bad.update(
            _rows_where(
                concerns, lambda c: c.__class__ is list and any(t.__class__ is not str for t in c)
            )
        )


def _check_dropped(dropped: list, bad: set[int]) -> None:
    """The tags a changed rating dropped: absent, null or a list of strings (checked only)."""
    if any(x is not None for x in dropped):
        bad.update(
            _rows_where(
                dropped,
                lambda x: (
                    x is not None
                    and (x.__class__ is not list or any(t.__class__ is not str for t in x))
                ),
            )
        )


_BAD = -2


def _nested(col: list, convert: Any) -> tuple[list, list[int]]:
    """``convert(dict)`` per dict of ``col``, computed once per distinct dict; and the bad
    positions.

    ``convert`` returns ``_BAD`` for a dict the fast checks do not accept; a value that is not
    a dict is bad too (an absent one, ``MISSING``, is converted as ``{}``).
    """
    if set(map(type, col)) <= DICT:
        try:
            fields = tuple(set().union(*col))
            if len(fields) > 1:  # every dict has every key: one itemgetter
                shapes: list = list(map(itemgetter(*fields), col))
                table = {
                    shape: convert(dict(zip(fields, shape))) for shape in dict.fromkeys(shapes)
                }
            else:
                raise KeyError
        except (KeyError, TypeError):  # keys differ, or an unhashable value
            try:
                shapes = list(zip(map(tuple, col), map(tuple, map(dict.values, col))))
                table = {shape: convert(dict(zip(*shape))) for shape in dict.fromkeys(shapes)}
            except TypeError:  # an unhashable value: one by one
                shapes = []
        if shapes or not col:
            values = list(map(table.__getitem__, shapes))
            if _BAD not in table.values():
                return values, []
            return values, [i for i, v in enumerate(values) if v == _BAD]
    values = [
        convert(x) if x.__class__ is dict else convert({}) if x is MISSING else _BAD for x in col
    ]
    return values, [i for i, v in enumerate(values) if v == _BAD]


def _reviewers(col: list, interner: Interner) -> tuple[list[int], list[int]]:
    """The interned ``platform:id`` code of each reviewer dict, and the bad positions."""

    if (
        set(map(type, col)) <= DICT
        and set().union(*col) <= REVIEWER_KEYS
        and set(map(type, chain.from_iterable(map(dict.values, col)))) <= STR
        and all(map(dict.__contains__, col, repeat("id")))
    ):
        # every reviewer plainly valid: only the (platform, id) pairs matter
        if all(map(dict.__contains__, col, repeat("platform"))):
            pairs = list(map(_PLATFORM_ID, col))
        else:
            pairs = [(r.get("platform", "terminal"), r["id"]) for r in col]
        table = interner.pairs
        for pair in dict.fromkeys(pairs).keys() - table.keys():
            table[pair] = interner.code("reviewer", f"{pair[0]}:{pair[1]}")
        return list(map(table.__getitem__, pairs)), []

    def convert(reviewer: dict) -> int:
        if not reviewer.keys() <= REVIEWER_KEYS:
            return _BAD
        platform, ident = reviewer.get("platform", "terminal"), reviewer.get("id")
        if (
            platform.__class__ is not str
            or ident.__class__ is not str
            or type(reviewer.get("name")) not in _OPTSTR
        ):
            return _BAD
        return interner.code("reviewer", f"{platform}:{ident}")

    return _nested(col, convert)


def _metadata(col: list, interner: Interner) -> tuple[list[int], list[int], list[int]]:
    """Interned codes of (source_type, session_date) per metadata dict, and the bad positions."""
    if (
        set(map(type, col)) <= DICT
        and set().union(*col) <= METADATA_KEYS
        and set(map(type, chain.from_iterable(map(dict.values, col)))) <= _STR_NONE
    ):
        return (
            interner.optional("source_type", [m.get("source_type") for m in col]),
            interner.optional("session_date", [m.get("session_date") for m in col]),
            [],
        )

    def convert(metadata: dict) -> Any:
        if not metadata.keys() <= METADATA_KEYS or any(
            type(v) not in _OPTSTR for v in metadata.values()
        ):
            return _BAD
        source, session = metadata.get("source_type"), metadata.get("session_date")
        return (
            interner.code("source_type", source) if source is not None else -1,
            interner.code("session_date", session) if session is not None else -1,
        )

    pairs, wrong = _nested(col, convert)
    if wrong:
        pairs = [(-1, -1) if p == _BAD else p for p in pairs]
    if not pairs:
        return [], [], wrong
    source, session = zip(*pairs)
    return list(source), list(session), wrong


def _labels_ok(labels: dict) -> bool:
    """Whether the label fields are plainly valid (``Labels``)."""
    for name, value in labels.items():
        kind = LABEL_KINDS.get(name)
        if kind is None:
            return False
        if value is None:
            continue
        if kind == "bool" and value.__class__ is not bool:
            return False
        if kind == "str" and value.__class__ is not str:
            return False
        if kind == "list" and not (
            value.__class__ is list and all(v.__class__ is str for v in value)
        ):
            return False
        if kind == "int15" and not (value.__class__ is int and 1 <= value <= 5):
            return False
    return True


# ----------------------------------------------------------------------- a block's accepted records


def finish(
    acc: Acc, type_name: str, first: int, *, lenient: bool = False
) -> tuple[dict[str, Any] | None, list[int]]:
    """The vectorised checks (timestamps) over a block's records of one type.

    Returns the columns of the accepted human events (None for other types) and the block
    positions rejected. ``lenient``: records the model accepted already (none is rejected).
    """
    positions = np.asarray(acc.pos, dtype=np.int64)
    bad = np.zeros(len(positions), dtype=bool)
    if acc.bad and not lenient:
        bad[np.fromiter(acc.bad, dtype=np.int64, count=len(acc.bad))] = True
    ts, ts_bad = _times(acc.cols["timestamp"], lenient)
    if not lenient:
        bad |= ts_bad
    rejected = positions[bad].tolist()
    if not acc.plan.human:
        return None, rejected
    keep = ~bad
    cols = (
        acc.cols
        if not rejected
        else {
            name: list(compress(values, keep))
            for name, values in acc.cols.items()
            if name != "timestamp"
        }
    )
    return _piece(cols, acc.interner, type_name, positions[keep] + first, ts[keep]), rejected


def _piece(
    cols: dict[str, list], interner: Interner, type_name: str, lines: np.ndarray, ts: np.ndarray
) -> dict[str, Any]:
    """The event columns of accepted records of one type (``cols``: theirs, ``lines``: 1-based)."""
    kept = len(lines)

    def codes(name: str) -> np.ndarray:
        return np.asarray(cols[name], dtype=np.int32)

    none = [None] * kept
    no_code = np.full(kept, -1, dtype=np.int32)
    piece: dict[str, Any] = {
        "line": lines,
        "kind": np.full(kept, HUMAN_TYPES[type_name], dtype=np.int8),
        "run_id": codes("run_id"),
        "item_id": codes("item_id"),
        "dimension": codes("dimension"),
        "reviewer": codes("reviewer"),
        "channel": codes("channel"),
        "idempotency_key": cols["idempotency_key"],
        "ts": ts,
        "idem_hash": np.fromiter(map(hash, cols["idempotency_key"]), dtype=np.int64, count=kept),
        "judgment": no_code,
        "score": np.full(kept, np.nan),
        "n_tags": np.zeros(kept, dtype=np.int32),
        "tags": np.zeros(0, dtype=np.int32),
        "note": none,
        "source_type": no_code,
        "session_date": no_code,
        "skip_reason": none,
        "text": none,
    }
    if type_name == "rating":
        lists = [c if c.__class__ is list else () for c in cols["concerns"]]
        piece["judgment"] = codes("judgment")
        piece["score"] = np.asarray(cols["score"], dtype=np.float64)
        piece["n_tags"] = np.fromiter(map(len, lists), dtype=np.int32, count=kept)
        piece["tags"] = np.asarray(
            interner.optional("tag", list(chain.from_iterable(lists))), dtype=np.int32
        )
        piece["note"] = cols["note"]
        piece["source_type"] = codes("source_type")
        piece["session_date"] = codes("session_date")
    elif type_name == "skip":
        piece["skip_reason"] = cols["skip_reason"]
    else:
        piece["text"] = cols["text"]
    return piece


# --------------------------------------------------------------------------- timestamps

_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
_SEPARATORS = [4, 7, 13, 16]
_SEPARATOR_CHARS = np.array([45, 45, 58, 58], dtype=np.uint8)
_NS_YEARS = (1678, 2261)
_RANGE_NS = (pd.Timestamp(EARLIEST).value, pd.Timestamp(LATEST).value)
"""The times a record may carry (:data:`evaluation.records.EARLIEST` … ``LATEST``) in ns since the
epoch."""


def _times(col: list, lenient: bool) -> tuple[np.ndarray, np.ndarray]:
    """Timestamps as int64 ns since the epoch, UTC (NaT as int64 min), and which ones are bad.

    Accepted without the model: ``YYYY-MM-DD[T ]HH:MM:SS[.f{1,6}][Z|±HH:MM]`` that pandas parses,
    at a time the records allow (years 1970–2200 UTC; no zone is UTC); pandas alone is laxer than
    pydantic (``+05``, ``Z ``, a bare ``.``), hence the shape check. Other strings go to the model,
    which may accept them (``lenient``: parse whatever pandas can, NaT otherwise). Absent is NaT,
    not bad.
    """
    n = len(col)
    all_str = set(map(type, col)) <= STR
    strs = col if all_str else [x if x.__class__ is str else "" for x in col]
    is_str = (
        np.ones(n, dtype=bool)
        if all_str
        else np.fromiter((x.__class__ is str for x in col), dtype=bool, count=n)
    )
    lengths = np.fromiter(map(len, strs), dtype=np.int64, count=n)
    shaped = lengths > 0 if lenient else _iso_shaped(strs, lengths)
    text = pd.Series(strs, dtype=object)
    if not shaped.all():
        text = text.where(shaped)
    parsed = pd.to_datetime(text, format="ISO8601", utc=True, errors="coerce")
    if lenient:
        parsed = parsed.where((parsed.dt.year >= _NS_YEARS[0]) & (parsed.dt.year <= _NS_YEARS[1]))
    values = parsed.array.as_unit("ns").asi8.copy()
    bad = is_str & (
        ~shaped | (values < _RANGE_NS[0]) | (values > _RANGE_NS[1])
    )  # NaT is below the range
    return values, bad


def _iso_shaped(strs: list[str], lengths: np.ndarray) -> np.ndarray:
    """Which strings have the strict ISO-8601 shape :func:`_times` accepts (years pandas holds in
    ns)."""
    n = len(strs)
    shaped = (lengths >= 19) & (lengths <= 32)
    if not shaped.any():
        return shaped
    try:
        chars = np.array(strs, dtype="S32").view(np.uint8).reshape(n, 32)
    except UnicodeEncodeError:  # not ASCII: no valid timestamp either
        chars = np.zeros((n, 32), dtype=np.uint8)
        chars[:, :] = [list(x.encode("ascii", "replace")[:32].ljust(32, b"\0")) for x in strs]
    digits = chars - np.uint8(48) < 10
    shaped &= digits[:, _DIGITS].all(axis=1)
    shaped &= (chars[:, _SEPARATORS] == _SEPARATOR_CHARS).all(axis=1)
    shaped &= (chars[:, 10] == 84) | (chars[:, 10] == 32)
    dot = chars[:, 19] == 46
    tail = digits[:, 20:]
    fraction = np.where(tail.all(axis=1), 12, tail.argmin(axis=1))
    shaped &= ~dot | ((fraction >= 1) & (fraction <= 6))
    zone = np.minimum(19 + np.where(dot, 1 + fraction, 0), 26)
    rows = np.arange(n)
    sign = chars[rows, zone]
    naive = lengths == zone
    zulu = (lengths == zone + 1) & (sign == 90)
    offset = (
        (lengths == zone + 6)
        & ((sign == 43) | (sign == 45))
        & (chars[rows, zone + 3] == 58)
        & digits[rows, zone + 1]
        & digits[rows, zone + 2]
        & digits[rows, zone + 4]
        & digits[rows, zone + 5]
    )
    year = (chars[:, :4].astype(np.int64) - 48) @ np.array([1000, 100, 10, 1])
    shaped &= (naive | zulu | offset) & (year >= _NS_YEARS[0]) & (year <= _NS_YEARS[1])
    return shaped
