"""How many CPU threads the embedded server generates with.

llama.cpp's generation threads wait for each other at every token, so a
thread that lost its core to another program stalls the others: the server
takes the CPUs idle when it starts, read from the kernel's CPU times rather
than the load average (which trails the last minute).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from openprogram.exceptions import ConfigurationError

__all__ = ["THREADS_ENV_VAR", "default_threads"]

THREADS_ENV_VAR = "OPENPROGRAM_LOCAL_THREADS"
"""Set to a whole number to fix the server's thread count."""
_MAX_THREADS = 8
"""More generation threads than this do not speed up a 0.5B model."""
_ROUND_UP = 0.3
"""Added to the busy CPUs before rounding down: a CPU counts as busy from 70 % use."""


def default_threads() -> int:
    """The CPUs idle when the server starts, at least 1 and at most ``_MAX_THREADS``;
    ``$OPENPROGRAM_LOCAL_THREADS`` wins.

    Raises:
        ConfigurationError: ``$OPENPROGRAM_LOCAL_THREADS`` is not a whole number.
    """
    configured = os.environ.get(THREADS_ENV_VAR, "").strip()
    if configured:
        try:
            return max(1, int(configured))
        except ValueError:
            raise ConfigurationError(
                f"{THREADS_ENV_VAR}={configured!r} is not a whole number of threads"
            ) from None
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cpus = min(cpus or 2, _MAX_THREADS)
    return max(1, cpus - int(_busy_cpus(cpus) + _ROUND_UP))


_PROC_STAT = Path("/proc/stat")
_SAMPLE_S = 0.25
"""How long the CPUs are watched before the server starts (it takes seconds to load)."""
_wait = time.sleep


def _busy_cpus(cpus: int) -> float:
    """How many CPUs other programs keep busy now.

    Read over ``_SAMPLE_S`` from the kernel's CPU times (Linux), not from the
    load average, which trails the last minute (a run just before would count
    as busy). Elsewhere the 1-minute load average; none at all: every CPU
    busy, the safe side.
    """
    before = _cpu_times()
    if before is not None:
        _wait(_SAMPLE_S)
        after = _cpu_times()
        if after is not None and after[1] > before[1]:
            idle = (after[0] - before[0]) / (after[1] - before[1])
            return (os.cpu_count() or cpus) * (1.0 - idle)
    try:
        return os.getloadavg()[0]
    except OSError:  # no load average on this platform: assume busy, the safe side
        return float(cpus)


def _cpu_times() -> tuple[int, int] | None:
    """Idle and total time of all CPUs since boot from ``/proc/stat``, or ``None``.

    Waiting for I/O counts as idle (the CPU is free); time the hypervisor
    stole counts as busy (it is not).
    """
    try:
        with _PROC_STAT.open(encoding="ascii") as stat:
            fields = stat.readline().split()
        times = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    except (OSError, ValueError):  # not Linux, or a layout this reader does not know
        return None
    if not fields or fields[0] != "cpu" or len(times) < 5:
        return None
    return times[3] + times[4], sum(times)
