"""The chat review flow, platform-neutral: a platform adapter parses its events and implements a
small port.

- :mod:`bot.chat.port`: the events (:class:`Command`, :class:`Tap`, :class:`Text`) and the port
  (:class:`ChatPort`: send and edit cards, send text, answer taps, send files).
- :mod:`bot.chat.flow`: :class:`ChatFlow`, the flow itself.
- :mod:`bot.chat.sessions`: :class:`~bot.chat.sessions.Sessions`, review sessions in a chat:
  dealing within the window, deliveries, button tokens.
- :mod:`bot.chat.adjudication`: ``/adjudicate``, over :mod:`bot.adjudication`.
- :mod:`bot.chat.digest`: the digest built and sent to chats.
- :mod:`bot.chat.schedule`: :class:`Scheduler`, growing runs and digests on a schedule.
- :mod:`bot.chat.texts`: what the bot says.
"""

from __future__ import annotations

from .flow import Access, ChatFlow
from .port import Chat, ChatPort, Choice, Command, Keyboard, PortError, Tap, Text, User
from .schedule import Scheduler

__all__ = [
    "Access",
    "Chat",
    "ChatFlow",
    "ChatPort",
    "Choice",
    "Command",
    "Keyboard",
    "PortError",
    "Scheduler",
    "Tap",
    "Text",
    "User",
]
