"""hilbot.toml: defaults for the built-in scales, validation with key paths."""

from __future__ import annotations

import pytest

from evaluation import ConfigError, load_config


def test_defaults_ship_the_search_quality_and_scenario_scales(config):
    search = config.scale_for("overall")
    assert [(o.value, o.key, o.score) for o in search.options] == [
        ("good", "g", 1.0),
        ("okay", "o", 0.7),
        ("poor", "p", 0.4),
        ("terrible", "t", 0.1),
    ]
    quality = config.scale_for("quality")
    assert [o.label for o in quality.options] == ["⭐ Excellent", "✓ Good", "⚠️ Okay", "✗ Miss"]
    assert [o.ask_concerns for o in quality.options] == [False, False, True, True]
    assert {"conviction_too_high", "leap_unjustified", "tick_too_risky", "lacks_catalyst"} <= set(
        config.concerns_for("quality")
    )
    assert [o.value for o in config.scale_for("trigger-accuracy").options] == ["yes", "no"]
    assert config.scale_for("trigger-accuracy").options[0].labels == {"trigger_correct": True}
    assert [o.labels["completeness_score"] for o in config.scale_for("completeness").options] == [
        1,
        2,
        3,
        4,
        5,
    ]
    assert {"code-validity", "technical-accuracy"} <= set(config.dimensions)


def test_scale_options_may_declare_their_numbers(config, tmp_path):
    """The completeness scale's 1–5 are its numbers (what interval and ratio agreement measure);
    other scales have none."""
    assert [(o.value, o.score, o.number) for o in config.scale_for("completeness").options] == [
        ("1", 0.0, 1.0),
        ("2", 0.25, 2.0),
        ("3", 0.5, 3.0),
        ("4", 0.75, 4.0),
        ("5", 1.0, 5.0),
    ]
    assert all(o.number is None for o in config.scale_for("overall").options)
    path = tmp_path / "hilbot.toml"
    path.write_text(
        '[scales.stars]\nquestion = "Stars?"\noptions = [{value="3", label="3", key="3", '
        'score=1.0, number=3}, {value="1", label="1", key="1", score=0.0, number=-1.5}]\n'
    )
    assert [o.number for o in load_config(path).scales["stars"].options] == [3.0, -1.5]
    path.write_text(
        '[scales.stars]\nquestion = "Stars?"\noptions = [{value="3", label="3", key="3", '
        'score=1.0, number="three"}, {value="1", label="1", key="1", score=0.0}]\n'
    )
    with pytest.raises(ConfigError, match="scales.stars.options.0.number"):
        load_config(path)
    path.write_text(
        '[scales.stars]\nquestion = "Stars?"\noptions = [{value="3", label="3", key="3", '
        'score=1.0, number=nan}, {value="1", label="1", key="1", score=0.0}]\n'
    )
    with pytest.raises(ConfigError):
        load_config(path)


