"""``hilbot digest``: printed, written to files, and posted to Telegram chats through the Bot
API."""

from __future__ import annotations

from datetime import timedelta

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


def rate_then_and_now(
    store, before: timedelta = timedelta(hours=36), new: timedelta = timedelta(hours=1)
) -> None:
    """Four items rated good ``before`` (a day and a half ago), four others terrible with
    bad_ranking ``new`` (an hour ago): the concern went from none of the ratings to all of them."""
    from evaluation import utcnow

    run = store.load_run(SEARCH_RUN)
    now = utcnow()
    ratings = [
        Rating(
            run_id=SEARCH_RUN,
            item_id=item.id,
            reviewer=Reviewer(id="alice"),
            judgment="good" if n < 4 else "terrible",
            score=1.0 if n < 4 else 0.1,
            concerns=[] if n < 4 else ["bad_ranking"],
            idempotency_key=f"w{n}",
            timestamp=now - (before if n < 4 else new),
        )
        for n, item in enumerate(run.items[:8])
    ]
    store.ratings.append_many(ratings)


def test_digest_says_what_changed(demo_store, run_cli):
    rate_then_and_now(demo_store)
    result = run_cli("digest")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(n for n, line in enumerate(lines) if line.startswith("Regressions since "))
    assert lines[header].endswith("(against the 24 hours before):")
    assert lines[header + 1] == (
        "⚠ overall · concern bad_ranking: on 0% of 4 ratings → 100% of 4, +100 pts "
        "(95% CI 31 to 100)"
    )
    assert f"Synthesis of {SEARCH_RUN} · overall (statistical): " in result.stdout
    assert "  → Address bad_ranking: flagged in 4 rating(s)" in lines


def test_digest_attaches_the_dashboard_report_as_a_document(demo_store, run_cli, tmp_path):
    _rate(demo_store)
    (tmp_path / "hilbot.toml").write_text(f"[telegram.digest]\nchats = [{GROUP}]\n")
    with FakeTelegram() as fake:
        fake.group(GROUP, "Team")
        result = run_cli(
            "digest", "--post", "telegram", "--report", "--out", str(tmp_path / "out"),
            env={**fake.env(), "HILBOT_CONFIG": str(tmp_path / "hilbot.toml")},
        )
        assert result.returncode == 0, result.stderr
        [(chat, png, _)] = fake.photos
        [(chat, html, caption)] = fake.documents
    assert chat == GROUP and png.startswith(b"\x89PNG")
    assert html.startswith(b"<!doctype html>") and b"Content-Security-Policy" in html
    assert b"demo-docs-search" in html and caption and "dashboard" in caption
    assert (tmp_path / "out" / "report.html").read_bytes() == html
