"""Stream events: what ``runtime.stream(...)`` yields and ``Runtime(on_stream=...)`` receives.

Unlike trace events (``openprogram.events``), stream events carry the values —
they are the program's live output: text as it is generated, each tool call,
each result, progress reports, and the final answer. Runs nested in a tool of
the streamed run stream into it too; ``run_id`` / ``parent_run_id`` tell them
apart.
"""

from __future__ import annotations

import asyncio
import threading
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
]


@dataclass(frozen=True, slots=True, kw_only=True)
class _StreamBase:
    kind: ClassVar[str] = "Stream"
    run_id: str
    """The run the event belongs to."""
    parent_run_id: str | None
    """The run whose tool started it (``None`` at top level)."""

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
    """The run finished; always its last stream event."""

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
    """Hands stream events to an ``asyncio.Queue`` from any thread.

    Nested sync agentic functions run their own loops on worker threads, so
    their events arrive off the streaming loop's thread and are posted to it.
    """

    __slots__ = ("_loop", "_queue", "_thread")

    def __init__(self, queue: asyncio.Queue[Any]) -> None:
        self._queue = queue
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    def __call__(self, event: Any) -> None:
        """Post ``event`` to the queue."""
        if threading.get_ident() == self._thread:
            self._queue.put_nowait(event)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._queue.put_nowait, event)
