"""Scope without contextvars: the runtime a tool body gets carries its call's frame.

Nesting rides on the frame (``openprogram.context``), a contextvar: worker
threads of the executor get it copied, and threads a tool body starts get it
when they start (``_follow``). But code can reach a thread by ways no
contextvar follows (a thread started by a C extension, a callback on another
event loop), and a runtime can be kept and used later. So the runtime
injected into a tool body (its ``runtime`` parameter and
``ToolContext.runtime``) carries the frame of its call itself: an exec on it
nests below that call wherever it starts (fail closed), stops when the call
is cancelled and counts the thread slots the call's bodies hold.

That runtime is a *view*: a small object of a subclass of the runtime's own
class (so ``isinstance`` and every method, a subclass's overrides included,
work as on the runtime) that holds the runtime and the frame in its own
``__dict__``. Every other attribute is read from the runtime and every write
goes to it, so settings, hooks, queues and ``last_run`` are the runtime's. A
view compares equal to its runtime and hashes like it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from openprogram.context import CancelSite, Frame, get_frame, new_counter
from openprogram.exceptions import UserError
from openprogram.runtime._follow import follow_threads

if TYPE_CHECKING:
    from openprogram.durable import Journal
    from openprogram.runtime._budget import Ledger
    from openprogram.runtime._scope import ToolScope

__all__ = ["bound_frame", "call_frame", "exec_depth", "exec_parent", "origin_of"]

R = TypeVar("R")

_ORIGIN = "_bound_origin"
_FRAME = "_bound_frame"


class _View:
    """Mixed into a runtime's class: a view holding the runtime and a call's frame."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        # Reached only for what the view does not hold itself: every runtime attribute.
        try:
            origin = object.__getattribute__(self, "__dict__")[_ORIGIN]
        except KeyError:
            raise AttributeError(name) from None
        return getattr(origin, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.__dict__[_ORIGIN], name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self.__dict__[_ORIGIN], name)

    def __eq__(self, other: object) -> bool:
        return origin_of(self) is origin_of(other)

    def __hash__(self) -> int:
        return hash(self.__dict__[_ORIGIN])

    def __repr__(self) -> str:
        return repr(self.__dict__[_ORIGIN])


_classes: dict[type, type] = {}
_classes_lock = threading.Lock()


def _view_class(cls: type) -> type:
    view = _classes.get(cls)
    if view is None:
        with _classes_lock:
            view = _classes.get(cls)
            if view is None:
                namespace = {"__slots__": (), "__module__": cls.__module__}
                view = _classes[cls] = type(cls.__name__, (_View, cls), namespace)
    return view


def _new_view(runtime: R) -> R:
    origin = origin_of(runtime)
    view: Any = object.__new__(_view_class(type(origin)))
    view.__dict__[_ORIGIN] = origin
    return cast(R, view)


def call_frame(
    runtime: Any,
    *,
    scope: ToolScope,
    ledger: Ledger,
    cancel: CancelSite,
    held: int,
    path: tuple[int, ...],
    children: Callable[[], int] | None = None,
    journal: Journal | None = None,
) -> Frame:
    """The frame of one tool call (or ``choices=`` pick) of an exec of ``runtime``.

    Its ``runtime`` is a new view of ``runtime`` carrying this very frame: the
    runtime the call's body is given.

    Args:
        runtime: The exec's runtime.
        scope: The exec's tool scope.
        ledger: The budget node the exec charges.
        cancel: The call's cancel event and the loop running the call.
        held: Thread slots held by the call's body and the bodies around it.
        path: The call's position in the run tree.
        children: Numbers the execs started in the call (a new counter when not given;
            the approval hook and the body of one call share theirs).
        journal: The run tree's journal, when it is a durable run.
    """
    follow_threads()  # threads the body starts carry this frame from now on
    view = _new_view(runtime)
    frame = Frame(
        runtime=view,
        scope=scope,
        ledger=ledger,
        cancel=cancel,
        held=held,
        path=path,
        children=children if children is not None else new_counter(),
        journal=journal,
    )
    view.__dict__[_FRAME] = frame
    return frame


def origin_of(runtime: Any) -> Any:
    """The runtime a view shows; anything else is returned as is."""
    if isinstance(runtime, _View):
        return runtime.__dict__[_ORIGIN]
    return runtime


def bound_frame(runtime: Any) -> Frame | None:
    """The frame of the call ``runtime`` was injected into (``None``: not a view)."""
    if isinstance(runtime, _View):
        frame: Frame | None = runtime.__dict__.get(_FRAME)
        return frame
    return None


def exec_parent(runtime: Any) -> Frame:
    """The frame a new exec of ``runtime`` nests below: the deeper of the current and the bound one.

    On the body's own thread both are the same call's frame (or the current one
    is deeper: an exec nested further down uses a runtime injected above it). On
    a thread nothing copied the context into, only the bound one is there.
    ``scope is None`` in the result means a top-level exec.

    Raises:
        UserError: The runtime is bound to a run unrelated to the one whose
            tool is running here (it leaked from one run into another).
    """
    current = get_frame()
    bound = bound_frame(runtime)
    if bound is None or bound.scope is None:
        return current
    if current.scope is None:
        return bound
    if _descends(current, bound):
        return current
    if _descends(bound, current):
        return bound
    raise UserError(
        "exec refused: this runtime was injected into a tool call of another run and is bound "
        "to another run's tool scope, but it is used inside a tool of this run; use the runtime "
        "this tool body was given (its runtime parameter or ToolContext.runtime)"
    )


def exec_depth(runtime: Any) -> int:
    """The depth a new exec of ``runtime`` starts at here (1 at top level, as ``ToolScope``)."""
    scope = exec_parent(runtime).scope
    return scope.depth + 1 if scope is not None else 1


def _descends(frame: Frame, ancestor: Frame) -> bool:
    node, target = frame.scope, ancestor.scope
    while node is not None:
        if node is target:
            return True
        node = node.parent
    return False
