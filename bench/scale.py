"""Every command, the terminal review's start and the bot's start as the log grows, side by side
with the physical bounds of reading the same ``ratings.jsonl`` (issue 27's harness).

For each size in ``--sizes`` (default 10,000, 100,000 and 1,000,000 lines) one synthetic store is
generated once (``python -m analysis.synthetic DIR --ratings N``: 20 runs x 500 items, 40
reviewers; kept under ``--keep DIR`` and reused when it is there) and measured as it is today, the
reference path (the whole log re-read and re-folded by every command):

* **commands**, each in a fresh subprocess, its output to ``/dev/null``: ``hilbot review --list``;
  ``hilbot export RUN --format csv`` (RUN: the store's first run of about 500 items); ``hilbot
  digest``; ``hilbot analyze NAME`` for validate, agreement, calibration, ``correlate --feature
  leap_distance``, patterns, synthesize and triage. Seconds are wall clock from launch to exit,
  so they include the interpreter's start and the imports (about 1-2 s of every analysis, the
  same at every size). Peak RSS is what ``/usr/bin/time -v`` reports (``wait4``'s
  ``ru_maxrss``): the largest single process of the command (readers it forks count on their
  own, not added to it).
* **``review RUN`` start**: ``hilbot review RUN`` in a pty (pexpect), from launch until its first
  card's counter (``[N/500]``: the first card shown is not always item 1) is on the screen; then
  ``q``. RSS: the process's high-water mark (``VmHWM``) at that moment. The review and the bot
  run with ``[review] k = 1000`` (every other command with the built-in configuration): at the
  default k = 1 every item of the 1M store is complete and the review ends with no card.
* **bot start**: ``hilbot serve telegram`` against the local fake Bot API
  (``tests/fakes/telegram_api.FakeTelegram``, no flood limits), from launch until the bot has
  answered a first tap: it polls, the user sends ``/review RUN``, the card arrives, the user taps
  its first rating, the bot answers the callback. The phases (first poll, first card) are printed
  beside it; RSS: ``VmRSS`` (and ``VmHWM``) once the tap is answered.
* **bounds** on the same file, each in a fresh subprocess, the seconds of the read alone (imports
  and start-up excluded): ``cat FILE > /dev/null`` (wall); one ``orjson.loads`` per line; DuckDB's
  ``read_json_auto`` of the whole file into Arrow (a DuckDB table when pyarrow is absent),
  all threads. DuckDB is optional (``pip install '.[bench]'``); without it that row is left out
  and the ratios are to the orjson loop.

The file is in the page cache throughout (every read after the first is warm). Each figure is
the median of ``--repeat`` runs (default 3), the commands taking turns within each round, so a
busy moment of this shared 2-core machine slows them alike. Commands that append to the log
(``synthesize``'s ``review_summary``, the review's session summary, the bot's deliveries and
rating) are undone after each run by cutting the log back to its generated length, so every
measurement reads the same bytes.

How to read it: one table per size -- command, median seconds, peak RSS MB (the largest of the
runs), and ``x read``: the median over DuckDB's read of the same file (what a columnar read
costs; the issue's goals are a small multiple of it). Then the growth of each command from the
smallest to the largest size, beside the growth of the log itself: a command that scales with the
log grows about as much as the log (10x per step); one that grows more is superlinear.

Run from the repo root: ``.venv/bin/python bench/scale.py [--sizes 10000,100000,1000000]
[--repeat 3] [--keep DIR] [--json FILE] [--with FILE]``. ``--with`` adds the sizes of an earlier
``--json`` (not measured again) to the growth table, e.g. a 1M run at ``--repeat 1`` beside the
10k and 100k figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
HILBOT = str(Path(sys.executable).parent / "hilbot")
NO_DUCKDB = "duckdb not installed: pip install '.[bench]'"
FEATURE = "leap_distance"
ANALYSES = (
    ("validate",),
    ("agreement",),
    ("calibration",),
    ("correlate", "--feature", FEATURE),
    ("patterns",),
    ("synthesize",),
    ("triage",),
)
REVIEW, BOT = "review RUN (first card)", "serve telegram (first tap answered)"
READ_CAT, READ_ORJSON, READ_DUCKDB = "cat FILE > /dev/null", "orjson loop", "DuckDB read_json_auto"
USER = 4242
OPEN_K = "[review]\nk = 1000  # every item stays open: a card to show at every size\n"
"""The review's and the bot's configuration: at the default k = 1 every item of the 1M store's
runs is complete, and the review then ends with no card."""
TIMEOUT_S = 1800.0
sys.path.insert(0, str(ROOT))  # tests.fakes, for the bot's start


# ----------------------------------------------------------------------------- data


def generate(base: Path, ratings: int) -> dict[str, Any]:
    """The synthetic store of ``ratings`` lines under ``base`` (reused when it is there): its
    data dir, log, length in bytes and lines, and the run to export and review."""
    data, marker = base / f"ratings-{ratings}", base / f"ratings-{ratings}.json"
    log = data / "ratings.jsonl"
    info = json.loads(marker.read_text()) if marker.exists() and log.exists() else None
    if info is not None and log.stat().st_size < info["bytes"]:
        info = None  # shorter than generated: not ours any more
    if info is None:
        shutil.rmtree(data, ignore_errors=True)
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "analysis.synthetic", str(data), "--ratings", str(ratings)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        info = {
            **json.loads(out.stdout.strip().splitlines()[-1]),
            "bytes": log.stat().st_size,
            "generate_s": time.perf_counter() - started,
        }
        marker.write_text(json.dumps(info))
        print(f"  generated in {info['generate_s']:.1f} s", flush=True)
    else:
        restore(log, info["bytes"])
        print(f"  reusing {data}", flush=True)
    run, items = pick_run(data / "runs")
    return {**info, "data": data, "log": log, "run": run, "run_items": items}


def pick_run(runs: Path) -> tuple[str, int]:
    """The first run (by name) whose item count is nearest 500."""
    found = []
    for path in sorted(runs.glob("*.jsonl")):
        with open(path, "rb") as f:
            header = json.loads(f.readline())
        found.append((abs(header.get("item_count", 0) - 500), path.stem, header["item_count"]))
    if not found:
        raise SystemExit(f"no run in {runs}")
    _, run, items = min(found)
    return run, items


def restore(log: Path, length: int) -> None:
    """Cut what a command appended to the log (it was generated ``length`` bytes long)."""
    if log.stat().st_size > length:
        os.truncate(log, length)


# ----------------------------------------------------------------------------- measuring


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """``cmd`` in a fresh subprocess, output to /dev/null: wall seconds and peak RSS (wait4's
    ru_maxrss, as /usr/bin/time -v)."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
            raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {' | '.join(tail)}")
    return {"seconds": seconds, "rss_mb": usage.ru_maxrss / 1024}


