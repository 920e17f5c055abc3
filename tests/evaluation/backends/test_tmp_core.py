import pytest
from tests.bot.chat import test_chat_core as core
from bot.demo import build_demo
from evaluation import Store

@pytest.fixture
def pg_demo(pg_url, tmp_path):
    s = Store(tmp_path / "pg", url=pg_url)
    build_demo(s)
    return s

async def test_a(pg_demo):
    await core.test_a_review_runs_through_the_port_alone(pg_demo)

async def test_b(pg_demo):
    await core.test_a_note_answers_its_prompt_and_a_stranger_is_told_their_id(pg_demo)
