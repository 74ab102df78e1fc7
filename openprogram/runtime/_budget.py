"""The ledger of a run-tree budget: one per tree, carried in the frame of every tool call.

A top-level exec opens the tree's root ledger from ``Runtime(budget=...)``
(defaults filled in) tightened by its own ``exec(budget=...)``; an exec
nested in a tool body finds its parent's ledger in the call's frame
(``openprogram.context.Frame.ledger``) and shares it, adding
a node only when it passes a budget of its own. A charge is allowed only if
every node from the exec's own up to the root has room, so an inner budget
can only tighten. One lock per tree serialises charges from every thread and
event loop of the tree.

Model calls use reservations so that a tree never strands an exec without
the call it needs to answer: every open exec holds one model call for its
final answer. A model call is an ordinary one (tools offered) while calls
beyond the reservations are left; otherwise it spends the exec's own
reservation and is the last one: tools are withdrawn and the model is told
to answer now.

Thread slots cap the sync tool bodies running at once. A body waits for a
slot, never a thread: waiting happens on its exec's event loop. A body that
holds a slot may start execs whose bodies need slots too, so a call at exec
depth ``d`` whose ancestors hold ``h`` slots takes one only while
``min(max_depth - d, threads - h - 1)`` slots stay free for the levels below
it. The deepest holder's child can then always get a slot, so a tree never
waits on itself; a call whose own ancestors already hold every slot is
refused at once.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from dataclasses import dataclass, field

from openprogram.budget import Budget, BudgetUsage, LimitName
from openprogram.exceptions import BudgetExceeded

__all__ = ["Ledger"]

_COUNTED: tuple[LimitName, ...] = ("model_calls", "tool_calls", "agentic_calls", "tokens")


@dataclass(slots=True, eq=False)
class _Waiter:
    ledger: Ledger
    depth: int
    max_depth: int
    held: int
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]
    granted: bool = False


@dataclass(slots=True, eq=False)
class _Tree:
    """What every node of one tree shares."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    waiters: list[_Waiter] = field(default_factory=list)
    biggest_call_tokens: int = 0
    slowest_call_s: float = 0.0


