"""The ``hilbot`` command line: this module only assembles the subcommands.

Each command lives in its own module, parses its options and calls one library function.
Heavy libraries are imported inside the commands, so ``hilbot --help`` stays fast.
"""

from __future__ import annotations

import typer

from . import (
    _adjudicate,
    _analyze,
    _connectors,
    _dashboard,
    _data,
    _demo,
    _digest,
    _review,
    _run,
    _sample,
    _serve,
    _sets,
    _store,
    _triage,
)
from ._common import global_options

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
app.command("adjudicate")(_adjudicate.adjudicate)
app.command("import")(_data.import_)
app.command("export")(_data.export)
app.command("schema")(_data.schema)
app.add_typer(_sets.app, name="sets")
app.command("run")(_run.run)
app.command("compare")(_run.compare)
app.command("serve")(_serve.serve)
app.command("digest")(_digest.digest)
app.command("dashboard")(_dashboard.dashboard)
app.command("report")(_dashboard.report)
app.command("triage")(_triage.triage)
app.command("sample")(_sample.sample)
app.command("pull", context_settings=_connectors.SETTINGS)(_connectors.pull)
app.command("push", context_settings=_connectors.SETTINGS)(_connectors.push)
app.command("status")(_connectors.status)
app.add_typer(_analyze.app, name="analyze")
app.add_typer(_store.app, name="store")
