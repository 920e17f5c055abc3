"""The ``hilbot`` command line in-process: what ``main()`` prints and returns, without a subprocess.

``invoke`` runs :func:`bot.cli.main` exactly as the console script does (one-line errors, exit
codes, the backstop for bugs) inside typer's ``CliRunner`` isolation: stdin, stdout, stderr and
the environment are swapped for the call, and the working directory is changed for it.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from typer.testing import CliRunner

from bot.cli import main

BUG = "this is a bug in hilbot"
"""What the backstop says; a test that sees it has found an unhandled failure."""


@dataclass
class Outcome:
    """What one command printed and returned."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def returncode(self) -> int:
        """The exit code (named as ``subprocess.CompletedProcess`` names it)."""
        return self.exit_code


def invoke(
    *args: str,
    input: str | bytes | None = None,
    env: Mapping[str, str | None] | None = None,
    cwd: str | Path | None = None,
) -> Outcome:
    """Run ``hilbot ARGS`` in this process; returns the exit code and both streams."""
    runner = CliRunner()
    code = 0
    with (
        runner.isolation(input=input, env=env) as (out, err, _),
        contextlib.chdir(cwd or os.getcwd()),
    ):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            import sys

            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue(), err.getvalue()
    return Outcome(code, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"))
