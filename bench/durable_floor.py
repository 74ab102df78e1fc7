"""The floor of journaling: the least a journal could do, timed in the loop it journals.

Run alone: ``python bench/durable_floor.py [--rounds 15] [--samples 15]``.

``bench_durable.py --only overhead`` times what journaling adds to the
20-turn loop on an instant fake model with a ``SQLiteStore``. This experiment
asks how low that could go in CPython, by running the same loop five ways in
interleaved rounds (medians, as there):

- ``none``: no store;
- ``shipped``: a ``SQLiteStore``, every exec journaled as openprogram does it;
- ``hooks``: the same store, the runtime's journal calls swapped for ones
  that do nothing and write nothing: what a journal costs the loop before it
  does any work (the run opened and held, the loop's checks of the journal);
- ``record``: as ``hooks``, but the run's end written as shipped: one
  transaction holding the run's record and no step;
- ``floor``: the same store, the runtime's journal calls swapped for the
  least any journal must do, and nothing more: per model turn, hash what is
  new in the request into a running hash and queue the reply; per call, queue
  the result; at the end, encode each step once (the reply as a minimal dict,
  one JSON call per step, a hash of each call) and write the run and its steps
  in one SQLite transaction (``BEGIN IMMEDIATE``, two ``INSERT`` s,
  ``COMMIT``) on the store's own connection. No request head, no divergence
  detail, no lease, no fencing, no checks: a journal no one could resume from
  safely, kept only as a lower bound.

The swap replaces private functions of the runtime (``runtime._loop``,
``runtime._executor``, ``durable._journal``) for the ``floor`` rounds only;
it is an experiment, not a way to run openprogram.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pydantic_core
from bench_durable import STEPS, TURNS, _loop_us, add, add_async

import openprogram.durable._journal as journal_module
import openprogram.runtime._executor as executor_module
import openprogram.runtime._loop as loop_module
from openprogram.durable import Fingerprint
from openprogram.messages import AssistantMessage, ToolCall
from openprogram.stores import SQLiteStore

_HASHES: dict[int, list[Any]] = {}


def _recorded_reply(run: Any, journal: Any, request: Any) -> None:
    state = _HASHES.get(id(run))
    if state is None:
        state = _HASHES[id(run)] = [hashlib.blake2b(digest_size=16), 0]
    running, seen = state
    for message in request.messages[seen:]:
        key = run.stepped.get(id(message))
        text = f"@{key}" if key is not None else str(getattr(message, "content", ""))
        running.update(text.encode())
    state[1] = len(request.messages)
    key = f"{run.key_prefix}{run.iterations}"
    run.turn = (key, Fingerprint(running.hexdigest(), {}, "", ()))


def _record_reply(run: Any, journal: Any, reply: AssistantMessage) -> None:
    key, fingerprint = run.turn
    run.stepped[id(reply)] = key
    journal._queue.append((key, fingerprint.value, reply))


def _record_result(
    call: ToolCall, key: str, journal: Any, message: Any, *, failure: Any, canonical: str
) -> None:
    journal._queue.append((key, call.name, canonical, message.content, failure))


def _reply(reply: AssistantMessage) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "tool_call", "id": b.id, "name": b.name, "arguments": b.arguments}
            if isinstance(b, ToolCall)
            else {"type": "text", "text": getattr(b, "text", "")}
            for b in reply.content
        ],
        "stop_reason": reply.stop_reason,
    }


async def _close(self: Any, status: str, pending: Any = (), error: Any = None) -> None:
    rows = []
    for item in self._queue:
        if len(item) == 3:
            key, fingerprint, reply = item
            rows.append([key, "reply", fingerprint, {"message": _reply(reply)}])
        else:
            key, name, canonical, content, failure = item
            called = hashlib.blake2b(f"{name}{canonical}".encode(), digest_size=12).hexdigest()
            rows.append([key, "result", called, {"content": content, "failure": failure}])
    text = "[" + ",".join(pydantic_core.to_json(row).decode() for row in rows) + "]"
    self._queue, self._closed = [], True
    db = self._store._database._connection
    db.execute("BEGIN IMMEDIATE")
    db.execute(
        "INSERT INTO openprogram_runs (run_id, status, content, options, created, updated, "
        "pending, error) VALUES (?, ?, '', '', 0, 0, '[]', NULL)",
        (self.run_id, status),
    )
    db.execute(
        "INSERT INTO openprogram_steps (run_id, batch, steps) VALUES (?, 0, ?)",
        (self.run_id, text),
    )
    db.execute("COMMIT")


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


async def _end(self: Any, status: str, pending: Any = (), error: Any = None) -> None:
    self._queue, self._closed = [], True


WAYS: dict[str, list[tuple[Any, str, Callable[..., Any]]]] = {
    "none": [],
    "shipped": [],
    "hooks": [
        (loop_module, "recorded_reply", _nothing),
        (loop_module, "record_reply", _nothing),
        (executor_module, "record_result", _nothing),
        (journal_module.Journal, "close", _end),
    ],
    "record": [
        (loop_module, "recorded_reply", _nothing),
        (loop_module, "record_reply", _nothing),
        (executor_module, "record_result", _nothing),
    ],
    "floor": [
        (loop_module, "recorded_reply", _recorded_reply),
        (loop_module, "record_reply", _record_reply),
        (executor_module, "record_result", _record_result),
        (journal_module.Journal, "close", _close),
    ],
}
"""Each way's swaps: (owner, name, replacement)."""


@contextmanager
def _swapped(swaps: list[tuple[Any, str, Callable[..., Any]]]) -> Iterator[None]:
    kept = [(owner, name, getattr(owner, name)) for owner, name, _ in swaps]
    for owner, name, swap in swaps:
        setattr(owner, name, swap)
    try:
        yield
    finally:
        for owner, name, original in kept:
            setattr(owner, name, original)
        _HASHES.clear()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds")
    parser.add_argument("--samples", type=int, default=15, help="execs per round and way")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, SQLiteStore(Path(folder) / "f.sqlite") as store:
        for tool in (add, add_async):
            kind = "sync" if tool is add else "async"
            times: dict[str, list[float]] = {way: [] for way in WAYS}
            for _ in range(args.rounds + 1):  # the first round warms every path up
                for way, swaps in WAYS.items():
                    with _swapped(swaps):
                        at = None if way == "none" else store
                        times[way].append(asyncio.run(_loop_us(tool, at, args.samples))[0])
            base = times["none"][1:]
            for way in ("hooks", "record", "floor", "shipped"):
                ratio = [j / p - 1 for p, j in zip(base, times[way][1:], strict=True)]
                added = [j - p for p, j in zip(base, times[way][1:], strict=True)]
                print(
                    f"{TURNS}-turn loop, {kind} tool, {way}: no store "
                    f"{statistics.median(base):.0f} µs, journaled "
                    f"{statistics.median(times[way][1:]):.0f} µs per exec; adds "
                    f"{statistics.median(added):.0f} µs ({statistics.median(ratio) * 100:+.1f} %; "
                    f"rounds {min(ratio) * 100:+.1f} .. {max(ratio) * 100:+.1f} %), "
                    f"{statistics.median(added) / STEPS:.1f} µs per step"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
