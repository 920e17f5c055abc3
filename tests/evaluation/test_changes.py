"""Changes for ``hilbot triage``: snapshot trees (booktest's layout among them), two runs, a file of
rows, and the diff.

Covers tree matching (changed/added/removed/identical, binary, hidden, symbolic links, nested
trees, same or missing directories), a booktest project as booktest leaves it after a run, two
runs of answers and of search results, JSONL/CSV rows with aliases and their ``file:line``
errors, the unified and marked diffs, the numeric diff, and :func:`find_changes`' dispatch.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evaluation.changes.diff as diff_module
import evaluation.changes.numeric as numeric_module
import evaluation.changes.trees as trees_module
from evaluation import Store
from evaluation.changes import (
    BOOKTEST_INCLUDE,
    WITHIN_MARK,
    Change,
    ChangeError,
    NumericDiff,
    Tolerance,
    changes_between_runs,
    changes_between_trees,
    changes_from_file,
    find_changes,
    is_booktest_output,
    item_output,
    marked_diff,
    normalized_equal,
    numeric_diff,
    path_matches,
    unified_diff,
)
from evaluation.errors import RunNotFound
from evaluation.records import ItemData, Query, QueryEvaluation, RunHeader, SearchResult

FIXTURES = Path(__file__).parents[1] / "fixtures" / "changes"
BOOKS = FIXTURES / "booktest" / "books"


def _tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    root.mkdir(parents=True, exist_ok=True)
    return root


def _trees(
    tmp_path: Path, old: dict[str, str | bytes], new: dict[str, str | bytes]
) -> tuple[Path, Path]:
    return _tree(tmp_path / "expected", old), _tree(tmp_path / "actual", new)


def _by_id(found: list[Change]) -> dict[str, Change]:
    return {c.id: c for c in found}


def _change(expected: str | None, actual: str | None, path: str = "p.md") -> Change:
    status: Literal["changed", "added", "removed"] = (
        "removed" if actual is None else "added" if expected is None else "changed"
    )
    return Change(
        id=path,
        name=path,
        path=path,
        status=status,
        expected=expected,
        actual=actual,
        source="file",
    )


# --------------------------------------------------------------------------- snapshot trees


def test_trees_match_files_by_relative_path(tmp_path: Path) -> None:
    expected, actual = _trees(
        tmp_path,
        {"a.md": "one\n", "same.md": "x\n", "sub/c.md": "c\n", "sub/gone.md": "bye\n"},
        {"a.md": "two\n", "same.md": "x\n", "sub/c.md": "c\n", "new.md": "hi\n"},
    )
    found = changes_between_trees(expected, actual)
    assert [(c.id, c.status) for c in found] == [
        ("a.md", "changed"),
        ("new.md", "added"),
        ("sub/gone.md", "removed"),
    ]
    changed, added, removed = found
    assert (changed.name, changed.path, changed.expected, changed.actual, changed.source) == (
        "a.md",
        "a.md",
        "one\n",
        "two\n",
        "snapshots",
    )
    roots = (os.path.realpath(expected), os.path.realpath(actual))  # each tree's root, resolved
    assert all((c.expected_root, c.actual_root) == roots for c in found)
    assert (added.expected, added.actual) == (None, "hi\n")
    assert (removed.expected, removed.actual) == ("bye\n", None)


def test_trees_skip_binary_files_but_not_late_nul_bytes(tmp_path: Path) -> None:
    late = b"a" * 9000 + b"\0"
    expected, actual = _trees(
        tmp_path,
        {"img.png": b"\x89PNG\0\0old", "half.bin": b"text", "late.txt": late, "gone.bin": b"\0"},
        {
            "img.png": b"\x89PNG\0\0new",
            "half.bin": b"te\0xt",
            "late.txt": late + b"b",
            "new.bin": b"\0\1",
        },
    )
    found = changes_between_trees(expected, actual)
    assert [c.id for c in found] == ["late.txt"]  # a NUL past the first 8 KB keeps a file text
    assert found[0].actual is not None and found[0].actual.endswith("\0b")


def test_trees_read_invalid_utf8_with_replacement(tmp_path: Path) -> None:
    expected, actual = _trees(tmp_path, {"a.md": b"caf\xe9\n"}, {"a.md": b"caf\xc3\xa9\n"})
    (change,) = changes_between_trees(expected, actual)
    assert (change.expected, change.actual) == ("caf\ufffd\n", "café\n")


def test_trees_skip_hidden_directories_and_files(tmp_path: Path) -> None:
    expected, actual = _trees(
        tmp_path,
        {".git/HEAD": "ref: a\n", ".hidden.md": "a", "sub/.cache/x.md": "1", "keep.md": "k"},
        {
            ".git/HEAD": "ref: b\n",
            ".hidden.md": "b",
            "sub/.cache/x.md": "2",
            "keep.md": "k",
            ".new/y.md": "y",
        },
    )
    assert changes_between_trees(expected, actual) == []


def test_trees_do_not_follow_links_out_of_the_tree(tmp_path: Path) -> None:
    outside = _tree(tmp_path / "outside", {"secret.md": "password\n", "dir/inner.md": "inner\n"})
    expected, actual = _trees(tmp_path, {"real.md": "same\n"}, {"real.md": "same\n"})
    (actual / "leak.md").symlink_to(outside / "secret.md")
    (actual / "dirlink").symlink_to(outside / "dir", target_is_directory=True)
    (actual / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    (actual / "alias.md").symlink_to(actual / "real.md")  # a link inside the tree is read
    found = changes_between_trees(expected, actual)
    assert [(c.id, c.actual) for c in found] == [("alias.md", "same\n")]
    assert all("password" not in (c.actual or "") for c in found)


def test_trees_skip_pipes_without_blocking(tmp_path: Path) -> None:
    expected, actual = _trees(tmp_path, {"a.md": "a"}, {"a.md": "b"})
    os.mkfifo(actual / "pipe.md")
    assert [c.id for c in changes_between_trees(expected, actual)] == ["a.md"]


def test_trees_refuse_the_same_directory(tmp_path: Path) -> None:
    folder = _tree(tmp_path / "books", {"a.md": "a"})
    (tmp_path / "alias").symlink_to(folder, target_is_directory=True)
    for other in (folder, tmp_path / "alias", tmp_path / "books" / "."):
        with pytest.raises(ChangeError, match="same directory") as info:
            changes_between_trees(folder, other)
        assert "books books/.out" in str(info.value)


def test_trees_missing_directory_says_which_and_how_to_fix(tmp_path: Path) -> None:
    folder = _tree(tmp_path / "books", {"a.md": "a"})
    with pytest.raises(ChangeError) as info:
        changes_between_trees(folder, folder / ".out")
    assert info.value.what == "the actual directory not found" and info.value.where == str(
        folder / ".out"
    )
    assert "run the tests first" in (info.value.fix or "")
    with pytest.raises(ChangeError, match="the expected directory not found"):
        changes_between_trees(tmp_path / "nope", folder)
    with pytest.raises(ChangeError, match="the expected is not a directory"):
        changes_between_trees(folder / "a.md", tmp_path)


def test_trees_leave_out_an_actual_tree_inside_the_expected_one(tmp_path: Path) -> None:
    expected = _tree(tmp_path / "snap", {"a.md": "old\n", "out/a.md": "new\n"})
    found = changes_between_trees(expected, expected / "out")
    assert [(c.id, c.status) for c in found] == [
        ("a.md", "changed")
    ]  # out/a.md is not an expected file


def test_trees_include_exclude_and_partial(tmp_path: Path) -> None:
    expected, actual = _trees(
        tmp_path,
        {"a.md": "1", "sub/b.md": "1", "sub/c.txt": "1", "skip/d.md": "1", "only.md": "x"},
        {"a.md": "2", "sub/b.md": "2", "sub/c.txt": "2", "skip/d.md": "2"},
    )
    found = changes_between_trees(expected, actual, include=["*.md"], exclude=["skip/**"])
    assert [c.id for c in found] == ["a.md", "only.md", "sub/b.md"]
    assert [
        c.id
        for c in changes_between_trees(
            expected, actual, include=["*.md"], exclude=["skip/**"], partial=True
        )
    ] == ["a.md", "sub/b.md"]


def test_trees_refuse_a_changed_file_too_large_but_not_an_identical_one(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(trees_module, "MAX_FILE_BYTES", 100)
    expected, actual = _trees(
        tmp_path,
        {"big.md": "x" * 200, "huge.md": "y" * 200},
        {"big.md": "x" * 200, "huge.md": "z" * 200},
    )
    with pytest.raises(ChangeError, match="too large") as info:
        changes_between_trees(expected, actual)
    assert (
        info.value.where is not None
        and info.value.where.endswith("huge.md")
        and "exclude" in (info.value.fix or "")
    )
    assert changes_between_trees(expected, actual, exclude=["huge.md"]) == []


def test_trees_report_a_file_too_large_in_skipped_and_triage_the_rest(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(trees_module, "MAX_FILE_BYTES", 100)
    expected, actual = _trees(
        tmp_path, {"a.md": "1", "huge.md": "y" * 200}, {"a.md": "2", "huge.md": "z" * 300}
    )
    skipped: list[str] = []
    assert [c.id for c in changes_between_trees(expected, actual, skipped=skipped)] == ["a.md"]
    [warning] = skipped
    assert (
        warning.startswith("huge.md: 0.0 MiB, over the 0 MiB limit")
        and "--exclude 'huge.md'" in warning
    )


def test_the_data_directory_is_never_part_of_a_tree(tmp_path: Path) -> None:
    expected, actual = _trees(
        tmp_path, {"a.md": "1", "results/ratings.jsonl": "{}\n"}, {"a.md": "2"}
    )
    found = changes_between_trees(expected, actual, guard=[expected / "results"])
    assert [c.id for c in found] == ["a.md"]  # inside a tree it is left out, not "removed"
    with pytest.raises(ChangeError, match="in hilbot's data directory") as info:
        changes_between_trees(expected / "results", actual, guard=[expected / "results"])
    assert "--data-dir" in (info.value.fix or "")
    store = Store(expected / "results")
    assert [c.id for c in find_changes(store, [str(expected), str(actual)])] == ["a.md"]


def test_triage_records_are_never_changes_but_a_users_own_ai_json_is(tmp_path: Path) -> None:
    record = json.dumps({"written_by": "hilbot triage", "path": "a.md"})
    older = json.dumps(
        {
            "path": "a.md",
            "status": "changed",
            "category": 3,
            "category_name": "UNSURE",
            "decision": "human",
            "rule": "r",
        }
    )
    expected, actual = _trees(
        tmp_path,
        {"a.md": "1"},
        {
            "a.md": "2",
            "a.md.ai.json": record,
            "a.ai.json": older,
            "mine.ai.json": '{"notes": 1}',
            "bad.ai.json": "{",
        },
    )
    assert [c.id for c in changes_between_trees(expected, actual)] == [
        "a.md",
        "bad.ai.json",
        "mine.ai.json",
    ]


def test_trees_an_unreadable_directory_is_an_error_not_a_removal(
    tmp_path: Path, monkeypatch
) -> None:
    expected, actual = _trees(tmp_path, {"locked/a.md": "a"}, {"locked/a.md": "a"})
    real_scandir = os.scandir

    def scandir(path):
        if str(path).endswith(os.path.join("actual", "locked")):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(ChangeError, match="cannot read the directory") as info:
        changes_between_trees(expected, actual)
    assert info.value.where is not None and info.value.where.endswith("locked")


def test_path_matches_globs() -> None:
    assert path_matches("a.md", ["*.md"]) and path_matches(
        "x/y/a.md", ["*.md"]
    )  # no slash: at any depth
    assert path_matches("payments/payment_total", ["**/payment_*"]) and path_matches(
        "payment_total", ["**/payment_*"]
    )
    assert not path_matches("x/a.md", ["/a.md"]) and path_matches("a.md", ["/a.md"])
    assert not path_matches("a/b/c.md", ["a/*.md"]) and path_matches("a/b/c.md", ["a/**"])
    assert not path_matches("a.txt", ["*.md", "b/**"]) and not path_matches("a.md", [])


# --------------------------------------------------------------------------- booktest


def test_booktest_project_changes_are_its_outputs_that_ran(store: Store) -> None:
    found = find_changes(store, [str(BOOKS), str(BOOKS / ".out")])
    assert (
        [(c.id, c.status) for c in found]
        == [
            ("test/examples/example_book.py/ExampleTestBook/test_float.md", "changed"),
            ("test/examples/new_book.py/test_new.md", "added"),
            ("test/examples/simple_book.py/test_simple.md", "changed"),
        ]
    )  # not the unrun book, index.md, reports, logs, pickles, cases.ndjson, recorded calls or scratch files
    simple = _by_id(found)["test/examples/simple_book.py/test_simple.md"]
    assert (simple.expected, simple.actual) == (
        "this is a simple test\n",
        "this is a simplified test\n",
    )
    roots = (os.path.realpath(BOOKS), os.path.realpath(BOOKS / ".out"))
    assert (simple.expected_root, simple.actual_root) == roots


def test_booktest_number_change_is_marked_within_tolerance(store: Store) -> None:
    floats = _by_id(find_changes(store, [str(BOOKS), str(BOOKS / ".out")]))[
        "test/examples/example_book.py/ExampleTestBook/test_float.md"
    ]
    diff = numeric_diff(floats.expected or "", floats.actual or "", Tolerance(relative=0.001))
    assert diff.only_numbers and [(c.old_text, c.new_text, c.line) for c in diff.changes] == [
        ("98.772", "98.801", 5),
        ("98.743", "98.772", 5),
    ]
    assert diff.all_within
    assert "+random length is: 98.801 m (was 98.772 m)" + WITHIN_MARK in marked_diff(
        floats, Tolerance(relative=0.001)
    )
    assert WITHIN_MARK not in marked_diff(floats, Tolerance(relative=0.0001))


def test_booktest_output_tree_is_recognised(tmp_path: Path) -> None:
    assert is_booktest_output(BOOKS / ".out") and not is_booktest_output(BOOKS)
    other = _tree(tmp_path / "out", {"cases.ndjson": "{}\n"})
    assert is_booktest_output(other) and not is_booktest_output(tmp_path)


def test_booktest_trees_compared_in_full_when_asked(store: Store) -> None:
    found = _by_id(find_changes(store, [str(BOOKS), str(BOOKS / ".out")], include=["**/*"]))
    assert "test/examples/simple_book.py/test_simple.txt" in found and "cases.ndjson" in found
    assert "test/examples/snapshots_book.py/test_auto_function_snapshots.snapshots.json" in found
    assert "test/examples/example_book.py/ExampleTestBook/test_float.bin" not in found  # binary
    assert "test/examples/new_book.py/test_new.tmp/scratch.md" not in found  # booktest's scratch
    assert "test/examples/old_book.py/test_not_run.md" not in found  # .out stays partial


REAL_PROJECT = FIXTURES.parent / "booktest_project"
DOCUMENTED = '''"""Reports of the retrieval pipeline, checked on the golden queries."""
import booktest as bt


def test_metrics(t: bt.TestCaseRun):
    """Precision and recall stay where the last accepted run put them."""
    t.tln("precision")


async def test_answer(t):
    """The capital of France is answered from the retrieved page,
    not from the model's memory."""


