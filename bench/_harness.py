"""Run one benchmark for every framework, each in its own worker process.

Every sample is taken in a fresh worker interpreter, so one framework's
imports, caches and garbage never weigh on another's figures. Samples are
taken in rounds, one per framework per round, so that load from elsewhere on
a shared machine spreads over all frameworks instead of skewing one ratio.
In a worker, one untimed warm-up run precedes the sample, unless the
benchmark measures cold behaviour. The worker prints one ``RESULT_PREFIX``
line of JSON; its other output is shown only when it fails.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import drivers
from _common import prepare_environment, use_bench_venv
from _report import format_report
from _timing import median

RESULT_PREFIX = "BENCH-RESULT "
WORKER_TIMEOUT_S = 900

Sample = dict[str, float | None]
"""One run's values, by measure key; ``None`` when not applicable."""

Reply = dict[str, Any]
"""A worker's answer: ``{"samples": {key: [values]}}`` or ``{"error": text}``."""


@dataclass(frozen=True)
class Measure:
    """One row of the results table."""

    key: str
    """Key in a :data:`Sample`."""
    label: str
    """Row label."""
    unit: str
    """Unit shown after the label (``µs``, ``ms``, ``B``, ``×``)."""


@dataclass(frozen=True)
class Bench:
    """A benchmark: its rows and how to take one sample for one framework."""

    name: str
    """Short name, as given to ``run.py --only``."""
    script: Path
    """The module's file, re-run as ``script --worker FRAMEWORK``."""
    measures: tuple[Measure, ...]
    """Rows, in table order."""
    sample: Callable[[drivers.Driver], Sample]
    """Takes one sample (one run) with a framework's driver."""
    frameworks: tuple[str, ...] = drivers.NAMES
    """Frameworks this benchmark applies to."""
    warm_up: bool = True
    """False for cold measures: the sample is the worker's first run."""


@dataclass
class BenchResult:
    """Samples of one benchmark, per framework, plus why any framework failed."""

    bench: Bench
    samples: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def medians(self) -> dict[str, dict[str, float]]:
        """Median per framework and measure key."""
        return {
            fw: {key: median(values) for key, values in by_key.items() if values}
            for fw, by_key in self.samples.items()
        }

    def add(self, framework: str, samples: dict[str, list[float]]) -> None:
        """Merge a worker's samples into this result."""
        by_key = self.samples.setdefault(framework, {})
        for key, values in samples.items():
            by_key.setdefault(key, []).extend(values)


def collect(bench: Bench, repeat: int) -> BenchResult:
    """Run ``bench`` for each framework; ``repeat`` samples each.

    Args:
        bench: The benchmark.
        repeat: Samples per framework (their median is reported).
    """
    result = BenchResult(bench)
    for round_ in range(1, repeat + 1):
        print(f"  {bench.name}: round {round_}/{repeat}", file=sys.stderr, flush=True)
        for framework in bench.frameworks:
            if framework in result.errors:
                continue
            reply = _spawn_worker(bench, framework)
            if "error" in reply:
                result.errors[framework] = reply["error"]
            else:
                result.add(framework, reply["samples"])
    return result


def _spawn_worker(bench: Bench, framework: str) -> Reply:
    command = [sys.executable, str(bench.script), "--worker", framework]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=WORKER_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"worker timed out after {WORKER_TIMEOUT_S}s"}
    reply = _parse_reply(done)
    if "error" in reply and "not importable" not in reply["error"]:
        sys.stderr.write(done.stderr)  # the traceback, for whoever debugs it
    return reply


def _parse_reply(done: subprocess.CompletedProcess[str]) -> Reply:
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            reply: Reply = json.loads(line.removeprefix(RESULT_PREFIX))
            return reply
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"worker exited {done.returncode}: {last}"}


def _run_worker(bench: Bench, framework: str) -> Reply:
    try:
        driver = drivers.load(framework)
    except ImportError as exc:
        return {"error": f"{framework} not importable: {exc}"}
    try:
        if bench.warm_up:
            bench.sample(driver)  # lazy imports, caches, first-run setup
        sample = bench.sample(driver)
    except Exception as exc:  # noqa: BLE001 - a framework's failure is reported, not fatal
        # Any failure inside a framework becomes that framework's reported
        # error (traceback on stderr) instead of ending the whole run.
        traceback.print_exc()
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"samples": {key: [value] for key, value in sample.items() if value is not None}}


def main(bench: Bench, argv: list[str] | None = None) -> int:
    """Command line of a benchmark module: a table for all, or one worker.

    Args:
        bench: The module's benchmark.
        argv: Arguments (default ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(description=f"openprogram vs peers: {bench.name}")
    parser.add_argument("--repeat", type=int, default=5, help="samples per framework (median)")
    parser.add_argument("--worker", choices=bench.frameworks, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.worker:
        use_bench_venv()
    prepare_environment()
    if args.worker:
        reply = _run_worker(bench, args.worker)
        print(RESULT_PREFIX + json.dumps(reply), flush=True)
        return 0
    print(format_report([collect(bench, args.repeat)]))
    return 0
