"""``python -m openprogram chat`` on the embedded model, under a pseudo-terminal (``local_llm``).

The command starts as a user starts it, with no ``--model``: on the default
embedded model (its own server, started by the chat process: 3-8 s, plus
the weights check on a first run). Assertions are about meaning (the tool ran
for Paris; the second reply knows the first exchange), never wording.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from openprogram.providers.local import local_available

pexpect = pytest.importorskip("pexpect", reason="the chat tests drive a pty with pexpect (dev)")

pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(not local_available(), reason="needs pip install 'openprogram-ai[local]'"),
]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TIMEOUT_S = 600
"""Per expected line: the server start and a few replies at 7-11 tokens/s on a busy machine."""


def test_a_chat_on_the_embedded_model_calls_a_tool_and_remembers(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OPENPROGRAM_MODEL", None)  # the default: the embedded model
    store = str(tmp_path / "chats.sqlite")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "openprogram", "chat", "--tools", "_cli_chat", "--store", store],
        cwd=str(HERE),
        env=env,
        encoding="utf-8",
        timeout=TIMEOUT_S,
        dimensions=(40, 200),
    )
    try:
        child.expect(r"openprogram chat on local:qwen2\.5-coder-0\.5b: conversation conv_\w+")
        child.expect_exact("you> ")
        child.sendline("What is the weather in Paris right now?")
        child.expect(re.compile(r"get_weather\(city='Paris", re.IGNORECASE))
        child.expect_exact("you> ")
        child.sendline("Which city did I just ask you about?")
        child.expect_exact("you> ")
        assert "paris" in (child.before or "").lower()  # the reply drew on the earlier exchange
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
