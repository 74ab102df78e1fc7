"""OpenAIProvider (Chat Completions) against a loopback server speaking its wire format.

Fixtures follow the OpenAI API reference: "Chat Completions → Create chat
completion" (request body), "The chat completion object" (non-streamed reply)
and "The chat completion chunk object" (``data:`` events, ``delta.tool_calls``
fragments with ``index``, the usage chunk with empty ``choices`` sent when
``stream_options.include_usage`` is set, and the final ``data: [DONE]``).
"""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
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
from openprogram.providers import OpenAIProvider, ResponseFormat

from ._helpers import ADD, WEATHER, drive, fail, kinds, request
from ._server import Reply, WireServer, awkward, sse

pytestmark = pytest.mark.usefixtures("clean_env")

KEY = "sk-test-0123456789abcdef"


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with a single choice."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }


def call_start(index: int, call_id: str, name: str) -> dict[str, Any]:
    return chunk(
        {
            "tool_calls": [
                {
                    "index": index,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }
            ]
        }
    )


def call_args(index: int, fragment: str) -> dict[str, Any]:
    return chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})


USAGE = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "choices": [],
    "usage": {
        "prompt_tokens": 31,
        "completion_tokens": 17,
        "total_tokens": 48,
        "prompt_tokens_details": {"cached_tokens": 8},
    },
}


def provider(wire: WireServer, **options: Any) -> OpenAIProvider:
    options.setdefault("api_key", KEY)
    options.setdefault("model", "gpt-4o-mini")
    options.setdefault("backoff_base_s", 0.001)
    return OpenAIProvider(base_url=f"{wire.url}/v1", **options)


def tool_stream() -> bytes:
    return sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Checking "}),
        chunk({"content": "both — ünïcode."}),
        call_start(0, "call_a", "add"),
        call_args(0, '{"a": 4'),
        call_args(0, ', "b": 5}'),
        call_start(1, "call_w", "get_weather"),
        call_args(1, '{"city": "Par'),
        call_args(1, 'is"}'),
        chunk(finish="tool_calls"),
        USAGE,
        "[DONE]",
    )


def test_streamed_parallel_tool_calls_are_assembled_from_fragments(wire: WireServer) -> None:
    body = tool_stream().replace(b"\n", b"\r\n")
    # Split inside "data:", inside "\r\n" pairs, inside a multi-byte character and
    # inside the JSON of the arguments.
    pieces = awkward(body, [b"data:", b"\r\n\r\n", "ü".encode(), b'"Par', b"[DONE]"])
    assert len(pieces) > 20
    wire.push(Reply(chunks=pieces, chunk_delay_s=0.001))

    run = drive(provider(wire), request("add 4+5 and weather in Paris", tools=(ADD, WEATHER)))

    message = run.message
    assert message.text == "Checking both — ünïcode."
    assert message.tool_calls == [
        ToolCall("call_a", "add", {"a": 4, "b": 5}),
        ToolCall("call_w", "get_weather", {"city": "Paris"}),
    ]
    assert message.stop_reason == "tool_calls"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (31, 17)
    assert message.usage.cached_tokens == 8
    assert message.model == "gpt-4o-mini-2024-07-18"
    assert run.text == "Checking both — ünïcode."
    assert (
        "".join(d.arguments_delta for d in run.tool_deltas if d.index == 1) == '{"city": "Paris"}'
    )
    assert kinds(run.events)[0] == "RequestSent"


def test_request_body_and_headers_follow_the_reference(wire: WireServer) -> None:
    wire.push(Reply(chunks=[tool_stream()]))
    drive(provider(wire), request("hi", system="Be brief.", tools=(ADD,)))

    seen = wire.requests[0]
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["accept"] == "text/event-stream"
    assert seen.json == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "add",
                    "description": "Add two integers.",
                    "parameters": ADD["parameters"],
                },
            }
        ],
        "tool_choice": "auto",
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_extra_body_and_headers_are_sent(wire: WireServer) -> None:
    wire.push(Reply(chunks=[sse(chunk({"content": "ok"}), chunk(finish="stop"), "[DONE]")]))
    p = provider(
        wire,
        extra_body={"temperature": 0, "stream_options": {"x": 1}},
        extra_headers={"OpenAI-Organization": "org-1"},
    )
    drive(p)
    seen = wire.requests[0]
    assert seen.json["temperature"] == 0
    assert seen.json["stream_options"] == {"include_usage": True, "x": 1}
    assert seen.headers["openai-organization"] == "org-1"


