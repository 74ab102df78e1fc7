"""Anthropic Messages API.

Wire reference: Anthropic API reference, "Messages" (create) and
"Streaming Messages" (``message_start``, ``content_block_start``/``_delta``/
``_stop``, ``message_delta``, ``message_stop``, ``ping``, ``error``), and the
tool use guide (``tool_choice``, ``disable_parallel_tool_use``, ``tool_result``
with ``is_error``). Requests go to ``{base_url}/v1/messages`` with
``x-api-key`` and ``anthropic-version``. Anthropic has no native JSON-schema
output here, so ``native_structured_output`` is ``False`` and the runtime
uses its submit tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Unpack

from openprogram.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from openprogram.providers._http import event_error
from openprogram.providers._http_provider import Decoder, HttpOptions, HttpProvider, StreamParser
from openprogram.providers._reply import ReplyBuilder
from openprogram.providers._sse import SSEDecoder, SSEEvent
from openprogram.providers._turns import merged_turns
from openprogram.providers._wire import (
    CacheUsageKeys,
    forced_tool_name,
    load_json,
    no_seed,
    shape_error,
    tool_parameters,
    usage_with_cache,
)
from openprogram.providers.base import ProviderEvent, ProviderRequest, ToolChoice

__all__ = ["ANTHROPIC_BASE_URL", "ANTHROPIC_VERSION", "AnthropicProvider"]

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"

_STOP: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
}


class AnthropicProvider(HttpProvider):
    """Anthropic Messages over httpx.

    Args:
        model: Default model id, e.g. ``"claude-sonnet-4-5"``.
        api_key: API key; default ``ANTHROPIC_API_KEY``.
        base_url: Host root; default ``ANTHROPIC_BASE_URL``, else ``https://api.anthropic.com``.
        client: An ``httpx.AsyncClient`` to use (never closed by the provider).
        stream: Use SSE streaming (``False``: one JSON response).
        max_retries: Retries of retryable failures (429, 5xx, 529 overloaded, ...).
        timeout: Seconds per read (connect capped at 10 s) or an ``httpx.Timeout``.
        max_tokens: The required output cap per reply (4096 fits every Claude model).
        backoff_base_s: First retry's maximum delay; doubles per retry.
        backoff_max_s: Cap of the retry delay.
        extra_body: Extra request fields, e.g. ``{"temperature": 0}``.
        extra_headers: Extra HTTP headers (e.g. ``anthropic-beta``).
        name: Provider id in events and errors (default ``"anthropic"``).
    """

    default_name = "anthropic"
    default_base_url = ANTHROPIC_BASE_URL
    base_url_env = "ANTHROPIC_BASE_URL"
    key_env = "ANTHROPIC_API_KEY"

    def __init__(
        self,
        *,
        max_tokens: int = 4096,
        **options: Unpack[HttpOptions],
    ) -> None:
        super().__init__(**options)
        self._max_tokens = max_tokens

    def _url(self, model: str, stream: bool) -> str:
        return f"{self._base_url}/v1/messages"

    def _auth_headers(self) -> dict[str, str]:
        return {"x-api-key": self._require_key(), "anthropic-version": ANTHROPIC_VERSION}

    def _secrets(self) -> list[str | None]:
        return [self._api_key, self._env_key()]

    def _body(self, request: ProviderRequest, model: str, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            # Anthropic requires max_tokens: the request's, else the provider's default.
            "max_tokens": request.max_tokens or self._max_tokens,
            "messages": anthropic_messages(request.messages),
        }
        no_seed(request, "Anthropic Messages")
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.system:
            body["system"] = request.system
        if request.tools:
            body["tools"] = [
                {
                    "name": spec["name"],
                    "description": spec.get("description") or "",
                    "input_schema": tool_parameters(spec),
                }
                for spec in request.tools
            ]
            body["tool_choice"] = anthropic_tool_choice(
                request.tool_choice, request.parallel_tool_calls
            )
        if stream:
            body["stream"] = True
        return body

    def _parse(self, data: Any, request: ProviderRequest) -> AssistantMessage:
        return parse_message(data)

    def _stream_parser(self, request: ProviderRequest) -> StreamParser:
        return AnthropicStream()

    def _decoder(self) -> Decoder:
        return SSEDecoder()


def anthropic_tool_choice(choice: ToolChoice, parallel: bool) -> dict[str, Any]:
    """``tool_choice`` (the Anthropic column of the table in ``docs/providers.md``)."""
    name = forced_tool_name(choice)
    out: dict[str, Any]
    if name is not None:
        out = {"type": "tool", "name": name}
    elif choice == "required":
        out = {"type": "any"}
    elif choice == "none":
        return {"type": "none"}
    else:
        out = {"type": "auto"}
    if not parallel:
        out["disable_parallel_tool_use"] = True
    return out


def anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``messages`` array; consecutive same-role turns merge (tool results first)."""
    out = merged_turns(
        messages, user=_user_blocks, tool_result=_tool_result, assistant=_assistant_blocks
    )
    for turn in out:
        # A user turn must open with its tool_result blocks.
        turn["content"].sort(key=lambda b: b.get("type") != "tool_result")
    return out


