"""Events of tool calls: started, rejected, completed, failed, skipped, paused, progress.

Every tool call produces exactly one terminal event: ``ToolCallCompleted``,
``ToolCallFailed``, ``ToolCallSkipped`` or ``ToolCallPaused``; all but
``ToolCallSkipped`` are preceded by ``ToolCallStarted``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from openprogram.events._event import Event

__all__ = [
    "SkipReason",
    "ToolCallCompleted",
    "ToolCallFailed",
    "ToolCallPaused",
    "ToolCallProgress",
    "ToolCallSkipped",
    "ToolCallStarted",
    "ToolFailureKind",
    "ToolInputValidationFailed",
]


ToolFailureKind: TypeAlias = Literal[
    "not_in_menu",  # the name is not in the current menu (law 8): never executed
    "malformed_arguments",  # the model's arguments were not a JSON object
    "invalid_arguments",  # the arguments did not validate against the schema
    "denied",  # the approval hook (or its absence) refused the call
    "depth",  # running it would exceed the nesting depth limit
    "timeout",  # the tool's own timeout expired
    "tool_error",  # the body raised ToolError on purpose
    "exception",  # the body raised any other exception
    "cancelled",  # the exec was cancelled (or its timeout_s fired) while the call ran
    "budget",  # the run tree's budget allowed no more such calls (or threads)
    "unknown_outcome",  # a side_effect call an earlier attempt started but never finished
]

SkipReason: TypeAlias = Literal[
    "queued_user_message",  # a steering message arrived before the call started
    "repeated_failure",  # the same call already failed REPEAT_LIMIT times
    "max_iterations",  # the reply of on_max_iterations="finish" still asked for tools
    "tools_withdrawn",  # the request offered no tool calls (tool_choice="none", budget low)
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted(Event):
    """A tool call is about to be checked and run."""

    tool_name: str
    """The name the model called."""
    call_id: str
    """The ``ToolCall.id``."""
    input_schema_hash: str | None
    """Hash of the tool's parameters schema (``None`` for a name not in the menu)."""
    arguments_hash: str
    """Hash of the arguments."""
    arguments_size_bytes: int
    """Size of the arguments as JSON."""
    arguments: Mapping[str, Any] | None = None
    """The arguments (only with ``trace_payloads=True``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInputValidationFailed(Event):
    """The arguments of a call did not validate; the model gets every violation."""

    tool_name: str
    """The tool called."""
    call_id: str
    """The ``ToolCall.id``."""
    violation_description: str
    """The violations, ``"path: message"`` joined by ``"; "`` (e.g. ``city: expected string``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallCompleted(Event):
    """A tool call succeeded."""

    tool_name: str
    """The tool called."""
    call_id: str
    """The ``ToolCall.id``."""
    duration_ms: float
    """Time spent on the call, approval included."""
    output_size_bytes: int
    """Size of the text fed back to the model."""
    output_hash: str
    """Hash of that text."""
    output: str | None = None
    """The text (only with ``trace_payloads=True``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFailed(Event):
    """A tool call ended with an error result (the run goes on)."""

    tool_name: str
    """The tool called."""
    call_id: str
    """The ``ToolCall.id``."""
    failure: ToolFailureKind
    """What kind of failure it was."""
    duration_ms: float
    """Time spent on the call."""
    error_size_bytes: int
    """Size of the error text fed back to the model."""
    error: str | None = None
    """The error text (only with ``trace_payloads=True``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallSkipped(Event):
    """A tool call was answered without running it."""

    tool_name: str
    """The tool called."""
    call_id: str
    """The ``ToolCall.id``."""
    reason: SkipReason
    """Why it was not run."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallPaused(Event):
    """A tool call waits for a person: the approval hook returned ``PAUSE`` for it, or (an
    agentic call) a call inside its body did. The run pauses once its batch is done."""

    tool_name: str
    """The tool called."""
    call_id: str
    """The ``ToolCall.id``."""
    path: str
    """Its position in the run tree (docs/durable.md, "Keys")."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallProgress(Event):
    """A running tool reported progress with ``ToolContext.report``."""

    tool_name: str
    """The tool reporting."""
    call_id: str
    """The ``ToolCall.id``."""
    size_bytes: int
    """Size of the report text."""
    text: str | None = None
    """The report text (only with ``trace_payloads=True``)."""
