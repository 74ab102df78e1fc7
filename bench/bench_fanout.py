"""Fan-out of a run tree: a model that calls 8 sync agentic functions at every level.

Run alone: ``python bench/bench_fanout.py [--depth 5] [--width 8] [--repeat 3]``.

The fake model answers the first request of every exec with ``--width``
parallel calls of ``fan``, a sync ``@agentic_function`` whose body runs
another exec, and every later request with text. Without a budget the tree
grows until ``max_depth`` refuses the agentic calls: about ``width**(depth-1)``
bodies. Prints, per run and as medians: bodies run, model calls, peak threads
alive in the process, peak sync bodies running at once, and wall seconds.
The run-tree budget (``openprogram.Budget``, its defaults unless
``--budget-off``) is what bounds them; ``--budget-off`` lifts every limit,
which is what the library did before budgets existed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import openprogram
from openprogram import Runtime, agentic_function
from openprogram.messages import UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, call


class Counters:
    """Bodies, running bodies and their peak; sampled threads and their peak."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bodies = 0
        self.running = 0
        self.peak_running = 0
        self.peak_threads = threading.active_count()
        self.model_calls = 0

    def enter(self) -> None:
        with self.lock:
            self.bodies += 1
            self.running += 1
            self.peak_running = max(self.peak_running, self.running)

    def leave(self) -> None:
        with self.lock:
            self.running -= 1


def _sampler(counters: Counters, stop: threading.Event) -> None:
    while not stop.wait(0.002):
        counters.peak_threads = max(counters.peak_threads, threading.active_count())


def one_run(depth: int, width: int, budget_off: bool) -> dict[str, float]:
    """Run the tree once and return its figures."""
    counters = Counters()

    def answer(request: ProviderRequest) -> Any:
        with counters.lock:
            counters.model_calls += 1
        first = len(request.messages) == 1 and isinstance(request.messages[0], UserMessage)
        if first and request.tools and request.tool_choice != "none":
            return [call("fan", n=i) for i in range(width)]
        return "done"

    @agentic_function(register_globally=False)
    def fan(n: int, runtime: Runtime) -> str:
        """Fan out once more.

        Args:
            n: Which branch.
        """
        counters.enter()
        try:
            return str(runtime.exec(f"branch {n}"))
        finally:
            counters.leave()

    options: dict[str, Any] = {}
    if budget_off and hasattr(openprogram, "Budget"):
        huge = 10**9
        options["budget"] = openprogram.Budget(
            model_calls=huge, tool_calls=huge, agentic_calls=huge, tokens=huge, threads=huge
        )
    rt = Runtime(FunctionProvider(answer), max_depth=depth, **options)
    stop = threading.Event()
    sampler = threading.Thread(target=_sampler, args=(counters, stop), daemon=True)
    sampler.start()
    started = time.perf_counter()
    try:
        rt.exec("root", tools=[fan])
    except Exception as exc:  # noqa: BLE001 - a budget may end the run: report, keep measuring
        print(f"  run ended with {type(exc).__name__}: {str(exc)[:100]}")
    seconds = time.perf_counter() - started
    stop.set()
    sampler.join()
    return {
        "bodies": counters.bodies,
        "model_calls": counters.model_calls,
        "peak_threads": counters.peak_threads,
        "peak_running_bodies": counters.peak_running,
        "seconds": round(seconds, 2),
    }


def main() -> int:
    """Parse the options, run, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=5, help="Runtime(max_depth=...)")
    parser.add_argument("--width", type=int, default=8, help="parallel calls per level")
    parser.add_argument("--repeat", type=int, default=3, help="runs (medians are printed)")
    parser.add_argument("--budget-off", action="store_true", help="lift every budget limit")
    args = parser.parse_args()
    has_budget = hasattr(openprogram, "Budget")
    print(
        f"fan-out: width {args.width}, max_depth {args.depth}, "
        f"budget {'off' if args.budget_off or not has_budget else 'defaults'}"
    )
    runs = []
    for i in range(args.repeat):
        figures = one_run(args.depth, args.width, args.budget_off)
        print(f"  run {i + 1}: {figures}")
        runs.append(figures)
        time.sleep(2.5)  # let idle tool threads exit (openprogram._threads.IDLE_SECONDS)
    medians = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    print(f"median: {medians}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
