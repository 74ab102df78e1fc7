"""Trace events, observers and the data policy.

Every ``exec`` is a *run* with a ``run_id``; a run started while a tool of
another run is executing names that run as its ``parent_run_id``, so the events
of nested agentic functions form a tree. ``step_id`` is ``"s0"`` for what
happens before the first model call and ``"s<n>"`` for the n-th model call and
the tool calls its reply asked for.

Data policy: events carry hashes and byte sizes of arguments, results and
texts, never the values themselves, unless the runtime was made with
``Runtime(trace_payloads=True)``; the payload fields (``arguments``,
``output``, ``error``, ``text``, ``content``) are ``None`` otherwise.

Every tool call produces exactly one terminal event: ``ToolCallCompleted``,
``ToolCallFailed``, ``ToolCallSkipped`` or ``ToolCallPaused``; all but
``ToolCallSkipped`` are preceded by ``ToolCallStarted``. An event retelling a
step taken from a durable run's journal has ``replayed=True``.

Observers are plain callables receiving each event. One that raises is logged
on the ``"openprogram"`` logger and ignored: observing never breaks a run.
"""

from __future__ import annotations

from openprogram.events._budget import BudgetExhausted, BudgetWarning
from openprogram.events._event import Event, digest, size_bytes
from openprogram.events._observer import Observer, notify
from openprogram.events._provider import (
    ProviderError,
    ProviderFallback,
    ProviderRateLimited,
    ProviderRequestSent,
    ProviderResponseReceived,
    SideRequest,
    TokensConsumed,
)
from openprogram.events._run import (
    AgentEnd,
    AgentInvoked,
    AgentResponseReceived,
    MaxIterationsReached,
    ToolsResolved,
)
from openprogram.events._tool import (
    SkipReason,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallPaused,
    ToolCallProgress,
    ToolCallSkipped,
    ToolCallStarted,
    ToolFailureKind,
    ToolInputValidationFailed,
)

__all__ = [
    "AgentEnd",
    "AgentInvoked",
    "AgentResponseReceived",
    "BudgetExhausted",
    "BudgetWarning",
    "Event",
    "MaxIterationsReached",
    "Observer",
    "ProviderError",
    "ProviderFallback",
    "ProviderRateLimited",
    "ProviderRequestSent",
    "ProviderResponseReceived",
    "SideRequest",
    "SkipReason",
    "TokensConsumed",
    "ToolCallCompleted",
    "ToolCallFailed",
    "ToolCallPaused",
    "ToolCallProgress",
    "ToolCallSkipped",
    "ToolCallStarted",
    "ToolFailureKind",
    "ToolInputValidationFailed",
    "ToolsResolved",
    "digest",
    "notify",
    "size_bytes",
]
