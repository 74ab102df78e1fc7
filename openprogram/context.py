"""The frame: everything nested code inherits, in one immutable value behind one contextvar.

A ``Frame`` describes where running code sits in a run tree. Its fields:

========== ==================================================================================
field      what it holds
========== ==================================================================================
runtime    the current runtime: the runtime injected into the running tool call, or the one
           of a ``with runtime:`` block or of an agentic function called from Python
agentic    the agentic function whose body runs (``AgenticFrame``: its name and system prompt)
scope      the ``ToolScope`` of the exec whose tool call runs: its menu, the vetoes it
           inherited and added (``Policy``: deny, disabled, allow cap, sources), its depth
           and its run (``scope.run``: ids, events, deadline)
ledger     the run tree's budget node that exec charges (``runtime._budget.Ledger``)
cancel     the running call's cancel event and the event loop running the call
held       thread slots held by the sync tool bodies the code runs inside
delivery   the run tree's observer delivery while its inline observers run (``defer`` uses it)
path       the running call's position in the run tree (see below)
children   numbers the execs started inside the call, in the order they start
journal    the run tree's journal, when the tree is a durable run (``openprogram.durable``)
tree       the ``runtime.tree()`` block the code runs in (``runtime._tree.Tree``), if any
========== ==================================================================================

Who sets it, each for a block that resets it in ``finally`` (``use_frame``):
the executor for each tool call it runs (a ``choices=`` pick is run the same
way), ``with runtime:`` blocks and agentic functions called from Python
(``runtime``, ``agentic``), a run emitting to inline observers
(``delivery``), and a ``runtime.tree()`` block (``tree`` with its ``ledger``,
``path`` and ``children``: execs started in it share one budget and are
numbered like the execs of a call). A tool call's frame starts afresh, so
``tree`` is set only in the block itself, never inside its execs' tools.
Outside every such block the frame is ``EMPTY`` (``scope`` is ``None``: top
level). ``Frame`` is the one place a field is added: the
helpers below read and replace fields of it, and ``Frame.replace`` copies every
field it does not change.

How it crosses boundaries: asyncio tasks copy the context (so do
``openprogram._threads.run_in_thread`` and the sync API's worker thread); a
thread a tool body or a tree block starts (``threading.Thread``,
``ThreadPoolExecutor``, ``asyncio.run`` inside either) gets its frame when it starts
(``openprogram.runtime._follow``); and the runtime injected into a tool body
carries its call's frame explicitly (``openprogram.runtime._bound``), so an
exec on it nests below the call from any thread at all.

Positions (``path``): a top-level exec is ``()``; the ``k``-th call (from 0)
of the reply to its ``t``-th model call (from 1) is ``exec_path + (t, k)``; a
``choices=`` pick is ``(t, 0)`` of the reply it was read from; the ``i``-th
exec (from 0) started inside a call is ``call_path + (i,)``, and inside a tree
block at ``tree_path`` it is ``tree_path + (i,)`` (a tree at top level is at
``()``; one opened inside a call or another tree takes the next index there,
as an exec would). Model calls and
their calls are numbered by the conversation, never by completion order, so
parallel calls keep their positions whichever finishes first. ``i`` counts
execs as they start: stable when a call starts its execs one after another,
and when an async body starts several with ``asyncio.gather`` and each starts
its exec before it first awaits (tasks start in the order gather made them);
execs started concurrently on threads the body started are numbered in the
order the threads get there.

This module sits at the bottom of the import graph: the runtime types it
names are imported for the type checker only.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from openprogram._slot import ContextSlot

if TYPE_CHECKING:  # the runtime package imports this module: a runtime import would be a cycle
    import asyncio  # for the type checker only: ``import openprogram`` does not load asyncio

    from openprogram.durable import Journal
    from openprogram.events._delivery import Delivery
    from openprogram.runtime import Runtime
    from openprogram.runtime._budget import Ledger
    from openprogram.runtime._scope import ToolScope
    from openprogram.runtime._tree import Tree

__all__ = [
    "EMPTY",
    "AgenticFrame",
    "Frame",
    "get_current_frame",
    "get_current_runtime",
    "get_current_tools",
    "get_default_runtime",
    "get_frame",
    "new_counter",
    "resolve_runtime",
    "set_default_runtime",
    "set_default_runtime_factory",
    "use_current_frame",
    "use_current_runtime",
    "use_current_tools",
    "use_frame",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgenticFrame:
    """The agentic function whose body is running (set by ``@agentic_function``)."""

    name: str
    """Tool name of the agentic function."""
    system: str | None = None
    """System prompt its ``exec`` calls use unless they pass their own."""


CancelSite: TypeAlias = "tuple[threading.Event, asyncio.AbstractEventLoop]"
"""A call's cancel event and the event loop that runs the call."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Frame:
    """What code running inside a tool call (or a ``with runtime:`` block) inherits."""

    runtime: Runtime | None = None
    """The current runtime (the call's injected runtime inside a tool call)."""
    agentic: AgenticFrame | None = None
    """The agentic function whose body runs, if any."""
    scope: ToolScope | None = None
    """The tool scope of the exec whose call runs (``None``: not inside a tool call)."""
    ledger: Ledger | None = None
    """The run tree's budget node that exec charges."""
    cancel: CancelSite | None = None
    """The running call's cancel event and the loop running the call."""
    held: int = 0
    """Thread slots held by the sync tool bodies the code runs inside."""
    delivery: Delivery | None = None
    """The run tree's observer delivery while its inline observers run."""
    path: tuple[int, ...] = ()
    """The running call's position in the run tree (module docstring)."""
    children: Callable[[], int] | None = None
    """Returns the index of the next exec started inside the call (0, 1, ...)."""
    journal: Journal | None = None
    """The run tree's journal (``None``: the tree is not a durable run)."""
    tree: Tree | None = None
    """The ``runtime.tree()`` block the code runs in (``None`` inside its execs' tool calls)."""

    @property
    def depth(self) -> int:
        """Depth of the exec whose call runs (0 outside every tool call)."""
        return self.scope.depth if self.scope is not None else 0

    def replace(self, **changes: Any) -> Frame:
        """A copy with ``changes`` applied (every other field kept)."""
        return dataclasses.replace(self, **changes)


