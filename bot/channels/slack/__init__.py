"""The Slack channel: slack-bolt wiring around the chat core.

This module only turns Slack's deliveries — the ``/hilbot`` slash command, button clicks, note
modal submissions, direct messages, the App Home tab — into the chat core's events, and starts
and stops the bot; the review flow is :class:`~bot.chat.ChatFlow`'s. The rest of the channel is
in this package:

- :mod:`.port`: :class:`~.port.SlackPort`, sending, paced to Slack's limits;
- :mod:`.render`: Block Kit, modals, the App Home;
- :mod:`.start`: the tokens, the Web API client, every refusal at start-up as one line;
- :mod:`.digest`: ``hilbot digest --post slack``.

Socket Mode is the default (``SLACK_APP_TOKEN``: no public URL needed); HTTP mode serves one
request URL for slash commands, interactivity and events, and slack-bolt refuses (401) a
request whose signature is wrong or whose timestamp is more than five minutes off. Bolt runs
each listener to its end before acknowledging (``process_before_response``): a click is
acknowledged only once its records are on disk, and a listener returns as soon as that is
done. A delivery Slack retries carries the same ids, so it counts once.
"""

from __future__ import annotations

import asyncio
import logging
import re
import traceback
from typing import Any

from slack_bolt.async_app import AsyncApp

from evaluation import HilbotConfig, HilbotError, LogIssue, Store
from evaluation.scrub import hold

from ...chat import Access, Chat, ChatFlow, Command, PortError, Scheduler, Tap, Text, User
from ...chat.flow import STOP_GRACE_S
from ...review import ReviewEngine
from .. import channel
from ..common import serve, stop_signal
from . import render
from .digest import check_digest_target, post_digest, post_digest_now
from .port import Delivered, SlackPort, conversation, metadata
from .start import Secrets, api_url, check, close_client, refusal, secrets, web_client

_log = logging.getLogger("hilbot.slack")
NOT_IN_CHANNEL = (
    "Invite the bot to this channel first (/invite @hilbot), or use {command} in "
    "your direct messages with it."
)


