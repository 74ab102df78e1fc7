"""``chat`` spans: one per model call, from its first request to the reply.

A model call's retries stay in its span (``openprogram.attempts`` and one
event per retry), and so do the requests a provider sends beside the reply's
own (one ``openprogram.provider.side_request`` event each; the local model's
call-share probe, sent first, opens the span). The span ends when the reply arrives, but only after
``TokensConsumed`` (emitted right after the reply) has added the cached-token
count; any later event of the run settles it too.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from openprogram.events import (
    Event,
    ProviderError,
    ProviderRateLimited,
    ProviderRequestSent,
    ProviderResponseReceived,
    TokensConsumed,
)
from openprogram.events._delivery import defer
from openprogram.otel._attributes import ns, provider_attributes
from openprogram.otel._state import Run, Spans

__all__ = ["provider_error", "rate_limited", "request_sent", "response_received", "tokens"]


def request_sent(spans: Spans, event: ProviderRequestSent) -> None:
    """Open the chat span, or count a retry of the open one; a side request is a span event."""
    run = spans.run(event.run_id)
    chat = run.chat if run is not None and run.chat_end is None else None
    opened = chat is None
    if chat is None:
        if event.side_request is not None and run is None:
            return  # no run to hold the span: the reply's own request opens one
        chat = _start(
            spans, run, event, provider_id=event.provider_id, model=event.model_id, at=event.at
        )
    if event.side_request is not None:
        # Its tokens are in the reply's usage; the span shows it went out, and when.
        chat.add_event(
            "openprogram.provider.side_request",
            {
                "openprogram.side_request": event.side_request,
                "openprogram.prompt_size_bytes": event.prompt_size_bytes,
            },
            timestamp=ns(event.at),
        )
    elif opened or event.attempt == 1:  # the reply's first request (a probe may open the span)
        chat.set_attribute("openprogram.prompt_size_bytes", event.prompt_size_bytes)
    else:
        chat.set_attribute("openprogram.attempts", event.attempt)


def _start(
    spans: Spans, run: Run | None, event: Event, *, provider_id: str, model: str | None, at: float
) -> Span:
    if run is not None:
        run.settle_chat()
    chat = spans.start(
        f"chat {model}" if model else "chat",
        parent=run.span if run is not None else None,
        kind=SpanKind.CLIENT,
        attributes={
            **provider_attributes(provider_id, model),
            "gen_ai.operation.name": "chat",
            "openprogram.run_id": event.run_id,
            "openprogram.step_id": event.step_id,
            "openprogram.attempts": 1,
        },
        at=at,
    )
    if run is not None:
        run.chat, run.chat_end = chat, None
    return chat


def response_received(spans: Spans, event: ProviderResponseReceived) -> None:
    """Put the reply's model, finish reason and token usage on the chat span."""
    run = spans.run(event.run_id)
    chat = run.chat if run is not None and run.chat_end is None else None
    if chat is None:  # a provider that reports no RequestSent: the reply says how long it took
        start = event.at - event.latency_ms / 1000
        chat = _start(
            spans, run, event, provider_id=event.provider_id, model=event.model_id, at=start
        )
    attributes: dict[str, Any] = {
        "gen_ai.response.finish_reasons": [event.stop_reason],
        "gen_ai.usage.input_tokens": int(event.tokens.get("input", 0)),
        "gen_ai.usage.output_tokens": int(event.tokens.get("output", 0)),
        "openprogram.tool_calls": event.tool_calls,
    }
    if event.model_id:
        attributes["gen_ai.response.model"] = event.model_id
    chat.set_attributes(attributes)
    if run is None:
        defer(chat.end, end_time=ns(event.at))
    else:
        run.chat_end = ns(event.at)


def tokens(spans: Spans, event: TokensConsumed) -> None:
    """Add the cached-token count and end the chat span."""
    run = spans.run(event.run_id)
    if run is None or run.chat is None:
        return
    if event.cached_tokens:
        run.chat.set_attribute("gen_ai.usage.cache_read.input_tokens", event.cached_tokens)
    run.settle_chat()


def rate_limited(spans: Spans, event: ProviderRateLimited) -> None:
    """A span event on the open chat span (else the run span)."""
    run = spans.run(event.run_id)
    if run is None:
        return
    (run.chat or run.span).add_event(
        "openprogram.provider.rate_limited",
        {
            "openprogram.retry_after_s": event.retry_after_seconds,
            "openprogram.attempt": event.attempt,
        },
        timestamp=ns(event.at),
    )


def provider_error(spans: Spans, event: ProviderError) -> None:
    """A span event; a final failure also fails the open chat span and marks the run."""
    run = spans.run(event.run_id)
    if run is None:
        return
    error_type = str(event.http_status) if event.http_status is not None else event.reason
    attributes: dict[str, Any] = {
        "error.type": error_type,
        "openprogram.error.reason": event.reason,
        "openprogram.attempt": event.attempt,
        "openprogram.retrying": event.retrying,
    }
    chat = run.chat if run.chat_end is None else None
    (chat or run.span).add_event("openprogram.provider.error", attributes, timestamp=ns(event.at))
    if event.retrying:
        return
    run.error_type = error_type
    if chat is not None:
        chat.set_attribute("error.type", error_type)
        chat.set_status(Status(StatusCode.ERROR, event.message))
        defer(chat.end, end_time=ns(event.at))
        run.chat = None
