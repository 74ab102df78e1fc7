"""OpenAI Responses API.

Wire reference: OpenAI API reference, "Responses" (create; the response
object; streaming events ``response.output_item.added``/``.done``,
``response.output_text.delta``, ``response.function_call_arguments.delta``,
``response.reasoning_summary_text.delta``, ``response.completed``/
``.incomplete``/``.failed``, ``error``) and the function calling guide
(``function_call``/``function_call_output`` items, ``strict`` on every
function tool). Requests go to ``{base_url}/responses``.

Reasoning items are echoed back on replay as received (id, summary, and
``encrypted_content`` when the server sent it), as the API asks when a
conversation is resent by hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from openprogram.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from openprogram.providers._http import event_error
from openprogram.providers._http_provider import Decoder, StreamParser
from openprogram.providers._reply import ReplyBuilder
from openprogram.providers._schema import openai_strict
from openprogram.providers._sse import SSEDecoder, SSEEvent
from openprogram.providers._wire import (
    data_url,
    forced_tool_name,
    json_arguments,
    load_json,
    no_seed,
    safe_name,
    shape_error,
    tool_parameters,
    undo_strict,
)
from openprogram.providers.base import ProviderEvent, ProviderRequest, ResponseFormat, ToolSpec
from openprogram.providers.openai import OpenAIAuthProvider

__all__ = ["OpenAIResponsesProvider"]

_REASONING_KEYS = ("type", "id", "summary", "encrypted_content")


class OpenAIResponsesProvider(OpenAIAuthProvider):
    """OpenAI Responses over httpx (``{base_url}/responses``).

    Takes the same arguments as ``OpenAIProvider``; see there. The provider id
    in events and errors is ``"openai-responses"``.
    """

    default_name = "openai-responses"
    supports_structured_output = True

    def _url(self, model: str, stream: bool) -> str:
        return f"{self._base_url}/responses"

    def _body(self, request: ProviderRequest, model: str, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "input": responses_input(request.messages)}
        if request.system:
            body["instructions"] = request.system
        if request.tools:
            body["tools"] = [self._tool(spec) for spec in request.tools]
            name = forced_tool_name(request.tool_choice)
            body["tool_choice"] = (
                {"type": "function", "name": name} if name else request.tool_choice
            )
            if not request.parallel_tool_calls:
                body["parallel_tool_calls"] = False
        if request.response_format is not None:
            body["text"] = {"format": _text_format(request.response_format)}
        no_seed(request, "OpenAI Responses")
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_output_tokens"] = request.max_tokens
        if stream:
            body["stream"] = True
        return body

    def _tool(self, spec: ToolSpec) -> dict[str, Any]:
        parameters = tool_parameters(spec)
        strict = None
        if self._strict_tools or spec.get("strict") is True:
            strict = openai_strict(parameters)
        return {
            "type": "function",
            "name": spec["name"],
            "description": spec.get("description") or "",
            "parameters": strict if strict is not None else parameters,
            "strict": strict is not None,  # explicit: the Responses default is strict
        }

    def _parse(self, data: Any, request: ProviderRequest) -> AssistantMessage:
        return parse_response(data)

    def _stream_parser(self, request: ProviderRequest) -> StreamParser:
        return ResponsesStream()

    def _decoder(self) -> Decoder:
        return SSEDecoder()

    def _finalize(self, message: AssistantMessage, request: ProviderRequest) -> AssistantMessage:
        return undo_strict(message, request, strict_tools=self._strict_tools)


def _text_format(fmt: ResponseFormat) -> dict[str, Any]:
    strict = openai_strict(fmt.schema) if fmt.strict else None
    return {
        "type": "json_schema",
        "name": safe_name(fmt.name),
        "schema": strict if strict is not None else dict(fmt.schema),
        "strict": strict is not None,
    }


def responses_input(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``input`` item list of a conversation."""
    items: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            items.append({"role": "user", "content": _user_content(message)})
        elif isinstance(message, ToolResultMessage):
            # No error flag exists on function_call_output: the text says it.
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.call_id,
                    "output": message.content,
                }
            )
        else:
            items.extend(_assistant_items(message))
    return items


def _user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    return [
        {"type": "input_image", "image_url": data_url(b)}
        if isinstance(b, ImageContent)
        else {"type": "input_text", "text": b.text}
        for b in message.content
    ]


