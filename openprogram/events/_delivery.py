"""Observer calls off the event loop: one delivery worker per run tree, in order, bounded.

An observer is user code: it may sleep, log to a slow disk or export spans
synchronously. Called on the loop thread, it would stall every task of the
loop and make ``exec(timeout_s=...)`` overrun. So a run tree (an exec and the
execs nested in it) hands each event to its own bounded queue, and its
observers are called off the loop, on a pooled worker thread, one event
after another, in the order the events were emitted.

When the exec ends it waits until its observers have seen every event — but
never past its deadline: then it returns (or raises ``TimeoutError``) on
time, and the worker finishes the backlog on its own. With no
deadline it waits for the backlog, so observers have seen every event when
``exec`` returns. A queue that fills up (``MAX_PENDING`` events: a stuck
observer) blocks the emitter until there is room, at most until the deadline;
an event that finds no room by then is dropped for the observers (logged) —
it stays in ``last_run.events``.

Observers that must run in the emitting context (``OpenTelemetryObserver``
makes its spans current for tool bodies) declare ``openprogram_inline = True``
and are called on the emitting thread; they hand their slow work (ending and
so exporting a span) to the same thread with ``defer``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from openprogram import _threads
from openprogram.context import get_frame, use_frame

__all__ = ["MAX_PENDING", "Delivery", "defer", "get_delivery", "is_inline", "use_delivery"]

MAX_PENDING = 10_000
"""Events waiting for slow observers before the emitter waits for room."""

logger = logging.getLogger("openprogram.events")


def is_inline(observer: object) -> bool:
    """Whether ``observer`` asked to be called on the emitting thread."""
    return getattr(observer, "openprogram_inline", False) is True


class Delivery:
    """The observer calls of one run tree, delivered in order on a pooled worker thread.

    A burst of events is delivered by one job on ``openprogram._threads``'s
    cached pool (idle workers are reused, so no thread is started per exec);
    the job takes every waiting event at once, and returns when the queue is
    empty; the next event starts another.
    """

    def __init__(self) -> None:
        self._jobs: deque[tuple[Callable[..., object], tuple[Any, ...], dict[str, Any]]] = deque()
        self._cond = threading.Condition(threading.Lock())  # never re-entered: a plain lock
        self._busy = 0  # jobs queued or running
        self._running = False  # a worker is delivering
        self._waiters: list[Callable[[], None]] = []
        self.dropped = 0
        """Events dropped because the queue stayed full until the deadline."""

    def submit(
        self, fn: Callable[..., object], *args: Any, deadline: float | None = None, **kw: Any
    ) -> None:
        """Queue ``fn(*args, **kw)``; wait for room at most until ``deadline`` (monotonic)."""
        with self._cond:
            while self._busy >= MAX_PENDING:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    self._drop()
                    return
                self._cond.wait(remaining)
            self._jobs.append((fn, args, kw))
            self._busy += 1
            start, self._running = not self._running, True
        if start:
            _threads.start(self._serve)

    def _drop(self) -> None:
        self.dropped += 1
        if self.dropped == 1:
            logger.warning(
                "openprogram observers fell %d events behind and the exec's deadline passed: "
                "events are dropped for them (they stay in last_run.events)",
                MAX_PENDING,
            )

    def _serve(self) -> None:
        while True:
            with self._cond:
                if not self._jobs:
                    self._running = False
                    return
                batch, self._jobs = self._jobs, deque()  # all that waits, in one lock round
            for fn, args, kw in batch:
                try:
                    fn(*args, **kw)
                except Exception:
                    # An observer (or deferred observer work) that raises is logged and
                    # ignored, as inline observers are: tracing must never break the run.
                    logger.exception("openprogram observer work %r raised; ignored", fn)
            with self._cond:
                self._busy -= len(batch)
                idle = self._busy == 0
                waiters, self._waiters = (self._waiters, []) if idle else ([], self._waiters)
                self._cond.notify_all()
            del batch
            for wake in waiters:
                wake()

    async def drained(self, deadline: float | None) -> bool:
        """Wait (without blocking the loop) until every job ran, at most until ``deadline``.

        Returns:
            Whether everything was delivered.
        """
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def settle() -> None:
            if not done.done():
                done.set_result(None)

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
                loop.call_soon_threadsafe(settle)

        with self._cond:
            if self._busy == 0:
                return True
            self._waiters.append(wake)
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            return False
        try:
            await asyncio.wait_for(done, remaining)
        except TimeoutError:
            with self._cond, contextlib.suppress(ValueError):
                self._waiters.remove(wake)
            return False
        return True


def get_delivery() -> Delivery | None:
    """The delivery of the run tree whose inline observers are being called, if any."""
    return get_frame().delivery


@contextlib.contextmanager
def use_delivery(delivery: Delivery | None) -> Iterator[None]:
    """Make ``delivery`` the one ``defer`` uses while inline observers run (``Frame.delivery``)."""
    with use_frame(get_frame().replace(delivery=delivery)):
        yield


def defer(fn: Callable[..., object], *args: Any, **kw: Any) -> None:
    """Run ``fn`` on the current run tree's delivery thread (inline observers' slow work).

    Outside a run (or when called by a non-inline observer) it runs at once.
    """
    delivery = get_frame().delivery
    if delivery is None:
        fn(*args, **kw)
    else:
        delivery.submit(fn, *args, **kw)
