"""One registry for judges, LLM providers and channels, and plugins found through entry points.

A plugin here is what ``pip install`` leaves behind: a module and a ``*.dist-info`` directory with
an ``entry_points.txt``, in a directory on ``sys.path`` (``importlib.metadata`` finds it there).
Covers a plugin judge usable by name (in-process and through the ``hilbot`` console script), a
local plugin judge never labelled AI, the run header's registry name and kind (and old run files
without them), unknown names listing the known ones, broken and conflicting plugins, plugin
providers and channels, and built-in channels still imported lazily.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.channels import CHANNELS, chat_channel, get_channel
from evaluation import HilbotError
from evaluation.cases import load_cases
from evaluation.judges import JUDGES, JudgeError, get_judge, judge, registered_kind
from evaluation.llm import LLM, PROVIDERS, LLMError, LLMRequest, get_provider
from evaluation.output import judge_label, quiet_item
from evaluation.records import JudgeInfo, RunHeader, legacy_judge_kind, parse_record
from evaluation.registry import Registry, RegistryError, UnknownName
from evaluation.runner import RunPlan, execute
from evaluation.targets import OutputsTarget
from tests.conftest import ROOT

CASES = ROOT / "tests" / "fixtures" / "cases"
CLAUDE = ROOT / "tests" / "fixtures" / "outputs" / "rules-claude-sonnet.jsonl"
PREFIX = "hilbot_test_plugin_"
"""Every plugin module a test writes is named with this prefix (and forgotten after the test)."""

BM25 = '''
from evaluation import metrics
from evaluation.judges import finish
from evaluation.records import JudgeInfo


class BM25Judge:
    """A local judge from outside hilbot: its info() leaves out the kind (get_judge records it)."""

    name = "bm25"
    kind = "local"

    def __init__(self, config, store):
        self.config = config

    def info(self):
        return JudgeInfo(name=self.name, params={"k1": 1.2})

    async def judge(self, case, item):
        truth = " ".join(case.ground_truth_answers) or case.query.query
        score = metrics.term_overlap(truth, item.answer or "")
        return finish(case, item, self.config, {"answer_correctness": score}, label=self.name,
                      reasons={"answer_correctness": f"bm25-ish overlap {score:.2f}"})
'''


def install(
    root: Path, dist: str, groups: dict[str, dict[str, str]], modules: dict[str, str]
) -> Path:
    """Write a distribution as pip would: its modules, and ``<dist>-0.1.dist-info`` with
    ``entry_points.txt``."""
    root.mkdir(parents=True, exist_ok=True)
    for name, source in modules.items():
        (root / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) + "\n"
            for group, points in groups.items()
        ),
        encoding="utf-8",
    )
    return root


def _forget(registry: Registry) -> None:
    """Drop what plugin modules registered, and the discovered entry points (read again on the next
    lookup)."""
    for name, factory in list(registry._factories.items()):
        if str(getattr(factory, "__module__", "")).startswith(PREFIX):
            del registry._factories[name]
    registry._entry_points = None


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``plugins(dist, groups, modules)`` installs a plugin distribution into this process (undone
    afterwards)."""
    registries = (JUDGES, PROVIDERS, CHANNELS)
    for registry in registries:
        _forget(registry)

    def add(dist: str, groups: dict[str, dict[str, str]], modules: dict[str, str]) -> Path:
        root = install(tmp_path / "site" / dist, dist, groups, modules)
        monkeypatch.syspath_prepend(str(root))
        for registry in registries:
            registry._entry_points = (
                None  # a plugin installed into a running process: read the entry points again
            )
        return root

    yield add
    for registry in registries:
        _forget(registry)
    for module in [m for m in sys.modules if m.startswith(PREFIX)]:
        del sys.modules[module]


# --------------------------------------------------------------------------- judges from plugins


