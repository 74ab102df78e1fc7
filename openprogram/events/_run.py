"""Events of a run's life: it starts, its menu is resolved, it answers, it hits its cap, it ends."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from openprogram.events._event import Event

__all__ = [
    "AgentEnd",
    "AgentInvoked",
    "AgentResponseReceived",
    "MaxIterationsReached",
    "ToolsResolved",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentInvoked(Event):
    """A run started."""

    provider_id: str
    """Provider id, e.g. ``"openai"``."""
    model_id: str | None
    """Model the run asks for (``None``: the provider's default)."""
    depth: int
    """Nesting depth: 1 for a top-level exec, 2 for an exec inside one of its tools, ..."""
    content_hash: str
    """Hash of the user content."""
    content_size_bytes: int
    """Size of the user content's text."""
    content: str | None = None
    """The user content's text (only with ``trace_payloads=True``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolsResolved(Event):
    """The menu of the run was resolved (at the start and whenever ``tool_search`` loads tools)."""

    menu_hash: str
    """Hash of the offered tool names, in order."""
    offered: tuple[str, ...]
    """Tools whose schemas are sent."""
    deferred: tuple[str, ...]
    """Tools listed only in the catalog until ``tool_search`` loads them."""
    rejected: Mapping[str, str]
    """Hidden tools: name → ``"layer: reason"``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentResponseReceived(Event):
    """The model answered in text without tool calls (a round of the run is done)."""

    text_hash: str
    """Hash of the answer."""
    text_size_bytes: int
    """Size of the answer."""
    text: str | None = None
    """The answer (only with ``trace_payloads=True``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MaxIterationsReached(Event):
    """The run needed another model call but had used all it was allowed."""

    iterations: int
    """Model calls made."""
    max_iterations: int
    """The effective cap, ``max(1, min(50, max_iterations))``."""
    action: Literal["return", "raise", "finish"]
    """What ``on_max_iterations`` does about it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentEnd(Event):
    """A run ended (also when it raised)."""

    stop_reason: str
    """``"stop"``, ``"max_iterations"``, ``"aborted"``, ``"error"``, ``"timeout"``, ..."""
    iterations: int
    """Model calls made."""
    duration_ms: float
    """Wall time of the run."""
    input_tokens: int
    """Prompt tokens of all its model calls and of the runs nested in it."""
    output_tokens: int
    """Generated tokens of all its model calls and of the runs nested in it."""
