"""The keyword options of ``@function`` and ``@agentic_function``, declared once and checked.

``ToolOptions`` and ``AgenticOptions`` are what type checkers read; the same
names are checked at run time, so an unknown option is a ``TypeError`` and a
wrongly typed flag a ``UserError``, never silently ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from openprogram._keywords import reject_unknown
from openprogram.exceptions import UserError
from openprogram.registry import Registry, default_registry
from openprogram.tools import ApprovalRule, ToolEffect

__all__ = [
    "AGENTIC_KEYS",
    "SCHEMA_KEYS",
    "TOOL_KEYS",
    "AgenticOptions",
    "ToolOptions",
    "available",
    "check_options",
    "check_target",
    "pop_registry",
]

_log = logging.getLogger("openprogram.decorators")


class ToolOptions(TypedDict, total=False):
    """Keyword options shared by ``@function`` and ``@agentic_function``."""

    name: str
    """Tool name (default: the function's ``__name__``); ``^[a-zA-Z0-9_-]{1,64}$``."""
    description: str
    """Model-facing description (default: the docstring's summary and body)."""
    parameters: Mapping[str, Any]
    """A hand-written JSON Schema object used instead of the type hints."""
    label: str
    """Human-readable name for UIs and traces."""
    summary: str
    """One line for the deferred-tool catalog (default: the description's first line)."""
    expose: bool
    """L2: ``False`` keeps it Python-callable but never offered to a model."""
    toolset: str | Sequence[str]
    """L2b: preset names this tool belongs to."""
    unsafe_in: str | Sequence[str]
    """L3: channel sources where it is hidden."""
    available_if: bool | Callable[[], object]
    """L1: evaluated once now; falsy or raising leaves the function undecorated and unregistered."""
    check_fn: Callable[[], bool]
    """L4: availability predicate, evaluated at each resolution."""
    requires_env: str | Sequence[str]
    """L4: environment variables that must be set."""
    can_use: Callable[[Any], bool]
    """L4: ``can_use(GateContext) -> bool``."""
    defer: bool
    """L6: listed in a catalog until loaded via ``tool_search``."""
    requires_approval: ApprovalRule
    """``True`` or ``callable(args) -> bool | str``: ask the approval hook first."""
    parallel_safe: bool
    """``False``: a batch containing it runs sequentially."""
    timeout: float | None
    """Seconds per call; expiry is an error result."""
    max_result_chars: int
    """Head+tail truncation of the text fed back to the model."""
    cache: bool
    """Reuse results of identical calls."""
    cache_ttl: float | None
    """Seconds a cached result stays valid (``None``: forever)."""
    effect: ToolEffect
    """``"idempotent"`` (default: a durable run runs a call again when an earlier attempt's
    outcome is unknown) or ``"side_effect"`` (never run twice; the model is told the call
    may or may not have happened). See docs/durable.md."""
    registry: Registry
    """Where to register (default: ``openprogram.registry.default_registry``)."""
    register_globally: bool
    """``False``: register nowhere."""


class AgenticOptions(ToolOptions, total=False):
    """``ToolOptions`` plus what only ``@agentic_function`` takes."""

    as_tool: bool
    """``False``: never a model tool (not registered, ``expose=False``); still callable."""
    input: Mapping[str, Mapping[str, Any]]
    """Per parameter: ``description``, ``options`` (an enum) and ``hidden`` (needs a default)."""
    system: str | None
    """System prompt for the ``runtime.exec`` calls made in its body."""


TOOL_KEYS = frozenset(ToolOptions.__annotations__)
"""Every option ``@function`` takes."""
AGENTIC_KEYS = frozenset(AgenticOptions.__annotations__)
"""Every option ``@agentic_function`` takes."""
SCHEMA_KEYS = ("name", "description", "parameters")
"""Options that shape the derived schema rather than the tool."""
_BOOL_KEYS = ("expose", "defer", "parallel_safe", "cache", "register_globally", "as_tool")


def check_options(options: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    """Reject an option ``where`` does not take, and a flag that is not a bool."""
    reject_unknown(options, allowed, where)
    for key in _BOOL_KEYS:
        if key in options and not isinstance(options[key], bool):
            raise UserError(f"{where}(): {key}= must be True or False, got {options[key]!r}")


def check_target(fn: Any, where: str) -> None:
    """Reject something other than a function to decorate (options passed by position)."""
    if not callable(fn):
        raise TypeError(
            f"@{where} decorates a function, got {type(fn).__name__} {fn!r:.60}; "
            f"pass options as keywords, e.g. @{where}(name='my_tool')"
        )


def available(flag: Any, fn: Any) -> bool:
    """L1: ``available_if`` evaluated once; a predicate that raises means "not available"."""
    if not callable(flag):
        return bool(flag)
    try:
        return bool(flag())
    except Exception:  # noqa: BLE001 - a raising predicate means "not available" (L1 fails closed); logged
        _log.warning(
            "available_if of %s raised; it is left undecorated and unregistered",
            getattr(fn, "__qualname__", fn),
            exc_info=True,
        )
        return False


def pop_registry(options: dict[str, Any]) -> Registry | None:
    """Take ``registry=`` and ``register_globally=`` out of ``options``: where to register."""
    registry = options.pop("registry", None)
    register_globally = options.pop("register_globally", True)
    if registry is not None and not register_globally:
        raise UserError(
            "registry= and register_globally=False contradict each other: registry= registers "
            "there, register_globally=False registers nowhere; drop one"
        )
    if registry is not None and not callable(getattr(registry, "register", None)):
        raise UserError(f"registry= must be an openprogram.registry.Registry, got {registry!r:.60}")
    if not register_globally:
        return None
    return registry if registry is not None else default_registry
