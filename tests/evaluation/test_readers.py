"""Hostile input to every reader of a file a user hands hilbot: imports, YAML test cases, query
sets and ``hilbot.toml``.

Whatever the bytes, each reader ends in success or in one :class:`HilbotError` naming what, where
(``file:line`` when there is a line) and how to fix it; from the CLI that is one line on stderr,
exit 2, no traceback, no escape sequence, and nothing written under the data directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path

import pytest

from evaluation import ConfigError, HilbotError, ImportFailed, Store, load_config
from evaluation.cases import CaseError, load_cases
from evaluation.imports import import_outputs
from evaluation.queries import QueryItem, QuerySet, QuerySetError, QuerySets
from tests.auxil.cli import BUG, invoke

DEEP = 100_000
"""Nesting far past any parser's recursion limit."""


def _one_line(r) -> str:
    """The single error line of a failed command (and checks it is one)."""
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert r.stderr.startswith("error: ")
    assert "Traceback" not in r.stderr and BUG not in r.stderr
    assert "\x1b" not in r.stderr and "\x00" not in r.stderr
    return lines[0]


def _hilbot(tmp_path: Path, *args: str):
    return invoke(
        *args,
        env={"HILBOT_DATA_DIR": str(tmp_path / "results"), "HILBOT_CONFIG": None},
        cwd=tmp_path,
    )


def _nothing_written(tmp_path: Path) -> bool:
    results = tmp_path / "results"
    return not results.exists() or not any(p.is_file() for p in results.rglob("*"))


def _says(text: str, prefix: str, what: str) -> None:
    """``text`` starts with ``prefix`` (the file and line) and says ``what`` after it."""
    assert text.startswith(prefix), (prefix, text)
    assert what in text[len(prefix) :], (what, text)


def _message(exc: HilbotError) -> str:
    text = str(exc)
    assert "\n" not in text and "\r" not in text and "\x1b" not in text, text
    assert exc.fix, text
    return text


@contextlib.contextmanager
def _fifo(path: Path, content: bytes = b""):
    """A named pipe at ``path`` that feeds ``content`` to whoever opens it, and never blocks the
    test."""
    os.mkfifo(path)

    def feed() -> None:
        with open(path, "wb") as handle:
            handle.write(content)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        yield path
    finally:
        fd = os.open(
            path, os.O_RDONLY | os.O_NONBLOCK
        )  # lets the writer finish if nobody read the pipe
        writer.join(5)
        os.close(fd)


# =========================================================================== imports: whole files


def _written(
    path: Path, table: dict[str, tuple[bytes, str, str]], name: str
) -> tuple[Path, str, str]:
    """Write the hostile file ``table[name]`` at ``path``; returns the path, where and what the
    error must say."""
    data, where, what = table[name]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path, where, what


def _deep_json(prefix: bytes, suffix: bytes) -> bytes:
    return prefix + b"[" * DEEP + b"]" * DEEP + suffix


FATAL_FILES = {
    "deep-array.json": (_deep_json(b'[\n{"query": ', b"}\n]\n"), ":2", "nested more than"),
    "deep-object.json": (
        _deep_json(b'{"rows": [\n{"query": ', b"}\n]}\n"),
        ":2",
        "nested more than",
    ),
    "deep-top.json": (b"[" * DEEP + b"]" * DEEP, ":1", "nested more than"),
    "not-utf8.json": (b'[\n{"query": "caf\xe9"}\n]\n', ":2", "UTF-8"),
    "syntax.json": (b'[\n{"query": "a"},\n{"query": \n', ":4", "invalid JSON"),
    "scalar.json": (b"5", ":1", "array of rows"),
    "no-list.json": (b'{"a": 1}', ":1", "array of rows"),
    "empty.json": (b"", "", "invalid JSON"),
    "junk.json": (bytes(range(256)) * 4, "", ""),
    "dup-top-key.json": (
        b'{\n"rows": [{"query": "a"}],\n"rows": [{"query": "b"}]\n}',
        ":3",
        "duplicate key 'rows'",
    ),
    "nan-outside-rows.json": (b'{\n"rows": [{"query": "a"}],\n"x": NaN\n}', ":3", "NaN"),
    "nan-and-syntax.json": (
        b'[{"query": "a", "x": NaN},\n {"query": "b"} {"query": "c"}]',
        ":2",
        "invalid JSON",
    ),
    "deep.jsonl": (_deep_json(b'{"query": ', b"}\n"), ":1", "nested more than"),
    "junk.jsonl": (bytes(range(256)) * 4, ":1", ""),
    "nul.csv": (b"query,answer\nq,a\x00b\x00\n", "", ""),
    "not-utf8.csv": (b"query,answer\nq,a\nr,caf\xe9\n", ":3", "UTF-8"),
    "dup-header.csv": (b"query,answer,query\nq,a,r\n", ":1", "duplicate column 'query'"),
    "empty.csv": (b"", "", "no rows"),
}


