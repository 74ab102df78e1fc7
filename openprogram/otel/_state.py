"""The spans in flight, keyed by run id and call id (runs may be concurrent and threaded)."""

from __future__ import annotations

import threading
from contextvars import Token
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from openprogram.events._delivery import defer
from openprogram.otel._attributes import ns

__all__ = ["Call", "Run", "Spans"]


@dataclass(slots=True)
class Run:
    """The spans of one exec in progress."""

    span: Span
    """Its ``invoke_agent`` span."""
    token: Token[otel_context.Context]
    """Restores the OpenTelemetry context at ``AgentEnd``."""
    chat: Span | None = None
    """The ``chat`` span of the current model call, if one is open."""
    chat_end: int | None = None
    """When the reply arrived; the chat span ends at ``TokensConsumed``, which follows."""
    error_type: str | None = None
    """``error.type`` for the run span when its stop reason alone does not say it failed."""
    calls: set[str] = field(default_factory=set)
    """Ids of its tool calls still running."""

    def settle_chat(self) -> None:
        """End the chat span whose reply arrived."""
        if self.chat is not None and self.chat_end is not None:
            defer(self.chat.end, end_time=self.chat_end)
            self.chat, self.chat_end = None, None


@dataclass(slots=True)
class Call:
    """The span of one tool call in progress."""

    span: Span
    """Its ``execute_tool`` span."""
    token: Token[otel_context.Context]
    """Restores the OpenTelemetry context at the call's terminal event."""


class Spans:
    """Open runs and calls of one observer, behind a lock."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self.tracer = tracer
        self._lock = threading.Lock()
        self._runs: dict[str, Run] = {}
        self._calls: dict[tuple[str, str], Call] = {}

    def __repr__(self) -> str:
        return f"open_runs={len(self._runs)}, open_calls={len(self._calls)}"

    def start(
        self,
        name: str,
        *,
        parent: Span | otel_context.Context | None,
        kind: SpanKind,
        attributes: dict[str, Any],
        at: float,
    ) -> Span:
        """Start a span at the event time ``at`` under ``parent`` (a span or a context)."""
        context = trace.set_span_in_context(parent) if isinstance(parent, Span) else parent
        return self.tracer.start_span(
            name, context=context, kind=kind, attributes=attributes, start_time=ns(at)
        )

    def run(self, run_id: str) -> Run | None:
        """The open run ``run_id``, if any."""
        with self._lock:
            return self._runs.get(run_id)

    def add_run(self, run_id: str, run: Run) -> None:
        """Remember a run that started."""
        with self._lock:
            self._runs[run_id] = run

    def pop_run(self, run_id: str) -> tuple[Run | None, list[Call]]:
        """Forget a run that ended; return it and its calls still open."""
        with self._lock:
            run = self._runs.pop(run_id, None)
            ids = run.calls if run is not None else set()
            calls = [self._calls.pop((run_id, call_id), None) for call_id in ids]
        return run, [call for call in calls if call is not None]

    def call(self, run_id: str, call_id: str) -> Call | None:
        """The open call ``call_id`` of run ``run_id``, if any."""
        with self._lock:
            return self._calls.get((run_id, call_id))

    def add_call(self, run_id: str, call_id: str, call: Call) -> None:
        """Remember a call that started."""
        with self._lock:
            self._calls[(run_id, call_id)] = call
            run = self._runs.get(run_id)
            if run is not None:
                run.calls.add(call_id)

    def finish_call(self, run_id: str, call_id: str) -> Call | None:
        """Forget a call that ended and return it."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is not None:
                run.calls.discard(call_id)
            return self._calls.pop((run_id, call_id), None)
