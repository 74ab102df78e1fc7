"""Request fingerprints: what a journaled model turn asked, hashed so a re-run can compare.

A request is normalised as record/replay does (``openprogram.testing.record``):
the model, the system prompt, the tool specs, ``tool_choice``, parallel calls,
the response format, the sampling options that are set, and the messages,
provider-neutral, with tool-call ids renumbered in order of appearance and
images by SHA-256 (``normal_message``). An exec's requests only grow (each
holds the one before plus what came since), so ``Requests`` hashes only the
messages that are new since the exec's previous request and folds them into a
running hash; the parts that are not messages (the *head*) are hashed once
per distinct head. A message is hashed in a compact text form of that same
normal form (``_form``: the same content, no JSON object to build), as a
model turn pays for it; a message that a journaled step of the exec produced
(a reply, a call's result) stands in by its journal key: a re-run compares a
request only at a recorded turn, and every step an exec's recorded turn saw
is itself recorded (the journal is written in order), so such a message is
the journal's own, replayed as it was.

A fingerprint keeps the digest of each part, so that when a re-run's request
differs from the recorded one, ``explain`` says what differs: a field of the
head ("the tools offered differ: 'lookup' changed") or the first message that
does ("message 0, the user's content").
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from openprogram.messages import (
    ImageContent,
    Message,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from openprogram.providers.base import ProviderRequest

__all__ = ["Fingerprint", "Requests", "call_print", "explain", "normal_message"]

_CACHED_HEADS = 256
"""Distinct request heads whose digests are kept (an exec uses one or two)."""


def normal_message(message: Message, call_id: Callable[[str], str]) -> dict[str, Any]:
    """The provider-neutral, id-independent form of a message (``call_id`` renumbers ids)."""
    if isinstance(message, UserMessage):
        if isinstance(message.content, str):
            return {"role": "user", "content": message.content}
        return {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "mime_type": b.mime_type,
                    "sha256": hashlib.sha256(base64.b64decode(b.data)).hexdigest(),
                }
                if isinstance(b, ImageContent)
                else {"type": "text", "text": b.text}
                for b in message.content
            ],
        }
    if isinstance(message, ToolResultMessage):
        return {
            "role": "tool",
            "call_id": call_id(message.call_id),
            "tool_name": message.tool_name,
            "content": message.content,
            "is_error": message.is_error,
        }
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolCall):
            blocks.append(
                {
                    "type": "tool_call",
                    "id": call_id(block.id),
                    "name": block.name,
                    "arguments": dict(block.arguments),
                }
            )
        else:
            kind = "thinking" if isinstance(block, ThinkingContent) else "text"
            blocks.append({"type": kind, "text": block.text})
    return {"role": "assistant", "content": blocks}


def _digest(value: Any) -> str:
    text = value if isinstance(value, str) else _canonical(value)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def call_print(name: str, arguments: Mapping[str, Any], canonical: str | None = None) -> str:
    """The fingerprint of a call: its tool and its arguments (``canonical``: the arguments as
    JSON with sorted keys, when the caller has it already)."""
    if canonical is None:
        canonical = json.dumps(arguments, sort_keys=True, default=str)
    return _digest(f"{len(name)}:{name}{canonical}")


class Fingerprint(NamedTuple):
    """One request's fingerprint and the digests of its parts (a tuple: one per model turn,
    made fast)."""

    value: str
    """The hash of the whole normalised request."""
    head: Mapping[str, Any]
    """Per field of the head: its value (model, tool choice, ...) or digest (system, tools)."""
    head_digest: str
    """The hash of ``head``."""
    new: tuple[str, ...]
    """Digests of the messages new since the exec's previous request."""


_NO_KEYS: Mapping[int, str] = {}