def test_no_tools_means_no_tool_fields(wire: WireServer) -> None:
    wire.push(Reply(chunks=[sse(chunk({"content": "ok"}), chunk(finish="stop"), "[DONE]")]))
    run = drive(provider(wire), request("hi", tool_choice="required", parallel_tool_calls=False))
    assert run.message.text == "ok"
    assert run.message.stop_reason == "stop"
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(wire.requests[0].json)


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", True, {"tool_choice": "auto"}),
        ("required", True, {"tool_choice": "required"}),
        ("none", True, {"tool_choice": "none"}),
        (
            {"type": "function", "name": "add"},
            True,
            {"tool_choice": {"type": "function", "function": {"name": "add"}}},
        ),
        ("auto", False, {"tool_choice": "auto", "parallel_tool_calls": False}),
    ],
)
def test_tool_choice_table(
    wire: WireServer, choice: Any, parallel: bool, expected: dict[str, Any]
) -> None:
    wire.push(Reply(chunks=[sse(chunk({"content": "ok"}), chunk(finish="stop"), "[DONE]")]))
    drive(
        provider(wire),
        request("hi", tools=(ADD,), tool_choice=choice, parallel_tool_calls=parallel),
    )
    body = wire.requests[0].json
    assert {k: body[k] for k in ("tool_choice", "parallel_tool_calls") if k in body} == expected


def test_history_maps_every_message_kind(wire: WireServer, tmp_path: Any) -> None:
    png = tmp_path / "dot.png"
    png.write_bytes(b"\x89PNG fake")
    history = (
        UserMessage((TextContent("What is in"), ImageContent.from_path(png))),
        AssistantMessage(
            (
                ThinkingContent("hidden reasoning"),
                TextContent("Let me add."),
                ToolCall("call_1", "add", {"a": 1, "b": 2}),
                ToolCall("call_2", "add", {"a": 3, "b": 4}),
            )
        ),
        ToolResultMessage("call_1", "add", "3"),
        ToolResultMessage("call_2", "add", "boom", is_error=True),
        AssistantMessage((TextContent("3 and boom"),)),
        UserMessage("thanks"),
    )
    wire.push(Reply(chunks=[sse(chunk({"content": "ok"}), chunk(finish="stop"), "[DONE]")]))
    drive(provider(wire), request(*history))

    encoded = base64.b64encode(b"\x89PNG fake").decode()
    assert wire.requests[0].json["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{encoded}"}},
            ],
        },
        {
            "role": "assistant",
            "content": "Let me add.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 3, "b": 4}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "3"},
        {"role": "tool", "tool_call_id": "call_2", "content": "boom"},
        {"role": "assistant", "content": "3 and boom"},
        {"role": "user", "content": "thanks"},
    ]


def test_strict_tools_are_transformed_and_open_mappings_stay_non_strict(wire: WireServer) -> None:
    scores = {
        "name": "scores",
        "description": "",
        "parameters": {
            "type": "object",
            "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}},
        },
    }
    wire.push(Reply(chunks=[sse(chunk(finish="stop"), "[DONE]")]))
    drive(provider(wire, strict_tools=True), request("hi", tools=(WEATHER, scores)))

    weather, open_map = (t["function"] for t in wire.requests[0].json["tools"])
    assert weather["strict"] is True
    assert weather["parameters"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "units": {"type": ["string", "null"], "enum": ["celsius", "fahrenheit", None]},
        },
        "required": ["city", "units"],
        "additionalProperties": False,
    }
    assert "strict" not in open_map
    assert open_map["parameters"] == scores["parameters"]


def test_nulls_strict_mode_forced_are_removed_from_the_arguments(wire: WireServer) -> None:
    # Strict mode made "units" required-but-nullable; the model's null means "not given",
    # which the original schema (where null is invalid) expresses by leaving it out.
    nullable = {
        "name": "note",
        "description": "",
        "parameters": {"type": "object", "properties": {"text": {"type": ["string", "null"]}}},
    }
    args = '{"city": "Paris", "units": null}'
    wire.push(
        Reply(
            chunks=[
                sse(
                    call_start(0, "c1", "get_weather"),
                    call_args(0, args),
                    call_start(1, "c2", "note"),
                    call_args(1, '{"text": null}'),
                    chunk(finish="tool_calls"),
                    "[DONE]",
                )
            ]
        ),
        Reply(
            chunks=[
                sse(
                    call_start(0, "c1", "get_weather"),
                    call_args(0, args),
                    chunk(finish="tool_calls"),
                    "[DONE]",
                )
            ]
        ),
    )
    weather, note = drive(
        provider(wire, strict_tools=True), request("x", tools=(WEATHER, nullable))
    ).message.tool_calls
    assert weather.arguments == {"city": "Paris"}
    assert note.arguments == {"text": None}  # null was valid before strict mode: kept
    (plain,) = drive(provider(wire), request("x", tools=(WEATHER,))).message.tool_calls
    assert plain.arguments == {"city": "Paris", "units": None}  # not sent strict: untouched