class Ledger:
    """One budget node: its limits and what its subtree spent (the root's: the whole tree).

    Attributes:
        parent: The enclosing node (``None`` for the root).
        limits: The limits this node sets (absent: not limited here).
        spent: Model calls, tool calls, agentic calls and tokens charged to this subtree.
        started: ``time.monotonic()`` when the node opened.
        deadline: ``started + seconds``, or ``None``.
    """

    __slots__ = (
        "_nodes",
        "deadline",
        "limits",
        "noted",
        "parent",
        "peak",
        "reserved",
        "running",
        "spent",
        "started",
        "tree",
    )

    def __init__(self, budget: Budget, parent: Ledger | None) -> None:
        self.parent = parent
        self.tree: _Tree = parent.tree if parent is not None else _Tree()
        self.limits: dict[LimitName, float] = {
            name: value for name, value in budget.limits().items() if value is not None
        }
        self.spent: dict[LimitName, int] = dict.fromkeys(_COUNTED, 0)
        self.reserved = 0  # model calls kept for the final answers of open execs
        self.running = 0  # sync tool bodies running in this subtree
        self.peak = 0
        self.started = time.monotonic()
        seconds = self.limits.get("seconds")
        self.deadline = self.started + seconds if seconds is not None else None
        self.noted: set[tuple[str, str]] = set()
        self._nodes: tuple[Ledger, ...] = (self, *(parent._nodes if parent is not None else ()))

    @classmethod
    def open(cls, runtime_budget: Budget | None, exec_budget: Budget | None) -> Ledger:
        """The root ledger of a new tree: the runtime's budget with defaults, then the exec's."""
        root = cls((runtime_budget or Budget()).with_defaults(), None)
        return root.narrow(exec_budget)

    def narrow(self, budget: Budget | None) -> Ledger:
        """The ledger of a nested exec: this one, or a node tightened by ``budget``."""
        if budget is None or all(value is None for value in budget.limits().values()):
            return self
        return Ledger(budget, self)

    @property
    def root(self) -> Ledger:
        """The tree's root node."""
        return self._nodes[-1]

    @property
    def deadline_of_tree(self) -> float | None:
        """The earliest ``seconds`` deadline on the way to the root."""
        found = [n.deadline for n in self._chain() if n.deadline is not None]
        return min(found) if found else None

    def _chain(self) -> tuple[Ledger, ...]:
        """This node and its ancestors, innermost first."""
        return self._nodes

    # -- usage and errors ---------------------------------------------------------------------

    def usage(self) -> BudgetUsage:
        """What this node's subtree has spent (the root's: the whole tree)."""
        return BudgetUsage(
            model_calls=self.spent["model_calls"],
            tool_calls=self.spent["tool_calls"],
            agentic_calls=self.spent["agentic_calls"],
            tokens=self.spent["tokens"],
            seconds=time.monotonic() - self.started,
            threads=self.peak,
        )

    def note(self, kind: str, limit: LimitName) -> bool:
        """``True`` the first time ``kind`` is reported for ``limit`` by the node that set it."""
        node = self._setter(limit)
        with self.tree.lock:
            if (kind, limit) in node.noted:
                return False
            node.noted.add((kind, limit))
            return True

    def figures(self, limit: LimitName) -> tuple[float, float]:
        """``(used, allowed)`` of ``limit`` at the node that binds it most."""
        node = self._setter(limit)
        used = time.monotonic() - node.started if limit == "seconds" else node._used(limit)
        return used, node.limits.get(limit, math.inf)

    def exceeded(self, limit: LimitName) -> BudgetExceeded:
        """The error for ``limit`` being spent (usage of the whole tree attached)."""
        used, allowed = self.figures(limit)
        seconds = limit == "seconds"
        shown = f"{used:.1f} s of {allowed:g} s" if seconds else f"{used:g} of {allowed:g}"
        return BudgetExceeded(
            f"run-tree budget exhausted: {limit} ({shown}) for this exec and the execs nested "
            f"in it; raise Budget({limit}=...) on Runtime(budget=...) or exec(budget=...), or "
            "give the model a smaller task",
            limit=limit,
            used=used,
            allowed=allowed,
            usage=self.root.usage(),
        )

    def _used(self, limit: LimitName) -> float:
        return self.peak if limit == "threads" else self.spent.get(limit, 0)

    def _setter(self, limit: LimitName) -> Ledger:
        """The node whose ``limit`` leaves the least room (the root when none sets it)."""
        best, room = self.root, math.inf
        for node in self._chain():
            if limit in node.limits:
                left = node.limits[limit] - (
                    time.monotonic() - node.started if limit == "seconds" else node._used(limit)
                )
                if left < room:
                    best, room = node, left
        return best

    def _room(self, limit: LimitName) -> float:
        """What is left of ``limit`` (``inf`` when nothing limits it); call under the lock."""
        room = math.inf
        for node in self._chain():
            allowed = node.limits.get(limit)
            if allowed is not None:
                extra = node.reserved if limit == "model_calls" else 0
                room = min(room, allowed - node.spent[limit] - extra)
        return room

    # -- model calls --------------------------------------------------------------------------

    def open_exec(self) -> None:
        """Reserve the model call a new exec needs for its final answer.

        Raises:
            BudgetExceeded: No model call is left for it.
        """
        with self.tree.lock:
            if self._room("model_calls") < 1:
                raise self.exceeded("model_calls")
            for node in self._chain():
                node.reserved += 1

    def close_exec(self, reserved: bool) -> None:
        """Give back an exec's reservation it did not spend."""
        if reserved:
            with self.tree.lock:
                for node in self._chain():
                    node.reserved -= 1

    def before_model_call(self, reserved: bool, depth: int) -> tuple[bool, LimitName | None]:
        """Charge one model call; returns ``(still reserved, limit that withdraws the tools)``.

        Raises:
            BudgetExceeded: Tokens or seconds are spent, or no model call is left.
        """
        with self.tree.lock:
            if self._room("tokens") <= 0:
                raise self.exceeded("tokens")
            deadline = self.deadline_of_tree
            if deadline is not None and time.monotonic() >= deadline:
                raise self.exceeded("seconds")
            low: LimitName | None = None
            if self._room("model_calls") < 1:
                if not reserved:
                    raise self.exceeded("model_calls")
                for node in self._chain():  # this call spends the exec's own reservation
                    node.reserved -= 1
                reserved, low = False, "model_calls"
            for node in self._chain():
                node.spent["model_calls"] += 1
            return reserved, low or self._low(depth, deadline)

    def _low(self, depth: int, deadline: float | None) -> LimitName | None:
        """A limit too low for another tool round: this exec and its ancestors must answer."""
        tree = self.tree
        if self._room("tokens") < (depth + 1) * tree.biggest_call_tokens:
            return "tokens"  # about one call like the biggest so far for each exec still open
        if deadline is not None and deadline - time.monotonic() < 2 * tree.slowest_call_s:
            return "seconds"
        if self._room("tool_calls") < 1:
            return "tool_calls"
        return None

    def after_model_call(self, tokens: int, seconds: float) -> None:
        """Charge a reply's tokens; remember the biggest and slowest call (for ``_low``)."""
        with self.tree.lock:
            for node in self._chain():
                node.spent["tokens"] += tokens
            tree = self.tree
            tree.biggest_call_tokens = max(tree.biggest_call_tokens, tokens)
            tree.slowest_call_s = max(tree.slowest_call_s, seconds)

    # -- tool calls and threads ---------------------------------------------------------------

    def charge_call(self, agentic: bool) -> LimitName | None:
        """Charge one tool call (and an agentic one); returns the spent limit instead, if any."""
        with self.tree.lock:
            if self._room("tool_calls") < 1:
                return "tool_calls"
            if agentic and self._room("agentic_calls") < 1:
                return "agentic_calls"
            for node in self._chain():
                node.spent["tool_calls"] += 1
                if agentic:
                    node.spent["agentic_calls"] += 1
        return None

    async def acquire_thread(self, depth: int, max_depth: int, held: int) -> bool:
        """Wait for a thread slot for a sync body; ``False`` when it can never get one.

        Args:
            depth: Depth of the exec making the call.
            max_depth: That exec's runtime's ``max_depth``.
            held: Slots the bodies the exec runs inside already hold (``Frame.held``).
        """
        loop = asyncio.get_running_loop()
        with self.tree.lock:
            if any(held + 1 > limit for limit in self._thread_limits()):
                return False  # its own callers hold every slot: waiting would never end
            if self._fits(depth, max_depth, held):
                self._take()
                return True
            waiter = _Waiter(self, depth, max_depth, held, loop, loop.create_future())
            self.tree.waiters.append(waiter)
        try:
            await waiter.future
        except asyncio.CancelledError:
            with self.tree.lock:
                if not waiter.granted:
                    self.tree.waiters.remove(waiter)
            if waiter.granted:
                self.release_thread()
            raise
        return True

    def release_thread(self) -> None:
        """Free a slot and hand freed slots to waiters that now fit."""
        with self.tree.lock:
            for node in self._chain():
                node.running -= 1
            for waiter in list(self.tree.waiters):
                if waiter.ledger._fits(waiter.depth, waiter.max_depth, waiter.held):
                    waiter.ledger._take()
                    waiter.granted = True
                    self.tree.waiters.remove(waiter)
                    waiter.loop.call_soon_threadsafe(_wake, waiter.future)

    def _thread_limits(self) -> list[float]:
        return [n.limits["threads"] for n in self._chain() if "threads" in n.limits]

    def _fits(self, depth: int, max_depth: int, held: int) -> bool:
        for node in self._chain():
            limit = node.limits.get("threads")
            if limit is not None:
                keep = max(0, min(max_depth - depth, int(limit) - held - 1))
                if limit - node.running - 1 < keep:
                    return False
        return True

    def _take(self) -> None:
        for node in self._chain():
            node.running += 1
            node.peak = max(node.peak, node.running)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():  # cancelled meanwhile: its waiter gives the slot back
        future.set_result(None)
