"""The inspect_ai connector against real logs inspect_ai itself wrote (``tests/inspect_logs.py``).

Pulling maps each sample (and epoch) to an item with its origin and its scorers' scores; pushing
writes each label as inspect_ai's own score edit, read back here with inspect_ai.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from evaluation.connectors.base import (
    ConnectorError,
    Label,
    Origin,
    Sent,
    remote_id,
    sinks,
    sources,
)
from evaluation.connectors.inspect_eval import InspectSinkSettings, InspectSource, make, pull
from evaluation.connectors.inspect_eval._items import fraction
from tests.auxil.inspect_logs import IDS, SYSTEM, write_logs

ROOT = Path(__file__).resolve().parents[3]
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
FIVE = ["excellent", "good", "ok", "poor", "bad"]
ODD = "q-2/odd id ü"


@pytest.fixture(scope="session")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The two logs, written once per session (about a second each)."""
    return write_logs(tmp_path_factory.mktemp("inspect-logs"))


@pytest.fixture
def log(logs: dict[str, Path], tmp_path: Path) -> Path:
    """A copy of the one-epoch log that a test may write beside or over."""
    return _copy(logs["single"], tmp_path)


def _copy(path: Path, where: Path) -> Path:
    target = where / "logs" / path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, target)
    return target


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _items(path: Path, **settings: Any) -> dict[str, Any]:
    return {item.id: item for item in pull(InspectSource(log=str(path), **settings), {}).items}


def _label(
    item: Any,
    dimension: str = "overall",
    *,
    reviewer: str = "telegram:1",
    name: str | None = "Ann",
    judgment: str = "good",
    score: float | None = 0.75,
    options: list[str] | None = None,
    version: str = "v1",
    note: str | None = "reads well",
    gold: bool = False,
    **more: Any,
) -> Label:
    options = FIVE if options is None else options
    number = float(5 - options.index(judgment)) if judgment in options else None
    who = "gold" if gold else reviewer
    return Label(
        run_id="run-1",
        item_id=item.id,
        dimension=dimension,
        reviewer=reviewer,
        reviewer_name=name,
        judgment=judgment,
        score=score,
        number=number,
        options=options,
        note=note,
        gold=gold,
        origin=Origin(**item.features["origin"]),
        remote_id=remote_id("run-1", item.id, dimension, who),
        version=version,
        timestamp=WHEN,
        **more,
    )


def _sent(*labels: Label) -> list[Sent]:
    return [Sent(remote_id=x.remote_id, version=x.version) for x in labels]


def _read(path: Path) -> Any:
    from inspect_ai.log import read_eval_log

    return read_eval_log(str(path))


def _sample(log: Any, sample_id: Any, epoch: int = 1) -> Any:
    return next(s for s in log.samples if s.id == sample_id and s.epoch == epoch)


def _output(path: Path) -> Path:
    return path.with_name(f"{path.stem}.hilbot{path.suffix}")


def _one_line(exc: ConnectorError, path: Path) -> None:
    text = str(exc)
    assert path.name in text and " — " in text
    assert "\n" not in text and "Traceback" not in text


# ------------------------------------------------------------------------------- the package


