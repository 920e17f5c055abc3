"""The README a newcomer reads in ten minutes, and every link of the documentation leading
somewhere.

The README stays at most 300 lines and starts with exactly the two set-up commands; every relative
link in README.md, docs/*.md and bench/README.md names a file that exists and, with ``#anchor``, a
heading of that file (anchors made as GitHub makes them: lower case, spaces to dashes, other
punctuation dropped, ``-1``, ``-2`` for repeats). Links inside fenced code are not links.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield number, line


def slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").replace("*", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose(path):
        heading = re.match(r"#{1,6} (.*)", line)
        if heading:
            name = slug(heading.group(1))
            count = seen.get(name, 0)
            found.add(name if count == 0 else f"{name}-{count}")
            seen[name] = count + 1
    return found


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, len(lines)
    assert (
        lines[2] == "```sh"
        and lines[3].startswith("make demo ")
        and lines[4].startswith("make test ")
    )
    assert lines[5] == "```"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_to_a_file_and_heading_that_exist(page: Path) -> None:
    broken = []
    for number, line in prose(page):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{number}: {target}: no such file")
            elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
                broken.append(f"{number}: {target}: no heading #{anchor}")
    assert broken == []
