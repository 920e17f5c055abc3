"""``hilbot triage --apply`` (and ``-u``/``-i``) attacked: links, races, crafted runs, full disks.

Each test builds real trees in ``tmp_path``, triages them with the real command, records the
humans' accepts in the ratings log as a review would, and then changes the world the way the
adversarial review did: a directory of the expected tree swapped for a link, a run file written
by hand, the file size limit lowered, a directory made immutable. What ``--apply`` may do is
write inside the expected tree and nowhere else, never in the data directory, and say which file
it refused and why.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from evaluation import Store
from evaluation.records import (
    ItemData,
    Query,
    QueryEvaluation,
    Rating,
    Reviewer,
    RunHeader,
    RunSummary,
)
from tests.auxil.cli import BUG
from tests.bot.test_triage import write_trees
from tests.conftest import HILBOT

ANN = Reviewer(platform="terminal", id="ann")
_keys = count()


def accept_all(store: Store, run_id: str) -> None:
    """Every item of the run accepted by a human, as a review records it."""
    run = store.load_run(run_id)
    store.ratings.append_many(
        Rating(
            run_id=run_id,
            item_id=item.id,
            dimension="change",
            reviewer=ANN,
            channel="terminal",
            idempotency_key=f"k-{next(_keys)}",
            judgment="accept",
            score=1.0,
        )
        for item in run.items
    )


def triage(run_cli, expected: Path, actual: Path, *args: str, env: dict | None = None) -> str:
    """A triage of the two trees with every change sent to a human; the run's id."""
    result = run_cli("triage", str(expected), str(actual), *args, env=env)
    assert result.returncode in (0, 1) and BUG not in result.stderr, result.stderr
    line = result.stdout.strip().splitlines()[-1]
    assert "hilbot review " in line, result.stdout
    return line.rsplit("hilbot review ", 1)[1].strip()


@pytest.fixture
def humans(tmp_path: Path) -> Path:
    """A hilbot.toml that sends every change to a human (no rule decides, no audit sample)."""
    (tmp_path / "hilbot.toml").write_text('[triage]\naudit_share = 0.0\nrequire_human = ["**"]\n')
    return tmp_path / "hilbot.toml"


def snapshot(folder: Path) -> dict[str, Any]:
    """Every entry under ``folder`` (no link followed): its kind, bytes or link target, and mode."""
    out: dict[str, Any] = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        rel = path.relative_to(folder).as_posix()
        if stat.S_ISLNK(info.st_mode):
            out[rel] = ("link", os.readlink(path))
        elif stat.S_ISDIR(info.st_mode):
            out[rel] = ("dir", stat.S_IMODE(info.st_mode))
        else:
            out[rel] = ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
    return out


