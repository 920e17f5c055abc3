"""What the chat consoles share: print what the bot shows while reading what you type, then stop
the bot and say where the log is."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Protocol

__all__ = ["Console", "interact"]


class Console(Protocol):
    """You, as one user of a fake chat platform, against a running bot."""

    def refresh(self) -> None:
        """Print what is new or changed since the last look."""

    def handle(self, line: str) -> bool:
        """Act on one line you typed; False to stop."""


def interact(console: Console, proc: subprocess.Popen[bytes], data_dir: str, acts: str) -> None:
    """Feed standard input to ``console`` while a thread prints the bot's output, until ``quit``
    or end of input; then stop the bot (SIGTERM) and report its exit and the log."""
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(console, stop), daemon=True)
    watcher.start()
    try:
        for line in sys.stdin:
            if not console.handle(line):
                break
    finally:
        stop.set()
        watcher.join(timeout=2)
        proc.terminate()
        proc.wait(timeout=30)
        print(f"bot stopped (exit {proc.returncode}); every {acts} is in {data_dir}/ratings.jsonl")


def _watch(console: Console, stop: threading.Event) -> None:
    while not stop.is_set():
        console.refresh()
        time.sleep(0.2)