def test_a_strict_json_answer_loses_the_forced_nulls(wire: WireServer) -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "unit": {"type": "string", "default": "kg"}},
        "required": ["n"],
    }
    wire.push(
        Reply(
            chunks=[
                sse(chunk({"content": '{"n": 3, "unit": null}'}), chunk(finish="stop"), "[DONE]")
            ]
        )
    )
    message = drive(
        provider(wire), request("n?", response_format=ResponseFormat(name="n", schema=schema))
    ).message
    assert json.loads(message.text) == {"n": 3}


def test_strict_can_be_asked_per_tool(wire: WireServer) -> None:
    wire.push(Reply(chunks=[sse(chunk(finish="stop"), "[DONE]")]))
    drive(provider(wire), request("hi", tools=({**ADD, "strict": True}, WEATHER)))
    add, weather = (t["function"] for t in wire.requests[0].json["tools"])
    assert add["strict"] is True
    assert "strict" not in weather


def test_response_format_is_sent_as_json_schema(wire: WireServer) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    wire.push(Reply(chunks=[sse(chunk({"content": '{"n": 3}'}), chunk(finish="stop"), "[DONE]")]))
    run = drive(
        provider(wire),
        request("n?", response_format=ResponseFormat(name="answer n", schema=schema)),
    )
    assert run.message.text == '{"n": 3}'
    assert wire.requests[0].json["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "answer_n",
            "strict": True,
            "schema": {**schema, "additionalProperties": False},
        },
    }
    assert provider(wire).native_structured_output is True


def test_non_streaming_uses_one_json_response(wire: WireServer) -> None:
    # "The chat completion object".
    wire.push(
        Reply(
            body={
                "id": "chatcmpl-2",
                "object": "chat.completion",
                "model": "gpt-4o-mini",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": {
                            "role": "assistant",
                            "content": None,
                            "refusal": None,
                            "tool_calls": [
                                {
                                    "id": "call_9",
                                    "type": "function",
                                    "function": {"name": "add", "arguments": '{"a":1,"b":1}'},
                                }
                            ],
                        },
                    }
                ],
                "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
            }
        )
    )
    run = drive(provider(wire, stream=False), request("1+1", tools=(ADD,)))
    assert run.message.tool_calls == [ToolCall("call_9", "add", {"a": 1, "b": 1})]
    assert run.message.usage.total_tokens == 12
    assert kinds(run.events) == ["RequestSent", "ToolCallDelta", "ResponseDone"]
    body = wire.requests[0].json
    assert "stream" not in body
    assert "stream_options" not in body
    assert wire.requests[0].headers["accept"] == "application/json"


def test_arguments_that_are_not_json_become_an_arguments_error(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    call_start(0, "c1", "add"),
                    call_args(0, '{"a": 1,'),
                    call_start(1, "c2", "add"),
                    call_args(1, "[1, 2]"),
                    chunk(finish="tool_calls"),
                    "[DONE]",
                )
            ]
        )
    )
    calls = drive(provider(wire), request("x", tools=(ADD,))).message.tool_calls
    assert [c.arguments for c in calls] == [{}, {}]
    assert calls[0].arguments_error is not None
    assert "not valid JSON" in calls[0].arguments_error
    assert calls[1].arguments_error is not None
    assert "JSON object" in calls[1].arguments_error


def test_a_cut_stream_keeps_text_and_drops_the_unfinished_call(wire: WireServer) -> None:
    body = sse(chunk({"content": "Adding"}), call_start(0, "c1", "add"), call_args(0, '{"a": 1'))
    wire.push(Reply(chunks=[body], cut=True))
    run = drive(provider(wire), request("x", tools=(ADD,)))
    assert run.message.stop_reason == "error"
    assert run.message.text == "Adding"
    assert run.message.tool_calls == []
    assert run.message.error is not None
    assert "dropped" in run.message.error
    assert len(run.attempts) == 1  # content was passed on: no retry


