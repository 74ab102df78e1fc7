"""Batch runs: an agentic function over many inputs, locally or on a Ray cluster.

``batch.map(fn, inputs)`` calls ``fn(item)`` for every input and returns a
``BatchResult`` with one ``ItemResult`` per input, in input order. One failing
item never loses the others: its exception becomes its ``ItemResult.error``.

- ``backend="local"`` (default): at most ``concurrency`` items at once in this
  process (async functions on the event loop, sync ones on worker threads).
- ``backend="ray"`` (``pip install 'openprogram-ai[ray]'``): one Ray task per item,
  at most ``concurrency`` in flight, on the cluster ``ray.init`` connects to.

``provider=`` (with ``runtime_options=``) gives the items a runtime of their own;
``rate_limit=`` caps model calls per second across all items (one shared
limiter, a Ray actor on the ray backend); ``output=`` appends every finished
item to a JSONL file, and a re-run with the same file skips the items that
succeeded; ``on_progress=`` receives a ``Progress`` after each item. See
``docs/batch.md``.

Example:
    >>> from openprogram import batch
    >>> def inverse(x):
    ...     return 1 / x
    >>> result = batch.map(inverse, [1, 2, 0])
    >>> [item.output for item in result]
    [1.0, 0.5, None]
    >>> str(result.failed[0].error)
    'ZeroDivisionError: division by zero'
"""

from __future__ import annotations

from openprogram.batch._limit import Limiter, RateLimitedProvider, RateLimiter
from openprogram.batch._map import amap, map
from openprogram.batch._options import BatchKwargs, BatchOptions
from openprogram.batch._types import BatchError, BatchResult, ItemError, ItemResult, Progress

__all__ = [
    "BatchError",
    "BatchKwargs",
    "BatchOptions",
    "BatchResult",
    "ItemError",
    "ItemResult",
    "Limiter",
    "Progress",
    "RateLimitedProvider",
    "RateLimiter",
    "amap",
    "map",
]
