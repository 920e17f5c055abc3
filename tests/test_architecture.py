"""The shape of the code, read from the source with ``ast`` (nothing is imported):

* an analysis module (the registry's built-ins and the digest) imports no other analysis module, at
  the top level or inside a function: shared statistics live in :mod:`analysis.stats`, shared
  vocabulary in :mod:`analysis.vocabulary`; an analysis that is a package is one leaf: every module
  of it is checked, and they may import each other;
* no module of ``analysis``, ``evaluation`` or ``bot`` imports a private name (``from x import
  _name``) from another module; a package's private *modules* (``from . import _scan``) are fine
  within their package;
* a statistics module (:mod:`analysis.stats`) imports numpy, scipy, the standard library and its
  siblings only;
* the modules' top-level imports have no cycle (a cycle works only in some import orders);
* at most 0.5% of the Python lines are over 100 characters (the formatter's width).

Imports are resolved as Python resolves them: relative imports against the module's package, ``from
pkg import name`` to the submodule ``pkg.name`` when there is one, and a lazy package's public names
(its ``_EXPORTS`` map, as ``analysis/__init__.py`` has) to the module that defines them.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.auxil.network import CREDENTIALS

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("analysis", "evaluation", "bot")
ANALYSES = (
    "agreement",
    "calibration",
    "correlate",
    "patterns",
    "triage",
    "validate",
    "synthesize",
    "digest",
)
"""The analysis modules the issue named; :func:`analysis_modules` must find every one of them."""
STATS = "analysis.stats"
STATS_MAY_IMPORT = {"numpy", "scipy"}


@dataclass(frozen=True)
class Import:
    """One imported module (or name) of a module, where it is, and how it is imported."""

    target: str
    """The module imported (a submodule when ``from pkg import sub`` names one)."""
    name: str | None
    """The name imported from ``target`` by ``from … import name`` (None: the module itself)."""
    line: int
    top_level: bool
    """Executed when the module is imported: not in a function (``if TYPE_CHECKING`` says
    ``type_checking``)."""
    type_checking: bool
    written: tuple[str, str] | None = None
    """``from X import y`` as written, resolved: (X, y); None for ``import x``."""


@cache
def modules() -> dict[str, Path]:
    """Every module of the packages, by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def is_package(name: str) -> bool:
    return modules()[name].name == "__init__.py"


@cache
def lazy_exports(package: str) -> dict[str, str]:
    """A lazy package's ``_EXPORTS``: public name → the module defining it (absolute)."""
    tree = ast.parse(modules()[package].read_text(encoding="utf-8"))
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        if any(isinstance(target, ast.Name) and target.id == "_EXPORTS" for target in node.targets):
            exports = ast.literal_eval(node.value)
            return {name: f"{package}.{module}" for name, module in exports.items()}
    return {}


def _resolve(module: str, level: int, name: str | None) -> str:
    if not level:
        return name or ""
    base = module.split(".") if is_package(module) else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@cache
def imports(module: str) -> tuple[Import, ...]:
    """Every import statement of ``module``, anywhere in it."""
    tree = ast.parse(modules()[module].read_text(encoding="utf-8"))
    found: list[Import] = []

    def visit(node: ast.AST, top: bool, checking: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend(
                Import(alias.name, None, node.lineno, top, checking) for alias in node.names
            )
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                written = (base, alias.name)
                external = base.split(".")[0] in STATS_MAY_IMPORT and alias.name != "*"
                if sub in modules() or external:  # a submodule (``from scipy import sparse`` too)
                    found.append(Import(sub, None, node.lineno, top, checking, written))
                else:
                    found.append(Import(base, alias.name, node.lineno, top, checking, written))
        for child in ast.iter_child_nodes(node):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, False, checking)
            elif isinstance(node, ast.If) and _is_type_checking(node.test) and child in node.body:
                visit(child, top, True)
            else:
                visit(child, top, checking)

    visit(tree, True, False)
    return tuple(found)


