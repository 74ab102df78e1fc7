"""A cached thread pool for sync tool bodies.

Sync bodies must run off the event loop thread, and a nested sync agentic
function blocks its thread while its inner loop runs tools of its own. A
bounded shared pool could then deadlock (every worker waiting on work queued
behind it), so this pool never makes work wait for a busy thread: it reuses an
idle worker when there is one and starts a new one otherwise. Idle workers
exit after ``IDLE_SECONDS``. Per-batch concurrency caps live in the executor.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["IDLE_SECONDS", "active_workers", "run_in_thread", "submit"]

T = TypeVar("T")

IDLE_SECONDS = 2.0
"""How long an idle worker waits for work before exiting."""

_WorkItem = tuple[Future[Any], Callable[[], Any]]
_work: queue.SimpleQueue[_WorkItem] = queue.SimpleQueue()
_lock = threading.Lock()
_idle = 0  # workers waiting for work (or about to)
_queued = 0  # items put and not yet taken
_workers = 0  # workers alive


def active_workers() -> int:
    """Number of worker threads alive (busy or idle)."""
    return _workers


def submit(fn: Callable[[], T]) -> Future[T]:
    """Run ``fn`` on a worker thread; the returned future resolves with its result."""
    global _queued, _workers
    fut: Future[T] = Future()
    with _lock:
        # Every queued item is matched by an idle worker or a new one: never wait on a busy one.
        start = _idle <= _queued
        if start:
            _workers += 1
        _queued += 1
        _work.put((fut, fn))
    if start:
        threading.Thread(target=_worker, name="openprogram-tool", daemon=True).start()
    return fut


def _worker() -> None:
    global _idle, _queued, _workers
    with _lock:
        _idle += 1
    while True:
        try:
            fut, fn = _work.get(timeout=IDLE_SECONDS)
        except queue.Empty:
            with _lock:
                if _queued < _idle:  # more idle workers than waiting items: this one may go
                    _idle -= 1
                    _workers -= 1
                    return
            continue
        with _lock:
            _queued -= 1
            _idle -= 1
        if fut.set_running_or_notify_cancel():
            try:
                fut.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting caller via the future
                fut.set_exception(exc)
        del fut, fn
        with _lock:
            _idle += 1


async def run_in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Await ``fn(*args, **kwargs)`` run on a worker thread with the current context copied."""
    ctx = contextvars.copy_context()
    return await asyncio.wrap_future(submit(lambda: ctx.run(fn, *args, **kwargs)))
