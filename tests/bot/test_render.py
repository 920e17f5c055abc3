"""What a review card shows of an item (:mod:`bot.render`): the response with its line breaks and
its code as code, the item's context; and the terminal printing it when it is not a terminal."""

from __future__ import annotations

from bot.render import ANSWER_LINES, card_sections, full_text, has_more
from evaluation import ItemData, Query, QueryEvaluation, RunHeader
from tests.auxil.items import CODE, code_run


def _item(answer: str, **features: object) -> ItemData:
    return ItemData(id="i", query=Query(query="q"), answer=answer, features=features)


def test_piped_a_card_prints_each_line_of_code_whole_and_every_control_visible(store, run_cli):
    """Not a terminal (a pipe, a log): no width to keep within, so code lines are never cut; an
    escape sequence in code is shown, never sent."""
    code_run(store)
    hostile = "```sh\necho \x1b[2J cleared\n```"
    item = ItemData(id="h", query=Query(query="clear"), answer=hostile)
    store.create_run(
        RunHeader(run_id="hostile", kind="answer", dimensions=["code-validity"]),
        [QueryEvaluation(run_id="hostile", data=item)],
    )
    result = run_cli(
        "review", "code-answers", "--dimension", "code-validity", "--reviewer", "bob", input="q"
    )
    assert result.returncode == 0, result.stderr
    for line in CODE.splitlines():
        assert f"\n      {line}\n" in result.stdout  # the long one too, END-OF-LINE and all
    assert "long lines cut" not in result.stdout
    result = run_cli(
        "review", "hostile", "--dimension", "code-validity", "--reviewer", "bob", input="q"
    )
    assert "\n      echo ␛[2J cleared\n" in result.stdout and "\x1b[2J" not in result.stdout


def test_fences_of_either_kind_and_an_unclosed_one_are_code_and_prose_keeps_its_lines():
    answer = "Intro\n  indented prose\n\n~~~\nplain()\n~~~\nmiddle\n```weird info here\nx = 1\n"
    sections = card_sections(_item(answer))
    assert [(s.title, s.lines, s.code, s.language) for s in sections] == [
        ("Response", ("Intro", "  indented prose"), False, None),
        (None, ("plain()",), True, None),
        (None, ("middle",), False, None),
        (None, ("x = 1",), True, "weird"),  # unclosed: code to the end
    ]


def test_a_long_response_is_cut_and_says_how_many_lines_view_full_has():
    answer = "\n".join(f"line {n}" for n in range(ANSWER_LINES + 12))
    item = _item(answer)
    sections = card_sections(item)
    assert sections[-1].lines == ("… 12 more lines under View full",)
    assert sections[0].lines[-1] == f"line {ANSWER_LINES - 1}" and has_more(item)
    assert not has_more(_item("two\nlines"))  # a short multi-line answer is whole on the card


def test_a_secret_in_code_is_scrubbed_on_the_card(monkeypatch):
    key = "sk-ant-incodeblock-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    shown = "\n".join(
        line
        for s in card_sections(_item(f"```\nclient = Client('{key}')\n```"))
        for line in s.lines
    )
    assert "incodeblock" not in shown and "client = Client(" in shown


def test_context_short_values_share_a_line_descriptions_and_long_ones_have_their_own():
    item = _item(
        "ok",
        plugin="p",
        plugin_description="helps",
        component="/c",
        system="s" * 400,
        maturity="rough",
    )
    [head, *_] = card_sections(item)
    assert head.lines[0] == "plugin: p  ·  component: /c"
    assert head.lines[1] == "plugin description: helps"
    assert head.lines[2].startswith("system: sss") and head.lines[2].endswith("…")
    assert len(head.lines) == 3 and has_more(item)  # the whole value is under View full
    assert "system: " + "s" * 400 in full_text(item)
    [head, *_] = card_sections(item, context=["maturity"])
    assert head.lines == ("maturity: rough",)
