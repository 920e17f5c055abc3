"""Options shared by every command, and the objects they build."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Optional

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

        config = self.config()  # a bad hilbot.toml is reported whichever command runs
        return Store(self.data_dir or config.data_dir)


def global_options(
    ctx: typer.Context,
    data_dir: Annotated[Optional[str], typer.Option("--data-dir", envvar="HILBOT_DATA_DIR", help="Data directory (default: results/).")] = None,
    config: Annotated[Optional[str], typer.Option("--config", envvar="HILBOT_CONFIG", help="Path of hilbot.toml (default: ./hilbot.toml if present).")] = None,
) -> None:
    """Human review of AI evaluations in the chat your reviewers already use.

    Example: hilbot demo
    """
    ctx.obj = Context(data_dir, config)


def warn_issues(issues: "list[LogIssue]") -> None:
    """Print unreadable log lines as ``warning: file:line: reason`` on stderr (control characters made visible)."""
    from evaluation.text import visible

    for issue in issues:
        print(f"warning: {visible(str(issue), newlines=False)}", file=sys.stderr)


def default_reviewer() -> str:
    """The OS user name, the terminal reviewer's default id."""
    return os.environ.get("USER") or os.environ.get("USERNAME") or "reviewer"
