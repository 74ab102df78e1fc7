"""``execute_tool`` spans: one per tool call, from ``ToolCallStarted`` to its terminal event.

While the call runs its span is the current OpenTelemetry span, so a nested
exec in an agentic function's body, and any span the body opens, become its
children. The executor emits a call's start and terminal events from the same
task, so the context token is detached where it was attached.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from openprogram.events import (
    Event,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallProgress,
    ToolCallSkipped,
    ToolCallStarted,
    ToolInputValidationFailed,
)
from openprogram.events._delivery import defer
from openprogram.otel._attributes import as_json, ns
from openprogram.otel._state import Call, Spans

__all__ = [
    "call_completed",
    "call_failed",
    "call_progress",
    "call_skipped",
    "call_started",
    "validation_failed",
]


def _attributes(event: Event, tool_name: str, call_id: str) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool_name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "function",
        "openprogram.run_id": event.run_id,
        "openprogram.step_id": event.step_id,
    }


def call_started(spans: Spans, event: ToolCallStarted) -> None:
    """Open the tool span and make it current."""
    run = spans.run(event.run_id)
    attributes = _attributes(event, event.tool_name, event.call_id)
    attributes["openprogram.arguments.hash"] = event.arguments_hash
    attributes["openprogram.arguments.size_bytes"] = event.arguments_size_bytes
    if event.input_schema_hash is not None:
        attributes["openprogram.input_schema_hash"] = event.input_schema_hash
    if event.arguments is not None:
        attributes["gen_ai.tool.call.arguments"] = as_json(event.arguments)
    span = spans.start(
        f"execute_tool {event.tool_name}",
        parent=run.span if run is not None else None,
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        at=event.at,
    )
    token = otel_context.attach(trace.set_span_in_context(span))
    spans.add_call(event.run_id, event.call_id, Call(span=span, token=token))


def call_progress(spans: Spans, event: ToolCallProgress) -> None:
    """A span event per ``ToolContext.report``."""
    call = spans.call(event.run_id, event.call_id)
    if call is None:
        return
    attributes: dict[str, Any] = {"openprogram.size_bytes": event.size_bytes}
    if event.text is not None:
        attributes["openprogram.text"] = event.text
    call.span.add_event("openprogram.tool.progress", attributes, timestamp=ns(event.at))


def validation_failed(spans: Spans, event: ToolInputValidationFailed) -> None:
    """A span event listing the violations the model gets back."""
    call = spans.call(event.run_id, event.call_id)
    if call is not None:
        call.span.add_event(
            "openprogram.tool.validation_failed",
            {"openprogram.violations": event.violation_description},
            timestamp=ns(event.at),
        )


def call_completed(spans: Spans, event: ToolCallCompleted) -> None:
    """End the tool span (with the result only under ``trace_payloads``)."""
    attributes: dict[str, str | int | float] = {
        "openprogram.output.hash": event.output_hash,
        "openprogram.output.size_bytes": event.output_size_bytes,
        "openprogram.duration_ms": event.duration_ms,
    }
    _end_call(spans, event, attributes, event.output, status=None)


def call_failed(spans: Spans, event: ToolCallFailed) -> None:
    """End the tool span as failed; ``error.type`` is the failure kind."""
    attributes: dict[str, str | int | float] = {
        "error.type": event.failure,
        "openprogram.error.size_bytes": event.error_size_bytes,
        "openprogram.duration_ms": event.duration_ms,
    }
    # The description names the kind only: the error text is payload (data policy).
    status = Status(StatusCode.ERROR, f"tool call failed: {event.failure}")
    _end_call(spans, event, attributes, event.error, status=status)


def _end_call(
    spans: Spans,
    event: ToolCallCompleted | ToolCallFailed,
    attributes: Mapping[str, str | int | float],
    payload: str | None,
    *,
    status: Status | None,
) -> None:
    call = spans.finish_call(event.run_id, event.call_id)
    if call is None:
        return
    call.span.set_attributes(attributes)
    if payload is not None:  # present only under trace_payloads
        call.span.set_attribute("gen_ai.tool.call.result", payload)
    if status is not None:
        call.span.set_status(status)
    defer(call.span.end, end_time=ns(event.at))
    otel_context.detach(call.token)


def call_skipped(spans: Spans, event: ToolCallSkipped) -> None:
    """A zero-length tool span saying why the call was not run."""
    run = spans.run(event.run_id)
    attributes = _attributes(event, event.tool_name, event.call_id)
    attributes["openprogram.skipped"] = event.reason
    span = spans.start(
        f"execute_tool {event.tool_name}",
        parent=run.span if run is not None else None,
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        at=event.at,
    )
    defer(span.end, end_time=ns(event.at))
