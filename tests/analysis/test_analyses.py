"""Analyses registered once: a registration alone makes ``hilbot analyze NAME`` — its options,
their checks, its help, Markdown, JSON and ``--out`` files — for built-ins and plugins alike."""

from __future__ import annotations

import json
import math
import sys

import pytest

from analysis import AnalysisError, Inputs, Option, analyses, analysis, run_analysis
from analysis.registry import Analysis
from analysis.synthetic import write_synthetic
from evaluation import HilbotError
from evaluation.registry import RegistryError
from tests.evaluation.test_registry import install

PREFIX = "hilbot_test_analysis_"

COVERAGE = '''
from dataclasses import dataclass

from analysis import Inputs, Option, analysis


@dataclass
class CoverageReport:
    short: dict
    min_ratings: int

    def to_dict(self):
        return {"min_ratings": self.min_ratings, "short": self.short}


def _markdown(report):
    return ["# Coverage", "", f"{len(report.short)} items have fewer than {report.min_ratings} ratings."]


def _charts(report, inputs):
    from analysis.charts import interval_bars

    return {"coverage": lambda: interval_bars(["short"], [len(report.short) / 100], [None], title="t", ylabel="y")}


@analysis("coverage", markdown=_markdown, charts=_charts,
          options=[Option("min_ratings", int, 3, "Ratings an item needs", low=1, high=100)])
def coverage(inputs: Inputs, *, min_ratings: int):
    """Items that still need ratings.

    Example: hilbot analyze coverage --min-ratings 3
    """
    counts = inputs.frames.ratings.groupby(["run_id", "item_id"], observed=True).size()
    short = {f"{run}/{item}": int(n) for (run, item), n in counts.items() if n < min_ratings}
    return CoverageReport(short, min_ratings)
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The ``coverage`` analysis, installed as pip would install a plugin (undone afterwards)."""
    root = install(
        tmp_path / "site",
        "hilbot-coverage",
        {"hilbot.analyses": {"coverage": f"{PREFIX}coverage"}},
        {f"{PREFIX}coverage": COVERAGE},
    )
    monkeypatch.syspath_prepend(str(root))
    analyses._entry_points = None  # read the entry points again
    yield root
    analyses._factories.pop("coverage", None)
    analyses._entry_points = None
    for module in [m for m in sys.modules if m.startswith(PREFIX)]:
        del sys.modules[module]


@pytest.fixture
def rated(store):
    write_synthetic(store, ratings=1200, runs=2, items_per_run=60, reviewers=6, seed=2)
    return store


# ------------------------------------------------------------- a plugin analysis is a whole command


def test_a_plugin_analysis_is_a_command_with_its_options_and_help(plugin, rated, run_cli):
    listing = run_cli("analyze", "--help")
    assert (
        listing.returncode == 0
        and "coverage" in listing.stdout
        and "Items that still need ratings." in listing.stdout
    )
    helped = run_cli("analyze", "coverage", "--help")
    assert helped.returncode == 0
    assert (
        "--min-ratings" in helped.stdout and "(1–100)" in helped.stdout and "--run" in helped.stdout
    )
    result = run_cli("analyze", "coverage", "--min-ratings", "4")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# Coverage") and "fewer than 4 ratings" in result.stdout


def test_a_plugin_analysis_gets_json_and_out_files(plugin, rated, run_cli, tmp_path):
    data = json.loads(run_cli("analyze", "coverage", "--format", "json").stdout)
    counts = [n for n in data["short"].values()]
    assert data["min_ratings"] == 3 and all(n < 3 for n in counts)
    out = tmp_path / "reports"
    written = run_cli("analyze", "coverage", "--run", "syn-001-answer", "--out", str(out))
    assert written.returncode == 0, written.stderr
    assert sorted(p.name for p in out.iterdir()) == ["coverage.json", "coverage.md", "coverage.png"]
    assert (out / "coverage.png").read_bytes().startswith(b"\x89PNG")
    assert json.loads((out / "coverage.json").read_text())["min_ratings"] == 3


@pytest.mark.parametrize("value", ["0", "101", "-5", str(2**70)])
def test_a_plugin_option_out_of_its_range_is_one_line_naming_it(plugin, rated, run_cli, value):
    result = run_cli("analyze", "coverage", "--min-ratings", value)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "--min-ratings" in result.stderr and "from 1 to 100" in result.stderr


def test_an_unknown_analysis_is_one_line_listing_the_commands(run_cli):
    result = run_cli("analyze", "nope")
    assert (
        result.returncode == 2
        and len(result.stderr.strip().splitlines()) == 1
        and "nope" in result.stderr
    )


def test_a_plugin_analysis_runs_from_python_with_its_checks(plugin, rated, config):
    output = run_analysis("coverage", rated, config, fmt="json", min_ratings=2)
    assert json.loads(output.text)["min_ratings"] == 2
    with pytest.raises(AnalysisError, match="--min-ratings 0 is out of range"):
        run_analysis("coverage", rated, config, min_ratings=0)
    with pytest.raises(AnalysisError, match="has no option colour"):
        run_analysis("coverage", rated, config, colour="red")


# ------------------------------------------------------------------ built-ins register the same way


@pytest.mark.parametrize(
    "name",
    ["agreement", "calibration", "correlate", "patterns", "synthesize", "triage", "validate"],
)
def test_each_builtin_analysis_is_registered_by_its_own_module(name):
    spec = analyses.get(name)
    assert isinstance(spec, Analysis) and spec.name == name
    assert spec.compute.__module__ == f"analysis.{name}"
    assert (
        spec.help.splitlines()[0].endswith(".") and "Example: hilbot analyze " + name in spec.help
    )


@pytest.mark.parametrize(
    "args, flag",
    [
        (("agreement", "--bootstrap", "100001"), "--bootstrap"),
        (("calibration", "--by", "dimension,colour"), "--by"),
        (("correlate", "--feature", "leap_distance", "--expect", "sideways"), "--expect"),
        (("correlate", "--feature", "leap_distance", "--buckets", "0"), "--buckets"),
        (("patterns", "--window-days", "3651"), "--window-days"),
        (("validate", "--run", "syn-001-answer"), "--run"),
        (("synthesize", "--format", "xml"), "markdown or --format json"),
    ],
)
def test_options_are_checked_before_the_analysis_runs(args, flag, rated, run_cli):
    before = rated.ratings.path.read_bytes()
    result = run_cli("analyze", *args)
    assert (
        result.returncode == 2
        and len(result.stderr.strip().splitlines()) == 1
        and flag in result.stderr
    ), result.stderr
    assert rated.ratings.path.read_bytes() == before  # nothing ran: synthesize appends nothing


def test_calibration_groups_are_choices_listed_in_the_help(run_cli):
    from analysis.calibration import GROUP_KEYS

    helped = run_cli("analyze", "calibration", "--help").stdout
    assert "any of " + " or ".join(GROUP_KEYS[:2]) in " ".join(helped.split())


# ------------------------------------------------------------------------ options and registrations


@pytest.mark.parametrize(
    "option, value, expected",
    [
        (Option("n", int, 1, low=0, high=10), 10, 10),
        (Option("x", float, 0.5, low=0, high=1), 0.25, 0.25),
        (Option("by", str, "a", many=True, choices=("a", "b")), " a, b ,", ("a", "b")),
        (Option("by", str, "a", many=True, choices=("a", "b")), ["b"], ("b",)),
        (Option("mode", str, "up", choices=("up", "down")), "down", "down"),
        (Option("flag", bool, False), True, True),
        (Option("maybe", int, None, low=1, high=5), None, None),
    ],
)
def test_an_option_passes_good_values(option, value, expected):
    assert option.check(value) == expected


@pytest.mark.parametrize(
    "option, value, message",
    [
        (Option("n", int, 1, low=0, high=10), 11, "--n 11 is out of range"),
        (Option("n", int, 1, low=0, high=10), 2.5, "is not a whole number"),
        (Option("n", int, 1, low=0, high=10), True, "is not a whole number"),
        (Option("x", float, 0.5, low=0, high=1), math.nan, "out of range"),
        (Option("x", float, 0.5, low=0, high=1), math.inf, "out of range"),
        (Option("x", float, 0.5, low=0, high=1), "0.5", "is not a number"),
        (Option("mode", str, "up", choices=("up", "down")), "sideways", "use one of up, down"),
        (Option("by", str, "a", many=True, choices=("a", "b"), required=True), "c,a", "'c'"),
        (Option("by", str, "a", many=True, choices=("a", "b"), required=True), " , ", "nothing"),
        (Option("need", str, None, required=True), None, "--need is required"),
        (Option("flag", bool, False), "yes", "takes no value"),
    ],
)
def test_an_option_refuses_bad_values_naming_itself(option, value, message):
    with pytest.raises(AnalysisError, match=message.replace("(", r"\(")) as caught:
        option.check(value)
    assert option.option in str(caught.value) and caught.value.fix


def _markdown(report):
    return ["# x"]


@pytest.mark.parametrize(
    "name, options, message",
    [
        ("Bad Name", (), "not a command name"),
        ("clash", (Option("run", str),), "unusable option names: run"),
        ("twice", (Option("a", int), Option("a", int)), "unusable option names: a"),
        ("dashed", (Option("not-an-identifier", int),), "unusable option names"),
    ],
)
def test_a_registration_the_command_line_cannot_take_is_refused(name, options, message):
    with pytest.raises(RegistryError, match=message):
        analysis(name, markdown=_markdown, options=options)(lambda inputs, **kw: None)
    assert name not in analyses._factories


def test_a_builtin_name_cannot_be_taken_by_another_module():
    with pytest.raises(RegistryError, match="built-in"):
        analysis("agreement", markdown=_markdown)(lambda inputs: None)
    assert analyses.get("agreement").compute.__module__ == "analysis.agreement"


def test_the_package_error_is_a_hilbot_error_and_a_value_error():
    from analysis.stats import cohen_kappa

    with pytest.raises(AnalysisError) as caught:
        cohen_kappa(["a", "b"], ["a"], categories=["a", "b"])
    assert (
        isinstance(caught.value, HilbotError)
        and isinstance(caught.value, ValueError)
        and caught.value.fix
    )


def test_inputs_load_the_frames_once_and_keep_log_issues_as_warnings(rated, config):
    with rated.ratings.path.open("a") as log:
        log.write("not json\n")
    inputs = Inputs(rated, config)
    assert (
        inputs.frames is inputs.frames
        and len(inputs.warnings) == 1
        and "ratings.jsonl" in inputs.warnings[0]
    )


class _Document:
    def __init__(self, size: int) -> None:
        self.size = size

    def to_dict(self) -> dict:
        return {"rows": [{"value": i / 7, "band": "good"} for i in range(self.size)]}


def test_json_is_indented_for_reading_and_compact_when_large():
    """A large report (the 1M-line log's agreement is ~85 MB) is written compact: indenting it takes
    the pure-Python encoder, seconds; a small one stays indented. Either way it is the same JSON."""
    from analysis.registry import INDENTED_UP_TO

    spec = analyses.get("agreement")
    small, large = _Document(10), _Document(INDENTED_UP_TO // 20)
    small_text, large_text = spec.render(small, "json"), spec.render(large, "json")
    assert small_text.startswith('{\n  "rows": [') and json.loads(small_text) == small.to_dict()
    assert (
        "\n" not in large_text
        and len(large_text) > INDENTED_UP_TO
        and json.loads(large_text) == large.to_dict()
    )