@pytest.mark.parametrize("name", list(FATAL_FILES))
def test_an_unreadable_import_file_is_one_line_naming_file_and_line(tmp_path: Path, name: str):
    path, where, what = _written(tmp_path / name, FATAL_FILES, name)
    r = _hilbot(tmp_path, "import", str(path), "--run-id", "x")
    if r.exit_code == 0:  # junk that happens to hold a row is fine, as long as it is stored safely
        assert name.startswith(("junk", "nul")), r.stdout
        assert Store(tmp_path / "results").load_run("x").items
        return
    _says(_one_line(r), f"error: {path}{where}", what)
    assert _nothing_written(tmp_path)


def test_a_directory_a_fifo_and_a_missing_file_are_one_line(tmp_path: Path):
    folder = tmp_path / "outputs.jsonl"
    folder.mkdir()
    assert "is a directory" in _one_line(_hilbot(tmp_path, "import", str(folder), "--run-id", "x"))
    with _fifo(tmp_path / "pipe.jsonl", b'{"query": "from a pipe"}\n') as pipe:
        assert "not a regular file" in _one_line(
            _hilbot(tmp_path, "import", str(pipe), "--run-id", "x")
        )
    hostile = tmp_path / "a\nb\x1b[2J.jsonl"
    line = _one_line(_hilbot(tmp_path, "import", str(hostile), "--run-id", "x"))
    assert "file not found" in line and "␛" in line
    assert _nothing_written(tmp_path)


def test_bom_and_crlf_files_import(tmp_path: Path):
    files = {
        "bom.jsonl": b'\xef\xbb\xbf{"query": "a"}\r\n{"query": "b"}\r\n',
        "bom.json": b'\xef\xbb\xbf[\r\n{"query": "a"},\r\n{"query": "b"}\r\n]\r\n',
        "bom.csv": b"\xef\xbb\xbfquery,answer\r\na,x\r\nb,y\r\n",
    }
    store = Store(tmp_path / "results")
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        report = import_outputs(store, tmp_path / name, run_id=name.replace(".", "-"))
        assert report.imported == 2
        assert [i.query.query for i in store.load_run(report.run_id).items] == ["a", "b"]


# =========================================================================== imports: bad rows


def _cell_json(value: str) -> bytes:
    return json.dumps(value).encode()


