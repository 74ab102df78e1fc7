"""Import time of each framework: a fresh ``python -c "import X"`` minus ``python -c pass``.

Wall time of a child interpreter, net of a bare one started just before, so
interpreter start-up and site initialisation cancel out. The untimed warm-up
run writes any missing ``.pyc`` files first. Statements: each driver's
``IMPORT_TOP`` (the top-level package) and ``IMPORT_LOOP`` (what the loop
benchmark needs, e.g. the fake model's module too).

Run alone: ``python bench/bench_import.py [--repeat N]``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import drivers
from _harness import Bench, Measure, Sample, main
from _timing import Stopwatch


def _wall_ms(statement: str) -> float:
    with Stopwatch() as watch:
        subprocess.run([sys.executable, "-c", statement], check=True)
    return watch.ms


def _net_ms(statement: str) -> float:
    bare = _wall_ms("pass")
    return _wall_ms(statement) - bare


def sample(driver: drivers.Driver) -> Sample:
    """Time both import statements of one framework once."""
    return {"top_ms": _net_ms(driver.IMPORT_TOP), "loop_ms": _net_ms(driver.IMPORT_LOOP)}


BENCH = Bench(
    name="import",
    script=Path(__file__),
    measures=(
        Measure("top_ms", "import top-level package", "ms"),
        Measure("loop_ms", "import what the loop uses", "ms"),
    ),
    sample=sample,
)

if __name__ == "__main__":
    sys.exit(main(BENCH))
