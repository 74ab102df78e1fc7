"""Cost of turning functions into tools, and of one validated call.

- Decoration: N=1000 distinct functions (3 typed params, Google docstring),
  each decorated and its model-facing JSON Schema obtained the way each
  framework does (see each driver's ``tool_schema``). Cold = the first 1000 in
  a fresh process (framework already imported); warm = another 1000 after.
- Validated call: each framework's validate-and-run path for ``add(a, b)``
  (see each driver's ``validated_call``), per call, minus the plain Python
  call of the body.

Cold needs the first run of a process, so workers skip the warm-up run.
Run alone: ``python bench/bench_tools.py [--repeat N]``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import drivers
from _fixtures import ADD_ARGS, add, generated_tools
from _harness import Bench, Measure, Sample, main
from _timing import Stopwatch

TOOLS = 1000
CALLS = 2000
WARMUP_CALLS = 200


def _decorate_us(driver: drivers.Driver, functions: list[Callable[..., Any]]) -> float:
    with Stopwatch() as watch:
        schemas = [driver.tool_schema(fn) for fn in functions]
    if set(schemas[-1]["properties"]) != {"city", "days", "metric"}:
        raise AssertionError(f"unexpected schema: {schemas[-1]}")
    return watch.us_per(len(functions))


def _body_us() -> float:
    with Stopwatch() as watch:
        for _ in range(CALLS):
            add(**ADD_ARGS)
    return watch.us_per(CALLS)


async def _call_us(driver: drivers.Driver) -> float:
    call = driver.validated_call(add)
    result = await call(ADD_ARGS)
    if "3" not in str(result):
        raise AssertionError(f"add(1, 2) returned {result!r}")
    for _ in range(WARMUP_CALLS):
        await call(ADD_ARGS)
    with Stopwatch() as watch:
        for _ in range(CALLS):
            await call(ADD_ARGS)
    return watch.us_per(CALLS) - _body_us()


def sample(driver: drivers.Driver) -> Sample:
    """Decorate a cold and a warm batch, then time validated calls."""
    cold, warm = generated_tools(TOOLS, "cold"), generated_tools(TOOLS, "warm")
    return {
        "cold_us": _decorate_us(driver, cold),
        "warm_us": _decorate_us(driver, warm),
        "call_us": asyncio.run(_call_us(driver)),
    }


BENCH = Bench(
    name="tools",
    script=Path(__file__),
    measures=(
        Measure("cold_us", f"decorate + schema, first {TOOLS} (cold)", "µs/tool"),
        Measure("warm_us", f"decorate + schema, next {TOOLS} (warm)", "µs/tool"),
        Measure("call_us", "validated call of add(a, b), minus body", "µs/call"),
    ),
    sample=sample,
    frameworks=tuple(name for name in drivers.NAMES if name != "minimal"),
    warm_up=False,
)

if __name__ == "__main__":
    sys.exit(main(BENCH))