def _user_blocks(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"type": "text", "text": message.content}]
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ImageContent):
            source = {"type": "base64", "media_type": block.mime_type, "data": block.data}
            blocks.append({"type": "image", "source": source})
        elif block.text:
            blocks.append({"type": "text", "text": block.text})
    return blocks


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message.call_id,
        "content": message.content,
    }
    if message.is_error:
        block["is_error"] = True
    return block


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        meta = block.provider_meta or {}
        if isinstance(block, ThinkingContent):
            # Only Anthropic's own signed thinking can be sent back; other reasoning is dropped.
            if "signature" in meta:
                blocks.append(
                    {"type": "thinking", "thinking": block.text, "signature": meta["signature"]}
                )
            elif "redacted" in meta:
                blocks.append({"type": "redacted_thinking", "data": meta["redacted"]})
        elif isinstance(block, TextContent):
            if block.text:  # the API rejects empty text blocks
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolCall):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block.id,
                    "name": block.name,
                    "input": dict(block.arguments),
                }
            )
    return blocks


ANTHROPIC_USAGE = CacheUsageKeys(
    input="input_tokens",
    output="output_tokens",
    cache_read="cache_read_input_tokens",
    cache_write="cache_creation_input_tokens",
)
"""Anthropic counts cache reads and writes apart from ``input_tokens``."""


def _raise_if_error(data: Any) -> None:
    if isinstance(data, dict) and data.get("type") == "error":
        err = data.get("error") or {}
        raise event_error(str(err.get("message") or err), err.get("type"))


def parse_message(data: Any) -> AssistantMessage:
    """A whole Messages response as an ``AssistantMessage``."""
    _raise_if_error(data)
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        raise shape_error("content", data)
    builder = ReplyBuilder()
    builder.model = data.get("model")
    builder.usage = usage_with_cache(data.get("usage") or {}, ANTHROPIC_USAGE)
    for index, block in enumerate(data["content"]):
        _start_block(builder, index, block, whole=True)
    builder.finish(_STOP.get(data.get("stop_reason") or "end_turn", "stop"))
    return builder.build()


def _start_block(
    b: ReplyBuilder, index: int, block: Mapping[str, Any], *, whole: bool
) -> ProviderEvent | None:
    kind = block.get("type")
    if kind == "text":
        return b.text(block.get("text") or "", key=index)
    if kind == "thinking":
        meta = {"signature": block["signature"]} if block.get("signature") else None
        return b.thinking(block.get("thinking") or "", key=index, meta=meta)
    if kind == "redacted_thinking":
        return b.thinking("", key=index, meta={"redacted": block.get("data")})
    if kind == "tool_use":
        if whole:
            return b.tool_call(
                call_id=block.get("id"),
                name=block.get("name") or "",
                arguments=block.get("input") or {},
            )
        return b.tool_start(index, call_id=block.get("id"), name=block.get("name") or "")
    return None  # server tools, citations, ...: not part of the neutral message


class AnthropicStream(StreamParser):
    """Messages streaming events → provider events."""

    def __init__(self) -> None:
        super().__init__()
        self._usage: dict[str, Any] = {}

    def feed(self, event: SSEEvent) -> list[ProviderEvent]:
        data = load_json(event.data, "a stream event")
        if not isinstance(data, dict):
            return []
        kind = data.get("type") or event.event
        _raise_if_error(data)
        b = self.builder
        out: ProviderEvent | None = None
        if kind == "message_start":
            message = data.get("message") or {}
            b.model = message.get("model")
            self._add_usage(message.get("usage"))
        elif kind == "content_block_start":
            out = _start_block(
                b, data.get("index", 0), data.get("content_block") or {}, whole=False
            )
        elif kind == "content_block_delta":
            out = self._delta(data.get("index", 0), data.get("delta") or {})
        elif kind == "message_delta":
            self._add_usage(data.get("usage"))
            reason = (data.get("delta") or {}).get("stop_reason")
            if reason:
                b.finish(_STOP.get(reason, "stop"))
        elif kind == "message_stop":
            self.done = True
        return [out] if out is not None else []

    def _delta(self, index: int, delta: Mapping[str, Any]) -> ProviderEvent | None:
        b = self.builder
        kind = delta.get("type")
        if kind == "text_delta":
            return b.text(delta.get("text") or "", key=index)
        if kind == "input_json_delta":
            return b.tool_args(index, delta.get("partial_json") or "")
        if kind == "thinking_delta":
            return b.thinking(delta.get("thinking") or "", key=index)
        if kind == "signature_delta":
            b.update_meta(index, {"signature": delta.get("signature")})
        return None

    def _add_usage(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self._usage.update({k: v for k, v in usage.items() if v is not None})
            self.builder.usage = usage_with_cache(self._usage, ANTHROPIC_USAGE)
