"""Every ``hilbot analyze`` command is an :class:`Analysis`, registered once, by name.

A registration is the whole of an analysis: its options (with their ranges and choices), the
function that computes its report, the report's Markdown, and its charts. From it come the
command ``hilbot analyze NAME`` with its ``--help``, the options' checks (made before anything
runs, each failure one line naming the option), ``--format json`` (the report's ``to_dict()``)
and ``--out DIR`` (``NAME.md``, ``NAME.json`` and each chart's PNG). The built-in analyses
register the same way a plugin does::

    # hilbot_coverage.py, in its own distribution
    from analysis import Inputs, Option, analysis

    def _markdown(report) -> list[str]:
        return ["# Coverage", "", *(f"- {item}: {n} ratings" for item, n in report.counts.items())]

    @analysis("coverage", markdown=_markdown,
              options=[Option("min_ratings", int, 3, "Ratings an item needs.", low=1, high=100)])
    def coverage(inputs: Inputs, *, min_ratings: int):
        '''Items that still need ratings.

        Example: hilbot analyze coverage --min-ratings 3
        '''
        counts = inputs.frames.ratings.groupby("item_id").size()
        return CoverageReport(counts[counts < min_ratings].to_dict())   # any object with to_dict()

    # its pyproject.toml
    [project.entry-points."hilbot.analyses"]
    coverage = "hilbot_coverage"

A report is any object with ``to_dict()`` (JSON-safe values); an ``exit_code`` attribute, when it
has one, is the command's exit code.
"""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from evaluation.registry import Registry, RegistryError, UnknownName
from evaluation.text import visible

from .errors import AnalysisError

if TYPE_CHECKING:
    from datetime import datetime

    from evaluation import HilbotConfig, Store

    from .load import Frames

FORMATS = ("markdown", "json")
"""What ``--format`` takes."""
RESERVED = ("run", "dimension", "fmt", "out")
"""Keywords every analysis command has already (``--run``, ``--dimension``, ``--format``,
``--out``)."""


# ------------------------------------------------------------------------------------------ options


@dataclass(frozen=True)
class Option:
    """One option of an analysis: ``--name VALUE`` on the command line, ``name=value`` from
    Python."""

    name: str
    """The keyword the analysis function takes (a Python identifier)."""
    kind: type
    """``int``, ``float``, ``str`` or ``bool`` (a flag); with ``many``, each value is a ``str``."""
    default: Any = None
    """The value when the option is not given (None: not given)."""
    help: str = ""
    """One sentence for ``--help``; the range and the choices are added to it."""
    flag: str | None = None
    """The command-line flag (default: ``--`` and the name, ``_`` written ``-``)."""
    short: str | None = None
    """A one-letter alias such as ``-n``, if any."""
    low: float | None = None
    """The smallest value accepted (numbers only)."""
    high: float | None = None
    """The largest value accepted (numbers only)."""
    choices: tuple[str, ...] | None = None
    """The values accepted (text only; each value, with ``many``)."""
    many: bool = False
    """A comma-separated list on the command line; the analysis gets a tuple of the values."""
    required: bool = False
    """The option must have a value: given when it has no default; with ``many``, not empty."""
    view: bool = False
    """The option changes only what the Markdown shows (``--detail``, ``--limit``): the markdown
    function takes it as a keyword, the computation and the JSON never see it."""

    @property
    def option(self) -> str:
        """The flag as the user types it."""
        return self.flag or "--" + self.name.replace("_", "-")

    def describe(self) -> str:
        """The help text with the range or the choices."""
        extra = (
            f"{_plain(self.low)}–{_plain(self.high)}"
            if self.low is not None and self.high is not None
            else ""
        )
        extra = extra or (
            ("any of " if self.many else "") + " or ".join(self.choices) if self.choices else ""
        )
        return f"{self.help} ({extra})" if extra else self.help

    def check(self, value: Any) -> Any:
        """``value`` as the analysis takes it, or an :class:`AnalysisError` naming the option and
        what it accepts."""
        if value is None:
            if self.required:
                raise AnalysisError(f"{self.option} is required", fix=f"give {self.option} VALUE")
            return None
        if self.many:
            return self._check_many(value)
        if self.kind is bool:
            if not isinstance(value, bool):
                raise AnalysisError(
                    f"{self.option} takes no value", fix=f"pass {self.option} alone"
                )
            return value
        if self.kind in (int, float):
            return self._check_number(value)
        return self._check_text(value)

    def _check_number(self, value: Any) -> int | float:
        whole = self.kind is int
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (whole and not isinstance(value, int))
        ):
            raise AnalysisError(
                f"{self.option} {value!r} is not {'a whole number' if whole else 'a number'}",
                fix=f"give {self.option} a {'whole ' if whole else ''}number",
            )
        low = -float("inf") if self.low is None else self.low
        high = float("inf") if self.high is None else self.high
        if not low <= value <= high:  # False for NaN
            kind = "a whole number" if whole else "a number"
            raise AnalysisError(
                f"{self.option} {value} is out of range",
                fix=f"use {kind} from {_plain(low)} to {_plain(high)}",
            )
        return value

    def _check_text(self, value: Any) -> str:
        if not isinstance(value, str):
            raise AnalysisError(
                f"{self.option} {value!r} is not text", fix=f"give {self.option} a word"
            )
        if self.choices is not None and value not in self.choices:
            raise AnalysisError(
                f"{self.option} {_shown(value)} is not known",
                fix=f"use one of {', '.join(self.choices)}",
            )
        return value

    def _check_many(self, value: Any) -> tuple[str, ...]:
        parts = value.split(",") if isinstance(value, str) else list(value)
        if not all(isinstance(part, str) for part in parts):
            raise AnalysisError(
                f"{self.option} {value!r} is not text",
                fix=f"give {self.option} comma-separated words",
            )
        values = tuple(part.strip() for part in parts if part.strip())
        unknown = [v for v in values if self.choices is not None and v not in self.choices]
        if unknown or (self.required and not values):
            shown = ", ".join(_shown(v) for v in unknown) or "nothing"
            raise AnalysisError(
                f"{self.option} has {shown}",
                fix=f"use some of {', '.join(self.choices or ())}, comma-separated",
            )
        return values


