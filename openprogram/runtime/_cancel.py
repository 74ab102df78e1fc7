"""Cancellation that crosses threads: an exec stops when the tool call that started it is cancelled.

An exec nested in a tool body runs on the body's thread. When the body is
async, it shares the caller's event loop and task, so cancelling the outer
exec cancels it too. A sync body runs on a worker thread with its own event
loop, which no cancellation reaches; Python cannot stop the thread, so the
nested exec would go on calling the model and running tools after the user
cancelled, or after the call timed out.

So while a tool body runs, the executor publishes the call's
``ToolContext.cancel`` event (``use_call_cancel``); worker threads inherit it
with the copied context. An exec started on another event loop watches that
event (``cancelled_with_caller``) and cancels itself when it is set. A thread
the user starts in the body gets no copied context: there the event comes
from the runtime bound to the call (``_bound.following_call``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar

__all__ = ["POLL_S", "cancelled_with_caller", "use_call_cancel"]

POLL_S = 0.05
"""How often a nested exec on another thread checks its caller's cancel event."""

_call_cancel: ContextVar[tuple[threading.Event, asyncio.AbstractEventLoop] | None] = ContextVar(
    "openprogram_call_cancel", default=None
)


@contextmanager
def use_call_cancel(event: threading.Event) -> Iterator[threading.Event]:
    """Publish ``event`` (a running call's cancel event) to execs started in the block."""
    token = _call_cancel.set((event, asyncio.get_running_loop()))
    try:
        yield event
    finally:
        _call_cancel.reset(token)


@asynccontextmanager
async def cancelled_with_caller(
    bound: tuple[threading.Event, asyncio.AbstractEventLoop] | None = None,
) -> AsyncIterator[None]:
    """Cancel the current task when the tool call that started it, on another loop, is cancelled.

    Args:
        bound: The cancel event and loop of the call the exec's runtime is
            bound to; on a thread the user started in a tool body it is the
            only one known (contextvars do not cross into such threads).
    """
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    # The same loop: task cancellation already reaches this exec.
    events = {
        id(c[0]): c[0] for c in (_call_cancel.get(), bound) if c is not None and c[1] is not loop
    }
    if not events or task is None:
        yield  # top level, or the same loop
        return
    if any(event.is_set() for event in events.values()):
        raise asyncio.CancelledError  # started by a call already abandoned: nothing runs
    watcher = asyncio.ensure_future(_watch(tuple(events.values()), task))
    try:
        yield
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def _watch(events: tuple[threading.Event, ...], task: asyncio.Task[object]) -> None:
    while not any(event.is_set() for event in events):
        await asyncio.sleep(POLL_S)
    task.cancel()
