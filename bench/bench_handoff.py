"""The hand-off of a sync tool body to a worker thread, four ways (openprogram alone).

Run alone: ``python bench/bench_handoff.py [--calls 2000] [--repeat 7]``.

A sync body must run off the event loop thread; what that costs beyond the
body is one hand-off to a worker and one wake-up of the loop. This times
``--calls`` awaited calls of a trivial function, one after another, each way,
in rounds that visit every way once, and prints the median µs per call of
wall time and of CPU time (the process's, every thread counted):

- ``concurrent_future``: the pool's job resolves a ``concurrent.futures.Future``
  that ``asyncio.wrap_future`` chains to the loop (openprogram's hand-off
  until the loop-speed issue);
- ``asyncio_to_thread``: ``asyncio.to_thread`` (the loop's default executor);
- ``per_run_worker``: one dedicated thread fed by a ``SimpleQueue``, answering
  with ``call_soon_threadsafe`` (a worker per run);
- ``openprogram``: ``openprogram._threads.run_in_thread``, the shipped one: the
  cached pool's queue, the value boxed, one ``call_soon_threadsafe``.

The shipped one keeps the cached pool (never a wait for a busy thread, which
nested sync agentic functions need) and gets the per-run worker's single
wake-up; see bench/README.md for the figures that chose it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import queue
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openprogram import _threads


def body(a: int, b: int) -> int:
    """The trivial tool body."""
    return a + b


async def concurrent_future(fn: Callable[..., Any], *args: Any) -> Any:
    ctx = contextvars.copy_context()
    box: list[Any] = []
    fut: Future[None] = Future()

    def job() -> None:
        if fut.set_running_or_notify_cancel():
            try:
                box.append(ctx.run(fn, *args))
                fut.set_result(None)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the awaiting caller
                fut.set_exception(exc)

    _threads.start(job)
    await asyncio.wrap_future(fut)
    return box.pop()


async def asyncio_to_thread(fn: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.to_thread(fn, *args)


class _Worker:
    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while (job := self.jobs.get()) is not None:
            job()

    def close(self) -> None:
        self.jobs.put(None)
        self.thread.join()


_worker: _Worker | None = None


async def per_run_worker(fn: Callable[..., Any], *args: Any) -> Any:
    assert _worker is not None
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()
    ctx = contextvars.copy_context()

    def job() -> None:
        value = ctx.run(fn, *args)
        loop.call_soon_threadsafe(lambda: done.done() or done.set_result(value))

    _worker.jobs.put(job)
    return await done


async def openprogram(fn: Callable[..., Any], *args: Any) -> Any:
    return await _threads.run_in_thread(fn, *args)


WAYS: dict[str, Callable[..., Awaitable[Any]]] = {
    "concurrent_future": concurrent_future,
    "asyncio_to_thread": asyncio_to_thread,
    "per_run_worker": per_run_worker,
    "openprogram": openprogram,
}


def one_round(way: Callable[..., Awaitable[Any]], calls: int) -> tuple[float, float]:
    """µs per call, wall and CPU."""
    global _worker  # the per-run worker lives for one round
    _worker = _Worker() if way is per_run_worker else None

    async def run() -> None:
        for _ in range(calls):
            if await way(body, 2, 3) != 5:
                raise AssertionError("wrong sum")

    asyncio.run(run())  # warm-up: threads started, code paths hot
    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(run())
    figures = (time.perf_counter() - wall) / calls * 1e6, (time.process_time() - cpu) / calls * 1e6
    if _worker is not None:
        _worker.close()
    return figures


def main() -> int:
    """Parse the options, run the rounds, print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per sample")
    parser.add_argument("--repeat", type=int, default=7, help="rounds (medians are printed)")
    args = parser.parse_args()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in WAYS}
    for _ in range(args.repeat):
        for name, way in WAYS.items():
            samples[name].append(one_round(way, args.calls))
    print(f"hand-off of a sync call, {args.calls} calls x {args.repeat} rounds (median µs/call)")
    for name, figures in samples.items():
        wall = statistics.median(f[0] for f in figures)
        cpu = statistics.median(f[1] for f in figures)
        print(f"  {name:18s} wall {wall:7.1f}   cpu {cpu:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