EMPTY = Frame()
"""The frame outside every tool call and ``with runtime:`` block."""

_FRAME: ContextSlot[Frame] = ContextSlot("openprogram_frame", EMPTY)


def new_counter() -> Callable[[], int]:
    """A thread-safe counter from 0 (``Frame.children``)."""
    return itertools.count().__next__  # one C call: atomic, so threads of one call share it


def get_frame() -> Frame:
    """The frame of the running code (``EMPTY`` at top level)."""
    return _FRAME.get()


def use_frame(frame: Frame) -> AbstractContextManager[Any]:
    """A context manager making ``frame`` the current frame for its block."""
    return _FRAME.use(frame)


class _Unchanged:
    """The context manager of a field that already has the value (nothing to set)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_UNCHANGED = _Unchanged()


def _use_field(name: str, value: Any) -> AbstractContextManager[Any]:
    frame = _FRAME.get()
    if getattr(frame, name) is value:
        return _UNCHANGED
    return _FRAME.use(frame.replace(**{name: value}))


# -- the fields as helpers (older names, kept: the agentic function and the tool scope) ----------


def get_current_tools() -> Any:
    """The tool scope of the exec whose tool is running, or ``None`` at top level."""
    return _FRAME.get().scope


def use_current_tools(scope: Any) -> AbstractContextManager[Any]:
    """Make ``scope`` the current tool scope for the block."""
    return _use_field("scope", scope)


def get_current_runtime() -> Runtime | None:
    """The runtime of the enclosing exec or ``with runtime:`` block, or ``None``.

    ``None`` at top level (outside every exec and ``with runtime:`` block), so
    code that needs one narrows first: ``assert runtime is not None``.
    """
    return _FRAME.get().runtime


def use_current_runtime(runtime: Runtime) -> AbstractContextManager[Any]:
    """Make ``runtime`` the current runtime for the block."""
    return _use_field("runtime", runtime)


def get_current_frame() -> AgenticFrame | None:
    """The innermost running agentic function, or ``None``."""
    return _FRAME.get().agentic


def use_current_frame(frame: AgenticFrame | None) -> AbstractContextManager[Any]:
    """Mark ``frame`` as the running agentic function for the block (``None``: none is)."""
    return _use_field("agentic", frame)


# -- the default runtime ----------------------------------------------------------------------


class _DefaultHolder:
    """The process-wide default runtime and the factory that makes it on first use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runtime: Any = None
        self.factory: Callable[[], Any] | None = None


_default = _DefaultHolder()


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
    current = _FRAME.get().runtime
    if current is not None:
        return current
    return get_default_runtime()
