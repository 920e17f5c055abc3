"""Judges: the offline ``lexical`` judge, and the LLM judge end to end through the real
``anthropic`` SDK against the local fake Messages API (``tests/fakes/anthropic_api.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
from pathlib import Path
from typing import Iterator

import pytest

from evaluation import Store, load_config
from evaluation.cases import Case, load_cases
from evaluation.judges import PROMPTS, default_judge, get_judge
from evaluation.records import ItemData, Query, SearchResult
from evaluation.runner import RunPlan, execute
from evaluation.targets import OutputsTarget, PythonTarget
from tests.fakes.anthropic_api import FakeAnthropic, Reply, error, schema_responder, tool

ROOT = Path(__file__).resolve().parents[2]
ELIMINATOR = ROOT / "tests" / "fixtures" / "cases" / "eliminator-concealed-counteract.yaml"
BUILTIN_PROMPTS = ROOT / "evaluation" / "prompts"
LABEL = "anthropic/claude-sonnet-5"
CALL_COST = (
    120 * 2.0 + 30 * 10.0
) / 1_000_000  # fake usage 120 in / 30 out at claude-sonnet-5's $2/$10

ASTARTES = "Each friendly **ANGEL OF DEATH** operative can counteract regardless of its order."
SILENT = (
    "Silent: An operative can perform the Shoot action with this weapon while it has a "
    "Conceal order."
)
RETRIEVED = [
    "**Astartes**: Each friendly **ANGEL OF DEATH** operative can counteract regardless of its "
    "order.",
    "**Silent**: An operative can perform the Shoot action with this weapon while it has a Conceal "
    "order.",
]


@contextlib.contextmanager
def serve(monkeypatch: pytest.MonkeyPatch, **kw) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(**kw) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        yield server


def make_config(tmp_path: Path, extra: str = "", name: str = "judge.toml"):
    """Built-in config with no retries, a short timeout and, optionally, more tables."""
    path = tmp_path / name
    path.write_text("[llm]\nmax_retries = 0\ntimeout_s = 5\n" + extra)
    return load_config(path)


def by_prompt(*rules: tuple[str, Reply]):
    """A responder answering by what the prompt contains (calls run concurrently, so no FIFO)."""

    def respond(body):
        prompt = body["messages"][0]["content"]
        for needle, reply in rules:
            if needle in prompt:
                return reply
        return schema_responder(body)

    return respond


def prompt_of(body) -> str:
    return body["messages"][0]["content"]


@pytest.fixture
def eliminator() -> Case:
    (case,) = load_cases(ELIMINATOR)
    return case


def answer_item(case: Case, answer: str, quotes: list[str], contexts: list[str]) -> ItemData:
    return ItemData(
        id=case.id,
        query=case.query,
        answer=answer,
        quotes=quotes,
        contexts=contexts,
        ground_truth=case.ground_truth_answers,
        ground_truth_contexts=case.ground_truth_contexts,
    )


def search_case() -> tuple[Case, ItemData]:
    case = Case(
        "s1",
        Query(
            query="close the burrow session per request",
            intent="Find the session recipe",
            expected=["/a.md", "/b.md"],
        ),
    )
    results = [
        SearchResult(rank=1, path="/a.md", title="A", snippet="open a session"),
        SearchResult(rank=2, path="/x.md", title="X"),
        SearchResult(rank=3, path="/b.md", title="B", snippet="close it after"),
    ]
    return case, ItemData(id="s1", query=case.query, results=results)


# nDCG@5 for relevant results at ranks 1 and 3 of two expected: (1/log2 2 + 1/log2 4) / (1/log2
# 2 + 1/log2 3)
SEARCH_NDCG = round((1 + 0.5) / (1 + 1 / math.log2(3)), 4)


# --------------------------------------------------------------------------- lexical


def test_ai_review_is_opt_in(monkeypatch, config):
    """A key in the environment alone never sends items to the LLM."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert default_judge(config) == "lexical"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    assert default_judge(config) == "lexical"
    opted_in = config.model_copy(update={"judge": config.judge.model_copy(update={"name": "llm"})})
    assert default_judge(opted_in) == "llm"


def test_lexical_answer_item_is_labelled_lexical(monkeypatch, store, config, eliminator):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    judge = get_judge("lexical", config, store)
    assert judge.info().name == "lexical" and judge.info().prompt_hashes == {}
    item = answer_item(
        eliminator,
        "Yes, the Eliminator Sniper can shoot during counteract regardless of its order.",
        [ASTARTES, SILENT],
        RETRIEVED,
    )
    ev = asyncio.run(judge.judge(eliminator, item))
    assert ev.judge == "lexical" and ev.error is None
    assert (
        ev.scores["quote_faithfulness"] == 1.0
    )  # both quotes are verbatim in the retrieved contexts
    assert ev.scores["quote_recall"] == round(20 / 23, 4) and ev.scores["quote_precision"] == 1.0
    assert ev.coverage == [True, True, False]
    assert ev.reasons and all(r.startswith("lexical:") for r in ev.reasons.values())
    assert 0 <= ev.scores["overall"] <= 1
    assert not (store.root / "llm-calls.jsonl").exists()  # nothing sent anywhere


