"""Query sets as a library: listing, ``--set`` specs, validation with file:line, saving, the LLM
batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.config import LLMSettings
from evaluation.llm import LLM
from evaluation.queries import (
    QueryItem,
    QuerySet,
    QuerySetError,
    QuerySets,
    propose_queries,
    query_starts,
)
from tests.fakes.anthropic_api import tool


def query(n: int, prefix: str = "core", **extra) -> dict:
    return {
        "id": f"{prefix}-{n:02d}",
        "text": f"{prefix} query {n}",
        "category": "routing",
        "intent": f"find {n}",
        **extra,
    }


def write_set(directory: Path, set_name: str, queries: list, /, **top) -> Path:
    """A set file in the fixtures' layout, written by hand (not by the code under test)."""
    path = directory / f"{set_name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    head = "".join(
        f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},\n" for k, v in top.items()
    )
    rows = ",\n".join(f"    {json.dumps(q, ensure_ascii=False)}" for q in queries)
    path.write_text("{\n" + head + '  "queries": [\n' + rows + "\n  ]\n}\n", "utf-8")
    return path


@pytest.fixture
def qdir(tmp_path: Path) -> Path:
    directory = tmp_path / "queries"
    write_set(
        directory,
        "core",
        [query(n) for n in range(1, 16)],
        name="core",
        version="1.0.0",
        description="Core.",
    )
    write_set(
        directory,
        "relay-focus",
        [query(n, "relay") for n in range(1, 9)],
        name="relay-focus",
        version="1.0.0",
    )
    for day, size in (("2026-12-17", 12), ("2026-11-02", 3)):
        write_set(
            directory,
            f"generated/{day}",
            [query(n, f"gen-{day}") for n in range(1, size + 1)],
            name=f"generated/{day}",
            source="ai-generated",
            generated_at=f"{day}T10:00:00Z",
            seeded_from="core",
        )
    return directory


# --------------------------------------------------------------------------- listing and specs


def test_listing_shows_name_count_and_origin(qdir):
    assert QuerySets(qdir).listing() == [
        "Available query sets:",
        "  core         15 queries  (curated, v1.0.0)",
        "  relay-focus   8 queries  (curated, v1.0.0)",
        "  generated/2026-11-02   3 queries  (ai-generated)",
        "  generated/2026-12-17  12 queries  (ai-generated)",
    ]


def test_listing_of_an_empty_or_missing_directory(tmp_path):
    assert QuerySets(tmp_path / "nowhere").listing() == [
        "Available query sets:",
        f"  (none in {tmp_path / 'nowhere'})",
    ]


def test_names_curated_first_then_generated(qdir):
    assert QuerySets(qdir).names() == [
        "core",
        "relay-focus",
        "generated/2026-11-02",
        "generated/2026-12-17",
    ]


@pytest.mark.parametrize(
    "spec, names",
    [
        ("core", ["core"]),
        ("relay-focus", ["relay-focus"]),
        ("all", ["core", "relay-focus"]),
        ("generated/*", ["generated/2026-11-02", "generated/2026-12-17"]),
        ("generated/2026-12-17", ["generated/2026-12-17"]),
    ],
)
def test_resolve_specs(qdir, spec, names):
    sets = QuerySets(qdir).resolve(spec)
    assert [qs.name for qs in sets] == names
    assert all(isinstance(qs, QuerySet) and qs.queries for qs in sets)


def test_resolve_defaults_to_core(qdir):
    [core] = QuerySets(qdir).resolve()
    assert (core.name, core.version, core.description, core.source, len(core.queries)) == (
        "core",
        "1.0.0",
        "Core.",
        "curated",
        15,
    )
    assert core.path == qdir / "core.json"


def test_generated_set_fields(qdir):
    gen = QuerySets(qdir).load("generated/2026-12-17")
    assert (
        gen.source == "ai-generated" and gen.version is None and gen.fields["seeded_from"] == "core"
    )


@pytest.mark.parametrize("name", ["nope", "../queries/core", "generated", "generated/2030-01-01"])
def test_unknown_set_lists_the_known_ones(qdir, name):
    with pytest.raises(QuerySetError) as info:
        QuerySets(qdir).resolve(name)
    line = info.value.one_line()
    assert f"unknown query set {name!r}" in line and "\n" not in line
    assert "core, relay-focus, generated/2026-11-02, generated/2026-12-17, all, generated/*" in line


def test_no_generated_sets_says_how_to_make_one(tmp_path):
    write_set(tmp_path, "core", [query(1)])
    with pytest.raises(
        QuerySetError, match="no generated query sets .* run `hilbot sets generate`"
    ):
        QuerySets(tmp_path).resolve("generated/*")


# --------------------------------------------------------------------------- validation


def _error(directory: Path, name: str = "core") -> str:
    with pytest.raises(QuerySetError) as info:
        QuerySets(directory).load(name)
    assert info.value.exit_code == 2
    return info.value.one_line()


