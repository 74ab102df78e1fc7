"""Google Gemini ``generateContent`` / ``streamGenerateContent?alt=sse``.

Wire reference: Gemini API reference, "Generating content" (the
``GenerateContentResponse``, ``Candidate``, ``Part``, ``FunctionCall``,
``FunctionResponse``, ``ToolConfig``/``FunctionCallingConfig``,
``GenerationConfig.responseSchema``, ``UsageMetadata``), the function calling
guide and the "Thought signatures" guide. Requests go to
``{base_url}/v1beta/models/{model}:generateContent`` (streaming:
``:streamGenerateContent?alt=sse``) with the key in ``x-goog-api-key``, never
in the URL.

Gemini's ``thoughtSignature`` and ``functionCall.id`` are kept in
``provider_meta`` and echoed back on replay; function calls without an id
get a generated one that is never sent back. Parameter schemas are rewritten
to Gemini's OpenAPI subset (``_schema.gemini_schema``). Gemini has no switch
for parallel calls: ``parallel_tool_calls=False`` is not sent (the runtime
still runs the calls one by one).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from openprogram.exceptions import LLMError
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
from openprogram.providers._http import error_fields, event_error, retry_after_s, status_error
from openprogram.providers._http_provider import Decoder, HttpProvider, StreamParser
from openprogram.providers._reply import ReplyBuilder
from openprogram.providers._schema import gemini_schema
from openprogram.providers._sse import SSEDecoder, SSEEvent
from openprogram.providers._turns import merged_turns
from openprogram.providers._wire import call_meta, forced_tool_name, load_json, tool_parameters
from openprogram.providers.base import ProviderEvent, ProviderRequest, ToolChoice

__all__ = ["GEMINI_BASE_URL", "GeminiProvider"]

GEMINI_BASE_URL = "https://generativelanguage.googleapis.com"

_STOP: dict[str, StopReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "LANGUAGE": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


class GeminiProvider(HttpProvider):
    """Gemini over httpx.

    Args:
        model: Default model id, e.g. ``"gemini-2.5-flash"``.
        api_key: API key; default ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``.
        base_url: Host root; default ``https://generativelanguage.googleapis.com``.
        client: An ``httpx.AsyncClient`` to use (never closed by the provider).
        stream: Use SSE streaming (``False``: one JSON response).
        max_retries: Retries of retryable failures.
        timeout: Seconds per read (connect capped at 10 s) or an ``httpx.Timeout``.
        backoff_base_s: First retry's maximum delay; doubles per retry.
        backoff_max_s: Cap of the retry delay.
        extra_body: Extra request fields, e.g. ``{"generationConfig": {...}}``.
        extra_headers: Extra HTTP headers.
        name: Provider id in events and errors (default ``"gemini"``).
    """

    default_name = "gemini"
    default_base_url = GEMINI_BASE_URL
    key_env = "GEMINI_API_KEY"
    supports_structured_output = True

    def _url(self, model: str, stream: bool) -> str:
        model = model.removeprefix("models/")
        if stream:
            return f"{self._base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse"
        return f"{self._base_url}/v1beta/models/{model}:generateContent"

    def _env_key(self) -> str | None:
        return os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")

    def _auth_headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self._require_key()}

    def _secrets(self) -> list[str | None]:
        return [self._api_key, self._env_key()]

    def _body(self, request: ProviderRequest, model: str, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"contents": gemini_contents(request.messages)}
        if request.system:
            body["systemInstruction"] = {"parts": [{"text": request.system}]}
        if request.tools:
            body["tools"] = [{"functionDeclarations": [_declaration(s) for s in request.tools]}]
            body["toolConfig"] = {"functionCallingConfig": gemini_tool_choice(request.tool_choice)}
        config: dict[str, Any] = {}
        if request.response_format is not None:
            config["responseMimeType"] = "application/json"
            config["responseSchema"] = gemini_schema(request.response_format.schema)
        if request.temperature is not None:
            config["temperature"] = request.temperature
        if request.max_tokens is not None:
            config["maxOutputTokens"] = request.max_tokens
        if request.seed is not None:
            config["seed"] = request.seed
        if config:
            body["generationConfig"] = config
        return body

    def _parse(self, data: Any, request: ProviderRequest) -> AssistantMessage:
        builder = ReplyBuilder()
        _chunk(builder, data)
        if builder.stop_reason is None:
            builder.finish("stop")
        return builder.build()

    def _stream_parser(self, request: ProviderRequest) -> StreamParser:
        return GeminiStream()

    def _decoder(self) -> Decoder:
        return SSEDecoder()

    def _classify(self, status: int, headers: httpx.Headers, body: bytes) -> LLMError:
        message, code = error_fields(body)
        wait = retry_after_s(headers)
        err = status_error(
            status, message, code=code, retry_after=wait if wait is not None else _retry_delay(body)
        )
        if b"API_KEY_INVALID" in body or "API key not valid" in message:
            err.reason, err.retryable = "auth", False  # Gemini answers a bad key with 400
        return err


def _retry_delay(body: bytes) -> float | None:
    """``google.rpc.RetryInfo.retryDelay`` (e.g. ``"34s"``) from an error's details."""
    try:
        details = load_json(body, "an error").get("error", {}).get("details") or []
    except (LLMError, AttributeError):
        return None  # not the JSON error shape: no hint to read
    for detail in details:
        match = _DURATION.match(str(detail.get("retryDelay") or ""))
        if match:
            return float(match.group(1))
    return None


