"""``OpenTelemetryObserver``: dispatches events to span handlers; owns the run spans."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from openprogram.context import get_current_frame
from openprogram.events import (
    AgentEnd,
    AgentInvoked,
    AgentResponseReceived,
    BudgetExhausted,
    BudgetWarning,
    Event,
    MaxIterationsReached,
    ProviderError,
    ProviderRateLimited,
    ProviderRequestSent,
    ProviderResponseReceived,
    TokensConsumed,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallProgress,
    ToolCallSkipped,
    ToolCallStarted,
    ToolInputValidationFailed,
    ToolsResolved,
)
from openprogram.events._delivery import defer
from openprogram.otel import _model, _tools
from openprogram.otel._attributes import messages, ns, provider_attributes
from openprogram.otel._state import Run, Spans

__all__ = ["OpenTelemetryObserver"]

_FAILED_STOPS = frozenset({"error", "timeout", "aborted", "budget"})


class OpenTelemetryObserver:
    """An observer that records each run as OpenTelemetry spans (GenAI conventions).

    Safe under concurrent runs (state is keyed by run id and call id) and for
    runs on worker threads. Runs nested in a tool body inherit the observers of
    the run that called the tool, so one instance on the top-level runtime
    traces the whole tree. Use one instance per trace tree: two observers would
    each make their own spans current.

    Args:
        tracer_provider: Where spans go; ``None`` uses the global tracer provider
            (``opentelemetry.trace.set_tracer_provider``).

    Example:
        >>> from opentelemetry.sdk.trace import TracerProvider
        >>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        >>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
        ...     InMemorySpanExporter)
        >>> from openprogram.runtime import Runtime
        >>> from openprogram.testing import ScriptedProvider
        >>> exporter = InMemorySpanExporter()
        >>> provider = TracerProvider()
        >>> provider.add_span_processor(SimpleSpanProcessor(exporter))
        >>> rt = Runtime(ScriptedProvider(["Hi!"]), observers=[OpenTelemetryObserver(provider)])
        >>> rt.exec("Say hi", tools=[])
        'Hi!'
        >>> [span.name for span in exporter.get_finished_spans()]
        ['chat scripted', 'invoke_agent']
    """

    openprogram_inline = True
    """Called on the emitting thread: it makes its spans current for the code it traces.
    Ending a span (which exports it with a ``SimpleSpanProcessor``) is deferred to the run
    tree's observer thread, so a slow exporter cannot stall the loop."""

    def __init__(self, tracer_provider: trace.TracerProvider | None = None) -> None:
        self._tracer_provider = tracer_provider
        self._spans = Spans(trace.get_tracer("openprogram", tracer_provider=tracer_provider))
        spans = self._spans

        def bind(handler: Callable[[Spans, Any], None]) -> Callable[[Any], None]:
            return lambda event: handler(spans, event)

        self._handlers: dict[type[Event], Callable[[Any], None]] = {
            AgentInvoked: self._invoked,
            ToolsResolved: self._tools_resolved,
            AgentResponseReceived: self._answered,
            MaxIterationsReached: self._max_iterations,
            BudgetWarning: self._budget,
            BudgetExhausted: self._budget,
            AgentEnd: self._ended,
            ProviderRequestSent: bind(_model.request_sent),
            ProviderResponseReceived: bind(_model.response_received),
            TokensConsumed: bind(_model.tokens),
            ProviderRateLimited: bind(_model.rate_limited),
            ProviderError: bind(_model.provider_error),
            ToolCallStarted: bind(_tools.call_started),
            ToolInputValidationFailed: bind(_tools.validation_failed),
            ToolCallProgress: bind(_tools.call_progress),
            ToolCallCompleted: bind(_tools.call_completed),
            ToolCallFailed: bind(_tools.call_failed),
            ToolCallSkipped: bind(_tools.call_skipped),
        }

    def __call__(self, event: Event) -> None:
        """Record ``event`` (the observer protocol of ``Runtime(observers=...)``)."""
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)

    def __repr__(self) -> str:
        return f"OpenTelemetryObserver({self._spans!r})"

    def __reduce__(self) -> tuple[type[OpenTelemetryObserver], tuple[()]]:
        """Pickle as "a fresh observer on the global tracer provider" (e.g. for Ray workers).

        Raises:
            TypeError: It was given its own tracer provider, which cannot leave this process.
        """
        if self._tracer_provider is not None:
            raise TypeError(
                "an OpenTelemetryObserver with its own tracer_provider cannot be pickled (the "
                "provider and its exporters belong to this process); use "
                "OpenTelemetryObserver() with the global tracer provider, which the other "
                "process sets up for itself"
            )
        return (OpenTelemetryObserver, ())

    def _invoked(self, event: AgentInvoked) -> None:
        # Observers run synchronously in the emitting run's context, so the current frame is
        # the agentic function whose body called exec, and the current OpenTelemetry span is
        # the tool span of the call running that body (or the caller's own span at top level).
        frame = get_current_frame()
        attributes: dict[str, Any] = {
            **provider_attributes(event.provider_id, event.model_id),
            "gen_ai.operation.name": "invoke_agent",
            "openprogram.run_id": event.run_id,
            "openprogram.depth": event.depth,
            "openprogram.content.hash": event.content_hash,
            "openprogram.content.size_bytes": event.content_size_bytes,
        }
        if frame is not None:
            attributes["gen_ai.agent.name"] = frame.name
        if event.parent_run_id is not None:
            attributes["openprogram.parent_run_id"] = event.parent_run_id
        if event.content is not None:
            attributes["gen_ai.input.messages"] = messages("user", event.content)
        span = self._spans.start(
            f"invoke_agent {frame.name}" if frame is not None else "invoke_agent",
            parent=self._parent_of(event),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            at=event.at,
        )
        token = otel_context.attach(trace.set_span_in_context(span))
        self._spans.add_run(event.run_id, Run(span=span, token=token))

    def _parent_of(self, event: AgentInvoked) -> otel_context.Context:
        """The current context, unless it lost the parent run's span (then that run's span)."""
        current = otel_context.get_current()
        if event.parent_run_id is None or trace.get_current_span(current).is_recording():
            return current
        parent = self._spans.run(event.parent_run_id)
        # The tool body replaced the context: hang the run under the run that called the tool.
        return trace.set_span_in_context(parent.span) if parent is not None else current

    def _tools_resolved(self, event: ToolsResolved) -> None:
        run = self._spans.run(event.run_id)
        if run is not None:
            run.span.set_attributes(
                {
                    "openprogram.tools.offered": list(event.offered),
                    "openprogram.tools.deferred": list(event.deferred),
                    "openprogram.tools.menu_hash": event.menu_hash,
                    "openprogram.tools.rejected_count": len(event.rejected),
                }
            )

    def _answered(self, event: AgentResponseReceived) -> None:
        run = self._spans.run(event.run_id)
        if run is None:
            return
        run.settle_chat()
        if event.text is not None:
            run.span.set_attribute("gen_ai.output.messages", messages("assistant", event.text))
        run.span.add_event(
            "openprogram.agent.response",
            {
                "openprogram.text.hash": event.text_hash,
                "openprogram.text.size_bytes": event.text_size_bytes,
            },
            timestamp=ns(event.at),
        )

    def _max_iterations(self, event: MaxIterationsReached) -> None:
        run = self._spans.run(event.run_id)
        if run is None:
            return
        if event.action == "raise":
            run.error_type = "max_iterations"
        run.span.add_event(
            "openprogram.max_iterations",
            {"openprogram.iterations": event.iterations, "openprogram.action": event.action},
            timestamp=ns(event.at),
        )

    def _budget(self, event: BudgetWarning | BudgetExhausted) -> None:
        run = self._spans.run(event.run_id)
        if run is None:
            return
        name = "warning" if isinstance(event, BudgetWarning) else "exhausted"
        run.span.add_event(
            f"openprogram.budget.{name}",
            {
                "openprogram.budget.limit": event.limit,
                "openprogram.budget.used": event.used,
                "openprogram.budget.allowed": event.allowed,
            },
            timestamp=ns(event.at),
        )

    def _ended(self, event: AgentEnd) -> None:
        run, unfinished = self._spans.pop_run(event.run_id)
        if run is None:
            return
        run.settle_chat()
        end = ns(event.at)
        for call in unfinished:  # calls with no terminal event (a run that died unusually)
            call.span.set_attribute("error.type", "aborted")
            call.span.set_status(Status(StatusCode.ERROR, "the run ended before the call did"))
            defer(call.span.end, end_time=end)
        span = run.span
        span.set_attributes(
            {
                "gen_ai.usage.input_tokens": event.input_tokens,
                "gen_ai.usage.output_tokens": event.output_tokens,
                "openprogram.stop_reason": event.stop_reason,
                "openprogram.iterations": event.iterations,
            }
        )
        error_type = event.stop_reason if event.stop_reason in _FAILED_STOPS else run.error_type
        if error_type is not None:
            span.set_attribute("error.type", error_type)
            span.set_status(Status(StatusCode.ERROR, f"the run ended with {error_type!r}"))
        defer(span.end, end_time=end)
        # AgentEnd is emitted by the coroutine that emitted AgentInvoked: same context.
        otel_context.detach(run.token)
