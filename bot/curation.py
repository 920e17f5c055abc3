"""The human-in-the-loop edit loop over a list of queries: generate and review.

A :class:`Curation` moves between named states; each handler returns the next one::

    PROPOSE -> LIST <-> EDIT
               LIST -> SAVE -> DONE
               LIST -> QUIT            (nothing written; EOF on input quits too)

IO is injected: ``ask(prompt) -> line`` (raising EOFError when input ends) and ``say(text)``.
Query text comes from files and from the LLM: everything said or asked goes through
:func:`evaluation.text.visible`, and a query's fields are shown on one line each.
The LLM is injected too, as an async ``propose(count, keep, avoid)``; it is None when no key
is set, and then the loop simply does not offer what needs it.

Generate: the LLM proposes a batch; ``[r]egenerate`` asks for a fresh one that avoids every
rejected query. Review: the sets are loaded as they are; ``[f]ill gaps`` asks the LLM for the
queries missing up to the set's original size. With several sets (``--set all``) every query
keeps its source set and is saved back to it; ``add`` puts a new query in the first set,
``add NAME`` in the named one, and ``fill`` adds to the first set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from evaluation.errors import HilbotError
from evaluation.queries import QueryItem, QuerySet
from evaluation.text import visible

Ask = Callable[[str], str]
"""Shows a prompt and returns the line typed (EOFError when input ends)."""
Say = Callable[[str], None]
"""Shows one or more lines."""
Propose = Callable[[int, list[QueryItem], list[QueryItem]], Awaitable[list[QueryItem]]]
"""``(count, keep, avoid) -> new queries``: how the loop reaches the LLM."""

EDIT_HELP = """Edit commands (numbers as shown in the list):
  drop 3,7,12   remove queries (ranges like 3-5 work too)
  edit 5        change a query's text, category and intent (enter keeps a value)
  add [SET]     add a query (with several sets: to SET, default the first one)
  fill [N]      let the LLM propose the queries missing up to the target (or N more)
  list          show the list again
  done          back to the actions
  help          this help"""

HINT = "commands: drop 3,7 · edit 5 · add · fill · list · done · help"


class State(str, Enum):
    """Where a curation session is."""

    PROPOSE = "propose"
    """Asking the LLM for a (new) batch."""
    LIST = "list"
    """The list is shown; waiting for an action."""
    EDIT = "edit"
    """Edit mode: waiting for a command."""
    SAVE = "save"
    """Accepted: writing the files."""
    DONE = "done"
    """Saved."""
    QUIT = "quit"
    """Stopped without writing anything."""


@dataclass
class Entry:
    """A query in the working list and the set it belongs to."""

    item: QueryItem
    """The query (replaced, never mutated, when edited)."""
    origin: str | None = None
    """Name of the set it is saved to; None for a newly generated query."""


@dataclass
class Curation:
    """One edit session over a list of queries."""

    entries: list[Entry]
    """The working list, in display order."""
    target: int
    """How many queries ``fill`` tops the list up to."""
    save: Callable[[list[Entry]], list[str]]
    """Writes the accepted list; returns what to tell the user."""
    ask: Ask
    """Input."""
    say: Say
    """Output."""
    propose: Propose | None = None
    """The LLM, or None when no key is set."""
    title: str = "Queries"
    """Shown above the list."""
    sets: list[QuerySet] = field(default_factory=list)
    """Review: the sets being edited (``add`` without a name goes to the first)."""
    regenerate: bool = False
    """Offer ``[r]egenerate`` (generate) instead of ``[f]ill gaps`` (review)."""
    labels: bool = False
    """Show each query's source set (several sets at once)."""
    start: State = State.LIST
    """The first state."""
    rejected: list[QueryItem] = field(default_factory=list)
    """Queries regenerated away or dropped: the LLM is told to avoid them."""

    # ------------------------------------------------------------------ the loop

    def _tell(self, text: str) -> None:
        """Say ``text`` with control characters made visible."""
        self.say(visible(text))

    def _prompt(self, prompt: str) -> str:
        """Ask with a prompt whose control characters are made visible."""
        return self.ask(visible(prompt, newlines=False))

    async def run(self) -> State:
        """Run from ``start`` until DONE or QUIT; return which."""
        handlers = {
            State.PROPOSE: self._propose,
            State.LIST: self._list,
            State.EDIT: self._edit,
            State.SAVE: self._save,
        }
        state = self.start
        while state not in (State.DONE, State.QUIT):
            try:
                state = await handlers[state]()
            except EOFError:
                state = State.QUIT
        if state is State.QUIT:
            self._tell("Quit: nothing written.")
        return state

    def lines(self) -> list[str]:
        """The structured list: ``  3. [category] text`` and the intent under it."""
        out = [f"{self.title} ({len(self.entries)} queries):"]
        for number, entry in enumerate(self.entries, 1):
            label = f"  ({_one(entry.origin)})" if self.labels and entry.origin else ""
            out.append(
                f"  {number}. [{_one(entry.item.category or '-')}] {_one(entry.item.text)}{label}"
            )
            if entry.item.intent:
                out.append(f"       intent: {_one(entry.item.intent)}")
        return out if self.entries else [*out, "  (none)"]

    def actions(self) -> str:
        """The action prompt's line."""
        middle = (
            "[r]egenerate"
            if self.regenerate
            else ("[f]ill gaps with the LLM" if self.propose else None)
        )
        return ", ".join(a for a in ("Actions: [a]ccept all", "[e]dit list", middle, "[q]uit") if a)

    # ------------------------------------------------------------------ states

    async def _propose(self) -> State:
        if self.propose is None:
            self._tell(
                "No LLM available: set the [llm] provider's key (ANTHROPIC_API_KEY; "
                "OPENAI_BASE_URL for a local model) to generate queries."
            )
            return State.LIST
        avoid = [*self.rejected, *(e.item for e in self.entries)]
        self._tell(f"Asking the LLM for {self.target} queries…")
        try:
            new = await self.propose(self.target, [], avoid)
        except HilbotError as exc:
            if not self.entries:
                raise
            self._tell(f"The LLM failed, the list is unchanged: {exc.one_line()}")
            return State.LIST
        self.rejected, self.entries = avoid, [Entry(item) for item in new]
        return State.LIST

    async def _list(self) -> State:
        self._tell("\n".join(self.lines()))
        while True:
            self._tell(self.actions())
            choice = self._prompt("> ").strip().lower()[:1]
            if choice == "a":
                return State.SAVE
            if choice == "e":
                self._tell(EDIT_HELP)
                return State.EDIT
            if choice == "q":
                return State.QUIT
            if choice == "r" and self.regenerate:
                return State.PROPOSE
            if choice == "f" and self.propose and not self.regenerate:
                await self._fill("")
                continue
            self._tell(f"Type one of the letters in brackets. {self.actions()}")

    async def _edit(self) -> State:
        line = self._prompt("edit> ").strip()
        if not line:
            return State.EDIT
        command, _, arg = line.partition(" ")
        commands = {
            "drop": self._drop,
            "edit": self._edit_one,
            "add": self._add,
            "fill": self._fill,
            "list": self._show,
            "ls": self._show,
            "done": self._done,
            "help": self._help,
        }
        handler = commands.get(command.lower())
        if handler is None:
            self._tell(f"Unknown command {command!r}; {HINT}")
            return State.EDIT
        return await handler(arg.strip())

    async def _save(self) -> State:
        if not self.entries and not self.sets:
            self._tell("Nothing to save: the list is empty (edit it, regenerate or quit).")
            return State.LIST
        for line in self.save(self.entries):
            self._tell(line)
        return State.DONE

    # ------------------------------------------------------------------ edit commands

    async def _drop(self, arg: str) -> State:
        numbers = parse_numbers(arg, len(self.entries))
        if isinstance(numbers, str):
            self._tell(numbers)
            return State.EDIT
        dropped = [(n, self.entries[n - 1]) for n in numbers]
        self.entries = [e for n, e in enumerate(self.entries, 1) if n not in numbers]
        self.rejected += [e.item for _, e in dropped]
        self._tell(
            f"Dropped {len(dropped)}: "
            + "; ".join(f'{n}. "{_one(e.item.text)}"' for n, e in dropped)
        )
        return await self._show("")

    async def _edit_one(self, arg: str) -> State:
        numbers = parse_numbers(arg, len(self.entries))
        if isinstance(numbers, str) or len(numbers) != 1:
            self._tell(
                numbers if isinstance(numbers, str) else "Edit one query at a time, e.g. edit 5"
            )
            return State.EDIT
        entry = self.entries[numbers[0] - 1]
        changes = {}
        for name in ("text", "category", "intent"):
            value = self._prompt(f"{name} [{_one(getattr(entry.item, name) or '')}]: ").strip()
            if value and value != getattr(entry.item, name):
                changes[name] = value
        if changes:
            entry.item = entry.item.model_copy(update=changes)
        self._tell(
            f"Updated {numbers[0]}: {', '.join(changes)}."
            if changes
            else f"{numbers[0]} unchanged."
        )
        return State.EDIT

    async def _add(self, arg: str) -> State:
        origin, problem = self._origin(arg)
        if problem:
            self._tell(problem)
            return State.EDIT
        text = self._prompt("text: ").strip()
        if not text:
            self._tell("Nothing added (empty text).")
            return State.EDIT
        values: dict[str, Any] = {
            "text": text,
            "category": self._prompt("category: ").strip(),
            "intent": self._prompt("intent: ").strip(),
        }
        item = QueryItem(id=self._new_id(origin), **{k: v for k, v in values.items() if v})
        self.entries.append(Entry(item, origin))
        self._tell(
            f"Added as {len(self.entries)}" + (f" to {origin}." if origin and self.labels else ".")
        )
        return State.EDIT

    async def _fill(self, arg: str) -> State:
        if self.propose is None:
            self._tell(
                "fill needs the LLM: set the [llm] provider's key (ANTHROPIC_API_KEY; "
                "OPENAI_BASE_URL for a local model) and rerun."
            )
            return State.EDIT
        missing = int(arg) if arg.isdigit() and int(arg) > 0 else self.target - len(self.entries)
        if missing <= 0:
            self._tell(
                f"The list has {len(self.entries)} queries, the target is {self.target}: nothing "
                "to fill (drop some first, or `fill N` for N more)."
            )
            return State.EDIT
        self._tell(f"Asking the LLM for {missing} more…")
        try:
            new = await self.propose(missing, [e.item for e in self.entries], list(self.rejected))
        except HilbotError as exc:
            self._tell(f"The LLM failed, the list is unchanged: {exc.one_line()}")
            return State.EDIT
        self._append(new)
        self._tell(f"The LLM added {len(new)}." if new else "The LLM proposed nothing new.")
        return await self._show("")

    async def _show(self, arg: str) -> State:
        self._tell("\n".join(self.lines()))
        return State.EDIT

    async def _done(self, arg: str) -> State:
        return State.LIST

    async def _help(self, arg: str) -> State:
        self._tell(EDIT_HELP)
        return State.EDIT

    # ------------------------------------------------------------------ helpers

    def _origin(self, arg: str) -> tuple[str | None, str | None]:
        """The set ``add ARG`` puts a query in, or a hint saying why it cannot."""
        names = [qs.name for qs in self.sets]
        if not names:
            return None, ("add takes no set name here; type `add`" if arg else None)
        if arg and arg not in names:
            return None, f"No set {arg!r} in this review; use one of: {', '.join(names)}"
        return arg or names[0], None

    def _new_id(self, origin: str | None) -> str:
        taken = [e.item.id for e in self.entries]
        qs = next((s for s in self.sets if s.name == origin), None)
        if qs is None:
            return next(
                f"new-{n:02d}" for n in range(1, len(taken) + 2) if f"new-{n:02d}" not in taken
            )
        return qs.next_id(taken)

    def _append(self, items: Sequence[QueryItem]) -> None:
        origin = self.sets[0].name if self.sets else None
        for item in items:
            self.entries.append(Entry(item.model_copy(update={"id": self._new_id(origin)}), origin))


