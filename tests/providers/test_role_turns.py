"""The wires that take role turns (Anthropic, Gemini, Bedrock Converse) map history and usage alike.

Each rejects two turns of one role in a row, so a run of same-role messages
becomes one turn; and Anthropic and Converse count prompt-cache reads and
writes apart from their input tokens, which ``Usage.input_tokens`` includes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from openprogram.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from openprogram.providers import AnthropicProvider, BedrockProvider, GeminiProvider
from openprogram.providers.base import Provider

from ._helpers import ADD, drive, request
from ._server import Reply, WireServer

pytestmark = pytest.mark.usefixtures("clean_env")


def anthropic(wire: WireServer) -> Provider:
    return AnthropicProvider(base_url=wire.url, api_key="sk-ant-test", model="claude", stream=False)


def gemini(wire: WireServer) -> Provider:
    return GeminiProvider(base_url=wire.url, api_key="AIza-test", model="gemini", stream=False)


def bedrock(wire: WireServer) -> Provider:
    return BedrockProvider(
        endpoint_url=wire.url,
        region="us-west-2",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
        model="anthropic.claude",
        stream=False,
    )


WIRES: dict[str, Callable[[WireServer], Provider]] = {
    "anthropic": anthropic,
    "gemini": gemini,
    "bedrock": bedrock,
}

# (role of the model, key of a turn's blocks, the history field) per wire
SHAPES = {
    "anthropic": ("assistant", "content", "messages"),
    "gemini": ("model", "parts", "contents"),
    "bedrock": ("assistant", "content", "messages"),
}


def text_body(wire_name: str, usage: dict[str, int] | None = None) -> dict[str, Any]:
    if wire_name == "anthropic":
        return {
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "usage": usage or {"input_tokens": 1, "output_tokens": 1},
        }
    if wire_name == "gemini":
        parts = [{"text": "ok"}]
        return {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]
        }
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
        "stopReason": "end_turn",
        "usage": usage or {"inputTokens": 1, "outputTokens": 1},
    }


@pytest.mark.parametrize("wire_name", sorted(WIRES))
def test_same_role_messages_become_one_turn(wire: WireServer, wire_name: str) -> None:
    history = (
        UserMessage("first"),
        AssistantMessage((TextContent(""),)),  # cut off before any text: nothing to send
        UserMessage("second"),
        AssistantMessage((TextContent("adding"), ToolCall("c1", "add", {"a": 1, "b": 2}))),
        ToolResultMessage("c1", "add", "3"),
        UserMessage("and now?"),  # a steering message right after the results
    )
    wire.push(Reply(body=text_body(wire_name)))
    drive(WIRES[wire_name](wire), request(*history, tools=(ADD,)))

    model_role, blocks, field = SHAPES[wire_name]
    turns = wire.requests[0].json[field]
    assert [(t["role"], len(t[blocks])) for t in turns] == [
        ("user", 2),
        (model_role, 2),
        ("user", 2),
    ]


@pytest.mark.parametrize(
    ("wire_name", "usage"),
    [
        (
            "anthropic",
            {
                "input_tokens": 10,
                "output_tokens": 3,
                "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 5,
            },
        ),
        (
            "bedrock",
            {
                "inputTokens": 10,
                "outputTokens": 3,
                "cacheReadInputTokens": 100,
                "cacheWriteInputTokens": 5,
            },
        ),
    ],
)
def test_cache_reads_and_writes_count_as_input(
    wire: WireServer, wire_name: str, usage: dict[str, int]
) -> None:
    wire.push(Reply(body=text_body(wire_name, usage)))
    run = drive(WIRES[wire_name](wire), request("hi"))
    assert run.message.usage == Usage(input_tokens=115, output_tokens=3, cached_tokens=100)
