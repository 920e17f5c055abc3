"""Try the Telegram bot without a bot token: the local fake Bot API, you as its one user, and
``hilbot serve telegram``.

    .venv/bin/python -m tests.fakes.telegram_console

It starts the fake Bot API, writes a hilbot.toml naming you (user ``4242``) reviewer and admin,
runs ``hilbot serve telegram`` against the fake over the data directory (``--data-dir``, else
``HILBOT_DATA_DIR``, else ``results/``; ``hilbot demo`` fills it), and reads what you type:

    /review demo-docs-search          a command (any of /help)
    okay                              tap the button so labelled on the newest card that has one
    2:Good                            tap "Good" on card 2 (a label's start is enough)
    say Misses the errors page        send a message (a note the bot asked for, an answer)
    quit                              stop the bot (Ctrl-D too)

What the bot sends and edits is printed as you would read it in Telegram, buttons in brackets.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.fakes.console import interact
from tests.fakes.telegram_api import FakeTelegram

YOU = 4242


def _buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    markup = message.get("reply_markup") or {}
    return [b for row in markup.get("inline_keyboard", []) for b in row]


class Console:
    """You, as the one Telegram user of the fake, against a running bot."""

    def __init__(self, fake: FakeTelegram, out: Any = sys.stdout):
        self.fake, self.out = fake, out
        self._shown: dict[int, tuple[int, str]] = {}

    # -- what the bot shows
    def cards(self) -> list[dict[str, Any]]:
        """The bot's messages with buttons in your chat, oldest first (card 1 is the first)."""
        return [m for m in self.fake.messages(YOU) if _buttons(m)]

    def refresh(self) -> None:
        """Print what is new or changed since the last look."""
        cards = [m["message_id"] for m in self.cards()]
        for message in self.fake.messages(YOU):
            text = message.get("text") or message.get("caption") or ""
            state = (message.get("edits", 0), text + repr(message.get("reply_markup")))
            key = message["message_id"]
            if self._shown.get(key) == state:
                continue
            edited = key in self._shown
            self._shown[key] = state
            number = cards.index(key) + 1 if key in cards else None
            head = f"── card {number}" if number else "──"
            photo = "[a picture] " if "photo" in message else ""
            labels = "  ".join(f"[{b['text']}]" for b in _buttons(message))
            self.out.write(
                f"{head}{' (edited)' if edited else ''}\n{photo}{text}\n"
                + (labels + "\n" if labels else "")
            )
        self.out.flush()

    # -- what you do
    def handle(self, line: str) -> bool:
        """Act on one line you typed; False to stop."""
        line = line.strip()
        if line in ("quit", "exit"):
            return False
        if line.startswith("/"):
            self.fake.send_text(YOU, line)
        elif line.startswith(("say ", "note ")):
            self.fake.send_text(YOU, line.split(" ", 1)[1])
        elif line:
            self._tap(line)
        return True

    def _tap(self, line: str) -> None:
        number, _, label = line.rpartition(":")
        cards = self.cards()
        if number.isdigit() and 0 < int(number) <= len(cards):
            chosen = [cards[int(number) - 1]]
        else:
            chosen, label = cards[::-1], line
        for card in chosen:
            if any(b["text"].startswith(label) for b in _buttons(card)):
                self.fake.tap_button(YOU, YOU, card["message_id"], label)
                return
        self.out.write(f"no button {label!r} on {'that card' if number else 'any card'}\n")


def _start_bot(fake: FakeTelegram, root: Path, data_dir: str) -> subprocess.Popen[bytes]:
    config = root / "hilbot.toml"
    config.write_text(f"[telegram]\nreviewers = [{YOU}]\nadmins = [{YOU}]\npoll_timeout_s = 1\n")
    env = {**os.environ, **fake.env(), "HILBOT_CONFIG": str(config), "HILBOT_DATA_DIR": data_dir}
    log = open(root / "bot.log", "w")
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "hilbot"), "serve", "telegram"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    fake.wait(
        lambda: fake.calls_to("getUpdates") or proc.poll() is not None,
        timeout=30,
        what="the bot to start",
    )
    if proc.poll() is not None:
        raise SystemExit(f"hilbot serve telegram exited:\n{(root / 'bot.log').read_text()}")
    return proc


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("HILBOT_DATA_DIR", "results"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, FakeTelegram(limits=None) as fake:
        fake.user(YOU, first_name="You", username="you")
        proc = _start_bot(fake, Path(tmp), args.data_dir)
        console = Console(fake)
        print(
            f"hilbot serve telegram is running; you are user {YOU}. Try: /review demo-docs-search",
            flush=True,
        )
        interact(console, proc, args.data_dir, "tap")


if __name__ == "__main__":
    main()
