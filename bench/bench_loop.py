"""Loop overhead per iteration, with an instant scripted fake model.

K=200 model turns per sample: 4 runs of 49 one-call turns of ``add(a, b)``
plus a final text turn. openprogram caps one exec at 50 model calls, so every
framework runs the same 50-turn runs (same history lengths, fair).
µs per iteration = total wall time / K. Once with a sync tool (run in a worker
thread by every framework), once with an async tool.

Run alone: ``python bench/bench_loop.py [--repeat N]``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import drivers
from _fixtures import FINAL_TEXT, add, add_async, tool_loop_script
from _harness import Bench, Measure, Sample, main
from _timing import Stopwatch

RUNS = 4
TURNS_PER_RUN = 50
"""49 tool-calling turns + the final text: openprogram's per-exec maximum."""


async def _timed_runs(agent: drivers.Agent) -> float:
    with Stopwatch() as watch:
        for _ in range(RUNS):
            if (text := await agent.run()) != FINAL_TEXT:
                raise AssertionError(f"run ended with {text!r}")
    return watch.us_per(RUNS * TURNS_PER_RUN)


def _loop_us(driver: drivers.Driver, tool: Callable[..., Any]) -> float:
    agent = driver.make_agent([tool], tool_loop_script(tool.__name__, TURNS_PER_RUN - 1))
    return asyncio.run(_timed_runs(agent))


def sample(driver: drivers.Driver) -> Sample:
    """Time K turns with the sync tool, then with the async tool."""
    return {"sync_us": _loop_us(driver, add), "async_us": _loop_us(driver, add_async)}


BENCH = Bench(
    name="loop",
    script=Path(__file__),
    measures=(
        Measure("sync_us", "per iteration, sync tool", "µs"),
        Measure("async_us", "per iteration, async tool", "µs"),
    ),
    sample=sample,
)

if __name__ == "__main__":
    sys.exit(main(BENCH))
