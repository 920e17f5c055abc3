"""Subprocess helper for tests/test_log.py: appends to an EventLog from a separate process.

Modes:

``concurrent PATH WRITER COUNT SEED``
    Prints ``ready``, waits for one line on stdin (the start signal), then appends COUNT
    dict records ``{"type": "probe", "writer", "seq", "batch", "pad"}`` with seq 0..COUNT-1,
    mixing single ``append`` calls and small ``append_many`` batches (2..8 records), with
    paddings of varying size (some lines are several KB). Prints ``done FSYNCS`` at the end.

``crash PATH TEXT_BYTES``
    Appends ``Note`` records with a TEXT_BYTES-long text in an endless loop, one sync
    ``append`` each; after each append returns it prints the seq and flushes stdout. It is
    meant to be killed with SIGKILL by the parent.

``soak PATH WRITER``
    Appends ``probe`` records (``writer``, ``seq``), single appends and batches of 2..5 mixed,
    printing ``seq`` once each is acknowledged, until SIGTERM; then closes the log (which puts
    back whatever a replacement of the file dropped) and prints ``closed RESTORED``. Used by the
    soak in tests/test_soak.py, which also kills writers with SIGKILL.
"""

from __future__ import annotations

import random
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from evaluation.log import EventLog  # noqa: E402
from evaluation.records import Note, Reviewer  # noqa: E402


def concurrent(path: str, writer: str, count: int, seed: int) -> None:
    log = EventLog(path)
    rng = random.Random(seed)
    print("ready", flush=True)
    sys.stdin.readline()  # start signal
    seq = 0
    batch = 0
    while seq < count:
        size = 1 if rng.random() < 0.5 else rng.randint(2, 8)
        size = min(size, count - seq)
        records = []
        for _ in range(size):
            pad = "x" * rng.choice((0, 10, 200, 3000, 6000))
            records.append(
                {"type": "probe", "writer": writer, "seq": seq, "batch": batch, "pad": pad}
            )
            seq += 1
        if size == 1:
            log.append(records[0])
        else:
            log.append_many(records)
        batch += 1
    log.close()
    print(f"done {log.fsyncs}", flush=True)


def crash(path: str, text_bytes: int) -> None:
    log = EventLog(path)
    reviewer = Reviewer(id="crash-writer")
    seq = 0
    while True:
        text = (f"{seq:08d}" * (text_bytes // 8 + 1))[:text_bytes]
        log.append(
            Note(
                run_id="crash",
                item_id=f"q{seq}",
                reviewer=reviewer,
                idempotency_key=f"k{seq}",
                text=text,
            )
        )
        sys.stdout.write(f"{seq}\n")
        sys.stdout.flush()
        seq += 1


def soak(path: str, writer: str) -> None:
    log = EventLog(path)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    rng = random.Random(writer)
    seq = 0
    while not stop:
        size = 1 if rng.random() < 0.6 else rng.randint(2, 5)
        records = [
            {
                "type": "probe",
                "writer": writer,
                "seq": seq + n,
                "pad": "x" * rng.choice((0, 50, 600)),
            }
            for n in range(size)
        ]
        log.append_many(records)
        sys.stdout.write("".join(f"{seq + n}\n" for n in range(size)))
        sys.stdout.flush()
        seq += size
    log.close()
    print(f"closed {log.restored}", flush=True)


def main(argv: list[str]) -> None:
    mode = argv[1]
    if mode == "concurrent":
        concurrent(argv[2], argv[3], int(argv[4]), int(argv[5]))
    elif mode == "crash":
        crash(argv[2], int(argv[3]))
    elif mode == "soak":
        soak(argv[2], argv[3])
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv)
