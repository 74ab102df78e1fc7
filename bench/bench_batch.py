"""Throughput of ``batch.map``'s local backend against a model with 50 ms latency.

Every item is one ``@agentic_function`` whose body makes one model call; the
model is a ``FunctionProvider`` that sleeps 50 ms asynchronously, like a
network round trip. The ideal is ``concurrency / 0.05`` items/s (20 per slot);
the gap to it is the batch's and the exec loop's own overhead. Columns: an
async agentic function (runs on the event loop) and a sync one (each item on a
worker thread with its own event loop).

Standalone, no peers: ``python bench/bench_batch.py [--items-per-slot N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

try:
    import openprogram  # noqa: F401 - installed (editable) is the normal case
except ImportError:  # run from a checkout without installing: use the repository's copy
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openprogram import Runtime, agentic_function, batch
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider

LATENCY_S = 0.05
CONCURRENCY = (1, 2, 4, 8, 16, 32, 64)


async def _slow_model(request: ProviderRequest) -> str:
    await asyncio.sleep(LATENCY_S)
    return "done"


@agentic_function(register_globally=False)
async def answer(question: str, runtime: Runtime) -> str:
    """Answer a question (async body: one model call)."""
    return str(await runtime.async_exec(question, tools=[]))


@agentic_function(register_globally=False)
def answer_sync(question: str, runtime: Runtime) -> str:
    """Answer a question (sync body: one model call on a worker thread)."""
    return str(runtime.exec(question, tools=[]))


def items_per_second(fn: Any, concurrency: int, items: int) -> float:
    """Run ``items`` questions at ``concurrency`` and return the throughput."""
    questions = [f"question {i}" for i in range(items)]
    provider = FunctionProvider(_slow_model)
    started = time.perf_counter()
    result = batch.map(fn, questions, provider=provider, concurrency=concurrency)
    elapsed = time.perf_counter() - started
    if not result.ok:
        raise AssertionError(f"{len(result.failed)} items failed: {result.failed[0].error}")
    return items / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--items-per-slot",
        type=int,
        default=10,
        help="items per concurrency slot (at least 20 items per run); default 10",
    )
    args = parser.parse_args()
    items_per_second(answer, 4, 8)  # warm-up: imports, thread pool, first loop
    print(f"batch.map, local backend, model latency {LATENCY_S * 1000:.0f} ms (items/s)")
    header = ("concurrency", "items", "async", "sync", "ideal", "async/ideal")
    print("{:>11} {:>6} {:>9} {:>9} {:>9} {:>12}".format(*header))
    for concurrency in CONCURRENCY:
        items = max(20, concurrency * args.items_per_slot)
        fast = items_per_second(answer, concurrency, items)
        threaded = items_per_second(answer_sync, concurrency, items)
        ideal = concurrency / LATENCY_S
        print(
            f"{concurrency:>11} {items:>6} {fast:>9.1f} {threaded:>9.1f} {ideal:>9.0f} "
            f"{fast / ideal:>11.0%}"
        )


if __name__ == "__main__":
    main()