@pytest.mark.parametrize("style", ["factory", "module"])
def test_a_plugin_judge_is_usable_by_name_without_editing_hilbot(plugins, config, store, style):
    module = f"{PREFIX}bm25_{style}"
    source = (
        BM25
        if style == "factory"
        else BM25 + '\nfrom evaluation.judges import judge\njudge("bm25")(BM25Judge)\n'
    )
    target = (
        f"{module}:BM25Judge" if style == "factory" else module
    )  # the factory itself, or a module that registers it
    plugins("hilbot-bm25", {"hilbot.judges": {"bm25": target}}, {module: source})

    assert JUDGES.names() == ["bm25", "lexical", "llm"]
    assert module not in sys.modules  # listing names loads nothing
    bm25 = get_judge("bm25", config, store)
    assert type(bm25).__module__ == module
    cases = load_cases(CASES)
    plan = RunPlan("bm25-run", "cases", "answer", cases, OutputsTarget(CLAUDE), bm25)
    run = asyncio.run(execute(store, plan))
    assert {i.evaluation.judge for i in run.items} == {"bm25"}
    assert all("answer_correctness" in i.evaluation.scores for i in run.items)
    header = store.load_run("bm25-run").header
    assert (header.judge.name, header.judge.registry_name, header.judge.kind) == (
        "bm25",
        "bm25",
        "local",
    )
    assert header.judge.params == {"k1": 1.2}


def test_a_local_plugin_judge_is_never_labelled_ai(plugins, config, store):
    assert (
        judge_label("bm25") == "AI [bm25]"
    )  # before the plugin is installed: an imported tool's name, as ever
    plugins(
        "hilbot-bm25",
        {"hilbot.judges": {"bm25": f"{PREFIX}bm25:BM25Judge"}},
        {f"{PREFIX}bm25": BM25},
    )
    assert registered_kind("bm25") == "local"
    assert (
        judge_label("bm25") == "bm25"
    )  # a name as an item carries it: the registered judge's kind decides
    assert judge_label(JudgeInfo(name="bm25", registry_name="bm25", kind="local")) == "bm25"
    assert judge_label(get_judge("bm25", config, store)) == "bm25"
    assert judge_label("anything", kind="local") == "anything"
    cases = load_cases(CASES)
    run = asyncio.run(
        execute(
            store,
            RunPlan(
                "bm25",
                "cases",
                "answer",
                cases,
                OutputsTarget(CLAUDE),
                get_judge("bm25", config, store),
            ),
        )
    )
    line = quiet_item(run.items[0], 1, len(run.items))
    assert line.endswith(" (bm25)") and "AI" not in line


