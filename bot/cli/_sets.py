"""``hilbot sets list|generate|review``: query sets and their human-in-the-loop edit loop."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ._common import Context

if TYPE_CHECKING:
    from evaluation import HilbotConfig, Store
    from evaluation.llm import LLM
    from evaluation.queries import QuerySet, QuerySets

app = typer.Typer(
    help="Query sets: list them, generate new ones with an LLM, review and edit them.\n\n"
    "Example: hilbot sets list",
    no_args_is_help=True,
)

DirOption = Annotated[
    Optional[str],
    typer.Option(
        "--dir",
        help="Directory of query sets (default: [queries] dir in hilbot.toml, "
        "tests/fixtures/queries).",
    ),
]


def _sets(context: Context, directory: str | None) -> "QuerySets":
    from evaluation.queries import QuerySets

    return QuerySets(directory or context.config().queries.dir)


def _ask(prompt: str) -> str:
    """A line from stdin; piped input is echoed (control characters made visible) so a transcript
    reads like a session."""
    from evaluation.text import visible

    line = input(prompt)
    if not sys.stdin.isatty():
        typer.echo(visible(line, newlines=False))
    return line


def _llm(config: "HilbotConfig", store: "Store") -> "LLM":
    """The LLM client for proposals: never answered from the cache, so a new run gives a new
    batch."""
    from evaluation.llm import LLM

    return LLM(config.llm.model_copy(update={"cache": False}), store)


def _seed(sets: "QuerySets", spec: str | None) -> "QuerySet | None":
    """The set ``--set`` names (several combined); without it ``core`` when it exists, else none."""
    from evaluation.queries import QuerySet

    if spec is None:
        return sets.load("core") if "core" in sets.names() else None
    found = sets.resolve(spec)
    if len(found) == 1:
        return found[0]
    return QuerySet(name=spec, path=sets.directory, queries=[q for qs in found for q in qs.queries])


@app.command("list")
def list_(ctx: typer.Context, directory: DirOption = None) -> None:
    """List the query sets: curated ones (name, size, version) and generated ones.

    Example: hilbot sets list
    """
    from evaluation.text import visible

    typer.echo(
        "\n".join(visible(line, newlines=False) for line in _sets(ctx.obj, directory).listing())
    )


@app.command("generate")
def generate(
    ctx: typer.Context,
    set_: Annotated[
        Optional[str],
        typer.Option(
            "--set",
            help="Seed set(s) the LLM takes as examples: a name, all or "
            "generated/* (default: core when it exists).",
        ),
    ] = None,
    count: Annotated[
        Optional[int],
        typer.Option(
            "--count",
            min=1,
            max=50,
            help="Queries per batch (default: [queries] generate_count, 12).",
        ),
    ] = None,
    directory: DirOption = None,
) -> None:
    """Generate a new query set with the LLM, then edit it before it is saved.

    The LLM proposes a batch; you get the list with categories and intents and
    Actions: [a]ccept all, [e]dit list, [r]egenerate, [q]uit. Edit mode: drop 3,7,12 ·
    edit 5 · add · fill (the LLM tops the list up to --count) · list · done · help.
    Accept writes generated/<date>.json (<date>-2.json… when taken); quit writes nothing.
    Needs the [llm] provider's key (ANTHROPIC_API_KEY; OPENAI_BASE_URL for a local model); proposals
    are never answered from the LLM cache.

    Example: hilbot sets generate --set core --count 12
    """
    import asyncio

    from bot.curation import generation
    from evaluation.queries import propose_queries

    context: Context = ctx.obj
    config, store = context.config(), context.store()
    sets = _sets(context, directory)
    llm = _llm(config, store)
    seed = _seed(sets, set_)

    def propose(n: int, keep: list, avoid: list):
        return propose_queries(llm, count=n, seed=seed, keep=keep, avoid=avoid)

    def save_to(items: list):
        return sets.save_generated(
            items, seeded_from=seed.name if seed else None, model=llm.provider.model, store=store
        )

    session = generation(
        count=count or config.queries.generate_count,
        seed=seed,
        propose=propose,
        save_to=save_to,
        ask=_ask,
        say=typer.echo,
    )
    asyncio.run(session.run())


@app.command("review")
def review(
    ctx: typer.Context,
    set_: Annotated[
        str,
        typer.Option(
            "--set", help="Set to review: a name, all (every curated set) or generated/*."
        ),
    ] = "core",
    directory: DirOption = None,
) -> None:
    """Review and edit existing query sets; accept saves each file back in place.

    Shows the list (with each query's source set when several are loaded) and
    Actions: [a]ccept all, [e]dit list, [f]ill gaps with the LLM, [q]uit — [f] only
    when the [llm] provider's key is set; it tops the list back up to its original size.
    Edit mode: drop 3,7,12 · edit 5 · add [SET] (new queries go to the first set unless
    you name one) · fill · list · done · help. Files are written atomically, keeping the
    order of the queries and every field not edited; unchanged sets are not rewritten.

    Example: hilbot sets review --set all
    """
    import asyncio

    from bot.curation import review as review_session
    from evaluation.llm import has_key
    from evaluation.queries import propose_queries

    context: Context = ctx.obj
    config, store = context.config(), context.store()
    sets = _sets(context, directory)
    loaded = sets.resolve(set_)
    llm = _llm(config, store) if has_key(config.llm) else None

    def propose(n: int, keep: list, avoid: list):
        assert llm is not None  # passed to the session only with an LLM
        return propose_queries(llm, count=n, seed=None, keep=keep, avoid=avoid)

    session = review_session(
        loaded,
        propose=propose if llm else None,
        save_to=lambda qs: sets.save(qs, store),
        ask=_ask,
        say=typer.echo,
    )
    asyncio.run(session.run())
