"""OpenAIResponsesProvider against a loopback server speaking the Responses wire format.

Fixtures follow the OpenAI API reference: "Responses → Create a model
response" (``instructions``, ``input`` items, function tools with ``strict``,
``tool_choice``, ``text.format``), "The response object" (``output`` items
``reasoning``/``message``/``function_call``, ``status``,
``incomplete_details``, ``usage``) and "Streaming events"
(``response.created``, ``response.output_item.added``/``.done``,
``response.output_text.delta``, ``response.function_call_arguments.delta``,
``response.reasoning_summary_text.delta``, ``response.completed``,
``response.incomplete``, ``response.failed``, ``error``).
"""

from __future__ import annotations

from typing import Any

import pytest

from openprogram.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from openprogram.providers import OpenAIResponsesProvider, ResponseFormat

from ._helpers import ADD, WEATHER, drive, fail, request
from ._server import Reply, WireServer, every, sse

pytestmark = pytest.mark.usefixtures("clean_env")

REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "encrypted_content": "gAAAA",
    "summary": [{"type": "summary_text", "text": "Need the sum."}],
}
MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "Adding.", "annotations": []}],
}
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "add",
    "arguments": '{"a":2,"b":3}',
    "status": "completed",
}
USAGE = {
    "input_tokens": 40,
    "input_tokens_details": {"cached_tokens": 16},
    "output_tokens": 12,
    "output_tokens_details": {"reasoning_tokens": 4},
    "total_tokens": 52,
}


def provider(wire: WireServer, **options: Any) -> OpenAIResponsesProvider:
    options.setdefault("api_key", "sk-test")
    options.setdefault("model", "gpt-5-mini")
    options.setdefault("backoff_base_s", 0.001)
    return OpenAIResponsesProvider(base_url=f"{wire.url}/v1", **options)


def response(
    output: list[dict[str, Any]], status: str = "completed", **extra: Any
) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "status": status,
        "model": "gpt-5-mini",
        "output": output,
        "usage": USAGE,
        "error": None,
        **extra,
    }


def e(kind: str, **data: Any) -> tuple[str, dict[str, Any]]:
    return (kind, {"type": kind, **data})


def completed(output: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    return e("response.completed", response=response(output))


def text_reply(text: str = "ok") -> Reply:
    message = {**MESSAGE, "content": [{"type": "output_text", "text": text, "annotations": []}]}
    return Reply(
        chunks=[
            sse(
                e(
                    "response.output_text.delta",
                    output_index=0,
                    content_index=0,
                    item_id="msg_1",
                    delta=text,
                ),
                completed([message]),
            )
        ]
    )


def test_streamed_reasoning_text_and_function_call(wire: WireServer) -> None:
    body = sse(
        e("response.created", response=response([], status="in_progress")),
        e(
            "response.output_item.added",
            output_index=0,
            item={"type": "reasoning", "id": "rs_1", "summary": []},
        ),
        e(
            "response.reasoning_summary_text.delta",
            output_index=0,
            item_id="rs_1",
            summary_index=0,
            delta="Need the ",
        ),
        e(
            "response.reasoning_summary_text.delta",
            output_index=0,
            item_id="rs_1",
            summary_index=0,
            delta="sum.",
        ),
        e("response.output_item.done", output_index=0, item=REASONING),
        e(
            "response.output_item.added",
            output_index=1,
            item={**MESSAGE, "status": "in_progress", "content": []},
        ),
        e(
            "response.output_text.delta",
            output_index=1,
            content_index=0,
            item_id="msg_1",
            delta="Add",
        ),
        e(
            "response.output_text.delta",
            output_index=1,
            content_index=0,
            item_id="msg_1",
            delta="ing.",
        ),
        e("response.output_item.done", output_index=1, item=MESSAGE),
        e(
            "response.output_item.added",
            output_index=2,
            item={**CALL, "arguments": "", "status": "in_progress"},
        ),
        e(
            "response.function_call_arguments.delta",
            output_index=2,
            item_id="fc_1",
            delta='{"a":2,',
        ),
        e("response.function_call_arguments.delta", output_index=2, item_id="fc_1", delta='"b":3}'),
        e(
            "response.function_call_arguments.done",
            output_index=2,
            item_id="fc_1",
            arguments='{"a":2,"b":3}',
        ),
        e("response.output_item.done", output_index=2, item=CALL),
        completed([REASONING, MESSAGE, CALL]),
    )
    wire.push(Reply(chunks=every(body, 97)))
    run = drive(provider(wire), request("2+3", system="Be exact.", tools=(ADD,)))

    assert run.thinking == "Need the sum."
    assert run.text == "Adding."
    assert "".join(d.arguments_delta for d in run.tool_deltas) == '{"a":2,"b":3}'
    message = run.message
    assert message.content == (
        ThinkingContent("Need the sum."),
        TextContent("Adding."),
        ToolCall("call_1", "add", {"a": 2, "b": 3}),
    )
    assert message.content[0].provider_meta == {
        "item": {
            "type": "reasoning",
            "id": "rs_1",
            "summary": REASONING["summary"],
            "encrypted_content": "gAAAA",
        }
    }
    assert message.content[2].provider_meta == {"id": "fc_1"}
    assert message.stop_reason == "tool_calls"
    assert (
        message.usage.input_tokens,
        message.usage.cached_tokens,
        message.usage.output_tokens,
    ) == (40, 16, 12)

    seen = wire.requests[0]
    assert seen.path == "/v1/responses"
    assert seen.json == {
        "model": "gpt-5-mini",
        "instructions": "Be exact.",
        "input": [{"role": "user", "content": "2+3"}],
        "tools": [
            {
                "type": "function",
                "name": "add",
                "description": "Add two integers.",
                "parameters": ADD["parameters"],
                "strict": False,
            }
        ],
        "tool_choice": "auto",
        "stream": True,
    }


def test_history_replays_items_with_their_ids(wire: WireServer) -> None:
    history = (
        UserMessage((TextContent("see"), ImageContent(data="aGk=", mime_type="image/png"))),
        AssistantMessage(
            (
                ThinkingContent("Need the sum.", provider_meta={"item": REASONING}),
                TextContent("Adding.", provider_meta={"id": "msg_1"}),
                ToolCall("call_1", "add", {"a": 2, "b": 3}, provider_meta={"id": "fc_1"}),
            )
        ),
        ToolResultMessage("call_1", "add", "5"),
        AssistantMessage((TextContent("It is 5."),)),
    )
    wire.push(text_reply())
    drive(provider(wire), request(*history, tools=(ADD,)))
    assert wire.requests[0].json["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "see"},
                {"type": "input_image", "image_url": "data:image/png;base64,aGk="},
            ],
        },
        REASONING,
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Adding.", "annotations": []}],
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "add",
            "arguments": '{"a": 2, "b": 3}',
            "id": "fc_1",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "5"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "It is 5.", "annotations": []}],
        },
    ]


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", True, {"tool_choice": "auto"}),
        ("required", True, {"tool_choice": "required"}),
        ("none", True, {"tool_choice": "none"}),
        (
            {"type": "function", "name": "add"},
            True,
            {"tool_choice": {"type": "function", "name": "add"}},
        ),
        ("auto", False, {"tool_choice": "auto", "parallel_tool_calls": False}),
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
    body = wire.requests[0].json
    assert {k: body[k] for k in ("tool_choice", "parallel_tool_calls") if k in body} == expected


