"""Assembles one ``AssistantMessage`` from streamed fragments (or a whole response).

Every wire format maps onto the same few operations: text and thinking
fragments, tool calls opened by index with argument fragments appended, a
stop reason, usage. The builder returns the matching ``TextDelta``/
``ThinkingDelta``/``ToolCallDelta`` for the caller to pass on, and ``build()``
turns the blocks into the final message.

A reply is *cut* when it never received its stop reason (the stream ended or
broke) or stopped on the output limit. Its tool calls may be truncated, so
none of them is kept: the message ends with ``stop_reason`` ``"error"`` (cut
stream) or ``"length"``, and the runtime never executes a call from it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from openprogram.messages import (
    AssistantContent,
    AssistantMessage,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from openprogram.providers._json import loads
from openprogram.providers.base import TextDelta, ThinkingDelta, ToolCallDelta

__all__ = ["ReplyBuilder", "new_call_id", "parse_arguments"]


def new_call_id() -> str:
    """A call id for wires that do not send one (Gemini before v3, some local servers)."""
    return f"call_{uuid.uuid4().hex[:24]}"


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Parse raw tool arguments; never raises.

    Returns:
        ``(arguments, None)``, or ``({}, why)`` when ``raw`` is not a JSON object.
        An empty string means no arguments.
    """
    if not raw.strip():
        return {}, None
    try:
        value = loads(raw, finite=True)
    except json.JSONDecodeError as exc:
        return {}, f"the arguments are not valid JSON ({exc.msg} at char {exc.pos}): {raw[:300]!r}"
    except ValueError as exc:  # nested too deeply, or NaN/Infinity
        return {}, f"the arguments are not valid JSON ({exc}): {raw[:300]!r}"
    if not isinstance(value, dict):
        return {}, f"the arguments must be a JSON object, got {type(value).__name__}: {raw[:300]!r}"
    return value, None


@dataclass(eq=False)
class _Block:
    kind: Literal["text", "thinking", "tool"]
    parts: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    call_id: str = ""
    name: str = ""
    index: int = 0
    args: Mapping[str, Any] | None = None  # already-parsed arguments (Gemini, Bedrock non-stream)


