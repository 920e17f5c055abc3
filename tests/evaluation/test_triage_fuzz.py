"""Fuzzing ``hilbot triage --apply`` with hostile triage runs and hostile trees.

Each example builds two trees, a sentinel directory ``outside`` beside them and a data directory
(beside them or inside the expected tree), then either

* writes a triage run by hand whose items hold hostile fields (bad statuses and sources, paths that
  are numbers, lists, absolute, hold ``..`` or hidden parts, roots that are relative, unnormalised,
  links to ``outside``, the data directory, or differ between items; the absolute paths an older
  hilbot wrote), or
* triages trees holding links to ``outside`` (linked directories and files, the data directory in
  the tree) and then, before ``--apply``, swaps a directory, or a whole tree, for a link to a copy
  of it in ``outside``;

accepts every change as a human would, and runs ``hilbot triage --apply``. Whatever happens, the
command ends with exit 0, 1 or 2, never with a traceback or the backstop, nothing in ``outside``
is created, changed or deleted, and in the data directory only ``ratings.jsonl`` grows and new run
files appear. The examples are fixed (see ``tests/test_fuzz.py``: ``HILBOT_FUZZ_EXAMPLES`` fuzzes
longer with fresh ones).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from evaluation import Store
from tests.auxil.cli import BUG, invoke
from tests.evaluation.test_triage_apply import accept_all, craft_run, snapshot
from tests.test_fuzz import QUICK

VALID_PATHS = [
    "a.md",
    "sub/b.md",
    "sub/new.md",
    "x.md",
    "link/x.md",
    "leak.md",
    "results/ratings.jsonl",
    "results/runs/crafted.jsonl",
    "sub/b.md",
]
"""Paths a triage could write; some lead through a link or into the data directory."""
HOSTILE = {
    "path": [
        "../outside/x.md",
        "sub/../../outside/x.md",
        "{outside}/x.md",
        ".git/config",
        "sub/.hidden.md",
        "",
        ".",
        "a//b.md",
        "a.md\0",
        7,
        1.5,
        ["a.md"],
        {"p": 1},
        None,
        True,
    ],
    "status": ["exploded", 3, None, "removed", "added", "changed"],
    "source": ["file", "runs", "disk", 0, None],
    "expected_root": [
        "{out}",
        "books",
        "{books}/../outside",
        "{base}/outside-link",
        "{books}/link",
        "{data}",
        "{books}/",
        "/",
        "",
        5,
        ["/"],
        None,
        "{books}\0",
    ],
    "actual_root": ["{books}", "out", "{base}/outside-link", "{out}/sub", "{data}", 5, None],
    "legacy": ["{base}/outside/x.md", "{books}/a.md", "/etc/hostname", 3],
}
"""Per field, what a crafted run may hold instead (``{name}``: the example's directories)."""
OUTPUTS = {"changed": ("old\n", "new\n"), "added": (None, "new\n"), "removed": ("old\n", None)}


def _fill(value: Any, places: dict[str, str]) -> Any:
    return value.format(**places) if isinstance(value, str) and "{" in value else value


@st.composite
def hostile_items(draw: Any, places: dict[str, str]) -> list[dict[str, Any]]:
    """One to three run items as a triage writes them, with none, one or two fields made hostile."""
    items = []
    for n in range(draw(st.integers(1, 3))):
        status = draw(st.sampled_from(sorted(OUTPUTS)))
        fields: dict[str, Any] = {
            "path": draw(st.sampled_from(VALID_PATHS)),
            "status": status,
            "source": "snapshots",
            "expected_root": "{books}",
            "actual_root": "{out}",
        }
        expected, actual = OUTPUTS[status]
        for name in draw(
            st.lists(
                st.sampled_from(sorted(HOSTILE)), max_size=draw(st.sampled_from([0, 0, 0, 1, 2]))
            )
        ):
            value = draw(st.sampled_from(HOSTILE[name]))
            if name == "legacy":
                fields = {k: v for k, v in fields.items() if not k.endswith("_root")}
                fields["expected_file"], fields["actual_file"] = value, "{out}/a.md"
            elif value is None:
                fields.pop(name, None)
            else:
                fields[name] = value
        if draw(st.integers(0, 4)) == 0:
            expected, actual = (
                draw(st.sampled_from([None, "old\n", "other\n"])),
                draw(st.sampled_from([None, "new\n", ""])),
            )
        items.append(
            {
                "id": f"c{n}",
                "features": {k: _fill(v, places) for k, v in fields.items()},
                "expected": expected,
                "actual": actual,
            }
        )
    return items


def _world(inside: bool) -> dict[str, Path]:
    """Two trees, the sentinel ``outside`` and a data directory.

    ``outside`` holds what the expected tree holds: only the refusal of a link stops a write there.
    """
    base = Path(tempfile.mkdtemp(prefix="triage-fuzz-"))
    books, out, outside = base / "books", base / "out", base / "outside"
    for folder, text in ((books, "old\n"), (out, "new\n"), (outside, "old\n")):
        (folder / "sub").mkdir(parents=True)
        (folder / "a.md").write_text(text)
        (folder / "sub" / "b.md").write_text(text)
    (outside / "x.md").write_text("old\n")
    (outside / "a.md").chmod(0o600)
    (out / "sub" / "new.md").write_text("new\n")
    (out / "x.md").write_text("new\n")
    (base / "outside-link").symlink_to(outside, target_is_directory=True)
    return {
        "base": base,
        "books": books,
        "out": out,
        "outside": outside,
        "data": (books if inside else base) / "results",
    }


def _data_files(data: Path) -> dict[str, bytes]:
    return {
        p.relative_to(data).as_posix(): p.read_bytes()
        for p in data.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


def _check(
    result: Any,
    world: dict[str, Path],
    outside_before: dict[str, Any],
    data_before: dict[str, bytes],
) -> None:
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.stderr)
    assert BUG not in result.stderr and "Traceback" not in result.stderr + result.stdout, (
        result.stderr
    )
    if result.exit_code == 2:
        assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith(
            "error: "
        ), result.stderr
    assert snapshot(world["outside"]) == outside_before
    after = _data_files(world["data"])
    for rel, content in data_before.items():
        grows = rel == "ratings.jsonl"
        assert rel in after and (
            after[rel].startswith(content) if grows else after[rel] == content
        ), rel
    new = set(after) - set(data_before) - {"ratings.jsonl"}
    assert all(rel.startswith("runs/") and rel.endswith(".jsonl") for rel in new), new


@QUICK
@given(st.data())
def test_a_hostile_triage_run_writes_nothing_outside_its_trees(data: Any) -> None:
    world = _world(inside=data.draw(st.booleans()))
    try:
        (world["books"] / "link").symlink_to(world["outside"], target_is_directory=True)
        (world["books"] / "leak.md").symlink_to(world["outside"] / "x.md")
        places = {k: str(v) for k, v in world.items()}
        store = Store(world["data"])
        store.ratings.path.parent.mkdir(parents=True, exist_ok=True)
        run = craft_run(store, "crafted", data.draw(hostile_items(places)))
        if data.draw(st.booleans()):
            with run.open("ab") as handle:
                handle.write(
                    data.draw(
                        st.sampled_from(
                            [
                                b"{not json\n",
                                b'{"type":"query_evaluation"}\n',
                                b"\xff\xfe\n",
                                b"[]\n",
                            ]
                        )
                    )
                )
        accept_all(store, "crafted")
        outside_before, data_before = snapshot(world["outside"]), _data_files(world["data"])
        result = invoke(
            "triage",
            "--apply",
            "crafted",
            env={"HILBOT_DATA_DIR": str(world["data"])},
            cwd=world["base"],
        )
        _check(result, world, outside_before, data_before)
    finally:
        shutil.rmtree(world["base"], ignore_errors=True)


SWAPS = ["nothing", "books/sub", "books", "out/sub", "out"]


def _hostile_trees(world: dict[str, Path], data: Any) -> None:
    """Links to ``outside`` in the trees: a linked directory (real in the other tree), files."""
    books, out, outside = world["books"], world["out"], world["outside"]
    if data.draw(st.booleans()):
        (books / "link").symlink_to(outside, target_is_directory=True)
        (out / "link").mkdir()
        (out / "link" / "x.md").write_text("new\n")
    if data.draw(st.booleans()):
        (books / "x.md").symlink_to(outside / "x.md")
    if data.draw(st.booleans()):
        (out / "leak.md").symlink_to(outside / "x.md")
        (books / "leak.md").write_text("mine\n")
    if data.draw(st.booleans()):
        (out / "sub" / "gone").symlink_to(outside, target_is_directory=True)


def _swap(world: dict[str, Path], which: str) -> None:
    """``which`` (a tree, or a directory in one) swapped for a link to its copy in ``outside``."""
    if which == "nothing":
        return
    target = world["base"] / which
    copy = world["outside"] / "copies" / which.replace("/", "-")
    shutil.copytree(target, copy, symlinks=True)
    target.rename(world["base"] / f"moved-{which.replace('/', '-')}")
    target.symlink_to(copy, target_is_directory=True)


@QUICK
@given(st.data())
def test_hostile_trees_and_a_swap_before_apply_write_nothing_outside(data: Any) -> None:
    world = _world(inside=data.draw(st.booleans()))
    try:
        _hostile_trees(world, data)
        (world["base"] / "hilbot.toml").write_text(
            '[triage]\naudit_share = 0.0\nrequire_human = ["**"]\n'
        )
        env = {"HILBOT_DATA_DIR": str(world["data"])}
        outside_before, data_before = snapshot(world["outside"]), {}
        triaged = invoke(
            "triage", str(world["books"]), str(world["out"]), env=env, cwd=world["base"]
        )
        _check(triaged, world, outside_before, data_before)
        store = Store(world["data"])
        for run_id in store.run_ids():
            accept_all(store, run_id)
        _swap(world, data.draw(st.sampled_from(SWAPS)))
        outside_before, data_before = snapshot(world["outside"]), _data_files(world["data"])
        for run_id in store.run_ids():
            result = invoke("triage", "--apply", run_id, env=env, cwd=world["base"])
            _check(result, world, outside_before, data_before)
    finally:
        shutil.rmtree(world["base"], ignore_errors=True)