def _one(text: str) -> str:
    """A query's field on one line, control characters (line breaks too) made visible."""
    return visible(text, newlines=False)


def parse_numbers(arg: str, count: int) -> list[int] | str:
    """``"3,7,12"`` or ``"3-5 9"`` as sorted list numbers, or a one-line hint saying what is
    wrong."""
    numbers: set[int] = set()
    for part in filter(None, re.split(r"[\s,]+", arg)):
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not match:
            return f"Not a query number: {part!r} (e.g. drop 3,7,12)"
        low, high = int(match.group(1)), int(match.group(2) or match.group(1))
        numbers.update(range(low, high + 1))
    if not numbers:
        return "Which ones? Give numbers as shown in the list, e.g. drop 3,7,12 or edit 5"
    bad = sorted(n for n in numbers if not 1 <= n <= count)
    if bad:
        return f"No query {bad[0]}: the list has {count}; nothing changed"
    return sorted(numbers)


# --------------------------------------------------------------------------- sessions


def generation(
    *,
    count: int,
    seed: QuerySet | None,
    propose: Propose,
    save_to: Callable[[list[QueryItem]], Path],
    ask: Ask,
    say: Say,
) -> Curation:
    """A generate session: the LLM proposes ``count`` queries, the human edits, accept saves a new
    set."""

    def save(entries: list[Entry]) -> list[str]:
        path = save_to([e.item for e in entries])
        return [f"Saved {len(entries)} queries to {path}"]

    title = f"Proposed queries, seeded from {seed.name}" if seed else "Proposed queries"
    return Curation(
        entries=[],
        target=count,
        save=save,
        ask=ask,
        say=say,
        propose=propose,
        title=title,
        regenerate=True,
        start=State.PROPOSE,
    )


def _saved(qs: QuerySet, items: list[QueryItem], save_to: Callable[[QuerySet], Path]) -> str:
    if [q.to_json() for q in items] == [q.to_json() for q in qs.queries]:
        return f"{qs.name}: unchanged, not written"
    qs.queries = items
    return f"Saved {qs.name}: {len(items)} queries to {save_to(qs)}"


def review(
    sets: list[QuerySet],
    *,
    propose: Propose | None,
    save_to: Callable[[QuerySet], Path],
    ask: Ask,
    say: Say,
) -> Curation:
    """A review session over loaded sets; accept saves each query back to its own set's file."""

    def save(entries: list[Entry]) -> list[str]:
        return [
            _saved(qs, [e.item for e in entries if e.origin == qs.name], save_to) for qs in sets
        ]

    entries = [Entry(item, qs.name) for qs in sets for item in qs.queries]
    title = (
        f"Query set {sets[0].name}"
        if len(sets) == 1
        else f"Query sets {', '.join(qs.name for qs in sets)}"
    )
    return Curation(
        entries=entries,
        target=len(entries),
        save=save,
        ask=ask,
        say=say,
        propose=propose,
        title=title,
        sets=list(sets),
        labels=len(sets) > 1,
    )