def _plain(number: float | None) -> str:
    return str(number) if isinstance(number, int) else f"{number:g}"


def _shown(text: str) -> str:
    return repr(visible(text, newlines=False)[:60])


# --------------------------------------------------------------------------- what an analysis reads


@dataclass
class Inputs:
    """What every analysis reads: the store, the configuration, the scope asked for, and the
    frames."""

    store: "Store"
    """The data directory (runs and the ratings log)."""
    config: "HilbotConfig"
    """The configuration (dimensions, scales, features)."""
    run: str | None = None
    """Only this run (``--run``), or every run."""
    dimension: str | None = None
    """Only this dimension (``--dimension``), or every dimension."""
    warnings: list[str] = field(default_factory=list)
    """Warnings for the user: unreadable log lines and anything an analysis adds."""
    window: "tuple[datetime, datetime] | None" = None
    """The digest's "new" window [since, until) when the digest asks for an analysis's lines (what
    changed is measured against the window of the same length before it); None otherwise."""

    @cached_property
    def frames(self) -> "Frames":
        """The ratings, items, runs, concerns and notes of the scope, loaded on first use."""
        from .load import load

        issues: list = []
        frames = load(
            self.store, runs=[self.run] if self.run else None, issues=issues
        )  # an unknown run: RunNotFound
        self.warnings += [str(issue) for issue in issues]
        return frames

    @cached_property
    def gold(self) -> tuple["Frames", Any]:
        """The frames with one gold label per item (:mod:`analysis.gold`) and how the labels were
        reached."""
        from .gold import gold_frames, read_adjudications

        issues: list = []
        adjudications = read_adjudications(self.store.ratings.path, issues)
        return gold_frames(self.frames, adjudications, self.config)

    def with_gold(self) -> "Inputs":
        """These inputs as an analysis of gold labels sees them: ``frames.ratings`` holds one gold
        label per item."""
        return self.with_frames(self.gold[0])

    def with_frames(self, frames: "Frames") -> "Inputs":
        """These inputs over ``frames`` already loaded (the warnings shared): how a caller that
        loaded the log itself, such as the digest, hands it to an analysis."""
        copy = replace(self, warnings=self.warnings)
        copy.__dict__["frames"] = frames
        return copy


@dataclass
class Output:
    """What a command prints, its exit code, the files it wrote and its warnings."""

    text: str
    exit_code: int = 0
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------------------- analyses


Charts = Callable[[Any, Inputs], dict[str, Callable[[], bytes]]]
"""A report's charts: name → a function drawing its PNG (called only for ``--out``)."""
DigestLines = Callable[[Inputs, "Sequence[str] | None"], list[str]]
"""An analysis's lines in the review digest (:mod:`analysis.digest`): from the inputs (every run's
frames; gold labels for an analysis of gold labels) and the runs the digest lists (None: every run),
plain text, one figure a line; none when it has nothing to say."""