def test_no_tools_means_no_tool_fields(wire: WireServer) -> None:
    wire.push(text_reply())
    drive(provider(wire), request("hi", tool_choice="required", parallel_tool_calls=False))
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(wire.requests[0].json)


def test_strict_tools_and_text_format(wire: WireServer) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    wire.push(text_reply('{"n": 1}'))
    drive(
        provider(wire, strict_tools=True),
        request("n", tools=(WEATHER,), response_format=ResponseFormat(name="n", schema=schema)),
    )
    body = wire.requests[0].json
    assert body["tools"][0]["strict"] is True
    assert body["tools"][0]["parameters"]["required"] == ["city", "units"]
    assert body["text"] == {
        "format": {
            "type": "json_schema",
            "name": "n",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"n": {"type": ["integer", "null"]}},
                "required": ["n"],
                "additionalProperties": False,
            },
        }
    }


def test_incomplete_response_is_length_without_calls(wire: WireServer) -> None:
    final = response(
        [MESSAGE, CALL], status="incomplete", incomplete_details={"reason": "max_output_tokens"}
    )
    wire.push(Reply(chunks=[sse(e("response.incomplete", response=final))]))
    message = drive(provider(wire), request("x", tools=(ADD,))).message
    assert (message.stop_reason, message.text, message.tool_calls) == ("length", "Adding.", [])


def test_failed_response_raises(wire: WireServer) -> None:
    final = response(
        [], status="failed", error={"code": "server_error", "message": "The server had an error"}
    )
    wire.push(Reply(chunks=[sse(e("response.failed", response=final))]), text_reply())
    run = drive(provider(wire))
    assert run.retries[0].error.reason == "server"
    assert run.retries[0].error.provider_message == "The server had an error"


def test_an_error_event_is_classified(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    e(
                        "error",
                        code="context_length_exceeded",
                        message="Your input exceeds the context window",
                        param=None,
                    )
                )
            ]
        )
    )
    assert fail(provider(wire)).failure.reason == "context_length"


def test_refusal_content(wire: WireServer) -> None:
    refusal = {**MESSAGE, "content": [{"type": "refusal", "refusal": "I can't."}]}
    wire.push(
        Reply(
            chunks=[
                sse(
                    e(
                        "response.refusal.delta",
                        output_index=0,
                        content_index=0,
                        item_id="msg_1",
                        delta="I can't.",
                    ),
                    completed([refusal]),
                )
            ]
        )
    )
    message = drive(provider(wire)).message
    assert (message.stop_reason, message.text) == ("refusal", "I can't.")


def test_non_streaming_response(wire: WireServer) -> None:
    wire.push(Reply(body=response([MESSAGE, CALL])))
    run = drive(provider(wire, stream=False), request("x", tools=(ADD,)))
    assert run.message.content == (
        TextContent("Adding."),
        ToolCall("call_1", "add", {"a": 2, "b": 3}),
    )
    assert "stream" not in wire.requests[0].json


def test_a_cut_stream_keeps_the_streamed_text(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    e(
                        "response.output_text.delta",
                        output_index=0,
                        content_index=0,
                        item_id="m",
                        delta="Hal",
                    ),
                    e("response.output_item.added", output_index=1, item={**CALL, "arguments": ""}),
                    e(
                        "response.function_call_arguments.delta",
                        output_index=1,
                        item_id="fc_1",
                        delta="{",
                    ),
                )
            ],
            cut=True,
        )
    )
    message = drive(provider(wire), request("x", tools=(ADD,))).message
    assert (message.stop_reason, message.text, message.tool_calls) == ("error", "Hal", [])
