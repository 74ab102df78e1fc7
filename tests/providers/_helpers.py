"""Driving a provider against the loopback server from plain (sync) tests."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from openprogram.exceptions import LLMError
from openprogram.messages import AssistantMessage, Message, UserMessage
from openprogram.providers.base import (
    ProviderEvent,
    ProviderRequest,
    RequestSent,
    ResponseDone,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)

ADD = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    },
}
WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
}


def request(*messages: Message | str, **options: Any) -> ProviderRequest:
    """A request with sensible defaults; strings become user messages."""
    history = tuple(UserMessage(m) if isinstance(m, str) else m for m in messages)
    options.setdefault("model", None)
    options.setdefault("system", None)
    return ProviderRequest(messages=history or (UserMessage("hi"),), **options)


@dataclass
class Run:
    """Everything one provider call produced."""

    events: list[ProviderEvent]
    error: LLMError | None = None

    @property
    def failure(self) -> LLMError:
        assert self.error is not None, f"expected an LLMError, got events {self.events!r}"
        return self.error

    @property
    def message(self) -> AssistantMessage:
        done = [e for e in self.events if isinstance(e, ResponseDone)]
        assert len(done) == 1, f"expected one ResponseDone, got {self.events!r}"
        assert self.events[-1] is done[0], "ResponseDone must be the last event"
        return done[0].message

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TextDelta))

    @property
    def thinking(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, ThinkingDelta))

    @property
    def tool_deltas(self) -> list[ToolCallDelta]:
        return [e for e in self.events if isinstance(e, ToolCallDelta)]

    @property
    def attempts(self) -> list[RequestSent]:
        return [e for e in self.events if isinstance(e, RequestSent)]

    @property
    def retries(self) -> list[RetryScheduled]:
        return [e for e in self.events if isinstance(e, RetryScheduled)]


async def _collect(provider: Any, req: ProviderRequest, run: Run) -> None:
    async with aclosing(provider.stream(req)) as events:
        async for event in events:
            run.events.append(event)


def drive(provider: Any, req: ProviderRequest | None = None) -> Run:
    """Run one call to completion (the provider is closed afterwards)."""
    run = Run([])

    async def main() -> None:
        async with provider:
            await _collect(provider, req or request(), run)

    asyncio.run(main())
    return run


def fail(provider: Any, req: ProviderRequest | None = None) -> Run:
    """Run one call that must raise ``LLMError``; the run keeps the events before it."""
    run = Run([])

    async def main() -> None:
        async with provider:
            try:
                await _collect(provider, req or request(), run)
            except LLMError as err:
                run.error = err

    asyncio.run(main())
    assert run.error is not None, f"expected an LLMError, got events {run.events!r}"
    return run


def kinds(events: Sequence[ProviderEvent]) -> list[str]:
    """Event class names, for asserting order."""
    return [type(e).__name__ for e in events]
