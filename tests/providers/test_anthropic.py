"""AnthropicProvider against a loopback server speaking the Messages wire format.

Fixtures follow the Anthropic API reference: "Messages → Create a Message"
(request and response bodies, ``tool_choice`` with
``disable_parallel_tool_use``, ``tool_result`` with ``is_error``, thinking
blocks with ``signature``) and "Streaming Messages" (the named SSE events
``message_start``, ``content_block_start``, ``ping``, ``content_block_delta``
with ``text_delta``/``input_json_delta``/``thinking_delta``/``signature_delta``,
``content_block_stop``, ``message_delta``, ``message_stop``, ``error``).
"""

from __future__ import annotations

from typing import Any

import pytest

from openprogram.exceptions import ConfigurationError
from openprogram.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from openprogram.providers import AnthropicProvider

from ._helpers import ADD, WEATHER, drive, fail, kinds, request
from ._server import Reply, WireServer, awkward, sse

pytestmark = pytest.mark.usefixtures("clean_env")

KEY = "sk-ant-test-0123456789"


def provider(wire: WireServer, **options: Any) -> AnthropicProvider:
    options.setdefault("api_key", KEY)
    options.setdefault("model", "claude-sonnet-4-5")
    options.setdefault("backoff_base_s", 0.001)
    return AnthropicProvider(base_url=wire.url, **options)


def ev(name: str, **data: Any) -> tuple[str, dict[str, Any]]:
    return (name, {"type": name, **data})


def start(usage: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    return ev(
        "message_start",
        message={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "claude-sonnet-4-5-20250929",
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage or {"input_tokens": 25, "output_tokens": 1},
        },
    )


def block(index: int, content: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ev("content_block_start", index=index, content_block=content)


def delta(index: int, **d: Any) -> tuple[str, dict[str, Any]]:
    return ev("content_block_delta", index=index, delta=d)


def stop(index: int) -> tuple[str, dict[str, Any]]:
    return ev("content_block_stop", index=index)


def end(reason: str, output_tokens: int = 15) -> list[tuple[str, dict[str, Any]]]:
    return [
        ev(
            "message_delta",
            delta={"stop_reason": reason, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        ev("message_stop"),
    ]


def text_reply(text: str = "ok") -> Reply:
    return Reply(
        chunks=[
            sse(
                start(),
                block(0, {"type": "text", "text": ""}),
                delta(0, type="text_delta", text=text),
                stop(0),
                *end("end_turn"),
            )
        ]
    )


def test_streamed_thinking_text_and_tool_use(wire: WireServer) -> None:
    body = sse(
        start(
            {
                "input_tokens": 10,
                "cache_read_input_tokens": 90,
                "cache_creation_input_tokens": 5,
                "output_tokens": 1,
            }
        ),
        block(0, {"type": "thinking", "thinking": ""}),
        delta(0, type="thinking_delta", thinking="The user wants "),
        delta(0, type="thinking_delta", thinking="a sum."),
        delta(0, type="signature_delta", signature="EqQBCgIYAhIM"),
        stop(0),
        ("ping", {"type": "ping"}),
        block(1, {"type": "text", "text": ""}),
        delta(1, type="text_delta", text="Adding now."),
        stop(1),
        block(2, {"type": "tool_use", "id": "toolu_01", "name": "add", "input": {}}),
        delta(2, type="input_json_delta", partial_json=""),
        delta(2, type="input_json_delta", partial_json='{"a": 2'),
        delta(2, type="input_json_delta", partial_json=', "b": 40}'),
        stop(2),
        *end("tool_use", 42),
    )
    wire.push(Reply(chunks=awkward(body, [b"event:", b"\n\n", b"partial_json"])))
    run = drive(provider(wire), request("2+40?", system="Be exact.", tools=(ADD,)))

    message = run.message
    assert message.content == (
        ThinkingContent("The user wants a sum."),
        TextContent("Adding now."),
        ToolCall("toolu_01", "add", {"a": 2, "b": 40}),
    )
    assert message.content[0].provider_meta == {"signature": "EqQBCgIYAhIM"}
    assert message.stop_reason == "tool_calls"
    assert message.usage.input_tokens == 105
    assert message.usage.cached_tokens == 90
    assert message.usage.output_tokens == 42
    assert run.thinking == "The user wants a sum."
    assert run.text == "Adding now."

    seen = wire.requests[0]
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == KEY
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers
    assert seen.json == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "system": "Be exact.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "2+40?"}]}],
        "tools": [
            {"name": "add", "description": "Add two integers.", "input_schema": ADD["parameters"]}
        ],
        "tool_choice": {"type": "auto"},
        "stream": True,
    }


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", True, {"type": "auto"}),
        ("required", True, {"type": "any"}),
        ("none", True, {"type": "none"}),
        ({"type": "function", "name": "add"}, True, {"type": "tool", "name": "add"}),
        ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
    ],
)
def test_tool_choice_table(
    wire: WireServer, choice: Any, parallel: bool, expected: dict[str, Any]
) -> None:
    wire.push(text_reply())
    drive(
        provider(wire),
        request("hi", tools=(ADD,), tool_choice=choice, parallel_tool_calls=parallel),
    )
    assert wire.requests[0].json["tool_choice"] == expected


def test_no_tools_means_no_tool_fields(wire: WireServer) -> None:
    wire.push(text_reply())
    drive(provider(wire), request("hi", tool_choice="required"))
    assert not {"tools", "tool_choice"} & set(wire.requests[0].json)


def test_history_merges_turns_and_flags_errors(wire: WireServer) -> None:
    history = (
        UserMessage((TextContent("look"), ImageContent(data="aGk=", mime_type="image/jpeg"))),
        AssistantMessage(
            (
                ThinkingContent("signed", provider_meta={"signature": "sig-1"}),
                ThinkingContent("from another provider"),
                TextContent(""),
                ToolCall("toolu_1", "add", {"a": 1, "b": 2}),
                ToolCall("toolu_2", "get_weather", {"city": "Oslo"}),
            )
        ),
        ToolResultMessage("toolu_1", "add", "3"),
        ToolResultMessage("toolu_2", "get_weather", "no such city", is_error=True),
        UserMessage("and now?"),
    )
    wire.push(text_reply())
    drive(provider(wire), request(*history, tools=(ADD, WEATHER)))
    assert wire.requests[0].json["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/jpeg", "data": "aGk="},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "signed", "signature": "sig-1"},
                {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1, "b": 2}},
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "get_weather",
                    "input": {"city": "Oslo"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "no such city",
                    "is_error": True,
                },
                {"type": "text", "text": "and now?"},
            ],
        },
    ]


