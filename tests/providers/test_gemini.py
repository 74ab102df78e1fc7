"""GeminiProvider against a loopback server speaking the generateContent wire format.

Fixtures follow the Gemini API reference: "Generating content"
(``models.generateContent`` / ``models.streamGenerateContent`` with
``alt=sse``; ``GenerateContentResponse`` with ``candidates[].content.parts``,
``finishReason``, ``usageMetadata``, ``promptFeedback``), ``Content``/``Part``
(``text``, ``thought``, ``thoughtSignature``,
``inlineData``, ``functionCall`` with ``id``, ``functionResponse`` with
``response.output``/``response.error``), ``Tool.functionDeclarations``,
``ToolConfig.functionCallingConfig`` and ``GenerationConfig.responseSchema``;
errors follow the Google API error model (``google.rpc.Status`` with
``RetryInfo`` details).
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
from openprogram.providers import GeminiProvider, ResponseFormat

from ._helpers import ADD, WEATHER, drive, fail, kinds, request
from ._server import Reply, WireServer, awkward, sse

pytestmark = pytest.mark.usefixtures("clean_env")

KEY = "AIza-test-0123456789"


def provider(wire: WireServer, **options: Any) -> GeminiProvider:
    options.setdefault("api_key", KEY)
    options.setdefault("model", "gemini-2.5-flash")
    options.setdefault("backoff_base_s", 0.001)
    return GeminiProvider(base_url=wire.url, **options)


def chunk(
    *parts: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-2.5-flash"}
    if usage:
        out["usageMetadata"] = usage
    return out


def text_reply(text: str = "ok") -> Reply:
    return Reply(chunks=[sse(chunk({"text": text}, finish="STOP"))])


def test_streamed_thoughts_text_and_function_calls(wire: WireServer) -> None:
    body = sse(
        chunk({"text": "Working out ", "thought": True}),
        chunk({"text": "the weather.", "thought": True}),
        chunk({"text": "Let me check "}),
        chunk({"text": "both ☀."}),
        chunk(
            {
                "functionCall": {"id": "fc-1", "name": "get_weather", "args": {"city": "Rome"}},
                "thoughtSignature": "c2lnLTE=",
            },
            {"functionCall": {"name": "add", "args": {"a": 1, "b": 2}}},
        ),
        chunk(
            finish="STOP",
            usage={
                "promptTokenCount": 50,
                "candidatesTokenCount": 20,
                "thoughtsTokenCount": 30,
                "cachedContentTokenCount": 10,
                "totalTokenCount": 100,
            },
        ),
    ).replace(b"\n", b"\r\n")  # the API frames its events with CRLF
    wire.push(Reply(chunks=awkward(body, [b"\r\n\r\n", "☀".encode(), b"functionCall"])))
    run = drive(
        provider(wire),
        request("weather in Rome, and 1+2", system="Be brief.", tools=(WEATHER, ADD)),
    )

    message = run.message
    assert run.thinking == "Working out the weather."
    assert run.text == "Let me check both ☀."
    assert [type(c).__name__ for c in message.content] == [
        "ThinkingContent",
        "TextContent",
        "ToolCall",
        "ToolCall",
    ]
    weather, add = message.tool_calls
    assert (weather.id, weather.name, dict(weather.arguments)) == (
        "fc-1",
        "get_weather",
        {"city": "Rome"},
    )
    assert weather.provider_meta == {"thoughtSignature": "c2lnLTE=", "id": "fc-1"}
    assert (add.name, dict(add.arguments)) == ("add", {"a": 1, "b": 2})
    assert add.id.startswith("call_")
    assert add.provider_meta is None
    assert message.stop_reason == "tool_calls"
    assert (
        message.usage.input_tokens,
        message.usage.output_tokens,
        message.usage.cached_tokens,
    ) == (50, 50, 10)

    seen = wire.requests[0]
    assert seen.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert seen.query == "alt=sse"
    assert seen.headers["x-goog-api-key"] == KEY
    assert KEY not in seen.path + seen.query
    body_sent = seen.json
    assert body_sent["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body_sent["contents"] == [
        {"role": "user", "parts": [{"text": "weather in Rome, and 1+2"}]}
    ]
    assert body_sent["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert body_sent["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Current weather for a city.",
                    "parameters": {
                        "type": "OBJECT",
                        "properties": {
                            "city": {"type": "STRING", "description": "City name."},
                            "units": {"type": "STRING", "enum": ["celsius", "fahrenheit"]},
                        },
                        "required": ["city"],
                    },
                },
                {
                    "name": "add",
                    "description": "Add two integers.",
                    "parameters": {
                        "type": "OBJECT",
                        "properties": {"a": {"type": "INTEGER"}, "b": {"type": "INTEGER"}},
                        "required": ["a", "b"],
                    },
                },
            ]
        }
    ]


def test_history_echoes_signatures_and_ids_it_was_given(wire: WireServer) -> None:
    history = (
        UserMessage((TextContent("what's this"), ImageContent(data="aGk=", mime_type="image/png"))),
        AssistantMessage(
            (
                ThinkingContent("summary only"),
                ThinkingContent("", provider_meta={"thoughtSignature": "t-sig"}),
                TextContent("Checking.", provider_meta={"thoughtSignature": "x-sig"}),
                ToolCall(
                    "fc-1",
                    "get_weather",
                    {"city": "Rome"},
                    provider_meta={"id": "fc-1", "thoughtSignature": "c-sig"},
                ),
                ToolCall("call_local", "add", {"a": 1, "b": 2}),
            )
        ),
        ToolResultMessage("fc-1", "get_weather", "sunny"),
        ToolResultMessage("call_local", "add", "bad input", is_error=True),
    )
    wire.push(text_reply())
    drive(provider(wire), request(*history, tools=(WEATHER, ADD)))
    assert wire.requests[0].json["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "what's this"},
                {"inlineData": {"mimeType": "image/png", "data": "aGk="}},
            ],
        },
        {
            "role": "model",
            "parts": [
                {"text": "", "thought": True, "thoughtSignature": "t-sig"},
                {"text": "Checking.", "thoughtSignature": "x-sig"},
                {
                    "functionCall": {"name": "get_weather", "args": {"city": "Rome"}, "id": "fc-1"},
                    "thoughtSignature": "c-sig",
                },
                {"functionCall": {"name": "add", "args": {"a": 1, "b": 2}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"output": "sunny"},
                        "id": "fc-1",
                    }
                },
                {"functionResponse": {"name": "add", "response": {"error": "bad input"}}},
            ],
        },
    ]


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"mode": "AUTO"}),
        ("required", {"mode": "ANY"}),
        ("none", {"mode": "NONE"}),
        ({"type": "function", "name": "add"}, {"mode": "ANY", "allowedFunctionNames": ["add"]}),
    ],
)
def test_tool_choice_table(wire: WireServer, choice: Any, expected: dict[str, Any]) -> None:
    wire.push(text_reply())
    drive(provider(wire), request("hi", tools=(ADD,), tool_choice=choice))
    assert wire.requests[0].json["toolConfig"] == {"functionCallingConfig": expected}


def test_parallel_off_has_no_wire_field_and_no_tools_no_fields(wire: WireServer) -> None:
    wire.push(text_reply(), text_reply())
    drive(provider(wire), request("hi", tools=(ADD,), parallel_tool_calls=False))
    drive(provider(wire), request("hi", tool_choice="required"))
    with_tools, without = (r.json for r in wire.requests)
    assert set(with_tools) == {"contents", "tools", "toolConfig"}
    assert set(without) == {"contents"}


def test_schemas_are_rewritten_to_the_openapi_subset(wire: WireServer) -> None:
    spec = {
        "name": "plan",
        "description": "Plan.",
        "parameters": {
            "type": "object",
            "$defs": {
                "Stop": {
                    "type": "object",
                    "title": "Stop",
                    "properties": {
                        "at": {"type": "string", "format": "date-time"},
                        "url": {"type": "string", "format": "uri"},
                    },
                    "required": ["at"],
                    "additionalProperties": False,
                }
            },
            "properties": {
                "stops": {"type": "array", "items": {"$ref": "#/$defs/Stop"}},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                "level": {"type": "integer", "enum": [1, 2, 3]},
                "tags": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "required": ["stops"],
            "additionalProperties": False,
        },
    }
    no_args = {
        "name": "ping",
        "description": "Ping.",
        "parameters": {"type": "object", "properties": {}},
    }
    wire.push(text_reply())
    drive(provider(wire), request("hi", tools=(spec, no_args)))
    plan, ping = wire.requests[0].json["tools"][0]["functionDeclarations"]
    assert ping == {"name": "ping", "description": "Ping."}
    assert plan["parameters"] == {
        "type": "OBJECT",
        "properties": {
            "stops": {
                "type": "ARRAY",
                "items": {
                    "type": "OBJECT",
                    "properties": {
                        "at": {"type": "STRING", "format": "date-time"},
                        "url": {"type": "STRING", "description": "(format: uri)"},
                    },
                    "required": ["at"],
                },
            },
            "note": {"type": "STRING", "nullable": True},
            "level": {"type": "INTEGER", "description": "one of: 1, 2, 3"},
            "tags": {"type": "OBJECT"},
        },
        "required": ["stops"],
    }


def test_response_format_uses_response_schema(wire: WireServer) -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    wire.push(text_reply('{"n": 3}'))
    run = drive(
        provider(wire), request("n", response_format=ResponseFormat(name="n", schema=schema))
    )
    assert run.message.text == '{"n": 3}'
    assert wire.requests[0].json["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseSchema": {
            "type": "OBJECT",
            "properties": {"n": {"type": "INTEGER"}},
            "required": ["n"],
        },
    }


def test_extra_body_merges_into_nested_config(wire: WireServer) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    wire.push(text_reply('{"n": 1}'))
    p = provider(wire, extra_body={"generationConfig": {"temperature": 0}, "safetySettings": []})
    drive(p, request("n", response_format=ResponseFormat(name="n", schema=schema)))
    body = wire.requests[0].json
    assert body["generationConfig"]["temperature"] == 0
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    assert body["safetySettings"] == []


def test_non_streaming_generate_content(wire: WireServer) -> None:
    wire.push(
        Reply(
            body=chunk(
                {"text": "Hi"},
                {"functionCall": {"name": "add", "args": {"a": 1, "b": 1}}},
                finish="STOP",
                usage={"promptTokenCount": 3, "candidatesTokenCount": 2},
            )
        )
    )
    run = drive(provider(wire, stream=False), request("x", tools=(ADD,)))
    assert wire.requests[0].path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert kinds(run.events) == ["RequestSent", "TextDelta", "ToolCallDelta", "ResponseDone"]
    assert run.message.tool_calls[0].arguments == {"a": 1, "b": 1}


@pytest.mark.parametrize(
    ("reason", "stop"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("MALFORMED_FUNCTION_CALL", "error"),
    ],
)
def test_finish_reasons(wire: WireServer, reason: str, stop: str) -> None:
    wire.push(Reply(chunks=[sse(chunk({"text": "x"}, finish=reason))]))
    message = drive(provider(wire)).message
    assert message.stop_reason == stop
    assert (message.error is not None) == (stop == "error")


def test_a_blocked_prompt_is_a_content_filter_reply(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    {
                        "promptFeedback": {"blockReason": "SAFETY"},
                        "usageMetadata": {"promptTokenCount": 4},
                    }
                )
            ]
        )
    )
    message = drive(provider(wire)).message
    assert (message.stop_reason, message.content) == ("content_filter", ())


def test_429_retry_delay_from_retry_info_is_honoured(wire: WireServer) -> None:
    wire.push(
        Reply(
            429,
            {
                "error": {
                    "code": 429,
                    "status": "RESOURCE_EXHAUSTED",
                    "message": "Quota exceeded",
                    "details": [
                        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.2s"}
                    ],
                }
            },
        ),
        text_reply(),
    )
    run = drive(provider(wire))
    assert run.retries[0].delay_s == pytest.approx(0.2)
    assert run.retries[0].error.reason == "rate_limit"


def test_an_invalid_key_answered_with_400_is_an_auth_error(wire: WireServer) -> None:
    wire.push(
        Reply(
            400,
            {
                "error": {
                    "code": 400,
                    "status": "INVALID_ARGUMENT",
                    "message": "API key not valid. Please pass a valid API key.",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "API_KEY_INVALID",
                        }
                    ],
                }
            },
        )
    )
    err = fail(provider(wire)).failure
    assert (err.reason, err.retryable, err.http_status) == ("auth", False, 400)


def test_the_key_can_come_from_google_api_key(
    wire: WireServer, clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setenv("GOOGLE_API_KEY", "from-google-env")
    wire.push(text_reply())
    drive(GeminiProvider(base_url=wire.url, model="gemini-2.5-flash"))
    assert wire.requests[0].headers["x-goog-api-key"] == "from-google-env"


def test_a_cut_stream_drops_calls(wire: WireServer) -> None:
    wire.push(
        Reply(
            chunks=[
                sse(
                    chunk({"text": "So"}),
                    chunk({"functionCall": {"name": "add", "args": {"a": 1}}}),
                )
            ],
            cut=True,
        )
    )
    message = drive(provider(wire), request("x", tools=(ADD,))).message
    assert (message.stop_reason, message.text, message.tool_calls) == ("error", "So", [])
