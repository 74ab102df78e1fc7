"""Run every benchmark, openprogram and its peers side by side, in one go.

Usage::

    bash bench/setup_peers.sh                 # once: bench/.venv with the peers
    python bench/run.py [--only NAME ...] [--repeat N]

Prints one table (medians, and each peer's ratio to openprogram) and writes
everything measured to ``bench/results/latest.json``. Each benchmark module
also runs alone: ``python bench/bench_loop.py``.
"""

from __future__ import annotations

import argparse
import json
import sys

import bench_import
import bench_loop
import bench_many_tools
import bench_parallel
import bench_tools
from _common import RESULTS_DIR, prepare_environment, use_bench_venv
from _harness import Bench, collect
from _report import format_report, to_json

BENCHES: dict[str, Bench] = {
    bench.name: bench
    for bench in (
        bench_import.BENCH,
        bench_tools.BENCH,
        bench_loop.BENCH,
        bench_parallel.BENCH,
        bench_many_tools.BENCH,
    )
}


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="openprogram vs peers, all benchmarks")
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(BENCHES),
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(BENCHES)}",
    )
    parser.add_argument("--repeat", type=int, default=5, help="samples per measure (median)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the selected benchmarks, print the table, write the JSON dump.

    Args:
        argv: Arguments (default ``sys.argv[1:]``).
    """
    use_bench_venv()
    prepare_environment()
    args = _parse(argv)
    names = args.only or list(BENCHES)
    results = [collect(BENCHES[name], args.repeat) for name in names]
    print(format_report(results))
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / "latest.json"
    path.write_text(json.dumps(to_json(results, args.repeat), indent=2, ensure_ascii=False) + "\n")
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
