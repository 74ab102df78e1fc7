"""Gate resolution cost and what deferred loading saves (openprogram only: no peer has layers).

Prints, for registries of 10, 1,000 and 10,000 tools: the first ``resolve``
(cold: every layer for every tool) and a cached one (nothing changed), as
medians. Then the bytes a provider request carries for a 1,000-tool registry
with every tool eager versus every tool ``defer=True`` (a one-line catalog in
the system prompt plus ``tool_search``): the point of L6 is that the second
stays flat as the registry grows.

Run alone: ``python bench/bench_gates.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from collections.abc import Callable

from openprogram import Policy, Registry, Runtime, Tool, resolve
from openprogram.testing import ScriptedProvider

SIZES = (10, 1_000, 10_000)


def _registry(size: int, *, defer: bool = False) -> Registry:
    registry = Registry()
    for i in range(size):
        registry.register(
            Tool(
                name=f"tool_{i}",
                description=f"Tool number {i}: look things up in catalog {i % 17}.",
                parameters={
                    "type": "object",
                    "properties": {"query": {"type": "string", "description": "What to find."}},
                    "required": ["query"],
                    "additionalProperties": False,
                },
                execute=lambda args: "ok",
                toolset=("lookup",) if i % 2 else (),
                defer=defer,
            )
        )
    return registry


def _timed_ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def resolution(size: int, repeat: int) -> tuple[float, float]:
    """Median ms of a first (cold) and a cached resolution of a ``size``-tool registry."""
    cold, warm = [], []
    for _ in range(repeat):
        registry, policy = _registry(size), Policy(deny=["tool_3"])
        once = functools.partial(resolve, registry, policy)
        cold.append(_timed_ms(once))
        warm.append(statistics.median(_timed_ms(once) for _ in range(50)))
    return statistics.median(cold), statistics.median(warm)


def request_bytes(size: int, *, defer: bool) -> int:
    """Bytes of tool specs + system prompt in the first request of an exec over the registry."""
    model = ScriptedProvider(["done"])
    Runtime(model, registry=_registry(size, defer=defer)).exec("hello")
    request = model.requests[0]
    return len(json.dumps(list(request.tools))) + len(request.system or "")


def main() -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'tools':>7}  {'first resolve (ms)':>19}  {'cached resolve (µs)':>20}")
    for size in SIZES:
        cold, warm = resolution(size, args.repeat)
        print(f"{size:>7,}  {cold:>19.2f}  {warm * 1000:>20.1f}")
    print(f"\n{'tools':>7}  {'request bytes, eager':>21}  {'request bytes, defer=True':>26}")
    for size in (10, 100, 1_000):
        eager, deferred = request_bytes(size, defer=False), request_bytes(size, defer=True)
        print(f"{size:>7,}  {eager:>21,}  {deferred:>26,}")


if __name__ == "__main__":
    main()