def test_the_console_script_runs_a_plugin_judge(run_process, tmp_path):
    root = install(
        tmp_path / "site",
        "hilbot-bm25",
        {"hilbot.judges": {"bm25": f"{PREFIX}bm25:BM25Judge"}},
        {f"{PREFIX}bm25": BM25},
    )
    result = run_process(
        "run",
        "--cases",
        str(CASES),
        "--outputs",
        str(CLAUDE),
        "--judge",
        "bm25",
        "--quiet",
        "--run-id",
        "plugged",
        env={"PYTHONPATH": str(root), "ANTHROPIC_API_KEY": ""},
    )
    assert result.returncode == 0, result.stderr
    items = [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert len(items) == 8 and all(line.endswith(" (bm25)") for line in items), items
    assert "AI" not in result.stdout
    header = json.loads(
        (tmp_path / "results" / "runs" / "plugged.jsonl").read_text("utf-8").splitlines()[0]
    )
    assert header["judge"]["registry_name"] == "bm25" and header["judge"]["kind"] == "local"


def test_a_judge_must_declare_its_kind(plugins, config, store):
    class Unkinded:
        name = "vague"

    with pytest.raises(JudgeError, match="judge 'vague' declares no kind") as caught:
        judge("vague")(Unkinded)
    assert 'kind = "local"' in caught.value.fix
    with pytest.raises(JudgeError, match="unknown kind 'remote'"):
        judge("remote")(type("Remote", (), {"kind": "remote"}))
    assert "vague" not in JUDGES.names() and "remote" not in JUDGES.names()

    source = (
        "class Vague:\n    name = 'vague'\n\n    def __init__(self, config, store):\n        pass\n"
    )
    plugins(
        "hilbot-vague",
        {"hilbot.judges": {"vague": f"{PREFIX}vague:Vague"}},
        {f"{PREFIX}vague": source},
    )
    with pytest.raises(HilbotError, match="declares no kind"):
        get_judge("vague", config, store)


def test_a_function_factory_declares_its_kind_when_registered(config, store):
    from evaluation.judges import LexicalJudge

    def make(config, store):
        return LexicalJudge(config, store)

    make.__module__ = f"{PREFIX}functions"  # forgotten by _forget below
    try:
        judge("lexical-copy", kind="local")(make)
        assert make.kind == "local" and registered_kind("lexical-copy") == "local"
        built = get_judge("lexical-copy", config, store)
        info = built.info()
        assert (info.name, info.registry_name, info.kind) == ("lexical", "lexical-copy", "local")
    finally:
        _forget(JUDGES)


def test_a_judge_that_takes_no_attributes_is_still_recorded(config, store):
    class Slotted:
        __slots__ = ("config",)
        name = "slotted"
        kind = "recorded"

        def __init__(self, config, store):
            self.config = config

        def info(self):
            return JudgeInfo(name="imported-scores")

        async def judge(self, case, item):
            raise NotImplementedError

    Slotted.__module__ = f"{PREFIX}slotted"
    try:
        judge("slotted")(Slotted)
        built = get_judge("slotted", config, store)
        info = built.info()
        assert (info.name, info.registry_name, info.kind) == (
            "imported-scores",
            "slotted",
            "recorded",
        )
        assert built.config is config and built.name == "slotted"
        assert judge_label(info) == "AI [slotted]"
    finally:
        _forget(JUDGES)


# ------------------------------------------------------------------------ the run header and labels


def test_the_run_header_records_registry_name_and_kind(monkeypatch, config, store):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    cases = load_cases(CASES)
    asyncio.run(
        execute(
            store,
            RunPlan(
                "lex",
                "cases",
                "answer",
                cases,
                OutputsTarget(CLAUDE),
                get_judge("lexical", config, store),
            ),
        )
    )
    raw = json.loads((store.root / "runs" / "lex.jsonl").read_text("utf-8").splitlines()[0])
    assert (
        raw["judge"]["name"] == "lexical"
        and raw["judge"]["registry_name"] == "lexical"
        and raw["judge"]["kind"] == "local"
    )
    assert judge_label(store.load_run("lex").header.judge) == "lexical"

    monkeypatch.setenv(
        "ANTHROPIC_API_KEY", "sk-ant-test"
    )  # no call is made: only info() is asked for
    llm = get_judge(
        "llm",
        config.model_copy(update={"llm": config.llm.model_copy(update={"model": "m"})}),
        store,
    )
    info = llm.info()
    assert (info.name, info.registry_name, info.kind) == ("anthropic/m", "llm", "llm")
    assert judge_label(info) == "AI" and judge_label(llm) == "AI"


OLD_LABELS = {
    None: "AI",
    "lexical": "lexical",
    "anthropic/claude-sonnet-4-5": "AI",
    "recorded": "AI [recorded]",
    "ragas": "AI [ragas]",
    "gpt-judge": "AI [gpt-judge]",
}
"""What ``judge_label`` said before judges had kinds; built-in and imported names must read the
same."""


@pytest.mark.parametrize("name", list(OLD_LABELS))
def test_labels_of_builtin_and_imported_judges_are_unchanged(name):
    assert judge_label(name) == OLD_LABELS[name]
    if name is not None:
        assert judge_label(JudgeInfo(name=name)) == OLD_LABELS[name]


def test_old_run_files_without_a_kind_still_load(store):
    folder = store.root / "runs"
    folder.mkdir(parents=True)
    expected = {
        "lexical": "local",
        "anthropic/claude-sonnet-4-5": "llm",
        "recorded": "recorded",
        "ragas": "recorded",
    }
    for n, (name, kind) in enumerate(expected.items()):
        header = {
            "type": "run_header",
            "v": 1,
            "run_id": f"old{n}",
            "kind": "answer",
            "created_at": "2025-01-01T00:00:00Z",
            "judge": {"name": name, "params": {}},
        }
        item = {
            "type": "query_evaluation",
            "v": 1,
            "run_id": f"old{n}",
            "data": {
                "id": "a",
                "query": {"query": "q"},
                "answer": "x",
                "evaluation": {"scores": {"overall": 0.5}, "judge": name},
            },
        }
        (folder / f"old{n}.jsonl").write_text(
            json.dumps(header) + "\n" + json.dumps(item) + "\n", encoding="utf-8"
        )
        run = store.load_run(f"old{n}")
        assert run.header.judge.kind == kind == legacy_judge_kind(name)
        assert run.header.judge.registry_name is None
        assert (
            judge_label(run.header.judge)
            == judge_label(run.items[0].evaluation.judge)
            == OLD_LABELS[name]
        )
    assert (
        parse_record({"type": "run_header", "run_id": "x"}).judge.kind == "recorded"
    )  # JudgeInfo(): name "unknown"
    assert RunHeader(run_id="x", judge=JudgeInfo(name="lexical")).judge.kind == "local"
    assert (
        parse_record(
            {"type": "run_header", "run_id": "x", "judge": {"name": "x/y", "kind": None}}
        ).judge.kind
        == "llm"
    )


def _plugin_run(store, kind: str) -> None:
    """A run judged by the ``bm25`` plugin (header kind ``kind``), read back where that plugin is
    not installed."""
    folder = store.root / "runs"
    folder.mkdir(parents=True)
    header = {
        "type": "run_header",
        "v": 1,
        "run_id": "plug",
        "kind": "answer",
        "created_at": "2025-01-01T00:00:00Z",
        "judge": {"name": "bm25", "registry_name": "bm25", "kind": kind, "params": {}},
    }
    item = {
        "type": "query_evaluation",
        "v": 1,
        "run_id": "plug",
        "data": {
            "id": "a",
            "query": {"query": "q"},
            "answer": "x",
            "evaluation": {
                "scores": {"overall": 0.5},
                "judge": "bm25",
                "verdict": "PASS",
                "rationale": "overlap",
            },
        },
    }
    (folder / "plug.jsonl").write_text(
        json.dumps(header) + "\n" + json.dumps(item) + "\n", encoding="utf-8"
    )


@pytest.mark.parametrize(
    "kind, label", [("local", "bm25"), ("llm", "AI"), ("recorded", "AI [bm25]")]
)
def test_labels_come_from_the_kind_the_run_header_records(store, config, kind, label):
    """Once the plugin that judged a run is gone, its name alone says nothing: the header's kind
    decides."""
    from bot import Action, ReviewEngine
    from evaluation import Reviewer
    from evaluation.output import run_lines

    assert "bm25" not in JUDGES
    _plugin_run(store, kind)
    run = store.load_run("plug")
    assert run_lines(run, "quiet")[0].endswith(f"({label})")
    assert f"✗ {label}: overall=0.50" in "\n".join(run_lines(run, "verbose"))
    session = ReviewEngine(store, config).session("plug", Reviewer(platform="terminal", id="t"))
    session.start()
    step = session.act(Action("rate", "good"))
    reveal = (step.card or step.finished).reveal
    assert reveal is not None and reveal.label == label


def test_an_imported_run_records_its_judge_as_recorded_whatever_its_name(store, tmp_path):
    from evaluation.imports import import_outputs
    from evaluation.output import run_lines

    rows = tmp_path / "scores.jsonl"
    rows.write_text(
        json.dumps({"id": "a", "query": "q", "answer": "x", "score": 0.7, "judge": "lexical"})
        + "\n",
        encoding="utf-8",
    )
    run = store.load_run(import_outputs(store, rows, judge="lexical").run_id)
    assert run.header.judge.kind == "recorded" and judge_label(run.header.judge) == "AI [lexical]"
    assert run_lines(run, "quiet")[0].endswith(
        "(AI [lexical])"
    )  # scores made elsewhere are never a local method's


# ------------------------------------------------------- unknown names, broken and clashing plugins


def test_an_unknown_name_lists_the_known_ones_and_how_to_add_one(config, store):
    with pytest.raises(UnknownName) as caught:
        get_judge("bm25", config, store)
    assert caught.value.what == "unknown judge 'bm25'"
    assert caught.value.fix.startswith(
        "pass --judge or set [judge] name to one of lexical, llm, or install a plugin"
    )
    assert "entry-point group hilbot.judges" in caught.value.fix

    with pytest.raises(UnknownName) as caught:
        get_channel("discord")
    assert (
        caught.value.what == "unknown channel 'discord'"
        and "use one of slack, telegram, terminal" in caught.value.fix
    )
    assert "hilbot.channels" in caught.value.fix

    with pytest.raises(LLMError) as caught:  # still an LLMError, as before
        get_provider(config.llm.model_copy(update={"provider": "openai"}))
    assert isinstance(caught.value, UnknownName)
    assert (
        "set [llm] provider to one of anthropic" in caught.value.fix
        and "hilbot.providers" in caught.value.fix
    )


def test_an_unknown_judge_on_the_command_line_is_a_one_line_error(run_cli):
    result = run_cli(
        "run",
        "--cases",
        str(CASES),
        "--outputs",
        str(CLAUDE),
        "--judge",
        "bm25",
        env={"ANTHROPIC_API_KEY": ""},
    )
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(
        "error: unknown judge 'bm25' — pass --judge or set [judge] name to one of lexical, llm"
    )


def test_a_broken_plugin_is_a_one_line_error_naming_it(plugins, config, store):
    plugins(
        "hilbot-broken",
        {"hilbot.judges": {"broken": f"{PREFIX}broken:Judge"}},
        {f"{PREFIX}broken": "import a_module_nobody_installed\n"},
    )
    assert "broken" in JUDGES.names()
    with pytest.raises(RegistryError) as caught:
        get_judge("broken", config, store)
    assert "plugin judge 'broken'" in caught.value.what and "hilbot-broken 0.1" in caught.value.what
    assert "ModuleNotFoundError" in caught.value.what and "uninstall" in caught.value.fix
    assert get_judge("lexical", config, store).name == "lexical"  # the others are unaffected
    assert judge_label("broken") == "AI [broken]"  # a label never fails: it falls back


def test_a_module_that_registers_nothing_under_its_name_is_an_error(plugins, config, store):
    plugins(
        "hilbot-empty",
        {"hilbot.judges": {"empty": f"{PREFIX}empty"}},
        {f"{PREFIX}empty": "X = 1\n"},
    )
    with pytest.raises(
        RegistryError, match=f"plugin module {PREFIX}empty .* registers no judge 'empty'"
    ):
        get_judge("empty", config, store)


def test_a_plugin_cannot_take_a_builtin_name(plugins):
    plugins(
        "hilbot-shadow",
        {"hilbot.channels": {"terminal": f"{PREFIX}shadow"}},
        {f"{PREFIX}shadow": "raise RuntimeError('never imported')\n"},
    )
    assert CHANNELS.names() == ["slack", "telegram", "terminal"]
    assert (
        get_channel("terminal").name == "terminal"
    )  # the built-in; the plugin's module is never imported
    assert f"{PREFIX}shadow" not in sys.modules

    class Mine:
        name = "telegram"

    Mine.__module__ = f"{PREFIX}mine"
    for name in ("telegram", "terminal"):  # imported or not, a built-in name is reserved
        with pytest.raises(RegistryError, match=f"channel '{name}' is a built-in"):
            CHANNELS.register(name)(Mine)


def test_two_plugins_with_one_name_are_an_error(plugins, config, store):
    for dist in ("hilbot-bm25-a", "hilbot-bm25-b"):
        module = f"{PREFIX}{dist.replace('-', '_')}"
        plugins(dist, {"hilbot.judges": {"bm25": f"{module}:BM25Judge"}}, {module: BM25})
    with pytest.raises(RegistryError, match="2 plugins provide the judge 'bm25'") as caught:
        get_judge("bm25", config, store)
    assert caught.value.fix == "uninstall all but one of them"


def test_the_generic_registry():
    things: Registry[object] = Registry(
        "thing", "hilbot.test-things", builtins={"lazy": f"{PREFIX}nowhere"}
    )

    @things.register("a")
    def a():
        return "a"

    def b():
        return "b"

    assert (
        things.get("a") is a and things.register("a")(a) is a
    )  # registering the same object again is harmless
    with pytest.raises(RegistryError, match=r"thing 'a' is already registered \(.*\.a\)"):
        things.register("a")(b)
    things.register("a", replace=True)(b)
    assert things.get("a") is b
    assert things.names() == ["a", "lazy"] and "a" in things and "zzz" not in things
    for bad in ("", " a", None):
        with pytest.raises(RegistryError, match="invalid thing name"):
            things.register(bad)  # type: ignore[arg-type]
    with pytest.raises(UnknownName, match="unknown thing 'zzz'") as caught:
        things.get("zzz")
    assert (
        caught.value.fix
        == "use one of a, lazy, or install a plugin that adds one (entry-point group "
        "hilbot.test-things)"
    )


# -------------------------------------------------------------- providers and channels from plugins

ECHO_PROVIDER = """
from evaluation.llm import ProviderReply


class EchoProvider:
    name = "echo"

    def __init__(self, settings):
        self.model = settings.model

    async def complete(self, request, *, system, prompt, max_tokens):
        return ProviderReply(data={"answer": "YES", "reason": f"echo saw {len(prompt)} characters"}, input_tokens=3)
"""

ECHO_CHANNEL = """
from bot.channels import channel


@channel("echo")
class EchoChannel:
    name = "echo"

    def serve(self, store, config):
        return None
"""


def test_a_plugin_provider_serves_the_llm_judge(plugins, config, store):
    from evaluation.judges import BinaryVerdict

    plugins(
        "hilbot-echo",
        {"hilbot.providers": {"echo": f"{PREFIX}echo:EchoProvider"}},
        {f"{PREFIX}echo": ECHO_PROVIDER},
    )
    assert PROVIDERS.names() == ["anthropic", "echo", "openai-compatible"]
    settings = config.llm.model_copy(update={"provider": "echo", "model": "echo-1", "cache": False})
    llm = LLM(settings, store)
    reply = asyncio.run(llm.complete(LLMRequest(prompt="hello", output=BinaryVerdict)))
    assert reply.output.answer == "YES" and llm.label == "echo/echo-1"
    judge_ = get_judge("llm", config.model_copy(update={"llm": settings}), store)
    info = judge_.info()
    assert (info.name, info.registry_name, info.kind, info.params["provider"]) == (
        "echo/echo-1",
        "llm",
        "llm",
        "echo",
    )
    assert judge_label(info) == "AI"


def test_a_plugin_channel_is_served_by_name(plugins):
    plugins(
        "hilbot-echo-channel",
        {"hilbot.channels": {"echo": f"{PREFIX}echo_channel"}},
        {f"{PREFIX}echo_channel": ECHO_CHANNEL},
    )
    assert CHANNELS.names() == ["echo", "slack", "telegram", "terminal"]
    found = chat_channel("echo")
    assert type(found).__module__ == f"{PREFIX}echo_channel" and found.serve(None, None) is None
    assert get_channel("echo") is not found  # a new instance each time


def test_builtin_channels_and_providers_are_still_imported_lazily():
    code = textwrap.dedent("""
        import sys
        from bot.channels import CHANNELS, get_channel
        from evaluation.llm import PROVIDERS
        from evaluation.judges import JUDGES
        from evaluation.output import judge_label
        names = CHANNELS.names(), PROVIDERS.names(), JUDGES.names()
        try:
            get_channel("nope")
        except Exception as exc:
            error = str(exc)
        labels = judge_label("recorded"), judge_label("lexical"), judge_label("openai/gpt-4o")
        terminal = get_channel("terminal").name
        heavy = sorted({m.split(".")[0] for m in sys.modules} & {"telegram", "slack_bolt", "slack_sdk", "anthropic", "openai"})
        print(names, terminal, labels, heavy, error, sep="\\n")
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    names, terminal, labels, heavy, error = out.strip().split("\n")
    assert (
        names
        == "(['slack', 'telegram', 'terminal'], ['anthropic', 'openai-compatible'], ['lexical', "
        "'llm'])"
    )
    assert terminal == "terminal" and labels == "('AI [recorded]', 'lexical', 'AI')"
    assert heavy == "[]", f"imported {heavy}"
    assert "use one of slack, telegram, terminal" in error