def test_lexical_search_item_scores_and_local_metrics(store, config):
    case, item = search_case()
    ev = asyncio.run(get_judge("lexical", config, store).judge(case, item))
    assert set(ev.scores) == {
        "relevance",
        "ranking",
        "coverage",
        "snippet",
        "overall",
        "ndcg@5",
        "recall@5",
    }
    assert ev.scores["ndcg@5"] == SEARCH_NDCG and ev.scores["recall@5"] == 1.0
    assert all(0 <= v <= 1 for v in ev.scores.values())
    no_expected = Case("s2", Query(query=case.query.query))
    ev2 = asyncio.run(
        get_judge("lexical", config, store).judge(no_expected, item.model_copy(update={"id": "s2"}))
    )
    assert "ndcg@5" not in ev2.scores and "recall@5" not in ev2.scores and "overall" in ev2.scores


def test_lexical_search_over_the_example_target(store, config):
    case = Case(
        "core-09",
        Query(
            query="PoolTimeout no connection available",
            expected=["/docs/burrow/connections/pooling.md", "/docs/burrow/sessions.md"],
        ),
    )
    output = asyncio.run(PythonTarget("examples.docs_search:search", 10)(case))
    item = ItemData(id=case.id, query=case.query, results=output.results)
    ev = asyncio.run(get_judge("lexical", config, store).judge(case, item))
    from evaluation import metrics

    paths = [r.path for r in output.results]
    assert ev.scores["ndcg@5"] == round(metrics.ndcg_at_k(paths, case.query.expected, 5), 4)
    assert ev.scores["recall@5"] == round(metrics.recall_at_k(paths, case.query.expected, 5), 4)


# --------------------------------------------------------------------------- LLM: search


def test_llm_search_item_is_one_call_with_relevance_ranking_coverage_snippet_scores(
    monkeypatch, tmp_path, store
):
    config = make_config(tmp_path)
    case, item = search_case()
    with serve(monkeypatch) as fake:
        fake.queue(
            tool(
                relevance=0.9,
                ranking=0.7,
                coverage=0.6,
                snippet=0.5,
                overall=0.65,
                verdict="PASS",
                confidence=0.8,
                reason="The top hit is the session recipe.",
            )
        )
        judge = get_judge("llm", config, store)
        ev = asyncio.run(judge.judge(case, item))
    assert len(fake.requests) == 1
    body = fake.requests[0]
    assert body["model"] == "claude-sonnet-5" and "temperature" not in body
    assert body["tool_choice"] == {"type": "tool", "name": "record_answer"}
    prompt = prompt_of(body)
    assert "close the burrow session per request" in prompt and "Find the session recipe" in prompt
    assert "/a.md" in prompt and "/x.md" in prompt and "close it after" in prompt
    assert ev.judge == LABEL and ev.error is None
    assert ev.scores == {
        "relevance": 0.9,
        "ranking": 0.7,
        "coverage": 0.6,
        "snippet": 0.5,
        "overall": 0.65,
        "ndcg@5": SEARCH_NDCG,
        "recall@5": 1.0,
    }
    assert ev.verdict == "PASS" and ev.confidence == 0.8
    assert ev.reasons == {"overall": "The top hit is the session recipe."}
    assert ev.cost_usd == pytest.approx(CALL_COST)


# --------------------------------------------------------------------------- LLM: answers


