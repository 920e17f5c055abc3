"""The query edit loop in-process: scripted lines in, said lines out; the LLM is the fake Messages
API."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.curation import Curation, State, generation, parse_numbers, review
from evaluation import Store
from evaluation.config import LLMSettings
from evaluation.llm import LLM, LLMError
from evaluation.queries import QueryItem, QuerySets, propose_queries
from tests.evaluation.test_queries import query, write_set
from tests.fakes.anthropic_api import error, tool


class Script:
    """``ask``: the next scripted line (EOFError when none are left); ``say``: collected output."""

    def __init__(self, *lines: str):
        self.lines = list(lines)
        self.prompts: list[str] = []
        self.said: list[str] = []

    def ask(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)

    def say(self, text: str) -> None:
        self.said.extend(text.splitlines())

    @property
    def out(self) -> str:
        return "\n".join(self.said)


@pytest.fixture
def qdir(tmp_path: Path) -> Path:
    directory = tmp_path / "queries"
    write_set(directory, "core", [query(n) for n in range(1, 5)], name="core", version="1.0.0")
    write_set(
        directory,
        "relay-focus",
        [query(n, "relay", extra="kept") for n in range(1, 4)],
        name="relay-focus",
    )
    return directory


def _review(qdir: Path, spec: str, script: Script, store: Store, propose=None) -> Curation:
    sets = QuerySets(qdir)
    return review(
        sets.resolve(spec),
        propose=propose,
        save_to=lambda qs: sets.save(qs, store),
        ask=script.ask,
        say=script.say,
    )


async def test_structured_list_with_source_labels(qdir, store):
    script = Script("q")
    session = _review(qdir, "all", script, store)
    assert await session.run() is State.QUIT
    assert script.said[0] == "Query sets core, relay-focus (7 queries):"
    assert script.said[1:3] == ["  1. [routing] core query 1  (core)", "       intent: find 1"]
    assert "  7. [routing] relay query 3  (relay-focus)" in script.said
    assert "Actions: [a]ccept all, [e]dit list, [q]uit" in script.said  # no key: no [f]ill
    assert script.said[-1] == "Quit: nothing written."


async def test_bad_input_gets_a_hint_never_a_crash(qdir, store):
    before = (qdir / "core.json").read_bytes()
    script = Script(
        "x",
        "r",
        "f",
        "e",
        "",
        "frob",
        "drop",
        "drop x",
        "drop 0",
        "drop 9",
        "edit",
        "edit 1,2",
        "add relay-focus",
        "fill",
        "help",
        "done",
        "q",
    )
    assert await _review(qdir, "core", script, store).run() is State.QUIT
    out = script.out
    assert out.count("Type one of the letters in brackets.") == 3
    assert "Unknown command 'frob'; commands: drop 3,7" in out
    assert "Which ones? Give numbers as shown in the list" in out
    assert "Not a query number: 'x'" in out
    assert out.count("No query ") == 2 and "No query 9: the list has 4; nothing changed" in out
    assert "Edit one query at a time, e.g. edit 5" in out
    assert "No set 'relay-focus' in this review; use one of: core" in out
    assert (
        "fill needs the LLM: set the [llm] provider's key (ANTHROPIC_API_KEY; OPENAI_BASE_URL for "
        "a local model)" in out
    )
    assert out.count("Edit commands") == 2
    assert (qdir / "core.json").read_bytes() == before


async def test_eof_in_the_middle_of_an_edit_quits_without_writing(qdir, store):
    before = (qdir / "core.json").read_bytes()
    script = Script("e", "drop 1", "edit 1", "new text")  # input ends while asking for the category
    assert await _review(qdir, "core", script, store).run() is State.QUIT
    assert (
        script.said[-1] == "Quit: nothing written." and (qdir / "core.json").read_bytes() == before
    )


async def test_review_all_saves_each_query_to_its_own_file(qdir, store):
    script = Script(
        "e",
        "drop 2,6",
        "edit 1",
        "first, edited",
        "",
        "new intent",
        "add",
        "for core",
        "orm",
        "",
        "add relay-focus",
        "for relay",
        "",
        "",
        "done",
        "a",
    )
    assert await _review(qdir, "all", script, store).run() is State.DONE
    core, relay = QuerySets(qdir).load("core"), QuerySets(qdir).load("relay-focus")
    assert [(q.id, q.text) for q in core.queries] == [
        ("core-01", "first, edited"),
        ("core-03", "core query 3"),
        ("core-04", "core query 4"),
        ("core-05", "for core"),
    ]
    assert core.queries[0].intent == "new intent" and core.queries[0].category == "routing"
    assert core.queries[3].model_dump(exclude_unset=True) == {
        "id": "core-05",
        "text": "for core",
        "category": "orm",
    }
    assert [q.id for q in relay.queries] == ["relay-01", "relay-03", "relay-04"]
    assert (
        relay.queries[0].model_extra == {"extra": "kept"} and relay.queries[2].text == "for relay"
    )
    assert 'Dropped 2: 2. "core query 2"; 6. "relay query 2"' in script.out
    assert "Added as 7 to relay-focus." in script.out


async def test_unchanged_sets_are_not_rewritten(qdir, store):
    relay = qdir / "relay-focus.json"
    relay.write_text(
        relay.read_text().replace("  ]\n}", "  ]\n}\n\n")
    )  # not our layout: would change if rewritten
    before = relay.read_bytes()
    script = Script("e", "drop 1", "done", "a")
    assert await _review(qdir, "all", script, store).run() is State.DONE
    assert relay.read_bytes() == before
    assert (
        "relay-focus: unchanged, not written" in script.out
        and "Saved core: 3 queries to" in script.out
    )


def test_parse_numbers():
    assert parse_numbers("3,7, 12", 12) == [3, 7, 12]
    assert parse_numbers("2-4 4", 5) == [2, 3, 4]
    assert parse_numbers("13", 12) == "No query 13: the list has 12; nothing changed"


# --------------------------------------------------------------------------- with the LLM


def _batch(*texts: str):
    return tool(queries=[{"text": t, "category": "tasks", "intent": f"find {t}"} for t in texts])


def _generation(
    qdir: Path, store: Store, script: Script, count: int = 3, saved: list | None = None
) -> Curation:
    llm, sets = LLM(LLMSettings(model="claude-test", cache=False), store), QuerySets(qdir)
    seed = sets.load("core")

    def save_to(items):
        path = sets.save_generated(
            items, seeded_from="core", model="claude-test", store=store, today="2026-12-17"
        )
        saved.append(path) if saved is not None else None
        return path

    return generation(
        count=count,
        seed=seed,
        ask=script.ask,
        say=script.say,
        save_to=save_to,
        propose=lambda n, keep, avoid: propose_queries(
            llm, count=n, seed=seed, keep=keep, avoid=avoid
        ),
    )


async def test_generate_regenerate_fill_and_accept(fake, qdir, store):
    fake.queue(_batch("a", "b", "c"), _batch("d", "e", "f"), _batch("g", "A"))
    saved: list = []
    script = Script("r", "e", "drop 1", "fill", "done", "a")
    assert await _generation(qdir, store, script, saved=saved).run() is State.DONE
    assert "Actions: [a]ccept all, [e]dit list, [r]egenerate, [q]uit" in script.said
    data = QuerySets(qdir).load("generated/2026-12-17")
    assert [q.text for q in data.queries] == ["e", "f", "g"]
    assert [q.id for q in data.queries] == [
        "gen-2026-12-17-01",
        "gen-2026-12-17-02",
        "gen-2026-12-17-03",
    ]
    second, third = (r["messages"][0]["content"] for r in fake.requests[1:])
    assert "rejected" in second and "- [tasks] a" in second
    assert (
        "exactly 1 new search query" in third and "- [tasks] e" in third and "- [tasks] d" in third
    )  # keep e,f; avoid a-d


async def test_an_llm_failure_mid_session_keeps_the_list(fake, qdir, store):
    fake.queue(_batch("a", "b", "c"), error(400, "invalid_request_error"))
    script = Script("r", "q")
    assert await _generation(qdir, store, script).run() is State.QUIT
    assert "The LLM failed, the list is unchanged" in script.out
    assert script.out.count("  1. [tasks] a") == 2
    assert not (qdir / "generated").exists()


async def test_an_llm_failure_before_any_list_is_the_error(fake, qdir, store):
    fake.queue(error(400, "invalid_request_error"))
    with pytest.raises(LLMError, match="400"):
        await _generation(qdir, store, Script("a")).run()


async def test_empty_generated_list_is_not_saved(fake, qdir, store):
    fake.queue(_batch("a"))
    script = Script("e", "drop 1", "done", "a", "q")
    assert await _generation(qdir, store, script, count=1).run() is State.QUIT
    assert "Nothing to save: the list is empty" in script.out and not (qdir / "generated").exists()


async def test_review_fill_tops_up_to_the_original_size(fake, qdir, store):
    llm = LLM(LLMSettings(model="claude-test", cache=False), store)
    fake.queue(_batch("core query 3", "fresh"))
    script = Script("e", "drop 1,2", "fill", "done", "a")

    def propose(n, keep, avoid):
        return propose_queries(llm, count=n, seed=None, keep=keep, avoid=avoid)

    session = _review(qdir, "core", script, store, propose=propose)
    assert await session.run() is State.DONE
    assert "Actions: [a]ccept all, [e]dit list, [f]ill gaps with the LLM, [q]uit" in script.said
    core = QuerySets(qdir).load("core")
    assert [(q.id, q.text) for q in core.queries] == [
        ("core-03", "core query 3"),
        ("core-04", "core query 4"),
        ("core-05", "fresh"),
    ]
    prompt = fake.requests[0]["messages"][0]["content"]
    assert "exactly 2" in prompt and "core query 1" in prompt and "core query 4" in prompt
    assert isinstance(core.queries[2], QueryItem)


HOSTILE = "\x1b]0;T\x07\x1b[2J\x9b1m\u202e\rX"
SHOWN = "␛]0;T␇␛[2J<U+009B>1m<U+202E>␍X"


async def test_hostile_query_text_is_shown_with_control_characters_visible(tmp_path, store):
    qdir = tmp_path / "queries"
    write_set(
        qdir,
        "evil",
        [
            {
                "id": "e1",
                "text": f"t:{HOSTILE}",
                "category": f"c:{HOSTILE}",
                "intent": f"i:{HOSTILE}",
            },
            {"id": "e2", "text": "plain"},
        ],
        name="evil",
    )
    script = Script("e", "edit 1", "", "", "", "list", "drop 1", "done", "q")
    assert await _review(qdir, "evil", script, store).run() is State.QUIT
    shown = "\n".join(script.said + script.prompts)
    for raw in ("\x1b", "\x07", "\x9b", "\u202e", "\r"):
        assert raw not in shown, f"{raw!r} reached the terminal"
    assert (
        f"  1. [c:{SHOWN}] t:{SHOWN}" in script.said and f"       intent: i:{SHOWN}" in script.said
    )
    assert f"text [t:{SHOWN}]: " in script.prompts and f"intent [i:{SHOWN}]: " in script.prompts
    assert f'Dropped 1: 1. "t:{SHOWN}"' in script.said


async def test_proposed_queries_and_llm_errors_are_shown_with_control_characters_visible(store):
    async def propose(count, keep, avoid):
        return [QueryItem(id="n1", text=f"t:{HOSTILE}", category=f"c:{HOSTILE}")]

    script = Script("q")
    session = generation(
        count=1,
        seed=None,
        propose=propose,
        save_to=lambda items: Path("unused"),
        ask=script.ask,
        say=script.say,
    )
    assert await session.run() is State.QUIT
    assert f"  1. [c:{SHOWN}] t:{SHOWN}" in script.said
    assert not any(raw in script.out for raw in ("\x1b", "\x9b", "\u202e"))
