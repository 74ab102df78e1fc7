"""``batch.map`` and ``batch.amap``: check the options, then run on the chosen backend.

The local backend runs on an event loop (``_local``): from plain code a fresh
one, from inside a running loop one on a worker thread. The Ray backend
(``_ray``) drives its tasks from a blocking loop of its own.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Unpack

from openprogram import _threads
from openprogram.batch._local import run_local
from openprogram.batch._options import BatchKwargs, BatchOptions
from openprogram.batch._ray import run_ray
from openprogram.batch._types import BatchResult
from openprogram.exceptions import UserError

__all__ = ["amap", "map"]


def map(  # shadows the builtin inside this module on purpose: batch.map generalises it
    fn: Callable[..., Any], inputs: Iterable[Any], **options: Unpack[BatchKwargs]
) -> BatchResult:
    """Run ``fn`` over every input and return each input's result.

    Works from plain code and from inside a running event loop (the batch then
    runs on a worker thread and this call blocks; prefer ``await amap(...)``).

    Args:
        fn: The function: an ``@agentic_function`` or any callable, sync or async.
            With ``backend="ray"`` it must be importable on the workers (a
            module-level function of an installed or shipped module).
        inputs: The items; ``fn(item)`` is called for each (``fn(**item)`` /
            ``fn(*item)`` with ``unpack=True``).
        **options: ``backend``, ``concurrency``, ``rate_limit``, ``provider``,
            ``runtime_options``, ``output``, ``key``, ``unpack``, ``on_progress``,
            ``ray_address``, ``ray_options`` (see ``BatchOptions`` for each).

    Returns:
        One ``ItemResult`` per input, in input order (``.outputs`` raises
        ``BatchError`` if any item failed).

    Raises:
        UserError: Invalid or contradictory options, inputs that cannot be
            unpacked or keyed, a broken output file.
        ConfigurationError: ``backend="ray"`` without Ray installed.
    """
    parsed = _parse(fn, inputs, options)
    if parsed.backend == "ray":
        return run_ray(fn, inputs, parsed)  # a blocking driver loop: no event loop needed
    if not _loop_running():
        return asyncio.run(run_local(fn, inputs, parsed))
    # Inside a running loop: run the batch on a worker thread (context copied) and wait.
    context = contextvars.copy_context()
    future = _threads.submit(lambda: context.run(asyncio.run, run_local(fn, inputs, parsed)))
    return future.result()


async def amap(
    fn: Callable[..., Any], inputs: Iterable[Any], **options: Unpack[BatchKwargs]
) -> BatchResult:
    """``map`` for async code: same options, same result, same errors."""
    parsed = _parse(fn, inputs, options)
    if parsed.backend == "ray":
        # The Ray driver loop blocks on ray.wait: keep it off the event loop.
        return await _threads.run_in_thread(run_ray, fn, inputs, parsed)
    return await run_local(fn, inputs, parsed)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _parse(fn: Any, inputs: Any, options: Mapping[str, Any]) -> BatchOptions:
    if not callable(fn):
        raise TypeError(f"batch.map(fn={fn!r:.60}): fn must be callable")
    if isinstance(inputs, str | bytes | Mapping):
        raise UserError(
            f"batch.map(inputs=<{type(inputs).__name__}>): inputs must be an iterable of items, "
            "not a string or a mapping; wrap a single input in a list, or pass "
            "list(mapping.values()) / list(mapping.items())"
        )
    return BatchOptions.from_kwargs(options)
