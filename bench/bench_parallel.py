"""8 parallel calls of a 50 ms blocking sync tool in one model turn.

Wall time of the whole run: the batch turn plus the final text turn (the
latter costs well under a millisecond everywhere, see ``bench_loop``).
Ideal ≈ 50 ms; sequential would be 400 ms. openprogram's target: ≤ 65 ms.

Run alone: ``python bench/bench_parallel.py [--repeat N]``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import drivers
from _fixtures import FINAL_TEXT, parallel_script, sleep_ms
from _harness import Bench, Measure, Sample, main
from _timing import Stopwatch

WIDTH = 8
SLEEP_MS = 50


async def _timed_run(agent: drivers.Agent) -> float:
    with Stopwatch() as watch:
        text = await agent.run()
    if text != FINAL_TEXT:
        raise AssertionError(f"run ended with {text!r}")
    return watch.ms


def sample(driver: drivers.Driver) -> Sample:
    """Time one run whose first turn calls ``sleep_ms(50)`` 8 times at once."""
    script = parallel_script(sleep_ms.__name__, WIDTH, {"ms": SLEEP_MS})
    agent = driver.make_agent([sleep_ms], script)
    return {"turn_ms": asyncio.run(_timed_run(agent))}


BENCH = Bench(
    name="parallel",
    script=Path(__file__),
    measures=(Measure("turn_ms", f"{WIDTH} × {SLEEP_MS} ms sync tool in one turn", "ms"),),
    sample=sample,
)

if __name__ == "__main__":
    sys.exit(main(BENCH))