def test_importing_the_connector_does_not_import_inspect_ai() -> None:
    code = (
        "import sys, evaluation.connectors.inspect_eval as m; "
        "assert 'inspect_ai' not in sys.modules, 'inspect_ai imported'"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_it_is_registered_as_a_source_and_a_batching_sink() -> None:
    assert sources.get("inspect_ai").settings is InspectSource
    spec = sinks.get("inspect_ai")
    assert spec.settings is InspectSinkSettings and spec.batch >= 100 and spec.rate_per_s >= 100
    with pytest.raises(ValueError):
        InspectSource(log="x.eval", queue="q")  # type: ignore[call-arg]
    with pytest.raises(ConnectorError, match="in_place and out"):
        make(InspectSinkSettings(in_place=True, out="x.eval"), {})


# ---------------------------------------------------------------------------------------- pull


def test_each_sample_becomes_an_item_with_its_origin(logs: dict[str, Path]) -> None:
    path = logs["single"]
    pulled = pull(InspectSource(log=str(path)), {})
    assert pulled.kind == "answer" and pulled.set_name == "tiny_qa" and str(path) in pulled.source
    assert [i.id for i in pulled.items] == [str(x) for x in IDS]
    first, chat, odd = pulled.items
    assert first.query.query == "What is the capital of France?" and first.query.category == "geo"
    assert first.answer == "The capital of France is Paris." and first.model == "mockllm/model"
    assert first.query.expected_answer == "Paris" and first.ground_truth == ["Paris"]
    assert chat.query.query == "What is 2 + 2?" and chat.ground_truth == ["4", "four"]
    assert chat.features["messages"][0] == {"role": "system", "text": SYSTEM}
    assert chat.features["level"] == 1 and chat.usage["output_tokens"] == 5
    assert "\u202e" in (odd.answer or "") and "日本語" in odd.query.query
    origin = Origin(**chat.features["origin"])
    assert (origin.tool, origin.kind, origin.id) == ("inspect_ai", "sample", ODD)
    assert origin.extra["log"] == str(path.absolute()) and origin.extra["epoch"] == 1
    assert origin.extra["sample_id"] == ODD and origin.extra["task"] == "tiny_qa"
    assert origin.extra["sample_uuid"] and origin.extra["eval_id"]
    assert Origin(**first.features["origin"]).extra["sample_id"] == 1  # the raw id, an int
    json.dumps([i.model_dump(mode="json") for i in pulled.items])  # a run file can hold them


def test_the_scorers_scores_become_the_ai_evaluation(logs: dict[str, Path]) -> None:
    pulled = pull(InspectSource(log=str(logs["single"])), {})
    assert pulled.judge == "includes"  # the log's headline scorer
    right, wrong, _ = pulled.items
    assert right.evaluation.scores == {
        "includes": 1.0,
        "graded": 0.9,
        "fluent": 1.0,
        "short": 0.0,
        "overall": 1.0,
    }
    assert wrong.evaluation.scores["overall"] == 0.0 and wrong.evaluation.scores["short"] == 1.0
    assert (right.evaluation.verdict, wrong.evaluation.verdict) == ("PASS", "FAIL")
    assert right.evaluation.judge == "includes" and right.evaluation.rationale == right.answer
    assert right.evaluation.reasons["graded"] == "graded: hit"
    assert right.features["scorer_answers"]["graded"] == "The capital of Franc"
    assert not {"includes", "graded", "overall"} & set(right.features)  # no AI score in sight


def test_the_judging_scorer_can_be_chosen(logs: dict[str, Path]) -> None:
    graded = pull(InspectSource(log=str(logs["single"]), scorer="graded"), {})
    right, wrong, _ = graded.items
    assert graded.judge == "graded" and right.evaluation.scores["overall"] == 0.9
    assert wrong.evaluation.scores["overall"] == 0.2
    assert right.evaluation.verdict is None and right.evaluation.rationale == "graded: hit"
    short = _items(logs["single"], scorer="short")["1"]  # one key of a dict-valued scorer
    assert short.evaluation.scores["overall"] == 0.0 and short.evaluation.verdict == "FAIL"
    aspects = _items(logs["single"], scorer="aspects")["1"]  # the mean of its keys
    assert aspects.evaluation.scores["overall"] == 0.5
    with pytest.raises(ConnectorError, match="no scorer 'llm_judge'.*includes, graded"):
        pull(InspectSource(log=str(logs["single"]), scorer="llm_judge"), {})


def test_epochs_are_items_of_their_own_and_can_be_chosen_and_limited(logs: dict[str, Path]) -> None:
    every = _items(logs["epochs"])
    assert list(every) == ["1#1", "1#2", f"{ODD}#1", f"{ODD}#2", "3#1", "3#2"]
    assert Origin(**every["3#2"].features["origin"]).extra["epoch"] == 2
    assert list(_items(logs["epochs"], epoch=2)) == ["1#2", f"{ODD}#2", "3#2"]
    assert list(_items(logs["epochs"], limit=3)) == ["1#1", "1#2", f"{ODD}#1"]
    assert list(_items(logs["epochs"], epoch=1, limit=1)) == ["1#1"]
    with pytest.raises(ConnectorError, match="2 epoch"):
        pull(InspectSource(log=str(logs["epochs"]), epoch=3), {})


def test_a_json_log_pulls_like_an_eval_log(logs: dict[str, Path], tmp_path: Path) -> None:
    from inspect_ai.log import write_eval_log

    as_json = tmp_path / "run.json"
    write_eval_log(_read(logs["single"]), str(as_json))
    from_json, from_eval = _items(as_json), _items(logs["single"])
    assert list(from_json) == list(from_eval)
    assert from_json["1"].evaluation == from_eval["1"].evaluation
    assert from_json["1"].answer == from_eval["1"].answer
    assert _items(as_json, limit=1).keys() == {"1"}


def test_a_value_with_no_0_1_reading_is_kept_but_not_scored(log: Path) -> None:
    from inspect_ai.log import edit_score, write_eval_log
    from inspect_ai.scorer import ScoreEdit

    whole = _read(log)
    edit_score(whole, 1, "graded", ScoreEdit(value=7), epoch=1)  # a 1-10 grade
    edit_score(whole, 1, "listy", ScoreEdit(value=[1, 2]), epoch=1)
    write_eval_log(whole, str(log))
    evaluation = _items(log)["1"].evaluation
    assert "graded" not in evaluation.scores and "listy" not in evaluation.scores
    assert evaluation.model_extra == {"inspect_values": {"graded": 7, "listy": [1, 2]}}


def test_a_failed_unscored_sample_is_an_item_with_its_error(log: Path) -> None:
    from inspect_ai.log import EvalError, write_eval_log

    whole = _read(log)
    failed = _sample(whole, "3")
    failed.scores, failed.error = (
        None,
        EvalError(message="boom: timeout", traceback="", traceback_ansi=""),
    )
    write_eval_log(whole, str(log))
    item = _items(log)["3"]
    assert item.error == "boom: timeout" and item.evaluation.scores == {}
    assert item.evaluation.verdict is None and item.evaluation.rationale is None


def test_a_log_missing_samples_it_lists_pulls_those_it_has(log: Path) -> None:
    from inspect_ai.log import write_eval_log

    whole = _read(log)
    whole.samples = [_sample(whole, "3")]  # as a log cut short holds them
    write_eval_log(whole, str(log))
    assert list(_items(log)) == ["3"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("C", 1.0),
        ("I", 0.0),
        ("P", 0.5),
        ("N", 0.0),
        (True, 1.0),
        (False, 0.0),
        (0.25, 0.25),
        (1, 1.0),
        ("yes", 1.0),
        ("No", 0.0),
        ("0.4", 0.4),
        (7, None),
        (-0.1, None),
        (float("nan"), None),
        ("Q", None),
        ("", None),
        (None, None),
        ([1], None),
    ],
)
def test_score_values_read_as_inspect_ai_metrics_read_them(value: Any, expected: Any) -> None:
    assert fraction(value) == expected


