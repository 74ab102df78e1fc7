"""Trees: several top-level execs made one run tree, with one budget and one record.

``with runtime.tree(budget=...) as tree:`` (or ``async with``) opens a block
whose execs — started in it directly, by the tasks it gathers, by the threads
it starts — form one run tree: they charge one budget node (the tree's), they
are numbered like the execs of one tool call (``Frame.path``: the ``i``-th
exec started in a tree at ``p`` is at ``p + (i,)``), and each one's
``RunResult`` joins the tree's record, ``tree.result`` (a ``TreeResult``).
``Tree.call`` runs one function as a tree; ``AgenticFunction.run`` and
``arun`` use it to give a call from Python its own record.

Where a tree joins what is around it: at top level it is the root of a new
run tree (the runtime's budget with its defaults, tightened by the tree's);
inside another tree, or in a tool body, it is a node of that run tree, so its
budget can only tighten, as ``exec(budget=...)`` does. An exec of another
runtime in the block joins the tree too, bound by that runtime's own budget
as well (as for an exec nested in a tool body).

The block's end closes the tree: its record is frozen then. An exec still
running keeps charging the tree's budget but is left out of the record; an
exec or tree starting in it afterwards (in a task or thread the block did
not wait for) is refused with ``UserError``. See docs/trees.md.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from typing_extensions import ParamSpec

from openprogram._threads import run_in_thread
from openprogram.budget import Budget, BudgetUsage
from openprogram.context import Frame, get_frame, new_counter, use_frame
from openprogram.events import Event
from openprogram.exceptions import UserError
from openprogram.messages import Usage
from openprogram.runtime._bound import origin_of
from openprogram.runtime._budget import Ledger
from openprogram.runtime._follow import follow_threads
from openprogram.runtime._result import RunResult
from openprogram.runtime._sync import run_sync

if TYPE_CHECKING:
    from openprogram.runtime._runtime import Runtime

__all__ = ["Tree", "TreeResult", "joined_ledger", "joined_tree"]

T = TypeVar("T")
E = TypeVar("E", bound=Event)
_P = ParamSpec("_P")

Recorded = Callable[[RunResult], object]
"""Receives an exec's own record when it ends (``run_exec(recorded=...)``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeResult(Generic[T]):
    """The record of a tree: the execs of a ``runtime.tree()`` block, or of one call.

    ``AgenticFunction.run`` and ``Tree.call`` give one with ``output`` set to
    what the call returned; ``tree.result`` of a block has ``output=None``.
    """

    output: T
    """What the call returned (``None`` for a ``with runtime.tree()`` block)."""
    runs: tuple[RunResult, ...]
    """The record of each exec started in the tree, in the order they started (execs
    nested in their tools are in those records)."""
    usage: Usage
    """Tokens of every model call of the tree (the ``usage`` of all ``runs`` added up)."""
    budget_usage: BudgetUsage
    """What the tree spent against its budget: model calls, tool calls, agentic calls,
    tokens, seconds since it opened, and the most sync bodies that ran at once."""
    events: tuple[Event, ...]
    """Trace events of every run, run after run in the order of ``runs``."""

    def events_of(self, kind: type[E]) -> list[E]:
        """The events of one class, in order: ``tree.result.events_of(AgentEnd)``."""
        return [event for event in self.events if isinstance(event, kind)]