def test_a_stream_ending_without_finish_reason_is_cut(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    chunk({"content": "Half"}),
                    call_start(0, "c1", "add"),
                    call_args(0, '{"a": 1, "b": 2}'),
                )
            ]
        )
    )
    message = drive(provider(wire), request("x", tools=(ADD,))).message
    assert (message.stop_reason, message.text, message.tool_calls) == ("error", "Half", [])


def test_a_length_stop_never_yields_executable_calls(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    call_start(0, "c1", "add"),
                    call_args(0, '{"a": 1, "b": 2}'),
                    chunk(finish="length"),
                    "[DONE]",
                )
            ]
        )
    )
    message = drive(provider(wire), request("x", tools=(ADD,))).message
    assert (message.stop_reason, message.tool_calls) == ("length", [])


def test_a_stream_cut_before_any_content_is_retried(wire: WireServer) -> None:
    wire.push(
        Reply(chunks=[sse(chunk({"role": "assistant"}))], cut=True),
        Reply(chunks=[sse(chunk({"content": "fine"}), chunk(finish="stop"), "[DONE]")]),
    )
    run = drive(provider(wire))
    assert run.message.text == "fine"
    assert kinds(run.events) == [
        "RequestSent",
        "RetryScheduled",
        "RequestSent",
        "TextDelta",
        "ResponseDone",
    ]
    assert run.retries[0].error.reason == "transport"


def test_reasoning_fields_of_local_servers_become_thinking(wire: WireServer) -> None:
    # vLLM/DeepSeek stream "reasoning_content"; Ollama and OpenRouter "reasoning".
    wire.push(
        Reply(
            chunks=[
                sse(
                    chunk({"reasoning_content": "Let me "}),
                    chunk({"reasoning": "think."}),
                    chunk({"content": "42"}),
                    chunk(finish="stop"),
                    "[DONE]",
                )
            ]
        )
    )
    run = drive(provider(wire))
    assert run.thinking == "Let me think."
    assert run.message.content == (ThinkingContent("Let me think."), TextContent("42"))


def test_refusal_sets_the_refusal_stop_reason(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(chunk({"refusal": "I can't help with that."}), chunk(finish="stop"), "[DONE]")
            ]
        )
    )
    message = drive(provider(wire)).message
    assert (message.stop_reason, message.text) == ("refusal", "I can't help with that.")


def test_servers_that_omit_the_call_index_still_assemble(wire: WireServer) -> None:
    def start(call_id: str) -> dict[str, Any]:
        return chunk(
            {
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "add", "arguments": ""},
                    }
                ]
            }
        )

    def args(fragment: str) -> dict[str, Any]:
        return chunk({"tool_calls": [{"function": {"arguments": fragment}}]})

    wire.push(
        Reply(
            chunks=[
                sse(
                    start("c1"),
                    args('{"a":1,'),
                    args('"b":2}'),
                    start("c2"),
                    args('{"a":3,"b":4}'),
                    chunk(finish="tool_calls"),
                    "[DONE]",
                )
            ]
        )
    )
    calls = drive(provider(wire), request("x", tools=(ADD,))).message.tool_calls
    assert [(c.id, dict(c.arguments)) for c in calls] == [
        ("c1", {"a": 1, "b": 2}),
        ("c2", {"a": 3, "b": 4}),
    ]


def test_an_sse_stream_without_a_final_blank_line_still_completes(wire: WireServer) -> None:
    body = sse(chunk({"content": "ok"})) + b"data: " + json.dumps(chunk(finish="stop")).encode()
    wire.push(Reply(chunks=[body + b"\n"]))
    assert drive(provider(wire)).message.stop_reason == "stop"


def test_local_servers_need_no_key(wire: WireServer) -> None:
    wire.push(Reply(chunks=[sse(chunk({"content": "hi"}), chunk(finish="stop"), "[DONE]")]))
    drive(OpenAIProvider(base_url=f"{wire.url}/v1", model="llama3.2"))
    assert "authorization" not in wire.requests[0].headers


