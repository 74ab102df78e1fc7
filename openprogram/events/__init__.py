"""Trace events, observers and the data policy.

Every ``exec`` is a *run* with a ``run_id``; a run started while a tool of
another run is executing names that run as its ``parent_run_id``, so the events
of nested agentic functions form a tree. ``step_id`` is ``"s0"`` for what
happens before the first model call and ``"s<n>"`` for the n-th model call and
the tool calls its reply asked for.

Data policy (seed 001): events carry hashes and byte sizes of arguments,
results and texts, never the values themselves, unless the runtime was made
with ``Runtime(trace_payloads=True)``; the payload fields (``arguments``,
``output``, ``error``, ``text``, ``content``) are ``None`` otherwise.

Every tool call produces exactly one terminal event: ``ToolCallCompleted``,
``ToolCallFailed`` or ``ToolCallSkipped``; the first two are preceded by
``ToolCallStarted``.

Observers are plain callables receiving each event. One that raises is logged
on the ``"openprogram"`` logger and ignored: observing never breaks a run.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal, TypeAlias

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

logger = logging.getLogger("openprogram")

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
]

SkipReason: TypeAlias = Literal[
    "queued_user_message",  # a steering message arrived before the call started
    "repeated_failure",  # the same call already failed REPEAT_LIMIT times
    "max_iterations",  # the reply of on_max_iterations="finish" still asked for tools
    "tools_withdrawn",  # the request offered no tool calls (tool_choice="none", budget low)
]

SideRequest: TypeAlias = Literal[
    "call_share",  # the local model's first-token probe (LocalProvider(call_threshold=...))
    "prompt_usage",  # the local model's one-token measure of a prompt the server did not count
]
"""What a request sent beside a reply's own is for (``ProviderRequestSent.side_request``)."""


def digest(value: Any) -> str:
    """A short, stable hash of a JSON-able value (or a string), for the data policy.

    Args:
        value: A string (hashed as UTF-8) or anything ``json.dumps`` can encode
            (keys sorted; unknown objects by ``str``).
    """
    data = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    # surrogatepass: a lone surrogate in the program's own text must not break tracing
    return hashlib.blake2b(data.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def size_bytes(text: str) -> int:
    """Size of ``text`` encoded as UTF-8."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Fields every trace event carries; ``kind`` is the class name."""

    kind: ClassVar[str] = "Event"
    run_id: str
    """The run (one ``exec``) that emitted the event."""
    step_id: str
    """``"s0"`` before the first model call, ``"s<n>"`` for the n-th model call and its tools."""
    parent_run_id: str | None
    """The run whose tool call started this run, ``None`` for a top-level run."""
    at: float
    """Wall-clock time (``time.time()``) of the event."""

    def __init_subclass__(cls) -> None:
        # No super() call: dataclass(slots=True) re-creates each class, which breaks the
        # zero-argument super() cell; object.__init_subclass__ does nothing anyway.
        cls.kind = cls.__name__

    def to_dict(self) -> dict[str, Any]:
        """The event as a JSON-able dict, ``kind`` first (as in seed 001's traces)."""
        return {"kind": self.kind, **asdict(self)}


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
class ProviderRequestSent(Event):
    """A request went on the wire (once per attempt, and once per side request)."""

    provider_id: str
    """Provider id."""
    model_id: str | None
    """Model the request names."""
    prompt_size_bytes: int
    """Size of the request body."""
    attempt: int = 1
    """1 for the first try, 2 for the first retry, ... (1 for a side request: never retried)."""
    side_request: SideRequest | None = None
    """``None`` for a request of the model call's reply itself; for a request the provider
    sent beside it, what that one is for. Its tokens count with the reply
    (``ProviderResponseReceived.tokens``), and its time with the reply's ``latency_ms``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderResponseReceived(Event):
    """A complete reply arrived."""

    provider_id: str
    """Provider id."""
    model_id: str | None
    """Model that answered."""
    tokens: Mapping[str, int]
    """``{"input": ..., "output": ..., "total": ...}``."""
    latency_ms: float
    """From the first request on the wire (``ProviderRequestSent``) to the complete reply,
    retries and side requests included; what a provider does before sending (the local
    model starting its server) is not counted."""
    stop_reason: str
    """The reply's stop reason."""
    tool_calls: int
    """How many tool calls the reply asks for."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderRateLimited(Event):
    """The provider rate-limited a request; it will be retried."""

    provider_id: str
    """Provider id."""
    retry_after_seconds: float
    """How long the provider waits before retrying."""
    attempt: int
    """The attempt that was rate-limited."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderError(Event):
    """A provider call failed; ``retrying`` says whether another attempt follows."""

    provider_id: str
    """Provider id."""
    reason: str
    """``LLMError.reason`` (``"server"``, ``"auth"``, ...)."""
    message: str
    """What went wrong, as the provider reported it."""
    http_status: int | None
    """HTTP status, if any."""
    retrying: bool
    """``True`` when the provider retries after this failure."""
    attempt: int
    """The attempt that failed."""
    body_excerpt: str | None = None
    """``LLMError.body_excerpt``: the start of a body that was not the wire format, which
    may be the model's answer (only with ``trace_payloads=True``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderFallback(Event):
    """A provider failed before its reply began, and the model call moved on to the next one.

    Emitted by a ``FallbackProvider`` call, right after the ``ProviderError``
    (``retrying=True``) of the failure; the events that follow name the new provider,
    and ``ProviderResponseReceived.provider_id`` the one that answered.
    """

    failed_provider_id: str
    """The provider that failed."""
    provider_id: str
    """The provider that takes the call over."""
    model_id: str | None
    """The model asked of it."""
    reason: str
    """``LLMError.reason`` of the failure (``"server"``, ``"rate_limit"``, ...)."""
    http_status: int | None
    """HTTP status of the failure, if any."""
    message: str
    """What went wrong, as the failed provider reported it."""


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


@dataclass(frozen=True, slots=True, kw_only=True)
class TokensConsumed(Event):
    """Tokens one model call cost."""

    input_tokens: int
    """Prompt tokens, cached ones included."""
    output_tokens: int
    """Generated tokens."""
    total_tokens: int
    """Input plus output."""
    cached_tokens: int
    """Prompt tokens served from the provider's cache."""


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


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetWarning(Event):
    """A run-tree budget is nearly spent: this model call is asked to answer now, tools withdrawn.

    Emitted once per limit by each budget (the tree's, and each ``exec(budget=...)``).
    """

    limit: str
    """The limit running low: ``"model_calls"``, ``"tokens"``, ``"seconds"``, ``"tool_calls"``."""
    used: float
    """How much of it the tree has spent."""
    allowed: float
    """The limit's value."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetExhausted(Event):
    """A run-tree budget is spent: an exec raises ``BudgetExceeded`` or a call is refused.

    Emitted once per limit by each budget, by the run that hit it.
    """

    limit: str
    """The limit spent (see ``BudgetWarning.limit``; also ``"agentic_calls"``, ``"threads"``)."""
    used: float
    """How much of it the tree had spent."""
    allowed: float
    """The limit's value."""


Observer: TypeAlias = Callable[[Event], object]
"""Receives every event; may be called from worker threads."""


def notify(observers: Iterable[Callable[[Any], object]], event: Any) -> None:
    """Call every observer with ``event``; one that raises is logged and ignored.

    Args:
        observers: The callables to notify.
        event: The event (or stream event) to hand them.
    """
    for observer in observers:
        try:
            observer(event)
        except Exception:
            logger.exception(
                "openprogram observer %r raised on %s; the event was dropped for it",
                observer,
                getattr(event, "kind", type(event).__name__),
            )