class ReportBook(bt.TestBook):
    """Books of the report's totals."""

    def test_format(self, t):
        """Totals are printed with one space."""
'''


def test_a_booktest_change_takes_its_purpose_from_the_tests_docstrings(
    store: Store, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    shutil.copytree(REAL_PROJECT, project)
    (project / "test" / "report_test.py").write_text(DOCUMENTED)
    out = project / "books" / ".out" / "test" / "report_test.py"
    (out / "ReportBook").mkdir()
    shutil.move(out / "test_format.md", out / "ReportBook" / "test_format.md")
    books = project / "books"
    shutil.move(books / "test/report_test.py/test_format.md", tmp_path / "format.md")
    (books / "test/report_test.py/ReportBook").mkdir()
    shutil.move(tmp_path / "format.md", books / "test/report_test.py/ReportBook/test_format.md")
    found = _by_id(find_changes(store, [str(books), str(books / ".out")]))
    module = "Reports of the retrieval pipeline, checked on the golden queries."
    assert found["test/report_test.py/test_metrics.md"].description == (
        f"Precision and recall stay where the last accepted run put them.\n\n{module}"
    )
    assert found["test/report_test.py/test_answer.md"].description == (
        "The capital of France is answered from the retrieved page,\nnot from the model's "
        f"memory.\n\n{module}"
    )
    assert found["test/report_test.py/ReportBook/test_format.md"].description == (
        f"Totals are printed with one space.\n\nBooks of the report's totals.\n\n{module}"
    )
    assert found["test/report_test.py/test_latency.md"].description == module  # no docstring
    (project / "test" / "report_test.py").write_text("def test_metrics(:\n")  # not Python
    assert all(c.description is None for c in find_changes(store, [str(books), str(out.parent)]))
    undocumented = find_changes(store, [str(BOOKS), str(BOOKS / ".out")])  # no test sources
    assert all(c.description is None for c in undocumented)


def test_booktest_trees_as_plain_trees_never_count_out_as_expected() -> None:
    found = _by_id(changes_between_trees(BOOKS, BOOKS / ".out", include=BOOKTEST_INCLUDE))
    assert (
        found["test/examples/old_book.py/test_not_run.md"].status == "removed"
        and found["index.md"].status == "removed"
    )
    assert not any(".out" in change_id for change_id in found)


# --------------------------------------------------------------------------- runs


def _item(
    item_id: str,
    query: str,
    *,
    answer: str | None = None,
    intent: str | None = None,
    results: list[SearchResult] | None = None,
    error: str | None = None,
) -> ItemData:
    return ItemData(
        id=item_id,
        query=Query(query=query, intent=intent),
        answer=answer,
        results=results or [],
        error=error,
    )


def _run(
    store: Store,
    run_id: str,
    items: list[ItemData],
    *,
    kind: str = "answer",
    set_name: str = "core",
) -> str:
    store.create_run(
        RunHeader(run_id=run_id, kind=kind, set=set_name),
        [QueryEvaluation(run_id=run_id, data=i) for i in items],
    )  # type: ignore[arg-type]
    return run_id


def test_runs_answers_changed_added_removed(store: Store) -> None:
    _run(
        store,
        "before",
        [
            _item("q1", "What is X?", answer="X is a thing.", intent="define X"),
            _item("q2", "Same?", answer="Yes."),
            _item("q3", "Old?", answer="Old answer.", intent="gone"),
        ],
        set_name="rag",
    )
    _run(
        store,
        "after",
        [
            _item("q1", "What is X?", answer="X is a widget.", intent="define X"),
            _item("q2", "Same?", answer="Yes."),
            _item("q4", "New?", answer="New answer."),
        ],
        set_name="rag",
    )
    found = changes_between_runs(store, "before", "after")
    assert [(c.id, c.status, c.path) for c in found] == [
        ("q1", "changed", "rag/q1"),
        ("q3", "removed", "rag/q3"),
        ("q4", "added", "rag/q4"),
    ]
    q1, q3, q4 = found
    assert (q1.name, q1.description, q1.expected, q1.actual, q1.source) == (
        "What is X?",
        "define X",
        "X is a thing.",
        "X is a widget.",
        "runs",
    )
    assert (q3.name, q3.description, q3.expected, q3.actual) == (
        "Old?",
        "gone",
        "Old answer.",
        None,
    )
    assert (q4.expected, q4.actual) == (None, "New answer.")


def test_runs_search_output_is_ranks_paths_and_titles(store: Store) -> None:
    def results(*rows: tuple[str, str | None, float, str]) -> list[SearchResult]:
        return [
            SearchResult(rank=n, path=p, title=t, score=s, snippet=snip)
            for n, (p, t, s, snip) in enumerate(rows, 1)
        ]

    _run(
        store,
        "s1",
        [
            _item(
                "a",
                "install",
                results=results(
                    ("/docs/x.md", "Install", 0.9, "run pip"), ("/docs/y.md", None, 0.5, "y")
                ),
            ),
            _item("b", "upgrade", results=results(("/docs/u.md", "Upgrade", 0.9, "old snippet"))),
        ],
        kind="search",
        set_name="web",
    )
    _run(
        store,
        "s2",
        [
            _item(
                "a",
                "install",
                results=results(
                    ("/docs/y.md", None, 0.95, "y"), ("/docs/x.md", "Install", 0.4, "run pip")
                ),
            ),
            _item("b", "upgrade", results=results(("/docs/u.md", "Upgrade", 0.1, "new snippet"))),
        ],
        kind="search",
        set_name="web",
    )
    (change,) = changes_between_runs(
        store, "s1", "s2"
    )  # b's score and snippet moved, its list did not
    assert change.path == "web/a"
    assert change.expected == "1. /docs/x.md — Install\n2. /docs/y.md"
    assert change.actual == "1. /docs/y.md\n2. /docs/x.md — Install"


def test_item_output_shows_the_error_and_missing_paths() -> None:
    item = _item("a", "q", results=[SearchResult(title="No path")], error="timeout after 30 s")
    assert item_output(item, "search") == "1. (no path) — No path\nerror: timeout after 30 s"
    assert item_output(_item("b", "q", answer="hi"), "scenario") == "hi"
    assert item_output(_item("c", "q"), "answer") == ""


def test_runs_unknown_or_same_run(store: Store) -> None:
    _run(store, "only", [_item("a", "q", answer="x")])
    with pytest.raises(RunNotFound):
        changes_between_runs(store, "only", "missing")
    with pytest.raises(ChangeError, match="same run"):
        changes_between_runs(store, "only", "only")


# --------------------------------------------------------------------------- file rows


def test_file_rows_jsonl_with_aliases() -> None:
    found = _by_id(changes_from_file(FIXTURES / "rows.jsonl"))
    assert sorted(found) == [
        "billing/payment_total",
        "gone",
        "greeting",
        "new-test",
        "row-7",
        "score",
    ]  # "same" did not change
    greeting, score = found["greeting"], found["score"]
    assert (greeting.name, greeting.description, greeting.path, greeting.status) == (
        "says hello",
        "the greeting names the user",
        "greeting",
        "changed",
    )
    assert (greeting.expected, greeting.actual, greeting.source) == (
        "Hello, Ada!",
        "Hi, Ada!",
        "file",
    )
    assert (score.name, score.description) == (
        "reports a score",
        "the score is printed with two decimals",
    )
    assert (score.expected, score.actual) == ("score: 0.85", "score: 0.87")
    billing = found["billing/payment_total"]
    assert (billing.name, billing.path, billing.description) == (
        "billing/payment_total",
        "billing/payment_total",
        "totals add up",
    )
    assert (found["new-test"].status, found["new-test"].actual) == ("added", "brand new")
    assert (found["gone"].status, found["gone"].expected) == ("removed", "was here")
    assert json.loads(found["row-7"].actual or "") == {
        "rank": 2,
        "doc": "a.md",
    }  # an object becomes JSON text
    assert [c.path for c in changes_from_file(FIXTURES / "rows.jsonl")] == sorted(
        c.path for c in found.values()
    )


def test_file_rows_csv_with_header_aliases() -> None:
    found = changes_from_file(FIXTURES / "rows.csv")
    assert [(c.id, c.status) for c in found] == [
        ("t1", "changed"),
        ("t2", "changed"),
        ("t4", "added"),
    ]
    t1, t2, t4 = found
    assert (t1.name, t1.description, t1.expected, t1.actual) == (
        "adds numbers",
        "sums two, then prints",
        "sum: 3",
        "sum: 4",
    )
    assert (t2.description, t2.expected, t2.actual) == (
        None,
        "a\nb",
        "a\nc",
    )  # an empty cell is no value
    assert (t4.expected, t4.actual) == (None, "appeared")


@pytest.mark.parametrize(
    ("text", "line", "what", "fix"),
    [
        (
            '{"id": "a", "expected": "x", "actual": "y"}\n["not", "a row"]\n',
            2,
            "a row must be a JSON object, not a list",
            "write each row as an object",
        ),
        (
            '{"id": "a", "expected": "x", "actual": "y"}\n\n{"id": "b", "name": "no outputs"}\n',
            3,
            "no expected or actual value",
            "not both",
        ),
        (
            '{"id": "a", "expected": "x", "actual": "y"}\n{"id": "b", "expected": \n',
            2,
            "invalid JSON",
            "one JSON object per line",
        ),
        (
            '{"id": {"nested": 1}, "expected": "x", "actual": "y"}\n',
            1,
            'id: {"nested": 1} is not text',
            "as a string or a number",
        ),
        (
            '{"id": "a", "name": ["x"], "expected": "x", "actual": "y"}\n',
            1,
            'name: ["x"] is not text',
            "as a string or a number",
        ),
    ],
)
def test_file_bad_rows_name_file_and_line(
    tmp_path: Path, text: str, line: int, what: str, fix: str
) -> None:
    path = tmp_path / "changes.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ChangeError) as info:
        changes_from_file(path)
    assert info.value.where == f"{path}:{line}"
    assert what in info.value.what and fix in (info.value.fix or "") + info.value.what


def test_file_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "changes.jsonl"
    path.write_text(
        '{"id": "a", "expected": "1", "actual": "2"}\n{"id": "b", "expected": "1", "actual": '
        '"1"}\n{"key": "a", "old": "3", "new": "3"}\n'
    )
    with pytest.raises(ChangeError, match=r"duplicate id 'a', first on line 1") as info:
        changes_from_file(path)
    assert info.value.where == f"{path}:3" and info.value.fix == "give each row its own id"


def test_file_csv_extra_cells_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "changes.csv"
    path.write_text("id,expected,actual\na,1,2\nb,1,2,3\n", encoding="utf-8")
    with pytest.raises(ChangeError, match="more cells than header columns") as info:
        changes_from_file(path)
    assert info.value.where == f"{path}:3"
    with pytest.raises(ChangeError, match="file not found"):
        changes_from_file(tmp_path / "missing.jsonl")


# --------------------------------------------------------------------------- the diff


def test_unified_diff_text() -> None:
    change = _change("a\nb\nc\n", "a\nB\nc\nd\n", path="dir/x.md")
    assert (
        unified_diff(change)
        == "--- expected/dir/x.md\n+++ actual/dir/x.md\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n"
    )
    assert (
        unified_diff(change, context=0)
        == "--- expected/dir/x.md\n+++ actual/dir/x.md\n@@ -2 +2 @@\n-b\n+B\n@@ -3,0 +4 @@\n+d\n"
    )
    assert unified_diff(_change("same", "same")) == ""


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["a\n", "b\n", "c\n", "1\n"]), max_size=12),
    st.lists(st.sampled_from(["a\n", "b\n", "d\n", "2\n"]), max_size=12),
    st.integers(0, 4),
)
def test_unified_diff_is_difflibs(old: list[str], new: list[str], context: int) -> None:
    reference = "".join(difflib.unified_diff(old, new, "expected/p.md", "actual/p.md", n=context))
    assert unified_diff(_change("".join(old), "".join(new)), context=context) == reference


def test_unified_diff_of_added_removed_and_line_endings() -> None:
    assert (
        unified_diff(_change(None, "x\r\ny"))
        == "--- expected/p.md\n+++ actual/p.md\n@@ -0,0 +1,2 @@\n+x\n+y\n"
    )
    assert (
        unified_diff(_change("x\n", None))
        == "--- expected/p.md\n+++ actual/p.md\n@@ -1 +0,0 @@\n-x\n"
    )
    assert unified_diff(_change("a\r\nb\r\n", "a\nb")).endswith(
        "\\ only line endings or the final newline differ\n"
    )
    assert unified_diff(_change("a\rb", "a\nc")).endswith("-b\n+c\n")
    assert (
        unified_diff(_change(None, "")) == "--- expected/p.md\n+++ actual/p.md\n\\ added, empty\n"
    )
    assert unified_diff(_change("a", "b", path="x\n+++ evil")).startswith(
        "--- expected/x␊+++ evil\n"
    )  # a name cannot forge a header


def test_unified_diff_is_cut_for_huge_texts(monkeypatch) -> None:
    monkeypatch.setattr(diff_module, "MAX_DIFF_LINES", 5)
    diff = unified_diff(
        _change("".join(f"{i}\n" for i in range(10)), "".join(f"{i}!\n" for i in range(10)))
    )
    assert (
        diff.endswith("\\ diff cut at 5 lines a side\n") and "+4!\n" in diff and "+5!\n" not in diff
    )


def test_normalized_equal() -> None:
    assert normalized_equal("a  b\n\tc ", " a b c") and normalized_equal(None, None)
    assert (
        not normalized_equal("a b", "ab")
        and not normalized_equal("", None)
        and not normalized_equal("a", "b")
    )


def test_numeric_diff_within_and_beyond_tolerance() -> None:
    diff = numeric_diff(
        "precision 0.85\nrecall 0.70\ncount 42",
        "precision 0.851\nrecall  0.75\ncount 42",
        Tolerance(relative=0.01),
    )
    assert diff.only_numbers and [(c.line, c.old, c.new, c.within) for c in diff.changes] == [
        (1, 0.85, 0.851, True),
        (2, 0.70, 0.75, False),
    ]
    assert not diff.all_within
    assert numeric_diff("a 0.70", "a 0.75", Tolerance(absolute=0.05)).all_within
    assert not numeric_diff("a 0.70", "a 0.76", Tolerance(absolute=0.05)).all_within
    assert numeric_diff("x 100", "x 101", Tolerance(relative=0.01)).all_within  # 1 ≤ 1% of 101


def test_numeric_diff_words_versions_and_identifiers_are_not_numbers() -> None:
    tolerance = Tolerance(relative=1.0)
    assert numeric_diff("score 0.85 good", "score 0.85 bad", tolerance) == NumericDiff(False, ())
    for old, new in (
        ("model v2", "model v3"),
        ("id abc123", "id abc124"),
        ("took 12ms", "took 13ms"),
        ("version 1.2.3", "version 1.2.4"),
        ("x_1 = 2", "x_2 = 2"),
    ):
        assert not numeric_diff(old, new, tolerance).only_numbers, (old, new)
    assert numeric_diff("v2 costs 3", "v2 costs 4", tolerance).changes[0].old_text == "3"


def test_numeric_diff_exponents_signs_and_formatting() -> None:
    diff = numeric_diff(
        "lr=-1.5e-3, bias -.5, gain +2E+2",
        "lr=-1.6e-3, bias -.5, gain +2.1E+2",
        Tolerance(relative=0.1),
    )
    assert [(c.old_text, c.new_text, c.old, c.new, c.within) for c in diff.changes] == [
        ("-1.5e-3", "-1.6e-3", -0.0015, -0.0016, True),
        ("+2E+2", "+2.1E+2", 200.0, 210.0, True),
    ]
    same_value = numeric_diff("p = 0.50", "p = 0.5", Tolerance())
    assert (
        same_value.all_within and same_value.changes[0].old == same_value.changes[0].new
    )  # rewritten, same value
    assert numeric_diff("a\n\n1\r\n2", "a\n\n1\r\n3", Tolerance()).changes[0].line == 4
    assert numeric_diff("same 1", "same   1", Tolerance()) == NumericDiff(True, ())


def test_numeric_diff_reads_a_number_with_thousands_separators_as_one_number() -> None:
    tolerance = Tolerance(relative=0.01)
    rows = numeric_diff("rows: 2,102,650\n", "rows: 2,103,100\n", tolerance)
    assert rows.all_within and [(c.old_text, c.new_text, c.old, c.new) for c in rows.changes] == [
        ("2,102,650", "2,103,100", 2102650.0, 2103100.0)
    ]
    european = numeric_diff("total: 1 234,5 €", "total: 1 236,0 €", tolerance)
    assert european.all_within and [(c.old, c.new) for c in european.changes] == [(1234.5, 1236.0)]
    typographic = numeric_diff("n = 1\u202f234\u202f567", "n = 1\u202f234\u202f600", tolerance)
    assert typographic.all_within and typographic.changes[0].old == 1234567.0
    assert numeric_diff("sum 1,234.5", "sum 1234.5", Tolerance()).all_within  # the same value
    assert not numeric_diff("rows: 2,102,650", "rows: 3,102,650", tolerance).all_within
    # a list is not one number: a comma before or after three digits, or three-digit columns
    listed = numeric_diff("ids 7,1,234,5", "ids 7,1,235,5", Tolerance(relative=0.5))
    assert [c.old_text for c in listed.changes] == ["234"]
    columns = numeric_diff("counts 120 340 560", "counts 120 340 900", tolerance)
    assert columns.only_numbers and not columns.all_within
    # a whitespace shuffle is still no number changed
    assert numeric_diff("a 1 234,5", "a 1\n234,5", Tolerance()) == NumericDiff(True, ())


def test_numeric_diff_huge_numbers_and_texts(monkeypatch) -> None:
    big = "9" * 5000
    (change,) = numeric_diff(f"n = {big}", f"n = {big[:-1]}8", Tolerance(relative=1.0)).changes
    assert change.old == float("inf") and not change.within and change.new_text.endswith("98")
    assert not Tolerance(absolute=1e308).within(1e308, float("inf"))
    monkeypatch.setattr(numeric_module, "MAX_NUMERIC_CHARS", 10)
    assert numeric_diff("a 1 b 2 c 3", "a 1 b 2 c 4", Tolerance(relative=1.0)) == NumericDiff(
        False, ()
    )


def test_tolerance_rejects_bad_values_and_absorbs_float_error() -> None:
    assert Tolerance(absolute=0.1).within(1.0, 1.1)  # 1.1 - 1.0 is 0.10000000000000009
    assert not Tolerance().within(1.0, 1.0000001) and Tolerance().within(2.0, 2.0)
    for bad in ({"relative": -0.1}, {"absolute": float("nan")}, {"absolute": float("inf")}):
        with pytest.raises(ChangeError, match="finite tolerances"):
            Tolerance(**bad)


def test_marked_diff_marks_only_lines_within_tolerance() -> None:
    change = _change(
        "title\nprecision 0.85\nrecall 0.70\nnote: fine\nlatency 120 ms\n",
        "title\nprecision 0.851\nrecall 0.75\nnote: bad\nlatency 121 ms\n",
    )
    diff = marked_diff(change, Tolerance(relative=0.01))
    marked = [line for line in diff.splitlines() if line.endswith(WITHIN_MARK)]
    assert marked == ["+precision 0.851" + WITHIN_MARK, "+latency 121 ms" + WITHIN_MARK]
    assert diff.replace(WITHIN_MARK, "") == unified_diff(change)
    uneven = _change("a 1\nb 2\nc\n", "a 1 b 2.01\nc\n")  # two lines became one: judged as a block
    assert "+a 1 b 2.01" + WITHIN_MARK in marked_diff(uneven, Tolerance(relative=0.01))
    assert marked_diff(_change("x", "x"), Tolerance()) == ""


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.characters(codec="utf-8"), min_size=1)
        .map(lambda s: "".join(s.split()))
        .filter(bool),
        max_size=8,
    ),
    st.data(),
)
def test_whitespace_shuffles_are_equal_and_texts_equal_themselves(
    words: list[str], data: st.DataObject
) -> None:
    spaces = st.text(alphabet=" \t\n\r\x0b\u00a0\u2003", min_size=1, max_size=3)
    text = " ".join(words)
    shuffled = data.draw(spaces) + "".join(w + data.draw(spaces) for w in words)
    assert normalized_equal(text, shuffled)
    assert numeric_diff(text, text, Tolerance()) == NumericDiff(True, ())
    assert numeric_diff(text, shuffled, Tolerance()) == NumericDiff(True, ())


# --------------------------------------------------------------------------- dispatch


def test_find_changes_dispatches_by_what_the_sources_are(store: Store, tmp_path: Path) -> None:
    expected, actual = _trees(tmp_path, {"a.md": "1"}, {"a.md": "2"})
    assert [c.source for c in find_changes(store, [str(expected), str(actual)])] == ["snapshots"]
    _run(store, "r1", [_item("a", "q", answer="x")])
    _run(store, "r2", [_item("a", "q", answer="y")])
    assert [c.source for c in find_changes(store, ["r1", "r2"])] == ["runs"]
    rows = shutil.copy(FIXTURES / "rows.csv", tmp_path / "rows.csv")
    assert {c.source for c in find_changes(store, [str(rows)])} == {"file"}


@pytest.mark.parametrize(
    ("sources", "what"),
    [
        ([], "0 sources given"),
        (["a", "b", "c"], "3 sources given"),
        (["nothing", "here"], "'nothing' and 'here' are neither directories nor runs"),
        (["ghost"], "'ghost' is neither a file nor a run"),
        (["r1"], "one run ('r1') is half of a comparison"),
    ],
)
def test_find_changes_errors_say_what_is_accepted(
    store: Store, sources: list[str], what: str
) -> None:
    _run(store, "r1", [_item("a", "q", answer="x")])
    with pytest.raises(ChangeError) as info:
        find_changes(store, sources)
    assert info.value.what == what
    assert (
        "two directories" in (info.value.fix or "")
        and "two run ids" in (info.value.fix or "")
        and ".jsonl/.csv file" in (info.value.fix or "")
    )


def test_find_changes_specific_errors(store: Store, tmp_path: Path) -> None:
    folder = _tree(tmp_path / "books", {"a.md": "a"})
    with pytest.raises(ChangeError, match="one directory is half of a comparison"):
        find_changes(store, [str(folder)])
    with pytest.raises(ChangeError, match="the actual directory not found"):
        find_changes(store, [str(folder), str(folder / ".out")])
    _run(store, "r1", [_item("a", "q", answer="x")])
    with pytest.raises(RunNotFound):
        find_changes(store, ["r1", "r9"])
    with pytest.raises(ChangeError, match="file not found"):
        find_changes(store, [str(tmp_path / "changes.jsonl")])
