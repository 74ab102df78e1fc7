"""Soak: 10,000 tool-loop iterations with the fake provider; do memory and time stay flat?

Run alone: ``python bench/reliability/soak.py [--iterations N] [--block N]``.

Two passes of the same workload (``tests/stress/_soak.py``: execs of 1 to 9
tool turns with sync, async, failing and off-menu calls): one untraced, for
wall time per iteration and RSS; one under ``tracemalloc``, for Python memory
(bytes and live blocks) and gc-tracked objects. Prints one row per block and a
summary over the warm blocks (block 0 pays for imports, schemas and caches):
least-squares growth per iteration, and the time per iteration of the last
warm block against the first.
"""

from __future__ import annotations

import argparse
import platform
import statistics

import _setup

_setup.prepare()

from stress._soak import Block, soak  # noqa: E402 - needs the paths above


def _slope(ys: list[float], blocks: list[Block]) -> float:
    """Least-squares growth of ys per loop iteration."""
    xs, done = [], 0
    for block in blocks:
        done += block.iterations
        xs.append(float(done))
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def _table(timed: list[Block], traced: list[Block]) -> None:
    print("block  iterations  µs/iter  RSS MiB  traced KiB  live blocks  gc objects")
    done = 0
    for i, (t, m) in enumerate(zip(timed, traced, strict=True)):
        done += t.iterations
        print(
            f"{i:>5}  {done:>10}  {t.us_per_iteration:>7.0f}  {t.rss_bytes / 2**20:>7.1f}  "
            f"{(m.traced_bytes or 0) / 1024:>10.1f}  {m.traced_blocks or 0:>11}  {m.gc_objects:>10}"
        )


def _summary(timed: list[Block], traced: list[Block]) -> None:
    warm_t, warm_m = timed[1:], traced[1:]
    per_iter = [b.us_per_iteration for b in warm_t]
    print()
    print(f"iterations: {sum(b.iterations for b in timed)} per pass")
    print(
        "growth per iteration over the warm blocks: "
        f"Python bytes {_slope([float(b.traced_bytes or 0) for b in warm_m], warm_m):+.2f}, "
        f"live blocks {_slope([float(b.traced_blocks or 0) for b in warm_m], warm_m):+.4f}, "
        f"gc objects {_slope([float(b.gc_objects) for b in warm_m], warm_m):+.4f}, "
        f"RSS bytes {_slope([float(b.rss_bytes) for b in warm_t], warm_t):+.2f}"
    )
    print(
        f"time per iteration (warm): median {statistics.median(per_iter):.0f} µs, "
        f"min {min(per_iter):.0f}, max {max(per_iter):.0f}; "
        f"last/first warm block {per_iter[-1] / per_iter[0]:.2f}"
    )
    print(
        "note: a single step of about 1 MB in traced bytes (one live block) is CPython "
        "resizing an internal table, not a leak: live blocks and gc objects stay flat"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--block", type=int, default=1_000)
    args = parser.parse_args()
    print(
        f"python {platform.python_version()} on {platform.machine()}: "
        f"{args.iterations} iterations in blocks of {args.block}\n"
    )
    timed = soak(args.iterations, args.block, trace=False)
    traced = soak(args.iterations, args.block, trace=True)
    _table(timed, traced)
    _summary(timed, traced)


if __name__ == "__main__":
    main()
