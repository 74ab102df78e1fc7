"""A ``response_format`` type whose schema is not an object, on each vendor's wire.

OpenAI Chat Completions and Responses (native ``json_schema``) demand an
object at the schema's root; Gemini's ``responseSchema`` would take an array,
but gets the same wrapped form so a program behaves alike on every wire;
Anthropic has no native structured output, so the answer comes through the
hidden submit tool, whose ``input_schema`` must be an object. Each gets
``{"result": ...}`` around the type's schema and the runtime unwraps the
answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from openprogram import Runtime
from openprogram.providers import (
    AnthropicProvider,
    GeminiProvider,
    OpenAIProvider,
    OpenAIResponsesProvider,
)
from openprogram.providers.base import Provider

from ._server import Reply, WireServer

pytestmark = pytest.mark.usefixtures("clean_env")

ANSWER = json.dumps({"result": [3, 1, 2]})
ITEMS = {"items": {"type": "integer"}, "type": "array"}


def _openai(wire: WireServer) -> Provider:
    return OpenAIProvider(base_url=f"{wire.url}/v1", api_key="k", model="m", stream=False)


def _openai_reply() -> dict[str, Any]:
    message = {"role": "assistant", "content": ANSWER}
    return {
        "id": "c1",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
    }


def _openai_schema(body: dict[str, Any]) -> Any:
    fmt = body["response_format"]
    assert fmt["json_schema"]["strict"] is True
    return fmt["json_schema"]["schema"]


def _responses(wire: WireServer) -> Provider:
    return OpenAIResponsesProvider(base_url=f"{wire.url}/v1", api_key="k", model="m", stream=False)


def _responses_reply() -> dict[str, Any]:
    text = {"type": "output_text", "text": ANSWER, "annotations": []}
    message = {"type": "message", "id": "m1", "status": "completed", "role": "assistant"}
    return {
        "id": "r1",
        "object": "response",
        "status": "completed",
        "model": "m",
        "output": [{**message, "content": [text]}],
        "error": None,
    }


def _responses_schema(body: dict[str, Any]) -> Any:
    assert body["text"]["format"]["strict"] is True
    return body["text"]["format"]["schema"]


def _gemini(wire: WireServer) -> Provider:
    return GeminiProvider(base_url=wire.url, api_key="k", model="m", stream=False)


def _gemini_reply() -> dict[str, Any]:
    content = {"role": "model", "parts": [{"text": ANSWER}]}
    return {"candidates": [{"content": content, "index": 0, "finishReason": "STOP"}]}


def _gemini_schema(body: dict[str, Any]) -> Any:
    schema = body["generationConfig"]["responseSchema"]
    assert schema["type"] == "OBJECT"
    assert schema["properties"]["result"] == {"type": "ARRAY", "items": {"type": "INTEGER"}}
    return {"type": "object", "properties": {"result": ITEMS}}


def _anthropic(wire: WireServer) -> Provider:
    return AnthropicProvider(base_url=wire.url, api_key="k", model="m", stream=False)


def _anthropic_reply() -> dict[str, Any]:
    submit = {"type": "tool_use", "id": "t1", "name": "submit_result", "input": json.loads(ANSWER)}
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [submit],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _anthropic_schema(body: dict[str, Any]) -> Any:
    [submit] = body["tools"]
    assert submit["name"] == "submit_result"
    return submit["input_schema"]


WIRES: dict[str, tuple[Callable[[WireServer], Provider], Callable[[], Any], Callable[..., Any]]] = {
    "openai": (_openai, _openai_reply, _openai_schema),
    "openai_responses": (_responses, _responses_reply, _responses_schema),
    "gemini": (_gemini, _gemini_reply, _gemini_schema),
    "anthropic": (_anthropic, _anthropic_reply, _anthropic_schema),
}


@pytest.mark.parametrize("vendor", list(WIRES))
def test_a_list_answer_travels_wrapped_in_an_object(wire: WireServer, vendor: str) -> None:
    make, reply, schema_of = WIRES[vendor]
    wire.push(Reply(body=reply()))
    answer = Runtime(make(wire)).exec(
        "Sort 3, 1, 2 by input order.", tools=[], response_format=list[int]
    )
    assert answer == [3, 1, 2]
    sent = schema_of(wire.requests[0].json)
    assert sent["type"] == "object"
    assert sent["properties"]["result"] == ITEMS
