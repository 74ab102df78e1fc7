"""``FallbackProvider``: when one provider fails for good, the next one takes the model call.

``FallbackProvider([primary, secondary, ...])`` — or the provider string
``"openai:gpt-4o-mini|anthropic:claude-haiku-4-5"`` — sends every model call
to the primary first. When that call raises an ``LLMError`` its own retries
could not cure (a 5xx after the retries, a rate limit or used-up quota, a
connection failure, the provider's own timeout), the next provider gets the
same request, and so on down the list; when none is left, the last failure is
raised. Which failures move on is ``fall_back_on``: a collection of
``LLMError.reason`` values (``DEFAULT_FALLBACK_REASONS``) or a predicate.
Everything else passes through at once: a bad request, a rejected key, an
unknown model, a prompt too long for the context window, filtered content, a
cancelled call, and errors that are not an ``LLMError`` at all.

Streaming: once a text, thinking or tool-call fragment of a reply has been
passed on, another provider's reply would follow the start of this one, so a
failure after that point is final (as it is for retries). Before it, falling
back is invisible to the program except in the events: a ``FallbackScheduled``
provider event, which the runtime reports as ``ProviderFallback``, and every
later event of the call names the provider that took it.

Models: the request's model (``Runtime(model=...)``, ``exec(model=...)``, by
default the primary's) goes to the primary only; every other provider is asked
for its own model, since a model id means nothing to another vendor.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import replace
from typing import TypeAlias, get_args

from openprogram.exceptions import ConfigurationError, LLMError, LLMErrorReason, UserError
from openprogram.providers import resolve_provider
from openprogram.providers.base import (
    FallbackScheduled,
    Provider,
    ProviderEvent,
    ProviderRequest,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)

__all__ = ["DEFAULT_FALLBACK_REASONS", "FallbackProvider", "FallbackRule"]

DEFAULT_FALLBACK_REASONS: frozenset[LLMErrorReason] = frozenset(
    {"server", "rate_limit", "transport", "timeout"}
)
"""Failures that move on to the next provider by default: what another vendor may not share
(an outage, a rate limit or quota, an unreachable host, a provider that stopped answering).
Never by default: ``auth``, ``invalid_request``, ``context_length``, ``content_filter`` —
the request or the configuration is at fault, and another provider would most likely refuse it
too, or hide the mistake."""

FallbackRule: TypeAlias = Collection[LLMErrorReason] | Callable[[LLMError], bool]
"""Which failures fall back: ``LLMError.reason`` values, or ``rule(error) -> bool``."""

_CONTENT = (TextDelta, ThinkingDelta, ToolCallDelta)
_REASONS = frozenset(get_args(LLMErrorReason))


class FallbackProvider:
    """Try each provider in turn until one answers (see the module docstring for the rules).

    Args:
        providers: The primary first, then the fallbacks, in order; provider objects or
            provider strings (``"anthropic:claude-haiku-4-5"``). Every provider but the
            primary must name its model.
        fall_back_on: The ``LLMError.reason`` values that move on to the next provider
            (default ``DEFAULT_FALLBACK_REASONS``), or a predicate ``rule(error) -> bool``.
            A call whose deadline (``exec(timeout_s=...)``) has passed never falls back.

    Raises:
        UserError: Fewer than two providers, or an unknown reason.
        ConfigurationError: A fallback names no model.

    Example:
        >>> from openprogram.testing import ScriptedProvider
        >>> p = FallbackProvider([ScriptedProvider(["a"]), ScriptedProvider(["b"])])
        >>> p.name, len(p.providers)
        ('scripted', 2)
    """

    def __init__(
        self,
        providers: Sequence[Provider | str],
        *,
        fall_back_on: FallbackRule = DEFAULT_FALLBACK_REASONS,
    ) -> None:
        if isinstance(providers, str) or len(providers) < 2:
            raise UserError(
                "FallbackProvider(providers=...): give a list of at least two providers, the "
                'primary first, e.g. ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"]'
            )
        self._providers = tuple(_provider(p, i) for i, p in enumerate(providers))
        self._falls_back = _rule(fall_back_on)

    @property
    def providers(self) -> tuple[Provider, ...]:
        """The providers, the primary first."""
        return self._providers

    @property
    def name(self) -> str:
        """The primary's id (events name the provider that actually answered)."""
        return self._providers[0].name

    @property
    def model(self) -> str | None:
        """The primary's default model."""
        return self._providers[0].model

    @property
    def native_structured_output(self) -> bool:
        """Whether every provider honours ``response_format`` natively.

        One that does not makes the runtime use its hidden submit tool, which
        works on all of them, whichever one ends up answering.
        """
        return all(p.native_structured_output for p in self._providers)

    def __repr__(self) -> str:
        return f"FallbackProvider({list(self._providers)!r})"

    async def aclose(self) -> None:
        """Close every provider that can be closed."""
        for provider in self._providers:
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()

    async def __aenter__(self) -> FallbackProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Stream the first provider's reply that does not fail in a way that falls back.

        Raises:
            LLMError: The last provider's failure, or one that does not fall back (each
                earlier failure is attached as a note).
        """
        failures: list[LLMError] = []
        for index, provider in enumerate(self._providers):
            if failures:
                yield FallbackScheduled(
                    failed=self._providers[index - 1].name,
                    provider=provider.name,
                    model=provider.model,
                    error=failures[-1],
                )
            asked = request if index == 0 else replace(request, model=provider.model)
            events = provider.stream(asked)
            delivered = False
            try:
                async for event in events:
                    delivered = delivered or isinstance(event, _CONTENT)
                    yield event
                return
            except LLMError as err:
                if delivered or index == len(self._providers) - 1 or not self._moves_on(err, asked):
                    for earlier in failures:
                        err.add_note(f"FallbackProvider: tried first: {earlier}")
                    raise
                failures.append(err)
            finally:
                close = getattr(events, "aclose", None)
                if close is not None:  # end that provider's stream (and its HTTP response) now
                    await close()

    def _moves_on(self, error: LLMError, request: ProviderRequest) -> bool:
        if request.deadline is not None and time.monotonic() >= request.deadline:
            return False  # no time left: another provider would only fail on the deadline
        return self._falls_back(error)


def _provider(value: Provider | str, index: int) -> Provider:
    provider = resolve_provider(value) if isinstance(value, str) else value
    if not callable(getattr(provider, "stream", None)):
        raise UserError(
            f"FallbackProvider(providers[{index}]={value!r:.60}) is not a provider: give "
            "provider objects or provider strings like 'openai:gpt-4o-mini'"
        )
    if index and not provider.model:
        raise ConfigurationError(
            f"FallbackProvider(providers[{index}]={provider!r:.80}) names no model: a fallback "
            "is asked for its own model, so give it one (e.g. 'anthropic:claude-haiku-4-5', "
            "or model=... to its constructor)"
        )
    return provider


def _rule(value: FallbackRule) -> Callable[[LLMError], bool]:
    if callable(value):
        return value
    reasons = frozenset((value,) if isinstance(value, str) else value)
    unknown = sorted(str(r) for r in reasons - _REASONS)
    if unknown:
        raise UserError(
            f"FallbackProvider(fall_back_on=...): unknown reason(s) {unknown}; use LLMError "
            f"reasons ({', '.join(sorted(_REASONS))}) or a function of the error"
        )
    return lambda error: error.reason in reasons
