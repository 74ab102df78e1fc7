"""Does a big tool menu slow each turn down, and how many bytes does it send?

Each sample runs 49 one-call turns of ``add`` plus a final text (the same
agent runs once untimed first), once with
10 tools offered and once with 1,000 (``add`` + generated tools with typed
params and docstrings), and reports µs per turn, the growth 1,000 vs 10, and
the tool menu's JSON size in one provider-neutral shape
(``[{"name", "description", "parameters"}]``) taken from what each fake model
received. openprogram also reports its own ``prompt_size_bytes`` event.

Run alone: ``python bench/bench_many_tools.py [--repeat N]``.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import drivers
from _fixtures import FINAL_TEXT, add, generated_tools, tool_loop_script
from _harness import Bench, Measure, Sample, main
from _timing import Stopwatch

SMALL, LARGE = 10, 1000
TURNS = 50
"""49 tool-calling turns + the final text."""


@functools.cache
def _menu(size: int) -> tuple[Callable[..., Any], ...]:
    return (add, *generated_tools(size - 1, f"menu{size}"))


async def _timed_run(agent: drivers.Agent) -> float:
    with Stopwatch() as watch:
        text = await agent.run()
    if text != FINAL_TEXT:
        raise AssertionError(f"run ended with {text!r}")
    return watch.us_per(TURNS)


def _measure(driver: drivers.Driver, size: int) -> Sample:
    # The same agent runs twice and only the second run is timed: one-time costs
    # (deriving 1,000 schemas once, imports) are not what every turn pays.
    agent = driver.make_agent(_menu(size), tool_loop_script(add.__name__, TURNS - 1))
    asyncio.run(_timed_run(agent))
    return {
        f"turn_us_{size}": asyncio.run(_timed_run(agent)),
        f"menu_bytes_{size}": agent.menu_bytes(),
        f"prompt_bytes_{size}": agent.reported_prompt_bytes(),
    }


def sample(driver: drivers.Driver) -> Sample:
    """Time a run with the small menu, then with the large one."""
    values = _measure(driver, SMALL) | _measure(driver, LARGE)
    small, large = values[f"turn_us_{SMALL}"], values[f"turn_us_{LARGE}"]
    values["growth"] = large / small if small and large else None
    return values


BENCH = Bench(
    name="many_tools",
    script=Path(__file__),
    measures=(
        Measure(f"turn_us_{SMALL}", f"per turn, {SMALL} tools offered", "µs"),
        Measure(f"turn_us_{LARGE}", f"per turn, {LARGE:,} tools offered", "µs"),
        Measure("growth", f"per-turn growth, {LARGE:,} vs {SMALL}", "×"),
        Measure(f"menu_bytes_{SMALL}", f"tool menu JSON, {SMALL} tools", "B"),
        Measure(f"menu_bytes_{LARGE}", f"tool menu JSON, {LARGE:,} tools", "B"),
        Measure(f"prompt_bytes_{LARGE}", f"reported prompt_size_bytes, {LARGE:,} tools", "B"),
    ),
    sample=sample,
)

if __name__ == "__main__":
    sys.exit(main(BENCH))
