"""The one timing helper every benchmark uses."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Iterable
from types import TracebackType


class Stopwatch:
    """Wall-clock timer for a ``with`` block.

    A full garbage collection runs before the clock starts, so one sample does
    not pay for the garbage of the previous one; collection triggered inside
    the block is part of the framework's cost and stays in.

    Example:
        >>> with Stopwatch() as watch:
        ...     _ = sum(range(10))
        >>> watch.seconds >= 0
        True
    """

    def __init__(self) -> None:
        """Create a stopwatch that has not run yet."""
        self._start = 0.0
        self.seconds = 0.0

    def __enter__(self) -> Stopwatch:
        """Collect garbage, then start the clock."""
        gc.collect()
        self._start = time.perf_counter()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the clock."""
        self.seconds = time.perf_counter() - self._start

    def us_per(self, count: int) -> float:
        """Return the elapsed time in microseconds per item.

        Args:
            count: How many items the timed block processed.
        """
        return self.seconds * 1e6 / count

    @property
    def ms(self) -> float:
        """Elapsed time in milliseconds."""
        return self.seconds * 1e3


def median(values: Iterable[float]) -> float:
    """Return the median of the samples (the figure every table reports).

    Args:
        values: One value per run.
    """
    return statistics.median(values)
