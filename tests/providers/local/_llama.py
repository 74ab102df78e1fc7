"""Replies shaped like llama.cpp's Chat Completions server, for the local provider's tests.

They mimic what llama.cpp's server sends (captured from xllamacpp
2026.10.11549): a completion object or ``chat.completion.chunk`` events.
Streamed text chunks carry ``timings``, as llama.cpp sends them with every
token when the request asks for ``timings_per_token`` (the provider does):
``PROMPT_N`` prompt tokens, none cached, and one generated token per chunk.
"""

from __future__ import annotations

from typing import Any

from openprogram.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from openprogram.providers.local import LOCAL_MODEL, LocalProvider

from .._server import Reply, WireServer, sse


def completion(text: str | None = None, call: tuple[str, str] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text or ""}
    if call:
        message["tool_calls"] = [
            {"type": "function", "id": "c1", "function": {"name": call[0], "arguments": call[1]}}
        ]
    return {
        "object": "chat.completion",
        "model": LOCAL_MODEL,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def role_chunk() -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}],
    }


PROMPT_N = 10
"""The prompt tokens the scripted server reports in streamed ``timings``."""


def timings(predicted: int, prompt: int = PROMPT_N, cached: int = 0) -> dict[str, Any]:
    """llama.cpp's ``timings`` after ``predicted`` generated tokens (times left out)."""
    return {"cache_n": cached, "prompt_n": prompt - cached, "predicted_n": predicted}


def text_stream(text: str) -> Reply:
    return Reply(
        chunks=[
            sse(
                role_chunk(),
                {
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
                    "timings": timings(1),
                },
                {
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                },
                "[DONE]",
            )
        ]
    )


def provider(wire: WireServer, **options: Any) -> LocalProvider:
    options.setdefault("stream", False)
    options.setdefault("max_retries", 0)
    return LocalProvider(base_url=f"{wire.url}/v1", **options)


def names(body: dict[str, Any]) -> list[str]:
    """The names of the functions a request body lists for the model."""
    return [f["name"] for f in body["chat_template_kwargs"]["functions"]]


def call_chunks(*pieces: str) -> Reply:
    """``pieces`` streamed one chunk each (one token each, as the ``timings`` say)."""
    deltas = [
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": p}}],
            "timings": timings(n),
        }
        for n, p in enumerate(pieces, start=1)
    ]
    end = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    return Reply(chunks=[sse(role_chunk()), *(sse(d) for d in deltas), sse(end, "[DONE]")])


def answered(
    question: str, name: str, arguments: dict[str, Any], result: str
) -> tuple[str | Message, ...]:
    """A conversation in which one call (id ``c1``) was made and its result came back."""
    return (
        question,
        AssistantMessage(
            (ToolCall(id="c1", name=name, arguments=arguments),), stop_reason="tool_calls"
        ),
        ToolResultMessage(call_id="c1", tool_name=name, content=result),
    )
