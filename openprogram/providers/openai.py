"""OpenAI Chat Completions, and every server that speaks it (Ollama, vLLM, llama.cpp, LM Studio).

Wire reference: OpenAI API reference, "Chat Completions" (create; the chat
completion object; the chat completion chunk object) and the Structured
Outputs guide. Requests go to ``{base_url}/chat/completions``. Streaming asks
for ``stream_options.include_usage`` so token counts arrive in a last chunk.

Local servers are welcome: without a key nothing is sent in
``Authorization`` (a key is only required for the default OpenAI host), and
their reasoning fields (``reasoning_content``, ``reasoning``) become thinking.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Unpack

from openprogram.exceptions import UserError
from openprogram.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    StopReason,
    TextContent,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from openprogram.providers._http import event_error
from openprogram.providers._http_provider import Decoder, HttpOptions, HttpProvider, StreamParser
from openprogram.providers._reply import ReplyBuilder
from openprogram.providers._schema import openai_strict
from openprogram.providers._sse import SSEDecoder, SSEEvent
from openprogram.providers._wire import (
    data_url,
    forced_tool_name,
    json_arguments,
    load_json,
    safe_name,
    shape_error,
    tool_parameters,
    undo_strict,
)
from openprogram.providers.base import (
    ProviderEvent,
    ProviderRequest,
    ResponseFormat,
    ToolChoice,
    ToolSpec,
)

__all__ = ["OPENAI_BASE_URL", "OpenAIProvider"]

OPENAI_BASE_URL = "https://api.openai.com/v1"

_STOP: dict[str, StopReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}


class OpenAIAuthProvider(HttpProvider):
    """What the two OpenAI wires share: keys, base URL, strict tools (not used directly)."""

    default_base_url = OPENAI_BASE_URL
    base_url_env = "OPENAI_BASE_URL"
    key_env = "OPENAI_API_KEY"

    def __init__(
        self,
        *,
        strict_tools: bool = False,
        api_key_env: str | None = "OPENAI_API_KEY",
        **options: Unpack[HttpOptions],
    ) -> None:
        super().__init__(**options)
        self._strict_tools = strict_tools
        self._key_env = api_key_env

    def _auth_headers(self) -> dict[str, str]:
        if self._base_url == OPENAI_BASE_URL:
            return {"authorization": f"Bearer {self._require_key()}"}
        key = self._api_key or self._env_key()
        return {"authorization": f"Bearer {key}"} if key else {}

    def _secrets(self) -> list[str | None]:
        return [self._api_key, self._env_key()]


class OpenAIProvider(OpenAIAuthProvider):
    """OpenAI Chat Completions over httpx, or any OpenAI-compatible server.

    Args:
        model: Default model id, e.g. ``"gpt-4o-mini"`` (or ``"llama3.2"`` on Ollama).
        api_key: API key; default the ``api_key_env`` variable (``OPENAI_API_KEY``).
            Required only for the default OpenAI host.
        base_url: Including ``/v1``; default ``OPENAI_BASE_URL`` from the
            environment, else ``https://api.openai.com/v1``.
        client: An ``httpx.AsyncClient`` to use (never closed by the provider).
        stream: Use SSE streaming (``False``: one JSON response).
        max_retries: Retries of retryable failures per call.
        timeout: Seconds per read (connect capped at 10 s) or an ``httpx.Timeout``.
        strict_tools: Send every tool in strict mode (a tool spec can also carry
            ``"strict": True``); a schema strict mode cannot express is sent non-strict.
        api_key_env: Environment variable with the key (``None``: never read one).
        backoff_base_s: First retry's maximum delay; doubles per retry.
        backoff_max_s: Cap of the retry delay.
        extra_body: Extra request fields, e.g. ``{"temperature": 0}``, laid over the body.
        extra_headers: Extra HTTP headers.
        name: Provider id in events and errors (default ``"openai"``).
        total_timeout_s: Seconds one call may take in all (default 900; ``None``: no limit).
        max_tokens_field: The body field ``max_tokens=`` goes to: ``None`` (default)
            picks ``max_completion_tokens`` on OpenAI's host, ``max_tokens`` elsewhere.
    """

    default_name = "openai"
    supports_structured_output = True

    def __init__(
        self,
        *,
        max_tokens_field: Literal["max_completion_tokens", "max_tokens"] | None = None,
        strict_tools: bool = False,
        api_key_env: str | None = "OPENAI_API_KEY",
        **options: Unpack[HttpOptions],
    ) -> None:
        super().__init__(strict_tools=strict_tools, api_key_env=api_key_env, **options)
        if max_tokens_field not in (None, "max_completion_tokens", "max_tokens"):
            raise UserError(
                f"max_tokens_field={max_tokens_field!r}: use 'max_completion_tokens', "
                "'max_tokens' or None (chosen by host)"
            )
        # OpenAI's own host wants max_completion_tokens (max_tokens is deprecated there and
        # refused by reasoning models); compatible servers (Ollama, llama.cpp, vLLM, LM
        # Studio) all document max_tokens.
        default = "max_completion_tokens" if self._base_url == OPENAI_BASE_URL else "max_tokens"
        self._max_tokens_field: str = max_tokens_field or default

    def _url(self, model: str, stream: bool) -> str:
        return f"{self._base_url}/chat/completions"

    def _body(self, request: ProviderRequest, model: str, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "messages": chat_messages(request.system, request.messages),
        }
        if request.tools:
            body["tools"] = [self._tool(spec) for spec in request.tools]
            body["tool_choice"] = chat_tool_choice(request.tool_choice)
            if not request.parallel_tool_calls:
                body["parallel_tool_calls"] = False
        if request.response_format is not None:
            body["response_format"] = chat_response_format(request.response_format)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body[self._max_tokens_field] = request.max_tokens
        if request.seed is not None:
            body["seed"] = request.seed
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def _tool(self, spec: ToolSpec) -> dict[str, Any]:
        function: dict[str, Any] = {
            "name": spec["name"],
            "description": spec.get("description") or "",
            "parameters": tool_parameters(spec),
        }
        if self._strict_tools or spec.get("strict") is True:
            strict = openai_strict(function["parameters"])
            if strict is not None:
                function["parameters"], function["strict"] = strict, True
        return {"type": "function", "function": function}

    def _parse(self, data: Any, request: ProviderRequest) -> AssistantMessage:
        return parse_chat_completion(data)

    def _stream_parser(self, request: ProviderRequest) -> StreamParser:
        return ChatStream()

    def _decoder(self) -> Decoder:
        return SSEDecoder()

    def _finalize(self, message: AssistantMessage, request: ProviderRequest) -> AssistantMessage:
        return undo_strict(message, request, strict_tools=self._strict_tools)


def chat_tool_choice(choice: ToolChoice) -> Any:
    """The ``tool_choice`` field (the OpenAI chat column of the table in ``docs/providers.md``)."""
    name = forced_tool_name(choice)
    if name is not None:
        return {"type": "function", "function": {"name": name}}
    return choice


def chat_response_format(fmt: ResponseFormat) -> dict[str, Any]:
    """``response_format`` of type ``json_schema`` (strict when asked and expressible)."""
    schema: Mapping[str, Any] = fmt.schema
    strict = openai_strict(schema) if fmt.strict else None
    return {
        "type": "json_schema",
        "json_schema": {
            "name": safe_name(fmt.name),
            "schema": strict if strict is not None else dict(schema),
            "strict": strict is not None,
        },
    }


def chat_messages(system: str | None, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``messages`` array: system first, then the history in order."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": _user_content(message)})
        elif isinstance(message, ToolResultMessage):
            # Chat Completions has no error flag on tool results: the text says it.
            out.append(
                {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
            )
        else:
            out.append(_assistant(message))
    return out


def _user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ImageContent):
            parts.append({"type": "image_url", "image_url": {"url": data_url(block)}})
        else:
            parts.append({"type": "text", "text": block.text})
    return parts


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    # Thinking is not replayed: Chat Completions takes no reasoning input, and
    # servers that stream reasoning_content reject it in requests.
    text = "".join(b.text for b in message.content if isinstance(b, TextContent))
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": json_arguments(c)},
        }
        for c in message.tool_calls
    ]
    if calls:
        out["tool_calls"] = calls
    elif not text:
        out["content"] = ""
    return out


def chat_usage(data: Mapping[str, Any]) -> Usage:
    """Usage from ``prompt_tokens``/``completion_tokens``/``prompt_tokens_details``."""
    details = data.get("prompt_tokens_details") or {}
    return Usage(
        input_tokens=int(data.get("prompt_tokens") or 0),
        output_tokens=int(data.get("completion_tokens") or 0),
        cached_tokens=int(details.get("cached_tokens") or 0),
    )


def _raise_if_error(data: Any) -> None:
    err = data.get("error") if isinstance(data, dict) else None
    if err:
        message = err.get("message") if isinstance(err, dict) else str(err)
        code = (err.get("code") or err.get("type")) if isinstance(err, dict) else None
        raise event_error(str(message or err), str(code) if code else None)


def parse_chat_completion(data: Any) -> AssistantMessage:
    """A whole ``chat.completion`` object as an ``AssistantMessage``."""
    _raise_if_error(data)
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
        raise shape_error("choices", data)
    builder = ReplyBuilder()
    builder.model = data.get("model")
    if isinstance(data.get("usage"), dict):
        builder.usage = chat_usage(data["usage"])
    choice = data["choices"][0] if data["choices"] else {}
    message = choice.get("message") or {}
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        builder.thinking(reasoning)
    if isinstance(message.get("content"), str):
        builder.text(message["content"])
    if isinstance(message.get("refusal"), str) and message["refusal"]:
        builder.text(message["refusal"])
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        builder.tool_call(
            call_id=call.get("id"),
            name=function.get("name") or "",
            arguments=function.get("arguments") or "",
        )
    reason = choice.get("finish_reason")
    stop = "refusal" if message.get("refusal") else _STOP.get(reason or "stop", "stop")
    builder.finish(stop)
    return builder.build()


class ChatStream(StreamParser):
    """``chat.completion.chunk`` events → provider events."""

    def __init__(self) -> None:
        super().__init__()
        self._refused = False
        self._ids: dict[str, int] = {}  # call id → index, for servers that omit "index"
        self._last_index = -1

    def feed(self, event: SSEEvent) -> list[ProviderEvent]:
        if event.data.strip() == "[DONE]":
            self.done = True
            return []
        data = load_json(event.data, "a stream event")
        if not isinstance(data, dict):
            return []
        _raise_if_error(data)
        b = self.builder
        b.model = data.get("model") or b.model
        if isinstance(data.get("usage"), dict):
            b.usage = chat_usage(data["usage"])
        out: list[ProviderEvent | None] = []
        for choice in data.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            out.extend(self._delta(choice.get("delta") or {}))
            reason = choice.get("finish_reason")
            if reason:
                b.finish("refusal" if self._refused else _STOP.get(reason, "stop"))
        return [e for e in out if e is not None]

    def _delta(self, delta: Mapping[str, Any]) -> list[ProviderEvent | None]:
        b = self.builder
        out: list[ProviderEvent | None] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str):
            out.append(b.thinking(reasoning))
        if isinstance(delta.get("content"), str):
            out.append(b.text(delta["content"]))
        if isinstance(delta.get("refusal"), str):
            self._refused = True
            out.append(b.text(delta["refusal"]))
        for call in delta.get("tool_calls") or []:
            out.extend(self._tool_delta(call))
        return out

    def _tool_delta(self, call: Mapping[str, Any]) -> list[ProviderEvent | None]:
        b = self.builder
        index = call.get("index")
        call_id = call.get("id") or None
        if not isinstance(index, int):
            index = self._ids.get(call_id, self._last_index + 1) if call_id else self._last_index
        self._last_index = max(self._last_index, index)
        if call_id:
            self._ids[call_id] = index
        function = call.get("function") or {}
        key = ("tool", index)
        out: list[ProviderEvent | None] = []
        if not b.has_tool(key):
            out.append(b.tool_start(key, call_id=call_id, name=function.get("name") or ""))
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments)  # a few servers send the object itself
        if arguments:
            out.append(b.tool_args(key, arguments))
        return out
