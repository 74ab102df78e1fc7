"""A cached thread pool for sync code, shared by tools, runtime, decisions, batch and events.

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


class _CachedPool:
    """Reuses idle workers, starts a new one when none is idle, retires idle ones."""

    def __init__(self) -> None:
        self._work: queue.SimpleQueue[_WorkItem] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # workers waiting for work (or about to)
        self._queued = 0  # items put and not yet taken
        self.workers = 0  # workers alive

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        fut: Future[T] = Future()
        with self._lock:
            # Every queued item is matched by an idle worker or a new one: never a busy one.
            start = self._idle <= self._queued
            if start:
                self.workers += 1
            self._queued += 1
            self._work.put((fut, fn))
        if start:
            worker = threading.Thread(target=self._worker, name="openprogram-tool", daemon=True)
            # Started in an empty context: a worker serves every later job, so it must not
            # carry the frame of the tool call that happened to start it (runtime/_follow.py).
            contextvars.Context().run(worker.start)
        return fut

    def _worker(self) -> None:
        with self._lock:
            self._idle += 1
        while True:
            try:
                fut, fn = self._work.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._queued < self._idle:  # more idle workers than waiting items
                        self._idle -= 1
                        self.workers -= 1
                        return
                continue
            with self._lock:
                self._queued -= 1
                self._idle -= 1
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn())
                except BaseException as exc:  # noqa: BLE001 - re-raised in the awaiting caller
                    fut.set_exception(exc)
            del fut, fn
            with self._lock:
                self._idle += 1


_pool = _CachedPool()


def active_workers() -> int:
    """Number of worker threads alive (busy or idle)."""
    return _pool.workers


def submit(fn: Callable[[], T]) -> Future[T]:
    """Run ``fn`` on a worker thread; the returned future resolves with its result."""
    return _pool.submit(fn)


async def run_in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Await ``fn(*args, **kwargs)`` run on a worker thread with the current context copied.

    The value comes back through a box the caller empties, not as the
    future's result: the worker keeps its future until it next runs, which on
    a busy machine can be after the caller has used the value and dropped it
    (a tool body's 100 MB string then outlived its exec).
    """
    ctx = contextvars.copy_context()
    box: list[T] = []

    def call() -> None:
        box.append(ctx.run(fn, *args, **kwargs))

    await asyncio.wrap_future(submit(call))
    return box.pop()
