"""The provider seam: one request type, one streaming call, a few event types.

A provider turns a provider-neutral ``ProviderRequest`` into its wire format,
streams the answer back as ``ProviderEvent``s and ends with exactly one
``ResponseDone`` carrying the ``AssistantMessage``. Retries belong to the
provider call (one owner); it reports each scheduled retry with a
``RetryScheduled`` event and raises ``LLMError`` when it gives up. A provider
that hands the call to another one (``FallbackProvider``) says so with a
``FallbackScheduled`` event; the events after it come from that provider.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from openprogram.events import SideRequest
from openprogram.exceptions import LLMError
from openprogram.messages import AssistantMessage, Message

__all__ = [
    "FallbackScheduled",
    "Provider",
    "ProviderEvent",
    "ProviderRequest",
    "RequestSent",
    "ResponseDone",
    "ResponseFormat",
    "RetryScheduled",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolChoice",
    "ToolSpec",
]

ToolSpec: TypeAlias = Mapping[str, Any]
"""``{"name": str, "description": str, "parameters": JSON Schema object}``."""

ToolChoice: TypeAlias = Literal["auto", "required", "none"] | Mapping[str, Any]
"""``"auto"``, ``"required"``, ``"none"`` or ``{"type": "function", "name": X}``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseFormat:
    """A structured-output request in provider-neutral form."""

    name: str
    """A short identifier for the schema (providers require one)."""
    schema: Mapping[str, Any]
    """The JSON Schema the answer must satisfy."""
    strict: bool = True
    """Ask for strict (constrained) decoding where the provider offers it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderRequest:
    """Everything one model call needs, independent of any wire format."""

    model: str | None
    """Model id; ``None`` means the provider's own default."""
    system: str | None
    """System prompt, or ``None``."""
    messages: tuple[Message, ...]
    """The conversation so far, oldest first."""
    tools: tuple[ToolSpec, ...] = ()
    """Tool specs offered on this call; empty means no tools (fields omitted on the wire)."""
    tool_choice: ToolChoice = "auto"
    """How the model may use the tools on this call."""
    parallel_tool_calls: bool = True
    """Whether the model may ask for several calls in one reply."""
    response_format: ResponseFormat | None = None
    """Native structured output, when the provider declares support."""
    answer_schema: Mapping[str, Any] | None = None
    """JSON Schema of the final text answer, when the exec's prompt asks for one (a
    decision's ``{"call": ..., "args": ...}`` pick). A provider that can constrain
    decoding may hold a text answer to it (the local one does); the others can
    ignore it, since the prompt already says what to write."""
    temperature: float | None = None
    """Sampling temperature; ``None``: the provider's or server's default (field omitted)."""
    max_tokens: int | None = None
    """Cap on generated tokens; ``None``: the provider's default."""
    seed: int | None = None
    """Sampling seed, on wires that have one (others raise ``UserError``); ``None``: omitted."""
    deadline: float | None = field(default=None, repr=False)
    """``time.monotonic()`` instant by which the call (with retries) must end."""
    max_retries: int | None = field(default=None, repr=False)
    """Overrides the provider's retry count for this call."""


@dataclass(frozen=True, slots=True)
class RequestSent:
    """A request went on the wire (once per attempt, and once per side request)."""

    attempt: int
    """1 for the first try, 2 for the first retry, ..."""
    prompt_size_bytes: int
    """Size of the request body."""
    side_request: SideRequest | None = None
    """``None`` for a request of the reply itself, else what the request sent beside it is
    for (``openprogram.events.SideRequest``); its tokens count with the reply."""


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of reply text."""

    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A fragment of exposed reasoning."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a streamed tool call (for display; the final message is authoritative)."""

    index: int
    """Position of the call in the reply."""
    id: str | None
    """Call id, when this fragment carries it."""
    name: str | None
    """Tool name, when this fragment carries it."""
    arguments_delta: str
    """Raw JSON fragment of the arguments."""


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """An attempt failed retryably; the provider waits ``delay_s`` and tries again."""

    attempt: int
    """The attempt that failed."""
    delay_s: float
    """How long the provider waits before the next attempt."""
    error: LLMError
    """What went wrong."""


@dataclass(frozen=True, slots=True)
class FallbackScheduled:
    """A provider failed in a way its retries could not cure; the call moves on to another.

    Sent by ``FallbackProvider`` before anything of the failed provider's reply
    reached the caller; the events that follow come from ``provider``.
    """

    failed: str
    """Id of the provider that failed."""
    provider: str
    """Id of the provider that takes the call over."""
    model: str | None
    """The model asked of it (``None``: its own default)."""
    error: LLMError
    """Why the failed provider was left."""


@dataclass(frozen=True, slots=True)
class ResponseDone:
    """The reply is complete; always the last event of a successful call."""

    message: AssistantMessage


ProviderEvent: TypeAlias = (
    RequestSent
    | TextDelta
    | ThinkingDelta
    | ToolCallDelta
    | RetryScheduled
    | FallbackScheduled
    | ResponseDone
)


@runtime_checkable
class Provider(Protocol):
    """What the runtime needs from a model provider."""

    @property
    def name(self) -> str:
        """Provider id for events and errors, e.g. ``"openai"``."""
        ...

    @property
    def model(self) -> str | None:
        """The default model id."""
        ...

    @property
    def native_structured_output(self) -> bool:
        """Whether ``ProviderRequest.response_format`` is honoured natively."""
        ...

    def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Send one request and stream its events, ending with ``ResponseDone``.

        Raises:
            LLMError: The call failed and no retry is left (or allowed).
        """
        ...