@pytest.mark.parametrize("content", [b"", b"not a zip", b"PK\x03\x04" + b"\x00" * 40, "half"])
def test_a_corrupt_log_is_one_line_naming_the_file(
    logs: dict[str, Path], tmp_path: Path, content: Any
) -> None:
    path = tmp_path / "broken.eval"
    data = logs["single"].read_bytes()
    path.write_bytes(data[: len(data) // 2] if content == "half" else content)
    with pytest.raises(ConnectorError) as caught:
        pull(InspectSource(log=str(path)), {})
    _one_line(caught.value, path)
    assert not caught.value.transient


@pytest.mark.parametrize(
    "name", ["missing.eval", "notes.txt", "dir.eval", "other.json", "list.json"]
)
def test_a_path_that_is_no_log_is_one_line_naming_it(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name == "dir.eval":
        path.mkdir()
    elif name != "missing.eval":
        path.write_text({"notes.txt": "hi", "other.json": '{"hello": "world"}'}.get(name, "[1, 2"))
    with pytest.raises(ConnectorError) as caught:
        pull(InspectSource(log=str(path)), {})
    _one_line(caught.value, path)


async def test_pulling_from_inside_an_event_loop_leaves_the_loop_alone(
    logs: dict[str, Path],
) -> None:
    loop = asyncio.get_running_loop()
    assert len(pull(InspectSource(log=str(logs["single"]), limit=1), {}).items) == 1
    assert not hasattr(loop, "_nest_patched")  # inspect_ai ran on a thread of its own


# ---------------------------------------------------------------------------------------- push


def test_labels_become_human_score_edits_in_a_copy_beside_the_log(log: Path) -> None:
    items = _items(log)
    before = _digest(log)
    overall = _label(items["1"], note="spot on ✓")
    correct = _label(
        items[ODD],
        "correct",
        reviewer="slack:U2",
        name=None,
        judgment="no",
        score=0.0,
        options=["yes", "no"],
        note=None,
    )
    sink = make(InspectSinkSettings(), {})
    sent = sink.send([overall, correct])
    assert sent == _sent(overall, correct)
    assert _digest(log) == before  # the original is never touched
    written = _read(_output(log))
    score = _sample(written, 1).scores["human_overall"]
    assert (score.value, score.answer, score.explanation) == (0.75, "good", "spot on ✓")
    provenance = score.history[-1].provenance
    assert provenance.author == "Ann (telegram:1)" and provenance.reason == "spot on ✓"
    assert provenance.timestamp == WHEN and provenance.metadata["remote_id"] == overall.remote_id
    kept = score.metadata["hilbot"]["labels"][overall.remote_id]
    assert (kept["number"], kept["reviewer"], kept["version"]) == (4.0, "telegram:1", "v1")
    grade = _sample(written, ODD).scores["human_correct"]
    assert grade.value == "I" and grade.answer == "no"
    assert grade.history[-1].provenance.author == "slack:U2"
    assert "human_overall" not in _sample(written, ODD).scores
    assert _sample(written, 1).scores["includes"].value == "C"  # the AI's scores stay
    assert any(
        e.event == "score_edit" and e.score_name == "human_overall"
        for e in _sample(written, 1).events
    )
    metrics = {s.name: s.metrics for s in written.results.scores}
    assert metrics["human_overall"]["accuracy"].value == 0.75
    assert metrics["includes"]["accuracy"].value == pytest.approx(2 / 3)
    assert sink.confirm(sent) == [overall.remote_id, correct.remote_id]
    names = sorted(p.name for p in log.parent.iterdir())
    assert names == sorted([log.name, _output(log).name])  # no temporary file left


def test_in_place_writes_the_original_log_atomically(log: Path) -> None:
    label = _label(_items(log)["3"])
    sink = make(InspectSinkSettings(in_place=True), {})
    assert sink.confirm(sink.send([label])) == [label.remote_id]
    assert [p.name for p in log.parent.iterdir()] == [log.name]
    assert _sample(_read(log), "3").scores["human_overall"].value == 0.75


def test_out_names_a_file_or_a_directory(log: Path, tmp_path: Path) -> None:
    label = _label(_items(log)["1"])
    target = tmp_path / "reviewed.eval"
    make(InspectSinkSettings(out=str(target)), {}).send([label])
    assert _sample(_read(target), 1).scores["human_overall"].value == 0.75
    folder = tmp_path / "out"
    folder.mkdir()
    make(InspectSinkSettings(out=str(folder)), {}).send([label])
    assert (folder / _output(log).name).exists() and not _output(log).exists()
    nowhere = InspectSinkSettings(out=str(tmp_path / "nowhere" / "x.eval"))
    with pytest.raises(ConnectorError, match="does not exist"):
        make(nowhere, {}).send([label])


def test_sending_again_changes_nothing_and_a_correction_updates_the_same_score(log: Path) -> None:
    item = _items(log)["1"]
    sink = make(InspectSinkSettings(), {})
    first = _label(item)
    sink.send([first])
    before = _digest(_output(log))
    assert sink.send([first]) == _sent(first)
    assert make(InspectSinkSettings(), {}).send([first]) == _sent(first)  # a sink made afresh
    assert _digest(_output(log)) == before
    corrected = _label(item, judgment="poor", score=0.25, version="v2", note="missed the point")
    sent = sink.send([corrected])
    score = _sample(_read(_output(log)), 1).scores["human_overall"]
    assert list(score.metadata["hilbot"]["labels"]) == [first.remote_id]
    assert (score.value, score.answer, score.explanation) == (0.25, "poor", "missed the point")
    assert [h.value for h in score.history] == [0.75, 0.25]  # inspect_ai keeps each version
    assert sink.confirm(sent) == [first.remote_id]
    assert sink.confirm(_sent(first)) == []  # the older version is not there any more


def test_labels_accumulate_in_the_output_across_sinks_and_sends(log: Path) -> None:
    items = _items(log)
    make(InspectSinkSettings(), {}).send([_label(items["1"])])
    make(InspectSinkSettings(), {}).send([_label(items["3"], "fluency", judgment="ok", score=0.5)])
    written = _read(_output(log))
    assert _sample(written, 1).scores["human_overall"].value == 0.75
    assert _sample(written, "3").scores["human_fluency"].value == 0.5


def test_a_run_pulled_from_the_copy_writes_back_into_the_copy(log: Path) -> None:
    make(InspectSinkSettings(), {}).send([_label(_items(log)["1"])])
    copy = _output(log)
    make(InspectSinkSettings(), {}).send([_label(_items(copy)["3"], "fluency")])
    assert sorted(p.name for p in log.parent.iterdir()) == sorted([log.name, copy.name])
    written = _read(copy)
    assert {"human_overall", "human_fluency"} <= set(_sample(written, 1).scores) | set(
        _sample(written, "3").scores
    )


def test_reviewers_share_a_dimensions_score(log: Path) -> None:
    items = _items(log)
    sink = make(InspectSinkSettings(), {})
    bob: dict[str, Any] = {"reviewer": "slack:B", "name": "Bob"}
    ann, bobs = (
        _label(items["1"]),
        _label(items["1"], judgment="poor", score=0.25, note="too short", **bob),
    )
    yes_no = ["yes", "no"]
    yes = _label(items["3"], "correct", judgment="yes", score=1.0, options=yes_no)
    no = _label(items["3"], "correct", judgment="no", score=0.0, options=yes_no, **bob)
    sent = sink.send([ann, bobs, yes, no])
    written = _read(_output(log))
    both = _sample(written, 1).scores["human_overall"]
    assert both.value == 0.5 and both.answer == "Ann: good; Bob: poor"
    assert both.explanation == "Ann: reads well\nBob: too short"
    assert len(both.metadata["hilbot"]["labels"]) == 2
    assert _sample(written, "3").scores["human_correct"].value == "P"  # a tie of grades
    assert sorted(sink.confirm(sent)) == sorted(x.remote_id for x in (ann, bobs, yes, no))


def test_a_gold_label_has_its_own_score_and_names_rename(log: Path) -> None:
    item = _items(log)["1"]
    sink = make(InspectSinkSettings(names={"overall": "expert"}), {})
    gold = _label(item, judgment="excellent", score=1.0, gold=True, note="agreed")
    sink.send([_label(item), gold])
    scores = _sample(_read(_output(log)), 1).scores
    assert scores["expert"].value == 0.75 and scores["expert_gold"].value == 1.0
    assert scores["expert_gold"].metadata["hilbot"]["gold"] is True
    assert "human_overall" not in scores


def test_confirm_misses_a_label_edited_away_and_a_resend_restores_it(
    log: Path, tmp_path: Path
) -> None:
    from inspect_ai.log import edit_score, write_eval_log
    from inspect_ai.scorer import ScoreEdit

    items = _items(log)
    a, b = _label(items["1"]), _label(items["3"])
    sink = make(InspectSinkSettings(), {})
    sent = sink.send([a, b])
    written = _read(_output(log))
    edit_score(written, 1, "human_overall", ScoreEdit(value=0.1), epoch=1)  # someone changed it
    write_eval_log(written, str(_output(log)))
    assert sink.confirm(sent) == [b.remote_id]
    sink.send([a])
    assert sink.confirm(sent) == [a.remote_id, b.remote_id]
    assert make(InspectSinkSettings(), {}).confirm(sent) == []  # a fresh sink: no copy known
    folder = tmp_path / "out"
    folder.mkdir()
    make(InspectSinkSettings(out=str(folder)), {}).send([a])
    fresh = make(InspectSinkSettings(out=str(folder)), {})
    assert fresh.confirm(sent) == [a.remote_id]  # but one with out reads it there


def test_a_log_gone_between_pull_and_push_is_a_permanent_error(log: Path) -> None:
    label = _label(_items(log)["1"])
    log.unlink()
    with pytest.raises(ConnectorError) as caught:
        make(InspectSinkSettings(), {}).send([label])
    _one_line(caught.value, log)
    assert not caught.value.transient and not _output(log).exists()


def test_a_log_corrupted_after_the_pull_is_an_error_and_is_left_alone(log: Path) -> None:
    label = _label(_items(log)["1"])
    log.write_bytes(b"PK\x03\x04 garbage")
    with pytest.raises(ConnectorError) as caught:
        make(InspectSinkSettings(in_place=True), {}).send([label])
    _one_line(caught.value, log)
    assert log.read_bytes() == b"PK\x03\x04 garbage"
    assert [p.name for p in log.parent.iterdir()] == [log.name]


def test_labels_that_cannot_go_to_the_log_are_refused(
    log: Path, logs: dict[str, Path], tmp_path: Path
) -> None:
    item = _items(log)["1"]
    sink = make(InspectSinkSettings(), {})
    where = item.features["origin"]
    nowhere = {**where["extra"], "sample_id": "404", "sample_uuid": "nope"}
    lost = _label(item).model_copy(
        update={"origin": Origin(**{**where, "id": "404", "extra": nowhere})}
    )
    with pytest.raises(ConnectorError, match="'404'.*not in the log"):
        sink.send([lost])
    foreign = Origin(tool="langfuse", kind="trace", id="t1")
    with pytest.raises(ConnectorError, match="did not come from an inspect_ai log"):
        sink.send([_label(item).model_copy(update={"origin": foreign})])
    assert sink.send([lost, _label(item)]) == _sent(_label(item))  # the others go
    other = _copy(logs["epochs"], tmp_path / "second")
    one_file = make(InspectSinkSettings(out=str(tmp_path / "one.eval")), {})
    mine, theirs = _label(item), _label(_items(other)["1#1"])
    assert one_file.send([mine, theirs]) == _sent(mine)  # the first log's
    with pytest.raises(ConnectorError, match="two logs"):
        one_file.send([theirs])
    assert _read(tmp_path / "one.eval").eval.task == "tiny_qa"


def test_another_eval_in_the_output_file_is_not_overwritten(
    log: Path, logs: dict[str, Path]
) -> None:
    shutil.copy2(logs["epochs"], _output(log))  # a different eval under the output's name
    before = _digest(_output(log))
    with pytest.raises(ConnectorError, match="another eval"):
        make(InspectSinkSettings(), {}).send([_label(_items(log)["1"])])
    assert _digest(_output(log)) == before


def test_an_epoch_label_edits_that_epoch_only(logs: dict[str, Path], tmp_path: Path) -> None:
    path = _copy(logs["epochs"], tmp_path)
    label = _label(_items(path)[f"{ODD}#2"])
    make(InspectSinkSettings(in_place=True), {}).send([label])
    written = _read(path)
    assert _sample(written, ODD, 2).scores["human_overall"].value == 0.75
    assert "human_overall" not in _sample(written, ODD, 1).scores


def test_hostile_labels_round_trip(log: Path) -> None:
    item = _items(log)[ODD]
    note = "\u202e évil \x00 " + "🚀" * 50_000
    dimension = 'tone/≠ "quoted"'
    label = _label(
        item,
        dimension,
        reviewer="slack:U\u200b1",
        name="Zoë <script>",
        note=note,
        judgment="weird ✓",
        score=None,
        options=[],
        correction="x" * 10_000,
    )
    sink = make(InspectSinkSettings(), {})
    assert sink.confirm(sink.send([label])) == [label.remote_id]
    score = _sample(_read(_output(log)), ODD).scores[f"human_{dimension}"]
    assert score.value == "weird ✓" and score.explanation == note
    assert score.history[-1].provenance.author == "Zoë <script> (slack:U\u200b1)"


# ------------------------------------------------------------------------------ through hilbot


def test_a_pulled_run_pushes_through_the_outbox(log: Path, store: Any, config: Any) -> None:
    from evaluation.connectors.outbox import outbox, push_labels
    from evaluation.connectors.pulling import pull_run

    report = pull_run(store, config, "inspect_ai", {"log": str(log)}, {})
    run = store.load_run(report.run_id)
    assert report.added == 3 and run.header.set == "tiny_qa"
    assert run.header.judge.name == "includes"
    dimension = run.header.dimensions[0]
    labels = [_label(item, dimension) for item in run.items]
    settings = InspectSinkSettings()
    pushed = push_labels(store, "inspect_ai", "inspect_ai", settings, {}, labels)
    assert (pushed.sent, pushed.confirmed, pushed.failed) == (3, 3, [])
    assert {s.state for s in outbox(store, "inspect_ai").values()} == {"confirmed"}
    again = push_labels(store, "inspect_ai", "inspect_ai", settings, {}, labels)
    assert (again.sent, again.confirmed) == (0, 0)
    assert all(f"human_{dimension}" in s.scores for s in _read(_output(log)).samples)


def test_the_written_log_opens_in_inspect_ai_tools(log: Path) -> None:
    make(InspectSinkSettings(), {}).send([_label(_items(log)["1"])])
    inspect = str(Path(sys.executable).parent / "inspect")
    done = subprocess.run(
        [inspect, "log", "dump", str(_output(log))],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert '"human_overall"' in done.stdout
