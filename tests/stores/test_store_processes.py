"""Stores shared by real processes: continuing, taking turns, surviving ``kill -9``.

Each test runs on every kind of shared store (``store_factory``): ``SQLiteStore``,
``DBOSStore`` on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

import pytest

from openprogram import Runtime
from openprogram.messages import AssistantMessage, UserMessage, load_messages
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider

from .conftest import StoreFactory

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCRIPT = str(HERE / "_chat_process.py")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
WAIT_S = 60.0
"""Upper bound on waits for another process (generous: the machine may be busy)."""


_OUTPUTS: dict[int, IO[str]] = {}


def chat_process(*args: str) -> subprocess.Popen[str]:
    # Output goes to a file, never to a pipe: a process printing more than a pipe holds
    # while this one waits for the conversation would block there, holding its turn.
    out = tempfile.TemporaryFile("w+")  # noqa: SIM115 (finish closes it)
    process = subprocess.Popen([sys.executable, SCRIPT, *args], env=ENV, stdout=out, text=True)
    _OUTPUTS[process.pid] = out
    return process


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    process.wait(timeout=WAIT_S)
    with _OUTPUTS.pop(process.pid) as out:
        out.seek(0)
        return process.returncode, out.read()


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def echo(request: ProviderRequest) -> str:
    last = request.messages[-1]
    assert isinstance(last, UserMessage)
    return f"re: {last.text}"


def test_a_second_process_continues_the_conversation_of_the_first(
    store_factory: StoreFactory,
) -> None:
    path = store_factory.place
    code, _ = finish(chat_process(path, "c1", "send", "I am Ann.", "I live in Rome."))
    assert code == 0
    code, out = finish(chat_process(path, "c1", "send", "Where do I live?"))
    assert code == 0
    (request,) = [load_messages(line) for line in out.splitlines()]
    assert [(type(m).__name__, m.text) for m in request] == [
        ("UserMessage", "I am Ann."),
        ("AssistantMessage", "re: I am Ann."),
        ("UserMessage", "I live in Rome."),
        ("AssistantMessage", "re: I live in Rome."),
        ("UserMessage", "Where do I live?"),
    ]


def test_processes_sending_at_once_take_turns(store_factory: StoreFactory) -> None:
    texts = {n: [f"p{n}:{t}" for t in range(10)] for n in range(3)}
    store = store_factory()  # the schema exists before the processes open the store
    processes = [chat_process(store_factory.place, "busy", "send", *texts[n]) for n in range(3)]
    chat = Runtime(FunctionProvider(echo), store=store).conversation("busy")
    for turn in range(10):  # this process sends too
        chat.send(f"here:{turn}")
    assert [finish(p)[0] for p in processes] == [0, 0, 0]
    stored = chat.messages
    assert len(stored) == 80
    for user, reply in zip(stored[::2], stored[1::2], strict=True):
        assert isinstance(user, UserMessage)
        assert isinstance(reply, AssistantMessage)
        assert reply.text == f"re: {user.text}"
    for n in range(3):  # each process's own messages in its order
        assert [m.text for m in stored[::2] if m.text.startswith(f"p{n}:")] == texts[n]


def test_a_holder_killed_with_kill_9_does_not_block_the_conversation(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    marker, release = tmp_path / "holding", tmp_path / "release"
    # a lease that would outlast the test: only noticing the dead holder lets it go on
    holder = chat_process(store_factory.place, "c1", "hold", str(marker), str(release), "3600")
    wait_for(marker)
    holder.send_signal(signal.SIGKILL)
    assert finish(holder)[0] == -signal.SIGKILL
    chat = Runtime(FunctionProvider(echo), store=store_factory(lease_s=3600)).conversation("c1")
    reply = asyncio.run(asyncio.wait_for(chat.asend("anyone?"), WAIT_S))
    assert reply == "re: anyone?"
    assert [m.text for m in chat.messages] == ["anyone?", "re: anyone?"]  # nothing half-saved


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP/SIGCONT")
def test_a_stalled_holder_loses_its_turn_when_the_lease_expires(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    marker, release = tmp_path / "holding", tmp_path / "release"
    holder = chat_process(store_factory.place, "c1", "hold", str(marker), str(release), "1")
    wait_for(marker)
    holder.send_signal(signal.SIGSTOP)  # alive but frozen: it stops renewing its lease
    try:
        chat = Runtime(FunctionProvider(echo), store=store_factory()).conversation("c1")
        reply = asyncio.run(asyncio.wait_for(chat.asend("anyone?"), WAIT_S))
        assert reply == "re: anyone?"
        release.touch()
        holder.send_signal(signal.SIGCONT)
        code, out = finish(holder)
        # the holder's late reply is refused, never interleaved: none lost, none mixed
        assert code == 3, out
        assert "changed while a send ran" in out
        assert [m.text for m in chat.messages] == ["anyone?", "re: anyone?"]
    finally:
        if holder.poll() is None:
            holder.send_signal(signal.SIGCONT)
            holder.kill()
            finish(holder)