def test_project_file_overrides_and_adds(tmp_path):
    path = tmp_path / "hilbot.toml"
    path.write_text(
        '[review]\nk = 2\n[concerns.search]\ntags = ["only_one"]\n'
        '[scales.binary]\nquestion = "OK?"\noptions = [{value="y", label="yes", key="y", '
        'score=1.0}, {value="n", label="no", key="x", score=0.0}]\n[dimensions.ok]\nscale = '
        '"binary"\n'
    )
    config = load_config(path)
    assert config.review.k == 2 and config.review.reveal_after_rating is True
    assert config.concerns_for("overall") == ["only_one"]
    assert config.scale_for("ok").question == "OK?"
    assert "quality" in config.dimensions  # built-ins kept


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "[review]\nk = 1\nreveal_after_ratting = true\n",
            ("hilbot.toml:3", "unknown key review.reveal_after_ratting"),
        ),
        (
            "[scales.search]\nquestion = 'q'\noptions = [{value='a', label='a', key='a', "
            "score=1.0, colour='red'},{value='b', label='b', key='b', score=0.0}]\n",
            ("unknown key scales.search.options.0.colour",),
        ),
        ("[dimensions.x]\nscale = 'nope'\n", ("unknown scale 'nope'",)),
        (
            "[scales.s]\nquestion='q'\noptions=[{value='a',label='a',key='q',score=1.0},{value='b',label='b',key='b',score=0.0}]\n",
            ("reserved",),
        ),
        (
            "[scales.s]\nquestion='q'\noptions=[{value='a',label='a',key='a',score=1.5},{value='b',label='b',key='b',score=0.0}]\n",
            ("scales.s.options.0.score",),
        ),
        ("[review\n", ("not valid TOML",)),
        (
            '[review.context]\nscenario = ["plugin", "plugin"]\n',
            ("review.context.scenario", "'plugin' listed twice"),
        ),
        ("[review.context]\nchange = []\n", ("unknown key review.context.change",)),
        ('[review.context]\nanswer = [""]\n', ("review.context.answer.0",)),
    ],
)
def test_bad_config_is_one_line_with_path(tmp_path, monkeypatch, text, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hilbot.toml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config()
    message = str(info.value)
    assert "\n" not in message
    for part in expected:
        assert part in message
    assert "—" in message  # says how to fix


def test_unknown_dimension_names_the_known_ones(config):
    with pytest.raises(ConfigError, match="unknown dimension 'speed'.*overall"):
        config.scale_for("speed")


@pytest.mark.parametrize("table", ["metric_weights", "priority_weights"])
@pytest.mark.parametrize("weight", ["1e308", "-1"])
def test_judge_weights_outside_0_to_a_million_are_config_errors(tmp_path, table, weight):
    path = tmp_path / "hilbot.toml"
    key = "answer_correctness" if table == "metric_weights" else "critical"
    path.write_text(f"[judge.{table}]\n{key} = {weight}\n")
    with pytest.raises(ConfigError, match="between 0 and 1,000,000"):
        load_config(path)


def test_defaults_ask_skip_reasons_confidence_and_the_labelled_follow_ups(config):
    assert config.review.skip_reasons == [
        "unclear item",
        "needs expertise I don't have",
        "broken item",
        "other",
    ]
    asked = {
        name: (dim.confidence, [(f.field, f.when) for f in dim.follow_ups])
        for name, dim in config.dimensions.items()
        if dim.confidence or dim.follow_ups
    }
    assert asked == {
        "trigger-accuracy": (True, [("trigger_component_observed", ["no"])]),
        "code-validity": (True, [("code_issues", ["parses", "broken"])]),
        "technical-accuracy": (True, [("inaccuracies", ["incorrect"])]),
        "completeness": (True, [("missing_elements", ["1", "2", "3"])]),
    }


LABELLING = ("trigger-accuracy", "code-validity", "technical-accuracy", "completeness")
"""The dimensions whose ratings fill the label's fields."""


def test_every_built_in_dimension_says_what_each_option_means_and_when_to_skip(config):
    for name in config.dimensions:
        scale = config.scale_for(name)
        assert scale.skip_when, name
        assert all(o.meaning for o in scale.options), name
    meanings = {
        name: " ".join(o.meaning or "" for o in config.scale_for(name).options)
        for name in LABELLING
    }
    assert "YES if" in meanings["trigger-accuracy"] and "NO if" in meanings["trigger-accuracy"]
    assert config.scale_for("trigger-accuracy").skip_when.startswith("SKIP if")
    assert "PARSES" in meanings["code-validity"] and "RUNS" in meanings["code-validity"]
    assert "CORRECT if" in meanings["technical-accuracy"]
    assert "INCORRECT if" in meanings["technical-accuracy"]
    assert len({o.meaning for o in config.scale_for("completeness").options}) == 5


def test_confidence_is_on_for_every_labelling_dimension_and_a_project_turns_it_off(
    config, tmp_path
):
    assert {n for n, d in config.dimensions.items() if d.confidence} == set(LABELLING)
    path = tmp_path / "hilbot.toml"
    path.write_text('[dimensions.completeness]\nscale = "completeness"\nconfidence = false\n')
    assert not load_config(path).dimension("completeness").confidence
    assert load_config(path).dimension("trigger-accuracy").confidence


def test_a_projects_scale_replaces_the_built_in_guidelines(tmp_path):
    path = tmp_path / "hilbot.toml"
    path.write_text(
        '[scales.trigger]\nquestion = "Right tool?"\nskip_when = "ask Dana"\noptions = [\n'
        '  { value = "yes", label = "Yes", key = "y", score = 1.0, meaning = "our YES" },\n'
        '  { value = "no", label = "No", key = "n", score = 0.0, meaning = "our NO" },\n]\n'
    )
    scale = load_config(path).scale_for("trigger-accuracy")
    assert [o.meaning for o in scale.options] == ["our YES", "our NO"]
    assert scale.skip_when == "ask Dana"


FOLLOW_UP = (
    "[dimensions.code-validity]\nscale = "
    "'code'\n[[dimensions.code-validity.follow_ups]]\nquestion = 'Which?'\n"
)


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            FOLLOW_UP + "field = 'code_smells'\nchoices = ['a']\n",
            "dimensions.code-validity.follow_ups.0.field",
        ),
        (
            FOLLOW_UP + "field = 'code_issues'\nchoices = ['a']\nwhen = ['maybe']\n",
            "'maybe' is not an option of scale 'code'",
        ),
        (
            FOLLOW_UP + "field = 'blocked_by'\nchoices = ['a', 'b']\nmultiple = true\n",
            "multiple = true only",
        ),
        (FOLLOW_UP + "field = 'code_issues'\n", "give choices, or text = true"),
        (FOLLOW_UP + "field = 'code_issues'\nchoices = ['a', 'a']\n", "choices: 'a' listed twice"),
        (
            FOLLOW_UP + "field = 'code_issues'\nchoices = "
            "['a']\n[[dimensions.code-validity.follow_ups]]\nquestion = 'Again?'\nfield = "
            "'code_issues'\ntext = true\n",
            "asks code_issues twice",
        ),
        (
            FOLLOW_UP + "field = 'code_issues'\nchoices = ['a']\nkey = 'x'\n",
            "unknown key dimensions.code-validity.follow_ups.0.key",
        ),
        (
            "[review]\nskip_reasons = ['unclear', 'unclear']\n",
            "review.skip_reasons: 'unclear' listed twice",
        ),
    ],
)
def test_bad_follow_ups_and_skip_reasons_are_one_line_with_the_path(tmp_path, text, expected):
    (tmp_path / "hilbot.toml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "hilbot.toml")
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_the_context_a_card_shows_is_set_per_run_kind_and_defaults_to_the_imports_fields(tmp_path):
    from evaluation.imports import CONTEXT_FIELDS

    path = tmp_path / "hilbot.toml"
    path.write_text('[review.context]\nscenario = ["maturity", "component"]\nanswer = []\n')
    context = load_config(path).review.context
    assert context.fields("scenario") == ["maturity", "component"]
    assert context.fields("answer") == []
    assert (
        context.fields("search")
        == list(CONTEXT_FIELDS)
        == load_config(None).review.context.fields("scenario")
    )
    assert context.fields("change") == []  # a change's card has its own layout
