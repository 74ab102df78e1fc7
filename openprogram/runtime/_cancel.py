"""Cancellation that crosses threads: an exec stops when the tool call that started it is cancelled.

An exec nested in a tool body runs on the body's thread. When the body is
async, it shares the caller's event loop and task, so cancelling the outer
exec cancels it too. A sync body runs on a worker thread with its own event
loop, which no cancellation reaches; Python cannot stop the thread, so the
nested exec would go on calling the model and running tools after the user
cancelled, or after the call timed out.

So the frame of every tool call carries the call's ``ToolContext.cancel``
event and the loop running the call (``Frame.cancel``). An exec started on
another event loop watches that event (``cancelled_with_caller``) and cancels
itself when it is set. The frame reaches the body's worker thread with the
copied context, threads the body starts when they start, and any thread at
all through the runtime injected into the body (``_bound``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from openprogram.context import CancelSite

__all__ = ["POLL_S", "cancelled_with_caller"]

POLL_S = 0.05
"""How often a nested exec on another thread checks its caller's cancel event."""


@asynccontextmanager
async def cancelled_with_caller(site: CancelSite | None) -> AsyncIterator[None]:
    """Cancel the current task when the tool call that started it, on another loop, is cancelled.

    Args:
        site: The cancel event and loop of the call the exec nests in (its
            parent frame's ``cancel``); ``None`` at top level.
    """
    task = asyncio.current_task()
    if site is None or task is None or site[1] is asyncio.get_running_loop():
        yield  # top level, or the same loop: task cancellation already reaches this exec
        return
    event = site[0]
    if event.is_set():
        raise asyncio.CancelledError  # started by a call already abandoned: nothing runs
    watcher = asyncio.ensure_future(_watch(event, task))
    try:
        yield
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def _watch(event: threading.Event, task: asyncio.Task[object]) -> None:
    while not event.is_set():
        await asyncio.sleep(POLL_S)
    task.cancel()