def test_invalid_json_is_file_line(tmp_path):
    path = tmp_path / "core.json"
    path.write_text('{\n  "name": "core",\n  "queries": [\n    {"id": "a", "text": "x",}\n  ]\n}\n')
    before = path.read_bytes()
    line = _error(tmp_path)
    assert line.startswith(
        f"{path}:4: not valid JSON (Expecting property name enclosed in double quotes)"
    )
    assert path.read_bytes() == before


def test_missing_field_points_at_the_query_line(tmp_path):
    queries = [query(n) for n in range(1, 6)]
    del queries[3]["text"]
    path = write_set(tmp_path, "core", queries, name="core", version="1.0.0")
    before = path.read_bytes()
    assert _error(tmp_path).startswith(f"{path}:8: queries[3].text: Field required")
    assert path.read_bytes() == before


def test_line_numbers_in_a_pretty_printed_file(tmp_path):
    queries = [query(1), query(2), {"id": "core-03", "text": "x", "expected": "not-a-list"}]
    path = tmp_path / "core.json"
    path.write_text(json.dumps({"name": "core", "queries": queries}, indent=2))
    line_of_third = (
        next(n for n, text in enumerate(path.read_text().splitlines(), 1) if '"core-03"' in text)
        - 1
    )
    assert _error(tmp_path).startswith(
        f"{path}:{line_of_third}: queries[2].expected: Input should be a valid list"
    )


@pytest.mark.parametrize(
    "queries, expected",
    [
        ([query(1), {"text": "no id"}], ":5: queries[1].id: Field required"),
        (
            [query(1), query(2, text="")],
            ":5: queries[1].text: String should have at least 1 character",
        ),
        ([query(1), "just a string"], ":5: queries[1]: Input should be a valid dictionary"),
        (
            [query(1), query(2), query(1)],
            ":6: queries[2].id: duplicate id 'core-01' (also queries[0])",
        ),
    ],
)
def test_invalid_queries(tmp_path, queries, expected):
    path = write_set(tmp_path, "core", queries, name="core")
    assert _error(tmp_path).startswith(f"{path}{expected}")


def test_queries_must_be_a_list(tmp_path):
    (tmp_path / "core.json").write_text('{\n  "name": "core",\n  "queries": {"a": 1}\n}\n')
    assert ":3: queries: not a list" in _error(tmp_path)
    (tmp_path / "core.json").write_text("[1, 2]")
    assert ":1: not a query set" in _error(tmp_path)


def test_query_starts_skips_nested_arrays_and_strings():
    text = (
        '{"a": [1, {"queries": [9]}], "b": "\\"queries\\": [", "queries": [\n {"id": "x"},\n\n '
        "[1,\n2], 3]}"
    )
    assert query_starts(text) == [2, 4, 5]


# --------------------------------------------------------------------------- saving


def test_save_unchanged_is_byte_identical(qdir, store):
    sets = QuerySets(qdir)
    for name in sets.names():
        qs = sets.load(name)
        before = qs.path.read_bytes()
        sets.save(qs, store)
        assert qs.path.read_bytes() == before, name


def test_save_keeps_order_unknown_fields_and_key_order(tmp_path, store):
    queries = [
        {"notes": "first", **query(1)},
        query(2, owner={"team": "docs"}),
        query(3, expected=["/a.md"], weight=2),
    ]
    path = write_set(
        tmp_path,
        "core",
        queries,
        name="Core queries",
        version="1.0.0",
        owner="docs-team",
        tags=["x"],
    )
    sets = QuerySets(tmp_path)
    qs = sets.load("core")
    qs.queries[0] = qs.queries[0].model_copy(update={"text": "édited café query"})
    qs.queries.pop(1)
    qs.queries.append(QueryItem(id="core-04", text="new one", category="orm"))
    qs.version = "1.1.0"
    sets.save(qs, store)
    data = json.loads(path.read_text("utf-8"))
    assert list(data) == ["name", "version", "owner", "tags", "queries"]
    assert (
        data["name"] == "Core queries"
        and data["owner"] == "docs-team"
        and data["version"] == "1.1.0"
    )
    assert [q["id"] for q in data["queries"]] == ["core-01", "core-03", "core-04"]
    assert list(data["queries"][0]) == ["notes", "id", "text", "category", "intent"]
    assert (
        data["queries"][0]["text"] == "édited café query" and data["queries"][0]["notes"] == "first"
    )
    assert data["queries"][1] == query(3, expected=["/a.md"], weight=2)
    assert data["queries"][2] == {"id": "core-04", "text": "new one", "category": "orm"}
    again = QuerySets(tmp_path).load("core")
    assert again.queries[1].model_extra == {"weight": 2}