def test_non_streaming_message(wire: WireServer) -> None:
    wire.push(
        Reply(
            body={
                "id": "msg_2",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {"type": "text", "text": "Sure."},
                    {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {"a": 1, "b": 1}},
                ],
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 7},
            }
        )
    )
    run = drive(provider(wire, stream=False), request("1+1", tools=(ADD,)))
    assert run.message.content == (
        TextContent("Sure."),
        ToolCall("toolu_9", "add", {"a": 1, "b": 1}),
    )
    assert kinds(run.events) == ["RequestSent", "TextDelta", "ToolCallDelta", "ResponseDone"]
    assert "stream" not in wire.requests[0].json


@pytest.mark.parametrize(
    ("wire_reason", "stop_reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("refusal", "refusal"),
    ],
)
def test_stop_reasons(wire: WireServer, wire_reason: str, stop_reason: str) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    start(),
                    block(0, {"type": "text", "text": ""}),
                    delta(0, type="text_delta", text="x"),
                    stop(0),
                    *end(wire_reason),
                )
            ]
        )
    )
    assert drive(provider(wire)).message.stop_reason == stop_reason


def test_max_tokens_cuts_an_unfinished_tool_call(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    start(),
                    block(0, {"type": "tool_use", "id": "t", "name": "add", "input": {}}),
                    delta(0, type="input_json_delta", partial_json='{"a": 1, "b'),
                    *end("max_tokens"),
                )
            ]
        )
    )
    message = drive(provider(wire), request("x", tools=(ADD,))).message
    assert (message.stop_reason, message.tool_calls) == ("length", [])


def test_overloaded_529_is_retried(wire: WireServer) -> None:
    wire.push(
        Reply(
            529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        ),
        text_reply(),
    )
    run = drive(provider(wire))
    assert run.retries[0].error.http_status == 529
    assert run.retries[0].error.reason == "server"
    assert run.message.text == "ok"


def test_an_error_event_before_content_is_retried(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    start(),
                    ev("error", error={"type": "overloaded_error", "message": "Overloaded"}),
                )
            ]
        ),
        text_reply("second"),
    )
    run = drive(provider(wire))
    assert run.retries[0].error.provider_message == "Overloaded"
    assert run.message.text == "second"


def test_an_error_event_after_content_is_final(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    start(),
                    block(0, {"type": "text", "text": ""}),
                    delta(0, type="text_delta", text="partial"),
                    ev("error", error={"type": "overloaded_error", "message": "Overloaded"}),
                )
            ]
        ),
        text_reply(),
    )
    run = fail(provider(wire))
    assert run.failure.reason == "server"
    assert run.text == "partial"
    assert wire.pending == 1


def test_prompt_too_long_is_a_context_length_error(wire: WireServer) -> None:
    wire.push(
        Reply(
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens > 200000 maximum",
                },
            },
        )
    )
    assert fail(provider(wire)).failure.reason == "context_length"


def test_a_cut_stream_is_an_error_reply_without_calls(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    start(),
                    block(0, {"type": "text", "text": ""}),
                    delta(0, type="text_delta", text="Let me"),
                    block(1, {"type": "tool_use", "id": "t", "name": "add", "input": {}}),
                    delta(1, type="input_json_delta", partial_json='{"a": 1'),
                )
            ],
            cut=True,
        )
    )
    message = drive(provider(wire), request("x", tools=(ADD,))).message
    assert (message.stop_reason, message.text, message.tool_calls) == ("error", "Let me", [])


def test_a_missing_key_names_the_variable() -> None:
    with pytest.raises(ConfigurationError, match="set the ANTHROPIC_API_KEY environment variable"):
        drive(AnthropicProvider(model="claude-sonnet-4-5"))
