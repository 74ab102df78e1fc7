"""The local backend: at most ``concurrency`` items at once on this process's event loop.

Async functions run on the loop; sync ones on worker threads (their ``exec``
runs a loop of its own there). ``concurrency`` workers take items from one
shared queue, so memory stays flat however many inputs there are, and every
finished item is recorded (output file, progress) on the loop thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from openprogram.batch._item import run_item
from openprogram.batch._options import BatchOptions, make_runtime
from openprogram.batch._record import Pending, Recorder, make_plan
from openprogram.batch._types import BatchResult

__all__ = ["run_local"]


async def run_local(
    fn: Callable[..., Any], inputs: Iterable[Any], options: BatchOptions
) -> BatchResult:
    """Run ``fn`` over ``inputs`` in this process and return every item's result."""
    runtime = make_runtime(options.provider, options.runtime_options, options.limiter)
    plan = make_plan(
        list(inputs), key=options.key, output=options.output_path, unpack=options.unpack
    )
    recorder = Recorder(plan, output=options.output_path, on_progress=options.on_progress)
    todo = iter(plan.todo)
    try:
        async with asyncio.TaskGroup() as group:  # one failure (e.g. disk full) stops them all
            for _ in range(min(options.concurrency, len(plan.todo))):
                group.create_task(_worker(fn, todo, recorder, runtime, options.unpack))
    finally:
        result = recorder.close()
    return result


async def _worker(
    fn: Callable[..., Any],
    todo: Iterator[Pending],
    recorder: Recorder,
    runtime: Any,
    unpack: bool,
) -> None:
    # The workers share one iterator; they all run on the loop thread, so each item is
    # taken exactly once.
    for pending in todo:
        outcome = await run_item(fn, pending.item, unpack=unpack, runtime=runtime)
        recorder.record(pending, outcome.output, outcome.error, outcome.duration_s)