def gemini_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    """``functionCallingConfig`` (the Gemini column of the table in ``docs/providers.md``)."""
    name = forced_tool_name(choice)
    if name is not None:
        return {"mode": "ANY", "allowedFunctionNames": [name]}
    return {"mode": {"auto": "AUTO", "required": "ANY", "none": "NONE"}[str(choice)]}


def _declaration(spec: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": spec["name"], "description": spec.get("description") or ""}
    params = tool_parameters(spec)
    if params.get("properties"):  # Gemini rejects an OBJECT with no properties
        out["parameters"] = gemini_schema(params)
    return out


def gemini_contents(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """``contents``: user/model turns, consecutive same-role turns merged."""
    metas = call_meta(messages)
    return merged_turns(
        messages,
        user=_user_parts,
        tool_result=lambda result: _function_response(result, metas.get(result.call_id, {})),
        assistant=_model_parts,
        assistant_role="model",
        blocks_key="parts",
    )


def _user_parts(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"text": message.content}]
    return [
        {"inlineData": {"mimeType": b.mime_type, "data": b.data}}
        if isinstance(b, ImageContent)
        else {"text": b.text}
        for b in message.content
    ]


def _function_response(message: ToolResultMessage, meta: Mapping[str, Any]) -> dict[str, Any]:
    # FunctionResponse.response: "output" carries a result, "error" a failure.
    key = "error" if message.is_error else "output"
    response: dict[str, Any] = {"name": message.tool_name, "response": {key: message.content}}
    if meta.get("id"):
        response["id"] = meta["id"]
    return {"functionResponse": response}


def _model_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in message.content:
        meta = block.provider_meta or {}
        signature = meta.get("thoughtSignature")
        part: dict[str, Any]
        if isinstance(block, ThinkingContent):
            if not signature:
                continue  # thought summaries are not sent back; only signed ones matter
            part = {"text": block.text, "thought": True}
        elif isinstance(block, TextContent):
            if not block.text and not signature:
                continue
            part = {"text": block.text}
        elif isinstance(block, ToolCall):
            call: dict[str, Any] = {"name": block.name, "args": dict(block.arguments)}
            if meta.get("id"):
                call["id"] = meta["id"]
            part = {"functionCall": call}
        if signature:
            part["thoughtSignature"] = signature
        parts.append(part)
    return parts


def gemini_usage(data: Mapping[str, Any]) -> Usage:
    """Usage; thinking tokens are billed as output."""
    return Usage(
        input_tokens=int(data.get("promptTokenCount") or 0),
        output_tokens=int(data.get("candidatesTokenCount") or 0)
        + int(data.get("thoughtsTokenCount") or 0),
        cached_tokens=int(data.get("cachedContentTokenCount") or 0),
    )


def _chunk(b: ReplyBuilder, data: Any) -> list[ProviderEvent | None]:
    """Apply one ``GenerateContentResponse`` (a whole reply or a stream chunk)."""
    if isinstance(data, dict) and data.get("error"):
        err = data["error"]
        raise event_error(str(err.get("message") or err), err.get("status"))
    if not isinstance(data, dict):
        return []
    b.model = data.get("modelVersion") or b.model
    if isinstance(data.get("usageMetadata"), dict):
        b.usage = gemini_usage(data["usageMetadata"])
    candidates = data.get("candidates") or []
    if not candidates:
        blocked = (data.get("promptFeedback") or {}).get("blockReason")
        if blocked:
            b.error = f"Gemini blocked the prompt ({blocked})"
            b.finish("content_filter")
        return []
    candidate = candidates[0]
    out = [_part(b, part) for part in (candidate.get("content") or {}).get("parts") or []]
    reason = candidate.get("finishReason")
    if reason:
        stop = _STOP.get(reason, "stop")
        if stop == "error":
            b.error = f"Gemini ended the reply with finishReason {reason}"
        b.finish(stop)
    return out


def _part(b: ReplyBuilder, part: Mapping[str, Any]) -> ProviderEvent | None:
    signature = part.get("thoughtSignature")
    meta = {"thoughtSignature": signature} if signature else None
    call = part.get("functionCall")
    if isinstance(call, dict):
        call_meta_ = dict(meta or {})
        if call.get("id"):
            call_meta_["id"] = call["id"]
        return b.tool_call(
            call_id=call.get("id"),
            name=call.get("name") or "",
            arguments=call.get("args") or {},
            meta=call_meta_ or None,
        )
    if "text" in part and part.get("thought"):
        return b.thinking(part.get("text") or "", meta=meta)
    if "text" in part or meta:
        return b.text(part.get("text") or "", meta=meta)
    return None


class GeminiStream(StreamParser):
    """``streamGenerateContent?alt=sse`` chunks → provider events (the reply ends at EOF)."""

    def feed(self, event: SSEEvent) -> list[ProviderEvent]:
        data = load_json(event.data, "a stream event")
        return [e for e in _chunk(self.builder, data) if e is not None]
