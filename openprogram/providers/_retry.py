"""The one owner of retries: exponential backoff with full jitter, ``Retry-After``, a deadline.

A provider call is a series of attempts. An attempt that fails with a
retryable ``LLMError`` *before any content reached the caller* is tried again
after a delay; once a text, thinking or tool-call fragment has been passed on,
a retry would repeat it, so a failure then is final. Nothing above the
provider retries model calls.

Delays: the server's ``Retry-After`` when it sent one (up to
``MAX_RETRY_AFTER_S``; a longer wait is returned to the caller as the error),
else full jitter — uniform in ``[0, min(max_s, base_s * 2**(retry - 1))]``
("Exponential Backoff And Jitter", AWS Architecture Blog). A retry whose delay
would end past the deadline is not attempted.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass

from openprogram.exceptions import LLMError
from openprogram.providers.base import (
    ProviderEvent,
    RequestSent,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)

__all__ = ["EXEC_HINT", "MAX_RETRY_AFTER_S", "Backoff", "deadline_error", "with_retries"]

MAX_RETRY_AFTER_S = 60.0
"""A server asking for a longer wait gets its error raised instead of a silent sleep."""

_CONTENT = (TextDelta, ThinkingDelta, ToolCallDelta)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Full-jitter exponential backoff."""

    base_s: float = 0.5
    """Upper bound of the first delay."""
    max_s: float = 20.0
    """Cap of the upper bound."""

    def delay(self, retry: int) -> float:
        """A random delay before retry number ``retry`` (1-based)."""
        return random.uniform(0.0, min(self.max_s, self.base_s * 2 ** (retry - 1)))


EXEC_HINT = "raise exec(timeout_s=...) if the model needs longer"


def deadline_error(what: str) -> LLMError:
    """The error for a deadline (``exec(timeout_s=...)``) that passed."""
    return LLMError(
        f"the deadline passed {what}; {EXEC_HINT}",
        reason="timeout",
        retryable=False,
    )


async def with_retries(
    attempt: Callable[[], AsyncGenerator[ProviderEvent, None]],
    *,
    body_size: int,
    max_retries: int,
    deadline: float | None,
    backoff: Backoff,
    provider: str,
    model: str,
) -> AsyncIterator[ProviderEvent]:
    """Run ``attempt`` until it completes, retrying retryable failures.

    Yields ``RequestSent`` before each attempt, the attempt's own events and
    ``RetryScheduled`` before each retry.

    Raises:
        LLMError: The last failure, with ``attempts``, ``provider`` and ``model`` set.
    """
    number = 0
    while True:
        number += 1
        if deadline is not None and time.monotonic() >= deadline:
            raise _label(deadline_error("before the request was sent"), number - 1, provider, model)
        yield RequestSent(attempt=number, prompt_size_bytes=body_size)
        delivered = False
        try:
            # aclosing: a caller that stops early must not leave the response open.
            async with aclosing(attempt()) as events:
                async for event in events:
                    delivered = delivered or isinstance(event, _CONTENT)
                    yield event
            return
        except LLMError as err:
            _label(err, number, provider, model)
            delay = None if delivered else _delay(err, number, max_retries, deadline, backoff)
            if delay is None:
                raise
            yield RetryScheduled(attempt=number, delay_s=delay, error=err)
        await asyncio.sleep(delay)


def _delay(
    err: LLMError, number: int, max_retries: int, deadline: float | None, backoff: Backoff
) -> float | None:
    if not err.retryable or number > max_retries:
        return None
    if err.retry_after_s is not None:
        if err.retry_after_s > MAX_RETRY_AFTER_S:
            _append(err, f"not retried: the server asks to wait {err.retry_after_s:g} s")
            return None
        delay = err.retry_after_s
    else:
        delay = backoff.delay(number)
    if deadline is not None and time.monotonic() + delay >= deadline:
        _append(err, "not retried: the next attempt would start past the deadline")
        return None
    return delay


def _append(err: LLMError, note: str) -> None:
    err.message = f"{err.message} ({note})"
    err.args = (err.message,)


def _label(err: LLMError, attempts: int, provider: str, model: str) -> LLMError:
    err.attempts = max(attempts, 1)
    err.provider = err.provider or provider
    err.model = err.model or model
    return err
