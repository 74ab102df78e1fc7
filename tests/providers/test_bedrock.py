"""BedrockProvider against a loopback server speaking Converse / ConverseStream.

Fixtures follow the Amazon Bedrock API reference: "Converse" and
"ConverseStream" (request ``messages``/``system``/``toolConfig`` with
``toolSpec.inputSchema.json`` and ``toolChoice``; ``toolResult.status``;
response ``output.message``, ``stopReason``, ``usage``), the
``ConverseStreamOutput`` union (``messageStart``, ``contentBlockStart``,
``contentBlockDelta``, ``contentBlockStop``, ``messageStop``, ``metadata``,
modelled exceptions such as ``throttlingException``), framed per the
"Amazon Event Stream" encoding with ``:event-type``/``:message-type``
headers; HTTP errors carry ``x-amzn-ErrorType``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from openprogram.exceptions import ConfigurationError, UserError
from openprogram.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from openprogram.providers import BedrockProvider
from openprogram.providers._sigv4 import AwsCredentials, sign
from openprogram.providers.bedrock import NO_TOOL_INSTRUCTION

from ._aws import event, exception
from ._helpers import ADD, WEATHER, drive, fail, kinds, request
from ._server import Reply, Seen, WireServer

pytestmark = pytest.mark.usefixtures("clean_env")

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
ACCESS, SECRET, TOKEN = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-tok"
STREAM = "application/vnd.amazon.eventstream"


def provider(wire: WireServer, **options: Any) -> BedrockProvider:
    options.setdefault("model", MODEL)
    options.setdefault("region", "us-west-2")
    options.setdefault("backoff_base_s", 0.001)
    if "api_key" not in options:
        options.setdefault("aws_access_key_id", ACCESS)
        options.setdefault("aws_secret_access_key", SECRET)
    return BedrockProvider(endpoint_url=wire.url, **options)


def stream_reply(*frames: bytes, cut: bool = False, split: int | None = None) -> Reply:
    data = b"".join(frames)
    chunks = [data[i : i + split] for i in range(0, len(data), split)] if split else [data]
    return Reply(chunks=chunks, content_type=STREAM, cut=cut)


def text_frames(text: str = "ok", reason: str = "end_turn") -> list[bytes]:
    return [
        event("messageStart", {"role": "assistant"}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": reason}),
        event(
            "metadata",
            {
                "usage": {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7},
                "metrics": {"latencyMs": 100},
            },
        ),
    ]


def verify_sigv4(seen: Seen, url: str, creds: AwsCredentials) -> None:
    """Recompute the signature from what the server received (as AWS would)."""
    auth = seen.headers["authorization"]
    names = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
    stamp = datetime.strptime(seen.headers["x-amz-date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    added_by_sign = {"x-amz-date", "x-amz-security-token"}
    headers = {n: seen.headers[n] for n in names if n not in added_by_sign}
    expected = sign(
        method="POST",
        url=url + seen.path,
        headers=headers,
        body=seen.body,
        credentials=creds,
        region="us-west-2",
        service="bedrock",
        now=stamp,
    )
    assert auth == expected["Authorization"]


def test_converse_stream_round_trip_with_sigv4(wire: WireServer) -> None:
    frames = [
        event("messageStart", {"role": "assistant"}),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Sum it."}}},
        ),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig-9"}}},
        ),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Adding ✓"}}),
        event("contentBlockStop", {"contentBlockIndex": 1}),
        event(
            "contentBlockStart",
            {
                "contentBlockIndex": 2,
                "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "add"}},
            },
        ),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 2, "delta": {"toolUse": {"input": '{"a": 20,'}}},
        ),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 2, "delta": {"toolUse": {"input": ' "b": 22}'}}},
        ),
        event("contentBlockStop", {"contentBlockIndex": 2}),
        event("messageStop", {"stopReason": "tool_use"}),
        event(
            "metadata",
            {
                "usage": {
                    "inputTokens": 30,
                    "outputTokens": 9,
                    "totalTokens": 39,
                    "cacheReadInputTokens": 100,
                    "cacheWriteInputTokens": 0,
                },
                "metrics": {"latencyMs": 321},
            },
        ),
    ]
    wire.push(stream_reply(*frames, split=37))  # frames split mid-prelude, mid-header, mid-CRC
    run = drive(
        provider(wire, aws_session_token=TOKEN), request("20+22", system="Be exact.", tools=(ADD,))
    )

    message = run.message
    assert message.content == (
        ThinkingContent("Sum it."),
        TextContent("Adding ✓"),
        ToolCall("tooluse_1", "add", {"a": 20, "b": 22}),
    )
    assert message.content[0].provider_meta == {"signature": "sig-9"}
    assert message.stop_reason == "tool_calls"
    assert (
        message.usage.input_tokens,
        message.usage.cached_tokens,
        message.usage.output_tokens,
    ) == (130, 100, 9)
    assert run.text == "Adding ✓"

    seen = wire.requests[0]
    assert seen.path == "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream"
    assert seen.headers["accept"] == STREAM
    assert seen.headers["x-amz-security-token"] == TOKEN
    assert "x-amz-security-token" in seen.headers["authorization"]
    assert seen.headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS}/")
    assert "/us-west-2/bedrock/aws4_request" in seen.headers["authorization"]
    verify_sigv4(seen, wire.url, AwsCredentials(ACCESS, SECRET, TOKEN))
    assert seen.json == {
        "messages": [{"role": "user", "content": [{"text": "20+22"}]}],
        "system": [{"text": "Be exact."}],
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "add",
                        "description": "Add two integers.",
                        "inputSchema": {"json": ADD["parameters"]},
                    }
                }
            ],
            "toolChoice": {"auto": {}},
        },
    }


def test_credentials_and_region_come_from_the_standard_variables(
    wire: WireServer, clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
    clean_env.setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
    clean_env.setenv("AWS_REGION", "eu-central-1")
    wire.push(stream_reply(*text_frames()))
    drive(BedrockProvider(model=MODEL, endpoint_url=wire.url))
    auth = wire.requests[0].headers["authorization"]
    assert "Credential=AKIDENV/" in auth
    assert "/eu-central-1/bedrock/" in auth
    assert "x-amz-security-token" not in wire.requests[0].headers


def test_the_default_endpoint_is_derived_from_the_region() -> None:
    p = BedrockProvider(model=MODEL, region="ap-south-1")
    assert p.base_url == "https://bedrock-runtime.ap-south-1.amazonaws.com"


def test_a_bedrock_api_key_is_sent_as_a_bearer_token(wire: WireServer) -> None:
    wire.push(stream_reply(*text_frames()))
    drive(provider(wire, api_key="bedrock-api-key-123"))
    seen = wire.requests[0]
    assert seen.headers["authorization"] == "Bearer bedrock-api-key-123"
    assert "x-amz-date" not in seen.headers


def test_missing_configuration_is_named(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigurationError, match="set the AWS_REGION environment variable"):
        drive(BedrockProvider(model=MODEL, aws_access_key_id="a", aws_secret_access_key="b"))
    with pytest.raises(ConfigurationError, match="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"):
        drive(BedrockProvider(model=MODEL, region="us-east-1"))
    with pytest.raises(UserError, match="together"):
        BedrockProvider(model=MODEL, aws_access_key_id="only-half")


def test_the_secret_never_appears_in_errors(wire: WireServer) -> None:
    wire.push(
        Reply(
            403,
            {"message": f"The request signature we calculated does not match ({SECRET})"},
            headers={"x-amzn-ErrorType": "InvalidSignatureException:http://internal"},
        )
    )
    p = provider(wire)
    err = fail(p).failure
    assert (err.reason, err.http_status, err.retryable) == ("auth", 403, False)
    for text in (str(err), repr(err), err.provider_message or "", repr(p)):
        assert SECRET not in text


def test_history_and_tool_results(wire: WireServer) -> None:
    history = (
        UserMessage((TextContent("see"), ImageContent(data="aGk=", mime_type="image/jpeg"))),
        AssistantMessage(
            (
                ThinkingContent("why", provider_meta={"signature": "s1"}),
                TextContent(""),
                ToolCall("t1", "add", {"a": 1, "b": 2}),
                ToolCall("t2", "get_weather", {"city": "Lima"}),
            )
        ),
        ToolResultMessage("t1", "add", "3"),
        ToolResultMessage("t2", "get_weather", "unknown city", is_error=True),
    )
    wire.push(stream_reply(*text_frames()), stream_reply(*text_frames()))
    drive(provider(wire), request(*history, tools=(ADD, WEATHER)))
    drive(
        provider(wire, model="meta.llama3-70b-instruct-v1:0"),
        request(*history, tools=(ADD, WEATHER)),
    )
    claude, llama = (r.json["messages"] for r in wire.requests)
    assert claude == [
        {
            "role": "user",
            "content": [
                {"text": "see"},
                {"image": {"format": "jpeg", "source": {"bytes": "aGk="}}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "why", "signature": "s1"}}},
                {"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 1, "b": 2}}},
                {"toolUse": {"toolUseId": "t2", "name": "get_weather", "input": {"city": "Lima"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "t1", "content": [{"text": "3"}]}},
                {
                    "toolResult": {
                        "toolUseId": "t2",
                        "content": [{"text": "unknown city"}],
                        "status": "error",
                    }
                },
            ],
        },
    ]
    # "status" is documented for Claude and Nova only: other models read the flag in the text.
    assert llama[2]["content"][1] == {
        "toolResult": {"toolUseId": "t2", "content": [{"text": "Error: unknown city"}]}
    }


def test_an_unsupported_image_type_is_refused_before_sending(wire: WireServer) -> None:
    with pytest.raises(UserError, match="image/bmp"):
        drive(
            provider(wire), request(UserMessage((ImageContent(data="x", mime_type="image/bmp"),)))
        )
    assert wire.requests == []


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"auto": {}}),
        ("required", {"any": {}}),
        ({"type": "function", "name": "add"}, {"tool": {"name": "add"}}),
    ],
)
def test_tool_choice_table(wire: WireServer, choice: Any, expected: dict[str, Any]) -> None:
    wire.push(stream_reply(*text_frames()))
    drive(
        provider(wire), request("hi", tools=(ADD,), tool_choice=choice, parallel_tool_calls=False)
    )
    config = wire.requests[0].json["toolConfig"]
    assert config["toolChoice"] == expected
    assert set(config) == {"tools", "toolChoice"}  # parallel off has no wire field


def test_tool_choice_none_is_emulated(wire: WireServer) -> None:
    frames = [
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Answer."}}),
        event(
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t9", "name": "add"}}},
        ),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"a":1,"b":2}'}}},
        ),
        event("messageStop", {"stopReason": "tool_use"}),
    ]
    wire.push(stream_reply(*frames))
    message = drive(
        provider(wire), request("hi", system="Sys.", tools=(ADD,), tool_choice="none")
    ).message
    body = wire.requests[0].json
    assert "toolChoice" not in body["toolConfig"]
    assert body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "add"
    assert body["system"] == [{"text": f"Sys.\n\n{NO_TOOL_INSTRUCTION}"}]
    assert (message.text, message.tool_calls, message.stop_reason) == ("Answer.", [], "stop")


def test_a_history_with_tool_blocks_keeps_a_tool_config_without_tools(wire: WireServer) -> None:
    history = (
        UserMessage("1+2"),
        AssistantMessage((ToolCall("t1", "add", {"a": 1, "b": 2}),)),
        ToolResultMessage("t1", "add", "3"),
    )
    wire.push(stream_reply(*text_frames()))
    drive(provider(wire), request(*history))
    config = wire.requests[0].json["toolConfig"]
    assert [t["toolSpec"]["name"] for t in config["tools"]] == ["add"]
    assert "toolChoice" not in config


def test_no_tools_and_no_tool_history_sends_no_tool_config(wire: WireServer) -> None:
    wire.push(stream_reply(*text_frames()))
    drive(provider(wire, max_tokens=256), request("hi"))
    body = wire.requests[0].json
    assert "toolConfig" not in body
    assert body["inferenceConfig"] == {"maxTokens": 256}


def test_non_streaming_converse(wire: WireServer) -> None:
    wire.push(
        Reply(
            body={
                "output": {
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"text": "Sure."},
                            {
                                "toolUse": {
                                    "toolUseId": "t5",
                                    "name": "add",
                                    "input": {"a": 2, "b": 2},
                                }
                            },
                        ],
                    }
                },
                "stopReason": "tool_use",
                "usage": {"inputTokens": 11, "outputTokens": 4, "totalTokens": 15},
                "metrics": {"latencyMs": 50},
            }
        )
    )
    run = drive(provider(wire, stream=False), request("2+2", tools=(ADD,)))
    assert wire.requests[0].path.endswith("/converse")
    assert run.message.content == (TextContent("Sure."), ToolCall("t5", "add", {"a": 2, "b": 2}))
    assert kinds(run.events) == ["RequestSent", "TextDelta", "ToolCallDelta", "ResponseDone"]


def test_a_throttling_exception_in_the_stream_is_retried(wire: WireServer) -> None:
    wire.push(
        stream_reply(exception("throttlingException", "Too many requests")),
        stream_reply(*text_frames("second")),
    )
    run = drive(provider(wire))
    assert run.retries[0].error.reason == "rate_limit"
    assert run.retries[0].error.provider_message == "Too many requests"
    assert run.message.text == "second"


@pytest.mark.parametrize(
    "case",
    [
        ("ThrottlingException", 429, "Rate exceeded", "rate_limit", True),
        ("ServiceUnavailableException", 503, "Unavailable", "server", True),
        ("ModelTimeoutException", 408, "Timed out", "timeout", True),
        (
            "ValidationException",
            400,
            "Input is too long for requested model.",
            "context_length",
            False,
        ),
        ("ValidationException", 400, "Malformed input request", "invalid_request", False),
        ("AccessDeniedException", 403, "You don't have access", "auth", False),
        ("ResourceNotFoundException", 404, "Model not found", "invalid_request", False),
    ],
)
def test_http_errors_are_classified_by_error_type(
    wire: WireServer, case: tuple[str, int, str, str, bool]
) -> None:
    error_type, status, message, reason, retried = case
    wire.push(
        Reply(
            status,
            {"message": message},
            headers={"x-amzn-ErrorType": f"{error_type}:http://internal.amazon.com/"},
        ),
        stream_reply(*text_frames()),
    )
    if retried:
        assert drive(provider(wire)).retries[0].error.reason == reason
    else:
        err = fail(provider(wire)).failure
        assert (err.reason, err.http_status, err.provider_message) == (reason, status, message)


def test_a_corrupt_frame_fails_the_call(wire: WireServer) -> None:
    frame = bytearray(text_frames()[1])
    frame[-1] ^= 0xFF  # break the message CRC
    wire.push(stream_reply(bytes(frame)))
    err = fail(provider(wire)).failure
    assert err.reason == "server"
    assert "checksum" in str(err)


def test_a_cut_stream_drops_the_unfinished_call(wire: WireServer) -> None:
    frames = [
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Let me"}}),
        event(
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t1", "name": "add"}}},
        ),
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{"}}}),
    ]
    wire.push(stream_reply(*frames, cut=True))
    message = drive(provider(wire), request("x", tools=(ADD,))).message
    assert (message.stop_reason, message.text, message.tool_calls) == ("error", "Let me", [])


@pytest.mark.parametrize(
    ("wire_reason", "stop"),
    [
        ("end_turn", "stop"),
        ("max_tokens", "length"),
        ("guardrail_intervened", "content_filter"),
        ("content_filtered", "content_filter"),
        ("stop_sequence", "stop"),
    ],
)
def test_stop_reasons(wire: WireServer, wire_reason: str, stop: str) -> None:
    wire.push(stream_reply(*text_frames(reason=wire_reason)))
    assert drive(provider(wire)).message.stop_reason == stop
