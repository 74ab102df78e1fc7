"""``python -m openprogram chat`` under a pseudo-terminal, on a fake model.

The command runs as a user starts it (``pexpect`` drives a real pty), with
the fake model and tools of ``_cli_chat.py`` passed as ``--model`` and
``--tools``, so nothing needs a network or the embedded model.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect", reason="the chat tests drive a pty with pexpect (dev)")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TIMEOUT_S = 60


def start(*options: str) -> pexpect.spawn:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    env.pop("OPENPROGRAM_MODEL", None)
    return pexpect.spawn(
        sys.executable,
        ["-m", "openprogram", "chat", "--model", "_cli_chat:chat_model", *options],
        cwd=str(HERE),  # --model and --tools modules are imported from the current directory
        env=env,
        encoding="utf-8",
        timeout=TIMEOUT_S,
        dimensions=(40, 200),
    )


def ended(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None, child.before
    return int(child.exitstatus)


def test_a_chat_streams_replies_shows_tool_calls_and_ends_with_exit(tmp_path: Path) -> None:
    store = str(tmp_path / "chats.sqlite")
    child = start("--tools", "_cli_chat", "--store", store)
    child.expect(r"openprogram chat on function:chat-fake: conversation (conv_\w+), saved in ")
    conversation = child.match.group(1)
    child.expect_exact("you> ")
    child.sendline("What is the weather in Paris?")
    child.expect_exact("⚙ get_weather(city='Paris')")
    child.expect_exact("✓ get_weather done in")
    child.expect_exact("Looked it up: Paris: sunny, 21 degrees.")
    child.expect_exact("you> ")
    child.sendline("Hello there")
    child.expect_exact("You said: Hello there")
    child.expect_exact("you> ")
    child.sendline("/exit")
    assert ended(child) == 0
    # a second session continues the saved conversation
    child = start("--store", store, "--conversation", conversation)
    child.expect_exact(f"conversation {conversation}, saved in {store}")
    child.expect_exact("(continuing after 6 earlier message(s))")
    child.expect_exact("you> ")
    child.sendline("What did I say before?")
    child.expect_exact("Before, you said: What is the weather in Paris? / Hello there.")
    child.expect_exact("you> ")
    child.sendeof()  # Ctrl-D
    assert ended(child) == 0
    with sqlite3.connect(store) as db:
        (count,) = db.execute("SELECT COUNT(*) FROM openprogram_messages").fetchone()
    db.close()
    assert count == 8


def test_ctrl_c_cancels_a_reply_and_at_the_prompt_ends_the_chat() -> None:
    child = start()
    child.expect_exact("you> ")
    child.sendline("Answer slowly, please")
    child.expect_exact("[model at work]")
    child.sendintr()  # Ctrl-C while the model is at work
    child.expect_exact("(interrupted: the conversation is as it was before that message)")
    child.expect_exact("you> ")
    child.sendline("What did I say before?")
    child.expect_exact("Before, you said: nothing.")  # the interrupted send left nothing behind
    child.expect_exact("you> ")
    child.sendintr()  # Ctrl-C at the prompt
    assert ended(child) == 0


def test_conversation_without_store_is_a_usage_error() -> None:
    child = start("--conversation", "conv_1")
    child.expect_exact("add --store PATH")
    assert ended(child) == 2