def test_llm_answer_item_gets_three_verdicts_and_their_reasons(
    monkeypatch, tmp_path, store, eliminator
):
    config = make_config(tmp_path)
    item = answer_item(
        eliminator,
        "Yes: Astartes lets it counteract and Silent lets it shoot on Conceal.",
        [ASTARTES, SILENT],
        RETRIEVED,
    )
    responder = by_prompt(
        ("verbatim substring", tool(answer="YES", reason="Both quotes appear in the context.")),
        (
            "grounded in the cited quotes",
            tool(answer="NO", reason="It adds a claim the quotes do not make."),
        ),
        (
            "semantically correct",
            tool(answer="CORRECT", reason="Same conclusion as the ground truth."),
        ),
    )
    with serve(monkeypatch, responder=responder) as fake:
        ev = asyncio.run(get_judge("llm", config, store).judge(eliminator, item))
    assert len(fake.requests) == 3
    prompts = [prompt_of(b) for b in fake.requests]
    quote_prompt = next(p for p in prompts if "verbatim substring" in p)
    assert f"[1] {RETRIEVED[0]}" in quote_prompt and f"[2] {SILENT}" in quote_prompt
    correctness_prompt = next(p for p in prompts if "semantically correct" in p)
    assert eliminator.query.query in correctness_prompt
    assert all(a in correctness_prompt for a in eliminator.ground_truth_answers)
    assert ev.judge == LABEL and ev.error is None
    assert ev.scores["quote_faithfulness"] == 1.0
    assert ev.scores["explanation_faithfulness"] == 0.0
    assert ev.scores["answer_correctness"] == 1.0
    assert ev.scores["quote_recall"] == round(20 / 23, 4) and ev.scores["quote_precision"] == 1.0
    # .30·1 (correctness) + .30·20/23 (recall) + .20·0 (explanation) + .15·1 + .05·1 = .5 + .26087
    assert ev.scores["overall"] == round(0.5 + 0.3 * 20 / 23, 4)
    assert ev.verdict == "PASS"
    assert ev.reasons == {
        "quote_faithfulness": "Both quotes appear in the context.",
        "explanation_faithfulness": "It adds a claim the quotes do not make.",
        "answer_correctness": "Same conclusion as the ground truth.",
    }
    assert ev.coverage == [True, True, False]
    assert ev.cost_usd == pytest.approx(3 * CALL_COST)


def test_llm_answer_calls_only_the_judges_that_apply(monkeypatch, tmp_path, store, eliminator):
    config = make_config(tmp_path)
    bare = Case("bare", Query(query="anything?"))

    async def scenario(judge, fake):
        # quotes but no retrieved contexts: no quote-faithfulness call
        ev = await judge.judge(eliminator, answer_item(eliminator, "Answer one.", [ASTARTES], []))
        assert len(fake.requests) == 2 and set(ev.scores) >= {
            "explanation_faithfulness",
            "answer_correctness",
        }
        assert "quote_faithfulness" not in ev.scores
        # no quotes: only answer correctness; recall is 0 (nothing quoted), precision undefined
        ev = await judge.judge(eliminator, answer_item(eliminator, "Answer two.", [], RETRIEVED))
        assert len(fake.requests) == 3, ev.error
        assert ev.scores["answer_correctness"] == 1.0 and ev.scores["quote_recall"] == 0.0
        assert "quote_precision" not in ev.scores and "explanation_faithfulness" not in ev.scores
        # nothing to check against: no call, no overall
        ev = await judge.judge(bare, ItemData(id="bare", query=bare.query, answer="Answer three."))
        assert len(fake.requests) == 3 and ev.scores == {} and ev.error is None

    with serve(monkeypatch) as fake:
        asyncio.run(scenario(get_judge("llm", config, store), fake))


# --------------------------------------------------------------------- header: name, params, hashes


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_header_records_judge_name_params_and_prompt_hashes(
    monkeypatch, tmp_path, store, eliminator
):
    config = make_config(tmp_path)
    with serve(monkeypatch):
        judge = get_judge("llm", config, store)
        info = judge.info()
        assert info.name == LABEL
        assert info.params["model"] == "claude-sonnet-5" and info.params["provider"] == "anthropic"
        assert info.params["max_tokens"] == 400
        assert info.params["metric_weights"] == config.judge.metric_weights
        assert info.params["priority_weights"] == {"critical": 10, "supporting": 3}
        assert set(info.prompt_hashes) == set(PROMPTS)
        for name in PROMPTS:
            assert info.prompt_hashes[name] == _sha(
                (BUILTIN_PROMPTS / f"{name}.txt").read_text("utf-8")
            )
        out = tmp_path / "out.jsonl"
        out.write_text(
            '{"id": "eliminator-concealed-counteract", "answer": "Yes.", "quotes": []}\n'
        )
        plan = RunPlan("llm-run", "cases", "answer", [eliminator], OutputsTarget(out), judge)
        run = asyncio.run(execute(store, plan))
    header = store.load_run("llm-run").header
    assert header.judge.name == LABEL and header.judge.prompt_hashes == info.prompt_hashes
    assert header.judge.params["model"] == "claude-sonnet-5"
    assert run.items[0].evaluation.judge == LABEL


