"""Try the Slack bot without a Slack workspace: the local fake Slack, you as its one user, and
``hilbot serve slack``.

    .venv/bin/python -m tests.fakes.slack_console           # Socket Mode (the default)
    .venv/bin/python -m tests.fakes.slack_console --http    # signed HTTP requests to the bot's request URL

It starts the fake Slack, writes a hilbot.toml naming you (``U0YOU``) reviewer and admin, runs
``hilbot serve slack`` against the fake over the data directory (``--data-dir``, else
``HILBOT_DATA_DIR``, else ``results/``; ``hilbot demo`` fills it), and reads what you type:

    /hilbot review demo-docs-search   a slash command (any of /hilbot help)
    good                              click the button so labelled on the newest card that has one
    2:okay                            click "okay" on card 2
    note Misses the errors page       type into the open note modal and submit it (else: a direct message)
    home                              open the App Home tab; "home:1" clicks its first button
    quit                              stop the bot (Ctrl-D too)

What the bot posts, edits and opens is printed as you would read it in Slack.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.chat_drivers.slack import flatten, unescape
from tests.fakes.console import interact
from tests.fakes.slack_api import FakeSlack, buttons

YOU = "U0YOU"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Console:
    """You, as one Slack user of the fake, against a running bot."""

    def __init__(self, fake: FakeSlack, out=sys.stdout):
        self.fake, self.out = fake, out
        self._shown: dict[str, tuple] = {}
        self._ephemerals = 0

    # -- what the bot shows
    def _items(self) -> list[tuple[str, str, list[dict], int]]:
        """(id, kind, blocks or text, edits) of every bot message and modal in your DM, oldest
        first."""
        shown = [(m["ts"], "message", m, m.get("edits", 0)) for m in self.fake.messages(YOU)]
        shown += [
            (v["opened_ts"], "modal", v, v.get("updates", 0))
            for v in self.fake.views
            if v["type"] == "modal"
        ]
        return sorted(shown, key=lambda row: float(row[0]))

    def cards(self) -> list[dict]:
        """Your DM's messages with buttons, oldest first (card 1 is the first)."""
        return [
            m
            for _, kind, m, _ in self._items()
            if kind == "message" and buttons(m.get("blocks") or [])
        ]

    def refresh(self) -> None:
        """Print what is new or changed since the last look."""
        cards = self.cards()
        for key, kind, raw, edits in self._items():
            state = (edits, raw.get("status"))
            if self._shown.get(key) == state:
                continue
            seen_before = key in self._shown
            self._shown[key] = state
            self._print(kind, raw, cards, edited=seen_before)
        for said in self.fake.ephemerals(self.fake.dm(YOU), YOU)[self._ephemerals :]:
            self._ephemerals += 1
            self.out.write(f"(only you) {unescape(said['text'])}\n")
        self.out.flush()

    def _print(self, kind: str, raw: dict, cards: list[dict], *, edited: bool) -> None:
        blocks = raw.get("blocks") or []
        if kind == "modal":
            head = f"── modal “{raw['title']['text']}” ({raw.get('status')})"
            hint = (
                "   type: note <your text>" if any(b.get("type") == "input" for b in blocks) else ""
            )
            self.out.write(
                f"{head}\n{flatten(blocks)}\n{hint}\n" if hint else f"{head}\n{flatten(blocks)}\n"
            )
            return
        number = next((n for n, card in enumerate(cards, 1) if card["ts"] == raw["ts"]), None)
        head = f"── card {number}" if number else "──"
        text = flatten(blocks) if blocks else unescape(raw.get("text", ""))
        labels = "  ".join(f"[{b['text']['text']}]" for _, b in buttons(blocks))
        self.out.write(
            f"{head}{' (edited)' if edited else ''}\n{text}\n{labels + chr(10) if labels else ''}"
        )

    # -- what you do
    def handle(self, line: str) -> bool:
        """Act on one line you typed; False to stop."""
        line = line.strip()
        if line in ("quit", "exit"):
            return False
        if line.startswith("/hilbot"):
            self.fake.slash(YOU, line[len("/hilbot") :].strip())
        elif line.startswith("note "):
            self._note(line[5:])
        elif line.startswith("home"):
            self._home(line)
        elif line:
            self._click(line)
        return True

    def _note(self, text: str) -> None:
        open_ = [
            v
            for v in self.fake.open_views(YOU)
            if any(b.get("type") == "input" for b in v.get("blocks", []))
        ]
        if open_:
            self.fake.submit_view(YOU, open_[-1]["id"], text=text)
        else:
            self.fake.message_im(YOU, text)

    def _home(self, line: str) -> None:
        if ":" not in line:
            self.fake.open_home(YOU)
            time.sleep(0.5)
            home = self.fake.home(YOU)
            self.out.write(f"── App Home\n{flatten(home['blocks']) if home else '(empty)'}\n")
            return
        home = self.fake.home(YOU)
        found = buttons(home["blocks"]) if home else []
        index = int(line.split(":", 1)[1]) - 1
        if 0 <= index < len(found):
            self.fake.click_in_view(YOU, home["id"], found[index][1].get("value"))

    def _click(self, line: str) -> None:
        number, _, label = line.rpartition(":")
        cards = self.cards()
        chosen = (
            [cards[int(number) - 1]]
            if number.isdigit() and 0 < int(number) <= len(cards)
            else cards[::-1]
        )
        for card in chosen:
            if any(
                b["text"]["text"].startswith(label) for _, b in buttons(card.get("blocks") or [])
            ):
                self.fake.click_button(YOU, self.fake.dm(YOU), card["ts"], label)
                return
        self.out.write(f"no button {label!r} on {'that card' if number else 'any card'}\n")


def _config(root: Path, http_port: int | None) -> Path:
    path = root / "hilbot.toml"
    mode = f'mode = "http"\nport = {http_port}\n' if http_port else ""
    path.write_text(f'[slack]\nreviewers = ["{YOU}"]\nadmins = ["{YOU}"]\n{mode}')
    return path


def _start_bot(
    fake: FakeSlack, root: Path, data_dir: str, http_port: int | None
) -> subprocess.Popen:
    env = {
        **os.environ,
        **fake.env(),
        "HILBOT_CONFIG": str(_config(root, http_port)),
        "HILBOT_DATA_DIR": data_dir,
    }
    log = open(root / "bot.log", "w")
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "hilbot"), "serve", "slack"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    ready = (lambda: _accepts(http_port)) if http_port else (lambda: fake.connections >= 1)
    fake.wait(lambda: ready() or proc.poll() is not None, timeout=30, what="the bot to start")
    if proc.poll() is not None:
        raise SystemExit(f"hilbot serve slack exited:\n{(root / 'bot.log').read_text()}")
    if http_port:
        fake.http_target = f"http://127.0.0.1:{http_port}/slack/events"
    return proc


def _accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--http", action="store_true", help="HTTP mode (signed requests) instead of Socket Mode"
    )
    parser.add_argument("--data-dir", default=os.environ.get("HILBOT_DATA_DIR", "results"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, FakeSlack() as fake:
        fake.user(YOU, "you")
        proc = _start_bot(fake, Path(tmp), args.data_dir, _free_port() if args.http else None)
        console = Console(fake)
        print(
            f"hilbot serve slack is running ({'HTTP' if args.http else 'Socket Mode'}); you are "
            f"{YOU}. Try: /hilbot review demo-docs-search",
            flush=True,
        )
        interact(console, proc, args.data_dir, "click")


if __name__ == "__main__":
    main()
