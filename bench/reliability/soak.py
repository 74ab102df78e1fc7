"""Soak: 10,000 tool-loop iterations with the fake provider; is memory and time per iteration flat?

Run alone: ``python bench/reliability/soak.py [--iterations N] [--block N]``.

Two passes of the same workload (``tests/stress/_soak.py``): one untraced, for
wall time per iteration and RSS; one under ``tracemalloc``, for Python memory.
Prints one row per block and a summary: the growth from the first warm block
to the last, per iteration, and the ratio of the last block's time per
iteration to the first warm block's.
"""

from __future__ import annotations

import argparse
import platform
import statistics

import _setup

_setup.prepare()

from stress._soak import Block, soak  # noqa: E402 - needs the paths above


def _slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys over xs."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def _report(timed: list[Block], traced: list[Block]) -> None:
    print(
        f"{'block':>5} {'iters':>7} {'µs/iter':>8} {'RSS MiB':>8} {'traced KiB':>11} {'gc objs':>8}"
    )
    done = 0
    for i, (t, m) in enumerate(zip(timed, traced, strict=True)):
        done += t.iterations
        kib = (m.traced_bytes or 0) / 1024
        print(
            f"{i:>5} {done:>7} {t.us_per_iteration:>8.0f} {t.rss_bytes / 2**20:>8.1f} "
            f"{kib:>11.1f} {m.gc_objects:>8}"
        )
    warm_t, warm_m = timed[1:], traced[1:]  # block 0 pays for imports, schemas, caches
    xs = [float(sum(b.iterations for b in traced[: i + 1])) for i in range(1, len(traced))]
    traced_slope = _slope(xs, [float(b.traced_bytes or 0) for b in warm_m])
    rss_slope = _slope(xs, [float(b.rss_bytes) for b in warm_t])
    time_ratio = warm_t[-1].us_per_iteration / warm_t[0].us_per_iteration
    print()
    print(
        f"iterations: {sum(b.iterations for b in timed)} timed, {sum(b.iterations for b in traced)} traced"
    )
    print(
        f"Python memory growth (tracemalloc, warm blocks): {traced_slope:+.2f} bytes/iteration "
        f"({(warm_m[-1].traced_bytes or 0) - (warm_m[0].traced_bytes or 0):+d} bytes in all)"
    )
    print(f"RSS growth (warm blocks): {rss_slope:+.2f} bytes/iteration")
    print(
        f"gc-tracked objects, first warm vs last block: {warm_m[0].gc_objects} -> {warm_m[-1].gc_objects}"
    )
    per_iter = [b.us_per_iteration for b in warm_t]
    print(
        f"time per iteration (warm): median {statistics.median(per_iter):.0f} µs, "
        f"min {min(per_iter):.0f}, max {max(per_iter):.0f}; last/first {time_ratio:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--block", type=int, default=1_000)
    args = parser.parse_args()
    print(
        f"python {platform.python_version()} on {platform.machine()}, "
        f"{args.iterations} iterations in blocks of {args.block}\n"
    )
    timed = soak(args.iterations, args.block, trace=False)
    traced = soak(args.iterations, args.block, trace=True)
    _report(timed, traced)


if __name__ == "__main__":
    main()