@dataclass(frozen=True)
class Analysis:
    """One ``hilbot analyze`` command: options, computation, Markdown and charts."""

    name: str
    """The command's name (``hilbot analyze NAME``) and the stem of its ``--out`` files."""
    compute: Callable[..., Any]
    """``compute(inputs, **options)`` → the report; its docstring is the command's help."""
    markdown: Callable[..., list[str]]
    """The report as Markdown lines (``markdown(report, **view options)``)."""
    options: tuple[Option, ...] = ()
    """The options beyond ``--run``, ``--dimension``, ``--format`` and ``--out``."""
    charts: Charts | None = None
    """The report's charts, written by ``--out``."""
    scoped: bool = True
    """Whether the command takes ``--run`` and ``--dimension``."""
    writes_files: bool = True
    """Whether the command takes ``--out``."""
    file_name: Callable[[Any], str] | None = None
    """The stem of the ``--out`` files for a report (default: the name)."""
    gold: bool = False
    """Whether the analysis reads gold labels (one per item; :mod:`analysis.gold`) instead of every
    rating."""
    digest: DigestLines | None = None
    """The analysis's lines in the review digest, if any (the digest asks for them by name)."""

    def __post_init__(self) -> None:
        # The registry refuses a built-in's name from any module but the built-in's own; it reads
        # `__module__`.
        object.__setattr__(self, "__module__", getattr(self.compute, "__module__", None))

    @property
    def help(self) -> str:
        """The command's help: the compute function's docstring."""
        return inspect.getdoc(self.compute) or self.name

    def check(self, options: dict[str, Any]) -> dict[str, Any]:
        """The options as the analysis takes them (defaults filled in); any bad one is an
        :class:`AnalysisError`."""
        known = {option.name: option for option in self.options}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise AnalysisError(
                f"analysis {self.name!r} has no option {', '.join(unknown)}",
                fix=f"use {', '.join(o.option for o in self.options) or 'none'}; see hilbot "
                f"analyze {self.name} --help",
            )
        return {
            name: option.check(options.get(name, option.default)) for name, option in known.items()
        }

    def check_usage(
        self,
        *,
        run: str | None = None,
        dimension: str | None = None,
        fmt: str = "markdown",
        out: str | Path | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Everything of a call that is checked before the log is read: the format, the scope,
        ``--out`` and the options (:meth:`check`, whose result this returns). The command line
        calls it before it opens the store or reads the configuration, so a usage error is
        reported at once."""
        if fmt not in FORMATS:
            raise AnalysisError(
                f"unknown format {fmt!r}", fix="use --format markdown or --format json"
            )
        if not self.scoped and (run or dimension):
            raise AnalysisError(
                f"hilbot analyze {self.name} covers the whole log",
                fix="leave out --run and --dimension",
            )
        if out is not None and not self.writes_files:
            raise AnalysisError(
                f"hilbot analyze {self.name} writes no files", fix="leave out --out"
            )
        return self.check(options)

    def run(
        self,
        inputs: Inputs,
        *,
        fmt: str = "markdown",
        out: str | Path | None = None,
        **options: Any,
    ) -> Output:
        """Check the options, compute the report, render it in ``fmt`` and write the ``--out``
        files."""
        checked = self.check_usage(
            run=inputs.run, dimension=inputs.dimension, fmt=fmt, out=out, **options
        )
        counts = None
        if self.gold:
            inputs, counts = inputs.with_gold(), inputs.gold[1]
            counts = counts if counts.differs else None
        view = {o.name: checked.pop(o.name) for o in self.options if o.view}
        report = self.compute(inputs, **checked)
        files = self._save(inputs, report, Path(out), counts, view) if out is not None else []
        return Output(
            self.render(report, fmt, counts, **view),
            int(getattr(report, "exit_code", 0) or 0),
            files,
            list(inputs.warnings),
        )

    def render(self, report: Any, fmt: str = "markdown", gold: Any = None, **view: Any) -> str:
        """The report as Markdown (text from the logs made visible) or as JSON (every value exact).

        ``gold``: how the items' gold labels were reached (a line under the title; ``gold`` in the
        JSON). ``view``: the options that change only the Markdown (:attr:`Option.view`), each at
        its default when not given."""
        if fmt == "json":
            document = report.to_dict()
            if gold is not None and isinstance(document, dict):
                document = {**document, "gold": gold.to_dict()}
            return _json_text(document)
        shown = {o.name: view.get(o.name, o.default) for o in self.options if o.view}
        lines = list(self.markdown(report, **shown))
        if gold is not None:
            lines[1:1] = ["", gold.line()]
        return visible("\n".join(lines).rstrip() + "\n")

    def _save(
        self, inputs: Inputs, report: Any, out: Path, gold: Any = None, view: Any = None
    ) -> list[Path]:
        store, name = (
            inputs.store,
            _file_part(self.file_name(report) if self.file_name else self.name),
        )
        paths = [
            store.write_file(out / f"{name}.md", self.render(report, gold=gold, **(view or {}))),
            store.write_file(out / f"{name}.json", self.render(report, "json", gold)),
        ]
        charts = self.charts(report, inputs) if self.charts else {}
        return paths + [
            store.write_bytes(out / f"{_file_part(chart)}.png", draw())
            for chart, draw in charts.items()
        ]


INDENTED_UP_TO = 1_000_000
"""JSON reports up to this many characters are indented for reading; larger ones stay compact
(indenting runs Python's pure-Python encoder: 5 s of the 1M-line log's agreement report)."""


def _json_text(document: Any) -> str:
    compact = json.dumps(document, ensure_ascii=False, default=str)
    return (
        compact
        if len(compact) > INDENTED_UP_TO
        else json.dumps(document, indent=2, ensure_ascii=False, default=str)
    )


def _file_part(text: str) -> str:
    """A name from the logs as part of a file name: letters, digits, ``_`` and ``-`` only (never a
    path)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text)[:80] or "_"


