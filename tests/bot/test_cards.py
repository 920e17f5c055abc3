"""A review card's buttons and keys (bot.cards.CardLayout): actions keep one key on every scale."""

from __future__ import annotations

from bot.cards import ACTION_KEYS, CardLayout, State
from evaluation import Rating, Reviewer, load_config

ACTIONS = {"note": "n", "skip": "s", "view_full": "v", "view_tools": "x", "quit": "q"}
"""The keys of the actions every review card has, on every scale."""


def _layout(config, dimension: str, *, change: bool = False) -> CardLayout:
    dim = config.dimension(dimension)
    return CardLayout(
        config.scale_for(dimension),
        config.concerns_for(dimension),
        {f.field: f for f in dim.follow_ups},
        list(config.review.skip_reasons),
        change=change,
    )


def _keys(layout: CardLayout, *, undo: str | None = None) -> dict[str, str]:
    """Each button's key on a blind card: its action kind (an option: its value) → its key."""
    rows = layout.rows("i1", None, State.RATING, tools=True, undo=undo)
    return {(b.action.value or b.action.kind): b.key for row in rows for b in row if b.key}


def test_actions_keep_their_keys_on_every_built_in_dimension(config):
    for dimension in config.dimensions:
        keys = _keys(_layout(config, dimension), undo="i0")
        assert {a: keys[a] for a in ACTIONS} == ACTIONS, dimension
        assert keys["undo"] == "u", dimension
        options = [keys[o.value] for o in config.scale_for(dimension).options]
        assert len(set(options)) == len(options) and not set(options) & set(ACTIONS.values())
        assert not set(options) & {"u", "?"}
    trigger = _keys(_layout(config, "trigger-accuracy"))
    assert (trigger["yes"], trigger["no"], trigger["note"]) == ("y", "o", "n")
    assert _keys(_layout(config, "overall"))["terrible"] == "t"  # the search scale's keys stay


def test_an_option_given_an_actions_key_takes_another_and_the_card_and_guide_show_it(
    tmp_path, demo_store
):
    from bot import ReviewEngine
    from tests.conftest import SEARCH_RUN

    (tmp_path / "hilbot.toml").write_text(
        '[scales.search]\nquestion = "Verdict?"\noptions = [\n'
        '  { value = "nice", label = "nice", key = "n", score = 1.0, meaning = "all there" },\n'
        '  { value = "vague", label = "vague", key = "v", score = 0.5 },\n'
        '  { value = "sad", label = "sad", key = "s", score = 0.2 },\n'
        '  { value = "xx", label = "xx", key = "x", score = 0.0 },\n'
        '  { value = "quiz", label = "quiz", key = "?", score = 0.0 },\n'
        '  { value = "ask", label = "ask", key = "a", score = 0.0 },\n]\n'
    )
    config = load_config(tmp_path / "hilbot.toml")
    layout = _layout(config, "overall")
    keys = _keys(layout)
    assert {a: keys[a] for a in ACTIONS} == ACTIONS
    options = {v: keys[v] for v in ("nice", "vague", "sad", "xx", "quiz", "ask")}
    assert options["ask"] == "a"  # no collision: the configured key
    assert options["nice"] == "i" and options["vague"] == "g"  # the next free letter of its label
    assert len(set(options.values())) == 6 and not set(options.values()) & set(ACTIONS.values())
    assert "?" not in options.values()
    session = ReviewEngine(demo_store, config).session(
        SEARCH_RUN, Reviewer(platform="terminal", id="alice"), "overall"
    )
    card = session.start().card
    assert [(b.label, b.key) for b in card.buttons[0]][:2] == [("nice", "i"), ("vague", "g")]
    assert card.button_for_key("n").action.kind == "note"
    assert "  i  nice — all there" in session.guide().splitlines()


def test_the_ai_review_key_is_kept_only_where_a_change_is_reviewed(config):
    accuracy = _keys(_layout(config, "technical-accuracy"))
    assert accuracy["incorrect"] == "i"  # no AI review on these cards: Incorrect keeps its key
    change = _layout(config, "change", change=True)
    rows = change.rows("i1", None, State.RATING, change=True)
    keys = {(b.action.value or b.action.kind): b.key for row in rows for b in row if b.key}
    assert keys["ai_review"] == ACTION_KEYS["ai_review"] and keys["note"] == "n"


def test_a_rated_cards_tags_never_take_an_actions_key(config):
    layout = _layout(config, "overall")
    rated = Rating(
        run_id="r",
        item_id="i1",
        dimension="overall",
        reviewer=Reviewer(platform="terminal", id="alice"),
        channel="terminal",
        idempotency_key="k",
        judgment="okay",
        score=0.7,
    )
    rows = layout.rows("i1", rated, State.FOLLOW_UP, tools=True)
    tags = [b.key for b in rows[0]]
    assert len(tags) == len(config.concerns_for("overall"))
    assert not set(tags) & set(ACTION_KEYS.values())
