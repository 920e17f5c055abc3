"""A second reader of a replica's data directory (``hilbot dashboard``, any command with the same
data directory and store URL) pulls the other replicas' lines into the read copy before the bot
does: the bot still folds every one of them (it reads the copy from where it stopped, not what its
own store object pulled)."""
from bot.cards import Action
from bot.demo import SEARCH_RUN, build_demo
from bot.review import ReviewEngine
from evaluation import Reviewer, Store, load_config


async def test_a_second_reader_of_a_replicas_data_dir_hides_news_from_its_bot(tmp_path, pg_url):
    bot_store = Store(tmp_path / "a", url=pg_url)  # replica A's bot
    build_demo(bot_store)
    engine = ReviewEngine(bot_store, load_config(None))
    other = Store(tmp_path / "b", url=pg_url)  # replica B, a data dir of its own
    session = ReviewEngine(other, load_config(None)).session(
        SEARCH_RUN, Reviewer(platform="memory", id="bob"), channel="memory"
    )
    item = session.pending(limit=1)[0].id
    session.act(Action("rate", "good", item, "cq:1"))  # B stores a rating
    reader = Store(tmp_path / "a", url=pg_url)  # e.g. `hilbot dashboard` on A's data dir
    reader.sync()
    await engine.catch_up()  # A's bot looks for what the others stored
    judged = engine.ledger.item_judgments(SEARCH_RUN, item, "overall")
    for store in (bot_store, other, reader):
        store.close()
    assert judged, "A's engine never folded B's rating: the reader's sync took it from news()"
