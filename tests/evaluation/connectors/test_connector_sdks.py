"""The tools' SDKs never change the process's logging: hilbot's scrubbing handlers stay the only
ones.

langfuse, on import, sets the ``httpx`` logger to WARNING and gives it an unscrubbed console
handler of its own; run in a fresh interpreter, each SDK is imported after hilbot's logging is set
up.
"""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from evaluation.connectors.sdks import kept_logging

PROBE = """
import logging, sys
from evaluation.scrub import install_logging
install_logging(logging.DEBUG)
import evaluation.connectors.base  # the import hook
def state():
    loggers = [logging.getLogger(), logging.getLogger("httpx"), logging.getLogger("{sdk}")]
    return [(lg.level, [type(h).__name__ for h in lg.handlers], lg.propagate) for lg in loggers]
before = state()
import {module}
after = state()
print(before == after, before, after)
"""


@pytest.mark.parametrize(
    "sdk, module",
    [
        ("langfuse", "langfuse.api"),
        ("inspect_ai", "inspect_ai.log"),
        ("langsmith", "langsmith"),
        ("phoenix", "phoenix.client"),
    ],
)
def test_importing_a_tools_sdk_leaves_the_logging_as_it_was(sdk: str, module: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(sdk=sdk, module=module)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("True"), out.stdout


def test_kept_logging_puts_back_levels_handlers_and_new_loggers() -> None:
    httpx = logging.getLogger("httpx")
    level, handlers = httpx.level, list(httpx.handlers)
    with kept_logging():
        httpx.setLevel(logging.CRITICAL)
        httpx.addHandler(logging.StreamHandler())
        logging.getLogger("a.new.logger.of.an.sdk").setLevel(logging.ERROR)
        logging.getLogger("a.new.logger.of.an.sdk").propagate = False
        logging.disable(logging.CRITICAL)
    assert (httpx.level, httpx.handlers) == (level, handlers)
    new = logging.getLogger("a.new.logger.of.an.sdk")
    assert (new.level, new.handlers, new.propagate) == (logging.NOTSET, [], True)
    assert logging.getLogger().manager.disable == logging.NOTSET
