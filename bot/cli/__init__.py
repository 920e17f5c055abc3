"""The ``hilbot`` command line: this module only assembles the subcommands.

Each command lives in its own module, parses its options and calls one library function.
Heavy libraries are imported inside the commands, so ``hilbot --help`` stays fast.
"""

from __future__ import annotations

import os
import sys

import typer

from . import _analyze, _data, _demo, _digest, _review, _run, _serve, _sets
from ._common import global_options, hold_warnings, release_warnings

app = typer.Typer(
    name="hilbot",
    help="Human review of AI evaluations in the chat your reviewers already use.\n\n"
    "Example: hilbot demo",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.callback()(global_options)
app.command("demo")(_demo.demo)
app.command("review")(_review.review)
app.command("import")(_data.import_)
app.command("export")(_data.export)
app.command("schema")(_data.schema)
app.add_typer(_sets.app, name="sets")
app.command("run")(_run.run)
app.command("compare")(_run.compare)
app.command("serve")(_serve.serve)
app.command("digest")(_digest.digest)
app.add_typer(_analyze.app, name="analyze")


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: every failure is one line on stderr (``error: …``), exit 2.

    A :class:`HilbotError` says what, where and how to fix it; a bad option or argument says
    which and where the help is. Anything else that escapes a command is a bug in hilbot: it too
    is one line and exit 2 (``HILBOT_DEBUG=1`` shows the traceback), so a user never sees one.
    """
    import logging

    from evaluation.errors import HilbotError
    from evaluation.scrub import CommandFormatter, install_logging

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
        sys.exit(130)
    except Exception as exc:  # the backstop: a bug, reported without a traceback
        if os.environ.get("HILBOT_DEBUG"):
            raise
        _fail(f"unexpected failure ({type(exc).__name__}: {_first_line(exc)}) — this is a bug in hilbot; "
              "please report it with the command you ran (HILBOT_DEBUG=1 shows the traceback)", 2)
    finally:
        undo()
    release_warnings(show=True)
    sys.exit(code if isinstance(code, int) else 0)


def _usage(exc: "typer.TyperException") -> None:
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

    release_warnings(show=False)  # a failing command says one thing: this line
    print(f"error: {visible(scrub(message), newlines=False)}", file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