def unescape(text: str) -> str:
    """A message's text as the user typed it (Slack escapes ``&``, ``<`` and ``>``)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _user(raw: dict[str, Any]) -> User:
    name = raw.get("username") or raw.get("name") or raw.get("user_name")
    return User(str(raw.get("id") or raw.get("user_id") or "?"), name)


class SlackBot:
    """hilbot's Slack bot over one data directory: start it, and it serves every reviewer until
    stopped."""

    def __init__(
        self,
        store: Store,
        config: HilbotConfig,
        *,
        secrets: Secrets,
        api_url: str,
        issues: list[LogIssue] | None = None,
    ):
        self.settings = settings = config.slack
        self.secrets, self.api_url = secrets, api_url
        hold(secrets.app_token, secrets.signing_secret)  # secrets from now on, however they came
        self.client = web_client(
            secrets.bot_token,
            api_url,
            timeout=settings.read_timeout_s,
            retries=settings.limits.max_retries,
        )
        self.port = SlackPort(self.client, settings.limits, settings.command)
        self.engine = ReviewEngine(store, config, issues if issues is not None else [])
        access = Access(frozenset(settings.reviewers), frozenset(settings.admins))
        self.flow = ChatFlow(self.engine, self.port, access, on_error=self.report)
        self.scheduler = Scheduler(
            self.flow,
            refresh_s=settings.refresh_s,
            digest=settings.digest,
            chats=[conversation(c) for c in settings.digest.chats],
        )
        self.app = self._app()
        self._socket: Any = None
        self._runner: Any = None

    def _app(self) -> AsyncApp:
        http = self.settings.mode == "http"
        logging.getLogger("hilbot.slack.bolt").addFilter(_no_token_warning)
        signing_secret = self.secrets.signing_secret if http else "socket-mode"
        app = AsyncApp(
            client=self.client,
            signing_secret=signing_secret,
            request_verification_enabled=http,
            process_before_response=True,
            logger=logging.getLogger("hilbot.slack.bolt"),
        )
        app.middleware(self._learn_token)
        app.command(self.settings.command)(self._on_command)
        app.action(re.compile(rf"^{render.ACTION}:"))(self._on_click)
        app.action(re.compile(rf"^{render.HOME_ACTION}:"))(self._on_home_click)
        app.view(render.NOTE_VIEW)(self._on_note)
        app.view_closed(render.NOTE_VIEW)(self._ignore)
        app.event("message")(self._on_message)
        app.event("app_home_opened")(self._on_home)
        app.error(self._on_error)
        return app

    @staticmethod
    async def _learn_token(body: dict[str, Any], next: Any) -> Any:
        """Every delivery carries the app's verification token, which no variable holds: from the
        first one on, the scrubber knows it too (in HTTP mode only signed ones get this far)."""
        token = body.get("token") if isinstance(body, dict) else None
        hold(token if isinstance(token, str) else None)
        return await next()

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Check the token (auth.test), connect (Socket Mode) or listen (HTTP), start the
        scheduler."""
        await check(self.client, self.api_url)
        if self.settings.mode == "socket":
            await self._connect()
        else:
            await self._listen()
        self.scheduler.start()

    async def _connect(self) -> None:
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

        settings = self.settings
        opener = web_client(
            None,
            self.api_url,
            timeout=settings.read_timeout_s,
            retries=settings.limits.max_retries,
            connections=2,
        )
        assert self.secrets.app_token is not None  # socket mode's secrets carry it
        # the app token checked once, here: the Socket Mode client itself retries a refusal for ever
        try:
            await opener.apps_connections_open(app_token=self.secrets.app_token)
        except Exception as exc:  # noqa: BLE001 — every failure to connect becomes the one line
            await close_client(opener)
            raise refusal(exc, "apps.connections.open", self.api_url) from None
        self._socket = AsyncSocketModeHandler(
            self.app,
            self.secrets.app_token,
            web_client=opener,
            proxy=opener.proxy,
            logger=logging.getLogger("hilbot.slack.socket"),
        )
        await self._socket.connect_async()

    async def _listen(self) -> None:
        from aiohttp import web

        settings = self.settings
        self._runner = web.AppRunner(
            self.app.web_app(path=settings.path, port=settings.port), access_log=None
        )
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, settings.listen, settings.port).start()
        except OSError as exc:
            address = f"{settings.listen}:{settings.port}"
            raise HilbotError(
                f"cannot listen for Slack requests on {address} ({exc.strerror or exc})",
                fix="set [slack] listen and port to a free address, or stop what is using it",
            ) from None

    async def stop(self) -> None:
        """Stop receiving, let work under way finish, close the connections (each step only if it
        was started)."""
        await self.scheduler.stop()
        if self._socket is not None:
            await self._socket.close_async()
            await self._socket.client.web_client.session.close()
        if self._runner is not None:
            await self._runner.cleanup()
        await self.flow.close(STOP_GRACE_S)
        await close_client(self.client)

    # ------------------------------------------------------------------ deliveries → events

    async def _on_command(self, ack: Any, command: dict[str, Any], respond: Any) -> None:
        """``/hilbot <subcommand> …``: acknowledged at once, handled in the background."""
        await ack()
        self.flow.spawn(
            self._command(command, respond),
            f"{self.settings.command} from {command.get('user_id')}",
        )

    async def _command(self, body: dict[str, Any], respond: Any) -> None:
        words = str(body.get("text") or "").split()
        name, args = (words[0].lower(), tuple(words[1:])) if words else ("help", ())
        user = _user(body)
        chat = await self._conversation(str(body.get("channel_id") or ""), user.id)
        try:
            await self.flow.on_command(Command(user, chat, name, args, handle=body))
        except PortError as exc:
            if exc.kind != "chat":
                raise
            said = render.escape(NOT_IN_CHANNEL.format(command=self.settings.command))
            await respond(text=said, response_type="ephemeral")

    async def _conversation(self, channel_id: str, user_id: str) -> Chat:
        """Where to answer: a DM means the user's DM with the app (a command may come from any
        DM)."""
        if channel_id.startswith("D") or not channel_id:
            return await self.port.private_chat(user_id)
        return conversation(channel_id)

    async def _on_click(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A card's button: stored, then acknowledged (by the chat core, through the port's
        ``answer``)."""
        container = body.get("container") or {}
        channel_id = str(container.get("channel_id") or (body.get("channel") or {}).get("id") or "")
        ts = container.get("message_ts")
        user = _user(body.get("user") or {})
        # a button on a modal or an ephemeral message: none of hilbot's cards
        if not channel_id or not ts:
            return await ack()
        chat = conversation(channel_id)
        # the same in a retried delivery
        click = f"{user.id}:{action.get('action_ts') or body.get('trigger_id')}"
        await self.flow.on_tap(
            Tap(
                user,
                chat,
                str(ts),
                str(action.get("value") or ""),
                click,
                handle=Delivered(ack, body.get("trigger_id")),
            )
        )

    async def _on_home_click(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Start or Resume on the App Home: ``/hilbot review <run> <dimension>`` in the user's
        DM."""
        await ack()
        run_id, _, dimension = str(action.get("value") or "").partition("|")
        user = _user(body.get("user") or {})
        self.flow.spawn(self._review(user, run_id, dimension), f"home click from {user.id}")

    async def _review(self, user: User, run_id: str, dimension: str) -> None:
        chat = await self.port.private_chat(user.id)
        args = tuple(a for a in (run_id, dimension) if a)
        await self.flow.on_command(Command(user, chat, "review", args))

    async def _on_note(self, ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        """A submitted note modal: the note is stored, then the modal is closed (the
        acknowledgement)."""
        where = metadata(view)
        if where.get("chat"):
            text = render.note_text(view.get("state") or {})
            chat = Chat(str(where["chat"]), bool(where.get("group")))
            await self.flow.on_text(
                Text(
                    _user(body.get("user") or {}),
                    chat,
                    str(view.get("id")),
                    text,
                    reply_to=str(view.get("id")),
                    handle=body,
                )
            )
        await ack()

    async def _on_message(self, event: dict[str, Any]) -> None:
        """A direct message: a note when it answers a note prompt (a thread reply, or the open
        prompt)."""
        if (
            event.get("subtype")
            or event.get("bot_id")
            or event.get("channel_type") != "im"
            or not event.get("user")
        ):
            return
        channel_id, user = str(event["channel"]), User(str(event["user"]))
        self.port.knows_dm(user.id, channel_id)
        thread = event.get("thread_ts")
        reply_to = str(thread) if thread and thread != event.get("ts") else None
        await self.flow.on_text(
            Text(
                user,
                Chat(channel_id),
                str(event.get("ts")),
                unescape(str(event.get("text") or "")),
                reply_to=reply_to,
                handle=event,
            )
        )

    async def _on_home(self, event: dict[str, Any]) -> None:
        """The App Home tab: the reviewer's runs with their progress, each with a Start or Resume
        button."""
        if event.get("tab") != "home" or not event.get("user"):
            return
        intro, rows = await asyncio.to_thread(self.flow.home, User(str(event["user"])))
        await self.port.publish_home(str(event["user"]), render.home_view(rows, intro))

    async def _ignore(self, ack: Any) -> None:
        await ack()

    # ------------------------------------------------------------------ the one error handler

    async def _on_error(self, error: BaseException, body: dict[str, Any]) -> None:
        self.report(error, _summary(body))

    def report(self, error: BaseException, context: object) -> None:
        """Log an error with its traceback first, then what was being handled (never a delivery's
        token)."""
        trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        context = getattr(context, "handle", context)
        _log.error(
            "%s\nwhile handling %s",
            trace,
            _summary(context) if isinstance(context, dict) else context,
        )


def _no_token_warning(record: logging.LogRecord) -> bool:
    """Bolt reads ``SLACK_BOT_TOKEN`` itself and warns that the client's token wins: they are the
    same token."""
    return not str(record.msg).startswith("As you gave `client` as well")


def _summary(body: Any) -> str:
    """A delivery as a log line names it: its type, user, channel and action ids (no token, no
    text)."""
    if not isinstance(body, dict):
        return str(body)
    user = body.get("user")
    if not isinstance(user, dict):
        user = {"id": body.get("user_id") or body.get("user")}
    actions = [a.get("action_id") for a in body.get("actions") or [] if isinstance(a, dict)]
    command = body.get("command")
    kind = body.get("type") or ("slash command " + str(command) if command else "delivery")
    where = body.get("channel_id") or (body.get("channel") or {}).get("id")
    return f"{kind} from {user.get('id')} in {where} {actions or ''}".strip()


class SlackChannel:
    """``hilbot serve slack``."""

    name = "slack"

    def serve(self, store: Store, config: HilbotConfig) -> None:
        """Run the bot until SIGINT or SIGTERM (exit 0, also while starting); a failed start is one
        error."""
        asyncio.run(self._serve(store, config))

    async def _serve(self, store: Store, config: HilbotConfig) -> None:
        stop = stop_signal()
        bot = SlackBot(store, config, secrets=secrets(config), api_url=api_url(config))
        await serve(stop, bot.start(), bot.stop)


channel("slack")(SlackChannel)

__all__ = [
    "SlackBot",
    "SlackChannel",
    "SlackPort",
    "check_digest_target",
    "post_digest",
    "post_digest_now",
    "unescape",
]
