"""A shared rate limiter for model calls, and the provider wrapper that applies it.

The limiter hands out start times (a GCRA-style schedule): each call reserves
the next free slot, ``1 / rate`` seconds after the previous one, with up to
``burst`` calls allowed at once after an idle spell. Reserving is a short
computation under a lock, so it works from any thread and any event loop; the
caller then sleeps until its slot. A Ray batch hosts one limiter in an actor and
its workers reserve through it (``openprogram.batch._ray``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from typing import Protocol

from openprogram.exceptions import UserError
from openprogram.providers.base import Provider, ProviderEvent, ProviderRequest

__all__ = ["Limiter", "RateLimitedProvider", "RateLimiter"]


class Limiter(Protocol):
    """Anything that can make a caller wait for its turn."""

    async def acquire(self) -> None:
        """Return when the caller may start one call."""
        ...


class RateLimiter:
    """At most ``rate`` calls per second on average, bursts of up to ``burst``.

    Thread-safe and loop-agnostic: one limiter may be shared by every item of a
    batch (sync items run their own event loops on worker threads) and by
    several batches.

    Args:
        rate: Calls per second (e.g. ``500 / 60`` for 500 requests a minute).
        burst: Calls that may start together after an idle spell.

    Example:
        >>> limiter = RateLimiter(2.0)
        >>> [round(limiter.reserve(), 1) for _ in range(3)]
        [0.0, 0.5, 1.0]
    """

    def __init__(self, rate: float, *, burst: int = 1) -> None:
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not rate > 0:
            raise UserError(
                f"rate limit {rate!r} is not a positive number of calls per second "
                "(e.g. rate_limit=5 or rate_limit=500 / 60 for 500 a minute)"
            )
        if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
            raise UserError(f"RateLimiter(burst={burst!r}) must be an int >= 1")
        self.rate = float(rate)
        self.burst = burst
        self._interval = 1.0 / self.rate
        self._lock = threading.Lock()
        self._next = 0.0  # theoretical start of the next call if no burst allowance were left

    def __repr__(self) -> str:
        return f"RateLimiter(rate={self.rate:g}, burst={self.burst})"

    def reserve(self) -> float:
        """Reserve the next slot; return how many seconds to wait before starting."""
        with self._lock:
            now = time.monotonic()
            slot = max(self._next, now)
            start = max(now, slot - (self.burst - 1) * self._interval)
            self._next = slot + self._interval
        return start - now

    async def acquire(self) -> None:
        """Sleep until a reserved slot comes."""
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)


class RateLimitedProvider:
    """A provider that waits for a limiter before each model call of the provider it wraps.

    The wait happens before the request is built, so it counts in the call's
    latency; retries inside the wrapped provider follow its own backoff (they
    answer the vendor's own rate limiting) and are not limited again.

    Args:
        provider: The provider to wrap.
        limiter: The limiter to wait for (e.g. a shared ``RateLimiter``).
    """

    def __init__(self, provider: Provider, limiter: Limiter) -> None:
        self.provider = provider
        self.limiter = limiter

    def __repr__(self) -> str:
        return f"RateLimitedProvider({self.provider!r}, {self.limiter!r})"

    @property
    def name(self) -> str:
        """The wrapped provider's id."""
        return self.provider.name

    @property
    def model(self) -> str | None:
        """The wrapped provider's default model."""
        return self.provider.model

    @property
    def native_structured_output(self) -> bool:
        """Whether the wrapped provider honours ``response_format`` natively."""
        return self.provider.native_structured_output

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Wait for the limiter, then stream the wrapped provider's events."""
        await self.limiter.acquire()
        events = self.provider.stream(request)
        try:
            async for event in events:
                yield event
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:  # close the wrapped stream (and its HTTP response) with ours
                await aclose()
