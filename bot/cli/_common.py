"""Options shared by every command, and the objects they build."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Iterable, Optional

import click
import typer

if TYPE_CHECKING:
    from evaluation import HilbotConfig, LogIssue, Store


@dataclass
class Context:
    """What the global options say."""

    data_dir: str | None
    config_path: str | None

    def config(self) -> "HilbotConfig":
        from evaluation import load_config

        return load_config(self.config_path)

    def store(self) -> "Store":
        from evaluation import Store
        from evaluation.backends import store_url

        config = self.config()  # a bad hilbot.toml is reported whichever command runs
        store = Store(self.data_dir or config.data_dir, url=store_url(config.store.url))
        command = click.get_current_context(silent=True)
        if store.shared and command is not None:  # its database connections close with it
            command.call_on_close(store.close)
        return store

    def hint(self, *args: str) -> str:
        """A command line for the user's next step that runs as printed (see
        :mod:`bot.invocation`)."""
        import shlex

        from bot.invocation import prefix

        start = prefix(self.data_dir, self.config().data_dir if self.data_dir else None)
        return " ".join([start, *map(shlex.quote, args)])


def global_options(
    ctx: typer.Context,
    data_dir: Annotated[
        Optional[str],
        typer.Option(
            "--data-dir", envvar="HILBOT_DATA_DIR", help="Data directory (default: results/)."
        ),
    ] = None,
    config: Annotated[
        Optional[str],
        typer.Option(
            "--config",
            envvar="HILBOT_CONFIG",
            help="Path of hilbot.toml (default: ./hilbot.toml if present).",
        ),
    ] = None,
) -> None:
    """Human review of AI evaluations in the chat your reviewers already use.

    Example: hilbot demo
    """
    ctx.obj = Context(data_dir, config)


_held: list[str] | None = None
"""Warnings kept back until the command has succeeded (when stderr is not a terminal), else None."""


def warn(lines: Iterable[object]) -> None:
    """``warning: …`` on stderr per line, control characters made visible.

    When stderr is not a terminal they are held until the command succeeds, so that a command
    that fails says one thing on stderr: its one error line.
    """
    from evaluation.text import visible

    for line in lines:
        text = f"warning: {visible(str(line), newlines=False)}"
        if _held is None:
            print(text, file=sys.stderr)
        else:
            _held.append(text)


def warn_issues(issues: "list[LogIssue]") -> None:
    """Print unreadable log lines as ``warning: file:line: reason`` (see :func:`warn`)."""
    warn(issues)


def hold_warnings() -> None:
    """From now on, hold warnings back if stderr is not a terminal (a command starts)."""
    global _held
    _held = None if sys.stderr.isatty() else []


def release_warnings(*, show: bool) -> None:
    """Print the held warnings (the command succeeded) or drop them (it failed); print at once from
    now on."""
    global _held
    held, _held = _held or [], None
    for text in held if show else ():
        print(text, file=sys.stderr)


def default_reviewer() -> str:
    """The OS user name, the terminal reviewer's default id."""
    return os.environ.get("USER") or os.environ.get("USERNAME") or "reviewer"
