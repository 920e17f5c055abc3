"""A data dir whose texts are hostile: script, HTML, ``javascript:`` links and control characters
in an item's query, a category, a reviewer's id and name, a note and a concern tag."""

from __future__ import annotations

import json
from pathlib import Path

from bot.demo import PANEL_RUN, build_demo
from evaluation import Store

SCRIPT = "<script>window.__pwned=1</script>"
"""Markup that would run if a page inserted it unescaped."""
IMAGE = '<img src=x onerror="window.__pwned=2">'
"""An element whose handler would run."""
LINK = "javascript:window.__pwned=3"
"""A link target that would run."""
CONTROL = "bell\x07 escape\x1b[31m nul-ish\x7f"
"""Control characters."""
RUN = "xss-run"
"""The run holding the hostile item."""
REVIEWER = f"evil{SCRIPT}"
"""A reviewer id with markup."""


def hostile_store(root: Path) -> Store:
    """The demo data dir (with its panel) plus a run and ratings full of hostile text."""
    store = Store(root)
    build_demo(store, panel=True)
    panel = (store.root / "runs" / f"{PANEL_RUN}.jsonl").read_text("utf-8")
    text = panel.replace(f'"run_id":"{PANEL_RUN}"', f'"run_id":"{RUN}"')
    text = text.replace(
        '"query":"ferret middleware error handling"',
        '"query":' + json.dumps(f"{SCRIPT} {IMAGE} [x]({LINK}) {CONTROL}"),
    ).replace('"category":"middleware"', '"category":' + json.dumps(IMAGE))
    (store.root / "runs" / f"{RUN}.jsonl").write_text(text, "utf-8")
    lines = []
    for n, (who, judgment, score) in enumerate(
        [(REVIEWER, "good", 1.0), ("plain", "terrible", 0.1), (IMAGE, "okay", 0.7)]
    ):
        lines.append({
            "v": 1, "type": "rating", "run_id": RUN, "item_id": "q01", "dimension": "overall",
            "reviewer": {"platform": "demo", "id": who, "name": f"{LINK} {CONTROL}"},
            "channel": "demo", "idempotency_key": f"xss:{n}", "action": f"rate:{judgment}",
            "timestamp": f"2026-11-21T10:0{n}:00Z", "judgment": judgment, "score": score,
            "ai_verdict_shown": False, "note": f"{SCRIPT} {CONTROL}",
            "concerns": [IMAGE] if n == 0 else [],
        })
    with open(store.ratings.path, "a", encoding="utf-8") as log:
        for line in lines:
            log.write(json.dumps(line) + "\n")
    return store
