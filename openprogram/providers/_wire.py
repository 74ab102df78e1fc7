"""Small mapping helpers several wire formats share."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from openprogram.exceptions import LLMError, UserError
from openprogram.messages import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from openprogram.providers._http import event_error
from openprogram.providers._json import loads
from openprogram.providers._schema import openai_strict, strip_strict_nulls
from openprogram.providers.base import (
    ProviderEvent,
    ProviderRequest,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
)

__all__ = [
    "EXCERPT_CHARS",
    "CacheUsageKeys",
    "call_meta",
    "data_url",
    "excerpt",
    "forced_tool_name",
    "json_arguments",
    "load_json",
    "merged_body",
    "message_events",
    "no_seed",
    "safe_name",
    "set_message",
    "shape_error",
    "tool_parameters",
    "undo_strict",
    "usage_with_cache",
]

_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def forced_tool_name(choice: ToolChoice) -> str | None:
    """The tool a ``{"type": "function", "name": X}`` choice forces; ``None`` for a mode string.

    Raises:
        UserError: ``choice`` is neither a known mode nor a forced-tool mapping.
    """
    if isinstance(choice, str):
        if choice in ("auto", "required", "none"):
            return None
        raise UserError(
            f'tool_choice={choice!r} is not known: use "auto", "required", "none" '
            'or {"type": "function", "name": "<tool>"}'
        )
    name = choice.get("name")
    if choice.get("type") == "function" and isinstance(name, str) and name:
        return name
    raise UserError(
        f'tool_choice={dict(choice)!r} is not known: a forced tool is {{"type": "function", '
        '"name": "<tool>"}'
    )


def tool_parameters(spec: ToolSpec) -> dict[str, Any]:
    """A tool's parameter schema, an empty object schema when it has none."""
    params = spec.get("parameters")
    return dict(params) if isinstance(params, Mapping) and params else dict(_EMPTY_OBJECT)


def data_url(image: ImageContent) -> str:
    """``data:<mime>;base64,<data>`` for wires that take images as URLs."""
    return f"data:{image.mime_type};base64,{image.data}"


def safe_name(name: str) -> str:
    """A schema name made of the characters every provider accepts (1-64 of ``[A-Za-z0-9_-]``)."""
    return _NAME_CHARS.sub("_", name)[:64] or "response"


def json_arguments(call: ToolCall) -> str:
    """A call's arguments as the JSON text the wire carries."""
    return json.dumps(dict(call.arguments), ensure_ascii=False)


def call_meta(messages: Sequence[Message]) -> dict[str, Mapping[str, Any]]:
    """``call id → provider_meta`` of every tool call in the history (for replaying ids)."""
    out: dict[str, Mapping[str, Any]] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                out[call.id] = call.provider_meta or {}
    return out


def undo_strict(
    message: AssistantMessage, request: ProviderRequest, *, strict_tools: bool
) -> AssistantMessage:
    """Drop the nulls strict mode made the model write (see ``strip_strict_nulls``).

    Applies to the arguments of tools that were sent strict and to a JSON
    answer given under a strict ``response_format``, so both validate against
    the schemas the program declared.
    """
    schemas = {
        spec["name"]: tool_parameters(spec)
        for spec in request.tools
        if (strict_tools or spec.get("strict") is True)
        and openai_strict(tool_parameters(spec)) is not None
    }
    fmt = request.response_format
    answer = fmt.schema if fmt is not None and fmt.strict and openai_strict(fmt.schema) else None
    if not schemas and answer is None:
        return message
    content: list[AssistantContent] = []
    for block in message.content:
        if isinstance(block, ToolCall) and block.name in schemas:
            arguments = strip_strict_nulls(dict(block.arguments), schemas[block.name])
            content.append(replace(block, arguments=arguments))
        elif isinstance(block, TextContent) and answer is not None:
            content.append(replace(block, text=_strip_answer(block.text, answer)))
        else:
            content.append(block)
    return replace(message, content=tuple(content))


def _strip_answer(text: str, schema: Mapping[str, Any]) -> str:
    try:
        value = loads(text)
    except ValueError:
        return text  # not a JSON answer (yet): the runtime's own checks report it
    stripped = strip_strict_nulls(value, schema)
    return text if stripped == value else json.dumps(stripped, ensure_ascii=False)


