"""Durable runs: what journaling costs, how fast a finished run replays, and the kill run.

Run alone: ``python bench/bench_durable.py [--only overhead,replay,kills] [--rounds 15]
[--kills 500]``.

- ``overhead``: a 20-turn loop (19 replies calling a tool, then the answer) on
  an instant fake model, with no store and with a ``SQLiteStore`` on local
  disk (every exec journaled), in interleaved rounds so load from elsewhere
  spreads over both; each round takes the median of its samples. Prints the
  median over rounds of the time added (per exec and per journaled step: 20
  replies and 19 results) and of the ratio, for a sync and an async tool.
- ``replay``: a finished 100-step run (34 model turns, 66 tool calls, two per
  turn, each call 50 ms on the fake) run again with its run id: its time
  against the live run's.
- ``kills``: ``tests/durable/_refunds.kill_trial`` over seeds 0 .. N-1 (the
  test suite runs 50): the 3-level refund program with a pause, SIGKILLed at
  random moments and restarted until it finishes. Prints steps run again
  although journaled, ``side_effect`` bodies run twice, idempotent bodies run
  again, unknown outcomes, outputs equal to an uninterrupted run's.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _timing import Stopwatch

from openprogram import Runtime, function
from openprogram.messages import ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.stores import MemoryStore, SQLiteStore
from openprogram.testing import FunctionProvider, ScriptedProvider, call

TURNS = 20
STEPS = 2 * TURNS - 1
"""Journaled steps of one exec of the loop: its replies and its tool results."""


@function(register_globally=False)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@function(register_globally=False)
async def add_async(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _loop_script(name: str) -> list[Any]:
    return [call(name, a=i, b=1) for i in range(TURNS - 1)] + ["done"]


async def _loop_us(tool: Any, store: Any, samples: int) -> tuple[float, float]:
    """Median wall and CPU (this process, every thread) µs of one exec of the loop."""
    times, cpu = [], []
    for _ in range(samples):
        runtime = Runtime(ScriptedProvider(_loop_script(tool.name)), store=store)
        with Stopwatch() as watch:
            started = time.process_time()
            await runtime.async_exec("add them up", tools=[tool])
            cpu.append((time.process_time() - started) * 1e6)
        times.append(watch.seconds * 1e6)
    return statistics.median(times), statistics.median(cpu)


def overhead(rounds: int, samples: int) -> None:
    with tempfile.TemporaryDirectory() as folder, SQLiteStore(Path(folder) / "b.sqlite") as store:
        for tool in (add, add_async):
            asyncio.run(_loop_us(tool, store, 3))  # warm up both paths
            asyncio.run(_loop_us(tool, None, 3))
            rows = [
                (
                    asyncio.run(_loop_us(tool, None, samples)),
                    asyncio.run(_loop_us(tool, store, samples)),
                )
                for _ in range(rounds)
            ]
            kind = "sync" if tool is add else "async"
            for name, at in (("wall", 0), ("CPU", 1)):
                plain = [p[at] for p, _ in rows]
                journaled = [j[at] for _, j in rows]
                added = [j - p for p, j in zip(plain, journaled, strict=True)]
                ratio = [j / p - 1 for p, j in zip(plain, journaled, strict=True)]
                print(
                    f"overhead ({name}), {TURNS}-turn loop, {kind} tool: no store "
                    f"{statistics.median(plain):.0f} µs, SQLiteStore "
                    f"{statistics.median(journaled):.0f} µs per exec; journaling adds "
                    f"{statistics.median(added):.0f} µs ({statistics.median(ratio) * 100:+.1f} %; "
                    f"rounds {min(ratio) * 100:+.1f} .. {max(ratio) * 100:+.1f} %), "
                    f"{statistics.median(added) / STEPS:.1f} µs per step"
                )


CALL_S = 0.05
PAIRS = 33


@function(register_globally=False)
async def work(n: int) -> str:
    """Do one piece of work (50 ms)."""
    await asyncio.sleep(CALL_S)
    return f"piece {n} done"


async def _slow_model(request: ProviderRequest) -> Any:
    await asyncio.sleep(CALL_S)
    done = sum(isinstance(m, ToolResultMessage) for m in request.messages)
    if done < 2 * PAIRS:
        return [call("work", n=done), call("work", n=done + 1)]
    return f"all {done} pieces done"


def replay() -> None:
    with tempfile.TemporaryDirectory() as folder, SQLiteStore(Path(folder) / "r.sqlite") as store:
        live = Runtime(FunctionProvider(_slow_model), store=store)
        with Stopwatch() as first:
            output = live.exec("do the work", tools=[work], run_id="hundred", max_iterations=50)
        times = []
        for _ in range(5):
            again = Runtime(FunctionProvider(_slow_model), store=store)
            with Stopwatch() as watch:
                assert (
                    again.exec("do the work", tools=[work], run_id="hundred", max_iterations=50)
                    == output
                )
            times.append(watch.seconds)
    replayed = statistics.median(times)
    print(
        f"replay of a finished {PAIRS + 1 + 2 * PAIRS}-step run ({CALL_S * 1000:.0f} ms per call "
        f"live): live {first.seconds:.2f} s, replay {replayed * 1000:.1f} ms "
        f"({replayed / first.seconds * 100:.2f} % of live; median of 5)"
    )


def kills(trials: int) -> None:
    from tests.durable._refunds import kill_trial, uninterrupted_output

    expected = uninterrupted_output(MemoryStore(), "reference")
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        place = f"sqlite:{Path(folder) / 'runs.sqlite'}"

        def trial(seed: int) -> Any:
            return kill_trial(seed, place, Path(folder) / f"log-{seed}")

        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(trial, range(trials)))
    print(
        f"kills, {trials} trials in {time.monotonic() - started:.0f} s: "
        f"{sum(t.kills for t in results)} SIGKILLs, {sum(t.attempts for t in results)} processes; "
        f"journaled steps run again: {sum(len(t.reexecuted) for t in results)}; "
        f"side_effect bodies run twice: "
        f"{sum(n > 1 for t in results for n in t.side_effects.values())}; "
        f"idempotent bodies run again: {sum(t.idempotent_reruns for t in results)}; "
        f"unknown outcomes (kill inside a refund): {sum(len(t.unknown) for t in results)}; "
        f"wrong idempotency keys: {sum(len(t.wrong_keys) for t in results)}; "
        f"outputs equal to an uninterrupted run's: {sum(t.output == expected for t in results)}"
        f"/{trials}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="overhead,replay,kills", help="which parts to run")
    parser.add_argument("--rounds", type=int, default=15, help="overhead: interleaved rounds")
    parser.add_argument("--samples", type=int, default=15, help="overhead: execs per round")
    parser.add_argument("--kills", type=int, default=500, help="kills: trials")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    if "overhead" in parts:
        overhead(args.rounds, args.samples)
    if "replay" in parts:
        replay()
    if "kills" in parts:
        kills(args.kills)
    return 0


if __name__ == "__main__":
    sys.exit(main())