def craft_run(store: Store, run_id: str, items: list[dict[str, Any]]) -> Path:
    """A triage run file written by hand: each item's ``expected``, ``actual`` and ``features``."""
    header = RunHeader(
        run_id=run_id, set="triage", kind="change", source="hilbot triage", dimensions=["change"]
    )
    records: list[Any] = [header.model_dump(mode="json")]
    for n, spec in enumerate(items):
        data = ItemData(
            id=spec.get("id", f"c{n}"),
            query=Query(query="q", expected_answer=spec.get("expected")),
            answer=spec.get("actual"),
        )
        record = QueryEvaluation(run_id=run_id, data=data).model_dump(mode="json")
        record["data"]["features"] = spec["features"]
        records.append(record)
    records.append(RunSummary(run_id=run_id, item_count=len(items)).model_dump(mode="json"))
    path = store.run_path(run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def features(
    path: str, expected_root: Any, actual_root: Any, status: str = "changed", **extra: Any
) -> dict[str, Any]:
    return {
        "path": path,
        "status": status,
        "source": "snapshots",
        "expected_root": expected_root,
        "actual_root": actual_root,
        **extra,
    }


# ------------------------------------------------------------- 2. the data directory


def test_an_accepted_removal_never_deletes_a_file_of_the_data_directory(run_cli, humans, tmp_path):
    expected, actual = write_trees(tmp_path, {"a.md": ("old\n", "new\n")})
    data = expected / "results"  # the data directory inside the expected tree
    env = {"HILBOT_DATA_DIR": str(data)}
    first = triage(run_cli, expected, actual, env=env)
    second = triage(run_cli, expected, actual, env=env)
    store = Store(data)
    accept_all(store, second)
    before = store.run_path(first).read_bytes()
    result = run_cli("triage", "--apply", second, env=env)
    assert store.run_path(first).is_file() and store.run_path(first).read_bytes() == before
    assert result.returncode == 0 and (expected / "a.md").read_text() == "new\n", (
        result.stdout + result.stderr
    )
    assert [item.id for item in store.load_run(second).items] == [
        "a.md"
    ]  # the data directory is never a change


def test_a_run_that_deletes_a_file_of_the_data_directory_is_refused(run_cli, tmp_path):
    expected, actual = write_trees(tmp_path, {"a.md": ("same\n", "same\n")})
    data = expected / "results"
    store = Store(data)
    victim = craft_run(
        store,
        "victim",
        [
            {
                "features": features("a.md", str(expected), str(actual)),
                "expected": "x",
                "actual": "y",
            }
        ],
    )
    text = victim.read_text()
    rel = victim.relative_to(expected).as_posix()
    craft_run(
        store,
        "crafted",
        [
            {
                "features": features(rel, str(expected), str(actual), status="removed"),
                "expected": text,
            }
        ],
    )
    accept_all(store, "crafted")
    result = run_cli("triage", "--apply", "crafted", env={"HILBOT_DATA_DIR": str(data)})
    assert result.returncode == 1 and BUG not in result.stderr, result.stdout + result.stderr
    assert victim.read_text() == text
    assert f"not written: {rel}" in result.stdout and "data directory" in result.stdout


# ------------------------------------------------------------- 3 and 4. links in the expected tree


def test_apply_never_writes_through_a_linked_directory(run_cli, humans, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    expected, actual = write_trees(tmp_path, {"a.md": ("same\n", "same\n")})
    (expected / "sub").symlink_to(outside, target_is_directory=True)
    (actual / "sub").mkdir()
    (actual / "sub" / "new.md").write_text("new\n")
    run_id = triage(run_cli, expected, actual)
    accept_all(Store(tmp_path / "results"), run_id)
    result = run_cli("triage", "--apply", run_id)
    assert result.returncode == 1 and BUG not in result.stderr, result.stdout + result.stderr
    assert list(outside.iterdir()) == []
    [line] = [
        line for line in result.stdout.splitlines() if line.startswith("not written: sub/new.md")
    ]
    assert "symbolic link" in line


def test_an_accept_in_a_review_is_not_written_through_a_linked_directory_and_exits_1(
    run_cli, humans, tmp_path
):
    outside = tmp_path / "outside"
    outside.mkdir()
    expected, actual = write_trees(tmp_path, {"a.md": ("same\n", "same\n")})
    (expected / "sub").symlink_to(outside, target_is_directory=True)
    (actual / "sub").mkdir()
    (actual / "sub" / "new.md").write_text("new\n")
    result = run_cli("triage", str(expected), str(actual), "-i", input="a")
    assert result.returncode == 1 and BUG not in result.stderr, result.stdout + result.stderr
    assert list(outside.iterdir()) == [] and "not written: sub/new.md" in result.stdout


@pytest.mark.parametrize("swapped", ["sub", "the root"])
def test_a_directory_swapped_for_a_link_after_the_triage_is_refused(
    run_cli, humans, tmp_path, swapped
):
    expected, actual = write_trees(tmp_path, {"sub/a.md": ("old\n", "new\n")})
    run_id = triage(run_cli, expected, actual)
    accept_all(Store(tmp_path / "results"), run_id)
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "a.md").write_text(
        "old\n"
    )  # what the triage saw, so only the link can stop the write
    moved = tmp_path / "moved"
    if swapped == "sub":
        (expected / "sub").rename(moved)
        (expected / "sub").symlink_to(outside / "sub", target_is_directory=True)
    else:
        expected.rename(moved)
        expected.symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    result = run_cli("triage", "--apply", run_id)
    assert result.returncode == 1 and BUG not in result.stderr, result.stdout + result.stderr
    assert snapshot(outside) == before and "not written: sub/a.md" in result.stdout


# ------------------------------------------------------------- 5. crafted runs


def test_a_run_with_absolute_paths_of_an_older_hilbot_writes_nothing(run_cli, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("old\n")
    expected, actual = write_trees(tmp_path, {"x.md": ("old\n", "new\n")})
    store = Store(tmp_path / "results")
    legacy = {
        "path": "x.md",
        "status": "changed",
        "source": "snapshots",
        "expected_file": str(outside / "x.md"),
        "actual_file": str(actual / "x.md"),
    }
    craft_run(store, "legacy", [{"features": legacy, "expected": "old\n", "actual": "new\n"}])
    accept_all(store, "legacy")
    result = run_cli("triage", "--apply", "legacy")
    assert result.returncode == 1 and BUG not in result.stderr, result.stdout + result.stderr
    assert (outside / "x.md").read_text() == "old\n" and (expected / "x.md").read_text() == "old\n"
    assert "not written: x.md" in result.stdout and "triage the trees again" in result.stdout


@pytest.mark.parametrize(
    "path",
    [
        "../outside/x.md",
        "sub/../../outside/x.md",
        "/abs/x.md",
        "./x.md",
        "a//x.md",
        ".git/config",
        "x.md\0",
    ],
)
def test_a_run_whose_path_leaves_its_tree_is_refused_whole(run_cli, tmp_path, path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("old\n")
    expected, actual = write_trees(
        tmp_path, {"x.md": ("old\n", "new\n"), "ok.md": ("old\n", "new\n")}
    )
    store = Store(tmp_path / "results")
    path = path.replace("/abs", str(outside))
    run = craft_run(
        store,
        "crafted",
        [
            {
                "features": features("ok.md", str(expected), str(actual)),
                "expected": "old\n",
                "actual": "new\n",
            },
            {
                "features": features(path, str(expected), str(actual)),
                "expected": "old\n",
                "actual": "new\n",
            },
        ],
    )
    accept_all(store, "crafted")
    result = run_cli("triage", "--apply", "crafted")
    assert result.returncode == 2 and BUG not in result.stderr, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {run}:3: ") and "triage" in line.split(" — ")[-1]
    assert (outside / "x.md").read_text() == "old\n" and (
        expected / "ok.md"
    ).read_text() == "old\n"  # nothing at all written


def test_a_run_whose_items_name_different_trees_is_refused(run_cli, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("old\n")
    expected, actual = write_trees(tmp_path, {"x.md": ("old\n", "new\n")})
    store = Store(tmp_path / "results")
    run = craft_run(
        store,
        "crafted",
        [
            {
                "features": features("x.md", str(expected), str(actual)),
                "expected": "old\n",
                "actual": "new\n",
            },
            {
                "features": features("x.md", str(outside), str(actual)),
                "expected": "old\n",
                "actual": "new\n",
            },
        ],
    )
    accept_all(store, "crafted")
    result = run_cli("triage", "--apply", "crafted")
    assert result.returncode == 2 and result.stderr.startswith(f"error: {run}:3: "), result.stderr
    assert (outside / "x.md").read_text() == "old\n"


# ------------------------------------------------------------- 6. modes


def test_accepting_keeps_the_snapshots_mode_and_records_get_the_umasks(run_cli, humans, tmp_path):
    expected, actual = write_trees(
        tmp_path, {"run.sh": ("echo old\n", "echo new\n"), "conf.md": ("a\n", "b\n")}
    )
    (expected / "run.sh").chmod(0o755)
    (actual / "run.sh").chmod(0o644)  # a test harness wrote the output with the default mode
    (expected / "conf.md").chmod(0o640)
    (actual / "conf.md").chmod(0o644)
    (actual / "new.sh").write_text("echo hi\n")
    (actual / "new.sh").chmod(0o750)
    previous = os.umask(0o027)
    try:
        run_id = triage(run_cli, expected, actual)
    finally:
        os.umask(previous)
    for name in ("run.sh", "conf.md", "new.sh"):
        assert stat.S_IMODE((actual / f"{name}.ai.json").stat().st_mode) == 0o640, (
            name
        )  # 0666 & ~027
    accept_all(Store(tmp_path / "results"), run_id)
    result = run_cli("triage", "--apply", run_id)
    assert result.returncode == 0, result.stdout + result.stderr
    modes = {
        name: stat.S_IMODE((expected / name).stat().st_mode)
        for name in ("run.sh", "conf.md", "new.sh")
    }
    assert modes == {
        "run.sh": 0o755,
        "conf.md": 0o640,
        "new.sh": 0o750,
    }  # the snapshot's own; a new one the output's
    assert (expected / "run.sh").read_text() == "echo new\n"


# ------------------------------------------------------------- 7. the .ai.json records


def test_each_file_gets_its_own_record_and_a_users_file_is_never_overwritten(
    run_cli, humans, tmp_path
):
    expected, actual = write_trees(
        tmp_path, {"x.md": ("a\n", "b\n"), "x.txt": ("c\n", "d\n"), "y.md": ("e\n", "f\n")}
    )
    (actual / "x.ai.json").write_text(
        '{"mine": true}\n'
    )  # the user's own file, named as records were
    (actual / "y.md.ai.json").write_text(
        '{"notes": "mine"}\n'
    )  # the user's own file where a record would go
    result = run_cli("triage", str(expected), str(actual))
    assert result.returncode == 1 and BUG not in result.stderr, result.stderr
    md, txt = (
        json.loads((actual / name).read_text()) for name in ("x.md.ai.json", "x.txt.ai.json")
    )
    assert (md["path"], txt["path"]) == ("x.md", "x.txt") and md["written_by"] == "hilbot triage"
    assert (actual / "x.ai.json").read_text() == '{"mine": true}\n'
    assert (actual / "y.md.ai.json").read_text() == '{"notes": "mine"}\n'
    assert "y.md.ai.json" in result.stderr and "warning: " in result.stderr
    again = run_cli(
        "triage", str(expected), str(actual)
    )  # the records are no changes; the user's own files are
    added = "UNSURE (local: added (local rules do not judge added or removed outputs)) → to a human"
    changed = "UNSURE (local: the text changed (local rules cannot judge it)) → to a human"
    assert (
        again.stdout.splitlines()[:5]
        == result.stdout.splitlines()[:5]
        == [
            f"x.ai.json - {added}",
            f"x.md - {changed}",
            f"x.txt - {changed}",
            f"y.md - {changed}",
            f"y.md.ai.json - {added}",
        ]
    )


def test_a_record_of_an_older_hilbot_is_no_change_either(run_cli, humans, tmp_path):
    expected, actual = write_trees(tmp_path, {"x.md": ("a\n", "b\n")})
    old = {
        "path": "x.md",
        "status": "changed",
        "category": 3,
        "category_name": "UNSURE",
        "confidence": 0.0,
        "summary": "s",
        "decision": "human",
        "rule": "r",
        "audit": False,
    }
    (actual / "x.ai.json").write_text(json.dumps(old))
    result = run_cli("triage", str(expected), str(actual))
    assert result.stdout.startswith("x.md - UNSURE") and "\n1 changes:" in result.stdout, (
        result.stdout
    )


# ------------------------------------------------------------- 8. a file too large, and --exclude


def test_a_file_too_large_is_left_out_with_a_warning_and_the_rest_are_triaged(
    run_cli, humans, tmp_path
):
    expected, actual = write_trees(
        tmp_path, {"a.md": ("old\n", "new\n"), "big.md": ("small\n", "small\n")}
    )
    (actual / "big.md").write_bytes(b"x" * (33 * 2**20))
    result = run_cli("triage", str(expected), str(actual))
    assert result.returncode == 1 and BUG not in result.stderr, result.stderr
    assert result.stdout.startswith("a.md - UNSURE") and "1 changes:" in result.stdout
    [warning] = [line for line in result.stderr.splitlines() if "big.md" in line]
    assert warning.startswith("warning: big.md: ") and "33.0 MiB" in warning and "32 MiB" in warning
    assert "--exclude 'big.md'" in warning
    quiet = run_cli(
        "triage", str(expected), str(actual), "--exclude", "big.md", "--exclude", "nothing/**"
    )
    assert (
        quiet.returncode == 1
        and "big.md" not in quiet.stderr
        and quiet.stdout.startswith("a.md - UNSURE")
    ), quiet.stderr
    humans.write_text(humans.read_text() + 'exclude = ["big.*"]\n')
    configured = run_cli("triage", str(expected), str(actual))
    assert configured.returncode == 1 and "big.md" not in configured.stderr, configured.stderr


def test_a_change_left_out_as_too_large_fails_ci_until_it_is_excluded(run_cli, tmp_path):
    """Nobody decided the big file: a CI gate must not pass over it."""
    expected, actual = write_trees(tmp_path, {"big.md": ("small\n", "small\n")})
    (actual / "big.md").write_bytes(b"x" * (33 * 2**20))
    result = run_cli("triage", str(expected), str(actual), "--silent")
    assert result.returncode == 1 and "big.md" in result.stderr, result.stdout + result.stderr
    excluded = run_cli("triage", str(expected), str(actual), "--silent", "--exclude", "big.md")
    assert excluded.returncode == 0, excluded.stdout + excluded.stderr


# ------------------------------------------------------------- 9. full disks, ulimit -f, chattr +i


def _limited(size: int):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, resource.RLIM_INFINITY))

    return limit


def _hilbot(tmp_path: Path, *args: str, limit: int) -> subprocess.CompletedProcess:
    """``hilbot ARGS`` in a subprocess whose files may grow to ``limit`` bytes (``ulimit -f``)."""
    env = {**os.environ, "HILBOT_DATA_DIR": str(tmp_path / "results"), "USER": "tester"}
    return subprocess.run(
        [str(HILBOT), *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        preexec_fn=_limited(limit),
        timeout=60,
    )


def test_a_file_size_limit_during_the_triage_records_nothing_and_says_the_real_fix(tmp_path):
    # a change a rule accepts: the run (header and summary, ~430 bytes) and its decision (~310)
    # fit in 500 bytes, its .ai.json record (~540) does not
    (tmp_path / "hilbot.toml").write_text("[triage]\naudit_share = 0.0\n")
    expected, actual = write_trees(tmp_path, {"sub/x.md": ("a  b\n", "a b\n")})
    result = _hilbot(tmp_path, "triage", str(expected), str(actual), limit=500)
    assert (
        result.returncode == 2 and "Traceback" not in result.stderr and BUG not in result.stderr
    ), result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "ulimit -f" in line and "--out" not in line
    store = Store(tmp_path / "results")
    assert (
        store.run_ids() == [] and not store.ratings.path.exists()
    )  # decided before anything was recorded
    assert [p.name for p in (actual / "sub").iterdir()] == ["x.md"]  # no record, nothing left aside
    assert (expected / "sub" / "x.md").read_text() == "a  b\n"


def test_a_file_size_limit_during_apply_is_a_refusal_with_the_real_fix(run_cli, humans, tmp_path):
    expected, actual = write_trees(tmp_path, {"big.md": ("old\n", "new\n" * 40_000)})
    run_id = triage(run_cli, expected, actual)
    accept_all(Store(tmp_path / "results"), run_id)
    result = _hilbot(tmp_path, "triage", "--apply", run_id, limit=64 * 1024)
    assert (
        result.returncode == 1 and "Traceback" not in result.stderr and BUG not in result.stderr
    ), result.stdout + result.stderr
    [line] = [line for line in result.stdout.splitlines() if line.startswith("not written: big.md")]
    assert "ulimit -f" in line and "--out" not in result.stdout + result.stderr
    assert (expected / "big.md").read_text() == "old\n" and sorted(
        p.name for p in expected.iterdir()
    ) == ["big.md"]


@pytest.fixture
def immutable():
    """Make a directory immutable (``chattr +i``: not even root creates a file in it)."""
    made: list[Path] = []

    def make(folder: Path) -> None:
        assert shutil.which("chattr"), "this test needs chattr (Debian's e2fsprogs) and root"
        done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, text=True)
        assert done.returncode == 0, f"chattr +i {folder} failed (needs root): {done.stderr}"
        made.append(folder)

    yield make
    for folder in made:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)


def test_an_unwritable_record_directory_fails_the_triage_before_anything_is_recorded(
    run_cli, humans, tmp_path, immutable
):
    expected, actual = write_trees(tmp_path, {"sub/a.md": ("a\n", "b\n")})
    immutable(actual / "sub")
    result = run_cli("triage", str(expected), str(actual))
    assert result.returncode == 2 and BUG not in result.stderr, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert str(actual / "sub") in line and "permission" in line and "--out" not in line
    store = Store(tmp_path / "results")
    assert store.run_ids() == [] and not store.ratings.path.exists()


def test_an_unwritable_expected_directory_during_apply_is_a_refusal(
    run_cli, humans, tmp_path, immutable
):
    expected, actual = write_trees(tmp_path, {"sub/a.md": ("a\n", "b\n")})
    run_id = triage(run_cli, expected, actual)
    accept_all(Store(tmp_path / "results"), run_id)
    immutable(expected / "sub")
    result = run_cli("triage", "--apply", run_id)
    assert result.returncode == 1 and BUG not in result.stderr, result.stdout + result.stderr
    [line] = [
        line for line in result.stdout.splitlines() if line.startswith("not written: sub/a.md")
    ]
    assert (
        f"check the permissions of {expected / 'sub'}" in line
        and "--out" not in result.stdout + result.stderr
    )


# ------------------------------------------------------------- 10. a refused accept fails


def test_an_accepted_change_refused_as_stale_exits_1_and_says_which_and_why(
    run_cli, humans, tmp_path
):
    expected, actual = write_trees(
        tmp_path, {"a.md": ("old\n", "new\n"), "b.md": ("old\n", "new\n")}
    )
    run_id = triage(run_cli, expected, actual)
    accept_all(Store(tmp_path / "results"), run_id)
    (expected / "a.md").write_text("someone edited it\n")
    result = run_cli("triage", "--apply", run_id)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "no snapshot change of this run was accepted" not in result.stdout
    assert "wrote 1 expected file(s): b.md" in result.stdout
    assert "not written: a.md — the expected file changed since the triage" in result.stdout
    again = run_cli(
        "triage", "--apply", run_id
    )  # b.md is already written: no failure; a.md still refused
    assert again.returncode == 1 and "already written: b.md" in again.stdout, again.stdout


def test_applying_twice_is_no_failure(run_cli, humans, tmp_path):
    expected, actual = write_trees(tmp_path, {"a.md": ("old\n", "new\n")})
    run_id = triage(run_cli, expected, actual)
    accept_all(Store(tmp_path / "results"), run_id)
    assert run_cli("triage", "--apply", run_id).returncode == 0
    again = run_cli("triage", "--apply", run_id)
    assert again.returncode == 0 and again.stdout.startswith("already written: a.md"), (
        again.stdout + again.stderr
    )


# ------------------------------------------------------------- 11. crafted fields


@pytest.mark.parametrize(
    "field, value",
    [
        ("status", "exploded"),
        ("status", 3),
        ("source", "disk"),
        ("source", None),
        ("path", 7),
        ("path", ["a.md"]),
        ("path", None),
        ("expected_root", 5),
        ("expected_root", ["/"]),
        ("expected_root", "relative/books"),
        ("actual_root", {"a": 1}),
        ("actual_root", None),
        ("expected_root", "/a/../b"),
    ],
)
def test_a_crafted_field_is_one_error_line_naming_the_run_file_and_line(
    run_cli, tmp_path, field, value
):
    expected, actual = write_trees(tmp_path, {"x.md": ("old\n", "new\n")})
    store = Store(tmp_path / "results")
    spec = features("x.md", str(expected), str(actual))
    if value is None:
        del spec[field]
    else:
        spec[field] = value
    run = craft_run(store, "crafted", [{"features": spec, "expected": "old\n", "actual": "new\n"}])
    accept_all(store, "crafted")
    result = run_cli("triage", "--apply", "crafted")
    if field == "source" and value is None:  # no source: a change of no files, nothing to write
        assert result.returncode == 0 and (expected / "x.md").read_text() == "old\n", result.stderr
        return
    assert result.returncode == 2 and BUG not in result.stderr, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {run}:2: ") and " — " in line, line
    assert (expected / "x.md").read_text() == "old\n"


def test_a_change_whose_status_contradicts_its_outputs_is_refused(run_cli, tmp_path):
    expected, actual = write_trees(tmp_path, {"x.md": ("old\n", "new\n")})
    store = Store(tmp_path / "results")
    run = craft_run(
        store,
        "crafted",
        [
            {
                "features": features("x.md", str(expected), str(actual), status="removed"),
                "expected": "old\n",
                "actual": "new\n",
            }
        ],
    )
    accept_all(store, "crafted")
    result = run_cli("triage", "--apply", "crafted")
    assert result.returncode == 2 and result.stderr.startswith(f"error: {run}:2: "), result.stderr
    assert (expected / "x.md").read_text() == "old\n"
