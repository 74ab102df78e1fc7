"""The sync bridge: run the one async implementation from plain code.

From a thread with no running event loop (plain code, a worker thread running
a sync tool body), ``asyncio.run`` drives the coroutine on a fresh loop. From
inside a running loop that is impossible, so the coroutine runs on a worker
thread with the caller's context copied (current runtime, tool scope), and the
caller blocks until it is done.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from openprogram import _threads

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` to completion and return its result.

    Args:
        make: Builds the coroutine; called on the thread that runs it, so no
            coroutine is created (and left un-awaited) on the wrong thread.
    """
    if not _loop_running():  # the common, cheap path
        return asyncio.run(make())
    ctx = contextvars.copy_context()
    box: list[T] = []  # the worker keeps its future a while: the output is not its result
    _threads.submit(lambda: box.append(ctx.run(asyncio.run, make()))).result()
    return box.pop()


def _loop_running() -> bool:
    # Asked here, not around asyncio.run: an error of the exec must not be
    # chained to a "no running event loop" RuntimeError in every traceback.
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
