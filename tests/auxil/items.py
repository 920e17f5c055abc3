"""Runs whose cards show what issue 26 §2 asked for, for the terminal and the chat tests alike: a
response holding code, and agent scenarios with their plugin context."""

from __future__ import annotations

from evaluation import Evaluation, ItemData, Query, QueryEvaluation, RunHeader, Store

CODE = (
    "def retry(call, attempts=3):\n"
    "    for attempt in range(attempts):\n"
    "        try:\n"
    "            return call()  # {long} END-OF-LINE\n"
    "        except OSError:\n"
    "            continue"
).format(long="z" * 120)
"""A code block: indentation that matters, and one line wider than any terminal here."""
CODE_ANSWER = f"Add a retry:\nwrap the call in a loop.\n\n```python\n{CODE}\n```\n\nThen run it."
"""A response: two lines of prose, the code fenced, a last line."""
CODE_RUN = "code-answers"
PROMPT = "Make this retry on errors:\n```python\nreturn call()\n```"
"""A query of several lines, with code of its own."""

PLUGIN = {
    "plugin": "commit-commands",
    "plugin_description": "Git commit helpers: stage, write the message, commit",
    "component": "/commit",
    "component_type": "command",
    "maturity": "polished",
}
"""A scenario's context, as an import stores it (``maturity`` is a feature no card shows by
default)."""
RATIONALE = "The commit command ran with the requested message."
SCENARIO_RUN = "plugin-scenarios"


def code_run(store: Store, run_id: str = CODE_RUN) -> str:
    """A run of two items rated on code validity, answering :data:`PROMPT` (then a one-line
    query) with :data:`CODE_ANSWER`."""
    items = [
        QueryEvaluation(
            run_id=run_id,
            data=ItemData(id=f"c{n}", query=Query(query=query), answer=CODE_ANSWER),
        )
        for n, query in enumerate((PROMPT, "add a retry"))
    ]
    store.create_run(RunHeader(run_id=run_id, kind="scenario", dimensions=["code-validity"]), items)
    return run_id


def plugin_scenarios(store: Store, run_id: str = SCENARIO_RUN) -> str:
    """Two scenarios of the ``commit-commands`` plugin, rated on trigger accuracy."""
    items = [
        QueryEvaluation(
            run_id=run_id,
            data=ItemData(
                id=f"s{n}",
                query=Query(
                    query=f"Can you commit my changes with message 'fix login bug {n}'?",
                    expected=["Command /commit should trigger"],
                ),
                answer="I'll commit your changes with that message.\n[main 1a2b3c] fix login bug",
                tool_captures=[
                    {"tool": "Read", "input": "src/auth/login.ts"},
                    {"tool": "Bash", "input": "git add -A"},
                    {"tool": "Bash", "input": 'git commit -m "fix login bug"'},
                ],
                features=PLUGIN,
                evaluation=Evaluation(
                    verdict="PASS", confidence=0.9, scores={"overall": 1.0}, rationale=RATIONALE
                ),
            ),
        )
        for n in range(2)
    ]
    header = RunHeader(run_id=run_id, kind="scenario", dimensions=["trigger-accuracy"])
    store.create_run(header, items)
    return run_id