def test_the_key_comes_from_the_environment(
    wire: WireServer, clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk-from-env")
    clean_env.setenv("OPENAI_BASE_URL", f"{wire.url}/v1")
    wire.push(Reply(chunks=[sse(chunk({"content": "hi"}), chunk(finish="stop"), "[DONE]")]))
    drive(OpenAIProvider(model="gpt-4o-mini"))
    assert wire.requests[0].headers["authorization"] == "Bearer sk-from-env"


def test_a_missing_key_names_the_variable() -> None:
    with pytest.raises(ConfigurationError) as info:
        drive(OpenAIProvider(model="gpt-4o-mini"))
    assert str(info.value) == (
        "openai: no API key: set the OPENAI_API_KEY environment variable "
        "or pass api_key=... to OpenAIProvider"
    )


def test_a_missing_model_says_how_to_name_one(wire: WireServer) -> None:
    with pytest.raises(ConfigurationError, match=r'"openai:<model>"'):
        drive(provider(wire, model=None))
    assert wire.requests == []


def test_the_api_key_never_appears_in_errors_or_reprs(wire: WireServer) -> None:
    # Some servers echo what they got; the error text must not carry the key.
    wire.push(
        Reply(
            401,
            {
                "error": {
                    "message": f"Incorrect API key provided: {KEY}",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        )
    )
    p = provider(wire)
    err = fail(p).failure
    assert err.reason == "auth"
    assert err.http_status == 401
    assert not err.retryable
    for text in (str(err), repr(err), err.provider_message or "", err.message, repr(p)):
        assert KEY not in text
    assert "***" in str(err)


def test_a_key_echoed_inside_a_stream_error_is_scrubbed_too(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    {
                        "error": {
                            "message": f"bad request from {KEY}",
                            "type": "invalid_request_error",
                        }
                    }
                )
            ]
        )
    )
    err = fail(provider(wire)).failure
    assert err.reason == "invalid_request"
    for text in (str(err), repr(err), *map(str, err.args), err.provider_message or ""):
        assert KEY not in text


def test_a_mid_stream_error_event_raises(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    {
                        "error": {
                            "message": "The model is overloaded",
                            "type": "server_error",
                            "code": None,
                        }
                    }
                )
            ]
        ),
        Reply(chunks=[sse(chunk({"content": "ok"}), chunk(finish="stop"), "[DONE]")]),
    )
    run = drive(provider(wire))
    assert run.retries[0].error.reason == "server"
    assert run.message.text == "ok"


def test_an_injected_client_is_used_and_left_open(wire: WireServer) -> None:
    wire.push(Reply(chunks=[sse(chunk({"content": "hi"}), chunk(finish="stop"), "[DONE]")]))

    async def main() -> bool:
        async with httpx.AsyncClient(headers={"x-client": "mine"}) as client:
            p = provider(wire, client=client)
            async with p:
                [e async for e in p.stream(request())]
            return client.is_closed

    assert asyncio.run(main()) is False
    assert wire.requests[0].headers["x-client"] == "mine"


def test_an_owned_client_works_across_event_loops_and_closes_with_each(wire: WireServer) -> None:
    # Sync Runtime.exec runs every call on a fresh loop; one provider instance
    # must serve them all, closing each loop's pooled connections on shutdown.
    for _ in range(3):
        wire.push(Reply(chunks=[sse(chunk({"content": "hi"}), chunk(finish="stop"), "[DONE]")]))
    p = provider(wire)

    async def once() -> str:
        return [e async for e in p.stream(request())][-1].message.text  # type: ignore[union-attr]

    with no_resource_warning():
        assert [asyncio.run(once()) for _ in range(3)] == ["hi", "hi", "hi"]
        gc.collect()
    assert len(wire.requests) == 3


def test_one_provider_serves_loops_in_several_threads_at_once(wire: WireServer) -> None:
    # Nested sync agentic functions run their own event loops in worker threads.
    for _ in range(4):
        wire.push(
            Reply(
                chunks=[sse(chunk({"content": "hi"}), chunk(finish="stop"), "[DONE]")],
                chunk_delay_s=0.05,
            )
        )
    p = provider(wire)

    async def once() -> str:
        return [e async for e in p.stream(request())][-1].message.text  # type: ignore[union-attr]

    with no_resource_warning(), ThreadPoolExecutor(4) as pool:
        texts = list(pool.map(lambda _: asyncio.run(once()), range(4)))
        gc.collect()
    assert texts == ["hi"] * 4


@contextmanager
def no_resource_warning() -> Iterator[None]:
    """Fail if a ResourceWarning (an unclosed socket or transport) is emitted in the block."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        yield
    assert [w for w in seen if issubclass(w.category, ResourceWarning)] == []
