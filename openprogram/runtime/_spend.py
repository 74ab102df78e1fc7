"""How an exec spends its run tree's budget: one function per moment of the loop.

``open_budget`` reserves the exec's final model call; ``charge_model_call``
debits each model call and, when a limit is too low for another tool round,
withdraws the tools and tells the model to answer now; ``charge_reply``
debits its tokens (and adds them to the usage of every enclosing run, so the
outermost ``RunResult.usage`` covers the tree); ``close_budget`` gives back
an unspent reservation. The rules themselves live in ``_budget.Ledger``.
"""

from __future__ import annotations

import time
from typing import cast

from openprogram.budget import LimitName
from openprogram.events import BudgetExhausted, BudgetWarning
from openprogram.exceptions import BudgetExceeded
from openprogram.messages import Usage, UserMessage
from openprogram.providers.base import ToolChoice
from openprogram.runtime._budget import Ledger
from openprogram.runtime._run import Emitter, RunState

__all__ = [
    "ANSWER_NOW",
    "budget_timeout",
    "charge_model_call",
    "charge_reply",
    "close_budget",
    "exhausted",
    "open_budget",
    "refused_text",
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
    ledger = run.scope.ledger
    try:
        ledger.open_exec()
    except BudgetExceeded as exc:
        exhausted(run, ledger, "model_calls")
        raise exc from None
    run.reserved = True


def close_budget(run: RunState) -> None:
    """Give back the exec's reservation if its final call did not spend it."""
    run.scope.ledger.close_exec(run.reserved)
    run.reserved = False


def charge_model_call(run: RunState, choice: ToolChoice) -> tuple[ToolChoice, str | None]:
    """Debit one model call; returns the tool choice to send and why tools are withdrawn.

    When a limit is too low for another tool round, the choice is ``"none"``
    and the text answers any call the reply makes anyway.

    Raises:
        BudgetExceeded: Tokens or seconds are spent, or no model call is left.
    """
    ledger = run.scope.ledger
    try:
        run.reserved, low = ledger.before_model_call(run.reserved, run.scope.depth)
    except BudgetExceeded as exc:
        exhausted(run, ledger, cast(LimitName, exc.limit))
        raise
    if low is None:
        return choice, None
    if ledger.note("warning", low):
        used, allowed = ledger.figures(low)
        run.emit(BudgetWarning, limit=low, used=used, allowed=allowed)
    if not run.told_to_answer:
        run.told_to_answer = True
        run.messages.append(UserMessage(ANSWER_NOW.format(limit=low)))
    return "none", _WITHDRAWN.format(limit=low)


def charge_reply(run: RunState, usage: Usage, seconds: float) -> None:
    """Debit a reply's tokens and add its usage to this run and every run enclosing it."""
    ledger = run.scope.ledger
    ledger.after_model_call(usage.total_tokens, seconds)
    with ledger.tree.lock:  # runs of one tree add from several threads
        node: Emitter | None = run
        while node is not None:
            if isinstance(node, RunState):
                node.usage += usage
            node = node.parent


def budget_timeout(run: RunState) -> BudgetExceeded | None:
    """When the exec's deadline fired: the ``seconds`` error if the budget's deadline set it."""
    ledger = run.scope.ledger
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
