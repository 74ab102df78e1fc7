"""Messages as versioned JSON text, losslessly: ``dump_messages`` and ``load_messages``.

The text is one object, ``{"version": 1, "messages": [...]}``; each message
is an object with a ``"role"`` (``"user"``, ``"assistant"``, ``"tool"``) and
its fields, every content block an object with a ``"type"`` (``"text"``,
``"image"``, ``"thinking"``, ``"tool_call"``). Everything a message holds
travels: usage, stop reason, error, model, the wire a reply came from and the
blocks' ``provider_meta`` (signatures a vendor wants echoed back). Images
travel as their base64 data, never as a path. Fields at their default value
are left out. Tool-call arguments and ``provider_meta`` must be JSON (objects
with string keys, arrays, strings, finite numbers, booleans, null); a tuple
in them is written as an array and so reads back as a list.

``load_messages`` checks every field and raises ``UserError`` naming the path
of the first bad one (``messages[2].content[0].text``), unknown fields
included, so a typo is never silently dropped. ``encode_message`` and
``decode_message`` are the one-message halves the stores use for their rows.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any, get_args

from openprogram.exceptions import UserError
from openprogram.messages._types import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    Message,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserContent,
    UserMessage,
)

__all__ = [
    "MESSAGES_VERSION",
    "decode_message",
    "dump_messages",
    "encode_message",
    "load_messages",
]

MESSAGES_VERSION = 1
"""The format version ``dump_messages`` writes and ``load_messages`` reads."""

_STOP_REASONS = frozenset(get_args(StopReason))
_USAGE_FIELDS = ("input_tokens", "output_tokens", "cached_tokens")


def dump_messages(messages: Iterable[Message], *, indent: int | None = None) -> str:
    """The messages as JSON text that ``load_messages`` turns back into equal messages.

    Args:
        messages: User messages, assistant replies and tool results, in order
            (``runtime.last_run.messages``, ``chat.messages``).
        indent: Pretty-print with this indent (default: compact).

    Raises:
        UserError: A message is not a message, or a tool call's arguments or a block's
            ``provider_meta`` hold something that is not JSON (the error names its path).

    Example:
        >>> from openprogram.messages import UserMessage, load_messages
        >>> text = dump_messages([UserMessage("Hi")])
        >>> text
        '{"version":1,"messages":[{"role":"user","content":"Hi"}]}'
        >>> load_messages(text)
        (UserMessage(content='Hi'),)
    """
    items = [encode_message(m, f"messages[{i}]") for i, m in enumerate(messages)]
    separators = (",", ":") if indent is None else None
    document = {"version": MESSAGES_VERSION, "messages": items}
    return json.dumps(document, ensure_ascii=False, indent=indent, separators=separators)


def load_messages(text: str | bytes) -> tuple[Message, ...]:
    """The messages ``dump_messages`` wrote, checked field by field.

    Raises:
        UserError: The text is not JSON, is of another format version, or a field is
            missing, unknown or of the wrong type (the error names its path, e.g.
            ``messages[2].content[0].text``).
    """
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"load_messages: the text is not JSON ({exc})") from None
    if not isinstance(document, dict):
        raise UserError(
            'load_messages: expected an object {"version": 1, "messages": [...]}, '
            f"got {_kind(document)}"
        )
    version = document.get("version")
    if version != MESSAGES_VERSION:
        raise UserError(
            f"version: {version!r} is not a messages format this openprogram reads "
            f"(it reads version {MESSAGES_VERSION}); write the text with dump_messages"
        )
    _only(document, {"version", "messages"}, "")
    items = document.get("messages")
    if not isinstance(items, list):
        raise UserError(f"messages: expected an array of messages, got {_kind(items)}")
    return tuple(decode_message(item, f"messages[{i}]") for i, item in enumerate(items))


# -- one message ---------------------------------------------------------------------------


def encode_message(
    message: Message, path: str = "message", *, checked: bool = True
) -> dict[str, Any]:
    """One message as a JSON-ready object (``path`` names it in errors; ``checked=False``:
    the caller knows its calls' arguments are JSON already, and they are not walked)."""
    if isinstance(message, UserMessage):
        if isinstance(message.content, str):
            return {"role": "user", "content": message.content}
        blocks = [_encode_block(b, path, i) for i, b in enumerate(message.content)]
        return {"role": "user", "content": blocks}
    if isinstance(message, ToolResultMessage):
        out: dict[str, Any] = {
            "role": "tool",
            "call_id": message.call_id,
            "tool_name": message.tool_name,
            "content": message.content,
        }
        if message.is_error:
            out["is_error"] = True
        return out
    if isinstance(message, AssistantMessage):
        return _encode_reply(message, path, checked)
    raise UserError(
        f"{path}: {message!r:.80} is not a message (UserMessage, AssistantMessage or "
        "ToolResultMessage)"
    )


def _encode_reply(message: AssistantMessage, path: str, checked: bool = True) -> dict[str, Any]:
    # A block's path is only made for an error: a durable run encodes every reply.
    blocks = [_encode_block(b, path, i, checked) for i, b in enumerate(message.content)]
    out: dict[str, Any] = {"role": "assistant", "content": blocks}
    if message.stop_reason != "stop":
        out["stop_reason"] = message.stop_reason
    spent = message.usage
    usage = {}
    if spent.input_tokens:
        usage["input_tokens"] = spent.input_tokens
    if spent.output_tokens:
        usage["output_tokens"] = spent.output_tokens
    if spent.cached_tokens:
        usage["cached_tokens"] = spent.cached_tokens
    if usage:
        out["usage"] = usage
    for name in ("error", "model", "wire"):
        value = getattr(message, name)
        if value is not None:
            out[name] = value
    return out


def _encode_block(
    block: UserContent | AssistantContent,
    path: str,
    index: int | None = None,
    checked: bool = True,
) -> dict[str, Any]:
    """One block (``path``, with ``.content[index]`` when given, names it in errors;
    ``checked=False``: a call's arguments are known to be JSON)."""
    out: dict[str, Any]
    if isinstance(block, ImageContent):
        return {"type": "image", "data": block.data, "mime_type": block.mime_type}
    if isinstance(block, ToolCall):
        if checked and not _plain(block.arguments):
            _explain(block.arguments, f"{_at(path, index)}.arguments")
        out = {"type": "tool_call", "id": block.id, "name": block.name}
        out["arguments"] = dict(block.arguments)
        if block.arguments_error is not None:
            out["arguments_error"] = block.arguments_error
    elif isinstance(block, ThinkingContent):
        out = {"type": "thinking", "text": block.text}
    elif isinstance(block, TextContent):
        out = {"type": "text", "text": block.text}
    else:
        raise UserError(f"{_at(path, index)}: {block!r:.80} is not a content block")
    if block.provider_meta is not None:
        if not _plain(block.provider_meta):
            _explain(block.provider_meta, f"{_at(path, index)}.provider_meta")
        out["provider_meta"] = dict(block.provider_meta)
    return out


def _at(path: str, index: int | None) -> str:
    return path if index is None else f"{path}.content[{index}]"


def _check_json(value: Any, path: str) -> None:
    """Raise ``UserError`` at the first part of ``value`` that JSON cannot carry as it is."""
    if _plain(value):  # the usual case, checked without building a path for every part
        return
    _explain(value, path)


def _plain(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if kind is list or kind is tuple:
        return all(_plain(v) for v in value)
    return False


def _explain(value: Any, path: str) -> None:
    """``_check_json``'s slow path: find the part JSON cannot carry, and name its path."""
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UserError(f"{path}: {value} is not a JSON number (use a finite float)")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise UserError(f"{path}: the key {key!r} is not a string (JSON keys are)")
            _check_json(item, f"{path}.{key}")
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check_json(item, f"{path}[{index}]")
        return
    raise UserError(f"{path}: a {type(value).__name__} is not a JSON value")


def decode_message(data: Any, path: str = "message") -> Message:
    """The message ``encode_message`` made, every field checked (``UserError`` at ``path``)."""
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a message object, got {_kind(data)}")
    role = data.get("role")
    if role == "user":
        _only(data, {"role", "content"}, path)
        content = data.get("content")
        if isinstance(content, str):
            return UserMessage(content)
        blocks = _array(content, f"{path}.content")
        return UserMessage(tuple(_user_block(b, f"{path}.content[{i}]") for i, b in blocks))
    if role == "tool":
        _only(data, {"role", "call_id", "tool_name", "content", "is_error"}, path)
        return ToolResultMessage(
            call_id=_str(data, "call_id", path),
            tool_name=_str(data, "tool_name", path),
            content=_str(data, "content", path),
            is_error=_bool(data, "is_error", path),
        )
    if role == "assistant":
        return _decode_reply(data, path)
    raise UserError(f"{path}.role: expected 'user', 'assistant' or 'tool', got {role!r:.60}")


def _decode_reply(data: dict[str, Any], path: str) -> AssistantMessage:
    _only(data, {"role", "content", "stop_reason", "usage", "error", "model", "wire"}, path)
    blocks = _array(data.get("content"), f"{path}.content")
    stop = data.get("stop_reason", "stop")
    if stop not in _STOP_REASONS:
        known = ", ".join(sorted(_STOP_REASONS))
        raise UserError(f"{path}.stop_reason: {stop!r:.60} is not a stop reason ({known})")
    return AssistantMessage(
        tuple(_reply_block(b, f"{path}.content[{i}]") for i, b in blocks),
        stop_reason=stop,
        usage=_usage(data.get("usage", {}), f"{path}.usage"),
        error=_optional_str(data, "error", path),
        model=_optional_str(data, "model", path),
        wire=_optional_str(data, "wire", path),
    )


def _user_block(data: Any, path: str) -> UserContent:
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "image":
        _only(data, {"type", "data", "mime_type"}, path)
        encoded = _str(data, "data", path)
        try:
            base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise UserError(f"{path}.data: not base64 (an image travels as its data)") from None
        return ImageContent(data=encoded, mime_type=_str(data, "mime_type", path))
    if kind == "text":
        _only(data, {"type", "text", "provider_meta"}, path)
        return TextContent(_str(data, "text", path), provider_meta=_meta(data, path))
    raise UserError(f"{path}: expected a text or image block, got {_described(data)}")


def _reply_block(data: Any, path: str) -> AssistantContent:
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "tool_call":
        _only(data, {"type", "id", "name", "arguments", "arguments_error", "provider_meta"}, path)
        arguments = data.get("arguments")
        if not isinstance(arguments, dict):
            raise UserError(f"{path}.arguments: expected an object, got {_kind(arguments)}")
        return ToolCall(
            _str(data, "id", path),
            _str(data, "name", path),
            arguments,
            _optional_str(data, "arguments_error", path),
            provider_meta=_meta(data, path),
        )
    if kind in ("text", "thinking"):
        _only(data, {"type", "text", "provider_meta"}, path)
        cls = TextContent if kind == "text" else ThinkingContent
        return cls(_str(data, "text", path), provider_meta=_meta(data, path))
    raise UserError(f"{path}: expected a text, thinking or tool_call block, got {_described(data)}")


def _usage(data: Any, path: str) -> Usage:
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected an object, got {_kind(data)}")
    _only(data, set(_USAGE_FIELDS), path)
    counts: dict[str, int] = {}
    for name, value in data.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UserError(f"{path}.{name}: expected an integer >= 0, got {value!r:.60}")
        counts[name] = value
    return Usage(**counts)


# -- field readers -------------------------------------------------------------------------


def _only(data: dict[str, Any], allowed: set[str], path: str) -> None:
    for key in data:
        if key not in allowed:
            where = f"{path}.{key}" if path else key
            raise UserError(f"{where}: unknown field (expected {', '.join(sorted(allowed))})")


def _str(data: dict[str, Any], key: str, path: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise UserError(f"{path}.{key}: expected a string, got {_kind(value)}")
    return value


def _optional_str(data: dict[str, Any], key: str, path: str) -> str | None:
    return None if data.get(key) is None else _str(data, key, path)


def _bool(data: dict[str, Any], key: str, path: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise UserError(f"{path}.{key}: expected true or false, got {_kind(value)}")
    return value


def _meta(data: dict[str, Any], path: str) -> dict[str, Any] | None:
    value = data.get("provider_meta")
    if value is not None and not isinstance(value, dict):
        raise UserError(f"{path}.provider_meta: expected an object, got {_kind(value)}")
    return value


def _array(value: Any, path: str) -> enumerate[Any]:
    if not isinstance(value, list):
        raise UserError(f"{path}: expected an array, got {_kind(value)}")
    return enumerate(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null (or nothing)"
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    name = names.get(type(value))
    if name is None:
        name = "a number" if isinstance(value, int | float) else type(value).__name__
    return f"{name} ({json.dumps(value, default=str)[:60]})"


def _described(data: Any) -> str:
    if isinstance(data, dict):
        return f"type {data.get('type')!r:.40}"
    return _kind(data)
