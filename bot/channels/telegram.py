"""The Telegram reviewer bot: a thin adapter between python-telegram-bot and the review engine.

It turns commands, button taps and note replies into engine actions and renders what comes
back; every decision about the review is the engine's (:mod:`bot.review`) and every piece of
state is in the log (:mod:`bot.sessions`). A tap is stored (appended and fsynced) before its
callback query is answered; only then is the message edited and the next card dealt.
"""

from __future__ import annotations

import asyncio
import logging
import os
import traceback
from dataclasses import dataclass, field
from datetime import datetime, time as daytime, timedelta, timezone
from html import escape
from typing import Any

from telegram import (BotCommand, ForceReply, InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions,
                      Message, ReplyParameters, Update)
from telegram.constants import ParseMode
from telegram.error import (BadRequest, Conflict, Forbidden, InvalidToken, NetworkError, RetryAfter, TelegramError,
                            TimedOut)
from telegram.ext import (Application, CallbackQueryHandler, CommandHandler, ContextTypes, Defaults, MessageHandler,
                          filters)
from telegram.request import HTTPXRequest

from evaluation import HilbotConfig, HilbotError, LogIssue, Reviewer, Store
from evaluation.scrub import scrub
from evaluation.text import visible

from ..cards import Action, Card
from ..review import ReviewEngine, ReviewSession, State, Step
from ..sessions import Refused, Sessions, Tap
from . import _telegram_render as render
from . import channel
from ._flood import FloodLimiter

_log = logging.getLogger("hilbot.telegram")

COMMANDS = [
    ("start", "Welcome, and your Telegram user id"),
    ("help", "How to review"),
    ("runs", "Recent runs"),
    ("review", "/review <run-id> [dimension]: start or resume"),
    ("next", "Show your open card again, or the next one"),
    ("status", "Your progress per run"),
    ("push", "Admins: /push <run-id> [dimension] deals cards to every reviewer"),
    ("digest", "Admins: post a digest now"),
]


@dataclass
class Where:
    """The chat a session's cards go to."""

    chat_id: int
    group: bool = False


