"""A history made on one wire continues on another: what each wire is sent.

The history is recorded for real on the OpenAI wire (loopback server), then
continued with ``exec(history=...)`` on the Anthropic, Gemini, Bedrock and
Responses wires; the tests show each request's messages. Opaque provider data
(signatures, item ids) goes back only to the wire that made it, and a call
that never ran is not sent (``openprogram.providers._history``).
"""

from __future__ import annotations

from typing import Any

import pytest

from openprogram import Runtime
from openprogram.messages import (
    AssistantMessage,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    dump_messages,
    load_messages,
)
from openprogram.providers import (
    AnthropicProvider,
    BedrockProvider,
    GeminiProvider,
    OpenAIResponsesProvider,
)

from . import test_anthropic as an
from . import test_bedrock as br
from . import test_gemini as ge
from . import test_openai_responses as rs
from ._server import Reply, WireServer, sse
from .test_runtime_wire import SETUPS, add

pytestmark = pytest.mark.usefixtures("clean_env")

PICTURE = {"type": "image", "data": b"hi", "mime_type": "image/png"}  # base64: aGk=


def openai_history(wire: WireServer) -> tuple[Message, ...]:
    """A question with a picture, a tool round trip and an answer, on the OpenAI wire;
    kept as JSON text in between, as a store would."""
    provider, replies = SETUPS["openai"](wire.url)
    wire.push(*replies)
    runtime = Runtime(provider)
    assert runtime.exec(["What is 2 + 3?", PICTURE], tools=[add]) == "It is 5."
    assert runtime.last_run is not None
    history = runtime.last_run.messages
    assert {m.wire for m in history if isinstance(m, AssistantMessage)} == {"openai"}
    return load_messages(dump_messages(history))


def continue_on(wire: WireServer, provider: Any, reply: Reply, history: Any) -> Any:
    """One more exchange on ``provider`` after ``history``; the JSON body it sent."""
    wire.push(reply)
    runtime = Runtime(provider)
    assert runtime.exec("And 2 + 4?", tools=[add], history=history) == "It is 6."
    assert runtime.last_run is not None
    assert runtime.last_run.messages[: len(history)] == tuple(history)
    return wire.requests[-1].json


def test_an_openai_history_continues_on_anthropic(wire: WireServer) -> None:
    history = openai_history(wire)
    provider = AnthropicProvider(base_url=wire.url, api_key="k", model="m")
    body = continue_on(wire, provider, an.text_reply("It is 6."), history)
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is 2 + 3?"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "aGk="},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 2, "b": 3}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "5"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "It is 5."}]},
        {"role": "user", "content": [{"type": "text", "text": "And 2 + 4?"}]},
    ]


def test_an_openai_history_continues_on_gemini(wire: WireServer) -> None:
    history = openai_history(wire)
    provider = GeminiProvider(base_url=wire.url, api_key="k", model="m")
    body = continue_on(wire, provider, ge.text_reply("It is 6."), history)
    assert body["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "What is 2 + 3?"},
                {"inlineData": {"mimeType": "image/png", "data": "aGk="}},
            ],
        },
        {"role": "model", "parts": [{"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "add", "response": {"output": "5"}}}],
        },
        {"role": "model", "parts": [{"text": "It is 5."}]},
        {"role": "user", "parts": [{"text": "And 2 + 4?"}]},
    ]


def test_an_openai_history_continues_on_bedrock(wire: WireServer) -> None:
    history = openai_history(wire)
    provider = BedrockProvider(endpoint_url=wire.url, api_key="k", model=br.MODEL)
    body = continue_on(wire, provider, br.stream_reply(*br.text_frames("It is 6.")), history)
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"text": "What is 2 + 3?"},
                {"image": {"format": "png", "source": {"bytes": "aGk="}}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": "call_1", "name": "add", "input": {"a": 2, "b": 3}}}
            ],
        },
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "call_1", "content": [{"text": "5"}]}}],
        },
        {"role": "assistant", "content": [{"text": "It is 5."}]},
        {"role": "user", "content": [{"text": "And 2 + 4?"}]},
    ]


def test_an_openai_history_continues_on_responses(wire: WireServer) -> None:
    history = openai_history(wire)
    provider = OpenAIResponsesProvider(base_url=f"{wire.url}/v1", api_key="k", model="m")
    message = {
        **rs.MESSAGE,
        "content": [{"type": "output_text", "text": "It is 6.", "annotations": []}],
    }
    body = continue_on(wire, provider, Reply(chunks=[sse(rs.completed([message]))]), history)
    assert body["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is 2 + 3?"},
                {"type": "input_image", "image_url": "data:image/png;base64,aGk="},
            ],
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "add",
            "arguments": '{"a": 2, "b": 3}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "5"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "It is 5.", "annotations": []}],
        },
        {"role": "user", "content": "And 2 + 4?"},
    ]


