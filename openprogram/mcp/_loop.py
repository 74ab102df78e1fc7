"""``LoopThread``: an asyncio event loop of its own on a daemon thread; the exit hook.

The MCP SDK's sessions are bound to the task and loop that opened them, while
openprogram runs tools on whatever loop or worker thread is at hand. So each
connection keeps its session on a loop that lives as long as the connection,
and everything else talks to it through ``submit``.

The thread is a daemon so that a connection nobody closed cannot keep the
interpreter alive (non-daemon threads are joined *before* ``atexit`` hooks
run, so ``close_all`` would never get its turn); ``close_all`` is that hook.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

__all__ = ["Closable", "LoopThread", "close_all", "close_at_exit", "forget_at_exit"]

_T = TypeVar("_T")


class LoopThread:
    """An event loop running on a daemon thread, started by the first ``submit``.

    Args:
        name: The thread's name (shown by ``threading.enumerate()``).
    """

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        """The loop; coroutines run on it only through ``submit``."""
        self._name = name
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stopped = False

    @property
    def started(self) -> bool:
        """Whether the thread was started (it may have stopped since)."""
        return self._thread is not None

    def submit(self, make: Callable[[], Awaitable[_T]]) -> concurrent.futures.Future[_T]:
        """Run ``make()`` on the loop (starting the thread if needed); its future, thread-safe.

        Raises:
            RuntimeError: ``stop()`` was called.
        """
        with self._lock:
            if self._stopped:
                raise RuntimeError(f"{self._name}: the event loop thread was stopped")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            # The coroutine is made here, after the checks, so a refused submit leaves
            # no never-awaited coroutine behind.
            return asyncio.run_coroutine_threadsafe(_awaited(make), self.loop)

    def stop(self, timeout: float) -> None:
        """Stop the loop (tasks still running are cancelled) and join the thread. Idempotent."""
        with self._lock:
            self._stopped = True
            thread = self._thread
        if thread is None:
            if not self.loop.is_closed():
                self.loop.close()
            return
        if thread.is_alive():
            # The thread may close the loop between the check and the call: fine either way.
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(self.loop.stop)
            if thread is not threading.current_thread():
                thread.join(timeout)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            try:
                _cancel_leftovers(self.loop)
            finally:
                self.loop.close()


async def _awaited(make: Callable[[], Awaitable[_T]]) -> _T:
    return await make()


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does on exit: cancel what is left, then close generators and pools."""
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.run_until_complete(loop.shutdown_default_executor())


class Closable(Protocol):
    """Anything ``close_all`` can close."""

    def close(self) -> None:
        """Release everything; idempotent."""


_open: set[Closable] = set()
_open_lock = threading.Lock()
_hook_installed = False


def close_at_exit(item: Closable) -> None:
    """Have ``close_all`` (run at interpreter exit) close ``item`` unless it is forgotten first."""
    global _hook_installed  # noqa: PLW0603 - one process-wide exit hook, installed on first use
    with _open_lock:
        _open.add(item)
        if not _hook_installed:
            atexit.register(close_all)
            _hook_installed = True


def forget_at_exit(item: Closable) -> None:
    """Undo ``close_at_exit`` (the item was closed)."""
    with _open_lock:
        _open.discard(item)


def close_all() -> None:
    """Close every MCP connection still open (the ``atexit`` hook; safe to call any time)."""
    with _open_lock:
        items = list(_open)
    for item in items:
        item.close()