@dataclass
class ReviewBot:
    """Handlers for one bot, over one engine and one data directory."""

    store: Store
    config: HilbotConfig
    issues: list[LogIssue] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.settings = self.config.telegram
        self.engine = ReviewEngine(self.store, self.config, self.issues)
        self.sessions = Sessions(self.engine, "telegram")
        self.limiter = FloodLimiter(**self.settings.limits.model_dump())
        self._chats: dict[tuple[str, str, str], tuple[ReviewSession, Where]] = {}
        """Where each session started by /review or /push deals its cards (for runs that grow)."""
        self._out: dict[str, asyncio.Lock] = {}

    # ------------------------------------------------------------------ application

    def application(self, token: str, api_url: str) -> Application:
        """A python-telegram-bot Application with every handler registered."""
        timeout = self.settings.read_timeout_s
        app = (Application.builder().token(token).base_url(f"{api_url}/bot").base_file_url(f"{api_url}/file/bot")
               .defaults(Defaults(parse_mode=ParseMode.HTML, link_preview_options=LinkPreviewOptions(is_disabled=True)))
               .request(HTTPXRequest(connection_pool_size=512, read_timeout=timeout, write_timeout=timeout, pool_timeout=timeout))
               .get_updates_request(HTTPXRequest(read_timeout=self.settings.poll_timeout_s + timeout))
               .rate_limiter(self.limiter).concurrent_updates(True).post_init(self.setup).build())
        for name, handler in self._commands().items():
            app.add_handler(CommandHandler(name, handler))
        app.add_handler(CallbackQueryHandler(self.on_tap))
        app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, self.on_text))
        app.add_error_handler(self.on_error)
        self.app = app
        return app

    def _commands(self) -> dict[str, Any]:
        return {"start": self.on_start, "help": self.on_help, "runs": self.on_runs, "review": self.on_review,
                "next": self.on_next, "status": self.on_status, "push": self.on_push, "digest": self.on_digest}

    async def setup(self, app: Application) -> None:
        """Register the command list and the background jobs (PTB calls it on start; tests call it)."""
        await app.bot.set_my_commands([BotCommand(name, text) for name, text in COMMANDS])
        app.job_queue.run_repeating(self._refresh, interval=self.settings.refresh_s, first=self.settings.refresh_s)
        self._schedule_digest(app)

    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The one error handler: the traceback first, then the update that caused it."""
        error = context.error
        trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        summary = update.to_dict() if isinstance(update, Update) else str(update)
        _log.error("%s\nwhile handling update %s", trace, summary)

    # ------------------------------------------------------------------ who

    def reviewer(self, update: Update) -> Reviewer | None:
        """The tapper (in a group too: the user, never the chat), if allow-listed."""
        user = update.effective_user
        if user is None or user.id not in set(self.settings.reviewers) | set(self.settings.admins):
            return None
        return Reviewer(platform="telegram", id=str(user.id), name=user.username or user.first_name)

    async def _admin(self, update: Update, command: str) -> bool:
        """Whether the user is an admin; refuses (a stranger) or explains (a reviewer) when not."""
        if update.effective_user is not None and update.effective_user.id in self.settings.admins:
            return True
        if self.reviewer(update) is None:
            await self._refuse(update)
        else:
            await update.effective_message.reply_text(f"Only admins can {command}.")
        return False

    async def _refuse(self, update: Update) -> None:
        user = update.effective_user
        _log.warning("refused update %s from user %s (not allow-listed)", update.update_id, user.id if user else None)
        text = ("You are not on this bot's reviewer list. Your Telegram user id is "
                f"<code>{user.id if user else '?'}</code>; an admin can add it to <code>[telegram] reviewers</code> in hilbot.toml.")
        if update.callback_query:
            await update.callback_query.answer("You are not on this bot's reviewer list.", show_alert=True)
        elif update.effective_message:
            await update.effective_message.reply_text(text)

    # ------------------------------------------------------------------ commands

    async def on_start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/start: welcome, or the refusal with the user's id."""
        if self.reviewer(update) is None:
            return await self._refuse(update)
        await update.effective_message.reply_text("👋 Welcome to hilbot. " + self._help_text())

    async def on_help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/help."""
        await update.effective_message.reply_text(self._help_text())

    def _help_text(self) -> str:
        lines = ["Rate each card with its buttons; after a middling or bad rating you can add concern tags and a note.",
                 "Your rating is saved before the button answers. The AI's verdict is hidden until you have rated.", ""]
        lines += [f"/{name} — {escape(text)}" for name, text in COMMANDS]
        return "\n".join(lines)

    async def on_runs(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/runs: the run listing."""
        if self.reviewer(update) is None:
            return await self._refuse(update)
        from ..listing import run_listing

        await update.effective_message.reply_text(f"<pre>{escape(run_listing(self.store, []))}</pre>")

    async def on_review(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/review <run-id> [dimension]: start or resume this reviewer's session."""
        reviewer = self.reviewer(update)
        if reviewer is None:
            return await self._refuse(update)
        if not context.args:
            return await update.effective_message.reply_text("Usage: /review &lt;run-id&gt; [dimension] — see /runs")
        try:
            session = self.sessions.get(reviewer, context.args[0], context.args[1] if len(context.args) > 1 else None)
        except HilbotError as exc:
            return await update.effective_message.reply_text(escape(exc.one_line()))
        where = _where(update)
        self._chats[(reviewer.key, session.run_id, session.dimension)] = (session, where)
        await update.effective_message.reply_text(self._progress_line(session, "Reviewing"))
        if not await self._fill(session, where):
            await self._nothing_new(session, where)

    async def on_next(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/next: show the oldest open card again (as a new message), or deal the next one."""
        reviewer = self.reviewer(update)
        if reviewer is None:
            return await self._refuse(update)
        session = self.sessions.active(reviewer)
        if session is None:
            return await update.effective_message.reply_text("Start with /review &lt;run-id&gt; — see /runs")
        where = _where(update)
        async with self.sessions.lock(reviewer):
            held = self.sessions.open_cards(session, group=where.group)
            card = session.card_for(held[0]) if held else None
        if card is not None:
            await self._send_card(session, card, where)
        elif not await self._fill(session, where):
            await self._nothing_new(session, where)

    async def on_status(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/status: progress per run for this reviewer."""
        reviewer = self.reviewer(update)
        if reviewer is None:
            return await self._refuse(update)
        lines = [self._progress_line(s, s.run_id) for s in self.sessions.reviewed(reviewer)]
        await update.effective_message.reply_text("\n".join(lines) or "Nothing reviewed yet — see /runs")

    def _progress_line(self, session: ReviewSession, lead: str) -> str:
        p = session.progress()
        return (f"<b>{escape(lead)}</b> {escape(session.run_id)} · {escape(session.dimension)}: "
                f"{p.done} rated, {p.skipped} skipped, {p.remaining} left of {p.total}")

    async def on_push(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/push <run-id> [dimension] (admins): deal first cards to every allow-listed reviewer."""
        if not await self._admin(update, "/push"):
            return
        if not context.args:
            return await update.effective_message.reply_text("Usage: /push &lt;run-id&gt; [dimension]")
        run_id, dimension = context.args[0], (context.args[1] if len(context.args) > 1 else None)
        try:
            self.sessions.target(run_id, dimension)
        except HilbotError as exc:
            return await update.effective_message.reply_text(escape(exc.one_line()))
        await update.effective_message.reply_text(f"Pushing {escape(run_id)} to {len(self.settings.reviewers)} reviewers…")
        context.application.create_task(self._push(run_id, dimension, update.effective_chat.id), update=update)

    async def _push(self, run_id: str, dimension: str | None, report_to: int) -> None:
        reviewers = [Reviewer(platform="telegram", id=str(uid)) for uid in self.settings.reviewers]
        sent = await asyncio.gather(*(self._push_one(r, run_id, dimension) for r in reviewers))
        failed = [r.id for r, n in zip(reviewers, sent) if n is None]
        text = f"Pushed {escape(run_id)}: {sum(n or 0 for n in sent)} cards to {sum(1 for n in sent if n)} reviewers."
        if failed:
            text += f" Could not reach {', '.join(failed)} (they must /start the bot first)."
        await self._bot.send_message(report_to, text)

    async def _push_one(self, reviewer: Reviewer, run_id: str, dimension: str | None) -> int | None:
        session = self.sessions.get(reviewer, run_id, dimension)
        where = Where(int(reviewer.id))
        self._chats[(reviewer.key, session.run_id, session.dimension)] = (session, where)
        try:
            return await self._fill(session, where, strict=True)
        except (Forbidden, BadRequest):
            return None

    async def on_digest(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/digest (admins): post a digest to this chat now."""
        if not await self._admin(update, "/digest"):
            return
        await self._post_digest([update.effective_chat.id], since=self._last_digest_time())

    # ------------------------------------------------------------------ taps

    async def on_tap(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A button: check it, store what it does, answer, then edit the card and deal the next."""
        query = update.callback_query
        reviewer = self.reviewer(update)
        if reviewer is None:
            return await self._refuse(update)
        message = query.message
        group = message.chat.type != "private"
        try:
            tap = self.sessions.resolve(query.data or "", reviewer, (message.chat.id, message.message_id),
                                        str(update.update_id), group=group)
        except Refused as exc:
            _log.warning("refused tap from %s: %s", reviewer.key, exc)
            return await query.answer("This button is not valid any more.", show_alert=True)
        async with self.sessions.lock(reviewer):
            was_open = tap.item_id in self.sessions.open_cards(tap.session)
            step = await self.sessions.act(tap.session, tap.item_id, tap.action)
            await query.answer(**self._answer(step, tap, group))  # the records are on disk by now
        # Editing and dealing wait for flood-control slots: they run on their own, so this
        # handler is free for the next update at once.
        context.application.create_task(self._after_tap(step, tap, message, group, was_open), update=update)

    async def _after_tap(self, step: Step, tap: Tap, message: Message, group: bool, was_open: bool) -> None:
        async with self._output(tap.session.reviewer):
            await self._show(step, tap, message, group)
        if step.stored:
            session, where = self._dealer(tap, message, group)
            if not await self._fill(session, where) and was_open and self.sessions.finished(session):
                await self._done(session, where)

    def _answer(self, step: Step, tap: Tap, group: bool) -> dict[str, Any]:
        if step.alert:
            return {"text": render.clip(step.alert), "show_alert": True}
        if tap.action.kind == "rate" and not step.stored:
            return {"text": "Already recorded."}
        text = render.action_label(tap.action)
        if tap.action.kind == "toggle" and step.card is not None:
            text = f"{tap.action.value}: {'on' if tap.action.value in step.card.concerns else 'off'}"
        shown = step.finished or step.card
        if group and step.stored and shown is not None and shown.item_id == tap.item_id:
            text = " · ".join([text] + [plain for plain, _ in render.reveal_lines(shown)])  # only the tapper sees it
            return {"text": render.clip(text), "show_alert": True}
        return {"text": render.clip(text)}

    def _dealer(self, tap: Tap, message: Message, group: bool) -> tuple[ReviewSession, Where]:
        """Whose window a judgment frees, and where its next card goes (in a group: the group's stream)."""
        if group:
            shown = self.sessions.owner((message.chat.id, message.message_id))
            owner = shown.reviewer if shown is not None else tap.session.reviewer
            return self.sessions.get(owner, tap.session.run_id, tap.session.dimension), Where(message.chat.id, True)
        started = self._chats.get((tap.session.reviewer.key, tap.session.run_id, tap.session.dimension))
        if started is not None:
            return started
        latest = self.engine.ledger.cards.get((tap.session.run_id, tap.item_id, tap.session.dimension, tap.session.reviewer.key))
        return tap.session, Where(int(latest.chat_id) if latest else message.chat.id)

    async def _show(self, step: Step, tap: Tap, message: Message, group: bool) -> None:
        if step.detail:
            for piece in render.chunks(step.detail):
                await message.reply_text(piece)
        if step.state == State.NOTE:
            return await self._ask_note(tap, message)
        if group or not (step.stored or tap.action.kind == "next"):
            return  # a group's card stays blind for everyone else
        card = step.finished if step.finished is not None else step.card
        if card is not None and card.item_id == tap.item_id:
            await self._edit(message, card, final=step.finished is not None)

    async def _edit(self, message: Message, card: Card, *, final: bool) -> None:
        text, _ = render.card_html(card, final=final)
        try:
            await message.edit_text(text, reply_markup=self._keyboard(card, group=False))
        except BadRequest as exc:
            if "not modified" not in str(exc):
                raise

    async def _ask_note(self, tap: Tap, message: Message) -> None:
        """Ask for the note's text; the prompt is logged before the reviewer's answer is looked at."""
        item = tap.session.run.item(tap.item_id)
        async with self.sessions.lock(tap.session.reviewer):
            prompt = await message.reply_text(
                f"✍️ Note on “{escape(item.query.query)}”: reply to this message with your note.",
                reply_markup=ForceReply(input_field_placeholder="Your note"),
                reply_parameters=ReplyParameters(message.message_id, allow_sending_without_reply=True))
            await self.sessions.delivered(tap.session, tap.item_id, prompt.chat.id, prompt.message_id,
                                          kind="note_prompt", group=prompt.chat.type != "private")

    # ------------------------------------------------------------------ notes

    async def on_text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A text message: the answer to a note prompt, stored as that item's note."""
        reviewer = self.reviewer(update)
        message = update.effective_message
        if reviewer is None:
            return await self._refuse(update) if message.chat.type == "private" else None
        reply_to = message.reply_to_message.message_id if message.reply_to_message else None
        async with self.sessions.lock(reviewer):
            prompt = self.sessions.note_target(reviewer, message.chat.id, reply_to)
            if prompt is not None:
                session = self.sessions.get(reviewer, prompt.run_id, prompt.dimension)
                was_open = prompt.item_id in self.sessions.open_cards(session)
                action = Action("text", message.text, prompt.item_id, str(update.update_id))
                step = await self.sessions.act(session, prompt.item_id, action, note=True)
        if prompt is None:
            if message.chat.type == "private":
                await message.reply_text("Tap a card's buttons to rate; for a note tap “Add note” first.")
            return
        await message.reply_text("📝 Note saved." if step.stored else escape(step.alert or "Already saved."))
        await self._after_note(session, prompt, step, was_open)

    async def _after_note(self, session: ReviewSession, prompt: Any, step: Step, was_open: bool) -> None:
        card_at = self.engine.ledger.cards.get((session.run_id, prompt.item_id, session.dimension, session.reviewer.key))
        card = step.finished if step.finished is not None else step.card
        if card_at is not None and card is not None and card.item_id == prompt.item_id and not card_at.group:
            async with self._output(session.reviewer):
                await self._edit_by_id(int(card_at.chat_id), int(card_at.message_id), card, final=step.finished is not None)
        where = Where(int(prompt.chat_id), prompt.group)
        if step.stored and not await self._fill(session, where) and was_open and self.sessions.finished(session):
            await self._done(session, where)

    async def _edit_by_id(self, chat_id: int, message_id: int, card: Card, *, final: bool) -> None:
        text, _ = render.card_html(card, final=final)
        try:
            await self._bot.edit_message_text(text, chat_id, message_id, reply_markup=self._keyboard(card, group=False))
        except BadRequest as exc:
            if "not modified" not in str(exc):
                raise

    # ------------------------------------------------------------------ dealing

    def _keyboard(self, card: Card, *, group: bool) -> InlineKeyboardMarkup:
        rows = render.keyboard_rows(card, group=group)
        return InlineKeyboardMarkup([[InlineKeyboardButton(b.label, callback_data=self.sessions.token(card, b.action))
                                      for b in row] for row in rows])

    async def _fill(self, session: ReviewSession, where: Where, *, strict: bool = False) -> int:
        """Deal and send cards up to the window; returns how many were sent."""
        async with self.sessions.lock(session.reviewer):
            cards = self.sessions.deal(session, group=where.group)
        sent = 0
        for card in cards:
            try:
                await self._send_card(session, card, where)
                sent += 1
            except TelegramError as exc:
                self.sessions.undelivered(session, card.item_id)
                _log.warning("could not deliver %s/%s to chat %s: %s", session.run_id, card.item_id, where.chat_id, exc)
                if strict:
                    raise
        return sent

    async def _send_card(self, session: ReviewSession, card: Card, where: Where) -> None:
        text, _ = render.card_html(card)
        async with self._output(session.reviewer):
            message = await self._bot.send_message(where.chat_id, text, reply_markup=self._keyboard(card, group=where.group))
        await self.sessions.delivered(session, card.item_id, where.chat_id, message.message_id, group=where.group)

    async def _nothing_new(self, session: ReviewSession, where: Where) -> None:
        held = self.sessions.open_cards(session, group=where.group)
        text = (f"You have {len(held)} open card(s) above — tap one, or /next to see it again." if held
                else "Nothing left for you in this run. 🎉")
        await self._bot.send_message(where.chat_id, text)

    async def _done(self, session: ReviewSession, where: Where) -> None:
        async with self.sessions.lock(session.reviewer):
            step = await session.aact(Action("quit"))  # stores the session's hilReview summary
        s = step.summary
        human = f"{s.humanAverageScore:.2f}" if s.humanAverageScore is not None else "–"
        delta = f"{s.aiVsHumanDelta:+.2f}" if s.aiVsHumanDelta is not None else "–"
        await self._bot.send_message(where.chat_id, f"🎉 All done with {escape(session.run_id)} · {escape(session.dimension)}: "
                                     f"{s.queriesReviewed} rated, {s.queriesSkipped} skipped, {s.queriesFlagged} flagged · "
                                     f"human average {human} · AI-vs-human {delta}")

    def _output(self, reviewer: Reviewer) -> asyncio.Lock:
        """Keeps one reviewer's sends and edits in order."""
        return self._out.setdefault(reviewer.key, asyncio.Lock())

    @property
    def _bot(self):
        return self.app.bot

    # ------------------------------------------------------------------ background

    async def _refresh(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Re-read runs still being evaluated and deal their new items."""
        growing = {run_id for _, run_id, _ in self._chats if self.engine.run(run_id).summary is None}
        grown = {run_id for run_id in growing if self.engine.refresh(run_id)}
        for (_, run_id, _), (session, where) in list(self._chats.items()):
            if run_id in grown:
                await self._fill(session, where)

    def _schedule_digest(self, app: Application) -> None:
        digest = self.settings.digest
        if not digest.chats:
            return
        if digest.every_minutes:
            app.job_queue.run_repeating(self._scheduled_digest, interval=digest.every_minutes * 60, first=digest.every_minutes * 60)
        elif digest.time:
            from zoneinfo import ZoneInfo

            hour, minute = map(int, digest.time.split(":"))
            app.job_queue.run_daily(self._scheduled_digest, daytime(hour, minute, tzinfo=ZoneInfo(digest.timezone)))

    def _last_digest_time(self) -> datetime:
        digest = self.settings.digest
        period = timedelta(minutes=digest.every_minutes) if digest.every_minutes else timedelta(days=1)
        return datetime.now(timezone.utc) - period

    async def _scheduled_digest(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self._post_digest(self.settings.digest.chats, since=self._last_digest_time())

    async def _post_digest(self, chats: list[int], since: datetime) -> None:
        from analysis.digest import build_digest

        digest = await asyncio.to_thread(build_digest, self.store, self.config, since=since, figures=True)
        await send_digest(self._bot, chats, digest)


async def send_digest(bot: Any, chats: list[int], digest: Any) -> None:
    """Post a digest's text and chart to each chat."""
    for chat_id in chats:
        for piece in render.chunks(digest.text()):  # escaped, each within Telegram's limit
            await bot.send_message(chat_id, piece, parse_mode=ParseMode.HTML)
        if digest.chart_png:
            await bot.send_photo(chat_id, digest.chart_png, caption="Human vs AI average per run")


def post_digest(config: HilbotConfig, digest: Any) -> list[int]:
    """Post a digest to ``[telegram.digest] chats`` once, outside the bot (``hilbot digest --post telegram``)."""
    from telegram import Bot

    chats = config.telegram.digest.chats
    if not chats:
        raise HilbotError("no chats to post the digest to", fix="set [telegram.digest] chats = [<chat id>] in hilbot.toml")
    token, url = _token(), api_url(config)

    async def post() -> None:
        await check(token, url)
        async with Bot(token, base_url=f"{url}/bot") as bot:
            await send_digest(bot, chats, digest)

    asyncio.run(post())
    return chats


def _where(update: Update) -> Where:
    """This update's chat, as a place to deal cards."""
    return Where(update.effective_chat.id, update.effective_chat.type != "private")


def _token() -> str:
    token = os.environ.get("TELEGRAM_BOT_TOKEN", "").strip()
    if not token:
        raise HilbotError("TELEGRAM_BOT_TOKEN is not set", fix="export TELEGRAM_BOT_TOKEN=<the token @BotFather gave you>")
    return token


def api_url(config: HilbotConfig) -> str:
    """The Bot API server: ``TELEGRAM_API_URL``, else ``[telegram] api_url``."""
    return (os.environ.get("TELEGRAM_API_URL") or config.telegram.api_url).rstrip("/")


def _shown(url: str) -> str:
    """A URL as an error names it: without a user or password in it, one visible line."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl() if "@" in parts.netloc else url
    except ValueError:
        shown = url
    return visible(shown, newlines=False)[:200]


def build(store: Store, config: HilbotConfig) -> tuple[ReviewBot, Application]:
    """The bot and its Application, with the token and API URL from the environment."""
    bot = ReviewBot(store, config)
    bot.app = bot.application(_token(), api_url(config))
    return bot, bot.app


async def check(token: str, url: str, timeout: float | None = None) -> None:
    """Ask the Bot API who the bot is; any refusal, failure or silence is one error that says what to do."""
    from telegram import Bot

    request = HTTPXRequest(connect_timeout=timeout, read_timeout=timeout, write_timeout=timeout, pool_timeout=timeout) if timeout else None
    try:
        async with Bot(token, base_url=f"{url}/bot", request=request) as bot:
            await bot.get_me()
    except TelegramError as exc:
        raise refusal(exc, "getMe", url, timeout) from None


_CALLS = {"get_me": "getMe", "set_my_commands": "setMyCommands", "delete_webhook": "deleteWebhook", "set_webhook": "setWebhook",
          "get_updates": "getUpdates"}
"""The Bot API calls a bot makes as it starts, by the name of python-telegram-bot's method."""


def _call_of(exc: BaseException) -> str:
    """The Bot API call an error came from, read from its traceback."""
    names = [frame.f_code.co_name for frame, _ in traceback.walk_tb(exc.__traceback__)]
    return next((_CALLS[name] for name in reversed(names) if name in _CALLS), "a start-up call")


def refusal(exc: TelegramError, call: str, url: str, timeout: float | None = None) -> HilbotError:
    """A Bot API error as one line: what the server said (scrubbed, visible, short) and what to do about it."""
    said = visible(scrub(str(exc)), newlines=False)[:200]
    where = _shown(url)
    if isinstance(exc, InvalidToken):
        return HilbotError("the Bot API rejected TELEGRAM_BOT_TOKEN", where=where, fix="check the token with @BotFather")
    if isinstance(exc, Conflict):
        return HilbotError(f"another program is using this bot token ({call}: 409: {said})", where=where,
                           fix="stop the other bot process, or delete its webhook (deleteWebhook); one token serves one bot")
    if isinstance(exc, Forbidden):
        return HilbotError(f"the Bot API refused {call} (403: {said})", where=where,
                           fix="the bot may be deactivated or its token revoked: check it with @BotFather, and any proxy in TELEGRAM_API_URL")
    if isinstance(exc, RetryAfter):
        return HilbotError(f"the Bot API is rate-limiting this bot ({call}: {said})", where=where, fix="wait that long, then start again")
    if isinstance(exc, TimedOut):
        within = f" within {timeout:g} s" if timeout else " in time"
        return HilbotError(f"the Bot API did not answer {call}{within}", where=where,
                           fix="check the network and TELEGRAM_API_URL or [telegram] api_url, or raise [telegram] read_timeout_s")
    if isinstance(exc, BadRequest):
        fix = ("set [telegram] webhook_url to a public https URL on port 443, 80, 88 or 8443" if call == "setWebhook"
               else "check TELEGRAM_API_URL or [telegram] api_url points at a Bot API server, and start again")
        return HilbotError(f"the Bot API refused {call} (400: {said})", where=where, fix=fix)
    if isinstance(exc, NetworkError) and not isinstance(exc.__cause__, (TelegramError, type(None))):
        return HilbotError(f"cannot reach the Bot API ({said})", where=where, fix="check TELEGRAM_API_URL or [telegram] api_url, and the network")
    if isinstance(exc, NetworkError):
        return HilbotError(f"the Bot API failed on {call} ({said})", where=where,
                           fix="the server had a problem: wait and start again; if it persists, check TELEGRAM_API_URL or [telegram] api_url")
    return HilbotError(f"{call}: the answer is not the Bot API's ({said})", where=where,
                       fix="check TELEGRAM_API_URL or [telegram] api_url points at a Bot API server")


class _QuietStart(logging.Filter):
    """Until the bot runs, drops python-telegram-bot's own tracebacks of a failed call: the error is raised, and reported as one line."""

    LOGGERS = ("telegram.ext", "telegram.request.BaseRequest")
    """Where python-telegram-bot reports a failed start-up call and an answer that is not JSON."""

    def __init__(self, app: Application):
        super().__init__()
        self.app = app

    def filter(self, record: logging.LogRecord) -> bool:
        if self.app.running or record.levelno < logging.ERROR:
            return True
        first = str(record.args[0]) if isinstance(record.args, tuple) and record.args else ""
        return not (first.startswith("Network Retry Loop (Bootstrap") or str(record.msg).startswith("Can not load invalid JSON"))

    def __enter__(self) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).addFilter(self)

    def __exit__(self, *exc: object) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).removeFilter(self)


def _cannot_listen(exc: OSError) -> bool:
    """Whether an error is a webhook server's address that is taken, not this host's, or not allowed."""
    import errno
    import socket

    return isinstance(exc, socket.gaierror) or exc.errno in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES)


class TelegramChannel:
    """``hilbot serve telegram``."""

    name = "telegram"

    def serve(self, store: Store, config: HilbotConfig) -> None:
        """Run the bot until interrupted (long polling, or a webhook with a secret token); a failed start is one error."""
        bot, app = build(store, config)
        settings, url = config.telegram, api_url(config)
        with _QuietStart(app):
            try:
                asyncio.run(check(app.bot.token, url, settings.read_timeout_s))
                self._run(app, settings)
            except TelegramError as exc:
                raise refusal(exc, _call_of(exc), url, settings.read_timeout_s) from None
            except OSError as exc:
                if settings.mode != "webhook" or not _cannot_listen(exc):
                    raise
                raise HilbotError(f"cannot listen for webhook updates on {settings.listen}:{settings.port} ({exc.strerror or exc})",
                                  fix="set [telegram] listen and port to a free address, or stop what is using it") from None

    def _run(self, app: Application, settings: Any) -> None:
        if settings.mode == "webhook":
            from urllib.parse import urlparse

            secret = os.environ.get("TELEGRAM_WEBHOOK_SECRET")
            app.run_webhook(listen=settings.listen, port=settings.port, url_path=urlparse(settings.webhook_url).path.lstrip("/"),
                            webhook_url=settings.webhook_url, secret_token=secret, allowed_updates=Update.ALL_TYPES)
        else:
            app.run_polling(timeout=settings.poll_timeout_s, allowed_updates=Update.ALL_TYPES)


channel("telegram")(TelegramChannel)
