"""How an exec spends its run tree's budget: one function per moment of the loop.

``open_budget`` reserves the exec's final model call; ``charge_model_call``
debits each model call and, when a limit is too low for another tool round,
withdraws the tools and tells the model to answer now; ``take_call`` debits a
tool call or a ``choices=`` pick about to run, with its thread slot; ``charge_reply``
debits its tokens (and adds them to the usage of every enclosing run, so the
outermost ``RunResult.usage`` covers the tree); ``close_budget`` gives back
an unspent reservation. The rules themselves live in ``_budget.Ledger``.
"""

from __future__ import annotations

import functools
import inspect
import time
from typing import Any, cast

from openprogram.budget import LimitName
from openprogram.events import BudgetExhausted, BudgetWarning
from openprogram.exceptions import BudgetExceeded
from openprogram.messages import Usage, UserMessage
from openprogram.runtime._budget import Ledger
from openprogram.runtime._run import Emitter, RunState
from openprogram.tools import Tool

__all__ = [
    "ANSWER_NOW",
    "budget_timeout",
    "charge_model_call",
    "charge_reply",
    "close_budget",
    "exhausted",
    "open_budget",
    "refused_text",
    "runs_on_thread",
    "take_call",
]

ANSWER_NOW = (
    "The budget of this task is nearly spent ({limit}). Tools are withdrawn: answer now, "
    "in text, from what you have."
)
_WITHDRAWN = (
    "Not run: the budget of this task is nearly spent ({limit}) and tools were withdrawn. "
    "Answer in text from what you have."
)


def open_budget(run: RunState) -> None:
    """Reserve the model call the exec needs for its final answer.

    Raises:
        BudgetExceeded: The tree has no model call left for it.
    """
    ledger = run.ledger
    try:
        ledger.open_exec()
    except BudgetExceeded as exc:
        exhausted(run, ledger, "model_calls")
        raise exc from None
    run.reserved = True


def close_budget(run: RunState) -> None:
    """Give back the exec's reservation if its final call did not spend it."""
    run.ledger.close_exec(run.reserved)
    run.reserved = False


def charge_model_call(run: RunState) -> str | None:
    """Debit one model call; returns why the tools are withdrawn from it, or ``None``.

    When a limit is too low for another tool round, the model is told to
    answer now and the returned text answers any call its reply makes anyway
    (``_choice`` then sends ``tool_choice="none"``).

    Raises:
        BudgetExceeded: Tokens or seconds are spent, or no model call is left.
    """
    ledger = run.ledger
    try:
        run.reserved, low = ledger.before_model_call(run.reserved, run.scope.depth)
    except BudgetExceeded as exc:
        exhausted(run, ledger, cast(LimitName, exc.limit))
        raise
    if low is None:
        return None
    if ledger.note("warning", low):
        used, allowed = ledger.figures(low)
        run.emit(BudgetWarning, limit=low, used=used, allowed=allowed)
    if not run.told_to_answer:
        run.told_to_answer = True
        run.messages.append(UserMessage(ANSWER_NOW.format(limit=low)))
    return _WITHDRAWN.format(limit=low)


def runs_on_thread(tool: Tool) -> bool:
    """Whether a call of ``tool`` runs on a worker thread (so it takes a thread slot)."""
    fn = tool.fn
    if fn is None:
        return True
    try:
        return _sync_function(fn)
    except TypeError:  # an unhashable callable object: asked without the cache
        return _sync_function.__wrapped__(fn)


@functools.lru_cache(maxsize=1024)
def _sync_function(fn: Any) -> bool:
    # An @agentic_function is a callable object wrapping the function (functools.wraps).
    return not inspect.iscoroutinefunction(inspect.unwrap(fn))


async def take_call(
    ledger: Ledger, *, threaded: bool, agentic: bool, depth: int, max_depth: int, held: int
) -> LimitName | None:
    """Charge one call about to run (a tool call or a ``choices=`` pick), with its thread slot.

    Returns ``None`` when it may run; the caller then runs it and, when
    ``threaded``, gives the slot back (``ledger.release_thread()``) once the
    body ends. Otherwise returns the spent limit, having taken nothing.

    Args:
        ledger: The run tree's budget node of the exec making the call.
        threaded: The body is sync (it runs on a worker thread and takes a slot).
        agentic: The call is of an agentic function.
        depth: Depth of that exec.
        max_depth: That exec's runtime's ``max_depth``.
        held: Slots held by the bodies that exec runs inside.
    """
    if threaded and not await ledger.acquire_thread(depth, max_depth, held):
        return "threads"
    spent = ledger.charge_call(agentic)  # only calls that will run count
    if spent is not None and threaded:
        ledger.release_thread()
    return spent


def charge_reply(run: RunState, usage: Usage, seconds: float) -> None:
    """Debit a reply's tokens and add its usage to this run and every run enclosing it."""
    ledger = run.ledger
    ledger.after_model_call(usage.total_tokens, seconds)
    with ledger.tree.lock:  # runs of one tree add from several threads
        node: Emitter | None = run
        while node is not None:
            if isinstance(node, RunState):
                node.usage += usage
            node = node.parent


def budget_timeout(run: RunState) -> BudgetExceeded | None:
    """When the exec's deadline fired: the ``seconds`` error if the budget's deadline set it."""
    ledger = run.ledger
    tree = ledger.deadline_of_tree
    if tree is None or run.deadline is None or tree > run.deadline or time.monotonic() < tree:
        return None
    exhausted(run, ledger, "seconds")
    return ledger.exceeded("seconds")


def exhausted(emitter: Emitter, ledger: Ledger, limit: LimitName) -> None:
    """Emit ``BudgetExhausted`` for ``limit``, once per budget that sets it."""
    if ledger.note("exhausted", limit):
        used, allowed = ledger.figures(limit)
        emitter.emit(BudgetExhausted, limit=limit, used=used, allowed=allowed)


def refused_text(name: str, ledger: Ledger, limit: LimitName) -> str:
    """The error result of a call the budget does not allow."""
    used, allowed = ledger.figures(limit)
    return (
        f"Tool {name!r} was not run: the budget of this task allows no more {limit} "
        f"({used:g} of {allowed:g} used). Answer with what you have instead."
    )