class ReplyBuilder:
    """Collects one reply's blocks in order; see the module docstring."""

    def __init__(self) -> None:
        self._blocks: list[_Block] = []
        self._keyed: dict[Hashable, _Block] = {}
        self._tools = 0
        self.stop_reason: StopReason | None = None
        """Set by ``finish``; ``None`` while the reply is incomplete."""
        self.usage = Usage()
        self.model: str | None = None
        self.error: str | None = None

    @property
    def has_tool_calls(self) -> bool:
        """Whether any tool call was opened."""
        return self._tools > 0

    def text(
        self, delta: str, *, key: Hashable = None, meta: Mapping[str, Any] | None = None
    ) -> TextDelta | None:
        """Append reply text; returns the event to pass on (``None`` for an empty fragment)."""
        block = self._block("text", key)
        block.parts.append(delta)
        if meta:
            block.meta.update(meta)
        return TextDelta(delta) if delta else None

    def thinking(
        self, delta: str, *, key: Hashable = None, meta: Mapping[str, Any] | None = None
    ) -> ThinkingDelta | None:
        """Append exposed reasoning."""
        block = self._block("thinking", key)
        block.parts.append(delta)
        if meta:
            block.meta.update(meta)
        return ThinkingDelta(delta) if delta else None

    def tool_start(
        self,
        key: Hashable,
        *,
        call_id: str | None,
        name: str,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolCallDelta:
        """Open a tool call (``call_id`` ``None`` → one is generated)."""
        block = _Block("tool", call_id=call_id or new_call_id(), name=name, index=self._tools)
        self._tools += 1
        if meta:
            block.meta.update(meta)
        self._blocks.append(block)
        self._keyed[key] = block
        return ToolCallDelta(index=block.index, id=block.call_id, name=name, arguments_delta="")

    def has_tool(self, key: Hashable) -> bool:
        """Whether a tool call was opened under ``key``."""
        block = self._keyed.get(key)
        return block is not None and block.kind == "tool"

    def tool_args(self, key: Hashable, delta: str) -> ToolCallDelta | None:
        """Append a fragment of a tool call's JSON arguments."""
        block = self._keyed.get(key)
        if block is None or block.kind != "tool" or not delta:
            return None
        block.parts.append(delta)
        return ToolCallDelta(index=block.index, id=None, name=None, arguments_delta=delta)

    def tool_call(
        self,
        *,
        call_id: str | None,
        name: str,
        arguments: Any,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolCallDelta:
        """Add a whole tool call (arguments as parsed JSON or a raw string)."""
        key = object()
        start = self.tool_start(key, call_id=call_id, name=name, meta=meta)
        block = self._keyed.pop(key)
        if isinstance(arguments, str):
            block.parts.append(arguments)
            raw = arguments
        else:
            block.args = arguments if isinstance(arguments, Mapping) else None
            if block.args is None and arguments is not None:
                block.parts.append(json.dumps(arguments))
            raw = json.dumps(arguments if arguments is not None else {})
        return ToolCallDelta(index=start.index, id=start.id, name=name, arguments_delta=raw)

    def update_meta(self, key: Hashable, meta: Mapping[str, Any]) -> None:
        """Attach provider data (e.g. a signature) to the block opened under ``key``."""
        block = self._keyed.get(key)
        if block is not None:
            block.meta.update(meta)

    def last_meta(self, meta: Mapping[str, Any]) -> None:
        """Attach provider data to the most recent block."""
        if self._blocks:
            self._blocks[-1].meta.update(meta)

    def finish(self, stop_reason: StopReason) -> None:
        """The provider said the reply is complete, and why it stopped."""
        self.stop_reason = stop_reason

    def build(self, *, cut_reason: str | None = None) -> AssistantMessage:
        """The final message (see the module docstring for cut replies)."""
        stop = self.stop_reason
        error = self.error
        if stop is None:
            stop = "error"
            error = (
                error or cut_reason or "the reply ended before the provider said it was complete"
            )
        dropped = stop in ("error", "length")
        content: list[AssistantContent] = []
        for block in self._blocks:
            item = self._content(block, dropped)
            if item is not None:
                content.append(item)
        if dropped and self._tools:
            note = f"{self._tools} tool call(s) from the cut-off reply were dropped and not run"
            error = f"{error}; {note}" if error else None
        if stop == "stop" and any(isinstance(c, ToolCall) for c in content):
            stop = "tool_calls"
        return AssistantMessage(
            tuple(content), stop_reason=stop, usage=self.usage, error=error, model=self.model
        )

    def _block(self, kind: Literal["text", "thinking"], key: Hashable) -> _Block:
        if key is not None:
            block = self._keyed.get(key)
            if block is None or block.kind != kind:
                block = _Block(kind)
                self._blocks.append(block)
                self._keyed[key] = block
            return block
        last = self._blocks[-1] if self._blocks else None
        if last is not None and last.kind == kind and last not in self._keyed.values():
            return last
        block = _Block(kind)
        self._blocks.append(block)
        return block

    @staticmethod
    def _content(block: _Block, dropped: bool) -> AssistantContent | None:
        meta = dict(block.meta) or None
        text = "".join(block.parts)
        if block.kind == "text":
            return TextContent(text, provider_meta=meta) if text or meta else None
        if block.kind == "thinking":
            return ThinkingContent(text, provider_meta=meta) if text or meta else None
        if dropped:
            return None
        if block.args is not None:
            return ToolCall(block.call_id, block.name, dict(block.args), provider_meta=meta)
        arguments, problem = parse_arguments(text)
        return ToolCall(block.call_id, block.name, arguments, problem, provider_meta=meta)
