"""The evaluation package's one base exception.

Every message says what went wrong, where (``file:line`` when there is a file) and how
to fix it; the CLI prints it as one line and exits with code 2. The three parts are scrubbed
of secrets when the error is built, so no secret a server echoed reaches a terminal or a file.
"""

from __future__ import annotations


class HilbotError(Exception):
    """Base of every error hilbot reports to a user (exit code 2, one line, no traceback)."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None, fix: str | None = None):
        from .scrub import scrub  # here, not at the top: the CLI imports this module at every start

        self.what = scrub(str(message))
        self.where = where if where is None else scrub(str(where))
        self.fix = fix if fix is None else scrub(fix)
        super().__init__(self.one_line())

    def one_line(self) -> str:
        text = f"{self.where}: {self.what}" if self.where else self.what
        return f"{text} — {self.fix}" if self.fix else text


class ConfigError(HilbotError):
    """``hilbot.toml`` is invalid."""


class LogError(HilbotError):
    """An event log cannot be read or written."""


class RunNotFound(HilbotError):
    """A run id names no run in the data directory."""


class ImportFailed(HilbotError):
    """An evaluation tool's output file cannot be turned into a run."""