EXCERPT_CHARS = 200
"""``LLMError.body_excerpt`` keeps this much of a body that was not the wire format."""
_EXCERPT_WINDOW = EXCERPT_CHARS + 16 * 1024
# Kept raw until the provider scrubs it and only then cuts it to EXCERPT_CHARS: a key
# straddling the cut must be whole when scrubbed (long AWS session tokens included).


def excerpt(data: Any) -> str:
    """The raw start of a body for ``LLMError.body_excerpt`` (scrubbed and cut later)."""
    if isinstance(data, bytes):
        return data[: _EXCERPT_WINDOW * 4].decode(errors="replace")[:_EXCERPT_WINDOW]
    text = data if isinstance(data, str) else str(data)
    return text[:_EXCERPT_WINDOW]


def load_json(data: str | bytes, what: str) -> Any:
    """Parse JSON from the wire; malformed JSON is a non-retryable ``server`` error.

    The body is kept off the message (it may be the model's answer: data policy)
    and put on ``LLMError.body_excerpt``.
    """
    try:
        return loads(data)
    except ValueError as exc:
        raise LLMError(
            f"the provider sent malformed JSON in {what} ({exc}; "
            f"{len(data)} {'characters' if isinstance(data, str) else 'bytes'})",
            reason="server",
            retryable=False,
            body_excerpt=excerpt(data),
        ) from None


def shape_error(what: str, data: Any) -> LLMError:
    """A reply of the wrong shape (``what`` is missing); the body goes to ``body_excerpt``."""
    err = event_error(f"the response has no {what}", None)
    err.body_excerpt = excerpt(data)
    return err


def message_events(message: AssistantMessage) -> list[ProviderEvent]:
    """Delta events equivalent to a whole (non-streamed) message, so listeners see its text."""
    events: list[ProviderEvent] = []
    index = 0
    for block in message.content:
        if isinstance(block, TextContent) and block.text:
            events.append(TextDelta(block.text))
        elif isinstance(block, ThinkingContent) and block.text:
            events.append(ThinkingDelta(block.text))
        elif isinstance(block, ToolCall):
            raw = json.dumps(dict(block.arguments))
            events.append(
                ToolCallDelta(index=index, id=block.id, name=block.name, arguments_delta=raw)
            )
            index += 1
    return events


def no_seed(request: ProviderRequest, wire: str) -> None:
    """Refuse ``seed`` on a wire that has no such field (never accepted and ignored).

    Raises:
        UserError: ``request.seed`` is set.
    """
    if request.seed is not None:
        raise UserError(
            f"seed={request.seed!r}: the {wire} API has no sampling seed, so it cannot be "
            "honoured; drop seed= for this provider (OpenAI chat, Gemini and the local model "
            "take one)"
        )


def set_message(err: LLMError, message: str) -> None:
    """Replace an ``LLMError``'s text everywhere it is kept (``str``, ``repr``, ``args``)."""
    err.message = message
    err.args = (message,)


def merged_body(body: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``extra_body`` laid over the body; nested objects merge, so e.g. Gemini's
    ``generationConfig`` can gain a temperature and keep its response schema."""
    for key, value in extra.items():
        current = body.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            body[key] = merged_body(dict(current), value)
        else:
            body[key] = value
    return body


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheUsageKeys:
    """Where a wire that counts prompt-cache tokens apart from its input tokens puts each count."""

    input: str
    """Prompt tokens neither read from nor written to the cache."""
    output: str
    """Generated tokens."""
    cache_read: str
    """Prompt tokens read from the cache."""
    cache_write: str
    """Prompt tokens written to the cache."""


def usage_with_cache(data: Mapping[str, Any], keys: CacheUsageKeys) -> Usage:
    """``Usage`` of a wire that counts cache reads and writes apart from its input tokens.

    ``Usage.input_tokens`` is the whole prompt, so both are added back;
    ``Usage.cached_tokens`` is the part read from the cache. A missing or
    ``null`` count is 0.
    """
    read = int(data.get(keys.cache_read) or 0)
    written = int(data.get(keys.cache_write) or 0)
    return Usage(
        input_tokens=int(data.get(keys.input) or 0) + read + written,
        output_tokens=int(data.get(keys.output) or 0),
        cached_tokens=read,
    )
