"""Stream events: what ``runtime.stream(...)`` yields and ``Runtime(on_stream=...)`` receives.

Unlike trace events (``openprogram.events``), stream events carry the values —
they are the program's live output: text as it is generated, each tool call,
each result, progress reports, and the final answer. Runs nested in a tool of
the streamed run stream into it too; ``run_id``, ``parent_run_id`` and
``depth`` tell them apart.

Every run ends with a ``StreamFinal`` of its own, nested runs included:
``on_stream`` receives them all. A stream (``runtime.stream``,
``Conversation.stream``) yields one only: its own exec's, last, once the exec
(and a conversation's save) is done, so a consumer that stops at the first
``StreamFinal`` has the streamed exec's answer, never a sub-agent's
(``stream_events``). See docs/streaming.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from openprogram.messages import ToolCall, ToolResultMessage
from openprogram.runtime._result import RunResult

__all__ = [
    "QueueSink",
    "StreamEvent",
    "StreamFinal",
    "StreamProgress",
    "StreamTextDelta",
    "StreamThinkingDelta",
    "StreamToolCall",
    "StreamToolResult",
    "stream_events",
]

_DONE = object()


@dataclass(frozen=True, slots=True, kw_only=True)
class _StreamBase:
    kind: ClassVar[str] = "Stream"
    run_id: str
    """The run the event belongs to."""
    parent_run_id: str | None
    """The run whose tool started it (``None`` at top level)."""
    depth: int = 1
    """How deep its run is: 1 for a top-level exec, 2 for an exec in one of its tools, ..."""

    def __init_subclass__(cls) -> None:
        # No super(): dataclass(slots=True) re-creates the class (see openprogram.events.Event).
        cls.kind = cls.__name__


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamTextDelta(_StreamBase):
    """A fragment of the model's reply text."""

    text: str
    """The fragment."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamThinkingDelta(_StreamBase):
    """A fragment of reasoning the provider exposed."""

    text: str
    """The fragment."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamToolCall(_StreamBase):
    """The model asked for a tool call (sent before it runs)."""

    call: ToolCall
    """The call."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamToolResult(_StreamBase):
    """A tool call's result, as the model will see it."""

    result: ToolResultMessage
    """The result."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamProgress(_StreamBase):
    """A running tool reported progress with ``ToolContext.report``."""

    call_id: str
    """The call reporting."""
    tool_name: str
    """The tool reporting."""
    text: str
    """The report."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamFinal(_StreamBase):
    """The run finished; always its last stream event.

    A stream yields its own exec's only (nested runs' go to ``on_stream``).
    """

    output: Any
    """What ``exec`` returns."""
    result: RunResult
    """The whole record of the run."""


StreamEvent: TypeAlias = (
    StreamTextDelta
    | StreamThinkingDelta
    | StreamToolCall
    | StreamToolResult
    | StreamProgress
    | StreamFinal
)


class QueueSink:
    """Hands the stream events of one streamed exec to an ``asyncio.Queue``, from any thread.

    Nested sync agentic functions run their own loops on worker threads, so
    their events arrive off the streaming loop's thread and are posted to it.
    Finals are not queued: nested runs' are dropped, and the streamed exec's
    (the one at ``depth``: only that exec and the runs nested in it reach
    this sink) is kept in ``final`` for the stream to yield last.
    """

    __slots__ = ("_depth", "_loop", "_queue", "_thread", "final")

    def __init__(self, queue: asyncio.Queue[Any], depth: int) -> None:
        self._queue = queue
        self._depth = depth
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self.final: StreamFinal | None = None

    def __call__(self, event: Any) -> None:
        """Post ``event`` to the queue (or keep it, if it is the streamed exec's final)."""
        if isinstance(event, StreamFinal):
            if event.depth == self._depth:
                self.final = event
            return
        if threading.get_ident() == self._thread:
            self._queue.put_nowait(event)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._queue.put_nowait, event)


async def stream_events(
    start: Callable[[QueueSink], Coroutine[Any, Any, Any]], depth: Callable[[], int]
) -> AsyncGenerator[StreamEvent, None]:
    """Run ``start(sink)`` as a task and yield what reaches the sink, then its final.

    Args:
        start: Runs one exec (or a send) with the sink as one more stream sink.
        depth: The depth that exec runs at (its ``StreamFinal`` is the stream's), asked
            where the task starts (the context the exec copies).

    The final comes after the task is done, so a consumer that stops there
    cancels nothing; closing the generator earlier cancels the task. What
    ended the task, if it failed, is raised instead of a final.
    """
    queue: asyncio.Queue[Any] = asyncio.Queue()
    sink = QueueSink(queue, depth())
    task = asyncio.ensure_future(start(sink))
    task.add_done_callback(lambda _: queue.put_nowait(_DONE))
    try:
        while (item := await queue.get()) is not _DONE:
            yield item
        task.result()  # re-raise what ended the exec, if it failed
        if sink.final is not None:
            yield sink.final
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
