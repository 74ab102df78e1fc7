"""A program runs unchanged on every provider: Runtime.exec over each wire format.

One tool round trip per provider against the loopback server (the fixtures of
the provider's own test module), checking what the runtime sees: the answer,
text deltas on ``on_stream``, and usage summed in ``last_run.usage``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from openprogram.providers import (
    AnthropicProvider,
    BedrockProvider,
    GeminiProvider,
    OpenAIProvider,
    OpenAIResponsesProvider,
)
from openprogram.runtime import Runtime, StreamTextDelta

from . import test_anthropic as an
from . import test_bedrock as br
from . import test_gemini as ge
from . import test_openai as oa
from . import test_openai_responses as rs
from ._aws import event
from ._server import Reply, WireServer, sse

pytestmark = pytest.mark.usefixtures("clean_env")


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


def _openai(url: str) -> tuple[Any, list[Reply]]:
    call = sse(
        oa.call_start(0, "call_1", "add"),
        oa.call_args(0, '{"a": 2, "b": 3}'),
        oa.chunk(finish="tool_calls"),
        oa.USAGE,
        "[DONE]",
    )
    answer = sse(
        oa.chunk({"content": "It is "}),
        oa.chunk({"content": "5."}),
        oa.chunk(finish="stop"),
        oa.USAGE,
        "[DONE]",
    )
    return (
        OpenAIProvider(base_url=f"{url}/v1", api_key="k", model="m"),
        [Reply(chunks=[call]), Reply(chunks=[answer])],
    )


def _responses(url: str) -> tuple[Any, list[Reply]]:
    call = Reply(chunks=[sse(rs.completed([rs.CALL]))])
    message = {
        **rs.MESSAGE,
        "content": [{"type": "output_text", "text": "It is 5.", "annotations": []}],
    }
    answer = Reply(
        chunks=[
            sse(
                rs.e(
                    "response.output_text.delta",
                    output_index=0,
                    content_index=0,
                    item_id="msg_1",
                    delta="It is 5.",
                ),
                rs.completed([message]),
            )
        ]
    )
    return OpenAIResponsesProvider(base_url=f"{url}/v1", api_key="k", model="m"), [call, answer]


def _anthropic(url: str) -> tuple[Any, list[Reply]]:
    call = Reply(
        chunks=[
            sse(
                an.start(),
                an.block(0, {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}),
                an.delta(0, type="input_json_delta", partial_json='{"a": 2, "b": 3}'),
                an.stop(0),
                *an.end("tool_use"),
            )
        ]
    )
    return AnthropicProvider(base_url=url, api_key="k", model="m"), [
        call,
        an.text_reply("It is 5."),
    ]


def _gemini(url: str) -> tuple[Any, list[Reply]]:
    call = Reply(
        chunks=[
            sse(
                ge.chunk(
                    {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}},
                    finish="STOP",
                    usage={"promptTokenCount": 10, "candidatesTokenCount": 3},
                )
            )
        ]
    )
    return GeminiProvider(base_url=url, api_key="k", model="m"), [call, ge.text_reply("It is 5.")]


def _bedrock(url: str) -> tuple[Any, list[Reply]]:
    call = br.stream_reply(
        event(
            "contentBlockStart",
            {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "add"}}},
        ),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"a": 2, "b": 3}'}}},
        ),
        event("messageStop", {"stopReason": "tool_use"}),
        event("metadata", {"usage": {"inputTokens": 10, "outputTokens": 3}}),
    )
    provider = BedrockProvider(endpoint_url=url, api_key="k", model="m")
    return provider, [call, br.stream_reply(*br.text_frames("It is 5."))]


SETUPS: dict[str, Callable[[str], tuple[Any, list[Reply]]]] = {
    "openai": _openai,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "bedrock": _bedrock,
}


@pytest.mark.parametrize("kind", sorted(SETUPS))
def test_a_tool_round_trip_through_the_runtime(wire: WireServer, kind: str) -> None:
    provider, replies = SETUPS[kind](wire.url)
    wire.push(*replies)
    streamed: list[str] = []

    def on_stream(event: Any) -> None:
        if isinstance(event, StreamTextDelta):
            streamed.append(event.text)

    runtime = Runtime(provider, on_stream=on_stream)
    assert runtime.exec("What is 2 + 3?", tools=[add]) == "It is 5."
    assert "".join(streamed) == "It is 5."
    run = runtime.last_run
    assert run.iterations == 2
    assert run.usage.input_tokens > 0
    assert run.usage.output_tokens > 0
    first, second = (r.json for r in wire.requests)
    assert "add" in str(first)
    assert "5" in str(second)  # the tool result went back on the provider's wire