_NAME = re.compile(r"[a-z][a-z0-9-]*")


def _check(name: str, spec: Analysis) -> None:
    """An analysis is registered under its own name, as a command name, with options the command can
    take."""
    if not isinstance(spec, Analysis):
        raise RegistryError(
            f"analysis {name!r} is a {type(spec).__name__}, not an Analysis",
            fix="register it with the @analysis decorator (analysis.registry)",
        )
    if spec.name != name or not _NAME.fullmatch(name):
        raise RegistryError(
            f"analysis name {name!r} is not a command name",
            fix="use lower-case letters, digits and '-'",
        )
    names = [option.name for option in spec.options]
    clash = sorted(
        {n for n in names if n in RESERVED or not n.isidentifier() or names.count(n) > 1}
    )
    if clash:
        raise RegistryError(
            f"analysis {name!r} has unusable option names: {', '.join(clash)}",
            fix=f"give each option a distinct Python identifier other than {', '.join(RESERVED)}",
        )


class UnknownAnalysis(AnalysisError, UnknownName):
    """No built-in or installed analysis has the name asked for."""


analyses: Registry[Analysis] = Registry(
    "analysis",
    "hilbot.analyses",
    check=_check,
    error=UnknownAnalysis,
    hint="use one of {names}",
    builtins={
        "validate": "analysis.validate",
        "agreement": "analysis.agreement",
        "calibration": "analysis.calibration",
        "correlate": "analysis.correlate",
        "patterns": "analysis.patterns",
        "synthesize": "analysis.synthesize",
        "triage": "analysis.triage",
    },
)
"""Every analysis by name: the built-ins, those registered in this process and installed
plugins'."""


def analysis(
    name: str,
    *,
    markdown: Callable[..., list[str]],
    options: Iterable[Option] = (),
    charts: Charts | None = None,
    scoped: bool = True,
    writes_files: bool = True,
    file_name: Callable[[Any], str] | None = None,
    gold: bool = False,
    digest: DigestLines | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``compute(inputs, **options)`` as the analysis ``name`` (see the
    module doc)."""

    def register(compute: Callable[..., Any]) -> Callable[..., Any]:
        analyses.register(name)(
            Analysis(
                name,
                compute,
                markdown,
                tuple(options),
                charts,
                scoped,
                writes_files,
                file_name,
                gold,
                digest,
            )
        )
        return compute

    return register


def run_analysis(
    name: str,
    store: "Store",
    config: "HilbotConfig",
    *,
    run: str | None = None,
    dimension: str | None = None,
    fmt: str = "markdown",
    out: str | Path | None = None,
    **options: Any,
) -> Output:
    """Run the analysis ``name`` as ``hilbot analyze NAME`` does: its options checked, its report
    rendered."""
    return analyses.get(name).run(
        Inputs(store, config, run, dimension), fmt=fmt, out=out, **options
    )


__all__ = [
    "Analysis",
    "DigestLines",
    "Inputs",
    "Option",
    "Output",
    "UnknownAnalysis",
    "analyses",
    "analysis",
    "run_analysis",
]
