"""What a store adds to a send: a 200-message conversation in ``SQLiteStore`` against the same exec.

Run alone: ``python bench/bench_conversation.py [--repeat 41] [--messages 200]``.

The conversation holds ``--messages`` messages (user questions of about 80
characters, replies of about 300, one exchange in five a tool call with its
result). Three measures, with an instant fake model, in interleaved rounds so
load from elsewhere spreads over all of them:

- ``exec``: ``runtime.exec(question, history=<the messages>)``, no store;
- ``send``: ``runtime.conversation(id).send(question)`` on a store that is
  open (a server handling each message with a new ``Conversation``): the turn
  (in-process lock and the lease row), reading what was added since, trimming,
  the exec, appending two rows, freeing the lease;
- ``send, store just opened``: the same on a store opened just before (a
  process continuing a saved conversation): it reads and decodes every row.

Each sample sends on a conversation of its own holding the same messages (set
up untimed), so every send finds exactly ``--messages`` of them; a full garbage
collection runs before each timed send (``_timing.Stopwatch``). Prints each
measure's median (ms), the sends' overhead over ``exec``, and the size of a
store file holding just the one conversation (after a WAL checkpoint).
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _timing import Stopwatch

from openprogram import Runtime
from openprogram.messages import (
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from openprogram.stores import SQLiteStore
from openprogram.testing import FunctionProvider

QUESTION = "And what about the weekend after that, if the weather turns?"


def conversation(size: int) -> list[Message]:
    """``size`` messages of a plausible support chat (every fifth exchange uses a tool)."""
    out: list[Message] = []
    turn = 0
    while len(out) < size:
        out.append(UserMessage(f"Question {turn}: " + "could you look into my order please? " * 2))
        if turn % 5 == 4 and len(out) + 3 <= size:
            call = ToolCall(f"call_{turn}", "order_status", {"order_id": f"A-{1000 + turn}"})
            out.append(AssistantMessage((call,), stop_reason="tool_calls", usage=Usage(900, 20)))
            out.append(ToolResultMessage(f"call_{turn}", "order_status", "shipped yesterday " * 3))
        reply = TextContent(f"Answer {turn}: " + "here is what I found about it. " * 9)
        out.append(AssistantMessage((reply,), usage=Usage(1200, 80), model="fake"))
        turn += 1
    return out[:size]


def model() -> FunctionProvider:
    return FunctionProvider(lambda request: "Sunny, then rain on Sunday.")


class Bench:
    """One store file, open for the whole run, with a fresh copy of the conversation per sample."""

    def __init__(self, folder: Path, history: list[Message]) -> None:
        self.path = folder / "chats.sqlite"
        self.history = history
        self.store = SQLiteStore(self.path)
        self.count = 0

    def fresh_conversation(self) -> str:
        self.count += 1
        name = f"c{self.count}"
        asyncio.run(self.store.append_conversation(name, self.history, start=0))
        return name

    def exec(self) -> float:
        runtime = Runtime(model())
        with Stopwatch() as watch:
            runtime.exec(QUESTION, tools=[], history=self.history)
        return watch.ms

    def send(self) -> float:
        name = self.fresh_conversation()
        runtime = Runtime(model(), store=self.store)
        with Stopwatch() as watch:
            runtime.conversation(name).send(QUESTION, tools=[])
        return watch.ms

    def send_opened(self) -> float:
        name = self.fresh_conversation()
        with SQLiteStore(self.path) as store:  # nothing of the file read yet
            runtime = Runtime(model(), store=store)
            with Stopwatch() as watch:
                runtime.conversation(name).send(QUESTION, tools=[])
        return watch.ms


def file_size(folder: Path, history: list[Message]) -> int:
    path = folder / "one.sqlite"
    with SQLiteStore(path) as store:
        asyncio.run(store.append_conversation("c1", history, start=0))
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return sum(p.stat().st_size for p in folder.glob("one.sqlite*"))


def main() -> int:
    """Parse the options, take the samples, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=41, help="samples per measure")
    parser.add_argument("--messages", type=int, default=200, help="messages in the conversation")
    args = parser.parse_args()
    history = conversation(args.messages)
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(Path(tmp), history)
        measures: dict[str, Callable[[], float]] = {
            "exec": bench.exec,
            "send": bench.send,
            "send, store just opened": bench.send_opened,
        }
        for measure in measures.values():  # an untimed warm-up of each path
            measure()
        samples: dict[str, list[float]] = {name: [] for name in measures}
        for _ in range(args.repeat):
            for name, measure in measures.items():
                samples[name].append(measure())
        bench.store.close()
        size = file_size(Path(tmp), history)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print(f"{args.messages}-message conversation, {args.repeat} samples each, median ms:")
    for name, value in medians.items():
        print(f"  {name:<24} {value:7.3f} ms")
    for name in ("send", "send, store just opened"):
        print(f"  {name} adds {medians[name] - medians['exec']:+.3f} ms over exec")
    print(f"  store file: {size:,} bytes ({size / args.messages:.0f} per message)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
