"""One model call on the wire: the provider's events turned into the reply and trace events.

``consume`` reads a provider's stream to its ``ResponseDone``: text and
thinking deltas go to the stream, each request sent, retry and fallback
becomes its trace event, and a provider failure raises ``LLMError`` after its
``ProviderError`` event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from openprogram.events import (
    ProviderError,
    ProviderFallback,
    ProviderRateLimited,
    ProviderRequestSent,
)
from openprogram.exceptions import LLMError
from openprogram.messages import AssistantMessage
from openprogram.providers.base import (
    FallbackScheduled,
    ProviderEvent,
    RequestSent,
    ResponseDone,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
)
from openprogram.runtime._run import RunState
from openprogram.runtime._stream import StreamTextDelta, StreamThinkingDelta

__all__ = ["consume", "provider_error"]


async def consume(
    run: RunState, events: AsyncIterator[ProviderEvent], clock: Callable[[], float]
) -> tuple[AssistantMessage, float | None]:
    """The reply, and when (by ``clock``, the loop's) the first request went on the wire."""
    sent_at: float | None = None
    try:
        async for event in events:
            if isinstance(event, ResponseDone):
                return event.message, sent_at
            if isinstance(event, TextDelta):
                run.stream(StreamTextDelta, text=event.text)
            elif isinstance(event, ThinkingDelta):
                run.stream(StreamThinkingDelta, text=event.text)
            elif isinstance(event, RequestSent):
                sent_at = sent_at if sent_at is not None else clock()
                if event.side_request is None:  # a side request is not an attempt of the reply
                    run.attempt = event.attempt
                run.emit(
                    ProviderRequestSent,
                    provider_id=run.answering[0],
                    model_id=run.answering[1],
                    prompt_size_bytes=event.prompt_size_bytes,
                    attempt=event.attempt,
                    side_request=event.side_request,
                )
            elif isinstance(event, RetryScheduled):
                _retry_scheduled(run, event)
            elif isinstance(event, FallbackScheduled):
                _fallback_scheduled(run, event)
    except LLMError as exc:
        provider_error(run, exc, retrying=False, attempt=exc.attempts)
        raise
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:  # end the provider's stream (and its HTTP response) promptly
            await aclose()
    provider_id, model_id = run.answering
    raise LLMError(
        f"provider {provider_id!r} ended its stream without a ResponseDone event; "
        "a Provider.stream must end with ResponseDone(message)",
        reason="server",
        provider=provider_id,
        model=model_id,
    )


def _retry_scheduled(run: RunState, event: RetryScheduled) -> None:
    error = event.error
    if error.reason == "rate_limit":
        wait = error.retry_after_s if error.retry_after_s is not None else event.delay_s
        run.emit(
            ProviderRateLimited,
            provider_id=run.answering[0],
            retry_after_seconds=wait,
            attempt=event.attempt,
        )
    else:
        provider_error(run, error, retrying=True, attempt=event.attempt)


def _fallback_scheduled(run: RunState, event: FallbackScheduled) -> None:
    """The provider failed for good; the next one of a fallback list takes the call."""
    error = event.error
    # The call goes on elsewhere, so the failure is not final (retrying=True).
    provider_error(run, error, retrying=True, attempt=error.attempts)
    run.emit(
        ProviderFallback,
        failed_provider_id=event.failed,
        provider_id=event.provider,
        model_id=event.model,
        reason=error.reason,
        http_status=error.http_status,
        message=error.message,
    )
    run.answering = (event.provider, event.model)
    run.attempt = 1


def provider_error(run: RunState, error: LLMError, *, retrying: bool, attempt: int) -> None:
    run.emit(
        ProviderError,
        provider_id=run.answering[0],
        reason=error.reason,
        message=error.message,
        http_status=error.http_status,
        retrying=retrying,
        attempt=attempt,
        body_excerpt=error.body_excerpt if run.trace_payloads else None,
    )
