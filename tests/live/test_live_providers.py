"""Opt-in checks against the real provider APIs.

Each test runs only when its credentials are in the environment (otherwise it
is skipped: there is nothing to call). Run them with, e.g.::

    OPENAI_API_KEY=... python -m pytest tests/live -m live -q

Models default to small, cheap ones; override with ``OPENPROGRAM_LIVE_<NAME>_MODEL``
(``OPENAI``, ``RESPONSES``, ``ANTHROPIC``, ``GEMINI``, ``BEDROCK``, ``OLLAMA``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

import pytest

from openprogram.messages import AssistantMessage, ToolResultMessage, UserMessage
from openprogram.providers import (
    AnthropicProvider,
    BedrockProvider,
    GeminiProvider,
    OpenAIProvider,
    OpenAIResponsesProvider,
    ProviderRequest,
    ResponseDone,
    TextDelta,
)

pytestmark = pytest.mark.live

ADD = {
    "name": "add",
    "description": "Add two integers and return the sum.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    },
}


def _model(name: str, default: str) -> str:
    return os.environ.get(f"OPENPROGRAM_LIVE_{name}_MODEL", default)


def _needs(*variables: str) -> Any:
    missing = [v for v in variables if not os.environ.get(v)]
    return pytest.mark.skipif(bool(missing), reason=f"set {', '.join(missing)} to run")


PROVIDERS: dict[str, tuple[Any, Callable[[bool], Any]]] = {
    "openai": (
        _needs("OPENAI_API_KEY"),
        lambda s: OpenAIProvider(model=_model("OPENAI", "gpt-4o-mini"), stream=s),
    ),
    "openai-responses": (
        _needs("OPENAI_API_KEY"),
        lambda s: OpenAIResponsesProvider(model=_model("RESPONSES", "gpt-4o-mini"), stream=s),
    ),
    "anthropic": (
        _needs("ANTHROPIC_API_KEY"),
        lambda s: AnthropicProvider(model=_model("ANTHROPIC", "claude-3-5-haiku-latest"), stream=s),
    ),
    "gemini": (
        _needs("GEMINI_API_KEY"),
        lambda s: GeminiProvider(model=_model("GEMINI", "gemini-2.5-flash"), stream=s),
    ),
    "bedrock": (
        _needs("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"),
        lambda s: BedrockProvider(
            model=_model("BEDROCK", "us.anthropic.claude-3-5-haiku-20241022-v1:0"), stream=s
        ),
    ),
    "ollama": (
        _needs("OPENPROGRAM_LIVE_OLLAMA_MODEL"),
        lambda s: OpenAIProvider(
            model=_model("OLLAMA", ""),
            base_url="http://localhost:11434/v1",
            api_key_env=None,
            name="ollama",
            stream=s,
        ),
    ),
}
CASES = [
    pytest.param(name, stream, marks=PROVIDERS[name][0], id=f"{name}-{mode}")
    for name in PROVIDERS
    for stream, mode in ((True, "stream"), (False, "whole"))
]


async def _ask(provider: Any, request: ProviderRequest) -> tuple[AssistantMessage, str]:
    text, message = "", None
    async with provider:
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                text += event.text
            elif isinstance(event, ResponseDone):
                message = event.message
    assert message is not None
    return message, text


@pytest.mark.parametrize(("name", "stream"), CASES)
def test_a_forced_tool_call_and_its_answer(name: str, stream: bool) -> None:
    make = PROVIDERS[name][1]
    first = ProviderRequest(
        model=None,
        system="You are a calculator.",
        messages=(UserMessage("What is 17 + 25? Use the add tool."),),
        tools=(ADD,),
        tool_choice={"type": "function", "name": "add"},
    )
    reply, _ = asyncio.run(_ask(make(stream), first))
    (call,) = reply.tool_calls[:1]
    assert call.name == "add"
    assert dict(call.arguments) == {"a": 17, "b": 25}
    assert reply.usage.input_tokens > 0

    second = ProviderRequest(
        model=None,
        system="You are a calculator.",
        messages=(
            *first.messages,
            reply,
            *(ToolResultMessage(c.id, c.name, "42") for c in reply.tool_calls),
        ),
        tools=(ADD,),
        tool_choice="none",
    )
    answer, streamed = asyncio.run(_ask(make(stream), second))
    assert "42" in answer.text
    assert streamed == answer.text
    assert answer.stop_reason == "stop"
