"""A cached thread pool for sync code, shared by tools, runtime, decisions, batch and events.

Sync bodies must run off the event loop thread, and a nested sync agentic
function blocks its thread while its inner loop runs tools of its own. A
bounded shared pool could then deadlock (every worker waiting on work queued
behind it), so this pool never makes work wait for a busy thread: it reuses an
idle worker when there is one and starts a new one otherwise. Idle workers
exit after ``IDLE_SECONDS``. Per-batch concurrency caps live in the executor.

The hand-off is what a tool call on a worker costs beyond its body, so it is
kept to what it must be: one queue put that wakes a worker, and one
``call_soon_threadsafe`` that wakes the loop with the result already in it
(``run_in_thread``), with no ``concurrent.futures.Future`` in between. The
worker wakes the loop last, after its own bookkeeping, so the loop seldom
wakes to find the worker still holding the GIL (each such meeting costs the
two threads two more context switches: bench/README.md). Work that no event
loop awaits (``submit``, ``start``) takes the same queue.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any, TypeVar

__all__ = ["IDLE_SECONDS", "active_workers", "run_in_thread", "start", "submit"]

T = TypeVar("T")

_Job = Callable[[], "Callable[[], object] | None"]
"""Work for a worker; what it returns (the wake-up of whoever waits for it, or ``None``)
the worker calls once it counts itself idle again."""

IDLE_SECONDS = 2.0
"""How long an idle worker waits for work before exiting."""

_log = logging.getLogger("openprogram")


class _CachedPool:
    """Reuses idle workers, starts a new one when none is idle, retires idle ones."""

    def __init__(self) -> None:
        self._work: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # workers waiting for work (or about to)
        self._queued = 0  # items put and not yet taken
        self.workers = 0  # workers alive

    def put(self, job: _Job) -> None:
        """Run ``job()`` on a worker, then what it returns (jobs catch their own errors; a
        stray one is logged)."""
        with self._lock:
            # Every queued item is matched by an idle worker or a new one: never a busy one.
            new = self._idle <= self._queued
            if new:
                self.workers += 1
            self._queued += 1
            self._work.put(job)
        if new:
            worker = threading.Thread(target=self._worker, name="openprogram-tool", daemon=True)
            # Started in an empty context: a worker serves every later job, so it must not
            # carry the frame of the tool call that happened to start it (runtime/_follow.py).
            contextvars.Context().run(worker.start)

    def _worker(self) -> None:
        with self._lock:
            self._idle += 1
        while True:
            try:
                job = self._work.get(timeout=IDLE_SECONDS)
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
            then = None
            try:
                then = job()
            except BaseException:  # noqa: BLE001 - a job's own escape must not kill the worker
                _log.exception("openprogram worker job %r raised; ignored", job)
            del job  # the job holds its value until the caller takes it: not past that
            with self._lock:
                self._idle += 1
            if then is not None:
                then()


_pool = _CachedPool()


def active_workers() -> int:
    """Number of worker threads alive (busy or idle)."""
    return _pool.workers


def start(fn: Callable[[], object]) -> None:
    """Run ``fn()`` on a worker thread; nobody waits for it (it must handle its own errors)."""

    def job() -> None:
        fn()

    _pool.put(job)


def submit(fn: Callable[[], T]) -> Future[T]:
    """Run ``fn`` on a worker thread; the returned future resolves with its result."""
    fut: Future[T] = Future()

    def job() -> None:
        if fut.set_running_or_notify_cancel():
            try:
                fut.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - re-raised in the waiting caller
                fut.set_exception(exc)

    _pool.put(job)
    return fut


async def run_in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Await ``fn(*args, **kwargs)`` run on a worker thread with the current context copied.

    The value comes back through a box the caller empties, and the worker
    wakes the loop only once the box holds it: the worker may be descheduled
    right after (a busy machine) and keep its frame a while, which then holds
    nothing of the value (a tool body's 100 MB string would outlive its exec).
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    box: list[Any] = []

    def job() -> Callable[[], None]:
        try:
            box.append(ctx.run(fn, *args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the awaiting caller
            box.append(_Raised(exc))
        return partial(_post, loop, done)  # the worker wakes the loop when it is done

    ctx = contextvars.copy_context()
    _pool.put(job)
    await done
    item = box.pop()
    if type(item) is _Raised:
        raise item.error
    value: T = item
    return value


class _Raised:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _post(loop: asyncio.AbstractEventLoop, done: asyncio.Future[None]) -> None:
    """Wake the loop: ``done`` is set there (the one cross-thread call of a hand-off)."""
    try:  # noqa: SIM105 - contextlib.suppress would cost an object per hand-off
        loop.call_soon_threadsafe(_settle, done)
    except RuntimeError:  # the loop closed: nobody awaits the value any more
        pass


def _settle(done: asyncio.Future[None]) -> None:
    if not done.done():  # cancelled meanwhile (the exec ended, the call timed out)
        done.set_result(None)
