"""``hilbot digest``: printed, written to files, and posted to Telegram chats through the Bot
API."""

from __future__ import annotations

from bot.demo import SEARCH_RUN
from evaluation import Rating, Reviewer
from tests.fakes.telegram_api import FakeTelegram

GROUP = -100200


def _rate(store, n: int = 3) -> None:
    run = store.load_run(SEARCH_RUN)
    store.ratings.append_many(
        [
            Rating(
                run_id=SEARCH_RUN,
                item_id=item.id,
                reviewer=Reviewer(id="alice"),
                judgment="poor",
                score=0.4,
                concerns=["bad_ranking"],
                idempotency_key=f"k{n}",
            )
            for n, item in enumerate(run.items[:n])
        ]
    )


def test_digest_prints_and_writes_files(demo_store, run_cli, tmp_path):
    _rate(demo_store)
    result = run_cli("digest", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert (
        f"{SEARCH_RUN} · overall: 3/18 rated" in result.stdout
        and "Top concerns: bad_ranking 3" in result.stdout
    )
    assert (tmp_path / "out" / "digest.md").read_text().strip() == result.stdout.strip()
    assert (tmp_path / "out" / "digest.png").read_bytes().startswith(b"\x89PNG")


def test_digest_posts_to_the_configured_telegram_chats(demo_store, run_cli, tmp_path):
    _rate(demo_store)
    (tmp_path / "hilbot.toml").write_text(f"[telegram.digest]\nchats = [{GROUP}]\n")
    with FakeTelegram() as fake:
        fake.group(GROUP, "Team")
        result = run_cli(
            "digest",
            "--post",
            "telegram",
            env={**fake.env(), "HILBOT_CONFIG": str(tmp_path / "hilbot.toml")},
        )
        assert result.returncode == 0, result.stderr
        assert "Posted the digest to 1 Telegram chat(s)" in result.stdout
        message, photo = fake.messages(GROUP)
        assert "hilbot digest" in message["text"] and "bad_ranking 3" in message["text"]
        [(chat, png, _)] = fake.photos
        assert chat == GROUP and png.startswith(b"\x89PNG")


def test_digest_without_chats_or_token_is_one_line(demo_store, run_cli, tmp_path):
    result = run_cli("digest", "--post", "telegram", env={"TELEGRAM_BOT_TOKEN": "1:x"})
    assert (
        result.returncode == 2
        and "set [telegram.digest] chats" in result.stderr
        and len(result.stderr.splitlines()) == 1
    )
