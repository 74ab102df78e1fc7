"""Scope without contextvars: the runtime a tool body gets carries its call's tool scope.

Nesting rides on ``_current_tools``, a contextvar: worker threads of the
executor get it copied, but a thread the *user* starts in a tool body
(``threading.Thread``, ``ThreadPoolExecutor``) starts with an empty context.
An exec started there would find no parent scope and run as a top-level exec:
the full registry, the vetoes of the enclosing execs dropped, depth back to 1.

So the runtime injected into a tool body (its ``runtime`` parameter and
``ToolContext.runtime``) is a *bound view* of the exec's runtime: the same
object state (one shared ``__dict__``: defaults, hooks, ``last_run``, queues),
plus the ``ToolScope`` of the exec that is running the call. The scope object
itself is carried, not a copy of some of its fields, so whatever the scope
holds (menu, vetoes, sources, depth, the run it belongs to) follows it into
any thread. An exec on a bound view nests below that scope (fail closed).

Cancellation and thread slots are per *call*, not per scope: the executor
rebinds the view for each call it runs (``bind_call``) with the call's
``ToolContext.cancel`` event and the thread slots its callers hold. Both also
travel in contextvars, which a user thread does not see; ``following_call``
makes an exec on such a thread stop when its call is cancelled and count the
slots held above it, as it would on the body's own thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from openprogram.exceptions import UserError
from openprogram.runtime._budget import held_threads, use_held_threads
from openprogram.runtime._cancel import cancelled_with_caller
from openprogram.runtime._scope import ToolScope, parent_scope

__all__ = [
    "BoundCall",
    "bind_call",
    "bind_runtime",
    "bound_call",
    "bound_scope",
    "exec_parent",
    "following_call",
]

R = TypeVar("R")


def bind_runtime(runtime: R, scope: ToolScope) -> R:
    """A view of ``runtime`` whose execs nest below ``scope``, from whatever thread they start.

    The view is of the runtime's own class, shares its state, and compares
    equal to it; only the bound scope is its own.
    """
    view = object.__new__(type(runtime))
    object.__setattr__(view, "__dict__", runtime.__dict__)  # one state: settings, last_run, queues
    object.__setattr__(view, "_bound_scope", scope)
    return view


@dataclass(frozen=True, slots=True)
class BoundCall:
    """The tool call a bound view was handed to."""

    cancel: threading.Event
    """The call's ``ToolContext.cancel``: set when the call is cancelled or times out."""
    loop: asyncio.AbstractEventLoop
    """The loop that runs the call (execs on it are cancelled with its task already)."""
    held: int
    """Thread slots held by the call's body and the bodies enclosing it."""


def bind_call(runtime: R, call: BoundCall) -> R:
    """A view of ``runtime`` bound to the same scope and to one tool call of it."""
    scope = bound_scope(runtime)
    if scope is None:
        return runtime  # a host's own runtime object: nothing to nest below
    view = bind_runtime(runtime, scope)
    object.__setattr__(view, "_bound_call", call)
    return view


def bound_call(runtime: Any) -> BoundCall | None:
    """The tool call ``runtime`` was handed to (``None`` outside a tool call's view)."""
    call = getattr(runtime, "_bound_call", None)
    return call if isinstance(call, BoundCall) else None


@asynccontextmanager
async def following_call(runtime: Any) -> AsyncIterator[None]:
    """Run an exec as part of the call ``runtime`` is bound to, from whatever thread.

    It is cancelled when that call is (its cancel event set: the outer exec
    cancelled or timed out, or the call's own ``timeout``), and its calls
    count the thread slots the call's bodies hold (no self-deadlock).
    """
    call = bound_call(runtime)
    if call is None:
        async with cancelled_with_caller():
            yield
        return
    with use_held_threads(max(held_threads(), call.held)):
        async with cancelled_with_caller((call.cancel, call.loop)):
            yield


def bound_scope(runtime: Any) -> ToolScope | None:
    """The scope ``runtime`` is bound to (``None`` for a runtime made by ``Runtime(...)``)."""
    scope = getattr(runtime, "_bound_scope", None)
    return scope if isinstance(scope, ToolScope) else None


def exec_parent(runtime: Any) -> ToolScope | None:
    """The scope a new exec of ``runtime`` nests below: the deeper of the current and the bound one.

    On the body's own thread both are the same scope (or the current one is
    deeper: an exec nested further down uses a runtime captured above it). On
    a thread the body started, only the bound one is there.

    Raises:
        UserError: The runtime is bound to a run unrelated to the one whose
            tool is running here (it leaked from one run into another).
    """
    current, bound = parent_scope(), bound_scope(runtime)
    if bound is None or current is None:
        return current if current is not None else bound
    if _descends(current, bound):
        return current
    if _descends(bound, current):
        return bound
    raise UserError(
        "exec refused: this runtime was injected into a tool call of another run and is bound "
        "to another run's tool scope, but it is used inside a tool of this run; use the runtime "
        "this tool body was given (its runtime parameter or ToolContext.runtime)"
    )


def _descends(scope: ToolScope, ancestor: ToolScope) -> bool:
    node: ToolScope | None = scope
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False
