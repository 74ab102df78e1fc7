"""Events of the model calls: requests on the wire, replies, rate limits, failures, tokens."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from openprogram.events._event import Event

__all__ = [
    "ProviderError",
    "ProviderFallback",
    "ProviderRateLimited",
    "ProviderRequestSent",
    "ProviderResponseReceived",
    "SideRequest",
    "TokensConsumed",
]


SideRequest: TypeAlias = Literal[
    "call_share",  # the local model's first-token probe (LocalProvider(call_threshold=...))
    "prompt_usage",  # the local model's one-token measure of a prompt the server did not count
]
"""What a request sent beside a reply's own is for (``ProviderRequestSent.side_request``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderRequestSent(Event):
    """A request went on the wire (once per attempt, and once per side request)."""

    provider_id: str
    """Provider id."""
    model_id: str | None
    """Model the request names."""
    prompt_size_bytes: int
    """Size of the request body."""
    attempt: int = 1
    """1 for the first try, 2 for the first retry, ... (1 for a side request: never retried)."""
    side_request: SideRequest | None = None
    """``None`` for a request of the model call's reply itself; for a request the provider
    sent beside it, what that one is for. Its tokens count with the reply
    (``ProviderResponseReceived.tokens``), and its time with the reply's ``latency_ms``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderResponseReceived(Event):
    """A complete reply arrived."""

    provider_id: str
    """Provider id."""
    model_id: str | None
    """Model that answered."""
    tokens: Mapping[str, int]
    """``{"input": ..., "output": ..., "total": ...}``."""
    latency_ms: float
    """From the first request on the wire (``ProviderRequestSent``) to the complete reply,
    retries and side requests included; what a provider does before sending (the local
    model starting its server) is not counted."""
    stop_reason: str
    """The reply's stop reason."""
    tool_calls: int
    """How many tool calls the reply asks for."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderRateLimited(Event):
    """The provider rate-limited a request; it will be retried."""

    provider_id: str
    """Provider id."""
    retry_after_seconds: float
    """How long the provider waits before retrying."""
    attempt: int
    """The attempt that was rate-limited."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderError(Event):
    """A provider call failed; ``retrying`` says whether another attempt follows."""

    provider_id: str
    """Provider id."""
    reason: str
    """``LLMError.reason`` (``"server"``, ``"auth"``, ...)."""
    message: str
    """What went wrong, as the provider reported it."""
    http_status: int | None
    """HTTP status, if any."""
    retrying: bool
    """``True`` when the provider retries after this failure."""
    attempt: int
    """The attempt that failed."""
    body_excerpt: str | None = None
    """``LLMError.body_excerpt``: the start of a body that was not the wire format, which
    may be the model's answer (only with ``trace_payloads=True``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderFallback(Event):
    """A provider failed before its reply began, and the model call moved on to the next one.

    Emitted by a ``FallbackProvider`` call, right after the ``ProviderError``
    (``retrying=True``) of the failure; the events that follow name the new provider,
    and ``ProviderResponseReceived.provider_id`` the one that answered.
    """

    failed_provider_id: str
    """The provider that failed."""
    provider_id: str
    """The provider that takes the call over."""
    model_id: str | None
    """The model asked of it."""
    reason: str
    """``LLMError.reason`` of the failure (``"server"``, ``"rate_limit"``, ...)."""
    http_status: int | None
    """HTTP status of the failure, if any."""
    message: str
    """What went wrong, as the failed provider reported it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TokensConsumed(Event):
    """Tokens one model call cost."""

    input_tokens: int
    """Prompt tokens, cached ones included."""
    output_tokens: int
    """Generated tokens."""
    total_tokens: int
    """Input plus output."""
    cached_tokens: int
    """Prompt tokens served from the provider's cache."""
