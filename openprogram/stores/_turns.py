"""Turns: a first-come, first-served lock per key, for tasks on any thread's event loop.

A store is used from several event loops at once (each sync ``send`` runs its
own loop on its own thread), so an ``asyncio.Lock`` cannot be shared, and a
``threading.Lock`` would block a loop while it waits. ``Turns`` keeps, per
key, a queue of waiting futures, each woken on its own loop when the turn
passes to it. A waiter cancelled while it waits leaves the queue; one
cancelled just as the turn reached it passes the turn on, so a turn is never
lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import AsyncIterator

__all__ = ["Turns"]

_Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]


class Turns:
    """``async with turns.hold(key):`` — one holder per key at a time, in arrival order."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._queues: dict[str, deque[_Waiter]] = {}  # a key is held while it has a queue

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Wait for the turn of ``key``, hold it for the block, then pass it on."""
        await self._acquire(key)
        try:
            yield
        finally:
            self._release(key)

    async def _acquire(self, key: str) -> None:
        with self._mutex:
            queue = self._queues.get(key)
            if queue is None:
                self._queues[key] = deque()
                return
            loop = asyncio.get_running_loop()
            waiter: asyncio.Future[None] = loop.create_future()
            queue.append((loop, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            with self._mutex:
                if (loop, waiter) in queue:
                    queue.remove((loop, waiter))
                    raise
            self._release(key)  # the turn had reached this waiter: pass it on
            raise

    def _release(self, key: str) -> None:
        with self._mutex:
            queue = self._queues[key]
            while queue:
                loop, waiter = queue.popleft()
                try:
                    loop.call_soon_threadsafe(_wake, waiter)
                except RuntimeError:
                    continue  # that waiter's loop is closed: it will never run, skip it
                return
            del self._queues[key]


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():  # a waiter cancelled meanwhile passes the turn on itself
        waiter.set_result(None)
