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
"""

from __future__ import annotations

from typing import Any, TypeVar

from openprogram.exceptions import UserError
from openprogram.runtime._scope import ToolScope, parent_scope

__all__ = ["bind_runtime", "bound_scope", "exec_parent"]

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