BAD_ROWS = {
    "deep": (_deep_json(b'{"query": ', b"}"), "nested more than"),
    "big-int": (b'{"query": "q", "x": ' + b"1" * 5000 + b"}", "4,300 digits"),
    "big-int-score": (
        b'{"query": "q", "scores": {"overall": ' + b"1" * 4000 + b"}}",
        "scores.overall",
    ),
    "lone-surrogate": (b'{"query": "\\ud800"}', "surrogate"),
    "duplicate-key": (b'{"query": "a", "query": "b"}', "duplicate key 'query'"),
    "nan-feature": (b'{"query": "a", "x": NaN}', "NaN is not a"),
    "infinity-score": (b'{"query": "a", "scores": {"overall": Infinity}}', "Infinity is not a"),
    "minus-infinity-confidence": (b'{"query": "a", "confidence": -Infinity}', "-Infinity is not a"),
    "overflowing-float": (b'{"query": "a", "x": 1e400}', "not a finite number"),
    "overflowing-latency": (b'{"query": "a", "latency_ms": 1e400}', "not a finite number"),
    "not-utf8": (b'{"query": "caf\xe9"}', "UTF-8"),
    "nul-byte": (b'{"query": "a\x00"}', "invalid JSON"),
    "list-row": (b"[1, 2]", "JSON object"),
    "number-row": (b"5", "JSON object"),
    "string-row": (b'"a query"', "JSON object"),
    "null-row": (b"null", "JSON object"),
    "results-number": (b'{"query": "a", "results": 5}', "results"),
    "scores-string": (b'{"query": "a", "scores": "x"}', "scores"),
    "scores-list": (b'{"query": "a", "scores": [1]}', "scores"),
    "score-bool": (b'{"query": "a", "scores": {"overall": true}}', "scores.overall"),
    "score-string-nan": (b'{"query": "a", "scores": {"overall": "nan"}}', "not a number"),
    "confidence-string-nan": (b'{"query": "a", "confidence": "nan"}', "not a number"),
    "confidence-bool": (b'{"query": "a", "confidence": true}', "confidence"),
    "query-object": (b'{"query": {"a": 1}}', "no query"),
    "query-bool": (b'{"query": true}', "no query"),
    "query-list": (b'{"query": ["a"]}', "no query"),
    "id-list": (b'{"query": "a", "id": [1]}', "id"),
    "id-object": (b'{"query": "a", "id": {"x": 1}}', "id"),
    "answer-object": (b'{"query": "a", "answer": {"x": 1}}', "answer"),
    "deep-cell": (
        b'{"query": "a", "results": ' + _cell_json("[" * DEEP) + b"}",
        "nested more than",
    ),
    "nan-cell": (
        b'{"query": "a", "scores": ' + _cell_json('{"overall": NaN}') + b"}",
        "NaN is not a",
    ),
    "duplicate-key-cell": (
        b'{"query": "a", "features": ' + _cell_json('{"k": 1, "k": 2}') + b"}",
        "duplicate key 'k'",
    ),
    "big-int-cell": (
        b'{"query": "a", "features": ' + _cell_json('{"k": ' + "1" * 5000 + "}") + b"}",
        "4,300 digits",
    ),
}


@pytest.mark.parametrize("name", list(BAD_ROWS))
def test_a_hostile_jsonl_row_is_a_bad_row_naming_file_line(tmp_path: Path, name: str):
    bad, what = BAD_ROWS[name]
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(
        b'{"id": "good", "query": "fine"}\n' + bad + b'\n{"id": "last", "query": "also fine"}\n'
    )
    store = Store(tmp_path / "results")
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="x")
    _says(_message(info.value), f"{path}:2: ", what)
    assert _nothing_written(tmp_path)

    report = import_outputs(store, path, run_id="x", skip_bad=True)
    assert (report.imported, report.skipped) == (2, 1)
    _says(report.errors[0], f"{path}:2: ", what)
    assert [i.id for i in store.load_run("x").items] == ["good", "last"]