def test_save_writes_the_fixture_layout(tmp_path, store):
    path = write_set(tmp_path, "core", [query(1), query(2)], name="core")
    sets = QuerySets(tmp_path)
    qs = sets.load("core")
    qs.queries[1] = qs.queries[1].model_copy(update={"text": "naïve “quotes”"})
    sets.save(qs, store)
    lines = path.read_text("utf-8").splitlines()
    assert lines[0] == "{" and lines[1] == '  "name": "core",' and lines[2] == '  "queries": ['
    assert lines[3].startswith('    {"id": "core-01", ') and lines[3].endswith("},")
    assert '"text": "naïve “quotes”"' in lines[4] and lines[5:] == ["  ]", "}"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_save_refuses_duplicate_ids_and_leaves_the_file(tmp_path, store):
    path = write_set(tmp_path, "core", [query(1)], name="core")
    before = path.read_bytes()
    sets = QuerySets(tmp_path)
    qs = sets.load("core")
    qs.queries.append(QueryItem(id="core-01", text="again"))
    with pytest.raises(QuerySetError, match="duplicate id 'core-01'"):
        sets.save(qs, store)
    assert path.read_bytes() == before


def test_save_generated_never_overwrites(tmp_path, store):
    sets = QuerySets(tmp_path)
    items = [
        QueryItem(id="new-01", text="a", category="x", intent="i"),
        QueryItem(id="new-02", text="b"),
    ]
    paths = [
        sets.save_generated(
            items, seeded_from="core", model="claude-test", store=store, today="2026-12-17"
        )
        for _ in range(3)
    ]
    assert [p.name for p in paths] == ["2026-12-17.json", "2026-12-17-2.json", "2026-12-17-3.json"]
    data = json.loads(paths[0].read_text())
    assert list(data) == ["name", "source", "generated_at", "seeded_from", "model", "queries"]
    assert (data["name"], data["source"], data["seeded_from"], data["model"]) == (
        "generated/2026-12-17",
        "ai-generated",
        "core",
        "claude-test",
    )
    assert data["queries"] == [
        {"id": "gen-2026-12-17-01", "text": "a", "category": "x", "intent": "i"},
        {"id": "gen-2026-12-17-02", "text": "b"},
    ]
    assert json.loads(paths[1].read_text())["queries"][0]["id"] == "gen-2026-12-17-2-01"
    assert items[0].id == "new-01"  # the caller's items are not changed
    assert sets.names() == [
        "generated/2026-12-17",
        "generated/2026-12-17-2",
        "generated/2026-12-17-3",
    ]
    assert sets.load("generated/2026-12-17-3").source == "ai-generated"


def test_next_id_follows_the_sets_style(qdir):
    core = QuerySets(qdir).load("core")
    assert core.next_id() == "core-16"
    assert core.next_id(["core-16", "relay-09"]) == "core-17"
    empty = QuerySet(name="generated/2026-01-01", path=qdir / "x.json")
    assert empty.next_id() == "generated-2026-01-01-01"


# --------------------------------------------------------------------------- the LLM batch


def _proposed(*texts: str) -> list[dict]:
    return [{"text": t, "category": "routing", "intent": f"find {t}"} for t in texts]


async def test_propose_queries_seeds_the_prompt_and_dedupes(fake, qdir, store):
    core = QuerySets(qdir).load("core")
    keep = [QueryItem(id="k-1", text="Kept Query  One", category="orm")]
    fake.queue(
        tool(
            queries=_proposed(
                "fresh one", "kept query one", "FRESH ONE", "fresh two", "fresh three"
            )
        )
    )
    items = await propose_queries(
        LLM(LLMSettings(model="claude-test"), store), count=3, seed=core, keep=keep
    )
    assert [q.text for q in items] == ["fresh one", "fresh two", "fresh three"]
    assert [q.id for q in items] == ["new-01", "new-02", "new-03"]
    assert items[0].model_dump(exclude_unset=True) == {
        "id": "new-01",
        "text": "fresh one",
        "category": "routing",
        "intent": "find fresh one",
    }
    [request] = fake.requests
    prompt = request["messages"][0]["content"]
    assert "exactly 3" in prompt
    assert all(q.text in prompt for q in core.queries) and "Kept Query  One" in prompt
    assert request["tools"][0]["name"] == "propose_queries"
    assert request["max_tokens"] >= 600


async def test_propose_queries_avoids_rejected_ones(fake, store):
    avoid = [QueryItem(id="r", text="rejected query")]
    fake.queue(tool(queries=_proposed("Rejected Query", "another")))
    items = await propose_queries(
        LLM(LLMSettings(model="claude-test"), store), count=12, seed=None, avoid=avoid
    )
    assert [q.text for q in items] == ["another"]
    prompt = fake.requests[0]["messages"][0]["content"]
    assert "rejected" in prompt.lower() and "rejected query" in prompt and "Examples" not in prompt


async def test_propose_queries_malformed_answer_is_an_error(fake, store):
    from evaluation.llm import LLMOutputError

    fake.queue(tool(queries=[{"text": "no category"}]))
    with pytest.raises(LLMOutputError, match="queries.0.category"):
        await propose_queries(LLM(LLMSettings(model="claude-test"), store), count=2, seed=None)