def test_prompts_dir_override_changes_the_hash_and_the_prompt_sent(
    monkeypatch, tmp_path, store, eliminator
):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    custom = (
        "ZEBRA-RUBRIC: judge the rules answer.\nQ: "
        "{query}\nTruth:\n{ground_truth}\nGiven:\n{answer}\nAnswer CORRECT or INCORRECT with a "
        "one-sentence reason."
    )
    (prompts / "answer_correctness.txt").write_text(custom)
    config = make_config(tmp_path, f"[judge]\nprompts_dir = '{prompts}'\n")
    default = make_config(tmp_path, name="plain.toml")  # same settings, built-in prompts
    with serve(monkeypatch) as fake:
        judge = get_judge("llm", config, store)
        hashes = judge.info().prompt_hashes
        builtin = get_judge("llm", default, store).info().prompt_hashes
        assert hashes["answer_correctness"] == _sha(custom) != builtin["answer_correctness"]
        assert {k: v for k, v in hashes.items() if k != "answer_correctness"} == {
            k: v for k, v in builtin.items() if k != "answer_correctness"
        }
        asyncio.run(judge.judge(eliminator, answer_item(eliminator, "Yes it can.", [], [])))
    (body,) = fake.requests
    assert prompt_of(body).startswith(
        "ZEBRA-RUBRIC: judge the rules answer.\nQ: Can the Eliminator Sniper"
    )


# --------------------------------------------------------------------------- failures and the cache


def _cases() -> list[Case]:
    (base,) = load_cases(ELIMINATOR)
    out = []
    for tag in ("alpha", "POISON", "SERVERDOWN", "MALFORMED", "omega"):
        out.append(
            Case(
                tag,
                Query(query=f"{tag}: {base.query.query}"),
                base.ground_truth_answers,
                base.ground_truth_contexts,
            )
        )
    return out


def _outputs(tmp_path: Path) -> Path:
    import json

    path = tmp_path / "outputs.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": c.id,
                    "answer": f"{c.id} says yes",
                    "quotes": [ASTARTES, SILENT],
                    "contexts": RETRIEVED,
                }
            )
            + "\n"
            for c in _cases()
        )
    )
    return path


def test_a_failed_judgment_is_recorded_on_its_item_and_the_run_finishes(
    monkeypatch, tmp_path, store
):
    config = make_config(tmp_path)
    responder = by_prompt(
        ("POISON", Reply(text="garbage, not a tool call")),
        ("SERVERDOWN", error(500, "api_error")),
        ("MALFORMED", tool(answer="MAYBE", reason="hmm")),
    )
    with serve(monkeypatch, responder=responder) as fake:
        plan = RunPlan(
            "failing",
            "cases",
            "answer",
            _cases(),
            OutputsTarget(_outputs(tmp_path)),
            get_judge("llm", config, store),
        )
        asyncio.run(execute(store, plan))
    run = store.load_run("failing")
    assert run.summary is not None and run.summary.item_count == 5
    items = {i.id: i for i in run.items}
    for bad, words in (
        ("POISON", "without the record_answer tool"),
        ("SERVERDOWN", "500"),
        ("MALFORMED", "malformed"),
    ):
        ev = items[bad].evaluation
        assert ev.error and words in ev.error, (bad, ev.error)
        assert (
            "overall" not in ev.scores
            and set(ev.scores) <= {"quote_precision", "quote_recall"}
            and ev.judge == LABEL
        )
        assert items[bad].error is None  # the target was fine; judging failed
    for good in ("alpha", "omega"):
        ev = items[good].evaluation
        assert (
            ev.error is None and ev.scores["answer_correctness"] == 1.0 and "overall" in ev.scores
        )
    # 500 with max_retries = 0: exactly one request per SERVERDOWN call, no retries
    assert 1 <= sum("SERVERDOWN" in prompt_of(b) for b in fake.requests) <= 3
    assert run.summary.averageScores["overall"] == pytest.approx(
        (items["alpha"].evaluation.scores["overall"] + items["omega"].evaluation.scores["overall"])
        / 2,
        abs=1e-4,
    )


def test_rerunning_the_same_cases_makes_no_new_requests(monkeypatch, tmp_path, store):
    config = make_config(tmp_path)
    outputs = _outputs(tmp_path)
    with serve(monkeypatch) as fake:
        first = asyncio.run(
            execute(
                store,
                RunPlan(
                    "r1",
                    "cases",
                    "answer",
                    _cases(),
                    OutputsTarget(outputs),
                    get_judge("llm", config, store),
                ),
            )
        )
        sent = len(fake.requests)
        assert sent == 5 * 3
        second = asyncio.run(
            execute(
                Store(store.root),
                RunPlan(
                    "r2",
                    "cases",
                    "answer",
                    _cases(),
                    OutputsTarget(outputs),
                    get_judge("llm", config, Store(store.root)),
                ),
            )
        )
        assert len(fake.requests) == sent  # every judgment came from the cache
    assert {i.id: i.evaluation.scores for i in first.items} == {
        i.id: i.evaluation.scores for i in second.items
    }
    assert all(i.evaluation.cost_usd == pytest.approx(3 * CALL_COST) for i in first.items)
    assert all(i.evaluation.cost_usd == 0.0 for i in second.items)
