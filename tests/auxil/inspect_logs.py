"""Real inspect_ai logs for the connector's tests, written by inspect_ai itself.

:func:`write_logs` runs two tiny tasks against the offline ``mockllm/model`` (no network, no
key): the model's reply to each sample is looked up in :data:`REPLIES` by the last user
message, so every run writes the same outputs and scores. One ``eval`` takes about a second;
the tests write the logs once per session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SYSTEM = "You answer in one short sentence."
"""The system message of the chat-shaped sample."""

REPLIES = {
    "What is the capital of France?": "The capital of France is Paris.",
    "What is 2 + 2?": "It is 5.",
    "¿Qué es 日本語? 🚀": "Eine Sprache — \u202e odd \u0000 text",
}
"""What the mock model answers to each question (by the last user message)."""

IDS: list[int | str] = [1, "q-2/odd id ü", "3"]
"""The sample ids, in order: an int, a string with odd characters, a numeric string."""


def _reply(messages: list[Any], *_: Any) -> Any:
    """The mock model's answer: the reply to the last user message.

    It carries its usage, so the mock does not count tokens with tiktoken (which downloads its
    encoding on first use: no network here).
    """
    from inspect_ai.model import ModelOutput, ModelUsage

    question = next(m.text for m in reversed(messages) if m.role == "user")
    reply = REPLIES.get(question, "no idea")
    output = ModelOutput.from_content(model="mockllm/model", content=reply)
    output.usage = ModelUsage(
        input_tokens=len(question), output_tokens=5, total_tokens=len(question) + 5
    )
    return output


def _samples() -> list[Any]:
    """Three samples: a string input, a chat input with two targets, and metadata."""
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    questions = list(REPLIES)
    chat: list[Any] = [ChatMessageSystem(content=SYSTEM), ChatMessageUser(content=questions[1])]
    return [
        Sample(id=IDS[0], input=questions[0], target="Paris", metadata={"category": "geo"}),
        Sample(
            id=IDS[1], input=chat, target=["4", "four"], metadata={"category": "math", "level": 1}
        ),
        Sample(id=IDS[2], input=questions[2], target="Sprache", metadata={"category": "lang"}),
    ]


def _scorers() -> list[Any]:
    """``includes()`` (C/I), a graded scorer (a float with an explanation) and a dict scorer."""
    from inspect_ai.scorer import Score, Target, accuracy, includes, mean, scorer
    from inspect_ai.solver import TaskState

    @scorer(metrics=[mean()])
    def graded() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            hit = any(t.lower() in state.output.completion.lower() for t in target)
            return Score(
                value=0.9 if hit else 0.2,
                answer=state.output.completion[:20],
                explanation=f"graded: {'hit' if hit else 'miss'}",
                metadata={"grader": "rule"},
            )

        return score

    @scorer(metrics={"*": [accuracy()]})
    def aspects() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(
                value={"fluent": "C", "short": len(state.output.completion) < 25},
                explanation="aspects checked",
            )

        return score

    return [includes(), graded(), aspects()]


def _task(name: str, epochs: int) -> Any:
    """A task of the three samples, solved with ``generate()``."""
    from inspect_ai import Epochs, Task
    from inspect_ai.solver import generate

    return Task(
        name=name, dataset=_samples(), solver=generate(), scorer=_scorers(), epochs=Epochs(epochs)
    )


def run_task(log_dir: Path, name: str, epochs: int = 1) -> Path:
    """Run one task against the mock model and return the ``.eval`` log it wrote."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from evaluation.connectors.sdks import kept_logging

    with kept_logging():  # running an eval sets the root logger's level and the httpx logger's
        model = get_model("mockllm/model", custom_outputs=_reply)
        logs = inspect_eval(
            _task(name, epochs),
            model=model,
            log_dir=str(log_dir),
            display="none",
            log_format="eval",
            max_samples=1,
        )
    assert logs and logs[0].status == "success", logs[0].error if logs else "no log"
    return Path(logs[0].location)


def write_logs(log_dir: Path) -> dict[str, Path]:
    """The logs the tests read: ``single`` (one epoch) and ``epochs`` (two epochs)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    return {
        "single": run_task(log_dir / "single", "tiny_qa"),
        "epochs": run_task(log_dir / "epochs", "tiny_qa_epochs", epochs=2),
    }
