"""A long run of the tool loop with the fake provider, measured block by block.

Each exec asks for 1 to 9 tool-call turns (sync and async tools, now and then
a failing call or a call off the menu) and then answers, so the loop, the
executor, events and the menu caches all run thousands of times. Shared by
``test_soak.py`` (short, memory only) and ``bench/reliability/soak.py``
(10,000 iterations, memory and time).
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any

from openprogram import Runtime, ToolError, function
from openprogram.messages import AssistantMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, call


@function(register_globally=False)
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@function(register_globally=False)
async def fetch(n: int) -> list[int]:
    """Fetch n numbers."""
    return list(range(n))


@function(register_globally=False)
def flaky(n: int) -> str:
    """Fail on odd numbers."""
    if n % 2:
        raise ToolError(f"odd number {n}: try an even one")
    return "even"


TOOLS = [lookup, fetch, flaky]


def _model(request: ProviderRequest) -> Any:
    turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
    wanted = len(request.messages[0].text) % 9 + 1  # type: ignore[union-attr]
    if turn >= wanted:
        return f"finished after {turn} turns"
    kinds = [
        call("lookup", key=f"k{turn}"),
        call("fetch", n=turn % 5),
        call("flaky", n=turn),
        call("not_offered"),
    ]
    return kinds[turn % 4] if turn % 3 else [kinds[0], kinds[1]]


@dataclass(frozen=True)
class Block:
    """One measured block of loop iterations."""

    iterations: int
    """Loop iterations (model calls) in the block."""
    seconds: float
    """Wall time of the block."""
    traced_bytes: int | None
    """Python memory in use at the end of the block (``tracemalloc``), if traced."""
    traced_blocks: int | None
    """Live memory blocks at the end of the block (``tracemalloc``), if traced: a leak
    grows them with the iterations, a one-time table resize adds a single block."""
    rss_bytes: int
    """Resident set size at the end of the block."""
    gc_objects: int
    """Objects tracked by the garbage collector at the end of the block."""

    @property
    def us_per_iteration(self) -> float:
        return self.seconds / self.iterations * 1e6


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def soak(total: int, block: int, *, trace: bool) -> list[Block]:
    """Run the loop ``total`` iterations; measure every ``block`` iterations."""
    provider = FunctionProvider(_model)
    rt = Runtime(provider)
    blocks: list[Block] = []
    done, prompt = 0, 0
    if trace:
        tracemalloc.start()
    try:
        while done < total:
            started, start_count = time.perf_counter(), done
            while done - start_count < block:
                prompt += 1
                rt.exec("x" * prompt, tools=TOOLS)  # the prompt length picks the turn count
                assert rt.last_run is not None
                done += rt.last_run.iterations
                provider.requests.clear()  # the fake's own log, kept for tests: not ours
            seconds = time.perf_counter() - started
            gc.collect()
            traced = tracemalloc.get_traced_memory()[0] if trace else None
            live = len(tracemalloc.take_snapshot().traces) if trace else None
            blocks.append(
                Block(done - start_count, seconds, traced, live, _rss(), len(gc.get_objects()))
            )
    finally:
        if trace:
            tracemalloc.stop()
    return blocks