class Requests:
    """The requests of one exec, fingerprinted one after another (not thread-safe: one exec's
    requests are made one at a time)."""

    __slots__ = ("_digests", "_ids", "_last", "_last_head", "_running")

    def __init__(self) -> None:
        self._last_head: tuple[ProviderRequest, dict[str, Any], str] | None = None
        self._ids: dict[str, str] = {}
        self._digests: list[str] = []
        self._last: Message | None = None
        self._running = hashlib.blake2b(digest_size=16)

    def _restart(self) -> None:
        self._ids = {}
        self._digests = []
        self._last = None
        self._running = hashlib.blake2b(digest_size=16)

    @property
    def digests(self) -> tuple[str, ...]:
        """Digests of every message of the last request, in order."""
        return tuple(self._digests)

    def fingerprint(
        self, request: ProviderRequest, stepped: Mapping[int, str] | None = None
    ) -> Fingerprint:
        """The fingerprint of the exec's next request.

        Args:
            request: The request.
            stepped: The journal key of each message a journaled step of the exec made,
                by the message's ``id``.
        """
        messages = request.messages
        digests = self._digests
        seen = len(digests)
        if seen and (len(messages) < seen or messages[seen - 1] is not self._last):
            self._restart()  # the history was rewritten: hash it afresh
            digests, seen = self._digests, 0
        keys = stepped or _NO_KEYS
        update = self._running.update
        for message in messages[seen:]:
            key = keys.get(id(message))
            digest = f"@{key}" if key is not None else self._message_digest(message)
            update(digest.encode())
            digests.append(digest)
        self._last = messages[-1] if messages else None
        last = self._last_head
        if last is not None and _same_head(last[0], request):  # the usual case: as before
            _, head, head_digest = last
        else:
            head, head_digest = self._head_of(request)
            self._last_head = (request, head, head_digest)
        # The head's digest and the messages' running hash: together, the whole request's.
        value = f"{head_digest}{self._running.hexdigest()}"
        return Fingerprint(value, head, head_digest, tuple(digests[seen:]))

    def _message_digest(self, message: Message) -> str:
        form = _form(message, self._ids)
        return hashlib.blake2b(form.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()

    def _head_of(self, request: ProviderRequest) -> tuple[dict[str, Any], str]:
        choice = request.tool_choice
        key = (
            request.model,
            request.system,
            tuple(
                (s.get("name"), s.get("description"), id(s.get("parameters")))
                for s in request.tools
            ),
            choice if isinstance(choice, str) else _canonical(choice),
            request.parallel_tool_calls,
            id(request.response_format),
            request.temperature,
            request.max_tokens,
            request.seed,
        )
        cached = _HEADS.get(key)
        if cached is not None:
            return cached[1], cached[2]
        head = _head_of(request)
        digest = _digest(head)
        if len(_HEADS) >= _CACHED_HEADS:
            _HEADS.clear()
        # The entry keeps the parameters and response format alive, so their ids stay theirs.
        kept = (tuple(s.get("parameters") for s in request.tools), request.response_format)
        _HEADS[key] = (kept, head, digest)
        return head, digest


_HEADS: dict[tuple[Any, ...], tuple[tuple[Any, Any], dict[str, Any], str]] = {}
"""Heads already hashed, shared by every exec (a program's execs offer the same few menus)."""


def _form(message: Message, ids: dict[str, str]) -> str:
    """``normal_message``'s content as compact text: each part prefixed by its length."""
    if isinstance(message, ToolResultMessage):
        call_id = ids.setdefault(message.call_id, f"call_{len(ids) + 1}")
        return _joined("tool", call_id, message.tool_name, str(message.is_error), message.content)
    if isinstance(message, UserMessage):
        if isinstance(message.content, str):
            return _joined("user", message.content)
        return _joined("user", *(_block_form(b) for b in message.content))
    parts = ["assistant"]
    for block in message.content:
        if isinstance(block, ToolCall):
            call_id = ids.setdefault(block.id, f"call_{len(ids) + 1}")
            parts += ("call", call_id, block.name, _arguments(block.arguments))
        else:
            parts += ("thinking" if isinstance(block, ThinkingContent) else "text", block.text)
    return _joined(*parts)


def _block_form(block: Any) -> str:
    if isinstance(block, ImageContent):
        image = hashlib.sha256(base64.b64decode(block.data)).hexdigest()
        return _joined("image", block.mime_type, image)
    return _joined("text", block.text)


def _joined(*parts: str) -> str:
    return "".join(f"{len(part)}:{part}" for part in parts)


def _arguments(arguments: Mapping[str, Any]) -> str:
    """The arguments as JSON, keys sorted (nested objects keep the order the model gave)."""
    import pydantic_core  # noqa: PLC0415 - deferred for import cost (loaded by a tool's first call)

    try:
        return pydantic_core.to_json(dict(sorted(arguments.items()))).decode()
    except (TypeError, ValueError, RecursionError, pydantic_core.PydanticSerializationError):
        return repr(arguments)  # not JSON (a host's or a broken model's value): its text


def _same_head(a: ProviderRequest, b: ProviderRequest) -> bool:
    """Whether two requests have the same head (by identity where values are shared)."""
    return (
        a.tools is b.tools
        and a.response_format is b.response_format
        and a.system == b.system
        and a.model == b.model
        and a.tool_choice == b.tool_choice
        and a.parallel_tool_calls == b.parallel_tool_calls
        and a.temperature == b.temperature
        and a.max_tokens == b.max_tokens
        and a.seed == b.seed
    )


def _head_of(request: ProviderRequest) -> dict[str, Any]:
    fmt = request.response_format
    return {
        "model": request.model,
        "system": None if request.system is None else _digest(request.system),
        "tools": {
            str(spec.get("name")): _digest(
                {
                    "description": spec.get("description"),
                    "parameters": spec.get("parameters"),
                }
            )
            for spec in request.tools
        },
        "tool_choice": request.tool_choice
        if isinstance(request.tool_choice, str)
        else dict(request.tool_choice),
        "parallel_tool_calls": request.parallel_tool_calls,
        "response_format": None
        if fmt is None
        else _digest({"name": fmt.name, "schema": dict(fmt.schema), "strict": fmt.strict}),
        "sampling": {
            name: getattr(request, name)
            for name in ("temperature", "max_tokens", "seed")
            if getattr(request, name) is not None
        },
    }


_FIELDS = {
    "model": "the model",
    "system": "the system prompt",
    "tool_choice": "tool_choice",
    "parallel_tool_calls": "parallel_tool_calls",
    "response_format": "the response format",
    "sampling": "the sampling options (temperature, max_tokens, seed)",
}


def explain(
    recorded_head: Mapping[str, Any] | None,
    recorded_digests: Sequence[str],
    current: Fingerprint,
    current_digests: Sequence[str],
    messages: Sequence[Message],
) -> str:
    """What differs between a recorded request and the current one, in words."""
    if recorded_head is not None and recorded_head != current.head:
        return _head_difference(recorded_head, current.head)
    for index, (old, new) in enumerate(zip(recorded_digests, current_digests, strict=False)):
        if old != new:
            return (
                f"the request's messages differ at message {index} ({_described(messages[index])})"
            )
    if len(recorded_digests) != len(current_digests):
        return (
            f"the request has {len(current_digests)} messages where the recorded one had "
            f"{len(recorded_digests)}"
        )
    return "the request differs from the recorded one"


def _head_difference(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    old_tools, new_tools = recorded.get("tools") or {}, current.get("tools") or {}
    if old_tools != new_tools:
        added = [n for n in new_tools if n not in old_tools]
        gone = [n for n in old_tools if n not in new_tools]
        changed = [n for n in new_tools if n in old_tools and new_tools[n] != old_tools[n]]
        parts = []
        if added:
            parts.append(f"now offered: {', '.join(map(repr, added))}")
        if gone:
            parts.append(f"no longer offered: {', '.join(map(repr, gone))}")
        if changed:
            parts.append(f"description or parameters changed: {', '.join(map(repr, changed))}")
        return f"the tools offered differ ({'; '.join(parts) or 'their order changed'})"
    for field, words in _FIELDS.items():
        old, new = recorded.get(field), current.get(field)
        if old != new:
            if field in ("model", "tool_choice", "parallel_tool_calls", "sampling"):
                return f"{words} differs (recorded {old!r}, now {new!r})"
            return f"{words} differs"
    return "the request differs from the recorded one"


def _described(message: Message) -> str:
    if isinstance(message, UserMessage):
        return f"a user message, now {message.text[:80]!r}"
    if isinstance(message, ToolResultMessage):
        return f"the result of a call of {message.tool_name!r}, now {message.content[:80]!r}"
    calls = [c.name for c in message.tool_calls]
    return f"a model reply, now {message.text[:60]!r} calling {calls}"
