"""The two contextvars nesting rides on, each behind ``get_`` and ``use_`` helpers.

``_current_runtime`` holds the runtime of the exec whose tool is running (or of
a ``with runtime:`` block); ``_current_tools`` holds that exec's tool scope
(resolved menu and inherited vetoes). Both are set only through the ``use_…``
context managers, which reset their token in ``finally``. asyncio tasks and
``contextvars.copy_context()`` give every concurrent run its own values.

This module sits at the bottom of the import graph: it imports ``Runtime``
for the type checker only, and knows the scope as an opaque object.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the runtime package imports this module: a runtime import would be a cycle
    from openprogram.runtime import Runtime

__all__ = [
    "AgenticFrame",
    "get_current_frame",
    "get_current_runtime",
    "get_current_tools",
    "get_default_runtime",
    "resolve_runtime",
    "set_default_runtime",
    "set_default_runtime_factory",
    "use_current_frame",
    "use_current_runtime",
    "use_current_tools",
]

_current_tools: ContextVar[Any] = ContextVar("openprogram_current_tools", default=None)
_current_runtime: ContextVar[Runtime | None] = ContextVar(
    "openprogram_current_runtime", default=None
)

_current_frame: ContextVar[AgenticFrame | None] = ContextVar(
    "openprogram_current_frame", default=None
)


class _DefaultHolder:
    """The process-wide default runtime and the factory that makes it on first use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runtime: Any = None
        self.factory: Callable[[], Any] | None = None


_default = _DefaultHolder()


def get_current_tools() -> Any:
    """The tool scope of the exec whose tool is running, or ``None`` at top level."""
    return _current_tools.get()


@contextmanager
def use_current_tools(scope: Any) -> Iterator[Any]:
    """Make ``scope`` the current tool scope for the block."""
    token = _current_tools.set(scope)
    try:
        yield scope
    finally:
        _current_tools.reset(token)


def get_current_runtime() -> Runtime | None:
    """The runtime of the enclosing exec or ``with runtime:`` block, or ``None``.

    ``None`` at top level (outside every exec and ``with runtime:`` block), so
    code that needs one narrows first: ``assert runtime is not None``.
    """
    return _current_runtime.get()


@contextmanager
def use_current_runtime(runtime: Runtime) -> Iterator[Runtime]:
    """Make ``runtime`` the current runtime for the block."""
    token = _current_runtime.set(runtime)
    try:
        yield runtime
    finally:
        _current_runtime.reset(token)


def set_default_runtime(runtime: Any) -> None:
    """Set the process-wide fallback runtime (``None`` clears it)."""
    with _default.lock:
        _default.runtime = runtime


def set_default_runtime_factory(factory: Callable[[], Any]) -> None:
    """Install how a default runtime is made when none was set (done by ``openprogram.runtime``)."""
    _default.factory = factory


def get_default_runtime() -> Any:
    """The default runtime, created on first use from the factory (``None`` if there is none)."""
    if _default.factory is None and _default.runtime is None:
        # ``import openprogram`` leaves the runtime unloaded (import cost: asyncio, ssl);
        # loading it installs the factory. Above this module in the import graph, so by name.
        importlib.import_module("openprogram.runtime")
    with _default.lock:
        if _default.runtime is None and _default.factory is not None:
            _default.runtime = _default.factory()
        return _default.runtime


def resolve_runtime(explicit: Any = None) -> Any:
    """The runtime an agentic function uses: explicit, else current, else default."""
    if explicit is not None:
        return explicit
    current = _current_runtime.get()
    if current is not None:
        return current
    return get_default_runtime()


@dataclass(frozen=True, slots=True, kw_only=True)
class AgenticFrame:
    """The agentic function whose body is running (set by ``@agentic_function``)."""

    name: str
    """Tool name of the agentic function."""
    system: str | None = None
    """System prompt its ``exec`` calls use unless they pass their own."""


def get_current_frame() -> AgenticFrame | None:
    """The innermost running agentic function, or ``None``."""
    return _current_frame.get()


@contextmanager
def use_current_frame(frame: AgenticFrame | None) -> Iterator[AgenticFrame | None]:
    """Mark ``frame`` as the running agentic function for the block (``None``: none is)."""
    token = _current_frame.set(frame)
    try:
        yield frame
    finally:
        _current_frame.reset(token)
