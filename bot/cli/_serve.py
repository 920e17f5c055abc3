"""``hilbot serve <channel>``: run a chat bot for reviewers."""

from __future__ import annotations

from typing import Annotated

import typer

from ._common import Context


def serve(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Chat channel to serve: telegram or slack.")],
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log every call to the platform.")
    ] = False,
) -> None:
    """Run the reviewer bot on a chat platform until stopped (Ctrl-C or SIGTERM: a clean stop, exit
    0).

    Telegram: the token comes from TELEGRAM_BOT_TOKEN; TELEGRAM_API_URL (or [telegram] api_url)
    points at another Bot API server.

    Slack: SLACK_BOT_TOKEN (xoxb-) and, in Socket Mode (the default), SLACK_APP_TOKEN (xapp-);
    in HTTP mode ([slack] mode = "http") SLACK_SIGNING_SECRET. SLACK_API_URL (or [slack] api_url)
    points at another Web API base URL.

    Reviewers and admins are listed by user id in hilbot.toml.

    Example: hilbot serve slack
    """
    import logging

    from bot.channels import chat_channel
    from evaluation.scrub import install_logging

    # Every line, from any library, at any level, is scrubbed of secrets (an HTTP client logs each
    # URL, the bot token in it).
    undo = install_logging(
        logging.DEBUG if verbose else logging.INFO,
        quiet=(
            "httpx",
            "apscheduler",
            "slack_sdk",
            "slack_bolt",
            "hilbot.slack.socket",
            "hilbot.slack.bolt",
        ),
    )
    try:
        context: Context = ctx.obj
        channel = chat_channel(name)
        channel.serve(context.store(), context.config())
    except (
        KeyboardInterrupt
    ):  # stopped before the bot had taken the signals over: still a clean stop
        pass
    finally:
        undo()