def runtime_target(imported: Import) -> str:
    """The module an import makes Python load: a lazy package's export is its defining module."""
    if imported.name is not None and imported.target in modules():
        return lazy_exports(imported.target).get(imported.name, imported.target)
    return imported.target


def analysis_modules() -> set[str]:
    """The registry's built-in analyses (``builtins=`` of ``analyses`` in analysis/registry.py) and
    the digest."""
    tree = ast.parse(modules()["analysis.registry"].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "builtins":
            return {*ast.literal_eval(node.value).values(), "analysis.digest"}
    raise AssertionError("analysis/registry.py lists no builtins")


def test_the_analysis_modules_are_the_registered_ones_and_the_digest():
    assert analysis_modules() >= {f"analysis.{name}" for name in ANALYSES}
    assert all(name in modules() for name in analysis_modules())


def members(analysis: str) -> list[str]:
    """The modules of an analysis: the module itself, or a package and every module under it."""
    return sorted(module for module in modules() if _within(module, {analysis}))


def foreign_imports(analysis: str) -> list[str]:
    """The imports of another analysis (or of a module of one) by any module of ``analysis``."""
    others = analysis_modules() - {analysis}
    return [
        f"{modules()[module].relative_to(ROOT)}:{i.line}: imports {runtime_target(i)}"
        for module in members(analysis)
        for i in imports(module)
        if _within(runtime_target(i), others)
    ]


@pytest.mark.parametrize("module", sorted(f"analysis.{name}" for name in ANALYSES))
def test_an_analysis_imports_no_other_analysis(module):
    found = foreign_imports(module)
    assert not found, (
        "an analysis imports another (shared code belongs in analysis.stats or "
        "analysis.vocabulary):\n" + "\n".join(found)
    )


def _within(target: str, names: set[str]) -> bool:
    return any(target == name or target.startswith(name + ".") for name in names)


def test_no_private_name_is_imported_from_another_module():
    found = []
    for module in modules():
        for i in imports(module):
            if i.written is None:
                continue
            source, name = i.written
            if not name.startswith("_") or name.startswith("__"):
                continue
            # a private module of the importer's own package (``from . import _scan``) is fine
            if f"{source}.{name}" in modules() and source.split(".")[0] == module.split(".")[0]:
                continue
            where = modules()[module].relative_to(ROOT)
            found.append(f"{where}:{i.line}: from {source} import {name}")
    assert not found, (
        "private names imported across modules (make them public, or move them):\n"
        + "\n".join(found)
    )


def test_the_statistics_import_numpy_scipy_and_the_standard_library_only():
    found = []
    for module in (m for m in modules() if _within(m, {STATS})):
        for i in imports(module):
            top = i.target.split(".")[0]
            if top == "__future__" or top in STATS_MAY_IMPORT or top in sys.stdlib_module_names:
                continue
            if _within(i.target, {STATS}):
                continue
            found.append(f"{modules()[module].relative_to(ROOT)}:{i.line}: imports {i.target}")
    assert not found, (
        "analysis.stats imports beyond numpy, scipy and the standard library:\n" + "\n".join(found)
    )


def import_graph() -> dict[str, set[str]]:
    """Module → the modules of the packages its top-level imports load (their packages too, but not
    the module's own packages, which Python has loaded already; a submodule of one of them is an
    edge)."""
    graph: dict[str, set[str]] = {module: set() for module in modules()}
    for module in modules():
        own = {".".join(module.split(".")[:n]) for n in range(1, module.count(".") + 1)}
        for i in imports(module):
            if not i.top_level or i.type_checking:
                continue
            target = runtime_target(i)
            while target and target not in modules():
                target = target.rpartition(".")[0]
            if not target:  # outside the packages
                continue
            parts = target.split(".")
            for n in range(1, len(parts) + 1):
                loaded = ".".join(parts[:n])
                # an own package only for a name its __init__ defines (it is half-imported yet)
                from_own = loaded == target and i.name is not None
                if loaded != module and (loaded not in own or from_own):
                    graph[module].add(loaded)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_top_level_imports_have_no_cycle():
    graph = import_graph()
    found = []
    for component in cycles(graph):
        members = set(component)
        edges = [
            f"  {modules()[m].relative_to(ROOT)}:{i.line}: imports {runtime_target(i)}"
            for m in component
            for i in imports(m)
            if i.top_level and not i.type_checking and _within(runtime_target(i), members - {m})
        ]
        found.append(" ↔ ".join(component) + "\n" + "\n".join(edges))
    assert not found, "import cycles among the top-level imports:\n" + "\n".join(found)


def test_the_checks_see_what_they_look_for():
    """The resolution the checks rest on: relative imports, submodules, lazy exports, function-level
    imports, and the modules of an analysis that is a package."""
    # a package analysis is its __init__ and every module under it
    assert is_package("analysis.agreement")
    assert {
        "analysis.agreement",
        "analysis.agreement.compute",
        "analysis.agreement.markdown",
    } <= set(members("analysis.agreement"))
    assert members("analysis.calibration") == ["analysis.calibration"]
    agreement = [i for module in members("analysis.agreement") for i in imports(module)]
    # from .. import stats (in analysis.agreement.compute)
    assert any(i.target == "analysis.stats" and i.name is None for i in agreement)
    assert any(i.target == "analysis.stats.bands" for i in agreement)
    # from .report import … (in analysis.agreement): the package's own module
    assert any(i.target == "analysis.agreement.report" for i in imports("analysis.agreement"))
    assert runtime_target(Import("analysis", "band", 0, True, False)) == "analysis.stats"
    report = Import("analysis", "AgreementReport", 0, True, False)
    assert runtime_target(report) == "analysis.agreement"
    # from ..report import …, inside a function (in analysis.agreement.markdown): analysis.report
    markdown = imports("analysis.agreement.markdown")
    assert any(not i.top_level and i.target == "analysis.report" for i in markdown)
    # a submodule of another analysis is another analysis; a module of its own package is not
    others = analysis_modules() - {"analysis.agreement"}
    assert _within("analysis.triage.report", others)
    assert not _within("analysis.agreement.report", others)
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


LINE_LENGTH = 100
LONG_LINES_SHARE = 0.005
SOURCE_DIRS = (*PACKAGES, "tests", "bench", "examples")


def long_lines(text: str) -> int:
    """Lines over :data:`LINE_LENGTH` characters (characters, not UTF-8 bytes)."""
    return sum(len(line) > LINE_LENGTH for line in text.splitlines())


def test_few_lines_are_over_100_characters():
    files = [
        p
        for d in SOURCE_DIRS
        for p in sorted((ROOT / d).rglob("*.py"))
        if "fixtures" not in p.relative_to(ROOT).parts  # data the tests read, some written by them
    ]
    assert len(files) > 250  # the whole tree was found
    counts = {p: long_lines(p.read_text(encoding="utf-8")) for p in files}
    total = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files)
    over = sum(counts.values())
    worst = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
    assert over <= LONG_LINES_SHARE * total, (
        f"{over} of {total} lines are over {LINE_LENGTH} characters (at most "
        f"{LONG_LINES_SHARE:.1%}); most in: "
        + ", ".join(f"{p.relative_to(ROOT)} ({n})" for p, n in worst)
    )


def test_long_lines_are_counted_in_characters():
    assert long_lines("κ" * 100 + "\n" + "x" * 101) == 1


def test_tests_run_offline(monkeypatch):
    """The suite's guard (tests/conftest.py): a real host is refused, loopback is not, and no
    credential from the developer's shell reaches a test."""
    import os
    import socket

    assert not any(os.environ.get(name) for name in CREDENTIALS)
    with pytest.raises(OSError, match="test"):
        socket.getaddrinfo("api.anthropic.com", 443)
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError, match="network access"):
        probe.connect(("203.0.113.7", 443))
    assert socket.getaddrinfo("localhost", 80)