def _assistant_items(message: AssistantMessage) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for block in message.content:
        meta = block.provider_meta or {}
        if isinstance(block, ThinkingContent):
            if isinstance(meta.get("item"), Mapping):
                items.append(dict(meta["item"]))
        elif isinstance(block, TextContent):
            if not block.text and "id" not in meta:
                continue
            item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": block.text, "annotations": []}],
            }
            if "id" in meta:
                item.update(id=meta["id"], status="completed")
            items.append(item)
        elif isinstance(block, ToolCall):
            call = {
                "type": "function_call",
                "call_id": block.id,
                "name": block.name,
                "arguments": json_arguments(block),
            }
            if "id" in meta:
                call["id"] = meta["id"]
            items.append(call)
    return items


def responses_usage(data: Mapping[str, Any]) -> Usage:
    """Usage from ``input_tokens``/``output_tokens``/``input_tokens_details``."""
    details = data.get("input_tokens_details") or {}
    return Usage(
        input_tokens=int(data.get("input_tokens") or 0),
        output_tokens=int(data.get("output_tokens") or 0),
        cached_tokens=int(details.get("cached_tokens") or 0),
    )


def _raise_failed(response: Mapping[str, Any]) -> None:
    if response.get("status") == "failed" or response.get("error"):
        err = response.get("error") or {}
        raise event_error(str(err.get("message") or "the response failed"), err.get("code"))


def parse_response(data: Any) -> AssistantMessage:
    """A whole response object as an ``AssistantMessage``."""
    if not isinstance(data, dict) or not isinstance(data.get("output"), list):
        if isinstance(data, dict) and data.get("error"):
            _raise_failed(data)
        raise shape_error("output", data)
    _raise_failed(data)
    return _message(data, data["output"])


def _message(response: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> AssistantMessage:
    b = ReplyBuilder()
    b.model = response.get("model")
    b.usage = responses_usage(response.get("usage") or {})
    refused = False
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind == "message":
            meta = {"id": item["id"]} if item.get("id") else None
            for number, part in enumerate(item.get("content") or []):
                refused = refused or part.get("type") == "refusal"
                text = part.get("refusal") if part.get("type") == "refusal" else part.get("text")
                b.text(text or "", key=(index, number), meta=meta)
        elif kind == "function_call":
            meta = {"id": item["id"]} if item.get("id") else None
            b.tool_call(
                call_id=item.get("call_id"),
                name=item.get("name") or "",
                arguments=item.get("arguments") or "",
                meta=meta,
            )
        elif kind == "reasoning":
            parts = item.get("summary") or item.get("content") or []
            texts = [p.get("text") or "" for p in parts]
            kept = {k: item[k] for k in _REASONING_KEYS if k in item}
            b.thinking("\n\n".join(texts), key=index, meta={"item": kept})
    b.finish(_stop(response, refused))
    return b.build()


def _stop(response: Mapping[str, Any], refused: bool) -> StopReason:
    if refused:
        return "refusal"
    if response.get("status") == "incomplete":
        why = (response.get("incomplete_details") or {}).get("reason")
        return "content_filter" if why == "content_filter" else "length"
    return "stop"


class ResponsesStream(StreamParser):
    """Responses streaming events → provider events; the final message comes from the last one."""

    def __init__(self) -> None:
        super().__init__()
        self._items: dict[int, Mapping[str, Any]] = {}
        self._final: Mapping[str, Any] | None = None

    def feed(self, event: SSEEvent) -> list[ProviderEvent]:
        data = load_json(event.data, "a stream event")
        if not isinstance(data, dict):
            return []
        kind = data.get("type") or event.event
        index = data.get("output_index", 0)
        b = self.builder
        out: ProviderEvent | None = None
        if kind == "error":
            raise event_error(str(data.get("message") or data), data.get("code"))
        if kind in ("response.created", "response.in_progress"):
            b.model = (data.get("response") or {}).get("model")
        elif kind == "response.output_item.added":
            item = data.get("item") or {}
            if item.get("type") == "function_call":
                meta = {"id": item["id"]} if item.get("id") else None
                out = b.tool_start(
                    index, call_id=item.get("call_id"), name=item.get("name") or "", meta=meta
                )
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            out = b.text(data.get("delta") or "", key=("text", index))
        elif kind == "response.function_call_arguments.delta":
            out = b.tool_args(index, data.get("delta") or "")
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            out = b.thinking(data.get("delta") or "", key=("thinking", index))
        elif kind == "response.output_item.done":
            self._items[index] = data.get("item") or {}
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = data.get("response") or {}
            _raise_failed(response)
            self._final, self.done = response, True
        return [out] if out is not None else []

    def finish(self, cut_reason: str | None) -> AssistantMessage:
        if self._final is None:
            return self.builder.build(cut_reason=cut_reason)
        items = self._final.get("output") or [self._items[i] for i in sorted(self._items)]
        return _message(self._final, items)
