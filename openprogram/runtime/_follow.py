"""The frame follows the threads a tool call starts.

Python gives a new thread an empty context, so without help an exec started
on a thread that a tool body starts would see no enclosing exec and run at
top level: the whole registry, none of the vetoes of the execs above it, a
fresh budget, depth 1 — whichever runtime it uses (a ``Runtime`` captured at
module level, ``get_current_runtime()``, an agentic function finding its
runtime itself). Nothing else tells such a thread apart from one a server
started for an unrelated request, which must run at top level: only who
started the thread does.

So while tool calls run, a thread started inside one starts with that call's
frame (as Python 3.14's ``thread_inherit_context`` does for the whole
context, for openprogram's frame alone), and so does a thread started in a
``runtime.tree()`` block, whose execs must share the tree's budget:

- ``threading.Thread.start`` called inside a tool call or a tree block makes
  the thread run with its frame (subclasses that call ``super().start()`` too);
- ``ThreadPoolExecutor.submit`` (and so ``map`` and ``loop.run_in_executor``)
  called there runs that work item with its frame. Pool threads themselves
  start with no frame, since they serve later work too.

Both wrappers are installed once, when the first tool call or tree block of
the process starts (never at import), and cost one contextvar read elsewhere,
where they change nothing. Not covered, and documented as such: threads
started by C code or ``_thread.start_new_thread``, executors other than
``ThreadPoolExecutor`` (their work runs with whatever context they give it),
other processes. The runtime injected into the body carries the frame on
every path (``_bound``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from openprogram.context import EMPTY, Frame, get_frame, use_frame

__all__ = ["follow_threads"]

T = TypeVar("T")

_installed = False
_lock = threading.Lock()


def follow_threads() -> None:
    """Install the wrappers (once per process); called when a tool call or a tree starts."""
    global _installed  # noqa: PLW0603 - the process-wide "installed" flag, set once
    if _installed:
        return
    with _lock:
        if _installed:
            return
        _wrap_thread_start()
        _wrap_pool_submit()
        _installed = True


def _wrap_thread_start() -> None:
    original = threading.Thread.start

    def start(self: threading.Thread) -> None:
        frame = get_frame()
        if _carried(frame):
            run = self.run

            def run_in_frame() -> None:
                try:
                    _in_frame(frame, run)
                finally:  # the ended thread keeps no frame (nor the run state it points to)
                    self.__dict__.pop("run", None)

            self.run = run_in_frame  # type: ignore[method-assign]
        original(self)

    start.__doc__ = original.__doc__
    start.__wrapped__ = original  # type: ignore[attr-defined]
    threading.Thread.start = start  # type: ignore[method-assign]


def _wrap_pool_submit() -> None:
    original = ThreadPoolExecutor.submit

    def submit(
        self: ThreadPoolExecutor, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> Future[T]:
        frame = get_frame()
        if not _carried(frame):
            return original(self, fn, *args, **kwargs)
        # The pool may start a thread here: it serves later work too, so it starts frameless.
        with use_frame(EMPTY):
            return original(self, _in_frame, frame, fn, *args, **kwargs)

    submit.__doc__ = original.__doc__
    submit.__wrapped__ = original  # type: ignore[attr-defined]
    ThreadPoolExecutor.submit = submit  # type: ignore[method-assign,assignment]


def _carried(frame: Frame) -> bool:
    """Whether threads started here take the frame: inside a tool call or a tree block."""
    return frame.scope is not None or frame.tree is not None


def _in_frame(frame: Frame, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    with use_frame(frame):
        return fn(*args, **kwargs)
