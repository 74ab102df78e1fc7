"""µs per ``FunctionSchema.validate`` of a model's arguments (openprogram alone, no peers).

Two signatures: ``add(a: int, b: int)`` and a mixed one (a string, an int,
a ``Literal``, a date written as a string, a list, a nested pydantic model, a
float). Each figure is the best of 5 timed runs of 20,000 calls; the script
repeats that ``--repeat`` times in fresh processes and prints the medians.

    python bench/validate_args.py [--repeat 7]

Compare two versions by running it from each work tree in turn, alternating,
on the same machine: the absolute figures drift with the load of a shared
machine.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parent.parent
CALLS = 20_000


def _measure() -> dict[str, float]:
    # Imported in the worker only.
    from pydantic import BaseModel

    from openprogram.schema import derive_schema

    class Place(BaseModel):
        name: str
        rank: int | None = None

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def mixed(
        *,
        city: str,
        days: int,
        units: Literal["c", "f"],
        when: datetime.date,
        tags: list[str],
        place: Place,
        ratio: float = 1.0,
    ) -> str:
        """Take a mix of types."""
        return city

    cases = {
        "add_us": (derive_schema(add), {"a": 1, "b": 2}),
        "mixed_us": (
            derive_schema(mixed),
            {
                "city": "Paris",
                "days": 3,
                "units": "c",
                "when": "2026-12-01",
                "tags": ["a", "b", "c"],
                "place": {"name": "x", "rank": 2},
                "ratio": 2,
            },
        ),
    }
    out = {}
    for name, (schema, args) in cases.items():
        schema.validate(args)
        runs = []
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(CALLS):
                schema.validate(args)
            runs.append((time.perf_counter() - started) / CALLS * 1e6)
        out[name] = min(runs)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_measure()))
        return 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    samples = [
        json.loads(
            subprocess.run(
                [sys.executable, __file__, "--worker"],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        for _ in range(args.repeat)
    ]
    for key in samples[0]:
        values = [s[key] for s in samples]
        print(f"{key}: median {statistics.median(values):.2f} (min {min(values):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
