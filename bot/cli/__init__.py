"""The ``hilbot`` command line's entry point: every failure one line, and a clean stop on SIGINT or
SIGTERM.

The subcommands are assembled in :mod:`bot.cli._app`, imported only once the stop signals are
handled, so even a signal that arrives while hilbot is still starting ends it without a traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType
    from typing import Any, Callable

    _Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None
    """What ``signal.signal`` takes and returns."""


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: every failure is one line on stderr (``error: …``), exit 2.

    A :class:`HilbotError` says what, where and how to fix it; a bad option or argument says
    which and where the help is. Anything else that escapes a command is a bug in hilbot: it too
    is one line and exit 2 (``HILBOT_DEBUG=1`` shows the traceback), so a user never sees one.
    While the command runs, stdout and stderr are scrubbed of secrets: whatever prints there
    (typer, rich, ``print``, a library) goes through :func:`evaluation.scrub.scrub`.
    """
    from evaluation.scrub import scrub_streams

    argv = sys.argv[1:] if argv is None else list(argv)
    serving = _command(argv) in ("serve", "dashboard")
    previous = _stop_on_sigterm()
    unwrap = scrub_streams()
    try:
        code = _execute(argv)
    except KeyboardInterrupt:  # a signal before the command took it over
        code = 130
    finally:
        unwrap()
        _restore(previous)
    sys.exit(0 if serving and code == 130 else code)  # stopping a bot is not a failure


def _execute(argv: list[str]) -> int:
    """Run the command; failures become their one line (``_fail`` exits)."""
    import logging

    import typer

    from evaluation.errors import HilbotError
    from evaluation.scrub import CommandFormatter, install_logging

    from ._app import app
    from ._common import hold_warnings, release_warnings

    undo = install_logging(logging.WARNING, formatter=CommandFormatter())  # `serve` sets its own
    hold_warnings()
    try:
        code = app(args=argv, standalone_mode=False)
    except HilbotError as exc:
        _fail(exc.one_line(), exc.exit_code)
    except typer.TyperException as exc:  # the command line's own usage errors
        _usage(exc)
    except typer.Abort:
        _fail("aborted: the input ended", 1)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the backstop: a bug, reported without a traceback
        if os.environ.get("HILBOT_DEBUG"):
            raise
        _fail(
            f"unexpected failure ({type(exc).__name__}: {_first_line(exc)}) — this is a bug in "
            "hilbot; please report it with the command you ran (HILBOT_DEBUG=1 shows the traceback)",
            2,
        )
    finally:
        undo()
    release_warnings(show=True)
    return code if isinstance(code, int) else 0


def _command(argv: list[str]) -> str | None:
    """The subcommand's name: the first argument that is not a global option (or its value)."""
    args = iter(argv)
    for arg in args:
        if arg in ("--data-dir", "--config"):
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return None


def _stop_on_sigterm() -> _Handler:
    """SIGTERM stops hilbot as Ctrl-C does (cleanly); returns the handler it replaced."""
    try:
        return signal.signal(signal.SIGTERM, _interrupt)
    except ValueError:  # not the main thread: leave signals alone
        return None


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _restore(previous: _Handler) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


def _usage(exc: Exception) -> None:
    """A usage error of the command line itself (an unknown option, a bad value) as its one line."""
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError":  # a bare group: its help, as a user expects
        exc.show()  # type: ignore[attr-defined]
        sys.exit(2)
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    where = f" — see '{ctx.command_path} --help'" if ctx is not None else ""
    _fail(f"{message.rstrip('.')}{where}", getattr(exc, "exit_code", 2))


def _first_line(exc: BaseException) -> str:
    from evaluation.scrub import scrub

    lines = scrub(str(exc)).strip().splitlines()
    return lines[0][:300] if lines else "no message"


def _fail(message: str, code: int) -> None:
    """The one line: secrets scrubbed, control characters made visible."""
    from evaluation.scrub import scrub
    from evaluation.text import visible

    from ._common import release_warnings

    release_warnings(show=False)  # a failing command says one thing: this line
    print(f"error: {visible(scrub(message), newlines=False)}", file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
