"""The chat review flow, platform-neutral: a platform adapter parses its events and implements a small port.

- :mod:`bot.chat.port`: the events (:class:`Command`, :class:`Tap`, :class:`Text`) and the port
  (:class:`ChatPort`: send and edit cards, send text, answer taps, send files).
- :mod:`bot.chat.flow`: :class:`ChatFlow`, the flow itself.
- :mod:`bot.chat.schedule`: :class:`Scheduler`, growing runs and digests on a schedule.
"""

from __future__ import annotations

from .flow import Access, ChatFlow
from .port import Chat, ChatPort, Choice, Command, Keyboard, PortError, Tap, Text, User
from .schedule import Scheduler

__all__ = ["Access", "Chat", "ChatFlow", "ChatPort", "Choice", "Command", "Keyboard", "PortError", "Scheduler", "Tap",
           "Text", "User"]