def proc_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of a live process, MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields


def review_start(store: dict[str, Any], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """``hilbot review RUN`` in a pty until its first card's ``[N/M]`` shows; then ``q``."""
    import pexpect

    config = cwd / "scale-review.toml"
    config.write_text(OPEN_K)
    env = {**env, "HILBOT_CONFIG": str(config)}
    started = time.perf_counter()
    child = pexpect.spawn(
        HILBOT,
        ["review", store["run"], "--reviewer", "bench-scale"],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=TIMEOUT_S,
        dimensions=(50, 120),
    )
    try:
        if child.expect([r"\[\d+/\d+\]", pexpect.EOF]) == 1:
            raise SystemExit(f"hilbot review showed no card: {child.before[-300:]!r}")
        seconds = time.perf_counter() - started
        memory = proc_mb(child.pid)
        child.send("q")
        child.expect(pexpect.EOF, timeout=120)
    finally:
        child.close(force=True)
        restore(store["log"], store["bytes"])
    return {"seconds": seconds, "rss_mb": memory["VmHWM"], "rss_now_mb": memory["VmRSS"]}


def bot_start(store: dict[str, Any], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """``hilbot serve telegram`` against the fake Bot API: launch → first tap answered."""
    from tests.fakes.telegram_api import FakeTelegram

    config = cwd / "scale-bot.toml"
    config.write_text(
        f"[telegram]\nreviewers = [{USER}]\nadmins = [{USER}]\npoll_timeout_s = 1\n\n{OPEN_K}"
    )
    with FakeTelegram(limits=None) as fake, open(cwd / "scale-bot.log", "w") as log:
        fake.user(USER, first_name="Bench", username="bench")
        bot_env = {**env, **fake.env(), "HILBOT_CONFIG": str(config)}
        started = time.monotonic()
        proc = subprocess.Popen(
            [HILBOT, "serve", "telegram"], env=bot_env, cwd=cwd, stdout=log, stderr=log
        )
        try:

            def wait(ready: Callable[[], Any], what: str) -> float:
                fake.wait(lambda: ready() or proc.poll() is not None, timeout=TIMEOUT_S, what=what)
                if proc.poll() is not None:
                    tail = (cwd / "scale-bot.log").read_text().strip().splitlines()[-3:]
                    raise SystemExit(f"hilbot serve telegram exited: {' | '.join(tail)}")
                return time.monotonic() - started

            polled = wait(lambda: fake.calls_to("getUpdates"), "the bot to poll")
            fake.send_text(USER, f"/review {store['run']}")
            carded = wait(lambda: fake.card_ids(USER), "the first card")
            card = fake.message(USER, fake.card_ids(USER)[0])
            rows = card["reply_markup"]["inline_keyboard"]
            data = next(b["callback_data"] for row in rows for b in row if "callback_data" in b)
            query = fake.tap(USER, USER, card["message_id"], data)
            answered = wait(lambda: query in fake.answers, "the tap's answer")
            memory = proc_mb(proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            restore(store["log"], store["bytes"])
    return {
        "seconds": answered,
        "polled_s": polled,
        "card_s": carded,
        "rss_mb": memory["VmRSS"],
        "rss_peak_mb": memory["VmHWM"],
    }


def bound(name: str, path: str) -> dict[str, Any]:
    """One physical bound, inside a subprocess (``--bound``): the read's seconds, no imports."""
    if name == "orjson":
        import orjson

        started = time.perf_counter()
        rows = 0
        with open(path, "rb") as f:
            for line in f:
                orjson.loads(line)
                rows += 1
        return {"seconds": time.perf_counter() - started, "rows": rows}
    if name == "duckdb":
        import duckdb

        try:
            import pyarrow  # noqa: F401

            into = "arrow"
        except ImportError:
            into = "duckdb table"
        con = duckdb.connect()
        started = time.perf_counter()
        query = f"SELECT * FROM read_json_auto('{path}', format = 'newline_delimited')"
        if into == "arrow":
            rows = con.sql(query).arrow().num_rows
        else:
            con.execute(f"CREATE TABLE events AS {query}")
            rows = con.execute("SELECT count(*) FROM events").fetchone()[0]
        seconds = time.perf_counter() - started
        return {"seconds": seconds, "rows": rows, "into": into, "threads": threads(con)}
    raise SystemExit(f"unknown bound {name!r}")


def threads(con: Any) -> int:
    return int(con.execute("SELECT current_setting('threads')").fetchone()[0])


def bound_run(name: str, log: Path, cwd: Path) -> dict[str, Any]:
    """A bound in a fresh subprocess: its own seconds, the subprocess's peak RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--bound", name, str(log)], cwd=cwd, stdout=out, stderr=err
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"bound {name} failed: {err.read().decode(errors='replace')[-500:]}")
        out.seek(0)
        result = json.loads(out.read().decode().strip().splitlines()[-1])
    return {**result, "rss_mb": usage.ru_maxrss / 1024}


def has_duckdb() -> bool:
    import importlib.util

    return importlib.util.find_spec("duckdb") is not None


def measure(store: dict[str, Any], repeat: int, work: Path) -> dict[str, Any]:
    """Every row of one size's table, ``repeat`` rounds (rows taking turns within a round)."""
    env = {**os.environ, "HILBOT_DATA_DIR": str(store["data"])}
    env.pop("HILBOT_CONFIG", None)
    log, run = store["log"], store["run"]
    rows: dict[str, Callable[[], dict[str, Any]]] = {
        "review --list": lambda: timed([HILBOT, "review", "--list"], env, work),
        f"export RUN --format csv ({store['run_items']} items)": lambda: timed(
            [HILBOT, "export", run, "--format", "csv"], env, work
        ),
        "digest": lambda: timed([HILBOT, "digest"], env, work),
    }
    for args in ANALYSES:
        rows["analyze " + " ".join(args)] = lambda args=args: timed(
            [HILBOT, "analyze", *args], env, work
        )
    rows[REVIEW] = lambda: review_start(store, env, work)
    rows[BOT] = lambda: bot_start(store, env, work)
    rows[READ_CAT] = lambda: timed(["cat", str(log)], env, work)
    rows[READ_ORJSON] = lambda: bound_run("orjson", log, work)
    if has_duckdb():
        rows[READ_DUCKDB] = lambda: bound_run("duckdb", log, work)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in rows}
    for n in range(repeat):
        for name, measure_once in rows.items():
            runs[name].append(measure_once())
            restore(log, store["bytes"])
            last = runs[name][-1]
            print(f"    {name}: {last['seconds']:.2f} s, {last['rss_mb']:,.0f} MB", flush=True)
        print(f"  round {n + 1}/{repeat} done", flush=True)
    figures: dict[str, Any] = {}
    for name, results in runs.items():
        ordered = sorted(results, key=lambda r: r["seconds"])
        figures[name] = {
            **ordered[len(ordered) // 2],  # the median run's other figures
            "seconds": statistics.median(r["seconds"] for r in results),
            "rss_mb": max(r["rss_mb"] for r in results),
            "runs_s": [round(r["seconds"], 3) for r in results],
        }
    return figures


# ----------------------------------------------------------------------------- report


def reference(figures: dict[str, Any]) -> tuple[str, float]:
    """The read the ratios are to: DuckDB's, else the orjson loop's."""
    name = READ_DUCKDB if READ_DUCKDB in figures else READ_ORJSON
    return name, figures[name]["seconds"]


def print_size(lines: int, info: dict[str, Any], figures: dict[str, Any], repeat: int) -> None:
    ref_name, ref_s = reference(figures)
    print(
        f"\n{lines:,} lines of ratings.jsonl ({info['bytes'] / 1e6:,.1f} MB; "
        f"{info['ratings']:,} ratings, {len(info['runs'])} runs x "
        f"{info['items'] // len(info['runs'])} items), RUN = {info['run']}, median of {repeat}"
    )
    width = max(len(name) for name in figures) + 2
    print(f"{'command':<{width}}{'median s':>10}{'peak RSS MB':>13}{'x read':>9}  runs s")
    for name, f in figures.items():
        extra = ""
        if name == BOT:
            extra = (
                f"  (polling {f['polled_s']:.2f} s, card {f['card_s']:.2f} s; RSS "
                f"now {f['rss_mb']:,.0f} MB, peak {f['rss_peak_mb']:,.0f})"
            )
        elif name == READ_DUCKDB:
            extra = f"  (into {f['into']}, {f['threads']} threads, {f['rows']:,} rows)"
        ratio = "1.00" if name == ref_name else f"{f['seconds'] / ref_s:.2f}"
        print(
            f"{name:<{width}}{f['seconds']:>10.3f}{f['rss_mb']:>13,.0f}{ratio:>9}  "
            f"{', '.join(f'{s:.2f}' for s in f['runs_s'])}{extra}"
        )
    if ref_name != READ_DUCKDB:
        print(f"({NO_DUCKDB}; x read is to the orjson loop)")


def print_growth(sizes: dict[int, dict[str, Any]]) -> None:
    if len(sizes) < 2:
        return
    order = sorted(sizes)
    small, large = order[0], order[-1]
    names = [n for n in sizes[large]["figures"] if n in sizes[small]["figures"]]
    width = max(len(name) for name in names) + 2
    head = "".join(f"{f'{n:,} s':>13}" for n in order)
    print(f"\ngrowth from {small:,} to {large:,} lines (the log: x{large / small:g})")
    print(f"{'command':<{width}}{head}{'growth':>9}{'RSS MB':>18}")
    for name in names:
        seconds = [sizes[n]["figures"].get(name, {}).get("seconds") for n in order]
        cells = "".join(f"{s:>13.3f}" if s is not None else f"{'-':>13}" for s in seconds)
        rss = f"{sizes[small]['figures'][name]['rss_mb']:,.0f} → "
        rss += f"{sizes[large]['figures'][name]['rss_mb']:,.0f}"
        print(f"{name:<{width}}{cells}{seconds[-1] / seconds[0]:>8.1f}x{rss:>18}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="10000,100000,1000000", help="lines of ratings.jsonl, comma-separated"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--keep", help="generate the stores here and keep them (reused next time)")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument(
        "--with", dest="with_", metavar="FILE", help="add an earlier --json's sizes to the growth"
    )
    parser.add_argument("--bound", nargs=2, metavar=("NAME", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bound:
        print(json.dumps(bound(*args.bound)))
        return 0
    sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    repeat = max(1, args.repeat)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"hilbot scale bench (the reference path): sizes {', '.join(f'{n:,}' for n in sizes)}; "
        f"median of {repeat}; {cpus} CPUs; load {os.getloadavg()[0]:.2f}; python "
        f"{platform.python_version()}; {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"
    )
    if not has_duckdb():
        print(NO_DUCKDB)
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="hilbot-scale-"))
    base.mkdir(parents=True, exist_ok=True)
    work = base / "cwd"  # no hilbot.toml here: the built-in configuration
    work.mkdir(exist_ok=True)
    results: dict[int, dict[str, Any]] = {}
    if args.with_:
        earlier = json.loads(Path(args.with_).read_text())
        results.update({int(n): s for n, s in earlier["sizes"].items() if int(n) not in sizes})
    try:
        for lines in sizes:
            print(f"\n{lines:,} lines:", flush=True)
            started = time.perf_counter()
            store = generate(base, lines)
            figures = measure(store, repeat, work)
            info = {k: v for k, v in store.items() if k not in ("data", "log")}
            results[lines] = {"info": info, "figures": figures, "repeat": repeat}
            print_size(lines, store, figures, repeat)
            print(f"  ({time.perf_counter() - started:.0f} s for this size)", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    for lines in sorted(results):
        if lines not in sizes:
            print(f"\n{lines:,} lines: from {args.with_} (repeat {results[lines]['repeat']})")
    if args.json:
        doc = {
            "measured": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
            "cpus": cpus,
            "sizes": {str(n): results[n] for n in sorted(results)},
        }
        Path(args.json).write_text(json.dumps(doc, indent=1, default=str))
    print_growth(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
