"""The ``with runtime:`` blocks open on one runtime, kept per thread and task.

One runtime object is shared by threads and tasks, and each of them may open
(and nest) its own blocks. Each block's ``use_current_runtime`` manager is kept
under the thread and task that opened it, so ``__exit__`` closes the last block
opened *there*, whatever the others are doing.
"""

from __future__ import annotations

import asyncio
import threading
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any

from openprogram.context import use_current_runtime

__all__ = ["RuntimeBlocks"]


class RuntimeBlocks:
    """The open ``with runtime:`` blocks of one runtime."""

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: dict[tuple[int, int], list[AbstractContextManager[Any]]] = {}

    def enter(self, runtime: Any) -> None:
        """Make ``runtime`` the current runtime until the matching ``exit``."""
        manager = use_current_runtime(runtime)
        manager.__enter__()
        self._open.setdefault(_block_key(), []).append(manager)

    def exit(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the last block opened in this thread and task."""
        key = _block_key()
        managers = self._open[key]
        manager = managers.pop()
        if not managers:
            del self._open[key]
        manager.__exit__(exc_type, exc, tb)


def _block_key() -> tuple[int, int]:
    """Identify the thread and task a block runs in (blocks nest per task)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop in this thread
        task = None
    return threading.get_ident(), id(task) if task is not None else 0