@pytest.mark.parametrize(
    "name",
    [
        "nan-feature",
        "duplicate-key",
        "big-int",
        "lone-surrogate",
        "overflowing-float",
        "list-row",
        "deep",
    ],
)
def test_a_hostile_row_of_a_json_array_is_a_bad_row_naming_its_line(tmp_path: Path, name: str):
    bad, what = BAD_ROWS[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(
        b'{"rows": [\n  {"id": "good", "query": "fine"},\n  '
        + bad
        + b',\n  {"id": "last", "query": "ok"}\n]}\n'
    )
    store = Store(tmp_path / "results")
    with pytest.raises(ImportFailed) as info:
        import_outputs(store, path, run_id="x")
    _says(_message(info.value), f"{path}:3: ", what)
    if name != "deep":  # nesting is refused for the whole document, before any row is read
        report = import_outputs(store, path, run_id="x", skip_bad=True)
        assert (report.imported, report.skipped) == (2, 1)
        assert report.errors[0].startswith(f"{path}:3: ")


def test_cli_skip_bad_lists_nan_rows_and_imports_the_rest(tmp_path: Path):
    path = tmp_path / "nan.jsonl"
    path.write_bytes(
        b'{"query": "a", "x": NaN}\n{"query": "b"}\n{"query": "c", "scores": {"overall": '
        b"Infinity}}\n"
    )
    r = _hilbot(tmp_path, "import", str(path), "--run-id", "nan", "--skip-bad")
    assert r.exit_code == 0, r.stderr
    assert "imported 1 items into run nan (2 bad rows skipped)" in r.stdout
    assert f"skipped: {path}:1: " in r.stderr and f"skipped: {path}:3: " in r.stderr
    assert "NaN is not a" in r.stderr


def test_control_characters_in_a_bad_row_never_reach_the_terminal(tmp_path: Path):
    path = tmp_path / "esc.jsonl"
    path.write_text(
        '{"query": "a", "id": "x"}\n{"query": "b", "id": "x", "scores": {"\\u001b[2J\\u202e": '
        '0.5}}\n{"query": "c", "confidence": "\\u001b]0;pwned\\u0007"}\n'
    )
    r = _hilbot(tmp_path, "import", str(path), "--run-id", "esc", "--skip-bad")
    assert r.exit_code == 0, r.stderr
    assert "\x1b" not in r.stderr and "\u202e" not in r.stderr and "\x07" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 2


# =========================================================================== imports: CSV


def test_a_csv_cell_longer_than_the_standard_limit_imports(tmp_path: Path):
    answer = "long answer " * 20_000  # 240,000 characters, past csv's default 131,072
    path = tmp_path / "long.csv"
    path.write_text(f"query,answer\nq,{answer}\n", "utf-8")
    store = Store(tmp_path / "results")
    import_outputs(store, path, run_id="long")
    (item,) = store.load_run("long").items
    assert item.answer == answer


def test_a_csv_cell_past_the_limit_is_one_line_naming_file_and_line(tmp_path: Path):
    from evaluation.imports import CSV_FIELD_LIMIT

    path = tmp_path / "huge.csv"
    path.write_bytes(b"query,answer\nq,short\nr," + b"x" * (CSV_FIELD_LIMIT + 1) + b"\n")
    line = _one_line(_hilbot(tmp_path, "import", str(path), "--run-id", "huge"))
    _says(line, f"error: {path}:3: ", "longer than")
    assert _nothing_written(tmp_path)


def test_csv_cells_that_overflow_or_are_not_numbers(tmp_path: Path):
    path = tmp_path / "numbers.csv"
    path.write_text(
        "query,score,size,big\na,0.5,1e400," + "9" * 5000 + "\nb,nan,1,2\nc,inf,1,2\n", "utf-8"
    )
    store = Store(tmp_path / "results")
    report = import_outputs(store, path, run_id="numbers", skip_bad=True)
    assert (report.imported, report.skipped) == (1, 2)
    assert all("not a number" in e for e in report.errors), report.errors
    (item,) = store.load_run("numbers").items
    assert item.features == {"size": "1e400", "big": "9" * 5000}  # kept as written, not inf


# =========================================================================== imports: arguments


@pytest.mark.parametrize(
    "value, what",
    [
        ("bogus", "unknown dimension 'bogus'"),
        (",", "empty dimension name"),
        ("overall,", "empty dimension name"),
        ("", "empty dimension name"),
        ("overall,overall", "'overall' is listed twice"),
        ("\x1b[31mred", "unknown dimension"),
    ],
)
def test_import_dimensions_must_be_defined_in_the_config(tmp_path: Path, value: str, what: str):
    path = tmp_path / "ok.jsonl"
    path.write_text('{"query": "a"}\n')
    line = _one_line(_hilbot(tmp_path, "import", str(path), "--run-id", "x", "--dimensions", value))
    assert what in line, line
    if "unknown" in what:
        assert "overall" in line and "[dimensions." in line and "hilbot.toml" in line
    if value == "bogus":
        assert "[dimensions.bogus]" in line
    assert _nothing_written(tmp_path)


def test_import_dimensions_from_the_config_are_accepted(tmp_path: Path):
    path = tmp_path / "ok.jsonl"
    path.write_text('{"query": "a"}\n')
    (tmp_path / "hilbot.toml").write_text('[dimensions.tone]\nscale = "quality"\n')
    r = _hilbot(tmp_path, "import", str(path), "--run-id", "x", "--dimensions", "tone, overall")
    assert r.exit_code == 0, r.stderr
    assert Store(tmp_path / "results").load_run("x").header.dimensions == ["tone", "overall"]


@pytest.mark.parametrize("name", ["", "  ", "core\x1b[2J", "a\nb", "x" * 201])
def test_an_import_set_name_must_be_printable(tmp_path: Path, name: str):
    path = tmp_path / "ok.jsonl"
    path.write_text('{"query": "a"}\n')
    assert "invalid set name" in _one_line(
        _hilbot(tmp_path, "import", str(path), "--run-id", "x", "--set", name)
    )
    assert _nothing_written(tmp_path)


def test_an_empty_run_id_is_an_invalid_run_id(tmp_path: Path):
    path = tmp_path / "ok.jsonl"
    path.write_text('{"query": "a"}\n')
    assert "invalid run id ''" in _one_line(_hilbot(tmp_path, "import", str(path), "--run-id", ""))
    assert _nothing_written(tmp_path)


# =========================================================================== YAML test cases


def _billion_laughs() -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    return "requirements:\n  - " + "\n    ".join(lines) + "\ntest_id: lol\nquery: q\n"


def _deep_block(levels: int) -> str:
    return (
        "test_id: a\nquery: q\nrequirements:\n- "
        + "".join(" " * i + f"k{i}:\n" for i in range(1, levels))
        + " " * levels
        + "x\n"
    )


BAD_YAML = {
    "not-utf8": (b"test_id: a\nquery: caf\xe9\n", ":2", "UTF-8"),
    "nul-byte": (b"test_id: a\nquery: q\x00\n", ":2", "U+0000"),
    "escape-byte": (b"test_id: a\nquery: q\x1b[2J\n", ":2", "U+001B"),
    "deep-flow": (
        b"test_id: a\nquery: q\nrequirements: " + b"[" * 5000 + b"]" * 5000 + b"\n",
        ":3",
        "nested more than",
    ),
    "deep-block": (_deep_block(1000).encode(), "", "nested more than"),
    "billion-laughs": (_billion_laughs().encode(), ":", "aliases"),
    "self-alias": (b"test_id: a\nquery: q\nrequirements: &r [*r]\n", ":3", "alias"),
    "undefined-alias": (b"test_id: a\nquery: *nope\n", ":2", "alias"),
    "big-int": (
        b"test_id: a\nquery: q\nmetric_weights: {answer_correctness: " + b"1" * 5000 + b"}\n",
        ":3",
        "4,300 digits",
    ),
    "python-tag": (
        b"test_id: !!python/object/apply:os.system [echo pwned]\nquery: q\n",
        ":1",
        "tag",
    ),
    "custom-tag": (b"test_id: a\nquery: !shell q\n", ":2", "tag"),
    "scalar-document": (b"just a string\n", ":1", "mapping"),
    "lone-surrogate": (b'test_id: a\nquery: "\\ud800"\n', ":2", "surrogate"),
    "lone-surrogate-key": (b'test_id: a\nquery: q\n"\\udfff": 1\n', ":3", "surrogate"),
    "duplicate-key": (b"test_id: a\nquery: q\nquery: r\n", ":3", "duplicate key 'query'"),
    "duplicate-nested-key": (
        b"test_id: a\nquery: q\nmetric_weights:\n  faithfulness: 1\n  faithfulness: 2\n",
        ":5",
        "duplicate key 'faithfulness'",
    ),
    "nan-weight": (
        b"test_id: a\nquery: q\nmetric_weights: {answer_correctness: .nan}\n",
        ":3",
        "finite",
    ),
    "inf-weight": (
        b"test_id: a\nquery: q\nmetric_weights: {answer_correctness: .inf}\n",
        ":3",
        "finite",
    ),
    "bad-date": (b"test_id: 2024-13-45\nquery: q\n", ":1", ""),
    "tab-indent": (b"test_id: a\nquery:\n\t- q\n", ":3", "YAML"),
    "empty": (b"", "", "no test cases"),
    "only-comments": (b"# nothing here\n---\n", "", "no test cases"),
}


@pytest.mark.parametrize("name", list(BAD_YAML))
def test_hostile_yaml_is_one_case_error_naming_file_line(tmp_path: Path, name: str):
    path, where, what = _written(tmp_path / f"{name}.yaml", BAD_YAML, name)
    with pytest.raises(CaseError) as info:
        load_cases(path)
    _says(_message(info.value), f"{path}{where}", what)


@pytest.mark.parametrize("name", ["not-utf8", "deep-flow", "billion-laughs", "big-int", "nul-byte"])
def test_hostile_yaml_from_the_cli_is_one_line_and_runs_nothing(tmp_path: Path, name: str):
    folder = tmp_path / "cases"
    _, where, what = _written(folder / f"{name}.yaml", BAD_YAML, name)
    (folder / "a-good.yaml").write_text("test_id: good\nquery: fine?\n")
    outputs = tmp_path / "out.jsonl"
    outputs.write_text('{"id": "good", "answer": "x"}\n')
    line = _one_line(
        _hilbot(tmp_path, "run", "--cases", str(folder), "--outputs", str(outputs), "--silent")
    )
    _says(line, f"error: {folder / name}.yaml{where}", what)
    assert _nothing_written(tmp_path)


def test_yaml_with_bom_crlf_and_harmless_aliases_loads(tmp_path: Path):
    path = tmp_path / "ok.yaml"
    path.write_bytes(
        b"\xef\xbb\xbftest_id: a\r\nquery: &q shared question\r\nintent: *q\r\n---\r\n"
        b"test_id: b\r\nquery: q\r\n"
    )
    cases = load_cases(path)
    assert [(c.id, c.query.query, c.query.intent) for c in cases] == [
        ("a", "shared question", "shared question"),
        ("b", "q", None),
    ]


def test_a_cases_path_that_is_a_fifo_is_refused_and_special_files_in_a_directory_are_skipped(
    tmp_path: Path,
):
    with _fifo(tmp_path / "pipe.yaml", b"test_id: a\nquery: q\n") as pipe:
        with pytest.raises(CaseError) as info:
            load_cases(pipe)
        assert "not a regular file" in _message(info.value)
    folder = tmp_path / "cases"
    (folder / "looks-like.yaml").mkdir(parents=True)
    (folder / "real.yaml").write_text("test_id: a\nquery: q\n")
    with _fifo(folder / "pipe.yaml", b"test_id: b\nquery: q\n"):
        assert [c.id for c in load_cases(folder)] == ["a"]


def test_a_query_set_with_no_queries_gives_no_cases(tmp_path: Path):
    from evaluation.cases import cases_from_sets

    (tmp_path / "core.json").write_text('{"queries": []}')
    with pytest.raises(CaseError) as info:
        cases_from_sets(QuerySets(tmp_path).resolve("core"))
    assert "no queries" in _message(info.value)


# =========================================================================== query sets


def _set_text(*queries: bytes, top: bytes = b'"name": "core"') -> bytes:
    return b"{\n  " + top + b',\n  "queries": [\n    ' + b",\n    ".join(queries) + b"\n  ]\n}\n"


GOOD_QUERY = b'{"id": "core-01", "text": "fine"}'
BAD_SETS = {
    "not-utf8": (_set_text(GOOD_QUERY, b'{"id": "core-02", "text": "caf\xe9"}'), ":5", "UTF-8"),
    "deep": (
        _set_text(
            GOOD_QUERY, b'{"id": "core-02", "text": "q", "x": ' + b"[" * DEEP + b"]" * DEEP + b"}"
        ),
        ":5",
        "nested more than",
    ),
    "big-int": (
        _set_text(GOOD_QUERY, b'{"id": "core-02", "text": "q", "x": ' + b"1" * 5000 + b"}"),
        ":5",
        "4,300 digits",
    ),
    "duplicate-key": (
        _set_text(GOOD_QUERY, b'{"id": "core-02", "text": "q", "text": "r"}'),
        ":5",
        "duplicate key 'text'",
    ),
    "duplicate-top-key": (
        _set_text(GOOD_QUERY, top=b'"queries": [],\n  "name": "core"'),
        ":4",
        "duplicate key 'queries'",
    ),
    "nan": (
        _set_text(GOOD_QUERY, b'{"id": "core-02", "text": "q", "x": NaN}'),
        ":5",
        "NaN is not a",
    ),
    "overflowing-float": (
        _set_text(GOOD_QUERY, b'{"id": "core-02", "text": "q", "x": 1e400}'),
        ":5",
        "not a finite number",
    ),
    "lone-surrogate": (
        _set_text(GOOD_QUERY, b'{"id": "core-02", "text": "\\ud800"}'),
        ":5",
        "surrogate",
    ),
    "id-number": (_set_text(GOOD_QUERY, b'{"id": 2, "text": "q"}'), ":5", "queries[1].id"),
    "text-list": (
        _set_text(GOOD_QUERY, b'{"id": "core-02", "text": ["q"]}'),
        ":5",
        "queries[1].text",
    ),
    "expected-string": (
        _set_text(GOOD_QUERY, b'{"id": "core-02", "text": "q", "expected": "a.md"}'),
        ":5",
        "queries[1].expected",
    ),
    "number-query": (_set_text(GOOD_QUERY, b"5"), ":5", "queries[1]"),
    "version-number": (_set_text(GOOD_QUERY, top=b'"version": 1'), ":2", "version"),
    "top-array": (b"[1, 2]", ":1", "not a query set"),
    "empty": (b"", ":1", "not valid JSON"),
    "nul": (b'{"queries": [\x00]}', ":1", "not valid JSON"),
}


@pytest.mark.parametrize("name", list(BAD_SETS))
def test_a_hostile_query_set_is_one_error_naming_file_line(tmp_path: Path, name: str):
    path, where, what = _written(tmp_path / "core.json", BAD_SETS, name)
    with pytest.raises(QuerySetError) as info:
        QuerySets(tmp_path).load("core")
    _says(_message(info.value), f"{path}{where}: ", what)
    assert path.read_bytes() == BAD_SETS[name][0]


@pytest.mark.parametrize("name", ["not-utf8", "deep", "big-int", "duplicate-key"])
def test_a_hostile_query_set_from_the_cli_is_one_line(tmp_path: Path, name: str):
    _, where, what = _written(tmp_path / "q" / "core.json", BAD_SETS, name)
    for args in (
        ("sets", "list", "--dir", "q"),
        ("run", "--dir", "q", "--outputs", "none.jsonl", "--silent"),
    ):
        line = _one_line(_hilbot(tmp_path, *args))
        _says(line, f"error: q/core.json{where}: ", what)
    assert _nothing_written(tmp_path)


def test_a_query_set_with_a_bom_loads(tmp_path: Path):
    (tmp_path / "core.json").write_bytes(b"\xef\xbb\xbf" + _set_text(GOOD_QUERY))
    assert [q.id for q in QuerySets(tmp_path).load("core").queries] == ["core-01"]


def test_next_id_after_an_id_with_thousands_of_digits(tmp_path: Path):
    (tmp_path / "core.json").write_bytes(
        _set_text(b'{"id": "core-' + b"9" * 5000 + b'", "text": "q"}')
    )
    qs = QuerySets(tmp_path).load("core")
    new = qs.next_id()
    assert new not in {q.id for q in qs.queries} and new.startswith("core-")


def test_saving_a_query_that_holds_a_lone_surrogate_is_an_error_and_keeps_the_file(tmp_path: Path):
    sets = QuerySets(tmp_path)
    path = tmp_path / "core.json"
    path.write_bytes(_set_text(GOOD_QUERY))
    qs = sets.load("core")
    qs.queries.append(
        QueryItem(id="core-02", text="fine", note="broken \ud800 text")
    )  # extra fields are kept as given
    with pytest.raises(QuerySetError) as info:
        sets.save(qs, Store(tmp_path / "results"))
    assert "surrogate" in _message(info.value)
    assert path.read_bytes() == _set_text(GOOD_QUERY)
    assert isinstance(qs, QuerySet)


# =========================================================================== hilbot.toml


def _deep_toml(levels: int) -> bytes:
    return b"x = " + b"[" * levels + b"]" * levels + b"\n"


BAD_CONFIGS = {
    "not-utf8": (b"[review]\nk = 1\n# caf\xe9\n", ":3", "UTF-8"),
    "deep-array": (b"[review]\nk = 1\n" + _deep_toml(5000), "", "nested"),
    "deep-inline-table": (b"x = " + b"{a = " * 3000 + b"1" + b"}" * 3000 + b"\n", "", "nested"),
    "big-int": (b"[review]\nk = " + b"1" * 5000 + b"\n", ":2", "4,300 digits"),
    "nan-weight": (b"[judge.metric_weights]\nanswer_correctness = nan\n", ":2", "finite"),
    "inf-timeout": (b"[llm]\ntimeout_s = inf\n", ":2", "finite"),
    "inf-price": (b"[llm.prices.m]\ninput = inf\noutput = 1\n", ":2", "finite"),
    "nul-data-dir": (b'data_dir = "results\\u0000x"\n', ":1", "NUL"),
    "nul-queries-dir": (b'[queries]\ndir = "q\\u0000"\n', ":2", "NUL"),
    "escape-in-key": (b'"\\u001b]0;pwned\\u0007\\n" = 1\n', "", "unknown key"),
    "syntax": (b"[review]\nk = 1\n[review\n", ":3", "not valid TOML"),
    "binary": (bytes(range(256)), "", ""),
}


@pytest.mark.parametrize("name", list(BAD_CONFIGS))
def test_a_hostile_config_is_one_config_error(tmp_path: Path, name: str):
    path, where, what = _written(tmp_path / "hilbot.toml", BAD_CONFIGS, name)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    _says(_message(info.value), f"{path}{where}", what)


@pytest.mark.parametrize("name", ["not-utf8", "deep-array", "big-int", "escape-in-key", "binary"])
def test_a_hostile_config_from_the_cli_is_one_line(tmp_path: Path, name: str):
    _, where, what = _written(tmp_path / "my.toml", BAD_CONFIGS, name)
    line = _one_line(_hilbot(tmp_path, "--config", "my.toml", "review", "--list"))
    _says(line, f"error: my.toml{where}", what)


def test_a_config_path_that_is_a_directory_or_a_fifo_is_one_line(tmp_path: Path):
    (tmp_path / "results").mkdir()
    assert "is a directory" in _one_line(
        _hilbot(tmp_path, "--config", "results", "review", "--list")
    )
    (tmp_path / "results").rmdir()
    with _fifo(tmp_path / "pipe.toml", b"[review]\nk = 2\n") as pipe:
        assert "not a regular file" in _one_line(
            _hilbot(tmp_path, "--config", str(pipe), "review", "--list")
        )


def test_a_config_with_a_bom_loads(tmp_path: Path):
    path = tmp_path / "hilbot.toml"
    path.write_bytes(b"\xef\xbb\xbf[review]\r\nk = 3\r\n")
    assert load_config(path).review.k == 3


# =========================================================================== paths


@pytest.mark.parametrize(
    "args",
    [
        ("import", "{long}.jsonl", "--run-id", "x"),
        ("run", "--cases", "{long}", "--outputs", "out.jsonl", "--silent"),
        ("sets", "list", "--dir", "{long}"),
        ("run", "--dir", "{long}", "--outputs", "out.jsonl", "--silent"),
        ("--config", "{long}.toml", "review", "--list"),
    ],
    ids=["import", "cases", "sets-dir", "run-dir", "config"],
)
def test_a_path_the_file_system_refuses_is_one_line(tmp_path: Path, args: tuple[str, ...]):
    long = "a" * 300  # past the 255 bytes a file name may have
    line = _one_line(_hilbot(tmp_path, *(arg.format(long=long) for arg in args)))
    assert "name too long" in line.lower(), line
    assert _nothing_written(tmp_path)