class Tree:
    """A block whose execs form one run tree: one budget, one record.

    Made by ``runtime.tree(budget=None)``; used once, as ``with`` or ``async
    with`` block, or through ``call``/``acall``. ``tree.result`` is its record.

    Example:
        >>> from openprogram import Budget, Runtime
        >>> from openprogram.testing import ScriptedProvider
        >>> runtime = Runtime(ScriptedProvider(["A.", "B."]))
        >>> with runtime.tree(budget=Budget(model_calls=2)) as tree:
        ...     answers = [runtime.exec(q, tools=[]) for q in ("a?", "b?")]
        >>> answers, len(tree.result.runs), tree.result.budget_usage.model_calls
        (['A.', 'B.'], 2, 2)
    """

    __slots__ = ("_budget", "_final", "_ledger", "_lock", "_parent", "_runs", "_runtime", "_use")

    def __init__(self, runtime: Runtime, budget: Budget | None) -> None:
        """Use ``runtime.tree(budget=...)``.

        Raises:
            UserError: ``budget`` is not a ``Budget`` (or ``None``).
        """
        if budget is not None and not isinstance(budget, Budget):
            raise UserError(
                f"runtime.tree(budget={budget!r:.80}) must be an openprogram.Budget or None, "
                "e.g. budget=Budget(model_calls=20)"
            )
        self._runtime = runtime
        self._budget = budget
        self._lock = threading.Lock()
        self._runs: list[tuple[tuple[int, ...], RunResult]] = []
        self._ledger: Ledger | None = None
        self._parent: Tree | None = None
        self._use: AbstractContextManager[Any] | None = None
        self._final: TreeResult[None] | None = None

    def __repr__(self) -> str:
        state = "ended" if self._final is not None else "open" if self._use else "new"
        return f"<Tree of {self._runtime!r}: {state}, {len(self._runs)} run(s)>"

    @property
    def result(self) -> TreeResult[None]:
        """The tree's record: inside the block, what has finished so far; after it, what
        had finished when the block ended."""
        final = self._final
        return final if final is not None else self._snapshot()

    # -- the block -----------------------------------------------------------------------------

    def __enter__(self) -> Tree:
        """Open the tree: execs started in the block (and its tasks and threads) join it."""
        self._open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._close()

    async def __aenter__(self) -> Tree:
        """``async with runtime.tree(...) as tree:``, the same as ``with``."""
        self._open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._close()

    # -- one call as a tree ----------------------------------------------------------------------

    @overload
    def call(
        self, fn: Callable[_P, Coroutine[Any, Any, T]], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> TreeResult[T]: ...
    @overload
    def call(
        self, fn: Callable[_P, T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> TreeResult[T]: ...
    def call(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> TreeResult[Any]:
        """Run ``fn(*args, **kwargs)`` as this tree's block; return its output and the record.

        An async ``fn`` is run to completion (from any thread, like ``exec``).
        What ``fn`` raises propagates (the tree is closed first).
        """
        with self:
            output = fn(*args, **kwargs)
            if inspect.isawaitable(output):
                output = run_sync(lambda: _awaited(output))
        return self._with_output(output)

    @overload
    async def acall(
        self, fn: Callable[_P, Awaitable[T]], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> TreeResult[T]: ...
    @overload
    async def acall(
        self, fn: Callable[_P, T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> TreeResult[T]: ...
    async def acall(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> TreeResult[Any]:
        """``call`` for async code: a sync ``fn`` runs on a worker thread (the loop goes on)."""
        async with self:
            if inspect.iscoroutinefunction(inspect.unwrap(fn)):
                output = await fn(*args, **kwargs)
            else:
                output = await run_in_thread(fn, *args, **kwargs)
                if inspect.isawaitable(output):  # a callable object whose call is async
                    output = await output
        return self._with_output(output)

    # -- inside ----------------------------------------------------------------------------------

    def _open(self) -> None:
        frame = get_frame()
        if frame.tree is not None:
            frame.tree._check_open("a tree")
        with self._lock:
            if self._use is not None or self._final is not None:
                raise UserError(
                    "this tree was already opened: a tree is one block; make a new one with "
                    "runtime.tree(...) for each block or call"
                )
            origin = origin_of(self._runtime)
            joined = joined_ledger(origin, frame)
            self._ledger = (
                Ledger.open(origin.budget, self._budget)
                if joined is None
                else Ledger(self._budget or Budget(), joined)  # a node of its own: its usage
            )
            self._parent = frame.tree
            path = (*frame.path, frame.children()) if frame.children is not None else ()
            follow_threads()  # threads the block starts carry its frame
            inside = frame.replace(
                runtime=self._runtime,
                tree=self,
                ledger=self._ledger,
                path=path,
                children=new_counter(),
            )
            self._use = use_frame(inside)
            self._use.__enter__()

    def _close(self) -> None:
        with self._lock:
            self._final = self._snapshot_locked()
            use, self._use = self._use, None
        if use is not None:
            use.__exit__(None, None, None)

    def _check_open(self, what: str) -> None:
        """Refuse ``what`` (an exec, a tree) starting in this tree after its block ended.

        Raises:
            UserError: The block has ended.
        """
        if self._final is not None:
            raise UserError(
                f"{what} started in a runtime.tree() block that has ended (in a task or thread "
                "the block started and did not wait for): wait for your calls inside the "
                "block (await the tasks, join the threads), or open a new tree"
            )

    def _add(self, path: tuple[int, ...], result: RunResult) -> None:
        """Add an ended exec's record to this tree and the trees enclosing it, while open."""
        node: Tree | None = self
        while node is not None:
            with node._lock:
                if node._final is None:
                    node._runs.append((path, result))
            node = node._parent

    def _snapshot(self) -> TreeResult[None]:
        with self._lock:
            return self._snapshot_locked()

    def _snapshot_locked(self) -> TreeResult[None]:
        runs = tuple(result for _, result in sorted(self._runs, key=lambda item: item[0]))
        usage = Usage()
        for run in runs:
            usage += run.usage
        ledger = self._ledger
        return TreeResult(
            output=None,
            runs=runs,
            usage=usage,
            budget_usage=ledger.usage() if ledger is not None else BudgetUsage(),
            events=tuple(event for run in runs for event in run.events),
        )

    def _with_output(self, output: T) -> TreeResult[T]:
        record = self.result
        return TreeResult(
            output=output,
            runs=record.runs,
            usage=record.usage,
            budget_usage=record.budget_usage,
            events=record.events,
        )


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


def joined_ledger(runtime: Runtime, parent: Frame) -> Ledger | None:
    """The budget node an exec or tree of ``runtime`` starting below ``parent`` joins.

    ``None`` when it starts a new run tree (no tree block, no tool call around
    it). A runtime other than the one whose budget that node already applies
    adds its own budget (a node only when it has one).
    """
    ledger = parent.ledger
    if ledger is None:
        return None
    if parent.tree is not None:
        owner = origin_of(parent.tree._runtime)
    elif parent.scope is not None:
        owner = parent.scope.run.runtime
    else:  # no frame sets a ledger without a tree or a call
        return None
    return ledger if runtime.budget is owner.budget else ledger.narrow(runtime.budget)


def joined_tree(parent: Frame, path: tuple[int, ...], recorded: Recorded | None) -> Recorded | None:
    """``recorded``, extended to add an exec's record to the tree block it starts in.

    Raises:
        UserError: That tree's block has ended.
    """
    tree = parent.tree
    if tree is None:
        return recorded
    tree._check_open("an exec")

    def record(result: RunResult) -> None:
        tree._add(path, result)
        if recorded is not None:
            recorded(result)

    return record