SIGNED = AssistantMessage(
    (
        ThinkingContent("Sum it.", provider_meta={"signature": "sig-anthropic"}),
        TextContent("It is 5."),
    ),
    wire="anthropic",
)
"""A reply recorded on the Anthropic wire: its thinking is signed for Anthropic."""


def test_thinking_goes_back_only_to_the_wire_that_signed_it(wire: WireServer) -> None:
    history = (UserMessage("What is 2 + 3?"), SIGNED)
    provider = AnthropicProvider(base_url=wire.url, api_key="k", model="m")
    own = continue_on(wire, provider, an.text_reply("It is 6."), history)
    assert own["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "Sum it.", "signature": "sig-anthropic"},
        {"type": "text", "text": "It is 5."},
    ]
    bedrock = BedrockProvider(endpoint_url=wire.url, api_key="k", model=br.MODEL)
    other = continue_on(wire, bedrock, br.stream_reply(*br.text_frames("It is 6.")), history)
    # Bedrock's Claude takes signed reasoning too, but not a signature made by another wire
    assert other["messages"][1]["content"] == [{"text": "It is 5."}]


def test_a_reply_recorded_on_anthropic_is_stamped_with_its_wire(wire: WireServer) -> None:
    body = sse(
        an.start(),
        an.block(0, {"type": "thinking", "thinking": ""}),
        an.delta(0, type="thinking_delta", thinking="Sum it."),
        an.delta(0, type="signature_delta", signature="sig-anthropic"),
        an.stop(0),
        an.block(1, {"type": "text", "text": ""}),
        an.delta(1, type="text_delta", text="It is 5."),
        an.stop(1),
        *an.end("end_turn"),
    )
    wire.push(Reply(chunks=[body]))
    runtime = Runtime(AnthropicProvider(base_url=wire.url, api_key="k", model="m"))
    runtime.exec("What is 2 + 3?", tools=[])
    assert runtime.last_run is not None
    reply = runtime.last_run.messages[-1]
    assert isinstance(reply, AssistantMessage)
    assert reply.wire == "anthropic"
    assert reply.content[0].provider_meta == {"signature": "sig-anthropic"}


def test_gemini_ids_and_signatures_are_not_echoed_to_another_wire(wire: WireServer) -> None:
    meta = {"id": "fc-1", "thoughtSignature": "c2ln"}
    history = (
        UserMessage("What is 2 + 3?"),
        AssistantMessage(
            (ToolCall("fc-1", "add", {"a": 2, "b": 3}, provider_meta=meta),),
            stop_reason="tool_calls",
            wire="gemini",
        ),
        ToolResultMessage("fc-1", "add", "5"),
        AssistantMessage((TextContent("It is 5."),), wire="gemini"),
    )
    gemini = GeminiProvider(base_url=wire.url, api_key="k", model="m")
    own = continue_on(wire, gemini, ge.text_reply("It is 6."), history)
    assert own["contents"][1]["parts"] == [
        {
            "functionCall": {"name": "add", "args": {"a": 2, "b": 3}, "id": "fc-1"},
            "thoughtSignature": "c2ln",
        }
    ]
    assert own["contents"][2]["parts"][0]["functionResponse"]["id"] == "fc-1"
    responses = OpenAIResponsesProvider(base_url=f"{wire.url}/v1", api_key="k", model="m")
    message = {
        **rs.MESSAGE,
        "content": [{"type": "output_text", "text": "It is 6.", "annotations": []}],
    }
    other = continue_on(wire, responses, Reply(chunks=[sse(rs.completed([message]))]), history)
    assert other["input"][1] == {
        "type": "function_call",
        "call_id": "fc-1",
        "name": "add",
        "arguments": '{"a": 2, "b": 3}',
    }  # no Gemini "id" as an item id


def test_a_call_that_never_ran_is_not_sent(wire: WireServer) -> None:
    aborted = AssistantMessage(
        (TextContent("Let me add"), ToolCall("call_9", "add", {"a": 2})),
        stop_reason="aborted",
    )
    history = (UserMessage("What is 2 + 3?"), aborted)
    provider = AnthropicProvider(base_url=wire.url, api_key="k", model="m")
    body = continue_on(wire, provider, an.text_reply("It is 6."), history)
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is 2 + 3?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me add"}]},
        {"role": "user", "content": [{"type": "text", "text": "And 2 + 4?"}]},
    ]
