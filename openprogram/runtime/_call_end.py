"""How a tool call ends: its result message and its one terminal event.

``finish`` turns what a started call produced (a ``ToolResult``, or a refusal
before its body ran) into the ``ToolResultMessage`` the model sees, emitting
``ToolCallCompleted`` or ``ToolCallFailed`` (with ``ToolInputValidationFailed``
first for invalid arguments); ``skip`` answers a call without starting it
(``ToolCallSkipped``); ``paused`` ends a call that waits for a person
(``ToolCallPaused``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from openprogram.events import (
    SkipReason,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallPaused,
    ToolCallSkipped,
    ToolFailureKind,
    ToolInputValidationFailed,
    digest,
    size_bytes,
)
from openprogram.messages import ToolCall, ToolResultMessage
from openprogram.providers._json import without_lone_surrogates
from openprogram.runtime._call_batch import Batch
from openprogram.runtime._redact import declared_names, describe_violations
from openprogram.runtime._run import Emitter
from openprogram.runtime._stream import StreamToolResult
from openprogram.tools import Tool, ToolResult

__all__ = ["finish", "paused", "schema_hash", "skip"]


def skip(call: ToolCall, emitter: Emitter, reason: SkipReason, text: str) -> ToolResultMessage:
    """Answer a call without running it (one result, with ``ToolCallSkipped``)."""
    emitter.emit(ToolCallSkipped, tool_name=call.name, call_id=call.id, reason=reason)
    result = ToolResultMessage(call_id=call.id, tool_name=call.name, content=text, is_error=True)
    emitter.stream(StreamToolResult, result=result)
    return result


def paused(call: ToolCall, emitter: Emitter, path: str) -> None:
    """End a started call that waits for a person (``ToolCallPaused``)."""
    emitter.emit(ToolCallPaused, tool_name=call.name, call_id=call.id, path=path)


def finish(
    call: ToolCall,
    batch: Batch,
    started: float,
    result: ToolResult | None,
    refusal: tuple[ToolFailureKind, str] | None,
) -> tuple[ToolResultMessage, ToolFailureKind | None]:
    """The result message of a started call, and its failure kind (``None``: it succeeded)."""
    emitter = batch.emitter
    duration_ms = (time.monotonic() - started) * 1000
    kind: ToolFailureKind | None = None
    if result is not None and not result.is_error:
        text = without_lone_surrogates(result.content)
        emitter.emit(
            ToolCallCompleted,
            tool_name=call.name,
            call_id=call.id,
            duration_ms=duration_ms,
            output_size_bytes=size_bytes(text),
            output_hash=digest(text),
            output=text if emitter.trace_payloads else None,
        )
    else:
        if result is not None:
            kind, text = result.error_kind or "tool_error", without_lone_surrogates(result.content)
            if result.violations:
                emitter.emit(
                    ToolInputValidationFailed,
                    tool_name=call.name,
                    call_id=call.id,
                    violation_description="; ".join(result.violations)
                    if emitter.trace_payloads
                    else _described(result.violations, call, batch.tools.get(call.name)),
                )
        else:
            assert refusal is not None
            kind, text = refusal[0], without_lone_surrogates(refusal[1])
        emitter.emit(
            ToolCallFailed,
            tool_name=call.name,
            call_id=call.id,
            failure=kind,
            duration_ms=duration_ms,
            error_size_bytes=size_bytes(text),
            error=text if emitter.trace_payloads else None,
        )
    message = ToolResultMessage(
        call_id=call.id,
        tool_name=call.name,
        content=text,
        is_error=result is None or result.is_error,
    )
    emitter.stream(StreamToolResult, result=message)
    return message, kind


def schema_hash(tool: Tool, cache: dict[str, str]) -> str:
    """Hash of ``tool``'s parameters schema (cached per menu)."""
    cached = cache.get(tool.name)
    if cached is None:
        cached = cache[tool.name] = digest(tool.parameters)
    return cached


def _described(violations: Sequence[str], call: ToolCall, tool: Tool | None) -> str:
    declared = declared_names(tool.parameters) if tool is not None else set()
    return describe_violations(violations, call.arguments, declared)
