"""The values a tool call produces and receives, below ``schema`` in the import graph.

``ToolResult`` (what a call produced), ``ToolContext`` (what a body may ask
for), the tool-name rule and the text a return value becomes. They live apart
from ``Tool`` so that ``openprogram.schema`` can recognise a ``ToolContext``
parameter by identity; ``openprogram.tools`` re-exports all of them.
"""

from __future__ import annotations

import inspect
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:  # the runtime imports this module: a runtime import would be a cycle
    from openprogram.runtime import Runtime

__all__ = [
    "MAX_QUOTED",
    "TOOL_NAME_PATTERN",
    "ToolContext",
    "ToolErrorKind",
    "ToolResult",
    "quoted",
    "result_text",
    "shortened",
    "takes_context",
    "truncate",
]

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What every provider accepts as a tool name."""

ToolErrorKind: TypeAlias = Literal["invalid_arguments", "timeout", "tool_error", "exception"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """What one tool call produced."""

    content: str
    """The text fed back to the model (already truncated)."""
    is_error: bool = False
    """Whether the call failed; ``content`` then says why and how to fix it."""
    value: Any = field(default=None, repr=False)
    """The Python value the body returned (``None`` on error)."""
    error_kind: ToolErrorKind | None = None
    """What failed, when ``execute`` turned a failure into this result (``None`` otherwise)."""
    violations: tuple[str, ...] = ()
    """Every ``"path: message"`` argument violation, when ``error_kind == "invalid_arguments"``."""


@dataclass(kw_only=True, eq=False)
class ToolContext:
    """Injected into a tool parameter annotated ``ToolContext`` (hidden from the schema)."""

    call_id: str = ""
    """Id of the tool call being answered."""
    tool_name: str = ""
    """Name of the tool being run."""
    runtime: Runtime | None = None
    """The runtime running the call (``None`` when no runtime does: ``run_tools`` at top level)."""
    deps: Any = None
    """The user bundle given to ``Runtime(deps=...)``."""
    cancel: threading.Event = field(default_factory=threading.Event)
    """Set when the call is cancelled or timed out; long sync bodies should poll it."""
    on_report: Callable[[str], None] | None = field(default=None, repr=False)
    """Receives ``report()`` texts (the runtime turns them into events)."""
    idempotency_key: str | None = None
    """The same on every attempt of this call of a durable run (run id and position in the
    run tree), different for every other call; ``None`` without a store. Pass it to an API
    that takes one (a payment's ``Idempotency-Key``) so a call run again does nothing twice."""

    def report(self, text: str) -> None:
        """Send a progress update about this call."""
        if self.on_report is not None:
            self.on_report(text)


def result_text(value: Any, limit: int | None = None) -> str:
    """The text a tool's return value becomes for the model.

    Args:
        value: What the body returned: a string as is, ``None`` as ``""``, else its JSON.
        limit: Truncate to this many characters (see ``truncate``).
    """
    if isinstance(value, str):
        text = value
    elif value is None:
        text = ""
    else:
        # pydantic_core loads with the first non-string result, not at ``import openprogram``
        import pydantic_core  # noqa: PLC0415 - deferred for import cost

        try:
            raw = pydantic_core.to_json(value, fallback=str)
        except (TypeError, ValueError, pydantic_core.PydanticSerializationError):
            text = str(value)
        else:
            if limit is not None and len(raw) > 4 * limit:  # surely too long, even if all 4-byte
                return _truncate_json(raw, limit)
            text = raw.decode("utf-8")
    return truncate(text, limit) if limit is not None else text


def _truncate_json(raw: bytes, limit: int) -> str:
    # Decoding only the kept ends: a huge value costs one JSON copy, not two.
    keep = max(limit - 80, 0)
    head, tail = keep * 2 // 3, keep - keep * 2 // 3
    start = raw[: 4 * head].decode("utf-8", "ignore")[:head]
    end = raw[-4 * tail :].decode("utf-8", "ignore")[-tail:] if tail else ""
    marker = f"\n[... truncated: {len(raw)} bytes of JSON, only the start and end kept ...]\n"
    return start + marker + end


MAX_QUOTED = 120
"""A model-supplied string quoted in a refusal or re-ask is cut to this many characters."""


def shortened(text: str, limit: int = MAX_QUOTED) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was (model-supplied strings)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def quoted(text: str, limit: int = MAX_QUOTED) -> str:
    """``repr`` of a model-supplied string, cut so a megabyte name costs a few bytes."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text):,} characters)"


def truncate(text: str, limit: int) -> str:
    """Keep the head and tail of ``text`` within ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    marker_room = 80
    keep = max(limit - marker_room, 0)
    head = keep * 2 // 3
    tail = keep - head
    cut = len(text) - head - tail
    marker = f"\n[... truncated {cut} of {len(text)} characters ...]\n"
    return text[:head] + marker + (text[-tail:] if tail else "")


def takes_context(execute: Callable[..., Any]) -> bool:
    """Whether a hand-written spec's ``execute`` is called as ``execute(args, context)``."""
    try:
        params = inspect.signature(execute).parameters.values()
    except (TypeError, ValueError):  # builtins without signatures take the args only
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)
