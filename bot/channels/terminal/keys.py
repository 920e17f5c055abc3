"""The terminal's input: single keys from a terminal in cbreak mode, or characters from a pipe."""

from __future__ import annotations

import contextlib
import os
import termios
import tty
from typing import IO, Iterator

from rich.console import Console

ENTER = ("\r", "\n")
"""What the enter key reads as."""
ALIASES = {"R": "ai_review"}
"""Keys that press a card's button by what it does, whatever key the card gave it: ``R`` asks for
the AI review of a change (its own key, ``i``, does too). Never lowered to another button's key."""


class Keys:
    """Single keys from a terminal in cbreak mode, or characters from a pipe."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.tty = stream.isatty()

    @contextlib.contextmanager
    def raw(self) -> Iterator[None]:
        """Cbreak mode (no echo, no line buffering; Ctrl-C still interrupts) while inside."""
        if not self.tty:
            yield
            return
        fd = self.stream.fileno()
        saved = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd)
            yield
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)

    def key(self) -> str:
        """One key; EOF reads as ``q``."""
        if self.tty:
            data = os.read(self.stream.fileno(), 1)
            return data.decode("utf-8", "replace") if data else "q"
        char = self.stream.read(1)
        return char or "q"

    def line(self, console: Console, prompt: str) -> str:
        """A line of text, echoed, for notes."""
        if self.tty:
            fd = self.stream.fileno()
            saved = termios.tcgetattr(fd)
            new = termios.tcgetattr(fd)
            new[3] |= termios.ICANON | termios.ECHO
            termios.tcsetattr(fd, termios.TCSADRAIN, new)
            try:
                console.print(prompt, end="", markup=False)
                return self.stream.readline().rstrip("\n")
            finally:
                termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        console.print(prompt, end="", markup=False)
        return self.stream.readline().rstrip("\n")


__all__ = ["ENTER", "Keys"]
