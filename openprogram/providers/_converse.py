"""Amazon Bedrock Converse wire mapping: request bodies, replies and stream events.

Wire reference: Amazon Bedrock API reference, "Converse" and "ConverseStream"
(``Message``, ``ContentBlock``, ``ToolConfiguration``/``ToolChoice``,
``ToolResultBlock.status``, ``ConverseStreamOutput`` events and modelled
exceptions). ``bedrock.py`` holds the provider (endpoint, SigV4, errors).

Documented emulation: Converse has no "none" tool choice. With
``tool_choice="none"`` the tools stay in ``toolConfig`` (Bedrock requires them
whenever the history holds tool blocks), the system prompt asks for a text
answer (``NO_TOOL_INSTRUCTION``), and any tool call the model makes anyway is
dropped from the reply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from openprogram.exceptions import LLMError, LLMErrorReason, UserError
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
from openprogram.providers._eventstream import EventStreamMessage
from openprogram.providers._http import is_context_length
from openprogram.providers._http_provider import StreamParser
from openprogram.providers._reply import ReplyBuilder
from openprogram.providers._turns import merged_turns
from openprogram.providers._wire import (
    CacheUsageKeys,
    forced_tool_name,
    load_json,
    tool_parameters,
    usage_with_cache,
)
from openprogram.providers.base import ProviderEvent, ProviderRequest, ToolSpec

__all__ = [
    "CONVERSE_USAGE",
    "ERRORS",
    "NO_TOOL_INSTRUCTION",
    "STOP",
    "BedrockStream",
    "apply_none",
    "bedrock_messages",
    "tool_config",
    "whole_block",
]

NO_TOOL_INSTRUCTION = "Do not call any tool in this reply; answer in text."
"""Appended to the system prompt for the ``tool_choice="none"`` emulation."""

STOP: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}
ERRORS: dict[str, tuple[LLMErrorReason, bool]] = {
    "throttlingexception": ("rate_limit", True),
    "servicequotaexceededexception": ("rate_limit", False),
    "serviceunavailableexception": ("server", True),
    "internalserverexception": ("server", True),
    "modelstreamerrorexception": ("server", True),
    "modelnotreadyexception": ("server", True),
    "modeltimeoutexception": ("timeout", True),
    "modelerrorexception": ("server", False),
    "validationexception": ("invalid_request", False),
    "resourcenotfoundexception": ("invalid_request", False),
    "accessdeniedexception": ("auth", False),
    "unrecognizedclientexception": ("auth", False),
    "expiredtokenexception": ("auth", False),
    "invalidsignatureexception": ("auth", False),
}
_IMAGE_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}


def _stream_exception(kind: str, message: str) -> LLMError:
    reason, retryable = ERRORS.get(kind.lower(), ("server", False))
    if reason == "invalid_request" and is_context_length(message):
        reason = "context_length"
    return LLMError(message, reason=reason, retryable=retryable, provider_message=message)


# -- request mapping -----------------------------------------------------------------------


def tool_config(request: ProviderRequest) -> tuple[list[ToolSpec], dict[str, Any] | None]:
    tools = list(request.tools)
    choice = request.tool_choice
    if not tools:
        names = _history_tool_names(request.messages)
        if not names:
            return [], None
        # Bedrock refuses tool blocks in the history without a toolConfig: declare
        # the names seen there and forbid calls (the "none" emulation).
        tools = [
            {
                "name": n,
                "description": "(not available now)",
                "parameters": {"type": "object", "properties": {}},
            }
            for n in names
        ]
        choice = "none"
    config: dict[str, Any] = {
        "tools": [
            {
                "toolSpec": {
                    "name": s["name"],
                    "description": s.get("description") or s["name"],
                    "inputSchema": {"json": tool_parameters(s)},
                }
            }
            for s in tools
        ]
    }
    name = forced_tool_name(choice)
    if name is not None:
        config["toolChoice"] = {"tool": {"name": name}}
    elif choice == "required":
        config["toolChoice"] = {"any": {}}
    elif choice == "auto":
        config["toolChoice"] = {"auto": {}}
    return tools, config


def _history_tool_names(messages: Sequence[Message]) -> list[str]:
    names: dict[str, None] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            names.update((c.name, None) for c in message.tool_calls)
        elif isinstance(message, ToolResultMessage):
            names[message.tool_name] = None
    return list(names)


def bedrock_messages(messages: Sequence[Message], model: str) -> list[dict[str, Any]]:
    """Converse ``messages``; consecutive same-role turns merged."""
    return merged_turns(
        messages,
        user=_user_blocks,
        tool_result=lambda result: _tool_result(result, model),
        assistant=_assistant_blocks,
    )


def _user_blocks(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"text": message.content}]
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ImageContent):
            fmt = _IMAGE_FORMATS.get(block.mime_type)
            if fmt is None:
                raise UserError(
                    f"Bedrock takes png, jpeg, gif or webp images, not {block.mime_type}; "
                    "convert the image first"
                )
            blocks.append({"image": {"format": fmt, "source": {"bytes": block.data}}})
        elif block.text:
            blocks.append({"text": block.text})
    return blocks


def _tool_result(message: ToolResultMessage, model: str) -> dict[str, Any]:
    result: dict[str, Any] = {"toolUseId": message.call_id, "content": [{"text": message.content}]}
    if message.is_error:
        # "status" is accepted by Anthropic Claude and Amazon Nova models only (API reference).
        if "anthropic" in model or "nova" in model:
            result["status"] = "error"
        else:
            result["content"] = [{"text": f"Error: {message.content}"}]
    return {"toolResult": result}


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        meta = block.provider_meta or {}
        if isinstance(block, ThinkingContent):
            if meta.get("signature"):
                text = {"text": block.text, "signature": meta["signature"]}
                blocks.append({"reasoningContent": {"reasoningText": text}})
            elif meta.get("redacted"):
                blocks.append({"reasoningContent": {"redactedContent": meta["redacted"]}})
        elif isinstance(block, TextContent):
            if block.text:  # Converse rejects blank text blocks
                blocks.append({"text": block.text})
        elif isinstance(block, ToolCall):
            blocks.append(
                {
                    "toolUse": {
                        "toolUseId": block.id,
                        "name": block.name,
                        "input": dict(block.arguments),
                    }
                }
            )
    return blocks


# -- response mapping ----------------------------------------------------------------------


CONVERSE_USAGE = CacheUsageKeys(
    input="inputTokens",
    output="outputTokens",
    cache_read="cacheReadInputTokens",
    cache_write="cacheWriteInputTokens",
)
"""Converse counts cache reads and writes apart from ``inputTokens``."""


def whole_block(b: ReplyBuilder, index: int, block: Mapping[str, Any]) -> None:
    if "text" in block:
        b.text(str(block["text"]), key=index)
    elif isinstance(block.get("toolUse"), dict):
        use = block["toolUse"]
        b.tool_call(
            call_id=use.get("toolUseId"),
            name=use.get("name") or "",
            arguments=use.get("input") or {},
        )
    elif isinstance(block.get("reasoningContent"), dict):
        _reasoning(b, index, block["reasoningContent"])


def _reasoning(b: ReplyBuilder, index: int, content: Mapping[str, Any]) -> ProviderEvent | None:
    if "redactedContent" in content:
        return b.thinking("", key=index, meta={"redacted": content["redactedContent"]})
    text = content.get("reasoningText", content)
    signature = text.get("signature")
    out = b.thinking(str(text.get("text") or ""), key=index)
    if signature:
        b.update_meta(index, {"signature": signature})
    return out


def apply_none(message: AssistantMessage, request: ProviderRequest) -> AssistantMessage:
    """The "none" emulation: a tool call the model made anyway is dropped."""
    if request.tool_choice != "none" and request.tools:
        return message
    if not message.tool_calls:
        return message
    content = tuple(c for c in message.content if not isinstance(c, ToolCall))
    stop = "stop" if message.stop_reason == "tool_calls" else message.stop_reason
    return replace(message, content=content, stop_reason=stop)


class BedrockStream(StreamParser):
    """ConverseStream event-stream messages → provider events."""

    def feed(self, event: EventStreamMessage) -> list[ProviderEvent]:
        kind = str(event.headers.get(":message-type", "event"))
        if kind == "exception":
            message = str(load_json(event.payload, "an exception").get("message") or "")
            raise _stream_exception(str(event.headers.get(":exception-type", "")), message)
        if kind == "error":
            raise _stream_exception(
                str(event.headers.get(":error-code", "")),
                str(event.headers.get(":error-message", "")),
            )
        name = str(event.headers.get(":event-type", ""))
        data = load_json(event.payload or b"{}", f"a {name} event")
        if not isinstance(data, dict):
            return []
        out = self._event(name, data)
        return [out] if out is not None else []

    def _event(self, name: str, data: Mapping[str, Any]) -> ProviderEvent | None:
        b = self.builder
        index = data.get("contentBlockIndex", 0)
        if name == "contentBlockStart":
            use = (data.get("start") or {}).get("toolUse")
            if isinstance(use, dict):
                return b.tool_start(index, call_id=use.get("toolUseId"), name=use.get("name") or "")
        elif name == "contentBlockDelta":
            delta = data.get("delta") or {}
            if "text" in delta:
                return b.text(str(delta["text"]), key=index)
            if isinstance(delta.get("toolUse"), dict):
                return b.tool_args(index, str(delta["toolUse"].get("input") or ""))
            if isinstance(delta.get("reasoningContent"), dict):
                return _reasoning(b, index, delta["reasoningContent"])
        elif name == "messageStop":
            b.finish(STOP.get(str(data.get("stopReason")), "stop"))
        elif name == "metadata":
            b.usage = usage_with_cache(data.get("usage") or {}, CONVERSE_USAGE)
            self.done = True
        return None
